"""Make the NVDEC test encodes and ``nvdec.json``: ffmpeg's luma hashes and reference scores.

Run from the repository root, where imageio-ffmpeg and admcuda import::

    python3 testdata/nvdec/make_nvdec.py                 # encodes, hashes and scores
    python3 testdata/nvdec/make_nvdec.py --scores-only   # the scores alone, encodes kept

Each encode is a few seconds of lavfi ``testsrc2`` with temporal noise (every frame differs
everywhere, so a dropped, repeated or reordered frame changes a hash), encoded with B-frames
or alt-ref frames, so that decode order differs from display order. For every file,
``nvdec.json`` records its sha256, ffmpeg's frame count and the sha256 of each frame's luma
as ffmpeg decodes it (``LUMA_COMMAND``). For each pair in ``PAIRS`` it records libvmaf's 18
ADM outputs per frame, computed by ``admcuda.reference.compute_adm`` on those ffmpeg planes.

The encoders are not guaranteed to give the same bytes on another build: rerunning this
rewrites the files and the JSON together.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

FRAME_RATE = 30
NOISE = "noise=alls=5:allf=t:all_seed=12345"
X265 = "bframes=4:b-pyramid=1:keyint=24:min-keyint=24:log-level=error"

# required: NVDEC must decode it on any NVIDIA GPU this project targets (H.264 and HEVC);
# AV1 and VP9 are tested where the device and the binding support them.
SPECS: list[dict] = [
    dict(
        name="h264_8b_320x180.mp4", codec="H264", required=True, size=(320, 180), frames=48,
        pix_fmt="yuv420p",
        args=["-c:v", "libx264", "-preset", "medium", "-crf", "30", "-bf", "3",
              "-b-pyramid", "normal", "-g", "24"],
        note="coded 320x192 (12 macroblock rows), 12 rows cropped; B-pyramid",
    ),
    dict(
        name="h264_8b_352x288.mkv", codec="H264", required=True, size=(352, 288), frames=40,
        pix_fmt="yuv420p",
        args=["-c:v", "libx264", "-preset", "medium", "-crf", "30", "-bf", "2", "-g", "20"],
        note="Matroska; coded size equals display size",
    ),
    dict(
        name="hevc_8b_320x180.mp4", codec="HEVC", required=True, size=(320, 180), frames=48,
        pix_fmt="yuv420p",
        args=["-c:v", "libx265", "-preset", "fast", "-crf", "32", "-x265-params", X265,
              "-tag:v", "hvc1"],
        note="coded 320x184, conformance window 4 rows; B-pyramid",
    ),
    dict(
        name="hevc_10b_320x180.mp4", codec="HEVC", required=True, size=(320, 180), frames=48,
        pix_fmt="yuv420p10le",
        args=["-c:v", "libx265", "-preset", "fast", "-crf", "26", "-x265-params", X265,
              "-tag:v", "hvc1"],
        note="Main 10, coded 320x184",
    ),
    dict(
        name="hevc_10b_320x180_q40.mkv", codec="HEVC", required=True, size=(320, 180),
        frames=48, pix_fmt="yuv420p10le",
        args=["-c:v", "libx265", "-preset", "fast", "-crf", "40", "-x265-params", X265],
        note="Main 10 in Matroska, low quality: the distorted side of the 10-bit pair",
    ),
    dict(
        name="av1_8b_320x180.mp4", codec="AV1", required=False, size=(320, 180), frames=48,
        pix_fmt="yuv420p",
        args=["-c:v", "libaom-av1", "-cpu-used", "6", "-crf", "40", "-g", "24",
              "-lag-in-frames", "19", "-row-mt", "1"],
        note="libaom with alt-ref (hidden) frames",
    ),
    dict(
        name="av1_10b_320x180.mkv", codec="AV1", required=False, size=(320, 180), frames=48,
        pix_fmt="yuv420p10le",
        args=["-c:v", "libsvtav1", "-preset", "8", "-crf", "45", "-g", "24"],
        note="SVT-AV1 10-bit, Matroska, random-access prediction structure",
    ),
    dict(
        name="vp9_8b_352x288.webm", codec="VP9", required=False, size=(352, 288), frames=40,
        pix_fmt="yuv420p",
        args=["-c:v", "libvpx-vp9", "-b:v", "0", "-crf", "45", "-cpu-used", "5", "-g", "24",
              "-auto-alt-ref", "1", "-lag-in-frames", "16"],
        note="alt-ref (hidden) frames in superframes",
    ),
    dict(
        name="vp9_10b_320x180.webm", codec="VP9", required=False, size=(320, 180), frames=48,
        pix_fmt="yuv420p10le",
        args=["-c:v", "libvpx-vp9", "-profile:v", "2", "-b:v", "0", "-crf", "45",
              "-cpu-used", "5", "-g", "24", "-auto-alt-ref", "1", "-lag-in-frames", "16"],
        note="profile 2 (10-bit), alt-ref frames",
    ),
]  # fmt: skip

# Both sides of each pair are H.264/HEVC, so NVDEC must decode them on any target GPU.
PAIRS: list[dict] = [
    dict(ref="hevc_8b_320x180.mp4", dis="h264_8b_320x180.mp4"),
    dict(ref="hevc_10b_320x180.mp4", dis="hevc_10b_320x180_q40.mkv"),
]

LUMA_COMMAND = (
    "ffmpeg -hide_banner -nostdin -v error -i FILE -map 0:v:0 -vf extractplanes=y "
    "-pix_fmt gray|gray10le -fps_mode passthrough -f rawvideo -"
)


def bitdepth_of(pix_fmt: str) -> int:
    return 10 if pix_fmt.endswith("10le") else 8


def encode(ffmpeg: str, spec: dict) -> Path:
    w, h = spec["size"]
    out = HERE / spec["name"]
    source = f"testsrc2=size={w}x{h}:rate={FRAME_RATE},{NOISE}"
    cmd = [ffmpeg, "-hide_banner", "-nostdin", "-v", "error", "-y", "-f", "lavfi",
           "-i", source, "-frames:v", str(spec["frames"]), *spec["args"],
           "-pix_fmt", spec["pix_fmt"], str(out)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"encoding {out.name} failed: {done.stderr.strip()}")
    return out


def luma_planes(ffmpeg: str, path: Path, width: int, height: int, bitdepth: int) -> np.ndarray:
    """ffmpeg's luma of every frame, (n, height, width) uint8 or uint16, as LUMA_COMMAND."""
    cmd = [ffmpeg, "-hide_banner", "-nostdin", "-v", "error", "-i", str(path),
           "-map", "0:v:0", "-vf", "extractplanes=y",
           "-pix_fmt", "gray" if bitdepth == 8 else "gray10le",
           "-fps_mode", "passthrough", "-f", "rawvideo", "-"]  # fmt: skip
    data = subprocess.run(cmd, check=True, capture_output=True).stdout
    dtype = np.dtype("u1") if bitdepth == 8 else np.dtype("<u2")
    frame = width * height * dtype.itemsize
    if len(data) % frame:
        raise RuntimeError(f"{path.name}: {len(data)} bytes is not a whole number of frames")
    return np.frombuffer(data, dtype).reshape(-1, height, width)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pair_scores(pair: dict, files: dict, planes: dict) -> dict:
    """libvmaf's 18 ADM outputs per frame of one pair, by the reference, on ffmpeg's planes."""
    from admcuda.reference import ALL_FEATURES, compute_adm

    from admcuda.options import AdmOptions

    ref, dis = files[pair["ref"]], files[pair["dis"]]
    shape = ("width", "height", "bitdepth", "frames")
    if [ref[k] for k in shape] != [dis[k] for k in shape]:
        raise RuntimeError(f"pair {pair} does not match in size, depth or length")
    opts = AdmOptions()
    frames = [
        compute_adm(r, d, ref["bitdepth"], opts)
        for r, d in zip(planes[pair["ref"]], planes[pair["dis"]], strict=True)
    ]
    scores = {k: [float(f[k]) for f in frames] for k in ALL_FEATURES}
    if not all(math.isfinite(v) for vs in scores.values() for v in vs):
        raise RuntimeError(f"pair {pair}: a score is not finite")
    print(f"{pair['dis']} vs {pair['ref']}: mean adm2 {np.mean(scores['integer_adm2']):.6f}")
    return {**pair, "bitdepth": ref["bitdepth"], "frames": ref["frames"], "scores": scores}


def main() -> None:
    import argparse

    import imageio_ffmpeg

    import admcuda

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scores-only",
        action="store_true",
        help="keep the encodes and their hashes (checked), recompute the pairs' scores",
    )
    args = parser.parse_args()
    ffmpeg = imageio_ffmpeg.get_ffmpeg_exe()
    version = subprocess.run([ffmpeg, "-version"], capture_output=True, text=True).stdout
    files: dict[str, dict] = {}
    planes: dict[str, np.ndarray] = {}
    if args.scores_only:
        old = json.loads((HERE / "nvdec.json").read_text())
        files = old["files"]
        for name in {p[k] for p in PAIRS for k in ("ref", "dis")}:
            f, path = files[name], HERE / name
            if sha256(path.read_bytes()) != f["sha256"]:
                raise RuntimeError(f"{name} is not the file nvdec.json describes")
            planes[name] = luma_planes(ffmpeg, path, f["width"], f["height"], f["bitdepth"])
            if [sha256(p.tobytes()) for p in planes[name]] != f["luma_sha256"]:
                raise RuntimeError(f"this ffmpeg decodes {name} differently: rerun in full")
    for spec in [] if args.scores_only else SPECS:
        path = encode(ffmpeg, spec)
        w, h = spec["size"]
        bitdepth = bitdepth_of(spec["pix_fmt"])
        luma = luma_planes(ffmpeg, path, w, h, bitdepth)
        if luma.shape[0] != spec["frames"]:
            raise RuntimeError(f"{path.name}: ffmpeg decodes {luma.shape[0]} frames")
        planes[spec["name"]] = luma
        files[spec["name"]] = {
            "codec": spec["codec"],
            "required": spec["required"],
            "width": w,
            "height": h,
            "bitdepth": bitdepth,
            "pix_fmt": spec["pix_fmt"],
            "encoder_args": spec["args"],
            "note": spec["note"],
            "bytes": path.stat().st_size,
            "sha256": sha256(path.read_bytes()),
            "frames": int(luma.shape[0]),
            "luma_sha256": [sha256(p.tobytes()) for p in luma],
        }
        print(f"{path.name}: {path.stat().st_size} bytes, {luma.shape[0]} frames")
    pairs = [pair_scores(pair, files, planes) for pair in PAIRS]

    doc = {
        "provenance": {
            "date": datetime.date.today().isoformat(),
            "script": "python3 testdata/nvdec/make_nvdec.py",
            "ffmpeg": version.splitlines()[0],
            "imageio_ffmpeg": imageio_ffmpeg.__version__,
            "source": f"lavfi testsrc2=size=WxH:rate={FRAME_RATE},{NOISE}",
            "luma_command": LUMA_COMMAND,
            "luma_sha256": "sha256 of each frame's luma bytes: uint8 for 8-bit, little-endian "
            "uint16 holding the 10-bit value for 10-bit",
            "scores": "admcuda.reference.compute_adm(ref, dis, bitdepth, AdmOptions()) on the "
            f"planes of luma_command; admcuda {admcuda.__version__}, numpy {np.__version__}",
        },
        "files": files,
        "pairs": pairs,
    }
    (HERE / "nvdec.json").write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
