"""``admcuda bench --whole``: whole processes on the GPU beside libvmaf's ``vmaf`` tool.

What a user waits for, start to exit, on the same raw files in the page cache: for each
clip (by default 300 and 1,000 frames of 1080p, 3,000 of 576x324 and 300 of 2160p),

- ``admcuda score --backend cuda`` with ``--model version=vmaf_v0.6.1`` (VMAF) and
  without (ADM);
- libvmaf's ``vmaf`` tool built with CUDA (``--vmaf-cuda PATH``): the same ``--model``,
  and ``--feature adm_cuda -n`` for ADM;
- libvmaf's ``vmaf`` tool on the CPU (``--vmaf PATH``, else ``vmaf`` on ``PATH``) with
  ``--threads`` every usable core: the same ``--model``, and ``--feature adm -n``;
- ``cat`` of both files: the I/O ceiling.

Rounds alternate the order of the rows, each figure is the median of the rounds, and each
row's pooled score is read back from its JSON, so a row that scored other frames shows.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from admcuda.cli.bench_cpu import MODEL, CpuRow, find_vmaf, run_cpu_rows
from admcuda.errors import AdmError

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
) -> list[CpuRow]:
    """The rows of one clip, in the order they are printed."""
    geometry = ["-w", str(w), "-h", str(h), "-p", "420", "-b", str(bitdepth)]
    io = ["-r", str(ref), "-d", str(dis), *geometry]
    rows: list[CpuRow] = []

    def add(label: str, argv: Callable[[Path], list[str]], key: str, name: str) -> None:
        out = folder / f"{name}.json"
        rows.append(CpuRow(label, cores, lambda tt, out=out: argv(out), frames, {}, out, key))

    for kind in ("vmaf", "adm"):
        model = ["--model", MODEL] if kind == "vmaf" else []
        key = "vmaf" if kind == "vmaf" else "integer_adm2"
        name = "VMAF" if kind == "vmaf" else "ADM"
        admcuda = [sys.executable, "-m", "admcuda", "score", *io, "--backend", backend]
        add(f"admcuda {name}",
            lambda o, a=admcuda, m=model: [*a, *m, "-q", "--json", "-o", str(o)],
            key, f"admcuda-{kind}")  # fmt: skip
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
    rounds = args.rounds or 2
    bd = args.bitdepth
    print(f"whole processes: admcuda {__version__}, {cores} usable cores")
    if vmaf_cuda is None:
        print("(libvmaf's CUDA vmaf not timed: give --vmaf-cuda PATH)")
    if vmaf_cpu is None:
        print("(libvmaf's CPU vmaf not timed: give --vmaf PATH or put vmaf on PATH)")
    for w, h, n in clips:
        with tempfile.TemporaryDirectory(prefix="admcuda-bench-", dir=args.tmp) as tmp:
            rp, dp = Path(tmp) / "ref.yuv", Path(tmp) / "dis.yuv"
            write_pair(rp, dp, w, h, bd, n)
            rows = whole_rows(
                Path(tmp), rp, dp, w, h, bd, n, cores=cores, vmaf_cpu=vmaf_cpu,
                vmaf_cuda=vmaf_cuda, backend=args.whole_backend,
            )  # fmt: skip
            run_cpu_rows(rows, rounds)
            how = "one round" if rounds == 1 else f"median of {rounds} alternating rounds"
            print_whole(
                rows,
                f"{w}x{h} {bd}-bit 4:2:0 raw, {n} frames in the page cache, whole process "
                f"start to exit, {how}",
            )
