"""``python -m admcuda``: the command line."""

from admcuda.cli import main

raise SystemExit(main())
