"""``admcuda serve``: score command lines handed to a running server give what they give
in a process of their own (outputs, standard output and error, exit status), in the
client's folder, with its standard input; Ctrl-C and a client's end stop the run, not the
server; and where no server of this admcuda answers, the command runs as usual."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from admcuda import serve
from tests._media import PAIRS, default_sigint

ROOT = Path(__file__).resolve().parent.parent
REF, DIS = (
    PAIRS / "astronaut_160x90_420_8b_boxnoise_ref.yuv",
    PAIRS / "astronaut_160x90_420_8b_boxnoise_dis.yuv",
)
RAW = ["-w", "160", "-h", "90", "-p", "420", "-b", "8"]


def _env(server: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), serve.ENV: server}
    env.pop("ADMCUDA_TRACEBACK", None)
    return env


def _client(args: list[str], server: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "admcuda", *args], env=_env(server), capture_output=True,
        text=True, timeout=120, preexec_fn=default_sigint, **kwargs,
    )  # fmt: skip


@pytest.fixture(scope="module")
def server():
    """A CPU server on a socket of its own; its log (stderr) lines come in ``log``."""
    yield from _server("cpu", "CPU")


def _server(backend: str, loaded: str):
    folder = tempfile.mkdtemp(prefix="admcuda-serve-", dir="/tmp")  # short: AF_UNIX paths
    path = os.path.join(folder, "s.sock")
    proc = subprocess.Popen(
        [sys.executable, "-m", "admcuda", "serve", "--socket", path, "--backend", backend,
         "--idle", "300"],
        env=_env("off"), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint,
    )  # fmt: skip
    log: list[str] = []
    first = proc.stderr.readline()
    log.append(first)
    assert first.startswith(f"admcuda serve: ready on {path} ({loaded}, "), first
    reader = threading.Thread(target=lambda: log.extend(proc.stderr), daemon=True)
    reader.start()
    yield path, proc, log
    stopped = subprocess.run(
        [sys.executable, "-m", "admcuda", "serve", "--socket", path, "--stop"],
        env=_env("off"), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert stopped.returncode == 0, stopped.stderr
    assert proc.wait(timeout=60) == 0
    reader.join(timeout=10)
    assert log[-1] == "admcuda serve: stopped on request\n"
    assert not os.path.exists(path)
    shutil.rmtree(folder, ignore_errors=True)


def _runs(log: list[str]) -> int:
    return sum(" ended with status " in line for line in log)


def _wait_for_runs(log: list[str], n: int) -> None:
    deadline = time.monotonic() + 60
    while _runs(log) < n and time.monotonic() < deadline:
        time.sleep(0.05)


def _scores(text: str) -> dict:
    doc = json.loads(text)
    doc.pop("fps", None)
    return doc


def test_a_served_run_gives_what_its_own_process_gives(server, tmp_path):
    path, _, log = server
    args = ["score", str(REF), str(DIS), *RAW, "--model", "version=vmaf_v0.6.1", "--json"]
    before = _runs(log)
    served = _client([*args, "-o", str(tmp_path / "served.json")], path)
    _wait_for_runs(log, before + 1)
    assert _runs(log) == before + 1  # it ran in the server
    own = _client([*args, "-o", str(tmp_path / "own.json")], "off")
    assert (served.returncode, served.stdout, served.stderr) == (0, own.stdout, own.stderr)
    assert served.stdout.startswith("vmaf_v0.6.1: ")
    served_doc = _scores((tmp_path / "served.json").read_text())
    assert served_doc == _scores((tmp_path / "own.json").read_text())
    assert served_doc["frames"] and "vmaf" in served_doc["pooled_metrics"]


def test_standard_output_input_and_the_client_folder(server, tmp_path):
    """Relative paths are the client's; ``-o -`` writes to the client's standard output; a
    reference read from standard input."""
    path, _, log = server
    shutil.copy(DIS, tmp_path / "dis.yuv")
    args = ["score", "-", "dis.yuv", *RAW, "--json", "-o", "-", "-q"]
    outs = []
    before = _runs(log)
    for where in (path, "off"):
        with open(REF, "rb") as stdin:
            outs.append(_client(args, where, cwd=tmp_path, stdin=stdin))
    _wait_for_runs(log, before + 1)
    assert _runs(log) == before + 1
    served, own = outs
    assert served.returncode == own.returncode == 0, served.stderr
    assert _scores(served.stdout) == _scores(own.stdout)
    assert served.stderr == own.stderr == ""


@pytest.mark.parametrize(
    ("args", "status"),
    [
        (["score", "missing.yuv", str(DIS), *RAW], 1),
        (["score", str(REF), str(DIS), "-w", "160"], 1),
        (["score", str(REF), str(DIS), *RAW, "--frame-cnt", "x"], 2),
        (["score", str(REF), str(DIS), *RAW, "--model", "version=vmaf_v9"], 2),
    ],
)
def test_errors_are_the_same_line_and_status(server, tmp_path, args, status):
    path, _, log = server
    before = _runs(log)
    served = _client(args, path, cwd=tmp_path)
    own = _client(args, "off", cwd=tmp_path)
    assert (served.returncode, served.stdout, served.stderr) == (
        status, own.stdout, own.stderr,
    )  # fmt: skip
    assert served.stderr.startswith("admcuda: error: ") and served.stderr.count("\n") == 1
    _wait_for_runs(log, before + 1)
    assert _runs(log) == before + 1


def _stuck_client(path: str, tmp_path: Path) -> subprocess.Popen:
    """A served run reading its reference from a pipe that stays open and empty."""
    shutil.copy(DIS, tmp_path / "dis.yuv")
    return subprocess.Popen(
        [sys.executable, "-m", "admcuda", "score", "-", "dis.yuv", *RAW, "-q"],
        env=_env(path), cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint,
    )  # fmt: skip


def _started(log: list[str], before: int, proc: subprocess.Popen) -> None:
    # the run is under way once the client waits (no way to see it from here): give the
    # server time to take the request and block on the pipe
    time.sleep(1.5)
    assert proc.poll() is None and _runs(log) == before


def test_ctrl_c_in_the_client_interrupts_the_run_not_the_server(server, tmp_path):
    path, _, log = server
    before = _runs(log)
    proc = _stuck_client(path, tmp_path)
    _started(log, before, proc)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)  # the pipe still open: it is the interrupt that ends the run
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out, err) == (130, "", "admcuda: error: interrupted\n")
    _wait_for_runs(log, before + 1)
    assert "ended with status 130" in log[-1]
    again = _client(["score", str(REF), str(DIS), *RAW, "-q", "--json", "-o", "-"], path)
    assert again.returncode == 0 and _scores(again.stdout)["frames"]
    _wait_for_runs(log, before + 2)
    assert "ended with status 0" in log[-1]


def test_a_client_that_dies_interrupts_its_run(server, tmp_path):
    path, _, log = server
    before = _runs(log)
    proc = _stuck_client(path, tmp_path)
    _started(log, before, proc)
    proc.kill()
    proc.wait(timeout=60)
    _wait_for_runs(log, before + 1)  # the pipe still open: the client's end ends the run
    proc.communicate(timeout=60)
    assert "ended with status 130" in log[-1]


def test_without_a_server_the_command_runs_here(tmp_path):
    args = ["score", str(REF), str(DIS), *RAW, "-q", "--json", "-o", "-"]
    absent = _client(args, str(tmp_path / "none.sock"))
    assert absent.returncode == 0 and _scores(absent.stdout)["frames"]


def _fake_server(path: str, reply: dict, seen: list) -> threading.Thread:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(1)

    def answer() -> None:
        conn, _ = sock.accept()
        with conn:
            request, fds = serve._recv(conn, with_fds=True)
            for fd in fds:
                os.close(fd)
            seen.append(request)
            serve._send(conn, reply)
        sock.close()

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    return thread


def test_a_server_that_refuses_leaves_the_run_here(monkeypatch):
    folder = tempfile.mkdtemp(prefix="admcuda-serve-", dir="/tmp")
    path = os.path.join(folder, "s.sock")
    seen: list = []
    thread = _fake_server(path, {"accepted": False, "reason": "another admcuda"}, seen)
    monkeypatch.setenv(serve.ENV, path)
    assert serve.hand_over(["score", "a.yuv", "b.yuv"]) is None
    thread.join(timeout=10)
    request = seen[0]
    assert request["argv"] == ["score", "a.yuv", "b.yuv"] and request["cwd"] == os.getcwd()
    assert request["version"] == serve._version() and request["package"] == serve._package()
    shutil.rmtree(folder)


def test_a_socket_in_a_folder_others_may_enter_is_not_used(monkeypatch):
    folder = tempfile.mkdtemp(prefix="admcuda-serve-", dir="/tmp")
    os.chmod(folder, 0o755)
    path = os.path.join(folder, "s.sock")
    seen: list = []
    _fake_server(path, {"accepted": True}, seen)
    monkeypatch.setenv(serve.ENV, path)
    assert serve.hand_over(["score"]) is None
    assert seen == []
    shutil.rmtree(folder)


def test_the_server_refuses_what_it_must_not_run(monkeypatch):
    good = {"version": serve._version(), "package": serve._package(), "argv": ["score"],
            "env": dict(os.environ), "cwd": os.getcwd()}  # fmt: skip
    assert serve._refusal(good) is None
    assert "runs admcuda" in serve._refusal({**good, "version": "0.0.1"})
    assert "runs admcuda" in serve._refusal({**good, "package": "/elsewhere/admcuda"})
    assert serve._refusal({**good, "argv": ["bench"]}) == "only admcuda score runs are served"
    assert serve._refusal({**good, "env": None}) == "a malformed request"
    assert "folder" in serve._refusal({**good, "cwd": "/nonexistent/folder"})
    other = {**good["env"], "CUDA_VISIBLE_DEVICES": "7"}
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert "other GPUs" in serve._refusal({**good, "env": other})


def test_socket_setting(monkeypatch):
    monkeypatch.setenv(serve.ENV, "off")
    assert serve.socket_path() is None
    monkeypatch.setenv(serve.ENV, "/tmp/x/s.sock")
    assert serve.socket_path() == "/tmp/x/s.sock"
    monkeypatch.delenv(serve.ENV)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    assert serve.socket_path() == f"/tmp/admcuda-{os.getuid()}/serve.sock"


def test_stop_without_a_server_is_an_error(tmp_path):
    done = _client(["serve", "--socket", str(tmp_path / "s.sock"), "--stop"], "off")
    assert (done.returncode, done.stderr) == (
        2, f"admcuda: error: no server answers on {tmp_path / 's.sock'}\n",
    )  # fmt: skip


def test_the_client_imports_no_numpy():
    code = (
        "import sys; from admcuda.cli import entry; import admcuda.serve; "
        "print('numpy' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], env=_env("off"), capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.stdout == "False\n", done.stderr


def _cuda_ok() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - no CuPy, driver or device
        return False


@pytest.mark.cuda
@pytest.mark.skipif(not _cuda_ok(), reason="needs CuPy and a GPU")
def test_a_served_gpu_run_gives_what_its_own_process_gives(tmp_path):
    """Two VMAF runs on the GPU in one server (the second with its page-locked slots kept
    from the first) and one in its own process: the same document, frame for frame."""
    gen = _server("cuda", "CUDA loaded")
    path, _, log = next(gen)
    try:
        args = ["score", str(REF), str(DIS), *RAW, "--model", "version=vmaf_v0.6.1",
                "--feature", "psnr", "--backend", "cuda", "--json", "-q", "-o"]  # fmt: skip
        docs = []
        for k, where in enumerate((path, path, "off")):
            done = _client([*args, str(tmp_path / f"{k}.json")], where)
            assert done.returncode == 0, done.stderr
            docs.append(_scores((tmp_path / f"{k}.json").read_text()))
        _wait_for_runs(log, 2)
        assert _runs(log) == 2
        assert docs[0] == docs[1] == docs[2] and len(docs[0]["frames"]) == 3
    finally:
        next(gen, None)


@pytest.mark.parametrize(
    ("reply", "status", "said"),
    [
        ({"status": 3}, 3, ""),
        ({"status": 1, "failure": "OSError: gone"}, 1,
         "admcuda: error: the scoring server failed: OSError: gone\n"),
        (None, 1, "admcuda: error: the scoring server (process 42) ended before the run did; "
         "run it again with ADMCUDA_SERVER=off\n"),
    ],
)  # fmt: skip
def test_the_client_reports_what_the_server_sends(capsys, reply, status, said):
    ours, theirs = socket.socketpair()
    if reply is not None:
        serve._send(theirs, reply)
    theirs.close()
    assert serve._await_status(ours, 42) == status
    assert capsys.readouterr().err == said


def test_messages_sent_together_are_read_one_at_a_time():
    """A fast run's status can reach the client in the same read as its acceptance: each
    read takes one message and leaves the next in the socket (the status was lost, and
    the client waited, when the first read took both)."""
    a, b = socket.socketpair()
    b.settimeout(10)  # a message lost to the read before fails here, not waits
    with a, b:
        serve._send(a, {"accepted": True, "pid": 1})
        serve._send(a, {"status": 2, "failure": None})
        assert serve._recv(b) == ({"accepted": True, "pid": 1}, [])
        assert serve._recv(b) == ({"status": 2, "failure": None}, [])
        a.close()
        assert serve._recv(b) == (None, [])
    c, d = socket.socketpair()  # a request with the client's descriptors, then a signal
    d.settimeout(10)
    with c, d:
        r, w = os.pipe()
        try:
            serve._send(c, {"argv": ["score"]}, [r])
            serve._send(c, {"signal": "SIGINT"})
            first, fds = serve._recv(d, with_fds=True)
            for fd in fds:
                os.close(fd)
            assert first == {"argv": ["score"]} and len(fds) == 1
            assert serve._recv(d) == ({"signal": "SIGINT"}, [])
        finally:
            os.close(r)
            os.close(w)
