"""Fleets: one suite on many boards at once (`rtbench fleet INVENTORY.toml SUITE`).

inventory.py reads and checks the TOML list of boards; rtbench.run.fleet reserves every
board, then runs the suite on each in a thread of its own with rtbench.run.runner, each
into its own stored run tagged with the fleet id.  The summary and the displays are in
rtbench.analysis.fleet and rtbench.report.fleet.
"""
