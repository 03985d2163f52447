#!/usr/bin/env python3
"""Write testdata/model_goldens.json: libvmaf's outputs for model arguments with options.

Usage::

    python3 testdata/make_model_goldens.py --libvmaf LIBVMAF_SO [--netflix DIR] [--out PATH]

libvmaf is never built here: pass a shared library you built yourself (Netflix/vmaf 3.2.0,
``meson setup build --buildtype release -Denable_asm=false -Denable_float=false``, built-in
models on). Each entry is a ``--model`` argument as libvmaf's ``vmaf`` tool takes it
(``version=`` or ``path=``, ``name=``, ``enable_transform``, ``disable_clip``,
``FEATURE.OPTION=VALUE``) scored on a pair of ``../shared/netflix``. This script drives
libvmaf's public C API through ctypes the way the tool does: it loads the argument as a
model and, where that fails, as a model collection (bootstrap models such as
``vmaf_b_v0.6.3``); applies each ``FEATURE.OPTION=VALUE`` as one feature overload, in
order; registers the features; reads every frame; pools the model's score and then the
collection's; and asks libvmaf to write its JSON output, whose key order it keeps. Every
value that output lists is then read back at full precision (``vmaf_feature_score_at_index``,
``vmaf_feature_score_pooled``). libvmaf's SIMD is masked (its scalar C path).

Each entry runs twice, each in a fresh process, and must give the same doubles both times.
"""

from __future__ import annotations

import argparse
import ctypes as C
import datetime
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_NETFLIX = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "netflix"))
OUT = os.path.join(HERE, "model_goldens.json")

PAIR_48F = ("ref_160x90_48f.yuv", "dis_160x90_48f.yuv", 160, 90, "420", 8)
PAIR_3F = ("src01_hrc00_576x324_3f.yuv", "src01_hrc01_576x324_3f.yuv", 576, 324, "420", 8)

# name -> (pair, --model argument); "{data}" is admcuda/model/data.
ENTRIES: dict[str, tuple[tuple, str]] = {
    "b_v063_160x90": (PAIR_48F, "version=vmaf_b_v0.6.3"),
    "b_v063_576x324": (PAIR_3F, "version=vmaf_b_v0.6.3"),
    "b_v063_path_transform": (
        PAIR_48F,
        "path={data}/vmaf_b_v0.6.3.json:name=phone:enable_transform",
    ),
    "b_v063_transform_noclip": (PAIR_48F, "version=vmaf_b_v0.6.3:enable_transform:disable_clip"),
    "b_v063_noclip_egl": (
        PAIR_48F,
        "version=vmaf_b_v0.6.3:disable_clip:adm.adm_enhn_gain_limit=1.2",
    ),
    "neg_egl_1.2": (PAIR_48F, "version=vmaf_v0.6.1neg:adm.adm_enhn_gain_limit=1.2"),
    "neg_egl_twice": (
        PAIR_48F,
        "version=vmaf_v0.6.1:adm.adm_enhn_gain_limit=1.5:adm.adm_enhn_gain_limit=1.2",
    ),
    "v061_scf_egl": (
        PAIR_48F,
        "version=vmaf_v0.6.1:adm.adm_enhn_gain_limit=1.5:adm.adm_csf_scale=2",
    ),
    "v061_mbf_0.3": (PAIR_48F, "version=vmaf_v0.6.1:motion.motion_blend_factor=0.3"),
}

POOL_METHODS = (1, 2, 3, 4)  # min, max, mean, harmonic_mean
JSON_FORMAT = 2  # VMAF_OUTPUT_FORMAT_JSON
POOL_MEAN = 3


class _Cfg(C.Structure):
    _fields_ = [
        ("log_level", C.c_int),
        ("n_threads", C.c_uint),
        ("n_subsample", C.c_uint),
        ("cpumask", C.c_uint64),
        ("gpumask", C.c_uint64),
    ]


class _Picture(C.Structure):
    _fields_ = [
        ("pix_fmt", C.c_int),
        ("bpc", C.c_uint),
        ("w", C.c_uint * 3),
        ("h", C.c_uint * 3),
        ("stride", C.c_ssize_t * 3),
        ("data", C.c_void_p * 3),
        ("ref", C.c_void_p),
        ("priv", C.c_void_p),
    ]


class _ModelCfg(C.Structure):
    _fields_ = [("name", C.c_char_p), ("flags", C.c_uint64)]


class _CollectionScore(C.Structure):
    _fields_ = [
        ("type", C.c_int),
        ("bagging_score", C.c_double),
        ("stddev", C.c_double),
        ("lo", C.c_double),
        ("hi", C.c_double),
    ]


def _parse_model_arg(text: str) -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
    """The tool's reading of ``--model``: colon-separated KEY=VALUE, flags bare or =true."""
    cfg: dict[str, Any] = {"name": None, "flags": 0}
    overloads = []
    for item in text.split(":"):
        key, _, val = item.partition("=")
        val = val or "true"
        if key in ("path", "version", "name"):
            cfg[key] = val
        elif key == "disable_clip":
            cfg["flags"] |= 1 if val == "true" else 0
        elif key == "enable_transform":
            cfg["flags"] |= 2 if val == "true" else 0
        else:
            feature, option = key.split(".", 1)
            overloads.append((feature, option, val))
    return cfg, overloads


def _collector_name(lib: Any, ctx: Any, printed: str) -> str:
    """The collector name behind a name the JSON output prints (its alias table maps
    ``VMAF_integer_feature_X_score`` to ``integer_X``)."""
    probe = C.c_double()
    if lib.vmaf_feature_score_at_index(ctx, printed.encode(), C.byref(probe), 0) == 0:
        return printed
    if printed.startswith("integer_"):
        name = f"VMAF_integer_feature_{printed[len('integer_') :]}_score"
        if lib.vmaf_feature_score_at_index(ctx, name.encode(), C.byref(probe), 0) == 0:
            return name
    raise SystemExit(f"no collector name found for {printed}")


def run_one(so: str, netflix: str, pair: tuple, model_arg: str) -> dict[str, Any]:
    """One entry through libvmaf, in this process."""
    ref, dis, w, h, fmt, bd = pair
    lib = C.CDLL(so)
    lib.vmaf_feature_score_at_index.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p, C.c_uint]
    lib.vmaf_feature_score_pooled.argtypes = [
        C.c_void_p, C.c_char_p, C.c_int, C.c_void_p, C.c_uint, C.c_uint,
    ]  # fmt: skip
    lib.vmaf_score_pooled.argtypes = [
        C.c_void_p, C.c_void_p, C.c_int, C.c_void_p, C.c_uint, C.c_uint,
    ]  # fmt: skip
    lib.vmaf_score_pooled_model_collection.argtypes = [
        C.c_void_p, C.c_void_p, C.c_int, C.c_void_p, C.c_uint, C.c_uint,
    ]  # fmt: skip
    lib.vmaf_model_feature_overload.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]
    lib.vmaf_model_collection_feature_overload.argtypes = [
        C.c_void_p, C.c_void_p, C.c_char_p, C.c_void_p,
    ]  # fmt: skip
    lib.vmaf_use_features_from_model.argtypes = [C.c_void_p, C.c_void_p]
    lib.vmaf_use_features_from_model_collection.argtypes = [C.c_void_p, C.c_void_p]
    lib.vmaf_read_pictures.argtypes = [C.c_void_p, C.c_void_p, C.c_void_p, C.c_uint]
    lib.vmaf_write_output.argtypes = [C.c_void_p, C.c_char_p, C.c_int]

    ctx = C.c_void_p()
    assert lib.vmaf_init(C.byref(ctx), _Cfg(0, 0, 0, 0xFFFFFFFF, 0)) == 0
    spec, overloads = _parse_model_arg(model_arg)
    name = spec["name"].encode() if spec["name"] else None
    cfg = _ModelCfg(name, spec["flags"])
    model, collection = C.c_void_p(), C.c_void_p()
    if "version" in spec:
        where, load, load_collection = (
            spec["version"].encode(),
            lib.vmaf_model_load,
            lib.vmaf_model_collection_load,
        )
    else:
        where, load, load_collection = (
            spec["path"].encode(),
            lib.vmaf_model_load_from_path,
            lib.vmaf_model_collection_load_from_path,
        )
    is_collection = load(C.byref(model), C.byref(cfg), where) != 0
    if is_collection:
        err = load_collection(C.byref(model), C.byref(collection), C.byref(cfg), where)
        assert err == 0, f"cannot load {model_arg}"
    for feature, option, val in overloads:
        d = C.c_void_p()
        assert lib.vmaf_feature_dictionary_set(C.byref(d), option.encode(), val.encode()) == 0
        if is_collection:
            err = lib.vmaf_model_collection_feature_overload(
                model, C.byref(collection), feature.encode(), d
            )
        else:
            err = lib.vmaf_model_feature_overload(model, feature.encode(), d)
        assert err == 0, f"overload {feature}.{option}={val} refused"
    if is_collection:
        assert lib.vmaf_use_features_from_model_collection(ctx, collection) == 0
    else:
        assert lib.vmaf_use_features_from_model(ctx, model) == 0

    pix = {"420": 1, "422": 2, "444": 3}[fmt]
    bps = 1 if bd == 8 else 2
    cw, ch = (w + 1) // 2, (h + 1) // 2
    frame_size = (w * h + 2 * cw * ch) * bps
    n = 0
    with open(os.path.join(netflix, ref), "rb") as fr, open(os.path.join(netflix, dis), "rb") as fd:
        while True:
            raw = (fr.read(frame_size), fd.read(frame_size))
            if len(raw[0]) < frame_size or len(raw[1]) < frame_size:
                break
            pics = []
            for buf in raw:
                pic = _Picture()
                assert lib.vmaf_picture_alloc(C.byref(pic), pix, bd, w, h) == 0
                offset = 0
                for plane, (pw, ph) in enumerate(((w, h), (cw, ch), (cw, ch))):
                    for row in range(ph):
                        line = buf[offset + row * pw * bps : offset + (row + 1) * pw * bps]
                        C.memmove(pic.data[plane] + row * pic.stride[plane], line, len(line))
                    offset += pw * ph * bps
                pics.append(pic)
            assert lib.vmaf_read_pictures(ctx, C.byref(pics[0]), C.byref(pics[1]), n) == 0
            n += 1
    assert lib.vmaf_read_pictures(ctx, None, None, 0) == 0

    # as the tool: the model's pooled score first, then the collection's
    pooled_score = C.c_double()
    assert lib.vmaf_score_pooled(ctx, model, POOL_MEAN, C.byref(pooled_score), 0, n - 1) == 0
    result: dict[str, Any] = {}
    if is_collection:
        score = _CollectionScore()
        err = lib.vmaf_score_pooled_model_collection(
            ctx, collection, POOL_MEAN, C.byref(score), 0, n - 1
        )
        assert err == 0
        result["collection_pooled_mean"] = {
            "bagging_score": score.bagging_score,
            "stddev": score.stddev,
            "ci_p95_lo": score.lo,
            "ci_p95_hi": score.hi,
        }
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        assert lib.vmaf_write_output(ctx, out.encode(), JSON_FORMAT) == 0
        with open(out) as f:
            written = json.load(f)
    order = list(written["pooled_metrics"])
    assert [list(fr["metrics"]) for fr in written["frames"]] == [order] * n
    collector = {printed: _collector_name(lib, ctx, printed) for printed in order}
    frames = []
    for i in range(n):
        row = []
        for printed in order:
            value = C.c_double()
            err = lib.vmaf_feature_score_at_index(
                ctx, collector[printed].encode(), C.byref(value), i
            )
            assert err == 0
            row.append(value.value)
        frames.append(row)
    pooled = []
    for printed in order:
        methods = []
        for method in POOL_METHODS:
            value = C.c_double()
            err = lib.vmaf_feature_score_pooled(
                ctx, collector[printed].encode(), method, C.byref(value), 0, n - 1
            )
            assert err == 0
            methods.append(value.value)
        pooled.append(methods)
    result.update(
        {
            "collection": is_collection,
            "order": order,
            "frames": frames,
            "pooled": pooled,
            "model_pooled_mean": pooled_score.value,
        }
    )
    return result


def _sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _dumps(doc: dict[str, Any]) -> str:
    """JSON with one line per key of each entry and one per frame."""
    parts = []
    for key, entry in doc.items():
        lines = []
        for field, value in entry.items():
            if field in ("frames", "pooled"):
                rows = ",\n   ".join(json.dumps(row) for row in value)
                lines.append(f"  {json.dumps(field)}: [\n   {rows}\n  ]")
            else:
                lines.append(f"  {json.dumps(field)}: {json.dumps(value)}")
        parts.append(f"{json.dumps(key)}: {{\n" + ",\n".join(lines) + "\n }")
    return "{\n " + ",\n ".join(parts) + "\n}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--libvmaf", required=True, help="a libvmaf 3.2.0 shared library")
    parser.add_argument("--netflix", default=DEFAULT_NETFLIX, help="the shared netflix folder")
    parser.add_argument("--out", default=OUT)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    data = os.path.normpath(os.path.join(HERE, "..", "admcuda", "model", "data"))
    if args.one:
        pair, arg = ENTRIES[args.one]
        json.dump(run_one(args.libvmaf, args.netflix, pair, arg.format(data=data)), sys.stdout)
        return
    entries: dict[str, Any] = {}
    for key, (pair, arg) in ENTRIES.items():
        runs = []
        for _ in range(2):
            cmd = [sys.executable, __file__, "--libvmaf", args.libvmaf, "--one", key]
            cmd += ["--netflix", args.netflix]
            runs.append(json.loads(subprocess.run(cmd, check=True, capture_output=True).stdout))
        if runs[0] != runs[1]:
            raise SystemExit(f"{key}: two runs of libvmaf differ")
        ref, dis, w, h, fmt, bd = pair
        case = {"ref": ref, "dis": dis, "w": w, "h": h, "fmt": fmt, "bitdepth": bd}
        entries[key] = {"case": case, "model": arg, **runs[0]}
        print(key, runs[0]["order"][-1], file=sys.stderr)
    pairs = sorted({p for p, _ in ENTRIES.values()})
    provenance = {
        "tool": "libvmaf 3.2.0's public C API through ctypes (testdata/make_model_goldens.py), "
        "driven as its vmaf tool drives it",
        "libvmaf_version": "3.2.0",
        "libvmaf_commit": "Netflix/vmaf f85a853692a8c730d0270cd733c8bb30b5b93b7c (2026-08-14)",
        "libvmaf_build": "meson setup build --buildtype release -Denable_asm=false "
        "-Denable_float=false -Dbuilt_in_models=true -Ddefault_library=shared (gcc 12.2.0, "
        "x86_64)",
        "code_path": "scalar C path (asm disabled, SIMD masked)",
        "command": "python3 testdata/make_model_goldens.py --libvmaf LIBVMAF_SO",
        "script_sha256": _sha256(__file__),
        "pairs": {name: _sha256(os.path.join(args.netflix, name)) for p in pairs for name in p[:2]},
        "pairs_from": "../shared/netflix (Netflix's VMAF test resources)",
        "model_paths": "{data} in an entry's model is admcuda/model/data",
        "runs": "each entry run twice in separate processes; the two gave the same doubles",
        "date": datetime.date.today().isoformat(),
        "layout": "key -> case, model (the --model argument), collection (loaded as a model "
        "collection), order (the names libvmaf's JSON output lists, in its order), frames "
        "(each name's value per frame), pooled (each name's min, max, mean, harmonic_mean), "
        "model_pooled_mean (vmaf_score_pooled of the model), collection_pooled_mean "
        "(vmaf_score_pooled_model_collection, mean) for collections",
    }
    with open(args.out, "w") as f:
        f.write(_dumps({"_provenance": provenance, **entries}))


if __name__ == "__main__":
    main()
