"""The CUDA kernels of VIF and motion, run on the CPU: their source compiled with g++
behind a shim of CUDA's device language (tests/cuda_on_cpu/), so that machines without a
GPU check the kernels' arithmetic, tiling and borders against the NumPy reference.

Each CUDA thread is an OS thread and ``__syncthreads`` a barrier, so races between the
phases of a block would show; warp-level behaviour (shuffles, memory ordering across
blocks) is the GPU tests' (tests/test_cuda_vmaf.py). Skipped where g++ cannot build C++20.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from _vif_content import structured_pair, vif_reference
from admcuda.reference import motion as M
from admcuda.reference import vif as R
from admcuda.reference import vif_constants as V
from admcuda.reference.vif_filters import (
    mirror_indices,
)
from conftest import ROOT

from admcuda.backends.cuda import kernels as K

HERE = ROOT / "tests" / "cuda_on_cpu"
P, I32, U32 = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ is not installed")
    out = tmp_path_factory.mktemp("cuda_on_cpu")
    for name in ("shim.h", "vif_driver.cpp", "motion_driver.cpp"):
        shutil.copy(HERE / name, out / name)
    for stem in ("vif", "motion"):
        (out / f"{stem}_full.cu").write_text(K.feature_source(stem))
        flags = ["-std=c++20", "-O1", "-ffp-contract=off", "-fPIC", "-shared", "-pthread"]
        src, lib = out / f"{stem}_driver.cpp", out / f"lib{stem}.so"
        run = subprocess.run([gxx, *flags, str(src), "-o", str(lib)], capture_output=True,
                             text=True)  # fmt: skip
        if run.returncode:
            if "barrier" in run.stderr and "No such file" in run.stderr:
                pytest.skip("g++ without C++20's <barrier>")
            pytest.fail(run.stderr[-2000:])
    return out


def _vif_on_cpu(lib, ref, dis, bitdepth, egls):
    """CudaVif.queue's launches, kernel by kernel, with the shim's launcher."""
    fn = lib.run_vif_scale
    fn.argtypes = [I32, I32, I32, P, P, I32, I32, I32, P, P, U32, I32, U32, I32, P,
                   ctypes.c_double, ctypes.c_double, P, I32, I32, U32, I32, I32, P, P]  # fmt: skip
    n, h0, w0 = ref.shape
    shapes = [(h0 >> s, w0 >> s) for s in range(4)]
    half = [k // 2 for k in V.VIF_FILTER_WIDTHS]
    acc = np.zeros((len(egls), n, 4, 4), np.int64)
    table = R.log_generate().copy()
    keep, planes, decimated = [], (ref, dis), []

    def mirror(size, pad):
        t = mirror_indices(size, pad).astype(np.int32)
        keep.append(t)
        return t.ctypes.data + 4 * pad

    for s, (h, w) in enumerate(shapes):
        eight = s == 0 and bitdepth == 8
        if eight:
            mean, sq, dvp, cast = V.VP_8BIT, (0, 0), V.VP_8BIT, 0
        else:
            mean, sq = (V.vp_16(bitdepth), V.vp_sq_16(bitdepth)) if s == 0 else (V.VP_S123,) * 2
            dvp, cast = (V.vp_16(bitdepth) if s == 0 else V.VP_S123), 1
        rows, cols = mirror(h, V.PAD_ROWS[s]), mirror(w, half[s])
        nxt = None
        if s < 3:
            nxt = tuple(np.zeros((n, *shapes[s + 1]), np.uint16) for _ in range(2))
        for k, egl in enumerate(egls):
            dec = nxt is not None and k == 0
            out = (nxt[0].ctypes.data, nxt[1].ctypes.data) if dec else (None, None)
            fn(int(eight), s, int(dec), planes[0].ctypes.data, planes[1].ctypes.data, n, h, w,
               rows, cols, mean[0], mean[1], sq[0], sq[1], table.ctypes.data, egl, V.EPS,
               acc[k].ctypes.data + 8 * 4 * s, 16, 1, dvp[0], dvp[1], cast, *out)  # fmt: skip
        if nxt is not None:
            decimated.append(nxt)
            planes = nxt
    return acc, decimated


@pytest.mark.parametrize("bitdepth", [8, 10, 12, 16])
@pytest.mark.parametrize(("w", "h"), [(16, 16), (33, 37), (70, 41), (130, 18)])
def test_vif_scale_kernel_equals_the_reference(built, w, h, bitdepth):
    lib = ctypes.CDLL(str(built / "libvif.so"))
    ref, dis = structured_pair(w, h, bitdepth, 2, seed=w * h + bitdepth)
    egls = (100.0, 1.0)
    acc, decimated = _vif_on_cpu(lib, ref, dis, bitdepth, egls)
    for f in range(2):
        for k, egl in enumerate(egls):
            sums, planes = vif_reference(ref[f], dis[f], bitdepth, egl)
            assert [tuple(int(v) for v in acc[k, f, s]) for s in range(4)] == sums, (f, egl)
            for s, (r, d) in enumerate(planes):
                assert np.array_equal(decimated[s][0][f], r), (f, s)
                assert np.array_equal(decimated[s][1][f], d), (f, s)


@pytest.mark.parametrize("bitdepth", [8, 10, 16])
@pytest.mark.parametrize(("w", "h"), [(3, 3), (5, 4), (257, 9), (300, 17)])
def test_motion_kernel_equals_the_reference(built, w, h, bitdepth):
    lib = ctypes.CDLL(str(built / "libmotion.so"))
    lib.run_motion.argtypes = [I32, P, P, I32, I32, I32, I32, ctypes.c_longlong, I32, P]
    rng = np.random.default_rng(w + h + bitdepth)
    top = (1 << bitdepth) - 1
    dtype = np.uint8 if bitdepth == 8 else np.uint16
    planes = rng.integers(0, top + 1, (4, h, w)).astype(dtype)
    keep = rng.integers(0, top + 1, (2, h, w)).astype(dtype)
    rnd, shift = M.Y_CONV_8BIT if bitdepth == 8 else (1 << (bitdepth - 1), bitdepth)
    every = np.concatenate([keep, planes])
    for back in (1, 2):
        sad = np.zeros(4, np.uint64)
        lib.run_motion(int(bitdepth == 8), planes.ctypes.data, keep.ctypes.data, back, 4, h, w,
                       rnd, shift, sad.ctypes.data)  # fmt: skip
        want = [
            M.motion_score_pipeline(every[2 + i - back], every[2 + i], bitdepth) for i in range(4)
        ]
        assert sad.tolist() == want, back
