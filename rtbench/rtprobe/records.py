"""The old name of `rtbench.rtprobe.wire.records`, kept for bench/lab_data.py and
bench/lab_noisy.py; import the new name."""

from rtbench.rtprobe.wire.records import WindowRecord as WindowRecord
