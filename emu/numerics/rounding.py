"""Correct rounding between float formats, vectorised.

All rounding here is IEEE round-to-nearest, ties-to-even (RNE), done ONCE from the
value being rounded. The traps avoided:

* ml_dtypes converts float64 -> bfloat16 through float32 (two roundings: wrong when
  the float32 step lands exactly on a bf16 tie, e.g. 1 + 2^-8 + 2^-30 -> 1.0 instead
  of 1 + 2^-7), so bf16 gets its own path.
* Computing in float64 then rounding to f32/f16 is one rounding of the float64 value;
  it is a correct rounding of the exact result only when the float64 value is exact
  or when double rounding is provably innocuous (see `scalar`).

Round-to-odd (RO) is the tool: if y = RO_q(x) with q >= p + 2 bits, then
RNE_p(y) == RNE_p(x) (Boldo & Melquiond, "Emulation of FMA and correctly rounded
sums: proved algorithms using rounding to odd", IEEE TC 2008). We take RO from
float64 to float32 (24 bits >= 11 + 2 and >= 8 + 2), then RNE from float32 to
f16 or bf16.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..errors import InvalidArgument
from . import dtypes

_F32_QNAN = np.uint32(0x7FC00000)


def ro_f64_to_f32(x64: np.ndarray) -> np.ndarray:
    """Round float64 -> float32 to odd: truncate toward zero, and if inexact force the
    last significand bit to 1. Overflow gives +-MAX (odd), never infinity, so that a
    later RNE step still sees that the value is above the largest finite number."""
    x64 = np.asarray(x64, np.float64)
    with np.errstate(over='ignore', invalid='ignore'):
        r = x64.astype(np.float32)
        back = r.astype(np.float64)
        inexact = (back != x64) & (x64 == x64)          # NaN is not "inexact"
    if not inexact.any():
        return r
    bits = r.view(np.uint32).copy()
    # RNE went away from zero: step back one ulp in magnitude (sign-magnitude bits);
    # from infinity this lands on MAX, which is odd.
    away = inexact & (np.abs(back) > np.abs(x64))
    bits -= away.astype(np.uint32)
    bits |= inexact.astype(np.uint32)
    return bits.view(np.float32)


def f32_to_bf16(x32: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16, RNE with overflow to infinity; NaN -> quiet NaN with the sign
    and the top 7 payload bits kept. Integer rounding on the bit pattern: adding
    0x7FFF + lsb carries into the exponent exactly when RNE rounds up."""
    u = np.asarray(x32, np.float32).view(np.uint32)
    lsb = (u >> np.uint32(16)) & np.uint32(1)
    with np.errstate(over='ignore'):
        rounded = (u + np.uint32(0x7FFF) + lsb) >> np.uint32(16)
    nan = (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    out = np.where(nan, (u >> np.uint32(16)) | np.uint32(0x0040), rounded)
    return out.astype(np.uint16).view(dtypes.NP['bf16'])


def f32_to_f16(x32: np.ndarray) -> np.ndarray:
    """float32 -> float16, RNE with overflow to infinity (numpy's cast, checked bit for
    bit by the tests); NaN -> quiet NaN with the sign and top 10 payload bits kept."""
    x32 = np.asarray(x32, np.float32)
    with np.errstate(over='ignore', invalid='ignore'):
        h = x32.astype(np.float16)
    nan = x32 != x32
    if nan.any():
        u = np.asarray(x32).view(np.uint32)
        q = (((u >> np.uint32(16)) & np.uint32(0x8000)) | np.uint32(0x7E00)
             | ((u >> np.uint32(13)) & np.uint32(0x3FF))).astype(np.uint16)
        h = np.where(nan, q.view(np.float16), h)
    return h


def widen_to_f32(x: np.ndarray, ty: str) -> np.ndarray:
    """Exact widening f16/bf16/f32 -> float32. NaN -> quiet NaN, sign and payload kept
    (payload bits move to the top of the f32 payload)."""
    x = np.asarray(x, dtypes.NP[ty])
    if ty == 'f32':
        return x
    if ty == 'bf16':
        u = np.asarray(x).view(np.uint16).astype(np.uint32) << np.uint32(16)
        nan = (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
        return np.where(nan, u | np.uint32(0x00400000), u).view(np.float32)
    f = x.astype(np.float32)
    nan = x != x
    if nan.any():
        u = np.asarray(x).view(np.uint16).astype(np.uint32)
        q = ((u & np.uint32(0x8000)) << np.uint32(16)) | _F32_QNAN | ((u & np.uint32(0x3FF)) << np.uint32(13))
        f = np.where(nan, q.view(np.float32), f)
    return f


def round_f64(x64: np.ndarray, ty: str) -> np.ndarray:
    """One RNE rounding of float64 values to f32, f16 or bf16 (overflow -> infinity; f64: as
    they are). NaN stays NaN (payload unspecified)."""
    x64 = np.asarray(x64, np.float64)
    if ty == 'f64':
        return x64
    with np.errstate(over='ignore', invalid='ignore'):
        if ty == 'f32':
            return x64.astype(np.float32)            # the hardware cast is one RNE
        r = ro_f64_to_f32(x64)
        if ty == 'f16':
            return r.astype(np.float16)
        if ty == 'bf16':
            return f32_to_bf16(r)
    raise InvalidArgument(f"round_f64: {ty!r} is not a float type")


def to_f64(x: np.ndarray, ty: str) -> np.ndarray:
    """Exact widening of f16/bf16/f32 values to float64 (f64: as they are)."""
    return np.asarray(x, dtypes.NP[ty]).astype(np.float64)


# ---- exact scalar rounding, for literals ------------------------------------------

def round_fraction(q: Fraction, fmt: dtypes.FloatFormat) -> Fraction:
    """RNE of an exact rational to `fmt`, unbounded exponent above (caller checks the
    range), gradual underflow below. Returns the rounded value exactly."""
    if q == 0:
        return Fraction(0)
    sign = -1 if q < 0 else 1
    n, d = abs(q.numerator), q.denominator
    e = n.bit_length() - d.bit_length()              # 2^e <= n/d < 2^(e+2)
    if n * (1 << max(0, -e)) < d * (1 << max(0, e)):
        e -= 1                                        # now 2^e <= n/d < 2^(e+1)
    qe = max(e, fmt.emin) - fmt.frac_bits             # exponent of one ulp
    num = n * (1 << max(0, -qe))
    den = d * (1 << max(0, qe))
    m, r = divmod(num, den)
    if 2 * r > den or (2 * r == den and m & 1):
        m += 1
    return sign * Fraction(m) * (Fraction(2) ** qe)


def fraction_to_array(q: Fraction, ty: str) -> np.ndarray:
    """An exactly representable rational as a 0-d array of float type `ty`."""
    f = float(q)                                      # exact: q is representable in f64
    if ty == 'bf16':
        return f32_to_bf16(np.array(f, np.float32)).reshape(())
    return np.array(f, dtypes.NP[ty])
