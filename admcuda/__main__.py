"""``python -m admcuda``: the command line."""

from admcuda.cli.main import main

raise SystemExit(main())
