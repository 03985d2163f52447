"""VmafExtractor with the host features (psnr, float_ssim, float_ms_ssim, cambi,
speed_chroma, so the vmaf_v1.0.16 models): every frame, pooled and aggregate value ``==``
:func:`admcuda.score` on the same frames, fed one frame or a batch at a time, on the NumPy
reference, the compiled engine and (through a stand-in engine) the CUDA backend's path.

Truth: :func:`admcuda.score`, which tests/test_psnr.py, test_ssim_feature.py,
test_cambi_feature.py, test_speed_chroma.py and test_model_v1016.py check against libvmaf
3.2.0's goldens.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from conftest import NETFLIX

import admcuda
from admcuda.backends import compiled
from admcuda.errors import AdmError
from admcuda.vmaf import extractor as extractor_module
from admcuda.vmaf import score_pair
from admcuda.vmaf.extractor import VmafExtractor

W, H = 576, 324
REF = NETFLIX / "src01_hrc00_576x324_3f.yuv"
DIS = NETFLIX / "src01_hrc01_576x324_3f.yuv"
NEEDS_NETFLIX = pytest.mark.skipif(
    not (REF.exists() and DIS.exists()), reason=f"Netflix 576x324 pair not found at {NETFLIX}"
)
FEATURES_420 = ["psnr=enable_apsnr=true"]
MODEL_420 = "vmaf_v1.0.16_3d0h"


def _yuv420(path: Path, w: int, h: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """8-bit 4:2:0 frames as (Y, Cb, Cr), read with NumPy alone."""
    raw = np.fromfile(path, np.uint8)
    cw, ch = (w + 1) // 2, (h + 1) // 2
    size = w * h + 2 * cw * ch
    frames = []
    for k in range(len(raw) // size):
        f = raw[k * size : (k + 1) * size]
        y = f[: w * h].reshape(h, w)
        cb = f[w * h : w * h + cw * ch].reshape(ch, cw)
        cr = f[w * h + cw * ch :].reshape(ch, cw)
        frames.append((y, cb, cr))
    return frames


def _same(a: dict, b: dict) -> bool:
    return list(a) == list(b) and all(
        x == y or (math.isnan(x) and math.isnan(y))
        for x, y in zip(a.values(), b.values(), strict=True)
    )


def _one_line(err: pytest.ExceptionInfo) -> None:
    assert "\n" not in str(err.value)


@pytest.fixture(params=["numpy", "compiled"])
def engine(request, monkeypatch):
    monkeypatch.setenv(compiled.ENV, request.param)
    return request.param


@NEEDS_NETFLIX
def test_v1016_and_psnr_frame_by_frame_equal_score(engine):
    truth = admcuda.score(REF, DIS, width=W, height=H, pixel_format="420", bitdepth=8,
                          model=MODEL_420, features=FEATURES_420)  # fmt: skip
    refs, diss = _yuv420(REF, W, H), _yuv420(DIS, W, H)
    with VmafExtractor(W, H, model=MODEL_420, features=FEATURES_420, pixel_format="420",
                       backend="cpu", threads=2) as ext:  # fmt: skip
        assert ext.engine == engine and ext.pixel_format == "420"
        got = ext.extract(refs[0][0], diss[0][0], ref_chroma=refs[0][1:], dis_chroma=diss[0][1:])
        assert list(got) == list(ext.extract_names)
        assert got["psnr_cb"] == truth[0]["psnr_cb"]
        assert (
            got["speed_chroma_uv_mxv_45_nnf_0.1_snn_0.19_wvm_5"]
            == truth[0]["speed_chroma_uv_mxv_45_nnf_0.1_snn_0.19_wvm_5"]
        )
        # the model reads motion2 (from motion3's moving average): final after the next
        with pytest.raises(AdmError, match="frame 0 is final once frame 1 is extracted"):
            ext.score_at(0)
        ext.extract(refs[1][0], diss[1][0], ref_chroma=refs[1][1:], dis_chroma=diss[1][1:])
        assert ext.frames_final == 1
        assert ext.score_at(0) == truth[0]["vmaf"]
        assert _same(ext.frame_at(0), truth[0])
        ext.extract(refs[2][0], diss[2][0], ref_chroma=refs[2][1:], dis_chroma=diss[2][1:])
        assert ext.score_at(1) == truth[1]["vmaf"]
        with pytest.raises(AdmError, match="frame 2 is final once frame 3 is extracted"):
            ext.score_at(2)
        frames = ext.flush()
        assert len(frames) == len(truth) == 3
        assert all(_same(a, b) for a, b in zip(frames, truth, strict=True))
        assert ext.pooled() == truth.pooled
        assert ext.aggregate() == truth.aggregate and set(truth.aggregate) == {
            "apsnr_y", "apsnr_cb", "apsnr_cr"
        }  # fmt: skip


@NEEDS_NETFLIX
def test_v1016_in_batches_of_stacked_chroma(engine):
    truth = admcuda.score(REF, DIS, width=W, height=H, pixel_format="420", bitdepth=8,
                          model=MODEL_420, features=FEATURES_420)  # fmt: skip
    refs, diss = _yuv420(REF, W, H), _yuv420(DIS, W, H)
    y = [np.stack([f[0] for f in side]) for side in (refs, diss)]
    uv = [np.stack([np.stack(f[1:]) for f in side]) for side in (refs, diss)]  # (n, 2, h, w)
    with VmafExtractor(W, H, model=MODEL_420, features=FEATURES_420, pixel_format="420",
                       backend="cpu", threads=2) as ext:  # fmt: skip
        ext.extract_batch(y[0][:1], y[1][:1], ref_chroma=uv[0][:1], dis_chroma=uv[1][:1])
        ext.extract_batch(list(y[0][1:]), list(y[1][1:]),
                          ref_chroma=[tuple(p) for p in uv[0][1:]],
                          dis_chroma=[tuple(p) for p in uv[1][1:]])  # fmt: skip
        assert all(_same(a, b) for a, b in zip(ext.flush(), truth, strict=True))
        assert ext.pooled() == truth.pooled and ext.aggregate() == truth.aggregate


def _synthetic(tmp_path: Path, n: int, w: int, h: int) -> tuple[Path, Path, np.ndarray, np.ndarray]:
    """4:0:0 8-bit frames: a noisy gradient as the reference, the same gradient in flat
    steps of one code value as the distorted frames (CAMBI's banding), moving."""
    rng = np.random.default_rng(7)
    yy, xx = np.mgrid[0:h, 0:w]
    bands = (60 + xx // 12 + yy // 30).astype(np.int32)
    refs = np.stack([np.clip(bands + rng.integers(-3, 4, bands.shape), 0, 255) for _ in range(n)])
    diss = np.stack([np.roll(bands, 2 * k, axis=1) for k in range(n)])
    refs, diss = refs.astype(np.uint8), diss.astype(np.uint8)
    ref_path, dis_path = tmp_path / "ref.yuv", tmp_path / "dis.yuv"
    refs.tofile(ref_path)
    diss.tofile(dis_path)
    return ref_path, dis_path, refs, diss


LUMA_FEATURES = ["float_ssim", "float_ms_ssim", "cambi", "psnr=enable_apsnr=true"]


def test_luma_host_features_equal_score(tmp_path, engine):
    w, h, n = 224, 180, 4
    ref_path, dis_path, refs, diss = _synthetic(tmp_path, n, w, h)
    truth = admcuda.score(ref_path, dis_path, width=w, height=h, pixel_format="400",
                          bitdepth=8, model="vmaf_v0.6.1", features=LUMA_FEATURES)  # fmt: skip
    # 4:0:0, or no chroma layout at all with PSNR's chroma off: luma only either way
    no_chroma = [*LUMA_FEATURES[:-1], "psnr=enable_apsnr=true:enable_chroma=false"]
    for fmt, features in (("400", LUMA_FEATURES), (None, no_chroma)):
        with VmafExtractor(w, h, features=features, pixel_format=fmt, backend="cpu",
                           threads=2) as ext:  # fmt: skip
            rows = [ext.extract(refs[0], diss[0])]
            rows += ext.extract_batch(refs[1:], diss[1:])
            assert rows[1]["float_ms_ssim"] == truth[1]["float_ms_ssim"]
            assert rows[2]["cambi"] == truth[2]["cambi"] and truth[2]["cambi"] > 0
            assert ext.score_at(2) == truth[2]["vmaf"]
            frames = ext.flush()
            assert all(_same(a, b) for a, b in zip(frames, truth, strict=True))
            assert ext.pooled() == truth.pooled
            assert ext.aggregate() == truth.aggregate
            assert "psnr_cb" not in ext.output_names


def test_host_features_alone(tmp_path):
    w, h, n = 64, 48, 3
    ref_path, dis_path, refs, diss = _synthetic(tmp_path, n, w, h)
    truth = admcuda.score(ref_path, dis_path, width=w, height=h, pixel_format="400",
                          bitdepth=8, features=["float_ssim"], no_prediction=True)  # fmt: skip
    with VmafExtractor(w, h, model=None, features=["float_ssim"]) as ext:
        assert ext.frames_final == 0
        ext.extract_batch(refs, diss)
        assert ext.frames_final == n  # no motion: final at once
        assert ext.flush() == list(truth)


class _StandInCuda:
    """The CUDA engine's interface (batch, submit, collect, close) on the NumPy reference:
    what the CUDA backend's path hands its engine, without a GPU."""

    def __init__(self, plan, bitdepth):
        self.plan, self.bitdepth, self.batch = plan, bitdepth, 2
        self.prev = self.prev_prev = None
        self.seen: list = []

    def submit(self, ref, dis, frames):
        self.seen.append(ref)
        rows = []
        for r, d in zip(ref[:frames], dis[0][:frames], strict=True):
            rows.append(score_pair(self.plan, r, d, self.prev, self.bitdepth,
                                   prev_prev_ref=self.prev_prev))  # fmt: skip
            self.prev_prev, self.prev = self.prev, r.copy()
        return rows

    def collect(self, rows):
        return [{n: np.array([r[n] for r in rows]) for n in rows[0]}]

    def close(self):
        pass


@NEEDS_NETFLIX
def test_the_cuda_path_hands_the_engine_its_features_and_scores_the_rest_on_the_host(
    monkeypatch,
):
    engines: list[_StandInCuda] = []

    def open_cuda(ext, batch, device):
        engines.append(_StandInCuda(ext._engine_plan, ext.bitdepth))
        return engines[-1]

    monkeypatch.setattr(extractor_module, "_open_cuda_vmaf", open_cuda)
    truth = admcuda.score(REF, DIS, width=W, height=H, pixel_format="420", bitdepth=8,
                          model=MODEL_420, features=FEATURES_420)  # fmt: skip
    refs, diss = _yuv420(REF, W, H), _yuv420(DIS, W, H)
    with VmafExtractor(W, H, model=MODEL_420, features=FEATURES_420, pixel_format="420",
                       backend="cuda") as ext:  # fmt: skip
        assert ext.backend == "cuda"
        (stand_in,) = engines
        assert {ex.kind for ex in stand_in.plan.extractors} == {"adm", "motion"}
        ext.extract_batch([f[0] for f in refs], [f[0] for f in diss],
                          ref_chroma=[f[1:] for f in refs],
                          dis_chroma=[f[1:] for f in diss])  # fmt: skip
        assert [len(b) for b in stand_in.seen] == [2, 1]
        assert all(_same(a, b) for a, b in zip(ext.flush(), truth, strict=True))
        assert ext.aggregate() == truth.aggregate


class _DeviceArray:
    """Stands for a CuPy array: its module is cupy's, ``get`` copies it to the host."""

    __module__ = "cupy._stand_in"

    def __init__(self, arr):
        self.arr = arr

    def get(self):
        return self.arr.copy()


def test_device_luma_is_copied_to_the_host_for_the_host_features():
    plane = np.arange(12, dtype=np.uint8).reshape(3, 4)
    host = extractor_module._on_host(_DeviceArray(plane))
    assert isinstance(host, np.ndarray) and (host == plane).all()
    assert extractor_module._on_host(plane) is plane


def test_refusals_in_one_line():
    plane = np.zeros((36, 40), np.uint8)
    cases = [
        (dict(features=["psnr"]), "psnr read the chroma planes: give pixel_format"),
        (dict(model="vmaf_v1.0.16_3d0h"), "psnr|speed_chroma read the chroma planes"),
        (dict(features=["speed_chroma"], pixel_format="400"), "libvmaf refuses 4:0:0"),
        (dict(features=["psnr"], pixel_format="411"), "unsupported pixel format"),
    ]
    for kwargs, message in cases:
        with pytest.raises(AdmError, match=message) as err:
            VmafExtractor(40, 36, **kwargs)
        _one_line(err)
    cb = np.zeros((18, 20), np.uint8)
    with VmafExtractor(40, 36, features=["psnr"], pixel_format="420") as ext:
        with pytest.raises(AdmError, match=r"psnr reads the chroma planes: give ref_chroma") as err:
            ext.extract(plane, plane)
        _one_line(err)
        with pytest.raises(AdmError, match=r"Cb plane \(420\) has shape \(36, 40\)") as err:
            ext.extract(plane, plane, ref_chroma=(plane, plane), dis_chroma=(cb, cb))
        _one_line(err)
        with pytest.raises(AdmError, match="is uint16, expected uint8") as err:
            ext.extract(plane, plane, ref_chroma=(cb, cb), dis_chroma=(cb, cb.astype(np.uint16)))
        _one_line(err)
        with pytest.raises(AdmError, match="a .cb, cr. pair") as err:
            ext.extract(plane, plane, ref_chroma=(cb,), dis_chroma=(cb, cb))
        _one_line(err)
        with pytest.raises(AdmError, match="ref_chroma holds 1 frames, the luma 2") as err:
            ext.extract_batch([plane, plane], [plane, plane], ref_chroma=[(cb, cb)],
                              dis_chroma=[(cb, cb)] * 2)  # fmt: skip
        _one_line(err)
        assert ext.frames_extracted == 0  # nothing refused was scored
        ext.extract(plane, plane, ref_chroma=(cb, cb), dis_chroma=(cb, cb))
        assert ext.frames_extracted == 1
