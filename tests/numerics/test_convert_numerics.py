"""Conversions, bit casts and literals: exhaustive over f16/bf16 bit patterns, checked
bit for bit against references built independently (integer bit manipulation, an
exact rint-based rounding in float64, ml_dtypes, Python integers/Fractions).

NaN rule checked here: a float->float conversion gives a quiet NaN with the sign and
the top payload bits of the source (truncated or zero-extended); bitcast keeps bits.
"""
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from emu.errors import InvalidArgument
from emu.numerics import builtins, dtypes, rounding, scalar

ALL16 = np.arange(1 << 16, dtype=np.uint16)
H = ALL16.view(np.float16)
BF = ALL16.view(ml_dtypes.bfloat16)
F16_MAX, BF16_MAX = 65504.0, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)


def ref_round(x, p, emin, maxval):
    """Independent RNE of exact float64 values to a binary format with p significand
    bits and minimum normal exponent emin: scale by a power of two so that one ulp is
    1, rint (ties to even), scale back. Overflow -> +-inf."""
    x = np.asarray(x, np.float64)
    fin = np.isfinite(x)
    xs = np.where(fin, x, 0.0)
    e = np.frexp(xs)[1] - 1                       # x in [2^e, 2^(e+1))
    q = np.maximum(e, emin) - (p - 1)             # exponent of one ulp
    r = np.ldexp(np.rint(np.ldexp(xs, -q)), q)
    r = np.where(np.abs(r) > maxval, np.copysign(np.inf, xs), r)
    return np.where(fin, r, x)


def f16_value_from_bits(u):
    """f16 bit patterns -> float64 values by integer field decoding."""
    u = u.astype(np.int64)
    s, e, f = u >> 15, (u >> 10) & 0x1F, u & 0x3FF
    mag = np.where(e == 0, np.ldexp(f.astype(np.float64), -24),
                   np.ldexp((f | 0x400).astype(np.float64), e - 25))
    mag = np.where(e == 31, np.where(f == 0, np.inf, np.nan), mag)
    return np.where(s == 1, -mag, mag)


def bits(a):
    a = np.asarray(a)
    return a.view({2: np.uint16, 4: np.uint32, 1: np.uint8}[a.dtype.itemsize])


def assert_bits(got, want):
    g, w = bits(got), bits(want)
    bad = np.flatnonzero(g.ravel() != w.ravel())
    assert bad.size == 0, f"{bad.size} mismatches, first at {bad[:5]}: got {g.ravel()[bad[:5]]}, want {w.ravel()[bad[:5]]}"


def quiet_f16_to_f32_bits(u16):
    u = u16.astype(np.uint32)
    return ((u & 0x8000) << 16) | 0x7FC00000 | ((u & 0x3FF) << 13)


def quiet_f32_to_f16_bits(u32):
    return (((u32 >> 16) & 0x8000) | 0x7E00 | ((u32 >> 13) & 0x3FF)).astype(np.uint16)


# ---- f16 <-> f32 ------------------------------------------------------------------

def test_f16_to_f32_exhaustive():
    got = scalar.convert(H, 'f16', 'f32')
    assert got.dtype == np.float32
    ref = f16_value_from_bits(ALL16)
    nan = np.isnan(ref)
    want = np.where(nan, quiet_f16_to_f32_bits(ALL16), ref.astype(np.float32).view(np.uint32))
    assert_bits(got, want.astype(np.uint32))


def _f16_midpoints():
    """All midpoints between consecutive finite f16 values of one sign (exact in f32),
    including 65520 between MAX and the next power of two."""
    pos = f16_value_from_bits(np.arange(0, 0x7C00, dtype=np.uint16))
    nxt = np.append(pos[1:], 65536.0)
    return (pos + nxt) / 2


def test_f32_to_f16_rounding():
    mids = _f16_midpoints()
    f32_ulp = lambda v: np.spacing(v.astype(np.float32)).astype(np.float64)
    rng = np.random.default_rng(0)
    rand = rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32).view(np.float32)
    near = rng.uniform(-70000, 70000, 1 << 16)
    x = np.concatenate([mids, mids + f32_ulp(mids), mids - f32_ulp(mids) / 2,
                        near, [65504, 65519.996, 65520, 65536, 1e30, 2.0**-25, 2.0**-26,
                               3 * 2.0**-26, 2.0**-25 + 2.0**-40]])
    x = np.concatenate([x, -x]).astype(np.float32)
    x = np.concatenate([x, rand])
    got = scalar.convert(x, 'f32', 'f16')
    with np.errstate(invalid='ignore'):              # widening a signalling NaN
        ref = ref_round(x.astype(np.float64), 11, -14, F16_MAX)
    nan = np.isnan(ref)
    want = np.where(nan, quiet_f32_to_f16_bits(x.view(np.uint32)), ref.astype(np.float16).view(np.uint16))
    assert_bits(got, want)


def test_f16_roundtrip_through_f32_exhaustive():
    back = scalar.convert(scalar.convert(H, 'f16', 'f32'), 'f32', 'f16')
    want = np.where(np.isnan(H), ALL16 | 0x0200, ALL16).astype(np.uint16)   # NaNs get quieted
    assert_bits(back, want)


def test_quantize_to_f16():
    wide = scalar.convert(H, 'f16', 'f32')
    q = builtins.call('quantizeToF16', 'f32', wide)
    assert_bits(q, wide)                       # already quiet NaNs: unchanged
    mids = np.concatenate([_f16_midpoints(), -_f16_midpoints()]).astype(np.float32)
    q = builtins.call('quantizeToF16', 'f32', mids)
    want = ref_round(mids.astype(np.float64), 11, -14, F16_MAX).astype(np.float32)
    assert_bits(q, want)


# ---- f16 -> integers ----------------------------------------------------------------

@pytest.mark.parametrize('dst', ['i32', 'u32', 'i8', 'u8'])
def test_f16_to_int_exhaustive(dst):
    got = scalar.convert(H, 'f16', dst)
    lo, hi = dtypes.INT_MIN[dst], dtypes.INT_MAX[dst]
    want = []
    for v in f16_value_from_bits(ALL16).tolist():
        if v != v:
            want.append(0)
        elif v in (float('inf'), float('-inf')):
            # the spec's "closest value also representable in the source type"
            want.append(min(hi, 65504) if v > 0 else max(lo, -65504))
        else:
            want.append(min(hi, max(lo, int(v))))      # int() truncates toward zero
    assert got.dtype == dtypes.NP[dst]
    np.testing.assert_array_equal(got.astype(np.int64), np.array(want, np.int64))


def test_f32_to_int_spec_examples():
    f = lambda *v: np.array(v, np.float32)
    # The examples given in the WGSL spec, section "Floating Point Conversion".
    np.testing.assert_array_equal(scalar.convert(f(3.9, -1, 1e20), 'f32', 'u32'), [3, 0, 4294967040])
    np.testing.assert_array_equal(scalar.convert(f(-3.9, 1e20, -1e20), 'f32', 'i32'),
                                  [-3, 2147483520, -2147483648])
    np.testing.assert_array_equal(
        scalar.convert(f(2147483520, 2147483648, -2147483648, np.inf, -np.inf, np.nan, -0.0, 0.99999994),
                       'f32', 'i32'),
        [2147483520, 2147483520, -2147483648, 2147483520, -2147483648, 0, 0, 0])
    np.testing.assert_array_equal(scalar.convert(f(4294967040, np.inf, -0.5, np.nan), 'f32', 'u32'),
                                  [4294967040, 4294967040, 0, 0])
    np.testing.assert_array_equal(scalar.convert(f(127.9, -128.9, 1e9, -1e9), 'f32', 'i8'), [127, -128, 127, -128])
    np.testing.assert_array_equal(scalar.convert(f(255.9, -1, 300), 'f32', 'u8'), [255, 0, 255])
    # bf16 can express at most 2^31 - 2^23 below 2^31.
    big = scalar.convert(np.array([3e38], np.float32), 'f32', 'bf16')
    np.testing.assert_array_equal(scalar.convert(big, 'bf16', 'i32'), [2139095040])


# ---- integers -> floats --------------------------------------------------------------

def test_int_to_float():
    rng = np.random.default_rng(1)
    i = np.concatenate([rng.integers(-2**31, 2**31, 100000), [0, 1, -1, 2**24 + 1, 2**24 + 3,
                        -(2**24 + 1), 2**31 - 1, -2**31, 16842753, 2049, 2051, 65504, 65505, 65519,
                        65520, -65505, 123456789]]).astype(np.int64)
    u = np.concatenate([rng.integers(0, 2**32, 100000), [2**32 - 1, 2**31, 65504, 65505]]).astype(np.int64)
    for src, vals in (('i32', i), ('u32', u)):
        x = vals.astype(dtypes.NP[src])
        exact = vals.astype(np.float64)                      # exact: |v| < 2^53
        assert_bits(scalar.convert(x, src, 'f32'), ref_round(exact, 24, -126, 3.4028234663852886e38).astype(np.float32))
        assert_bits(scalar.convert(x, src, 'bf16'), ref_round(exact, 8, -126, BF16_MAX).astype(ml_dtypes.bfloat16))
        # f16: WGSL sends integers beyond the finite range to infinity (65505 -> inf).
        want16 = np.where(np.abs(exact) > F16_MAX, np.copysign(np.inf, exact), ref_round(exact, 11, -14, F16_MAX))
        assert_bits(scalar.convert(x, src, 'f16'), want16.astype(np.float16))
    # 2^24 + 2^16 + 1 -> bf16: a float32 hop would tie and round to 2^24; correct is 2^24 + 2^17.
    r = scalar.convert(np.array([16842753], np.int32), 'i32', 'bf16')
    assert float(r[0]) == 2.0**24 + 2.0**17
    for src in ('i8', 'u8'):
        v = np.arange(256).astype(np.uint8).view(dtypes.NP[src])
        for dst in ('f32', 'f16', 'bf16'):
            np.testing.assert_array_equal(scalar.convert(v, src, dst).astype(np.float64), v.astype(np.float64))


def test_int_to_int_wraps():
    c = scalar.convert
    np.testing.assert_array_equal(c(np.array([-1, -2**31], np.int32), 'i32', 'u32'), [0xFFFFFFFF, 0x80000000])
    np.testing.assert_array_equal(c(np.array([0x80000000, 0xFFFFFFFF], np.uint32), 'u32', 'i32'), [-2**31, -1])
    np.testing.assert_array_equal(c(np.array([300, -129, 255], np.int32), 'i32', 'u8'), [44, 127, 255])
    np.testing.assert_array_equal(c(np.array([300, -129, 255], np.int32), 'i32', 'i8'), [44, 127, -1])
    np.testing.assert_array_equal(c(np.array([-1, -128], np.int8), 'i8', 'u32'), [0xFFFFFFFF, 0xFFFFFF80])
    np.testing.assert_array_equal(c(np.array([255], np.uint8), 'u8', 'i32'), [255])


def test_bool_conversions():
    b = np.array([True, False])
    for ty in ('i32', 'u32', 'i8', 'u8', 'f32', 'f16', 'bf16'):
        r = scalar.convert(b, 'bool', ty)
        assert r.dtype == dtypes.NP[ty]
        np.testing.assert_array_equal(r.astype(np.float64), [1, 0])
        z = np.array([0, 1, 0], dtypes.NP[ty])
        np.testing.assert_array_equal(scalar.convert(z, ty, 'bool'), [False, True, False])
    f = np.array([-0.0, 0.0, np.nan, 1e-45, -np.inf], np.float32)
    np.testing.assert_array_equal(scalar.convert(f, 'f32', 'bool'), [False, False, True, True, True])
    np.testing.assert_array_equal(scalar.convert(H, 'f16', 'bool'), (ALL16 & 0x7FFF) != 0)


def test_convert_saturating():
    s = scalar.convert_saturating
    np.testing.assert_array_equal(s(np.array([300, -5, 7], np.int32), 'i32', 'u8'), [255, 0, 7])
    np.testing.assert_array_equal(s(np.array([300, -300], np.int32), 'i32', 'i8'), [127, -128])
    np.testing.assert_array_equal(s(np.array([0xFFFFFFFF], np.uint32), 'u32', 'i32'), [2**31 - 1])
    np.testing.assert_array_equal(s(np.array([-1], np.int32), 'i32', 'u32'), [0])
    np.testing.assert_array_equal(s(np.array([1e10, -1e10, np.nan], np.float32), 'f32', 'i8'), [127, -128, 0])
    r = s(np.array([1e5, -1e5, np.inf, 65519, 65520, np.nan], np.float32), 'f32', 'f16')
    np.testing.assert_array_equal(r[:5].astype(np.float64), [65504, -65504, np.inf, 65504, 65504])
    assert np.isnan(r[5])
    np.testing.assert_array_equal(s(np.array([70000, 65505], np.uint32), 'u32', 'f16').astype(np.float64), [65504, 65504])
    r = s(np.array([3.4e38], np.float32), 'f32', 'bf16')
    assert float(r[0]) == BF16_MAX


# ---- bf16 ---------------------------------------------------------------------------

def test_bf16_to_f32_exhaustive():
    got = scalar.convert(BF, 'bf16', 'f32')
    want = BF.astype(np.float32).view(np.uint32)           # ml_dtypes: exact widening
    nan = np.isnan(BF.astype(np.float32))
    want = np.where(nan, want | 0x00400000, want)          # our NaNs come out quiet
    assert_bits(got, want.astype(np.uint32))
    assert_bits(got[~nan], (ALL16[~nan].astype(np.uint32) << 16))


def test_f32_to_bf16():
    wide = scalar.convert(BF, 'bf16', 'f32')
    back = scalar.convert(wide, 'f32', 'bf16')
    assert_bits(back, np.where(np.isnan(wide), ALL16 | 0x0040, ALL16).astype(np.uint16))
    rng = np.random.default_rng(2)
    x = rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32)
    # ties: low 16 bits exactly 0x8000, and one either side
    ties = (x & 0xFFFF0000) | 0x8000
    x = np.concatenate([x, ties, ties + 1, ties - 1, [0x7F7FFFFF, 0x7F7F7FFF, 0x7F7F8000, 0x00008000,
                                                      0x00018000, 0x80008001]]).astype(np.uint32)
    xf = x.view(np.float32)
    got = scalar.convert(xf, 'f32', 'bf16')
    nan = np.isnan(xf)
    ref_ml = xf[~nan].astype(ml_dtypes.bfloat16)            # ml_dtypes rounds f32 -> bf16 RNE
    assert_bits(got[~nan], ref_ml)
    ref = ref_round(xf[~nan].astype(np.float64), 8, -126, BF16_MAX).astype(np.float32).astype(ml_dtypes.bfloat16)
    assert_bits(got[~nan], ref)
    assert_bits(got[nan], (((x[nan] >> 16) | 0x40)).astype(np.uint16))


@pytest.mark.parametrize('src,dst', [('f16', 'bf16'), ('bf16', 'f16')])
def test_f16_bf16_exhaustive(src, dst):
    x = H if src == 'f16' else BF
    got = scalar.convert(x, src, dst)
    with np.errstate(invalid='ignore'):
        v = x.astype(np.float64)
    p, emin, mx = (8, -126, BF16_MAX) if dst == 'bf16' else (11, -14, F16_MAX)
    ref = ref_round(v, p, emin, mx)
    fin = ~np.isnan(v)
    assert_bits(got[fin], ref[fin].astype(np.float32).astype(dtypes.NP[dst]))
    assert np.isnan(got[~fin].astype(np.float32)).all()


def test_round_f64_single_rounding():
    """float64 -> f16/bf16 must round once; values a hair off a tie expose a float32 hop
    (ml_dtypes' own float64 -> bfloat16 cast takes that hop)."""
    rng = np.random.default_rng(3)
    for ty, p, emin, mx, dt in (('f16', 11, -14, F16_MAX, np.float16),
                                ('bf16', 8, -126, BF16_MAX, ml_dtypes.bfloat16)):
        base = rng.uniform(-1, 1, 200000) * np.exp2(rng.integers(-20, 16, 200000))
        tie = ref_round(base, p + 1, emin - 1, 1e300)       # values with p+1 bits: many ties
        x = np.concatenate([base, tie, tie * (1 + 2.0**-40), tie * (1 - 2.0**-40),
                            [1 + 2.0**-8 + 2.0**-30, 1e300, -1e300, 5e-324, 2.0**-134]])
        got = rounding.round_f64(x, ty)
        assert_bits(got, ref_round(x, p, emin, mx).astype(np.float32).astype(dt))
    assert float(rounding.round_f64(np.array(1 + 2.0**-8 + 2.0**-30), 'bf16')) == 1 + 2.0**-7


# ---- pack2x16float / unpack2x16float ---------------------------------------------------

def test_pack_unpack_2x16float_roundtrip():
    rng = np.random.default_rng(4)
    hi = rng.permutation(ALL16)
    u = (ALL16.astype(np.uint32) | (hi.astype(np.uint32) << 16))
    v = builtins.call('unpack2x16float', 'u32', u)
    assert v.shape == (1 << 16, 2) and v.dtype == np.float32
    assert_bits(v[:, 0], scalar.convert(H, 'f16', 'f32'))
    assert_bits(v[:, 1], scalar.convert(hi.view(np.float16), 'f16', 'f32'))
    back = builtins.call('pack2x16float', 'f32', v)
    qlo = np.where(np.isnan(H), ALL16 | 0x200, ALL16).astype(np.uint32)
    qhi = np.where(np.isnan(hi.view(np.float16)), hi | 0x200, hi).astype(np.uint32)
    np.testing.assert_array_equal(back, qlo | (qhi << 16))
    # Spec-style example: vec2(1.0, -2.0) -> 0xC0003C00; overflow rounds to infinity.
    assert builtins.call('pack2x16float', 'f32', np.array([1.0, -2.0], np.float32)) == 0xC0003C00
    assert builtins.call('pack2x16float', 'f32', np.array([1e6, 65519], np.float32)) == 0x7BFF7C00


# ---- bitcast ------------------------------------------------------------------------

def test_bitcast():
    rng = np.random.default_rng(5)
    u = rng.integers(0, 1 << 32, 4096, dtype=np.uint64).astype(np.uint32)
    u[:4] = [0x7F800001, 0xFFC00001, 0x80000000, 0x7FBFFFFF]          # signalling NaN payloads too
    for a, b in (('u32', 'f32'), ('u32', 'i32'), ('f32', 'i32')):
        x = u.view(dtypes.NP[a])
        y = scalar.bitcast(x, a, 1, b, 1)
        assert y.dtype == dtypes.NP[b] and y.shape == x.shape
        assert_bits(y, u)
        assert_bits(scalar.bitcast(y, b, 1, a, 1), u)
    # vec2<f16> <-> u32: component 0 in the low half; every f16 pattern in both lanes.
    pairs = np.stack([ALL16, ALL16[::-1]], axis=-1).view(np.float16)
    w = scalar.bitcast(pairs, 'f16', 2, 'u32', 1)
    np.testing.assert_array_equal(w, ALL16.astype(np.uint32) | (ALL16[::-1].astype(np.uint32) << 16))
    assert_bits(scalar.bitcast(w, 'u32', 1, 'f16', 2), pairs)
    assert scalar.bitcast(np.array([1.0, 2.0], np.float16), 'f16', 2, 'u32', 1) == 0x40003C00
    assert float(scalar.bitcast(np.array(0x3F800000, np.uint32), 'u32', 1, 'f32', 1)) == 1.0
    # vec4<f16> <-> vec2<u32>, vec2<bf16> <-> f32, lanes of vectors
    v4 = rng.integers(0, 1 << 16, (8, 4)).astype(np.uint16)
    v2 = scalar.bitcast(v4.view(np.float16), 'f16', 4, 'u32', 2)
    assert v2.shape == (8, 2)
    np.testing.assert_array_equal(v2[:, 1], v4[:, 2].astype(np.uint32) | (v4[:, 3].astype(np.uint32) << 16))
    assert_bits(scalar.bitcast(v2, 'u32', 2, 'f16', 4), v4)
    b2 = scalar.bitcast(u[:8].view(np.float32), 'f32', 1, 'bf16', 2)
    assert b2.dtype == dtypes.NP['bf16'] and b2.shape == (8, 2)
    assert_bits(b2[:, 1], (u[:8] >> 16).astype(np.uint16))
    with pytest.raises(ValueError):
        scalar.bitcast(u, 'u32', 1, 'f16', 1)
    # results are fresh arrays: an executor may write into them without touching inputs
    assert not np.shares_memory(scalar.bitcast(u, 'u32', 1, 'i32', 1), u)
    assert not np.shares_memory(scalar.convert(u, 'u32', 'u32'), u)


# ---- literals -----------------------------------------------------------------------

def test_literals():
    lit = scalar.literal
    assert lit('0x1p-3f', 'f32') == 0.125 and lit('0x1p-3f', 'f32').dtype == np.float32
    assert lit('1.1h', 'f16').view(np.uint16) == 0x3C66
    assert lit('42u', 'u32') == 42 and lit('0x7fffffffi', 'i32') == 2**31 - 1
    assert lit('-2147483648', 'i32') == -2**31 and lit('true', 'bool') == True   # noqa: E712
    assert lit('65504h', 'f16') == 65504 and lit('1e-8h', 'f16') == 0
    assert lit('0x1.8', 'f32') == 1.5 and lit('1e3', 'f16') == 1000 and lit('2h', 'f16') == 2
    assert np.signbit(lit(-0.0, 'f16')) and np.signbit(lit('-0.0f', 'f32'))
    # Suffixed: one rounding from the exact decimal value. Unsuffixed: AbstractFloat
    # (float64) first, then f16: the tie 1 + 2^-11 swallows the tail and goes to even.
    assert float(lit('1.0004882812500000001h', 'f16')) == 1 + 2.0**-10
    assert float(lit('1.0004882812500000001', 'f16')) == 1.0
    assert float(lit(Fraction(1, 3), 'f32')) == float(np.float32(1 / 3))
    assert float(lit(0.1, 'f32')) == float(np.float32(0.1))
    assert float(lit(1 + 2.0**-8 + 2.0**-30, 'bf16')) == 1 + 2.0**-7      # no float32 hop
    assert float(lit(16777217, 'f32')) == 16777216.0
    for bad, ty in (('65505h', 'f16'), ('0x1.00000001p0f', 'f32'), ('1.5', 'i32'), ('4294967296u', 'u32'),
                    ('2147483648i', 'i32'), ('1.0f', 'f16'), (1e39, 'f32'), (float('nan'), 'f32'),
                    ('1x', 'f32'), (True, 'i32'), (256, 'u8')):
        with pytest.raises(ValueError):
            lit(bad, ty)
    for ty in dtypes.NAMES:
        v = lit(1 if ty != 'bool' else True, ty)
        assert v.shape == () and v.dtype == dtypes.NP[ty]


def f32_bits(a):
    return np.asarray(a, np.float32).view(np.uint32)


def test_small_floats_to_them_round_to_even_and_overflow_or_saturate():
    """SPV_EXT_float8's rule, on the values where it bites: ties to even, past the largest finite
    value after rounding NaN (E4M3, no infinity) or infinity (E5M2), or with saturate the largest
    finite value of the sign; infinities saturate too, NaN stays NaN."""
    x = np.array([1.0625, 1.1875, 464.0, 465.0, -1e9, np.inf, np.nan], np.float32)
    e4 = scalar.convert(x, 'f32', 'e4m3').astype(np.float32)
    assert f32_bits(e4[:3]).tolist() == f32_bits([1.0, 1.25, 448.0]).tolist() and np.isnan(e4[3:]).all()
    s4 = scalar.convert_saturating(x, 'f32', 'e4m3').astype(np.float32)
    assert s4[:6].tolist() == [1.0, 1.25, 448.0, 448.0, -448.0, 448.0] and np.isnan(s4[6])
    y = np.array([61439.0, 61440.0, -np.inf], np.float32)
    assert scalar.convert(y, 'f32', 'e5m2').astype(np.float32).tolist() == [57344.0, np.inf, -np.inf]
    assert scalar.convert_saturating(y, 'f32', 'e5m2').astype(np.float32).tolist() == [57344.0, 57344.0, -57344.0]


def test_e2m1_codes_decode_exactly_and_a_conversion_to_it_is_refused():
    """FP4 E2M1 (SPV_EXT_ocp_microscaling_types, llama.cpp's MXFP4): the 16 codes, to f32 and
    i32 (truncating); emu reads FP4 but does not encode it."""
    codes = np.arange(16, dtype=np.uint8).view(dtypes.NP['e2m1'])
    mags = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
    assert f32_bits(scalar.convert(codes, 'e2m1', 'f32')).tolist() == f32_bits(mags + [-m for m in mags]).tolist()
    assert scalar.convert(codes, 'e2m1', 'i32').tolist() == [0, 0, 1, 1, 2, 3, 4, 6, 0, 0, -1, -1, -2, -3, -4, -6]
    with pytest.raises(InvalidArgument, match="conversion to e2m1 is not defined"):
        scalar.convert(np.float32(1.0), 'f32', 'e2m1')
