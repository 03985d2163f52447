"""admcuda: libvmaf's VMAF, bit for bit: ADM, VIF, motion and its models on the CPU, ADM with CUDA.

The Python API:

- :func:`score` scores a reference against one distorted input (an :class:`AdmResult`)
  or several (a list, the reference read once); inputs are raw YUV, Y4M or any video
  ffmpeg decodes.
- :func:`score_files` and :func:`score_ladder` return the per-frame dicts alone.
- :class:`AdmExtractor` scores frames already in memory (NumPy, CuPy or DLPack arrays),
  libvmaf's init/extract/close lifecycle; :class:`VmafExtractor` does the same for VMAF
  (libvmaf's models over ADM, VIF and motion) on the CPU, each frame's score final once
  the next frame is read.
- :class:`AdmResult` holds per-frame values (lists, or NumPy arrays through
  :meth:`AdmResult.array`), pooled statistics and libvmaf's JSON/XML/CSV writers.
- :class:`AdmOptions` holds libvmaf's ADM options; :class:`AdmError` is every error
  admcuda raises; :func:`score_many` scores a manifest of pairs on Dask.

This module only hands those names on; each lives in its own module (``admcuda.api``,
``admcuda.extractor``, ``admcuda.report.result`` ...), loaded on first use.
"""

import importlib as _importlib
from pathlib import Path as _Path

from admcuda.version import __version__

# In a source checkout the reference and the kernels live beside this package
# (<root>/reference, <root>/kernels) and are installed into it by pyproject's
# package-dir mapping. Without an install, let the package path reach the root
# so that ``admcuda.reference`` and ``admcuda.kernels`` resolve the same way.
_root = _Path(__file__).resolve().parent.parent
if (
    not (_Path(__file__).resolve().parent / "reference").is_dir()
    and (_root / "pyproject.toml").is_file()
    and str(_root) not in __path__
):
    __path__.append(str(_root))
del _root

__all__ = [
    "AdmError",
    "AdmExtractor",
    "AdmOptions",
    "AdmResult",
    "VmafExtractor",
    "__version__",
    "score",
    "score_files",
    "score_ladder",
    "score_many",
]

# Where each public name lives; loaded on first use, so that ``import admcuda`` stays
# light and no submodule needs this package's namespace.
_HOMES = {
    "AdmError": "admcuda.errors",
    "AdmExtractor": "admcuda.extractor",
    "AdmOptions": "admcuda.options",
    "AdmResult": "admcuda.report.result",
    "VmafExtractor": "admcuda.vmaf.extractor",
    "score": "admcuda.api",
    "score_files": "admcuda.api",
    "score_ladder": "admcuda.api",
    "score_many": "admcuda.batch.run",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'admcuda' has no attribute {name!r}")
    return getattr(_importlib.import_module(home), name)


def __dir__() -> list[str]:
    return sorted(__all__)
