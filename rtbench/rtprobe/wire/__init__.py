"""What rtprobe prints and writes, read: NDJSON records, the loglin7 histogram layout,
the raw samples file; shared with the C code, no I/O of their own."""
