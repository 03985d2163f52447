"""The command line's early CUDA start (admcuda.cuda_start): harmless where there is no
driver, started only for runs that may use the GPU, joined before an engine is made."""

from __future__ import annotations

import ctypes
import threading

import pytest

from admcuda import backends
from admcuda import cuda_start as _cuda_start
from admcuda.cli import main as cli


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cuda_start, "_thread", None)


def test_start_without_a_driver_library_ends_quietly(fresh, monkeypatch) -> None:
    opened: list[str] = []

    def no_driver(name: str, *args: object, **kwargs: object) -> ctypes.CDLL:
        opened.append(name)
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(_cuda_start.sys, "platform", "linux")
    monkeypatch.setattr(_cuda_start.importlib.util, "find_spec", lambda name: object())
    monkeypatch.setattr(_cuda_start.ctypes, "CDLL", no_driver)
    _cuda_start.start(0)
    thread = _cuda_start._thread
    assert isinstance(thread, threading.Thread)
    _cuda_start.wait()
    assert not thread.is_alive()
    assert opened == ["libcuda.so.1"]
    _cuda_start.start(0)  # once a process
    assert _cuda_start._thread is thread


def test_start_calls_the_driver_in_order_and_stops_at_a_failure(fresh, monkeypatch) -> None:
    calls: list[str] = []

    class FakeDriver:
        def __init__(self, device_status: int) -> None:
            self.device_status = device_status

        def cuInit(self, flags: int) -> int:  # noqa: N802 - the driver's names
            calls.append(f"cuInit({flags})")
            return 0

        def cuDeviceGet(self, dev: object, ordinal: int) -> int:  # noqa: N802
            calls.append(f"cuDeviceGet({ordinal})")
            return self.device_status

        def cuDevicePrimaryCtxRetain(self, ctx: object, dev: object) -> int:  # noqa: N802
            calls.append("cuDevicePrimaryCtxRetain")
            return 0

    monkeypatch.setattr(_cuda_start.ctypes, "CDLL", lambda name: FakeDriver(0))
    _cuda_start._init(3)
    assert calls == ["cuInit(0)", "cuDeviceGet(3)", "cuDevicePrimaryCtxRetain"]
    calls.clear()
    monkeypatch.setattr(_cuda_start.ctypes, "CDLL", lambda name: FakeDriver(101))
    _cuda_start._init(7)  # no such device: no context is asked for
    assert calls == ["cuInit(0)", "cuDeviceGet(7)"]


def test_start_does_nothing_without_cupy(fresh, monkeypatch) -> None:
    monkeypatch.setattr(_cuda_start.sys, "platform", "linux")
    monkeypatch.setattr(_cuda_start.importlib.util, "find_spec", lambda name: None)
    _cuda_start.start(0)
    assert _cuda_start._thread is None
    _cuda_start.wait()


@pytest.mark.parametrize(("backend", "gpu", "features", "started"), [
    ("cpu", None, [], []), ("auto", None, [], [None]), ("auto", "1", [], ["1"]),
    ("cpu", None, ["--model", "version=vmaf_v0.6.1"], []),
    ("auto", None, ["--model", "version=vmaf_v0.6.1"], [None]),
    ("auto", None, ["--feature", "vif", "--feature", "psnr"], [None]),
    ("auto", None, ["--feature", "psnr"], []),  # computed on the host whatever the backend
])  # fmt: skip
def test_score_starts_cuda_where_the_gpu_may_score(
    fresh, monkeypatch, tmp_path, backend, gpu, features, started
) -> None:
    seen: list[object] = []
    monkeypatch.setattr(_cuda_start, "start", lambda device=None: seen.append(device))
    out = str(tmp_path / "o.json")
    argv = ["score", "--example", "--backend", backend, "-q", "--json", "-o", out, *features]
    if gpu is not None:
        argv += ["--gpu", gpu]
    cli.main(argv)  # scores, or fails where GPU 1 is missing: the start was asked for first
    assert seen == [None if g is None else int(g) for g in started]


def test_engine_for_waits_for_the_start(monkeypatch) -> None:
    order: list[str] = []
    monkeypatch.setattr(_cuda_start, "wait", lambda: order.append("wait"))
    from admcuda.options import AdmOptions

    engine = backends.engine_for("cpu", 32, 32, 8, AdmOptions(), threads=1, frames=1)
    order.append("made")
    close = getattr(engine, "close", None)
    if close is not None:
        close()
    assert order == ["wait", "made"]


@pytest.mark.parametrize(("argv", "started"), [
    (["score", "r.yuv", "d.yuv"], [None]),
    (["score", "-r", "r.yuv", "-d", "d.yuv", "--model", "version=vmaf_v0.6.1"], [None]),
    (["score", "r.yuv", "d.yuv", "--gpu", "2"], [2]),
    (["score", "r.yuv", "d.yuv", "--gpu=1", "--backend=cuda"], [1]),
    (["score", "r.yuv", "d.yuv", "--feature", "adm", "-n"], [None]),
    (["score", "r.yuv", "d.yuv", "--feature", "psnr", "--feature", "motion=motion_force_zero=true"],
     [None]),
    (["score", "r.yuv", "d.yuv", "--backend", "cpu"], []),
    (["score", "r.yuv", "d.yuv", "--backend=cpu"], []),
    (["score", "r.yuv", "d.yuv", "--feature", "psnr"], []),  # the host's alone
    (["score", "r.yuv", "d.yuv", "--model", "version=vmaf_float_v0.6.1"], []),
    (["score", "r.yuv", "d.yuv", "--gpu", "one"], []),  # the parser's to refuse
    (["score", "--help"], []),
    (["bench"], []),
])  # fmt: skip
def test_the_raw_arguments_start_cuda_only_where_they_plainly_use_the_gpu(
    fresh, monkeypatch, argv, started
) -> None:
    seen: list[object] = []
    monkeypatch.setattr(_cuda_start, "start", lambda device=None: seen.append(device))
    _cuda_start.start_for_arguments(argv)
    assert seen == started


def test_the_gpu_feature_names_are_the_plan_s() -> None:
    from admcuda.vmaf.plan import FEATURE_NAMES

    gpu = {name for name, feature in FEATURE_NAMES.items() if feature in ("adm", "vif", "motion")}
    assert gpu == _cuda_start._GPU


def test_the_program_starts_cuda_before_numpy_is_imported(tmp_path) -> None:
    """``admcuda score`` asks for the start from its raw arguments while NumPy is not
    loaded yet, and again once they are parsed (a no-op after the first)."""
    import os
    import subprocess
    import sys

    out = str(tmp_path / "a.json")
    code = (
        "import sys\n"
        "from admcuda import cuda_start\n"
        "seen = []\n"
        "cuda_start.start = lambda device=None: seen.append('numpy' in sys.modules)\n"
        "from admcuda.cli import entry\n"
        f"status = entry.main(['score', '--example', '-q', '-o', {out!r}])\n"
        "print(status, seen)\n"
    )
    env = {**os.environ, "ADMCUDA_SERVER": "off"}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True)  # fmt: skip
    assert run.stdout.strip().splitlines()[-1] == "0 [False, True]"
