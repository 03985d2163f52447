"""``admcuda bench``'s CPU rows: VMAF and ADM on the CPU, whole process, beside libvmaf.

Each row is one child process timed from start to exit on the same raw 8-bit (or
``--bitdepth``) 4:2:0 files, written once to a temporary folder so that they sit in the
page cache:

- ``admcuda score --backend cpu`` with ``--model version=vmaf_v0.6.1`` (VMAF) and
  without (ADM), at one thread and at every usable core, on the compiled engine
  (``ADMCUDA_CPU_ENGINE=compiled``, where Numba is installed) and on the NumPy reference
  (``ADMCUDA_CPU_ENGINE=numpy``, on the first frames only: it is about 15 times slower);
- libvmaf's ``vmaf`` tool (``--vmaf PATH``, else ``vmaf`` on ``PATH``) with the same
  arguments (``--feature adm -n`` for ADM alone);
- ffmpeg's ``libvmaf`` filter (the ffmpeg admcuda decodes with, where it has that
  filter), reading the raw files with ``-f rawvideo``: VMAF only, as the filter always
  runs a model;
- with ``--features NAME ...`` (``psnr``, ``float_ssim``, ``float_ms_ssim``, ``cambi``,
  ``speed_chroma``; none by default), for each: ``admcuda score --backend cpu --feature
  NAME -n``, libvmaf's ``vmaf --feature NAME -n`` and ffmpeg's filter with
  ``feature=name=NAME`` (which runs VMAF's model beside it, as the filter always does:
  its time is VMAF's and the feature's, its pooled value the feature's);
- ``cat`` of both files: what reading them costs.

The kernels of the compiled engine and of the features computed with Numba are loaded
(compiled, where Numba's disk cache lacks them) before the first row, untimed. Rounds
alternate the order of the rows (the second round runs them backwards) and each
figure is the median of its rounds. Every row's pooled score is read back from its JSON,
so that a row scoring other frames than the others would show.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from admcuda.errors import AdmError

__all__ = [
    "FEATURES",
    "CpuRow",
    "cpu_rows",
    "default_cpu_frames",
    "print_cpu_rows",
    "run_cpu_rows",
    "warm_cpu_kernels",
]

MODEL = "version=vmaf_v0.6.1"


@dataclass(frozen=True)
class BenchFeature:
    """A feature ``--features`` times: its name in the rows' labels, the pooled output
    printed beside them, and whether admcuda computes it with Numba (the ``fast``
    extra)."""

    label: str
    key: str
    numba: bool


# libvmaf 3.2.0's names, as its vmaf tool and ffmpeg's filter take them.
FEATURES: dict[str, BenchFeature] = {
    "psnr": BenchFeature("PSNR", "psnr_y", numba=False),
    "float_ssim": BenchFeature("SSIM", "float_ssim", numba=True),
    "float_ms_ssim": BenchFeature("MS-SSIM", "float_ms_ssim", numba=True),
    "cambi": BenchFeature("CAMBI", "cambi", numba=True),
    "speed_chroma": BenchFeature("SpEED chroma", "speed_chroma_uv", numba=True),
}


@dataclass
class CpuRow:
    """One timed command: ``command(threads)`` is its argument list (``threads`` a string,
    so that ``"T"`` shows the command's form)."""

    label: str
    threads: int
    command: Callable[[str], list[str]]
    frames: int
    env: dict[str, str] = field(default_factory=dict)
    output: Path | None = None
    key: str | None = None  # the pooled output read back from ``output``
    walls: list[float] = field(default_factory=list)
    score: float | None = None

    def argv(self) -> list[str]:
        return self.command(str(self.threads))


def default_cpu_frames(w: int, h: int) -> int:
    """Frames of the CPU rows' files: 48 at 1080p, as many pixels at other sizes (8 to
    2,000 frames)."""
    return max(8, min(2000, round(48 * 1920 * 1080 / (w * h))))


def find_vmaf(given: str | None) -> str | None:
    """libvmaf's ``vmaf`` tool: ``given`` (which must be an executable file), else
    ``vmaf`` on ``PATH``, else None."""
    if given:
        found = shutil.which(given)
        if found is None:
            raise AdmError(f"--vmaf {given}: not an executable file")
        return found
    return shutil.which("vmaf")


def ffmpeg_with_libvmaf() -> str | None:
    """The ffmpeg admcuda decodes with (imageio-ffmpeg's, else ``ffmpeg`` on ``PATH``)
    where its build has the ``libvmaf`` filter, else None."""
    from admcuda.io.ffmpeg import ffmpeg_exe

    try:
        exe = ffmpeg_exe()
    except AdmError:
        return None
    proc = subprocess.run([exe, "-hide_banner", "-filters"], capture_output=True, text=True)
    has = any(line.split()[1:2] == ["libvmaf"] for line in proc.stdout.splitlines())
    return exe if has else None


def cpu_rows(
    folder: Path,
    ref: Path,
    dis: Path,
    w: int,
    h: int,
    bitdepth: int,
    *,
    frames: int,
    numpy_frames: int,
    threads: Sequence[int],
    engines: Sequence[str],
    vmaf: str | None,
    ffmpeg: str | None,
    what: Sequence[str] = ("vmaf", "adm"),
    features: Sequence[str] = (),
) -> list[CpuRow]:
    """The rows, in the order they are printed: for each of ``what`` (``vmaf``, ``adm``)
    admcuda on each of ``engines`` (``compiled``, ``numpy``), libvmaf's ``vmaf`` tool and
    (VMAF) ffmpeg's filter, each at each of ``threads``; then for each of ``features``
    (names in :data:`FEATURES`) admcuda, the ``vmaf`` tool and ffmpeg's filter at each of
    ``threads``; then ``cat``."""
    geometry = ["-w", str(w), "-h", str(h), "-p", "420", "-b", str(bitdepth)]
    rows: list[CpuRow] = []
    for kind in what:
        # -r/-d without --model would add vmaf_v0.6.1, as libvmaf's tool does
        model = ["--model", MODEL] if kind == "vmaf" else ["--feature", "adm", "-n"]
        key = "vmaf" if kind == "vmaf" else "integer_adm2"
        name = "VMAF" if kind == "vmaf" else "ADM"
        for engine in engines:
            n = frames if engine == "compiled" else min(frames, numpy_frames)
            for t in threads:
                stem = folder / f"admcuda-{kind}-{engine}"
                out = Path(f"{stem}-{t}.json")
                count = ["--frame-cnt", str(n)] if n < frames else []

                def command(tt: str, stem: Path = stem, model=model, count=count) -> list[str]:
                    return [
                        sys.executable, "-m", "admcuda", "score", "-r", str(ref),
                        "-d", str(dis), *geometry, *model, *count, "--backend", "cpu",
                        "--threads", tt, "-q", "--json", "-o", f"{stem}-{tt}.json",
                    ]  # fmt: skip

                label = f"admcuda {name}, {engine} engine"
                rows.append(CpuRow(label, t, command, n, {"ADMCUDA_CPU_ENGINE": engine}, out, key))
        if vmaf:
            for t in threads:
                stem = folder / f"vmaf-{kind}"
                out = Path(f"{stem}-{t}.json")
                feats = ["--model", MODEL] if kind == "vmaf" else ["--feature", "adm", "-n"]

                def command(tt: str, stem: Path = stem, feats=feats) -> list[str]:
                    return [
                        vmaf, "-r", str(ref), "-d", str(dis), *geometry, *feats,
                        "--threads", tt, "-q", "--json", "-o", f"{stem}-{tt}.json",
                    ]  # fmt: skip

                rows.append(CpuRow(f"libvmaf vmaf {name}", t, command, frames, {}, out, key))
        if ffmpeg and kind == "vmaf":
            raw = _raw_args(w, h, bitdepth)
            for t in threads:
                stem = folder / f"ffmpeg-{kind}"
                out = Path(f"{stem}-{t}.json")

                def command(tt: str, stem: Path = stem, raw=raw) -> list[str]:
                    log = f"log_fmt=json:log_path={stem}-{tt}.json"
                    lavfi = f"libvmaf=model={MODEL}:n_threads={tt}:{log}"
                    return [
                        ffmpeg, "-nostdin", "-v", "error", *raw, "-i", str(dis), *raw,
                        "-i", str(ref), "-lavfi", lavfi, "-f", "null", "-",
                    ]  # fmt: skip

                rows.append(CpuRow("ffmpeg libvmaf filter VMAF", t, command, frames, {}, out, key))
    for feature in features:
        rows += _feature_rows(
            folder, ref, dis, geometry, feature, frames=frames, threads=threads, vmaf=vmaf,
            ffmpeg=ffmpeg, raw=_raw_args(w, h, bitdepth),
        )  # fmt: skip
    rows.append(CpuRow("cat of both files", 1, lambda tt: ["cat", str(ref), str(dis)], frames))
    return rows


def _raw_args(w: int, h: int, bitdepth: int) -> list[str]:
    pix = "yuv420p" if bitdepth == 8 else f"yuv420p{bitdepth}le"
    return ["-f", "rawvideo", "-pix_fmt", pix, "-s", f"{w}x{h}"]


def _feature_rows(
    folder: Path,
    ref: Path,
    dis: Path,
    geometry: Sequence[str],
    feature: str,
    *,
    frames: int,
    threads: Sequence[int],
    vmaf: str | None,
    ffmpeg: str | None,
    raw: Sequence[str],
) -> list[CpuRow]:
    """One feature's rows: admcuda (whichever CPU engine: the feature has one), libvmaf's
    ``vmaf`` tool and ffmpeg's filter, each at each of ``threads``."""
    about = FEATURES[feature]
    io = ["-r", str(ref), "-d", str(dis), *geometry]
    rows: list[CpuRow] = []

    def add(label: str, name: str, argv: Callable[[str, str], list[str]]) -> None:
        for t in threads:
            out = folder / f"{name}-{t}.json"

            def command(tt: str, name: str = name) -> list[str]:
                return argv(tt, str(folder / f"{name}-{tt}.json"))

            rows.append(CpuRow(label, t, command, frames, {}, out, about.key))

    admcuda = [sys.executable, "-m", "admcuda", "score", *io, "--feature", feature, "-n"]
    admcuda += ["--backend", "cpu"]
    add(f"admcuda {about.label}", f"admcuda-{feature}",
        lambda tt, o: [*admcuda, "--threads", tt, "-q", "--json", "-o", o])  # fmt: skip
    if vmaf:
        tool = [vmaf, *io, "--feature", feature, "-n"]
        add(f"libvmaf vmaf {about.label}", f"vmaf-{feature}",
            lambda tt, o: [*tool, "--threads", tt, "-q", "--json", "-o", o])  # fmt: skip
    if ffmpeg:
        exe = ffmpeg

        def filtered(tt: str, o: str) -> list[str]:
            lavfi = (
                f"libvmaf=model={MODEL}:feature=name={feature}:n_threads={tt}:"
                f"log_fmt=json:log_path={o}"
            )
            return [
                exe, "-nostdin", "-v", "error", *raw, "-i", str(dis), *raw,
                "-i", str(ref), "-lavfi", lavfi, "-f", "null", "-",
            ]  # fmt: skip

        add(f"ffmpeg libvmaf filter VMAF + {about.label}", f"ffmpeg-{feature}", filtered)
    return rows


def _pooled(path: Path, key: str) -> float | None:
    try:
        doc = json.loads(path.read_text())
        return float(doc["pooled_metrics"][key]["mean"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def run_cpu_rows(rows: Sequence[CpuRow], rounds: int) -> None:
    """Run every row ``rounds`` times, each round in the other order than the last,
    keeping each run's wall time (``row.walls``) and the pooled score it wrote."""
    for rnd in range(rounds):
        for row in rows if rnd % 2 == 0 else rows[::-1]:
            argv = row.argv()
            env = {**os.environ, **row.env}
            t0 = time.perf_counter()
            proc = subprocess.run(
                argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
            )
            wall = time.perf_counter() - t0
            if proc.returncode != 0:
                tail = proc.stderr.strip().splitlines()[-1:] or [""]
                raise AdmError(f"{' '.join(argv)} failed ({proc.returncode}): {tail[0][-300:]}")
            row.walls.append(wall)
            if row.output is not None and row.key is not None:
                row.score = _pooled(row.output, row.key)


def _cell(row: CpuRow | None) -> str:
    if row is None or not row.walls:
        return "-"
    s = statistics.median(row.walls)
    return f"{s:.2f} ({row.frames / s:,.1f})" if row.key else f"{s:.2f}"


def print_cpu_rows(
    rows: Sequence[CpuRow],
    head: str,
    threads: Sequence[int],
    notes: Sequence[str] = (),
    folder: Path | None = None,
) -> None:
    """The table: a line per label, a column per thread count (median seconds, with
    frames/s), the pooled score; then each label's command with ``T`` for the threads
    (and paths inside ``folder`` by their names)."""
    labels = list(dict.fromkeys(r.label for r in rows))
    most = max(r.frames for r in rows)
    names = {}
    for label in labels:
        n = next(r.frames for r in rows if r.label == label)
        names[label] = label if n == most else f"{label} ({n} frames)"
    lw = max(len(n) for n in names.values())
    print()
    print(head)
    cols = [f"{t} thread{'s' if t != 1 else ''}" for t in threads]
    print(f"{'':{lw}}  " + "  ".join(f"{c:>16}" for c in cols) + "  pooled")
    by = {(r.label, r.threads): r for r in rows}
    for label in labels:
        mine = [r for r in rows if r.label == label]
        if mine[0].key is None:  # cat: one figure
            cells = [_cell(mine[0])] + [""] * (len(threads) - 1)
        else:
            cells = [_cell(by.get((label, t))) for t in threads]
        scores = sorted({r.score for r in mine if r.score is not None})
        pooled = ", ".join(f"{mine[0].key} {s:.6f}" for s in scores)
        line = f"{names[label]:{lw}}  " + "  ".join(f"{c:>16}" for c in cells) + f"  {pooled}"
        print(line.rstrip())
    for note in notes:
        print(note)
    print("commands (T: the threads):")
    for label in labels:
        first = next(r for r in rows if r.label == label)
        env = "".join(f"{k}={v} " for k, v in first.env.items())
        text = " ".join(first.command("T"))
        if folder is not None:
            text = text.replace(f"{folder}{os.sep}", "")
        print(f"  {label}: {env}{text}")


def machine_line(cores: int) -> str:
    """The CPU's model name and the usable cores, with Numba's version where installed."""
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next(
                (ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), ""
            )
    except OSError:
        pass
    try:
        import numba

        numba_text = f", Numba {numba.__version__}"
    except ImportError:
        numba_text = ", no Numba"
    from admcuda import __version__

    return f"{model or 'CPU'}, {cores} usable cores; admcuda {__version__}{numba_text}"


def warm_cpu_kernels(engines: Sequence[str], features: Sequence[str], bitdepth: int) -> None:
    """Compile (or load from Numba's disk cache) the kernels the timed rows run, before
    the first of them: on a machine where they are not yet compiled, the first compiled
    row's time was otherwise Numba's compile (a minute on 2 cores), not the engine's."""
    kinds = ["adm", "vif", "motion"] if "compiled" in engines else []
    kinds += [f for f in features if FEATURES[f].numba]
    if not kinds:
        return
    from admcuda.compiled import warm_up

    print("CPU engine: loading its kernels (compiled once per machine) ...", flush=True)
    t0 = time.perf_counter()
    warm_up(bitdepths=(bitdepth,), kinds=tuple(kinds))
    print(f"CPU engine: kernels ready ({time.perf_counter() - t0:.1f} s, not timed)")


def bench_cpu(args: Any, write_pair: Callable[[Path, Path, int, int, int, int], None]) -> None:
    """The CPU rows of ``admcuda bench`` (``args``: its parsed arguments) at each
    ``--sizes`` (default 1080p), printed as each size completes; ``write_pair(ref, dis,
    w, h, bitdepth, frames)`` writes the raw files."""
    import tempfile

    from admcuda.backends.cpu import default_threads
    from admcuda.compiled import available

    cores = default_threads()
    threads = sorted({1, cores})
    engines = [e for e in args.cpu_engines if e != "compiled" or available()]
    notes = []
    if "compiled" in args.cpu_engines and "compiled" not in engines:
        notes.append('(compiled engine not timed: Numba is not installed; pip install ".[fast]")')
    vmaf = find_vmaf(args.vmaf)
    if vmaf is None:
        notes.append("(libvmaf's vmaf not timed: give --vmaf PATH or put vmaf on PATH)")
    ffmpeg = ffmpeg_with_libvmaf()
    if ffmpeg is None:
        notes.append("(ffmpeg's libvmaf filter not timed: no ffmpeg with libvmaf found)")
    features = list(dict.fromkeys(getattr(args, "features", None) or ()))
    if not available() and any(FEATURES[f].numba for f in features):
        skipped = [f for f in features if FEATURES[f].numba]
        features = [f for f in features if not FEATURES[f].numba]
        notes.append(
            f"({', '.join(skipped)} not timed: admcuda computes them with Numba, which is "
            'not installed; pip install ".[fast]")'
        )
    rounds = args.rounds or 2
    bd = args.bitdepth
    print(f"CPU: {machine_line(cores)}")
    warm_cpu_kernels(engines, features, bd)
    for w, h in args.sizes or [(1920, 1080)]:
        n = args.frames or default_cpu_frames(w, h)
        numpy_frames = args.numpy_frames or max(2, n // 8)
        with tempfile.TemporaryDirectory(prefix="admcuda-bench-", dir=args.tmp) as tmp:
            rp, dp = Path(tmp) / "ref.yuv", Path(tmp) / "dis.yuv"
            write_pair(rp, dp, w, h, bd, n)
            rows = cpu_rows(
                Path(tmp), rp, dp, w, h, bd, frames=n, numpy_frames=numpy_frames,
                threads=threads, engines=engines, vmaf=vmaf, ffmpeg=ffmpeg, features=features,
            )  # fmt: skip
            run_cpu_rows(rows, rounds)
            how = "one round" if rounds == 1 else f"median of {rounds} alternating rounds"
            head = (
                f"CPU, {w}x{h} {bd}-bit 4:2:0 raw files ref.yuv and dis.yuv ({n} frames) in "
                f"the page cache, whole process, {how}: seconds (frames/s)"
            )
            print_cpu_rows(rows, head, threads, notes, Path(tmp))
