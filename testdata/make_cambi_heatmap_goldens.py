"""Write ``testdata/cambi_heatmap_goldens.json``: the files libvmaf's ``cambi`` writes with
``heatmaps_path`` (one per scale, ``cambi_heatmap_scale_S_WxH_16b.gray``: each frame's
contrast values as native uint16, frame after frame), recorded as their names, sizes and
sha256, for synthetic pairs of ``make_cambi_goldens.py``.

It runs the ``vmaf`` tool of a libvmaf 3.2.0 you built (outside this project) on its scalar
C path (``--cpumask`` masking every SIMD flag), once per case, with ``--feature
cambi=heatmaps_path=DIR[:OPTIONS] -n``, the pairs' luma planes given flat 4:2:0 chroma
(CAMBI reads the luma alone):

    python3 testdata/make_cambi_heatmap_goldens.py --vmaf PATH/TO/tools/vmaf

The test (tests/test_cambi_map.py) computes the same maps with admcuda's kernels, converts
them as libvmaf does (:func:`admcuda.compiled.cambi.heatmap_16bit`) and compares the
digests.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "cambi_heatmap_goldens.json"
SCALAR = "4294967295"  # --cpumask: every SIMD flag masked

# case -> (pair of make_cambi_goldens.PAIRS, cambi options)
CASES = {
    "band8_320x240": ("band8_320x240", ""),
    "band8_320x240_window_33": ("band8_320x240", "window_size=33"),
    "band10_480x270_mlc_4": ("band10_480x270", "max_log_contrast=4"),
    "band10_480x270_enc_scaled": ("band10_480x270", "enc_width=401:enc_height=227"),
    "band12_400x300": ("band12_400x300", ""),
    "band8_1920x1080_speedup": ("band8_1920x1080", "cambi_high_res_speedup=1080"),
}


def maker():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("cambi_maker", HERE / "make_cambi_goldens.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def run_case(vmaf: str, pair: str, options: str, folder: str) -> dict[str, dict[str, object]]:
    m = maker()
    width, height, bitdepth = m.PAIRS[pair][:3]
    # libvmaf's tool reads 4:2:0 at least: each luma plane gets flat chroma planes (the
    # pairs are of even sizes, which the tool's reader and ours agree on)
    ref_planes, dis_planes = m.pair_planes(pair)
    chroma = np.full(2 * (width // 2) * (height // 2), 1 << (bitdepth - 1))
    dtype = np.uint8 if bitdepth == 8 else np.dtype("<u2")
    ref, dis = os.path.join(folder, "ref.yuv"), os.path.join(folder, "dis.yuv")
    for path, planes in ((ref, ref_planes), (dis, dis_planes)):
        with open(path, "wb") as f:
            for plane in planes:
                f.write(plane.astype(dtype).tobytes())
                f.write(chroma.astype(dtype).tobytes())
    maps = os.path.join(folder, "maps")
    feature = f"cambi=heatmaps_path={maps}" + (f":{options}" if options else "")
    cmd = [
        vmaf, "-r", ref, "-d", dis, "-w", str(width), "-h", str(height), "-p", "420",
        "-b", str(bitdepth), "--feature", feature, "-n", "--cpumask", SCALAR,
        "--json", "-o", os.path.join(folder, "out.json"), "-q",
    ]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True)
    files = {}
    for name in sorted(os.listdir(maps)):
        data = Path(maps, name).read_bytes()
        files[name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vmaf", required=True, help="libvmaf 3.2.0's vmaf tool")
    parser.add_argument("--commit", default="Netflix/vmaf f85a853692a8c730d0270cd733c8bb30b5b93b7c")
    args = parser.parse_args()
    cases = {}
    for case, (pair, options) in CASES.items():
        with tempfile.TemporaryDirectory() as folder:
            cases[case] = {"pair": pair, "options": options,
                           "files": run_case(args.vmaf, pair, options, folder)}  # fmt: skip
        print(case, len(cases[case]["files"]), file=sys.stderr)
    doc = {
        "_provenance": {
            "tool": "libvmaf's vmaf tool, --feature cambi=heatmaps_path=DIR[:OPTIONS] -n, "
            "the files it writes recorded by name, size and sha256",
            "libvmaf_version": "3.2.0",
            "libvmaf_commit": args.commit,
            "code_path": f"scalar C path (--cpumask {SCALAR})",
            "command": "python3 testdata/make_cambi_heatmap_goldens.py --vmaf VMAF_TOOL",
            "script_sha256": hashlib.sha256(Path(__file__).read_bytes()).hexdigest(),
            "date": datetime.date.today().isoformat(),
        },
        "cases": cases,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
