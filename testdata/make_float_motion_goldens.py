#!/usr/bin/env python3
"""Write testdata/float_motion_goldens.json: libvmaf's ``float_motion`` outputs on
synthetic clips and on the Netflix pairs of ``../shared/netflix``, with and without its
options.

Usage::

    python3 testdata/make_float_motion_goldens.py --libvmaf LIBVMAF_SO --vmaf VMAF_TOOL \\
        [--oracle ORACLE] [--netflix DIR] [--out PATH]

libvmaf is never built here. ``float_motion`` is one of libvmaf's float features, which
its build leaves out unless configured with ``-Denable_float=true``: ``LIBVMAF_SO`` is a
libvmaf 3.2.0 shared library built outside the project that way (Netflix/vmaf f85a8536,
``-Denable_asm=false -Denable_float=true``: ``convolution_f32_c_s`` takes its scalar C
path, the AVX one being left out of the build), driven through ctypes by the shared
oracle (``libvmaf_vmaf_oracle.py ... any NAMES float_motion[:KEY=VALUE...]``, SIMD
masked) for every frame's outputs at full precision, twice, each in a fresh process.
The names asked for are the collector's (``VMAF_feature_motion2_score`` ..., or with a
feature parameter off its default the suffixed names, which are printed as they are),
in the order libvmaf's tool prints them. ``VMAF_TOOL`` is the ``vmaf`` tool of the same
build: where it reads the pair (not 4:0:0, which it takes no ``-p`` for), its JSON is
read too and each value it prints must be the oracle's printed with ``%.6f``, under its
printed name.

The synthetic clips are made here (:func:`pair_planes`), deterministically, from NumPy's
PCG64 bit stream (``random_raw``, stable across versions) with integer arithmetic only:

- ``noise``: a gradient with jitter over the bit depth's whole range, moving from frame
  to frame, as the reference; the reference plus bounded noise (clipped) as the
  distorted clip, which ``float_motion`` never reads. Chroma, where the pair has it, is
  noise of its own (read with ``motion_add_uv``).
- ``still``: one noisy frame repeated: every score is exactly 0.
- ``swing``: frames alternating between 0 and the bit depth's peak (chroma too): the
  largest scores, for the caps.

Odd sides are 4:0:0 or 4:4:4 (an odd 4:2:0 height overruns the oracle's pictures); the
smallest pair is 3x3, the least libvmaf's 5-tap filter reads inside. ``motion_add_uv``
with ``motion_add_scale1`` is read on 4:4:4 only: on 4:2:0 and 4:2:2 libvmaf's scaler
reads the half-width chroma pictures at the row stride of their own width while they are
stored at the luma's, so half the rows it reads are memory the blur never wrote (zero in
a fresh allocation; in a reused one anything: the 24x20 4:2:0 pair here scores 10000,
the cap, there).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_NETFLIX = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "netflix"))
DEFAULT_ORACLE = os.path.normpath(
    os.path.join(HERE, "..", "..", "shared", "tools", "libvmaf_vmaf_oracle.py")
)
OUT = os.path.join(HERE, "float_motion_goldens.json")

# name -> (width, height, pixel format, bit depth, frames, kind, seed)
PAIRS: dict[str, tuple[int, int, str, int, int, str, int]] = {
    "n8_400_odd": (33, 17, "400", 8, 5, "noise", 1),
    "n8_420": (48, 32, "420", 8, 4, "noise", 2),
    "n10_400_odd": (35, 19, "400", 10, 4, "noise", 3),
    "n10_422": (40, 24, "422", 10, 3, "noise", 4),
    "n12_444_odd": (21, 23, "444", 12, 3, "noise", 5),
    "n16_400_odd": (37, 18, "400", 16, 4, "noise", 6),
    "n16_420": (64, 36, "420", 16, 3, "noise", 7),
    "min8_400": (3, 3, "400", 8, 3, "noise", 8),
    "one8_444": (20, 18, "444", 8, 1, "noise", 9),
    "two10_420": (24, 20, "420", 10, 2, "noise", 10),
    "still8_420": (32, 18, "420", 8, 3, "still", 11),
    "swing8_444": (19, 17, "444", 8, 4, "swing", 12),
    "swing16_400": (26, 21, "400", 16, 3, "swing", 13),
    "wide8_400": (1999, 9, "400", 8, 3, "noise", 14),
}

# Netflix pairs (read from ../shared/netflix, never copied): name -> (ref, dis, w, h, fmt,
# bit depth)
NETFLIX_PAIRS: dict[str, tuple[str, str, int, int, str, int]] = {
    "src01_8": ("src01_hrc00_576x324_3f.yuv", "src01_hrc01_576x324_3f.yuv", 576, 324, "420", 8),
    "src01_10": (
        "src01_hrc00_576x324.yuv420p10le.yuv", "src01_hrc01_576x324.yuv420p10le.yuv",
        576, 324, "420", 10,
    ),
    "scaled_48f": ("ref_160x90_48f.yuv", "dis_160x90_48f.yuv", 160, 90, "420", 8),
}  # fmt: skip

# case name -> (pair, options as libvmaf's --feature takes them)
CASES: dict[str, tuple[str, str]] = {
    "n8_400_odd": ("n8_400_odd", ""),
    "n8_420": ("n8_420", ""),
    "n8_420_uv": ("n8_420", "motion_add_uv=true"),
    "n8_420_zero": ("n8_420", "motion_force_zero=true"),
    "n8_420_zero_quiet": ("n8_420", "motion_force_zero=true:debug=false"),
    "n8_420_quiet": ("n8_420", "debug=false"),
    "n8_420_scale1": ("n8_420", "motion_add_scale1=true"),
    "n8_420_weights": (
        "n8_420", "motion_fps_weight=2.5:motion_blend_factor=0.5:motion_blend_offset=2",
    ),
    "n10_400_odd": ("n10_400_odd", ""),
    "n10_400_odd_mfs3": ("n10_400_odd", "motion_filter_size=3"),
    "n10_400_odd_mfs1": ("n10_400_odd", "motion_filter_size=1"),
    "n10_400_odd_mfs0": ("n10_400_odd", "motion_filter_size=0"),
    "n10_422_uv": ("n10_422", "motion_add_uv=true"),
    "n12_444_odd": ("n12_444_odd", ""),
    "n12_444_odd_uv_scale1": ("n12_444_odd", "motion_add_uv=true:motion_add_scale1=true"),
    "n16_400_odd": ("n16_400_odd", ""),
    "n16_400_odd_scale1": ("n16_400_odd", "motion_add_scale1=true"),
    "n16_420_uv_mfs3": ("n16_420", "motion_add_uv=true:motion_filter_size=3"),
    "min8_400": ("min8_400", ""),
    "min8_400_mfs3": ("min8_400", "motion_filter_size=3"),
    "one8_444": ("one8_444", ""),
    "one8_444_uv": ("one8_444", "motion_add_uv=true"),
    "two10_420": ("two10_420", ""),
    "still8_420": ("still8_420", ""),
    "swing8_444": ("swing8_444", ""),
    "swing8_444_capped": (
        "swing8_444", "motion_add_uv=true:motion_fps_weight=5:motion_max_val=300",
    ),
    "swing16_400_blend": (
        "swing16_400", "motion_blend_factor=0.25:motion_blend_offset=100:motion_max_val=250.5",
    ),
    "wide8_400": ("wide8_400", ""),
    "wide8_400_scale1": ("wide8_400", "motion_add_scale1=true"),
    "netflix_src01_8": ("src01_8", ""),
    "netflix_src01_8_scale1": ("src01_8", "motion_add_scale1=true"),
    "netflix_src01_10": ("src01_10", ""),
    "netflix_scaled_48f": ("scaled_48f", ""),
    "netflix_scaled_48f_mfs3": ("scaled_48f", "motion_filter_size=3:motion_max_val=2.5"),
}  # fmt: skip

# libvmaf's float_motion option table, as far as names go: option -> (alias, kind, default)
_NAMING = {
    "motion_force_zero": ("force_0", "bool", "false"),
    "motion_fps_weight": ("mfw", "double", 1.0),
    "motion_blend_factor": ("mbf", "double", 1.0),
    "motion_blend_offset": ("mbo", "double", 40.0),
    "motion_add_scale1": ("mdc", "bool", "false"),
    "motion_filter_size": ("mfs", "int", 5),
    "motion_add_uv": ("mau", "bool", "false"),
    "motion_max_val": ("mmxv", "double", 10000.0),
}


def collector_names(options: str) -> list[str]:
    """The collector's names of the outputs, in the order libvmaf's tool prints them:
    ``motion2``, ``motion`` (with ``debug``, on by default), ``motion3``; with
    ``motion_force_zero`` ``motion3`` before ``motion``. A feature parameter off its
    default names them ``motion2_ALIAS[_VALUE]...`` (parameters in alphabetical order)."""
    given = dict(kv.split("=", 1) for kv in options.split(":") if kv)
    suffix = ""
    for name in sorted(_NAMING):
        alias, kind, default = _NAMING[name]
        if name not in given:
            continue
        value = given[name]
        if kind == "bool":
            suffix += f"_{alias}" if value != default else ""
        elif kind == "int":
            suffix += f"_{alias}_{int(value):d}" if int(value) != default else ""
        else:
            suffix += f"_{alias}_{float(value):g}" if float(value) != default else ""

    def name(base: str) -> str:
        return f"{base}{suffix}" if suffix else f"VMAF_feature_{base}_score"

    debug = [name("motion")] if given.get("debug", "true") == "true" else []
    if given.get("motion_force_zero") == "true":
        return [name("motion2"), name("motion3"), *debug]
    return [name("motion2"), *debug, name("motion3")]


def printed(collector: str) -> str:
    """The name libvmaf's writers print for a collector name."""
    if collector.startswith("VMAF_feature_"):
        return collector[len("VMAF_feature_") : -len("_score")]
    return collector


def _chroma_shape(w: int, h: int, fmt: str) -> tuple[int, int] | None:
    """A chroma plane's (rows, columns) as the file holds it (an odd side rounded up)."""
    if fmt == "400":
        return None
    sx, sy = {"420": (1, 1), "422": (1, 0), "444": (0, 0)}[fmt]
    return -(-h >> sy), -(-w >> sx)


def pair_planes(name: str) -> tuple[list[list[np.ndarray]], list[list[np.ndarray]]]:
    """The reference's and the distorted clip of the synthetic pair ``name``: per frame,
    its planes (luma, then Cb and Cr where the pair has them), uint8 (8 bits) or uint16."""
    w, h, fmt, bd, frames, kind, seed = PAIRS[name]
    bits = np.random.Generator(np.random.PCG64(seed)).bit_generator
    top = (1 << bd) - 1
    dtype = np.uint8 if bd == 8 else np.uint16
    shapes = [(h, w)]
    chroma = _chroma_shape(w, h, fmt)
    if chroma is not None:
        shapes += [chroma, chroma]
    refs: list[list[np.ndarray]] = []
    diss: list[list[np.ndarray]] = []
    for f in range(frames):
        ref_planes, dis_planes = [], []
        for p, (ph, pw) in enumerate(shapes):
            n = ph * pw
            raw = bits.random_raw(2 * n).astype(np.uint64)
            y, x = np.divmod(np.arange(n, dtype=np.int64), pw)
            step = 0 if kind == "still" else f
            base = ((x * (7 + p) + y * 5 + step * 11) << max(bd - 6, 0)) % (top + 1)
            if kind == "still" and f:
                ref = refs[0][p].reshape(-1).astype(np.int64)
            elif kind == "swing":
                ref = np.full(n, top if (f + p) % 2 else 0, np.int64)
            else:
                jitter = (raw[:n] % np.uint64(max(top // 8, 2))).astype(np.int64)
                ref = (base + jitter) % (top + 1)
            spread = max(top // 16, 2)
            noise = (raw[n:] % np.uint64(2 * spread + 1)).astype(np.int64) - spread
            dis = np.clip(ref + noise, 0, top)
            ref_planes.append(ref.reshape(ph, pw).astype(dtype))
            dis_planes.append(dis.reshape(ph, pw).astype(dtype))
        refs.append(ref_planes)
        diss.append(dis_planes)
    return refs, diss


def pair_bytes(name: str) -> tuple[bytes, bytes]:
    """The reference's and the distorted file's bytes of the synthetic pair ``name``: each
    frame's planes one after another."""
    bd = PAIRS[name][3]
    dtype = np.uint8 if bd == 8 else np.dtype("<u2")
    files = []
    for clip in pair_planes(name):
        files.append(b"".join(p.astype(dtype).tobytes() for frame in clip for p in frame))
    return files[0], files[1]


def write_pair(name: str, folder: str) -> tuple[str, str]:
    """Write pair ``name`` into ``folder``; the reference's and distorted file's paths."""
    ref, dis = pair_bytes(name)
    paths = (os.path.join(folder, f"{name}_ref.yuv"), os.path.join(folder, f"{name}_dis.yuv"))
    for path, data in zip(paths, (ref, dis), strict=True):
        with open(path, "wb") as f:
            f.write(data)
    return paths


def _sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _oracle(args: argparse.Namespace, ref: str, dis: str, geometry: tuple, options: str) -> list:
    w, h, fmt, bd = geometry
    names = collector_names(options)
    feature = "float_motion" + (f":{options}" if options else "")
    cmd = [sys.executable, args.oracle, args.libvmaf, ref, dis, str(w), str(h), fmt, str(bd),
           "any", ",".join(names), feature]  # fmt: skip
    runs = [json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            for _ in range(2)]  # fmt: skip
    if runs[0] != runs[1]:
        raise SystemExit(f"two oracle runs differ: {cmd}")
    frames = runs[0]["frames"]
    if not frames or any(list(f) != names for f in frames):
        raise SystemExit(f"the oracle did not give every output: {cmd}")
    return [{printed(k): v for k, v in f.items()} for f in frames]


def _tool(args: argparse.Namespace, ref: str, dis: str, geometry: tuple, options: str) -> list:
    """libvmaf's tool's frames (printed names and values) for the pair."""
    w, h, fmt, bd = geometry
    feature = "float_motion" + (f"={options}" if options else "")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        cmd = [args.vmaf, "-r", ref, "-d", dis, "-w", str(w), "-h", str(h), "-p", fmt,
               "-b", str(bd), "--feature", feature, "-n", "-q",
               "--cpumask", "4294967295", "--json", "-o", out]  # fmt: skip
        subprocess.run(cmd, check=True, capture_output=True)
        with open(out) as f:
            return [frame["metrics"] for frame in json.load(f)["frames"]]


def _entry(args: argparse.Namespace, ref: str, dis: str, geometry: tuple, options: str) -> dict:
    frames = _oracle(args, ref, dis, geometry, options)
    if geometry[2] != "400":
        shown = _tool(args, ref, dis, geometry, options)
        ours = [{k: float(f"{v:.6f}") for k, v in f.items()} for f in frames]
        if shown != ours or any(list(s) != list(o) for s, o in zip(shown, ours, strict=True)):
            raise SystemExit(f"libvmaf's tool and the oracle disagree on {ref} {options}")
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
    with tempfile.TemporaryDirectory() as tmp:
        paths: dict[str, tuple[str, str, tuple]] = {}
        for name in PAIRS:
            ref, dis = write_pair(name, tmp)
            pairs[name] = {"ref_sha256": _sha256(ref), "dis_sha256": _sha256(dis)}
            paths[name] = (ref, dis, PAIRS[name][:4])
        for name, (ref, dis, w, h, fmt, bd) in NETFLIX_PAIRS.items():
            ref, dis = (os.path.join(args.netflix, p) for p in (ref, dis))
            pairs[name] = {"ref_sha256": _sha256(ref), "dis_sha256": _sha256(dis)}
            paths[name] = (ref, dis, (w, h, fmt, bd))
        for key, (pair, options) in CASES.items():
            ref, dis, geometry = paths[pair]
            cases[key] = {"pair": pair, **_entry(args, ref, dis, geometry, options)}
    provenance = {
        "tool": "libvmaf's float_motion (src/feature/float_motion.c, motion.c, "
        "common/convolution.c, vif_tools.c, picture_copy.c) through the C API (per-frame "
        "values, full precision); the vmaf tool's JSON of the same build checked against "
        "them where it reads the pair",
        "libvmaf_version": "3.2.0",
        "libvmaf_commit": "Netflix/vmaf f85a853692a8c730d0270cd733c8bb30b5b93b7c (2026-08-14)",
        "build": "meson setup --buildtype release -Ddefault_library=shared "
        "-Denable_asm=false -Denable_float=true -Dbuilt_in_models=true -Denable_tools=true, "
        "gcc 12.2.0, x86_64",
        "code_path": "scalar C path (asm disabled, so convolution_f32_c_s has no AVX path; "
        "SIMD masked)",
        "command": "python3 testdata/make_float_motion_goldens.py --libvmaf LIBVMAF_SO "
        "--vmaf VMAF_TOOL",
        "script_sha256": _sha256(__file__),
        "date": "2026-12-07",
        "names": "printed names (motion2, motion, motion3 and their suffixed forms)",
    }
    doc = {"_provenance": provenance, "pairs": pairs, "cases": cases}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
