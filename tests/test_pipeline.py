"""The streaming pipeline: many batches, ladders of unequal lengths, frame controls and
failures, against the per-frame reference; and the same through the CUDA engine."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from _media import write_y4m
from admcuda.reference import compute_adm

import admcuda
from admcuda.backends import engine_for
from admcuda.backends.cpu import CpuEngine
from admcuda.errors import AdmError
from admcuda.io.raw import YuvReader
from admcuda.options import NON_DEBUG_BASE_NAMES, OUTPUT_BASE_NAMES, AdmOptions, feature_names
from admcuda.pipeline import IterSource, PlainStream, RunStats, plan_batch, run
from admcuda.sources import make_source

W, H = 24, 20


def clip(seed: int, n: int, bits: int = 8) -> np.ndarray:
    """``n`` frames of a smooth picture with noise (never constant)."""
    rng = np.random.default_rng(seed)
    top = (1 << bits) - 1
    y, x = np.mgrid[0:H, 0:W]
    base = top * (0.5 + 0.3 * np.sin(x / 3.0 + y / 5.0 + seed))
    noise = rng.normal(0, top / 12, (n, H, W))
    return np.clip(base + noise, 0, top).astype(np.uint8 if bits == 8 else np.uint16)


def write_yuv(path, planes):
    dtype = planes.dtype.newbyteorder("<")
    chroma = np.zeros(2 * ((W + 1) // 2) * ((H + 1) // 2), dtype)
    path.write_bytes(b"".join(p.astype(dtype).tobytes() + chroma.tobytes() for p in planes))
    return path


def expected(ref, dis, opts, bits=8, select=slice(None)):
    names = feature_names(opts)
    wanted = OUTPUT_BASE_NAMES if opts.debug else NON_DEBUG_BASE_NAMES
    out = []
    for r, d in list(zip(ref, dis, strict=False))[select]:
        scores = compute_adm(r, d, bits, opts)
        out.append({names[k]: float(scores[k]) for k in wanted})
    return out


def assert_frames_equal(got, want):
    assert len(got) == len(want)
    bad = [
        (i, k, g[k], w[k])
        for i, (g, w) in enumerate(zip(got, want, strict=True))
        for k in w
        if not (g[k] == w[k] or (g[k] != g[k] and w[k] != w[k]))
    ]
    assert not bad, f"{len(bad)} values differ, first {bad[:3]}"


@pytest.fixture
def ladder(tmp_path):
    """A 41-frame reference and rungs of 41, 17, 33, 8 and 1 frames (some Y4M)."""
    ref = clip(1, 41)
    rungs = [clip(2, 41), clip(3, 17), clip(4, 33), clip(5, 8), clip(6, 1)]
    paths = [write_yuv(tmp_path / "ref.yuv", ref)]
    for k, r in enumerate(rungs):
        raw = write_yuv(tmp_path / f"d{k}.yuv", r)
        paths.append(write_y4m(raw, tmp_path / f"d{k}.y4m", W, H, "420", 8) if k % 2 else raw)
    return ref, rungs, paths


def test_ladder_of_unequal_lengths_equals_per_frame_reference(ladder, monkeypatch):
    ref, rungs, paths = ladder
    batches = []
    real = CpuEngine.submit

    def submit(self, r, d, frames):
        batches.append((len(d), frames))
        return real(self, r, d, frames)

    monkeypatch.setattr(CpuEngine, "submit", submit)
    opts = AdmOptions.from_mapping({"debug": "true", "egl": "1.2"})
    got = admcuda.score_ladder(paths[0], paths[1:], width=W, height=H, options=opts,
                               backend="cpu")  # fmt: skip
    for g, r in zip(got, rungs, strict=True):
        assert_frames_equal(g, expected(ref, r, opts))
    # Batches of 8 frames: each rung takes part while it has frames (the 8-frame rung in
    # the first batch only, the 1-frame rung too), the last batch holds frame 40 alone.
    assert batches == [(5, 8), (3, 8), (3, 8), (2, 8), (2, 8), (1, 1)]


def test_engine_reserves_every_rungs_outputs_before_the_reader_makes_slots(ladder, monkeypatch):
    """An engine with ``reserve`` gets the number of distorted inputs before the reader
    makes (page-locks) its first slot: the CUDA engine's accumulators, page-locked later,
    waited for the reader's page-locking."""
    _, _, paths = ladder
    calls = []
    real = CpuEngine.host_empty
    monkeypatch.setattr(CpuEngine, "reserve", lambda self, sets: calls.append(("reserve", sets)),
                        raising=False)  # fmt: skip
    monkeypatch.setattr(CpuEngine, "host_empty",
                        lambda self, *a: calls.append("slot") or real(self, *a))  # fmt: skip
    admcuda.score_ladder(paths[0], paths[1:], width=W, height=H, backend="cpu")
    assert calls[0] == ("reserve", 5) and calls.count(("reserve", 5)) == 1
    assert "slot" in calls[1:]


def _page_locking_engine(monkeypatch, made, fail_at=None):
    """CpuEngine posing as an engine with page-locked slots (``pinned_empty``): each slot
    buffer it makes is recorded with the thread that made it."""
    import threading

    real = CpuEngine.host_empty

    def host_empty(self, *a):
        made.append(threading.current_thread().name)
        if fail_at is not None and len(made) >= fail_at:
            raise MemoryError
        return real(self, *a)

    monkeypatch.setattr(CpuEngine, "host_empty", host_empty)
    monkeypatch.setattr(CpuEngine, "pinned_empty", host_empty, raising=False)


def test_page_locked_slots_after_the_first_are_made_ahead_of_the_reader(ladder, monkeypatch):
    ref, rungs, paths = ladder
    made = []
    _page_locking_engine(monkeypatch, made)
    got = admcuda.score_ladder(paths[0], paths[1:3], width=W, height=H, backend="cpu")
    for g, r in zip(got, rungs[:2], strict=True):
        assert_frames_equal(g, expected(ref, r, AdmOptions()))
    # 41 frames in batches of 8: three slots of three planes each, the first by the
    # reader, the next two by the thread that page-locks ahead
    assert sorted(made) == ["admcuda-reader"] * 3 + ["admcuda-slots"] * 6


def test_a_slot_made_ahead_that_fails_is_the_run_s_one_line_error(ladder, monkeypatch):
    _, _, paths = ladder
    made = []
    _page_locking_engine(monkeypatch, made, fail_at=5)
    with pytest.raises(AdmError, match="out of memory for the frame buffers"):
        admcuda.score_files(paths[0], paths[1], width=W, height=H, backend="cpu")


def test_a_run_that_fails_while_slots_are_made_ahead_ends(ladder, monkeypatch):
    _, _, paths = ladder
    made = []
    _page_locking_engine(monkeypatch, made)

    def submit(self, r, d, frames):
        raise AdmError("the engine failed")

    monkeypatch.setattr(CpuEngine, "submit", submit)
    with pytest.raises(AdmError, match="the engine failed"):
        admcuda.score_files(paths[0], paths[1], width=W, height=H, backend="cpu")


def test_a_single_batch_makes_one_slot(ladder, monkeypatch):
    """A clip of one batch (its length a whole number of batches) makes no second slot:
    the reader knows that the reference has no frame left."""
    _, _, paths = ladder
    made = []
    _page_locking_engine(monkeypatch, made)
    admcuda.score_files(paths[0], paths[1], width=W, height=H, backend="cpu", frame_cnt=5)
    assert made == ["admcuda-reader"] * 2


@pytest.mark.parametrize(
    "kw",
    [
        {"frame_skip_ref": 3, "frame_skip_dist": 1},
        {"subsample": 3},
        {"frame_cnt": 13, "subsample": 2, "frame_skip_dist": 2},
    ],
)
def test_frame_controls_on_positioned_reads(ladder, kw):
    ref, rungs, paths = ladder
    opts = AdmOptions()
    got = admcuda.score_files(paths[0], paths[3], width=W, height=H, backend="cpu", **kw)
    r = ref[kw.get("frame_skip_ref", 0) :]
    d = rungs[2][kw.get("frame_skip_dist", 0) :]
    n = min(len(r), len(d), kw.get("frame_cnt", 10**9))
    step = kw.get("subsample", 1)
    assert_frames_equal(got, expected(r[:n], d[:n], opts, select=slice(None, None, step)))


def _run_iterables(engine, ref, dis_streams):
    """Planes in memory through the pipeline: per distorted stream, its output arrays."""
    sources = [IterSource(PlainStream(iter(frames))) for frames in (ref, *dis_streams)]
    return run(sources[0], sources[1:], engine, width=W, height=H, dtype=np.uint8, threads=2)


def test_ladder_of_unequal_lengths_pairs_frame_i_with_frame_i():
    """Frame i of the reference is scored against frame i of every distorted stream that
    still has one, whichever stream ends first; a stream that ends keeps the frames it
    shares with the reference."""
    ref, long, short = clip(1, 3), clip(2, 3), clip(3, 1)
    opts = AdmOptions()
    with CpuEngine(W, H, 8, opts, threads=1) as engine:
        got = _run_iterables(engine, ref, [long, short])
    for arrays, dis in zip(got, (long, short), strict=True):
        want = [compute_adm(r, d, 8, opts) for r, d in zip(ref, dis, strict=False)]
        assert len(arrays["integer_adm2"]) == len(want) == len(dis)
        for key in want[0]:
            assert np.array_equal(arrays[key], [w[key] for w in want], equal_nan=True), key


def test_iterables_through_the_pipeline_match_files():
    ref, dis = clip(7, 19), clip(8, 11)
    opts = AdmOptions()
    with CpuEngine(W, H, 8, opts, threads=1) as engine:
        (arrays,) = _run_iterables(engine, ref, [dis])
    want = [compute_adm(r, d, 8, opts) for r, d in zip(ref, dis, strict=False)]
    assert len(arrays["integer_adm2"]) == len(want) == 11
    for key in want[0]:
        assert np.array_equal(arrays[key], [w[key] for w in want], equal_nan=True), key


def test_ten_bit_sample_out_of_range_is_an_error(tmp_path):
    planes = clip(9, 12, bits=10)
    planes[10, 3, 4] = 1 << 10
    path = write_yuv(tmp_path / "a.yuv", planes)
    with pytest.raises(AdmError, match=r"frame 10 has sample value 1024, too large for 10 bits"):
        admcuda.score_files(path, path, width=W, height=H, bitdepth=10, backend="cpu")


def test_file_truncated_while_reading_is_an_error(tmp_path):
    path = write_yuv(tmp_path / "a.yuv", clip(10, 12))
    with YuvReader(path, width=W, height=H) as reader:
        source = make_source(reader)
        path.write_bytes(path.read_bytes()[: reader.frame_size * 5])  # shrinks under us
        with CpuEngine(W, H, 8, AdmOptions(), threads=1) as engine:
            with pytest.raises(AdmError, match="ended inside frame 5"):
                run(source, [source], engine, width=W, height=H, dtype=np.uint8)


def test_stats_count_frames_and_batches(ladder):
    ref, rungs, paths = ladder
    stats = RunStats()
    with YuvReader(paths[0], width=W, height=H) as r, YuvReader(paths[1], width=W, height=H) as d:
        with CpuEngine(W, H, 8, AdmOptions(), threads=1) as engine:
            (out,) = run(make_source(r), [make_source(d)], engine, width=W, height=H,
                         dtype=np.uint8, stats=stats)  # fmt: skip
    assert len(out["integer_adm2"]) == 41
    assert (stats.frames, stats.batches, stats.first_batch_frames) == (41, 6, 8)
    assert stats.end >= stats.first_done and stats.steady_fps() > 0


def test_plan_batch_stays_within_the_host_budget():
    frame = 1920 * 1080
    assert plan_batch(frame, 2, preferred=32) == 32  # 3 slots x 2 x 32 x 2 MB < 512 MiB
    assert plan_batch(frame, 2, preferred=128) == (1 << 29) // (3 * 2 * frame)  # 43
    assert plan_batch(frame, 2, preferred=128, host_memory=1 << 30) == 86
    small = plan_batch(frame, 5, preferred=128, host_memory=64 << 20)
    assert small == (64 << 20) // (3 * 5 * frame) and 3 * 5 * frame * small <= 64 << 20
    assert plan_batch(frame, 2, preferred=128, frames=3) == 3
    assert plan_batch(frame * 1000, 2, preferred=64, host_memory=1) == 1


def test_engine_for_the_cpu_keeps_small_runs_in_process():
    assert not engine_for("cpu", W, H, 8, AdmOptions(), frames=100, threads=4)._use_pool
    with pytest.raises(AdmError, match="unknown backend"):
        engine_for("tpu", W, H, 8, AdmOptions())


# ---- the same through the GPU engine ------------------------------------------------------


def _cuda_ok() -> bool:
    try:
        from admcuda.backends.cuda import cuda_available

        return cuda_available()
    except ImportError:
        return False


@pytest.mark.cuda
@pytest.mark.skipif(not _cuda_ok(), reason="needs CuPy and a GPU")
@pytest.mark.parametrize("bits", [8, 10])
def test_cuda_pipeline_ladder_equals_per_frame_reference(ladder, tmp_path, bits):
    ref, rungs, paths = ladder
    if bits != 8:
        ref = (ref.astype(np.uint16) << 2) | 3
        rungs = [(r.astype(np.uint16) << 2) | 1 for r in rungs]
        paths = [write_yuv(tmp_path / "ref10.yuv", ref)]
        paths += [write_yuv(tmp_path / f"d{k}_10.yuv", r) for k, r in enumerate(rungs)]
    opts = AdmOptions.from_mapping({"debug": "true"})
    stats = RunStats()
    from admcuda.ladder import run_ladder

    run_ = run_ladder(
        paths[0], paths[1:], width=W, height=H, pixel_format=None, bitdepth=bits, opts=opts,
        backend="cuda", host_memory=3 * 6 * W * H * (1 if bits == 8 else 2) * 8, stats=stats,
    )  # fmt: skip
    assert stats.batches > 4  # a host budget of 8 frames a slot: many batches
    for g, r in zip(run_.frames, rungs, strict=True):
        assert_frames_equal(g, expected(ref, r, opts, bits=bits))


@pytest.mark.cuda
@pytest.mark.skipif(not _cuda_ok(), reason="needs CuPy and a GPU")
def test_cuda_slots_are_registered_host_memory_with_a_fallback(ladder, monkeypatch):
    """The engine's slots are page-locked (CUDA says host memory, uploads are DMA); where
    registering fails they come from CuPy's allocator; scores are the same either way;
    closing the engine unregisters them."""
    import cupy as cp

    from admcuda.backends.cuda import hostmem

    arr, block = hostmem.pinned_array((3, 5, 7), np.uint16)
    assert arr.shape == (3, 5, 7) and arr.dtype == np.uint16 and arr.ctypes.data % (2 << 20) == 0
    attrs = cp.cuda.runtime.pointerGetAttributes(arr.ctypes.data)
    assert attrs.type == cp.cuda.runtime.memoryTypeHost
    arr[:] = 7
    assert int(cp.asarray(arr).sum()) == 7 * arr.size
    block.release()
    block.release()  # once only
    assert int(arr.sum()) == 7 * arr.size  # still readable
    ref, rungs, paths = ladder
    opts = AdmOptions.from_mapping({"debug": "true"})
    want = expected(ref, rungs[0], opts)
    kw = dict(width=W, height=H, options=opts, backend="cuda")
    assert_frames_equal(admcuda.score_ladder(paths[0], paths[1:2], **kw)[0], want)

    def refuse(*a):
        raise cp.cuda.runtime.CUDARuntimeError(1)

    monkeypatch.setattr(cp.cuda.runtime, "hostRegister", refuse)
    arr, block = hostmem.pinned_array((4, 4), np.uint8)
    assert block._map is None and block._pinned is not None
    assert_frames_equal(admcuda.score_ladder(paths[0], paths[1:2], **kw)[0], want)


@pytest.mark.cuda
@pytest.mark.skipif(not _cuda_ok(), reason="needs CuPy and a GPU")
def test_kept_blocks_serve_later_arrays_still_registered(ladder):
    """With keep_blocks (admcuda serve), a released block stays registered and gives a
    later array of a size it fits; past the limit, or once stopped, blocks are unregistered;
    scores through kept blocks are the same."""
    import cupy as cp

    from admcuda.backends.cuda import hostmem

    def registered(arr: np.ndarray) -> bool:
        try:
            attrs = cp.cuda.runtime.pointerGetAttributes(arr.ctypes.data)
        except cp.cuda.runtime.CUDARuntimeError:
            return False
        return attrs.type == cp.cuda.runtime.memoryTypeHost

    hostmem.keep_blocks(6 << 20)
    try:
        a, block = hostmem.pinned_array((1 << 20,), np.uint8)
        block.release()
        assert registered(a)
        b, again = hostmem.pinned_array((3 << 18,), np.uint8)  # fits: the same block
        assert again is block and b.ctypes.data == a.ctypes.data and registered(b)
        c, other = hostmem.pinned_array((4 << 20,), np.uint8)  # too large for it: a new one
        assert other is not block
        other.release()
        again.release()  # 4 MiB + 1 MiB kept; a third block is past the limit
        d, third = hostmem.pinned_array((5 << 20,), np.uint8)
        assert third is not block and third is not other
        third.release()
        assert not registered(d)
        ref, rungs, paths = ladder
        opts = AdmOptions.from_mapping({"debug": "true"})
        kw = dict(width=W, height=H, options=opts, backend="cuda")
        want = expected(ref, rungs[0], opts)
        for _ in range(2):
            assert_frames_equal(admcuda.score_ladder(paths[0], paths[1:2], **kw)[0], want)
    finally:
        hostmem.keep_blocks(0)
    assert not registered(b) and not registered(c)


@pytest.mark.cuda
@pytest.mark.skipif(not _cuda_ok(), reason="needs CuPy and a GPU")
def test_cuda_iter_source_copies_device_and_host_planes_into_device_slots():
    """GPU frames (NVDEC's) are copied into device slots by one copy call each where they
    are contiguous, strided CuPy views by CuPy's assignment; all land, nothing past them."""
    import cupy as cp

    from admcuda.pipeline import IterSource

    class Frames:  # a stream of planes as they come, as NVDEC's reader gives them
        reader = available = None
        subsample = 1

        def __init__(self, frames):
            self.frames = frames

        def __iter__(self):
            return iter(self.frames)

    rng = np.random.default_rng(7)
    planes = [rng.integers(0, 1024, (H, W)).astype(np.uint16) for _ in range(4)]
    wide = cp.asarray(np.pad(planes[1], ((0, 0), (0, 5))))
    frames = [cp.asarray(planes[0]), wide[:, :W], cp.asarray(planes[2]), cp.asarray(planes[3])]
    out = cp.full((5, H, W), 9, np.uint16)
    with ThreadPoolExecutor(1) as pool:
        assert IterSource(Frames(frames)).start(out, 5, pool).wait() == 4
    for k, plane in enumerate(planes):
        assert np.array_equal(cp.asnumpy(out[k]), plane), k
    assert int(out[4].min()) == int(out[4].max()) == 9  # past the frames: untouched


# ---- frame sizes and memory --------------------------------------------------------------------


def test_cpu_batch_is_sized_by_the_frames_asked_for():
    """A one-frame run of 30000x30000 frames allocated eight frames a slot (6.7 GiB) on
    the CPU; its batch is now the frames scored, and the host budget bounds it."""
    opts = AdmOptions()
    with engine_for("cpu", 64, 48, 8, opts, inputs=1, frames=1, threads=1) as one:
        assert one.batch == 1
    with engine_for("cpu", 64, 48, 8, opts, inputs=1, frames=None, threads=1) as many:
        assert many.batch == 8
    with engine_for("cpu", 64, 48, 8, opts, inputs=1, frames=100, threads=1,
                    host_memory=3 * 2 * 64 * 48 * 2) as tight:  # fmt: skip
        assert tight.batch == 2


def test_cpu_workers_are_bounded_by_memory(monkeypatch):
    import admcuda.pipeline as pipeline

    work = pipeline.CPU_WORK_BYTES_PER_PIXEL * 64 * 48
    ring = 2 * 2 * 64 * 48
    monkeypatch.setattr(pipeline, "available_memory", lambda: ring + 2 * work + 1)
    monkeypatch.setenv("ADMCUDA_CPU_ENGINE", "numpy")  # the reference's worker processes
    with engine_for("cpu", 64, 48, 8, AdmOptions(), inputs=1, frames=None, threads=4) as engine:
        assert engine.threads == 2


def test_a_frame_size_memory_cannot_hold_is_one_line(monkeypatch, tmp_path):
    """-w 100000 -h 100000 ended in "internal error: MemoryError"; now one line says what
    the frame size needs and what there is, before anything is allocated."""
    import admcuda.pipeline as pipeline

    monkeypatch.setattr(pipeline, "available_memory", lambda: 8 << 30)
    clip = tmp_path / "huge.yuv"
    with clip.open("wb") as f:  # sparse: one 30000x30000 8-bit 4:2:0 frame
        f.truncate(30000 * 30000 * 3 // 2)
    with pytest.raises(AdmError) as info:
        admcuda.score(clip, clip, width=30000, height=30000, backend="cpu")
    assert str(info.value) == (
        "a 30000x30000 8-bit frame's luma plane is 0.8 GiB: reading 2 inputs needs at least "
        "3.4 GiB (two frames of each in flight) and 23.5 GiB to score a frame on the CPU, "
        "more than the 8.0 GiB of memory available"
    )
    with pytest.raises(AdmError, match=r"luma plane is 9\.3 GiB: reading 3 inputs needs at "
                       r"least 55\.9 GiB \(two frames of each in flight\), more than"):  # fmt: skip
        pipeline.check_frame_memory(100000, 100000, 8, 3)
    pipeline.check_frame_memory(1920, 1080, 10, 3, work=1 << 20)  # fits: no error


def _opened(paths):
    """Readers and pipeline sources of raw or Y4M files at W x H."""
    from admcuda.io.inputs import open_input

    readers = [open_input(p, width=W, height=H) for p in paths]
    return readers, [make_source(r) for r in readers]


@pytest.mark.parametrize("capacity", [3, 8, 20, 41, 60])
def test_a_read_ahead_first_slot_of_any_size_scores_as_the_plain_run(ladder, capacity):
    """The first frames read before the engine exists: a slot larger than the engine's
    batch goes to it in pieces, a smaller one as it is, and reading goes on after it; rungs
    that end inside it keep their frames."""
    from admcuda.pipeline import ReadAhead

    ref, rungs, paths = ladder
    readers, sources = _opened(paths)
    try:
        first = ReadAhead(sources[0], sources[1:], width=W, height=H, dtype=np.uint8,
                          frames=capacity, threads=2)  # fmt: skip
        submitted = []
        with CpuEngine(W, H, 8, AdmOptions(), threads=1) as engine:
            real = engine.submit
            engine.submit = lambda r, d, n: submitted.append((len(d), n)) or real(r, d, n)
            stats = RunStats()
            got = run(sources[0], sources[1:], engine, width=W, height=H, dtype=np.uint8,
                      first=first, stats=stats)  # fmt: skip
    finally:
        for r in readers:
            r.close()
    for arrays, dis in zip(got, rungs, strict=True):
        want = expected(ref, dis, AdmOptions())
        assert len(arrays["integer_adm2"]) == len(want)
        for key in want[0]:
            assert np.array_equal(arrays[key], [w[key] for w in want], equal_nan=True), key
    assert all(n <= 8 for _, n in submitted)  # the engine's batch, never more
    assert sum(n for _, n in submitted) == 41 == stats.frames
    if capacity < 8:
        assert submitted[0] == (5, capacity)


def test_a_read_ahead_slot_is_replaced_by_a_page_locked_one(ladder, monkeypatch):
    """Where the engine page-locks its slots, the read-ahead's plain memory is used once
    and a slot of the engine's made in its place: the ring keeps three slots."""
    from admcuda.pipeline import ReadAhead

    ref, rungs, paths = ladder
    made = []
    _page_locking_engine(monkeypatch, made)
    readers, sources = _opened(paths[:2])
    try:
        first = ReadAhead(sources[0], sources[1:], width=W, height=H, dtype=np.uint8, frames=8)
        with CpuEngine(W, H, 8, AdmOptions(), threads=1) as engine:
            (got,) = run(sources[0], sources[1:], engine, width=W, height=H, dtype=np.uint8,
                         first=first)  # fmt: skip
    finally:
        for r in readers:
            r.close()
    want = expected(ref, rungs[0], AdmOptions())
    assert np.array_equal(got["integer_adm2"], [w["integer_adm2"] for w in want])
    # 41 frames in batches of 8, six batches: after the read-ahead's, two slots made
    # ahead and one by the reader in place of the read-ahead's (two planes each)
    assert sorted(made) == ["admcuda-reader"] * 2 + ["admcuda-slots"] * 4


def test_a_read_ahead_s_reading_error_is_the_run_s(tmp_path):
    from admcuda.pipeline import ReadAhead

    path = write_yuv(tmp_path / "a.yuv", clip(10, 12))
    with YuvReader(path, width=W, height=H) as reader:
        source = make_source(reader)
        path.write_bytes(path.read_bytes()[: reader.frame_size * 5])  # shrinks under us
        first = ReadAhead(source, [source], width=W, height=H, dtype=np.uint8, frames=8)
        with CpuEngine(W, H, 8, AdmOptions(), threads=1) as engine:
            with pytest.raises(AdmError, match="ended inside frame 5"):
                run(source, [source], engine, width=W, height=H, dtype=np.uint8, first=first)


def test_a_gpu_run_that_falls_back_to_the_cpu_reads_ahead_first(ladder, monkeypatch):
    """``auto`` where CUDA looked likely but does not start: the first batch was read
    ahead in the GPU's size, the read ends before the CPU engine (which forks its
    workers) is made, and the scores are the CPU's."""
    from admcuda import backends, pipeline

    ref, rungs, paths = ladder
    from admcuda.backends.cuda import hostmem

    monkeypatch.setattr(backends, "likely_cuda", lambda backend: True)
    monkeypatch.setattr(backends, "cuda_batch", lambda *a, **k: 20)
    owners = []

    def early_block(nbytes):
        owners.append(_Owner())
        return np.empty(nbytes, np.uint8), owners[-1]

    monkeypatch.setattr(hostmem, "can_page_lock_early", lambda: True)
    monkeypatch.setattr(hostmem, "early_block", early_block)
    real_for, order = backends.engine_for, []

    def engine_for(name, *a, **k):
        if name == "cuda":
            raise RuntimeError("no GPU here")
        engine = real_for(name, *a, **k)  # settles first: the read-ahead ends
        order.append(("engine", k["settle"] is not None))
        return engine

    real_read = pipeline._read_slot

    def read_slot(*a, **k):
        item = real_read(*a, **k)
        order.append(("read", len(item.slot.ref)))
        return item

    monkeypatch.setattr(backends, "engine_for", engine_for)
    monkeypatch.setattr(backends, "select_backend", lambda name: ("cuda", None))
    monkeypatch.setattr(pipeline, "_read_slot", read_slot)
    got = admcuda.score_ladder(paths[0], paths[1:3], width=W, height=H, backend="auto", threads=2)
    for g, r in zip(got, rungs[:2], strict=True):
        assert_frames_equal(g, expected(ref, r, AdmOptions()))
    assert order[:2] == [("read", 20), ("engine", True)]
    assert [o.released for o in owners] == [1]  # its memory given back once


class _Owner:
    """Stands for a page-locked block: counts its releases."""

    def __init__(self) -> None:
        self.released = 0

    def release(self) -> None:
        self.released += 1


def test_a_page_locked_read_ahead_slot_of_a_batch_serves_the_ring(ladder, monkeypatch):
    """Page-locked by the read-ahead (as the GPU's early memory is) and one batch long, its
    slot is one of the ring's: the engine makes only the two after it."""
    from admcuda.pipeline import ReadAhead

    ref, rungs, paths = ladder
    made = []
    _page_locking_engine(monkeypatch, made)
    owner = _Owner()
    readers, sources = _opened(paths[:2])
    try:
        first = ReadAhead(sources[0], sources[1:], width=W, height=H, dtype=np.uint8, frames=8,
                          memory=lambda n: (np.empty(n, np.uint8), owner))  # fmt: skip
        with CpuEngine(W, H, 8, AdmOptions(), threads=1) as engine:
            (got,) = run(sources[0], sources[1:], engine, width=W, height=H, dtype=np.uint8,
                         first=first)  # fmt: skip
        first.release()
        first.release()
    finally:
        for r in readers:
            r.close()
    want = expected(ref, rungs[0], AdmOptions())
    assert np.array_equal(got["integer_adm2"], [w["integer_adm2"] for w in want])
    assert first.pinned and owner.released == 1
    assert sorted(made) == ["admcuda-slots"] * 4
