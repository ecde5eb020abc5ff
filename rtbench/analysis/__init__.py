"""Analysis of stored results: histogram layout and statistics (no I/O)."""
