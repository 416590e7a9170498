"""The scalar arithmetic and WGSL builtins of NVIDIA's Vulkan driver on an H200 (profile field
``scalar: "nvidia-sfu"``), each a rule measured on the device (tests/data/hw/h200/builtins.npz).

    binary(op, ty, a, b), unary(op, ty, a), convert(x, src, dst), call(name, ty, *args)

take and return what emu.numerics.scalar / emu.numerics.builtins do, and differ from them so:
* f32 flushes subnormals to zero (keeping the sign) on the way in and out of every arithmetic
  operation and builtin (min/max/clamp and the bit-exact ones that move no value excepted);
  f16 keeps its subnormals.
* Every NaN an operation produces is the canonical NaN, 0x7FFFFFFF (f16: 0x7FFF).
* The builtins are the instruction sequences the driver emits around the special function unit
  (emu.numerics.sfu): exp2 = EX2, exp = EX2(x * log2(e)), log2 = LG2, log = LG2(x) * ln 2,
  inverseSqrt = RSQ, sqrt = SQRT, sin/cos = SIN/COS(RZ(x / 2pi)), tan = sin * RCP(cos),
  pow(x, y) = EX2(y * LG2(x)), x / y = x * RCP(y), tanh as CUDA's tanhf (EX2 and RCP for
  |x| >= 0.6, an odd polynomial below), sinh/cosh = (exp(x) -+ exp(-x)) * 0.5; dot products
  y*y first then fma x, z, w; length = SQRT(dot), normalize = v * RSQ(dot), mix = fma(t, b - a, a).
* f16 is half arithmetic around the unit's .F16 forms, which truncate (exp2, exp, sqrt,
  inverseSqrt, sin, cos, tan, pow, 1/x); log2, sinh, cosh round the f32 result to nearest;
  tanh is MUFU.TANH.F16, a measured table over all 65,536 inputs.
* asin, acos, atan, atan2, asinh, acosh, atanh: CUDA 11 libdevice's sequences (polynomials and a
  rational atan, log1p for the hyperbolics) with RCP/SQRT for its IEEE reciprocals and roots;
  f16 evaluates them in f32 and rounds once. refract: fma(-(eta*eta), fma(-d, d, 1), 1) and
  fma(eta, i, -(fma(eta, d, sqrt(k)) * n)). f16 vec4 dot: (x*x' fma w) + (y*y' fma z).
* x % y: a zero remainder (and an f32 NaN one) carries the sign of x when x is a nonzero number.
Anything not named here is the IEEE result of emu.numerics.builtins with those two rules applied.
"""
from __future__ import annotations

import numpy as np

from . import builtins as _ieee
from . import dtypes, sfu
from . import scalar as _scalar
from .scalar import as_type

_NAN = {"f32": np.uint32(0x7FFFFFFF), "f16": np.uint16(0x7FFF)}
L2E = np.float32(1.4426950408889634)
LN2 = np.float32(0.6931471805599453)


# ---- the two rules --------------------------------------------------------------------------

def ftz(x, ty):
    """f32 subnormals as signed zeros (other types unchanged)."""
    x = as_type(x, ty)
    if ty != "f32":
        return x
    u = x.view(np.uint32)
    return np.where((u & 0x7F800000) == 0, u & np.uint32(0x80000000), u).astype(np.uint32).view(np.float32)


def reduce_minmax(fn, ty, a, b):
    """min / max as a cooperative-matrix reduction combines (VK_NV_cooperative_matrix2): f32
    subnormal results flush to signed zeros, unlike scalar min/max (measured: rows of f32
    subnormals reduce to -0.0 / +0.0, tests/data/hw/h200/vulkan_nv2_subnormal_runs.npz)."""
    return ftz(call(fn, ty, a, b), ty)


def canon(r, ty):
    """Every NaN as the canonical NaN of its type."""
    r = np.asarray(r)
    if ty not in _NAN:
        return r
    r = as_type(r, ty)
    bt = dtypes.BITS[ty]
    u = r.view(bt)
    with np.errstate(invalid="ignore"):
        nan = np.isnan(r.astype(np.float32))
    return np.where(nan, _NAN[ty], u).astype(bt).view(dtypes.NP[ty])


def _out(r, ty):
    return canon(ftz(r, ty), ty) if ty in _NAN else np.asarray(r)


def _f(x, ty):
    return ftz(as_type(x, ty), ty)


def _mul(a, b):            # FMUL.FTZ
    with np.errstate(all="ignore"):
        return _out(np.multiply(ftz(a, "f32"), ftz(b, "f32"), dtype=np.float32), "f32")


def _add(a, b):
    with np.errstate(all="ignore"):
        return _out(np.add(ftz(a, "f32"), ftz(b, "f32"), dtype=np.float32), "f32")


def _fma(a, b, c):
    return _out(_ieee.call("fma", "f32", ftz(a, "f32"), ftz(b, "f32"), ftz(c, "f32")), "f32")


# ---- operators ------------------------------------------------------------------------------

def binary(op, ty, a, b):
    if ty not in _NAN or op in ("eq", "ne", "lt", "le", "gt", "ge"):
        return _scalar.binary(op, ty, a, b)
    if ty == "f32" and op == "rem":          # fma(-b, trunc(a * rcp(b)), a); zeros, NaNs: a's sign
        q = np.trunc(_mul(as_type(a, ty), sfu.rcp(_f(b, ty))))
        raw = _ieee.call("fma", "f32", _scalar.unary("neg", ty, _f(b, ty)), ftz(q, ty), _f(a, ty))
        return _signed_like(_out(raw, ty), raw, a, ty)
    if ty == "f32" and op == "div":
        return _mul(as_type(a, ty), sfu.rcp(_f(b, ty)))
    if ty == "f16" and op == "rem":
        q = np.trunc(_hmul(a, _hz(sfu.rcp(_w(b))))).astype(np.float16)      # a zero takes a's sign
        raw = _ieee.call("fma", "f16", _scalar.unary("neg", ty, _h(b)), q, _h(a))
        return _signed_like(canon(raw, ty), raw, a, ty)
    if ty == "f16" and op == "div":
        return _hmul(a, _hz(sfu.rcp(_w(b))))
    return _out(_scalar.binary(op, ty, _f(a, ty), _f(b, ty)), ty)


def _signed_like(r, raw, a, ty):
    """The remainder's exact zeros and (f32) NaNs carry the sign of the dividend when the dividend
    is a nonzero number (an f32 subnormal counts as zero; a NaN or zero dividend leaves them
    positive); a result flushed to zero keeps its own sign. Measured: -4e11 % -1 is -0, -0 % 3
    (f16) is +0, -NaN % 1 is 0x7FFFFFFF, -1.5 % 0 is 0xFFFFFFFF. ``raw``: the fma before flushing."""
    bt = np.dtype(dtypes.BITS[ty]).type
    sign = bt(1 << (8 * np.dtype(bt).itemsize - 1))
    u = np.asarray(r).view(bt)
    with np.errstate(invalid="ignore"):
        hit = np.asarray(raw == 0) | (np.isnan(np.asarray(raw, np.float32)) if ty == "f32" else False)
        av = _f(a, ty)
        numeric = (av != 0) & ~np.isnan(av.astype(np.float32))
    sa = np.broadcast_to(np.where(numeric, av.view(bt) & sign, 0), u.shape)
    return np.where(hit, (u & bt(sign - 1)) | sa, u).astype(bt).view(dtypes.NP[ty])


def unary(op, ty, a):
    if ty in _NAN and op == "neg":
        return _out(_scalar.unary(op, ty, _f(a, ty)), ty)
    return _scalar.unary(op, ty, a)


def convert(x, src, dst):
    if src in _NAN and dst in ("i32", "u32"):
        return _to_int(_f(x, src), src, dst)
    r = _scalar.convert(_f(x, src) if src in _NAN else x, src, dst)
    return _out(r, dst) if dst in _NAN else r


def convert_native(x, src, dst):
    """SPIR-V's own conversions (OpFConvert, OpConvertFToS...) as the driver compiles them, of
    scalars and of cooperative-matrix elements alike (WGSL's go through Tint's clamp: convert):
    float -> float rounds to nearest with every NaN canonical (f16 subnormals kept); float -> int
    truncates and saturates to the integer's range, NaN -> 0 (1e10 -> i32 2147483647, +inf f16 ->
    2147483647); int -> float rounds to nearest (i32 65519 -> f16 65504; infinity only from 65520).
    Measured through Vulkan on the H200: every case of tests/data/hw/h200/conversions*.npz
    (matrix elements) and scalar_conversions.npz (scalars; the same bits), emu.hw.convert_record."""
    if src in dtypes.INTS and dst == "f16":
        with np.errstate(over="ignore"):
            return np.asarray(as_type(x, src)).astype(np.float64).astype(np.float16)
    if src in _NAN and dst in dtypes.INTS:
        return _scalar.convert_saturating(x, src, dst)
    r = _scalar.convert(x, src, dst)
    return canon(r, dst) if dst in _NAN else r


# ---- builtins -------------------------------------------------------------------------------

def _via_f32(fn, *args):
    """An f16 builtin the driver evaluates in f32: widen, the f32 sequence, round to f16 once."""
    from .rounding import f32_to_f16, widen_to_f32
    r = fn(*(widen_to_f32(as_type(a, "f16"), "f16") for a in args))
    return canon(f32_to_f16(np.asarray(r, np.float32)), "f16")


def _tanh(x):
    """CUDA's tanhf, which the driver's tanh is: 1 - 2 / (EX2(2|x| log2 e) + 1) for |x| >= 0.6
    (1 from 9.0109), else x + x^3 * p(x^2)."""
    x = ftz(x, "f32")
    ax = np.abs(x)
    e = sfu.ex2(_mul(ax, _c(0x4038AA3B)))
    big = _fma(sfu.rcp(_add(e, np.float32(1))), np.float32(-2), np.float32(1))
    big = np.where(ax >= _c(0x41102CB4), np.float32(1), big)
    big = np.copysign(big, x).astype(np.float32)
    x2 = _mul(x, x)
    p = _fma(_c(0x3C80F082), x2, _c(0xBD563CAE))
    p = _fma(p, x2, _c(0x3E085941))
    p = _fma(p, x2, _c(0xBEAAA9ED))
    p = _fma(p, x2, np.float32(0))
    small = _fma(p, x, x)
    return _out(np.where(ax >= _c(0x3F19999A), big, small), "f32")


def _c(bits):
    return np.uint32(bits).view(np.float32)


_F32 = {
    "exp2": lambda x: sfu.ex2(x),
    "exp": lambda x: sfu.ex2(_mul(x, L2E)),
    "log2": lambda x: sfu.lg2(x),
    "log": lambda x: _mul(sfu.lg2(x), LN2),
    "inverseSqrt": lambda x: sfu.rsq(x),
    "sqrt": lambda x: sfu.sqrt(x),
    "sin": lambda x: sfu.sin(x),
    "cos": lambda x: sfu.cos(x),
    "tan": lambda x: _mul(sfu.sin(x), sfu.rcp(sfu.cos(x))),
    "tanh": _tanh,
    "pow": lambda x, y: sfu.ex2(_mul(y, sfu.lg2(x))),
}


# f16: half arithmetic (HMUL, RN) around the unit's f16 forms, which truncate their f32 result
def _h(x):
    return as_type(x, "f16")


def _w(x):
    from .rounding import widen_to_f32
    return widen_to_f32(_h(x), "f16")


def _hz(r):
    """An SFU result to f16 as its .F16 forms give it: truncated toward zero; 2^16 and beyond: inf."""
    r = np.asarray(r, np.float32)
    with np.errstate(all="ignore"):
        t = r.astype(np.float16)
        over = (np.abs(t.astype(np.float32)) > np.abs(r)) & np.isfinite(t)
        t = np.where(over, np.nextafter(t, np.float16(0)), t)
        t = np.where(np.abs(r) >= 65536, np.copysign(np.float16(np.inf), r), t)
    return canon(t.astype(np.float16), "f16")


def _hrn(r):
    from .rounding import f32_to_f16
    return canon(f32_to_f16(np.asarray(r, np.float32)), "f16")


def _hmul(a, b):
    with np.errstate(all="ignore"):
        return canon((_w(a) * _w(b)).astype(np.float16), "f16")


def _hc(v):
    return np.float16(v)


def _h_sin(x, quarter):
    r = _w(_hmul(x, _hc(0.15915494309189535)))
    return _hz(sfu.sin_rev(r) if not quarter else sfu.cos_rev(r))


def _h_tanh(x):
    """MUFU.TANH.F16: a measured table over all 65,536 inputs."""
    return sfu.table_f16("tanh_f16")[_h(x).view(np.uint16)].view(np.float16)


def _h_lg2(x):
    """MUFU.LG2.F16: the f32 LG2 truncated to f16 (f16 log is it times f16(ln 2), an HMUL2 that
    emu.isa.compiler's expand-log leaves open to fusing as the builtin `lg2_f16`)."""
    return _hz(sfu.lg2(_w(x)))


_F16 = {
    "exp2": lambda x: _hz(sfu.ex2(_w(x))),
    "exp": lambda x: _hz(sfu.ex2(_w(_hmul(x, _hc(1.4426950408889634))))),
    "log2": lambda x: _hrn(sfu.lg2(_w(x))),
    "lg2_f16": _h_lg2,
    "log": lambda x: _hmul(_h_lg2(x), _hc(0.6931471805599453)),
    "inverseSqrt": lambda x: _hz(sfu.rsq(_w(x))),
    "sqrt": lambda x: _hz(sfu.sqrt(_w(x))),
    "sin": lambda x: _h_sin(x, False),
    "cos": lambda x: _h_sin(x, True),
    "tan": lambda x: _hmul(_h_sin(x, False), _hz(sfu.rcp(_w(_h_sin(x, True))))),
    "tanh": _h_tanh,
    "pow": lambda x, y: _hz(sfu.ex2(_w(_hmul(y, _hz(sfu.lg2(_w(x))))))),
    "degrees": lambda x: _hmul(x, _hc(57.29577951308232)),
    "radians": lambda x: _hmul(x, _hc(0.017453292519943295)),
}
def _exp(x):
    return sfu.ex2(_mul(x, L2E))


_F32["sinh"] = lambda x: _mul(np.float32(0.5), _add(_exp(x), unary("neg", "f32", _exp(unary("neg", "f32", x)))))
_F32["cosh"] = lambda x: _mul(np.float32(0.5), _add(_exp(x), _exp(unary("neg", "f32", x))))
# f16 forms evaluated through the f32 sequence and rounded to nearest once (measured)
for _name in ("sinh", "cosh"):
    _F16[_name] = (lambda f: lambda x: _hrn(f(_w(x))))(_F32[_name])
_F32["degrees"] = lambda x: _mul(x, np.float32(57.29577951308232))
_F32["radians"] = lambda x: _mul(x, np.float32(0.017453292519943295))


# ---- inverse trigonometric and hyperbolic functions ------------------------------------------
# The driver's sequences are those of CUDA 11's libdevice (asinf, acosf, atanf, atan2f, asinhf,
# acoshf, atanhf; identified by replaying its PTX on the recorded vectors), with every IEEE
# reciprocal, square root and division in them done by the special function unit: rcp = RCP,
# sqrt = SQRT, division = x * RCP(y) with both scaled by 1/4 when |y| > 2^126. CUDA 13's versions
# differ (other polynomials, refined square roots) and match fewer results.

_PI, _PI_2 = _c(0x40490FDB), _c(0x3FC90FDB)


def _i32(x):
    return np.asarray(x, np.float32).view(np.int32).astype(np.int64)


def _from_bits(b):
    return (np.asarray(b, np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.float32)


def _sub(a, b):
    return _add(a, unary("neg", "f32", b))


def _rz_add(a, b):
    """a + b rounded toward zero (FADD.RZ): the float64 sum, corrected by its exact error."""
    a, b = ftz(a, "f32").astype(np.float64), ftz(b, "f32").astype(np.float64)
    with np.errstate(all="ignore"):
        s = a + b
        bb = s - a
        err = (a - (s - bb)) + (b - bb)          # TwoSum: a + b = s + err exactly
        r = s.astype(np.float32)
        r64 = r.astype(np.float64)
        over = (np.abs(r64) > np.abs(s)) | ((r64 == s) & (err != 0) & (np.sign(err) != np.sign(s)))
        r = np.where(over & np.isfinite(s), np.nextafter(r, np.float32(0)), r)
    return _out(r.astype(np.float32), "f32")


def _rz_mul(a, b):
    """a * b rounded toward zero (FMUL.RZ): the float64 product of two f32 is exact."""
    with np.errstate(all="ignore"):
        return _out(sfu._rz32(ftz(a, "f32").astype(np.float64) * ftz(b, "f32").astype(np.float64)), "f32")


def _div_full(a, b):
    """The division inside atan2: a * RCP(b), both scaled by 1/4 for |b| > 2^126."""
    b = ftz(b, "f32")
    k = np.where(np.abs(b) > np.float32(2.0 ** 126), np.float32(0.25), np.float32(1))
    return _mul(_mul(a, sfu.rcp(_mul(b, k))), k)


def _horner(x, coeffs):
    p = np.full(np.shape(x), _c(coeffs[0]), np.float32)
    for k in coeffs[1:]:
        p = _fma(p, x, _c(k))
    return p


def _copysign_finite(r, x):
    """The sign of x on r unless r is NaN."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(r), r, np.copysign(r, ftz(x, "f32"))).astype(np.float32)


def _log1p(t):
    """log(1 + t): t + 1 split (from its rounded-toward-zero sum) into 2^e and f + 1 with f near 0
    without losing t's low bits, log(1 + f) by a polynomial, e * ln 2 added by an fma."""
    t = ftz(t, "f32")
    e = (_i32(_rz_add(t, np.float32(1))) - 0x3F400000) & 0xFF800000
    e = np.where(e >= 1 << 31, e - (1 << 32), e)
    m = _from_bits(_i32(t) - e)
    f = _add(_fma(np.float32(0.25), _from_bits(0x40800000 - e), np.float32(-1)), m)
    k = _mul(e.astype(np.float32), _c(0x34000000))
    p = _horner(f, (0xBD39BF78, 0x3DD80012, 0xBE0778E0, 0x3E146475, 0xBE2A68DD, 0x3E4CAF9E, 0xBE800042,
                    0x3EAAAAE6, 0xBF000000))
    r = _fma(k, LN2, _fma(_mul(f, p), f, f))
    bits = t.view(np.uint32).astype(np.int64)
    inf = np.float32(np.inf)
    special = (bits >= 0x7F800000) & ~(_i32(t) < -1082130431)      # t < -1, +-inf, NaN
    r = np.where(special, _fma(t, inf, inf), r)
    r = np.where((bits >= 0x7F800000) & (t == 0), np.float32(-0.0), r)
    return r.astype(np.float32)


def _asin_poly(t):
    s = _mul(t, t)
    return _fma(_mul(s, _horner(s, (0x3D53F941, 0x3C94D2E9, 0x3D3F841F, 0x3D994929, 0x3E2AAB94))), t, t)


def _asin_parts(x):
    """(|x| > 0.57, asin of the reduced argument: |x|, or sqrt((1 - |x|) / 2) above 0.57)."""
    a = np.abs(ftz(x, "f32"))
    big = a > _c(0x3F11EB85)
    t = np.where(big, sfu.sqrt(_mul(_sub(np.float32(1), a), np.float32(0.5))), a)
    return big, _asin_poly(t.astype(np.float32))


def _asin(x):
    big, r = _asin_parts(x)
    return _copysign_finite(np.where(big, _fma(np.float32(-2), r, _PI_2), r), x)


def _acos(x):
    big, r = _asin_parts(x)
    r = np.where(big, _add(r, r), _sub(_PI_2, r))
    return np.where(ftz(x, "f32") < 0, _sub(_PI, r), r).astype(np.float32)


def _atan_ratio(t):
    """atan(t), 0 <= t <= 1: t + t^3 P(t^2) / Q(t^2)."""
    s = _mul(t, t)
    n = _mul(t, _mul(s, _fma(_fma(s, _c(0xBF52C7EA), _c(0xC0B59883)), s, _c(0xC0D21907))))
    d = _fma(_fma(_add(s, _c(0x41355DC0)), s, _c(0x41E6BD60)), s, _c(0x419D92C8))
    return _fma(n, sfu.rcp(d), t)


def _atan(x):
    a = np.abs(ftz(x, "f32"))
    with np.errstate(invalid="ignore"):
        t = np.where(a > 1, sfu.rcp(a), a).astype(np.float32)
        r = _atan_ratio(t)
        return _copysign_finite(np.where(a > 1, _sub(_PI_2, r), r).astype(np.float32), x)


def _atan2(y, x):
    y, x = ftz(y, "f32"), ftz(x, "f32")
    ay, ax = np.abs(y), np.abs(x)
    xneg = x.view(np.uint32) >= 0x80000000
    ysign = y.view(np.uint32) & np.uint32(0x80000000)
    with np.errstate(invalid="ignore"):
        r = _atan_ratio(_div_full(np.fmin(ay, ax), np.fmax(ay, ax)))
        r = np.where(ay > ax, _sub(_PI_2, r), r)
        r = np.where(xneg, _sub(_PI, r), r).astype(np.float32)
        r = (r.view(np.uint32) | ysign).view(np.float32)
        r = np.where(_add(ax, ay) <= np.inf, r, np.float32(np.nan))
        zeros = np.where(xneg, _PI, np.float32(0)).view(np.uint32) | ysign
        infs = np.where(xneg, _c(0x4016CBE4), _c(0x3F490FDB)).view(np.uint32) | ysign
        r = np.where((ax == 0) & (ay == 0), zeros.view(np.float32), r)
        r = np.where(np.isinf(ax) & np.isinf(ay), infs.view(np.float32), r)
    return r.astype(np.float32)


def _asinh(x):
    """log1p(|x| + |x| / (1/|x| + sqrt(1/x^2 + 1))); above 2^126: LG2(|x|) * ln 2 + ln 2."""
    a = np.abs(ftz(x, "f32"))
    ia = sfu.rcp(a)
    t = _fma(a, sfu.rcp(_add(ia, sfu.sqrt(_fma(ia, ia, np.float32(1))))), a)
    with np.errstate(invalid="ignore"):
        r = np.where(a > _c(0x7E800000), _add(LN2, _mul(sfu.lg2(a), LN2)), _log1p(t))
    return _copysign_finite(r.astype(np.float32), x)


def _acosh(x):
    """log1p(d + sqrt(RZ(x * d) + d)), d = x - 1; d beyond 2^23 (or negative): log(d) + ln 2."""
    x = ftz(x, "f32")
    d = _add(x, np.float32(-1))
    t = _add(d, sfu.sqrt(_add(_rz_mul(x, d), d)))
    small = _log1p(t)
    with np.errstate(invalid="ignore"):
        tiny = d < np.float32(2.0 ** -126)
        dd = np.where(tiny, _mul(d, np.float32(2.0 ** 23)), d).astype(np.float32)
    e = (_i32(dd) - 0x3F2AAAAB) & 0xFF800000
    e = np.where(e >= 1 << 31, e - (1 << 32), e)
    f = _add(_from_bits(_i32(dd) - e), np.float32(-1))
    k = _fma(e.astype(np.float32), _c(0x34000000), np.where(tiny, np.float32(-23), np.float32(0)).astype(np.float32))
    p = _horner(f, (0xBE055027, 0x3E1039F6, 0xBDF8CDCC, 0x3E0F2955, 0xBE2AD8B9, 0x3E4CED0B, 0xBE7FFF22,
                    0x3EAAAA78, 0xBF000000))
    big = _fma(k, LN2, _fma(_mul(f, p), f, f))
    inf = np.float32(np.inf)
    big = np.where(dd.view(np.uint32) >= 0x7F800000, _fma(dd, inf, inf), big)
    big = np.where(dd == 0, -inf, _add(big, LN2))
    return np.where(d.view(np.uint32) > 0x4B000000, big, small).astype(np.float32)


def _atanh(x):
    """log1p(2|x| / (1 - |x|)) / 2 (2|x| * RCP(1 - |x|)), the sign of x."""
    a = np.abs(ftz(x, "f32"))
    m = _mul(a, _add(*(sfu.rcp(_sub(np.float32(1), a)),) * 2))
    m = np.where(a > _c(0x7E800000), np.float32(-2), m).astype(np.float32)
    return _copysign_finite(_mul(_log1p(m), np.float32(0.5)), x)


for _name, _fn in (("asin", _asin), ("acos", _acos), ("atan", _atan), ("atan2", _atan2), ("asinh", _asinh),
                   ("acosh", _acosh), ("atanh", _atanh)):
    _F32[_name] = _fn
    # f16: the f32 sequence on the widened inputs, rounded to nearest once (measured)
    _F16[_name] = (lambda f: lambda *a: _hrn(f(*(_w(v) for v in a))))(_fn)


def _h_atan2(y, x):
    """f16 atan2: when max(|y|, |x|) >= 16 both are first multiplied by 1/16 in half precision
    (HMUL, so a |y| below 2^-10 lands on the 2^-20 grid: f16's subnormal step times 16), then the
    f32 sequence on the widened values, rounded to nearest once. Measured: the whole f16 sweep
    (344,064 of 344,064: 3,634 subnormal results with |y| < 2^-10 that rounding y / x once misses)
    and the seed-6 recording (524,288 of 524,288); below 15.3 no input is scaled."""
    y, x = _h(y), _h(x)
    with np.errstate(invalid="ignore"):
        big = np.maximum(np.abs(_w(y)), np.abs(_w(x))) >= 16
    s = _hc(0.0625)
    ys, xs = (np.where(big, _w(_hmul(v, s)) * np.float32(16), _w(v)).astype(np.float32) for v in (y, x))
    return _hrn(_atan2(ys, xs))


_F16["atan2"] = _h_atan2

# bit-exact builtins that the driver does not flush (FMNMX, FRND)
_NO_FTZ = frozenset({"min", "max", "clamp", "floor", "ceil", "round", "trunc", "select"})


def _dot_order(n):
    """The driver's dot product: y*y first, then fma x, z, w (measured on vec2/3/4; f16 vec4
    differs, see _dot)."""
    return (1, 0) + tuple(range(2, n))


def _dot(ty, a, b):
    a, b = as_type(a, ty), as_type(b, ty)
    n = a.shape[-1]
    o = _dot_order(n)
    if ty == "f32":
        r = _mul(a[..., o[0]], b[..., o[0]])
        for k in o[1:]:
            r = _fma(a[..., k], b[..., k], r)
        return r
    if n == 4:      # f16 vec4: (x*x', then fma w) + (y*y', then fma z), as two packed halves
        hfma = lambda k, c: canon(_ieee.call("fma", "f16", a[..., k], b[..., k], c), "f16")  # noqa: E731
        u = hfma(3, _hmul(a[..., 0], b[..., 0]))
        v = hfma(2, _hmul(a[..., 1], b[..., 1]))
        return binary("add", ty, u, v)
    r = _hmul(a[..., o[0]], b[..., o[0]])
    for k in o[1:]:
        r = canon(_ieee.call("fma", "f16", a[..., k], b[..., k], r), "f16")
    return r


def _length(ty, e, vector=None):
    e = as_type(e, ty)
    if not (e.ndim >= 2 if vector is None else vector):
        return call("abs", ty, e)
    d = _dot(ty, e, e)
    return sfu.sqrt(d) if ty == "f32" else _hz(sfu.sqrt(_w(d)))


def _normalize(ty, e):
    e = as_type(e, ty)
    d = _dot(ty, e, e)
    if ty == "f32":
        return _mul(e, sfu.rsq(d)[..., None])
    return _hmul(e, _hz(sfu.rsq(_w(d)))[..., None])


def _distance(ty, a, b, vector=None):
    d = binary("sub", ty, a, b)
    return _length(ty, d, vector)


def _mix(ty, a, b, t):
    """fma(t, b - a, a)."""
    return canon(_ieee.call("fma", ty, *(ftz(v, ty) for v in _ieee._lanes((t, binary("sub", ty, b, a), a)))), ty) \
        if ty == "f16" else _fma(*_ieee._lanes((t, binary("sub", ty, b, a), a)))


def _fract(ty, x):
    """x - floor(x), floor not flushed (so fract(-subnormal) = 1)."""
    return binary("sub", ty, x, _ieee.call("floor", ty, x))


def _to_int(x, src, dst):
    """NaN converts to the low end of the clamped range (f32 -> i32: -2^31; f16 -> i32: -65504)."""
    r = _scalar.convert(x, src, dst)
    lo = _scalar.convert(np.asarray(-np.inf, dtypes.NP[src]), src, dst)
    with np.errstate(invalid="ignore"):
        nan = np.isnan(np.asarray(as_type(x, src)).astype(np.float32))
    return np.where(nan, lo, r).astype(r.dtype)


def _sign(ty, x):
    """(x > 0) - (x < 0): sign(-0) = +0, sign(NaN) = 0."""
    v = _w(x) if ty == "f16" else ftz(x, ty)
    with np.errstate(invalid="ignore"):
        r = np.where(v > 0, 1.0, np.where(v < 0, -1.0, 0.0))
    return r.astype(dtypes.NP[ty])


def _step(ty, edge, x):
    """x < edge ? 0 : 1 (a NaN on either side gives 1)."""
    e, v = (_w(edge), _w(x)) if ty == "f16" else (ftz(edge, ty), ftz(x, ty))
    with np.errstate(invalid="ignore"):
        return np.where(v < e, 0.0, 1.0).astype(dtypes.NP[ty])


def _ops(ty):
    """(mul, fma, sub, rcp) as the driver emits them for ty."""
    if ty == "f32":
        return _mul, _fma, lambda a, b: binary("sub", ty, a, b), sfu.rcp
    hfma = lambda a, b, c: canon(_ieee.call("fma", "f16", a, b, c), "f16")  # noqa: E731
    return _hmul, hfma, lambda a, b: binary("sub", ty, a, b), lambda x: _hz(sfu.rcp(_w(x)))


def _cross(ty, a, b):
    """fma(a.y, b.z, -(a.z * b.y)) and its rotations."""
    mul, fma, _, _ = _ops(ty)
    a, b = as_type(a, ty), as_type(b, ty)
    comp = [fma(a[..., i], b[..., j], unary("neg", ty, mul(a[..., j], b[..., i])))
            for i, j in ((1, 2), (2, 0), (0, 1))]
    return np.stack(comp, axis=-1)


def _reflect(ty, i, n):
    """fma(-2 * dot(n, i), n, i)."""
    mul, fma, _, _ = _ops(ty)
    i, n = as_type(i, ty), as_type(n, ty)
    k = mul(np.asarray(-2, dtypes.NP[ty]), _dot(ty, n, i))[..., None]
    return fma(k, n, i)


def _refract(ty, i, n, eta):
    """k = fma(-(eta * eta), fma(-d, d, 1), 1) with d = dot(n, i); k < 0: 0, else
    fma(eta, i, -(fma(eta, d, sqrt(k)) * n))."""
    mul, fma, _, _ = _ops(ty)
    i, n = as_type(i, ty), as_type(n, ty)
    eta = as_type(eta, ty)
    one = np.ones((), dtypes.NP[ty])
    neg = lambda v: unary("neg", ty, v)  # noqa: E731
    d = _dot(ty, n, i)
    k = fma(neg(mul(eta, eta)), fma(neg(d), d, one), one)
    root = sfu.sqrt(k) if ty == "f32" else _hz(sfu.sqrt(_w(k)))
    w = fma(eta, d, root)[..., None]
    with np.errstate(invalid="ignore"):
        r = fma(np.asarray(eta)[..., None], i, neg(mul(w, n)))
        return np.where((k < 0)[..., None], np.zeros((), dtypes.NP[ty]), r).astype(dtypes.NP[ty])


def _face_forward(ty, e1, e2, e3):
    """dot(e2, e3) < 0 ? e1 : -e1, with the driver's dot product."""
    e1 = as_type(e1, ty)
    with np.errstate(invalid="ignore"):
        return np.where((_dot(ty, e2, e3) < 0)[..., None], e1, unary("neg", ty, e1)).astype(dtypes.NP[ty])


def _smoothstep(ty, e0, e1, x):
    """t = clamp((x - e0) * rcp(e1 - e0), 0, 1) (NaN-ignoring); t * t * fma(-2, t, 3)."""
    mul, fma, sub, rcp = _ops(ty)
    e0, e1, x = _ieee._lanes((as_type(e0, ty), as_type(e1, ty), as_type(x, ty)))
    t = mul(sub(x, e0), rcp(sub(e1, e0)))
    one, zero = np.asarray(1, dtypes.NP[ty]), np.asarray(0, dtypes.NP[ty])
    t = _ieee.call("min", ty, _ieee.call("max", ty, t, zero), one)
    return mul(mul(t, t), fma(np.asarray(-2, dtypes.NP[ty]), t, np.asarray(3, dtypes.NP[ty])))


def _modf(ty, x):
    """(x - trunc(x), trunc(x)); a zero fraction (and that of +-inf) keeps the sign of x."""
    x = _f(x, ty)
    t = _ieee.call("trunc", ty, x)
    fr = binary("sub", ty, x, t)
    z = np.copysign(np.zeros((), dtypes.NP[ty]), x).astype(dtypes.NP[ty])
    with np.errstate(invalid="ignore"):
        fr = np.where((fr == 0) | np.isinf(x), z, fr).astype(dtypes.NP[ty])
    return canon(fr, ty), canon(t, ty)


def _unpack_norm(name, e):
    """f32(field) * (1 / (2^b - 1)) -- the driver multiplies by the rounded reciprocal; snorm
    clamps below at -1."""
    u = as_type(e, "u32")
    w, cnt = (8, 4) if "4x8" in name else (16, 2)
    v = np.stack([(u >> np.uint32(w * k)) & np.uint32((1 << w) - 1) for k in range(cnt)], -1).astype(np.int64)
    if "snorm" in name:
        v = (v ^ (1 << (w - 1))) - (1 << (w - 1))
        return np.maximum(_mul(v.astype(np.float32), np.float32(1.0 / ((1 << (w - 1)) - 1))), np.float32(-1))
    return _mul(v.astype(np.float32), np.float32(1.0 / ((1 << w) - 1)))


def _pack_norm(name, e):
    """rint(clamp(e, lo, 1) * (2^(b-1) - 1 or 2^b - 1)): the product rounded in f32, then to the
    nearest even integer; the clamp ignores NaN (NaN packs as lo)."""
    w = 8 if "4x8" in name else 16
    snorm = "snorm" in name
    lo, scale = (-1.0, (1 << (w - 1)) - 1) if snorm else (0.0, (1 << w) - 1)
    c = np.fmin(np.float32(1), np.fmax(np.float32(lo), as_type(e, "f32"))).astype(np.float32)
    r = np.rint(_mul(c, np.float32(scale)).astype(np.float64)).astype(np.int64) & ((1 << w) - 1)
    sh = (np.arange(r.shape[-1]) * w).astype(np.int64)
    return np.bitwise_or.reduce((r << sh).astype(np.uint64), axis=-1).astype(np.uint32)


_VEC = {"cross": _cross, "reflect": _reflect, "refract": _refract, "faceForward": _face_forward, "smoothstep": _smoothstep, "dot": _dot, "length": _length, "normalize": _normalize, "distance": _distance, "mix": _mix,
        "fract": _fract}


def call(name, ty, *args, **kw):
    if ty == "f32" and name in _F32:
        return _out(_F32[name](*(as_type(a, ty) for a in args)), ty)
    if ty == "f16" and name in _F16:
        return canon(_F16[name](*args), ty)
    if name in ("pack4x8snorm", "pack4x8unorm", "pack2x16snorm", "pack2x16unorm"):
        return _pack_norm(name, args[0])
    if name == "unpack2x16float":
        return canon(_ieee.call(name, ty, *args), "f32")
    if name in ("unpack4x8snorm", "unpack4x8unorm", "unpack2x16snorm", "unpack2x16unorm"):
        return _unpack_norm(name, args[0])
    if ty in _NAN and name == "modf":
        return _modf(ty, args[0])
    if ty in _NAN and name in _VEC:
        return _out(_VEC[name](ty, *args, **kw), ty)
    if ty in _NAN and name == "sign":
        return _sign(ty, args[0])
    if ty in _NAN and name == "step":
        return _step(ty, *args)
    if name == "quantizeToF16":           # NaN passes through unchanged; f16 subnormals flush;
        x = as_type(args[0], "f32")      # beyond 65504 (not only from 65520) infinity
        r = _ieee.call(name, ty, ftz(x, "f32"))
        r = np.where(np.abs(r) < np.float32(2.0 ** -14), np.copysign(np.float32(0), r), r)
        r = np.where(np.abs(x) > np.float32(65504), np.copysign(np.float32(np.inf), x), r)
        return np.where(np.isnan(x), x, r).astype(np.float32)
    if ty in _NAN and name in _NO_FTZ:
        return canon(_ieee.call(name, ty, *args, **kw), ty)
    r = _ieee.call(name, ty, *(_f(a, ty) if ty in _NAN and np.asarray(a).dtype == dtypes.NP[ty] else a
                               for a in args), **kw)
    if isinstance(r, tuple):
        return tuple(_out(x, ty) if x.dtype == dtypes.NP.get(ty) else x for x in r)
    return _out(r, ty) if r.dtype == dtypes.NP.get(ty) else r
