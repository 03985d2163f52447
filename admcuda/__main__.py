"""``python -m admcuda``: the command line."""

from admcuda.cli.entry import main

raise SystemExit(main())
