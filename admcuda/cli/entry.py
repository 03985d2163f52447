"""The ``admcuda`` program: ``admcuda score`` goes to a running ``admcuda serve`` where one
of this admcuda listens (:mod:`admcuda.serve`); anything else, and a score run that no
server takes, runs here (:mod:`admcuda.cli.main`). Imports nothing more until then."""

from __future__ import annotations

import gc
import os
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

    A score run collects no garbage among the oldest objects, and where it started CUDA
    it ends the process at once once its outputs are written
    and the standard streams flushed: the interpreter's teardown (CuPy's exit handlers,
    every object's release, the GPU's memory freed piece by piece) added a tenth of a
    second or more to a run and changes nothing a user sees. Other commands exit as usual.
    """
    score = sys.argv[1:2] == ["score"]
    if score:
        # A score run's heap is mostly what its imports made (NumPy, CuPy, Numba), and it
        # lives until the exit: a collection of the oldest generation walks all of it,
        # 20 to 70 ms a time, for no garbage. The young generations are still collected.
        threshold = gc.get_threshold()
        gc.set_threshold(threshold[0], threshold[1], 1 << 30)
    status = main()
    if score and _cuda_started():
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe: nothing more to say there
                pass
        os._exit(status)
    raise SystemExit(status)


def _cuda_started() -> bool:
    started = sys.modules.get("admcuda.cuda_start")
    return "cupy" in sys.modules or (started is not None and started.started())
