"""Signals while standard input waits for its writer: Ctrl-C ends the run at once (exit
status 130, one line), and SIGTERM ends it with its CPU worker processes.

Each test starts ``admcuda score REF -`` in a session of its own, with standard input a
pipe that gets a few frames and then stays open and silent, as a writer that is slow or
stuck would leave it; every process of that session is killed on the way out, pass or
fail. Waits are generous timeouts, not measurements.
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from _media import default_sigint, frame_bytes

from admcuda.errors import AdmError
from admcuda.io.streams import open_stream

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="Linux signals and /proc"
)

ROOT = Path(__file__).resolve().parent.parent
W, H = 320, 240
REF_FRAMES = 8  # more than the pipe gets, so the reader waits on it inside the first batch
# Over twice a pipe's and the reader's buffers (64 KiB each): once all is written and
# read, the pipeline's reader has read frames and waits for the next one.
PIPED_FRAMES = 4
SETTLE_S = 60.0  # how long the data may take to be read (a slow machine)
EXIT_S = 5.0  # how long a signalled run may take to end; the pipe stays open much longer


def _env() -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    # the NumPy engine's worker processes, whose fate these tests follow
    return {**os.environ, "PYTHONPATH": path, "ADMCUDA_CPU_ENGINE": "numpy"}


def _frames(n: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, n * frame_bytes(W, H, "420", 8), dtype=np.uint8).tobytes()


@pytest.fixture
def ref(tmp_path: Path) -> Path:
    path = tmp_path / "ref.yuv"
    path.write_bytes(_frames(REF_FRAMES, 1))
    return path


def _unread(fd: int) -> int:
    """Bytes in the pipe of ``fd`` not yet read (FIONREAD works on either end)."""
    count = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, count)
    return count[0]


def _children(pid: int) -> list[int]:
    """The processes ``pid`` has forked and not yet reaped."""
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            kids += [int(k) for k in (task / "children").read_text().split()]
    return kids


def _alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie waiting for a reaper."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_for(what: str, ready, timeout: float) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


@contextlib.contextmanager
def _scoring_a_stalled_pipe(ref: Path, data: bytes, *args: str) -> Iterator[subprocess.Popen[str]]:
    """``admcuda score REF - -w W -h H ARGS`` whose standard input gets ``data`` and then
    nothing; yields once it is read, with the pipe still open."""
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-m", "admcuda", "score", str(ref), "-", "-w", str(W), "-h", str(H),
         "--backend", "cpu", "--json", "-o", str(ref.with_suffix(".json")), *args],
        stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=_env(), start_new_session=True,
        preexec_fn=default_sigint,  # noqa: PLW1509 - one call, no threads of ours yet
    )  # fmt: skip
    os.close(read_end)

    def write() -> None:
        with contextlib.suppress(OSError):  # the run ended before reading it all
            with os.fdopen(write_end, "wb", closefd=False) as pipe:
                pipe.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        _wait_for(
            "the run to read its standard input",
            lambda: proc.poll() is not None or (not writer.is_alive() and not _unread(write_end)),
            SETTLE_S,
        )
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the run and whatever it started
        proc.wait()
        os.close(write_end)
        if proc.stderr is not None:
            proc.stderr.close()


@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_ends_a_run_waiting_on_standard_input(ref, threads):
    with _scoring_a_stalled_pipe(ref, _frames(PIPED_FRAMES, 2), "--threads", str(threads)) as proc:
        _assert_ctrl_c_ends(proc)


def test_ctrl_c_ends_a_scaled_run_waiting_on_standard_input(ref):
    """With --scale, ffmpeg reads the stream through admcuda, which feeds its standard
    input: ending that feed ends ffmpeg's output, which the pipeline waits on."""
    pytest.importorskip("imageio_ffmpeg")
    w, h = W // 2, H // 2
    size = frame_bytes(w, h, "420", 8)
    rng = np.random.default_rng(3)
    frames = [rng.integers(0, 256, size, dtype=np.uint8).tobytes() for _ in range(3 * PIPED_FRAMES)]
    y4m = f"YUV4MPEG2 W{w} H{h} F25:1 Ip A1:1 C420jpeg\n".encode() + b"".join(
        b"FRAME\n" + frame for frame in frames
    )
    # -w/-h for the raw reference: the Y4M stream gets the warning that libvmaf would read
    # it as raw
    warning = (
        "admcuda: warning: with -w/-h/-p/-b given libvmaf reads every input as raw YUV, a "
        "Y4M's header and FRAME markers as samples; admcuda reads the Y4M header of "
        "distorted file '-' (standard input)\n"
    )
    with _scoring_a_stalled_pipe(ref, y4m, "--scale", "bicubic") as proc:
        _assert_ctrl_c_ends(proc, warning)


def _assert_ctrl_c_ends(proc: subprocess.Popen[str], warnings: str = "") -> None:
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(timeout=EXIT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running {EXIT_S} s after SIGINT, its standard input open")
    assert code == 130
    assert proc.stderr is not None
    assert proc.stderr.read() == f"{warnings}admcuda: error: interrupted\n"


def test_sigterm_takes_the_cpu_workers_with_the_run(ref):
    """The run dies by the signal, as libvmaf's vmaf does (a shell reports 143), and its
    worker processes, which would wait for tasks forever, die with it."""
    with _scoring_a_stalled_pipe(ref, _frames(PIPED_FRAMES, 2), "--threads", "2") as proc:
        _wait_for("the CPU workers", lambda: len(_children(proc.pid)) >= 2, SETTLE_S)
        workers = _children(proc.pid)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=EXIT_S) == -signal.SIGTERM
        deadline = time.monotonic() + EXIT_S
        while any(map(_alive, workers)) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not [pid for pid in workers if _alive(pid)], "workers outlived the run"


def test_a_cpu_worker_asks_to_die_with_its_parent_and_leaves_if_it_already_has():
    """PR_SET_PDEATHSIG is SIGKILL once the worker starts; a worker whose parent pid is
    not the one it was given (the parent died before the request) leaves at once."""
    code = (
        "import ctypes, os, sys; from admcuda.backends.cpu import _worker_init; "
        "_worker_init(int(sys.argv[1]) or os.getppid()); sig = ctypes.c_int(); "
        "ctypes.CDLL(None).prctl(2, ctypes.byref(sig), 0, 0, 0); print(sig.value)"
    )  # 2: PR_GET_PDEATHSIG

    def worker(parent: int) -> subprocess.CompletedProcess[str]:
        args = [sys.executable, "-c", code, str(parent)]
        return subprocess.run(args, capture_output=True, text=True, env=_env(), timeout=60)

    kept = worker(0)
    assert (kept.returncode, kept.stdout.strip()) == (0, str(int(signal.SIGKILL))), kept.stderr
    gone = worker(os.getpid() + 1)  # its parent is this process
    assert (gone.returncode, gone.stdout, gone.stderr) == (0, "", "")


@pytest.mark.parametrize("stop", ["interrupt", "close"])
def test_a_stream_read_waiting_in_another_thread_can_be_ended(stop):
    """What the pipeline does on Ctrl-C, in one process: a thread blocked reading a pipe
    whose writer is silent gets an AdmError when the stream is interrupted, or closed
    (which would otherwise wait for that read to return)."""
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, f"YUV4MPEG2 W{W} H{H} F25:1 Ip A1:1 C420jpeg\n".encode())
        stream = open_stream(f"/dev/fd/{read_end}", label="distorted")
        got: list[BaseException | int] = []

        def read() -> None:
            try:
                got.append(stream.readinto(memoryview(bytearray(W * H))))
            except BaseException as exc:  # noqa: BLE001 - checked by the test
                got.append(exc)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(0.2)
        assert reader.is_alive() and not got  # waiting for the writer
        stopper = threading.Thread(target=getattr(stream, stop), daemon=True)
        stopper.start()
        stopper.join(EXIT_S)
        reader.join(EXIT_S)
        assert not stopper.is_alive(), f"{stop}() waited for the read"
        assert not reader.is_alive(), "the read did not end"
        assert isinstance(got[0], AdmError), got
        if stop == "interrupt":
            assert "reading was interrupted" in str(got[0])
        stream.close()
    finally:
        os.close(read_end)
        os.close(write_end)
