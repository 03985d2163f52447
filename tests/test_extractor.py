"""AdmExtractor: lifecycle, input kinds, validation, backends; scores equal the reference.

The CPU backend runs everywhere. The ``cuda`` tests need CuPy and a GPU and skip
themselves otherwise; a fake CUDA module checks the wiring of the GPU path on any
machine.
"""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
from _frames import luma_frames
from admcuda.reference import compute_adm
from conftest import NETFLIX

from admcuda.errors import AdmError
from admcuda.extractor import AdmExtractor
from admcuda.options import NON_DEBUG_BASE_NAMES, OUTPUT_BASE_NAMES, AdmOptions, feature_names


def _cuda_ok() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001
        return False


CUDA_OK = _cuda_ok()
needs_cuda = [pytest.mark.cuda, pytest.mark.skipif(not CUDA_OK, reason="needs CuPy and a GPU")]
BACKENDS = ["cpu", pytest.param("cuda", marks=needs_cuda)]


def pair(h: int, w: int, bitdepth: int = 8, seed: int = 0, n: int | None = None):
    """A smooth-ish reference and a noisy, blurred distorted version."""
    rng = np.random.default_rng(seed)
    shape = (h, w) if n is None else (n, h, w)
    peak = (1 << bitdepth) - 1
    base = rng.integers(0, peak + 1, shape)
    ref = (base + np.roll(base, 1, -1) + np.roll(base, 1, -2)) // 3
    dis = np.clip((ref + np.roll(ref, 1, -1)) // 2 + rng.integers(-4, 5, shape), 0, peak)
    dtype = np.uint8 if bitdepth == 8 else np.uint16
    return ref.astype(dtype), dis.astype(dtype)


def expected(ref, dis, bitdepth, opts: AdmOptions) -> dict[str, float]:
    raw = compute_adm(ref, dis, bitdepth, opts)
    names = feature_names(opts)
    bases = OUTPUT_BASE_NAMES if opts.debug else NON_DEBUG_BASE_NAMES
    return {names[b]: raw[b] for b in bases}


def assert_same(got: dict, want: dict) -> None:
    assert list(got) == list(want)
    for name in want:
        a, b = got[name], want[name]
        assert a == b or (a != a and b != b), (name, a, b)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("h", "w", "bitdepth", "options"),
    [
        (17, 17, 8, None),
        (21, 33, 10, {"egl": 1.2}),
        (40, 57, 12, {"debug": True, "adm_skip_aim": True}),
        (36, 64, 16, {"ssz": True, "nvd": 4}),
    ],
)
def test_extract_equals_reference(backend, h, w, bitdepth, options):
    ref, dis = pair(h, w, bitdepth, seed=h * w)
    with AdmExtractor(w, h, bitdepth, options=options, backend=backend) as adm:
        assert adm.backend == backend
        got = adm.extract(ref, dis)
    assert_same(got, expected(ref, dis, bitdepth, adm.options))
    assert len(got) == (18 if adm.options.debug else 7)


@pytest.mark.parametrize("backend", BACKENDS)
def test_netflix_frames_equal_reference(backend):
    path = NETFLIX / "src01_hrc00_576x324_3f.yuv"
    if not path.exists():
        pytest.skip("shared Netflix clips not found")
    refs = luma_frames(path, 576, 324, "420", 8)
    dis = luma_frames(NETFLIX / "src01_hrc01_576x324_3f.yuv", 576, 324, "420", 8)
    with AdmExtractor(576, 324, options={"debug": "true"}, backend=backend) as adm:
        got = adm.extract_batch(refs, dis)
    for k, frame in enumerate(got):
        assert_same(frame, expected(refs[k], dis[k], 8, adm.options))


@pytest.mark.parametrize("backend", BACKENDS)
def test_batch_forms_agree(backend):
    refs, dis = pair(24, 30, 10, seed=3, n=5)
    with AdmExtractor(30, 24, 10, backend=backend, batch=2) as adm:
        stacked = adm.extract_batch(refs, dis)
        listed = adm.extract_batch(list(refs), list(dis))
        single = [adm.extract(r, d) for r, d in zip(refs, dis, strict=True)]
        assert adm.extract_batch([], []) == []
    assert stacked == listed == single
    for k in range(5):
        assert_same(stacked[k], expected(refs[k], dis[k], 10, AdmOptions()))


def test_options_forms_and_names():
    ref, dis = pair(20, 20)
    for options in (
        {"egl": 1.2},
        {"adm_enhn_gain_limit": "1.2"},
        AdmOptions(adm_enhn_gain_limit=1.2),
    ):
        with AdmExtractor(20, 20, options=options, backend="cpu") as adm:
            assert adm.output_names[0] == "integer_adm2_egl_1.2"
            assert list(adm.extract(ref, dis)) == list(adm.output_names)


def test_frame_index_counting():
    ref, dis = pair(20, 24)
    with AdmExtractor(24, 20, backend="cpu") as adm:
        assert adm.frames_extracted == 0
        adm.extract(ref, dis)
        adm.extract(ref, dis)
        assert adm.frames_extracted == 2
        adm.extract(ref, dis, index=10)
        assert adm.frames_extracted == 11
        adm.extract_batch([ref, ref], [dis, dis])
        assert adm.frames_extracted == 13
        adm.extract_batch([ref], [dis], start_index=0)
        assert adm.frames_extracted == 1
        with pytest.raises(AdmError, match="non-negative"):
            adm.extract(ref, dis, index=-1)


def test_lifecycle():
    ref, dis = pair(20, 24)
    adm = AdmExtractor(24, 20, backend="cpu")
    assert "AdmExtractor(24x20, 8-bit, backend='cpu'" in repr(adm)
    adm.close()
    adm.close()
    assert adm.closed
    with pytest.raises(AdmError, match="closed"):
        adm.extract(ref, dis)
    with pytest.raises(AdmError, match="closed"):
        adm.extract_batch([ref], [dis])


@pytest.mark.parametrize(
    ("args", "kwargs", "needle"),
    [
        ((16, 40), {}, "width 16 is too small"),
        ((40, 10), {}, "height 10 is too small"),
        ((40, 40, 9), {}, "bit depth"),
        ((40, 40), {"backend": "gpu"}, "unknown backend 'gpu'"),
        ((40, 40), {"batch": 0}, "batch must be an integer >= 1"),
        ((40, 40), {"batch": 2.5}, "batch must be an integer >= 1"),
        ((40, 40), {"options": {"egl": 0.5}}, "adm_enhn_gain_limit"),
        ((40, 40), {"options": {"bogus": 1}}, "unknown ADM option"),
        ((40, 40), {"options": 3}, "options must be"),
        ((40, 40), {"options": [("egl", "1.2")]}, "options must be"),
        ((40, 40), {"options": "egl"}, "options expects NAME=VALUE, got 'egl'"),
        ((40, 40, 10.0), {}, "unsupported bit depth 10.0"),
        ((40, 40, 8.0), {}, "unsupported bit depth 8.0"),  # 8.0 in (8, 10, 12, 16)
        ((40, 40, True), {}, "unsupported bit depth True"),
        ((40.0, 40), {}, "width must be an integer"),
        ((40, 40), {"device": -1}, "device must be an integer >= 0"),
        ((40, 40), {"device": True}, "device must be an integer >= 0"),
    ],
)
def test_constructor_errors(args, kwargs, needle):
    with pytest.raises(AdmError, match=needle) as info:
        AdmExtractor(*args, **kwargs)
    assert "\n" not in str(info.value)


def test_numpy_integers_and_option_strings_are_taken():
    """Sizes and bit depths as NumPy integers are ints; options as libvmaf's string are
    the same options as the mapping."""
    ref, dis = pair(20, 24, 10)
    with AdmExtractor(np.int64(24), np.int32(20), np.int64(10), backend="cpu",
                      options="egl=1.2:nvd=4", batch=np.int64(2)) as adm:  # fmt: skip
        assert (type(adm.width), type(adm.height), type(adm.bitdepth)) == (int, int, int)
        assert adm.options == AdmOptions(adm_enhn_gain_limit=1.2, adm_norm_view_dist=4.0)
        assert_same(adm.extract(ref, dis), expected(ref, dis, 10, adm.options))


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.asmatrix
def test_masked_arrays_and_matrices_are_refused():
    """A masked array's masked samples and np.matrix's rows would not be scored as the
    caller means them: both are refused, in extract, extract_batch and the map."""
    from admcuda.report.distmap import distortion_map

    ref, dis = pair(20, 24)
    masked = np.ma.masked_array(ref, mask=ref > 200)
    with AdmExtractor(24, 20, backend="cpu") as adm:
        for bad in (masked, np.asmatrix(ref)):
            name = type(bad).__name__
            with pytest.raises(AdmError, match=f"reference frame is a {name}; pass a plain"):
                adm.extract(bad, dis)
            with pytest.raises(AdmError, match=rf"reference frames\[0\] is a {name}"):
                adm.extract_batch([bad], [dis])
            with pytest.raises(AdmError, match=f"distorted frame is a {name}"):
                distortion_map(ref, bad)
        with pytest.raises(AdmError, match="reference frames is a MaskedArray"):
            adm.extract_batch(np.ma.masked_array(ref[None]), dis[None])
        assert adm.frames_extracted == 0


def test_input_errors():
    ref, dis = pair(20, 24)
    with AdmExtractor(24, 20, backend="cpu") as adm:
        cases = [
            ((ref.astype(np.uint16), dis), "is uint16, expected uint8 for 8-bit"),
            ((ref.T, dis), r"shape \(24, 20\), expected \(height, width\) = \(20, 24\)"),
            ((ref[None], dis), "must be a 2-D luma plane"),
            ((ref.tolist(), dis), "NumPy, CuPy or DLPack-capable array, got list"),
            ((ref, "frame"), "distorted frame must be"),
        ]
        for (r, d), needle in cases:
            with pytest.raises(AdmError, match=needle) as info:
                adm.extract(r, d)
            assert "\n" not in str(info.value)
        with pytest.raises(AdmError, match="2 reference frames but 1 distorted"):
            adm.extract_batch([ref, ref], [dis])
        with pytest.raises(AdmError, match="3-D"):
            adm.extract_batch(ref, dis)
        with pytest.raises(AdmError, match=r"reference frames\[1\] is uint16"):
            adm.extract_batch([ref, ref.astype(np.uint16)], [dis, dis])
        with pytest.raises(AdmError, match="sequence of 2-D planes, got int"):
            adm.extract_batch(3, 4)
        assert adm.frames_extracted == 0


def test_sample_range_checked_for_10_and_12_bits():
    ref, dis = pair(20, 24, 10)
    bad = dis.copy()
    bad[3, 4] = 1024
    with AdmExtractor(24, 20, 10, backend="cpu") as adm:
        with pytest.raises(AdmError, match="sample value 1024, too large for 10 bits"):
            adm.extract(ref, bad)
        with pytest.raises(AdmError, match="too large for 10 bits"):
            adm.extract_batch(np.stack([ref, ref]), np.stack([dis, bad]))
    with AdmExtractor(24, 20, 16, backend="cpu") as adm:
        adm.extract(ref, bad)  # any uint16 fits 16 bits


class _DLPackOnly:
    """An array that offers nothing but the DLPack protocol (like a foreign tensor)."""

    def __init__(self, array, device=None):
        self._array = array
        self._device = device

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._device or self._array.__dlpack_device__()


def test_dlpack_cpu_input():
    ref, dis = pair(20, 24, 12)
    with AdmExtractor(24, 20, 12, backend="cpu") as adm:
        got = adm.extract(_DLPackOnly(ref), _DLPackOnly(dis))
        batch = adm.extract_batch(_DLPackOnly(ref[None]), [_DLPackOnly(dis)])
    assert_same(got, expected(ref, dis, 12, AdmOptions()))
    assert batch == [got]


def test_dlpack_foreign_devices(monkeypatch):
    ref, _ = pair(20, 24)
    with AdmExtractor(24, 20, backend="cpu") as adm:
        with pytest.raises(AdmError, match="DLPack device type 4"):
            adm.extract(_DLPackOnly(ref, device=(4, 0)), ref)
        monkeypatch.setitem(sys.modules, "cupy", None)
        with pytest.raises(AdmError, match="on a GPU needs CuPy, which is not installed"):
            adm.extract(_DLPackOnly(ref, device=(2, 0)), ref)


def test_torch_cpu_tensor():
    torch = pytest.importorskip("torch")
    ref, dis = pair(20, 24)
    with AdmExtractor(24, 20, backend="cpu") as adm:
        got = adm.extract(torch.from_numpy(ref), torch.from_numpy(dis))
        batch = adm.extract_batch(torch.from_numpy(ref[None]), torch.from_numpy(dis[None]))
    assert_same(got, expected(ref, dis, 8, AdmOptions()))
    assert batch == [got]


# ---- backend selection -----------------------------------------------------------------


def test_missing_cuda_module(monkeypatch):
    monkeypatch.setitem(sys.modules, "admcuda.backends.cuda", None)
    with AdmExtractor(24, 20) as adm:
        assert adm.backend == "cpu"
    with pytest.raises(AdmError, match="^CUDA backend unavailable: "):
        AdmExtractor(24, 20, backend="cuda")


def _fake_cuda(available: bool, calls: list) -> types.ModuleType:
    """A stand-in for admcuda.backends.cuda that scores with the reference."""
    module = types.ModuleType("admcuda.backends.cuda")

    class CudaAdm:
        def __init__(self, width, height, bitdepth, opts, **kwargs):
            calls.append(("init", width, height, bitdepth, opts, kwargs))
            self.bitdepth, self.opts = bitdepth, opts

        def scores(self, refs, dis):
            calls.append(("scores", type(refs), refs.shape, type(dis), dis.shape))
            return [
                compute_adm(r, d, self.bitdepth, self.opts) for r, d in zip(refs, dis, strict=True)
            ]

    module.CudaAdm = CudaAdm
    module.cuda_available = lambda: available
    return module


def test_cuda_unavailable_falls_back(monkeypatch):
    calls: list = []
    monkeypatch.setitem(sys.modules, "admcuda.backends.cuda", _fake_cuda(False, calls))
    with AdmExtractor(24, 20) as adm:
        assert adm.backend == "cpu"
    with pytest.raises(AdmError, match="CUDA backend unavailable: .*no CUDA device"):
        AdmExtractor(24, 20, backend="cuda")
    assert calls == []


def test_cuda_path_wiring(monkeypatch):
    calls: list = []
    monkeypatch.setitem(sys.modules, "admcuda.backends.cuda", _fake_cuda(True, calls))
    refs, dis = pair(20, 24, 10, n=3)
    with AdmExtractor(24, 20, 10, options={"egl": 1.2}, batch=7) as adm:
        assert adm.backend == "cuda"
        one = adm.extract(refs[0], dis[0])
        many = adm.extract_batch(list(refs), dis)
    init = calls[0]
    assert init[:4] == ("init", 24, 20, 10) and init[5] == {"batch": 7}
    assert init[4].adm_enhn_gain_limit == 1.2
    # NumPy input stays NumPy (the backend uploads it), one frame as a batch of one.
    assert calls[1] == ("scores", np.ndarray, (1, 20, 24), np.ndarray, (1, 20, 24))
    assert calls[2] == ("scores", np.ndarray, (3, 20, 24), np.ndarray, (3, 20, 24))
    assert_same(one, expected(refs[0], dis[0], 10, adm.options))
    assert many[0] == one


def test_cuda_constructor_failure_is_adm_error(monkeypatch):
    module = _fake_cuda(True, [])

    def boom(*args, **kwargs):
        raise ValueError("batch must be in 1..65535, got 70000")

    module.CudaAdm = boom
    monkeypatch.setitem(sys.modules, "admcuda.backends.cuda", module)
    with pytest.raises(AdmError, match="CUDA backend unavailable: ValueError: batch must be"):
        AdmExtractor(24, 20, backend="cuda", batch=70000)
    with AdmExtractor(24, 20, batch=70000) as adm:
        assert adm.backend == "cpu"


# ---- GPU inputs ------------------------------------------------------------------------


@pytest.mark.cuda
@pytest.mark.skipif(not CUDA_OK, reason="needs CuPy and a GPU")
@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_cupy_input(backend):
    import cupy

    refs, dis = pair(30, 40, 10, seed=5, n=3)
    with AdmExtractor(40, 30, 10, backend=backend) as adm:
        got = adm.extract(cupy.asarray(refs[0]), cupy.asarray(dis[0]))
        batch = adm.extract_batch(cupy.asarray(refs), [cupy.asarray(d) for d in dis])
        mixed = adm.extract_batch([refs[0], cupy.asarray(refs[1])], dis[:2])
        with pytest.raises(AdmError, match="too large for 10 bits"):
            adm.extract(cupy.asarray(refs[0]) + 1024, cupy.asarray(dis[0]))
    assert_same(got, expected(refs[0], dis[0], 10, AdmOptions()))
    for k in range(3):
        assert_same(batch[k], expected(refs[k], dis[k], 10, AdmOptions()))
    assert mixed == batch[:2]


@pytest.mark.cuda
@pytest.mark.skipif(not CUDA_OK, reason="needs CuPy and a GPU")
@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_torch_gpu_tensor(backend):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    ref, dis = pair(30, 40, seed=6)
    with AdmExtractor(40, 30, backend=backend) as adm:
        got = adm.extract(torch.from_numpy(ref).cuda(), torch.from_numpy(dis).cuda())
    assert_same(got, expected(ref, dis, 8, AdmOptions()))


class _SmallGpu:
    """An engine whose GPU holds at most ``room`` frame pairs at once: more raise the
    MemoryError CuPy's allocator raises; it scores with the reference."""

    def __init__(self, room):
        self.room, self.calls = room, []

    def scores(self, ref, dis):
        self.calls.append(ref.shape[0])
        if ref.shape[0] > self.room:
            raise MemoryError("Out of memory allocating 1,073,741,824 bytes")
        return [expected(r, d, 8, AdmOptions()) for r, d in zip(ref, dis, strict=True)]

    def close(self):
        pass


def test_a_batch_the_gpu_cannot_hold_is_scored_in_halves():
    rng = np.random.default_rng(8)
    ref = rng.integers(0, 256, (5, 32, 32), dtype=np.uint8)
    dis = np.clip(ref.astype(int) + rng.integers(-9, 10, ref.shape), 0, 255).astype(np.uint8)
    ext = AdmExtractor(32, 32, backend="cpu")
    ext._cuda = engine = _SmallGpu(room=2)
    got = ext.extract_batch(ref, dis)
    assert engine.calls == [5, 2, 3, 1, 2]
    assert got == [expected(r, d, 8, AdmOptions()) for r, d in zip(ref, dis, strict=True)]
    assert ext.frames_extracted == 5


def test_a_gpu_without_room_for_one_pair_is_a_one_line_error():
    ext = AdmExtractor(32, 32, backend="cpu")
    ext._cuda = _SmallGpu(room=0)
    frames = np.zeros((3, 32, 32), np.uint8)
    message = r"^not enough GPU memory to score one 32x32 frame pair: Out of memory"
    with pytest.raises(AdmError, match=message):
        ext.extract_batch(frames, frames)


def test_backend_returning_too_few_scores():
    """An engine that gives fewer frames of scores than the pairs it was handed is an
    error, not a shorter result."""

    class Short:
        def scores(self, ref, dis):
            return []

        def close(self):
            pass

    ext = AdmExtractor(32, 32, backend="cpu")
    ext._cuda = Short()
    frames = np.zeros((2, 32, 32), np.uint8)
    with pytest.raises(AdmError, match="backend returned 0 frames of scores for 2 frame pairs"):
        ext.extract_batch(frames, frames)
