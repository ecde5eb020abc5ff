"""The loglin7 histogram layout for the analysis layer (defined in rtbench.loglin7)."""

from __future__ import annotations

from rtbench.loglin7 import *  # noqa: F403
from rtbench.loglin7 import __all__ as __all__
