"""VIF, motion and VMAF models on the CUDA backend against the NumPy reference and libvmaf.

Stage by stage: each scale's four VIF accumulators and each frame's motion SAD from the
GPU equal the reference's integers. End to end: libvmaf 3.2.0's VMAF goldens
(testdata/vmaf_goldens.json, every entry; ../shared/netflix/vmaf_goldens.json where
present) through ``admcuda score --backend cuda``, ``==``; and the CUDA backend equal
to the CPU backend across batches, frame controls, ladders and the API.

Every test here needs CuPy and a CUDA device and is skipped without them.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from admcuda.reference import motion as M
from admcuda.reference import vif as R
from admcuda.reference.vif_filters import pad_top_and_bottom, subsample_rd_8, subsample_rd_16
from conftest import NETFLIX, TESTDATA
from test_cli_vmaf import (
    GEOM_48F,
    PAIR_48F,
    _check_golden,
    _golden_args,
    _golden_entries,
    _score,
)

from admcuda.backends.cuda import cuda_available
from admcuda.cli.main import main

cp = pytest.importorskip("cupy")
if not cuda_available():
    pytest.skip("no CUDA device visible to CuPy", allow_module_level=True)

from admcuda.backends.cuda.vifmotion import CudaMotion, CudaVif  # noqa: E402

pytestmark = pytest.mark.cuda

SIZES = [(16, 16), (17, 19), (33, 37), (97, 55), (160, 90), (301, 17), (576, 324), (1920, 1080)]
DEPTHS = [8, 10, 12, 16]


def _content(w: int, h: int, bitdepth: int, frames: int, seed: int) -> tuple[np.ndarray, ...]:
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


def _reference_residuals(ref, dis, bitdepth, egl):
    table = R.log_generate()
    r = pad_top_and_bottom(ref, 17)
    d = pad_top_and_bottom(dis, 17)
    out = []
    for scale in range(4):
        if scale == 1 and bitdepth == 8:
            r, d = subsample_rd_8(r, d)
        elif scale:
            r, d = subsample_rd_16(r, d, scale - 1, bitdepth)
        if scale == 0 and bitdepth == 8:
            tmp = R.vif_vertical_8(r, d)
        else:
            tmp = R.vif_vertical_16(r, d, bitdepth, scale)
        sig = R.vif_sigma(R.vif_horizontal(tmp, scale))
        out.append(tuple(R.vif_residuals(*sig, table, egl)))
    return out


@pytest.mark.parametrize("bitdepth", DEPTHS)
@pytest.mark.parametrize(("w", "h"), SIZES)
def test_vif_accumulators_equal_the_reference(w, h, bitdepth):
    frames = 3
    ref, dis = _content(w, h, bitdepth, frames, seed=w * h + bitdepth)
    options = [R.VifOptions(), R.VifOptions(vif_enhn_gain_limit=1.0)]
    vif = CudaVif(w, h, bitdepth, batch=2)  # a batch of 3 runs in chunks of at most 2
    acc = cp.zeros((len(options), frames, 4, 4), np.int64)
    vif.queue(cp.asarray(ref), cp.asarray(dis), frames, acc, options)
    got = acc.get()
    for f in range(frames):
        for k, o in enumerate(options):
            want = _reference_residuals(ref[f], dis[f], bitdepth, o.vif_enhn_gain_limit)
            assert [tuple(int(v) for v in got[k, f, s]) for s in range(4)] == want, (f, k)


@pytest.mark.parametrize("bitdepth", DEPTHS)
@pytest.mark.parametrize(("w", "h"), [(3, 3), (5, 4), (255, 7), (257, 9), (576, 324), (1920, 1080)])
def test_motion_sads_equal_the_reference_across_batches(w, h, bitdepth):
    ref, _ = _content(w, h, bitdepth, 7, seed=bitdepth + w)
    motion = CudaMotion(w, h, bitdepth, backs=(1, 2))
    got = []
    for lo, hi in ((0, 1), (1, 4), (4, 7)):  # batches of 1 and 3 frames
        sad = cp.zeros((2, hi - lo), np.uint64)
        motion.queue(cp.asarray(ref[lo:hi]), hi - lo, sad)
        got.append(sad.get())
    got = np.concatenate(got, axis=1)
    for i in range(7):
        for k, back in enumerate((1, 2)):
            if i >= back:
                want = M.motion_score_pipeline(ref[i - back], ref[i], bitdepth)
                assert int(got[k, i]) == want, (i, back)


# --- end to end --------------------------------------------------------------------------

GOLDENS = _golden_entries(TESTDATA / "vmaf_goldens.json", TESTDATA)
SHARED = _golden_entries(NETFLIX / "vmaf_goldens.json", NETFLIX)


@pytest.mark.parametrize("key,entry,base", GOLDENS, ids=[k for k, _, _ in GOLDENS])
def test_testdata_goldens_on_the_gpu(key, entry, base, tmp_path):
    args = [*_golden_args(entry, base), "--backend", "cuda"]
    _check_golden(_score(args, tmp_path / "out.json"), entry)


@pytest.mark.skipif(not SHARED, reason=f"shared VMAF goldens not found at {NETFLIX}")
@pytest.mark.parametrize("key,entry,base", SHARED, ids=[k for k, _, _ in SHARED])
def test_shared_goldens_on_the_gpu(key, entry, base, tmp_path):
    args = [*_golden_args(entry, base), "--backend", "cuda"]
    _check_golden(_score(args, tmp_path / "out.json"), entry)


needs_netflix = pytest.mark.skipif(
    not (NETFLIX / PAIR_48F[0]).exists(), reason=f"shared Netflix pairs not found at {NETFLIX}"
)


@needs_netflix
@pytest.mark.parametrize(
    "extra",
    [
        ["--batch", "1"],
        ["--batch", "5"],
        ["--batch", "4", "--subsample", "3"],
        ["--batch", "3", "--frame_skip_ref", "2", "--frame_cnt", "11"],
        ["--batch", "2", "--feature", "motion=motion_five_frame_window=true:debug=true"],
        ["--model", "version=vmaf_v0.6.1neg:name=neg", "--feature", "vif=debug=true"],
        ["--batch", "2", "--subsample", "5"],  # batches no frame of which is scored
    ],
)
def test_gpu_equals_cpu(extra, tmp_path):
    io = ["-r", str(NETFLIX / PAIR_48F[0]), "-d", str(NETFLIX / PAIR_48F[1]), *GEOM_48F]
    args = [*io, "--model", "version=vmaf_v0.6.1", "--frame_cnt", "17", *extra]
    gpu = _score([*args, "--backend", "cuda"], tmp_path / "gpu.json")
    cpu = _score([*args, "--backend", "cpu", "--threads", "1"], tmp_path / "cpu.json")
    assert gpu["frames"] == cpu["frames"]
    assert gpu["pooled_metrics"] == cpu["pooled_metrics"]


@needs_netflix
def test_gpu_ladder_equals_single_runs(tmp_path):
    ref, dis = (str(NETFLIX / p) for p in PAIR_48F)
    args = [*GEOM_48F, "--model", "version=vmaf_v0.6.1", "--frame_cnt", "9", "--batch", "4"]
    ladder = tmp_path / "{index}.json"
    code = main(["score", "-q", ref, dis, ref, *args, "--backend", "cuda", "--json", "-o",
                 str(ladder)])  # fmt: skip
    assert code == 0
    for k, path in enumerate((dis, ref), start=1):
        single = _score(["-r", ref, "-d", path, *args, "--backend", "cpu"], tmp_path / "s.json")
        rung = json.loads((tmp_path / f"{k}.json").read_text())
        assert rung["frames"] == single["frames"]


@needs_netflix
def test_api_score_on_the_gpu_equals_the_cpu():
    import admcuda

    ref, dis = (str(NETFLIX / p) for p in PAIR_48F)
    kw = dict(width=160, height=90, frame_cnt=6, model="vmaf_v0.6.1")
    gpu = admcuda.score(ref, dis, backend="cuda", **kw)
    cpu = admcuda.score(ref, dis, backend="cpu", **kw)
    assert gpu.backend == "cuda"
    assert list(gpu.array("vmaf")) == list(cpu.array("vmaf"))


@pytest.mark.parametrize("bitdepth", [8, 10])
def test_vmaf_extractor_scores_device_frames_as_the_cpu_does(bitdepth):
    from admcuda import VmafExtractor

    ref, dis = _content(97, 55, bitdepth, 7, seed=11)
    feats = ["vif=debug=true", "motion=motion_five_frame_window=true"]
    with VmafExtractor(97, 55, bitdepth, features=feats, backend="cuda", batch=3) as gpu, \
            VmafExtractor(97, 55, bitdepth, features=feats, backend="cpu") as cpu:  # fmt: skip
        assert gpu.backend == "cuda" and cpu.backend == "cpu"
        first = gpu.extract(cp.asarray(ref[0]), cp.asarray(dis[0]))
        assert first == cpu.extract(ref[0], dis[0])
        assert gpu.extract_batch(cp.asarray(ref[1:]), cp.asarray(dis[1:])) == cpu.extract_batch(
            ref[1:], dis[1:]
        )
        assert gpu.score_at(2) == cpu.score_at(2)
        assert gpu.flush() == cpu.flush()
