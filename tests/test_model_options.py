"""Model arguments with options, and bootstrap model collections, scored against libvmaf.

Truth: ``testdata/model_goldens.json``, libvmaf 3.2.0's scalar C path at full precision
through its C API (``testdata/make_model_goldens.py``; provenance in its ``_provenance``
key), on pairs of ``../shared/netflix``. Each entry is one ``--model`` argument: its
``order`` is the names libvmaf's JSON output lists, ``frames`` every value per frame and
``pooled`` every name's min, max, mean and harmonic mean. Every one must come out ``==``.

The entries pin down what names alone would not: an option overriding one the model sets
itself (``vmaf_v0.6.1neg:adm.adm_enhn_gain_limit=1.2``), one option given twice (the later
wins), two options in a name (``integer_adm2_scf_2_egl_1.5``: sorted by option name, not
alias), ``motion_blend_factor=0.3`` (libvmaf computes with 0.3 as its ``%g`` text reads,
not with the float32 nearest 0.3: ``integer_motion3`` differs in its last bits). The
collection entries (``vmaf_b_v0.6.3`` by version and path, with ``enable_transform``,
``disable_clip``, ``name=`` and an override) hold each member's score and the bagging
score, standard deviation and 95% interval; they are scored here through the plan, the API
and the extractor (the command line in test_cli_vmaf.py).
"""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
import pytest
from _frames import luma_frames
from admcuda.reference.motion import MotionOptions
from conftest import NETFLIX, TESTDATA

import admcuda
from admcuda.errors import AdmError
from admcuda.vmaf import build_plan, pooled, score_clip

GOLDENS = TESTDATA / "model_goldens.json"
DATA = str(resources.files("admcuda.model.data"))
METHODS = ("min", "max", "mean", "harmonic_mean")


def _entries() -> dict:
    data = json.loads(GOLDENS.read_text())
    return {k: v for k, v in data.items() if not k.startswith("_")}


ENTRIES = _entries()
OPTION_ENTRIES = sorted(k for k, v in ENTRIES.items() if not v["collection"])
COLLECTION_ENTRIES = sorted(k for k, v in ENTRIES.items() if v["collection"])
_FRAMES: dict[tuple, tuple] = {}


def _pair(case: dict) -> tuple[list, list]:
    key = (case["ref"], case["dis"])
    if key not in _FRAMES:
        if not (NETFLIX / case["ref"]).exists():
            pytest.skip(f"shared Netflix pairs not found at {NETFLIX}")
        geometry = (case["w"], case["h"], case["fmt"], case["bitdepth"])
        _FRAMES[key] = tuple(luma_frames(NETFLIX / p, *geometry) for p in key)
    return _FRAMES[key]


def _score(entry: dict) -> tuple[list[dict], dict]:
    plan = build_plan([entry["model"].format(data=DATA)])
    refs, diss = _pair(entry["case"])
    frames = score_clip(plan, zip(refs, diss, strict=True), entry["case"]["bitdepth"])
    return frames, pooled(plan, frames)


def _check(entry: dict, frames: list[dict], pools: dict) -> None:
    order = entry["order"]
    assert len(frames) == len(entry["frames"])
    for i, (got, want) in enumerate(zip(frames, entry["frames"], strict=True)):
        assert list(got) == order, i
        diff = max(abs(got[n] - w) for n, w in zip(order, want, strict=True))
        assert [got[n] for n in order] == want, f"frame {i}: max abs diff {diff}"
    assert list(pools) == order
    for name, want in zip(order, entry["pooled"], strict=True):
        assert [pools[name][m] for m in METHODS] == want, name


@pytest.mark.parametrize("key", OPTION_ENTRIES)
def test_model_options_match_libvmaf(key):
    entry = ENTRIES[key]
    _check(entry, *_score(entry))


@pytest.mark.parametrize("key", COLLECTION_ENTRIES)
def test_model_collections_match_libvmaf(key):
    entry = ENTRIES[key]
    _check(entry, *_score(entry))


def test_motion_blend_factor_at_float32_fails_the_golden():
    """The golden decides: motion computed with the float32 nearest 0.3 (what a model
    option read without libvmaf's ``%g`` text would give) prints the same names and other
    ``integer_motion3`` values."""
    entry = ENTRIES["v061_mbf_0.3"]
    single = float(np.float32(0.3))
    assert single != 0.3
    plan = build_plan(features=[("motion", MotionOptions(motion_blend_factor=single))])
    refs, diss = _pair(entry["case"])
    frames = score_clip(plan, zip(refs, diss, strict=True), 8)
    name = "integer_motion3_mbf_0.3"
    column = entry["order"].index(name)
    got = [f[name] for f in frames]
    want = [row[column] for row in entry["frames"]]
    assert got != want
    assert max(abs(a - b) for a, b in zip(got, want, strict=True)) < 1e-12


def test_a_collection_through_the_api():
    entry = ENTRIES["b_v063_160x90"]
    case = entry["case"]
    _pair(case)  # skips without the shared pairs
    result = admcuda.score(
        str(NETFLIX / case["ref"]),
        str(NETFLIX / case["dis"]),
        width=case["w"],
        height=case["h"],
        pixel_format=case["fmt"],
        bitdepth=case["bitdepth"],
        model="vmaf_b_v0.6.3",
    )
    assert [[f[n] for n in entry["order"]] for f in result.frames] == entry["frames"]
    assert all(list(f) == entry["order"] for f in result.frames)


def test_a_collection_through_the_extractor():
    entry = ENTRIES["b_v063_path_transform"]
    refs, diss = _pair(entry["case"])
    model = entry["model"].format(data=DATA)
    ext = admcuda.VmafExtractor(entry["case"]["w"], entry["case"]["h"], 8, model=model)
    assert ext.output_names == tuple(entry["order"]) and ext.model_names == ("phone",)
    half = len(refs) // 2
    ext.extract_batch(np.stack(refs[:half]), np.stack(diss[:half]))
    column = entry["order"].index("phone_ci_p95_lo")
    assert ext.score_at(3, "phone_ci_p95_lo") == entry["frames"][3][column]
    ext.extract_batch(np.stack(refs[half:]), np.stack(diss[half:]))
    frames = ext.flush()
    assert [[f[n] for n in entry["order"]] for f in frames] == entry["frames"]
    pools = ext.pooled()
    assert [[pools[n][m] for m in METHODS] for n in entry["order"]] == entry["pooled"]
    with pytest.raises(AdmError, match="no model named 'phone_0021'"):
        ext.score_at(3, "phone_0021")
