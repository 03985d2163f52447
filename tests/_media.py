"""Make Y4M and encoded test inputs out of raw YUV files (tests only).

Y4M files are written here byte by byte from the raw frames, independently of the
package's reader. Encoded files come from imageio-ffmpeg's ffmpeg; tests that need
it skip themselves when imageio-ffmpeg is not installed.
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAIRS = ROOT / "testdata" / "pairs"
GOLDENS = json.loads((ROOT / "testdata" / "goldens.json").read_text())["cases"]

CHROMA_BYTES = {
    "420": lambda w, h: 2 * ((w + 1) // 2) * ((h + 1) // 2),
    "422": lambda w, h: 2 * ((w + 1) // 2) * h,
    "444": lambda w, h: 2 * w * h,
    "400": lambda w, h: 0,
}


def frame_bytes(w: int, h: int, fmt: str, bitdepth: int) -> int:
    return (w * h + CHROMA_BYTES[fmt](w, h)) * (1 if bitdepth == 8 else 2)


def y4m_colorspace(fmt: str, bitdepth: int) -> str:
    """The C tag ffmpeg writes for a layout and bit depth."""
    if fmt == "400":
        return "mono" if bitdepth == 8 else f"mono{bitdepth}"
    if bitdepth == 8:
        return "420jpeg" if fmt == "420" else fmt
    return f"{fmt}p{bitdepth}"


def write_y4m(
    src: Path,
    dst: Path,
    w: int,
    h: int,
    fmt: str,
    bitdepth: int,
    *,
    tags: str = "F25:1 Ip A1:1",
    colorspace: str | None = None,
    frame_marker: bytes = b"FRAME\n",
) -> Path:
    """Wrap the frames of raw file ``src`` in a Y4M header and FRAME markers."""
    size = frame_bytes(w, h, fmt, bitdepth)
    data = src.read_bytes()
    cs = colorspace or y4m_colorspace(fmt, bitdepth)
    out = bytearray(f"YUV4MPEG2 W{w} H{h} {tags} C{cs}\n".encode())
    for k in range(len(data) // size):
        out += frame_marker + data[k * size : (k + 1) * size]
    dst.write_bytes(bytes(out))
    return dst


def ffmpeg_exe() -> str:
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
    return imageio_ffmpeg.get_ffmpeg_exe()


def ffmpeg_pix_fmt(fmt: str, bitdepth: int) -> str:
    if fmt == "400":
        return "gray" if bitdepth == 8 else f"gray{bitdepth}le"
    return f"yuv{fmt}p" + ("" if bitdepth == 8 else f"{bitdepth}le")


def encode(src: Path, dst: Path, w: int, h: int, fmt: str, bitdepth: int, codec: list[str]) -> Path:
    """Encode raw ``src`` to ``dst`` with ffmpeg and ``codec`` arguments."""
    pix_fmt = ffmpeg_pix_fmt(fmt, bitdepth)
    cmd = [
        ffmpeg_exe(), "-hide_banner", "-nostdin", "-loglevel", "error", "-y",
        "-f", "rawvideo", "-pix_fmt", pix_fmt, "-s", f"{w}x{h}", "-r", "25", "-i", str(src),
        *codec, str(dst),
    ]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    return dst


# Lossless encoders of the bundled ffmpeg; ffv1 covers every layout and depth.
FFV1 = ["-c:v", "ffv1"]
X264_LOSSLESS = ["-c:v", "libx264", "-qp", "0", "-preset", "ultrafast"]


def same(a: float | None, b: float) -> bool:
    """Bit-identical doubles; NaN equals NaN; None (a golden's NaN) matches NaN."""
    if a is None:
        return b != b
    return a == b or (a != a and b != b)


def default_sigint() -> None:
    """A child's ``preexec_fn``: Python's usual Ctrl-C. A shell's background job ignores
    SIGINT and a child would inherit that, whatever the test runner was started from."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
