"""builtins.call: exhaustive f16/bf16 unary functions, fma against exact Fractions
(including cases where a double rounding gives the wrong answer), integer bit
functions against Python integers, and packing against the spec's formulas."""
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from emu.numerics import builtins, dtypes

call = builtins.call
ALL16 = np.arange(1 << 16, dtype=np.uint16)
H = ALL16.view(np.float16)
BF = ALL16.view(ml_dtypes.bfloat16)
FMT = {'f16': (11, -14, 65504.0), 'bf16': (8, -126, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)),
       'f32': (24, -126, float(np.finfo(np.float32).max))}
VALS = {'f16': H, 'bf16': BF}


def f64(x):
    with np.errstate(invalid='ignore'):          # signalling NaN inputs
        return np.asarray(x).astype(np.float64)


def ref_round(x, ty):
    """Independent RNE of float64 values to `ty` (rint on a power-of-two scaled value)."""
    p, emin, mx = FMT[ty]
    x = np.asarray(x, np.float64)
    fin = np.isfinite(x)
    xs = np.where(fin, x, 0.0)
    q = np.maximum(np.frexp(xs)[1] - 1, emin) - (p - 1)
    r = np.ldexp(np.rint(np.ldexp(xs, -q)), q)
    r = np.where(np.abs(r) > mx, np.copysign(np.inf, xs), r)
    return np.where(fin, r, x)


def assert_same(got, want_f64, ty):
    """Bitwise equality with float64 reference values (exact in ty); NaN matches NaN."""
    g = f64(got)
    nan = np.isnan(want_f64)
    np.testing.assert_array_equal(np.isnan(g), nan)
    want = np.asarray(want_f64[~nan]).astype(np.float32).astype(dtypes.NP[ty])
    np.testing.assert_array_equal(np.asarray(got)[~nan].view(np.uint16 if ty != 'f32' else np.uint32),
                                  want.view(np.uint16 if ty != 'f32' else np.uint32))


def rne_frac(q, ty):
    """Exact RNE of a Fraction to `ty` as a Python float (inf on overflow)."""
    p, emin, mx = FMT[ty]
    if q == 0:
        return 0.0
    n, d = abs(q.numerator), q.denominator
    e = n.bit_length() - d.bit_length()
    if Fraction(n, d) < Fraction(2) ** e:
        e -= 1
    qe = max(e, emin) - (p - 1)
    r = round(q / Fraction(2) ** qe) * Fraction(2) ** qe          # round(): ties to even
    return float(r) if abs(r) <= mx else (float('inf') if r > 0 else float('-inf'))


# ---- exhaustive unary over f16 and bf16 --------------------------------------------

@pytest.mark.parametrize('ty', ['f16', 'bf16'])
def test_exact_unary_exhaustive(ty):
    x = VALS[ty]
    x64 = f64(x)
    np.testing.assert_array_equal(call('abs', ty, x).view(np.uint16), ALL16 & 0x7FFF)   # payload kept
    with np.errstate(invalid='ignore'):
        for name, fn in (('floor', np.floor), ('ceil', np.ceil), ('round', np.rint), ('trunc', np.trunc)):
            assert_same(call(name, ty, x), fn(x64), ty)
        assert_same(call('fract', ty, x), ref_round(x64 - np.floor(x64), ty), ty)       # exact, then RNE
        sgn = np.where(x64 > 0, 1.0, np.where(x64 < 0, -1.0, x64))
        assert_same(call('sign', ty, x), sgn, ty)
        # saturate = min(max(e, 0), 1): NaN -> 0 and -0 -> +0 under maximumNumber
        sat = np.where(np.isnan(x64) | (x64 == 0), 0.0, np.clip(x64, 0, 1))
    got = call('saturate', ty, x)
    assert_same(got, sat, ty)
    assert not np.signbit(f64(got)).any()


def test_round_half_even_and_fract_edges():
    v = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2049.0], np.float16)
    np.testing.assert_array_equal(f64(call('round', 'f16', v)), [0, 2, 2, -0.0, -2, -2, 2048])
    assert np.signbit(f64(call('round', 'f16', v))[3])
    # fract of the smallest negative subnormal rounds up to 1.0 (the spec's note)
    assert f64(call('fract', 'f16', np.float16(-2.0**-24))) == 1.0
    assert f64(call('fract', 'f32', np.float32(-1e-30))) == 1.0


@pytest.mark.parametrize('ty', ['f16', 'bf16'])
def test_sqrt_exhaustive_correctly_rounded(ty):
    x = VALS[ty]
    r = call('sqrt', ty, x)
    x64, r64 = f64(x), f64(r)
    pos = (x64 > 0) & np.isfinite(x64)
    # sqrt(x) is correctly rounded iff lo^2 < x < hi^2 for the midpoints lo, hi around r
    # (m has <= 12 bits, m*m is exact in float64); ties are impossible for sqrt.
    u = r[pos].view(np.uint16)
    lo = (r64[pos] + f64((u - 1).view(dtypes.NP[ty]))) / 2
    hi = (r64[pos] + f64((u + 1).view(dtypes.NP[ty]))) / 2
    assert ((lo * lo < x64[pos]) & (x64[pos] < hi * hi)).all()
    np.testing.assert_array_equal(r.view(np.uint16)[x64 == 0], ALL16[x64 == 0])       # sqrt(-0) = -0
    assert np.isnan(r64[(x64 < 0) | np.isnan(x64)]).all()
    assert (r64[x64 == np.inf] == np.inf).all()


F64_FUNCS = {
    'exp': np.exp, 'exp2': np.exp2, 'log': np.log, 'log2': np.log2, 'sin': np.sin, 'cos': np.cos,
    'tan': np.tan, 'asin': np.arcsin, 'acos': np.arccos, 'atan': np.arctan, 'sinh': np.sinh,
    'cosh': np.cosh, 'tanh': np.tanh, 'asinh': np.arcsinh, 'acosh': np.arccosh,
    'atanh': np.arctanh, 'inverseSqrt': lambda v: 1 / np.sqrt(v),
    'degrees': lambda v: v * (180 / np.pi), 'radians': lambda v: v * (np.pi / 180),
}


@pytest.mark.parametrize('ty', ['f16', 'bf16'])
def test_transcendental_single_rounding_exhaustive(ty):
    """Our documented choice: the float64 result rounded ONCE to the type (no f32 hop)."""
    x = VALS[ty]
    x64 = f64(x)
    with np.errstate(all='ignore'):
        for name, fn in F64_FUNCS.items():
            assert_same(call(name, ty, x), ref_round(fn(x64), ty), ty)


def test_transcendental_f32_and_binary():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-10, 10, 20000), [0, -0.0, np.inf, -np.inf, np.nan, 1, -1]]).astype(np.float32)
    y = rng.uniform(-10, 10, x.size).astype(np.float32)
    x64, y64 = f64(x), f64(y)
    with np.errstate(all='ignore'):
        for name, fn in F64_FUNCS.items():
            assert_same(call(name, 'f32', x), fn(x64), 'f32')
        assert_same(call('atan2', 'f32', y, x), np.arctan2(y64, x64), 'f32')
        want = np.where(x64 < 0, np.nan, np.power(np.abs(x64), y64))
        assert_same(call('pow', 'f32', x, y), want, 'f32')
        h = H[::7]
        assert_same(call('atan2', 'f16', h, h[::-1]), ref_round(np.arctan2(f64(h), f64(h[::-1])), 'f16'), 'f16')
    # pow: negative base is NaN (exp2(y*log2(x))); -0 is +0; pow(0, 0) = 1
    p = call('pow', 'f32', np.array([-2, -0.0, 0, 2, 0], np.float32), np.array([2, -1, 0, 10, 3], np.float32))
    np.testing.assert_array_equal(f64(p)[1:], [np.inf, 1, 1024, 0])
    assert np.isnan(p[0])


# ---- min / max / clamp / step / select ----------------------------------------------

def test_min_max_clamp_semantics():
    rng = np.random.default_rng(1)
    s = np.array([0, 0x8000, 1, 0x8001, 0x7C00, 0xFC00, 0x7E00, 0x3C00, 0xBC00, 0x03FF], np.uint16)
    a = np.concatenate([np.repeat(s, s.size), rng.integers(0, 1 << 16, 50000).astype(np.uint16)]).view(np.float16)
    b = np.concatenate([np.tile(s, s.size), rng.integers(0, 1 << 16, 50000).astype(np.uint16)]).view(np.float16)
    with np.errstate(invalid='ignore'):
        a32, b32 = f64(a).astype(np.float32), f64(b).astype(np.float32)
    for ty, ta, tb in (('f16', a, b), ('f32', a32, b32),
                       ('bf16', a32.astype(ml_dtypes.bfloat16), b32.astype(ml_dtypes.bfloat16))):
        xa, yb = f64(ta), f64(tb)
        both0 = (xa == 0) & (yb == 0)
        for name, pick, zsign in (('min', np.minimum, np.logical_or), ('max', np.maximum, np.logical_and)):
            want = np.where(np.isnan(xa), yb, np.where(np.isnan(yb), xa, pick(xa, yb)))
            want = np.where(both0, np.where(zsign(np.signbit(xa), np.signbit(yb)), -0.0, 0.0), want)
            got = call(name, ty, ta, tb)
            assert_same(got, want, ty)
            some = ~np.isnan(want)                       # NaN only when both are NaN
            np.testing.assert_array_equal(np.signbit(f64(got))[some], np.signbit(want)[some])
    c = call('clamp', 'f32', np.array([5, -5, np.nan, 0.5], np.float32), np.float32(0), np.float32(1))
    np.testing.assert_array_equal(f64(c), [1, 0, 0, 0.5])
    np.testing.assert_array_equal(call('clamp', 'i32', np.array([5, -5, 3], np.int32), np.int32(0), np.int32(4)), [4, 0, 3])
    np.testing.assert_array_equal(call('min', 'u32', np.array([1, 0xFFFFFFFF], np.uint32), np.uint32(2)), [1, 2])
    np.testing.assert_array_equal(call('max', 'i8', np.array([-128, 5], np.int8), np.int8(-1)), [-1, 5])
    np.testing.assert_array_equal(f64(call('step', 'f16', np.float16(1), np.array([0.5, 1, 2, np.nan], np.float16))),
                                  [0, 1, 1, 0])


def test_select_and_lane_broadcasting():
    f = np.zeros((4, 3), np.float32)
    t = np.arange(12, dtype=np.float32).reshape(4, 3)
    cond = np.array([True, False, True, False])
    r = call('select', 'f32', f, t, cond)
    np.testing.assert_array_equal(r, np.where(cond[:, None], t, f))
    vcond = np.array([[True, False, True]] * 4)
    np.testing.assert_array_equal(call('select', 'f32', f, t, vcond), np.where(vcond, t, f))
    assert call('select', 'bf16', BF[:4], BF[4:8], cond).dtype == dtypes.NP['bf16']
    # mix(vec, vec, scalar factor): the (L,) factor lines up with the lane axis
    m = call('mix', 'f32', np.zeros((2, 3), np.float32), np.full((2, 3), 10, np.float32),
             np.array([0.25, 0.5], np.float32))
    np.testing.assert_array_equal(m, [[2.5] * 3, [5] * 3])
    e = np.array([[0xF0, 0x0F]] * 2, np.uint32)
    np.testing.assert_array_equal(call('extractBits', 'u32', e, np.array([4, 0], np.uint32), np.uint32(4)),
                                  [[0xF, 0], [0, 0xF]])


# ---- fma ----------------------------------------------------------------------------

def fma_ref(a, b, c, ty):
    out = []
    for p, q, r in zip(f64(a).tolist(), f64(b).tolist(), f64(c).tolist()):
        exact = Fraction(p) * Fraction(q) + Fraction(r)
        v = rne_frac(exact, ty)
        if v == 0:   # IEEE zero signs: the exact value's sign; an exact 0 is +0 unless -0 + -0
            neg = exact < 0 if exact != 0 else (np.signbit(p * q) and np.signbit(r))
            v = -0.0 if neg else 0.0
        out.append(v)
    return np.array(out)


def test_fma_f32_double_rounding_cases():
    # a*b + c lands exactly on an f32 tie when first rounded to float64, but the exact
    # value is off the tie: one correct rounding differs from float64-then-f32.
    u = np.array([[0x3FA2F800, 0x3FE9F000, 0x19800000], [0x3FEEC800, 0x3FE07000, 0x97000000],
                  [0x3FDCE800, 0x3F949000, 0x0E800000], [0x3FB5E800, 0x3FC21000, 0x1F800000]], np.uint32)
    t = u.view(np.float32)
    a, b, c = t[:, 0], t[:, 1], t[:, 2]
    a = np.append(a, np.float32(1 + 2.0**-12))          # (1 + 2^-12)^2 + 2^-80
    b = np.append(b, np.float32(1 + 2.0**-12))
    c = np.append(c, np.float32(2.0**-80))
    want = fma_ref(a, b, c, 'f32')
    naive = (f64(a) * f64(b) + f64(c)).astype(np.float32)
    assert (f64(naive) != want).all()                    # every case exposes double rounding
    assert_same(call('fma', 'f32', a, b, c), want, 'f32')


def test_fma_f16_double_rounding_cases():
    # 3 * 683 = 2049 is an f16 tie; + 2^-24 must round up to 2050. Computing the fma in
    # float32 first loses the 2^-24 (then the tie goes to even, 2048). Likewise
    # 7 * 293 - 2^-24 = 2051 - 2^-24 -> 2050, not 2052.
    a = np.array([3, 7, 683, -3], np.float16)
    b = np.array([683, 293, 3, 683], np.float16)
    c = np.array([2.0**-24, -2.0**-24, 2.0**-24, -2.0**-24], np.float16)
    want = fma_ref(a, b, c, 'f16')
    np.testing.assert_array_equal(want, [2050, 2050, 2050, -2050])
    naive32 = (f64(a).astype(np.float32) * f64(b).astype(np.float32) + f64(c).astype(np.float32))
    assert (f64(naive32.astype(np.float16)) != want).all()
    assert_same(call('fma', 'f16', a, b, c), want, 'f16')


@pytest.mark.parametrize('ty', ['f32', 'f16', 'bf16'])
def test_fma_random_vs_fractions(ty):
    rng = np.random.default_rng(2)
    n = 6000
    bt = np.uint32 if ty == 'f32' else np.uint16
    hi = 1 << (8 * np.dtype(bt).itemsize)
    dt = dtypes.NP[ty]
    a, b, c = (rng.integers(0, hi, n, dtype=np.uint64).astype(bt).view(dt) for _ in range(3))
    # moderate magnitudes, and c near -a*b to exercise cancellation
    m = rng.uniform(-4, 4, (3, n)) * np.exp2(rng.integers(-30, 30, (3, n)))
    with np.errstate(all='ignore'):
        a2, b2 = (m[i].astype(np.float32).astype(dt) for i in (0, 1))
        c2 = (-(f64(a2) * f64(b2)) * (1 + m[2] * 2.0**-20)).astype(np.float32).astype(dt)
    a, b, c = (np.concatenate(p) for p in ((a, a2), (b, b2), (c, c2)))
    with np.errstate(all='ignore'):
        fin = np.isfinite(f64(a) * f64(b) + f64(c))
    want = fma_ref(a[fin], b[fin], c[fin], ty)
    got = call('fma', ty, a, b, c)[fin]
    assert_same(got, want, ty)
    np.testing.assert_array_equal(np.signbit(f64(got)), np.signbit(want))
    r = call('fma', 'f32', np.float32(np.inf), np.float32(0), np.float32(1))
    assert np.isnan(r)


# ---- frexp / modf / ldexp -----------------------------------------------------------

def test_frexp_modf_exhaustive_f16():
    fr, ex = call('frexp', 'f16', H)
    assert ex.dtype == np.int32 and fr.dtype == np.float16
    x = f64(H)
    fin = np.isfinite(x)
    np.testing.assert_array_equal(np.ldexp(f64(fr)[fin], ex[fin]), x[fin])
    nz = fin & (x != 0)
    a = np.abs(f64(fr)[nz])
    assert ((a >= 0.5) & (a < 1)).all()
    assert (ex[x == 0] == 0).all() and (f64(fr)[x == 0] == 0).all()
    frac, whole = call('modf', 'f16', H)
    np.testing.assert_array_equal(f64(whole)[fin], np.trunc(x[fin]))
    np.testing.assert_array_equal(f64(frac)[fin], x[fin] - np.trunc(x[fin]))   # exact
    np.testing.assert_array_equal(np.signbit(f64(frac)[fin]), np.signbit(x[fin] - np.trunc(x[fin])))
    frac, whole = call('modf', 'f32', np.array([1.5, -1.5, -2.0, np.inf], np.float32))
    np.testing.assert_array_equal(f64(whole), [1, -1, -2, np.inf])
    np.testing.assert_array_equal(f64(frac)[:3], [0.5, -0.5, 0.0])
    assert not np.signbit(frac[2]) and np.isnan(frac[3])


def test_ldexp():
    r = call('ldexp', 'f16', np.array([1.5, 1.5, 1, 1, -1, 3], np.float16), np.array([-25, 15, 16, -1000, 1000, 2], np.int32))
    np.testing.assert_array_equal(f64(r), [2.0**-24, 49152, np.inf, 0, -np.inf, 12])
    r = call('ldexp', 'f32', np.array([1.0, 1.0, 0.75], np.float32), np.array([-149, -150, -149], np.int32))
    np.testing.assert_array_equal(f64(r), [2.0**-149, 0, 2.0**-149])      # 2^-150: tie -> even 0
    r = call('ldexp', 'bf16', BF, np.full(BF.shape, 3, np.int32))
    assert_same(r, ref_round(f64(BF) * 8, 'bf16'), 'bf16')


# ---- vector functions ---------------------------------------------------------------

def test_vector_functions():
    v = np.array([[3, 4, 0], [1, 0, 0]], np.float32)
    w = np.array([[0, 1, 0], [0, 1, 0]], np.float32)
    np.testing.assert_array_equal(call('dot', 'f32', v, w), [4, 0])
    np.testing.assert_array_equal(call('length', 'f32', v), [5, 1])
    np.testing.assert_array_equal(call('length', 'f32', np.array([-3, 2], np.float32)), [3, 2])   # scalars
    np.testing.assert_array_equal(call('length', 'f32', np.array([[-3, 2]], np.float32), vector=False), [[3, 2]])
    np.testing.assert_array_equal(call('distance', 'f32', v, v + w), [1, 1])
    np.testing.assert_array_equal(call('normalize', 'f32', v), np.array([[0.6, 0.8, 0], [1, 0, 0]], np.float32))
    np.testing.assert_array_equal(call('cross', 'f32', v, w), [[0, 0, 3], [0, 0, 1]])
    np.testing.assert_array_equal(call('faceForward', 'f32', v, w, -w), v)
    np.testing.assert_array_equal(call('faceForward', 'f32', v, w, w), -v)
    np.testing.assert_array_equal(call('reflect', 'f32', np.array([[1, -1, 0]], np.float32),
                                       np.array([[0, 1, 0]], np.float32)), [[1, 1, 0]])
    np.testing.assert_array_equal(call('refract', 'f32', np.array([[0, -1, 0]], np.float32),
                                       np.array([[0, 1, 0]], np.float32), np.float32(1)), [[0, -1, 0]])
    np.testing.assert_array_equal(call('refract', 'f32', np.array([[1, -0.1, 0]], np.float32) / np.float32(1.005),
                                       np.array([[0, 1, 0]], np.float32), np.float32(2)), [[0, 0, 0]])
    # f16: sqrt(1 + 2^-11 squared...) rounded once from float64
    h = np.array([[1, 2.0**-6]], np.float16)
    assert_same(call('length', 'f16', h), ref_round(np.sqrt([1 + 2.0**-12]), 'f16'), 'f16')
    # integer dot wraps; mix / smoothstep known values
    np.testing.assert_array_equal(call('dot', 'i32', np.array([[2**31 - 1, 2]], np.int32), np.array([[2, 3]], np.int32)), [4])
    np.testing.assert_array_equal(call('dot', 'u32', np.array([[2**31, 3]], np.uint32), np.array([[2, 5]], np.uint32)), [15])
    np.testing.assert_array_equal(call('smoothstep', 'f32', np.float32(0), np.float32(2), np.array([-1, 1, 3, 0.5], np.float32)),
                                  [0, 0.5, 1, 0.15625])
    np.testing.assert_array_equal(call('mix', 'f16', np.float16(1), np.float16(3), np.array([0, 0.5, 1], np.float16)), [1, 2, 3])


def test_integer_abs_sign():
    np.testing.assert_array_equal(call('abs', 'i32', np.array([-2**31, -5, 5], np.int32)), [-2**31, 5, 5])
    np.testing.assert_array_equal(call('abs', 'u32', np.array([0xFFFFFFFF], np.uint32)), [0xFFFFFFFF])
    np.testing.assert_array_equal(call('sign', 'i32', np.array([-7, 0, 9], np.int32)), [-1, 0, 1])
    with pytest.raises(ValueError):
        call('sign', 'u32', np.uint32(1))
    with pytest.raises(ValueError):
        call('sqrt', 'i32', np.int32(4))
    with pytest.raises(ValueError):
        call('nope', 'f32', np.float32(1))


# ---- integer bit functions ----------------------------------------------------------

def _ints(ty, n, seed):
    rng = np.random.default_rng(seed)
    w = dtypes.WIDTH[ty]
    edge = [0, 1, 2, 3, (1 << w) - 1, (1 << (w - 1)), (1 << (w - 1)) - 1, 0x5555_5555 & ((1 << w) - 1)]
    u = np.concatenate([edge, rng.integers(0, 1 << w, n, dtype=np.uint64)]).astype(dtypes.BITS[ty])
    return u, u.view(dtypes.NP[ty])


@pytest.mark.parametrize('ty', ['i32', 'u32', 'i8', 'u8'])
def test_bit_counting(ty):
    u, x = _ints(ty, 5000, 3)
    w = dtypes.WIDTH[ty]
    us = [int(v) for v in u]
    signed = ty in dtypes.SIGNED
    m1 = -1 if signed else (1 << w) - 1

    def cast(v):                       # Python int -> value of ty (two's complement)
        return v - (1 << w) if signed and v >= (1 << (w - 1)) else v

    def check(name, fn):
        np.testing.assert_array_equal(call(name, ty, x).astype(np.int64), [fn(v) for v in us], err_msg=name)
    check('countOneBits', lambda v: bin(v).count('1'))
    check('countLeadingZeros', lambda v: w - v.bit_length())
    check('countTrailingZeros', lambda v: w if v == 0 else (v & -v).bit_length() - 1)
    check('firstTrailingBit', lambda v: m1 if v == 0 else (v & -v).bit_length() - 1)
    check('reverseBits', lambda v: cast(int(format(v, f'0{w}b')[::-1], 2)))
    if signed:
        # position of the first bit (from the top) unlike the sign bit; -1 for 0 and -1
        check('firstLeadingBit', lambda v: -1 if v in (0, (1 << w) - 1) else
              ((v ^ ((1 << w) - 1)) if v >> (w - 1) else v).bit_length() - 1)
    else:
        check('firstLeadingBit', lambda v: m1 if v == 0 else v.bit_length() - 1)
    for name in ('countOneBits', 'reverseBits', 'firstLeadingBit'):
        assert call(name, ty, x).dtype == dtypes.NP[ty]


def ref_extract(v, o, c, w, signed):
    o = min(o, w)
    c = min(c, w - o)
    if c == 0:
        return 0
    r = (v >> o) & ((1 << c) - 1)
    if signed and r >> (c - 1):
        r -= 1 << c
    return r


def ref_insert(v, n, o, c, w):
    o = min(o, w)
    c = min(c, w - o)
    mask = ((1 << c) - 1) << o
    return (v & ~mask) | ((n << o) & mask)


@pytest.mark.parametrize('ty', ['i32', 'u32'])
def test_extract_insert_bits(ty):
    rng = np.random.default_rng(4)
    u, x = _ints(ty, 3000, 5)
    n_u, n_x = _ints(ty, 3000, 6)
    o = np.concatenate([rng.integers(0, 40, u.size - 8), [0, 32, 31, 33, 0xFFFFFFFF, 16, 0, 30]]).astype(np.uint32)
    c = np.concatenate([rng.integers(0, 40, u.size - 8), [32, 1, 1, 5, 4, 0xFFFFFFFF, 0, 5]]).astype(np.uint32)
    signed = ty in dtypes.SIGNED
    got = call('extractBits', ty, x, o, c)
    want = [ref_extract(int(v), int(p), int(q), 32, signed) for v, p, q in zip(u, o, c)]
    np.testing.assert_array_equal(got.astype(np.int64), want)
    got = call('insertBits', ty, x, n_x, o, c)
    want = [ref_insert(int(v), int(nn), int(p), int(q), 32) for v, nn, p, q in zip(u, n_u, o, c)]
    np.testing.assert_array_equal(got.view(np.uint32).astype(np.int64), want)
    # named cases
    assert call('extractBits', 'i32', np.int32(0x000000F0), np.uint32(4), np.uint32(4)) == -1
    assert call('extractBits', 'u32', np.uint32(0x000000F0), np.uint32(4), np.uint32(4)) == 15
    assert call('extractBits', 'i32', np.int32(-1), np.uint32(32), np.uint32(8)) == 0     # o = w: c = 0
    assert call('extractBits', 'i32', np.int32(-2**31), np.uint32(0), np.uint32(99)) == -2**31
    assert call('insertBits', 'u32', np.uint32(0), np.uint32(0xFFFFFFFF), np.uint32(28), np.uint32(8)) == 0xF0000000
    assert call('insertBits', 'i32', np.int32(5), np.int32(-1), np.uint32(0), np.uint32(0)) == 5


def test_firstleadingbit_named():
    assert list(call('firstLeadingBit', 'i32', np.array([0, -1, 1, -2, 2**30, -2**31], np.int32))) == [-1, -1, 0, 0, 30, 30]
    assert list(call('firstLeadingBit', 'u32', np.array([0, 1, 2**31], np.uint32))) == [0xFFFFFFFF, 0, 31]
    assert list(call('firstTrailingBit', 'i32', np.array([0, -2**31, 12], np.int32))) == [-1, 31, 2]


def test_dot4_packed():
    rng = np.random.default_rng(7)
    a = rng.integers(0, 1 << 32, 3000, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, 3000, dtype=np.uint64).astype(np.uint32)
    a[:2], b[:2] = [0x80808080, 0xFFFFFFFF], [0x80808080, 0xFFFFFFFF]

    def parts(v, signed):
        bs = [(int(v) >> (8 * i)) & 0xFF for i in range(4)]
        return [x - 256 if signed and x >= 128 else x for x in bs]
    for name, signed, dt in (('dot4I8Packed', True, np.int32), ('dot4U8Packed', False, np.uint32)):
        got = call(name, 'u32', a, b)
        assert got.dtype == dt
        want = [sum(p * q for p, q in zip(parts(x, signed), parts(y, signed))) for x, y in zip(a, b)]
        np.testing.assert_array_equal(got.astype(np.int64), want)
    assert call('dot4I8Packed', 'u32', np.uint32(0x80808080), np.uint32(0x80808080)) == 65536
    assert call('dot4U8Packed', 'u32', np.uint32(0xFFFFFFFF), np.uint32(0xFFFFFFFF)) == 4 * 255 * 255


# ---- packing ------------------------------------------------------------------------

def test_pack_unpack_known_vectors():
    f = lambda *v: np.array(v, np.float32)
    assert call('pack4x8snorm', 'f32', f(1, -1, 0.5, -0.5)) == 0xC140817F
    assert call('pack4x8snorm', 'f32', f(2, -2, np.nan, 0)) == 0x0081817F      # clamp; NaN -> -1
    assert call('pack4x8unorm', 'f32', f(0, 1, 0.5, 0.25)) == 0x4080FF00
    assert call('pack4x8unorm', 'f32', f(-1, 2, np.nan, 1 / 255)) == 0x0100FF00
    assert call('pack2x16snorm', 'f32', f(1, -1)) == 0x80017FFF
    assert call('pack2x16unorm', 'f32', f(1, 0.5)) == 0x8000FFFF
    assert call('pack4xI8', 'i32', np.array([1, -1, 127, -128], np.int32)) == 0x807FFF01
    assert call('pack4xI8', 'i32', np.array([257, 0, 0, -129], np.int32)) == 0x7F000001
    assert call('pack4xI8Clamp', 'i32', np.array([300, -300, 5, -5], np.int32)) == 0xFB05807F
    assert call('pack4xU8', 'u32', np.array([0x1FF, 2, 3, 4], np.uint32)) == 0x040302FF
    assert call('pack4xU8Clamp', 'u32', np.array([300, 2, 3, 0xFFFFFFFF], np.uint32)) == 0xFF0302FF
    np.testing.assert_array_equal(call('unpack4xI8', 'u32', np.uint32(0x807FFF01)), [1, -1, 127, -128])
    np.testing.assert_array_equal(call('unpack4xU8', 'u32', np.uint32(0x807FFF01)), [1, 255, 127, 128])
    np.testing.assert_array_equal(call('unpack4x8unorm', 'u32', np.uint32(0x4080FF00)),
                                  f(0, 1, 128 / 255, 64 / 255))
    np.testing.assert_array_equal(call('unpack4x8snorm', 'u32', np.uint32(0x0081807F)), f(1, -1, -1, 0))
    np.testing.assert_array_equal(call('unpack2x16snorm', 'u32', np.uint32(0x80017FFF)), f(1, -1))
    np.testing.assert_array_equal(call('unpack2x16snorm', 'u32', np.uint32(0x00008000)), f(-1, 0))
    np.testing.assert_array_equal(call('unpack2x16unorm', 'u32', np.uint32(0x8000FFFF)), f(1, 32768 / 65535))
    lanes = call('unpack4xI8', 'u32', np.array([0x01020304, 0xFFFFFFFF], np.uint32))
    assert lanes.shape == (2, 4) and lanes.dtype == np.int32


def test_pack_unpack_roundtrips():
    b = np.arange(256, dtype=np.uint32)
    words = b | (b[::-1] << 8) | (((b + 7) % 256) << 16) | (((b * 3) % 256) << 24)
    for unpack, pack in (('unpack4x8unorm', 'pack4x8unorm'), ('unpack4xU8', 'pack4xU8'), ('unpack4xI8', 'pack4xI8')):
        ty = 'f32' if 'norm' in pack else ('u32' if 'U8' in pack else 'i32')
        np.testing.assert_array_equal(call(pack, ty, call(unpack, 'u32', words)), words)
    # snorm: -128 unpacks to -1, which packs to -127 (0x81); everything else round-trips
    back = call('pack4x8snorm', 'f32', call('unpack4x8snorm', 'u32', words))
    fixed = words.copy()
    for i in range(4):
        byte = (words >> (8 * i)) & 0xFF
        fixed = np.where(byte == 0x80, fixed ^ (np.uint32(0x80 ^ 0x81) << np.uint32(8 * i)), fixed)
    np.testing.assert_array_equal(back, fixed)
    h = np.arange(0, 1 << 16, 97, dtype=np.uint32)
    w16 = h | (h[::-1] << 16)
    np.testing.assert_array_equal(call('pack2x16unorm', 'f32', call('unpack2x16unorm', 'u32', w16)), w16)
    # unpack*norm values are the correctly rounded quotients
    v = call('unpack4x8unorm', 'u32', words)
    np.testing.assert_array_equal(v[:, 0], (b.astype(np.float64) / 255).astype(np.float32))


def test_64_bit_bit_builtins_are_exact():
    # found by fuzzing SPIR-V's 64-bit kernels: reverseBits of 64 bits failed, and firstLeadingBit
    # of 2^64 - 1 went through a float64 that rounds it to 2^64 (giving 64)
    from emu.numerics import builtins as nb
    vals = [5, 2 ** 64 - 1, 1 << 40, 0, 1, 2 ** 63 + 2 ** 10]
    u = np.array(vals, np.uint64)
    assert nb.call("reverseBits", "u64", u).tolist() == [int(f"{v:064b}"[::-1], 2) for v in vals]
    assert nb.call("firstLeadingBit", "u64", u).tolist() == [v.bit_length() - 1 if v else 2 ** 64 - 1 for v in vals]
    assert nb.call("firstLeadingBit", "i64", u.view(np.int64)).tolist() == [2, -1, 40, -1, 0, 62]
