"""The regression board: each stored run checked against its board's baseline."""
