"""The rtprobe contract on the host: locating, building and checking rtprobe binaries."""
