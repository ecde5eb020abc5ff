"""What the probe and the host share: the rtprobe/1 NDJSON records and the loglin7
histogram layout (both also defined in probe/src).  Imports nothing else of rtbench."""
