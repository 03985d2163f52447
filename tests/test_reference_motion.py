"""The integer motion reference (``reference/motion.py``) against libvmaf 3.2.0.

Truth, in order of weight:

- ``../shared/netflix/vmaf_goldens.json``: the ``*__features`` entries, libvmaf 3.2.0
  (Netflix/vmaf f85a8536, scalar C) with motion ``debug=true`` and default options, full
  double precision (provenance in its ``_provenance`` key). Every frame's
  ``integer_motion``, ``integer_motion2`` and ``integer_motion3`` must be equal.
- libvmaf itself, where ``ADMCUDA_LIBVMAF`` names a libvmaf 3.2.0 shared library: the
  tests marked ``needs_libvmaf`` drive its C API through ctypes (``_libvmaf_motion``,
  written for these tests: register ``motion`` with the options, feed luma-only 4:0:0
  pictures, flush, read every output back by its collector name) and compare every
  option, bit depth, odd size, the thread pool and subsampling. Skipped without one.
- ``_scalar_*`` below: a plain loop transcription of ``integer_motion.c`` (``mirror``,
  ``motion_score_pipeline_8``/``_16``, ``extract``, ``flush``, ``motion_blend``) written
  for these tests from reading the C, sharing no code with the reference. The per-stage
  and option tests compare with it, so they also run where no libvmaf library is named.
"""

from __future__ import annotations

import ctypes as C
import json
import os

import numpy as np
import pytest
from admcuda.reference import motion as M
from admcuda.reference.motion import (
    MotionOptions,
    MotionState,
    collector_names,
    compute_motion,
    flush_scores,
    mirror_indices,
    motion_blend,
    motion_score,
    motion_score_pipeline,
    output_names,
    x_conv_row_sad,
    y_conv_diff,
)
from conftest import NETFLIX

FILTER = (3571, 16004, 26386, 16004, 3571)  # integer_motion.h


# --- the scalar transcription -----------------------------------------------------------


def _mirror(idx: int, size: int) -> int:
    if idx < 0:
        return -idx
    if idx >= size:
        return 2 * size - idx - 2
    return idx


def _wrap_i32(x: int) -> int:
    return (x + 2**31) % 2**32 - 2**31


def _scalar_y_rows(prev, cur, bpc: int) -> list[list[int]]:
    h, w = prev.shape
    rnd, shift = (1 << 7, 8) if bpc == 8 else (1 << (bpc - 1), bpc)
    rows = []
    for i in range(h):
        row = []
        for j in range(w):
            acc = 0
            for k in range(5):
                r = _mirror(i - 2 + k, h)
                acc += FILTER[k] * (int(prev[r, j]) - int(cur[r, j]))
            row.append(_wrap_i32((acc + rnd) >> shift))
        rows.append(row)
    return rows


def _scalar_row_sads(rows: list[list[int]]) -> list[int]:
    out = []
    for row in rows:
        w = len(row)
        row_sad = 0
        for j in range(w):
            acc = sum(FILTER[k] * row[_mirror(j - 2 + k, w)] for k in range(5))
            row_sad = (row_sad + abs(_wrap_i32((acc + (1 << 15)) >> 16))) % 2**32
        out.append(row_sad)
    return out


def _scalar_sad(prev, cur, bpc: int) -> int:
    return sum(_scalar_row_sads(_scalar_y_rows(prev, cur, bpc)))


def _scalar_motion(planes, bpc: int, o: MotionOptions) -> list[dict[str, float]]:
    """``extract`` over every frame, then ``flush``, keyed by provided feature name."""
    five = o.motion_five_frame_window
    min_idx = stride = 2 if five else 1
    sad = []
    for i, cur in enumerate(planes):
        score = 0.0
        if not o.motion_force_zero and i >= min_idx:
            h, w = cur.shape
            s = _scalar_sad(planes[i - 2] if five else planes[i - 1], cur, bpc)
            score = min(s / 256.0 / (w * h) * o.motion_fps_weight, o.motion_max_val)
        sad.append(score)

    def blend(x: float) -> float:
        f, off = o.motion_blend_factor, o.motion_blend_offset
        return min(x * f + (1 - f) * min(off, x), o.motion_max_val)

    n = len(sad)
    stamp = blend(sad[min_idx]) if n > min_idx else 0.0
    out, prev_processed = [], 0.0
    for i in range(n):
        if i < min_idx:
            m2 = 0.0
        elif i + 1 >= n:
            m2 = sad[i]
        elif i - (stride - 1) >= min_idx:
            m2 = min(sad[i - (stride - 1)], sad[i + 1])
        else:
            m2 = sad[i + 1]
        if i < min_idx:
            m3 = prev_processed = stamp
        else:
            p = blend(m2)
            m3 = (p + prev_processed) / 2.0 if o.motion_moving_average else p
            prev_processed = p
        out.append({M.SAD: sad[i], M.MOTION: sad[i], M.MOTION2: m2, M.MOTION3: m3})
    return out


# --- clips ------------------------------------------------------------------------------


def _clip(n: int, h: int, w: int, bpc: int, seed: int, *, full_range: bool = False):
    """A textured picture panning by a varying step, plus noise: motion of several sizes,
    with still frames (step 0) among them. ``full_range`` fills every 16-bit value."""
    rng = np.random.default_rng(seed)
    dt = np.uint8 if bpc == 8 else np.uint16
    if full_range:
        return [rng.integers(0, 65536, (h, w)).astype(dt) for _ in range(n)]
    top = (1 << bpc) - 1
    yy, xx = np.mgrid[0:h, 0:w]
    planes, x0 = [], 0.0
    for i in range(n):
        x0 += (0, 1, 3, 0.5, 7)[i % 5]
        base = 0.5 + 0.35 * np.sin((xx + x0) / 3.0) * np.cos(yy / 2.5)
        noisy = base * top + rng.normal(0, top / 60, (h, w))
        planes.append(np.clip(np.rint(noisy), 0, top).astype(dt))
    return planes


def _named(frames: list[dict[str, float]], opts: MotionOptions) -> list[dict[str, float]]:
    """Scalar output (provided names) -> the reference's printed names for ``opts``."""
    names = output_names(opts)
    keep = set(M.PROVIDED_FEATURES) - (set() if opts.debug else {M.MOTION})
    return [{names[k]: v for k, v in f.items() if k in keep} for f in frames]


OPTION_SETS = [
    {},
    {"motion_force_zero": True},
    {"motion_five_frame_window": True},
    {"motion_moving_average": True},
    {"motion_five_frame_window": True, "motion_moving_average": True},
    {"motion_blend_factor": 0.5, "motion_blend_offset": 2.0},
    {"motion_blend_factor": 0.0, "motion_blend_offset": 0.0},
    {"motion_fps_weight": 2.5},
    {"motion_fps_weight": 0.0},
    {"motion_max_val": 20.0},
    {"motion_max_val": 0.0},
    {
        "motion_blend_factor": 0.25,
        "motion_blend_offset": 1.25,
        "motion_fps_weight": 1.7,
        "motion_max_val": 30.0,
        "motion_five_frame_window": True,
        "motion_moving_average": True,
    },
]


def _opts(d: dict, debug: bool = True) -> MotionOptions:
    return MotionOptions(debug=debug, **d)


# --- the Netflix goldens ----------------------------------------------------------------


def _goldens() -> dict:
    path = NETFLIX / "vmaf_goldens.json"
    return json.loads(path.read_text()) if path.exists() else {}


FEATURE_GOLDENS = {k: v for k, v in _goldens().items() if "__features" in k}


def _read_luma(case: dict) -> list[np.ndarray]:
    w, h, bpc = case["w"], case["h"], case["bitdepth"]
    bps = 1 if bpc == 8 else 2
    cw, ch = (w + 1) // 2, (h + 1) // 2
    assert case["fmt"] == "420"
    size = (w * h + 2 * cw * ch) * bps
    raw = (NETFLIX / case["ref"]).read_bytes()
    dt = np.dtype(np.uint8) if bpc == 8 else np.dtype("<u2")
    return [
        np.frombuffer(raw, dt, w * h, i * size).reshape(h, w).astype(dt.newbyteorder("="))
        for i in range(len(raw) // size)
    ]


@pytest.mark.skipif(not FEATURE_GOLDENS, reason=f"no vmaf_goldens.json under {NETFLIX}")
@pytest.mark.parametrize("key", sorted(FEATURE_GOLDENS))
def test_netflix_goldens(key):
    entry = FEATURE_GOLDENS[key]
    case = entry["case"]
    opts = MotionOptions(debug=True)
    got = compute_motion(_read_luma(case), case["bitdepth"], opts)
    want = entry["frames"]
    assert len(got) == len(want)
    printed = output_names(opts)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        for name in (M.MOTION, M.MOTION2, M.MOTION3):
            assert g[printed[name]] == w[name], (key, i, name, g[printed[name]] - w[name])


def test_goldens_cover_motion():
    """The goldens hold motion that moves: a wrong filter or rounding cannot pass them."""
    if not FEATURE_GOLDENS:
        pytest.skip("no goldens")
    frames = FEATURE_GOLDENS["src01_160x90_48f__features"]["frames"]
    m = [f[M.MOTION] for f in frames]
    assert m[0] == 0.0 and min(m[1:]) > 0.5 and len(set(m)) > 40


# --- per stage --------------------------------------------------------------------------

SIZES = [(3, 3), (3, 5), (5, 3), (4, 7), (7, 4), (9, 17), (13, 6), (31, 33)]


@pytest.mark.parametrize("n", range(3, 12))
def test_mirror_indices(n):
    want = [[_mirror(j - 2 + k, n) for j in range(n)] for k in range(5)]
    assert mirror_indices(n).tolist() == want
    # the filter pads with NumPy's "reflect", which is the same one-step mirror
    padded = np.pad(np.arange(n), 2, mode="reflect")
    assert padded[np.arange(5)[:, None] + np.arange(n)].tolist() == want


@pytest.mark.parametrize(("h", "w"), SIZES)
@pytest.mark.parametrize("bpc", [8, 10, 12, 16])
def test_y_conv_diff(h, w, bpc):
    prev, cur = _clip(2, h, w, bpc, seed=h * 100 + w + bpc, full_range=bpc == 16)
    got = y_conv_diff(prev, cur, bpc)
    assert got.dtype == np.int32 and got.shape == (h, w)
    assert got.tolist() == _scalar_y_rows(prev, cur, bpc)


@pytest.mark.parametrize(("h", "w"), SIZES)
@pytest.mark.parametrize("bpc", [8, 9, 16])
def test_x_conv_row_sad(h, w, bpc):
    prev, cur = _clip(2, h, w, bpc, seed=w * 100 + h + bpc, full_range=bpc > 8)
    rows = y_conv_diff(prev, cur, bpc)
    got = x_conv_row_sad(rows)
    assert got.dtype == np.uint32 and got.tolist() == _scalar_row_sads(rows.tolist())


def test_row_sad_wraps_like_uint32():
    """libvmaf sums a row's absolute values in a uint32; a long row of large values wraps."""
    rows = np.full((2, 700), 8_000_000, np.int32)
    rows[1, ::2] = -8_000_000
    got = x_conv_row_sad(rows)
    want = _scalar_row_sads(rows.tolist())
    assert got.tolist() == want
    assert want[0] == (700 * 8_000_000) % 2**32  # the row really wrapped


@pytest.mark.parametrize(("h", "w"), [(3, 3), (5, 9), (16, 11)])
@pytest.mark.parametrize("bpc", [8, 10, 16])
def test_pipeline(h, w, bpc):
    prev, cur = _clip(2, h, w, bpc, seed=7 * h + w, full_range=bpc == 16)
    sad = motion_score_pipeline(prev, cur, bpc)
    assert isinstance(sad, int) and sad == _scalar_sad(prev, cur, bpc) and sad > 0


def test_pipeline_rounds_the_difference():
    """The SAD filters the difference of the frames; filtering and rounding each frame
    before subtracting gives another number on this pair."""
    prev, cur = _clip(2, 24, 40, 8, seed=3)
    sad = motion_score_pipeline(prev, cur, 8)
    zero = np.zeros_like(prev)
    blurred = [y_conv_diff(p, zero, 8) for p in (prev, cur)]
    per_frame = int(x_conv_row_sad(blurred[0] - blurred[1]).sum())
    assert sad == _scalar_sad(prev, cur, 8) and sad != per_frame


def test_flush_scores():
    """motion2/motion3 of hand-worked score lists (values chosen so blend and cap are
    identities: offset 40 above every score, max_val far above)."""
    o = MotionOptions()
    s = [0.0, 5.0, 3.0, 8.0, 2.0]
    assert flush_scores(s, o) == ([0.0, 3.0, 3.0, 2.0, 2.0], [5.0, 3.0, 3.0, 2.0, 2.0])
    avg = MotionOptions(motion_moving_average=True)
    assert flush_scores(s, avg)[1] == [5.0, 4.0, 3.0, 2.5, 2.0]
    five = MotionOptions(motion_five_frame_window=True)
    assert flush_scores(s, five) == ([0.0, 0.0, 8.0, 2.0, 2.0], [3.0, 3.0, 8.0, 2.0, 2.0])
    assert flush_scores([0.0, 5.0], o) == ([0.0, 5.0], [5.0, 5.0])
    assert flush_scores([0.0], o) == ([0.0], [0.0])
    assert flush_scores([0.0, 0.0], five) == ([0.0, 0.0], [0.0, 0.0])


def test_motion_score_and_blend():
    o = MotionOptions(motion_fps_weight=1.5, motion_max_val=3.0)
    assert motion_score(256 * 6, 2, 3, o) == min(1.0 * 1.5, 3.0)
    assert motion_score(256 * 6 * 10, 2, 3, o) == 3.0
    assert motion_blend(50.0, 0.5, 40.0) == 50.0 * 0.5 + 0.5 * 40.0
    assert motion_blend(10.0, 0.5, 40.0) == 10.0
    assert motion_blend(7.0, 0.0, 0.0) == 0.0


# --- the extractor over clips -----------------------------------------------------------


@pytest.mark.parametrize("case", range(len(OPTION_SETS)))
@pytest.mark.parametrize("bpc", [8, 10])
def test_options_against_scalar(case, bpc):
    opts = _opts(OPTION_SETS[case])
    planes = _clip(12, 11, 14, bpc, seed=case)
    got = compute_motion(planes, bpc, opts)
    assert got == _named(_scalar_motion(planes, bpc, opts), opts)
    if not opts.motion_force_zero and opts.motion_fps_weight and opts.motion_max_val:
        assert len({f[output_names(opts)[M.MOTION]] for f in got}) > 3


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("five", [False, True])
def test_short_clips(n, five):
    """Clips as short as the window: the stamp is 0 until a frame past the first scored."""
    opts = _opts({"motion_five_frame_window": five, "motion_moving_average": True})
    planes = _clip(n, 6, 5, 8, seed=n)
    assert compute_motion(planes, 8, opts) == _named(_scalar_motion(planes, 8, opts), opts)


def test_state_equals_compute_and_writes_late():
    opts = MotionOptions(debug=True)
    planes = _clip(20, 10, 13, 8, seed=11)
    whole = compute_motion(planes, 8, opts)
    names = output_names(opts)
    state = MotionState(8, opts)
    merged: dict[int, dict[str, float]] = {}
    for i, p in enumerate(planes):
        out = state.extract(i, p)
        assert list(out) == [i] and set(out[i]) == {names[M.SAD], names[M.MOTION]}
        merged.setdefault(i, {}).update(out[i])
    late = state.flush()
    assert sorted(late) == list(range(20))
    assert all(set(v) == {"integer_motion2", "integer_motion3"} for v in late.values())
    for i, v in late.items():
        merged[i].update(v)
    assert [merged[i] for i in range(20)] == whole
    assert whole[-1]["integer_motion2"] == whole[-1]["integer_motion"]


@pytest.mark.parametrize("opts", [{}, {"motion_five_frame_window": True}])
def test_chunks(opts):
    """Frames handed over in chunks of any size (a list, then 3-D array slices) give the
    numbers of the whole clip at once."""
    o = _opts(opts)
    clip = np.stack(_clip(23, 9, 8, 10, seed=5))
    whole = compute_motion(list(clip), 10, o)
    for sizes in ([1] * 23, [5, 1, 17], [2, 21], [23]):
        state, frames, start = MotionState(10, o), {}, 0
        for size in sizes:
            for i, p in enumerate(clip[start : start + size], start):
                frames.update(state.extract(i, p))
            start += size
        for i, v in state.flush().items():
            frames[i].update(v)
        assert [frames[i] for i in range(23)] == whole
    assert compute_motion(clip, 10, o) == whole


def test_reference_only_and_input_not_kept():
    """Motion reads the reference alone; the state copies each plane it keeps."""
    planes = _clip(4, 8, 8, 8, seed=2)
    want = compute_motion(planes, 8)
    state = MotionState(8)
    frames = {}
    for i, p in enumerate(planes):
        buf = p.copy()
        frames.update(state.extract(i, buf))
        buf[:] = 0  # a caller reusing its buffer
    for i, v in state.flush().items():
        frames[i].update(v)
    assert [frames[i] for i in range(4)] == want


def test_index_gap():
    """flush covers the consecutive indices from 0; a later frame still scores against the
    picture fed before it."""
    planes = _clip(4, 7, 9, 8, seed=4)
    state = MotionState(8, MotionOptions(debug=True))
    sad = {}
    for i, p in zip((0, 1, 2, 4), planes, strict=True):
        sad.update(state.extract(i, p))
    late = state.flush()
    assert sorted(late) == [0, 1, 2]
    h, w = planes[0].shape
    want4 = motion_score(motion_score_pipeline(planes[2], planes[3], 8), w, h, MotionOptions())
    assert sad[4]["integer_motion"] == want4
    assert late[2]["integer_motion2"] == sad[2]["integer_motion"]


# --- names and options ------------------------------------------------------------------


def test_names():
    """Suffixes as ``vmaf_feature_name_from_options`` builds them (feature_name.c):
    non-default feature parameters sorted by option name, bool as ``_alias``, double as
    ``_alias_%g``; the SAD score has no alias; ``debug`` never counts."""
    default = output_names(MotionOptions(debug=True, motion_blend_factor=1.0))
    assert default == {
        M.SAD: "VMAF_integer_feature_motion_sad_score",
        M.MOTION: "integer_motion",
        M.MOTION2: "integer_motion2",
        M.MOTION3: "integer_motion3",
    }
    assert collector_names(MotionOptions()) == {f: f for f in M.PROVIDED_FEATURES}
    o = MotionOptions(
        motion_moving_average=True,
        motion_blend_offset=2.5,
        motion_five_frame_window=True,
        motion_max_val=20.0,
        motion_fps_weight=1e-05,
        motion_force_zero=True,
        motion_blend_factor=0.123456789,
    )
    tail = "_mbf_0.123457_mbo_2.5_mffw_force_0_mfw_1e-05_mmxv_20_mma"
    assert output_names(o)[M.MOTION2] == "integer_motion2" + tail
    assert output_names(o)[M.SAD] == M.SAD + tail
    assert collector_names(o) == output_names(o)


@pytest.mark.parametrize(
    ("kw", "msg"),
    [
        ({"motion_blend_factor": 1.5}, "outside libvmaf's range"),
        ({"motion_blend_offset": -1.0}, "outside"),
        ({"motion_fps_weight": 5.01}, "outside"),
        ({"motion_max_val": 10000.5}, "outside"),
        ({"motion_force_zero": 1}, "true or false"),
        ({"motion_max_val": "3"}, "must be a number"),
    ],
)
def test_option_ranges(kw, msg):
    with pytest.raises(ValueError, match=msg):
        MotionOptions(**kw)


def test_option_strings():
    o = MotionOptions.from_mapping({"motion_five_frame_window": "true", "motion_max_val": "20"})
    assert o == MotionOptions(motion_five_frame_window=True, motion_max_val=20.0)
    with pytest.raises(ValueError, match="unknown motion option"):
        MotionOptions.from_mapping({"mffw": "true"})  # libvmaf looks options up by name
    with pytest.raises(ValueError, match="true or false"):
        MotionOptions.from_mapping({"debug": "1"})


# --- bad input --------------------------------------------------------------------------


def test_bad_input():
    p = _clip(1, 8, 8, 8, seed=0)[0]
    with pytest.raises(ValueError, match="uint16"):
        MotionState(10).extract(0, p)
    with pytest.raises(ValueError, match="too small"):
        MotionState(8).extract(0, p[:2])
    with pytest.raises(ValueError, match="bit depth 17"):
        MotionState(17).extract(0, p)
    with pytest.raises(ValueError, match="2-D"):
        MotionState(8).extract(0, p[None])
    s = MotionState(8)
    s.extract(0, p)
    with pytest.raises(ValueError, match="already extracted"):
        s.extract(0, p)
    with pytest.raises(ValueError, match="8x8"):
        s.extract(1, p[:, :7])
    s.flush()
    with pytest.raises(ValueError, match="after flush"):
        s.extract(1, p)
    with pytest.raises(ValueError, match="no previous reference picture"):
        MotionState(8).extract(1, p)
    five = MotionState(8, MotionOptions(motion_five_frame_window=True))
    five.extract(1, p)
    with pytest.raises(ValueError, match="no previous reference picture"):
        five.extract(2, p)
    forced = MotionState(8, MotionOptions(motion_force_zero=True))
    assert forced.extract(5, p) == {5: {"VMAF_integer_feature_motion_sad_score_force_0": 0.0}}


# --- against libvmaf --------------------------------------------------------------------

SO = os.environ.get("ADMCUDA_LIBVMAF")
SO = SO if SO and os.path.isfile(SO) else None
needs_libvmaf = pytest.mark.skipif(SO is None, reason="ADMCUDA_LIBVMAF names no libvmaf library")


class _Cfg(C.Structure):
    _fields_ = [
        ("log_level", C.c_int),
        ("n_threads", C.c_uint),
        ("n_subsample", C.c_uint),
        ("cpumask", C.c_uint64),
        ("gpumask", C.c_uint64),
    ]


class _Pic(C.Structure):
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


def _libvmaf_motion(planes, bpc, opts: MotionOptions, *, indices=None, n_threads=0, subsample=0):
    """libvmaf's motion outputs for ``planes`` (fed as both reference and distorted), keyed
    by the reference's printed names; SIMD masked off as the shared oracle does."""
    lib = C.CDLL(SO)
    lib.vmaf_feature_score_at_index.argtypes = [
        C.c_void_p,
        C.c_char_p,
        C.POINTER(C.c_double),
        C.c_uint,
    ]
    ctx = C.c_void_p()
    assert lib.vmaf_init(C.byref(ctx), _Cfg(0, n_threads, subsample, 0xFFFFFFFF, 0)) == 0
    d = C.c_void_p()
    for opt in M.OPTION_TABLE:
        v = getattr(opts, opt.name)
        if v != opt.default:
            val = ("true" if v else "false") if opt.kind is bool else repr(v)
            lib.vmaf_feature_dictionary_set(C.byref(d), opt.name.encode(), val.encode())
    assert lib.vmaf_use_feature(ctx, b"motion", d) == 0
    h, w = planes[0].shape
    bps = 1 if bpc == 8 else 2
    indices = range(len(planes)) if indices is None else indices
    for i, plane in zip(indices, planes, strict=True):
        pics = [_Pic(), _Pic()]
        for p in pics:
            assert lib.vmaf_picture_alloc(C.byref(p), 4, bpc, w, h) == 0  # 4:0:0
            rows = np.ascontiguousarray(plane.astype(plane.dtype.newbyteorder("<")))
            for r in range(h):
                C.memmove(p.data[0] + r * p.stride[0], rows[r].ctypes.data, w * bps)
        assert lib.vmaf_read_pictures(ctx, C.byref(pics[0]), C.byref(pics[1]), i) == 0
    assert lib.vmaf_read_pictures(ctx, None, None, 0) == 0
    cn, pn = collector_names(opts), output_names(opts)
    wanted = [f for f in M.PROVIDED_FEATURES if opts.debug or f != M.MOTION]
    out, s = [], C.c_double()
    for i in range(max(indices) + 1):
        row = {}
        for f in wanted:
            if lib.vmaf_feature_score_at_index(ctx, cn[f].encode(), C.byref(s), i) == 0:
                row[pn[f]] = s.value
        out.append(row)
    lib.vmaf_close(ctx)
    return out


@needs_libvmaf
@pytest.mark.parametrize("case", range(len(OPTION_SETS)))
def test_options_against_libvmaf(case):
    opts = _opts(OPTION_SETS[case])
    planes = _clip(14, 19, 23, 8, seed=100 + case)
    assert compute_motion(planes, 8, opts) == _libvmaf_motion(planes, 8, opts)


@needs_libvmaf
@pytest.mark.parametrize("bpc", [8, 9, 10, 12, 16])
@pytest.mark.parametrize(("h", "w"), [(3, 3), (4, 7), (17, 5), (36, 61)])
def test_sizes_and_depths_against_libvmaf(bpc, h, w):
    opts = MotionOptions(debug=True)
    planes = _clip(6, h, w, bpc, seed=bpc + h * w)
    assert compute_motion(planes, bpc, opts) == _libvmaf_motion(planes, bpc, opts)


@needs_libvmaf
@pytest.mark.parametrize("bpc", [9, 16])
def test_out_of_range_samples_against_libvmaf(bpc):
    """Full 16-bit samples under a lower bit depth: 9 bits makes libvmaf's uint32 row sums
    wrap on a 600-wide frame (the wrap test above shows the reference does)."""
    opts = MotionOptions(debug=True)
    planes = _clip(3, 5, 600, bpc, seed=bpc, full_range=True)
    assert compute_motion(planes, bpc, opts) == _libvmaf_motion(planes, bpc, opts)


@needs_libvmaf
@pytest.mark.parametrize("five", [False, True])
def test_threads_and_subsample_against_libvmaf(five):
    """Motion is fed every frame under ``n_subsample`` and the thread pool: the reference
    fed every frame gives libvmaf's numbers at every index."""
    opts = _opts({"motion_five_frame_window": five, "motion_moving_average": True})
    planes = _clip(17, 12, 10, 8, seed=9)
    want = compute_motion(planes, 8, opts)
    assert _libvmaf_motion(planes, 8, opts, subsample=3) == want
    assert _libvmaf_motion(planes, 8, opts, n_threads=2) == want
    assert _libvmaf_motion(planes, 8, opts, n_threads=2, subsample=4) == want


@needs_libvmaf
def test_index_gap_against_libvmaf():
    opts = MotionOptions(debug=True)
    planes = _clip(5, 7, 9, 8, seed=4)
    want = _libvmaf_motion(planes, 8, opts, indices=(0, 1, 2, 4, 5))
    state, got = MotionState(8, opts), {}
    for i, p in zip((0, 1, 2, 4, 5), planes, strict=True):
        got.update(state.extract(i, p))
    for i, v in state.flush().items():
        got[i].update(v)
    assert [got.get(i, {}) for i in range(6)] == want
