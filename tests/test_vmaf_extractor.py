"""VmafExtractor: VMAF frame by frame against libvmaf 3.2.0, fed one frame or a batch at a time.

Truth: ``../shared/netflix/vmaf_goldens.json`` and ``testdata/vmaf_goldens.json``, libvmaf
3.2.0's scalar C path through ``shared/tools/libvmaf_vmaf_oracle.py`` (provenance in each
file's ``_provenance``): every frame's outputs, each model's score per frame and its pooled
statistics, compared with ``==``. Where no golden covers a case (long clips under motion's
options, read in uneven steps), the frames must equal :func:`admcuda.vmaf.score_clip`'s,
the whole-clip computation those goldens check.
"""

from __future__ import annotations

import doctest
import json
import math
from pathlib import Path

import numpy as np
import pytest
from _frames import luma_frames
from conftest import NETFLIX, TESTDATA

import admcuda
from admcuda.errors import AdmError
from admcuda.model import ModelSpec, output_name
from admcuda.vmaf import build_plan, score_clip
from admcuda.vmaf import extractor as extractor_module
from admcuda.vmaf.extractor import VmafExtractor


def _load(path: Path, base: Path, keys: list[str]) -> list[tuple[str, dict, Path]]:
    if not path.exists():
        return []
    data = json.loads(path.read_text())
    return [(k, data[k], base) for k in keys]


# model runs at 8, 10 and 12 bits, NEG, 4k and the phone transform, 3 to 48 frames; and
# feature runs under motion's five-frame window and moving average, whose motion2 and
# motion3 read the frames around each one
GOLDENS = _load(
    NETFLIX / "vmaf_goldens.json",
    NETFLIX,
    [
        "src01_576x324_8bit__model__vmaf_v0.6.1",
        "src01_576x324_10bit__model__vmaf_v0.6.1",
        "src01_160x90_48f__model__vmaf_v0.6.1",
        "src01_160x90_48f__model__vmaf_v0.6.1neg",
        "src01_160x90_48f__model__vmaf_4k_v0.6.1",
        "src01_160x90_48f__model__vmaf_v0.6.1_transform",
        "src01_160x90_48f_same__model__vmaf_v0.6.1",
    ],
) + _load(
    TESTDATA / "vmaf_goldens.json",
    TESTDATA,
    [
        "coffee_112x64_420_10b_blocknoise__model__vmaf_v0.6.1",
        "coffee_112x64_420_10b_blocknoise__model__vmaf_4k_v0.6.1neg",
        "chelsea_96x56_422_12b_rescalenoise__model__vmaf_v0.6.1",
        "moon_64x40_444_16b_sharpen__model__vmaf_v0.6.1",
        "astronaut_65x41_420_8b_boxnoise__features__motion-motion_five_frame_windowtrue"
        "_motion-motion_moving_averagetrue",
        "camera_80x48_400_8b_rescale__features__motion-motion_moving_averagetrue",
        "coffee_112x64_420_10b_blocknoise__features__motion-motion_five_frame_windowtrue",
    ],
)

_CACHE: dict[tuple, list[np.ndarray]] = {}


def _planes(base: Path, name: str, case: dict) -> list[np.ndarray]:
    if (base, name) not in _CACHE:
        _CACHE[base, name] = luma_frames(
            base / name, case["w"], case["h"], case["fmt"], case["bitdepth"]
        )
    return _CACHE[base, name]


def _clip(entry: dict, base: Path) -> tuple[np.ndarray, np.ndarray]:
    case = entry["case"]
    n = len(entry["frames"])
    refs = _planes(base, case["ref"], case)[:n]
    diss = _planes(base, case["dis"], case)[:n]
    return np.stack(refs), np.stack(diss)


def _arguments(entry: dict) -> dict:
    """VmafExtractor's arguments for an oracle run: a model with its flags, or adm, vif
    and motion with debug=true and the entry's options, registered in that order."""
    if entry["mode"] == "model":
        arg = f"version={entry['args'][0]}"
        arg += ":enable_transform" if "transform" in entry["args"][1:] else ""
        arg += ":disable_clip" if "noclip" in entry["args"][1:] else ""
        return {"model": arg}
    opts: dict[str, list[str]] = {"adm": ["debug=true"], "vif": ["debug=true"]}
    opts["motion"] = ["debug=true"]
    for item in entry["args"]:
        feature, kv = item.split(":", 1)
        opts[feature].append(kv)
    return {"model": None, "features": [f"{f}={':'.join(kv)}" for f, kv in opts.items()]}


def _extractor(entry: dict, **more) -> VmafExtractor:
    case = entry["case"]
    return VmafExtractor(case["w"], case["h"], case["bitdepth"], **_arguments(entry), **more)


def _check_frame(entry: dict, i: int, got: dict, names: tuple) -> int:
    """Frame ``i``'s outputs against the golden; the number of values compared."""
    assert tuple(got) == names
    skip = set(entry.get("unstable_fields", ())) | set(entry.get("heap_fields", ()))
    compared = 0
    for name, value in entry["frames"][i].items():
        if name in skip:
            continue
        printed = output_name(name)
        if value is None:
            assert name in entry.get("nan_fields", ()) and math.isnan(got[printed])
        else:
            assert got[printed] == value, (i, name, got[printed] - value)
        compared += 1
    return compared


def _check_extracted(entry: dict, i: int, got: dict, ext: VmafExtractor) -> None:
    """What extract returns for frame i: its extract-time outputs, as the golden has them."""
    assert tuple(got) == ext.extract_names
    golden = {output_name(k): v for k, v in entry["frames"][i].items()}
    skip = {output_name(k) for k in entry.get("unstable_fields", ())}
    skip |= {output_name(k) for k in entry.get("heap_fields", ())}
    for name, value in got.items():
        if name in golden and name not in skip and golden[name] is not None:
            assert value == golden[name], (i, name)


def _check_clip(entry: dict, frames: list[dict], ext: VmafExtractor) -> None:
    n = len(entry["frames"])
    assert len(frames) == n
    assert ext.output_names == tuple(build_plan(**_plan_args(entry)).output_order())
    compared = sum(_check_frame(entry, i, f, ext.output_names) for i, f in enumerate(frames))
    assert compared >= n * 3
    stats = ext.pooled()
    assert list(stats) == list(ext.output_names)
    for model_name, methods in entry.get("pooled", {}).items():
        assert methods and stats[model_name] == methods


def _plan_args(entry: dict) -> dict:
    args = _arguments(entry)
    model = args["model"]
    return {"models": [model] if model else [], "features": args.get("features", ())}


IDS = [f"{b.name}/{k}" for k, _, b in GOLDENS]


@pytest.mark.skipif(not GOLDENS, reason="no VMAF goldens found")
@pytest.mark.parametrize("key,entry,base", GOLDENS, ids=IDS)
def test_one_frame_at_a_time_each_frame_final_once_the_next_is_read(key, entry, base):
    refs, diss = _clip(entry, base)
    n = len(refs)
    first = 2 if "five_frame_window" in key else 1
    ext = _extractor(entry)
    finals: list[dict] = []
    for k in range(n):
        _check_extracted(entry, k, ext.extract(refs[k], diss[k]), ext)
        assert ext.frames_extracted == k + 1
        # frame i is final once frame max(i + 1, first) has been read
        assert ext.frames_final == (k if k >= first else 0)
        while len(finals) < ext.frames_final:
            i = len(finals)
            finals.append(ext.frame_at(i))
            _check_frame(entry, i, finals[i], ext.output_names)
            if ext.model_names:
                assert ext.score_at(i) == finals[i]["vmaf"] == entry["frames"][i]["vmaf"]
        if k + 1 < n:
            with pytest.raises(AdmError, match=rf"frame {k} is final once frame"):
                ext.frame_at(k)
    frames = ext.flush()
    assert ext.flushed and ext.frames_final == n
    assert frames[: len(finals)] == finals
    _check_clip(entry, frames, ext)
    if ext.model_names:
        assert [ext.score_at(i) for i in range(n)] == [f["vmaf"] for f in entry["frames"]]
    ext.close()


@pytest.mark.skipif(not GOLDENS, reason="no VMAF goldens found")
@pytest.mark.parametrize("key,entry,base", GOLDENS, ids=IDS)
def test_batches(key, entry, base):
    refs, diss = _clip(entry, base)
    n = len(refs)
    with _extractor(entry) as ext:
        got = ext.extract_batch(refs[:1], diss[:1])  # a 3-D array
        step = 5
        for start in range(1, n, step):  # then sequences of planes
            got += ext.extract_batch(list(refs[start : start + step]), diss[start : start + step])
        assert len(got) == ext.frames_extracted == n
        for i, row in enumerate(got):
            _check_extracted(entry, i, row, ext)
        _check_clip(entry, ext.flush(), ext)
        assert ext.flush() == ext.flush()  # flushing again gives the same frames


def _random_clip(seed: int, n: int, w: int = 40, h: int = 36, bitdepth: int = 8):
    rng = np.random.default_rng(seed)
    dtype = np.uint8 if bitdepth == 8 else np.uint16
    # a moving gradient plus noise: motion scores that differ frame to frame
    y, x = np.mgrid[0:h, 0:w]
    base = [(x * 3 + y * 2 + 7 * k * k) % (1 << bitdepth) for k in range(n)]
    refs = np.stack([b + rng.integers(0, 9, (h, w)) for b in base]).clip(0, (1 << bitdepth) - 1)
    diss = (refs + rng.integers(-12, 13, refs.shape)).clip(0, (1 << bitdepth) - 1)
    return refs.astype(dtype), diss.astype(dtype)


def _whole(refs, diss, features=()) -> list[dict]:
    """The whole clip scored at once: vmaf_v0.6.1 and ``features``, 8 bits."""
    plan = build_plan(["version=vmaf_v0.6.1"], features)
    return score_clip(plan, zip(refs, diss, strict=True), 8)


@pytest.mark.parametrize(
    "features",
    [
        ["motion=motion_five_frame_window=true:motion_moving_average=true"],
        ["motion=motion_moving_average=true:motion_blend_factor=0.5:motion_blend_offset=3"],
        ["motion=motion_five_frame_window=true", "vif"],
    ],
    ids=["five-average", "average-blend", "five-vif"],
)
def test_frames_finished_in_uneven_steps_equal_the_whole_clip(features):
    refs, diss = _random_clip(7, 23)
    whole = _whole(refs, diss, features)
    rng = np.random.default_rng(1)
    with VmafExtractor(40, 36, model="vmaf_v0.6.1", features=features) as ext:
        k = 0
        early: dict[int, dict] = {}
        while k < len(refs):
            step = int(rng.integers(1, 5))
            ext.extract_batch(refs[k : k + step], diss[k : k + step])
            k += step
            for i in range(ext.frames_final):
                if rng.random() < 0.5 or i not in early:
                    early[i] = ext.frame_at(i)
        assert [early[i] for i in sorted(early)] == whole[: len(early)]
        assert ext.flush() == whole
        assert [ext.score_at(i) for i in range(len(refs))] == [f["vmaf"] for f in whole]


def test_a_reused_buffer_scores_as_fresh_planes():
    """The extractor keeps copies of the reference planes motion reads later."""
    refs, diss = _random_clip(3, 6)
    whole = _whole(refs, diss)
    ref_buf, dis_buf = np.empty_like(refs[0]), np.empty_like(diss[0])
    with VmafExtractor(40, 36) as ext:
        for r, d in zip(refs, diss, strict=True):
            ref_buf[...] = r
            dis_buf[...] = d
            ext.extract(ref_buf, dis_buf)
        assert ext.flush() == whole


class _DLPackPlane:
    """A host array seen only through the DLPack protocol (as a PyTorch CPU tensor is)."""

    def __init__(self, arr: np.ndarray) -> None:
        self._arr = arr

    def __dlpack__(self, **kwargs):
        return self._arr.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._arr.__dlpack_device__()


def test_dlpack_planes_score_as_numpy():
    refs, diss = _random_clip(5, 3)
    with VmafExtractor(40, 36) as a, VmafExtractor(40, 36) as b:
        for r, d in zip(refs, diss, strict=True):
            assert a.extract(_DLPackPlane(r), _DLPackPlane(d)) == b.extract(r, d)
        b.extract_batch(_DLPackPlane(refs), _DLPackPlane(diss))
        a.extract_batch(refs, diss)
        assert a.flush() == b.flush()


@pytest.mark.skipif(
    not (NETFLIX / "vmaf_goldens.json").exists(),
    reason=f"shared Netflix VMAF goldens not found at {NETFLIX}",
)
def test_several_models_and_each_way_to_name_one():
    entries = {k: (e, b) for k, e, b in GOLDENS}
    plain, base = entries["src01_160x90_48f__model__vmaf_v0.6.1"]
    four_k, _ = entries["src01_160x90_48f__model__vmaf_4k_v0.6.1"]
    neg, _ = entries["src01_160x90_48f__model__vmaf_v0.6.1neg"]
    refs, diss = _clip(plain, base)
    path = Path(extractor_module.__file__).parent.parent / "model" / "data" / "vmaf_v0.6.1.json"
    models = [
        path,
        "version=vmaf_4k_v0.6.1:name=vmaf_4k",
        ModelSpec(version="vmaf_v0.6.1neg", name="neg"),
    ]
    with VmafExtractor(160, 90, model=models) as ext:
        assert ext.model_names == ("vmaf", "vmaf_4k", "neg")
        ext.extract_batch(refs[:10], diss[:10])
        assert ext.score_at(8, "vmaf_4k") == four_k["frames"][8]["vmaf"]
        ext.extract_batch(refs[10:], diss[10:])
        frames = ext.flush()
        for i, f in enumerate(frames):
            assert f["vmaf"] == ext.score_at(i) == plain["frames"][i]["vmaf"]
            assert f["vmaf_4k"] == ext.score_at(i, "vmaf_4k") == four_k["frames"][i]["vmaf"]
            assert f["neg"] == ext.score_at(i, "neg") == neg["frames"][i]["vmaf"]
            for name, value in neg["frames"][i].items():
                if name != "vmaf":  # the NEG model's own extractors, beside the others
                    assert f[output_name(name)] == value, (i, name)
        stats = ext.pooled()
        assert stats["vmaf"] == plain["pooled"]["vmaf"]
        assert stats["vmaf_4k"] == four_k["pooled"]["vmaf"]
        assert stats["neg"] == neg["pooled"]["vmaf"]
        assert list(frames[0])[-3:] == ["vmaf", "vmaf_4k", "neg"]


@pytest.mark.skipif(not GOLDENS, reason="no VMAF goldens found")
def test_no_prediction_gives_the_features_alone():
    key, entry, base = next(e for e in GOLDENS if e[1]["mode"] == "model")
    refs, diss = _clip(entry, base)
    case = entry["case"]
    with VmafExtractor(case["w"], case["h"], bitdepth=case["bitdepth"], no_prediction=True) as ext:
        ext.extract_batch(refs, diss)
        assert ext.model_names == ()
        frames = ext.flush()
        assert "vmaf" not in ext.output_names and "vmaf" not in frames[0]
        assert (
            frames[1]["integer_motion2"] == entry["frames"][1]["VMAF_integer_feature_motion2_score"]
        )
        with pytest.raises(AdmError, match="no_prediction=True"):
            ext.score_at(0)


def _one_line(err: pytest.ExceptionInfo) -> str:
    text = str(err.value)
    assert text and "\n" not in text
    return text


def test_bad_planes_are_refused_in_one_line_and_change_nothing():
    refs, diss = _random_clip(2, 3)
    with VmafExtractor(40, 36) as ext:
        ext.extract(refs[0], diss[0])
        cases = [
            (
                refs[1][:, :39],
                diss[1],
                r"shape \(36, 39\), expected \(height, width\) = \(36, 40\)",
            ),
            (refs[1].astype(np.uint16), diss[1], "is uint16, expected uint8 for 8-bit input"),
            (refs[1][None], diss[1], "must be a 2-D luma plane, got 3 dimensions"),
            (refs[1].tolist(), diss[1], "must be a NumPy, CuPy or DLPack-capable array"),
            (np.ma.masked_array(refs[1]), diss[1], "is a MaskedArray"),
        ]
        for ref, dis, message in cases:
            with pytest.raises(AdmError, match=message) as err:
                ext.extract(ref, dis)
            _one_line(err)
        with pytest.raises(AdmError, match="3 reference frames but 2 distorted frames") as err:
            ext.extract_batch(refs, diss[:2])
        _one_line(err)
        with pytest.raises(AdmError, match=r"distorted frames\[1\] is int64") as err:
            ext.extract_batch(refs[1:], [diss[1], diss[2].astype(np.int64)])
        _one_line(err)
        with pytest.raises(AdmError, match="must be a 3-D array or a sequence") as err:
            ext.extract_batch(refs[1:], 5)
        assert ext.frames_extracted == 1  # nothing refused was scored
        ext.extract_batch(refs[1:], diss[1:])
        whole = _whole(refs, diss)
        assert ext.flush() == whole


def test_samples_beyond_the_bit_depth_are_refused():
    refs, diss = _random_clip(4, 2, bitdepth=10)
    with VmafExtractor(40, 36, 10) as ext:
        too_big = refs[0].copy()
        too_big[3, 4] = 1024
        with pytest.raises(AdmError, match="sample value 1024, too large for 10 bits") as err:
            ext.extract(too_big, diss[0])
        _one_line(err)
        with pytest.raises(AdmError, match="expected uint16 for 10-bit input"):
            ext.extract(refs[0].astype(np.uint8), diss[0].astype(np.uint8))


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"bitdepth": 9}, "unsupported bit depth 9; use one of 8, 10, 12, 16"),
        ({"width": 16}, "width 16 is too small: libvmaf's ADM needs"),
        ({"height": 2.5}, "height must be an integer"),
        ({"model": "vmaf_v9"}, "vmaf_v9"),
        ({"model": "version=vmaf_v0.6.1:bogus"}, "bogus"),
        ({"model": 3}, "model must be a version name, a --model string, a path"),
        ({"model": None}, "nothing to compute"),
        (
            {"model": None, "features": ["null"]},
            "admcuda computes the features adm, vif and motion",
        ),
        ({"model": ["vmaf_v0.6.1", "vmaf_4k_v0.6.1"]}, "two models are named 'vmaf'"),
    ],
)
def test_bad_settings_are_refused_in_one_line(kwargs, message):
    args = {"width": 40, "height": 36, **kwargs}
    with pytest.raises(AdmError, match=message) as err:
        VmafExtractor(**args)
    _one_line(err)


def test_small_planes_for_vif_and_motion_alone():
    with pytest.raises(AdmError, match="width 7 is too small: libvmaf's VIF needs") as err:
        VmafExtractor(7, 12, model=None, features=["vif"])
    _one_line(err)
    plane = np.arange(12 * 7, dtype=np.uint8).reshape(12, 7)
    with VmafExtractor(7, 12, model=None, features="motion") as ext:
        assert list(ext.extract(plane, plane)) == ["VMAF_integer_feature_motion_sad_score"]
        assert ext.extract(plane[::-1], plane)["VMAF_integer_feature_motion_sad_score"] > 0


def test_lifecycle_errors():
    refs, diss = _random_clip(6, 3)
    ext = VmafExtractor(40, 36)
    assert "frames_extracted=0" in repr(ext)
    with pytest.raises(AdmError, match="no frames to flush") as err:
        ext.flush()
    _one_line(err)
    ext.extract(refs[0], diss[0])
    with pytest.raises(AdmError, match=r"frame 1 has not been extracted \(1 so far\)"):
        ext.score_at(1)
    with pytest.raises(AdmError, match="frame 0 is final once frame 1 is extracted"):
        ext.score_at(0)
    with pytest.raises(AdmError, match="frame index must be a non-negative integer"):
        ext.score_at(-1)
    ext.extract(refs[1], diss[1])
    with pytest.raises(AdmError, match="no model named 'phone'; the models are vmaf"):
        ext.score_at(0, "phone")
    first = ext.score_at(0)
    frames = ext.flush()
    assert frames[0]["vmaf"] == first and len(frames) == 2
    with pytest.raises(AdmError, match="clip has ended") as err:
        ext.extract(refs[2], diss[2])
    _one_line(err)
    assert "flushed" in repr(ext)
    ext.close()
    ext.close()  # closing again is a no-op
    assert ext.closed and "closed" in repr(ext)
    for call in (
        lambda: ext.extract(refs[2], diss[2]),
        lambda: ext.extract_batch(refs, diss),
        lambda: ext.flush(),
        lambda: ext.pooled(),
        lambda: ext.score_at(0),
    ):
        with pytest.raises(AdmError, match="this VmafExtractor is closed") as err:
            call()
        _one_line(err)


def test_features_alone_are_final_at_once():
    refs, diss = _random_clip(8, 3)
    with VmafExtractor(40, 36, model=None, features=["adm", "vif=debug=true"]) as ext:
        row = ext.extract(refs[0], diss[0])
        assert ext.frames_final == 1 and ext.frame_at(0) == row
        assert "integer_vif_num" in row and "integer_motion2" not in ext.output_names
        with pytest.raises(AdmError, match="no model scores: this extractor has no model"):
            ext.score_at(0)


def test_exported_from_admcuda():
    assert admcuda.VmafExtractor is VmafExtractor
    assert "VmafExtractor" in admcuda.__all__ and "VmafExtractor" in dir(admcuda)


def test_docstring_example_runs():
    failed, attempted = doctest.testmod(extractor_module, verbose=False)
    assert attempted > 0 and failed == 0
