"""`python -m rtbench` runs the command line tool."""

from rtbench.cli import main

main(prog_name="rtbench")
