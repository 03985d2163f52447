#!/usr/bin/env python3
"""Write testdata/goldens.json: libvmaf's integer ADM outputs for every case in generate.PAIRS.

Usage::

    python3 testdata/make_goldens.py --libvmaf /path/to/libvmaf.so [--oracle PATH] [--out PATH]
    python3 testdata/make_goldens.py --libvmaf /path/to/libvmaf.so --update NAME ...

libvmaf is never built here: pass a shared library you built yourself (Netflix/vmaf,
``meson setup build --buildtype release -Denable_asm=false``). Each case is run through
``shared/tools/libvmaf_oracle.py`` (scalar C path, SIMD masked) in five separate
processes: three plain runs, then one each under ``MALLOC_PERTURB_=85`` and
``MALLOC_PERTURB_=170`` (glibc then fills every block malloc returns with a known byte).

- A field whose bits differ between the plain runs is written as null and listed in the
  case's ``unstable_fields``: libvmaf read memory whose content changes from process to
  process (a leftover pointer, say). Tests do not compare it.
- A field that is the same in every plain run but changes under ``MALLOC_PERTURB_`` is
  kept (the plain runs' value) and listed in ``heap_fields``: libvmaf read heap memory
  that nothing wrote, which held zeros in every fresh process here. The reference models
  that memory as zero, so tests compare these fields; a libvmaf inside a process whose
  heap was used before can print other values.
- NaN is written as null too and listed in ``nan_fields`` (JSON has no NaN).

With ``--update`` only the named cases are rerun and the others are kept from the
existing file (whose provenance must match this libvmaf).
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import hashlib
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import generate  # noqa: E402

DEFAULT_ORACLE = os.path.normpath(
    os.path.join(HERE, "..", "..", "shared", "tools", "libvmaf_oracle.py")
)
ORACLE_TEMPLATE = (
    "python3 ../shared/tools/libvmaf_oracle.py LIBVMAF_SO REF DIS W H FMT BITDEPTH [key=val ...]"
)
LIBVMAF_COMMIT = "f85a853692a8c730d0270cd733c8bb30b5b93b7c"
LIBVMAF_COMMIT_DATE = "2026-08-14"
LIBVMAF_BUILD = "meson setup build --buildtype release -Denable_asm=false (gcc 12.2.0, x86_64)"
# Each run is a fresh process. Plain runs that disagree show memory that differs from
# process to process; the perturbed runs fill every malloc'd byte with a known pattern, so
# a value that depends on never-written heap memory changes between them and the plain runs.
PLAIN_RUNS = 3
RUN_ENVS: list[dict[str, str]] = [{}] * PLAIN_RUNS + [
    {"MALLOC_PERTURB_": "85"},
    {"MALLOC_PERTURB_": "170"},
]
FEATURES = (
    "integer_adm2",
    "integer_aim",
    "integer_adm3",
    *(f"integer_adm_scale{k}" for k in range(4)),
    "integer_adm",
    "integer_adm_num",
    "integer_adm_den",
    *(f"integer_adm_{p}_scale{k}" for k in range(4) for p in ("num", "den")),
)
# Outputs built from the scale-3 numerator, and from the scale-3 denominator.
NUM3_DEPENDENTS = frozenset(
    {
        "integer_adm_num_scale3",
        "integer_adm_scale3",
        "integer_adm_num",
        "integer_adm",
        "integer_adm2",
        "integer_adm3",
        "integer_aim",
    }
)
DEN3_DEPENDENTS = NUM3_DEPENDENTS | {"integer_adm_den_scale3", "integer_adm_den"}


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def scale3_reads_uninitialised(w: int, h: int) -> bool:
    """True when libvmaf's scale-3 DWT index table yields row -1 (scale-3 input height 3 or 4).

    libvmaf (dwt2_src_indices_filt) then reads, for the distorted image, a row of its band
    buffer that nothing writes. A scale-3 input width of 3 or 4 yields column -1 too, which
    reads a neighbouring temporary instead (wrong but, with glibc, repeatable).
    """
    del w
    hs = h
    for _ in range(3):
        hs = (hs + 1) // 2
    return hs in (3, 4)


def run_oracle(
    oracle: str, libvmaf: str, case: dict[str, Any], ref: str, dis: str, env: dict[str, str]
) -> list[dict[str, float]]:
    cmd = [
        sys.executable,
        oracle,
        libvmaf,
        ref,
        dis,
        str(case["w"]),
        str(case["h"]),
        case["fmt"],
        str(case["bitdepth"]),
    ]
    cmd += [f"{k}={v}" for k, v in sorted(case["options"].items())]
    out = subprocess.run(
        cmd, check=True, capture_output=True, text=True, env={**os.environ, **env}
    ).stdout
    frames = json.loads(out)["frames"]
    missing = sorted(set(FEATURES) - {k for f in frames for k in f})
    if missing:
        raise RuntimeError(f"{case['name']}: the oracle gave no {missing}")
    if len(frames) != case["frames"]:
        raise RuntimeError(
            f"{case['name']}: oracle gave {len(frames)} frames, expected {case['frames']}"
        )
    return frames


def predicted_undefined(case: dict[str, Any], frames: list[dict[str, float]]) -> set[str]:
    """The fields libvmaf computes from memory it never initialised, as README.md explains.

    Frames 17..32 high: the scale-3 numerator and what is built from it; with a width of 49
    or more (scale-0 CSF region starting past column 0) or ``adm_skip_scale0``, the scale-3
    denominator too. A zero denominator: ``integer_aim`` (libvmaf leaves it unset).
    """
    out: set[str] = set()
    if scale3_reads_uninitialised(case["w"], case["h"]):
        skip0 = case["options"].get("adm_skip_scale0") == "true"
        out |= DEN3_DEPENDENTS if skip0 or (case["w"] + 1) // 2 >= 25 else NUM3_DEPENDENTS
        if case["options"].get("adm_skip_aim") == "true":
            out.discard("integer_aim")
    if any(f.get("integer_adm_den") == 0.0 for f in frames):
        out.add("integer_aim")
    return out


def golden_case(runs: list[list[dict[str, float]]], case: dict[str, Any]) -> dict[str, Any]:
    """One case's entry from the frames of every run (plain runs first, as RUN_ENVS)."""
    first = runs[0]
    unstable: set[str] = set()
    heap: set[str] = set()
    nan: set[str] = set()
    for i, row in enumerate(first):
        for k, v in row.items():
            if any(_bits(r[i][k]) != _bits(v) for r in runs[1:PLAIN_RUNS]):
                unstable.add(k)
            elif any(_bits(r[i][k]) != _bits(v) for r in runs[PLAIN_RUNS:]):
                heap.add(k)
            elif math.isnan(v):
                nan.add(k)
    heap -= unstable
    frames = [
        {k: (None if k in unstable or not math.isfinite(v) else v) for k, v in row.items()}
        for row in first
    ]
    inf = {k for row in first for k, v in row.items() if math.isinf(v) and k not in unstable}
    if inf:
        raise RuntimeError(f"{case['name']}: infinite values in {sorted(inf)}")
    nan_heap = {k for k in heap for row in first if math.isnan(row[k])}
    if nan_heap:
        raise RuntimeError(f"{case['name']}: NaN in heap-dependent fields {sorted(nan_heap)}")
    predicted = predicted_undefined(case, first)
    if unstable | heap != predicted:
        msg = (
            f"{case['name']}: unstable={sorted(unstable)} heap={sorted(heap)} "
            f"but predicted {sorted(predicted)}"
        )
        print(f"warning: {msg}", file=sys.stderr)
    entry: dict[str, Any] = {"case": case, "frames": frames}
    entry["unstable_fields"] = sorted(unstable)
    entry["heap_fields"] = sorted(heap)
    entry["nan_fields"] = sorted(nan)
    return entry


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--libvmaf", required=True, help="path to a locally built libvmaf.so")
    ap.add_argument(
        "--oracle", default=DEFAULT_ORACLE, help="path to shared/tools/libvmaf_oracle.py"
    )
    ap.add_argument("--out", default=os.path.join(HERE, "goldens.json"))
    ap.add_argument(
        "--workdir",
        default=None,
        help="where to write the large, uncommitted pairs (default: temp dir)",
    )
    ap.add_argument("--libvmaf-commit", default=LIBVMAF_COMMIT)
    ap.add_argument("--libvmaf-build", default=LIBVMAF_BUILD)
    ap.add_argument(
        "--update",
        action="store_true",
        help="rerun only the named cases and keep the others from --out",
    )
    ap.add_argument("names", nargs="*", help="case names (default: all)")
    a = ap.parse_args(argv)
    if a.update and not a.names:
        ap.error("--update needs case names")

    lib = ctypes.CDLL(os.path.abspath(a.libvmaf))
    lib.vmaf_version.restype = ctypes.c_char_p
    version = lib.vmaf_version().decode()
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()

    known = {c["name"] for c in generate.PAIRS}
    unknown = sorted(set(a.names) - known)
    if unknown:
        ap.error(f"unknown case names: {unknown}")
    cases = [c for c in generate.PAIRS if not a.names or c["name"] in a.names]
    tmp = tempfile.TemporaryDirectory(prefix="admcuda_pairs_")
    workdir = a.workdir or tmp.name
    committed = [c["name"] for c in cases if c["committed"]]
    large = [c["name"] for c in cases if not c["committed"]]
    paths = {
        **generate.generate(generate.PAIRS_DIR, committed),
        **generate.generate(workdir, large),
    }

    old: dict[str, Any] = {"provenance": {"files": {}}, "cases": {}}
    if a.update:
        with open(a.out) as fh:
            old = json.load(fh)
        if old["provenance"]["libvmaf_version"] != version:
            raise SystemExit(
                f"{a.out} was made with libvmaf {old['provenance']['libvmaf_version']}"
            )
    files: dict[str, str] = dict(old["provenance"]["files"])
    out_cases: dict[str, Any] = {}
    for c in cases:
        ref, dis = paths[c["name"]]
        for p in (ref, dis):
            files[os.path.basename(p)] = _sha256(p)
        runs = [run_oracle(a.oracle, a.libvmaf, c, ref, dis, env) for env in RUN_ENVS]
        entry = golden_case(runs, c)
        entry["date"] = today
        out_cases[c["name"]] = entry
        u, hp = entry["unstable_fields"], entry["heap_fields"]
        note = (f", unstable: {u}" if u else "") + (f", heap: {hp}" if hp else "")
        print(f"{c['name']}: {len(runs[0])} frames{note}", file=sys.stderr)
    # Keep generate.PAIRS order; cases not rerun stay as they were.
    merged = {
        c["name"]: out_cases.get(c["name"], old["cases"].get(c["name"]))
        for c in generate.PAIRS
        if c["name"] in out_cases or c["name"] in old["cases"]
    }

    used = {c["case"][role] for c in merged.values() for role in ("ref", "dis")}
    files = {k: v for k, v in files.items() if k in used}

    import numpy
    import skimage

    provenance = {
        "tool": "libvmaf integer_adm (feature 'adm', debug=true) "
        "via shared/tools/libvmaf_oracle.py (ctypes)",
        "libvmaf_version": version,
        "libvmaf_commit": f"Netflix/vmaf {a.libvmaf_commit} ({LIBVMAF_COMMIT_DATE})",
        "libvmaf_build": a.libvmaf_build,
        "code_path": "scalar C path (asm disabled, SIMD masked)",
        "oracle_command": ORACLE_TEMPLATE,
        "oracle_sha256": _sha256(a.oracle),
        "command": "python3 testdata/make_goldens.py --libvmaf LIBVMAF_SO"
        + (" --update " + " ".join(a.names) if a.update else ""),
        "runs": f"each case run {len(RUN_ENVS)} times in separate processes: "
        f"{PLAIN_RUNS} plain, then MALLOC_PERTURB_=85 and MALLOC_PERTURB_=170; "
        "values from the first plain run",
        "date": today,
        "case_dates": "each case's date is when it was run",
        "made_by": "testdata/make_goldens.py",
        "pairs_made_by": f"testdata/generate.py (numpy {numpy.__version__}, "
        f"scikit-image {skimage.__version__})",
        "float_format": "IEEE double, written with Python's shortest round-trip repr",
        "nan_encoding": "NaN is written as null; the case's nan_fields lists the fields "
        "that were NaN",
        "unstable_encoding": "a field whose value differed between the plain runs is written "
        "as null and listed in the case's unstable_fields: libvmaf read memory whose content "
        "changes from process to process (frames 17..32 high; integer_aim where the "
        "denominator is zero); do not compare it",
        "heap_encoding": "a field equal in every plain run but changed under MALLOC_PERTURB_ "
        "is kept and listed in heap_fields: libvmaf read heap memory nothing wrote, zero in "
        "every fresh process here (the reference's model); compared by the tests, but not "
        "what libvmaf prints from a heap that was used before",
        "files": dict(sorted(files.items())),
    }
    with open(a.out, "w") as fh:
        json.dump({"provenance": provenance, "cases": merged}, fh, indent=1, allow_nan=False)
        fh.write("\n")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
