"""numba kernels for the MMA models: the fast path behind `emu.numerics.mma.mma`.

They restate `mma_ref` on 64-bit integers and must agree with it bit for bit. To keep numba's cold
compile short there are only four entry points, each with a single type signature:
`float_mma_serial` / `float_mma_parallel` (uint32 bit patterns in and out, the model packed into an
int64 parameter vector) and `int_mma_serial` / `int_mma_parallel`. The parallel variants run a
prange over the subgroups; everything below them is shared.

Exact sums of terms with unbounded exponent spread (the 'exact' and the two chain models) are
added in one int64 when their span allows, else in a small Kulisch accumulator: signed 32-bit
digits held in int64 limbs, sized per element to the span of the terms, then reduced to 62 top
bits plus a sticky bit before rounding. The fused models never need it: their terms are aligned
to one exponent and fit an int64 by construction (FusedParams bounds F, F2 and L for that).
Every shift below is guarded; LLVM leaves shifts by 64 or more undefined.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .mma_params import (ZERO, FINITE, INF, NAN, K_EXACT, K_IEEE, K_LAVAPIPE, K_FUSED, R_RNE, R_RZ,
                          R_RD, R_RU, P_KIND, P_IN_EB, P_IN_FB, P_IN_KEEP, P_C_EB, P_C_FB,
                          P_ACC_EB, P_ACC_FB, P_L, P_F, P_TERM, P_C_OUT, P_F2, P_FC, P_CARRY,
                          P_FINAL, P_OVF_INF, P_FLUSH_IN, P_FLUSH_OUT, P_NAN, P_RECUT, P_ZERO_POS,
                          P_IN_FN, P_EZERO_ON, P_EZERO, P_RES_FB, P_PROD_OVF, P_INB_EB, P_INB_FB, P_INB_FN,
                          NPRM)  # noqa: F401

# internal helpers are only called from other kernels: no Python or cfunc wrapper to compile
_helper = njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)

LIMBS = 24                                   # 768 bits: f32*f32 products plus f32 C need ~560
M32 = 0xFFFFFFFF
NEG_BIG = -(1 << 40)
# typed constants: a bare literal argument would make numba compile a Literal[int] specialisation
ZERO64 = np.int64(0)
ONE64 = np.int64(1)
RNE64 = np.int64(R_RNE)


@_helper
def bitlen(x):
    n = 0
    if x >> 32:
        x >>= 32
        n += 32
    if x >> 16:
        x >>= 16
        n += 16
    if x >> 8:
        x >>= 8
        n += 8
    if x >> 4:
        x >>= 4
        n += 4
    if x >> 2:
        x >>= 2
        n += 2
    if x >> 1:
        x >>= 1
        n += 1
    return n + x


@_helper
def decode(bits, eb, fb, keep, flush):
    """(neg, cls, mant, fexp): value = mant * 2^(fexp - fb); fexp clamped at emin (subnormals)."""
    if keep < fb:
        bits = bits & ~((np.int64(1) << (fb - keep)) - 1)
    neg = (bits >> (eb + fb)) & 1
    e = (bits >> fb) & ((np.int64(1) << eb) - 1)
    f = bits & ((np.int64(1) << fb) - 1)
    bias = (np.int64(1) << (eb - 1)) - 1
    if e == (np.int64(1) << eb) - 1:
        return neg, (NAN if f != 0 else INF), np.int64(0), np.int64(0)
    if e == 0:
        if f == 0 or flush != 0:
            return neg, ZERO, np.int64(0), 1 - bias
        return neg, FINITE, f, 1 - bias
    return neg, FINITE, f | (np.int64(1) << fb), e - bias


@_helper
def decode_in(bits, eb, fb, keep, flush, fn):
    """decode, and for a format without infinities (fn: OCP e4m3) the top binade finite but for
    its all-ones pattern, NaN."""
    if fn != 0 and ((bits >> fb) & ((np.int64(1) << eb) - 1)) == (np.int64(1) << eb) - 1:
        f = bits & ((np.int64(1) << fb) - 1)
        neg = (bits >> (eb + fb)) & 1
        if f == (np.int64(1) << fb) - 1:
            return neg, NAN, np.int64(0), np.int64(0)
        bias = (np.int64(1) << (eb - 1)) - 1
        return neg, FINITE, f | (np.int64(1) << fb), ((np.int64(1) << eb) - 1) - bias
    return decode(bits, eb, fb, keep, flush)


@_helper
def in_fbits(prm):
    """The fraction bits every operand's significand is held at: A's and B's formats differ only
    for e4m3 x e5m2, whose narrower significand is then shifted up (the value unchanged)."""
    return max(prm[P_IN_FB], prm[P_INB_FB])


@_helper
def round_result(neg, mag, lsb, eb, fb, rfb, mode, ovf_inf, flush):
    """round_bits into the accumulator type, or (rfb < fb: mma_ref.round_result) to rfb fraction
    bits with the same exponent range, widened."""
    if rfb >= fb:
        return round_bits(neg, mag, lsb, eb, fb, mode, ovf_inf, flush)
    r = round_bits(neg, mag, lsb, eb, rfb, mode, ovf_inf, flush)
    low = r & ((np.int64(1) << (eb + rfb)) - 1)
    return ((r >> (eb + rfb)) << (eb + fb)) | (low << (fb - rfb))


@_helper
def _inf_bits(neg, eb, fb):
    return (neg << (eb + fb)) | (((np.int64(1) << eb) - 1) << fb)


@_helper
def round_bits(neg, mag, lsb, eb, fb, mode, ovf_inf, flush):
    """Bits of (-1)^neg * mag * 2^lsb in the format (eb, fb); mag < 2^62 (bit 0 may be sticky)."""
    sign = neg << (eb + fb)
    if mag == 0:
        return sign
    bias = (np.int64(1) << (eb - 1)) - 1
    emin = 1 - bias
    top = lsb + bitlen(mag) - 1
    e = top if top > emin else emin
    shift = (e - fb) - lsb
    if shift <= 0:
        q = mag << (-shift)
    else:
        if shift >= 63:                     # everything is below the half-ulp
            q = np.int64(0)
            above = False
            tie = False
            inexact = True
        else:
            q = mag >> shift
            rem = mag & ((np.int64(1) << shift) - 1)
            half = np.int64(1) << (shift - 1)
            above = rem > half
            tie = rem == half
            inexact = rem != 0
        up = False
        if mode == R_RNE:
            up = above or (tie and (q & 1) == 1)
        elif mode == R_RD:
            up = neg == 1 and inexact
        elif mode == R_RU:
            up = neg == 0 and inexact
        if up:
            q += 1
    if q == (np.int64(1) << (fb + 1)):
        q >>= 1
        e += 1
    if e > bias:
        to_inf = ovf_inf != 0 or mode == R_RNE or (mode == R_RD and neg == 1) or (mode == R_RU and neg == 0)
        if to_inf:
            return _inf_bits(neg, eb, fb)
        return _inf_bits(neg, eb, fb) - 1
    if q < (np.int64(1) << fb):
        if flush != 0:
            return sign
        return sign | q
    return sign | ((e + bias) << fb) | (q - (np.int64(1) << fb))


# ------------------------------------------------------------------ Kulisch accumulator

@_helper
def _kul_add(acc, neg, mag, pos):
    limb = pos >> 5
    off = pos & 31
    x0 = (mag & M32) << off
    x1 = (mag >> 32) << off
    d0 = x0 & M32
    d1 = (x0 >> 32) + (x1 & M32)
    d2 = x1 >> 32
    if neg:
        acc[limb] -= d0
        acc[limb + 1] -= d1
        acc[limb + 2] -= d2
    else:
        acc[limb] += d0
        acc[limb + 1] += d1
        acc[limb + 2] += d2


@_helper
def _kul_finish(acc, n):
    """(neg, mag, shift, is_zero): |sum| ~ mag * 2^shift, mag < 2^62 with a sticky bit 0."""
    carry = np.int64(0)
    for i in range(n):
        v = acc[i] + carry
        carry = v >> 32
        acc[i] = v & M32
    neg = carry < 0
    if neg:
        carry = np.int64(0)
        for i in range(n):
            v = -acc[i] + carry
            carry = v >> 32
            acc[i] = v & M32
    t = n - 1
    while t >= 0 and acc[t] == 0:
        t -= 1
    if t < 0:
        return neg, np.int64(0), np.int64(0), True
    topbit = 32 * t + bitlen(acc[t]) - 1
    if topbit <= 61:
        r = np.int64(0)
        for i in range(t + 1):
            r += acc[i] << (32 * i)
        return neg, r, np.int64(0), False
    sh = topbit - 61
    lowd = sh >> 5
    off = sh & 31
    r = acc[lowd] >> off
    for i in range(lowd + 1, t + 1):
        r += acc[i] << (32 * (i - lowd) - off)
    sticky = (acc[lowd] & ((np.int64(1) << off) - 1)) != 0
    for i in range(lowd):
        if acc[i] != 0:
            sticky = True
    if sticky:
        r |= 1
    return neg, r, np.int64(sh), False


@_helper
def _exact_terms(tn, tm, tl, nt, acc):
    """Exact sum of terms (neg, mag, lsb) [0, nt): (neg, mag, lsb, is_zero), mag as _kul_finish."""
    base = np.int64(1) << 40
    top = -(np.int64(1) << 40)
    live = np.int64(0)
    for t in range(nt):
        if tm[t] != 0:
            live += 1
            if tl[t] < base:
                base = tl[t]
            tt = tl[t] + bitlen(tm[t])
            if tt > top:
                top = tt
    if live == 0:
        return False, np.int64(0), np.int64(0), True
    if top - base + bitlen(live) <= 61:
        # common case: the whole exact sum fits one int64
        S = np.int64(0)
        for t in range(nt):
            if tm[t] != 0:
                v = tm[t] << (tl[t] - base)
                S += -v if tn[t] else v
        if S < 0:
            return True, -S, base, False
        return False, S, base, S == 0
    n = ((top - base + bitlen(live) + 1) >> 5) + 3
    for i in range(n):
        acc[i] = 0
    for t in range(nt):
        if tm[t] != 0:
            _kul_add(acc, tn[t], tm[t], tl[t] - base)
    neg, mag, sh, z = _kul_finish(acc, n)
    return neg, mag, base + sh, z


# ------------------------------------------------------------------ IEEE helpers for the chains

@_helper
def _value_round(neg, cls, mag, lsb, eb, fb, nan_bits):
    """One value (e.g. an exact product) rounded to nearest-even into (eb, fb)."""
    if cls == NAN:
        return nan_bits
    if cls == INF:
        return _inf_bits(neg, eb, fb)
    if cls == ZERO:
        return neg << (eb + fb)
    return round_bits(neg, mag, lsb, eb, fb, RNE64, ZERO64, ZERO64)


@_helper
def _add_round(xn, xc, xm, xl, yn, yc, ym, yl, eb, fb, nan_bits, tn, tm, tl, acc):
    """round_nearest_even(x + y) into (eb, fb), IEEE special cases and signed zeros."""
    if xc == NAN or yc == NAN:
        return nan_bits
    if xc == INF and yc == INF:
        if xn != yn:
            return nan_bits
        return _inf_bits(xn, eb, fb)
    if xc == INF:
        return _inf_bits(xn, eb, fb)
    if yc == INF:
        return _inf_bits(yn, eb, fb)
    if xc == ZERO and yc == ZERO:
        return (xn & yn) << (eb + fb)
    if xc == ZERO:                          # -0 + y == y, exactly
        return round_bits(yn, ym, yl, eb, fb, RNE64, ZERO64, ZERO64)
    if yc == ZERO:
        return round_bits(xn, xm, xl, eb, fb, RNE64, ZERO64, ZERO64)
    base = xl if xl < yl else yl
    tx = xl + bitlen(xm)
    ty = yl + bitlen(ym)
    if (tx if tx > ty else ty) - base <= 61:
        # both fit one int64 window: exact sum without the accumulator
        vx = xm << (xl - base)
        vy = ym << (yl - base)
        S = (-vx if xn else vx) + (-vy if yn else vy)
        if S == 0:
            return np.int64(0)
        if S < 0:
            return round_bits(ONE64, -S, base, eb, fb, RNE64, ZERO64, ZERO64)
        return round_bits(ZERO64, S, base, eb, fb, RNE64, ZERO64, ZERO64)
    tn[0] = xn
    tm[0] = xm if xc == FINITE else 0
    tl[0] = xl
    tn[1] = yn
    tm[1] = ym if yc == FINITE else 0
    tl[1] = yl
    neg, mag, lsb, z = _exact_terms(tn, tm, tl, np.int64(2), acc)
    if z:
        return np.int64(0)                  # exact cancellation: +0 under nearest-even
    return round_bits(np.int64(neg), mag, lsb, eb, fb, RNE64, ZERO64, ZERO64)


@_helper
def _product(an, ac, am, ae, bn, bc, bm, be, fb2):
    """The exact product as (neg, cls, mag, lsb); NaN for a NaN factor or inf * 0."""
    neg = an ^ bn
    if ac == NAN or bc == NAN:
        return neg, NAN, np.int64(0), np.int64(0)
    if ac == INF or bc == INF:
        if ac == ZERO or bc == ZERO:
            return neg, NAN, np.int64(0), np.int64(0)
        return neg, INF, np.int64(0), np.int64(0)
    if ac == ZERO or bc == ZERO:
        return neg, ZERO, np.int64(0), np.int64(0)
    return neg, FINITE, am * bm, ae + be - fb2


# ------------------------------------------------------------------ one output element per model

@_helper
def _elem_exact(prm, An, Ac, Am, Ae, Bn, Bc, Bm, Be, i, j, cn, cc, cm, cl, tn, tm, tl, acc):
    """mma_ref.exact_element: every exact product and C into one sum, one nearest-even rounding."""
    K = An.shape[1]
    fb2 = 2 * in_fbits(prm)
    eb = prm[P_ACC_EB]
    fb = prm[P_ACC_FB]
    nan = False
    infp = False
    infn = False
    all_neg_zero = True
    nt = 0
    for k in range(K):
        pn, pc, pm, pl = _product(An[i, k], Ac[i, k], Am[i, k], Ae[i, k], Bn[k, j], Bc[k, j], Bm[k, j], Be[k, j], fb2)
        if pc == NAN:
            nan = True
        elif pc == INF:
            if pn:
                infn = True
            else:
                infp = True
        elif pc == ZERO:
            all_neg_zero = all_neg_zero and pn == 1
        else:
            tn[nt] = pn
            tm[nt] = pm
            tl[nt] = pl
            nt += 1
    if cc == NAN:
        nan = True
    elif cc == INF:
        if cn:
            infn = True
        else:
            infp = True
    elif cc == ZERO:
        all_neg_zero = all_neg_zero and cn == 1
    else:
        tn[nt] = cn
        tm[nt] = cm
        tl[nt] = cl
        nt += 1
    if nan or (infp and infn):
        return prm[P_NAN]
    if infp or infn:
        return _inf_bits(np.int64(infn), eb, fb)
    neg, mag, lsb, z = _exact_terms(tn, tm, tl, nt, acc)
    if z:
        if nt == 0 and all_neg_zero:
            return np.int64(1) << (eb + fb)
        return np.int64(0)
    return round_bits(np.int64(neg), mag, lsb, eb, fb, RNE64, ZERO64, ZERO64)


@_helper
def _elem_ieee(prm, An, Ac, Am, Ae, Bn, Bc, Bm, Be, i, j, cn, cc, cm, cl, tn, tm, tl, acc):
    """mma_ref.ieee_chain_element: d = fma(a[k], b[k], d) for k ascending."""
    K = An.shape[1]
    fb2 = 2 * in_fbits(prm)
    eb = prm[P_ACC_EB]
    fb = prm[P_ACC_FB]
    nanb = prm[P_NAN]
    dn, dc, dm, dl = cn, cc, cm, cl
    bits = _value_round(cn, cc, cm, cl, eb, fb, nanb)      # K == 0: C in the result type
    for k in range(K):
        pn, pc, pm, pl = _product(An[i, k], Ac[i, k], Am[i, k], Ae[i, k], Bn[k, j], Bc[k, j], Bm[k, j], Be[k, j], fb2)
        bits = _add_round(pn, pc, pm, pl, dn, dc, dm, dl, eb, fb, nanb, tn, tm, tl, acc)
        dn, dc, dm, de = decode(bits, eb, fb, fb, ZERO64)
        dl = de - fb
    return bits


@_helper
def _elem_lavapipe(prm, An, Ac, Am, Ae, Bn, Bc, Bm, Be, i, j, cn, cc, cm, cl, tn, tm, tl, acc):
    """mma_ref.lavapipe_chain_element: rounded products, s = +0 + p0 + p1 ..., then + C."""
    K = An.shape[1]
    fb2 = 2 * in_fbits(prm)
    eb = prm[P_ACC_EB]
    fb = prm[P_ACC_FB]
    nanb = prm[P_NAN]
    sn, sc, sm, sl = np.int64(0), np.int64(ZERO), np.int64(0), np.int64(0)     # s = +0
    for k in range(K):
        pn, pc, pm, pl = _product(An[i, k], Ac[i, k], Am[i, k], Ae[i, k], Bn[k, j], Bc[k, j], Bm[k, j], Be[k, j], fb2)
        pbits = _value_round(pn, pc, pm, pl, eb, fb, nanb)
        pn, pc, pm, pe = decode(pbits, eb, fb, fb, ZERO64)
        sbits = _add_round(sn, sc, sm, sl, pn, pc, pm, pe - fb, eb, fb, nanb, tn, tm, tl, acc)
        sn, sc, sm, se = decode(sbits, eb, fb, fb, ZERO64)
        sl = se - fb
    return _add_round(sn, sc, sm, sl, cn, cc, cm, cl, eb, fb, nanb, tn, tm, tl, acc)


@_helper
def _qshift(neg, mag, sh, floor):
    """(-1)^neg * mag * 2^sh cut to an integer: exact for sh >= 0, else toward zero or floor."""
    if sh >= 0:
        v = mag << sh
        return -v if neg else v
    s = -sh
    m = mag >> s if s < 63 else np.int64(0)
    if neg:
        if floor and (s >= 63 or (m << s) != mag):
            m += 1
        return -m
    return m


@_helper
def _elem_fused(prm, An, Ac, Am, Ae, Bn, Bc, Bm, Be, i, j, cn, cc, cm, cl, ce):
    """mma_ref.fused_element for element (i, j); A/B decoded as (neg, cls, mant, fexp) arrays."""
    K = An.shape[1]
    fin = in_fbits(prm)
    eb = prm[P_ACC_EB]
    fb = prm[P_ACC_FB]
    L = prm[P_L]
    F = prm[P_F]
    floor = prm[P_TERM] == R_RD
    c_out = prm[P_C_OUT] != 0
    rfloor = prm[P_RECUT] == R_RD
    F2 = prm[P_F2]
    FC = prm[P_FC]
    carry = prm[P_CARRY] != 0
    mode = prm[P_FINAL]
    # the running accumulator: starts as C
    xn, xc, xm, xl, xe = cn, cc, cm, cl, ce
    nblocks = (K + L - 1) // L
    if nblocks < 1:
        nblocks = 1
    bits = np.int64(0)
    for bi in range(nblocks):
        k0 = bi * L
        k1 = min(K, k0 + L)
        write = (not carry) or bi == nblocks - 1
        nan = xc == NAN
        infp = xc == INF and xn == 0
        infn = xc == INF and xn == 1
        for k in range(k0, k1):
            a = Ac[i, k]
            b = Bc[k, j]
            if a == NAN or b == NAN:
                nan = True
            elif a == INF or b == INF:
                if a == ZERO or b == ZERO:
                    nan = True
                elif Bn[k, j] ^ An[i, k]:
                    infn = True
                else:
                    infp = True
            elif prm[P_PROD_OVF] != 0 and a == FINITE and b == FINITE and \
                    Ae[i, k] + Be[k, j] - 2 * fin + bitlen(Am[i, k] * Bm[k, j]) - 1 > (np.int64(1) << (eb - 1)) - 1:
                if Bn[k, j] ^ An[i, k]:       # a product beyond the result's range: infinite
                    infn = True
                else:
                    infp = True
        if nan or (infp and infn):
            xc = NAN
            if write:
                bits = prm[P_NAN]
            continue
        if infp or infn:
            xc = INF
            xn = np.int64(infn)
            if write:
                bits = _inf_bits(xn, eb, fb)
            continue
        emaxp = NEG_BIG
        nprod = 0
        zall = True
        zany = False
        for k in range(k0, k1):
            if Ac[i, k] == FINITE and Bc[k, j] == FINITE:
                nprod += 1
                e = Ae[i, k] + Be[k, j]
                if e > emaxp:
                    emaxp = e
            else:
                zn = An[i, k] ^ Bn[k, j]
                zall = zall and zn == 1
                zany = zany or zn == 1
        czero = xc == ZERO
        if czero:
            zall = zall and xn == 1
            zany = zany or xn == 1
        S = np.int64(0)
        q = np.int64(0)
        if not (nprod == 0 and czero):
            if not c_out:
                emax = emaxp
                if not czero and xe > emax:
                    emax = xe
                # zeros align at P_EZERO where the model says so (mma_ref.fused_element)
                if prm[P_EZERO_ON] != 0 and (czero or nprod < k1 - k0) and prm[P_EZERO] > emax:
                    emax = prm[P_EZERO]
                q = emax - F
                for k in range(k0, k1):
                    if Ac[i, k] == FINITE and Bc[k, j] == FINITE:
                        lsb = Ae[i, k] + Be[k, j] - 2 * fin
                        S += _qshift(An[i, k] ^ Bn[k, j], Am[i, k] * Bm[k, j], lsb - q, floor)
                if not czero:
                    S += _qshift(xn, xm, xl - q, floor)
            else:
                Sp = np.int64(0)
                qp = emaxp - F
                E = emaxp
                if nprod > 0:
                    for k in range(k0, k1):
                        if Ac[i, k] == FINITE and Bc[k, j] == FINITE:
                            lsb = Ae[i, k] + Be[k, j] - 2 * fin
                            Sp += _qshift(An[i, k] ^ Bn[k, j], Am[i, k] * Bm[k, j], lsb - qp, floor)
                if not czero and xe > E:
                    E = xe
                q = E - F2
                if nprod > 0:
                    if Sp < 0:
                        S = _qshift(ONE64, -Sp, qp - q, rfloor)
                    else:
                        S = _qshift(ZERO64, Sp, qp - q, rfloor)
                if not czero:
                    S += _qshift(xn, xm, xl - (E - FC), rfloor) << (F2 - FC)
        neg = np.int64(S < 0)
        if S == 0:
            if nprod == 0 and czero:
                neg = np.int64(zany) if mode == R_RD else np.int64(zall)
            else:
                neg = np.int64(mode == R_RD)
        mag = -S if S < 0 else S
        if write:
            bits = round_result(neg, mag, q, eb, fb, prm[P_RES_FB], mode, prm[P_OVF_INF], prm[P_FLUSH_OUT])
            xn, xc, xm, xe = decode(bits, eb, fb, fb, ZERO64)
            xl = xe - fb
        else:
            xn = neg
            xm = mag
            xl = q
            xc = FINITE if mag != 0 else ZERO
            xe = q + bitlen(mag) - 1
    return bits


# ------------------------------------------------------------------ drivers

@_helper
def _float_subgroup(s, a, b, c, out, prm):
    M = a.shape[1]
    K = a.shape[2]
    N = b.shape[2]
    ieb, ifb, keep, fl, fn = prm[P_IN_EB], prm[P_IN_FB], prm[P_IN_KEEP], prm[P_FLUSH_IN], prm[P_IN_FN]
    An = np.empty((M, K), np.int64)
    Ac = np.empty((M, K), np.int64)
    Am = np.empty((M, K), np.int64)
    Ae = np.empty((M, K), np.int64)
    Bn = np.empty((K, N), np.int64)
    Bc = np.empty((K, N), np.int64)
    Bm = np.empty((K, N), np.int64)
    Be = np.empty((K, N), np.int64)
    beb, bfb, bfn = prm[P_INB_EB], prm[P_INB_FB], prm[P_INB_FN]
    fin = in_fbits(prm)
    for i in range(M):
        for k in range(K):
            An[i, k], Ac[i, k], Am[i, k], Ae[i, k] = decode_in(np.int64(a[s, i, k]), ieb, ifb, keep, fl, fn)
            Am[i, k] <<= fin - ifb
    for k in range(K):
        for j in range(N):
            Bn[k, j], Bc[k, j], Bm[k, j], Be[k, j] = decode_in(np.int64(b[s, k, j]), beb, bfb, keep - ifb + bfb,
                                                               fl, bfn)
            Bm[k, j] <<= fin - bfb
    tn = np.empty(K + 2, np.int64)
    tm = np.empty(K + 2, np.int64)
    tl = np.empty(K + 2, np.int64)
    acc = np.zeros(LIMBS, np.int64)
    kind = prm[P_KIND]
    ceb, cfb = prm[P_C_EB], prm[P_C_FB]
    for i in range(M):
        for j in range(N):
            cn, cc, cm, ce = decode(np.int64(c[s, i, j]), ceb, cfb, cfb, fl)
            cl = ce - cfb
            if kind == K_FUSED:
                r = _elem_fused(prm, An, Ac, Am, Ae, Bn, Bc, Bm, Be, i, j, cn, cc, cm, cl, ce)
            elif kind == K_EXACT:
                r = _elem_exact(prm, An, Ac, Am, Ae, Bn, Bc, Bm, Be, i, j, cn, cc, cm, cl, tn, tm, tl, acc)
            elif kind == K_IEEE:
                r = _elem_ieee(prm, An, Ac, Am, Ae, Bn, Bc, Bm, Be, i, j, cn, cc, cm, cl, tn, tm, tl, acc)
            else:
                r = _elem_lavapipe(prm, An, Ac, Am, Ae, Bn, Bc, Bm, Be, i, j, cn, cc, cm, cl, tn, tm, tl, acc)
            out[s, i, j] = r


@njit(cache=True)
def float_mma_serial(a, b, c, out, prm):
    for s in range(a.shape[0]):
        _float_subgroup(np.int64(s), a, b, c, out, prm)


@njit(cache=True, parallel=True)
def float_mma_parallel(a, b, c, out, prm):
    for s in prange(a.shape[0]):
        _float_subgroup(np.int64(s), a, b, c, out, prm)


@_helper
def _int_subgroup(s, a, b, c, out, sat, lo, hi):
    M = a.shape[1]
    K = a.shape[2]
    N = b.shape[2]
    for i in range(M):
        for j in range(N):
            t = np.int64(0)
            for k in range(K):
                t += np.int64(a[s, i, k]) * np.int64(b[s, k, j])
            t += c[s, i, j]
            if sat:
                if t < lo:
                    t = lo
                elif t > hi:
                    t = hi
            out[s, i, j] = t & M32


@njit(cache=True)
def int_mma_serial(a, b, c, out, sat, lo, hi):
    for s in range(a.shape[0]):
        _int_subgroup(np.int64(s), a, b, c, out, sat, lo, hi)


@njit(cache=True, parallel=True)
def int_mma_parallel(a, b, c, out, sat, lo, hi):
    for s in prange(a.shape[0]):
        _int_subgroup(np.int64(s), a, b, c, out, sat, lo, hi)
