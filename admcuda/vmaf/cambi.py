"""libvmaf's ``cambi`` banding extractor in a run: options, output names, the run's sizes
and one frame's scores.

CAMBI reads the luma planes alone, so a run computes it on the host from the planes it
reads, whatever the backend and whatever the input, with the Numba kernels of
:mod:`admcuda.compiled.cambi` (bit-identical to libvmaf 3.2.0's scalar C); it needs
Numba (``pip install 'admcuda[fast]'``). :class:`CambiOptions` holds the options as
``cambi.c`` declares them; those flagged as feature parameters rename the score
(``cambi_ws_33``) as libvmaf does; ``full_ref`` adds ``cambi_source`` (the reference's
score) and ``cambi_full_reference`` (the distorted score above it), never renamed.
:class:`CambiRun` is what libvmaf's ``init`` decides for a frame size: the encoding and
source sizes the planes are scaled to, and the windows. What libvmaf refuses at ``init``
and what admcuda does not reproduce (frames whose smallest scale is narrower than the
window, where the C reads outside the frame) are refused in one line before any frame is
read. ``heatmaps_path`` writes libvmaf's files of each scale's contrast maps
(:class:`Heatmaps`) where one run scores one pair (``admcuda score``, ``admcuda.score``).
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from types import ModuleType
from typing import Any

import numpy as np

from admcuda.errors import AdmError

__all__ = [
    "CAMBI_KIND",
    "CambiOptions",
    "CambiRun",
    "Heatmaps",
    "cambi_frame",
    "kernels",
    "output_names",
    "parse_options",
]

CAMBI_KIND = "cambi"
SCORE_NAME = "cambi"  # libvmaf's alias of its collector name Cambi_feature_cambi_score
SOURCE_NAME = "cambi_source"
FULL_REFERENCE_NAME = "cambi_full_reference"
MIN_SIDE = 216
# heatmaps_path where a run does not write it as libvmaf would
ONE_RUN_ONLY = (
    "cambi: heatmaps_path is written where one run scores one pair (admcuda score, admcuda.score)"
)
NUM_SCALES = 5
EOTFS = ("bt1886", "pq")
SPEEDUP_PIXELS = {1080: 1920 * 1080, 1440: 2560 * 1440, 2160: 3840 * 2160}
RECIPROCAL_LUT_SIZE = 4226

# libvmaf 3.2.0's option table (cambi.c): option -> (type, alias, min, max, feature param)
TABLE: Mapping[str, tuple[str, str | None, Any, Any, bool]] = {
    "cambi_max_val": ("double", "cmxv", 0.0, 1000.0, True),
    "enc_width": ("int", "encw", 180, 7680, True),
    "enc_height": ("int", "ench", 150, 7680, True),
    "enc_bitdepth": ("int", "encbd", 6, 16, True),
    "src_width": ("int", "srcw", 320, 7680, True),
    "src_height": ("int", "srch", 200, 4320, True),
    "window_size": ("int", "ws", 15, 127, True),
    "topk": ("double", None, 0.0001, 1.0, True),
    "cambi_topk": ("double", "ctpk", 0.0001, 1.0, True),
    "tvi_threshold": ("double", "tvit", 0.0001, 1.0, True),
    "cambi_vis_lum_threshold": ("double", "vlt", 0.0, 300.0, True),
    "max_log_contrast": ("int", "mlc", 0, 5, True),
    "heatmaps_path": ("string", None, None, None, False),
    "full_ref": ("bool", None, None, None, False),
    "eotf": ("string", None, None, None, True),
    "cambi_eotf": ("string", "ceot", None, None, True),
    "cambi_high_res_speedup": ("int", "hrs", 0, 2160, True),
}


@dataclass(frozen=True)
class CambiOptions:
    """libvmaf's ``cambi`` options (``cambi.c``'s table; 0 for a size or depth: the
    input's). ``topk`` is used where it is not 0.6, else ``cambi_topk``; ``cambi_eotf``
    where it is not bt1886, else ``eotf``. ``heatmaps_path``: a folder for libvmaf's
    files of the contrast maps (:class:`Heatmaps`)."""

    cambi_max_val: float = 1000.0
    enc_width: int = 0
    enc_height: int = 0
    enc_bitdepth: int = 0
    src_width: int = 0
    src_height: int = 0
    window_size: int = 65
    topk: float = 0.6
    cambi_topk: float = 0.6
    tvi_threshold: float = 0.019
    cambi_vis_lum_threshold: float = 0.0
    max_log_contrast: int = 2
    heatmaps_path: str | None = None
    full_ref: bool = False
    eotf: str = "bt1886"
    cambi_eotf: str = "bt1886"
    cambi_high_res_speedup: int = 0

    def __post_init__(self) -> None:
        path = self.heatmaps_path
        if path is not None and (not isinstance(path, str) or not path):
            raise ValueError(f"heatmaps_path must be a folder's name, got {path!r}")
        for f in fields(self):
            typ, _, lo, hi, _ = TABLE[f.name]
            value = getattr(self, f.name)
            if f.name == "heatmaps_path":
                continue
            if typ == "bool":
                if not isinstance(value, (bool, np.bool_)):
                    raise ValueError(f"{f.name} must be a bool, got {value!r}")
                object.__setattr__(self, f.name, bool(value))
            elif typ == "string":
                if value not in EOTFS:
                    raise ValueError(f"{f.name} must be one of {', '.join(EOTFS)}, got {value!r}")
            else:
                ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
                if typ == "int":
                    ok = ok and float(value).is_integer()
                default = f.default
                if not ok or not (value == default or lo <= value <= hi):
                    raise ValueError(
                        f"{f.name} must be {'an integer' if typ == 'int' else 'a number'} "
                        f"in [{lo:g}, {hi:g}], got {value!r}"
                    )
                object.__setattr__(self, f.name, int(value) if typ == "int" else float(value))

    @property
    def pooling_topk(self) -> float:
        return self.topk if self.topk != 0.6 else self.cambi_topk

    @property
    def effective_eotf(self) -> str:
        return self.cambi_eotf if self.cambi_eotf != "bt1886" else self.eotf


def output_names(options: CambiOptions) -> tuple[str, ...]:
    """The names ``cambi`` writes per frame, in libvmaf's order: the score under its
    alias with ``_KEY_VALUE`` for each feature parameter off its default, sorted by
    option name (``%d``/``%g``/the text), then the full-reference pair."""
    suffix = ""
    for name in sorted(TABLE, key=str.encode):
        typ, alias, _, _, param = TABLE[name]
        value = getattr(options, name)
        if not param or value == getattr(CambiOptions, name):
            continue
        text = f"{value:d}" if typ == "int" else (f"{value:g}" if typ == "double" else value)
        suffix += f"_{alias or name}_{text}"
    score = SCORE_NAME + suffix
    return (score, SOURCE_NAME, FULL_REFERENCE_NAME) if options.full_ref else (score,)


def parse_options(
    where: str, given: Mapping[str, str], parse_number: Callable[..., Any]
) -> CambiOptions:
    """:class:`CambiOptions` from ``--feature cambi=KEY=VALUE:...`` texts, numbers and
    bools read by the plan's ``parse_number`` (libvmaf's reading), the EOTFs as text."""
    values: dict[str, Any] = {}
    for key, text in given.items():
        typ, alias, lo, hi, _ = TABLE[key]
        if key == "heatmaps_path":
            values[key] = text
            continue
        if typ == "string":
            if text not in EOTFS:
                raise AdmError(
                    f"{where}: option {key} must be one of {', '.join(EOTFS)}, got '{text}'"
                )
            values[key] = text
        else:
            values[key] = parse_number(where, key, (typ, alias, lo, hi), text)
    try:
        return CambiOptions(**values)
    except ValueError as exc:
        raise AdmError(f"{where}: {exc}") from None


def kernels() -> ModuleType:
    """:mod:`admcuda.compiled.cambi`, or a one-line error where Numba is not installed."""
    from admcuda.compiled import kernels_for

    return kernels_for("cambi", "cambi needs")


def _smallest(width: int, height: int, speedup: bool) -> tuple[int, int]:
    for _ in range(NUM_SCALES - 1 + int(speedup)):
        width, height = (width + 1) >> 1, (height + 1) >> 1
    return width, height


def _adjust(window: int, width: int, height: int, speedup: bool) -> int:
    window = (((window * (width + height)) // 375) >> 4) & 0xFFFF
    if speedup:
        window = (window + 1) >> 1
    return window | 1


@dataclass(frozen=True)
class CambiRun:
    """What libvmaf's ``init`` decides for ``options`` and frames of ``width`` x
    ``height`` at ``bitdepth``: the encoding size (the input's where unset, or where
    larger: no upscaling), the source size (full reference), their windows, the speed-up.

    Raises
    ------
    AdmError
        Where libvmaf refuses (sizes under 216 both ways, a source and encoding size that
        disagree on which is larger, a window over its table), and where admcuda does not
        follow it (a fifth scale narrower than the window: the C reads outside the frame).
    """

    options: CambiOptions
    width: int
    height: int
    bitdepth: int

    def __post_init__(self) -> None:
        o, w, h = self.options, self.width, self.height
        enc = (o.enc_width, o.enc_height) if o.enc_width and o.enc_height else (w, h)
        if enc[1] > h or enc[0] > w:
            enc = (w, h)
        src = (o.src_width, o.src_height) if o.src_width and o.src_height else (w, h)
        if enc[0] < MIN_SIDE and enc[1] < MIN_SIDE:
            raise AdmError(
                f"cambi needs an encoding size of at least {MIN_SIDE} samples on one side "
                f"(libvmaf refuses {enc[0]}x{enc[1]})"
            )
        if src[0] < MIN_SIDE and src[1] < MIN_SIDE:
            raise AdmError(
                f"cambi needs a source size of at least {MIN_SIDE} samples on one side "
                f"(libvmaf refuses {src[0]}x{src[1]})"
            )
        if (src[0] > enc[0] and src[1] < enc[1]) or (src[0] < enc[0] and src[1] > enc[1]):
            raise AdmError(
                f"cambi: libvmaf refuses a source size {src[0]}x{src[1]} larger one way and "
                f"smaller the other than the encoding size {enc[0]}x{enc[1]}"
            )
        limit = SPEEDUP_PIXELS.get(o.cambi_high_res_speedup)
        speedup = limit is not None and enc[0] * enc[1] >= limit
        window = _adjust(o.window_size, *enc, speedup)
        src_window = _adjust(o.window_size, *src, speedup)
        if max(window, src_window) ** 2 >= RECIPROCAL_LUT_SIZE:
            raise AdmError(
                f"cambi: window_size {o.window_size} gives a window of "
                f"{max(window, src_window)} at this size, too large for libvmaf's table"
            )
        sizes = [(enc, window)] + ([(src, src_window)] if o.full_ref else [])
        for (sw, sh), win in sizes:
            low = _smallest(sw, sh, speedup)
            if min(low) < 2 * (win >> 1) + 1:
                raise AdmError(
                    f"cambi: at {sw}x{sh} the fifth scale ({low[0]}x{low[1]}) is narrower than "
                    f"the {win}-sample window, where libvmaf reads outside the frame; not scored"
                )
        object.__setattr__(self, "enc", enc)
        object.__setattr__(self, "src", src)
        object.__setattr__(self, "speedup", speedup)
        object.__setattr__(self, "enc_bitdepth", o.enc_bitdepth or self.bitdepth)
        module = kernels()
        common = {
            "window_size": o.window_size,
            "tvi_threshold": o.tvi_threshold,
            "max_log_contrast": o.max_log_contrast,
            "vis_lum_threshold": o.cambi_vis_lum_threshold,
            "eotf": o.effective_eotf,
            "speedup": speedup,
        }
        try:
            tables = module.setup(*enc, **common)
            src_tables = module.setup(*src, **common) if o.full_ref else None
        except ValueError as exc:
            raise AdmError(f"cambi: {exc}") from None
        object.__setattr__(self, "tables", tables)
        object.__setattr__(self, "src_tables", src_tables)

    def _call(self, kernel: str, plane: np.ndarray, source: bool, **extra: Any) -> Any:
        if int(plane.max(initial=0)) >> self.bitdepth:
            raise AdmError(
                f"cambi: the input holds samples above {(1 << self.bitdepth) - 1}, the "
                f"largest at {self.bitdepth} bits (libvmaf refuses it)"
            )
        width, height = self.src if source else self.enc  # type: ignore[attr-defined]
        return getattr(kernels(), kernel)(
            np.ascontiguousarray(plane),
            self.bitdepth,
            self.src_tables if source else self.tables,  # type: ignore[attr-defined]
            enc_width=width,
            enc_height=height,
            enc_bitdepth=self.enc_bitdepth,  # type: ignore[attr-defined]
            **extra,
        )

    def score(self, plane: np.ndarray, *, source: bool = False) -> float:
        """One plane's score before the ``cambi_max_val`` clip."""
        return float(self._call("cambi_frame", plane, source, topk=self.options.pooling_topk))

    def maps(self, plane: np.ndarray, *, source: bool = False) -> list[np.ndarray]:
        """One plane's contrast values at each of the five scales (float32), from which
        :meth:`score` pools."""
        return self._call("cambi_maps", plane, source)  # type: ignore[no-any-return]

    def pool(self, maps: Sequence[np.ndarray], *, source: bool = False) -> float:
        """The score (before the clip) of :meth:`maps`' output, which it reorders: the
        same double as :meth:`score`."""
        tables = self.src_tables if source else self.tables  # type: ignore[attr-defined]
        return float(kernels().pool_scales(tuple(maps), tables.window, self.options.pooling_topk))


class Heatmaps:
    """libvmaf's ``heatmaps_path`` files for one run: in the folder (made, as libvmaf
    makes it, with mode 0770), one file a scale, ``cambi_heatmap_scale_S_WxH_16b.gray``
    (named by the encoding size halved per scale, also where the high-resolution speed-up
    halves the maps themselves), truncated when the run starts; frame ``index``'s maps go
    at ``index`` frames into each, as 16-bit native samples
    (:func:`admcuda.compiled.cambi.heatmap_16bit`). Writes at their own offsets, so frames
    may come in any order and from any thread.

    Raises
    ------
    AdmError
        Where the folder or a file cannot be made, or a file would be one of ``inputs``.
    """

    def __init__(self, run: CambiRun, inputs: Sequence[str | os.PathLike[str]] = ()) -> None:
        from admcuda.report.writers import written_input

        folder = run.options.heatmaps_path
        assert folder is not None
        self.run = run
        width, height = run.enc  # type: ignore[attr-defined]
        self.paths = []
        for scale in range(NUM_SCALES):
            name = f"cambi_heatmap_scale_{scale}_{width}x{height}_16b.gray"
            self.paths.append(os.path.join(folder, name))
            width, height = (width + 1) >> 1, (height + 1) >> 1
        for path in self.paths:
            shown = written_input(path, inputs)
            if shown is not None:
                raise AdmError(f"cambi: heatmaps_path would write the input '{shown}'")
        self.fds: list[int] = []
        try:
            os.makedirs(folder, mode=0o770, exist_ok=True)
            for path in self.paths:
                flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
                self.fds.append(os.open(path, flags, 0o666))
        except OSError as exc:
            self.close()
            where = exc.filename or folder
            raise AdmError(
                f"cambi: heatmaps_path: cannot write '{where}': {exc.strerror}"
            ) from None

    def write(self, index: int, maps: Sequence[np.ndarray]) -> None:
        """Frame ``index``'s maps (:meth:`CambiRun.maps`), before they are pooled."""
        from admcuda.compiled.cambi import heatmap_16bit

        for fd, values in zip(self.fds, maps, strict=True):
            data = heatmap_16bit(values, self.run.tables).tobytes()  # type: ignore[attr-defined]
            written = 0
            while written < len(data):
                written += os.pwrite(fd, data[written:], index * len(data) + written)

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []


_RUNS: dict[tuple[Any, ...], CambiRun] = {}


def run_for(options: CambiOptions, width: int, height: int, bitdepth: int) -> CambiRun:
    """The (cached) :class:`CambiRun` of ``options`` at a frame size and depth."""
    key = (options, width, height, bitdepth)
    run = _RUNS.get(key)
    if run is None:
        run = _RUNS[key] = CambiRun(options, width, height, bitdepth)
    return run


def cambi_frame(
    ex: Any,
    ref: np.ndarray,
    dis: np.ndarray,
    bitdepth: int,
    *,
    heatmaps: Heatmaps | None = None,
    index: int = 0,
) -> dict[str, float]:
    """One frame pair's outputs of a ``cambi`` extractor (an
    :class:`admcuda.vmaf.plan.Extractor`), from the luma planes, in libvmaf's order:
    each clipped to ``cambi_max_val``; the full-reference difference is max(0, dis - ref)
    of the unclipped scores. With ``heatmaps``, the distorted plane's maps are written as
    frame ``index``'s. The kernels release the GIL."""
    options: CambiOptions = ex.options
    if options.heatmaps_path is not None and heatmaps is None:
        raise AdmError(ONE_RUN_ONLY)
    run = run_for(options, dis.shape[1], dis.shape[0], bitdepth)
    names = ex.outputs
    top = options.cambi_max_val
    if heatmaps is not None:
        maps = run.maps(dis)
        heatmaps.write(index, maps)
        dist = run.pool(maps)
    else:
        dist = run.score(dis)
    out = {names[0]: _clip(dist, top)}
    if options.full_ref:
        src = run.score(ref, source=True)
        diff = dist - src
        out[SOURCE_NAME] = _clip(src, top)
        out[FULL_REFERENCE_NAME] = _clip(0.0 if 0.0 > diff else diff, top)
    return out


def _clip(value: float, top: float) -> float:
    # the C's MIN(x, y): x where x < y, else y
    return value if value < top else top
