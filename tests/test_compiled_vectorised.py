"""The compiled engine's hot loops are vectorised (admcuda.compiled).

A loop that LLVM's loop vectoriser leaves scalar (a data-dependent branch, a call that is
not inlined, a runtime-typed tap that widens the lanes to int64, Python's error model)
costs the engine two or three times its time and changes no result, so no parity test
sees it. Here each kernel's optimised LLVM module, the one Numba keeps beside the machine
code (also for kernels loaded from its disk cache), is read for the vectoriser's own
mark: a loop it vectorised has a ``vector.body`` block whatever the vector width (SSE,
AVX2 or AVX-512), computing there on integer vectors (``<16 x i32>``, ``<4 x i64>``).
Each entry point's module must have at least the loops counted for the CPU target Numba
compiles for. Nothing is timed; the kernels are those ``admcuda warmup`` compiles for
8-bit frames, from Numba's disk cache once compiled.
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("numba")

from admcuda.compiled import adm, motion, vif, warm_up  # noqa: E402

# Per compiled entry point (its 8-bit signatures, as ``admcuda warmup`` compiles them),
# the loops of its LLVM module that LLVM's loop vectoriser turned into integer vector
# code, at least: the counts Numba 0.68.1 (llvmlite 0.50, LLVM 22) gives for each x86
# level's widest vectors, with NUMBA_CPU_NAME and NUMBA_CPU_FEATURES set to znver4 and
# skylake-avx512 (the fewer of the two), haswell, and nehalem. SSE2 alone (x86-64) has
# no 32-bit vector multiply; there, and on targets not recorded, the test is skipped.
FLOORS = {
    "avx512": {
        "vif._statistic_8": 28,
        "vif._decimate_8": 7,
        "vif._statistic_16": 75,
        "vif._decimate_16": 16,
        "motion._sad": 3,
        "adm._dwt0_stage": 5,
        "adm._dwt123_stage": 4,
        "adm._masking_stage": 15,
    },
    "avx2": {
        "vif._statistic_8": 27,
        "vif._decimate_8": 7,
        "vif._statistic_16": 71,
        "vif._decimate_16": 16,
        "motion._sad": 3,
        "adm._dwt0_stage": 5,
        "adm._dwt123_stage": 4,
        "adm._masking_stage": 15,
    },
    "sse4.1": {
        "vif._statistic_8": 26,
        "vif._decimate_8": 7,
        "vif._statistic_16": 64,
        "vif._decimate_16": 16,
        "motion._sad": 3,
        "adm._dwt0_stage": 5,
        "adm._dwt123_stage": 4,
        "adm._masking_stage": 7,
    },
}
# On AVX-512 they are every per-column loop of the sources: 8-bit scale 0's statistic has
# 3 centre taps, 8 tap pairs of the means and squares and 8 of the cross products (the
# vertical pass), 2 roundings, 2 means and 3 second moments (the horizontal pass) and the
# per-pixel terms; the decimations have their vertical tap pairs and rounding; motion its
# difference rows and vertical and horizontal blur; ADM's DWT its vertical lo and hi and
# each horizontal pass's interior (three bands at scale 0, four at scales 1-3), its
# masking the CSF, threshold, decouple and row sums. Narrower vectors leave a few 64-bit
# loops scalar, where LLVM finds them no faster.

_MODULES = {"vif": vif, "adm": adm, "motion": motion}
_DEFINE = re.compile(r'^define [^@]*@"?[^"(]+"?\(.*?^\}', re.M | re.S)
_LABEL = re.compile(r"^[\w.\-]+:", re.M)
_INT_VECTOR_OP = re.compile(r"= (?:add|sub|mul|shl|lshr|ashr)\b[^\n]*<\d+ x i\d+>")


def _level() -> str | None:
    """The x86 vector level Numba compiles for (its NUMBA_CPU_FEATURES, else the host's)."""
    import llvmlite.binding as ll
    from numba.core import config

    text = config.CPU_FEATURES
    if text is None:
        text = ll.get_host_cpu_features().flatten()
    on = {f[1:] for f in text.split(",") if f.startswith("+")}
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= on:
        return "avx512"
    if "avx2" in on:
        return "avx2"
    if "sse4.1" in on:
        return "sse4.1"
    return None


def _vector_loops(ir: str) -> int:
    """Loops of an LLVM module that the loop vectoriser vectorised (each has one
    ``vector.body`` block; an epilogue's is ``vec.epilog.vector.body``) and whose body
    computes on integer vectors."""
    n = 0
    for fn in _DEFINE.finditer(ir):
        body = fn.group(0)
        starts = [m.start() for m in _LABEL.finditer(body)] + [len(body)]
        for a, b in zip(starts, starts[1:], strict=False):
            block = body[a:b]
            if re.match(r"vector\.body\d*:", block) and _INT_VECTOR_OP.search(block):
                n += 1
    return n


def _module_ir(kernel: str) -> list[str]:
    """The optimised LLVM module of each compiled signature of ``kernel``: the one Numba
    keeps beside the machine code for linking, also where the kernel came from its disk
    cache (whose machine code it does not disassemble)."""
    module, name = kernel.split(".")
    dispatcher = getattr(_MODULES[module], name)
    libraries = [cres.library for cres in dispatcher.overloads.values()]
    assert libraries, f"{kernel} was not compiled by warm_up((8,))"
    if not hasattr(libraries[0], "_get_module_for_linking"):
        pytest.skip("this Numba keeps no optimised LLVM module beside its machine code")
    return [str(lib._get_module_for_linking()) for lib in libraries]


@pytest.fixture(scope="module")
def floors() -> dict[str, int]:
    level = _level()
    if level is None:
        pytest.skip("no vectorisation counts recorded for this CPU target")
    warm_up((8,))
    return FLOORS[level]


@pytest.mark.parametrize("kernel", sorted(FLOORS["avx512"]))
def test_hot_loops_are_vectorised(floors, kernel):
    found = [_vector_loops(ir) for ir in _module_ir(kernel)]
    assert min(found) >= floors[kernel], (
        f"{kernel}: {min(found)} loops vectorised, {floors[kernel]} expected on this CPU "
        "target: a hot loop runs a sample at a time (a branch on data, a call left in the "
        "loop, 64-bit lanes where 32 did, error_model='python')"
    )
