"""scalar.binary / scalar.unary against exact references.

Float results are checked with an exact "bracket" test: r is the correctly rounded
(RNE) value of the exact result x iff x lies between the midpoints that r shares
with its neighbours, a tie being allowed only when r is even (the overflow
threshold 2^(emax+1) - ulp/2 counts as a tie that goes to infinity). The
comparisons of x with a midpoint are exact: in float64 for f16 operands (sums,
products and midpoint*divisor products fit in 53 bits) and with Python integers
for bf16 and f32.

NaN rule here: any NaN result is accepted where IEEE gives NaN (payloads of
arithmetic NaNs are unspecified); neg flips only the sign bit.
"""
import ml_dtypes
import numpy as np
import pytest

from emu.numerics import dtypes, scalar

FMT = {  # ty: (bits dtype, magnitude bits of +inf, 2^(emax+1))
    'f16': (np.uint16, 0x7C00, 2.0**16),
    'bf16': (np.uint16, 0x7F80, 2.0**128),
    'f32': (np.uint32, 0x7F800000, 2.0**128),
}


def f64(x):
    """Exact widening; signalling NaN inputs would raise 'invalid' (harmless here)."""
    with np.errstate(invalid='ignore'):
        return np.asarray(x).astype(np.float64)


def specials(ty):
    bt, inf, _ = FMT[ty]
    frac = {'f16': 10, 'bf16': 7, 'f32': 23}[ty]
    one = {'f16': 0x3C00, 'bf16': 0x3F80, 'f32': 0x3F800000}[ty]
    mags = [0, 1, (1 << frac) - 1, 1 << frac, inf - 1, inf, inf | (1 << (frac - 1)), one, one + 1,
            one - 1, one + 2, (one + inf) // 2 & ~1]
    sign = 1 << (8 * np.dtype(bt).itemsize - 1)
    return np.array(mags + [m | sign for m in mags], bt)


def sample_pairs(ty, n, seed):
    bt = FMT[ty][0]
    rng = np.random.default_rng(seed)
    hi = 1 << (8 * np.dtype(bt).itemsize)
    s = specials(ty)
    a = np.concatenate([np.repeat(s, s.size), rng.integers(0, hi, n, dtype=np.uint64).astype(bt)])
    b = np.concatenate([np.tile(s, s.size), rng.integers(0, hi, n, dtype=np.uint64).astype(bt)])
    # pairs close in value, to exercise cancellation and near-equal quotients
    k = n // 4
    b[-k:] = a[-k:] ^ rng.integers(0, 8, k).astype(bt)
    return a.view(dtypes.NP[ty]), b.view(dtypes.NP[ty])


def midpoints(r, ty):
    """(lo, hi) midpoints around each result in the signed order (+-0 are one point,
    the successor of MAX is 2^(emax+1)), the evenness of r, and r's signed-magnitude
    key (+-inf key is +-FMT[ty][1])."""
    bt, inf, top = FMT[ty]
    u = np.asarray(r).view(bt).astype(np.int64)
    signbit = 1 << (8 * np.dtype(bt).itemsize - 1)
    key = np.where(u & signbit, -(u & (signbit - 1)), u & (signbit - 1))

    def value(k):
        mag = np.minimum(np.abs(k), inf - 1).astype(bt).view(dtypes.NP[ty]).astype(np.float64)
        mag = np.where(np.abs(k) >= inf, top, mag)
        return np.where(k < 0, -mag, mag)
    v = value(key)
    lo = (value(key - 1) + v) / 2
    hi = (value(key + 1) + v) / 2
    return lo, hi, (u & 1) == 0, key


def assert_correctly_rounded(r, ty, cmp, check, zero_sign):
    """cmp(m) -> sign of (exact - m) for the float64 midpoints m of the checked subset."""
    r = np.asarray(r)[check]
    assert not np.isnan(f64(r)).any(), "NaN for a finite exact result"
    lo, hi, even, key = midpoints(r, ty)
    c_lo = cmp(lo, check)
    c_hi = cmp(hi, check)
    inf = FMT[ty][1]
    ok = ((key == -inf) | (c_lo > 0) | ((c_lo == 0) & even)) & \
         ((key == inf) | (c_hi < 0) | ((c_hi == 0) & even))
    bad = np.flatnonzero(~ok)
    assert bad.size == 0, f"{bad.size} results not correctly rounded, e.g. index {bad[:5]}"
    z = f64(r) == 0
    np.testing.assert_array_equal(np.signbit(f64(r))[z], zero_sign[check][z])


def sgn(x, m):
    return np.where(x > m, 1, np.where(x < m, -1, 0))


def as_ints(x, scale=150):
    """Exact float64 values times 2^scale as Python integers (object array)."""
    return np.array([int(v) for v in np.ldexp(x, scale).tolist()], dtype=object)


def int_cmp(op, a64, b64):
    """Exact sign(a op b - m) with Python integers; values are multiples of 2^-150."""
    def cmp(m, check):
        A, B, M = as_ints(a64[check]), as_ints(b64[check]), as_ints(m)
        if op == 'add':
            d = A + B - M
        elif op == 'sub':
            d = A - B - M
        elif op == 'mul':
            d = A * B - M * (1 << 150)
        else:
            d = (A * (1 << 150) - M * B) * np.where(b64[check] < 0, -1, 1).astype(object)
        return np.sign(d.astype(float)).astype(np.int64)       # exact: sign only
    return cmp


def check_binary(ty, a, b, exact_cmp):
    a64, b64 = f64(a), f64(b)
    with np.errstate(all='ignore'):
        ieee = {'add': a64 + b64, 'sub': a64 - b64, 'mul': a64 * b64, 'div': a64 / b64}
    for op, ref in ieee.items():
        r = scalar.binary(op, ty, a, b)
        assert r.dtype == dtypes.NP[ty] and r.shape == a.shape
        r64 = f64(r)
        finite = np.isfinite(a64) & np.isfinite(b64) & ((b64 != 0) if op == 'div' else True)
        # IEEE special cases (exact in float64): NaN where NaN, infinities where exact.
        np.testing.assert_array_equal(np.isnan(r64), np.isnan(ref) & True)
        spec = ~finite & ~np.isnan(ref)
        np.testing.assert_array_equal(r64[spec], ref[spec])
        assert_correctly_rounded(r, ty, exact_cmp(op, a64, b64), finite, np.signbit(ref))


def f16_cmp(op, a64, b64):
    def cmp(m, check):
        a, b = a64[check], b64[check]
        if op == 'add':
            return sgn(a + b, m)           # a + b, a - b, a * b are exact in float64
        if op == 'sub':
            return sgn(a - b, m)
        if op == 'mul':
            return sgn(a * b, m)
        return sgn(a, m * b) * np.where(b < 0, -1, 1)        # m * b exact: 12 + 11 bits
    return cmp


def test_f16_binary_1m_pairs():
    a, b = sample_pairs('f16', 1 << 20, 0)
    check_binary('f16', a, b, f16_cmp)


def test_bf16_binary():
    a, b = sample_pairs('bf16', 60000, 1)
    check_binary('bf16', a, b, int_cmp)


def test_f32_binary():
    a, b = sample_pairs('f32', 40000, 2)
    check_binary('f32', a, b, int_cmp)


@pytest.mark.parametrize('ty', ['f16', 'bf16', 'f32'])
def test_float_rem_is_exact_fmod(ty):
    a, b = sample_pairs(ty, 200000, 3)
    r = scalar.binary('rem', ty, a, b)
    with np.errstate(all='ignore'):
        ref = np.fmod(f64(a), f64(b))   # exact, and representable
    nan = np.isnan(ref)
    np.testing.assert_array_equal(np.isnan(f64(r)), nan)
    got = r[~nan].view(FMT[ty][0])
    want = ref[~nan].astype(np.float32).astype(dtypes.NP[ty]).view(FMT[ty][0])
    np.testing.assert_array_equal(got, want)
    # x - y * trunc(x / y) by hand on a few values, signs following the dividend
    x = np.array([5.5, -5.5, 5.5, -0.0, 1.0], dtypes.NP[ty])
    y = np.array([2, 2, -2, 1, np.inf], dtypes.NP[ty])
    np.testing.assert_array_equal(scalar.binary('rem', ty, x, y).astype(np.float64), [1.5, -1.5, 1.5, -0.0, 1.0])


def test_float_comparisons():
    a, b = sample_pairs('f16', 1 << 18, 4)
    a64, b64 = f64(a), f64(b)
    with np.errstate(invalid='ignore'):
        a32, b32 = a64.astype(np.float32), b64.astype(np.float32)
    for ty, x, y in (('f16', a, b), ('bf16', a32.astype(ml_dtypes.bfloat16), b32.astype(ml_dtypes.bfloat16)),
                     ('f32', a32, b32)):
        for op, f in (('eq', np.equal), ('ne', np.not_equal), ('lt', np.less), ('le', np.less_equal),
                      ('gt', np.greater), ('ge', np.greater_equal)):
            r = scalar.binary(op, ty, x, y)
            assert r.dtype == np.bool_
            np.testing.assert_array_equal(r, f(f64(x), f64(y)))
    assert scalar.binary('eq', 'f16', np.float16(-0.0), np.float16(0.0))
    assert not scalar.binary('eq', 'f32', np.float32(np.nan), np.float32(np.nan))
    assert scalar.binary('ne', 'f32', np.float32(np.nan), np.float32(np.nan))
    np.testing.assert_array_equal(scalar.binary('lt', 'f16', a, b), a64 < b64)


def test_neg_exhaustive_and_specials():
    all16 = np.arange(1 << 16, dtype=np.uint16)
    for ty in ('f16', 'bf16'):
        r = scalar.unary('neg', ty, all16.view(dtypes.NP[ty]))
        np.testing.assert_array_equal(r.view(np.uint16), all16 ^ 0x8000)    # NaN payload kept
    u = np.array([0, 0x80000000, 0x7FC00001, 0x3F800000], np.uint32)
    np.testing.assert_array_equal(scalar.unary('neg', 'f32', u.view(np.float32)).view(np.uint32), u ^ 0x80000000)
    np.testing.assert_array_equal(scalar.unary('neg', 'i32', np.array([-2**31, 5, 0], np.int32)), [-2**31, -5, 0])
    np.testing.assert_array_equal(scalar.unary('neg', 'u32', np.array([1, 0], np.uint32)), [0xFFFFFFFF, 0])
    np.testing.assert_array_equal(scalar.unary('neg', 'i8', np.array([-128, 1], np.int8)), [-128, -1])
    np.testing.assert_array_equal(scalar.unary('not', 'i32', np.array([0, -1], np.int32)), [-1, 0])
    np.testing.assert_array_equal(scalar.unary('not', 'u8', np.array([0, 0xF0], np.uint8)), [0xFF, 0x0F])
    np.testing.assert_array_equal(scalar.unary('not', 'bool', np.array([True, False])), [False, True])
    with pytest.raises(ValueError):
        scalar.unary('not', 'f32', np.float32(1))


# ---- integers ---------------------------------------------------------------------

def wgsl_int_ref(op, ty, x, y):
    """Python-integer reference of WGSL integer semantics."""
    w, lo = dtypes.WIDTH[ty], dtypes.INT_MIN[ty]

    def wrap(v):
        v &= (1 << w) - 1
        return v - (1 << w) if ty in dtypes.SIGNED and v >> (w - 1) else v
    if op == 'add':
        return wrap(x + y)
    if op == 'sub':
        return wrap(x - y)
    if op == 'mul':
        return wrap(x * y)
    if op == 'div':
        if y == 0 or (x == lo and y == -1 and lo < 0):
            return x
        q = abs(x) // abs(y)
        return q if (x < 0) == (y < 0) else -q
    if op == 'rem':
        if y == 0 or (x == lo and y == -1 and lo < 0):
            return 0
        q = abs(x) // abs(y)
        q = q if (x < 0) == (y < 0) else -q
        return x - q * y
    if op == 'shl':
        return wrap(x << (y % w))
    if op == 'shr':
        return x >> (y % w)          # Python >> is arithmetic for negatives
    if op == 'and':
        return wrap(x & y)
    if op == 'or':
        return wrap(x | y)
    if op == 'xor':
        return wrap(x ^ y)
    raise AssertionError(op)


@pytest.mark.parametrize('ty', ['i32', 'u32', 'i8', 'u8'])
def test_integer_ops(ty):
    rng = np.random.default_rng(5)
    lo, hi, w = dtypes.INT_MIN[ty], dtypes.INT_MAX[ty], dtypes.WIDTH[ty]
    edge = sorted({lo, lo + 1, -1 if lo else 1, 0, 1, 2, 3, 7, hi - 1, hi})
    x = np.concatenate([np.repeat(edge, len(edge)), rng.integers(lo, hi + 1, 3000)])
    y = np.concatenate([np.tile(edge, len(edge)), rng.integers(lo, hi + 1, 3000)])
    y[-500:] = rng.integers(-9, 10, 500).clip(lo, hi)                          # small divisors
    X, Y = x.astype(dtypes.NP[ty]), y.astype(dtypes.NP[ty])
    for op in ('add', 'sub', 'mul', 'div', 'rem', 'and', 'or', 'xor'):
        r = scalar.binary(op, ty, X, Y)
        assert r.dtype == dtypes.NP[ty], op
        want = [wgsl_int_ref(op, ty, int(p), int(q)) for p, q in zip(x, y)]
        np.testing.assert_array_equal(r.astype(np.int64), want, err_msg=op)
    s = np.concatenate([np.arange(70), rng.integers(0, 2**32, 200)]).astype(np.uint32)
    v = np.resize(x, s.size).astype(dtypes.NP[ty])
    for op in ('shl', 'shr'):
        r = scalar.binary(op, ty, v, s)
        want = [wgsl_int_ref(op, ty, int(p), int(q)) for p, q in zip(v, s)]
        np.testing.assert_array_equal(r.astype(np.int64), want, err_msg=op)
    for op, f in (('eq', np.equal), ('lt', np.less), ('ge', np.greater_equal)):
        np.testing.assert_array_equal(scalar.binary(op, ty, X, Y), f(x, y))


def test_integer_edge_cases_named():
    b, i32, u32 = scalar.binary, np.int32, np.uint32
    mn = np.array([-2**31], i32)
    assert b('div', 'i32', mn, i32(-1)) == -2**31 and b('rem', 'i32', mn, i32(-1)) == 0
    assert b('div', 'i32', i32(7), i32(0)) == 7 and b('rem', 'i32', i32(7), i32(0)) == 0
    assert b('div', 'u32', u32(7), u32(0)) == 7 and b('rem', 'u32', u32(7), u32(0)) == 0
    assert b('div', 'i32', i32(-7), i32(2)) == -3 and b('rem', 'i32', i32(-7), i32(2)) == -1
    assert b('add', 'i32', i32(2**31 - 1), i32(1)) == -2**31
    assert b('mul', 'u32', u32(0x10000), u32(0x10000)) == 0
    assert b('sub', 'u32', u32(0), u32(1)) == 0xFFFFFFFF
    assert b('shl', 'u32', u32(1), u32(32)) == 1 and b('shl', 'u32', u32(1), u32(33)) == 2
    assert b('shr', 'i32', i32(-8), u32(1)) == -4 and b('shr', 'i32', i32(-8), u32(33)) == -4
    assert b('shr', 'u32', u32(0x80000000), u32(31)) == 1 and b('shr', 'u32', u32(0x80000000), u32(63)) == 1
    assert b('shl', 'i32', i32(1), u32(31)) == -2**31
    # broadcasting like numpy
    assert b('add', 'i32', np.arange(6, dtype=i32).reshape(2, 3), i32(1)).shape == (2, 3)


def test_bool_ops():
    t = np.array([True, True, False, False])
    f = np.array([True, False, True, False])
    assert list(scalar.binary('and', 'bool', t, f)) == [True, False, False, False]
    assert list(scalar.binary('or', 'bool', t, f)) == [True, True, True, False]
    assert list(scalar.binary('xor', 'bool', t, f)) == [False, True, True, False]
    assert list(scalar.binary('eq', 'bool', t, f)) == [True, False, False, True]
    assert list(scalar.binary('ne', 'bool', t, f)) == [False, True, True, False]
    with pytest.raises(ValueError):
        scalar.binary('lt', 'bool', t, f)
    with pytest.raises(ValueError):
        scalar.binary('and', 'f32', np.float32(1), np.float32(1))
