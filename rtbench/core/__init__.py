"""The bottom layer: what every layer may use (values as text, bounded reads and runs,
secrets, redaction, checked stdout); it imports nothing of rtbench but the package."""
