"""Read this CPU's ``rcpss`` (the SSE approximate reciprocal libvmaf's float ADM divides
by) for every input in [1, 2) and print :data:`admcuda.reference.rcpss.TABLE`'s text.

``rcpss`` on the CPU that made ``testdata/float_adm_goldens.json`` (AMD EPYC) reads the
first 12 bits of the input's fraction alone and returns a number in (0.5, 1) with 12
bits of fraction; other inputs scale by their power of two. The table holds those 4096
fractions. Numba (``llvm.x86.sse.rcp.ss``) calls the instruction itself.

Usage: ``python testdata/make_rcpss_table.py`` (prints the table's lines).
"""

from __future__ import annotations

import numpy as np


def hardware_rcpss(values: np.ndarray) -> np.ndarray:
    """This CPU's ``rcpss`` of each float32 in ``values`` (Numba)."""
    import numba
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def _rcpss(typingctx, x):
        def codegen(context, builder, signature, args):
            f32 = ir.FloatType()
            v4 = ir.VectorType(f32, 4)
            fn = builder.module.declare_intrinsic(
                "llvm.x86.sse.rcp.ss", fnty=ir.FunctionType(v4, [v4])
            )
            lane0 = ir.Constant(ir.IntType(32), 0)
            vec = builder.insert_element(ir.Constant(v4, ir.Undefined), args[0], lane0)
            return builder.extract_element(builder.call(fn, [vec]), lane0)

        return types.float32(types.float32), codegen

    @numba.njit
    def _all(a):
        out = np.empty_like(a)
        for i in range(a.size):
            out[i] = _rcpss(a[i])
        return out

    flat = np.ascontiguousarray(values, dtype=np.float32).ravel()
    return _all(flat).reshape(np.shape(values))


def table_codes() -> np.ndarray:
    """The 4096 fractions (12 bits each) of ``rcpss`` over [1, 2), one per first 12 bits
    of the input's fraction; checks that the other 11 bits change nothing."""
    ones = (np.arange(1 << 23, dtype=np.uint32) | np.uint32(127 << 23)).view(np.float32)
    bits = hardware_rcpss(ones).view(np.uint32)
    first = bits[:: 1 << 11]
    if not np.array_equal(np.repeat(first, 1 << 11), bits):
        raise SystemExit("this CPU's rcpss reads more than 12 bits of the fraction")
    if np.any(first >> 23 != 126) or np.any(first & 0x7FF):
        raise SystemExit("this CPU's rcpss leaves (0.5, 1) or keeps more than 12 bits")
    return (first - np.uint32(0x3F000000)) >> 11


def main() -> None:
    codes = table_codes()
    text = "".join(f"{int(c):03x}" for c in codes)
    for k in range(0, len(text), 96):
        print(f'    "{text[k : k + 96]}"')


if __name__ == "__main__":
    main()
