"""A faster numba kernel for the MMA models that matter most for speed: 'fused' (the NVIDIA
presets: C inside the fused sum, blocks rounded, terms cut toward zero) and 'exact'.

It computes exactly what emu.numerics.mma_kernels computes (same packed parameter vector, same
bits), restructured for speed:
- operands are gathered straight from lane fragments through the lane maps and decoded once per
  subgroup, branch-free, into int64 arrays cut into blocks of L along K (signed significand,
  exponent); a zero operand carries a very negative exponent, so that it drops out of a block's
  maximum and its term shifts to nothing without a branch;
- per output element the block maximum and the sum of aligned, truncated terms are two loops over
  range(L) from 0 on contiguous rows, which LLVM vectorises (B is stored transposed);
- fused 16x16 outputs with blocks of L = 16 (Hopper) whose block sums fit 32 bits (f16 and bf16
  operands: _use32) instead run in 32-bit lanes, one output row of a block at a time with its 16
  columns in one vector register (B stored [block, k, j], LLVM vector code written directly:
  _vemax_row, _vterms_row); A's significands carry the shift F - 2 fin, so that a term is
  (ma * mb) >> (q - ea - eb), q the block's alignment exponent, and no horizontal reduction;
- the common result (normal, rounded toward zero or to nearest even, or an exact sum narrower
  than the result) is rounded branch-free for a whole output row; other results (zero,
  subnormal, other modes) take mma_kernels' own round_bits;
- the lane maps are passed as unsigned indices (no negative-index wrap-around in the gathers);
- scratch arrays are allocated once per run of subgroups, and runs go to threads (--jobs).
A subgroup with anything unusual (an infinity or NaN among its operands or in a running
accumulator, an exact sum wider than one int64) is computed by the reference kernel itself
(mma_kernels.float_mma_serial), so those cases run the very code they ran before; that kernel is
compiled only when such a subgroup occurs. tests/perf/test_mma_fast.py compares both bit for bit.
"""
from __future__ import annotations

import numpy as np
from numba import njit
from numba.core import types
from numba.extending import intrinsic

from . import mma_tile

from .mma_params import use32 as _use32, applies, only32  # noqa: F401  (where they were)
from .mma_kernels import (decode, round_bits, bitlen,
                                    ZERO, FINITE, K_EXACT, K_FUSED, R_RZ, R_RD, R_RNE, P_KIND,
                                    P_IN_EB, P_IN_FB, P_IN_KEEP, P_C_EB, P_C_FB, P_ACC_EB, P_ACC_FB,
                                    P_L, P_F, P_TERM, P_C_OUT, P_CARRY, P_FINAL, P_OVF_INF,
                                    P_FLUSH_IN, P_FLUSH_OUT, P_ZERO_POS, ZERO64, RNE64)
from .mma_params import P_EZERO_ON, P_EZERO

# the kernel's pieces are called only from compiled code: no Python or cfunc wrapper to compile
_piece = njit(cache=True, nogil=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)

_NEG = np.int64(-(1 << 40))     # exponent of a zero operand: below every real one
_POS = np.int64(1 << 40)        # ... and above every real one (for minima)
_NEG32 = np.int32(-(1 << 28))   # the same in the 32-bit lanes (two of them still fit an int32)


@intrinsic
def _clz(typingctx, x):
    """Leading zero bits of an int64 (LLVM ctlz; 64 for 0)."""
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        from llvmlite import ir
        return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 0))
    return sig, codegen


# 16 x 16 outputs with blocks of L = 16 (Hopper) in 32-bit lanes: one output row of a block at a
# time, 16 columns in one vector register, the 16 products of the block unrolled, no horizontal
# reduction. Written as LLVM vector code directly: numba widens int32 arithmetic to int64, and
# LLVM's loop vectoriser cuts a loop of a runtime 16 iterations into a 64-wide main loop (never
# taken) and an 8-wide remainder, and unrolls a constant range(16) into scalar code.
_V = 16


def _i32c(a):
    return isinstance(a, types.Array) and a.dtype == types.int32 and a.layout == "C"


def _vload(context, builder, aryty, ary, off):
    from llvmlite import ir
    a = context.make_array(aryty)(context, builder, ary)
    p = builder.gep(a.data, [off], inbounds=True)
    return builder.load(builder.bitcast(p, ir.VectorType(ir.IntType(32), _V).as_pointer()), align=4)


def _vsplat(builder, x):
    from llvmlite import ir
    vt = ir.VectorType(ir.IntType(32), _V)
    v = builder.insert_element(ir.Constant(vt, None), x, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(v, v, ir.Constant(vt, [0] * _V))


def _sload(context, builder, aryty, ary, off):
    a = context.make_array(aryty)(context, builder, ary)
    return builder.load(builder.gep(a.data, [off], inbounds=True), align=4)


def _vstore(context, builder, aryty, ary, v):
    from llvmlite import ir
    a = context.make_array(aryty)(context, builder, ary)
    builder.store(v, builder.bitcast(a.data, ir.VectorType(ir.IntType(32), _V).as_pointer()), align=4)


@intrinsic
def _vemax_row(typingctx, Ae, oa, Bt, ob, E):
    """E[j] = max over k < 16 of Ae.flat[oa + k] + Bt.flat[ob + 16 k + j], j < 16: one output row
    of a block, the lanes over the columns (B stored [block, k, j]); no horizontal reductions."""
    if not (_i32c(Ae) and _i32c(Bt) and _i32c(E)):
        return None
    sig = types.void(Ae, types.int64, Bt, types.int64, E)

    def codegen(context, builder, signature, args):
        from llvmlite import ir
        ta = signature.args
        i64 = ir.IntType(64)
        acc = None
        for k in range(_V):
            a = _vsplat(builder, _sload(context, builder, ta[0], args[0],
                                        builder.add(args[1], ir.Constant(i64, k))))
            b = _vload(context, builder, ta[2], args[2], builder.add(args[3], ir.Constant(i64, _V * k)))
            e = builder.add(a, b)
            acc = e if acc is None else builder.select(builder.icmp_signed(">", e, acc), e, acc)
        _vstore(context, builder, ta[4], args[4], acc)
        return context.get_dummy_value()
    return sig, codegen


@intrinsic
def _vterms_row(typingctx, Ae, Am, An, oa, Be, Bm, Bn, ob, Q, S):
    """S[j] = sum over k < 16 of the signed terms ((Am * Bm) >> min(Q[j] - Ae - Be, 31)) ^ s - s,
    s = An ^ Bn, for the 16 columns j of one output row (layouts as _vemax_row)."""
    if not all(_i32c(x) for x in (Ae, Am, An, Be, Bm, Bn, Q, S)):
        return None
    sig = types.void(Ae, Am, An, types.int64, Be, Bm, Bn, types.int64, Q, S)

    def codegen(context, builder, signature, args):
        from llvmlite import ir
        ta = signature.args
        i64 = ir.IntType(64)
        q = _vload(context, builder, ta[8], args[8], ir.Constant(i64, 0))
        c31 = ir.Constant(q.type, [31] * _V)
        acc = None
        for k in range(_V):
            oa = builder.add(args[3], ir.Constant(i64, k))
            ob = builder.add(args[7], ir.Constant(i64, _V * k))
            ea, ma, na = (_vsplat(builder, _sload(context, builder, ta[x], args[x], oa)) for x in range(3))
            eb, mb, nb = (_vload(context, builder, ta[x], args[x], ob) for x in range(4, 7))
            r = builder.sub(q, builder.add(ea, eb))
            r = builder.select(builder.icmp_signed("<", r, c31), r, c31)
            t = builder.ashr(builder.mul(ma, mb), r)
            sg = builder.xor(na, nb)
            t = builder.sub(builder.xor(t, sg), sg)
            acc = t if acc is None else builder.add(acc, t)
        _vstore(context, builder, ta[9], args[9], acc)
        return context.get_dummy_value()
    return sig, codegen


@njit(cache=True, nogil=True, inline="always")
def _fast_decode(x, eb, fb, fmask, bias, fl):
    """(sign 0/-1, magnitude or 0, exponent, special): branch-free _decode for the fast form."""
    emask = (np.int64(1) << eb) - 1
    E = (x >> fb) & emask
    m = (x & fmask) | (np.int64(E != 0) << fb)
    if fl != 0 and E == 0:
        m = np.int64(0)
    special = E == emask
    if special:
        m = np.int64(0)
    e = (E if E > 0 else np.int64(1)) - bias
    return -((x >> (eb + fb)) & 1), m, e, special


@_piece
def _decode_rows(R, Fm, Fe, Fp, Fn, bad, eb, fb, fmask, bias, fl):
    """Branch-free decode of raw bits R[block, row, kk] into the fast form; bad[row] |= an
    infinity or NaN in that row."""
    emask = (np.int64(1) << eb) - 1
    for bi in range(R.shape[0]):
        for r in range(R.shape[1]):
            sp_any = False
            for k in range(R.shape[2]):
                x = R[bi, r, k]
                E = (x >> fb) & emask
                m = (x & fmask) | (np.int64(E != 0) << fb)
                sp = E == emask
                m = 0 if (sp or (fl != 0 and E == 0)) else m
                e = (E if E > 0 else np.int64(1)) - bias
                n = -((x >> (eb + fb)) & 1)
                Fm[bi, r, k] = (m ^ n) - n              # the signed significand
                Fe[bi, r, k] = e if m != 0 else _NEG
                Fp[bi, r, k] = e if m != 0 else _POS
                Fn[bi, r, k] = n
                sp_any = sp_any or sp
            if sp_any:
                bad[r] = True


@_piece
def _decode32(R, Fm, Fe, Fn, bad, eb, fb, fmask, bias, fl, pre, cols):
    """_decode_rows into 32-bit lanes for the fused form, branch-free: Fm = magnitude << pre,
    Fe = exponent (_NEG32 for a zero), Fn = sign (0/-1), same layout as R. An infinity or NaN
    marks bad[its row] (R[block, row, k]: A), or where cols, bad[its column] (R[block, k, col]: B)."""
    emask = (np.int64(1) << eb) - 1
    nsp = np.int64(0)
    for bi in range(R.shape[0]):
        for r in range(R.shape[1]):
            for k in range(R.shape[2]):
                x = R[bi, r, k]
                E = (x >> fb) & emask
                m = (x & fmask) | (np.int64(E != 0) << fb)
                sp = E == emask
                nsp += np.int64(sp)
                m = 0 if (sp | ((fl != 0) & (E == 0))) else m
                e = (E if E > 0 else np.int64(1)) - bias
                Fm[bi, r, k] = np.int32(m << pre)
                Fe[bi, r, k] = np.int32(e) if m != 0 else _NEG32
                Fn[bi, r, k] = np.int32(-((x >> (eb + fb)) & 1))
    if nsp != 0:                            # rare: mark the rows / columns with a special
        for bi in range(R.shape[0]):
            for r in range(R.shape[1]):
                for k in range(R.shape[2]):
                    if ((R[bi, r, k] >> fb) & emask) == emask:
                        bad[k if cols else r] = True


# The pieces of _subgroup, each called once per subgroup with its arrays one by one (pieces
# called per row, or arrays passed in tuples, made the kernel two to five times slower when tried).

@_piece
def _gather(s, af, ali, aei, bf, bli, bei, RA, RB, use32):
    """The raw bits of subgroup s's A and B, cut into blocks of L along K (padded with zeros):
    RA[block, i, kk] and, B transposed, RB[block, j, kk] ([block, k, j] for the 32-bit path).
    Every inner loop of the kernel then runs over range(L) from 0, which LLVM vectorises (a loop
    over range(k0, k1) it does not); the bits are decoded afterwards in plain loops over
    contiguous arrays."""
    M, Kd = ali.shape
    N = bli.shape[1]
    NB, _, L = RA.shape
    for bi in range(NB):
        for i in range(M):
            for kk in range(L):
                k = bi * L + kk
                RA[bi, i, kk] = np.int64(af[s, ali[i, k], aei[i, k]]) if k < Kd else ZERO64
        if use32:
            for kk in range(L):             # B as [block, k, j] (N == L)
                k = bi * L + kk
                for j in range(N):
                    RB[bi, kk, j] = np.int64(bf[s, bli[k, j], bei[k, j]]) if k < Kd else ZERO64
        else:
            for j in range(N):
                for kk in range(L):
                    k = bi * L + kk
                    RB[bi, j, kk] = np.int64(bf[s, bli[k, j], bei[k, j]]) if k < Kd else ZERO64


@njit(cache=True, nogil=True, inline="always")
def _in_format(prm):
    """The operands' format for the decoders: exponent bits, fraction bits, the mask of the
    fraction bits kept, the exponent bias, whether subnormal inputs flush to zero."""
    ieb, ifb, keep = prm[P_IN_EB], prm[P_IN_FB], prm[P_IN_KEEP]
    fmask = ((np.int64(1) << ifb) - 1) & ~((np.int64(1) << (ifb - keep)) - 1)
    return ieb, ifb, fmask, (np.int64(1) << (ieb - 1)) - 1, prm[P_FLUSH_IN]


@_piece
def _decode_operands(prm, RA, RB, FAm, FAe, FAp, FAn, FBm, FBe, FBp, FBn,
                     GAm, GAe, GAn, GBm, GBe, GBn, rowbad, colbad, use32, wide):
    """RA, RB into the fast form (signed significand, exponent, ...): FA*, FB*, or GA*, GB* for
    the 32-bit path; rowbad[i] / colbad[j] where a row of A / column of B holds a special.
    wide None: only the 32-bit path is compiled (see _run)."""
    M = rowbad.shape[0]
    N = colbad.shape[0]
    ieb, ifb, fmask, bias, fl = _in_format(prm)
    for i in range(M):
        rowbad[i] = False
    for j in range(N):
        colbad[j] = False
    F = prm[P_F]
    fin2 = 2 * ifb
    if use32:
        _decode32(RA, GAm, GAe, GAn, rowbad, ieb, ifb, fmask, bias, fl, F - fin2, False)
        _decode32(RB, GBm, GBe, GBn, colbad, ieb, ifb, fmask, bias, fl, np.int64(0), True)
    elif wide is not None:
        _decode_rows(RA, FAm, FAe, FAp, FAn, rowbad, ieb, ifb, fmask, bias, fl)
        _decode_rows(RB, FBm, FBe, FBp, FBn, colbad, ieb, ifb, fmask, bias, fl)



@njit(cache=True, nogil=True, inline="always")
def _start_row(s, i, cf, cli, cei, prm, RC, xn, xm, xe, xl, ok, rowbad, colbad):
    """Row i's running accumulator x of each column starts as C (xm == 0: a zero); ok[j] unless
    A's row, B's column or C holds a special."""
    N = RC.shape[0]
    ceb, cfb, fl = prm[P_C_EB], prm[P_C_FB], prm[P_FLUSH_IN]
    cfmask = (np.int64(1) << cfb) - 1
    cbias = (np.int64(1) << (ceb - 1)) - 1
    for j in range(N):
        RC[j] = np.int64(cf[s, cli[i, j], cei[i, j]])
    rbad = rowbad[i]
    for j in range(N):
        n_, m_, e_, sp = _fast_decode(RC[j], ceb, cfb, cfmask, cbias, fl)
        xn[j] = -n_
        xm[j] = m_
        xe[j] = e_
        xl[j] = e_ - cfb
        ok[j] = not (rbad or colbad[j] or sp)


@njit(cache=True, nogil=True, inline="always")
def _store_row(i, o, bits, ok):
    """Row i's result bits into o where they are final; True where some element needs the
    reference kernel."""
    need = False
    for j in range(bits.shape[0]):
        if ok[j]:
            o[i, j] = bits[j]
        else:
            need = True
    return need


@_piece
def _fused_rows(s, cf, cli, cei, o, Kd, prm, FAm, FAe, FAn, FBm, FBe, FBn, GAm, GAe, GAn, GBm, GBe, GBn,
                xn, xm, xe, xl, emax, emin, S, bits, ok, fast, rowbad, colbad, use32, RC, VE, VS,
                wide):
    """Fused models, row by row and block by block: the block's products cut toward zero at the
    block's alignment 2^q (q = max(emax, xe) - F) and summed, C's (the running accumulator's) term
    added, and the result rounded: branch-free over the columns where it is a normal number in
    the common modes, through mma_kernels' own rounding elsewhere. True where some element needs
    the reference kernel."""
    NB, M, L = FAm.shape
    N = xn.shape[0]
    F = prm[P_F]
    fin2 = 2 * prm[P_IN_FB]
    eb = prm[P_ACC_EB]
    fb = prm[P_ACC_FB]
    mode = prm[P_FINAL]
    ovf = prm[P_OVF_INF]
    flo = prm[P_FLUSH_OUT]
    obias = (np.int64(1) << (eb - 1)) - 1
    one_fb = np.int64(1) << fb
    rne = mode == R_RNE
    fast_mode = mode == R_RZ or mode == R_RNE
    # zeros that align at e_zero (MMA-Sim) matter only where every nonzero addend is below it:
    # such elements (tiny sums) go to the reference kernel
    ez = prm[P_EZERO] if prm[P_EZERO_ON] != 0 else _NEG
    need_ref = False
    for i in range(M):
        _start_row(s, i, cf, cli, cei, prm, RC, xn, xm, xe, xl, ok, rowbad, colbad)
        for bi in range(NB):
            k0 = bi * L
            k1 = min(Kd, k0 + L)
            if use32:
                oa = (bi * M + i) * L
                _vemax_row(GAe, oa, GBe, bi * L * N, VE)
                for j in range(N):
                    em32 = VE[j]
                    emax[j] = np.int64(em32) if em32 > _NEG32 // 2 else _NEG
                    q = np.int64(em32)
                    q = xe[j] if (xm[j] != 0 and xe[j] > q) else q
                    if q < ez and (emax[j] > _NEG // 2 or xm[j] != 0):
                        ok[j] = False
                    emin[j] = q - F + fin2
                    VE[j] = np.int32(q)
                _vterms_row(GAe, GAm, GAn, oa, GBe, GBm, GBn, bi * L * N, VE, VS)
                for j in range(N):
                    S[j] = np.int64(VS[j])
            # per column: q = max(emaxp, xe) - F; each product's term is cut at 2^q
            if wide is not None:             # (not compiled for the 32-bit path alone)
                for j in range(N if not use32 else 0):
                    em = _NEG
                    for k in range(L):
                        e = FAe[bi, i, k] + FBe[bi, j, k]
                        em = e if e > em else em
                    emax[j] = em
                    q = em
                    if xm[j] != 0 and xe[j] > q:
                        q = xe[j]
                    if q < ez and (em > _NEG // 2 or xm[j] != 0):
                        ok[j] = False
                    lo = q - F + fin2
                    emin[j] = lo
                    Sj = np.int64(0)
                    for k in range(L):
                        sh = FAe[bi, i, k] + FBe[bi, j, k] - lo
                        p = FAm[bi, i, k] * FBm[bi, j, k]      # exact signed product
                        ng = p >> 63
                        m = (p ^ ng) - ng
                        ls = sh if sh > 0 else 0
                        rs = -sh if sh < 0 else 0
                        rs = rs if rs < 63 else 63
                        t = (m << ls) >> rs                      # |term|, cut toward zero
                        Sj += (t ^ ng) - ng
                    S[j] = Sj
            # the common case, branch-free over j: C's term, then a normal result
            nslow = np.int64(0)
            for j in range(N):
                q = emin[j] - fin2
                csh = xl[j] - q
                ls = csh if csh > 0 else 0
                ls = ls if ls < 63 else 63
                rs = -csh if csh < 0 else 0
                rs = rs if rs < 63 else 63
                t = (xm[j] << ls) >> rs
                Sj = S[j] + (-t if xn[j] else t)
                neg = np.int64(Sj < 0)
                mag = -Sj if Sj < 0 else Sj
                top = q + 63 - _clz(mag | 1)
                shf = top - fb - q
                shc = shf if shf > 1 else 1
                shc = shc if shc < 62 else 62
                shl = -shf if shf < 0 else 0        # an exact sum narrower than the result
                shl = shl if shl < 62 else 62
                qv = (mag >> shc) if shf > 0 else (mag << shl)
                if rne:
                    rem = mag & ((np.int64(1) << shc) - 1)
                    half = np.int64(1) << (shc - 1)
                    up = (rem > half) | ((rem == half) & ((qv & 1) == 1))
                    qv += np.int64(up & (shf > 0))
                carry = qv == (one_fb << 1)
                qv = qv >> np.int64(carry)
                top += np.int64(carry)
                fast[j] = (ok[j] and fast_mode and emax[j] > _NEG // 2 and mag != 0
                           and shf > -62 and shf < 62 and top > 1 - obias and top <= obias
                           and (xm[j] == 0 or xl[j] - q > -62))
                f = fast[j]
                bits[j] = ((neg << (eb + fb)) | ((top + obias) << fb) | (qv - one_fb)) if f else bits[j]
                xm[j] = qv if f else xm[j]
                xe[j] = top if f else xe[j]
                xl[j] = (top - fb) if f else xl[j]
                xn[j] = neg if f else xn[j]
                nslow += np.int64(ok[j] and not f)
            for j in range(N if nslow != 0 else 0):
                if fast[j] or not ok[j]:
                    continue
                # mma_kernels._elem_fused for one finite block, as written there
                nprod = emax[j] > _NEG // 2
                czero = xm[j] == 0
                Sj = S[j]
                q = np.int64(0)
                if nprod or not czero:
                    q = emin[j] - fin2
                    if not czero:
                        sh = xl[j] - q
                        if sh >= 0:
                            t = xm[j] << sh
                        else:
                            t = xm[j] >> (-sh) if -sh < 63 else np.int64(0)
                        Sj += -t if xn[j] else t
                else:
                    Sj = 0
                neg = np.int64(Sj < 0)
                if Sj == 0:
                    if not nprod and czero:
                        zall = xn[j] == 1
                        zany = xn[j] == 1
                        for k in range(k1 - k0):
                            if use32:
                                zn = np.int64(GAn[bi, i, k] ^ GBn[bi, k, j])
                            else:
                                zn = FAn[bi, i, k] ^ FBn[bi, j, k]
                            zall = zall and zn == -1
                            zany = zany or zn == -1
                        neg = np.int64(zany) if mode == R_RD else np.int64(zall)
                    else:
                        neg = np.int64(mode == R_RD)
                mag = -Sj if Sj < 0 else Sj
                r = round_bits(neg, mag, q, eb, fb, mode, ovf, flo)
                bits[j] = r
                n_, c_, m_, e_ = decode(r, eb, fb, fb, ZERO64)
                if c_ != FINITE and c_ != ZERO:
                    ok[j] = False               # an infinity: the reference routine redoes it
                xn[j] = n_
                xm[j] = m_ if c_ == FINITE else np.int64(0)
                xe[j] = e_
                xl[j] = e_ - fb
        need_ref |= _store_row(i, o, bits, ok)
    return need_ref


@_piece
def _exact_rows(s, cf, cli, cei, o, Kd, prm, FAm, FAe, FAp, FAn, FBm, FBe, FBp, FBn, xn, xm, xe, xl,
                emax, emin, S, bits, ok, rowbad, colbad, RC):
    """The exact model, row by row: one rounding of the exact sum, in one int64 where it fits
    (else the element needs the reference kernel: True)."""
    M, L = FAm.shape[1], FAm.shape[2]
    N = xn.shape[0]
    fin2 = 2 * prm[P_IN_FB]
    eb = prm[P_ACC_EB]
    fb = prm[P_ACC_FB]
    need_ref = False
    for i in range(M):
        _start_row(s, i, cf, cli, cei, prm, RC, xn, xm, xe, xl, ok, rowbad, colbad)
        # exact: one rounding of the exact sum, in one int64 where it fits
        for j in range(N):
            em = _NEG
            ep = _POS
            for k in range(L):
                e = FAe[0, i, k] + FBe[0, j, k]
                em = e if e > em else em
                p = FAp[0, i, k] + FBp[0, j, k]
                ep = p if p < ep else ep
            if ep > _POS // 2:
                ep = 0                          # no nonzero product
            emax[j] = em
            emin[j] = ep
            Sj = np.int64(0)
            for k in range(L):
                sh = FAe[0, i, k] + FBe[0, j, k] - ep
                sh = sh if sh > 0 else 0
                sh = sh if sh < 63 else 63
                Sj += (FAm[0, i, k] * FBm[0, j, k]) << sh     # exact, signed
            S[j] = Sj
        for j in range(N):
            if not ok[j]:
                continue
            # a product's value is m * 2^(ea + eb - fin2) with m < 2^(fin2 + 2)
            nprod = emax[j] > _NEG // 2
            live = 0
            base = emin[j] - fin2
            top = emax[j] + 2
            if nprod:
                live = Kd
            cfin = xm[j] != 0
            cl = xl[j]
            if cfin:
                live += 1
                if not nprod or cl < base:
                    base = cl
                tt = cl + bitlen(xm[j])
                if not nprod or tt > top:
                    top = tt
            if live == 0:
                allneg = xn[j] == 1
                for k in range(Kd):
                    allneg = allneg and (FAn[0, i, k] ^ FBn[0, j, k]) == -1
                bits[j] = (np.int64(1) << (eb + fb)) if allneg else np.int64(0)
                continue
            if top - base + bitlen(np.int64(live)) > 61:
                ok[j] = False
                continue
            # the products were summed at 2^(emin - fin2); re-base onto `base`
            Sj = S[j] << ((emin[j] - fin2) - base) if nprod else np.int64(0)
            if cfin:
                v = xm[j] << (cl - base)
                Sj += -v if xn[j] else v
            if Sj == 0:
                bits[j] = 0
            elif Sj < 0:
                bits[j] = round_bits(np.int64(1), -Sj, base, eb, fb, RNE64, ZERO64, ZERO64)
            else:
                bits[j] = round_bits(ZERO64, Sj, base, eb, fb, RNE64, ZERO64, ZERO64)
        need_ref |= _store_row(i, o, bits, ok)
    return need_ref


@_piece
def _subgroup(s, af, ali, aei, bf, bli, bei, cf, cli, cei, o, prm, scr, vec, bvec, RA, RB,
              scr32, use32, RC, VE, VS, wide, fused):
    """One subgroup: o[i, j] = bits of D[i, j]. Operand element (r, c) of A is af[s, ali[r, c],
    aei[r, c]] (a fragment slot, or the matrix itself with trivial maps); likewise B and C.
    Returns True where some element needs the reference kernel (the caller recomputes the
    subgroup there: specials, overflow, an exact sum wider than int64). fused None: the rule is
    exact, and the fused rows are not compiled (pruned as `wide` is)."""
    Kd = ali.shape[1]
    FAm, FAe, FAp, FAn, FBm, FBe, FBp, FBn = scr
    GAm, GAe, GAn, GBm, GBe, GBn = scr32
    xn, xm, xe, xl, emax, emin, S, bits, nbits, nxm, nxe = vec
    rowbad, colbad, ok, fast = bvec
    _gather(s, af, ali, aei, bf, bli, bei, RA, RB, use32)
    _decode_operands(prm, RA, RB, FAm, FAe, FAp, FAn, FBm, FBe, FBp, FBn,
                     GAm, GAe, GAn, GBm, GBe, GBn, rowbad, colbad, use32, wide)
    if fused is not None and prm[P_KIND] == K_FUSED:
        return _fused_rows(s, cf, cli, cei, o, Kd, prm, FAm, FAe, FAn, FBm, FBe, FBn, GAm, GAe, GAn, GBm, GBe, GBn,
                           xn, xm, xe, xl, emax, emin, S, bits, ok, fast, rowbad, colbad, use32, RC,
                           VE, VS, wide)
    if wide is None:
        return True                 # not reached: wide is None only for a fused model
    return _exact_rows(s, cf, cli, cei, o, Kd, prm, FAm, FAe, FAp, FAn, FBm, FBe, FBp, FBn, xn, xm, xe,
                       xl, emax, emin, S, bits, ok, rowbad, colbad, RC)


@njit(cache=True, nogil=True)
def _run(af, bf, cf, of, ali, aei, bli, bei, cli, cei, ori, oci, ovalid, sgs, prm, need, use32, wide,
         fused, t0, t1):
    """D = A*B + C for subgroups sgs[t0:t1], reading and writing through the lane maps: (li, ei)
    give each operand element's owner slot, (ri, ci) each output slot's element (ovalid: the
    slot holds one). Same bits as to_matrix -> mma_kernels -> to_fragments. use32:
    _use32(prm), the 32-bit row path (taken only where N == L == 16 too). wide None: the
    32-bit path is all a run needs, and numba compiles only it (branches on `wide is None` are
    pruned before typing), a third of the kernel's cold compile; any other value: every path.
    fused None: an exact rule (only the exact rows compiled: half of its cold compile)."""
    M, Kd = ali.shape
    N = bli.shape[1]
    scr, vec, bvec, scr32, RA, RB, RC, VE, VS, o, use32 = _scratch(M, N, Kd, prm, use32)
    if wide is None and not use32:
        for t in range(t0, t1):
            need[t] = True                  # not reached (_dispatch checks): the reference kernel
        return
    lanes, E = ori.shape
    for t in range(t0, t1):
        s = sgs[t]
        if _subgroup(s, af, ali, aei, bf, bli, bei, cf, cli, cei, o, prm, scr, vec, bvec, RA, RB,
                     scr32, use32, RC, VE, VS, wide, fused):
            need[t] = True
        for ln in range(lanes):
            for e in range(E):
                of[s, ln, e] = o[ori[ln, e], oci[ln, e]] if ovalid[ln, e] else 0


@njit(cache=True, nogil=True)
def _run_exact(af, bf, cf, of, ali, aei, bli, bei, cli, cei, ori, oci, ovalid, sgs, prm, need, t0, t1):
    """_run for an exact rule (K in one block): the pieces it runs there (_gather, _decode_rows,
    _exact_rows) called straight, with their scratch made here, not through _scratch, _subgroup
    and _decode_operands: the same code on the same arrays, so the same bits, with three levels
    fewer for numba to compile (each level optimises its callees' code again), half the cold
    compile of the reference profile."""
    M, Kd = ali.shape
    N = bli.shape[1]
    A = np.empty((5, 1, M, Kd), np.int64)       # one allocation per kind: fewer calls to type
    B = np.empty((5, 1, N, Kd), np.int64)
    V = np.zeros((9, N), np.int64)
    RA, FAm, FAe, FAp, FAn = A[0], A[1], A[2], A[3], A[4]
    RB, FBm, FBe, FBp, FBn = B[0], B[1], B[2], B[3], B[4]
    xn, xm, xe, xl, emax, emin, S, bits, RC = V[0], V[1], V[2], V[3], V[4], V[5], V[6], V[7], V[8]
    rowbad, colbad, ok = np.zeros(M, np.bool_), np.zeros(N, np.bool_), np.zeros(N, np.bool_)
    o = np.empty((M, N), np.int64)
    ieb, ifb, fmask, bias, fl = _in_format(prm)
    lanes, E = ori.shape
    for t in range(t0, t1):
        s = sgs[t]
        _gather(s, af, ali, aei, bf, bli, bei, RA, RB, False)
        for i in range(M):
            rowbad[i] = False
        for j in range(N):
            colbad[j] = False
        _decode_rows(RA, FAm, FAe, FAp, FAn, rowbad, ieb, ifb, fmask, bias, fl)
        _decode_rows(RB, FBm, FBe, FBp, FBn, colbad, ieb, ifb, fmask, bias, fl)
        if _exact_rows(s, cf, cli, cei, o, Kd, prm, FAm, FAe, FAp, FAn, FBm, FBe, FBp, FBn,
                       xn, xm, xe, xl, emax, emin, S, bits, ok, rowbad, colbad, RC):
            need[t] = True
        for ln in range(lanes):
            for e in range(E):
                of[s, ln, e] = o[ori[ln, e], oci[ln, e]] if ovalid[ln, e] else 0


def _identity(rows, cols):
    r = np.repeat(np.arange(rows, dtype=np.int64), cols).reshape(rows, cols)
    c = np.tile(np.arange(cols, dtype=np.int64), rows).reshape(rows, cols)
    return r, c


def float_mma(a, b, c, out, prm, jobs=1):
    """Same contract as mma_kernels.float_mma_serial (uint32 bits (S, M, K), (S, K, N), (S, M, N)
    in, out written), on `jobs` threads. 16-bit operands go in as uint16 and 16-bit C and results
    as uint16, the types frag_mma passes, so that both share one compiled kernel."""
    S, M, Kd = a.shape
    N = b.shape[2]
    ia, ib, ic = _identity(M, Kd), _identity(Kd, N), _identity(M, N)
    sgs = np.arange(S, dtype=np.int64)
    need = np.zeros(S, np.bool_)

    def narrow(x, bits):
        return np.ascontiguousarray(x, np.uint16 if bits <= 16 else np.uint32)
    fin, fc, fo = (int(prm[e] + prm[f]) + 1 for e, f in ((P_IN_EB, P_IN_FB), (P_C_EB, P_C_FB),
                                                         (P_ACC_EB, P_ACC_FB)))
    o16 = narrow(out, fo)
    valid = np.ones((M, N), np.bool_)
    valid.flags.writeable = False           # as lane maps' (numba types read-only arrays apart)
    args = (narrow(a, fin), narrow(b, fin), narrow(c, fc), o16) + ia + ib + ic + ic + (
        valid, sgs, prm, need)
    _dispatch(args, S, jobs)
    if o16 is not out:
        out[...] = o16
    if need.any():
        t = np.flatnonzero(need)
        o = np.empty((len(t), M, N), np.uint32)
        _reference(a[t], b[t], c[t], o, prm)
        out[t] = o


def matrix_mma(model, a, b, c, result_type: str, tiles=None):
    """mma.mma(model, a, b, c, result_type) (matrices (S, M, K), (S, K, N), (S, M, N)) on this
    kernel, or None where it does not apply: the same bits, so that a process already running it
    (emu demo's check) compiles no second kernel. tiles: mma_tile.tiles, or the same machine code
    loaded without numba (emu demo: a warm run then loads nothing through numba)."""
    from . import mma as nmma
    is_int, fin, fc, fin_b = nmma._check(a, b, c, result_type, False)
    prm = None if is_int else nmma.pack_rule(nmma._rule(model, fin, fc, result_type, fin_b))
    if prm is None or not applies(prm):
        return None
    out = np.empty(np.shape(c), np.uint32)
    A, B, C = nmma.bits32(a), nmma.bits32(b), nmma.bits32(c)
    if A.ndim == 3 and mma_tile.covers(prm, *A.shape[1:], B.shape[2]):
        # Hopper's 16 x 16 x 16 step in vector registers where it answers, this kernel elsewhere
        need = np.zeros(len(A), np.bool_)
        cd = np.uint16 if int(prm[P_C_FB]) == 10 else np.uint32        # f16 or f32 C and D
        o = np.empty(out.shape, cd)
        (tiles or mma_tile.tiles)(A.astype(np.uint16), B.astype(np.uint16), np.ascontiguousarray(C, cd), o, prm, need)
        out[...] = o
        if need.any():
            o = np.empty((int(need.sum()),) + out.shape[1:], np.uint32)
            float_mma(A[need], B[need], C[need], o, prm)
            out[need] = o
    else:
        float_mma(A, B, C, out, prm)
    nmma.zero_sign(out, prm)
    return out.astype(np.uint16).view(np.float16) if result_type == "f16" else out.view(np.float32)


def _reference(a, b, c, out, prm):
    """mma_kernels' own kernel, for the subgroups the fast one hands back (compiled only then)."""
    from . import mma_kernels
    mma_kernels.float_mma_serial(np.ascontiguousarray(a), np.ascontiguousarray(b),
                                 np.ascontiguousarray(c), out, prm)


def _dispatch(args, n, jobs):
    from . import mma as nmma
    nmma._frag_dispatch(KERNELS, args, n, jobs)


# One subgroup's multiply-add on whole matrices (raw bits, [1, rows, cols]), for compiled code
# that keeps a subgroup's matrices itself (emu/jit/coop_kernel.py): the scratch of _run made once
# (tile_workspace), then tile_mma per multiply, through identity maps.

@_piece
def _scratch(M, N, Kd, prm, use32):
    """The scratch arrays of _subgroup for M x Kd x N multiplies, and whether the 32-bit row path
    applies (use32: _use32(prm); the path needs N == L == 16 too)."""
    L = Kd if prm[P_KIND] == K_EXACT else max(1, min(prm[P_L], Kd))
    NB = max(1, (Kd + L - 1) // L)
    bmk = (NB, M, L)
    bnk = (NB, N, L)
    scr = (np.empty(bmk, np.int64), np.empty(bmk, np.int64), np.empty(bmk, np.int64),
           np.empty(bmk, np.int64), np.empty(bnk, np.int64), np.empty(bnk, np.int64),
           np.empty(bnk, np.int64), np.empty(bnk, np.int64))
    vec = (np.empty(N, np.int64), np.empty(N, np.int64),
           np.empty(N, np.int64), np.empty(N, np.int64), np.empty(N, np.int64),
           np.empty(N, np.int64), np.empty(N, np.int64), np.zeros(N, np.int64),
           np.zeros(N, np.int64), np.zeros(N, np.int64), np.zeros(N, np.int64))
    bvec = (np.zeros(M, np.bool_), np.zeros(N, np.bool_), np.zeros(N, np.bool_),
            np.zeros(N, np.bool_))
    use32 = use32 and N == _V and L == _V
    b32 = bmk if use32 else (1, 1, 1)
    n32 = (NB, L, N) if use32 else (1, 1, 1)
    scr32 = (np.empty(b32, np.int32), np.empty(b32, np.int32), np.empty(b32, np.int32),
             np.empty(n32, np.int32), np.empty(n32, np.int32), np.empty(n32, np.int32))
    return (scr, vec, bvec, scr32, np.empty(bmk, np.int64), np.empty(bnk, np.int64),
            np.empty(N, np.int64), np.empty(max(N, _V), np.int32), np.empty(max(N, _V), np.int32),
            np.empty((M, N), np.int64), use32)


@_piece
def tile_workspace(M, N, Kd, prm, use32):
    """_scratch and identity maps (row and column indices of A, B and C) for tile_mma."""
    rows = (np.empty((M, Kd), np.uint64), np.empty((M, Kd), np.uint64), np.empty((Kd, N), np.uint64),
            np.empty((Kd, N), np.uint64), np.empty((M, N), np.uint64), np.empty((M, N), np.uint64))
    for r, c, x in ((0, 1, M), (2, 3, Kd), (4, 5, M)):
        for i in range(x):
            for j in range(rows[r].shape[1]):
                rows[r][i, j] = i
                rows[c][i, j] = j
    return _scratch(M, N, Kd, prm, use32), rows


@_piece
def tile_mma(ws, a, b, c, d, prm, wide):
    """d[0] = the bits of A*B + C for one subgroup (a, b, c, d: [1, rows, cols] raw bits), zero
    signs applied as frag_mma does; True where some element needs the reference kernel (d is
    then not final). wide: as for _run (None: the 32-bit path only)."""
    (scr, vec, bvec, scr32, RA, RB, RC, VE, VS, o, use32), rows = ws
    ali, aei, bli, bei, cli, cei = rows
    need = _subgroup(0, a, ali, aei, b, bli, bei, c, cli, cei, o, prm, scr, vec, bvec, RA, RB,
                     scr32, use32, RC, VE, VS, wide, True)
    zero = (np.int64(1) << (prm[P_ACC_EB] + prm[P_ACC_FB])) if prm[P_ZERO_POS] != 0 else np.int64(-1)
    for i in range(o.shape[0]):
        for j in range(o.shape[1]):
            v = o[i, j]
            d[0, i, j] = 0 if v == zero else v
    return need


def frag_mma(model, a, b, c, maps, result_type: str, subgroups: np.ndarray, sg: int,
             jobs: int | None = 1):
    """The cooperative multiply-add straight on fragments (lanes, E) of all subgroups of a batch,
    for the subgroups listed in `subgroups` (others get zero fragments); `maps` are the lane maps
    of A, B, C and the result. Returns the result fragments, or None where this path does not
    apply (integer or other float models: the caller then takes the general path). The work is
    emu.numerics.mma.frag_mma_with's, with this module's kernels."""
    from . import mma as nmma
    return nmma.frag_mma_with(KERNELS, model, a, b, c, maps, result_type, subgroups, sg, jobs)


class KERNELS:
    """The kernels frag_mma runs (emu.numerics.mma.frag_mma_with)."""
    tiles = staticmethod(mma_tile.tiles)
    float_mma = staticmethod(float_mma)
    run = staticmethod(_run)
    run_exact = staticmethod(_run_exact)
    reference = staticmethod(_reference)
