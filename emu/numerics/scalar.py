"""Bit-exact WGSL scalar arithmetic, conversions, bit casts and literals.

Arrays in, arrays out; operands broadcast like numpy. Every operation is
vectorised (no Python loop per element). Results are numpy arrays of the
operation's result type (dtypes.NP[...]); comparisons give np.bool_.

Float arithmetic is IEEE-754 round-to-nearest-even, one rounding per operation,
subnormals kept (WGSL allows flushing them; we do not), IEEE results for
overflow, division by zero and invalid operations (WGSL makes those
indeterminate; we give the IEEE value). How each type gets one correct rounding:

* f32, f64 (naga's): numpy float32/float64 ufuncs, which are the IEEE operations of the host.
* f16: evaluate in float32, then round to f16. For + - * / and sqrt this double
  rounding is innocuous because 24 >= 2*11 + 2 (S. A. Figueroa, "When is double
  rounding innocuous?", SIGNUM 1995), and for f16 operands every exact result is
  0 or has magnitude in [2^-48, 2^41], inside float32's normal range, so the float32
  step is a plain precision-24 rounding. The tests also check ~1M pairs against
  an exact bracket test.
* bf16: evaluate in float64 (53 >= 2*8 + 2; bf16 operands give exact results in
  [2^-266, 2^261], inside float64's normal range), then one RNE to bf16 through
  round-to-odd (see rounding.py). float32 would not do: bf16 has float32's
  exponent range, so tiny results would meet float32's subnormal rounding first.

NaN results of arithmetic are quiet NaNs with an unspecified payload; conversions
between float types give a quiet NaN with the sign and the top payload bits kept.
"""
from __future__ import annotations

import functools
import re
from decimal import Decimal
from fractions import Fraction

import numpy as np

from ..errors import InvalidArgument
from . import dtypes
from .dtypes import NP, WIDTH, INT_MIN, INT_MAX, FORMAT
from . import rounding

_CMP = {'eq': np.equal, 'ne': np.not_equal, 'lt': np.less, 'le': np.less_equal,
        'gt': np.greater, 'ge': np.greater_equal}


def _quiet(fn):
    """Floating-point exceptions are not errors in WGSL (and signalling NaN inputs raise
    'invalid' on mere widening): silence numpy's warnings for the whole operation."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with np.errstate(all='ignore'):
            return fn(*args, **kwargs)
    return wrapper


def as_type(x, ty: str) -> np.ndarray:
    """`x` as an array of type `ty`. Arrays already of that dtype pass through;
    Python/numpy integers wrap modulo 2^width; float64 rounds once (RNE)."""
    dt = NP[ty]
    a = np.asarray(x)
    if a.dtype == dt:
        return a
    if ty in dtypes.FLOATS and a.dtype == np.float64 and ty != 'f32':
        return rounding.round_f64(a, ty)
    if ty in dtypes.INTS and a.dtype.kind in 'iub':
        return a.astype(np.int64).astype(dt)
    with np.errstate(all='ignore'):
        return a.astype(dt)


# ---- binary -----------------------------------------------------------------------

@_quiet
def binary(op: str, ty: str, a, b) -> np.ndarray:
    """WGSL binary operator `op` on operands of scalar type `ty`.

    bool supports and, or, xor, eq, ne (non-short-circuit & and | of WGSL).
    Shifts take `b` as the shift amount (u32 in WGSL) and use it modulo the bit
    width of `ty`. Integer + - * wrap. Integer division: x / 0 == x and
    MIN / -1 == MIN (signed); x % 0 == 0 and MIN % -1 == 0; quotients truncate
    toward zero and remainders take the sign of the dividend. Float % is fmod:
    the spec's x - y * trunc(x / y) evaluated exactly (it is always representable).
    """
    dtypes.check(ty)
    if op in ('shl', 'shr'):
        return _shift(op, ty, as_type(a, ty), b)
    a = as_type(a, ty)
    b = as_type(b, ty)
    if ty == 'bool':
        return _bool_binary(op, a, b)
    if op in _CMP:
        if ty in ('f16', 'bf16'):         # exact widening; avoids relying on ml_dtypes ufuncs
            a, b = rounding.widen_to_f32(a, ty), rounding.widen_to_f32(b, ty)
        return np.asarray(_CMP[op](a, b))
    if ty in dtypes.FLOATS:
        return _float_binary(op, ty, a, b)
    return _int_binary(op, ty, a, b)


def _bool_binary(op, a, b):
    if op == 'and':
        return np.logical_and(a, b)
    if op == 'or':
        return np.logical_or(a, b)
    if op in ('xor', 'ne'):
        return np.not_equal(a, b)
    if op == 'eq':
        return np.equal(a, b)
    raise InvalidArgument(f"operator {op!r} is not defined on bool")


_FLOAT_UFUNC = {'add': np.add, 'sub': np.subtract, 'mul': np.multiply, 'div': np.divide,
                'rem': np.fmod}


def _float_binary(op, ty, a, b):
    fn = _FLOAT_UFUNC.get(op)
    if fn is None:
        raise InvalidArgument(f"operator {op!r} is not defined on {ty}")
    with np.errstate(all='ignore'):
        if ty in ('f32', 'f64'):
            return np.asarray(fn(a, b))
        if ty == 'f16':
            r = fn(a.astype(np.float32), b.astype(np.float32))
            return np.asarray(r).astype(np.float16)
        # bf16: exact in float64 for + - * and fmod; / rounds once, innocuously.
        r = fn(a.astype(np.float64), b.astype(np.float64))
        return rounding.round_f64(r, ty)


def _int_binary(op, ty, a, b):
    dt = NP[ty]
    with np.errstate(all='ignore'):
        if op == 'add':
            return np.asarray(np.add(a, b), dt)
        if op == 'sub':
            return np.asarray(np.subtract(a, b), dt)
        if op == 'mul':
            return np.asarray(np.multiply(a, b), dt)
        if op == 'and':
            return np.asarray(np.bitwise_and(a, b), dt)
        if op == 'or':
            return np.asarray(np.bitwise_or(a, b), dt)
        if op == 'xor':
            return np.asarray(np.bitwise_xor(a, b), dt)
        if op in ('div', 'rem') and WIDTH[ty] == 64:
            return _int64_divide(op, ty, a, b)
        if op in ('div', 'rem') and ty[0] == 'u':
            # unsigned: numpy's floor division is the truncating one, in the type itself
            a, b = np.asarray(a, dt), np.asarray(b, dt)
            zero = b == 0
            some_zero = bool(zero.any())
            y = np.where(zero, dt.type(1), b) if some_zero else b
            r = np.floor_divide(a, y) if op == 'div' else np.remainder(a, y)
            if some_zero:
                r = np.where(zero, a if op == 'div' else dt.type(0), r)
            return np.asarray(r, dt)
        if op in ('div', 'rem'):
            # int64 holds |MIN| and the wrap of MIN / -1 = 2^31 back to MIN.
            x = a.astype(np.int64)
            y = b.astype(np.int64)
            zero = y == 0
            ys = np.where(zero, 1, y)
            q = np.abs(x) // np.abs(ys)
            q = np.where((x < 0) != (ys < 0), -q, q)
            if op == 'div':
                return np.where(zero, x, q).astype(dt)
            return np.where(zero, 0, x - q * ys).astype(dt)
    raise InvalidArgument(f"operator {op!r} is not defined on {ty}")


def _int64_divide(op, ty, a, b):
    """i64/u64 / and %: as for 32 bits (x / 0 == x, MIN / -1 == MIN, x % 0 == 0, truncating),
    computed in the type itself (no wider numpy integer holds |MIN|)."""
    dt = NP[ty]
    a, b = np.broadcast_arrays(np.asarray(a, dt), np.asarray(b, dt))
    bad = b == 0
    if ty == 'i64':
        bad = bad | ((a == np.iinfo(np.int64).min) & (b == -1))
    y = np.where(bad, dt.type(1), b)
    with np.errstate(all='ignore'):
        q = a // y                               # floor; truncate toward zero instead
        r = a - q * y
        if ty == 'i64':
            fix = (r != 0) & ((a < 0) != (y < 0))
            q = np.where(fix, q + 1, q)
            r = np.where(fix, r - y, r)
    if op == 'div':
        return np.asarray(np.where(bad, a, q), dt)
    return np.asarray(np.where(bad, dt.type(0), r), dt)


def _shift(op, ty, a, b):
    if ty not in dtypes.INTS:
        raise InvalidArgument(f"operator {op!r} is not defined on {ty}")
    dt = NP[ty]
    w = WIDTH[ty]
    s = np.asarray(b).astype(np.int64) & (w - 1)
    if op == 'shl':                                  # on the unsigned pattern: no signed overflow
        ut = dtypes.BITS[ty]
        return np.asarray(np.left_shift(a.view(ut), s.astype(ut)), ut).view(dt)
    return np.asarray(np.right_shift(a, s.astype(dt)), dt)     # arithmetic for signed dtypes


# ---- unary ------------------------------------------------------------------------

@_quiet
def unary(op: str, ty: str, a) -> np.ndarray:
    """'neg' (two's-complement wrap for integers; sign-bit flip for floats, so NaNs keep
    their payload) or 'not' (bitwise complement for integers, logical for bool)."""
    dtypes.check(ty)
    a = as_type(a, ty)
    if op == 'neg':
        if ty in dtypes.FLOATS:
            bt = dtypes.BITS[ty]
            sign = bt.type(1 << (8 * bt.itemsize - 1))
            return np.asarray(a.view(bt) ^ sign).view(NP[ty])
        if ty in dtypes.INTS:
            with np.errstate(all='ignore'):
                return np.asarray(np.negative(a), NP[ty])
    elif op == 'not':
        if ty == 'bool':
            return np.asarray(np.logical_not(a))
        if ty in dtypes.INTS:
            return np.asarray(np.invert(a), NP[ty])
    raise InvalidArgument(f"unary operator {op!r} is not defined on {ty}")


# ---- conversions ------------------------------------------------------------------

def float_bounds_for_int(dst: str, src: str) -> tuple[float, float]:
    """[lo, hi]: the integers of `dst` nearest its ends that float type `src` represents
    exactly (WGSL: the result is the value in dst closest to trunc(x) that is also exactly
    representable in the source float type; so f32 -> i32 tops out at 2^31 - 128 and
    f16 +inf -> i32 gives 65504)."""
    p = FORMAT[src].precision
    top = int(FORMAT[src].max_value)

    def toward_zero(v: int) -> int:
        m = min(abs(v), top)
        drop = max(0, m.bit_length() - p)
        return (m >> drop << drop) * (1 if v >= 0 else -1)
    return float(toward_zero(INT_MIN[dst])), float(toward_zero(INT_MAX[dst]))


def _float_to_int(x, src, dst):
    lo, hi = float_bounds_for_int(dst, src)
    x64 = rounding.to_f64(x, src)
    with np.errstate(invalid='ignore'):
        t = np.clip(np.trunc(x64), lo, hi)
    t = np.where(t == t, t, 0.0)                      # NaN -> 0 (WGSL: indeterminate)
    if dst == 'u64':                                  # (t is in [0, 2^64): int64 would wrap it)
        return t.astype(np.uint64)
    return t.astype(np.int64).astype(NP[dst])


def _int_to_float(x, src, dst, saturate=False):
    x = np.asarray(x)
    if WIDTH[src] == 64:
        # naga's i64/u64: float64 holds them only to 53 bits, so one RNE straight from the
        # integer (numpy's cast to float64 is one; narrower targets round the exact value)
        x64 = x.astype(np.float64)
        if dst == 'f64':
            return x64
        fmt = FORMAT[dst]
        exact = np.frompyfunc(lambda v: float(rounding.round_fraction(Fraction(int(v)), fmt)), 1, 1)
        r = as_type(np.asarray(exact(x), np.float64), dst) if x.size else np.zeros(x.shape, NP[dst])
    else:
        x64 = x.astype(np.int64).astype(np.float64)     # exact: |x| < 2^32
        r = rounding.round_f64(x64, dst)
    if dst == 'f16':
        # WGSL: an integer outside f16's finite range converts to infinity (no extra
        # significand bits to drop, unlike float sources), or saturates if asked.
        big = np.abs(x64) > FORMAT['f16'].max_value
        if big.any():
            lim = FORMAT['f16'].max_value if saturate else np.inf
            r = np.where(big, np.copysign(lim, x64).astype(np.float16), r)
    return r


def _float_to_float(x, src, dst):
    if src == dst:
        return np.asarray(x, NP[dst])
    if dst == 'f64':                   # exact widening (numpy's casts keep NaN payloads and signs)
        return np.asarray(rounding.widen_to_f32(x, src) if src == 'bf16' else x).astype(np.float64)
    if src == 'f64':                   # one RNE from the binary64 value
        return np.asarray(x).astype(np.float32) if dst == 'f32' else rounding.round_f64(x, dst)
    f = rounding.widen_to_f32(x, src)
    if dst == 'f32':
        return f
    if dst == 'f16':
        return rounding.f32_to_f16(f)
    return rounding.f32_to_bf16(f)


@_quiet
def convert(x, src: str, dst: str) -> np.ndarray:
    """WGSL value conversion dst(x) for x of scalar type `src`.

    float -> int: truncate toward zero, then clamp to the nearest value of the
      destination that the source float type represents exactly (the spec's rule:
      f32 1e20 -> i32 2147483520, f16 +inf -> i32 65504); NaN -> 0.
    Results never alias the input (an identity conversion returns a copy).
    int -> float: RNE; for f16 an integer beyond +-65504 gives +-infinity (spec).
    float -> float: RNE, overflow to +-infinity; NaN -> quiet NaN, sign and top payload
      bits kept.
    int -> int: the value modulo 2^width (i32 <-> u32 is a bit reinterpretation).
    bool -> number: 1 or 0; number -> bool: x != 0 (so -0.0 -> false, NaN -> true).
    """
    dtypes.check(src)
    dtypes.check(dst)
    x = as_type(x, src)
    if src == dst:
        return x.copy()
    if src in dtypes.MINIFLOATS or dst in dtypes.MINIFLOATS:
        return _minifloat_convert(x, src, dst, saturate=False)
    if dst == 'bool':
        if src in ('f16', 'bf16'):
            x = rounding.widen_to_f32(x, src)
        return np.asarray(x != 0)
    if src == 'bool':
        if dst == 'bf16':
            return np.where(x, 1.0, 0.0).astype(np.float32).astype(NP[dst])
        return np.where(x, 1, 0).astype(NP[dst])
    if src in dtypes.FLOATS:
        if dst in dtypes.FLOATS:
            return _float_to_float(x, src, dst)
        return _float_to_int(x, src, dst)
    if dst in dtypes.FLOATS:
        return _int_to_float(x, src, dst)
    return x.astype(np.int64).astype(NP[dst])


@_quiet
def convert_native(x, src: str, dst: str) -> np.ndarray:
    """SPIR-V's own conversions (OpConvertSToF, OpUConvert, ...) on an IEEE device: as `convert`,
    except that an integer converts to f16 by IEEE rounding to nearest (u16 65519 -> 65504;
    infinity only from 65520), where WGSL's rule takes any integer past 65504 to infinity.
    Measured on lavapipe (tests/hw/test_vulkan_int16_lavapipe.py)."""
    if src in dtypes.INTS and dst == 'f16':
        # exact in float64 below 2^53 (past it f16 is infinite either way), then one RNE
        return as_type(x, src).astype(np.float64).astype(np.float16)
    return convert(x, src, dst)


@_quiet
def convert_saturating(x, src: str, dst: str) -> np.ndarray:
    """Like convert, but out-of-range values clamp to the destination's range instead
    of wrapping (integer targets) or overflowing to infinity (float targets: finite
    inputs never become infinite; infinities and NaN pass through). Float to integer is
    SPIR-V's saturated conversion: truncate, then clamp to the integer range exactly
    (so 5e9 -> i32 is 2147483647, where WGSL's own conversion gives 2147483520); NaN -> 0."""
    dtypes.check(src)
    dtypes.check(dst)
    x = as_type(x, src)
    if src == dst or dst == 'bool' or src == 'bool':
        return convert(x, src, dst)
    if src in dtypes.MINIFLOATS or dst in dtypes.MINIFLOATS:
        return _minifloat_convert(x, src, dst, saturate=True)
    if dst in dtypes.INTS:
        if src in dtypes.FLOATS:
            wide = np.trunc(np.asarray(x).astype(np.float64))     # exact for every float source
            wide = np.where(np.isnan(wide), 0.0, wide)
            return np.clip(wide, INT_MIN[dst], INT_MAX[dst]).astype(np.int64).astype(NP[dst])
        return np.clip(x.astype(np.int64), INT_MIN[dst], INT_MAX[dst]).astype(NP[dst])
    if src in dtypes.INTS:
        return _int_to_float(x, src, dst, saturate=True)
    r = _float_to_float(x, src, dst)
    if dst == 'f64':
        return r                       # every float widens to f64 exactly
    mx = FORMAT[dst].max_value
    over = np.isinf(r.astype(np.float32)) & np.isfinite(rounding.to_f64(x, src))
    if over.any():
        r = np.where(over, as_type(np.where(r.astype(np.float32) > 0, mx, -mx), dst), r)
    return r


def _minifloat_convert(x, src: str, dst: str, saturate: bool) -> np.ndarray:
    """Conversions from and to the 8- and 4-bit floats, the one decode and encode path of each.
    From e4m3 / e5m2 / e2m1 (any destination): exact to f32 (E4M3's NaN too), then f32's
    conversion (saturating: SPIR-V's clamped float -> integer). To e4m3 / e5m2, as SPV_EXT_float8
    defines them (OpFConvert, OpConvertSToF, OpConvertUToF): the exact value (every source but a
    64-bit integer widens to f64 exactly) rounded once to nearest even; what lies beyond the
    largest finite value after rounding, and infinity, becomes NaN (e4m3, which has no infinity)
    or a signed infinity (e5m2), or with saturate (the SaturatedToLargestFloat8NormalConversionEXT
    decoration) the largest finite value of its sign (448, 57344); NaN stays NaN (e4m3: 0x7F /
    0xFF; e5m2: the quiet 0x7E / 0xFE). To e2m1: not defined (SPV_EXT_ocp_microscaling_types
    gives FP4 no conversion rule emu models; it is only read)."""
    if dst not in dtypes.FP8 and dst in dtypes.MINIFLOATS:
        raise InvalidArgument(f"conversion to {dst} is not defined (4-bit floats are only read)")
    if src in dtypes.MINIFLOATS:
        f = np.asarray(x).astype(np.float32)             # exact: every code is within f32
        if dst not in dtypes.MINIFLOATS:
            return (convert_saturating if saturate else convert)(f, 'f32', dst)
        src, x = 'f32', f
    if src == 'bool':
        v = np.where(x, 1.0, 0.0)
    elif src in dtypes.FLOATS:
        v = rounding.to_f64(x, src)
    else:
        v = np.asarray(x).astype(np.float64)
    r = np.asarray(v.astype(NP[dst]))                     # ml_dtypes: RNE, overflow as above
    if saturate:
        big = ~np.isfinite(r.astype(np.float32)) & ~np.isnan(v)
        if big.any():
            mx = float(np.finfo(NP[dst]).max)
            r = np.where(big, np.where(v > 0, mx, -mx).astype(NP[dst]), r)
    return r


# ---- bitcast ----------------------------------------------------------------------

@_quiet
def bitcast(x, src_ty: str, src_n: int, dst_ty: str, dst_n: int) -> np.ndarray:
    """Reinterpret the bits of a scalar (n == 1, no trailing axis) or vector (trailing
    axis of length n) of `src_ty` as `dst_ty` x dst_n. Component 0 occupies the lowest
    bits (WGSL internal layout is little-endian), e.g. bitcast<u32>(vec2<f16>(a, b))
    has a in bits 0..15."""
    dtypes.check(src_ty)
    dtypes.check(dst_ty)
    if 'bool' in (src_ty, dst_ty):
        raise InvalidArgument("bitcast is not defined on bool")
    if dtypes.SIZE[src_ty] * src_n != dtypes.SIZE[dst_ty] * dst_n:
        raise InvalidArgument(f"bitcast size mismatch: {src_n} x {src_ty} -> {dst_n} x {dst_ty}")
    a = as_type(x, src_ty)
    if src_n == 1:
        a = a[..., None]
    elif a.shape[-1:] != (src_n,):
        raise InvalidArgument(f"bitcast: expected trailing axis {src_n}, got shape {a.shape}")
    lead = a.shape[:-1]
    le = NP[src_ty].newbyteorder('<')
    nbytes = dtypes.SIZE[src_ty] * src_n
    raw = np.array(a, dtype=le, order='C', copy=True).view(np.uint8).reshape(lead + (nbytes,))
    out = raw.view(NP[dst_ty].newbyteorder('<')).astype(NP[dst_ty], copy=False)
    out = out.reshape(lead + (dst_n,))
    return out[..., 0] if dst_n == 1 else out


# ---- literals ---------------------------------------------------------------------

_INT_RE = re.compile(r'^(?P<body>0[xX][0-9a-fA-F]+|0|[1-9][0-9]*)(?P<suf>[iu]?)$')
_DEC_RE = re.compile(r'^(?P<mant>[0-9]*\.[0-9]+|[0-9]+\.[0-9]*|[0-9]+)'
                     r'(?P<exp>[eE][+-]?[0-9]+)?(?P<suf>[fh])?$')
_HEX_RE = re.compile(r'^0[xX](?P<mant>[0-9a-fA-F]*\.[0-9a-fA-F]+|[0-9a-fA-F]+\.[0-9a-fA-F]*|[0-9a-fA-F]+)'
                     r'(?:(?P<exp>[pP][+-]?[0-9]+)(?P<suf>[fh])?)?$')
_SUFFIX_TYPE = {'i': 'i32', 'u': 'u32', 'f': 'f32', 'h': 'f16'}


def _significand(mant: str, base: int, keep: int) -> Fraction:
    """Value of a significand with an optional point, truncated after `keep` significant
    digits (WGSL lets an implementation truncate after 20 decimal or 16 hex digits)."""
    ip, _, fp = mant.partition('.')
    digits = ip + fp
    nz = len(digits) - len(digits.lstrip('0'))
    if len(digits) - nz > keep:
        digits = digits[:nz + keep] + '0' * (len(digits) - nz - keep)
    return Fraction(int(digits or '0', base), base ** len(fp))


def _parse_literal(text: str):
    """WGSL literal text -> (exact value, kind 'bool'|'int'|'float', suffix type or None,
    is_hex_float)."""
    t = text.strip()
    if t in ('true', 'false'):
        return t == 'true', 'bool', 'bool', False
    m = _INT_RE.match(t)
    if m:
        body = m['body']
        v = int(body, 16) if body[:2] in ('0x', '0X') else int(body)
        return Fraction(v), 'int', _SUFFIX_TYPE.get(m['suf']), False
    m = _HEX_RE.match(t)
    if m and ('.' in m['mant'] or m['exp']):
        q = _significand(m['mant'], 16, 16) * Fraction(2) ** int((m['exp'] or 'p0')[1:])
        return q, 'float', _SUFFIX_TYPE.get(m['suf']), True
    m = _DEC_RE.match(t)
    if m and ('.' in m['mant'] or m['exp'] or m['suf']):
        q = _significand(m['mant'], 10, 20) * Fraction(10) ** int((m['exp'] or 'e0')[1:])
        return q, 'float', _SUFFIX_TYPE.get(m['suf']), False
    raise InvalidArgument(f"not a WGSL literal: {text!r}")


def _round_checked(q: Fraction, fmt: dtypes.FloatFormat, name: str, what: str,
                   exact: bool = False) -> Fraction:
    if abs(q) > Fraction(fmt.max_value):
        raise InvalidArgument(f"literal {what} is outside the finite range of {name}")
    r = rounding.round_fraction(q, fmt)
    if exact and r != q:
        raise InvalidArgument(f"literal {what} is not exactly representable in {name}")
    return r


def literal(value, ty: str) -> np.ndarray:
    """A literal as a 0-d array of scalar type `ty`, rounded per WGSL.

    `value` may be:
    * WGSL literal text ('1.5h', '0x1p-3f', '42u', '1e-3', 'true'; a leading '-' is
      accepted and negates the value). A suffix must agree with `ty`. A suffixed float
      rounds once from its exact value; a suffixed hex float must be exact. Unsuffixed
      literals are abstract: AbstractFloat is float64 (one rounding), then converted to
      `ty` (a second rounding, as WGSL specifies); AbstractInt converts to a float
      type through AbstractFloat, as WGSL specifies.
    * a Python int (AbstractInt) or float (AbstractFloat: that float64's exact value),
    * a Fraction or Decimal: an exact value, rounded once,
    * a bool, for ty 'bool'.
    Values outside the finite range of a float type, or outside an integer type's range,
    and non-integers for integer types, raise ValueError (shader-creation errors).
    """
    dtypes.check(ty)
    what = repr(value)
    negative = False
    exact_hex = False
    if isinstance(value, str):
        text = value.strip()
        if text.startswith('-'):
            negative, text = True, text[1:]
        q, kind, suffix, exact_hex = _parse_literal(text)
        if suffix is not None and suffix != ty:
            raise InvalidArgument(f"literal {value!r} has type {suffix}, not {ty}")
        if kind == 'bool':
            if negative:
                raise InvalidArgument(f"not a WGSL literal: {value!r}")
            return np.array(q, np.bool_)
        if kind == 'float' and suffix is None:
            q, kind = _round_checked(q, dtypes.F64, 'AbstractFloat', what), 'abstract'
        elif kind == 'float':
            kind = 'exact'
        q = -q if negative else q
    elif isinstance(value, (bool, np.bool_)):
        if ty != 'bool':
            raise InvalidArgument(f"bool literal {what} used as {ty}")
        return np.array(bool(value), np.bool_)
    elif isinstance(value, (int, np.integer)):
        q, kind = Fraction(int(value)), 'int'
    elif isinstance(value, (float, np.floating)):
        f = float(value)
        if not np.isfinite(f):
            raise InvalidArgument(f"literal {what} is not finite")
        q, kind, negative = Fraction(f), 'abstract', bool(np.signbit(f))
    elif isinstance(value, (Fraction, Decimal)):
        q, kind = Fraction(value), 'exact'
    else:
        raise TypeError(f"literal: unsupported value {what}")

    if ty == 'bool':
        raise InvalidArgument(f"numeric literal {what} used as bool")
    if ty in dtypes.INTS:
        if q.denominator != 1:
            raise InvalidArgument(f"literal {what} is not an integer, cannot be {ty}")
        if not INT_MIN[ty] <= q <= INT_MAX[ty]:
            raise InvalidArgument(f"literal {what} is out of range for {ty}")
        return np.array(int(q), NP[ty])
    if kind == 'int':
        if not -2**63 <= q < 2**63:
            raise InvalidArgument(f"literal {what} is out of range for AbstractInt")
        q = _round_checked(q, dtypes.F64, 'AbstractFloat', what)
    if ty in dtypes.MINIFLOATS:         # SPIR-V's 8/4-bit floats: a value the format holds exactly
        out = np.array(float(q), NP[ty])
        if Fraction(float(out.astype(np.float64))) != q:
            raise InvalidArgument(f"literal {what} is not exactly a {ty} value")
        return -out if negative and q == 0 else out
    r = _round_checked(q, FORMAT[ty], ty, what, exact=exact_hex)
    out = rounding.fraction_to_array(r, ty)
    if r == 0 and negative:
        out = unary('neg', ty, out)
    return out
