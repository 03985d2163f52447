"""``python -m admcuda``: the command line."""

from admcuda.cli.entry import program

program()
