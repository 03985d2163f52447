"""``admcuda bench``: ADM-only throughput of the CUDA backend, and the CPU reference's time.

For each frame size it reports frames per second (one frame = one reference/distorted
pair, all 18 outputs computed):

- ``resident``: frames already on the GPU (CuPy arrays), scored in batches;
  ``gpu`` counts the GPU stages up to the integer accumulators, ``total`` adds the host
  float finish (libvmaf's ``powf`` steps, run by the reference's own functions);
- ``disk``: frames read from raw 4:2:0 YUV files just written to a temporary folder
  (so from the page cache), through pinned buffers, finish included;
- ``cpu``: the NumPy reference, seconds per frame.

Content is seeded random noise on a smooth picture, distorted by noise, so that no stage
sees constant input.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from admcuda._libvmaf import find_libvmaf, time_libvmaf_adm

__all__ = ["main"]

_DEFAULT_SIZES = ("576x324", "1920x1080", "3840x2160")
_CPU_SIZES = ("576x324", "1920x1080")


def _size(text: str) -> tuple[int, int]:
    w, _, h = text.lower().partition("x")
    try:
        size = int(w), int(h)
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must be WIDTHxHEIGHT, got {text!r}") from None
    if min(size) <= 16:
        raise argparse.ArgumentTypeError(f"size must be above 16x16, got {text!r}")
    return size


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


def _median_time(fn: Callable[[], object], repeats: int) -> float:
    fn()  # warm-up: compilation, allocation, first-touch
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _write_yuv420(path: Path, planes: np.ndarray) -> None:
    n, h, w = planes.shape
    chroma = np.full(
        2 * ((w + 1) // 2) * ((h + 1) // 2),
        1 << (planes.dtype.itemsize * 8 - 1),
        dtype=planes.dtype,
    )
    with open(path, "wb") as f:
        for k in range(n):
            f.write(planes[k].astype(planes.dtype.newbyteorder("<")).tobytes())
            f.write(chroma.tobytes())


def _luma_view(path: Path, n: int, w: int, h: int, dtype: np.dtype) -> np.ndarray:
    """Luma planes of a 4:2:0 file as a read-only memory map, (n, h, w), no copy."""
    frame = w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)
    mm = np.memmap(path, dtype=np.dtype(dtype).newbyteorder("<"), mode="r", shape=(n, frame))
    return mm[:, : w * h].reshape(n, h, w)


def _timed_fps(fn: Callable[[], object], frames: int, repeats: int) -> float:
    return frames / _median_time(fn, repeats)


def _bench_size(w: int, h: int, args: argparse.Namespace) -> dict[str, float]:
    import cupy as cp

    from admcuda.backends.cuda import CudaAdm, auto_batch
    from admcuda.options import AdmOptions

    batch = args.batch or auto_batch(w, h)
    n = args.frames or max(batch * 4, 64)
    ref_h, dis_h = _frames_host(min(n, 16), w, h, 8, seed=w * h)
    out: dict[str, float] = {"frames": n}
    with CudaAdm(w, h, 8, AdmOptions(), batch=batch, finish_workers=args.finish_workers) as adm:
        out["batch"] = adm.batch
        reps = -(-n // ref_h.shape[0])
        ref = cp.asarray(np.concatenate([ref_h] * reps)[:n])
        dis = cp.asarray(np.concatenate([dis_h] * reps)[:n])
        out["resident_gpu_fps"] = _timed_fps(
            lambda: adm.integer_accumulators(ref, [dis]), n, args.repeats
        )
        out["resident_total_fps"] = _timed_fps(lambda: adm.scores(ref, dis), n, args.repeats)
        ref = dis = None
        if not args.skip_disk:
            frame_bytes = w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)
            nd = max(min(n, args.disk_frames, (512 << 20) // frame_bytes), 1)
            reps = -(-nd // ref_h.shape[0])
            with tempfile.TemporaryDirectory(prefix="admcuda-bench-") as tmp:
                rp, dp = Path(tmp) / "ref.yuv", Path(tmp) / "dis.yuv"
                _write_yuv420(rp, np.concatenate([ref_h] * reps)[:nd])
                _write_yuv420(dp, np.concatenate([dis_h] * reps)[:nd])
                rv, dv = _luma_view(rp, nd, w, h, np.uint8), _luma_view(dp, nd, w, h, np.uint8)
                out["disk_total_fps"] = _timed_fps(lambda: adm.scores(rv, dv), nd, args.repeats)
    return out


def _profile(w: int, h: int, batch: int) -> dict[str, float]:
    """Device microseconds per frame of each stage launch (CUDA events), one batch."""
    import cupy as cp

    from admcuda.backends import cuda as gpu
    from admcuda.options import AdmOptions

    geoms = gpu.scale_geometries(w, h, AdmOptions())
    ref_h, dis_h = _frames_host(min(batch, 8), w, h, 8, seed=5)
    reps = -(-batch // ref_h.shape[0])
    ref = cp.asarray(np.concatenate([ref_h] * reps)[:batch])
    dis = cp.asarray(np.concatenate([dis_h] * reps)[:batch])
    acc = cp.zeros((batch, 4, 9), dtype=np.int64)
    flt = [cp.empty((batch, 2, 3, *g.shape), dtype=g.band_dtype) for g in geoms]
    times: dict[str, float] = {}

    @contextlib.contextmanager
    def timed(name: str) -> Iterator[None]:
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        yield
        stop.record()
        stop.synchronize()
        times[name] = times.get(name, 0.0) + cp.cuda.get_elapsed_time(start, stop) * 1e3 / batch

    for _ in range(2):  # the first round compiles and warms up
        times.clear()
        with timed("dwt2 s0 x2"):
            rb, db = [gpu.dwt2(ref, 8)], [gpu.dwt2(dis, 8)]
        for s in (1, 2, 3):
            with timed(f"dwt2 s{s} x2"):
                rb.append(gpu.dwt2_s123(rb[s - 1][:, 0], s, role="ref"))
                db.append(gpu.dwt2_s123(db[s - 1][:, 0], s, role="dis", other=rb[s - 1][:, 0]))
        for s, g in enumerate(geoms):
            with timed(f"csf s{s}"):
                gpu.csf(rb[s], db[s], g, 100.0, flt=flt[s])
            with timed(f"cm+den s{s}"):
                gpu.cm(rb[s], db[s], flt[s], g, 100.0, acc[:, s], do_den=True)
    return dict(times)


def _bench_cpu(w: int, h: int, frames: int) -> float:
    from admcuda.options import AdmOptions
    from admcuda.reference import compute_adm

    opts = AdmOptions()
    ref, dis = _frames_host(frames, w, h, 8, seed=1)
    compute_adm(ref[0], dis[0], 8, opts)
    t0 = time.perf_counter()
    for k in range(frames):
        compute_adm(ref[k], dis[k], 8, opts)
    return (time.perf_counter() - t0) / frames


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="admcuda bench", description=__doc__.splitlines()[0])
    p.add_argument(
        "--sizes",
        type=_size,
        nargs="+",
        default=[_size(s) for s in _DEFAULT_SIZES],
        metavar="WxH",
        help="frame sizes (default: %(default)s)",
    )
    p.add_argument(
        "--batch", type=int, default=0, help="frames per launch (default: by frame size, 64..512)"
    )
    p.add_argument(
        "--frames",
        type=int,
        default=0,
        help="frames per timed run (default: 4 batches, at least 64)",
    )
    p.add_argument(
        "--disk-frames",
        type=int,
        default=256,
        help="at most this many frames in the YUV files (default: 256)",
    )
    p.add_argument("--repeats", type=int, default=3, help="timed runs, median taken (default: 3)")
    p.add_argument(
        "--finish-workers",
        type=int,
        default=max(min((os.cpu_count() or 1) - 2, 14), 0),
        help="processes for the host float finish (default: CPUs - 2, at most 14)",
    )
    p.add_argument(
        "--cpu-frames",
        type=int,
        default=3,
        help="frames timed for the CPU reference (default: 3; 0 skips it)",
    )
    p.add_argument("--skip-disk", action="store_true", help="skip the YUV-file measurement")
    p.add_argument(
        "--libvmaf",
        metavar="SO",
        help="a libvmaf.so you built: time its CPU adm beside the reference "
        "(default: $ADMCUDA_LIBVMAF)",
    )
    p.add_argument(
        "--profile",
        action="store_true",
        help="also print device microseconds per frame of each stage",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print one table; returns the exit status."""
    args = _parser().parse_args(argv)
    from admcuda.backends.cuda import auto_batch, cuda_available

    rows = []
    if cuda_available():
        import cupy as cp

        dev = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        name = dev["name"].decode() if isinstance(dev["name"], bytes) else dev["name"]
        print(f"device: {name}, finish workers {args.finish_workers}")
        for w, h in args.sizes:
            r = _bench_size(w, h, args)
            rows.append((f"{w}x{h}", r))
            print(f"  {w}x{h}: " + ", ".join(f"{k} {v:,.0f}" for k, v in r.items()), flush=True)
            if args.profile:
                prof = _profile(w, h, args.batch or auto_batch(w, h))
                print(
                    "    us/frame: "
                    + ", ".join(f"{k} {v:.2f}" for k, v in prof.items())
                    + f"; sum {sum(prof.values()):.2f}",
                    flush=True,
                )
    else:
        print("no CUDA device: GPU measurements skipped")
    cpu: dict[str, float] = {}
    lib: dict[str, tuple[float, float]] = {}
    so = find_libvmaf(args.libvmaf)
    if args.cpu_frames > 0:
        for text in _CPU_SIZES:
            w, h = _size(text)
            cpu[text] = _bench_cpu(w, h, args.cpu_frames)
            if so:
                ref, dis = _frames_host(1, w, h, 8, seed=1)
                n = max(args.cpu_frames, 10)
                lib[text] = (
                    time_libvmaf_adm(so, ref[0], dis[0], 8, n, scalar=True),
                    time_libvmaf_adm(so, ref[0], dis[0], 8, n, scalar=False),
                )

    print()
    print(
        f"{'size':>10} {'resident gpu':>13} {'resident':>10} {'disk':>10} {'cpu s/frame':>12}"
        + (f" {'libvmaf C':>10} {'libvmaf SIMD':>12}" if lib else "")
    )
    print(f"{'':>10} {'fps':>13} {'fps':>10} {'fps':>10} {'':>12}")
    names = [r[0] for r in rows] + [s for s in cpu if s not in dict(rows)]
    for size in names:
        r = dict(rows).get(size, {})

        def cell(key: str, r: dict = r) -> str:
            return f"{r[key]:,.0f}" if key in r else "-"

        c = f"{cpu[size]:.3f}" if size in cpu else "-"
        side = ""
        if size in lib:
            side = f" {lib[size][0]:>10.3f} {lib[size][1]:>12.3f}"
        print(
            f"{size:>10} {cell('resident_gpu_fps'):>13} {cell('resident_total_fps'):>10} "
            f"{cell('disk_total_fps'):>10} {c:>12}{side}"
        )
    if args.cpu_frames > 0 and not so:
        print("(libvmaf not timed: give --libvmaf PATH/TO/libvmaf.so or set ADMCUDA_LIBVMAF)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
