"""The compiled CPU engine: libvmaf's integer ADM, VIF and motion as Numba kernels.

Each module computes the same integers as the NumPy reference (:mod:`admcuda.reference`,
the specification) and the CUDA kernels, stage for stage, and the float finish is the
one the GPU path uses on the host, so every output is the reference's double:

- :mod:`.adm`: per frame and scale, the masking and denominator sums that
  :class:`admcuda.backends.cuda.finish.BatchFinish` finishes;
- :mod:`.vif`: per frame and scale, VIF's four log-domain accumulators, finished by
  :func:`admcuda.backends.cuda.vifmotion.finish_vif`;
- :mod:`.motion`: per frame, motion's SAD against the previous reference plane.

Numba is optional (``pip install ".[fast]"``): :func:`available` says whether it
imports, and without it the CPU backend runs the NumPy reference. Kernels compile on
first use and are cached on disk (``cache=True``): in the package folder where it is
writable, else in Numba's user cache folder (``NUMBA_CACHE_DIR`` moves it);
``admcuda warmup`` compiles them ahead.
"""

from __future__ import annotations

import functools
import importlib.util

__all__ = ["available"]


@functools.cache
def available() -> bool:
    """Whether Numba is installed, so that the compiled engine can run (no import)."""
    return importlib.util.find_spec("numba") is not None
