#!/usr/bin/env python3
"""Write testdata/float_model_goldens.json: libvmaf's outputs for its float models.

Usage::

    python3 testdata/make_float_model_goldens.py --libvmaf LIBVMAF_SO [--netflix DIR] [--out PATH]

libvmaf is never built here: pass a libvmaf 3.2.0 shared library you built yourself with
its float features (Netflix/vmaf f85a8536, ``meson setup build --buildtype release
-Denable_asm=false -Denable_float=true -Dbuilt_in_models=true``), which builds the
``vmaf_float_*`` models in. Each entry is a ``--model`` argument as libvmaf's ``vmaf`` tool
takes it (a float model by ``version=`` or ``path=``, ``name=``, ``enable_transform``,
``disable_clip``, ``float_adm.OPTION=VALUE`` ...) scored on a pair of ``../shared/netflix``,
driven through libvmaf's C API exactly as ``make_model_goldens.py`` drives it (its
``run_one``: the model or collection loaded, each override applied, every frame read, the
scores pooled, the JSON output's key order kept, every value read back at full
precision, SIMD masked). The float features print under the aliases of their collector
names (``adm2`` for ``VMAF_feature_adm2_score``); this script reads each back under that
collector name. libvmaf's float ADM divides by the CPU's ``rcpss``: the numbers are those
of the CPU that runs this script (an AMD EPYC for the file in the tree).

Each entry runs twice, each in a fresh process, and must give the same doubles both times.
"""

from __future__ import annotations

import argparse
import ctypes as C
import datetime
import json
import os
import platform
import subprocess
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import make_model_goldens as base  # noqa: E402

OUT = os.path.join(HERE, "float_model_goldens.json")

PAIR_48F = base.PAIR_48F
PAIR_3F = base.PAIR_3F
PAIR_10B = (
    "src01_hrc00_576x324.yuv420p10le.yuv",
    "src01_hrc01_576x324.yuv420p10le.yuv",
    576,
    324,
    "420",
    10,
)

# the reference against itself: a ladder's second rung in tests/test_model_float.py
PAIR_3F_SELF = (PAIR_3F[0],) + PAIR_3F[:1] + PAIR_3F[2:]

# name -> (pair, --model argument); "{data}" is admcuda/model/data.
ENTRIES: dict[str, tuple[tuple, str]] = {
    "float_v061_576x324": (PAIR_3F, "version=vmaf_float_v0.6.1"),
    "float_v061_10bit": (PAIR_10B, "version=vmaf_float_v0.6.1"),
    "float_v061_160x90": (PAIR_48F, "version=vmaf_float_v0.6.1"),
    "float_neg_576x324": (PAIR_3F, "version=vmaf_float_v0.6.1neg"),
    "float_neg_160x90": (PAIR_48F, "version=vmaf_float_v0.6.1neg"),
    "float_4k_160x90": (PAIR_48F, "version=vmaf_float_4k_v0.6.1"),
    "float_4k_10bit": (PAIR_10B, "version=vmaf_float_4k_v0.6.1"),
    "float_b_v063_160x90": (PAIR_48F, "version=vmaf_float_b_v0.6.3"),
    "float_b_v063_576x324": (PAIR_3F, "version=vmaf_float_b_v0.6.3"),
    "float_b_v063_576x324_self": (PAIR_3F_SELF, "version=vmaf_float_b_v0.6.3"),
    "float_b_v063_10bit": (PAIR_10B, "version=vmaf_float_b_v0.6.3"),
    "float_b_v063_path_transform_noclip": (
        PAIR_48F,
        "path={data}/vmaf_float_b_v0.6.3.json:name=phone:enable_transform:disable_clip",
    ),
    "float_v061_path_egl": (
        PAIR_48F,
        "path={data}/vmaf_float_v0.6.1.json:name=f:float_adm.adm_enhn_gain_limit=1.2",
    ),
    "float_neg_vif_egl_1.5": (
        PAIR_48F,
        "version=vmaf_float_v0.6.1neg:float_vif.vif_enhn_gain_limit=1.5",
    ),
    "float_v061_mbf_0.3_ks": (
        PAIR_48F,
        "version=vmaf_float_v0.6.1:float_motion.motion_blend_factor=0.3"
        ":float_vif.vif_kernelscale=0.5",
    ),
}  # fmt: skip


def _collector_name(lib: Any, ctx: Any, printed: str) -> str:
    """The collector name behind a name the JSON output prints: itself, or the name
    libvmaf's alias table (alias.c) prints as ``X`` (``VMAF_feature_X_score``) or
    ``integer_X`` (``VMAF_integer_feature_X_score``)."""
    probe = C.c_double()
    candidates = [printed, f"VMAF_feature_{printed}_score"]
    if printed.startswith("integer_"):
        candidates.append(f"VMAF_integer_feature_{printed[len('integer_') :]}_score")
    for name in candidates:
        if lib.vmaf_feature_score_at_index(ctx, name.encode(), C.byref(probe), 0) == 0:
            return name
    raise SystemExit(f"no collector name found for {printed}")


def _cpu() -> str:
    """The CPU's model name (its rcpss table decides float_adm's divisions)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return f"{line.split(':', 1)[1].strip()} ({platform.machine()})"
    except OSError:
        pass
    return platform.machine()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--libvmaf", required=True, help="a libvmaf 3.2.0 shared library")
    parser.add_argument("--netflix", default=base.DEFAULT_NETFLIX, help="the netflix folder")
    parser.add_argument("--out", default=OUT)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    data = os.path.normpath(os.path.join(HERE, "..", "admcuda", "model", "data"))
    if args.one:
        pair, arg = ENTRIES[args.one]
        # make_model_goldens.run_one resolves printed names through this module's reading
        base._collector_name = _collector_name
        json.dump(base.run_one(args.libvmaf, args.netflix, pair, arg.format(data=data)), sys.stdout)
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
        print(key, runs[0]["order"][-1], runs[0]["model_pooled_mean"], file=sys.stderr)
    pairs = sorted({p for p, _ in ENTRIES.values()})
    provenance = {
        "tool": "libvmaf 3.2.0's public C API through ctypes (testdata/make_float_model_goldens.py "
        "over make_model_goldens.run_one), driven as its vmaf tool drives it",
        "libvmaf_version": "3.2.0",
        "libvmaf_commit": "Netflix/vmaf f85a853692a8c730d0270cd733c8bb30b5b93b7c (2026-08-14)",
        "libvmaf_build": "meson setup build --buildtype release -Denable_asm=false "
        "-Denable_float=true -Dbuilt_in_models=true -Ddefault_library=shared (x86_64)",
        "code_path": "scalar C path with its float features (asm disabled, SIMD masked); "
        "float_adm divides by the CPU's rcpss",
        "cpu": _cpu(),
        "command": "python3 testdata/make_float_model_goldens.py --libvmaf LIBVMAF_SO",
        "script_sha256": base._sha256(__file__),
        "base_script_sha256": base._sha256(base.__file__),
        "pairs": {
            name: base._sha256(os.path.join(args.netflix, name)) for p in pairs for name in p[:2]
        },
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
        f.write(base._dumps({"_provenance": provenance, **entries}))


if __name__ == "__main__":
    main()
