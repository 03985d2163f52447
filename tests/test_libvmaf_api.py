"""libvmaf's own ADM, driven through its C API by ``admcuda.libvmaf``, against the reference.

The comparison tests need a libvmaf shared library (3.x) named by ``ADMCUDA_LIBVMAF`` and
are skipped without one; the CUDA test also needs a CUDA build of it, CuPy and a GPU.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from admcuda.reference import compute_adm

from admcuda.errors import AdmError
from admcuda.libvmaf import find_libvmaf, libvmaf_has_cuda, time_libvmaf
from admcuda.options import AdmOptions

SO = find_libvmaf()
needs_libvmaf = pytest.mark.skipif(SO is None, reason="ADMCUDA_LIBVMAF names no libvmaf library")


def _pair(n: int, h: int, w: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Smooth picture plus noise, and a noisier copy: content ADM cannot score as trivial."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    base = 128 + 60 * np.sin(xx / 7.0) * np.cos(yy / 5.0)
    ref = np.clip(base + rng.normal(0, 6, (n, h, w)), 1, 254)
    dis = np.clip(ref + rng.normal(0, 9, (n, h, w)), 0, 255)
    return ref.astype(np.uint8), dis.astype(np.uint8)


def test_missing_library(tmp_path, monkeypatch):
    monkeypatch.delenv("ADMCUDA_LIBVMAF", raising=False)
    missing = str(tmp_path / "libvmaf.so")
    assert find_libvmaf(missing) is None
    assert find_libvmaf() is None
    ref, dis = _pair(1, 32, 48, seed=0)
    with pytest.raises(AdmError, match="cannot load libvmaf"):
        time_libvmaf(missing, ref, dis, 8)
    with pytest.raises(AdmError, match="pinned"):
        time_libvmaf(missing, ref, dis, 8, cuda=True, host_pictures="pinned")


@needs_libvmaf
@pytest.mark.parametrize("threads", [1, 2])
def test_scalar_adm2_matches_reference(threads):
    ref, dis = _pair(3, 54, 71, seed=1)
    want = compute_adm(ref[0], dis[0], 8, AdmOptions())["integer_adm2"]
    got = time_libvmaf(SO, ref, dis, 8, threads=threads, scalar=True)
    assert got["frames"] == 3
    assert got["seconds"] > 0
    assert got["adm2_first"] == want


@needs_libvmaf
def test_refusals_before_libvmaf_runs():
    ref, dis = _pair(2, 32, 48, seed=2)
    with pytest.raises(AdmError, match="uint16"):
        time_libvmaf(SO, ref, dis, 10)
    with pytest.raises(AdmError, match="too small"):
        time_libvmaf(SO, ref[:, :16], dis[:, :16], 8)
    with pytest.raises(AdmError, match="differ in shape"):
        time_libvmaf(SO, ref, dis[:1], 8)


def _raw(path, planes):
    """A 4:0:0 raw file of ``planes``, and a reader over it."""
    from admcuda.io.raw import YuvReader

    path.write_bytes(planes.tobytes())
    n, h, w = planes.shape
    return YuvReader(path, width=w, height=h, bitdepth=8, pixel_format="400")


@needs_libvmaf
def test_readers_give_the_arrays_scores(tmp_path):
    ref, dis = _pair(3, 54, 71, seed=4)
    want = time_libvmaf(SO, ref, dis, 8, threads=1, scalar=True)
    with _raw(tmp_path / "r.yuv", ref) as r, _raw(tmp_path / "d.yuv", dis) as d:
        got = time_libvmaf(SO, r, d, 8, threads=1, scalar=True)
    assert got["frames"] == 3
    assert got["adm2_first"] == want["adm2_first"]
    assert got["adm2_first"] == compute_adm(ref[0], dis[0], 8, AdmOptions())["integer_adm2"]


@needs_libvmaf
def test_readers_of_unequal_length_are_refused(tmp_path):
    ref, dis = _pair(3, 32, 48, seed=5)
    with _raw(tmp_path / "r.yuv", ref) as r, _raw(tmp_path / "d.yuv", dis[:2]) as d:
        with pytest.raises(AdmError, match="dis ended at frame 2"):
            time_libvmaf(SO, r, d, 8, threads=1)
        with pytest.raises(AdmError, match="frame reader like the other"):
            time_libvmaf(SO, r, dis, 8, threads=1)
        with pytest.raises(AdmError, match="8-bit, not 10-bit"):
            time_libvmaf(SO, r, d, 10, threads=1)


@needs_libvmaf
@pytest.mark.cuda
@pytest.mark.parametrize("mode", ["pool", "pageable", "device"])
def test_cuda_adm2_matches_reference(mode):
    if not libvmaf_has_cuda(SO):
        pytest.skip(f"{os.path.basename(SO)} was built without CUDA")
    cp = pytest.importorskip("cupy")
    try:
        devices = cp.cuda.runtime.getDeviceCount()
    except cp.cuda.runtime.CUDARuntimeError:
        devices = 0
    if devices == 0:
        pytest.skip("no CUDA device visible to CuPy")
    ref, dis = _pair(6, 324, 576, seed=3)
    want = compute_adm(ref[0], dis[0], 8, AdmOptions())["integer_adm2"]
    if mode == "device":
        got = time_libvmaf(SO, ref, dis, 8, cuda=True, device_resident=True)
    else:
        got = time_libvmaf(SO, ref, dis, 8, cuda=True, host_pictures=mode)
    assert got["frames"] == 6
    assert got["adm2_first"] == pytest.approx(want, rel=1e-6)
