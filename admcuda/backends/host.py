"""Host finishes shared by the compiled CPU engine and the CUDA engine: integer
accumulators in, the outputs :func:`admcuda.vmaf.score_pair` gives out, vectorised over a
batch of frames and bit-identical with the reference's per-frame steps.

- :func:`finish_vif`: VIF's four accumulators per scale to its outputs
  (:func:`reference.vif.vif_num_den` and :func:`reference.vif.write_scores`);
- :func:`motion_scores`: motion SADs to each motion extractor's per-frame score;
- :func:`plan_rows`: a batch's ADM, VIF and motion results to the rows a feature plan
  gives per distorted input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from admcuda.reference import vif_constants as V
from admcuda.reference.motion import MotionOptions
from admcuda.reference.vif import ALL_FEATURES, BASE_FEATURES, VifOptions

__all__ = ["finish_vif", "motion_scores", "plan_rows", "plan_vif_options", "vif_outputs"]


def finish_vif(acc: np.ndarray, opts: VifOptions) -> dict[str, np.ndarray]:
    """:func:`reference.vif.write_scores` of each frame from its accumulators ((n, 4, 4)
    int64), vectorised: every element rounds as the reference's scalar steps do. Keys are
    the printed names, in libvmaf's order."""
    from admcuda.reference.vif import feature_names

    names = feature_names(opts)
    div_a, div_b = V.NON_LOG_NUM_DIV
    one = float(V.LOG2_ONE)
    a = acc.astype(np.float64)
    num = (a[..., 0] / one + (a[..., 3] - (a[..., 2] / div_a) / div_b)).astype(np.float32)
    den = (a[..., 1] / one + a[..., 3]).astype(np.float32)
    skip = bool(opts.vif_skip_scale0)
    out: dict[str, np.ndarray] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for s in range(V.N_SCALES):
            score = (num[:, s] / den[:, s]).astype(np.float64)
            out[names[BASE_FEATURES[s]]] = np.zeros(len(acc)) if (skip and s == 0) else score
        if not opts.debug:
            return out
        score_num = np.zeros(len(acc))
        score_den = np.zeros(len(acc))
        for s in range(1 if skip else 0, V.N_SCALES):
            score_num = score_num + num[:, s].astype(np.float64)
            score_den = score_den + den[:, s].astype(np.float64)
        safe = np.where(score_den == 0.0, 1.0, score_den)
        out[names["integer_vif"]] = np.where(score_den == 0.0, 1.0, score_num / safe)
    out[names["integer_vif_num"]] = score_num
    out[names["integer_vif_den"]] = score_den
    for s in range(V.N_SCALES):
        if skip and s == 0:
            n0 = np.full(len(acc), V.SKIP_SCALE0_NUM)
            d0 = np.full(len(acc), V.SKIP_SCALE0_DEN)
        else:
            n0, d0 = num[:, s].astype(np.float64), den[:, s].astype(np.float64)
        out[names[f"integer_vif_num_scale{s}"]] = n0
        out[names[f"integer_vif_den_scale{s}"]] = d0
    return {names[b]: out[names[b]] for b in ALL_FEATURES if names[b] in out}


def motion_scores(
    sad: np.ndarray, backs: Sequence[int], first: int, extractors: Sequence[Any],
    width: int, height: int,
) -> dict[str, np.ndarray]:  # fmt: skip
    """Each motion extractor's per-frame score (its ``score_key``, and ``integer_motion``
    under ``debug``) from the SADs, as :func:`admcuda.vmaf.compute.score_pair` gives
    them: 0 for a frame without the previous plane it compares with."""
    from admcuda.reference.motion import MOTION, motion_score

    n = sad.shape[1] if sad.ndim == 2 else 0
    out: dict[str, np.ndarray] = {}
    for ex in extractors:
        opts: MotionOptions = ex.options
        back = ex.history
        values = np.zeros(n)
        if back:
            row = sad[backs.index(back)].tolist()
            for i in range(n):
                if first + i >= back:
                    values[i] = motion_score(int(row[i]), width, height, opts)
        out[ex.score_key] = values
        if opts.debug:
            out[ex.names[MOTION]] = values
    return out


def plan_vif_options(extractors: Sequence[Any]) -> list[VifOptions]:
    """The VIF extractors' options, in plan order."""
    return [ex.options for ex in extractors if ex.kind == "vif"]


def vif_outputs(acc: np.ndarray, extractors: Sequence[Any]) -> dict[str, np.ndarray]:
    """Every VIF extractor's per-frame outputs (those it writes at extract) from
    :meth:`CudaVif.queue`'s accumulators."""
    out: dict[str, np.ndarray] = {}
    vifs = [ex for ex in extractors if ex.kind == "vif"]
    for k, ex in enumerate(vifs):
        values: Mapping[str, np.ndarray] = finish_vif(acc[k], ex.options)
        for name in ex.extract_outputs:
            out[name] = values[name]
    return out


def plan_rows(
    plan: Any,
    frames: int,
    scored: np.ndarray,
    sets: int,
    adm: Sequence[Sequence[Mapping[str, np.ndarray]]],
    vif: np.ndarray | None,
    motion: Mapping[str, np.ndarray],
) -> list[dict[str, np.ndarray]]:
    """Per distorted input, the outputs :func:`admcuda.vmaf.score_pair` gives, as float64
    arrays over a batch of ``frames``.

    ``scored``: the batch's frames that ADM and VIF computed (the others get NaN there);
    ``adm``: per ADM extractor of the plan, per input, the 18 outputs by base name over
    the scored frames; ``vif``: (sets, VIF extractors, scored, 4, 4) accumulators, or
    None; ``motion``: :func:`motion_scores` over all frames.
    """
    ns = len(scored)

    def widen(values: np.ndarray) -> np.ndarray:
        if ns == frames:
            return np.asarray(values, dtype=np.float64)
        full = np.full(frames, np.nan)
        full[scored] = values
        return full

    adm_ex = [ex for ex in plan.extractors if ex.kind == "adm"]
    vif_ex = [ex for ex in plan.extractors if ex.kind == "vif"]
    keys = plan.pair_keys()
    out = []
    for m in range(sets):
        row: dict[str, np.ndarray] = {}
        for k, ex in enumerate(adm_ex):
            for base, name in ex.names.items():
                if name in ex.extract_outputs:
                    row[name] = widen(adm[k][m][base]) if ns else np.full(frames, np.nan)
        if vif is not None and ns:
            for name, values in vif_outputs(vif[m], vif_ex).items():
                row[name] = widen(values)
        else:
            for ex in vif_ex:
                for name in ex.extract_outputs:
                    row[name] = np.full(frames, np.nan)
        row.update(motion)
        out.append({k: row[k] for k in keys if k in row})
    return out
