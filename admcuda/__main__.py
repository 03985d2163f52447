"""``python -m admcuda``: the command line."""

from admcuda.cli.score import main

raise SystemExit(main())
