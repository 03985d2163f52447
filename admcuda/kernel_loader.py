"""The one place that touches CuPy's ``RawModule``: find each stage's ``.cu``, glue a
generated preamble and the shared header onto it, compile it once per process and look
up its template instantiations. Sources that are not ADM stages (NVDEC's luma copy,
``kernels/nvdec_luma.cu``) compile here too, through :func:`plain_function`.

The preamble turns :mod:`reference.constants` into ``#define``s, so the kernels and the
NumPy reference read every fixed-point number from one module. The shared header
``adm_common.cuh`` is pasted into each source rather than ``#include``d: CuPy's kernel
cache is keyed on the source text alone, so an included file that changed would leave a
stale kernel behind.

Importing this module does not import CuPy; :func:`function` does, on first use. It sits
beside the package's other low layers (it imports :mod:`admcuda.reference` alone), so that
the CUDA backend and the NVDEC reader (:mod:`admcuda.io.nvdec`) both load kernels through
it without either importing the other; :mod:`admcuda.backends.cuda.kernels` is this module
under its former name. The generated sources still say
``admcuda.backends.cuda.kernels``: CuPy keys its kernel cache on the source text, and
kernels compiled before the move stay valid.
"""

from __future__ import annotations

import functools
import importlib.resources
from typing import Any

import numpy as np

from admcuda.reference import constants as C
from admcuda.reference.decouple import COS_1DEG_SQ

__all__ = [
    "ACC_COUNT",
    "ACC_SLOTS",
    "CTYPES",
    "PARAM_COUNT",
    "PARAM_SLOTS",
    "ROW_WARPS",
    "STAGES",
    "check_array",
    "div_lookup",
    "function",
    "plain_function",
    "plain_source",
    "source",
    "feature_expressions",
    "feature_function",
    "feature_source",
    "log2_table",
]

# Stage file stem -> (kernel name, template argument dtypes) instantiated in it.
STAGES: dict[str, tuple[tuple[str, tuple[np.dtype, ...]], ...]] = {
    "adm_dwt2": (
        ("adm_dwt2_s0", (np.dtype(np.uint8), np.dtype(np.uint16))),
        ("adm_dwt2_s123", (np.dtype(np.int16), np.dtype(np.int32))),
    ),
    "adm_csf": (("adm_csf", (np.dtype(np.int16), np.dtype(np.int32))),),
    "adm_csf_den": (("adm_csf_den", (np.dtype(np.int16), np.dtype(np.int32))),),
    "adm_cm": (
        ("adm_cm", (np.dtype(np.int16), np.dtype(np.int32))),
        ("adm_cm_rows", ()),
        ("adm_recip_table", ()),
    ),
}

# NumPy dtype -> the C type named in template instantiations.
CTYPES: dict[np.dtype, str] = {
    np.dtype(np.uint8): "unsigned char",
    np.dtype(np.uint16): "unsigned short",
    np.dtype(np.int16): "short",
    np.dtype(np.int32): "int",
}

# Per-scale int64 parameter block read by the CSF, denominator and masking kernels:
# (name, length). Orientation-indexed slots are in (h, v, d) order.
PARAM_SLOTS: tuple[tuple[str, int], ...] = (
    ("RF", 3),  # fixed-point CSF factor
    ("CM_SUB_SHIFT", 3),  # scale 0: threshold shift before the subtraction
    ("CM_SQ_RND", 3),
    ("CM_SQ_SHIFT", 3),
    ("CM_CUB_RND", 3),
    ("CM_CUB_SHIFT", 3),  # masked to 6 bits, as x86 does
    ("CM_ROW_RND", 1),
    ("CM_ROW_SHIFT", 1),
    ("DEN_SQ_RND", 1),
    ("DEN_SQ_SHIFT", 1),
    ("DEN_CUB_RND", 1),
    ("DEN_CUB_SHIFT", 1),
    ("DEN_ROW_RND", 1),
    ("DEN_ROW_SHIFT", 1),
)


def _offsets(slots: tuple[tuple[str, int], ...]) -> tuple[dict[str, int], int]:
    out, at = {}, 0
    for name, n in slots:
        out[name] = at
        at += n
    return out, at


PARAM_OFFSETS, PARAM_COUNT = _offsets(PARAM_SLOTS)

# Integer accumulators per frame and scale: numerator, AIM, denominator, each (h, v, d).
ACC_SLOTS: tuple[tuple[str, int], ...] = (("NUM", 3), ("AIM", 3), ("DEN", 3))
ACC_OFFSETS, ACC_COUNT = _offsets(ACC_SLOTS)

# Warps per block in the row-reducing kernels (csf_den, cm); a warp owns whole rows.
ROW_WARPS = 8
# Resident blocks per multiprocessor the masking kernel is built for (__launch_bounds__):
# it caps its registers at 65536 / (CM_MIN_BLOCKS * 32 * ROW_WARPS). On an H200 the
# kernel ran about 20% faster at 3 (80 registers) than at 2, and 5-10% faster again at 4
# (64 registers, some spilled to L1).
CM_MIN_BLOCKS = 4
# Threads per block of the DWT kernels (the launcher's block shape), and the blocks per
# multiprocessor the scale-0 DWT is built for: 4 and 5 (48 registers, a few bytes
# spilled) came out within run-to-run spread on an H200 (kernels/NOTES.md, Design choices).
DWT_THREADS = 256
DWT0_MIN_BLOCKS = 4

_KERNEL_PACKAGE = "admcuda.kernels"
_COMMON = "adm_common.cuh"

# --fmad=false: no multiply-add contraction anywhere; the float steps of decouple must
# round exactly where libvmaf's C does.
_OPTIONS = ("--std=c++17", "--fmad=false")


def _c_double(x: float) -> str:
    """A C double literal that parses back to exactly ``x``."""
    text = repr(float(x))
    return text if ("." in text or "e" in text) else text + ".0"


def preamble() -> str:
    """``#define``s for every constant the kernels read, from :mod:`reference.constants`."""
    defs: list[tuple[str, str]] = []
    for k in range(4):
        defs.append((f"ADM_DWT_LO{k}", str(C.DWT_LO[k])))
        defs.append((f"ADM_DWT_HI{k}", str(C.DWT_HI[k])))
    defs += [
        ("ADM_DWT0_HP_RND", str(C.DWT0_HP[0])),
        ("ADM_DWT0_HP_SHIFT", str(C.DWT0_HP[1])),
        ("ADM_LUT_CENTRE", str(len(C.DIV_LOOKUP) // 2)),
        ("ADM_K_ONE", str(C.K_ONE)),
        ("ADM_K_RND", str(C.K_ROUND[0])),
        ("ADM_K_SHIFT", str(C.K_ROUND[1])),
        ("ADM_COS_1DEG_SQ", _c_double(float(COS_1DEG_SQ))),
        ("ADM_INV_ANGLE_SCALE", _c_double(1.0 / C.ANGLE_SCALE)),
        ("ADM_CSF0_RND_HV", str(C.CSF0_ROUND[0][0])),
        ("ADM_CSF0_SHIFT_HV", str(C.CSF0_ROUND[0][1])),
        ("ADM_CSF0_RND_D", str(C.CSF0_ROUND[2][0])),
        ("ADM_CSF0_SHIFT_D", str(C.CSF0_ROUND[2][1])),
        ("ADM_FIX_ONE_BY_30", str(C.FIX_ONE_BY_30)),
        ("ADM_FLT0_RND", str(C.FLT0_ROUND[0])),
        ("ADM_FLT0_SHIFT", str(C.FLT0_ROUND[1])),
        ("ADM_CSF_S123_DST_RND", f"{C.CSF_S123_DST[0]}LL"),
        ("ADM_CSF_S123_DST_SHIFT", str(C.CSF_S123_DST[1])),
        ("ADM_I4_FIX_ONE_BY_30", f"{C.I4_FIX_ONE_BY_30}LL"),
        ("ADM_CSF_S123_FLT_RND", f"({C.CSF_S123_FLT[0]}LL)"),
        ("ADM_CSF_S123_FLT_SHIFT", str(C.CSF_S123_FLT[1])),
        ("ADM_ONE_BY_15", str(C.ONE_BY_15)),
        ("ADM_I4_ONE_BY_15", f"{C.I4_ONE_BY_15}LL"),
        ("ADM_CM0_SQ_RND_HV", f"{C.CM0_SQ[0][0]}ULL"),
        ("ADM_CM0_SQ_SHIFT_HV", str(C.CM0_SQ[0][1])),
        ("ADM_CM0_SQ_RND_D", f"{C.CM0_SQ[2][0]}ULL"),
        ("ADM_CM0_SQ_SHIFT_D", str(C.CM0_SQ[2][1])),
        ("ADM_CM0_SUB_HV", str(C.CM0_SUB_SHIFT[0])),
        ("ADM_CM0_SUB_D", str(C.CM0_SUB_SHIFT[2])),
        ("ADM_CM_S123_SQ_RND", f"{C.CM_S123_SQ[0]}ULL"),
        ("ADM_CM_S123_SQ_SHIFT", str(C.CM_S123_SQ[1])),
        ("ADM_ROW_WARPS", str(ROW_WARPS)),
        ("ADM_CM_MIN_BLOCKS", str(CM_MIN_BLOCKS)),
        ("ADM_DWT_THREADS", str(DWT_THREADS)),
        ("ADM_DWT0_MIN_BLOCKS", str(DWT0_MIN_BLOCKS)),
        ("ADM_P_COUNT", str(PARAM_COUNT)),
        ("ADM_ACC_COUNT", str(ACC_COUNT)),
    ]
    defs += [(f"ADM_P_{name}", str(at)) for name, at in PARAM_OFFSETS.items()]
    defs += [(f"ADM_ACC_{name}", str(at)) for name, at in ACC_OFFSETS.items()]
    # The CSF rounding and the scale-0 masking constants of h and v are shared in the
    # kernels; fail here if that changes.
    if C.CSF0_ROUND[0] != C.CSF0_ROUND[1]:
        raise RuntimeError("reference.constants.CSF0_ROUND differs for h and v")
    if C.CM0_SQ[0] != C.CM0_SQ[1] or C.CM0_SUB_SHIFT[0] != C.CM0_SUB_SHIFT[1]:
        raise RuntimeError("reference.constants.CM0_SQ or CM0_SUB_SHIFT differs for h and v")
    lines = ["// Generated by admcuda.backends.cuda.kernels.preamble from reference.constants."]
    # Negative literals go in parentheses so that a cast or operator before them binds.
    lines += [f"#define {n} ({v})" if v.startswith("-") else f"#define {n} {v}" for n, v in defs]
    return "\n".join(lines) + "\n"


def _read(name: str) -> str:
    return importlib.resources.files(_KERNEL_PACKAGE).joinpath(name).read_text(encoding="utf-8")


def source(stem: str) -> str:
    """Full compilable text of one stage: preamble, shared header, stage file."""
    if stem not in STAGES:
        raise KeyError(f"unknown kernel stage {stem!r}; known: {', '.join(STAGES)}")
    return "\n".join(
        (
            preamble(),
            f"// ---- {_COMMON}",
            _read(_COMMON),
            f"// ---- {stem}.cu",
            _read(f"{stem}.cu"),
        )
    )


def name_expression(kernel: str, dtype: np.dtype | None) -> str:
    """``kernel<ctype>``: the template instantiation's name for ``name_expressions``
    (the bare name for a kernel that is not a template, dtype None)."""
    return kernel if dtype is None else f"{kernel}<{CTYPES[np.dtype(dtype)]}>"


def _expressions(stem: str) -> tuple[str, ...]:
    return tuple(name_expression(k, t) for k, types in STAGES[stem] for t in (types or (None,)))


@functools.cache
def _module(stem: str, device_id: int) -> Any:
    import cupy as cp

    with cp.cuda.Device(device_id):
        mod = cp.RawModule(code=source(stem), options=_OPTIONS, name_expressions=_expressions(stem))
        mod.compile()
    return mod


def _stem_of(kernel: str) -> str:
    for stem, kernels in STAGES.items():
        if any(k == kernel for k, _ in kernels):
            return stem
    raise KeyError(f"no stage defines kernel {kernel!r}")


@functools.cache
def _function(kernel: str, dtype: np.dtype | None, device_id: int) -> Any:
    return _module(_stem_of(kernel), device_id).get_function(name_expression(kernel, dtype))


def function(kernel: str, dtype: np.dtype | type | None) -> Any:
    """The compiled ``kernel<dtype>`` (``kernel`` itself for dtype None) on the current
    device, compiled once per process."""
    import cupy as cp

    return _function(kernel, None if dtype is None else np.dtype(dtype), cp.cuda.Device().id)


@functools.cache
def _div_lookup(device_id: int) -> Any:
    import cupy as cp

    with cp.cuda.Device(device_id):
        return cp.asarray(C.DIV_LOOKUP.astype(np.int32))


def div_lookup() -> Any:
    """libvmaf's Q30 reciprocal table on the current device, uploaded once."""
    import cupy as cp

    return _div_lookup(cp.cuda.Device().id)


def check_array(
    arr: Any, dtype: np.dtype | type, name: str, *, ndim: int | None = None, contiguous: bool = True
) -> None:
    """Refuse a kernel argument of the wrong dtype, rank or layout before a launch.

    CuPy passes a device array to a kernel as a bare pointer, so nothing downstream
    would notice.
    """
    import cupy as cp

    if not isinstance(arr, cp.ndarray):
        raise TypeError(f"{name} must be a cupy.ndarray, got {type(arr).__name__}")
    if arr.dtype != np.dtype(dtype):
        raise TypeError(f"{name} must be {np.dtype(dtype).name}, got {arr.dtype.name}")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {arr.shape}")
    if contiguous and not arr.flags.c_contiguous:
        raise ValueError(f"{name} must be C-contiguous")


def plain_source(stem: str, defines: tuple[tuple[str, int], ...] = ()) -> str:
    """Full text of a ``.cu`` file that is not an ADM stage: the caller's ``#define``s,
    then the file (no preamble, no shared header)."""
    lines = [f"#define {name} {value}" for name, value in defines]
    return "\n".join([*lines, f"// ---- {stem}.cu", _read(f"{stem}.cu")])


@functools.cache
def _plain_module(stem: str, defines: tuple[tuple[str, int], ...]) -> Any:
    import cupy as cp

    return cp.RawModule(code=plain_source(stem, defines))


def plain_function(stem: str, kernel: str, defines: tuple[tuple[str, int], ...] = ()) -> Any:
    """Kernel ``kernel`` (``extern "C"``, no template) of ``kernels/<stem>.cu`` compiled
    with ``defines``, one module per file and defines."""
    return _plain_module(stem, tuple(defines)).get_function(kernel)


# --- VIF and motion ---------------------------------------------------------------------------
#
# kernels/vif.cu and kernels/motion.cu take their constants from a preamble of their own,
# generated from reference.vif_constants and reference.motion, and instantiate templates
# of several parameters; their name expressions are listed here in full.

VIF_TILE = (64, 16)  # vif_scale's tile (columns, rows); a block has a quarter as many threads
VIF_VR = 4  # rows each thread of vif_scale's vertical pass computes
MOTION_THREADS = 256  # motion_sad's block: columns a tile
MOTION_ROWS = 8  # rows a motion_sad block scores


def _vif_preamble() -> str:
    from admcuda.reference import vif_constants as V

    defs = [(f"VIF_TAPS_{s}", "{" + ", ".join(map(str, taps)) + "}")
            for s, taps in enumerate(V.VIF_FILTERS)]  # fmt: skip
    defs += [(f"VIF_HALF_{s}", str(n // 2)) for s, n in enumerate(V.VIF_FILTER_WIDTHS)]
    defs += [
        ("VIF_SIGMA_NSQ", str(V.SIGMA_NSQ)),
        ("VIF_LOG2_ONE", str(V.LOG2_ONE)),
        ("VIF_LOG2_BITS", str(V.LOG2_BITS)),
        ("VIF_DEN_LOG_OFFSET", f"{V.DEN_LOG_OFFSET}LL"),
        ("VIF_TW", str(VIF_TILE[0])),
        ("VIF_TH", str(VIF_TILE[1])),
        ("VIF_VR", str(VIF_VR)),
    ]
    if V.HP != (32768, 16) or V.MU_PRODUCT != (1 << 31, 32):
        raise RuntimeError("kernels/vif.cu spells the horizontal and product rounding out")
    return "\n".join(f"#define {n} {v}" for n, v in defs) + "\n"


def _motion_preamble() -> str:
    from admcuda.reference import motion as M

    if M.X_CONV != (1 << 15, 16) or len(M.FILTER) != 5:
        raise RuntimeError("kernels/motion.cu spells the 5-tap filter and its rounding out")
    taps = "{" + ", ".join(map(str, M.FILTER)) + "}"
    return (
        f"#define MOTION_TAPS {taps}\n#define MOTION_THREADS {MOTION_THREADS}\n"
        f"#define MOTION_ROWS {MOTION_ROWS}\n"
    )


def _vif_expressions() -> tuple[str, ...]:
    out = [f"vif_scale<unsigned char, 0, {d}>" for d in ("true", "false")]
    out += [f"vif_scale<unsigned short, {s}, {d}>" for s in range(3) for d in ("true", "false")]
    return (*out, "vif_scale<unsigned short, 3, false>")


_FEATURE_STAGES = {
    "vif": (_vif_preamble, _vif_expressions),
    "motion": (
        _motion_preamble,
        lambda: ("motion_sad<unsigned char, int>", "motion_sad<unsigned short, long long>"),
    ),
}


def feature_expressions(stem: str) -> tuple[str, ...]:
    """The name expressions ``kernels/<stem>.cu`` (``vif`` or ``motion``) instantiates."""
    return tuple(_FEATURE_STAGES[stem][1]())


def feature_source(stem: str) -> str:
    """Full compilable text of ``kernels/vif.cu`` or ``kernels/motion.cu``."""
    make, _ = _FEATURE_STAGES[stem]
    return "\n".join((f"// Generated by admcuda.backends.cuda.kernels for {stem}.cu.", make(),
                      f"// ---- {stem}.cu", _read(f"{stem}.cu")))  # fmt: skip


@functools.cache
def _feature_module(stem: str, device_id: int) -> Any:
    import cupy as cp

    _, names = _FEATURE_STAGES[stem]
    with cp.cuda.Device(device_id):
        mod = cp.RawModule(code=feature_source(stem), options=_OPTIONS, name_expressions=names())
        mod.compile()
    return mod


def feature_function(stem: str, expression: str) -> Any:
    """The compiled kernel ``expression`` (a name expression of ``stem``'s list) of
    ``kernels/<stem>.cu`` on the current device, compiled once per process."""
    import cupy as cp

    return _feature_module(stem, cp.cuda.Device().id).get_function(expression)


@functools.cache
def _log2_table(device_id: int) -> Any:
    import cupy as cp

    from admcuda.reference.vif import log_generate

    with cp.cuda.Device(device_id):
        return cp.asarray(log_generate())


def log2_table() -> Any:
    """libvmaf's VIF log2 table (built on the host from libm's ``log2f``, as the reference
    builds it) on the current device, uploaded once."""
    import cupy as cp

    return _log2_table(cp.cuda.Device().id)
