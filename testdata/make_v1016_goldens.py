#!/usr/bin/env python3
"""Write testdata/v1016_goldens.json: libvmaf's ``vmaf_v1.0.16_*`` scores and the features
they read, on synthetic 4:2:0 pairs and on the Netflix pairs of ``../shared/netflix``.

Usage::

    python3 testdata/make_v1016_goldens.py --libvmaf LIBVMAF_SO [--oracle ORACLE] \\
        [--models DIR] [--netflix DIR] [--out PATH]

libvmaf is never built here: ``LIBVMAF_SO`` is a libvmaf 3.2.0 shared library built outside
the project (Netflix/vmaf f85a8536, ``-Denable_asm=false``, gcc ``-O3`` without ``-march``),
driven through ctypes by the shared oracle with SIMD masked (the scalar C path). For each
model and pair it runs twice, each a fresh process: ``any`` mode registers the model's four
extractors with the model's options (as ``vmaf_use_features_from_model`` does) and reads
each frame's inputs under the collector names admcuda's loader gives them
(``ModelFeature.collector_name``; a wrong name comes back missing and stops the script);
``model`` mode loads the model file and reads each frame's ``vmaf`` and the pooled scores.

The synthetic pairs (:func:`pair_planes`) are made deterministically with integer
arithmetic and NumPy's PCG64 bit stream (``random_raw``): luma and chroma ramps with a
+-1 grain, the distorted frame quantised; ``flat`` pairs keep both chroma planes at
mid-grey, so speed_chroma is 0 and the models' chroma correction replaces it; ``texture``
pairs add a blocky noise to the chroma, the distorted U plane box-blurred and its V plane
given its own noise, at sizes where every model's prescaled chroma keeps 5x5 blocks.
``SPEED_CASES`` run ``speed_chroma`` alone with every option and weighting mode, its
three outputs kept under the names admcuda prints.
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
sys.path.insert(0, os.path.dirname(HERE))
DEFAULT_NETFLIX = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "netflix"))
DEFAULT_ORACLE = os.path.normpath(
    os.path.join(HERE, "..", "..", "shared", "tools", "libvmaf_vmaf_oracle.py")
)
DEFAULT_MODELS = os.path.join(os.path.dirname(HERE), "admcuda", "model", "data")
OUT = os.path.join(HERE, "v1016_goldens.json")

MODELS = (
    "vmaf_v1.0.16_3d0h",
    "vmaf_v1.0.16_5d0h",
    "vmaf_v1.0.16_1d5h_2160",
    "vmaf_v1.0.16_3d0h_2160",
    "vmaf_v1.0.16_hfr_3d0h",
    "vmaf_v1.0.16_hfr_5d0h",
    "vmaf_v1.0.16_hfr_1d5h_2160",
    "vmaf_v1.0.16_hfr_3d0h_2160",
)

# The models whose speed_chroma does not prescale: libvmaf 3.2.0 crashes (SIGSEGV) in the
# prescaled ones (speed_prescale 0.5, 0.6) where the prescaled chroma plane leaves no 5x5
# block after decimation by 16 (the ramp and flat pairs), so those run on the texture
# and Netflix pairs alone.
UNSCALED = tuple(m for m in MODELS if m.endswith(("_3d0h", "_1d5h_2160")))

# name -> (width, height, bit depth, frames, chroma, seed)
PAIRS: dict[str, tuple[int, int, int, int, str, int]] = {
    "ramp8_320x240": (320, 240, 8, 3, "ramp", 1),
    "ramp10_258x218": (258, 218, 10, 3, "ramp", 2),
    "flat8_256x216": (256, 216, 8, 3, "flat", 3),
    "flat10_300x230": (300, 230, 10, 2, "flat", 4),
    "texture8_1280x720": (1280, 720, 8, 2, "texture", 5),
    "texture10_960x544": (960, 544, 10, 2, "texture", 6),
}

# speed_chroma on the other chroma layouts and depths: name -> (width, height, bit depth,
# pixel format, seed); two frames of textured chroma each
LAYOUT_PAIRS: dict[str, tuple[int, int, int, str, int]] = {
    "layout444_8": (640, 368, 8, "444", 7),
    "layout422_10": (640, 368, 10, "422", 8),
    "layout420_12": (640, 368, 12, "420", 9),
    "layout444_16": (640, 368, 16, "444", 10),
}

# case -> (pair, speed_chroma options): every option and variance weighting mode
SPEED_CASES: dict[str, tuple[str, str]] = {
    "default_8": ("texture8_1280x720", ""),
    "default_10": ("texture10_960x544", ""),
    **{f"mode_{m}": ("texture8_1280x720", f"speed_weight_var_mode={m}") for m in range(1, 7)},
    "bilinear_0.5": ("texture8_1280x720", "speed_prescale=0.5:speed_prescale_method=bilinear"),
    "bilinear_1.3": ("texture10_960x544", "speed_prescale=1.3:speed_prescale_method=bilinear"),
    "nearest_0.75": ("texture8_1280x720", "speed_prescale=0.75"),
    "nearest_1.5": ("texture10_960x544", "speed_prescale=1.5:speed_weight_var_mode=3"),
    "kernelscale_0.5": ("texture8_1280x720", "speed_kernelscale=0.5"),
    "kernelscale_2": ("texture10_960x544", "speed_kernelscale=2"),
    "kernelscale_1.5": ("texture8_1280x720", "speed_kernelscale=1.5:speed_sigma_nn=1.2"),
    "floor_max": ("texture8_1280x720", "speed_nn_floor=0.5:speed_max_val=3"),
    "model_5d0h": (
        "texture10_960x544",
        "speed_nn_floor=0.1:speed_sigma_nn=0.19:speed_weight_var_mode=5:speed_prescale=0.6:"
        "speed_prescale_method=bilinear:speed_max_val=45",
    ),
    "flat_chroma": ("flat10_300x230", ""),
    **{f"{name}": (name, "") for name in LAYOUT_PAIRS},
    "layout422_10_bilinear": ("layout422_10", "speed_prescale=0.8:speed_prescale_method=bilinear"),
}

# pair -> (reference, distorted, width, height, bit depth) in the Netflix folder (4:2:0)
NETFLIX_PAIRS: dict[str, tuple[str, str, int, int, int]] = {
    "src01_8": ("src01_hrc00_576x324_3f.yuv", "src01_hrc01_576x324_3f.yuv", 576, 324, 8),
    "src01_10": (
        "src01_hrc00_576x324.yuv420p10le.yuv",
        "src01_hrc01_576x324.yuv420p10le.yuv",
        576,
        324,
        10,
    ),
}


def _noise(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Integers in {-1, 0, 1} from PCG64's raw 64-bit words."""
    n = shape[0] * shape[1]
    return ((rng.bit_generator.random_raw(n) % np.uint64(3)).astype(np.int64) - 1).reshape(shape)


def _texture(rng: np.random.Generator, shape: tuple[int, int], step: int) -> np.ndarray:
    """A blocky noise texture: 4x4 cells of values in -2*step..2*step."""
    cells = ((shape[0] + 3) // 4, (shape[1] + 3) // 4)
    n = cells[0] * cells[1]
    raw = (rng.bit_generator.random_raw(n) % np.uint64(4 * step + 1)).astype(np.int64) - 2 * step
    return np.kron(raw.reshape(cells), np.ones((4, 4), dtype=np.int64))[: shape[0], : shape[1]]


def _plane(w: int, h: int, k: int, bd: int, phase: int, rng: np.random.Generator) -> np.ndarray:
    """A ramp over a quarter of the range with a moving bump, plus +-1 grain."""
    top = (1 << bd) - 1
    y, x = np.mgrid[0:h, 0:w].astype(np.int64)
    ramp = (x * (3 + phase) + y * 2 + 5 * k) * (top + 1) // (4 * ((3 + phase) * w + 2 * h))
    r2 = (x - w // 3 - 2 * k) ** 2 + (y - h // 2) ** 2
    bump = (top + 1) // 8 * (w * w // 16) // (w * w // 16 + r2)
    return np.clip((top + 1) // 4 + ramp + bump + _noise(rng, (h, w)), 0, top)


def pair_planes(name: str) -> list[tuple[list[np.ndarray], list[np.ndarray]]]:
    """Each frame's reference and distorted planes (Y, U, V), 4:2:0."""
    w, h, bd, frames, chroma, seed = PAIRS[name]
    top = (1 << bd) - 1
    rng = np.random.Generator(np.random.PCG64(seed))
    cw, ch = (w + 1) // 2, (h + 1) // 2
    step = 1 << (bd - 5)
    dtype = np.uint8 if bd == 8 else np.dtype("<u2")
    out = []
    for k in range(frames):
        ref = [_plane(w, h, k, bd, 0, rng)]
        if chroma == "flat":
            ref += [np.full((ch, cw), 1 << (bd - 1), dtype=np.int64)] * 2
        else:
            ref += [_plane(cw, ch, k, bd, p, rng) for p in (1, 2)]
        if chroma == "texture":
            ref[1:] = [np.clip(p + _texture(rng, (ch, cw), step), 0, top) for p in ref[1:]]
        dis = [r // step * step + step // 2 for r in ref[:1]]
        dis += [r // (step // 2) * (step // 2) if chroma != "flat" else r for r in ref[1:]]
        if chroma == "texture":
            # a blurred U plane (a 3x3 box, integer) and a V plane with its own noise
            u = dis[1]
            padded = np.pad(u, 1, mode="edge")
            dis[1] = sum(padded[i : i + ch, j : j + cw] for i in range(3) for j in range(3)) // 9
            dis[2] = np.clip(dis[2] + _texture(rng, (ch, cw), step // 2), 0, top)
        out.append(([p.astype(dtype) for p in ref], [p.astype(dtype) for p in dis]))
    return out


def layout_planes(name: str) -> list[tuple[list[np.ndarray], list[np.ndarray]]]:
    """Each frame's planes of a :data:`LAYOUT_PAIRS` pair: luma as the ramps', textured
    chroma at the layout's size, the distorted chroma given its own noise."""
    w, h, bd, fmt, seed = LAYOUT_PAIRS[name]
    rng = np.random.Generator(np.random.PCG64(seed))
    cw, ch = {"444": (w, h), "422": ((w + 1) // 2, h), "420": ((w + 1) // 2, (h + 1) // 2)}[fmt]
    top = (1 << bd) - 1
    step = 1 << (bd - 5)
    dtype = np.uint8 if bd == 8 else np.dtype("<u2")
    out = []
    for k in range(2):
        ref = [_plane(w, h, k, bd, 0, rng)]
        ref += [
            np.clip(_plane(cw, ch, k, bd, p, rng) + _texture(rng, (ch, cw), step), 0, top)
            for p in (1, 2)
        ]
        dis = [ref[0] // step * step]
        dis += [np.clip(r + _texture(rng, (ch, cw), step // 2), 0, top) for r in ref[1:]]
        out.append(([p.astype(dtype) for p in ref], [p.astype(dtype) for p in dis]))
    return out


def write_pair(name: str, folder: str) -> tuple[str, str]:
    """Write pair ``name`` into ``folder`` as raw planar YUV; the two files' paths."""
    paths = (os.path.join(folder, f"{name}_ref.yuv"), os.path.join(folder, f"{name}_dis.yuv"))
    frames = layout_planes(name) if name in LAYOUT_PAIRS else pair_planes(name)
    for side, path in enumerate(paths):
        with open(path, "wb") as f:
            for frame in frames:
                for plane in frame[side]:
                    f.write(plane.tobytes())
    return paths


def _sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def model_inputs(path: str) -> list[tuple[str, str, dict[str, Any]]]:
    """Each input of the model file: (collector name, extractor, options), admcuda's
    loader reading it with speed_chroma's table added."""
    from admcuda.model import COMPUTED_EXTRACTORS, SPEED_CHROMA, load_model

    model = load_model(None, path, extractors=COMPUTED_EXTRACTORS + (SPEED_CHROMA,))
    return [(f.collector_name, f.extractor, dict(f.options)) for f in model.features]


def _run(cmd: list[str]) -> Any:
    runs = [subprocess.run(cmd, check=True, capture_output=True, text=True).stdout for _ in "ab"]
    if runs[0] != runs[1]:
        raise SystemExit(f"two oracle runs differ: {cmd}")
    return json.loads(runs[0])


def _oracle(args: argparse.Namespace, ref: str, dis: str, geometry: tuple, model: str) -> dict:
    w, h, bd = geometry
    path = os.path.join(args.models, model + ".json")
    inputs = model_inputs(path)
    head = [sys.executable, args.oracle, args.libvmaf, ref, dis, str(w), str(h), "420", str(bd)]
    specs = [
        ":".join([ex] + [f"{k}={_text(v)}" for k, v in opts.items()]) for _, ex, opts in inputs
    ]
    names = [n for n, _, _ in inputs]
    features = _run(head + ["any", ",".join(names), *specs])["frames"]
    for row in features:
        if list(row) != names:
            raise SystemExit(f"the oracle gave {list(row)}, not {names}")
    scored = _run(head + ["model", path])
    frames = [{**f, "vmaf": s["vmaf"]} for f, s in zip(features, scored["frames"], strict=True)]
    return {"frames": frames, "pooled": scored["pooled"]["vmaf"]}


def speed_names(options: str) -> tuple[list[str], list[str]]:
    """speed_chroma's collector names for ``options`` (``KEY=VALUE:...``) and the names
    admcuda prints for them (admcuda.vmaf.speed.output_names)."""
    from admcuda.model import SPEED_CHROMA
    from admcuda.model.features import collector_name, parse_option
    from admcuda.vmaf.plan import parse_feature_arg
    from admcuda.vmaf.speed import FEATURES, output_names

    given = dict(kv.split("=") for kv in options.split(":") if kv)
    values = {k: parse_option(SPEED_CHROMA, k, v, "speed_chroma") for k, v in given.items()}
    collector = [collector_name(f, SPEED_CHROMA, values) for f in FEATURES]
    _, opts = parse_feature_arg("speed_chroma" + (f"={options}" if options else ""))
    return collector, list(output_names(opts))  # type: ignore[arg-type]


def _speed(args: argparse.Namespace, ref: str, dis: str, geometry: tuple, options: str) -> list:
    """speed_chroma's three outputs per frame, under the names admcuda prints."""
    w, h, bd, fmt = geometry
    collector, printed = speed_names(options)
    head = [sys.executable, args.oracle, args.libvmaf, ref, dis, str(w), str(h), fmt, str(bd)]
    spec = "speed_chroma" + (":" + options if options else "")
    frames = _run(head + ["any", ",".join(collector), spec])["frames"]
    for row in frames:
        if list(row) != collector:
            raise SystemExit(f"the oracle gave {list(row)}, not {collector}")
    return [{p: row[c] for p, c in zip(printed, collector, strict=True)} for row in frames]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--libvmaf", required=True, help="libvmaf 3.2.0 shared library")
    parser.add_argument("--oracle", default=DEFAULT_ORACLE)
    parser.add_argument("--models", default=DEFAULT_MODELS)
    parser.add_argument("--netflix", default=DEFAULT_NETFLIX)
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args()
    cases: dict[str, Any] = {}
    pairs: dict[str, Any] = {}
    speed: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (w, h, bd, *_) in PAIRS.items():
            ref, dis = write_pair(name, tmp)
            pairs[name] = {"ref_sha256": _sha256(ref), "dis_sha256": _sha256(dis)}
            for case, (pair, options) in SPEED_CASES.items():
                if pair == name:
                    speed[case] = {
                        "pair": pair,
                        "options": options,
                        "frames": _speed(args, ref, dis, (w, h, bd, "420"), options),
                    }
            for model in MODELS if PAIRS[name][4] == "texture" else UNSCALED:
                cases[f"{name}/{model}"] = {
                    "pair": name,
                    "model": model,
                    **_oracle(args, ref, dis, (w, h, bd), model),
                }
        for name, (w, h, bd, fmt, _) in LAYOUT_PAIRS.items():
            ref, dis = write_pair(name, tmp)
            pairs[name] = {"ref_sha256": _sha256(ref), "dis_sha256": _sha256(dis)}
            for case, (pair, options) in SPEED_CASES.items():
                if pair == name:
                    speed[case] = {
                        "pair": pair,
                        "options": options,
                        "frames": _speed(args, ref, dis, (w, h, bd, fmt), options),
                    }
    for name, (ref, dis, w, h, bd) in NETFLIX_PAIRS.items():
        ref, dis = (os.path.join(args.netflix, p) for p in (ref, dis))
        pairs[name] = {"ref_sha256": _sha256(ref), "dis_sha256": _sha256(dis)}
        for model in MODELS:
            cases[f"{name}/{model}"] = {
                "pair": name,
                "model": model,
                **_oracle(args, ref, dis, (w, h, bd), model),
            }
    provenance = {
        "tool": "libvmaf's vmaf_v1.0.16 models (src/predict.c, read_json_model.c) and their "
        "extractors (cambi.c, speed.c's speed_chroma, integer_adm.c, integer_motion.c) "
        "through the C API: per-frame doubles at full precision, each input under its "
        "collector name, the score as vmaf",
        "libvmaf_version": "3.2.0",
        "libvmaf_commit": "Netflix/vmaf f85a853692a8c730d0270cd733c8bb30b5b93b7c (2026-08-14)",
        "code_path": "scalar C path (asm disabled, SIMD masked), gcc -O3 -std=c11 without -march",
        "command": "python3 testdata/make_v1016_goldens.py --libvmaf LIBVMAF_SO",
        "script_sha256": _sha256(__file__),
        "date": "2026-12-07",
    }
    doc = {"_provenance": provenance, "pairs": pairs, "cases": cases, "speed_chroma": speed}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
