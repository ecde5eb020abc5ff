"""Suites: the model (tests x scenarios x sweeps), reading and checking suite TOML, and
CPU placement on a target."""
