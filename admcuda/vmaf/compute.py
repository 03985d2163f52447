"""A :class:`~admcuda.vmaf.plan.FeaturePlan` computed on the CPU with the NumPy reference.

Three steps, as libvmaf's run has them:

- :func:`score_pair`, per frame pair: every extractor's ``extract`` (ADM, VIF, and motion's
  score of the reference against the previous reference). A top-level function of picklable
  arguments, so a process pool can run frames in any order and on any worker.
- :func:`finish_clip`, once the clip is read: motion's ``flush`` (``integer_motion2`` and
  ``integer_motion3`` from every frame's score), then each model's score per frame (and a
  model collection's other scores: its members', its bagging score, standard deviation and
  95% interval), every frame's outputs in libvmaf's order (:meth:`FeaturePlan.output_order`).
- :func:`pooled`: ``pooled_metrics``, libvmaf's min, max, mean and harmonic mean of every
  output over the frames scored.

What the caller feeds, when the plan runs motion (:attr:`FeaturePlan.needs_every_frame`):

- every reference frame read, in order, each with the reference frame read before it as
  ``prev_ref`` (and the one before that as ``prev_prev_ref`` where
  :attr:`FeaturePlan.history` is 2, motion's five-frame window); None for the first frame
  read, and for the second's ``prev_prev_ref``. libvmaf scores frame 0 (and frame 1 with
  the five-frame window) as 0 whatever the planes; a missing previous plane later scores 0
  here too, where libvmaf fails, so never leave one out. speed_temporal also reads the
  distorted plane read before ``dis``, as ``prev_dis``: its scored frame is the difference
  of the two frames on each side.
- ``--frame_skip_ref K``: libvmaf's tool drops the first K reference frames before it hands
  any to the library, so the first frame scored has no previous plane: ``prev_ref=None``.
  ``--frame_skip_dist`` moves the distorted file only.
- ``--subsample N``: libvmaf runs motion on every frame and the other extractors on frames
  ``0, N, 2N, ...``. Call :func:`score_pair` for every frame read, with ``scored=False`` on
  the others (motion's score alone, cheap), and hand :func:`finish_clip` all of them with
  ``subsample=N``: a scored frame's motion2 reads the next frame *read*.
- batches, threads and ladder rungs change nothing as long as each frame gets the planes
  read before it; ``--frame_cnt M`` is a clip of M frames (the last frame's motion2 is its
  own score).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from admcuda.errors import AdmError
from admcuda.model import POOL_METHODS, output_name, pool
from admcuda.reference import motion as _motion
from admcuda.reference.adm import compute_adm
from admcuda.reference.vif import compute_vif
from admcuda.vmaf import float_motion as _float_motion
from admcuda.vmaf.cambi import CAMBI_KIND, cambi_frame
from admcuda.vmaf.ciede import CIEDE_KIND, ciede_frame
from admcuda.vmaf.float_adm import FLOAT_ADM_KIND, float_adm_frame
from admcuda.vmaf.float_ansnr import FLOAT_ANSNR_KIND, float_ansnr_frame
from admcuda.vmaf.float_psnr import FLOAT_PSNR_KIND, float_psnr_frame
from admcuda.vmaf.float_vif import FLOAT_VIF_KIND, float_vif_frame
from admcuda.vmaf.moment import MOMENT_KIND, moment_frame
from admcuda.vmaf.plan import Extractor, FeaturePlan
from admcuda.vmaf.psnr import aggregate_metrics, psnr_frame
from admcuda.vmaf.psnr_hvs import PSNR_HVS_KIND, psnr_hvs_frame
from admcuda.vmaf.speed import SPEED_KIND, speed_chroma_frame
from admcuda.vmaf.speed_temporal import SPEED_TEMPORAL_KIND, speed_temporal_frame
from admcuda.vmaf.ssim import SSIM_KINDS, ssim_frame

__all__ = ["aggregate_metrics", "finish_clip", "pooled", "score_clip", "score_pair"]


def _check_prev(name: str, plane: np.ndarray | None, ref: np.ndarray) -> None:
    if plane is None:
        return
    if not isinstance(plane, np.ndarray) or plane.shape != ref.shape or plane.dtype != ref.dtype:
        raise AdmError(f"{name} must be a plane of the reference's shape and dtype")


def _motion_score(
    ex: Extractor,
    ref: np.ndarray,
    prevs: tuple[np.ndarray | None, np.ndarray | None],
    bitdepth: int,
    sads: dict[int, int],
) -> float:
    """libvmaf's motion ``extract`` score of one frame (0 without the previous plane it
    compares with). ``sads`` keeps the SAD against each previous plane: extractors that
    differ in options share it."""
    back = ex.history
    if back == 0 or prevs[back - 1] is None:
        return 0.0
    if back not in sads:
        sads[back] = _motion.motion_score_pipeline(prevs[back - 1], ref, bitdepth)
    h, w = ref.shape
    return _motion.motion_score(sads[back], w, h, ex.options)  # type: ignore[arg-type]


def score_pair(
    plan: FeaturePlan,
    ref: np.ndarray,
    dis: np.ndarray,
    prev_ref: np.ndarray | None,
    bitdepth: int,
    *,
    prev_prev_ref: np.ndarray | None = None,
    scored: bool = True,
    ref_chroma: Sequence[np.ndarray] | None = None,
    dis_chroma: Sequence[np.ndarray] | None = None,
    prev_ref_chroma: Sequence[np.ndarray] | None = None,
    prev_dis: np.ndarray | None = None,
) -> dict[str, float]:
    """Every extractor's per-frame outputs for one frame pair, by printed name.

    Parameters
    ----------
    plan : FeaturePlan
    ref, dis : ndarray
        Luma planes, uint8 at 8 bits and uint16 above.
    prev_ref : ndarray or None
        The reference plane read before ``ref`` (None for the first frame read); read by
        motion, float_motion and speed_temporal only.
    bitdepth : int
        8 to 16.
    prev_prev_ref : ndarray or None
        The one before that, for motion's five-frame window (:attr:`FeaturePlan.history`).
    scored : bool
        False for a frame that ``--subsample`` passes over: only motion's score is
        computed (``dis`` is not read), and PSNR's with ``enable_apsnr``.
    ref_chroma, dis_chroma : sequence of two ndarray, optional
        The Cb and Cr planes, read by PSNR (where its ``enable_chroma`` is on),
        speed_chroma, ciede and psnr_hvs; the reference's by float_motion with
        ``motion_add_uv``.
    prev_ref_chroma : sequence of two ndarray, optional
        The Cb and Cr planes of the reference frame read before ``ref``, for float_motion
        with ``motion_add_uv``.
    prev_dis : ndarray, optional
        The distorted plane read before ``dis``, for speed_temporal (given with
        ``prev_ref``).

    Returns
    -------
    dict of str to float
        Every extractor's outputs (ADM's, VIF's, PSNR's, SSIM's, float_psnr's, ...)
        and motion's per-frame score (``score_key`` of each motion extractor, and
        :func:`admcuda.vmaf.float_motion.score_key` of each float_motion one: the keys
        :func:`finish_clip` reads), unordered; with PSNR's ``enable_apsnr`` also its
        squared-error sums, ints that :func:`aggregate_metrics` adds up.

    Raises
    ------
    AdmError
        A plane the reference cannot score (size, dtype, bit depth), in one line.
    """
    try:
        if plan.needs_every_frame:
            _motion.check_plane(ref, bitdepth)
            _check_prev("prev_ref", prev_ref, ref)
            _check_prev("prev_prev_ref", prev_prev_ref, ref)
        out: dict[str, float] = {}
        sads: dict[int, int] = {}
        for ex in plan.extractors:
            if ex.kind == "motion":
                score = _motion_score(ex, ref, (prev_ref, prev_prev_ref), bitdepth, sads)
                out[ex.score_key] = score
                if ex.options.debug:  # type: ignore[union-attr]
                    out[ex.names[_motion.MOTION]] = score
            elif ex.kind == _float_motion.FLOAT_MOTION_KIND:
                cur = [ref, *(ref_chroma or ())]
                prev = None if prev_ref is None else [prev_ref, *(prev_ref_chroma or ())]
                if ex.options.motion_add_uv and (  # type: ignore[union-attr]
                    len(cur) != 3 or (prev is not None and len(prev) != 3)
                ):
                    raise AdmError(
                        "float_motion's motion_add_uv reads chroma: give the Y, Cb and Cr "
                        "planes of the reference frame and of the one before"
                    )
                out.update(_float_motion.float_motion_frame(ex, cur, prev, bitdepth))
            elif ex.kind == "psnr":
                if scored or ex.aggregate_outputs:
                    refs = [ref, *(ref_chroma or ())]
                    diss = [dis, *(dis_chroma or ())]
                    out.update(psnr_frame(ex, refs, diss, bitdepth))
            elif not scored:
                continue
            elif ex.kind in SSIM_KINDS:
                out.update(ssim_frame(ex, ref, dis, bitdepth))
            elif ex.kind == CAMBI_KIND:
                out.update(cambi_frame(ex, ref, dis, bitdepth))
            elif ex.kind == MOMENT_KIND:
                out.update(moment_frame(ex, ref, dis, bitdepth))
            elif ex.kind == FLOAT_PSNR_KIND:
                out.update(float_psnr_frame(ex, ref, dis, bitdepth))
            elif ex.kind == SPEED_TEMPORAL_KIND:
                out.update(speed_temporal_frame(ex, ref, dis, prev_ref, prev_dis, bitdepth))
            elif ex.kind == FLOAT_ANSNR_KIND:
                out.update(float_ansnr_frame(ex, ref, dis, bitdepth))
            elif ex.kind == FLOAT_VIF_KIND:
                out.update(float_vif_frame(ex, ref, dis, bitdepth))
            elif ex.kind == FLOAT_ADM_KIND:
                out.update(float_adm_frame(ex, ref, dis, bitdepth))
            elif ex.kind == SPEED_KIND:
                if not ref_chroma or not dis_chroma:
                    raise AdmError("speed_chroma reads chroma: give the Y, Cb and Cr planes")
                out.update(speed_chroma_frame(ex, tuple(ref_chroma), tuple(dis_chroma), bitdepth))
            elif ex.kind == CIEDE_KIND:
                if not ref_chroma or not dis_chroma:
                    raise AdmError("ciede reads chroma: give the Y, Cb and Cr planes")
                out.update(ciede_frame(ex, (ref, *ref_chroma), (dis, *dis_chroma), bitdepth))
            elif ex.kind == PSNR_HVS_KIND:
                if not ref_chroma or not dis_chroma:
                    raise AdmError("psnr_hvs reads chroma: give the Y, Cb and Cr planes")
                frames = (ref, *ref_chroma), (dis, *dis_chroma)
                out.update(psnr_hvs_frame(ex, *frames, bitdepth))
            elif ex.kind == "adm":
                values = compute_adm(ref, dis, bitdepth, ex.options)
                for base, name in ex.names.items():
                    if name in ex.extract_outputs:
                        out[name] = float(values[base])
            else:
                values = compute_vif(ref, dis, bitdepth, ex.options)
                for name in ex.extract_outputs:
                    out[name] = float(values[name])
        return out
    except ValueError as exc:
        raise AdmError(str(exc)) from None


def finish_clip(
    plan: FeaturePlan, frames: Sequence[dict[str, float]], *, subsample: int = 1
) -> list[dict[str, float]]:
    """Every scored frame's outputs, as libvmaf prints them, once the clip is read.

    Adds motion's ``integer_motion2`` and ``integer_motion3`` (libvmaf's ``flush``:
    :func:`admcuda.reference.motion.flush_scores` over every frame's score) and
    float_motion's ``motion2``, ``motion`` and ``motion3``
    (:func:`admcuda.vmaf.float_motion.finish`), keeps frames
    ``0, subsample, 2*subsample, ...``, and adds each model's score under its name
    (``vmaf`` by default) unless the plan does not predict.

    Parameters
    ----------
    plan : FeaturePlan
    frames : sequence of dict
        :func:`score_pair`'s result for every frame read, in order (``scored=False`` ones
        for the frames ``subsample`` passes over, where the plan runs motion; without
        motion, the scored frames alone may be given with ``subsample=1``).
    subsample : int
        libvmaf's ``--subsample``.

    Returns
    -------
    list of dict
        One per scored frame (the k-th is frame ``k * subsample``), keys in
        :meth:`FeaturePlan.output_order`.

    Raises
    ------
    AdmError
        A frame without an output the plan needs, or a bad ``subsample``.
    """
    if isinstance(subsample, bool) or not isinstance(subsample, int) or subsample < 1:
        raise AdmError(f"subsample must be a positive integer, got {subsample!r}")
    rows = [dict(f) for f in frames]
    for ex in plan.extractors:
        if ex.kind == _float_motion.FLOAT_MOTION_KIND:
            _float_motion.finish(ex, rows)
            continue
        if ex.kind != "motion":
            continue
        try:
            scores = [f[ex.score_key] for f in rows]
        except KeyError:
            raise AdmError(
                f"{ex.name}: a frame has no motion score ({ex.score_key}); give finish_clip "
                "score_pair's result for every frame read"
            ) from None
        motion2, motion3 = _motion.flush_scores(scores, ex.options)  # type: ignore[arg-type]
        for row, m2, m3 in zip(rows, motion2, motion3, strict=True):
            row[ex.names[_motion.MOTION2]] = m2
            if ex.name == "motion":
                row[ex.names[_motion.MOTION3]] = m3
    scores = set(plan.model_outputs) | set(plan.collection_outputs)
    features = [n for n in plan.output_order() if n not in scores]
    result = []
    for k, row in enumerate(rows[::subsample]):
        missing = [n for n in features if n not in row]
        if missing:
            raise AdmError(
                f"frame {k * subsample} has no {missing[0]}: score it with score_pair(..., "
                "scored=True)"
            )
        result.append({n: row[n] for n in features})
    if plan.predict and result:
        # every frame at once: Model.predict_many equals Model.predict frame by frame
        columns = {n: np.array([f[n] for f in result], dtype=np.float64) for n in features}
        for model in plan.models:
            name = output_name(model.name)
            for out, score in zip(result, model.predict_many(columns).tolist(), strict=True):
                out[name] = score
        # libvmaf's tool pools every model, then the collections' other scores
        for model in plan.models:
            for name, values in model.predict_collection_many(columns).items():
                for out, score in zip(result, values.tolist(), strict=True):
                    out[output_name(name)] = score
    return result


def pooled(plan: FeaturePlan, frames: Sequence[dict[str, float]]) -> dict[str, dict[str, float]]:
    """libvmaf's ``pooled_metrics``: min, max, mean and harmonic mean of every output.

    Parameters
    ----------
    plan : FeaturePlan
    frames : sequence of dict
        :func:`finish_clip`'s frames (the scored ones only, as libvmaf pools them).

    Returns
    -------
    dict
        Printed name -> {"min", "max", "mean", "harmonic_mean"} -> value, names in
        :meth:`FeaturePlan.output_order`.
    """
    if not frames:
        raise AdmError("no frames to pool")
    return {
        name: {m: pool((f[name] for f in frames), m) for m in POOL_METHODS}
        for name in plan.output_order()
    }


def score_clip(
    plan: FeaturePlan,
    pairs: Iterable[tuple[np.ndarray, np.ndarray]],
    bitdepth: int,
    *,
    subsample: int = 1,
) -> list[dict[str, float]]:
    """:func:`score_pair` over every frame pair read, in order, then :func:`finish_clip`:
    one process, the planes of each pair read once. A frame is its luma plane, or a
    tuple of its Y, Cb and Cr planes (for PSNR's chroma)."""
    if isinstance(subsample, bool) or not isinstance(subsample, int) or subsample < 1:
        raise AdmError(f"subsample must be a positive integer, got {subsample!r}")
    frames: list[dict[str, float]] = []
    prev: np.ndarray | None = None
    prev_prev: np.ndarray | None = None
    prev_chroma: list[np.ndarray] | None = None
    prev_dis: np.ndarray | None = None
    for i, (ref_planes, dis_planes) in enumerate(pairs):
        ref, ref_chroma = _split(ref_planes)
        dis, dis_chroma = _split(dis_planes)
        scored = i % subsample == 0
        frames.append(
            score_pair(
                plan,
                ref,
                dis,
                prev,
                bitdepth,
                prev_prev_ref=prev_prev,
                scored=scored,
                ref_chroma=ref_chroma,
                dis_chroma=dis_chroma,
                prev_ref_chroma=prev_chroma,
                prev_dis=prev_dis,
            )  # fmt: skip
        )
        prev_prev, prev, prev_chroma, prev_dis = prev, ref, ref_chroma, dis
    return finish_clip(plan, frames, subsample=subsample)


def _split(frame: np.ndarray | Sequence[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray] | None]:
    """A frame given as its luma plane, or as (Y, Cb, Cr): the luma and the chroma."""
    if isinstance(frame, np.ndarray):
        return frame, None
    planes = list(frame)
    return planes[0], planes[1:] or None
