"""The compiled form of emu.numerics.scalar's rules, one value at a time (numba), for the fusion
JIT's generated kernels (emu/jit/fuse.py imports this module as `rt`).

scalar.py states each rule over arrays; this is the same rule for one lane, for the types the JIT
covers (bool, i32, u32, f32): integer + - * wrap modulo 2^32; x / 0 == x, MIN / -1 == MIN,
x % 0 == 0, quotients truncate toward zero and remainders take the dividend's sign; shift
amounts are taken modulo 32; f32 arithmetic is the host's IEEE single precision (the generated
code never mixes in float64 and numba does not contract a * b + c into an fma); f32 -> i32 / u32
truncates, clamps to the bounds scalar.float_bounds_for_int gives (2^31 - 128, 2^32 - 256) and
sends NaN to 0. tests/perf/test_fuse.py checks these against scalar.py on special values.
"""
from __future__ import annotations

import numpy as np
from numba import njit
from numba.core import types
from numba.extending import intrinsic

from .scalar import float_bounds_for_int

# not inline="always": numba inlines such a function in its own IR, deep-copying and typing it again at
# every call (1,117 times in llama.cpp's rms_norm kernel: ~20% of its compile); called, each helper
# compiles once per signature, is cached and shared by every kernel, and LLVM optimises the linked
# module as a whole (same bits, tests/perf/test_fuse.py; kernels as fast: bench/vulkan_icd.md)
_inl = dict(cache=True, nogil=True, inline="never", error_model="numpy")


def _float_bits(fty, uty, width: int, doc: str):
    """An intrinsic: the bits of a float of type `fty` as the unsigned integer `uty`."""
    def bits(typingctx, x):
        def codegen(context, builder, signature, args):
            from llvmlite import ir
            return builder.bitcast(args[0], ir.IntType(width))
        return uty(fty), codegen
    bits.__doc__ = doc
    return intrinsic(bits)


f32_bits = _float_bits(types.float32, types.uint32, 32, "The bits of an f32 as a u32.")
f64_bits = _float_bits(types.float64, types.uint64, 64, "The bits of an f64 as a u64.")


@intrinsic
def bits_f32(typingctx, x):
    """The low 32 bits of an integer reinterpreted as an f32."""
    if not isinstance(x, types.Integer):
        return None
    sig = types.float32(x)

    def codegen(context, builder, signature, args):
        from llvmlite import ir
        v = args[0]
        if v.type.width > 32:
            v = builder.trunc(v, ir.IntType(32))
        elif v.type.width < 32:
            v = builder.zext(v, ir.IntType(32))
        return builder.bitcast(v, ir.FloatType())
    return sig, codegen


@njit(**_inl)
def _quotient(x, y):
    """x / y (int64, y != 0) truncated toward zero."""
    q = abs(x) // abs(y)
    if (x < 0) != (y < 0):
        q = -q
    return q


@njit(**_inl)
def _div(x, y):
    """WGSL integer x / y on int64 operands: x / 0 == x, else truncated toward zero."""
    return x if y == 0 else _quotient(x, y)


@njit(**_inl)
def _rem(x, y):
    """WGSL integer x % y on int64 operands: x % 0 == 0, else the dividend's sign."""
    return np.int64(0) if y == 0 else x - _quotient(x, y) * y


@njit(**_inl)
def div_i32(a, b):
    x = np.int64(a)
    if x == -2147483648 and b == -1:
        return np.int32(x)                 # MIN / -1 == MIN
    return np.int32(_div(x, np.int64(b)))


@njit(**_inl)
def rem_i32(a, b):
    return np.int32(_rem(np.int64(a), np.int64(b)))


@njit(**_inl)
def div_u32(a, b):
    return np.uint32(_div(np.int64(a), np.int64(b)))


@njit(**_inl)
def rem_u32(a, b):
    return np.uint32(_rem(np.int64(a), np.int64(b)))


# f32 -> integer clamps: the same bounds as scalar.convert (compile-time constants here)
_I32_LO, _I32_HI = float_bounds_for_int("i32", "f32")
_U32_LO, _U32_HI = float_bounds_for_int("u32", "f32")


@njit(**_inl)
def float_to_int(x, lo, hi, nan):
    """trunc(x) clamped to [lo, hi] as int64, NaN to `nan`: every float -> integer rule of
    scalar.py and nvidia.py, with the bounds the caller takes from them (float_bounds_for_int,
    or the integer's range for a saturating conversion)."""
    t = np.trunc(np.float64(x))
    if t != t:
        return np.int64(nan)
    return np.int64(min(max(t, lo), hi))


@njit(**_inl)
def f32_to_i32(x):
    return np.int32(float_to_int(x, _I32_LO, _I32_HI, 0))


@njit(**_inl)
def f32_to_u32(x):
    return np.uint32(float_to_int(x, _U32_LO, _U32_HI, 0))


@njit(**_inl)
def fminmax_f32(a, b, is_max):
    """WGSL/GLSL f32 max (is_max) or min as builtins.py's _minmax: a NaN operand is ignored (two
    NaNs: the first), -0 < +0."""
    if a != a:
        return a if b != b else b
    if b != b:
        return a
    if a == 0 and b == 0:
        sa = (f32_bits(a) >> np.uint32(31)) != 0
        sb = (f32_bits(b) >> np.uint32(31)) != 0
        neg = (sa and sb) if is_max else (sa or sb)
        return bits_f32(np.uint32(0x80000000) if neg else np.uint32(0))
    if is_max:
        return a if a > b else b
    return a if a < b else b


@njit(**_inl)
def neg_f32(x):
    return bits_f32(f32_bits(x) ^ np.uint32(0x80000000))


# -- the same rules on nvidia-h200 (profile scalar "nvidia-sfu": emu.numerics.nvidia) ------------
# f32 subnormals flush to signed zeros on the way in and out, every NaN produced is 0x7FFFFFFF.

@njit(**_inl)
def nv_ftz(x):
    b = f32_bits(x)
    return bits_f32(b & np.uint32(0x80000000)) if (b & np.uint32(0x7F800000)) == 0 else x


@njit(**_inl)
def nv_canon(x):
    return bits_f32(np.uint32(0x7FFFFFFF)) if x != x else x


@njit(**_inl)
def nv_out(x):
    return nv_canon(nv_ftz(x))


@njit(**_inl)
def nv_add(a, b):
    return nv_out(np.float32(nv_ftz(a) + nv_ftz(b)))


@njit(**_inl)
def nv_sub(a, b):
    return nv_out(np.float32(nv_ftz(a) - nv_ftz(b)))


@njit(**_inl)
def nv_mul(a, b):
    return nv_out(np.float32(nv_ftz(a) * nv_ftz(b)))


@njit(**_inl)
def nv_neg(x):
    return nv_out(neg_f32(nv_ftz(x)))


@njit(**_inl)
def nv_abs(x):
    return nv_out(bits_f32(f32_bits(nv_ftz(x)) & np.uint32(0x7FFFFFFF)))


@njit(**_inl)
def fma_f32(a, b, c):
    """a * b + c rounded once to f32 (IEEE fusedMultiplyAdd): the product is exact in float64; the
    sum's rounding error (TwoSum) decides the one case float64 cannot, a sum exactly halfway
    between two f32 values."""
    p = np.float64(a) * np.float64(b)
    s = p + np.float64(c)
    bb = s - p
    err = (p - (s - bb)) + (np.float64(c) - bb)
    r = np.float32(s)
    if err != 0.0 and np.float64(r) != s and s - s == 0.0:
        other = np.nextafter(r, np.float32(np.inf) if np.float64(r) < s else np.float32(-np.inf))
        if (np.float64(r) + np.float64(other)) * 0.5 == s:         # a tie that err breaks
            r = max(r, other) if err > 0.0 else min(r, other)
    return r


@njit(**_inl)
def nv_fma(a, b, c):
    return nv_out(fma_f32(nv_ftz(a), nv_ftz(b), nv_ftz(c)))


@njit(**_inl)
def nv_f32_to_i32(x):
    """NaN converts to the low end of the range (-2^31) on the H200."""
    return np.int32(-2147483648) if x != x else f32_to_i32(x)


@njit(**_inl)
def nv_native_f32_to_i32(x):
    """SPIR-V's conversion on the H200 (emu.numerics.nvidia.convert_native): saturating, NaN -> 0."""
    return np.int32(float_to_int(x, -2147483648.0, 2147483647.0, 0))


@njit(**_inl)
def nv_native_f32_to_u32(x):
    return np.uint32(float_to_int(x, 0.0, 4294967295.0, 0))


@njit(**_inl)
def nv_rcp(x, tab):
    """MUFU.RCP as emu.numerics.sfu.rcp states it; `tab`: sfu.table("rcp"), the measured 1/m per
    mantissa m (its exponent field relative to m's)."""
    u = np.int64(f32_bits(x))
    s, e_in, m = u >> 31, (u >> 23) & 0xFF, u & 0x7FFFFF
    t = np.int64(tab[m])
    e = ((t >> 23) & 0xFF) - (e_in - 127)
    out = np.int64(0) if e <= 0 else (np.int64(0x7F800000) if e >= 255 else (e << 23) | (t & 0x7FFFFF))
    if e_in == 0:
        out = np.int64(0x7F800000)
    if e_in == 255:
        out = np.int64(0) if m == 0 else np.int64(0x7FFFFFFF)
    if out != 0x7FFFFFFF:
        out |= s << 31
    return bits_f32(np.uint32(out))


@njit(**_inl)
def nv_rsq(x, tab):
    """MUFU.RSQ as emu.numerics.sfu.rsq states it, then flushed and canonical (nvidia's
    inverseSqrt); `tab`: sfu.table("rsq"), the measured 1/sqrt over [1, 4)."""
    u = np.int64(f32_bits(x))
    s, e_in, m = u >> 31, (u >> 23) & 0xFF, u & 0x7FFFFF
    ue = e_in - 127
    odd = ue & 1
    t = np.int64(tab[m + (odd << 23)])
    e = ((t >> 23) & 0xFF) - ((ue - odd) >> 1)
    out = np.int64(0) if e <= 0 else (min(e, np.int64(254)) << 23) | (t & 0x7FFFFF)
    if e_in == 0:
        out = np.int64(0x7F800000)
    if e_in == 255:
        out = np.int64(0) if m == 0 else np.int64(0x7FFFFFFF)
    if s == 1 and e_in != 0 and out != 0x7FFFFFFF:
        out = np.int64(0x7FFFFFFF)
    if s == 1 and e_in == 0:
        out = np.int64(0xFF800000)
    return nv_out(bits_f32(np.uint32(out)))


@njit(**_inl)
def _bits_rz32(v):
    """f32 bits of the float64 v rounded toward zero (sfu._rz32)."""
    r = np.float32(v)
    b = np.int64(f32_bits(r))
    if abs(np.float64(r)) > abs(v):
        b -= 1                              # one step toward zero (an infinity: the largest finite)
    return b


@njit(**_inl)
def nv_ex2(x, tab):
    """MUFU.EX2 as emu.numerics.sfu.ex2 states it; `tab`: sfu.table("ex2")."""
    u = np.int64(f32_bits(x))
    s, e_in, m = u >> 31, (u >> 23) & 0xFF, u & 0x7FFFFF
    if e_in == 255:
        out = np.int64(0x7FFFFFFF) if m != 0 else (np.int64(0) if s == 1 else np.int64(0x7F800000))
    elif e_in - 127 > 8:
        out = np.int64(0) if s == 1 else np.int64(0x7F800000)
    else:
        shift = e_in - 127
        a = np.int64(0)
        if e_in != 0:
            mant = m | (1 << 23)
            a = mant << shift if shift >= 0 else mant >> min(-shift, np.int64(63))
        ip, fr = a >> 23, a & 0x7FFFFF
        e, k = ip, fr
        if s == 1:
            e = -ip if fr == 0 else -ip - 1
            k = 0x7FFFFF - fr if fr != 0 else fr
        eb = e + 127
        out = np.int64(0x7F800000) if eb >= 255 else (np.int64(0) if eb <= 0 else (eb << 23) | np.int64(tab[k]))
    return bits_f32(np.uint32(out))


@njit(**_inl)
def nv_lg2(x, tab, tab_neg1):
    """MUFU.LG2 as emu.numerics.sfu.lg2 states it; sfu.table("lg2") and ("lg2_neg1")."""
    u = np.int64(f32_bits(x))
    s, e_in, m = u >> 31, (u >> 23) & 0xFF, u & 0x7FFFFF
    e = np.float64(e_in - 127)
    p = np.float64(bits_f32(np.uint32(tab[m])))
    if e >= 0:
        out = _bits_rz32(e + p)
    else:
        a = -e - p
        r = _bits_rz32(a)
        if np.float64(bits_f32(np.uint32(r))) == a and r != 0:
            r -= 1
        out = r ^ np.int64(0x80000000)              # -r
    if e_in - 127 == -1 and tab_neg1[m] != np.uint32(0xFFFFFFFF):
        out = np.int64(tab_neg1[m])
    if e_in == 0:
        out = np.int64(0xFF800000)
    if e_in == 255:
        out = np.int64(0x7F800000) if m == 0 else np.int64(0x7FFFFFFF)
    if s == 1 and e_in != 0:
        out = np.int64(0x7FFFFFFF)
    return bits_f32(np.uint32(out))


@njit(**_inl)
def nv_sincos(x, quarter, tab):
    """MUFU.SIN (quarter 0) or COS (quarter 2^23) of x, after the driver's FMUL.RZ by 1/(2 pi)
    (emu.numerics.sfu._sincos); `tab`: sfu.table("sin")."""
    u = np.int64(f32_bits(x))
    s, e_in = u >> 31, (u >> 23) & 0xFF
    ax = np.float64(0.0) if e_in == 0 else abs(np.float64(x))
    r = np.float64(bits_f32(np.uint32(_bits_rz32(ax * np.float64(np.float32(0.15915493667125701904))))))
    if not np.isfinite(r):
        return bits_f32(np.uint32(0x7FFFFFFF))
    q = (np.int64(np.floor((r - np.floor(r)) * (1 << 25))) + quarter) % (1 << 25)
    out = np.int64(tab[q])
    if quarter == 0:
        out ^= s << 31
    return bits_f32(np.uint32(out))


@njit(**_inl)
def nv_tanh(x, ex2_tab, rcp_tab):
    """The H200's tanh, CUDA's tanhf (nvidia._tanh): 1 - 2 / (EX2(2|x| log2 e) + 1) for
    |x| >= 0.6 (1 from 9.0109) with x's sign, else x + x^3 * p(x^2); flushed, NaNs canonical."""
    x = nv_ftz(x)
    ax = abs(x)
    e = nv_ex2(nv_mul(ax, bits_f32(np.uint32(0x4038AA3B))), ex2_tab)
    big = nv_fma(nv_rcp(nv_add(e, np.float32(1.0)), rcp_tab), np.float32(-2.0), np.float32(1.0))
    if ax >= bits_f32(np.uint32(0x41102CB4)):
        big = np.float32(1.0)
    big = bits_f32((f32_bits(big) & np.uint32(0x7FFFFFFF)) | (f32_bits(x) & np.uint32(0x80000000)))
    x2 = nv_mul(x, x)
    p = nv_fma(bits_f32(np.uint32(0x3C80F082)), x2, bits_f32(np.uint32(0xBD563CAE)))
    p = nv_fma(p, x2, bits_f32(np.uint32(0x3E085941)))
    p = nv_fma(p, x2, bits_f32(np.uint32(0xBEAAA9ED)))
    p = nv_fma(p, x2, np.float32(0.0))
    small = nv_fma(p, x, x)
    return nv_out(big if ax >= bits_f32(np.uint32(0x3F19999A)) else small)


@njit(**_inl)
def nv_div(a, b, tab):
    """x / y = x * RCP(y) (emu.numerics.nvidia.binary)."""
    return nv_mul(a, nv_rcp(nv_ftz(b), tab))


@njit(**_inl)
def nv_rem(a, b, tab):
    """x % y = fma(-y, trunc(x * RCP(y)), x); an exact zero or NaN remainder takes x's sign when x
    is a nonzero number (emu.numerics.nvidia.binary and _signed_like)."""
    af, bf = nv_ftz(a), nv_ftz(b)
    q = np.float32(np.trunc(nv_mul(a, nv_rcp(bf, tab))))
    raw = fma_f32(neg_f32(bf), nv_ftz(q), af)
    r = nv_out(raw)
    if raw == 0 or raw != raw:
        sa = f32_bits(af) & np.uint32(0x80000000) if (af != 0 and af == af) else np.uint32(0)
        r = bits_f32((f32_bits(r) & np.uint32(0x7FFFFFFF)) | sa)
    return r


# ---- f16, held as its bits (u16): only converted to and from f32 (loads, stores, conversions) ----

@njit(**_inl)
def f16_to_f32(h):
    """f16 bits -> f32, exact; a NaN stays quiet with its sign and payload (rounding.widen_to_f32)."""
    u = np.uint32(h)
    s = (u & np.uint32(0x8000)) << np.uint32(16)
    e = (u >> np.uint32(10)) & np.uint32(0x1F)
    m = u & np.uint32(0x3FF)
    if e == 0x1F:
        if m == 0:
            return bits_f32(s | np.uint32(0x7F800000))
        return bits_f32(s | np.uint32(0x7FC00000) | (m << np.uint32(13)))
    if e == 0:          # zero or subnormal: m * 2^-24, exact in f32
        v = np.float32(m) * np.float32(5.9604644775390625e-08)
        return bits_f32(s | f32_bits(v))
    return bits_f32(s | ((e + np.uint32(112)) << np.uint32(23)) | (m << np.uint32(13)))


@njit(**_inl)
def nv_canon_f16(h):
    """f16 bits with a NaN made the canonical 0x7FFF (nvidia.canon)."""
    if (h & np.uint16(0x7C00)) == np.uint16(0x7C00) and (h & np.uint16(0x3FF)) != 0:
        return np.uint16(0x7FFF)
    return h


@njit(**_inl)
def nv_f16_to_f32(h):
    """The H200's f16 -> f32: exact, every NaN the canonical 0x7FFFFFFF (nvidia.convert)."""
    u = np.uint32(h)
    if (u & np.uint32(0x7C00)) == np.uint32(0x7C00) and (u & np.uint32(0x3FF)) != 0:
        return bits_f32(np.uint32(0x7FFFFFFF))
    return f16_to_f32(h)


@njit(**_inl)
def _f32_to_f16(x, nan):
    """f32 -> f16 bits, round to nearest even, infinity from 65520 on. A NaN: `nan` (the
    canonical one) where >= 0, else sign, quiet bit and the top payload bits (rounding.f32_to_f16)."""
    u = f32_bits(x)
    s = np.uint16((u >> np.uint32(16)) & np.uint32(0x8000))
    a = u & np.uint32(0x7FFFFFFF)
    if a > np.uint32(0x7F800000):
        if nan >= 0:
            return np.uint16(nan)
        return np.uint16(s | np.uint16(0x7E00) | np.uint16((u >> np.uint32(13)) & np.uint32(0x3FF)))
    if a >= np.uint32(0x477FF000):
        return np.uint16(s | np.uint16(0x7C00))
    if a < np.uint32(0x38800000):   # below f16's smallest normal: a multiple of 2^-24, RNE
        m = np.rint(np.float64(bits_f32(a)) * 16777216.0)
        return np.uint16(s | np.uint16(np.int64(m)))
    h = (((a >> np.uint32(23)) - np.uint32(112)) << np.uint32(10)) | ((a >> np.uint32(13)) & np.uint32(0x3FF))
    rest = a & np.uint32(0x1FFF)
    if rest > np.uint32(0x1000) or (rest == np.uint32(0x1000) and (h & np.uint32(1)) != 0):
        h += np.uint32(1)
    return np.uint16(s | np.uint16(h))


@njit(**_inl)
def f32_to_f16(x):
    """f16(x) on an IEEE device (scalar.convert and convert_native): RNE, infinity past the range,
    NaN payload kept."""
    return _f32_to_f16(x, -1)


@njit(**_inl)
def nv_f32_to_f16(x):
    """The H200's f32 -> f16 (nvidia.convert and convert_native): RNE, NaN -> 0x7FFF."""
    return _f32_to_f16(x, 0x7FFF)


# ---- f16 arithmetic and the conversions between integers and f16 ---------------------------------
# An f16 operation is the f32 operation on the exact widened operands, rounded once to f16
# (scalar._float_binary: the double rounding is innocuous); `nan`: -1 on an IEEE device (a NaN's
# sign and payload kept, as numpy's float16 cast keeps them from the quiet f32 NaN), 0x7FFF on the
# H200 (nvidia.binary: every NaN canonical).

@njit(**_inl)
def f16_add(a, b, nan):
    return _f32_to_f16(np.float32(f16_to_f32(a) + f16_to_f32(b)), nan)


@njit(**_inl)
def f16_sub(a, b, nan):
    return _f32_to_f16(np.float32(f16_to_f32(a) - f16_to_f32(b)), nan)


@njit(**_inl)
def f16_mul(a, b, nan):
    return _f32_to_f16(np.float32(f16_to_f32(a) * f16_to_f32(b)), nan)


@njit(**_inl)
def f16_div(a, b):
    """x / y on an IEEE device (scalar.binary)."""
    return _f32_to_f16(np.float32(f16_to_f32(a) / f16_to_f32(b)), -1)


@njit(**_inl)
def nv_hz(r):
    """An SFU result to f16 as its .F16 forms give it (nvidia._hz): rounded to nearest, then one
    step toward zero where that rounded away from zero; 2^16 and beyond: infinity; NaN canonical."""
    t = _f32_to_f16(r, 0x7FFF)
    if (t & np.uint16(0x7C00)) != np.uint16(0x7C00) and abs(f16_to_f32(t)) > abs(r):
        t = np.uint16(t - np.uint16(1))
    if abs(r) >= np.float32(65536.0):
        t = np.uint16(0xFC00) if r < 0 else np.uint16(0x7C00)
    return t


@njit(**_inl)
def nv_f16_div(a, b, tab):
    """x / y on the H200 (nvidia.binary): HMUL(x, the f16 form of MUFU.RCP(y)); `tab`: rcp's."""
    return f16_mul(a, nv_hz(nv_rcp(f16_to_f32(b), tab)), 0x7FFF)


@njit(**_inl)
def ro_f64_to_f32(s):
    """float64 -> float32 rounded to odd (rounding.ro_f64_to_f32): toward zero, and where inexact
    the last significand bit set; overflow gives +-MAX."""
    r = np.float32(s)
    d = np.float64(r)
    if d == s or s != s:
        return r
    b = f32_bits(r)
    if abs(d) > abs(s):                 # rounded away from zero: one step back in magnitude
        b = np.uint32(b - np.uint32(1))
    return bits_f32(b | np.uint32(1))


@njit(**_inl)
def f16_fma(a, b, c, nan):
    """a * b + c rounded once to f16 (builtins._fma: the product exact in float64, the sum made
    exact by TwoSum and rounded to odd at 53 bits, then to odd at 24, then to nearest even)."""
    x, y, z = np.float64(f16_to_f32(a)), np.float64(f16_to_f32(b)), np.float64(f16_to_f32(c))
    p = x * y
    s = p + z
    bv = s - p
    err = (p - (s - bv)) + (z - bv)
    if err != 0.0 and s - s == 0.0 and (f64_bits(s) & np.uint64(1)) == 0:
        s = np.nextafter(s, np.inf if err > 0.0 else -np.inf)
    return _f32_to_f16(ro_f64_to_f32(s), nan)


@njit(**_inl)
def int_to_f16(x, wgsl):
    """An integer (of 64 bits or fewer) -> f16 bits, rounded to nearest even: SPIR-V's
    OpConvertSToF / OpConvertUToF (scalar.convert_native, nvidia.convert_native: infinity from
    65520 on); `wgsl`: WGSL's f16(x) (scalar.convert), any integer past +-65504 infinite. Through
    f32: an integer float32 does not hold exactly is past 2^24, infinite in f16 either way."""
    v = np.float64(x)
    if wgsl and abs(v) > 65504.0:
        return np.uint16(0xFC00) if v < 0 else np.uint16(0x7C00)
    return _f32_to_f16(np.float32(v), -1)


# ---- 32-bit integer bit functions (builtins.py's, on the value's unsigned bits) ------------------

@njit(**_inl)
def bit_length32(u):
    """The number of significant bits of u (0 for 0)."""
    u = np.uint32(u)
    n = np.int64(0)
    while u != 0:
        u = np.uint32(u >> np.uint32(1))
        n += 1
    return n


@njit(**_inl)
def trailing_zeros32(u):
    """countTrailingZeros: 32 for 0."""
    u = np.uint32(u)
    if u == 0:
        return np.int64(32)
    return bit_length32(u & (~u + np.uint32(1))) - 1


@njit(**_inl)
def one_bits32(u):
    """countOneBits."""
    u = np.uint32(u)
    n = np.int64(0)
    while u != 0:
        u = np.uint32(u & (u - np.uint32(1)))
        n += 1
    return n
