"""``admcuda warmup``: compile every kernel ahead, so that no scoring run waits for it.

The CPU engine's Numba kernels are compiled (or found in Numba's disk cache) for 8-bit
and deeper samples, and those of ``float_ssim`` and ``float_ms_ssim``; where CuPy sees a
GPU, the CUDA kernels are built into CuPy's kernel cache too. For container images and CI,
after ``pip install``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from admcuda.cli.tool import Parser, run_tool

__all__ = ["main"]


def _run(argv: Sequence[str] | None) -> int:
    parser = Parser(prog="admcuda warmup", description=__doc__.splitlines()[0], add_help=False)
    parser.add_argument("--help", action="help", help="show this help and exit")
    parser.add_argument("--skip-gpu", action="store_true", help="leave the CUDA kernels out")
    args = parser.parse_args(argv)
    from admcuda.compiled import ALL_KINDS, available, warm_up

    if available():
        t0 = time.perf_counter()
        done = warm_up(kinds=ALL_KINDS)
        print(f"CPU engine: {', '.join(done)} kernels ready ({time.perf_counter() - t0:.1f} s)")
    else:
        print('CPU engine: Numba is not installed (pip install ".[fast]"); nothing to compile')
    if args.skip_gpu:
        return 0
    from admcuda.backends.cuda import cuda_available

    if not cuda_available():
        print("GPU: no CUDA device seen; nothing to build")
        return 0
    from admcuda import kernel_loader as K

    t0 = time.perf_counter()
    for kernels in K.STAGES.values():
        for name, dtypes in kernels:
            for dt in dtypes or (None,):
                K.function(name, dt)
    for stem in ("vif", "motion"):
        for expr in K.feature_expressions(stem):
            K.feature_function(stem, expr)
    print(f"GPU: CUDA kernels ready ({time.perf_counter() - t0:.1f} s)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``admcuda warmup [--skip-gpu]``; returns the exit status."""
    return run_tool(_run, argv)
