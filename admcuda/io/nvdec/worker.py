"""NVDEC decoding in a process of its own per input, the planes handed over on the GPU
(opt-in: ``ADMCUDA_NVDEC_PROCESSES=1``).

Several decoding sessions driven from threads of one process share one interpreter lock:
decoding alone, with each frame's luma taken and waited for, 1080p H.264 on an H200, 2, 4
and 7 threads gave about 690, 870 and 1,050 frames/s in all, 2, 4 and 7 processes about
900, 1,700 and 1,700. Bare ``Decode()`` loops (HEVC 10-bit) decoded about as fast in
threads as in processes: the per-frame work around each decode (grouped in
:mod:`admcuda.io.nvdec.reader`) is what holds threads back. :class:`NvdecProcessSource`
decodes an encoded input in a child process (``python -m admcuda.io.nvdec.worker``), which
writes each luma plane straight into the pipeline's device buffer through CUDA IPC and says
how many frames it wrote once they are complete. Nothing crosses the host but a few bytes
per batch.

It is not the default: while scoring, the children's CUDA contexts share the GPU with the
scoring one by time slices, and ``admcuda score`` was slower this way than with threads
(kernels/NOTES.md, NVDEC). It is kept for a GPU under MPS, where contexts run at once,
which has not been measured.

The child is started with :mod:`subprocess`, not :mod:`multiprocessing`, so that nothing
of the caller's ``__main__`` is run again in it; the two talk over a socket pair through
:class:`multiprocessing.connection.Connection` (the binding's own logging may write to the
child's stdout).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from admcuda.errors import AdmError

__all__ = ["NvdecProcessSource", "use_processes"]

_START_TIMEOUT = 120.0  # seconds for the child to import, open the file and decode frame 0


def use_processes() -> bool:
    """Whether NVDEC inputs are decoded in child processes (``ADMCUDA_NVDEC_PROCESSES=1``)."""
    return os.environ.get("ADMCUDA_NVDEC_PROCESSES", "0").strip() in ("1", "true", "yes")


class _Pending:
    def __init__(self, future: Future[int]) -> None:
        self._future = future

    def wait(self) -> int:
        return self._future.result()


class NvdecProcessSource:
    """The selected frames of an NVDEC input, decoded by a child process.

    A pipeline source like :class:`admcuda.io.streams.IterSource`: :meth:`start` has the
    child fill the first ``n`` planes of a device buffer made by :meth:`device_buffer`.

    Parameters
    ----------
    reader : admcuda.io.nvdec.reader.NvdecReader
        The input as the caller opened it (its checks are done); the child opens the
        same file on the same GPU.
    skip, limit, subsample : int
        As :class:`admcuda.io.inputs.FrameStream`.
    """

    available = None
    scored = None

    def __init__(
        self, reader: Any, *, skip: int = 0, limit: int | None = None, subsample: int = 1
    ) -> None:
        self.reader = reader
        self.skip = skip
        self.read = 0
        self._handles: dict[int, Any] = {}
        self._closed = False
        # One request at a time goes to the child, in the order the pipeline makes them.
        self._io = ThreadPoolExecutor(1, thread_name_prefix="admcuda-nvdec")
        parent, child = socket.socketpair()
        # The child's stderr goes to a file, read only to explain its death (a pipe
        # nobody reads could fill and stop it).
        self._stderr = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "admcuda.io.nvdec.worker", str(child.fileno())],
                pass_fds=(child.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._stderr,
                env={**os.environ, "LOGGER_LEVEL": os.environ.get("LOGGER_LEVEL", "ERROR")},
            )
        finally:
            child.close()
        self._conn = Connection(parent.detach())
        request = {
            "path": str(reader.path),
            "label": reader.label,
            "gpu": reader.gpu,
            "skip": skip,
            "limit": limit,
            "subsample": subsample,
        }
        self._started = self._io.submit(self._call, ("open", request), _START_TIMEOUT)

    # -- talking to the child

    def _call(self, message: tuple[Any, ...], timeout: float | None = None) -> Any:
        try:
            self._conn.send(message)
            if timeout is not None and not self._conn.poll(timeout):
                raise AdmError(f"{self.reader.where}: the NVDEC worker did not answer")
            kind, value, read = self._conn.recv()
        except (EOFError, OSError) as exc:
            raise AdmError(f"{self.reader.where}: the NVDEC worker died ({self._why()})") from exc
        if kind == "error":
            raise AdmError(value)
        self.read = read
        return value

    def _why(self) -> str:
        proc = self._proc
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "it stopped answering"
        self._stderr.seek(0)
        err = self._stderr.read().decode(errors="replace").strip()
        last = err.splitlines()[-1] if err else ""
        return f"exit status {proc.returncode}" + (f": {last}" if last else "")

    # -- the pipeline's surface

    def device_buffer(self, shape: tuple[int, ...], dtype: Any) -> Any:
        """A CuPy array in its own device allocation (an IPC handle names a whole
        allocation), on the reader's GPU."""
        import cupy as cp

        dtype = np.dtype(dtype)
        with cp.cuda.Device(self.reader.gpu):
            mem = cp.cuda.Memory(max(int(np.prod(shape)) * dtype.itemsize, 1))
            return cp.ndarray(shape, dtype, cp.cuda.MemoryPointer(mem, 0))

    def _share(self, out: Any) -> int:
        import cupy as cp

        key = int(out.data.ptr)
        if key not in self._handles:
            handle = cp.cuda.runtime.ipcGetMemHandle(key)
            self._call(("buffer", key, handle, tuple(out.shape), out.dtype.str))
            self._handles[key] = out
        return key

    def _fill(self, out: Any, n: int) -> int:
        self._started.result()
        if out.ndim != 3 or out.shape[0] < n:
            raise ValueError("NvdecProcessSource fills (n, height, width) device buffers")
        return int(self._call(("fill", self._share(out), n)))

    def start(self, out: Any, n: int, pool: Any) -> _Pending:
        """Have the child decode up to ``n`` frames into ``out[:n]``; ``pool`` is unused
        (the requests have a thread of their own)."""
        return _Pending(self._io.submit(self._fill, out, n))

    def has_more(self) -> bool:
        """Consume one more frame, if the input has one (for length checks)."""
        self._started.result()
        return bool(self._io.submit(self._call, ("more",)).result())

    def close(self) -> None:
        """Stop the child (it releases its NVDEC session and the buffers it opened)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._io.submit(self._call, ("close",), 10.0).result(timeout=15)
        except Exception:  # noqa: BLE001, S110 - the child is stopped below either way
            pass
        self._io.shutdown(wait=False, cancel_futures=True)
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._conn.close()
        self._stderr.close()

    def __del__(self) -> None:
        proc = getattr(self, "_proc", None)
        if proc is not None and proc.poll() is None:
            proc.kill()


# ---- the child --------------------------------------------------------------------------


def _serve(conn: Connection) -> None:
    import cupy as cp

    from admcuda.io.inputs import FrameStream
    from admcuda.io.nvdec.reader import NvdecReader
    from admcuda.io.streams import IterSource

    buffers: dict[int, Any] = {}
    opened: list[Any] = []
    stream = reader = source = None
    try:
        while True:
            message = conn.recv()
            kind = message[0]
            try:
                if kind == "open":
                    req = message[1]
                    reader = NvdecReader(req["path"], label=req["label"], gpu=req["gpu"])
                    stream = FrameStream(
                        reader, skip=req["skip"], limit=req["limit"], subsample=req["subsample"]
                    )
                    source = IterSource(stream)
                    conn.send(("ok", None, 0))
                elif kind == "buffer":
                    _, key, handle, shape, dtype = message
                    with cp.cuda.Device(reader.gpu):
                        ptr = cp.cuda.runtime.ipcOpenMemHandle(handle)
                        opened.append(ptr)
                        size = int(np.prod(shape)) * np.dtype(dtype).itemsize
                        mem = cp.cuda.UnownedMemory(ptr, size, None)
                        buffers[key] = cp.ndarray(shape, dtype, cp.cuda.MemoryPointer(mem, 0))
                    conn.send(("ok", None, stream.read))
                elif kind == "fill":
                    _, key, n = message
                    with cp.cuda.Device(reader.gpu):
                        # The pipeline's own copy: it keeps each decoded plane until its copy
                        # is done (dropped at once, NVDEC's next frame could take its memory
                        # on the decoder's stream while the copy still read it).
                        count = source.fill(buffers[key], n)
                    conn.send(("ok", count, stream.read))
                elif kind == "more":
                    conn.send(("ok", stream.has_more(), stream.read))
                elif kind == "close":
                    conn.send(("ok", None, stream.read if stream else 0))
                    return
                else:
                    conn.send(("error", f"NVDEC worker: unknown request {kind!r}", 0))
            except AdmError as exc:
                conn.send(("error", str(exc), stream.read if stream else 0))
    except EOFError:
        return
    finally:
        if reader is not None:
            reader.close()
        import cupy as cp

        for ptr in opened:
            try:
                cp.cuda.runtime.ipcCloseMemHandle(ptr)
            except Exception:  # noqa: BLE001, S110 - exiting anyway
                pass


def main() -> None:
    conn = Connection(int(sys.argv[1]))
    try:
        _serve(conn)
    finally:
        conn.close()


if __name__ == "__main__":
    main()
