"""VmafExtractor on the compiled CPU engine (admcuda.backends.compiled) against the same
extractor on the NumPy reference: every output ``==`` (NaN where NaN), fed one frame or
uneven batches at a time, with score_at and frame_at as frames become final, on the VMAF
goldens' content (8 to 16 bits, 4:0:0 to 4:4:4 sources, motion's five-frame window and
moving average). The NumPy side is the one test_vmaf_extractor.py checks against
libvmaf's goldens."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("numba")

from test_vmaf_extractor import GOLDENS, IDS, _arguments, _clip  # noqa: E402

import admcuda.compiled  # noqa: E402
from admcuda.backends import compiled  # noqa: E402
from admcuda.vmaf.extractor import VmafExtractor  # noqa: E402


def _pair(entry: dict, monkeypatch) -> tuple[VmafExtractor, VmafExtractor]:
    """The entry's extractor on the compiled engine and on the NumPy reference."""
    case = entry["case"]
    args = (case["w"], case["h"], case["bitdepth"])
    monkeypatch.setenv(compiled.ENV, "compiled")
    fast = VmafExtractor(*args, **_arguments(entry), backend="cpu", threads=2)
    monkeypatch.setenv(compiled.ENV, "numpy")
    slow = VmafExtractor(*args, **_arguments(entry), backend="cpu")
    assert (fast.engine, slow.engine) == ("compiled", "numpy")
    return fast, slow


def _same(a: dict, b: dict) -> bool:
    """Same keys in the same order, values ``==`` or both NaN."""
    return list(a) == list(b) and all(
        x == y or (isinstance(x, float) and math.isnan(x) and math.isnan(y))
        for x, y in zip(a.values(), b.values(), strict=True)
    )


def _all_same(a: list[dict], b: list[dict]) -> None:
    assert len(a) == len(b)
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        assert _same(x, y), (i, [k for k in x if not _same({k: x[k]}, {k: y.get(k)})])


needs_goldens = pytest.mark.skipif(not GOLDENS, reason="no VMAF goldens found")


@needs_goldens
@pytest.mark.parametrize("key,entry,base", GOLDENS, ids=IDS)
def test_one_frame_at_a_time(key, entry, base, monkeypatch):
    refs, diss = _clip(entry, base)
    fast, slow = _pair(entry, monkeypatch)
    with fast, slow:
        for k in range(len(refs)):
            assert _same(fast.extract(refs[k], diss[k]), slow.extract(refs[k], diss[k]))
            assert fast.frames_final == slow.frames_final
            for i in range(fast.frames_final):
                assert _same(fast.frame_at(i), slow.frame_at(i))
                if fast.model_names:
                    assert fast.score_at(i) == slow.score_at(i)
        _all_same(fast.flush(), slow.flush())
        assert fast.pooled() == slow.pooled()


@needs_goldens
@pytest.mark.parametrize("key,entry,base", GOLDENS, ids=IDS)
def test_uneven_batches(key, entry, base, monkeypatch):
    refs, diss = _clip(entry, base)
    n = len(refs)
    fast, slow = _pair(entry, monkeypatch)
    fast._compiled.batch = 3  # batches that split the steps below
    with fast, slow:
        got, want = [], []
        start = 0
        for step in (1, 2, 7, 1, 5, 11):
            if start >= n:
                break
            r, d = refs[start : start + step], diss[start : start + step]
            got += fast.extract_batch(list(r), d)  # planes, then a 3-D array
            want += slow.extract_batch(r, list(d))
            start += step
        got += fast.extract_batch(refs[start:], diss[start:]) if start < n else []
        want += slow.extract_batch(refs[start:], diss[start:]) if start < n else []
        _all_same(got, want)
        if fast.model_names and n > 2:
            assert fast.score_at(n - 3) == slow.score_at(n - 3)
        _all_same(fast.flush(), slow.flush())


def test_planes_reused_by_the_caller(monkeypatch):
    """The engine keeps its own copies of motion's previous planes."""
    rng = np.random.default_rng(7)
    frames = rng.integers(0, 1024, (6, 2, 48, 64)).astype(np.uint16)
    feats = ["motion=motion_five_frame_window=true", "vif", "adm"]
    monkeypatch.setenv(compiled.ENV, "compiled")
    fast = VmafExtractor(64, 48, 10, model=None, features=feats, backend="cpu")
    monkeypatch.setenv(compiled.ENV, "numpy")
    slow = VmafExtractor(64, 48, 10, model=None, features=feats, backend="cpu")
    ref, dis = np.empty((48, 64), np.uint16), np.empty((48, 64), np.uint16)
    with fast, slow:
        for r, d in frames:
            ref[...], dis[...] = r, d
            fast.extract(ref, dis)
            ref[...], dis[...] = r, d
            slow.extract(ref, dis)
            ref[...] = 0
        _all_same(fast.flush(), slow.flush())


def test_the_engine_is_chosen_as_the_pipeline_chooses(monkeypatch):
    monkeypatch.setenv(compiled.ENV, "")
    monkeypatch.setattr(admcuda.compiled, "cached", lambda: False)
    with VmafExtractor(64, 36, backend="cpu") as ext:
        assert ext.engine == "numpy"  # no first compile inside a small call
    monkeypatch.setattr(admcuda.compiled, "cached", lambda: True)
    with VmafExtractor(64, 36, backend="cpu") as ext:
        assert ext.backend == "cpu" and ext.engine == "compiled"
    with VmafExtractor(64, 24, backend="cpu") as ext:
        assert ext.engine == "numpy"  # ADM 17..32 high: the reference
    monkeypatch.setenv(compiled.ENV, "numpy")
    with VmafExtractor(64, 36, backend="cpu") as ext:
        assert ext.engine == "numpy"
    monkeypatch.setenv(compiled.ENV, "compiled")
    monkeypatch.setattr(admcuda.compiled, "cached", lambda: False)
    ext = VmafExtractor(64, 36, backend="cpu")
    assert ext.engine == "compiled"
    ext.close()
    assert ext._compiled is None and ext.closed
