"""One subgroup's 16 x 16 x 16 fused multiply-add (Hopper's f16 / bf16 -> f32 and f16 -> f16 steps)
in vector registers, for compiled code that holds whole matrices (emu/jit/coop_kernel.py).

The same computation as mma_fast's 32-bit row path for one block (L = K = 16), written as LLVM
vector code over the 16 columns of an output row: decode A's row and C's row, the block maximum of
the exponent sums, the alignment exponent q (the accumulator's where it is larger), the 16 terms
cut toward zero at 2^(q - F) and summed in 32-bit lanes, C's term added in 64-bit lanes, then the
sum normalised and rounded (toward zero or to nearest even) as a normal f32 (f16), or a zero (terms
that cancel, or nothing nonzero: then the sign of C and the products, and the model's zero sign
rule, as mma_fast and tile_mma give it), branch-free.

It covers only that common case: tile16 returns False, having written nothing final, where any
element falls outside it (an infinity or NaN among the operands, a subnormal or overflowing
result), and the caller then runs a kernel that covers everything on the same subgroup
(mma_call's, which is mma_fast.tile_mma's and the reference's). So the bits are mma_fast's
wherever this path answers; tests/perf/test_mma_fast.py and test_coop_kernel.py compare it with
the reference kernel and the interpreter.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

from .mma_params import covers, use32  # noqa: F401  (where they were)
from .mma_kernels import (K_FUSED, P_ACC_EB, P_ACC_FB, P_C_EB, P_C_FB, P_C_OUT, P_CARRY, P_F, P_FINAL,
                          P_FLUSH_IN, P_FLUSH_OUT, P_IN_EB, P_IN_FB, P_IN_KEEP, P_KIND, P_L, P_TERM,
                          P_ZERO_POS, R_RNE, R_RZ)
from .mma_params import P_EZERO, P_EZERO_ON

_V = 16
# called only from compiled code (generated kernels, tiles): no Python or C wrapper to compile
_compiled_only = njit(cache=True, nogil=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
_NEG32 = -(1 << 28)     # a zero operand's exponent (mma_fast._NEG32)


# C's and D's raw bits' width -> their format (exponent bits, fraction bits, bias): f32 or f16
_C_OF_WIDTH = {32: (8, 23, 127), 16: (5, 10, 15)}


def _ir():
    from llvmlite import ir
    return ir


def _vec(bits):
    ir = _ir()
    return ir.VectorType(ir.IntType(bits), _V)


def _c(bits, v):
    ir = _ir()
    return ir.Constant(_vec(bits), [v] * _V)


def _splat(builder, x, bits):
    """x (an integer scalar) in all 16 lanes of a vector of `bits`-bit integers."""
    ir = _ir()
    x = builder.trunc(x, ir.IntType(bits)) if x.type.width > bits else x
    v = builder.insert_element(ir.Constant(_vec(bits), None), x, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(v, v, ir.Constant(_vec(32), [0] * _V))


def _lane(builder, v, k):
    """Lane k of v in all lanes."""
    ir = _ir()
    return builder.shuffle_vector(v, v, ir.Constant(_vec(32), [k] * _V))


def _ptr(context, builder, aryty, ary, off, bits):
    """A pointer to 16 `bits`-bit integers at element `off` of an array."""
    ir = _ir()
    a = context.make_array(aryty)(context, builder, ary)
    p = builder.gep(a.data, [off], inbounds=True)
    return builder.bitcast(p, _vec(bits).as_pointer())


def _min(b, x, y):
    return b.select(b.icmp_signed("<", x, y), x, y)


def _max(b, x, y):
    return b.select(b.icmp_signed(">", x, y), x, y)


def _decode(b, x, eb, fb, fmask, bias, fl):
    """mma_fast's branch-free decode of 16 raw values (i32 lanes): (magnitude, exponent, sign 0/-1,
    special). eb, fb, fmask, bias: i32 vectors; fl: i1 vector (flush subnormal inputs)."""
    one = _c(32, 1)
    zero = _c(32, 0)
    emask = b.sub(b.shl(one, eb), one)
    E = b.and_(b.lshr(x, fb), emask)
    m = b.or_(b.and_(x, fmask), b.shl(b.zext(b.icmp_signed("!=", E, zero), _vec(32)), fb))
    sp = b.icmp_signed("==", E, emask)
    m = b.select(b.or_(sp, b.and_(fl, b.icmp_signed("==", E, zero))), zero, m)
    e = b.sub(_max(b, E, one), bias)
    n = b.sub(zero, b.and_(b.lshr(x, b.add(eb, fb)), one))
    return m, e, n, sp


def _any(b, mask):
    """An i1: some lane of the <16 x i1> mask is set."""
    ir = _ir()
    return b.icmp_unsigned("!=", b.bitcast(mask, ir.IntType(_V)), ir.Constant(ir.IntType(_V), 0))


def _arrays_ok(*tys):
    return all(isinstance(t, types.Array) and t.layout == "C" for t in tys)


@intrinsic
def _decode_b(typingctx, Bb, Be, Bm, Bn, fmt):
    """B's 16 rows (raw 16-bit values, [k, j]) decoded into Be (exponent, _NEG32 for a zero), Bm
    (magnitude), Bn (sign 0/-1), int32 [k, j]; returns 1 where some element is an infinity or
    NaN. fmt: (eb, fb, fmask, bias, flush) of the operands."""
    if not _arrays_ok(Bb, Be, Bm, Bn):
        return None
    sig = types.int64(Bb, Be, Bm, Bn, fmt)

    def codegen(context, builder, signature, args):
        ir = _ir()
        tb, te, tm, tn, tf = signature.args
        eb, fb, fmask, bias, fl = (builder.extract_value(args[4], i) for i in range(5))
        i64 = ir.IntType(64)
        V = [_splat(builder, x, 32) for x in (eb, fb, fmask, bias)]
        flv = _splat(builder, builder.icmp_signed("!=", fl, ir.Constant(i64, 0)), 1)
        bad = ir.Constant(ir.IntType(1), 0)
        for k in range(_V):
            off = ir.Constant(i64, _V * k)
            x = builder.zext(builder.load(_ptr(context, builder, tb, args[0], off, 16), align=2), _vec(32))
            m, e, n, sp = _decode(builder, x, *V, flv)
            e = builder.select(builder.icmp_signed("!=", m, _c(32, 0)), e, _c(32, _NEG32))
            for ty, ary, val in ((te, args[1], e), (tm, args[2], m), (tn, args[3], n)):
                builder.store(val, _ptr(context, builder, ty, ary, off, 32), align=4)
            bad = builder.or_(bad, _any(builder, sp))
        return builder.zext(bad, i64)
    return sig, codegen


@intrinsic
def _row(typingctx, Ab, oa, Be, Bm, Bn, Cb, Db, oc, fmt, cfg):
    """Output row i (oa = 16 i into A's raw bits, oc = 16 i into C's and D's): D's row = the bits of
    the fused sum of A's row times B (decoded by _decode_b) plus C's row, where every lane is in
    the common case; returns 1 if so (else D's row is not final). fmt: A's (eb, fb, fmask, bias,
    flush); cfg: (pre, F, round to nearest even, zero results positive, the exponent zeros align
    at: a lane whose nonzero addends are all below it is left to the caller). C and D: f32 (uint32) or
    f16 (uint16) raw bits, both the same."""
    if not _arrays_ok(Ab, Be, Bm, Bn, Cb, Db) or Cb.dtype != Db.dtype or Cb.dtype.bitwidth not in _C_OF_WIDTH:
        return None
    cw = Cb.dtype.bitwidth
    ceb, cfb, cbias = _C_OF_WIDTH[cw]
    sig = types.int64(Ab, types.int64, Be, Bm, Bn, Cb, Db, types.int64, fmt, cfg)

    def codegen(context, builder, signature, args):
        ir = _ir()
        b = builder
        ta, _, te, tm, tn, tc, td, _, _, _ = signature.args
        Ab, oa, Be, Bm, Bn, Cb, Db, oc, fmt, cfg = args
        i64 = ir.IntType(64)
        eb, fb, fmask, bias, fl = (b.extract_value(fmt, i) for i in range(5))
        pre, F, rne, zpos, ez = (b.extract_value(cfg, i) for i in range(5))
        flv = _splat(b, b.icmp_signed("!=", fl, ir.Constant(i64, 0)), 1)
        zero32 = _c(32, 0)
        # A's row, decoded (a special there: the caller redoes the subgroup)
        xa = b.zext(b.load(_ptr(context, b, ta, Ab, oa, 16), align=2), _vec(32))
        ma, ea, na, spa = _decode(b, xa, *(_splat(b, x, 32) for x in (eb, fb, fmask, bias)), flv)
        ea = b.select(b.icmp_signed("!=", ma, zero32), ea, _c(32, _NEG32))
        ma = b.shl(ma, _splat(b, pre, 32))
        # C's row: the running sum x = (-1)^xn xm 2^(xe - cfb)
        xc = b.load(_ptr(context, b, tc, Cb, oc, cw), align=cw // 8)
        xc = b.zext(xc, _vec(32)) if cw < 32 else xc
        xm, xe, xn, spc = _decode(b, xc, _c(32, ceb), _c(32, cfb), _c(32, (1 << cfb) - 1), _c(32, cbias), flv)
        # the block maximum of the exponent sums, lanes over the columns
        eak = [_lane(b, ea, k) for k in range(_V)]
        bptr = [[_ptr(context, b, t, ary, ir.Constant(i64, _V * k), 32) for k in range(_V)]
                for t, ary in ((te, Be), (tm, Bm), (tn, Bn))]
        bek = [b.load(p, align=4) for p in bptr[0]]
        em = None
        for k in range(_V):
            e = b.add(eak[k], bek[k])
            em = e if em is None else _max(b, e, em)
        q = b.select(b.and_(b.icmp_signed("!=", xm, zero32), b.icmp_signed(">", xe, em)), xe, em)
        # the terms, cut toward zero at 2^(q - F) (A's magnitudes carry the shift F - 2 fb)
        S = None
        allneg = None                   # -1 where every product's sign is negative (a zero's too)
        c31 = _c(32, 31)
        for k in range(_V):
            r = _min(b, b.sub(q, b.add(eak[k], bek[k])), c31)
            t = b.ashr(b.mul(_lane(b, ma, k), b.load(bptr[1][k], align=4)), r)
            s = b.xor(_lane(b, na, k), b.load(bptr[2][k], align=4))
            t = b.sub(b.xor(t, s), s)
            S = t if S is None else b.add(S, t)
            allneg = s if allneg is None else b.and_(allneg, s)
        # in 64-bit lanes: C's term at the same alignment, the sum, its rounding to a normal result
        v64 = _vec(64)

        def w(x):
            return b.sext(x, v64)

        def c(v):
            return _c(64, v)
        qq = b.sub(w(q), _splat(b, F, 64))                  # the sum's unit is 2^qq
        xm64 = w(xm)
        csh = b.sub(b.sub(w(xe), c(cfb)), qq)
        ls = _min(b, _max(b, csh, c(0)), c(63))
        rs = _min(b, _max(b, b.sub(c(0), csh), c(0)), c(63))
        t = b.ashr(b.shl(xm64, ls), rs)
        n64 = w(xn)
        sj = b.add(w(S), b.sub(b.xor(t, n64), n64))
        neg = b.icmp_signed("<", sj, c(0))
        mag = b.select(neg, b.sub(c(0), sj), sj)
        name = "llvm.ctlz.v16i64"
        ctlz = b.module.globals.get(name) or ir.Function(b.module, ir.FunctionType(v64, [v64, ir.IntType(1)]), name)
        top = b.sub(b.add(qq, c(63)), b.call(ctlz, [b.or_(mag, c(1)), ir.Constant(ir.IntType(1), 0)]))
        shf = b.sub(b.sub(top, c(cfb)), qq)
        shc = _min(b, _max(b, shf, c(1)), c(62))
        shl = _min(b, _max(b, b.sub(c(0), shf), c(0)), c(62))
        pos = b.icmp_signed(">", shf, c(0))
        qv = b.select(pos, b.ashr(mag, shc), b.shl(mag, shl))
        rem = b.and_(mag, b.sub(b.shl(c(1), shc), c(1)))
        half = b.shl(c(1), b.sub(shc, c(1)))
        up = b.or_(b.icmp_signed(">", rem, half),
                   b.and_(b.icmp_signed("==", rem, half), b.icmp_signed("==", b.and_(qv, c(1)), c(1))))
        up = b.and_(b.and_(up, pos), _splat(b, b.icmp_signed("!=", rne, ir.Constant(i64, 0)), 1))
        qv = b.add(qv, b.zext(up, v64))
        carry = b.icmp_signed("==", qv, c(1 << (cfb + 1)))
        qv = b.ashr(qv, b.zext(carry, v64))
        top = b.add(top, b.zext(carry, v64))
        # a normal result (with no nonzero product the sum is C itself, q its exponent) ...
        zero = b.icmp_signed("==", mag, c(0))
        fast = b.and_(b.icmp_signed(">", shf, c(-62)), b.icmp_signed("<", shf, c(62)))
        fast = b.and_(fast, b.and_(b.icmp_signed(">", top, c(1 - cbias)), b.icmp_signed("<=", top, c(cbias))))
        fast = b.and_(fast, b.or_(b.icmp_signed("==", xm, zero32), b.icmp_signed(">", csh, c(-62))))
        bits = b.or_(b.or_(b.shl(b.zext(neg, v64), c(cw - 1)), b.shl(b.add(top, c(cbias)), c(cfb))),
                     b.sub(qv, c(1 << cfb)))
        # ... or a zero, as mma_fast's rounding gives it under RZ / RNE: +0 where terms cancel,
        # and where nothing is nonzero (no product, C zero) -0 only if C and every product are
        # negative zeros (then +0 all the same where the model makes zero results positive)
        nprod = b.icmp_signed(">", em, _c(32, _NEG32 // 2))
        i32 = ir.IntType(32)
        keep = b.select(b.icmp_signed("==", zpos, ir.Constant(i64, 0)), ir.Constant(i32, -1), ir.Constant(i32, 0))
        zneg = b.and_(b.and_(xn, allneg), _splat(b, keep, 32))
        zneg = b.select(b.or_(nprod, b.icmp_signed("!=", xm, zero32)), zero32, zneg)
        bits = b.select(zero, b.shl(b.zext(b.and_(zneg, _c(32, 1)), v64), c(cw - 1)), bits)
        fast = b.or_(zero, fast)
        b.store(b.trunc(bits, _vec(cw)), _ptr(context, b, td, Db, oc, cw), align=cw // 8)
        low = b.and_(b.icmp_signed("<", q, _splat(b, ez, 32)), b.or_(nprod, b.icmp_signed("!=", xm, zero32)))
        slow = b.or_(b.or_(_any(b, spa), _any(b, spc)), b.or_(_any(b, b.not_(fast)), _any(b, low)))
        return b.zext(b.not_(slow), i64)
    return sig, codegen


@_compiled_only
def workspace():
    """The decoded B of tile16: exponent, magnitude, sign, int32 [k, j]."""
    return (np.empty((_V, _V), np.int32), np.empty((_V, _V), np.int32), np.empty((_V, _V), np.int32))


@_compiled_only
def tile16(ws, a, b, c, d, prm):
    """d[0] = the bits of A*B + C, zero signs applied (a, b: [1, 16, 16] uint16 raw bits, c, d:
    uint32 for f32, uint16 for f16) where every element is in the common case: True. False: d is
    not final; run mma_fast.tile_mma."""
    Be, Bm, Bn = ws
    ieb, ifb, keep = prm[P_IN_EB], prm[P_IN_FB], prm[P_IN_KEEP]
    fmask = ((np.int64(1) << ifb) - 1) & ~((np.int64(1) << (ifb - keep)) - 1)
    fmt = (ieb, ifb, fmask, (np.int64(1) << (ieb - 1)) - 1, prm[P_FLUSH_IN])
    ez = prm[P_EZERO] if prm[P_EZERO_ON] != 0 else np.int64(_NEG32)
    cfg = (prm[P_F] - 2 * ifb, prm[P_F], np.int64(prm[P_FINAL] == R_RNE), prm[P_ZERO_POS], ez)
    A, B, C, D = a[0], b[0], c[0], d[0]
    if _decode_b(B, Be, Bm, Bn, fmt) != 0:
        return False
    ok = np.int64(1)
    for i in range(_V):
        ok &= _row(A, _V * i, Be, Bm, Bn, C, D, _V * i, fmt, cfg)
    return ok != 0


@njit(cache=True, nogil=True)
def tiles(a, b, c, d, prm, need):
    """tile16 over S subgroups (a, b: [S, 16, 16] uint16, c, d: as tile16's); need[s] where
    subgroup s is not in the common case (d[s] then not final)."""
    ws = workspace()
    for s in range(a.shape[0]):
        need[s] = not tile16(ws, a[s:s + 1], b[s:s + 1], c[s:s + 1], d[s:s + 1], prm)
