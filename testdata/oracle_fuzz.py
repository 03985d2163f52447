"""Random pairs, sizes, bit depths, layouts and options: ``admcuda score`` against libvmaf.

Each case is drawn from a seed: a size from 17x17 up, a pixel format, a bit depth, a
reference (a moving window of a scikit-image sample image, a full-swing pattern or a flat
field), a chain of one to three of ``generate.py``'s distortions, and zero to four ADM
options drawn inside libvmaf's ranges. Both files are written raw; libvmaf's scalar C path
scores them through ``../shared/tools/libvmaf_oracle.py`` (over a libvmaf you built
yourself), and ``admcuda score --json --debug`` (the CLI, ``--backend`` as given) scores
them too. Every output of every frame must be the same double (NaN equal to NaN), under
the name libvmaf gives it, except the outputs libvmaf computes from memory it never
initialised (``make_goldens.predicted_undefined``).

    python3 testdata/oracle_fuzz.py --libvmaf /path/to/libvmaf.so --cases 200 --seed 1

Prints one line per case that differs (with the seed that remakes it) and a summary;
exits 1 if any case differs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import generate  # noqa: E402
import make_goldens  # noqa: E402

from admcuda.options import OPTIONS, feature_suffix, resolve_options  # noqa: E402

IMAGES = ("camera", "astronaut", "coffee", "chelsea", "coins", "moon", "mosaic")
PATTERNS = ("noise", "check", "vstripe", "hstripe", "dstripe")
FORMATS = ("420", "422", "444", "400")
BITDEPTHS = (8, 10, 12, 16)


def _distortion(rng: np.random.Generator) -> tuple[str, dict[str, Any]]:
    op = str(rng.choice(["gauss5", "box", "noise", "block", "rescale", "band", "flip", "sharpen"]))
    if op == "box":
        return op, {"n": int(rng.integers(2, 5))}
    if op == "noise":
        return op, {"sigma16": int(rng.integers(4, 400))}
    if op == "block":
        return op, {"q_dc": int(rng.integers(1, 12)), "q_ac": int(rng.integers(1, 40))}
    if op == "rescale":
        return op, {
            "factor": int(rng.integers(2, 4)),
            "down": str(rng.choice(["box", "nearest"])),
            "up": str(rng.choice(["bilinear", "nearest"])),
        }
    if op == "band":
        return op, {"step": int(rng.integers(2, 24))}
    if op == "flip":
        return op, {"per_mille": int(rng.integers(1, 200))}
    if op == "sharpen":
        return op, {"num": int(rng.integers(1, 6)), "den": int(rng.integers(1, 4))}
    return op, {}


def _value(spec: Any, rng: np.random.Generator) -> str:
    if spec.type == "bool":
        return "true" if spec.default is False else "false"
    lo, hi = float(spec.min), float(spec.max)
    if rng.random() < 0.2:  # the range's ends
        v = lo if rng.random() < 0.5 else hi
    elif hi - lo > 100 and rng.random() < 0.7:  # wide ranges: mostly near the default
        v = float(spec.default) * float(rng.choice([0.25, 0.5, 0.9, 1.1, 2.0, 4.0]))
        v = min(max(v, lo), hi)
    else:
        v = lo + (hi - lo) * rng.random()
    if spec.type == "int":
        return str(int(round(v)))
    return f"{float(f'{v:.3g}'):g}"


def _options(rng: np.random.Generator) -> dict[str, str]:
    specs = [s for s in OPTIONS if s.name != "debug"]
    out: dict[str, str] = {}
    for k in rng.choice(len(specs), size=int(rng.integers(0, 5)), replace=False):
        value = _value(specs[k], rng)
        if specs[k].type == "bool" or float(value) != float(specs[k].default):
            out[specs[k].name] = value  # a default given names the outputs as the oracle cannot
    nvd = float(out.get("adm_norm_view_dist", 3.0))
    rdh = float(out.get("adm_ref_display_height", 1080))
    if nvd * rdh < 3 * 1080:  # libvmaf refuses these: keep the drawn one, fix the other
        out.pop("adm_ref_display_height", None)
        if nvd * 1080 < 3 * 1080:
            out["adm_ref_display_height"] = str(int(math.ceil(3 * 1080 / nvd)))
    return out


def _long_text(value: str, spec: Any, rng: np.random.Generator) -> str:
    """``value`` (a double option's text, at most 6 significant digits) written with 10,
    off by 0.15 to 0.35 of its sixth digit's unit: libvmaf keeps strtof of it printed
    with %g, that is ``value`` again (the offset keeps clear of a rounding boundary even
    after float32's error), where a reader of the full decimal would compute with more.
    ``value`` itself where it is 0 or the default (the oracle could then miss the names)."""
    v = float(value)
    if v == 0 or v == float(spec.default):
        return value
    unit = 10.0 ** (math.floor(math.log10(abs(v))) - 5)
    off = float(rng.uniform(0.15, 0.35)) * unit * (1 if rng.random() < 0.5 else -1)
    text = f"{v + off:.10g}"
    lo, hi = float(spec.min), float(spec.max)
    return text if lo <= float(text) <= hi and f"{float(text):g}" == f"{v:g}" else value


def draw_case(seed: int, large: bool = False, long_values: bool = False) -> dict[str, Any]:
    """One random case, the same for the same seed (``large``: frames from 1000x400 to
    1920x1080, one or two of them; ``long_values``: double options written with 10
    significant digits, drawn from a stream of their own, so that the case is otherwise
    the one the seed gives without it)."""
    rng = np.random.default_rng([seed, 7])
    kind = rng.random()
    if large:
        w, h = int(rng.integers(1000, 1921)), int(rng.integers(400, 1081))
    elif kind < 0.3:
        w, h = int(rng.integers(17, 65)), int(rng.integers(17, 65))
    elif kind < 0.9:
        w, h = int(rng.integers(17, 420)), int(rng.integers(17, 260))
    else:
        w, h = int(rng.integers(400, 1000)), int(rng.integers(17, 120))
    fmt = str(rng.choice(FORMATS))
    bitdepth = int(rng.choice(BITDEPTHS))
    frames = int(rng.integers(1, 3 if large else 4))
    spec: dict[str, Any] = {"w": w, "h": h, "fmt": fmt, "bitdepth": bitdepth, "frames": frames}
    spec["seed"] = seed
    content = rng.random()
    if content < 0.15:
        spec["pattern"] = (str(rng.choice(PATTERNS)), int(rng.integers(1, 5)))
    elif content < 0.2:
        spec["flat"] = int(rng.integers(0, 256))
    else:
        image = str(rng.choice(IMAGES))
        src = generate.source_luma(image)
        sh, sw = src.shape
        shift = (int(rng.integers(0, 6)) << 8, int(rng.integers(0, 6)) << 8)
        room_y = (sh - 1 - (frames - 1) * (shift[0] >> 8)) * 256 // max(h, 1)
        room_x = (sw - 1 - (frames - 1) * (shift[1] >> 8)) * 256 // max(w, 1)
        step = int(rng.integers(64, max(min(room_y, room_x, 1024), 65)))
        y_span = step * (h - 1) + (frames - 1) * shift[0]
        x_span = step * (w - 1) + (frames - 1) * shift[1]
        oy = int(rng.integers(0, max((sh - 1) * 256 - y_span, 1)))
        ox = int(rng.integers(0, max((sw - 1) * 256 - x_span, 1)))
        spec.update(image=image, step=step, origin=(oy, ox), shift=shift)
    spec["ops"] = [_distortion(rng) for _ in range(int(rng.integers(1, 4)))]
    spec["options"] = _options(rng)
    if long_values:
        digits = np.random.default_rng([seed, 11])
        by_name = {o.name: o for o in OPTIONS}
        spec["options"] = {
            k: _long_text(v, by_name[k], digits) if by_name[k].type == "double" else v
            for k, v in spec["options"].items()
        }
    spec["name"] = f"fuzz{seed}_{w}x{h}_{fmt}_{bitdepth}b"
    return spec


def _write(spec: dict[str, Any], folder: str) -> tuple[str, str]:
    ref_frames, dis_frames = [], []
    for f in range(spec["frames"]):
        ref = generate.render_frame_luma(spec, f, spec["bitdepth"], spec["w"], spec["h"])
        dis = generate.distort(ref, spec["ops"], spec["bitdepth"], spec["seed"] * 64 + f)
        ref_frames.append(generate.frame_bytes(ref, spec["fmt"], spec["bitdepth"]))
        dis_frames.append(generate.frame_bytes(dis, spec["fmt"], spec["bitdepth"]))
    paths = (os.path.join(folder, "ref.yuv"), os.path.join(folder, "dis.yuv"))
    for path, data in zip(paths, (ref_frames, dis_frames), strict=True):
        with open(path, "wb") as fh:
            fh.write(b"".join(data))
    return paths


def admcuda_frames(spec: dict[str, Any], ref: str, dis: str, backend: str) -> list[dict]:
    out = os.path.join(os.path.dirname(ref), "adm.json")
    cmd = [sys.executable, "-m", "admcuda", "score", ref, dis, "-w", str(spec["w"]),
           "-h", str(spec["h"]), "-p", spec["fmt"], "-b", str(spec["bitdepth"]),
           "--backend", backend, "--debug", "--json", "-o", out, "-q"]  # fmt: skip
    for k, v in sorted(spec["options"].items()):
        cmd += ["--option", f"{k}={v}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"admcuda score failed: {proc.stderr.strip()[-300:]}")
    with open(out) as fh:
        return [f["metrics"] for f in json.load(fh)["frames"]]


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:  # admcuda writes NaN as null
        return (a is None or (isinstance(a, float) and math.isnan(a))) and (
            b is None or (isinstance(b, float) and math.isnan(b))
        )
    return float(a) == float(b) or (math.isnan(float(a)) and math.isnan(float(b)))


class SkipCase(Exception):
    """A drawn case that cannot be made."""


def check_case(spec: dict[str, Any], libvmaf: str, oracle: str, backend: str) -> list[str]:
    """The differences of one case (empty when every output is the same)."""
    with tempfile.TemporaryDirectory(prefix="admfuzz-") as folder:
        try:
            ref, dis = _write(spec, folder)
        except ValueError as exc:  # a drawn window that leaves its image: not a case
            raise SkipCase(str(exc)) from None
        want = make_goldens.run_oracle(oracle, libvmaf, spec, ref, dis, {})
        got = admcuda_frames(spec, ref, dis, backend)
    undefined = make_goldens.predicted_undefined(spec, want)
    suffix = feature_suffix(resolve_options(spec["options"]))
    diffs = []
    if len(got) != len(want):
        return [f"{len(got)} frames against libvmaf's {len(want)}"]
    for n, (g, w) in enumerate(zip(got, want, strict=True)):
        for base, value in sorted(w.items()):
            if base in undefined:
                continue
            key = base + suffix
            if key not in g:
                diffs.append(f"frame {n}: no {key} (has {sorted(g)[:3]}...)")
            elif not _same(g[key], value):
                diffs.append(f"frame {n}: {key} {g[key]!r} against libvmaf's {value!r}")
    return diffs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--libvmaf", required=True, help="a libvmaf shared library you built")
    ap.add_argument("--oracle", default=make_goldens.DEFAULT_ORACLE)
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0, help="first case's seed (then +1 each)")
    ap.add_argument("--backend", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--large", action="store_true", help="frames from 1000x400 to 1920x1080")
    ap.add_argument(
        "--long-values", action="store_true",
        help="double options written with 10 significant digits (libvmaf reads 6)",
    )  # fmt: skip
    a = ap.parse_args(argv)
    bad, skipped, t0 = 0, 0, time.time()
    for seed in range(a.seed, a.seed + a.cases):
        spec = draw_case(seed, a.large, a.long_values)
        try:
            diffs = check_case(spec, a.libvmaf, a.oracle, a.backend)
        except SkipCase:
            skipped += 1
            continue
        except (RuntimeError, subprocess.CalledProcessError, ValueError) as exc:
            diffs = [f"failed: {str(exc).strip().splitlines()[-1][:300]}"]
        if diffs:
            bad += 1
            print(f"seed {seed} {spec['name']} {spec['options']} {spec['ops']}: "
                  f"{len(diffs)} differences; first: {diffs[0]}", flush=True)  # fmt: skip
    size = (", large" if a.large else "") + (", long values" if a.long_values else "")
    print(f"{a.cases} cases from seed {a.seed} ({a.backend}{size}): {bad} differ, "
          f"{skipped} not made, {time.time() - t0:.0f} s")  # fmt: skip
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
