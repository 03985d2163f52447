#!/usr/bin/env python3
"""Measure where libvmaf's AVX2/AVX-512 ADM differs from its scalar C (the goldens' path).

Usage::

    python3 testdata/simd_vs_scalar.py --scalar SCALAR_SO --simd SIMD_SO [--workdir DIR]

``SCALAR_SO`` is a libvmaf built with ``-Denable_asm=false``; ``SIMD_SO`` one built with
asm (its x86 SIMD). Every row runs ``../shared/tools/libvmaf_oracle.py`` three times: on
``SCALAR_SO`` (SIMD masked), on ``SIMD_SO`` with ``cpumask=0`` (every instruction set the
CPU has: AVX-512 and AVX2) and with ``cpumask=48`` (AVX-512 masked, so AVX2). It prints a
Markdown table of the largest absolute difference from the scalar C over all frames, of
``integer_adm2`` and of the other scores (``integer_adm3``, ``integer_aim``,
``integer_adm_scale0..3``); "+n NaN" counts values that are NaN on one side only.

Content: the Netflix 576x324 pair from ``../shared/netflix``, pairs of ``generate.py``,
and ``synthetic``: the testdata mosaic resampled to the size, then 8x8 block-quantised
with noise.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import generate as G  # noqa: E402

ORACLE = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "tools", "libvmaf_oracle.py"))
NETFLIX = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "netflix"))
MASKS = {"AVX-512": "0", "AVX2": "48"}  # libvmaf cpumask: bit 4 AVX512, bit 5 AVX512ICL
OTHER = ["integer_adm3", "integer_aim", *(f"integer_adm_scale{k}" for k in range(4))]


def synthetic(outdir: str, w: int, h: int, frames: int, seed: int) -> tuple[str, str]:
    """The 1200x600 mosaic resampled to w x h (moving a little per frame), and a copy
    8x8 block-quantised with noise; 8-bit 4:2:0."""
    src = G.source_luma("mosaic")
    ops = [("block", {"q_dc": 4, "q_ac": 12}), ("noise", {"sigma16": 24})]
    paths = (
        os.path.join(outdir, f"syn{w}x{h}_ref.yuv"),
        os.path.join(outdir, f"syn{w}x{h}_dis.yuv"),
    )
    with open(paths[0], "wb") as fr, open(paths[1], "wb") as fd:
        for i in range(frames):
            ys = np.arange(h, dtype=np.int64) * ((src.shape[0] - 2) * 256 // h) + 64 * i
            xs = np.arange(w, dtype=np.int64) * ((src.shape[1] - 2) * 256 // w) + 96 * i
            y = (G._sample_bilinear(src, ys, xs) * 255 + G.LUMA_WHITE // 2) // G.LUMA_WHITE
            fr.write(G.frame_bytes(y, "420", 8))
            fd.write(G.frame_bytes(G.distort(y, ops, 8, seed * 100 + i), "420", 8))
    return paths


def oracle(so: str, pair, w, h, fmt, bd, options: dict[str, str]) -> list[dict[str, float]]:
    cmd = [sys.executable, ORACLE, so, *pair, str(w), str(h), fmt, str(bd)]
    cmd += [f"{k}={v}" for k, v in options.items()]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["frames"]


def max_diff(a: list[dict], b: list[dict], keys) -> tuple[float, int]:
    worst, nan_one_side = 0.0, 0
    for x, y in zip(a, b, strict=True):
        for k in keys:
            if (x[k] != x[k]) != (y[k] != y[k]):
                nan_one_side += 1
            elif x[k] == x[k]:
                worst = max(worst, abs(x[k] - y[k]))
    return worst, nan_one_side


def cell(d: tuple[float, int]) -> str:
    text = "0" if d[0] == 0 else f"{d[0]:.2g}"
    return text + (f" +{d[1]} NaN" if d[1] else "")


def rows(workdir: str):
    nf = (
        os.path.join(NETFLIX, "src01_hrc00_576x324_3f.yuv"),
        os.path.join(NETFLIX, "src01_hrc01_576x324_3f.yuv"),
    )
    nf_args = ("Netflix src01 8-bit", nf, 576, 324, "420", 8)
    for opts in ({}, {"adm_csf_mode": "2"}, {"adm_csf_mode": "3"}, {"adm_skip_scale0": "true"}):
        yield (*nf_args, opts)
    yield (*nf_args, {"adm_enhn_gain_limit": "1.2"})
    yield (*nf_args, {"adm_csf_mode": "1"})
    for w, h, n in ((1920, 1080, 3), (3840, 2160, 2), (577, 323, 3)):
        pair = synthetic(workdir, w, h, n, w)
        for opts in ({}, {"adm_enhn_gain_limit": "1.2"}, {"adm_csf_mode": "1"}):
            yield ("synthetic 8-bit", pair, w, h, "420", 8, opts)
    names = [
        "mosaic_1919x1079_420_8b_block",
        "mosaic_1280x720_420_10b_rescale",
        "coffee_192x108_420_12b_band",
        "moon_200x120_400_16b_rescale",
        "binnoise_128x96_400_16b_flip",
        "camera_17x200_420_8b_noise",
        "mosaic_1000x33_400_8b_block",
    ]
    big = [n for n in names if not next(c for c in G.PAIRS if c["name"] == n)["committed"]]
    paths = {**G.generate(G.PAIRS_DIR, [n for n in names if n not in big])}
    paths.update(G.generate(workdir, big))
    for n in names:
        c = next(c for c in G.PAIRS if c["name"] == n)
        args = (f"testdata {n}", paths[n], c["w"], c["h"], c["fmt"], c["bitdepth"])
        yield (*args, {})
        if n.startswith("mosaic_1919") or n.startswith("mosaic_1280"):
            yield (*args, {"adm_enhn_gain_limit": "1.2"})
            yield (*args, {"adm_csf_mode": "1"})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scalar", required=True, help="libvmaf built with -Denable_asm=false")
    ap.add_argument("--simd", required=True, help="libvmaf built with asm (x86 SIMD)")
    ap.add_argument("--workdir", default=None)
    a = ap.parse_args(argv)
    tmp = tempfile.TemporaryDirectory(prefix="admcuda_simd_")
    workdir = a.workdir or tmp.name
    os.makedirs(workdir, exist_ok=True)
    print(f"<!-- {platform.processor() or platform.machine()}; oracle {ORACLE} -->")
    print(
        "| content | size | frames | options | adm2, AVX-512 | adm2, AVX2 "
        "| other scores, AVX-512 | other scores, AVX2 |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, pair, w, h, fmt, bd, opts in rows(workdir):
        base = oracle(a.scalar, pair, w, h, fmt, bd, opts)
        cells = {}
        for name, mask in MASKS.items():
            got = oracle(a.simd, pair, w, h, fmt, bd, {**opts, "cpumask": mask})
            cells[name] = (max_diff(base, got, ["integer_adm2"]), max_diff(base, got, OTHER))
        opt = ", ".join(f"{k}={v}" for k, v in opts.items()) or "defaults"
        print(
            f"| {label} | {w}x{h} | {len(base)} | {opt} | {cell(cells['AVX-512'][0])} | "
            f"{cell(cells['AVX2'][0])} | {cell(cells['AVX-512'][1])} | {cell(cells['AVX2'][1])} |",
            flush=True,
        )
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
