"""The integer VIF reference (reference/vif.py, reference/vif_filters.py).

Truth: ../shared/netflix/vmaf_goldens.json and, where present, testdata/vmaf_goldens.json
(libvmaf 3.2.0, Netflix/vmaf f85a8536, scalar C path, full double precision; provenance
in each file's ``_provenance`` key). Every VIF value of every frame there must be
identical. Stage tests hold each NumPy stage against a scalar transliteration of libvmaf's
loops below (Python ints, libvmaf's buffer layout), which also replays what libvmaf reads
where a scale is one row or column wide.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import math
from collections import defaultdict

import numpy as np
import pytest
from _frames import luma_frames, same
from admcuda.reference import vif as R
from admcuda.reference import vif_constants as V
from admcuda.reference import vif_filters as F
from conftest import NETFLIX, TESTDATA

# --- goldens ------------------------------------------------------------------------------------

# libvmaf's collector names for the scale scores; the other VIF outputs go by their own names.
COLLECTOR = {f"VMAF_integer_feature_vif_scale{k}_score": f"integer_vif_scale{k}" for k in range(4)}
# the built-in models that run VIF with vif_enhn_gain_limit=1.0
MODEL_OPTIONS = {
    "vmaf_v0.6.1neg": {"vif_enhn_gain_limit": "1.0"},
    "vmaf_4k_v0.6.1neg": {"vif_enhn_gain_limit": "1.0"},
}


def _load(path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


# ../shared's goldens, and the project's own (testdata/vmaf_goldens.json, same layout, pair
# paths relative to testdata/; values libvmaf gave differently from run to run are null
# and listed in unstable_fields or heap_fields)
GOLDENS = _load(NETFLIX / "vmaf_goldens.json")
TESTDATA_GOLDENS = _load(TESTDATA / "vmaf_goldens.json")


def _options(entry: dict) -> R.VifOptions:
    """The VIF options an entry ran with: its ``vif:k=v`` arguments, a model's own, and
    debug in features mode (the oracle registers VIF with debug=true there)."""
    kv: dict[str, str] = {}
    for arg in entry["args"]:
        feat, _, rest = arg.partition(":")
        if feat == "vif":
            k, _, v = rest.partition("=")
            kv[k] = v
    if entry["mode"] == "model":
        kv.update(MODEL_OPTIONS.get(entry["args"][0], {}))
    return R.VifOptions(
        vif_enhn_gain_limit=float(kv.get("vif_enhn_gain_limit", V.DEFAULT_ENHN_GAIN_LIMIT)),
        vif_skip_scale0=kv.get("vif_skip_scale0") == "true",
        debug=entry["mode"] == "features",
    )


def _vif_keys(frame: dict) -> list[str]:
    return [k for k in frame if k in COLLECTOR or k.startswith("integer_vif")]


def _entries(goldens: dict) -> list[str]:
    return [k for k, e in goldens.items() if not k.startswith("_") and _vif_keys(e["frames"][0])]


def _compare(entry: dict, root) -> None:
    """Every VIF value of every frame of one golden entry, with ``==``."""
    case = entry["case"]
    args = (case["w"], case["h"], case["fmt"], case["bitdepth"])
    refs = luma_frames(root / case["ref"], *args)
    diss = luma_frames(root / case["dis"], *args)
    assert len(refs) == len(entry["frames"])
    opts = _options(entry)
    unstable = set(entry.get("unstable_fields") or ()) | set(entry.get("heap_fields") or ())
    bad, n = [], 0
    for i, (r, d, gold) in enumerate(zip(refs, diss, entry["frames"], strict=True)):
        out = R.compute_vif(r, d, case["bitdepth"], opts)
        for k in _vif_keys(gold):
            if k in unstable:
                continue
            name = COLLECTOR.get(k, k)
            n += 1
            if not same(gold[k], out[name]):
                bad.append((i, name, gold[k], out[name], abs(out[name] - (gold[k] or 0))))
    assert n >= 4 * len(refs)
    assert not bad, (
        f"{len(bad)} of {n} differ, first (frame, name, libvmaf, ours, |diff|): {bad[:3]}"
    )


VIF_ENTRIES = _entries(GOLDENS)
TESTDATA_ENTRIES = _entries(TESTDATA_GOLDENS)


def test_goldens_hold_vif_truth():
    if not GOLDENS:
        pytest.skip("../shared/netflix is absent")
    assert VIF_ENTRIES
    # the gain-limited outputs' truth: written by libvmaf as integer_vif_scale<k>_egl_1
    egl = [k for k in VIF_ENTRIES if _options(GOLDENS[k]).vif_enhn_gain_limit == 1.0]
    assert egl and all("integer_vif_scale0_egl_1" in GOLDENS[k]["frames"][0] for k in egl)
    # and debug outputs are there for every features case
    assert any("integer_vif_num_scale3" in GOLDENS[k]["frames"][0] for k in VIF_ENTRIES)


@pytest.mark.parametrize("key", VIF_ENTRIES or [None])
def test_golden_entry_matches_libvmaf(key):
    if key is None:
        pytest.skip("../shared/netflix is absent")
    _compare(GOLDENS[key], NETFLIX)


@pytest.mark.parametrize("key", TESTDATA_ENTRIES or [None])
def test_testdata_golden_entry_matches_libvmaf(key):
    if key is None:
        pytest.skip("testdata/vmaf_goldens.json is absent")
    _compare(TESTDATA_GOLDENS[key], TESTDATA)


# --- a scalar transliteration of libvmaf's integer VIF ------------------------------------------

U32 = 0xFFFFFFFF


def _i32(x: int) -> int:
    x &= U32
    return x - (1 << 32) if x >> 31 else x


def _log2(table, x: int) -> int:
    k = x.bit_length() - 16  # 16 - clz32 and 48 - clz64 alike
    return int(table[x >> k]) + 2048 * k


class CVif:
    """libvmaf's ``extract`` on one frame with its buffers: ``buf`` rows of the picture
    buffer by row index (pads included), ``tmp`` row buffers by column position, both kept
    across scales as libvmaf keeps them, so a pad slot read before it is written gives what
    an earlier pass left there."""

    FILT = V.VIF_FILTERS

    def __init__(self, bpc: int, egl: float = 100.0):
        self.bpc = bpc
        self.egl = egl
        self.table = R.log_generate()
        self.buf = {"ref": defaultdict(lambda: defaultdict(int)), "dis": None}
        self.buf["dis"] = defaultdict(lambda: defaultdict(int))
        self.tmp = defaultdict(lambda: defaultdict(int))
        self.mu = {"ref": {}, "dis": {}}

    def load(self, ref: np.ndarray, dis: np.ndarray) -> None:
        for name, plane in (("ref", ref), ("dis", dis)):
            for i, row in enumerate(plane.tolist()):
                self.buf[name][i] = defaultdict(int, enumerate(row))

    def pad_top_and_bottom(self, h: int, fwidth: int) -> None:
        for i in range(1, fwidth // 2 + 1):
            for b in self.buf.values():
                b[-i] = defaultdict(int, b[i])
                b[h - 1 + i] = defaultdict(int, b[h - 1 - i])

    def pad_row(self, names, w: int, half: int) -> None:
        for f in range(1, half + 1):
            for n in names:
                self.tmp[n][-f] = self.tmp[n][f]
            for n in names:
                self.tmp[n][w - 1 + f] = self.tmp[n][w - 1 - f]

    def subsample(self, w: int, h: int, scale: int) -> None:
        """``subsample_rd_8`` (8-bit, scale 0) or ``subsample_rd_16``, then
        ``decimate_and_pad``."""
        filt = self.FILT[scale + 1]
        half = len(filt) // 2
        if scale == 0:
            vp = (128, 8) if self.bpc == 8 else (1 << (self.bpc - 1), self.bpc)
        else:
            vp = (32768, 16)
        cast16 = not (self.bpc == 8 and scale == 0)
        for i in range(h):
            for j in range(w):
                for n in ("ref", "dis"):
                    acc = sum(c * self.buf[n][i - half + k][j] for k, c in enumerate(filt))
                    v = ((acc & U32) + vp[0]) & U32
                    v >>= vp[1]
                    self.tmp[n + "_convol"][j] = v & 0xFFFF if cast16 else v
            self.pad_row(("ref_convol", "dis_convol"), w, half)
            for j in range(w):
                for n in ("ref", "dis"):
                    row = self.tmp[n + "_convol"]
                    acc = sum(c * row[j - half + k] for k, c in enumerate(filt)) & U32
                    self.mu[n][i, j] = (((acc + 32768) & U32) >> 16) & 0xFFFF
        for i in range(h // 2):
            for j in range(w // 2):
                for n in ("ref", "dis"):
                    self.buf[n][i][j] = self.mu[n][2 * i, 2 * j]
        self.pad_top_and_bottom(h // 2, len(self.FILT[scale]))

    def statistic(self, w: int, h: int, scale: int) -> tuple[np.float32, np.float32]:
        """``vif_statistic_8`` (8-bit, scale 0) or ``vif_statistic_16``."""
        filt = self.FILT[scale]
        half = len(filt) // 2
        if scale == 0 and self.bpc == 8:
            vp, vp_sq = (128, 8), (0, 0)
        elif scale == 0:
            vp = (1 << (self.bpc - 1), self.bpc)
            vp_sq = (1 << (2 * (self.bpc - 8) - 1), 2 * (self.bpc - 8))
        else:
            vp = vp_sq = (32768, 16)
        names = ("mu1", "mu2", "ref", "dis", "ref_dis")
        acc_num_log = acc_den_log = acc_num_non = acc_den_non = 0
        for i in range(h):
            for j in range(w):
                col = [
                    (self.buf["ref"][i - half + k][j], self.buf["dis"][i - half + k][j])
                    for k in range(len(filt))
                ]
                m1 = sum(c * x for c, (x, _) in zip(filt, col, strict=True)) & U32
                m2 = sum(c * y for c, (_, y) in zip(filt, col, strict=True)) & U32
                xx = sum(c * x * x for c, (x, _) in zip(filt, col, strict=True))
                yy = sum(c * y * y for c, (_, y) in zip(filt, col, strict=True))
                xy = sum(c * x * y for c, (x, y) in zip(filt, col, strict=True))
                mu_cast = 0xFFFFFFFF if (scale == 0 and self.bpc == 8) else 0xFFFF
                t = self.tmp
                t["mu1"][j] = (((m1 + vp[0]) & U32) >> vp[1]) & mu_cast
                t["mu2"][j] = (((m2 + vp[0]) & U32) >> vp[1]) & mu_cast
                t["ref"][j] = ((xx + vp_sq[0]) >> vp_sq[1]) & U32
                t["dis"][j] = ((yy + vp_sq[0]) >> vp_sq[1]) & U32
                t["ref_dis"][j] = ((xy + vp_sq[0]) >> vp_sq[1]) & U32
            self.pad_row(names, w, half)
            for j in range(w):
                f = {
                    n: sum(c * self.tmp[n][j - half + k] for k, c in enumerate(filt)) for n in names
                }
                mu1, mu2 = f["mu1"] & U32, f["mu2"] & U32
                xx, yy, xy = (((f[n] + 32768) >> 16) & U32 for n in ("ref", "dis", "ref_dis"))
                s1 = _i32(xx - ((mu1 * mu1 + (1 << 31)) >> 32))
                s2 = max(_i32(yy - ((mu2 * mu2 + (1 << 31)) >> 32)), 0)
                s12 = _i32(xy - ((mu1 * mu2 + (1 << 31)) >> 32))
                if s1 >= 131072:
                    acc_den_log += _log2(self.table, (131072 + s1) & U32) - 2048 * 17
                    if s12 > 0 and s2 > 0:
                        g = s12 / (s1 + 65536 * 1.0e-10)
                        sv = max(int(s2 - g * s12), 0)
                        g = g if g < self.egl else self.egl
                        numer1 = sv + 131072
                        big = int(g * g * s1) + numer1
                        acc_num_log += _log2(self.table, big) - _log2(self.table, numer1)
                else:
                    acc_num_non += s2
                    acc_den_non += 1
        num = acc_num_log / 2048.0 + (acc_den_non - (acc_num_non / 16384.0) / 65025.0)
        den = acc_den_log / 2048.0 + acc_den_non
        return np.float32(num), np.float32(den)

    def extract(self, ref, dis, skip0=False):
        h, w = ref.shape
        self.load(ref, dis)
        self.pad_top_and_bottom(h, len(self.FILT[0]))
        out = []
        for scale in range(4):
            if scale > 0:
                self.subsample(w, h, scale - 1)
                w, h = w // 2, h // 2
            out.append(None if scale == 0 and skip0 else self.statistic(w, h, scale))
        return out


def _planes(rng, h, w, bpc, kind="noise"):
    top = (1 << bpc) - 1
    dt = np.uint8 if bpc == 8 else np.uint16
    if kind == "wild":  # samples above the bit depth: libvmaf's casts wrap them
        r = rng.integers(0, 65536, (h, w))
        d = rng.integers(0, 65536, (h, w))
    elif kind == "noise":
        r = rng.integers(0, top + 1, (h, w))
        d = np.clip(r + rng.integers(-top // 8, top // 8 + 1, (h, w)), 0, top)
    else:  # a smooth ramp and a contrast-stretched copy: gains above 1, sigma12 > 0
        yy, xx = np.mgrid[0:h, 0:w]
        r = (top * (0.5 + 0.3 * np.sin(xx / 2.3) * np.cos(yy / 1.7))).astype(np.int64)
        d = np.clip((r - top // 2) * 3 + top // 2 + rng.integers(-2, 3, (h, w)), 0, top)
    return r.astype(dt), d.astype(dt)


# --- stage tests --------------------------------------------------------------------------------


def test_log_generate_is_libm_log2f_rounded():
    libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    libm.log2f.restype = ctypes.c_float
    libm.log2f.argtypes = (ctypes.c_float,)
    table = R.log_generate()
    assert table.dtype == np.uint16 and table.shape == (65537,)
    want = np.zeros(65537, dtype=np.int64)
    for i in range(32767, 65536):
        x = np.float32(libm.log2f(float(i))) * np.float32(2048)
        want[i] = math.floor(float(x) + 0.5)  # C round(): half away from zero
    np.testing.assert_array_equal(table, want)
    # a double log2 rounds differently somewhere: the table must come from float log2f
    double = np.floor(np.log2(np.arange(32767, 65536)) * 2048 + 0.5)
    assert (double != table[32767:65536]).any()
    assert table[32768] == 15 * 2048 and table[65535] == 32768 and table[:32767].max() == 0


def test_log2_lookups_match_scalar():
    table = R.log_generate()
    rng = np.random.default_rng(5)
    x32 = np.concatenate(
        [rng.integers(1 << 15, 1 << 32, 4000), [1 << 15, (1 << 16) - 1, 1 << 16, U32, 262144]]
    )
    x64 = np.concatenate(
        [
            rng.integers(1 << 17, 1 << 62, 4000),
            [1 << 17, (1 << 53) - 1, 1 << 53, (1 << 53) + 1, (1 << 54) - 1, (1 << 63) - 1],
        ]
    ).astype(np.int64)
    for fn, xs in ((R.log2_32, x32), (R.log2_64, x64)):
        got = fn(table, xs)
        want = [_log2(table, int(x)) for x in xs]
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", range(1, 21))
@pytest.mark.parametrize("half", [1, 2, 4, 8])
def test_mirror_indices_replays_libvmaf(n, half):
    slots = {p: ("old", p) for p in range(-half, n + half)}
    slots.update({p: ("core", p) for p in range(n)})
    for f in range(1, half + 1):
        slots[-f] = slots[f]
        slots[n - 1 + f] = slots[n - 1 - f]
    want = [slots[p][1] for p in range(-half, n + half)]
    got = F.mirror_indices(n, half)
    np.testing.assert_array_equal(got, want)
    if n > half:
        np.testing.assert_array_equal(got, np.pad(np.arange(n), half, mode="reflect"))
    assert (got < n).all() == (n >= 2)


def test_mirror_of_nothing_is_refused():
    with pytest.raises(ValueError, match="side of 0"):
        F.mirror_indices(0, 1)
    with pytest.raises(ValueError, match="held before"):
        F.pad_top_and_bottom(np.zeros((1, 4), np.uint16), 3)


@pytest.mark.parametrize(
    "bpc,kind", [(8, "noise"), (10, "noise"), (12, "noise"), (16, "noise"), (10, "wild")]
)
@pytest.mark.parametrize("hw", [(9, 9), (8, 8), (11, 7), (17, 18), (5, 6)])
def test_subsample_matches_scalar(bpc, kind, hw):
    h, w = hw
    rng = np.random.default_rng(bpc * 100 + h * 10 + w)
    ref, dis = _planes(rng, h, w, bpc, kind)
    c = CVif(bpc)
    c.load(ref, dis)
    c.pad_top_and_bottom(h, 17)
    c.subsample(w, h, 0)
    rp = F.pad_top_and_bottom(ref, 17)
    dp = F.pad_top_and_bottom(dis, 17)
    r1, d1 = F.subsample_rd_8(rp, dp) if bpc == 8 else F.subsample_rd_16(rp, dp, 0, bpc)
    pad = V.PAD_ROWS[1]
    assert r1.shape == (h // 2 + 2 * pad, w // 2) and r1.dtype == np.uint16
    for name, got in (("ref", r1), ("dis", d1)):
        want = [[c.buf[name][i][j] for j in range(w // 2)] for i in range(-pad, h // 2 + pad)]
        np.testing.assert_array_equal(got, want)
    # the next scale's decimation, from uint16 planes
    c.subsample(w // 2, h // 2, 1)
    r2, _ = F.subsample_rd_16(r1, d1, 1, bpc)
    pad = V.PAD_ROWS[2]
    want = [[c.buf["ref"][i][j] for j in range(w // 4)] for i in range(-pad, h // 4 + pad)]
    np.testing.assert_array_equal(r2, want)


def test_decimate_and_pad_takes_even_samples_of_odd_planes():
    mu = np.arange(9 * 7, dtype=np.uint16).reshape(9, 7)
    out = F.decimate_and_pad(mu, 1)  # padded by scale 1's reach, 4 rows
    assert out.shape == (4 + 8, 3)
    dec = mu[0:8:2, 0:6:2]
    # 4 rows padded by 4, worked by hand through libvmaf's copy order: rows -4..7 read
    # rows 2 3 2 1 | 0 1 2 3 | 2 1 0 1 (row -4 copies row 4, itself written from row 2)
    np.testing.assert_array_equal(out, dec[[2, 3, 2, 1, 0, 1, 2, 3, 2, 1, 0, 1]])


@pytest.mark.parametrize(
    "bpc,scale", [(8, 0), (10, 0), (12, 0), (16, 0), (8, 1), (10, 2), (16, 3), (12, 3)]
)
@pytest.mark.parametrize("hw", [(9, 9), (12, 17), (4, 5), (3, 2)])
def test_filters_and_statistic_match_scalar(bpc, scale, hw):
    h, w = hw
    rng = np.random.default_rng(bpc + 7 * scale + 31 * h + w)
    in_bpc = 16 if scale > 0 else bpc  # above scale 0 the planes are uint16 means
    ref, dis = _planes(rng, h, w, in_bpc, "smooth" if h % 2 else "noise")
    c = CVif(bpc)
    c.load(ref, dis)
    pad = V.PAD_ROWS[scale]
    c.pad_top_and_bottom(h, 2 * pad + 1)
    want = c.statistic(w, h, scale)
    rp = F.pad_top_and_bottom(ref, 2 * pad + 1)
    dp = F.pad_top_and_bottom(dis, 2 * pad + 1)
    if bpc == 8 and scale == 0:
        got = R.vif_statistic_8(rp, dp, R.log_generate(), 100.0)
    else:
        got = R.vif_statistic_16(rp, dp, bpc, scale, R.log_generate(), 100.0)
    assert got == want
    # the vertical pass's row buffers, against what the scalar loops left after the last row
    if bpc == 8 and scale == 0:
        tmp = R.vif_vertical_8(rp, dp)
    else:
        tmp = R.vif_vertical_16(rp, dp, bpc, scale)
    assert all(m.shape == (h, w) and m.dtype == np.uint32 for m in tmp)
    last = {n: [c.tmp[n][j] for j in range(w)] for n in ("mu1", "mu2", "ref", "dis", "ref_dis")}
    for n, m in zip(("mu1", "mu2", "ref", "dis", "ref_dis"), tmp, strict=True):
        np.testing.assert_array_equal(m[-1], last[n])


def _sigmas(rng, n):
    s1 = np.concatenate(
        [
            rng.integers(-(1 << 20), 1 << 31, n),
            [131071, 131072, 131073, (1 << 31) - 1, -(1 << 31)],
        ]
    )
    s12 = rng.integers(-(1 << 22), 1 << 24, s1.size)
    s2 = np.maximum(rng.integers(-(1 << 10), 1 << 26, s1.size), 0)
    s12[::7] = np.sqrt(np.abs(s1[::7]) * s2[::7]) * 1.01  # sv_sq below zero
    return s1.astype(np.int32), s2.astype(np.int32), s12.astype(np.int32)


@pytest.mark.parametrize("egl", [100.0, 1.0, 2.5])
def test_residuals_match_scalar(egl):
    rng = np.random.default_rng(int(egl * 10))
    s1, s2, s12 = _sigmas(rng, 3000)
    table = R.log_generate()
    got = R.vif_residuals(s1, s2, s12, table, egl)
    num_log = den_log = num_non = den_non = 0
    for a, b, c in zip(s1.tolist(), s2.tolist(), s12.tolist(), strict=True):
        if a >= 131072:
            den_log += _log2(table, (131072 + a) & U32) - 2048 * 17
            if c > 0 and b > 0:
                g = c / (a + 65536 * 1.0e-10)
                sv = max(int(b - g * c), 0)
                g = g if g < egl else egl
                num_log += _log2(table, int(g * g * a) + sv + 131072) - _log2(table, sv + 131072)
        else:
            num_non += b
            den_non += 1
    assert got == (num_log, den_log, num_non, den_non)
    assert 0 < den_non < s1.size


def test_num_den_rounds_doubles_to_float():
    res = R.VifResiduals(123456789, 987654321, 3333333, 4321)
    num, den = R.vif_num_den(res)
    assert num.dtype == np.float32 and den.dtype == np.float32
    assert num == np.float32(123456789 / 2048.0 + (4321 - (3333333 / 16384.0) / 65025.0))
    assert den == np.float32(987654321 / 2048.0 + 4321)


# --- whole frames ---------------------------------------------------------------------------------


@pytest.mark.parametrize("bpc", [8, 10, 12, 16])
@pytest.mark.parametrize("hw", [(8, 8), (8, 13), (15, 9), (16, 16), (17, 23)])
def test_frame_matches_scalar_libvmaf(bpc, hw):
    """Whole frames, small enough for the scalar loops, one- and two-wide scales included
    (8..15 rows or columns make scale 3 one row or column wide)."""
    h, w = hw
    rng = np.random.default_rng(bpc * 1000 + h * 37 + w)
    kind = "smooth" if (h + w) % 2 else "noise"
    if bpc == 12 and h == 16:
        kind = "wild"
    ref, dis = _planes(rng, h, w, bpc, kind)
    egl = 1.0 if w % 2 else 100.0
    skip0 = h == 15
    want = CVif(bpc, egl).extract(ref, dis, skip0)
    opts = R.VifOptions(vif_enhn_gain_limit=egl, vif_skip_scale0=skip0, debug=True)
    got = R.vif_scales(ref, dis, bpc, opts)
    assert got == want
    assert (got[0] is None) == skip0


def test_sizes_below_libvmaf_minimum_are_refused():
    ok = np.zeros((8, 8), np.uint8)
    R.compute_vif(ok, ok, 8, R.VifOptions())
    for h, w in ((7, 32), (32, 7), (1, 1)):
        z = np.zeros((h, w), np.uint8)
        with pytest.raises(ValueError, match="too small"):
            R.compute_vif(z, z, 8, R.VifOptions())


@pytest.mark.parametrize("hw", [(8, 8), (9, 31), (17, 17), (33, 65), (35, 18)])
def test_odd_and_tiny_frames_score(hw):
    rng = np.random.default_rng(sum(hw))
    ref, dis = _planes(rng, *hw, 10)
    out = R.compute_vif(ref, dis, 10, R.VifOptions(debug=True))
    assert list(out) == list(R.ALL_FEATURES)
    assert all(math.isfinite(v) for v in out.values())


@pytest.mark.parametrize(
    "bad,msg",
    [
        (dict(bitdepth=17), "bit depth"),
        (dict(bitdepth=8.0), "integer"),
        (dict(dtype=np.uint16), "uint8"),
        (dict(shape=(20, 21)), "one size"),
    ],
)
def test_bad_frames_are_refused(bad, msg):
    ref = np.zeros((20, 20), bad.get("dtype", np.uint8))
    dis = np.zeros(bad.get("shape", (20, 20)), bad.get("dtype", np.uint8))
    with pytest.raises(ValueError, match=msg):
        R.compute_vif(ref, dis, bad.get("bitdepth", 8), R.VifOptions())


@pytest.mark.parametrize("egl", [0.99, 100.5, float("nan"), "2"])
def test_gain_limit_outside_libvmaf_range_is_refused(egl):
    with pytest.raises(ValueError, match="vif_enhn_gain_limit"):
        R.VifOptions(vif_enhn_gain_limit=egl)


def test_skip_scale0_outputs():
    rng = np.random.default_rng(9)
    ref, dis = _planes(rng, 40, 48, 8)
    full = R.compute_vif(ref, dis, 8, R.VifOptions(debug=True))
    skip = R.compute_vif(ref, dis, 8, R.VifOptions(vif_skip_scale0=True, debug=True))
    assert all(k.endswith("_ssclz") for k in skip)
    skip = {k.removesuffix("_ssclz"): v for k, v in skip.items()}
    assert skip["integer_vif_scale0"] == 0.0 and full["integer_vif_scale0"] != 0.0
    assert skip["integer_vif_num_scale0"] == 0.0 and skip["integer_vif_den_scale0"] == -1.0
    for k in range(1, 4):
        for part in ("scale", "num_scale", "den_scale"):
            assert skip[f"integer_vif_{part}{k}"] == full[f"integer_vif_{part}{k}"]
    num = sum(skip[f"integer_vif_num_scale{k}"] for k in range(1, 4))
    den = sum(skip[f"integer_vif_den_scale{k}"] for k in range(1, 4))
    assert skip["integer_vif_num"] == num != full["integer_vif_num"]
    assert skip["integer_vif_den"] == den != full["integer_vif_den"]
    assert skip["integer_vif"] == num / den


def test_output_names_follow_libvmaf():
    assert R.feature_suffix(R.VifOptions()) == ""
    assert R.feature_suffix(R.VifOptions(debug=True)) == ""
    assert R.feature_suffix(R.VifOptions(vif_enhn_gain_limit=1)) == "_egl_1"
    opts = R.VifOptions(vif_enhn_gain_limit=1.37, vif_skip_scale0=True)
    assert (
        R.feature_names(opts)["integer_vif_den_scale2"] == "integer_vif_den_scale2_egl_1.37_ssclz"
    )
    rng = np.random.default_rng(2)
    ref, dis = _planes(rng, 16, 16, 8)
    assert list(R.compute_vif(ref, dis, 8, R.VifOptions())) == list(R.BASE_FEATURES)
    out = R.compute_vif(ref, dis, 8, R.VifOptions(vif_enhn_gain_limit=1.0, debug=True))
    assert list(out) == [n + "_egl_1" for n in R.ALL_FEATURES]


def test_flat_frames_follow_c_division():
    """A flat plane has no variance anywhere: every pixel goes to the non-log sums, and
    identical flat planes score num/den = 1 at each scale."""
    flat = np.full((24, 24), 77, np.uint8)
    out = R.compute_vif(flat, flat, 8, R.VifOptions(debug=True))
    assert [out[f"integer_vif_scale{k}"] for k in range(4)] == [1.0] * 4
    assert out["integer_vif_den_scale0"] == 24 * 24
