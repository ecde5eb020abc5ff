"""Helpers about probe binaries that targets may use: finding the host's rtprobe, trimming
an ELF."""
