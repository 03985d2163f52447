"""The float finish of a whole batch of frames, vectorised and bit-identical with the
per-frame :func:`admcuda.backends.cuda.finish_frame`.

``finish_frame`` turns one frame's integer accumulators into the 18 outputs through the
reference's :func:`reference.csf_den.den_finish`, :func:`reference.cm.cm_finish` and
:func:`reference.adm.finish`. :class:`BatchFinish` takes every float step of those in
the same order and precision over all frames at once: int64 (uint64 for the denominator)
to double, the division by ``2**e`` (rounded to float above scale 0 for the masking
sums), the denominator's ``rf**3``, the rounding to float, libm's ``powf`` cube root
(:func:`admcuda.backends.cuda.powf.powf`), the float noise floor and float sums, then the
double sums, the near-zero limit, the ratios and adm3. The per-geometry constants are
computed once, by the reference's own helpers.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from admcuda import kernel_loader as K
from admcuda.backends.cuda.powf import fast_path_enabled, powf
from admcuda.options import AdmOptions
from admcuda.reference import constants as C
from admcuda.reference.adm import ALL_FEATURES
from admcuda.reference.cnum import border, f32, pow2
from admcuda.reference.csf import csf_factors
from admcuda.reference.csf_den import noise_floor

__all__ = ["BatchFinish", "finish_batch"]

_KINDS = ("NUM", "AIM", "DEN")  # per scale, in the order of the accumulator slots
_NSCALES = 4


class BatchFinish:
    """The float finish of one frame geometry and option set, for batches of frames.

    Parameters
    ----------
    geoms : sequence of ScaleGeometry
        The four levels, from ``scale_geometries(width, height, opts)``; only ``shape``,
        ``den_exp`` and ``cm_exps`` are read.
    opts : AdmOptions
        The options the accumulators were computed with.
    width, height : int
        Frame size (the near-zero limit scales with it).
    """

    def __init__(self, geoms: Sequence, opts: AdmOptions, width: int, height: int) -> None:
        if len(geoms) != _NSCALES:
            raise ValueError(f"expected {_NSCALES} scale geometries, got {len(geoms)}")
        self.opts = opts
        self.width, self.height = int(width), int(height)
        skip0, skip_aim = bool(opts.adm_skip_scale0), bool(opts.adm_skip_aim)
        nw = opts.adm_noise_weight
        # One row per accumulator used, masking sums (NUM, AIM) first and denominators
        # (uint64) last; each (h, v, d) triple is a group of three rows.
        cm_rows: list[tuple[int, float, float, np.float32]] = []
        den_rows: list[tuple[int, float, float, np.float32]] = []
        cm_groups: list[int] = []  # flat (scale, kind) index of each triple
        den_groups: list[int] = []
        with np.errstate(all="ignore"):
            for s, g in enumerate(geoms):
                if s == 0 and skip0:
                    continue
                hh, ww = g.shape
                left, right = border(ww, tap=False)
                top, bottom = border(hh, tap=False)
                area = (bottom - top) * (right - left)
                f1, f2 = csf_factors(s, opts)
                for kind_idx, kind in enumerate(_KINDS):
                    if kind == "AIM" and skip_aim:
                        continue
                    base = s * K.ACC_COUNT + K.ACC_OFFSETS[kind]
                    group = s * len(_KINDS) + kind_idx
                    for o in range(3):
                        if kind == "DEN":
                            rf3 = math.pow(float((f1, f1, f2)[o]), 3)
                            den_rows.append((base + o, pow2(g.den_exp), rf3, noise_floor(area, nw)))
                        else:
                            e = g.cm_exps[o]
                            div = pow2(e) if s == 0 else float(f32(pow2(e)))
                            floor = noise_floor(area, nw if kind == "NUM" else 0.0)
                            cm_rows.append((base + o, div, 1.0, floor))
                    (den_groups if kind == "DEN" else cm_groups).append(group)
        rows = cm_rows + den_rows
        self._ncm = len(cm_rows)
        self._cols = np.array([r[0] for r in rows], dtype=np.intp)
        div = np.array([r[1] for r in rows], dtype=np.float64)
        # Dividing by a power of two (or inf) equals multiplying by its reciprocal, which
        # is then exact: both round the same real number once. Division stays otherwise.
        recip = 1.0 / div
        mantissa = np.frexp(div)[0]
        exact = ((mantissa == 0.5) & (recip * div == 1.0)) | (div == math.inf)
        self._exact_recip = bool(exact.all())
        self._recip = recip[:, None]
        self._div = div[:, None]
        self._rf3 = np.array([r[2] for r in den_rows], dtype=np.float64)[:, None]
        self._add = np.array([r[3] for r in rows], dtype=np.float32)[:, None]
        self._groups = np.array(cm_groups + den_groups, dtype=np.intp)
        # float (num, aim, den) of each scale where no accumulator feeds it.
        tmpl = np.zeros((_NSCALES, len(_KINDS)))
        if skip0:
            tmpl[0, 2] = float(C.SKIP_SCALE0_DEN)
        self._template = tmpl.reshape(-1, 1)
        self._limit = C.NUMDEN_LIMIT * (self.width * self.height) / (1920.0 * 1080.0)
        # num and den are zeroed below the limit, the AIM numerator never.
        self._limits = np.array([self._limit, -math.inf, self._limit])[:, None]
        self._dlm = opts.adm_dlm_weight
        self._one_minus_dlm = 1 - opts.adm_dlm_weight
        self._min_val = opts.adm_min_val
        # powf's one-time self-check against libm, now rather than in the first batch,
        # when a pipeline's reading threads are already running.
        fast_path_enabled(C.ONE_THIRD_F)

    def __call__(self, acc: np.ndarray) -> dict[str, np.ndarray]:
        """Finish a batch.

        Parameters
        ----------
        acc : numpy.ndarray
            (n, 4, ACC_COUNT) int64 accumulators, as ``finish_frame`` receives them per
            frame (the DEN slots hold uint64 bit patterns; a uint64 array is read as its
            int64 bit patterns).

        Returns
        -------
        dict of str to numpy.ndarray
            The 18 outputs keyed by libvmaf's base names (``reference.adm.ALL_FEATURES``),
            each a contiguous float64 array of length n.
        """
        acc = np.asarray(acc)
        if acc.dtype == np.uint64:
            acc = acc.view(np.int64)
        if acc.dtype != np.int64:
            raise TypeError(f"accumulators must be int64, got {acc.dtype}")
        if acc.ndim != 3 or acc.shape[1:] != (_NSCALES, K.ACC_COUNT):
            raise ValueError(
                f"accumulators must be (n, {_NSCALES}, {K.ACC_COUNT}), got {acc.shape}"
            )
        n = acc.shape[0]
        # Work frame-minor: one row per accumulator, one column per frame.
        sub = acc.reshape(n, _NSCALES * K.ACC_COUNT)[:, self._cols].T
        val = np.empty(sub.shape)
        m = self._ncm
        with np.errstate(all="ignore"):
            np.copyto(val[:m], sub[:m])  # int64 -> double
            np.copyto(val[m:], sub[m:].view(np.uint64))  # uint64 -> double
            # acc / 2**e (2**e float-rounded above scale 0 for NUM, AIM)
            if self._exact_recip:
                val *= self._recip
            else:
                val /= self._div
            val[m:] *= self._rf3  # (acc / 2**e) * rf**3
            term = powf(val.astype(np.float32), C.ONE_THIRD_F)
            term += self._add
            term = term.reshape(self._groups.size, 3, n)
            sums = term[:, 0] + term[:, 1]
            sums += term[:, 2]  # float (h + v) + d

            per = np.empty((_NSCALES * len(_KINDS), n))
            per[:] = self._template
            per[self._groups] = sums
            return self._outputs(per.reshape(_NSCALES, len(_KINDS), n))

    def _outputs(self, per: np.ndarray) -> dict[str, np.ndarray]:
        """adm.finish on (scale, (num, aim, den), frame) floats widened to double."""
        n = per.shape[2]
        out = np.empty((len(ALL_FEATURES), n))
        res = dict(zip(ALL_FEATURES, out, strict=True))
        tot = per[0] + 0.0  # the double sums start from 0.0, as libvmaf's do
        for s in range(1, _NSCALES):
            tot += per[s]
        np.copyto(tot, 0.0, where=tot < self._limits)
        num, den = tot[0], tot[2]
        den_zero = den == 0.0
        ratio = out[0:2]  # integer_adm2, integer_aim
        np.divide(tot[0:2], den, out=ratio)
        ratio[:, den_zero] = np.array([[1.0], [math.nan]])
        score, aim = ratio
        adm3 = out[2]
        np.multiply(score, self._dlm, out=adm3)
        # libvmaf leaves AIM unset where den == 0 (reference.adm.finish): adm3 takes it as 0.
        adm3 += (1 - np.where(den_zero, 0.0, aim)) * self._one_minus_dlm
        np.copyto(adm3, self._min_val, where=~(adm3 > self._min_val))
        np.divide(per[:, 0], per[:, 2], out=out[3:7])  # integer_adm_scale0..3
        out[7] = score
        out[8] = num
        out[9] = den
        out[10:18].reshape(_NSCALES, 2, n)[:] = per[:, 0::2]  # num_scale, den_scale
        return res


class _Level(NamedTuple):
    """The parts of a ScaleGeometry the finish reads (cheap to hash)."""

    shape: tuple[int, int]
    den_exp: int
    cm_exps: tuple[int, int, int]


@functools.lru_cache(maxsize=32)
def _cached(levels: tuple[_Level, ...], opts: AdmOptions, width: int, height: int) -> BatchFinish:
    return BatchFinish(levels, opts, width, height)


def finish_batch(
    acc: np.ndarray, geoms: Sequence, opts: AdmOptions, width: int, height: int
) -> dict[str, np.ndarray]:
    """All 18 outputs of a batch of frames from their integer accumulators.

    Equal, output by output and frame by frame (NaN where NaN), to
    ``finish_frame(acc[i], geoms, opts, width, height)``.

    Parameters
    ----------
    acc : numpy.ndarray
        (n, 4, ACC_COUNT) int64, as :meth:`BatchFinish.__call__` takes it.
    geoms : sequence of ScaleGeometry
        ``scale_geometries(width, height, opts)``.
    opts : AdmOptions
        The options of the run.
    width, height : int
        Frame size.

    Returns
    -------
    dict of str to numpy.ndarray
        The 18 outputs keyed by libvmaf's base names, float64 arrays of length n.
    """
    levels = tuple(
        _Level(tuple(g.shape), int(g.den_exp), tuple(int(e) for e in g.cm_exps)) for g in geoms
    )
    try:
        fin = _cached(levels, opts, int(width), int(height))
    except TypeError:  # options that cannot be hashed: build it afresh
        fin = BatchFinish(levels, opts, width, height)
    return fin(acc)
