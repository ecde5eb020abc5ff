"""The host twin of probe/: how rtbench calls rtprobe and reads back what it prints."""
