"""``admcuda serve``: a long-lived scoring process that ``admcuda score`` hands its work to.

A score run spends most of a short clip's time starting: the interpreter, NumPy, CuPy, the
CUDA context and the kernels. ``admcuda serve`` pays that once and then runs each
``admcuda score`` command line that reaches it, one at a time, exactly as that command
would run in a process of its own: the same code on the same arguments, in the client's
working directory and environment, reading and writing the client's own standard input,
output and error (their descriptors are passed over the socket), and the client exits
with the run's exit status. Ctrl-C in the client interrupts the run; a client that dies
interrupts it too.

The client side (:func:`hand_over`) imports nothing beyond the standard library, so
that a handed-over run does not pay for NumPy. It hands over only when a server of the
same admcuda (version and package folder) listens on the socket and the GPUs visible to
both are the same; otherwise, and with ``ADMCUDA_SERVER=off``, the command runs in its
own process as usual. ``ADMCUDA_SERVER=PATH`` names another socket than the default,
``$XDG_RUNTIME_DIR/admcuda/serve.sock`` (else ``/tmp/admcuda-UID/serve.sock``), whose
folder is private to the user. The server stops after ``--idle`` seconds without a run,
on ``admcuda serve --stop``, on Ctrl-C or SIGTERM, and where the GPU is left unusable.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from admcuda.clock import process_start

__all__ = ["ENV", "hand_over", "main", "socket_path"]

ENV = "ADMCUDA_SERVER"
_HEADER = struct.Struct(">I")
_LIMIT = 1 << 24  # bytes in one message, at most
_STD = (0, 1, 2)
_IDLE_S = 900.0
_KEPT_HOST_MEMORY = 4 << 30  # page-locked bytes a server keeps between runs, at most
_SAME_GPUS = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")


def socket_path() -> str | None:
    """The server's socket: ``ADMCUDA_SERVER`` where it names one, None where it is
    ``off``, else the user's default."""
    chosen = os.environ.get(ENV, "").strip()
    if chosen.lower() in ("off", "0", "no", "false"):
        return None
    if chosen and chosen.lower() not in ("on", "1", "yes", "true", "auto"):
        return chosen
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isdir(runtime):
        return os.path.join(runtime, "admcuda", "serve.sock")
    return os.path.join("/tmp", f"admcuda-{os.getuid()}", "serve.sock")


def _package() -> str:
    return os.path.dirname(os.path.realpath(__file__))


def _version() -> str:
    from admcuda.version import __version__

    return __version__


def _private(folder: str) -> bool:
    """Whether ``folder`` is this user's and closed to everyone else."""
    try:
        st = os.stat(folder)
    except OSError:
        return False
    return st.st_uid == os.getuid() and (st.st_mode & 0o077) == 0


# -- messages: a 4-byte length, then JSON


def _send(sock: socket.socket, message: dict[str, Any], fds: Sequence[int] = ()) -> None:
    data = json.dumps(message).encode()
    frame = _HEADER.pack(len(data)) + data
    if fds:
        sent = socket.send_fds(sock, [frame], list(fds))
        if sent < len(frame):
            sock.sendall(frame[sent:])
    else:
        sock.sendall(frame)


def _recv(
    sock: socket.socket, *, with_fds: bool = False
) -> tuple[dict[str, Any] | None, list[int]]:
    """One message (None where the peer closed first) and the descriptors that came with it.
    Reads no byte past the message: the next one (a run's status right after its
    acceptance) stays in the socket for the next call."""
    fds: list[int] = []
    buf = b""
    while len(buf) < _HEADER.size:
        want = _HEADER.size - len(buf)
        if with_fds and not buf:
            chunk, got, _, _ = socket.recv_fds(sock, want, len(_STD))
            fds += got
        else:
            chunk = sock.recv(want)
        if not chunk:
            return None, fds
        buf += chunk
    (size,) = _HEADER.unpack(buf[: _HEADER.size])
    if size > _LIMIT:
        raise ValueError("message too long")
    body = buf[_HEADER.size :]
    while len(body) < size:
        chunk = sock.recv(min(1 << 16, size - len(body)))
        if not chunk:
            return None, fds
        body += chunk
    return json.loads(body[:size]), fds


# -- the client


def _open_fds() -> list[int]:
    fds = []
    for fd in _STD:
        with contextlib.suppress(OSError):
            os.fstat(fd)
            fds.append(fd)
    return fds


def hand_over(argv: Sequence[str]) -> int | None:
    """Run the command line ``argv`` (``score ...``) in a listening server; its exit status,
    or None where no server of this admcuda takes it (the caller then runs it itself)."""
    if os.name != "posix" or not hasattr(socket, "send_fds"):
        return None
    path = socket_path()
    if path is None or not os.path.exists(path) or not _private(os.path.dirname(path)):
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        fds = _open_fds()
        request = {
            "argv": list(argv),
            "cwd": os.getcwd(),
            "env": dict(os.environ),
            "fds": fds,
            "version": _version(),
            "package": _package(),
            "started": process_start(),
        }
        _send(sock, request, fds)
        reply, _ = _recv(sock)  # once the server has ended the runs before this one
    except (OSError, ValueError):
        sock.close()
        return None
    except KeyboardInterrupt:
        sock.close()
        print("admcuda: error: interrupted", file=sys.stderr)
        return 130
    if not reply or not reply.get("accepted"):
        sock.close()
        return None
    return _await_status(sock, reply.get("pid"))


def _await_status(sock: socket.socket, pid: Any) -> int:
    def forward(signum: int, frame: Any) -> None:
        with contextlib.suppress(OSError):
            _send(sock, {"signal": "SIGINT"})

    previous = signal.signal(signal.SIGINT, forward)
    try:
        message, _ = _recv(sock)
    except (OSError, ValueError):
        message = None
    finally:
        signal.signal(signal.SIGINT, previous)
        sock.close()
    if message is not None and message.get("failure"):
        print(f"admcuda: error: the scoring server failed: {message['failure']}", file=sys.stderr)
    if message is None or not isinstance(message.get("status"), int):
        print(
            f"admcuda: error: the scoring server (process {pid}) ended before the run did; "
            f"run it again with {ENV}=off",
            file=sys.stderr,
        )
        return 1
    return int(message["status"])


# -- the server


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.run = 0  # the run going on in the main thread (numbered from 1), or 0
        self.forwarded = 0  # SIGINTs sent for clients and not yet handled
        self.stopping = False  # SIGTERM came: stop once the run (if any) ends


def _on_sigint(state: _State) -> Any:
    """SIGINT interrupts the run; between runs, one forwarded for a client whose run has
    just ended is dropped, and any other (Ctrl-C where the server runs) stops the server."""

    def handler(signum: int, frame: Any) -> None:
        with state.lock:
            forwarded, state.forwarded = state.forwarded, max(0, state.forwarded - 1)
            if not state.run and forwarded:
                return
        raise KeyboardInterrupt

    return handler


def _on_sigterm(state: _State) -> Any:
    """SIGTERM stops the server; a run going on stops first, as at Ctrl-C."""

    def handler(signum: int, frame: Any) -> None:
        with state.lock:
            state.stopping = True
        raise KeyboardInterrupt

    return handler


def _watch(conn: socket.socket, state: _State, run: int, main: int) -> None:
    """Turn run ``run``'s client's Ctrl-C, and the client's end, into SIGINT in the main
    thread (so that a read blocked there wakes up, as in the client's own process)."""
    while True:
        try:
            message, _ = _recv(conn)
        except (OSError, ValueError):
            message = None
        with state.lock:
            if state.run != run:
                return
            if message is not None and message.get("signal") != "SIGINT":
                continue
            state.forwarded += 1
            signal.pthread_kill(main, signal.SIGINT)
        if message is None:
            return


def _stream(fd: int, mode: str, like: Any) -> Any:
    """A text stream on descriptor ``fd`` as the interpreter makes its own."""
    encoding = getattr(like, "encoding", None) or "utf-8"
    errors = getattr(like, "errors", None) or "strict"
    if mode == "r":
        return open(fd, encoding=encoding, errors=errors, closefd=False)  # noqa: SIM115
    line = fd == 2 or os.isatty(fd)
    return open(
        fd, "w", buffering=1 if line else -1, encoding=encoding, errors=errors, closefd=False
    )  # noqa: SIM115


@contextlib.contextmanager
def _as_client(request: dict[str, Any], fds: list[int]) -> Iterator[None]:
    """Within: the client's descriptors 0-2 (the null device for one it had closed, its
    ``sys`` stream then None), working directory, environment and ``sys.argv``."""
    given = dict(zip(request.get("fds", []), fds, strict=False))
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    saved = {fd: os.dup(fd) for fd in _STD}
    streams = sys.stdin, sys.stdout, sys.stderr
    env, cwd, argv = dict(os.environ), os.getcwd(), sys.argv
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for fd in _STD:
            os.dup2(given.get(fd, null), fd)
        sys.stdin = _stream(0, "r", streams[0]) if 0 in given else None
        sys.stdout = _stream(1, "w", streams[1]) if 1 in given else None
        sys.stderr = _stream(2, "w", streams[2]) if 2 in given else None
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        sys.argv = ["admcuda", *request["argv"]]
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                if stream is not None:
                    stream.flush()
        sys.stdin, sys.stdout, sys.stderr = streams
        sys.argv = argv
        os.environ.clear()
        os.environ.update(env)
        with contextlib.suppress(OSError):
            os.chdir(cwd)
        for fd, copy in saved.items():
            os.dup2(copy, fd)
            os.close(copy)
        os.close(null)
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def _refusal(request: dict[str, Any]) -> str | None:
    """Why this server does not run ``request``, or None."""
    if request.get("version") != _version() or request.get("package") != _package():
        return f"this server runs admcuda {_version()} from {_package()}"
    argv, env, cwd = request.get("argv"), request.get("env"), request.get("cwd")
    if not isinstance(argv, list) or argv[:1] != ["score"]:
        return "only admcuda score runs are served"
    if not all(isinstance(a, str) for a in argv) or not isinstance(env, dict):
        return "a malformed request"
    if not isinstance(cwd, str) or not os.path.isdir(cwd):
        return "the client's folder is not there for the server"
    if any(env.get(k) != os.environ.get(k) for k in _SAME_GPUS):
        return "the client sees other GPUs than the server"
    return None


def _run_job(
    request: dict[str, Any], fds: list[int], conn: socket.socket, state: _State, run: int
) -> int:
    from admcuda.cli import main as cli
    from admcuda.cli import score

    with state.lock:
        state.run = run
    main = threading.main_thread().ident
    watcher = threading.Thread(target=_watch, args=(conn, state, run, main), daemon=True)
    watcher.start()
    score.PROCESS_START = request.get("started")
    try:
        with _as_client(request, fds):
            try:
                status = cli.main(request["argv"][:])
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else 1
            except KeyboardInterrupt:
                print("admcuda: error: interrupted", file=sys.stderr)
                status = 130
    finally:
        score.PROCESS_START = None
        with state.lock:
            state.run = 0
    return status


def _gpu_healthy() -> bool:
    """Whether CUDA (where this process started it) still works; and the memory the
    run's arrays held handed back to the device."""
    cp = sys.modules.get("cupy")
    if cp is None:
        return True
    try:
        cp.cuda.runtime.deviceSynchronize()
        cp.get_default_memory_pool().free_all_blocks()
        cp.get_default_pinned_memory_pool().free_all_blocks()
    except Exception:  # noqa: BLE001 - a sticky CUDA error: no later run could use it
        return False
    return True


def _warm(backend: str, gpu: int | None) -> str:
    """Load what a run loads (modules, CUDA, kernels, a model) by scoring a small
    generated pair in this process; the backend that scored it."""
    import tempfile

    import numpy as np

    from admcuda.cli import main as cli

    with tempfile.TemporaryDirectory(prefix="admcuda-warm-") as tmp:
        rng = np.random.default_rng(0)
        w, h, n = 64, 48, 3
        ref = rng.integers(16, 235, (n, h * w * 3 // 2), dtype=np.uint8)
        dis = np.clip(ref.astype(np.int16) + rng.integers(-3, 4, ref.shape), 0, 255)
        paths = [os.path.join(tmp, "ref.yuv"), os.path.join(tmp, "dis.yuv")]
        for path, frames in zip(paths, (ref, dis.astype(np.uint8)), strict=True):
            frames.tofile(path)
        out = os.path.join(tmp, "out.json")
        argv = ["score", *paths, "-w", str(w), "-h", str(h), "-p", "420", "-b", "8",
                "--model", "version=vmaf_v0.6.1", "--backend", backend, "--json", "-o", out,
                "-q"]  # fmt: skip
        if gpu is not None:
            argv += ["--gpu", str(gpu)]
        status = cli.main(argv)
        if status != 0:
            raise SystemExit(status)
    return "CUDA loaded" if "cupy" in sys.modules else "CPU"


def _load_cpu_kernels() -> None:
    """Load the compiled CPU engine's 8-bit kernels where Numba's cache holds them (a
    run in its own process spends most of a second loading them); others, and kernels
    not compiled yet, load in the first run that needs them, as without a server."""
    from admcuda import compiled

    if compiled.available() and compiled.cached() is True:
        compiled.warm_up((8,), ("adm", "vif", "motion"))


def _listen(path: str) -> socket.socket:
    from admcuda.errors import AdmError

    folder = os.path.dirname(path) or "."
    os.makedirs(folder, mode=0o700, exist_ok=True)
    if not _private(folder):
        raise AdmError(f"{folder} must be this user's and closed to others (chmod 700)")
    if os.path.exists(path):
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(path)
        except OSError:
            os.unlink(path)  # left by a server that ended without tidying up
        else:
            raise AdmError(f"a server already listens on {path} (admcuda serve --stop ends it)")
        finally:
            probe.close()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    os.chmod(path, 0o600)
    sock.listen(16)
    return sock


def _peer_is_us(conn: socket.socket) -> bool:
    """Whether the client runs as this user (Linux; elsewhere the private folder says so)."""
    if not hasattr(socket, "SO_PEERCRED"):
        return True
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _, uid, _ = struct.unpack("3i", creds)
    return uid == os.getuid()


def serve(path: str, *, idle: float, backend: str, gpu: int | None, log: Any) -> int:
    """Listen on ``path`` and run score requests until idle for ``idle`` seconds."""

    def say(text: str) -> None:
        with contextlib.suppress(OSError, ValueError):  # a terminal that has gone away
            print(f"admcuda serve: {text}", file=log, flush=True)

    t0 = time.perf_counter()
    used = _warm(backend, gpu)
    if "cupy" in sys.modules:
        from admcuda.backends.cuda import hostmem

        hostmem.keep_blocks(_KEPT_HOST_MEMORY)
    else:
        _load_cpu_kernels()
    sock = _listen(path)
    state = _State()
    previous = signal.signal(signal.SIGINT, _on_sigint(state))
    previous_term = signal.signal(signal.SIGTERM, _on_sigterm(state))
    say(
        f"ready on {path} ({used}, {time.perf_counter() - t0:.2f} s to start); idle for "
        f"{idle:g} s ends it"
    )
    runs = 0
    try:
        while True:
            sock.settimeout(idle if idle > 0 else None)
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                say(f"idle for {idle:g} s; stopping")
                return 0
            conn.settimeout(None)
            with conn:
                if not _peer_is_us(conn):
                    continue
                try:
                    request, fds = _recv(conn, with_fds=True)
                except (OSError, ValueError):
                    continue
                if request is None:
                    for fd in fds:
                        os.close(fd)
                    continue
                if request.get("stop"):
                    with contextlib.suppress(OSError):
                        _send(conn, {"stopped": True})
                    say("stopped on request")
                    return 0
                reason = _refusal(request)
                if reason is not None:
                    for fd in fds:
                        os.close(fd)
                    with contextlib.suppress(OSError):
                        _send(conn, {"accepted": False, "reason": reason})
                    continue
                try:
                    _send(conn, {"accepted": True, "pid": os.getpid()})
                except OSError:  # the client gave up waiting (Ctrl-C while a run went on)
                    for fd in fds:
                        os.close(fd)
                    continue
                start = time.perf_counter()
                runs += 1
                failure = None
                try:
                    status = _run_job(request, fds, conn, state, runs)
                except Exception as exc:  # noqa: BLE001 - the server's own fault: said, and on
                    status, failure = 1, f"{type(exc).__name__}: {exc}"
                    say(f"run {runs} failed in the server: {failure}")
                say(
                    f"run {runs} ({len(request['argv'])} arguments) ended with status "
                    f"{status} in {time.perf_counter() - start:.2f} s"
                )
                with contextlib.suppress(OSError):
                    _send(conn, {"status": status, "failure": failure})
                with contextlib.suppress(OSError):
                    # wakes the run's watcher, still reading, and ends the client's read
                    conn.shutdown(socket.SHUT_RDWR)
            if state.stopping:
                say("stopping (SIGTERM)")
                return 0
            if not _gpu_healthy():
                say("CUDA failed during the last run; stopping")
                return 1
    except KeyboardInterrupt:
        say("stopping")
        return 0
    finally:
        signal.signal(signal.SIGINT, previous)
        signal.signal(signal.SIGTERM, previous_term)
        sock.close()
        with contextlib.suppress(OSError):
            os.unlink(path)


def stop(path: str) -> bool:
    """Ask the server on ``path`` to stop; whether one answered."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        _send(sock, {"stop": True})
        reply, _ = _recv(sock)
    except OSError:
        return False
    finally:
        sock.close()
    return bool(reply and reply.get("stopped"))


def main(argv: Sequence[str] | None = None) -> int:
    """``admcuda serve [--socket PATH] [--idle S] [--backend B] [--gpu N] [--stop]``."""
    from admcuda.cli.tool import Parser, run_tool
    from admcuda.errors import UsageError

    def run(args_list: Sequence[str] | None) -> int:
        parser = Parser(
            prog="admcuda serve",
            description="Keep one scoring process running, its CUDA context and kernels "
            "loaded: each later `admcuda score` (run by this user, with this admcuda) hands "
            "its command line to it and exits with the run's status. ADMCUDA_SERVER=off "
            "runs a command in its own process.",
        )
        parser.add_argument("--socket", help="the socket to listen on (default: "
                            "ADMCUDA_SERVER, else the user's runtime folder)")  # fmt: skip
        parser.add_argument("--idle", type=float, default=_IDLE_S,
                            help=f"seconds without a run before stopping (default {_IDLE_S:g}; "
                            "0: never)")  # fmt: skip
        parser.add_argument("--backend", choices=("auto", "cuda", "cpu"), default="auto",
                            help="what to load ahead (default auto)")  # fmt: skip
        parser.add_argument("--gpu", type=int, help="the GPU to load ahead (default 0)")
        parser.add_argument("--stop", action="store_true", help="stop the running server")
        args = parser.parse_args(args_list)
        path = args.socket or socket_path()
        if path is None:
            raise UsageError(f"{ENV}=off: no socket; give --socket PATH")
        if args.stop:
            if not stop(path):
                raise UsageError(f"no server answers on {path}")
            return 0
        if args.idle < 0:
            raise UsageError("--idle must be 0 or more")
        return serve(path, idle=args.idle, backend=args.backend, gpu=args.gpu, log=sys.stderr)

    return run_tool(run, argv)
