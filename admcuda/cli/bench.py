"""``admcuda bench``: the speed of ``admcuda score`` itself, with its limits beside it.

For each frame size the benchmark writes a raw 8-bit 4:2:0 reference and distorted
file to a temporary folder (so they sit in the page cache) and reports, from one run:

- ``cli``: ``admcuda score REF DIS --backend cuda`` run as a child process, the path
  users run: start-up (process start to the first scored batch, from ``--stats``),
  steady-state frames/s (after the first batch) and the whole process's wall time;
  run twice, the first run warming CuPy's kernel cache, the second reported;
- ``ceiling``: the same files read into page-locked buffers by the same pipeline and
  copied to the GPU with no compute: the I/O limit, and the CLI's share of it;
- ``resident``: frames already on the GPU; ``gpu`` the GPU stages up to the integer
  accumulators, ``e2e`` with the batched host finish;
- with ``--libvmaf PATH/TO/libvmaf.so`` (or ``$ADMCUDA_LIBVMAF``): libvmaf on the same
  frames through its public C API, its CPU ``adm`` on every core and, where that
  library was built with CUDA, its ``adm_cuda`` fed from host pictures, with ratios.

``--encoded REF DIS`` (or ``--make-encoded WxH``, which has ffmpeg make H.264 and HEVC
10-bit pairs) times encoded input: decoding alone through the pipeline (NVDEC, NVDEC in
segments, ffmpeg), ``admcuda score`` for each of ``--decoders`` with their scores compared
(``nvdec`` is the default, ``ADMCUDA_NVDEC_SEGMENTS=auto``),
and with ``--libvmaf`` libvmaf's ADM fed by ffmpeg's decode; ``--rungs`` makes ladders.

Without a GPU, with ``--skip-gpu`` or with ``--cpu``, the CPU rows
(:mod:`admcuda.cli.bench_cpu`): ``admcuda score --backend cpu`` with VMAF and ADM, whole
process, at one thread and at all cores, on both CPU engines, beside libvmaf's ``vmaf``
(``--vmaf PATH``) and ffmpeg's ``libvmaf`` filter on the same files, and ``cat``;
``--features psnr float_ssim float_ms_ssim cambi speed_chroma`` adds those features' rows
(admcuda's, ``vmaf --feature NAME -n`` and the filter's), each with its pooled value.

``--whole`` times whole processes alone (:mod:`admcuda.cli.bench_whole`): ``admcuda
score`` beside libvmaf's ``vmaf`` tool, CUDA and CPU builds, and ``cat``, clip by clip.

``--cpu-scaling`` times the CPU backend (``admcuda score --backend cpu``) at one thread
and at all cores on 1080p frames. Content is a smooth picture with noise, distorted by
more noise, a few distinct frames repeated, so that no stage sees constant input.
"""

from __future__ import annotations

import argparse
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

import numpy as np

from admcuda.cli.bench_cpu import FEATURES
from admcuda.cli.tool import PROG, Parser, counter, run_tool
from admcuda.errors import AdmError
from admcuda.libvmaf import find_libvmaf
from admcuda.numeric import c_integer

__all__ = ["main"]

_DEFAULT_SIZES = ("576x324", "1920x1080", "3840x2160")
_UNIQUE_FRAMES = 8


def _size(text: str) -> tuple[int, int]:
    w, _, h = text.lower().partition("x")
    try:
        size = c_integer(w), c_integer(h)
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must be WIDTHxHEIGHT, got {text!r}") from None
    if min(size) <= 16:
        raise argparse.ArgumentTypeError(f"size must be above 16x16, got {text!r}")
    return size


def default_frames(w: int, h: int) -> int:
    """Frames per file: 2,000 at 576x324 and below, 1,000 to 1080p, 300 above."""
    pixels = w * h
    if pixels <= 576 * 324:
        return 2000
    return 1000 if pixels <= 1920 * 1080 else 300


def _frames_host(n: int, w: int, h: int, bitdepth: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(ref, dis) as (n, h, w) NumPy planes: a smooth gradient with noise, and more noise."""
    rng = np.random.default_rng(seed)
    top = (1 << bitdepth) - 1
    dtype = np.uint8 if bitdepth == 8 else np.uint16
    y = np.linspace(0.0, 1.0, h)[:, None]
    x = np.linspace(0.0, 1.0, w)[None, :]
    base = (0.5 + 0.3 * np.sin(6.0 * x + 4.0 * y)) * top
    ref = np.empty((n, h, w), dtype)
    dis = np.empty((n, h, w), dtype)
    for k in range(n):
        r = base + rng.normal(0.0, top / 20.0, (h, w))
        ref[k] = np.clip(r, 0, top)
        dis[k] = np.clip(r + rng.normal(0.0, top / 40.0, (h, w)), 0, top)
    return ref, dis


def _write_yuv420(path: Path, planes: np.ndarray, frames: int) -> None:
    """``frames`` 4:2:0 frames cycling through ``planes`` (mid-grey chroma)."""
    k, h, w = planes.shape
    dtype = planes.dtype.newbyteorder("<")
    chroma = np.full(2 * ((w + 1) // 2) * ((h + 1) // 2), 1 << (dtype.itemsize * 8 - 1), dtype)
    block = b"".join(planes[i].astype(dtype).tobytes() + chroma.tobytes() for i in range(k))
    with open(path, "wb") as f:
        for _ in range(frames // k):
            f.write(block)
        f.write(block[: (frames % k) * (len(block) // k)])


def _write_pair(ref: Path, dis: Path, w: int, h: int, bitdepth: int, frames: int) -> None:
    """The benchmark's raw 4:2:0 reference and distorted files of ``frames`` frames."""
    ref_h, dis_h = _frames_host(_UNIQUE_FRAMES, w, h, bitdepth, seed=w * h)
    _write_yuv420(ref, ref_h, frames)
    _write_yuv420(dis, dis_h, frames)


def _luma_view(path: Path, n: int, w: int, h: int, dtype: np.dtype) -> np.ndarray:
    """Luma planes of a 4:2:0 file as a read-only memory map, (n, h, w), no copy."""
    frame = w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)
    mm = np.memmap(path, dtype=np.dtype(dtype).newbyteorder("<"), mode="r", shape=(n, frame))
    return mm[:, : w * h].reshape(n, h, w)


def _median_time(fn: Callable[[], object], repeats: int) -> float:
    fn()  # warm-up: compilation, allocation, first-touch
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


# ---- the CLI path --------------------------------------------------------------------------


def _parse_stats(stderr: str) -> dict[str, float]:
    for line in stderr.splitlines():
        if line.startswith("admcuda: stats: "):
            pairs = (p.split("=", 1) for p in line.split(": ", 2)[2].split())
            return {k: float(v) for k, v in pairs}
    raise RuntimeError(f"admcuda score printed no stats line; stderr: {stderr[-500:]}")


def cli_run(args: Sequence[str], *, env: dict[str, str] | None = None) -> dict[str, float]:
    """Run ``admcuda score ARGS --stats -q`` as a child process; its stats and wall time."""
    cmd = [sys.executable, "-m", "admcuda", "score", *args, "--stats", "-q"]
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.time() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-500:]}")
    out = _parse_stats(proc.stderr)
    out["wall_s"] = wall
    return out


# ---- the ceiling: the pipeline's reads and uploads, no compute --------------------------------


class CopyEngine:
    """A pipeline engine that only uploads each batch's planes to the GPU: what reading
    and copying alone allow."""

    def __init__(self, width: int, height: int, dtype: np.dtype, batch: int, inputs: int) -> None:
        import cupy as cp

        self._cp = cp
        self.batch = batch
        self._stream = cp.cuda.Stream(non_blocking=True)
        self._dev = [cp.empty((batch, height, width), dtype) for _ in range(1 + inputs)]
        self._blocks: list = []

    def host_empty(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        from admcuda.backends.cuda.hostmem import pinned_array  # as the engine's slots

        arr, block = pinned_array(shape, dtype)
        self._blocks.append(block)
        return arr

    def device_empty(self, shape: tuple[int, ...], dtype: np.dtype) -> Any:
        return self._cp.empty(shape, dtype)

    def submit(self, ref: Any, dis: Sequence[Any], frames: int):  # noqa: ANN201
        cp = self._cp
        for dst, src in zip(self._dev, (ref, *dis), strict=False):
            nbytes = src[:frames].nbytes
            on_gpu = isinstance(src, cp.ndarray)  # NVDEC planes: a device-to-device copy
            cp.cuda.runtime.memcpyAsync(
                dst.data.ptr, src.data.ptr if on_gpu else src.ctypes.data, nbytes,
                cp.cuda.runtime.memcpyDeviceToDevice if on_gpu
                else cp.cuda.runtime.memcpyHostToDevice,
                self._stream.ptr,
            )  # fmt: skip
        ev = cp.cuda.Event(disable_timing=True)
        ev.record(self._stream)
        return ev, len(dis)

    def collect(self, ticket) -> list[dict[str, np.ndarray]]:  # noqa: ANN001
        ev, sets = ticket
        ev.synchronize()
        return [{} for _ in range(sets)]


def pipeline_ceiling(
    paths: Sequence[Path], open_reader: Callable[[Path], Any], batch: int
) -> dict[str, float]:
    """The scoring pipeline reading (or decoding) ``paths``, the first the reference, into
    an engine that only copies each batch's planes to the GPU, no compute: what reading and
    copying alone allow. Steady frames/s after the first batch (as the CLI's figure), and
    frames/s over the whole run from the opening of the readers."""
    from admcuda.pipeline import RunStats, run
    from admcuda.sources import make_source

    t0 = time.time()
    with contextlib.ExitStack() as stack:
        readers = [stack.enter_context(open_reader(p)) for p in paths]
        r0 = readers[0]
        dtype = np.dtype(np.uint8 if r0.bitdepth == 8 else np.uint16)
        sources = [make_source(r) for r in readers]
        for s in sources:
            stack.callback(s.close)
        engine = CopyEngine(r0.width, r0.height, dtype, batch, len(paths) - 1)
        stats = RunStats()
        run(sources[0], sources[1:], engine, width=r0.width, height=r0.height, dtype=dtype,
            stats=stats)  # fmt: skip
    wall = time.time() - t0
    return {
        "frames": stats.frames,
        "fps": stats.steady_fps() or 0.0,
        "run_fps": stats.frames / wall,
    }


def ceiling_fps(ref: Path, dis: Path, w: int, h: int, bitdepth: int, batch: int) -> float:
    """Steady frames/s of the pipeline reading the raw files ``ref`` and ``dis`` and
    uploading them, no compute."""
    from admcuda.io.raw import YuvReader

    def open_raw(p: Path) -> YuvReader:
        return YuvReader(p, width=w, height=h, bitdepth=bitdepth)

    return pipeline_ceiling([ref, dis], open_raw, batch)["fps"]


# ---- frames resident on the GPU ----------------------------------------------------------------


def resident_fps(w: int, h: int, bitdepth: int, repeats: int, model: str | None = None
                 ) -> dict[str, float]:  # fmt: skip
    """GPU stages alone and with the batched finish, frames already on the device; with
    ``model``, the whole feature plan of that ``--model`` (ADM, VIF, motion on the GPU,
    every frame's features finished on the host; the model's prediction, made once the
    clip has ended, is timed in ``e2e``)."""
    import cupy as cp

    from admcuda.backends import engine_for
    from admcuda.options import AdmOptions

    plan = None
    if model:
        from admcuda.vmaf import build_plan, finish_clip

        plan = build_plan([model], [])
    with engine_for("cuda", w, h, bitdepth, AdmOptions(), host_memory=1 << 62, plan=plan) as eng:
        n = eng.batch * 4
        ref_h, dis_h = _frames_host(_UNIQUE_FRAMES, w, h, bitdepth, seed=w * h + bitdepth)
        reps = -(-n // _UNIQUE_FRAMES)
        ref = cp.asarray(np.concatenate([ref_h] * reps)[:n])
        dis = cp.asarray(np.concatenate([dis_h] * reps)[:n])
        if plan is None:
            gpu = n / _median_time(lambda: eng.integer_accumulators(ref, [dis]), repeats)
            e2e = n / _median_time(lambda: eng.score_arrays_multi(ref, [dis]), repeats)
            return {"batch": eng.batch, "gpu_fps": gpu, "e2e_fps": e2e}

        def batches(finish: bool) -> None:
            pending, parts = None, []
            for c0 in range(0, n, eng.batch):
                ticket = eng.submit(ref[c0 : c0 + eng.batch], [dis[c0 : c0 + eng.batch]])
                if pending is not None:
                    parts.append(eng.collect(pending)[0])
                pending = ticket
            parts.append(eng.collect(pending)[0])
            if finish:
                names = list(parts[0])
                rows = np.concatenate([np.stack([p[k] for k in names], 1) for p in parts])
                finish_clip(plan, [dict(zip(names, r, strict=True)) for r in rows.tolist()])

        gpu = n / _median_time(lambda: batches(False), repeats)
        e2e = n / _median_time(lambda: batches(True), repeats)
        return {"batch": eng.batch, "gpu_fps": gpu, "e2e_fps": e2e}


def d2d_copy_gbps(nbytes: int = 1 << 30, repeats: int = 5) -> float:
    """Device-to-device copy rate (bytes read plus bytes written per second, in GB/s):
    the practical memory roofline the profile's stage rates are set against."""
    import cupy as cp

    src = cp.ones(nbytes // 4, dtype=np.int32)
    dst = cp.empty_like(src)
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    best = float("inf")
    for _ in range(repeats):
        start.record()
        dst[...] = src
        stop.record()
        stop.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(start, stop) * 1e-3)
    return 2 * src.nbytes / best / 1e9


def stage_bytes(w: int, h: int, bitdepth: int) -> dict[str, tuple[int, int]]:
    """Device bytes per frame pair of each profiled stage: (minimum, as written).

    Minimum: each array the stage reads is read once and each it writes is written
    once. As written: what the kernels' loads and stores request when every halo is
    counted again (the masking pass re-reads two rows per work item and two columns
    per 30; the DWT's 4x4 source patches overlap, counted once here, as an L1 serves
    the overlap).
    """
    from admcuda.backends import cuda as gpu
    from admcuda.backends.cuda.launch import CM_ROWS_PER_ITEM
    from admcuda.options import AdmOptions

    item = 1 if bitdepth == 8 else 2
    out: dict[str, tuple[int, int]] = {}
    for g in gpu.scale_geometries(w, h, AdmOptions()):
        hh, ww = g.shape
        src_item = item if g.scale == 0 else (2 if g.scale == 1 else 4)
        src = g.src_shape[0] * g.src_shape[1] * src_item
        band = hh * ww * g.band_dtype.itemsize
        dwt = 2 * (src + 4 * band)
        out[f"dwt2 s{g.scale} x2"] = (dwt, dwt)
        top, bottom, left, right = g.crop
        r0, r1, c0, c1 = g.region  # the crop and its 1-sample masking halo
        region = (r1 - r0) * (c1 - c0) * g.band_dtype.itemsize
        written = (
            (bottom - top) * (CM_ROWS_PER_ITEM + 2) / CM_ROWS_PER_ITEM * (right - left) * 32 / 30
        )
        out[f"cm s{g.scale}"] = (6 * region, int(6 * written * g.band_dtype.itemsize))
    return out


def _profile(w: int, h: int, batch: int) -> dict[str, float]:
    """Device microseconds per frame pair of each stage launch (CUDA events), one batch;
    the stages as the engine runs them for one distorted input (the masking pass adds
    the reference's denominator)."""
    import cupy as cp

    from admcuda.backends import cuda as gpu
    from admcuda.options import AdmOptions

    geoms = gpu.scale_geometries(w, h, AdmOptions())
    ref_h, dis_h = _frames_host(min(batch, 8), w, h, 8, seed=5)
    reps = -(-batch // ref_h.shape[0])
    ref = cp.asarray(np.concatenate([ref_h] * reps)[:batch])
    dis = cp.asarray(np.concatenate([dis_h] * reps)[:batch])
    acc = cp.zeros((batch, 4, 9), dtype=np.int64)
    times: dict[str, float] = {}

    @contextlib.contextmanager
    def timed(name: str) -> Iterator[None]:
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        yield
        stop.record()
        stop.synchronize()
        times[name] = times.get(name, 0.0) + cp.cuda.get_elapsed_time(start, stop) * 1e3 / batch

    for _ in range(3):  # the first round compiles and warms up; the last is kept
        times.clear()
        with timed("dwt2 s0 x2"):
            rb, db = [gpu.dwt2(ref, 8)], [gpu.dwt2(dis, 8)]
        for s in (1, 2, 3):
            with timed(f"dwt2 s{s} x2"):
                rb.append(gpu.dwt2_s123(rb[s - 1][:, 0], s, role="ref"))
                db.append(gpu.dwt2_s123(db[s - 1][:, 0], s, role="dis", other=rb[s - 1][:, 0]))
        for s, g in enumerate(geoms):
            with timed(f"cm s{s}"):
                gpu.cm(rb[s], db[s], g, 100.0, acc[:, s], do_den=True)
    return dict(times)


def print_profile(w: int, h: int, prof: dict[str, float], copy_gbps: float) -> None:
    """One table per size: stage, us per frame pair, bytes, achieved GB/s."""
    sizes = stage_bytes(w, h, 8)
    total = sum(prof.values())
    print(f"    {w}x{h} 8-bit, GPU stages {1e6 / total:,.0f} fps ({total:.2f} us/frame pair)")
    print(
        f"    {'stage':>12} {'us':>7} {'min MB':>8} {'MB as written':>13} {'GB/s':>7} "
        f"{'of copy':>7}"
    )
    for name, us in prof.items():
        lo, hi = sizes[name]
        gbps = lo / us / 1e3
        print(
            f"    {name:>12} {us:>7.2f} {lo / 1e6:>8.2f} {hi / 1e6:>13.2f} {gbps:>7.0f} "
            f"{gbps / copy_gbps:>7.0%}"
        )
    lo = sum(v[0] for v in sizes.values())
    gbps = lo / total / 1e3
    print(
        f"    {'all':>12} {total:>7.2f} {lo / 1e6:>8.2f} "
        f"{sum(v[1] for v in sizes.values()) / 1e6:>13.2f} {gbps:>7.0f} {gbps / copy_gbps:>7.0%}"
    )


# ---- encoded input: NVDEC ---------------------------------------------------------------------


_ENCODERS = {
    "h264": ["-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "veryfast", "-g", "60"],
    "hevc10": [
        "-pix_fmt", "yuv420p10le", "-c:v", "libx265", "-preset", "ultrafast",
        "-x265-params", "keyint=60:open-gop=0:log-level=error",
    ],
}  # fmt: skip
"""What ``--make-encoded`` encodes with, by codec name: closed GOPs of 2 seconds at 30 fps,
as streaming ladders are cut; the reference at CRF 18 and the distorted at CRF 34."""

# --decoders: the ``admcuda score`` rows of an encoded pair, and the environment of each
_DECODER_ROWS: dict[str, tuple[str, dict[str, str]]] = {
    "nvdec": ("nvdec", {"ADMCUDA_NVDEC_SEGMENTS": "auto"}),  # the default
    "nvdec-one-session": ("nvdec", {"ADMCUDA_NVDEC_SEGMENTS": "1"}),
    "nvdec-processes": ("nvdec", {"ADMCUDA_NVDEC_PROCESSES": "1"}),
    "nvdec-segments": ("nvdec", {"ADMCUDA_NVDEC_SEGMENTS": "4"}),
    "nvdec-segments-2": ("nvdec", {"ADMCUDA_NVDEC_SEGMENTS": "2"}),
    "ffmpeg": ("ffmpeg", {}),
}


def default_encoded_frames(w: int, h: int) -> int:
    """Frames of each ``--make-encoded`` file: 600 to 1080p, 240 above."""
    return 600 if w * h <= 1920 * 1080 else 240


def make_encodes(
    folder: Path, w: int, h: int, frames: int, codecs: Sequence[str]
) -> list[tuple[Path, Path]]:
    """(reference, distorted) MP4 pairs of ``codecs`` at ``w`` x ``h``, made by ffmpeg at
    once: ffmpeg's moving ``testsrc2`` pattern with light temporal noise, as in a camera."""
    from admcuda.io.ffmpeg import ffmpeg_exe

    src = f"testsrc2=size={w}x{h}:rate=30,noise=alls=6:allf=t"
    jobs, pairs = [], []
    for codec in codecs:
        pair = tuple(folder / f"{kind}_{codec}_{w}x{h}.mp4" for kind in ("ref", "dis"))
        for path, crf in zip(pair, ("18", "34"), strict=True):
            cmd = [ffmpeg_exe(), "-v", "error", "-y", "-f", "lavfi", "-i", src]
            cmd += ["-frames:v", str(frames), *_ENCODERS[codec], "-crf", crf, str(path)]
            jobs.append((cmd, subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)))
        pairs.append(pair)
    for cmd, job in jobs:
        _, err = job.communicate()
        if job.returncode:
            raise AdmError(f"{' '.join(cmd)} failed ({job.returncode}): {err.strip()[-300:]}")
    return pairs


def _warm_kernels(tmp: str, bitdepth: int) -> None:
    """One small ``admcuda score --backend cuda`` run, so that CuPy's kernel cache holds
    the kernels of ``bitdepth`` before the timed runs (their start-up is then not a
    compile)."""
    w, h = 64, 48
    ref, dis = _frames_host(2, w, h, bitdepth, seed=bitdepth)
    rp, dp = Path(tmp) / f"warm{bitdepth}_ref.yuv", Path(tmp) / f"warm{bitdepth}_dis.yuv"
    _write_yuv420(rp, ref, 2)
    _write_yuv420(dp, dis, 2)
    cli_run(
        [str(rp), str(dp), "-w", str(w), "-h", str(h), "-b", str(bitdepth), "--backend", "cuda"]
    )


def _libvmaf_ffmpeg(so: str, ref: Path, dis: Path, rungs: int, **kw: Any) -> dict[str, float]:
    """libvmaf's ADM on each rung, one after another, fed by ffmpeg decoding the two files
    as it goes (``admcuda.io.ffmpeg.VideoReader``): frames, the seconds of the runs (frame
    loops: decoding included) and with libvmaf's set-up added."""
    from admcuda.io.ffmpeg import VideoReader
    from admcuda.libvmaf import time_libvmaf

    frames, seconds, setup = 0, 0.0, 0.0
    for _ in range(rungs):
        with VideoReader(ref, label="reference") as r, VideoReader(dis, label="distorted") as d:
            t = time_libvmaf(so, r, d, r.bitdepth, **kw)
        frames += t["frames"]
        seconds += t["seconds"]
        setup += t["setup_seconds"]
    return {"frames": frames, "fps": frames / seconds, "whole_s": seconds + setup}


@contextlib.contextmanager
def _environ(extra: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _ceiling_sessions(ref: Path, streams: int) -> list[int]:
    """The session layouts whose decode alone :func:`bench_encoded` times: one session a
    stream, what ``auto`` gives these ``streams`` (the default row's own ceiling), and 4."""
    from admcuda.io.nvdec.planner import auto_sessions
    from admcuda.io.nvdec.reader import open_nvdec

    with open_nvdec(ref, "bench") as reader:
        default = auto_sessions(reader.codec, reader.width, reader.height, streams)
    return sorted({1, default, 4})


def _medians(runs: list[dict[str, float]]) -> dict[str, Any]:
    """One figure per key from ``runs`` of the same measurement: the median of each number,
    with every run's figures kept under ``"runs"`` (where there is more than one)."""
    if len(runs) == 1:
        return dict(runs[0])
    out: dict[str, Any] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    out["runs"] = [dict(r) for r in runs]
    return out


def bench_encoded(
    ref: Path,
    dis: Path,
    rungs: int,
    tmp: str | None,
    so: str | None,
    batch: int = 32,
    rows: Sequence[str] = tuple(_DECODER_ROWS),
    rounds: int = 1,
) -> dict[str, Any]:
    """One encoded pair (or a ladder of ``rungs`` copies of the distorted file), in one run:
    the decode-only ceilings through the pipeline (NVDEC in one session per stream and in
    segments, ffmpeg); ``admcuda score`` for each of ``rows`` (:data:`_DECODER_ROWS`), the
    scores of every row compared with the first's; and, with ``so``, libvmaf's ADM (CUDA
    where built with it, and CPU) fed by ffmpeg's decode.

    With ``rounds`` > 1 the ceilings and the rows are run that many times, in alternating
    order, and each figure is the median of its rounds (all rounds under ``"runs"``):
    single runs of these move by up to about 15% on one machine. libvmaf runs once."""
    from admcuda.backends.cuda import cuda_available
    from admcuda.io.ffmpeg import VideoReader, ffmpeg_exe
    from admcuda.io.nvdec.reader import nvdec_available, open_nvdec

    paths = [ref] + [dis] * rungs
    out: dict[str, Any] = {"rungs": rungs, "batch": batch, "rows": {}}
    try:
        ffmpeg_exe()
        has_ffmpeg = True
    except AdmError:
        has_ffmpeg = False
    gpu = cuda_available()
    has_nvdec = gpu and nvdec_available()
    out["rounds"] = rounds
    ceiling_runs: dict[str, list[dict[str, float]]] = {}
    row_runs: dict[str, list[dict[str, float]]] = {}
    scores: list[Any] = []
    runnable = [
        name for name in rows
        if gpu and (has_nvdec or _DECODER_ROWS[name][0] != "nvdec")
        and (has_ffmpeg or _DECODER_ROWS[name][0] != "ffmpeg")
    ]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="admcuda-bench-", dir=tmp) as tdir:
        base = [str(ref), *([str(dis)] * rungs), "--backend", "cuda", "--json"]
        base += ["--batch", str(batch)]
        for rnd in range(rounds):
            if has_nvdec:
                for sessions in _ceiling_sessions(ref, len(paths)):
                    what = "NVDEC" if sessions == 1 else f"NVDEC, ADMCUDA_NVDEC_SEGMENTS={sessions}"
                    with _environ({"ADMCUDA_NVDEC_SEGMENTS": str(sessions)}):
                        c = pipeline_ceiling(paths, lambda p: open_nvdec(p, "bench"), batch)
                    ceiling_runs.setdefault(what, []).append(c)
            if has_ffmpeg and gpu:
                c = pipeline_ceiling(paths, lambda p: VideoReader(p), batch)
                ceiling_runs.setdefault("ffmpeg", []).append(c)
            for name in runnable if rnd % 2 == 0 else runnable[::-1]:
                decoder, env = _DECODER_ROWS[name]
                o = Path(tdir) / f"{name}-{{index}}.json"
                r = cli_run([*base, "-o", str(o), "--decoder", decoder], env={**os.environ, **env})
                scores.append([_frames_of(Path(str(o).format(index=k)).read_text())
                               for k in range(1, rungs + 1)])  # fmt: skip
                row_runs.setdefault(name, []).append(r)
    ceilings: dict[str, Any] = {"NVDEC": None}
    ceilings.update({what: _medians(runs) for what, runs in ceiling_runs.items()})
    ceilings.setdefault("ffmpeg", None)
    out["ceilings"] = ceilings
    out["rows"] = {name: _medians(row_runs[name]) for name in runnable}
    out["same_scores"] = all(s == scores[0] for s in scores[1:]) if scores else None
    if so and has_ffmpeg:
        from admcuda.libvmaf import libvmaf_has_cuda

        if libvmaf_has_cuda(so):
            out["libvmaf_cuda"] = _libvmaf_ffmpeg(so, ref, dis, rungs, cuda=True)
        out["libvmaf_cpu"] = _libvmaf_ffmpeg(so, ref, dis, rungs, threads=0)
    return out


def _frames_of(text: str) -> Any:
    import json

    doc = json.loads(text)
    return doc.get("frames", doc)


def _spread(v: dict[str, Any], fps_key: str, wall_key: str | None = None) -> str:
    """``"; medians of N rounds: ... a-b fps ..."`` where ``v`` holds several rounds."""
    runs = v.get("runs")
    if not runs:
        return ""
    fps = [r[fps_key] for r in runs]
    text = f"; medians of {len(runs)} rounds, steady {min(fps):,.0f}-{max(fps):,.0f} fps"
    if wall_key is not None:
        wall = [r[wall_key] for r in runs]
        text += f", whole {min(wall):.2f}-{max(wall):.2f} s"
    return text


def print_encoded(ref: Path, dis: Path, r: dict[str, Any]) -> None:
    """The rows of one :func:`bench_encoded` run. Frames/s count frame positions: at each,
    the reference and every rung's distorted frame are decoded and scored."""
    layout = "pair" if r["rungs"] == 1 else f"ladder of {r['rungs']}"
    print()
    print(f"encoded input: {ref.name} vs {dis.name} ({layout}), --batch {r['batch']}")
    for what, v in r["ceilings"].items():
        if v is None:
            print(f"  {what} decode alone: not available here, not timed")
            continue
        print(
            f"  {what} decode alone, through the pipeline: steady {v['fps']:,.0f} fps, "
            f"whole run {v['run_fps']:,.0f} fps ({v['frames']:.0f} frames)" + _spread(v, "fps")
        )
    c = r["ceilings"]["NVDEC"]
    for name, v in r["rows"].items():
        decoder, env = _DECODER_ROWS[name]
        what = f"--decoder {decoder}" + "".join(f", {k}={x}" for k, x in env.items())
        share = f" ({v['steady_fps'] / c['fps']:.0%} of NVDEC decode alone)" if c else ""
        print(
            f"  admcuda score {what}: steady {v['steady_fps']:,.0f} fps{share}, start-up "
            f"{v['startup_s']:.2f} s, whole process {v['wall_s']:.2f} s for "
            f"{v['frames']:.0f} frames ({v['frames'] / v['wall_s']:,.0f} fps)"
            + _spread(v, "steady_fps", "wall_s")
        )
    if r["same_scores"] is not None:
        print(f"  scores of every admcuda row identical: {r['same_scores']}")
    rungs = r["rungs"]
    for key, what in (("libvmaf_cuda", "adm_cuda"), ("libvmaf_cpu", "adm (CPU, all cores)")):
        v = r.get(key)
        if v is not None:
            print(
                f"  libvmaf {what}, fed by ffmpeg's decode, rungs one after another: "
                f"{v['fps'] / rungs:,.0f} fps, {v['whole_s']:.2f} s with its set-up"
            )
    ff, lv = r["rows"].get("ffmpeg"), r.get("libvmaf_cuda")
    for name, v in r["rows"].items():
        if name == "ffmpeg":
            continue
        parts = []
        if ff:
            parts.append(
                f"{v['steady_fps'] / ff['steady_fps']:.2f}x --decoder ffmpeg steady "
                f"({ff['wall_s'] / v['wall_s']:.2f}x whole process)"
            )
        if lv:
            parts.append(
                f"{v['steady_fps'] / (lv['fps'] / rungs):.2f}x libvmaf adm_cuda fed by ffmpeg "
                f"({lv['whole_s'] / v['wall_s']:.2f}x whole)"
            )
        if parts:
            print(f"  {name}: " + "; ".join(parts))


# ---- one size ------------------------------------------------------------------------------


def _bench_size(w: int, h: int, args: argparse.Namespace, so: str | None) -> dict[str, float]:
    from admcuda.backends.cuda import auto_batch
    from admcuda.pipeline import DEFAULT_HOST_MEMORY, plan_batch

    bd = args.bitdepth
    n = args.frames or default_frames(w, h)
    out: dict[str, float] = {"frames": n}
    ref_h, dis_h = _frames_host(_UNIQUE_FRAMES, w, h, bd, seed=w * h)
    with tempfile.TemporaryDirectory(prefix="admcuda-bench-", dir=args.tmp) as tmp:
        rp, dp = Path(tmp) / "ref.yuv", Path(tmp) / "dis.yuv"
        _write_yuv420(rp, ref_h, n)
        _write_yuv420(dp, dis_h, n)
        flags = [str(rp), str(dp), "-w", str(w), "-h", str(h), "-b", str(bd)]
        flags += ["--backend", "cuda", "--json", "-o", str(Path(tmp) / "out.json")]
        if args.model:
            flags += ["--model", args.model]
        cold = cli_run(flags)
        warm = cli_run(flags)
        out.update(
            cli_fps=warm["steady_fps"],
            cli_startup_s=warm["startup_s"],
            cli_startup_cold_s=cold["startup_s"],
            cli_wall_s=warm["wall_s"],
            cli_batches=warm["batches"],
        )
        itemsize = 1 if bd == 8 else 2
        batch = plan_batch(
            w * h * itemsize, 2, preferred=auto_batch(w, h), frames=n,
            host_memory=DEFAULT_HOST_MEMORY,
        )  # fmt: skip
        out["ceiling_fps"] = statistics.median(
            ceiling_fps(rp, dp, w, h, bd, batch) for _ in range(3)
        )
        if so and not args.model:  # libvmaf's C API is timed on ADM alone
            from admcuda.libvmaf import libvmaf_has_cuda, time_libvmaf

            rv, dv = _luma_view(rp, n, w, h, ref_h.dtype), _luma_view(dp, n, w, h, ref_h.dtype)
            lim = min(n, args.libvmaf_frames) if args.libvmaf_frames else n
            out["libvmaf_cpu_fps"] = time_libvmaf(so, rv[:lim], dv[:lim], bd, threads=0)["fps"]
            if libvmaf_has_cuda(so):
                out["libvmaf_cuda_fps"] = time_libvmaf(so, rv, dv, bd, cuda=True)["fps"]
                if args.profile:
                    out["libvmaf_cuda_resident_fps"] = time_libvmaf(
                        so, rv[:lim], dv[:lim], bd, cuda=True, device_resident=True
                    )["fps"]
            del rv, dv
    resident = resident_fps(w, h, bd, args.repeats, args.model)
    out.update({f"resident_{k}": v for k, v in resident.items()})
    return out


def _cpu_scaling(args: argparse.Namespace) -> dict[str, float]:
    """Steady frames/s of ``admcuda score --backend cpu`` at 1 thread and at all cores."""
    from admcuda.backends.cpu import default_threads

    w, h = 1920, 1080
    cores = default_threads()
    ref_h, dis_h = _frames_host(_UNIQUE_FRAMES, w, h, 8, seed=3)
    out: dict[str, float] = {"cores": cores}
    with tempfile.TemporaryDirectory(prefix="admcuda-bench-", dir=args.tmp) as tmp:
        for threads, frames in ((1, 24), (cores, 12 * cores)):
            rp, dp = Path(tmp) / "ref.yuv", Path(tmp) / "dis.yuv"
            _write_yuv420(rp, ref_h, frames)
            _write_yuv420(dp, dis_h, frames)
            flags = [str(rp), str(dp), "-w", str(w), "-h", str(h), "--backend", "cpu"]
            r = cli_run([*flags, "--threads", str(threads)])
            out[f"fps_{threads}"] = r["steady_fps"]
    out["scaling"] = out[f"fps_{cores}"] / out["fps_1"]
    return out


def _run_encoded(args: argparse.Namespace, so: str | None) -> None:
    """``--encoded`` and ``--make-encoded``: each pair at each of ``--rungs``."""
    with tempfile.TemporaryDirectory(prefix="admcuda-bench-", dir=args.tmp) as tmp:
        pairs = [tuple(args.encoded)] if args.encoded else []
        for w, h in args.make_encoded or ():
            n = args.encoded_frames or default_encoded_frames(w, h)
            t0 = time.time()
            made = make_encodes(Path(tmp), w, h, n, args.codecs)
            print(f"made {len(made)} {w}x{h} pairs of {n} frames in {time.time() - t0:.1f} s")
            pairs += made
        if not args.skip_gpu:
            from admcuda.backends.cuda import cuda_available

            if cuda_available():
                for bd in (8, 10):
                    _warm_kernels(tmp, bd)
        for ref, dis in pairs:
            for rungs in args.rungs:
                r = bench_encoded(
                    ref, dis, rungs, args.tmp, so, rows=args.decoders, rounds=args.rounds or 1
                )
                print_encoded(ref, dis, r)


def _positive(text: str) -> int:
    return counter(1)(text)


def _parser() -> argparse.ArgumentParser:
    p = Parser(prog=f"{PROG} bench", description=__doc__.splitlines()[0])
    p.add_argument(
        "--sizes",
        type=_size,
        nargs="*",
        default=None,
        metavar="WxH",
        help="frame sizes (default: 576x324 1920x1080 3840x2160 on the GPU, 1920x1080 for "
        "the CPU rows)",
    )
    p.add_argument(
        "--frames",
        type=counter(0),
        default=0,
        help="frames per file (default: 2,000 at 576x324, 1,000 to 1080p, 300 above; the "
        "CPU rows: 48 at 1080p, as many pixels at other sizes)",
    )
    p.add_argument("--bitdepth", type=counter(1), choices=(8, 10, 12, 16), default=8)
    p.add_argument(
        "--repeats", type=counter(1), default=3, help="timed runs, median taken (default: 3)"
    )
    p.add_argument("--tmp", metavar="DIR", help="folder for the temporary YUV files")
    p.add_argument(
        "--libvmaf",
        metavar="SO",
        help="a libvmaf.so you built: time its CPU adm (and adm_cuda, if built with CUDA) "
        "in the same run (default: $ADMCUDA_LIBVMAF)",
    )
    p.add_argument(
        "--libvmaf-frames",
        type=counter(0),
        default=0,
        help="frames for libvmaf's CPU path (default: all)",
    )
    p.add_argument(
        "--skip-gpu",
        action="store_true",
        help="skip the GPU measurements (the CPU rows run instead, as without a GPU)",
    )
    p.add_argument(
        "--cpu",
        action="store_true",
        help="time the CPU rows also where a GPU is measured: admcuda score --backend cpu "
        "(VMAF and ADM, 1 thread and all cores) beside libvmaf's vmaf and ffmpeg's libvmaf",
    )
    p.add_argument(
        "--vmaf",
        metavar="PATH",
        help="libvmaf's vmaf tool for the CPU rows and --whole (default: vmaf on PATH, if any)",
    )
    p.add_argument(
        "--whole",
        nargs="*",
        metavar="WxHxFRAMES",
        default=None,
        help="time whole processes only: admcuda score (VMAF and ADM) beside libvmaf's vmaf "
        "tool (CUDA build: --vmaf-cuda; CPU on every core: --vmaf) and cat, on raw clips of "
        "these sizes and lengths (default: 1920x1080x300 1920x1080x1000 576x324x3000 "
        "3840x2160x300)",
    )
    p.add_argument(
        "--vmaf-cuda",
        metavar="PATH",
        help="with --whole: libvmaf's vmaf tool built with CUDA",
    )
    p.add_argument(
        "--no-serve",
        action="store_true",
        help="with --whole: leave out the rows of admcuda score handed to a running admcuda serve",
    )
    p.add_argument(
        "--whole-backend",
        choices=("cuda", "cpu", "auto"),
        default="cuda",
        help="with --whole: admcuda's --backend (default cuda)",
    )
    p.add_argument(
        "--cpu-engines",
        nargs="+",
        choices=("compiled", "numpy"),
        default=["compiled", "numpy"],
        help="the CPU backend's engines the CPU rows time (default: both)",
    )
    p.add_argument(
        "--features",
        nargs="+",
        choices=tuple(FEATURES),
        default=[],
        metavar="NAME",
        help="the CPU rows also time these features (psnr, float_ssim, float_ms_ssim, cambi, "
        "speed_chroma): admcuda score --feature NAME -n beside libvmaf's vmaf --feature NAME "
        "-n and ffmpeg's libvmaf filter (feature=name=NAME, with its model), each row's pooled "
        "value printed (default: none)",
    )
    p.add_argument(
        "--numpy-frames",
        type=counter(0),
        default=0,
        help="frames the NumPy engine's CPU rows score, the first of the files "
        "(default: an eighth of --frames, at least 2)",
    )
    p.add_argument(
        "--model",
        metavar="MODEL",
        help="time VMAF with this --model (version=vmaf_v0.6.1) instead of ADM alone",
    )
    p.add_argument(
        "--cpu-scaling",
        action="store_true",
        help="time the CPU backend at 1 thread and at all cores (1080p)",
    )
    p.add_argument(
        "--encoded",
        nargs=2,
        type=Path,
        metavar=("REF", "DIS"),
        help="also time an encoded pair: decode-only ceilings, the --decoders rows and, "
        "with --libvmaf, libvmaf fed by ffmpeg's decode",
    )
    p.add_argument(
        "--make-encoded",
        type=_size,
        nargs="+",
        metavar="WxH",
        help="make H.264 and HEVC 10-bit pairs of this size with ffmpeg and time them as "
        "--encoded does",
    )
    p.add_argument(
        "--codecs",
        nargs="+",
        choices=sorted(_ENCODERS),
        default=sorted(_ENCODERS),
        help="with --make-encoded: which (default: all)",
    )
    p.add_argument(
        "--encoded-frames",
        type=counter(0),
        default=0,
        help="with --make-encoded: frames per file (default: 600 to 1080p, 240 above)",
    )
    p.add_argument(
        "--decoders",
        nargs="+",
        choices=list(_DECODER_ROWS),
        default=list(_DECODER_ROWS),
        help="with --encoded or --make-encoded: the admcuda score rows (default: all)",
    )
    p.add_argument(
        "--rounds",
        type=_positive,
        default=None,
        help="with --encoded or --make-encoded: run the ceilings and the admcuda rows this "
        "many times, in alternating order, and report medians (libvmaf runs once; "
        "default 1); the CPU rows: every row, alternating (default 2)",
    )
    p.add_argument(
        "--rungs",
        type=counter(1),
        nargs="+",
        default=[1],
        help="with --encoded or --make-encoded: ladders of this many copies of DIS "
        "(default: 1, the pair)",
    )
    p.add_argument(
        "--profile",
        action="store_true",
        help="also print device microseconds per frame of each stage",
    )
    return p


def _fmt(v: float | None, spec: str = ",.0f") -> str:
    return "-" if v is None else format(v, spec)


def main(argv: Sequence[str] | None = None) -> int:
    """``admcuda bench [--sizes WxH ...] ...``: run the benchmark and print one table;
    returns the exit status (usage errors 2, failures 1, one line each)."""
    return run_tool(_run, argv)


def _run(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    if args.whole is not None:
        from admcuda.cli.bench_whole import bench_whole

        bench_whole(args, _write_pair)
        return 0
    so = find_libvmaf(args.libvmaf)
    rows: list[tuple[str, dict[str, float]]] = []
    gpu = False
    if not args.skip_gpu:
        from admcuda.backends.cuda import auto_batch, cuda_available

        if not cuda_available():
            print("no CUDA device: GPU measurements skipped")
        else:
            import cupy as cp

            gpu = True
            dev = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
            name = dev["name"].decode() if isinstance(dev["name"], bytes) else dev["name"]
            free = shutil.disk_usage(args.tmp or tempfile.gettempdir()).free >> 30
            print(f"device: {name}; {os.cpu_count()} CPUs; {free} GiB free for the files")
            copy_gbps = None
            for w, h in args.sizes or [_size(s) for s in _DEFAULT_SIZES]:
                r = _bench_size(w, h, args, so)
                rows.append((f"{w}x{h}", r))
                print(f"  {w}x{h}: " + ", ".join(f"{k} {v:,.3f}" for k, v in r.items()), flush=True)
                if args.profile:
                    if copy_gbps is None:
                        copy_gbps = d2d_copy_gbps()
                        print(f"  device-to-device copy: {copy_gbps:,.0f} GB/s (read + write)")
                    print_profile(w, h, _profile(w, h, auto_batch(w, h)), copy_gbps)
                    lv = r.get("libvmaf_cuda_resident_fps")
                    if lv:
                        print(
                            f"    libvmaf adm_cuda, pictures on the device: {lv:,.0f} fps; "
                            f"admcuda resident GPU {r['resident_gpu_fps'] / lv:.1f}x that",
                            flush=True,
                        )
    scaling = _cpu_scaling(args) if args.cpu_scaling else None
    encoded = bool(args.encoded or args.make_encoded)
    if encoded:
        _run_encoded(args, so)
    if args.cpu or not (gpu or encoded):
        from admcuda.cli.bench_cpu import bench_cpu

        bench_cpu(args, _write_pair)

    if rows:
        print()
        what = f"--model {args.model}" if args.model else "ADM"
        print(
            f"admcuda score --backend cuda, {what}, {args.bitdepth}-bit 4:2:0 raw files in the "
            "page cache"
        )
        head = (
            f"{'size':>10} {'frames':>6} {'cli fps':>9} {'start s':>8} {'ceiling':>9} "
            f"{'of ceil':>7} {'res gpu':>9} {'res e2e':>9} {'e2e/gpu':>7} "
            f"{'vmaf cpu':>9} {'vmaf cuda':>9} {'x cpu':>6} {'x cuda':>6}"
        )
        print(head)
        for size, r in rows:
            lc, lg = r.get("libvmaf_cpu_fps"), r.get("libvmaf_cuda_fps")
            print(
                f"{size:>10} {r['frames']:>6.0f} {_fmt(r['cli_fps']):>9} "
                f"{r['cli_startup_s']:>8.2f} {_fmt(r['ceiling_fps']):>9} "
                f"{r['cli_fps'] / r['ceiling_fps']:>7.0%} {_fmt(r['resident_gpu_fps']):>9} "
                f"{_fmt(r['resident_e2e_fps']):>9} "
                f"{r['resident_e2e_fps'] / r['resident_gpu_fps']:>7.0%} {_fmt(lc):>9} "
                f"{_fmt(lg):>9} {_fmt(r['cli_fps'] / lc if lc else None, '.1f'):>6} "
                f"{_fmt(r['cli_fps'] / lg if lg else None, '.1f'):>6}"
            )
        if not so:
            print("(libvmaf not timed: give --libvmaf PATH/TO/libvmaf.so or set ADMCUDA_LIBVMAF)")
    if scaling:
        print()
        c = int(scaling["cores"])
        print(
            f"CPU backend, 1080p, steady fps: 1 thread {scaling['fps_1']:.2f}, {c} threads "
            f"{scaling[f'fps_{c}']:.2f}: {scaling['scaling']:.2f}x "
            f"({scaling['scaling'] / c:.2f} of linear)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
