"""WGSL numeric, bit, packing and select built-in functions, vectorised.

    builtins.call(name, ty, *args) -> ndarray (or a tuple for frexp/modf)

`ty` is the scalar type of the first argument. Vectors carry a trailing axis
(shape (L, n)); scalars have none (shape (L,)). Where WGSL lets a scalar meet
a vector (select's condition, mix's blend factor, extractBits/insertBits'
offset and count) an argument with fewer axes gains trailing axes, so a lane
array (L,) lines up with (L, n); otherwise arguments broadcast like numpy.

Accuracy choices (WGSL leaves latitude; we pick one deterministic answer):
* Exact functions (abs, min, max, clamp, sign, floor, ceil, round, trunc, step,
  saturate, select, frexp, modf, ldexp) give the exact result.
* fract, sqrt: correctly rounded (same evaluation scheme as scalar.binary).
* fma: correctly rounded with a single rounding (IEEE fusedMultiplyAdd), also
  for f16/bf16. WGSL would also allow an unfused multiply then add.
* Transcendental and composite functions (exp.., sin.., pow, inverseSqrt,
  degrees, radians, mix, smoothstep, dot, cross, length, distance, normalize,
  reflect, refract, faceForward) are evaluated in float64 with numpy and the
  float64 result is rounded once (RNE) to the type. This is within WGSL's error
  bounds, reproducible, and for f16/bf16 avoids the extra rounding through f32.
* min/max on floats are IEEE 754-2019 minimumNumber/maximumNumber: a NaN operand
  is ignored when the other is a number, and -0 < +0. (The spec's literal
  definition "e2 if e1 < e2 else e1" differs only for NaN, which is
  indeterminate under WGSL's finite-math rule, and for signed zeros, whose sign
  implementations may ignore.) clamp is min(max(e, low), high).
* sign(+-0) returns that zero, sign(NaN) returns NaN.
* pow(x, y) is NaN for x < 0 (its result is "inherited from exp2(y*log2(x))");
  -0 is treated as +0; otherwise IEEE pow (so pow(0, 0) = 1).
* modf: whole = trunc(e), fract = e - trunc(e) in IEEE arithmetic, so
  fract(-2.0) = +0 and modf(+-inf) has a NaN fract, as the formula says.
* frexp: exact also for subnormals; (0, 0) for zeros; numpy's (inf|nan, 0) for
  non-finite inputs (indeterminate in WGSL).
* ldexp: exact e1 * 2^e2 rounded once (overflow to infinity, gradual underflow).
* Integer dot wraps modulo 2^32; dot4I8Packed/dot4U8Packed are exact.
* pack*norm evaluate floor(0.5 + k * clamp(e)) exactly; a NaN component clamps to
  the low end (maximumNumber(-1, NaN) = -1, for unorm 0). pack2x16float and
  quantizeToF16 round to nearest even with overflow to +-infinity (WGSL:
  indeterminate outside f16's finite range). unpack*norm give the correctly
  rounded f32 quotient.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..errors import InvalidArgument
from . import dtypes, rounding
from .dtypes import NP, WIDTH
from .scalar import as_type as _scalar_as_type

# 'f64' is no WGSL type: the front end folds constant expressions of abstract floats with it
# (WGSL's AbstractFloat is binary64), so every float function here takes it too.
_FLOATS = dtypes.FLOATS | {'f64'}
_BITS = {**dtypes.BITS, 'f64': np.dtype(np.uint64)}


def as_type(x, ty):
    return np.asarray(x, np.float64) if ty == 'f64' else _scalar_as_type(x, ty)


def _round(x64, ty):
    """float64 results rounded once (RNE) to `ty` (f64: as they are)."""
    return np.asarray(x64, np.float64) if ty == 'f64' else rounding.round_f64(x64, ty)

# ---- helpers ----------------------------------------------------------------------


def _lanes(args):
    """Give arguments with fewer axes trailing axes, so (L,) lines up with (L, n)."""
    arrs = [a if isinstance(a, np.ndarray) else np.asarray(a) for a in args]
    nd = max((a.ndim for a in arrs), default=0)
    return [a.reshape(a.shape + (1,) * (nd - a.ndim)) if 0 < a.ndim < nd else a for a in arrs]


def _need_float(ty, name):
    if ty not in _FLOATS:
        raise InvalidArgument(f"{name} is not defined on {ty}")


def _need_int(ty, name):
    if ty not in dtypes.INTS:
        raise InvalidArgument(f"{name} is not defined on {ty}")


def _w(x, ty):
    """Exact widening of a float operand to float32 (f32 stays as is; f64 too)."""
    if ty == 'f64':
        return as_type(x, ty)
    return rounding.widen_to_f32(as_type(x, ty), ty)


def _n(r32, ty):
    """float32 values that are exactly representable in `ty` (or NaN/inf) -> `ty`."""
    if ty == 'f64':
        return np.asarray(r32, np.float64)
    r32 = np.asarray(r32, np.float32)
    if ty == 'f32':
        return r32
    if ty == 'f16':
        return rounding.f32_to_f16(r32)
    return rounding.f32_to_bf16(r32)


def _f64(x, ty):
    return as_type(x, ty).astype(np.float64)


def _via64(ty, fn, *args):
    """Evaluate fn in float64, round once to `ty`."""
    with np.errstate(all='ignore'):
        r = fn(*(_f64(a, ty) for a in args))
    return _round(r, ty)


def _arith(ty, fn, *args):
    """One correctly rounded basic operation (the scalar.binary scheme): f32 native,
    f16 through float32, bf16 through float64; both double roundings are innocuous."""
    with np.errstate(all='ignore'):
        if ty in ('f32', 'f64'):
            return np.asarray(fn(*(as_type(a, ty) for a in args)), NP[ty])
        if ty == 'f16':
            return np.asarray(fn(*(_w(a, ty) for a in args))).astype(np.float16)
        return _round(fn(*(_f64(a, ty) for a in args)), ty)


def _exact32(ty, fn, *args):
    """A function whose result is exactly representable: evaluate in float32."""
    with np.errstate(all='ignore'):
        return _n(fn(*(_w(a, ty) for a in args)), ty)


def _sign_bit_op(ty, x, clear):
    bt = _BITS[ty]
    sign = bt.type(1 << (8 * bt.itemsize - 1))
    u = as_type(x, ty).view(bt)
    return np.asarray(u & ~sign if clear else u ^ sign).view(NP[ty])


def _unsigned(x, ty):
    """Integer operand as its unsigned bit pattern (uint32 / uint8)."""
    return as_type(x, ty).view(dtypes.BITS[ty])


def _bitlen(u):
    """Number of significant bits of unsigned integers (0 for 0); exact via frexp of each 32-bit
    word (a 64-bit value need not be a float64: 2^64 - 1 would round up to 2^64)."""
    u = np.asarray(u).astype(np.uint64)
    hi = u >> np.uint64(32)
    lo = u & np.uint64(0xFFFFFFFF)
    n = lambda w: np.frexp(w.astype(np.float64))[1].astype(np.int64)   # noqa: E731
    return np.where(hi > 0, 32 + n(hi), n(lo))


def _from_i64(v, ty):
    return np.asarray(v).astype(np.int64).astype(NP[ty])


# ---- abs, sign, min, max, clamp ---------------------------------------------------

def _abs(ty, e):
    if ty in _FLOATS:
        return _sign_bit_op(ty, e, clear=True)
    if ty in dtypes.SIGNED:
        with np.errstate(all='ignore'):
            return np.asarray(np.abs(as_type(e, ty)), NP[ty])   # |MIN| wraps to MIN
    _need_int(ty, 'abs')
    return as_type(e, ty).copy()


def _minmax(ty, a, b, is_max):
    if ty in _FLOATS:
        x, y = _w(a, ty), _w(b, ty)
        r = np.fmax(x, y) if is_max else np.fmin(x, y)          # NaN-ignoring
        both0 = (x == 0) & (y == 0)
        if both0.any():                                         # -0 < +0
            sx, sy = np.signbit(x), np.signbit(y)
            neg = (sx & sy) if is_max else (sx | sy)
            r = np.where(both0, np.where(neg, np.float32(-0.0), np.float32(0.0)), r)
        return _n(r, ty)
    _need_int(ty, 'max' if is_max else 'min')
    f = np.maximum if is_max else np.minimum
    return np.asarray(f(as_type(a, ty), as_type(b, ty)), NP[ty])


def _min(ty, a, b):
    return _minmax(ty, a, b, False)


def _max(ty, a, b):
    return _minmax(ty, a, b, True)


def _clamp(ty, e, low, high):
    return _minmax(ty, _minmax(ty, e, low, True), high, False)


def _saturate(ty, e):
    _need_float(ty, 'saturate')
    return _clamp(ty, e, np.zeros((), NP[ty]), np.ones((), NP[ty]))


def _sign(ty, e):
    if ty in _FLOATS:
        return _exact32(ty, lambda x: np.where(x > 0, np.float32(1), np.where(x < 0, np.float32(-1), x)), e)
    if ty in dtypes.SIGNED:
        return np.asarray(np.sign(as_type(e, ty)), NP[ty])
    raise InvalidArgument(f"sign is not defined on {ty}")


# ---- rounding-to-integer and friends ----------------------------------------------

def _exact_unary(np_fn, name):
    def f(ty, e):
        _need_float(ty, name)
        return _exact32(ty, np_fn, e)
    return f


def _fract(ty, e):
    _need_float(ty, 'fract')
    return _arith(ty, lambda x: x - np.floor(x), e)


def _sqrt(ty, e):
    _need_float(ty, 'sqrt')
    return _arith(ty, np.sqrt, e)


def _step(ty, edge, x):
    _need_float(ty, 'step')
    return _exact32(ty, lambda a, b: np.where(a <= b, np.float32(1), np.float32(0)), edge, x)


def _frexp(ty, e):
    """(fraction, exponent): the exponent is i32, for f64 i64 (naga's frexp of f64)."""
    _need_float(ty, 'frexp')
    m, ex = np.frexp(_f64(e, ty))
    return _round(m, ty), ex.astype(np.int64 if ty == 'f64' else np.int32)


def _modf(ty, e):
    _need_float(ty, 'modf')
    whole = _exact32(ty, np.trunc, e)
    with np.errstate(all='ignore'):
        fract = _n(_w(e, ty) - _w(whole, ty), ty)                # exact in float32
    return fract, whole


def _ldexp(ty, e1, e2):
    _need_float(ty, 'ldexp')
    # Clipping keeps the float64 step exact or far beyond every target's range (f64 too).
    k = np.clip(np.asarray(e2).astype(np.int64), -2200, 2200).astype(np.int32)
    with np.errstate(all='ignore'):
        r = np.ldexp(_f64(e1, ty), k)
    return _round(r, ty)


# ---- fma --------------------------------------------------------------------------

def _fma(ty, a, b, c):
    """Correctly rounded a*b + c with one rounding. The product of two f32 (or
    narrower) values is exact in float64 (<= 48 significant bits, no overflow or
    underflow). The sum is made exact by TwoSum (s + err == p + c), then rounded to
    odd at 53 bits, which RNE then rounds to the target exactly as it would round the
    true sum (53 >= 24 + 2; rounding.py)."""
    _need_float(ty, 'fma')
    x, y, z = _f64(a, ty), _f64(b, ty), _f64(c, ty)
    if ty == 'f64':
        return _fma64(x, y, z)
    with np.errstate(all='ignore'):
        p = x * y
        s = p + z
        bv = s - p
        err = (p - (s - bv)) + (z - bv)
        inexact = (err != 0) & np.isfinite(s)
        if inexact.any():
            even = (s.view(np.uint64) & np.uint64(1)) == 0
            toward = np.where(err > 0, np.inf, -np.inf)
            s = np.where(inexact & even, np.nextafter(s, toward), s)
    return _round(s, ty)


def _two_sum(a, b):
    s = a + b
    bv = s - a
    return s, (a - (s - bv)) + (b - bv)


def _fma64(x, y, z):
    """fma of float64 values with one rounding. Where every step stays in float64's normal range,
    Boldo and Melquiond's emulation (IEEE TC 2008, as in rounding.py): the product split exactly
    (Dekker), the sum of z and its high part exactly (TwoSum), the two low parts added rounding to
    odd, one RNE at the end. Elsewhere the exact result as a Fraction, rounded by float()
    (correctly rounded, signed zero on underflow); where the product is exact (a zero factor) or
    an operand is not finite, x * y + z in float64 is the fma (IEEE's infinities, NaNs, zeros)."""
    x, y, z = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (x, y, z)))
    with np.errstate(all='ignore'):
        out = np.array(x * y + z, np.float64).reshape(-1)
        xs, ys, zs = x.reshape(-1), y.reshape(-1), z.reshape(-1)
        p, az = np.abs(xs * ys), np.abs(zs)
        fast = ((p > 2.0 ** -900) & (p < 2.0 ** 1000) & (np.abs(xs) < 2.0 ** 990) & (np.abs(ys) < 2.0 ** 990)
                & (az < 2.0 ** 1000) & ((az > 2.0 ** -900) | (zs == 0)))
        if fast.any():
            a, b, c = xs[fast], ys[fast], zs[fast]
            split = lambda v: (lambda t: (t - (t - v), v - (t - (t - v))))(v * 134217729.0)  # noqa: E731
            (ah, al), (bh, bl) = split(a), split(b)
            uh = a * b
            ul = ((ah * bh - uh) + ah * bl + al * bh) + al * bl             # a * b == uh + ul exactly
            th, tl = _two_sum(c, uh)
            v, e = _two_sum(tl, ul)
            odd = (e != 0) & ((v.view(np.uint64) & np.uint64(1)) == 0)       # round to odd
            v = np.where(odd, np.nextafter(v, np.where(e > 0, np.inf, -np.inf)), v)
            out[np.flatnonzero(fast)] = th + v
    for i in np.flatnonzero(~fast & np.isfinite(xs) & np.isfinite(ys) & np.isfinite(zs)):
        exact = Fraction(float(x.flat[i])) * Fraction(float(y.flat[i])) + Fraction(float(z.flat[i]))
        if exact != 0:
            try:
                out[i] = float(exact)
            except OverflowError:
                out[i] = np.inf if exact > 0 else -np.inf
    return out.reshape(x.shape)


# ---- float64-evaluated functions --------------------------------------------------

def _f64_unary(np_fn, name):
    def f(ty, e):
        _need_float(ty, name)
        return _via64(ty, np_fn, e)
    return f


def _pow64(x, y):
    x = np.where(x == 0, 0.0, x)                                # -0 as +0
    return np.where(x < 0, np.nan, np.power(np.abs(x), y))


def _norm(x, ty):
    """sqrt of the sum of squares over the last axis, in float64. f64 operands (abstract floats)
    are first scaled by a power of two (exact), so that squares beyond f64's range do not
    overflow where the length itself is finite."""
    if ty != 'f64':
        return np.sqrt(np.sum(x * x, axis=-1))
    big = np.max(np.abs(x), axis=-1)
    k = np.where(np.isfinite(big) & (big > 0), np.frexp(big)[1], 0)
    y = np.ldexp(x, -k[..., None])
    return np.ldexp(np.sqrt(np.sum(y * y, axis=-1)), k)


def _vec_or_scalar(x, vector):
    return x.ndim >= 2 if vector is None else vector


def _length(ty, e, *, vector=None):
    """length(e); `vector` says whether e's last axis is a vector (default: e has two
    or more axes, the lane convention)."""
    _need_float(ty, 'length')
    e = as_type(e, ty)
    if not _vec_or_scalar(e, vector):
        return _abs(ty, e)
    return _via64(ty, lambda x: _norm(x, ty), e)


def _distance(ty, e1, e2, *, vector=None):
    _need_float(ty, 'distance')
    e1, e2 = as_type(e1, ty), as_type(e2, ty)
    if not _vec_or_scalar(np.broadcast(e1, e2), vector):
        return _via64(ty, lambda a, b: np.abs(a - b), e1, e2)
    return _via64(ty, lambda a, b: _norm(a - b, ty), e1, e2)


def _normalize(ty, e):
    _need_float(ty, 'normalize')
    return _via64(ty, lambda x: x / _norm(x, ty)[..., None], e)


def _dot(ty, e1, e2):
    if ty in _FLOATS:
        return _via64(ty, lambda a, b: np.sum(a * b, axis=-1), e1, e2)
    _need_int(ty, 'dot')
    # Wrapping arithmetic modulo 2^64 keeps the low bits exact.
    a = as_type(e1, ty).astype(np.int64).view(np.uint64)
    b = as_type(e2, ty).astype(np.int64).view(np.uint64)
    s = np.sum(a * b, axis=-1, dtype=np.uint64)
    return s.astype(NP[ty])


def _cross(ty, a, b):
    _need_float(ty, 'cross')

    def f(x, y):
        x0, x1, x2 = x[..., 0], x[..., 1], x[..., 2]
        y0, y1, y2 = y[..., 0], y[..., 1], y[..., 2]
        return np.stack([x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0], axis=-1)
    return _via64(ty, f, a, b)


def _face_forward(ty, e1, e2, e3):
    _need_float(ty, 'faceForward')
    with np.errstate(all='ignore'):
        d = np.sum(_f64(e2, ty) * _f64(e3, ty), axis=-1, keepdims=True)
    e1 = as_type(e1, ty)
    return np.where(d < 0, e1, _sign_bit_op(ty, e1, clear=False))


def _reflect(ty, e1, e2):
    _need_float(ty, 'reflect')
    return _via64(ty, lambda i, n: i - 2.0 * np.sum(n * i, axis=-1, keepdims=True) * n, e1, e2)


def _refract(ty, e1, e2, e3):
    _need_float(ty, 'refract')

    def f(i, n, eta):
        d = np.sum(n * i, axis=-1, keepdims=True)
        k = 1.0 - eta * eta * (1.0 - d * d)
        r = eta * i - (eta * d + np.sqrt(np.maximum(k, 0.0))) * n
        return np.where(k < 0, 0.0, r)
    return _via64(ty, f, e1, e2, e3)


def _quantize_to_f16(ty, e):
    if ty != 'f32':
        raise InvalidArgument(f"quantizeToF16 is not defined on {ty}")
    return rounding.widen_to_f32(rounding.f32_to_f16(as_type(e, 'f32')), 'f16')


# ---- select -----------------------------------------------------------------------

def _select(ty, f, t, cond):
    return np.where(np.asarray(cond, np.bool_), as_type(t, ty), as_type(f, ty))


# ---- integer bit functions ---------------------------------------------------------

def _count_one_bits(ty, e):
    _need_int(ty, 'countOneBits')
    return np.bitwise_count(_unsigned(e, ty)).astype(NP[ty])


def _count_leading_zeros(ty, e):
    _need_int(ty, 'countLeadingZeros')
    return _from_i64(WIDTH[ty] - _bitlen(_unsigned(e, ty)), ty)


def _ctz(u, w):
    lowest = u & (~u + u.dtype.type(1))                         # lowest set bit
    return np.where(u == 0, w, _bitlen(lowest) - 1)


def _count_trailing_zeros(ty, e):
    _need_int(ty, 'countTrailingZeros')
    return _from_i64(_ctz(_unsigned(e, ty), WIDTH[ty]), ty)


def _first_leading_bit(ty, e):
    _need_int(ty, 'firstLeadingBit')
    u = _unsigned(e, ty)
    if ty in dtypes.SIGNED:                                     # first bit unlike the sign
        u = np.where(as_type(e, ty) < 0, ~u, u)
    return _from_i64(_bitlen(u) - 1, ty)                        # 0 (or -1) -> T(-1)


def _first_trailing_bit(ty, e):
    _need_int(ty, 'firstTrailingBit')
    u = _unsigned(e, ty)
    return _from_i64(np.where(u == 0, -1, _ctz(u, WIDTH[ty])), ty)


def _oc(offset, count, w):
    o = np.minimum(np.asarray(offset).astype(np.int64) & 0xFFFFFFFF, w)
    c = np.minimum(np.asarray(count).astype(np.int64) & 0xFFFFFFFF, w - o)
    return o.astype(np.uint64), c.astype(np.uint64)


def _extract_bits(ty, e, offset, count):
    _need_int(ty, 'extractBits')
    w = WIDTH[ty]
    o, c = _oc(offset, count, w)
    u = _unsigned(e, ty).astype(np.uint64)
    mask = (np.uint64(1) << c) - np.uint64(1)                   # c <= 32: no overflow
    r = ((u >> o) & mask).astype(np.int64)
    if ty in dtypes.SIGNED:                                     # sign-extend from bit c-1
        c64 = c.astype(np.int64)
        top = (r >> np.maximum(c64 - 1, 0)) & 1
        r = np.where((c64 > 0) & (top == 1), r - (np.int64(1) << c64), r)
    return _from_i64(r, ty)


def _insert_bits(ty, e, newbits, offset, count):
    _need_int(ty, 'insertBits')
    w = WIDTH[ty]
    o, c = _oc(offset, count, w)
    mask = ((np.uint64(1) << c) - np.uint64(1)) << o
    u = _unsigned(e, ty).astype(np.uint64)
    n = _unsigned(newbits, ty).astype(np.uint64)
    r = (u & ~mask) | ((n << o) & mask)
    return r.astype(dtypes.BITS[ty]).view(NP[ty])


def _reverse_bits(ty, e):
    _need_int(ty, 'reverseBits')
    if WIDTH[ty] == 64:       # each 32-bit word reversed, the words swapped
        u = _unsigned(e, ty)
        lo, hi = (_reverse_bits('u32', (u >> np.uint64(k)).astype(np.uint32)).astype(np.uint64) for k in (0, 32))
        return ((lo << np.uint64(32)) | hi).view(NP[ty])
    v = _unsigned(e, ty).astype(np.uint32)
    for s, m in ((1, 0x55555555), (2, 0x33333333), (4, 0x0F0F0F0F), (8, 0x00FF00FF)):
        s, m = np.uint32(s), np.uint32(m)
        v = ((v >> s) & m) | ((v & m) << s)
    v = (v >> np.uint32(16)) | (v << np.uint32(16))
    v = v >> np.uint32(32 - WIDTH[ty])
    return v.astype(dtypes.BITS[ty]).view(NP[ty])


# ---- packed integer dot products and packing --------------------------------------

_SH8 = np.array([0, 8, 16, 24], np.uint32)
_SH16 = np.array([0, 16], np.uint32)


def _bytes(e, signed):
    """u32 -> (..., 4) int64 bytes, component 0 from the lowest bits."""
    b = ((as_type(e, 'u32')[..., None] >> _SH8) & np.uint32(0xFF)).astype(np.int64)
    return (b ^ 0x80) - 0x80 if signed else b


def _halves(e, signed):
    h = ((as_type(e, 'u32')[..., None] >> _SH16) & np.uint32(0xFFFF)).astype(np.int64)
    return (h ^ 0x8000) - 0x8000 if signed else h


def _pack(fields, shifts, bits):
    """Low `bits` bits of each int64 field, component i at shifts[i] -> u32."""
    f = (np.asarray(fields, np.int64) & ((1 << bits) - 1)).astype(np.uint32) << shifts
    return np.bitwise_or.reduce(f, axis=-1).astype(np.uint32)


def _dot4(ty, e1, e2, signed):
    if ty != 'u32':
        raise InvalidArgument(f"dot4{'I' if signed else 'U'}8Packed takes u32, not {ty}")
    s = np.sum(_bytes(e1, signed) * _bytes(e2, signed), axis=-1)
    return s.astype(np.int32 if signed else np.uint32)


def _pack_norm(ty, e, scale, lo, shifts, bits):
    if ty != 'f32':
        raise InvalidArgument(f"pack*norm takes f32 vectors, not {ty}")
    x = _f64(e, 'f32')
    c = np.fmin(1.0, np.fmax(lo, x))                            # NaN -> lo
    return _pack(np.floor(0.5 + scale * c), shifts, bits)       # exact in float64


def _unpack_norm(e, scale, signed, sixteen):
    v = _halves(e, signed) if sixteen else _bytes(e, signed)
    r = v.astype(np.float64) / scale                            # one RNE to f32 below
    if signed:
        r = np.maximum(r, -1.0)
    return r.astype(np.float32)


def _pack2x16float(ty, e):
    if ty != 'f32':
        raise InvalidArgument(f"pack2x16float takes vec2<f32>, not {ty}")
    h = rounding.f32_to_f16(as_type(e, 'f32')).view(np.uint16).astype(np.int64)
    return _pack(h, _SH16, 16)


def _unpack2x16float(ty, e):
    h = _halves(e, False).astype(np.uint16).view(np.float16)
    return rounding.widen_to_f32(h, 'f16')


def _pack4x8(ty, e, signed, clamp):
    x = as_type(e, ty).astype(np.int64)
    if clamp:
        x = np.clip(x, -128, 127) if signed else np.minimum(x, 255)
    return _pack(x, _SH8, 8)


def _need_u32(name):
    def check(ty):
        if ty != 'u32':
            raise InvalidArgument(f"{name} takes u32, not {ty}")
    return check


def _unpack4x8int(ty, e, signed):
    _need_u32('unpack4xI8' if signed else 'unpack4xU8')(ty)
    return _bytes(e, signed).astype(np.int32 if signed else np.uint32)


# ---- the table --------------------------------------------------------------------

def _unpack(scale, signed, sixteen):
    def f(ty, e):
        _need_u32('unpack')(ty)
        return _unpack_norm(e, scale, signed, sixteen)
    return f


def _atan2(ty, y, x):
    _need_float(ty, 'atan2')
    return _via64(ty, np.arctan2, y, x)


def _pow(ty, x, y):
    _need_float(ty, 'pow')
    return _via64(ty, _pow64, x, y)


def _mix(ty, e1, e2, e3):
    _need_float(ty, 'mix')
    return _via64(ty, lambda a, b, t: a * (1.0 - t) + b * t, e1, e2, e3)


def _smoothstep(ty, edge0, edge1, x):
    _need_float(ty, 'smoothstep')

    def f(a, b, v):
        t = np.clip((v - a) / (b - a), 0.0, 1.0)
        return t * t * (3.0 - 2.0 * t)
    return _via64(ty, f, edge0, edge1, x)


def _unpack2x16float_checked(ty, e):
    _need_u32('unpack2x16float')(ty)
    return _unpack2x16float(ty, e)


_TABLE = {
    'abs': _abs, 'min': _min, 'max': _max, 'clamp': _clamp, 'sign': _sign,
    'saturate': _saturate,
    'floor': _exact_unary(np.floor, 'floor'), 'ceil': _exact_unary(np.ceil, 'ceil'),
    'round': _exact_unary(np.rint, 'round'), 'trunc': _exact_unary(np.trunc, 'trunc'),
    'fract': _fract, 'sqrt': _sqrt, 'step': _step,
    'frexp': _frexp, 'modf': _modf, 'ldexp': _ldexp, 'fma': _fma,
    'inverseSqrt': _f64_unary(lambda x: 1.0 / np.sqrt(x), 'inverseSqrt'),
    'exp': _f64_unary(np.exp, 'exp'), 'exp2': _f64_unary(np.exp2, 'exp2'),
    'log': _f64_unary(np.log, 'log'), 'log2': _f64_unary(np.log2, 'log2'),
    'sin': _f64_unary(np.sin, 'sin'), 'cos': _f64_unary(np.cos, 'cos'),
    'tan': _f64_unary(np.tan, 'tan'), 'asin': _f64_unary(np.arcsin, 'asin'),
    'acos': _f64_unary(np.arccos, 'acos'), 'atan': _f64_unary(np.arctan, 'atan'),
    'sinh': _f64_unary(np.sinh, 'sinh'), 'cosh': _f64_unary(np.cosh, 'cosh'),
    'tanh': _f64_unary(np.tanh, 'tanh'), 'asinh': _f64_unary(np.arcsinh, 'asinh'),
    'acosh': _f64_unary(np.arccosh, 'acosh'), 'atanh': _f64_unary(np.arctanh, 'atanh'),
    'degrees': _f64_unary(lambda x: x * (180.0 / np.pi), 'degrees'),
    'radians': _f64_unary(lambda x: x * (np.pi / 180.0), 'radians'),
    'atan2': _atan2, 'pow': _pow, 'mix': _mix, 'smoothstep': _smoothstep,
    'dot': _dot, 'cross': _cross, 'length': _length, 'distance': _distance,
    'normalize': _normalize, 'faceForward': _face_forward, 'reflect': _reflect,
    'refract': _refract, 'quantizeToF16': _quantize_to_f16, 'select': _select,
    'countOneBits': _count_one_bits, 'countLeadingZeros': _count_leading_zeros,
    'countTrailingZeros': _count_trailing_zeros, 'firstLeadingBit': _first_leading_bit,
    'firstTrailingBit': _first_trailing_bit, 'extractBits': _extract_bits,
    'insertBits': _insert_bits, 'reverseBits': _reverse_bits,
    'dot4I8Packed': lambda ty, a, b: _dot4(ty, a, b, True),
    'dot4U8Packed': lambda ty, a, b: _dot4(ty, a, b, False),
    'pack4x8snorm': lambda ty, e: _pack_norm(ty, e, 127.0, -1.0, _SH8, 8),
    'pack4x8unorm': lambda ty, e: _pack_norm(ty, e, 255.0, 0.0, _SH8, 8),
    'pack2x16snorm': lambda ty, e: _pack_norm(ty, e, 32767.0, -1.0, _SH16, 16),
    'pack2x16unorm': lambda ty, e: _pack_norm(ty, e, 65535.0, 0.0, _SH16, 16),
    'pack2x16float': _pack2x16float,
    'unpack4x8snorm': _unpack(127.0, True, False),
    'unpack4x8unorm': _unpack(255.0, False, False),
    'unpack2x16snorm': _unpack(32767.0, True, True),
    'unpack2x16unorm': _unpack(65535.0, False, True),
    'unpack2x16float': _unpack2x16float_checked,
    'pack4xI8': lambda ty, e: _pack4x8(ty, e, True, False),
    'pack4xU8': lambda ty, e: _pack4x8(ty, e, False, False),
    'pack4xI8Clamp': lambda ty, e: _pack4x8(ty, e, True, True),
    'pack4xU8Clamp': lambda ty, e: _pack4x8(ty, e, False, True),
    'unpack4xI8': lambda ty, e: _unpack4x8int(ty, e, True),
    'unpack4xU8': lambda ty, e: _unpack4x8int(ty, e, False),
}

NAMES = tuple(sorted(_TABLE))


def call(name: str, ty: str, *args, **kwargs):
    """Evaluate WGSL built-in `name` for arguments whose first has scalar type `ty`.
    Returns an ndarray, or (fract, exp) for frexp and (fract, whole) for modf.
    Keyword: `vector=True|False` for length/distance when the lane convention
    (vectors have >= 2 axes) does not apply."""
    fn = _TABLE.get(name)
    if fn is None:
        raise InvalidArgument(f"unknown built-in function {name!r}")
    if ty != 'f64':
        dtypes.check(ty)
    with np.errstate(all='ignore'):
        r = fn(ty, *_lanes(args), **kwargs)
    if isinstance(r, tuple):
        return tuple(np.asarray(x) for x in r)
    return np.asarray(r)
