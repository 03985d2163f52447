#!/usr/bin/env python3
"""Write testdata/goldens.json: libvmaf's integer ADM outputs for every case in generate.PAIRS.

Usage::

    python3 testdata/make_goldens.py --libvmaf /path/to/libvmaf.so [--oracle PATH] [--out PATH]

libvmaf is never built here: pass a shared library you built yourself (Netflix/vmaf,
``meson setup build --buildtype release -Denable_asm=false``). Each case is run through
``shared/tools/libvmaf_oracle.py`` (scalar C path, SIMD masked) in separate processes,
once plainly and once each under ``MALLOC_PERTURB_=85`` and ``MALLOC_PERTURB_=170``. A
field whose bits differ between those runs comes from memory libvmaf never initialised
(see README.md): it is written as null and listed in the case's ``unstable_fields``.
NaN is written as null too and listed in ``nan_fields`` (JSON has no NaN).
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
# Each run is a fresh process; the perturbed runs fill every malloc'd byte with a known
# pattern, so a value that depends on uninitialised heap memory changes between them.
RUN_ENVS: list[dict[str, str]] = [{}, {"MALLOC_PERTURB_": "85"}, {"MALLOC_PERTURB_": "170"}]


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
    if len(frames) != case["frames"]:
        raise RuntimeError(
            f"{case['name']}: oracle gave {len(frames)} frames, expected {case['frames']}"
        )
    return frames


def golden_case(runs: list[list[dict[str, float]]], case: dict[str, Any]) -> dict[str, Any]:
    first = runs[0]
    unstable: set[str] = set()
    nan: set[str] = set()
    for i, row in enumerate(first):
        for k, v in row.items():
            if any(_bits(r[i][k]) != _bits(v) for r in runs[1:]):
                unstable.add(k)
            elif math.isnan(v):
                nan.add(k)
    frames = [
        {k: (None if k in unstable or not math.isfinite(v) else v) for k, v in row.items()}
        for row in first
    ]
    inf = {k for row in first for k, v in row.items() if math.isinf(v) and k not in unstable}
    if inf:
        raise RuntimeError(f"{case['name']}: infinite values in {sorted(inf)}")
    predicted = scale3_reads_uninitialised(case["w"], case["h"])
    if bool(unstable) != predicted:
        msg = f"{case['name']}: unstable={sorted(unstable)} but predicted={predicted}"
        print(f"warning: {msg}", file=sys.stderr)
    entry: dict[str, Any] = {"case": case, "frames": frames}
    entry["unstable_fields"] = sorted(unstable)
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
    ap.add_argument("names", nargs="*", help="case names (default: all)")
    a = ap.parse_args(argv)

    lib = ctypes.CDLL(os.path.abspath(a.libvmaf))
    lib.vmaf_version.restype = ctypes.c_char_p
    version = lib.vmaf_version().decode()

    cases = [c for c in generate.PAIRS if not a.names or c["name"] in a.names]
    tmp = tempfile.TemporaryDirectory(prefix="admcuda_pairs_")
    workdir = a.workdir or tmp.name
    committed = [c["name"] for c in cases if c["committed"]]
    large = [c["name"] for c in cases if not c["committed"]]
    paths = {
        **generate.generate(generate.PAIRS_DIR, committed),
        **generate.generate(workdir, large),
    }

    files: dict[str, str] = {}
    out_cases: dict[str, Any] = {}
    for c in cases:
        ref, dis = paths[c["name"]]
        for p in (ref, dis):
            files[os.path.basename(p)] = _sha256(p)
        runs = [run_oracle(a.oracle, a.libvmaf, c, ref, dis, env) for env in RUN_ENVS]
        out_cases[c["name"]] = golden_case(runs, c)
        u = out_cases[c["name"]]["unstable_fields"]
        note = f", unstable: {u}" if u else ""
        print(f"{c['name']}: {len(runs[0])} frames{note}", file=sys.stderr)

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
        "runs": "each case run 3 times in separate processes: plain, MALLOC_PERTURB_=85, "
        "MALLOC_PERTURB_=170; values from the plain run",
        "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
        "made_by": "testdata/make_goldens.py",
        "pairs_made_by": f"testdata/generate.py (numpy {numpy.__version__}, "
        f"scikit-image {skimage.__version__})",
        "float_format": "IEEE double, written with Python's shortest round-trip repr",
        "nan_encoding": "NaN is written as null; the case's nan_fields lists the fields "
        "that were NaN",
        "unstable_encoding": "a field whose value differed between the runs is written as null and "
        "listed in the case's unstable_fields: libvmaf read uninitialised memory for it "
        "(scale-3 input height 3 or 4, i.e. frame height 17..32)",
        "files": dict(sorted(files.items())),
    }
    with open(a.out, "w") as fh:
        json.dump({"provenance": provenance, "cases": out_cases}, fh, indent=1, allow_nan=False)
        fh.write("\n")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
