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
from _vif_content import structured_pair, vif_reference
from admcuda.reference import motion as M
from admcuda.reference import vif as R
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


@pytest.mark.parametrize("bitdepth", DEPTHS)
@pytest.mark.parametrize(("w", "h"), SIZES)
def test_vif_accumulators_equal_the_reference(w, h, bitdepth):
    frames = 3
    ref, dis = structured_pair(w, h, bitdepth, frames, seed=w * h + bitdepth)
    options = [R.VifOptions(), R.VifOptions(vif_enhn_gain_limit=1.0)]
    vif = CudaVif(w, h, bitdepth, batch=2)  # a batch of 3 runs in chunks of at most 2
    acc = cp.zeros((len(options), frames, 4, 4), np.int64)
    vif.queue(cp.asarray(ref), cp.asarray(dis), frames, acc, options)
    got = acc.get()
    for f in range(frames):
        for k, o in enumerate(options):
            want = vif_reference(ref[f], dis[f], bitdepth, o.vif_enhn_gain_limit)[0]
            assert [tuple(int(v) for v in got[k, f, s]) for s in range(4)] == want, (f, k)


@pytest.mark.parametrize("bitdepth", DEPTHS)
@pytest.mark.parametrize(("w", "h"), [(3, 3), (5, 4), (255, 7), (257, 9), (576, 324), (1920, 1080)])
def test_motion_sads_equal_the_reference_across_batches(w, h, bitdepth):
    ref, _ = structured_pair(w, h, bitdepth, 7, seed=bitdepth + w)
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

    ref, dis = structured_pair(97, 55, bitdepth, 7, seed=11)
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


def test_vmaf_extractor_scores_torch_gpu_tensors_as_the_cpu_does():
    """Frames a PyTorch decoder or model left on the GPU, handed over through DLPack."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    from admcuda import VmafExtractor

    ref, dis = structured_pair(160, 90, 8, 5, seed=4)
    with VmafExtractor(160, 90, 8, backend="cuda", batch=2) as gpu, \
            VmafExtractor(160, 90, 8, backend="cpu") as cpu:  # fmt: skip
        got = gpu.extract_batch(torch.from_numpy(ref).cuda(), torch.from_numpy(dis).cuda())
        assert got == cpu.extract_batch(ref, dis)
        assert gpu.flush() == cpu.flush()
