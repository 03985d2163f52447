"""The host features in one run: ``admcuda score`` with ``ciede``, ``psnr_hvs``,
``float_psnr``, ``float_motion`` (with and without ``motion_add_uv``), ``float_moment``,
``speed_temporal``, ``float_ansnr`` and ``float_vif`` (with and without ``debug``)
together prints each feature's numbers as a run of that feature alone does, keys in
``--feature`` order (``motion3`` after every extractor's frame-0 outputs), with batches of
one frame and several threads too (speed_temporal keeps each side's last frame from one
batch to the next); ``VmafExtractor`` gives the same numbers frame by frame.

Pair: the Netflix 3-frame 576x324 4:2:0 pair of ``../shared/netflix`` (the tests skip where
it is missing).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from _golden_cases import netflix_pair

pytest.importorskip("numba")

from admcuda import VmafExtractor  # noqa: E402
from admcuda.cli.main import main  # noqa: E402
from admcuda.errors import AdmError  # noqa: E402

W, H, FRAMES = 576, 324, 3
PAIR = ("src01_hrc00_576x324_3f.yuv", "src01_hrc01_576x324_3f.yuv")
FEATURES = [
    "ciede", "psnr_hvs", "float_psnr", "float_motion", "float_moment", "speed_temporal",
    "float_ansnr", "float_vif",
]  # fmt: skip
# the luma-only features between the ones reading chroma
UV = [
    "float_motion=motion_add_uv=true", "speed_temporal", "ciede", "float_ansnr",
    "float_vif=debug=true", "psnr_hvs",
]  # fmt: skip


def _run(tmp_path, features: list[str], *extra: str) -> dict:
    ref, dis = netflix_pair(*PAIR)
    out = tmp_path / f"out{len(list(tmp_path.iterdir()))}.json"
    args = ["score", ref, dis, "-w", str(W), "-h", str(H), "--json", "-o", str(out)]
    for f in features:
        args += ["--feature", f]
    assert main([*args, *extra]) == 0
    return json.loads(out.read_text())


def _planes(path: str) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Each frame's Y, Cb and Cr planes of an 8-bit 4:2:0 file."""
    raw = np.fromfile(path, np.uint8).reshape(FRAMES, -1)
    y, c = W * H, (W // 2) * (H // 2)
    return [
        (
            f[:y].reshape(H, W),
            f[y : y + c].reshape(H // 2, W // 2),
            f[y + c :].reshape(H // 2, W // 2),
        )
        for f in raw
    ]


@pytest.fixture(scope="module")
def alone(tmp_path_factory):
    """Each feature's run alone, made once."""
    folder, docs = tmp_path_factory.mktemp("alone"), {}

    def get(feature: str) -> dict:
        if feature not in docs:
            docs[feature] = _run(folder, [feature])
        return docs[feature]

    return get


@pytest.mark.parametrize("features", [FEATURES, UV], ids=["luma", "motion_add_uv"])
@pytest.mark.parametrize("extra", [(), ("--batch", "1", "--threads", "2")], ids=["one", "batch1"])
def test_together_equals_each_alone(features, extra, alone, tmp_path):
    doc = _run(tmp_path, features, *extra)
    singles = [alone(f) for f in features]
    names = [n for one in singles for n in one["frames"][0]["metrics"]]
    assert len(doc["frames"]) == FRAMES
    assert sorted(doc["frames"][0]["metrics"]) == sorted(names)
    # motion3 comes after every extractor's frame-0 outputs, the rest in --feature order
    later = [n for n in names if n.startswith("motion3")]
    assert list(doc["frames"][0]["metrics"]) == [n for n in names if n not in later] + later
    assert list(doc["pooled_metrics"]) == list(doc["frames"][0]["metrics"])
    for one in singles:
        for got, want in zip(doc["frames"], one["frames"], strict=True):
            for name, value in want["metrics"].items():
                assert got["metrics"][name] == value, name
        for name, pooled in one["pooled_metrics"].items():
            assert doc["pooled_metrics"][name] == pooled, name


def test_extractor_equals_the_command_line(tmp_path):
    doc = _run(tmp_path, FEATURES + UV[:1])
    ref, dis = netflix_pair(*PAIR)
    refs, diss = _planes(ref), _planes(dis)
    feats = FEATURES + UV[:1]
    with pytest.raises(AdmError, match="ciede and float_motion and psnr_hvs read the chroma"):
        VmafExtractor(W, H, model=None, features=feats, backend="cpu")
    vmaf = VmafExtractor(W, H, model=None, features=feats, backend="cpu", pixel_format="420")
    with pytest.raises(AdmError, match="ciede and float_motion and psnr_hvs read the chroma"):
        vmaf.extract(refs[0][0], diss[0][0])
    for r, d in zip(refs, diss, strict=True):
        vmaf.extract(r[0], d[0], ref_chroma=r[1:], dis_chroma=d[1:])
    rows = vmaf.flush()
    assert len(rows) == FRAMES
    for got, want in zip(rows, doc["frames"], strict=True):
        assert {n: got[n] for n in want["metrics"]} == want["metrics"]
