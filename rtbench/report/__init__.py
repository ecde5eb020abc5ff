"""Reports of stored runs: terminal tables (rich) and self-contained HTML."""
