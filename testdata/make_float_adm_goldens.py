#!/usr/bin/env python3
"""Write testdata/float_adm_goldens.json: libvmaf's ``float_adm`` outputs (``adm2``,
``aim``, ``adm3``, ``adm_scale0`` .. ``adm_scale3`` and, with ``debug``, ``adm``,
``adm_num``, ``adm_den`` and each scale's numerator and denominator) on synthetic pairs,
with options, and on the Netflix pairs of ``../shared/netflix``.

Usage::

    python3 testdata/make_float_adm_goldens.py --libvmaf LIBVMAF_SO --vmaf VMAF_TOOL \\
        [--oracle ORACLE] [--netflix DIR] [--out PATH]

libvmaf is never built here. ``float_adm`` is one of libvmaf's float features, which its
build leaves out unless configured with ``-Denable_float=true``: ``LIBVMAF_SO`` is a
libvmaf 3.2.0 shared library built outside the project that way (Netflix/vmaf f85a8536,
``-Denable_asm=false -Denable_float=true``), driven through ctypes by the shared oracle
(``libvmaf_vmaf_oracle.py ... any NAMES float_adm:debug=true:...``, SIMD masked: the
scalar C path, whose divisions go through the CPU's ``rcpss``) for every frame's values
at full precision, twice, each in a fresh process. ``VMAF_TOOL`` is the ``vmaf`` tool of
the same build: where it reads the pair (not 4:0:0) and the case has no options, its JSON
is read too and each value it prints must be the oracle's printed with ``%.6f``.

The synthetic pairs are made as ``make_float_ansnr_goldens.py`` makes its own
(:func:`pair_planes`: NumPy's PCG64 bit stream, integer arithmetic only) at sizes for ADM:
17x17 (the least whose scale-3 bands are 2x2), odd sides, 8, 10, 12 and 16 bits, noise and
blur, frames against themselves, mid-grey and constant frames (no detail: the noise floors
alone), 0 against peak, and a 1920x1080 pair. Each option of ``float_adm.c``'s table
appears in at least one case (:data:`OPTION_CASES`; 4 of the 8 factor overrides); names
off the defaults carry libvmaf's suffixes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import make_float_ansnr_goldens as _pairs  # noqa: E402

DEFAULT_NETFLIX = _pairs.DEFAULT_NETFLIX
DEFAULT_ORACLE = _pairs.DEFAULT_ORACLE
OUT = os.path.join(HERE, "float_adm_goldens.json")

# the collector's names before any suffix, and the printed (aliased) ones, in order
COLLECTOR = (
    "VMAF_feature_adm2_score", "VMAF_feature_aim_score", "VMAF_feature_adm3_score",
    "VMAF_feature_adm_scale0_score", "VMAF_feature_adm_scale1_score",
    "VMAF_feature_adm_scale2_score", "VMAF_feature_adm_scale3_score",
    "adm", "adm_num", "adm_den",
    "adm_num_scale0", "adm_den_scale0", "adm_num_scale1", "adm_den_scale1",
    "adm_num_scale2", "adm_den_scale2", "adm_num_scale3", "adm_den_scale3",
)  # fmt: skip
PRINTED = (
    "adm2", "aim", "adm3", "adm_scale0", "adm_scale1", "adm_scale2", "adm_scale3",
    "adm", "adm_num", "adm_den",
    "adm_num_scale0", "adm_den_scale0", "adm_num_scale1", "adm_den_scale1",
    "adm_num_scale2", "adm_den_scale2", "adm_num_scale3", "adm_den_scale3",
)  # fmt: skip
# float_adm.c's options that rename outputs: name -> (type, alias)
TABLE = {
    "adm_enhn_gain_limit": ("double", "egl"),
    "adm_norm_view_dist": ("double", "nvd"),
    "adm_noise_weight": ("double", "nw"),
    "adm_csf_scale": ("double", "scf"),
    "adm_csf_diag_scale": ("double", "scfd"),
    "adm_ref_display_height": ("int", "rdf"),
    "adm_csf_mode": ("int", "csf"),
    "adm_bypass_cm": ("int", "bcm"),
    "adm_adm3_apply_hm": ("bool", "aah"),
    "adm_p_norm": ("double", "apn"),
    "adm_dlm_weight": ("double", "dlmw"),
    "adm_min_val": ("double", "min"),
    **{f"adm_f{a}s{s}": ("double", f"f{a}s{s}") for a in (1, 2) for s in range(4)},
    "adm_skip_aim_scale": ("int", "sasc"),
    "adm_skip_scale0": ("bool", "ssz"),
}

PAIRS: dict[str, tuple[int, int, str, int, int, str, int]] = {
    "n8_420": (48, 32, "420", 8, 2, "noise", 2),
    "n8_400_odd": (33, 17, "400", 8, 3, "noise", 1),
    "n10_400_odd": (35, 19, "400", 10, 3, "noise", 3),
    "n10_422": (40, 24, "422", 10, 2, "noise", 4),
    "n12_444_odd": (21, 23, "444", 12, 2, "noise", 5),
    "n16_400_odd": (37, 18, "400", 16, 3, "noise", 6),
    "n16_420": (64, 36, "420", 16, 2, "noise", 7),
    "min8_444": (17, 17, "444", 8, 2, "noise", 31),
    "min16_400": (17, 18, "400", 16, 2, "noise", 32),
    "wide8_400": (1999, 17, "400", 8, 1, "noise", 10),
    "tall10_400": (18, 257, "400", 10, 1, "noise", 11),
    "blur8_420": (64, 48, "420", 8, 2, "blur", 12),
    "blur12_444": (45, 29, "444", 12, 2, "blur", 13),
    "same8_420": (32, 18, "420", 8, 1, "same", 14),
    "same10_444": (17, 17, "444", 10, 1, "same", 15),
    "grey8_444": (19, 18, "444", 8, 1, "grey", 16),
    "grey12_400": (19, 18, "400", 12, 1, "grey", 24),
    "const10_400": (23, 19, "400", 10, 1, "const", 25),
    "const16_420": (24, 20, "420", 16, 1, "const", 17),
    "swing8_444": (18, 18, "444", 8, 1, "swing", 18),
    "swing16_400": (19, 17, "400", 16, 1, "swing", 19),
    "flat10_400": (21, 17, "400", 10, 1, "flat", 21),
    "big8_420": (1920, 1080, "420", 8, 1, "noise", 22),
    "big16_400": (1280, 720, "400", 16, 1, "blur", 23),
}
NETFLIX_PAIRS = _pairs.NETFLIX_PAIRS


def pair_planes(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The reference's and the distorted luma planes of the synthetic pair ``name``, each
    ``(frames, h, w)`` of uint8 (8 bits) or uint16: ``make_float_ansnr_goldens.py``'s
    recipe at this script's sizes."""
    w, h, _, bd, frames, kind, seed = PAIRS[name]
    bits = np.random.Generator(np.random.PCG64(seed)).bit_generator
    top = (1 << bd) - 1
    n = w * h
    dtype = np.uint8 if bd == 8 else np.uint16
    refs, diss = [], []
    for f in range(frames):
        raw = bits.random_raw(2 * n).astype(np.uint64)
        y, x = np.divmod(np.arange(n, dtype=np.int64), w)
        base = ((x * 7 + y * 5 + f * 11) << max(bd - 6, 0)) % (top + 1)
        jitter = (raw[:n] % np.uint64(max(top // 8, 2))).astype(np.int64)
        ref = ((base + jitter) % (top + 1)).reshape(h, w)
        spread = max(top // 16, 2)
        noise = (raw[n:] % np.uint64(2 * spread + 1)).astype(np.int64).reshape(h, w) - spread
        if kind in ("flat", "grey"):
            ref = np.full((h, w), 128 << (bd - 8), np.int64)
        elif kind == "const":
            ref = np.full((h, w), top // 3, np.int64)
        dis = np.clip(ref + noise, 0, top)
        if kind == "blur":
            padded = np.pad(ref, 1, mode="edge")
            dis = sum(padded[i : i + h, j : j + w] for i in range(3) for j in range(3)) // 9
        elif kind in ("same", "grey", "const"):
            dis = ref
        elif kind == "swing":
            ref, dis = np.zeros((h, w), np.int64), np.full((h, w), top, np.int64)
        refs.append(ref.astype(dtype))
        diss.append(dis.astype(dtype))
    return np.stack(refs), np.stack(diss)


def pair_bytes(name: str) -> tuple[bytes, bytes]:
    """The reference's and the distorted file's bytes of the synthetic pair ``name``: each
    frame's luma, then mid-grey chroma where the layout has it."""
    w, h, fmt, bd = PAIRS[name][:4]
    dtype = np.uint8 if bd == 8 else np.dtype("<u2")
    chroma = _pairs._chroma_shape(w, h, fmt)
    grey = b"" if chroma is None else np.full(chroma, 1 << (bd - 1), dtype).tobytes() * 2
    files = []
    for clip in pair_planes(name):
        files.append(b"".join(frame.astype(dtype).tobytes() + grey for frame in clip))
    return files[0], files[1]


def write_pair(name: str, folder: str) -> tuple[str, str]:
    """Write pair ``name`` into ``folder``; the reference's and distorted file's paths."""
    ref, dis = pair_bytes(name)
    paths = (os.path.join(folder, f"{name}_ref.yuv"), os.path.join(folder, f"{name}_dis.yuv"))
    for path, data in zip(paths, (ref, dis), strict=True):
        with open(path, "wb") as f:
            f.write(data)
    return paths


# case name -> (pair, options as KEY=VALUE:...)
OPTION_CASES: dict[str, tuple[str, str]] = {
    "egl1_n8_420": ("n8_420", "adm_enhn_gain_limit=1.0"),
    "egl1.2_blur8_420": ("blur8_420", "adm_enhn_gain_limit=1.2"),
    "nvd5_rdf2160_n10_422": ("n10_422", "adm_norm_view_dist=5.0:adm_ref_display_height=2160"),
    "nw0.5_scf2_n12": ("n12_444_odd", "adm_noise_weight=0.5:adm_csf_scale=2.0"),
    "barten_n8_420": ("n8_420", "adm_csf_mode=1"),
    "barten_scales_n16_420": ("n16_420", "adm_csf_mode=1:adm_csf_scale=1.5:adm_csf_diag_scale=0.7"),
    "admcsf_n8_420": ("n8_420", "adm_csf_mode=2"),
    "csf5_n10_400": ("n10_400_odd", "adm_csf_mode=5"),
    "bcm_blur12": ("blur12_444", "adm_bypass_cm=1"),
    "aah_n8_420": ("n8_420", "adm_adm3_apply_hm=true"),
    "pnorm2.5_n8_420": ("n8_420", "adm_p_norm=2.5"),
    "pnorm1_blur8": ("blur8_420", "adm_p_norm=1.0"),
    "dlmw_min_n16": ("n16_400_odd", "adm_dlm_weight=0.8:adm_min_val=0.9"),
    "factors_n10_422": ("n10_422", "adm_f1s0=0.5:adm_f2s1=2.0:adm_f1s2=0.0:adm_f2s3=7.5"),
    "sasc0_n8_420": ("n8_420", "adm_skip_aim_scale=0"),
    "sasc3_blur8": ("blur8_420", "adm_skip_aim_scale=3"),
    "ssz_n8_420": ("n8_420", "adm_skip_scale0=true"),
    "ssz_min16": ("min16_400", "adm_skip_scale0=true:adm_enhn_gain_limit=1.0"),
    "egl1_netflix_src01_8": ("src01_8", "adm_enhn_gain_limit=1.0"),
}


def name_suffix(options: str) -> str:
    """libvmaf's suffix for the options off their defaults, sorted by option name."""
    defaults = {"adm_enhn_gain_limit": 100.0, "adm_norm_view_dist": 3.0,
                "adm_noise_weight": 0.03125, "adm_csf_scale": 1.0, "adm_csf_diag_scale": 1.0,
                "adm_ref_display_height": 1080, "adm_csf_mode": 0, "adm_bypass_cm": 0,
                "adm_adm3_apply_hm": False, "adm_p_norm": 3.0, "adm_dlm_weight": 0.5,
                "adm_min_val": 0.0, "adm_skip_aim_scale": -1, "adm_skip_scale0": False,
                **{f"adm_f{a}s{s}": -1.0 for a in (1, 2) for s in range(4)}}  # fmt: skip
    given = dict(kv.split("=", 1) for kv in options.split(":") if kv)
    suffix = ""
    for key in sorted(given, key=str.encode):
        typ, alias = TABLE[key]
        text = given[key]
        if typ == "bool":
            if (text == "true") != defaults[key]:
                suffix += f"_{alias}"
        elif typ == "int":
            if int(text) != defaults[key]:
                suffix += f"_{alias}_{int(text):d}"
        elif float(text) != defaults[key]:
            suffix += f"_{alias}_{float(text):g}"
    return suffix


def collector_names(options: str) -> tuple[str, ...]:
    """The names the collector holds for ``float_adm`` with ``options`` and debug on:
    suffixed names are the aliases plus the suffix; ``adm``, not a provided feature,
    keeps its name."""
    suffix = name_suffix(options)
    if not suffix:
        return COLLECTOR
    return tuple(p if p == "adm" else p + suffix for p in PRINTED)


def printed_names(options: str) -> tuple[str, ...]:
    suffix = name_suffix(options)
    return tuple(p if p == "adm" else p + suffix for p in PRINTED)


def _oracle(args: argparse.Namespace, ref: str, dis: str, geometry: tuple, options: str) -> list:
    w, h, fmt, bd = geometry
    names = collector_names(options)
    feature = "float_adm:debug=true" + (":" + options if options else "")
    cmd = [sys.executable, args.oracle, args.libvmaf, ref, dis, str(w), str(h), fmt, str(bd),
           "any", ",".join(names), feature]  # fmt: skip
    runs = [json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            for _ in range(2)]  # fmt: skip
    if json.dumps(runs[0]) != json.dumps(runs[1]):
        raise SystemExit(f"two oracle runs differ: {cmd}")
    frames = runs[0]["frames"]
    if not frames or any(tuple(f) != names for f in frames):
        raise SystemExit(f"the oracle did not give every output: {cmd}")
    printed = printed_names(options)
    return [dict(zip(printed, f.values(), strict=True)) for f in frames]


def _tool(args: argparse.Namespace, ref: str, dis: str, geometry: tuple) -> list:
    """libvmaf's tool's frames (printed names and values) for the pair, with debug."""
    w, h, fmt, bd = geometry
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        cmd = [args.vmaf, "-r", ref, "-d", dis, "-w", str(w), "-h", str(h), "-p", fmt,
               "-b", str(bd), "--feature", "float_adm=debug=true", "-n", "-q",
               "--cpumask", "4294967295", "--json", "-o", out]  # fmt: skip
        subprocess.run(cmd, check=True, capture_output=True)
        with open(out) as f:
            return [frame["metrics"] for frame in json.load(f)["frames"]]


def _printed(value: float) -> float | None:
    return float(f"{value:.6f}") if math.isfinite(value) else None


def _entry(args: argparse.Namespace, ref: str, dis: str, geometry: tuple, options: str) -> dict:
    frames = _oracle(args, ref, dis, geometry, options)
    if geometry[2] != "400" and not options:
        shown = _tool(args, ref, dis, geometry)
        ours = [{k: _printed(v) for k, v in f.items()} for f in frames]
        if shown != ours:
            raise SystemExit(f"libvmaf's tool and the oracle disagree on {ref}")
    return {"options": options, "frames": frames}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--libvmaf", required=True, help="libvmaf 3.2.0 built with float features")
    parser.add_argument("--vmaf", required=True, help="the vmaf tool of the same build")
    parser.add_argument("--oracle", default=DEFAULT_ORACLE)
    parser.add_argument("--netflix", default=DEFAULT_NETFLIX)
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args()
    cases: dict[str, Any] = {}
    pairs: dict[str, Any] = {}
    files: dict[str, tuple[str, str, tuple]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in PAIRS:
            ref, dis = write_pair(name, tmp)
            pairs[name] = {"ref_sha256": _pairs._sha256(ref), "dis_sha256": _pairs._sha256(dis)}
            files[name] = (ref, dis, PAIRS[name][:4])
            cases[name] = {"pair": name, **_entry(args, ref, dis, PAIRS[name][:4], "")}
        for name, (ref, dis, w, h, fmt, bd) in NETFLIX_PAIRS.items():
            ref, dis = (os.path.join(args.netflix, p) for p in (ref, dis))
            pairs[name] = {"ref_sha256": _pairs._sha256(ref), "dis_sha256": _pairs._sha256(dis)}
            files[name] = (ref, dis, (w, h, fmt, bd))
            entry = _entry(args, ref, dis, (w, h, fmt, bd), "")
            cases[f"netflix_{name}"] = {"pair": name, **entry}
        for case, (pair, options) in OPTION_CASES.items():
            ref, dis, geometry = files[pair]
            cases[case] = {"pair": pair, **_entry(args, ref, dis, geometry, options)}
    provenance = {
        "tool": "libvmaf's float_adm (src/feature/float_adm.c, adm.c, adm_tools.c, "
        "adm_tools.h, barten_csf_tools.h, adm_csf_tools.h, picture_copy.c) through the C "
        "API (per-frame values, full precision, debug=true); the vmaf tool's JSON of the "
        "same build checked against them where it reads the pair and there are no options",
        "libvmaf_version": "3.2.0",
        "libvmaf_commit": "Netflix/vmaf f85a853692a8c730d0270cd733c8bb30b5b93b7c (2026-08-14)",
        "build": "meson setup --buildtype release -Ddefault_library=shared "
        "-Denable_asm=false -Denable_float=true -Dbuilt_in_models=true -Denable_tools=true, "
        "gcc 12.2.0 -O3 -std=c11 without -march (no FMA contraction), x86_64",
        "code_path": "scalar C path (SIMD masked); adm_tools.c divides by the SSE rcpss "
        "reciprocal with one Newton step, which is the CPU's: AMD EPYC here",
        "command": "python3 testdata/make_float_adm_goldens.py --libvmaf LIBVMAF_SO "
        "--vmaf VMAF_TOOL",
        "script_sha256": _pairs._sha256(__file__),
        "date": "2026-12-07",
        "names": "the names libvmaf's files print (the collector's aliases), suffixed for "
        "options off their defaults as libvmaf suffixes them",
    }
    doc = {"_provenance": provenance, "pairs": pairs, "cases": cases}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
