"""admcuda: libvmaf's integer ADM feature, on the CPU and with CUDA.

Public API: :class:`AdmOptions`, :class:`AdmError`, :func:`score_files`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path

from admcuda.errors import AdmError
from admcuda.options import NON_DEBUG_BASE_NAMES, OUTPUT_BASE_NAMES, AdmOptions, feature_names
from admcuda.yuv import YuvReader

__all__ = ["AdmOptions", "AdmError", "score_files", "__version__"]

__version__ = "0.1.0"

# In a source checkout the reference and the kernels live beside this package
# (<root>/reference, <root>/kernels) and are installed into it by pyproject's
# package-dir mapping. Without an install, let the package path reach the root
# so that ``admcuda.reference`` and ``admcuda.kernels`` resolve the same way.
_root = Path(__file__).resolve().parent.parent
if (
    not (Path(__file__).resolve().parent / "reference").is_dir()
    and (_root / "pyproject.toml").is_file()
    and str(_root) not in __path__
):
    __path__.append(str(_root))
del _root

_log = logging.getLogger("admcuda")


def score_files(
    ref_path: str | os.PathLike[str],
    dis_path: str | os.PathLike[str],
    *,
    width: int,
    height: int,
    pixel_format: str = "420",
    bitdepth: int = 8,
    options: AdmOptions | Mapping[str, str | bool | int | float] | None = None,
    backend: str = "auto",
    debug: bool = False,
) -> list[dict[str, float]]:
    """Score a reference and a distorted raw YUV file, frame by frame.

    Parameters
    ----------
    ref_path, dis_path : str or os.PathLike
        Raw planar YUV files of the same geometry.
    width, height : int
        Luma size in pixels, both > 16.
    pixel_format : {"420", "422", "444", "400"}, optional
    bitdepth : {8, 10, 12, 16}, optional
    options : AdmOptions or mapping, optional
        ADM options; a mapping is parsed by :meth:`AdmOptions.from_mapping`.
    backend : {"auto", "cpu", "cuda"}, optional
    debug : bool, optional
        Also return the debug outputs (``integer_adm``, numerators,
        denominators); the same as the ``debug`` option.

    Returns
    -------
    list of dict of str to float
        One dict per frame, keyed by the names libvmaf writes (with the option
        suffix, e.g. ``integer_adm2_egl_1.2``), in libvmaf's order: 7 outputs,
        or 18 in debug mode. If the files hold different numbers of frames, the
        common prefix is scored and a warning is logged, as libvmaf does.

    Raises
    ------
    AdmError
        On bad options or geometry, unreadable input, or an unavailable backend.
    OSError
        If a file cannot be opened.
    """
    from admcuda.backends import get_backend

    if options is None:
        opts = AdmOptions()
    elif isinstance(options, AdmOptions):
        opts = options
    else:
        opts = AdmOptions.from_mapping(options)
    if debug and not opts.debug:
        opts = opts.replace(debug=True)
    score_frames = get_backend(backend)

    def reader(path: str | os.PathLike[str], label: str) -> YuvReader:
        return YuvReader(
            path,
            width=width,
            height=height,
            pixel_format=pixel_format,
            bitdepth=bitdepth,
            label=label,
        )

    with reader(ref_path, "reference") as ref, reader(dis_path, "distorted") as dis:
        count = min(len(ref), len(dis))
        if len(ref) != len(dis):
            shorter, longer = (ref, dis) if len(ref) < len(dis) else (dis, ref)
            _log.warning(
                "%s file ended before %s file (%d vs %d frames); scoring the first %d",
                shorter.label, longer.label, len(shorter), len(longer), count,
            )  # fmt: skip
        ref_frames = (ref.read_luma(i) for i in range(count))
        dis_frames = (dis.read_luma(i) for i in range(count))
        raw = score_frames(ref_frames, dis_frames, width, height, bitdepth, opts)

    if len(raw) != count:
        raise AdmError(f"backend returned {len(raw)} frames of scores for {count} frame pairs")
    names = feature_names(opts)
    wanted = OUTPUT_BASE_NAMES if opts.debug else NON_DEBUG_BASE_NAMES
    frames = []
    for index, scores in enumerate(raw):
        missing = [base for base in wanted if base not in scores]
        if missing:
            raise AdmError(f"backend gave no {', '.join(missing)} for frame {index}")
        frames.append({names[base]: float(scores[base]) for base in wanted})
    return frames
