"""The CPU backend's compiled engine (admcuda.backends.compiled) through ``admcuda score``:
libvmaf's goldens and the NumPy engine's numbers, ``==``, across batches, frame controls,
ladders and ADM alone. ``ADMCUDA_CPU_ENGINE=compiled`` takes it for short runs too."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("numba")

from conftest import NETFLIX  # noqa: E402
from test_cli_vmaf import (  # noqa: E402
    GEOM_48F,
    PAIR_48F,
    TESTDATA_GOLDENS,
    _check_golden,
    _golden_args,
    _score,
)

import admcuda.backends.compiled as compiled  # noqa: E402
from admcuda.backends import engine_for  # noqa: E402
from admcuda.cli.main import main  # noqa: E402
from admcuda.options import AdmOptions  # noqa: E402


@pytest.fixture
def engine(monkeypatch):
    def choose(name):
        monkeypatch.setenv(compiled.ENV, name)

    return choose


def test_the_engine_is_taken_where_it_fits(engine):
    engine("compiled")
    with engine_for("cpu", 160, 90, 8, AdmOptions(), frames=4, threads=1) as e:
        assert isinstance(e, compiled.CompiledEngine)
    with engine_for("cpu", 160, 24, 8, AdmOptions(), frames=4, threads=1) as e:
        assert not isinstance(e, compiled.CompiledEngine)  # 17..32 high: the reference
    engine("numpy")
    with engine_for("cpu", 160, 90, 8, AdmOptions(), frames=4, threads=1) as e:
        assert not isinstance(e, compiled.CompiledEngine)
    engine("")
    assert compiled.usable(1920, 1080, None, 4) and not compiled.usable(160, 90, None, 4)


def test_a_stream_of_unknown_length_waits_for_no_compile(engine, monkeypatch):
    import admcuda.compiled

    engine("")
    monkeypatch.setattr(admcuda.compiled, "cached", lambda: False)
    assert not compiled.usable(1920, 1080, None, None)
    monkeypatch.setattr(admcuda.compiled, "cached", lambda: True)
    assert compiled.usable(1920, 1080, None, None)


@pytest.mark.parametrize(
    "key,entry,base", TESTDATA_GOLDENS, ids=[k for k, _, _ in TESTDATA_GOLDENS]
)
def test_testdata_goldens_through_the_compiled_engine(key, entry, base, tmp_path, engine):
    engine("compiled")
    _check_golden(_score(_golden_args(entry, base), tmp_path / "out.json"), entry)


needs_netflix = pytest.mark.skipif(
    not (NETFLIX / PAIR_48F[0]).exists(), reason=f"shared Netflix pairs not found at {NETFLIX}"
)


@needs_netflix
@pytest.mark.parametrize(
    "extra",
    [
        ["--batch", "1", "--threads", "2"],
        ["--batch", "4", "--subsample", "3"],
        ["--batch", "3", "--frame_skip_ref", "2", "--frame_cnt", "11"],
        ["--batch", "2", "--feature", "motion=motion_five_frame_window=true:debug=true"],
        ["--model", "version=vmaf_v0.6.1neg:name=neg", "--feature", "vif=debug=true"],
        # three VIF extractors filtered once, one of them without scale 0
        ["--model", "version=vmaf_v0.6.1neg:name=neg", "--feature", "vif=vif_skip_scale0=true"],
    ],
)
def test_compiled_equals_numpy(extra, tmp_path, engine):
    io = ["-r", str(NETFLIX / PAIR_48F[0]), "-d", str(NETFLIX / PAIR_48F[1]), *GEOM_48F]
    args = [*io, "--model", "version=vmaf_v0.6.1", "--frame_cnt", "13", *extra]
    engine("compiled")
    fast = _score([*args, "--backend", "cpu"], tmp_path / "fast.json")
    engine("numpy")
    slow = _score([*args, "--backend", "cpu", "--threads", "1"], tmp_path / "slow.json")
    assert fast["frames"] == slow["frames"]
    assert fast["pooled_metrics"] == slow["pooled_metrics"]


@needs_netflix
def test_adm_alone_and_a_ladder(tmp_path, engine):
    ref, dis = (str(NETFLIX / p) for p in PAIR_48F)
    args = [*GEOM_48F, "--frame_cnt", "5", "--batch", "2", "--backend", "cpu", "--json"]
    outs = {}
    for name in ("compiled", "numpy"):
        engine(name)
        target = tmp_path / f"{name}_{{index}}.json"
        assert main(["score", "-q", ref, dis, ref, *args, "-o", str(target)]) == 0
        outs[name] = [json.loads((tmp_path / f"{name}_{k}.json").read_text()) for k in (1, 2)]
    for fast, slow in zip(outs["compiled"], outs["numpy"], strict=True):
        assert fast["frames"] == slow["frames"]


def test_threads_bound_the_kernels_on_the_engine_thread():
    """Numba's thread count is per calling thread: it is set where the kernels run."""
    import numba

    with compiled.CompiledEngine(160, 90, 8, AdmOptions(), threads=1) as engine:
        assert engine._worker.submit(numba.get_num_threads).result() == 1
