"""CUDA backend: libvmaf's integer ADM on an NVIDIA GPU through CuPy, bit-exact with
:mod:`reference`.

The GPU computes each scale's integer accumulators, as libvmaf's CUDA extractor does;
the float finish (``powf`` cube roots, noise floor, ratios) runs on the host, batched
(:mod:`admcuda.backends.cuda.finish`), bit-exact with the reference's per-frame finish.

- :mod:`.geometry`: per-scale shapes, crops and the kernels' parameter block, derived
  from the reference's own shift tables; :func:`finish_frame`, the reference's finish
  of one frame's accumulators.
- :mod:`.launch`: stage launchers with the reference's stage names (:func:`dwt2`,
  :func:`dwt2_s123`, :func:`csf`, :func:`csf_den`, :func:`cm`).
- :mod:`.engine`: :class:`CudaAdm`, buffers, streams and the stage chain over batches.
- :mod:`.graphs`: the engine's captured CUDA graphs of a batch's chain, replayed when
  the same device inputs come again.
"""

from __future__ import annotations

from .engine import CudaAdm, CudaAdmError, as_dicts, cuda_available
from .geometry import ScaleGeometry, device_params, finish_frame, scale_geometries, scale_geometry
from .launch import cm, csf, csf_den, dwt2, dwt2_s123

__all__ = [
    "CudaAdm",
    "CudaAdmError",
    "ScaleGeometry",
    "as_dicts",
    "auto_batch",
    "cm",
    "csf",
    "csf_den",
    "cuda_available",
    "device_params",
    "dwt2",
    "dwt2_s123",
    "finish_frame",
    "scale_geometries",
    "scale_geometry",
]


def auto_batch(width: int, height: int) -> int:
    """Frames per launch for a frame size: about 2**28 pixels a batch, a power of two in
    64..512. On an H200: 576x324 ran 1.8 times faster at 512 than at 64, 1920x1080 9%
    faster at 128 than at 64, 3840x2160 5% faster at 64 than at 32."""
    frames = (1 << 28) // (width * height)
    return max(64, min(512, 1 << max(frames.bit_length() - 1, 0)))
