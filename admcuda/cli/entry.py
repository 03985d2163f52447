"""The ``admcuda`` program: ``admcuda score`` goes to a running ``admcuda serve`` where one
of this admcuda listens (:mod:`admcuda.serve`); anything else, and a score run that no
server takes, runs here (:mod:`admcuda.cli.main`). Imports nothing more until then."""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence

__all__ = ["main", "program"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``admcuda`` command line (``sys.argv[1:]`` by default); the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["score"]:
        from admcuda.serve import hand_over

        status = hand_over(args)
        if status is not None:
            return status
        from admcuda.cuda_start import start_for_arguments

        start_for_arguments(args)  # while NumPy and CuPy import
    from admcuda.cli.main import main as run

    return run(args)


def program() -> None:
    """The ``admcuda`` executable and ``python -m admcuda``: :func:`main`, then the exit.

    A score run leaves its oldest objects uncollected: its heap is mostly what its
    imports made (NumPy, CuPy, Numba), alive until the exit, and each collection of the
    oldest generation walked all of it (18 and 72 ms in one 1080p CPU run) for no
    garbage. The young generations are still collected.
    """
    if sys.argv[1:2] == ["score"]:
        threshold = gc.get_threshold()
        gc.set_threshold(threshold[0], threshold[1], 1 << 30)
    raise SystemExit(main())
