"""``admcuda bench --whole``: whole processes on the GPU beside libvmaf's ``vmaf`` tool.

What a user waits for, start to exit, on the same raw files in the page cache: for each
clip (by default 300 and 1,000 frames of 1080p, 3,000 of 576x324 and 300 of 2160p),

- ``admcuda score --backend cuda`` with ``--model version=vmaf_v0.6.1`` (VMAF) and
  without (ADM), each in its own process, and (unless ``--no-serve``) handed to an
  ``admcuda serve`` that the bench starts first (its start is printed apart);
- libvmaf's ``vmaf`` tool built with CUDA (``--vmaf-cuda PATH``): the same ``--model``,
  and ``--feature adm_cuda -n`` for ADM;
- libvmaf's ``vmaf`` tool on the CPU (``--vmaf PATH``, else ``vmaf`` on ``PATH``) with
  ``--threads`` every usable core: the same ``--model``, and ``--feature adm -n``;
- ``cat`` of both files: the I/O ceiling.

Rounds alternate the order of the rows, each figure is the median of the rounds, and each
row's pooled score is read back from its JSON, so a row that scored other frames shows.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from admcuda.cli.bench_cpu import MODEL, CpuRow, find_vmaf, run_cpu_rows
from admcuda.errors import AdmError
from admcuda.serve import ENV as SERVER_ENV

__all__ = ["DEFAULT_CLIPS", "bench_whole", "parse_clip", "whole_rows"]

DEFAULT_CLIPS = ("1920x1080x300", "1920x1080x1000", "576x324x3000", "3840x2160x300")


def parse_clip(text: str) -> tuple[int, int, int]:
    """``WxHxFRAMES`` as (w, h, frames)."""
    try:
        w, h, n = (int(p) for p in text.lower().split("x"))
    except ValueError:
        raise AdmError(f"bad clip '{text}' (expected WxHxFRAMES, e.g. 1920x1080x300)") from None
    if min(w, h) < 16 or w % 2 or h % 2 or n < 1:
        raise AdmError(f"bad clip '{text}': even sides of at least 16 and at least 1 frame")
    return w, h, n


def whole_rows(
    folder: Path,
    ref: Path,
    dis: Path,
    w: int,
    h: int,
    bitdepth: int,
    frames: int,
    *,
    cores: int,
    vmaf_cpu: str | None,
    vmaf_cuda: str | None,
    backend: str = "cuda",
    served: str | None = None,
) -> list[CpuRow]:
    """The rows of one clip, in the order they are printed; ``served``: the socket of a
    running ``admcuda serve`` for the handed-over rows."""
    geometry = ["-w", str(w), "-h", str(h), "-p", "420", "-b", str(bitdepth)]
    io = ["-r", str(ref), "-d", str(dis), *geometry]
    rows: list[CpuRow] = []

    def add(
        label: str, argv: Callable[[Path], list[str]], key: str, name: str, server: str = "off"
    ) -> None:
        out = folder / f"{name}.json"
        env = {SERVER_ENV: server}
        rows.append(CpuRow(label, cores, lambda tt, out=out: argv(out), frames, env, out, key))

    for kind in ("vmaf", "adm"):
        model = ["--model", MODEL] if kind == "vmaf" else []
        key = "vmaf" if kind == "vmaf" else "integer_adm2"
        name = "VMAF" if kind == "vmaf" else "ADM"
        admcuda = [sys.executable, "-m", "admcuda", "score", *io, "--backend", backend]
        ours = model or ["--feature", "adm", "-n"]  # -r/-d alone would add vmaf_v0.6.1
        add(f"admcuda {name}",
            lambda o, a=admcuda, m=ours: [*a, *m, "-q", "--json", "-o", str(o)],
            key, f"admcuda-{kind}")  # fmt: skip
        if served:
            add(f"admcuda {name}, handed to admcuda serve",
                lambda o, a=admcuda, m=ours: [*a, *m, "-q", "--json", "-o", str(o)],
                key, f"admcuda-served-{kind}", served)  # fmt: skip
        if vmaf_cuda:
            feats = model or ["--feature", "adm_cuda", "-n"]
            add(f"libvmaf vmaf CUDA {name}",
                lambda o, f=feats: [vmaf_cuda, *io, *f, "-q", "--json", "-o", str(o)],
                key, f"vmaf-cuda-{kind}")  # fmt: skip
        if vmaf_cpu:
            feats = model or ["--feature", "adm", "-n"]
            feats = [*feats, "--threads", str(cores)]
            add(f"libvmaf vmaf CPU {name}, {cores} threads",
                lambda o, f=feats: [vmaf_cpu, *io, *f, "-q", "--json", "-o", str(o)],
                key, f"vmaf-cpu-{kind}")  # fmt: skip
    rows.append(CpuRow("cat of both files", 1, lambda tt: ["cat", str(ref), str(dis)], frames))
    return rows


@contextlib.contextmanager
def running_server(backend: str) -> Iterator[str]:
    """An ``admcuda serve`` on a socket of its own for the duration; prints its start."""
    folder = tempfile.mkdtemp(prefix="admcuda-bench-", dir="/tmp")  # private, and short
    path = os.path.join(folder, "serve.sock")
    log = Path(folder) / "serve.log"
    t0 = time.perf_counter()
    with open(log, "w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "admcuda", "serve", "--socket", path, "--backend", backend,
             "--idle", "0"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
            env={**os.environ, SERVER_ENV: "off"},
        )  # fmt: skip
    try:
        while "ready on" not in log.read_text():
            if proc.poll() is not None:
                raise AdmError(f"admcuda serve did not start: {log.read_text().strip()[-300:]}")
            time.sleep(0.01)
        print(f"admcuda serve ready {time.perf_counter() - t0:.2f} s after it was started "
              "(paid once, before the rows handed to it)")  # fmt: skip
        yield path
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        shutil.rmtree(folder, ignore_errors=True)


def print_whole(rows: Sequence[CpuRow], head: str) -> None:
    """One line a row: median seconds, frames/s, and the pooled score read back."""
    width = max(len(r.label) for r in rows)
    print()
    print(head)
    print(f"{'':{width}}  {'seconds':>8}  {'frames/s':>9}  {'each round':<18} pooled")
    for r in rows:
        s = statistics.median(r.walls)
        each = " ".join(f"{t:.2f}" for t in r.walls)
        pooled = f"{r.key} {r.score:.6f}" if r.key and r.score is not None else ""
        print(f"{r.label:{width}}  {s:>8.3f}  {r.frames / s:>9,.0f}  {each:<18} {pooled}".rstrip())


def bench_whole(args: Any, write_pair: Callable[[Path, Path, int, int, int, int], None]) -> None:
    """The whole-process rows of ``admcuda bench --whole`` (``args``: its parsed
    arguments), printed clip by clip; ``write_pair(ref, dis, w, h, bitdepth, frames)``
    writes the raw files."""
    from admcuda import __version__
    from admcuda.backends.cpu import default_threads

    cores = default_threads()
    vmaf_cpu = find_vmaf(args.vmaf)
    vmaf_cuda = find_vmaf(args.vmaf_cuda) if args.vmaf_cuda else None
    clips = [parse_clip(c) for c in (args.whole or DEFAULT_CLIPS)]
    print(f"whole processes: admcuda {__version__}, {cores} usable cores")
    if vmaf_cuda is None:
        print("(libvmaf's CUDA vmaf not timed: give --vmaf-cuda PATH)")
    if vmaf_cpu is None:
        print("(libvmaf's CPU vmaf not timed: give --vmaf PATH or put vmaf on PATH)")
    with contextlib.ExitStack() as stack:
        served = None
        if not getattr(args, "no_serve", False):
            served = stack.enter_context(running_server(args.whole_backend))
        for w, h, n in clips:
            _whole_clip(args, write_pair, w, h, n, cores, vmaf_cpu, vmaf_cuda, served)


def _whole_clip(
    args: Any,
    write_pair: Callable[[Path, Path, int, int, int, int], None],
    w: int,
    h: int,
    n: int,
    cores: int,
    vmaf_cpu: str | None,
    vmaf_cuda: str | None,
    served: str | None,
) -> None:
    """One clip's rows, timed and printed."""
    rounds = args.rounds or 2
    bd = args.bitdepth
    with tempfile.TemporaryDirectory(prefix="admcuda-bench-", dir=args.tmp) as tmp:
        rp, dp = Path(tmp) / "ref.yuv", Path(tmp) / "dis.yuv"
        write_pair(rp, dp, w, h, bd, n)
        rows = whole_rows(
            Path(tmp), rp, dp, w, h, bd, n, cores=cores, vmaf_cpu=vmaf_cpu,
            vmaf_cuda=vmaf_cuda, backend=args.whole_backend, served=served,
        )  # fmt: skip
        run_cpu_rows(rows, rounds)
        how = "one round" if rounds == 1 else f"median of {rounds} alternating rounds"
        print_whole(
            rows,
            f"{w}x{h} {bd}-bit 4:2:0 raw, {n} frames in the page cache, whole process "
            f"start to exit, {how}",
        )
