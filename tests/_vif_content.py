"""VIF test content and the reference's per-scale integers, shared by the GPU tests and
the CPU runs of the CUDA kernels."""

from __future__ import annotations

import numpy as np
from admcuda.reference import vif as R
from admcuda.reference import vif_constants as V
from admcuda.reference.vif_filters import pad_top_and_bottom, subsample_rd_8, subsample_rd_16


def structured_pair(
    w: int, h: int, bitdepth: int, frames: int, seed: int
) -> tuple[np.ndarray, ...]:
    """Reference and distorted planes with texture, flat areas, both extremes and noise."""
    rng = np.random.default_rng(seed)
    top = (1 << bitdepth) - 1
    y, x = np.mgrid[0:h, 0:w]
    refs, dists = [], []
    for f in range(frames):
        base = (np.sin(x / (3.0 + f)) + np.cos(y / 5.0)) * top / 5 + top / 2
        base = base + rng.normal(0, top / 20, (h, w))
        base[: h // 4, : w // 4] = top // 3  # flat: the low-variance branch
        base[-2:, :] = top
        base[:, :2] = 0
        ref = np.clip(np.rint(base), 0, top)
        dis = ref + rng.normal(0, top / 40 * (1 + f), (h, w))
        dis[h // 2 :, w // 2 :] = ref[h // 2 :, w // 2 :] * 0.5  # a loss of detail
        dis = np.clip(np.rint(dis), 0, top)
        dtype = np.uint8 if bitdepth == 8 else np.uint16
        refs.append(ref.astype(dtype))
        dists.append(dis.astype(dtype))
    return np.stack(refs), np.stack(dists)


def vif_reference(ref, dis, bitdepth, egl):
    """Each scale's four accumulators (reference.vif.vif_residuals) and the decimated
    planes of scales 1..3, for one frame pair."""
    table = R.log_generate()
    r, d = pad_top_and_bottom(ref, 17), pad_top_and_bottom(dis, 17)
    sums, planes = [], []
    for scale in range(4):
        if scale == 1 and bitdepth == 8:
            r, d = subsample_rd_8(r, d)
        elif scale:
            r, d = subsample_rd_16(r, d, scale - 1, bitdepth)
        if scale:
            pad = V.PAD_ROWS[scale]
            planes.append((r[pad:-pad], d[pad:-pad]))
        if scale == 0 and bitdepth == 8:
            tmp = R.vif_vertical_8(r, d)
        else:
            tmp = R.vif_vertical_16(r, d, bitdepth, scale)
        sig = R.vif_sigma(R.vif_horizontal(tmp, scale))
        sums.append(tuple(R.vif_residuals(*sig, table, egl)))
    return sums, planes
