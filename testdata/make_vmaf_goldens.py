#!/usr/bin/env python3
"""Write testdata/vmaf_goldens.json: libvmaf's VMAF outputs (ADM, VIF, motion, models).

Usage::

    python3 testdata/make_vmaf_goldens.py --libvmaf /path/to/libvmaf.so [--oracle PATH] [--out PATH]

libvmaf is never built here: pass a shared library you built yourself (Netflix/vmaf 3.2.0,
``meson setup build --buildtype release -Denable_asm=false -Denable_float=false``, built-in
models on). Every entry is run through ``shared/tools/libvmaf_vmaf_oracle.py`` (scalar C
path, SIMD masked):

- ``features``: adm, vif and motion registered with ``debug=true``, every output they
  write, per frame; with the entry's options where ``args`` holds some
  (``feature:key=value``).
- ``model``: a built-in model's per-frame score (``vmaf``), the features it reads, and the
  pooled min, max, mean and harmonic mean.

The oracle looks outputs up by libvmaf's default names, and libvmaf names the outputs of an
extractor given a non-default option after that option (``integer_vif_scale0_egl_1``,
``integer_motion2_force_0``; see :func:`output_name`). For entries with options the oracle
runs in a child interpreter whose name list is extended by those names; its code is not
changed, and every expected name must come back.

Each entry runs five times, each in a fresh process: three plain runs, then one each under
``MALLOC_PERTURB_=85`` and ``MALLOC_PERTURB_=170`` (glibc fills each block malloc returns
with that byte). A value that differs between them is listed in ``unstable_fields`` (plain
runs differ) or ``heap_fields`` (only the perturbed ones do) and written as null; with the
pairs chosen here, none does. NaN is written as null and listed in ``nan_fields``.

Pairs at sizes where libvmaf reads memory it never wrote, or outside its buffers, are left
out; ``SKIPPED`` says which and why, and the script reruns them and records what varied.
Option values libvmaf refuses (``REFUSAL_PROBES``) are run too and recorded with the
oracle's last line.
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
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import generate  # noqa: E402

DEFAULT_ORACLE = os.path.normpath(
    os.path.join(HERE, "..", "..", "shared", "tools", "libvmaf_vmaf_oracle.py")
)
ORACLE_TEMPLATE = (
    "python3 ../shared/tools/libvmaf_vmaf_oracle.py LIBVMAF_SO REF DIS W H FMT BITDEPTH "
    "{features [feature:key=value ...] | model MODEL [transform] [noclip]}"
)
LIBVMAF_COMMIT = "f85a853692a8c730d0270cd733c8bb30b5b93b7c"
LIBVMAF_COMMIT_DATE = "2026-08-14"
LIBVMAF_BUILD = (
    "meson setup build --buildtype release -Denable_asm=false -Denable_float=false "
    "-Dbuilt_in_models=true -Denable_tests=false -Denable_docs=false -Denable_tools=false "
    "(gcc 12.2.0, x86_64)"
)
PLAIN_RUNS = 3
RUN_ENVS: list[dict[str, str]] = [{}] * PLAIN_RUNS + [
    {"MALLOC_PERTURB_": "85"},
    {"MALLOC_PERTURB_": "170"},
]

# libvmaf 3.2.0's alias table (feature/alias.c) for the integer outputs the oracle reads:
# an extractor with a non-default option names its outputs after the alias.
ALIASES = {
    "VMAF_integer_feature_adm2_score": "integer_adm2",
    "VMAF_integer_feature_aim_score": "integer_aim",
    "VMAF_integer_feature_adm3_score": "integer_adm3",
    "VMAF_integer_feature_motion_score": "integer_motion",
    "VMAF_integer_feature_motion2_score": "integer_motion2",
    "VMAF_integer_feature_motion3_score": "integer_motion3",
    **{f"VMAF_integer_feature_vif_scale{k}_score": f"integer_vif_scale{k}" for k in range(4)},
}
# The options flagged VMAF_OPT_FLAG_FEATURE_PARAM (integer_vif.c, integer_motion.c):
# name -> (alias, type, default).
FEATURE_PARAMS: dict[str, dict[str, tuple[str, type, Any]]] = {
    "vif": {
        "vif_enhn_gain_limit": ("egl", float, 100.0),
        "vif_skip_scale0": ("ssclz", bool, False),
    },
    "motion": {
        "motion_force_zero": ("force_0", bool, False),
        "motion_blend_factor": ("mbf", float, 1.0),
        "motion_blend_offset": ("mbo", float, 40.0),
        "motion_fps_weight": ("mfw", float, 1.0),
        "motion_max_val": ("mmxv", float, 10000.0),
        "motion_five_frame_window": ("mffw", bool, False),
        "motion_moving_average": ("mma", bool, False),
    },
}
# The oracle, its name list extended by the names given as JSON (argv: oracle, names,
# then the oracle's own arguments).
CHILD = (
    "import importlib.util, json, sys\n"
    "spec = importlib.util.spec_from_file_location('libvmaf_vmaf_oracle', sys.argv[1])\n"
    "m = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(m)\n"
    "m.NAMES = m.NAMES + json.loads(sys.argv[2])\n"
    "sys.argv = [sys.argv[1]] + sys.argv[3:]\n"
    "m.main()\n"
)

# Pairs from generate.FILES, each with a note on what it covers.
PAIRS_USED = {
    "astronaut_160x90_420_8b_boxnoise": "8-bit 4:2:0",
    "chelsea_33x37_422_8b_band": "8-bit 4:2:2, odd and near the smallest defined size",
    "coins_97x55_400_8b_rescale": "8-bit 4:0:0, odd size",
    "chelsea_128x72_444_8b_sharpen": "8-bit 4:4:4, enhancement (sharpened)",
    "mosaic_1000x33_400_8b_block": "wide, the smallest height without undefined reads",
    "binnoise_128x96_400_8b_noise": "full swing, new noise each frame: motion above 40",
    "immunohistochemistry_160x90_422_10b_blockgauss": "10-bit 4:2:2",
    "flat_64x48_400_10b_noise": "flat reference (VIF's non-log branch everywhere)",
    "coffee_192x108_420_12b_band": "12-bit 4:2:0",
    "moon_200x120_400_16b_rescale": "16-bit 4:0:0",
    "moon_33x260_400_16b_noise": "16-bit, tall, odd width 33",
    "binnoise_128x96_400_16b_flip": "16-bit full swing",
    "coffee_112x64_420_10b_blocknoise": "10-bit 4:2:0, 8 frames of real content",
    "chelsea_96x56_422_12b_rescalenoise": "12-bit 4:2:2, 8 frames of real content",
    "camera_80x48_400_8b_rescale": "8-bit 4:0:0, 10 frames, sub-pixel motion and pauses",
    "moon_64x40_444_16b_sharpen": "16-bit 4:4:4, 6 frames, enhancement",
    "astronaut_65x41_420_8b_boxnoise": "8-bit 4:2:0, odd size, 12 frames",
}
SAME = "astronaut_160x90_420_8b_boxnoise"  # also scored against itself
FULL_MODELS = ("astronaut_160x90_420_8b_boxnoise", "coffee_112x64_420_10b_blocknoise")
OPTION_RUNS: list[tuple[str, list[str]]] = [
    ("astronaut_160x90_420_8b_boxnoise", ["vif:vif_enhn_gain_limit=1.0"]),
    ("moon_64x40_444_16b_sharpen", ["vif:vif_enhn_gain_limit=1.0"]),
    ("chelsea_128x72_444_8b_sharpen", ["vif:vif_enhn_gain_limit=1.0"]),
    ("coffee_112x64_420_10b_blocknoise", ["vif:vif_enhn_gain_limit=1.5"]),
    ("chelsea_96x56_422_12b_rescalenoise", ["vif:vif_skip_scale0=true"]),
    ("astronaut_65x41_420_8b_boxnoise", ["motion:motion_force_zero=true"]),
    ("astronaut_65x41_420_8b_boxnoise", ["motion:motion_five_frame_window=true"]),
    ("coffee_112x64_420_10b_blocknoise", ["motion:motion_five_frame_window=true"]),
    ("camera_80x48_400_8b_rescale", ["motion:motion_moving_average=true"]),
    (
        "astronaut_65x41_420_8b_boxnoise",
        ["motion:motion_five_frame_window=true", "motion:motion_moving_average=true"],
    ),
    ("binnoise_128x96_400_8b_noise", ["motion:motion_blend_factor=0.5"]),
    (
        "camera_80x48_400_8b_rescale",
        ["motion:motion_blend_factor=0.25", "motion:motion_blend_offset=3"],
    ),
    ("chelsea_96x56_422_12b_rescalenoise", ["motion:motion_fps_weight=2.5"]),
    ("astronaut_65x41_420_8b_boxnoise", ["motion:motion_max_val=3.5"]),
    (
        "moon_64x40_444_16b_sharpen",
        [
            "motion:motion_fps_weight=4",
            "motion:motion_blend_factor=0.75",
            "motion:motion_blend_offset=2",
            "motion:motion_max_val=5",
            "motion:motion_moving_average=true",
        ],
    ),
    (
        "camera_80x48_400_8b_rescale",
        ["vif:vif_enhn_gain_limit=1.0", "motion:motion_five_frame_window=true"],
    ),
]
# Pairs left out, and why (the behaviour is described in README.md).
SKIPPED = {
    "camera_17x17_420_8b_gauss": "height 17..32: ADM's scale 3 reads a never-written row",
    "astronaut_18x22_444_8b_noise": "height 17..32: ADM's scale 3 reads a never-written row",
    "coffee_24x30_420_8b_block": "height 17..32: ADM's scale 3 reads a never-written row",
    "coffee_200x24_420_8b_gauss": "height 17..32: ADM's scale 3 reads a never-written row",
    "astronaut_640x20_420_8b_sharpen": "height 17..32: ADM's scale 3 reads a never-written row",
    "mosaic_1000x17_400_8b_noise": "height 17..32: ADM's scale 3 reads a never-written row",
    "mosaic_1920x32_400_8b_rescale": "height 17..32: ADM's scale 3 reads a never-written row",
    "camera_20x64_420_8b_noise": "width 17..32: ADM's scale 3 reads column -1, outside its "
    "buffer (repeatable here, but not a defined value)",
    "camera_17x200_420_8b_noise": "width 17..32: ADM's scale 3 reads column -1, outside its "
    "buffer (repeatable here, but not a defined value)",
    "chelsea_17x33_444_8b_band": "width 17..32: ADM's scale 3 reads column -1, outside its "
    "buffer (repeatable here, but not a defined value)",
}
# Option values libvmaf refuses (or ignores), each run on one pair in features mode.
REFUSAL_PROBES: list[list[str]] = [
    ["vif:vif_enhn_gain_limit=0.5"],
    ["vif:vif_enhn_gain_limit=101"],
    ["motion:motion_blend_factor=1.5"],
    ["motion:motion_blend_offset=1001"],
    ["motion:motion_fps_weight=6"],
    ["motion:motion_max_val=10001"],
    ["motion:motion_force_zero=1"],
    ["motion:motion_fps_weight=abc"],
    ["motion:motion_speed=2"],
    ["vif:motion_force_zero=true"],
]
PROBE_PAIR = "camera_80x48_400_8b_rescale"


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _bits(x: float | None) -> bytes | None:
    return None if x is None else struct.pack("<d", x)


def _parse_args(args: list[str]) -> dict[str, dict[str, str]]:
    opts: dict[str, dict[str, str]] = {}
    for item in args:
        feat, kv = item.split(":", 1)
        key, val = kv.split("=", 1)
        opts.setdefault(feat, {})[key] = val
    return opts


def output_name(name: str, feature: str, options: dict[str, str]) -> str:
    """The name libvmaf 3.2.0 gives output ``name`` of ``feature`` run with ``options``.

    With every feature parameter at its default the name is unchanged. Otherwise it is the
    output's alias followed by each non-default parameter in alphabetical order of option
    name: ``_alias`` for a boolean, ``_alias_%g`` of the parsed double otherwise
    (feature/feature_name.c).
    """
    params = FEATURE_PARAMS.get(feature, {})
    parts = []
    for opt in sorted(options):
        if opt not in params:
            continue
        alias, kind, default = params[opt]
        if kind is bool:
            if (options[opt] == "true") != default:
                parts.append(f"_{alias}")
        else:
            value = float(options[opt])
            if value != default:
                parts.append(f"_{alias}_{value:g}")
    if not parts:
        return name
    return ALIASES.get(name, name) + "".join(parts)


def _feature_of(name: str) -> str:
    if "motion" in name:
        return "motion"
    if "vif" in name:
        return "vif"
    return "adm"


def _oracle_names(oracle: str) -> list[str]:
    """The oracle's features-mode name list (its module-level NAMES)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("libvmaf_vmaf_oracle", oracle)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return list(mod.NAMES)


def pair_case(stem: str, same: bool = False) -> dict[str, Any]:
    f = generate.FILES[stem]
    ref, dis = (f"pairs/{n}" for n in generate._file_names(stem))
    return {
        "ref": ref,
        "dis": ref if same else dis,
        "w": f["w"],
        "h": f["h"],
        "fmt": f["fmt"],
        "bitdepth": f["bitdepth"],
    }


def entry_specs() -> list[tuple[str, dict[str, Any], str, list[str]]]:
    """(key, case, mode, args) of every entry, in file order."""
    specs = []
    for stem in PAIRS_USED:
        case = pair_case(stem)
        specs.append((f"{stem}__features", case, "features", []))
        specs.append((f"{stem}__model__vmaf_v0.6.1", case, "model", ["vmaf_v0.6.1"]))
        if stem in FULL_MODELS:
            for model in ("vmaf_v0.6.1neg", "vmaf_4k_v0.6.1", "vmaf_4k_v0.6.1neg"):
                specs.append((f"{stem}__model__{model}", case, "model", [model]))
            specs.append(
                (
                    f"{stem}__model__vmaf_v0.6.1_transform",
                    case,
                    "model",
                    ["vmaf_v0.6.1", "transform"],
                )
            )
        if stem == SAME:
            same = pair_case(stem, same=True)
            name = stem.rsplit("_", 1)[0] + "_same"
            specs.append((f"{name}__features", same, "features", []))
            specs.append((f"{name}__model__vmaf_v0.6.1", same, "model", ["vmaf_v0.6.1"]))
            specs.append(
                (
                    f"{name}__model__vmaf_v0.6.1_transform_noclip",
                    same,
                    "model",
                    ["vmaf_v0.6.1", "transform", "noclip"],
                )
            )
    for stem, args in OPTION_RUNS:
        label = "_".join(a.replace(":", "-").replace("=", "") for a in args)
        specs.append((f"{stem}__features__{label}", pair_case(stem), "features", args))
    return specs


def oracle_command(
    oracle: str, libvmaf: str, case: dict[str, Any], mode: str, args: list[str], extra: list[str]
) -> list[str]:
    tail = [
        libvmaf,
        os.path.join(HERE, case["ref"]),
        os.path.join(HERE, case["dis"]),
        str(case["w"]),
        str(case["h"]),
        case["fmt"],
        str(case["bitdepth"]),
        mode,
        *args,
    ]
    if extra:
        return [sys.executable, "-c", CHILD, oracle, json.dumps(extra), *tail]
    return [sys.executable, oracle, *tail]


def run_entry(
    oracle: str,
    libvmaf: str,
    names: list[str],
    key: str,
    case: dict,
    mode: str,
    args: list[str],
    warn: bool = True,
) -> dict[str, Any]:
    """Run one entry in every RUN_ENVS process and build its golden."""
    opts = _parse_args(args) if mode == "features" else {}
    extra: list[str] = []
    expected: set[str] | None = None
    if mode == "features":
        renamed = [output_name(n, _feature_of(n), opts.get(_feature_of(n), {})) for n in names]
        extra = [n for n in renamed if n not in names]
        expected = set(renamed)
    runs = []
    for env in RUN_ENVS:
        cmd = oracle_command(oracle, libvmaf, case, mode, args, extra)
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **env})
        if proc.returncode:
            last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise RuntimeError(f"{key}: the oracle failed: {last}")
        runs.append(json.loads(proc.stdout))
    first = runs[0]
    if expected is not None:
        got = {k for f in first["frames"] for k in f}
        if got != expected:
            raise RuntimeError(
                f"{key}: outputs {sorted(got ^ expected)} differ from the names expected"
            )
    unstable: set[str] = set()
    heap: set[str] = set()
    for i, row in enumerate(first["frames"]):
        for k, v in row.items():
            if any(_bits(r["frames"][i].get(k)) != _bits(v) for r in runs[1:PLAIN_RUNS]):
                unstable.add(k)
            elif any(_bits(r["frames"][i].get(k)) != _bits(v) for r in runs[PLAIN_RUNS:]):
                heap.add(k)
    if any(r.get("pooled") != first.get("pooled") for r in runs[1:]):
        unstable.add("pooled")
    nan = {k for row in first["frames"] for k, v in row.items() if v is not None and v != v}
    inf = {k for row in first["frames"] for k, v in row.items() if v is not None and math.isinf(v)}
    if inf:
        raise RuntimeError(f"{key}: infinite values in {sorted(inf)}")
    bad = unstable | heap
    frames = [
        {k: (None if k in bad or (v is not None and v != v) else v) for k, v in row.items()}
        for row in first["frames"]
    ]
    entry: dict[str, Any] = {"case": case, "mode": mode, "args": list(args), "frames": frames}
    if "pooled" in first:
        pooled = first["pooled"]
        if any(not math.isfinite(v) for m in pooled.values() for v in m.values()):
            raise RuntimeError(f"{key}: non-finite pooled score {pooled}")
        entry["pooled"] = pooled
    entry["nan_fields"] = sorted(nan)
    entry["unstable_fields"] = sorted(unstable)
    entry["heap_fields"] = sorted(heap)
    if bad and warn:
        print(f"warning: {key}: unstable {sorted(unstable)}, heap {sorted(heap)}", file=sys.stderr)
    return entry


def probe_skipped(oracle: str, libvmaf: str) -> dict[str, Any]:
    """Rerun each left-out pair (features mode) and list the outputs that varied."""
    names = _oracle_names(oracle)
    out = {}
    for stem, why in SKIPPED.items():
        entry = run_entry(oracle, libvmaf, names, stem, pair_case(stem), "features", [], warn=False)
        if entry["unstable_fields"]:
            observed = "outputs differed between plain runs"
        elif entry["heap_fields"]:
            observed = "the same in every plain run, different under MALLOC_PERTURB_"
        else:
            observed = "no output varied between runs"
        out[stem] = {
            "reason": why,
            "observed": observed,
            "varied_between_processes": entry["unstable_fields"],
            "varied_under_malloc_perturb": entry["heap_fields"],
        }
    return out


def probe_refusals(oracle: str, libvmaf: str) -> list[dict[str, Any]]:
    """Run each REFUSAL_PROBES option set; record refusal, or that libvmaf ignored it."""
    case = pair_case(PROBE_PAIR)
    base = subprocess.run(
        oracle_command(oracle, libvmaf, case, "features", [], []),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    out = []
    for args in REFUSAL_PROBES:
        proc = subprocess.run(
            oracle_command(oracle, libvmaf, case, "features", args, []),
            capture_output=True,
            text=True,
        )
        if proc.returncode:
            last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            result = f"refused: vmaf_use_feature failed, oracle exit {proc.returncode}: {last}"
        elif proc.stdout == base:
            result = "accepted and ignored: outputs identical to the default run"
        else:
            result = "accepted: outputs differ from the default run"
        out.append({"pair": PROBE_PAIR, "args": args, "result": result})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--libvmaf", required=True, help="path to a locally built libvmaf.so")
    ap.add_argument(
        "--oracle", default=DEFAULT_ORACLE, help="path to shared/tools/libvmaf_vmaf_oracle.py"
    )
    ap.add_argument("--out", default=os.path.join(HERE, "vmaf_goldens.json"))
    ap.add_argument("--libvmaf-commit", default=LIBVMAF_COMMIT)
    ap.add_argument("--libvmaf-build", default=LIBVMAF_BUILD)
    a = ap.parse_args(argv)

    libvmaf = os.path.abspath(a.libvmaf)
    lib = ctypes.CDLL(libvmaf)
    lib.vmaf_version.restype = ctypes.c_char_p
    version = lib.vmaf_version().decode()
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()

    stems = list(PAIRS_USED) + list(SKIPPED)
    generate.generate(generate.PAIRS_DIR, stems)
    names = _oracle_names(a.oracle)

    out: dict[str, Any] = {}
    files: dict[str, str] = {}
    for key, case, mode, args in entry_specs():
        entry = run_entry(a.oracle, libvmaf, names, key, case, mode, args)
        out[key] = entry
        for role in ("ref", "dis"):
            files[case[role]] = _sha256(os.path.join(HERE, case[role]))
        print(f"{key}: {len(entry['frames'])} frames", file=sys.stderr)
    skipped = probe_skipped(a.oracle, libvmaf)
    refusals = probe_refusals(a.oracle, libvmaf)

    import numpy
    import skimage

    provenance = {
        "tool": "libvmaf 3.2.0 integer adm, vif and motion (debug=true) and its built-in "
        "models, via shared/tools/libvmaf_vmaf_oracle.py (ctypes)",
        "libvmaf_version": version,
        "libvmaf_commit": f"Netflix/vmaf {a.libvmaf_commit} ({LIBVMAF_COMMIT_DATE})",
        "libvmaf_build": a.libvmaf_build,
        "code_path": "scalar C path (asm disabled, SIMD masked by the oracle)",
        "oracle_command": ORACLE_TEMPLATE,
        "oracle_sha256": _sha256(a.oracle),
        "option_runs": "entries whose args hold options run the same oracle in a child "
        "interpreter with its NAMES extended by the names libvmaf gives those outputs "
        "(alias plus one _alias or _alias_%g per non-default feature parameter, sorted by "
        "option name, e.g. integer_vif_scale0_egl_1); every expected name came back",
        "command": "python3 testdata/make_vmaf_goldens.py --libvmaf LIBVMAF_SO",
        "runs": f"each entry run {len(RUN_ENVS)} times in separate processes: {PLAIN_RUNS} "
        "plain, then MALLOC_PERTURB_=85 and MALLOC_PERTURB_=170; values from the first plain "
        "run",
        "date": today,
        "made_by": "testdata/make_vmaf_goldens.py",
        "pairs_made_by": f"testdata/generate.py (numpy {numpy.__version__}, "
        f"scikit-image {skimage.__version__})",
        "layout": "key -> {case: {ref, dis (paths relative to testdata/), w, h, fmt, "
        "bitdepth}, mode, args, frames: [{libvmaf collector name: value}], pooled (model "
        "mode): {vmaf: {min, max, mean, harmonic_mean}}, nan_fields, unstable_fields, "
        "heap_fields}",
        "float_format": "IEEE double, written with Python's shortest round-trip repr",
        "nan_encoding": "NaN is written as null and listed in the entry's nan_fields",
        "unstable_encoding": "a value that differed between runs is written as null and "
        "listed in unstable_fields (plain runs differed) or heap_fields (only the "
        "MALLOC_PERTURB_ runs did); do not compare it",
        "skipped_pairs": skipped,
        "refused_options": refusals,
        "files": dict(sorted(files.items())),
    }
    doc = {"_provenance": provenance, **out}
    text = json.dumps(doc, indent=1, allow_nan=False) + "\n"
    # Every double must come back with the same bits.
    back = json.loads(text)
    for key, entry in out.items():
        for row, brow in zip(entry["frames"], back[key]["frames"], strict=True):
            for k, v in row.items():
                if _bits(v) != _bits(brow[k]):
                    raise RuntimeError(f"{key}: {k} does not round-trip")
    with open(a.out, "w") as fh:
        fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
