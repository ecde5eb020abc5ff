"""The old name of `rtbench.rtprobe.wire.loglin7`, kept for bench/lab_data.py and
bench/lab_noisy.py; import the new name."""

from rtbench.rtprobe.wire.loglin7 import *  # noqa: F403
from rtbench.rtprobe.wire.loglin7 import __all__ as __all__
