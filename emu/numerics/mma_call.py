"""One subgroup's multiply-add in every case (zeros, subnormal results, infinities, NaNs,
overflow), compiled once as a C-callable kernel that generated code calls by its address.

emu/jit/coop_kernel.py's generated loop runs mma_tile.tile16 (the common case in vector
registers) and, for a subgroup it does not answer, this kernel: mma_fast.tile_mma on the subgroup,
and where that too hands back (an infinity, NaN or overflow), mma_kernels' reference kernel. The
bits are the interpreter's in every case, since those are the kernels it runs.

Why an address: a generated kernel that called tile_mma directly would compile it into its own
module, seconds per shader; this one is compiled (or loaded from numba's cache) once per process,
only when a subgroup first needs it, and every generated kernel calls the same machine code. The
address is an argument of the generated kernel, so that its cache does not hold a pointer of an
earlier process.
"""
from __future__ import annotations

import numpy as np
from numba import carray, cfunc, njit, types
from numba.extending import intrinsic

from . import mma_fast, mma_kernels
from .mma_kernels import P_ACC_EB, P_ACC_FB, P_ZERO_POS

# (A's and B's element bits, C's and D's) -> the kernel's signature
_PTR = {16: types.CPointer(types.uint16), 32: types.CPointer(types.uint32)}
_KERNELS: dict = {}


def _sig(ab: int, cd: int):
    return types.int64(_PTR[ab], _PTR[ab], _PTR[cd], _PTR[cd], types.CPointer(types.int64), types.int64,
                       types.int64, types.int64, types.int64, types.boolean)


@njit(cache=True, nogil=True)
def _reference(a, b, c, d, prm):
    """d[0] = A*B + C by mma_kernels' reference kernel (uint32 bits), zero signs applied."""
    out = np.empty(c.shape, np.uint32)
    mma_kernels.float_mma_serial(a.astype(np.uint32), b.astype(np.uint32), c.astype(np.uint32), out, prm)
    zero = (np.int64(1) << (prm[P_ACC_EB] + prm[P_ACC_FB])) if prm[P_ZERO_POS] != 0 else np.int64(-1)
    for i in range(out.shape[1]):
        for j in range(out.shape[2]):
            v = out[0, i, j]
            d[0, i, j] = 0 if v == zero else v


def _subgroup(pa, pb, pc, pd, pp, nprm, M, N, K, use32):
    a, b = carray(pa, (1, M, K)), carray(pb, (1, K, N))
    c, d = carray(pc, (1, M, N)), carray(pd, (1, M, N))
    prm = carray(pp, (nprm,))
    ws = mma_fast.tile_workspace(M, N, K, prm, use32)
    if mma_fast.tile_mma(ws, a, b, c, d, prm, True):
        _reference(a, b, c, d, prm)
    return 0


def address(ab: int, cd: int) -> int:
    """The kernel's address for operands of `ab` bits and C / D of `cd` bits: compiled, or loaded
    from numba's cache, on first use."""
    k = _KERNELS.get((ab, cd))
    if k is None:
        k = _KERNELS[(ab, cd)] = cfunc(_sig(ab, cd), cache=True, nogil=True)(_subgroup)
    return k.address


@intrinsic
def call(typingctx, addr, a, b, c, d, prm, use32):
    """The kernel at `addr` (address()) on one subgroup's matrices a, b, c (raw bits, [1, rows,
    cols], C-contiguous), d written; prm: the packed rule (int64)."""
    if not all(isinstance(t, types.Array) and t.layout == "C" for t in (a, b, c, d, prm)):
        return None
    sig = types.int64(addr, a, b, c, d, prm, use32)

    def codegen(context, builder, signature, args):
        from llvmlite import ir
        i64 = ir.IntType(64)
        arrs = [context.make_array(t)(context, builder, v) for t, v in zip(signature.args[1:6], args[1:6])]
        ptrs = [x.data for x in arrs]
        shape = [builder.extract_value(arrs[0].shape, 1), builder.extract_value(arrs[1].shape, 2),
                 builder.extract_value(arrs[0].shape, 2)]
        nprm = builder.extract_value(arrs[4].shape, 0)
        flag = builder.icmp_unsigned("!=", builder.zext(args[6], i64), ir.Constant(i64, 0))
        fnty = ir.FunctionType(i64, [p.type for p in ptrs] + [i64] * 4 + [ir.IntType(8)])
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        return builder.call(fn, ptrs + [nprm] + shape + [builder.zext(flag, ir.IntType(8))])
    return sig, codegen
