"""The compiled CPU engine: libvmaf's integer ADM, VIF and motion as Numba kernels.

Each module computes the same integers as the NumPy reference (:mod:`admcuda.reference`,
the specification) and the CUDA kernels, stage for stage, and the float finish is the
one the GPU path uses on the host, so every output is the reference's double:

- :mod:`.adm`: per frame and scale, the masking and denominator sums that
  :class:`admcuda.backends.cuda.finish.BatchFinish` finishes;
- :mod:`.vif`: per frame and scale, VIF's four log-domain accumulators, finished by
  :func:`admcuda.backends.cuda.vifmotion.finish_vif`;
- :mod:`.motion`: per frame, motion's SAD against the previous reference plane;
- :mod:`.ssim`: libvmaf's ``float_ssim`` and ``float_ms_ssim`` of a frame, which the
  pipeline computes on the host beside any engine (:mod:`admcuda.vmaf.host`);
- :mod:`.cambi`: libvmaf's ``cambi`` banding score of a plane, on the host likewise;
- :mod:`.speed`: libvmaf's ``speed_chroma`` of a chroma plane pair and ``speed_temporal``
  of two consecutive frame pairs, on the host likewise;
- :mod:`.ciede`: libvmaf's ``ciede`` colour difference of a frame pair, on the host likewise.

Numba is optional (``pip install ".[fast]"``): :func:`available` says whether it
imports, and without it the CPU backend runs the NumPy reference. Kernels compile on
first use and are cached on disk (``cache=True``): in the package folder where it is
writable, else in Numba's user cache folder (``NUMBA_CACHE_DIR`` moves it);
``admcuda warmup`` compiles them ahead.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from types import ModuleType

# Numba's OpenMP threads spin between the engine's parallel stages; on cores shared with
# the pipeline's readers (or another process) a spinning thread cost a whole scheduler
# slice a stage: a 1080p ADM frame took 96 ms instead of 10 on 2 busy cores. Passive
# waiting, set before Numba loads OpenMP, unless the caller chose otherwise.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__all__ = ["ALL_KINDS", "available", "cached", "kernels_for", "skip_blas_probe", "warm_up"]

ALL_KINDS = (
    "adm", "vif", "motion", "float_ssim", "float_ms_ssim", "cambi", "speed_chroma", "ciede"
)  # fmt: skip
"""Every kind of feature with compiled kernels (``admcuda warmup`` loads them all)."""


@functools.cache
def available() -> bool:
    """Whether Numba is installed, so that the compiled engine can run (no import)."""
    return importlib.util.find_spec("numba") is not None


def kernels_for(module: str, features: str) -> ModuleType:
    """``admcuda.compiled.<module>``, or a one-line error naming ``features`` (as "cambi
    needs", "float_ssim and float_ms_ssim need") where Numba is not installed."""
    if not available():
        from admcuda.errors import AdmError

        raise AdmError(f"{features} the compiled engine: pip install 'admcuda[fast]'")
    return importlib.import_module(f"admcuda.compiled.{module}")


def warm_up(
    bitdepths: tuple[int, ...] = (8, 10), kinds: tuple[str, ...] = ("adm", "vif", "motion")
) -> list[str]:
    """Compile (or load from the disk cache) the kernels the CPU engine runs for
    ``kinds`` of features (:data:`ALL_KINDS`), for 8-bit and for deeper samples, on small
    frames (SSIM's and MS-SSIM's once: they compute in float32 at every depth); returns
    what was warmed. For images and CI, so that no scoring run waits for a compile
    (``admcuda warmup``), and for the engine, which loads a run's kernels this way while
    the first frames are read."""
    import numpy as np

    done = []
    with _blas_probe_skipped():
        for bitdepth in bitdepths:
            dtype = np.uint8 if bitdepth == 8 else np.uint16
            rng = np.random.default_rng(bitdepth)
            ref = rng.integers(0, 1 << bitdepth, (2, 48, 64)).astype(dtype)
            dis = rng.integers(0, 1 << bitdepth, (2, 48, 64)).astype(dtype)
            if "adm" in kinds:
                from admcuda.backends.cuda.finish import BatchFinish
                from admcuda.backends.cuda.geometry import scale_geometries
                from admcuda.options import AdmOptions

                from .adm import adm_accumulators_batch

                opts = AdmOptions()
                acc = adm_accumulators_batch(ref, dis, bitdepth, opts)
                BatchFinish(scale_geometries(64, 48, opts), opts, 64, 48)(acc)
            if "vif" in kinds:
                from .vif import vif_accumulators_batch

                vif_accumulators_batch(ref, dis, bitdepth, np.array([100.0]), False)
            if "motion" in kinds:
                from .motion import motion_sad

                motion_sad(ref[0], ref[1], bitdepth)
            done.append(f"{bitdepth}-bit")
        for kind in ("float_ssim", "float_ms_ssim"):
            if kind in kinds:
                from . import ssim

                side = ssim.MS_SSIM_MIN_SIDE
                plane = np.arange(side * side, dtype=np.uint8).reshape(side, side)
                frame = ssim.float_ssim_frame if kind == "float_ssim" else ssim.float_ms_ssim_frame
                frame(plane, plane[::-1].copy(), 8)
                done.append(kind)
        if "cambi" in kinds:
            from . import cambi

            side = cambi.MIN_SIDE
            tables = cambi.setup(side, side)
            for dtype, depth in ((np.uint8, 8), (np.uint16, 10)):
                plane = (np.arange(side * side) // 997 % 7).astype(dtype).reshape(side, side)
                sizes = {"enc_width": side, "enc_height": side, "enc_bitdepth": depth}
                cambi.cambi_frame(plane, depth, tables, topk=0.6, **sizes)
            done.append("cambi")
        speeds = [k for k in ("speed_chroma", "speed_temporal") if k in kinds]
        if speeds:
            from . import speed

            taps = speed.gaussian_taps(3, 0.6)
            for dtype, depth in ((np.uint8, 8), (np.uint16, 10)):
                plane = (np.arange(96 * 96) * 7919 % 61).astype(dtype).reshape(96, 96)
                for method in ("nearest", "bilinear"):
                    side = speed.speed_chroma_plane(
                        plane, bitdepth=depth, prescale=1.1, method=method, antialias=taps,
                        gauss=taps, sigma_nn=np.float32(0.29),
                    )  # fmt: skip
                speed.speed_score(side, side, np.float32(0.29), np.float32(0.0), 0)
                speed.picture_difference(plane, plane[::-1], depth)  # speed_temporal's
            done += speeds
        if "ciede" in kinds:
            from . import ciede

            for dtype in (np.uint8, np.uint16):
                plane = (np.arange(64) * 37 % 200).astype(dtype).reshape(8, 8)
                ciede.ciede_sum(plane, plane.T.copy(), plane, plane[::-1].copy(), plane, plane, 8)
            done.append("ciede")
    return done


_SKIP_BLAS_PROBE = [False]


def skip_blas_probe() -> None:
    """Let this process load Numba without its probe for SciPy's BLAS, for a process
    that runs no Numba code but the engine's (the command line).

    Numba's first compile or cache load imports its NumPy support, which imports
    ``scipy.linalg.cython_blas`` where SciPy is installed (0.2 to 0.3 s, a fifth of a
    1080p run's start-up) to give jitted ``np.convolve`` and ``np.correlate`` of floats a
    BLAS dot; the engine's kernels call no BLAS. Skipped, those two use Numba's own loop
    in this process; ``scipy.linalg`` imports as before."""
    _SKIP_BLAS_PROBE[0] = True


@contextlib.contextmanager
def _blas_probe_skipped() -> Iterator[None]:
    """Within: ``scipy.linalg.cython_blas`` cannot be imported, where
    :func:`skip_blas_probe` asked for it and Numba's NumPy support is not yet loaded."""
    names = ("numba.np.arraymath", "scipy.linalg.cython_blas")
    block = _SKIP_BLAS_PROBE[0] and not any(name in sys.modules for name in names)
    if block:
        sys.modules["scipy.linalg.cython_blas"] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if block and sys.modules.get("scipy.linalg.cython_blas", False) is None:
            del sys.modules["scipy.linalg.cython_blas"]


def cached(modules: tuple[str, ...] = ("adm", "motion", "vif")) -> bool | None:
    """Whether Numba's disk cache holds the kernels of ``modules`` (default: the CPU
    engine's; ``("ssim",)``: SSIM's and MS-SSIM's; ``("cambi",)``), None where it cannot
    tell. Reads the
    cache index files of each module's first kernel, without compiling."""
    try:
        import glob
        import importlib
        import os

        for name in modules:
            module = importlib.import_module(f"{__name__}.{name}")
            caches = [v._cache for v in vars(module).values() if hasattr(v, "py_func")]
            path = next(c.cache_path for c in caches if type(c).__name__ == "FunctionCache")
            stem = os.path.splitext(os.path.basename(module.__file__))[0]
            if not glob.glob(os.path.join(path, f"{stem}.*.nbi")):
                return False
        return True
    except Exception:  # noqa: BLE001 - an internal of Numba's that moved: unknown
        return None
