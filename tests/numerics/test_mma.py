"""MMA models: every numba kernel against its plain-Python reference, bit for bit (random inputs
and special values); serial against parallel; 'exact' and the chains against independent
Fraction / numpy arithmetic; hand-worked fused cases; integer wrap and saturate."""
import json
import zlib
from dataclasses import FrozenInstanceError
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from emu.numerics.mma import (MODELS, FusedModel, FusedParams, explain_element, get_model, mma,
                              reference_mma, resolve)

DT = {"f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16), "f32": np.dtype(np.float32),
      "e4m3": np.dtype(ml_dtypes.float8_e4m3fn), "e5m2": np.dtype(ml_dtypes.float8_e5m2)}
UINT = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32, "e4m3": np.uint8, "e5m2": np.uint8}
SPECIALS = {   # NaNs (with payloads), infinities, signed zeros, subnormals, extremes, min normal
    "f16": [0x7E00, 0x7D55, 0xFE01, 0x7C00, 0xFC00, 0x0000, 0x8000, 0x0001, 0x83FF, 0x0200,
            0x7BFF, 0xFBFF, 0x0400],
    "bf16": [0x7FC0, 0x7F81, 0x7F80, 0xFF80, 0x0000, 0x8000, 0x0001, 0x807F, 0x7F7F, 0xFF7F, 0x0080],
    "f32": [0x7FC00000, 0x7F800001, 0x7F800000, 0xFF800000, 0x00000000, 0x80000000, 0x00000001,
            0x807FFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x00800000],
    # e4m3 (no infinities): NaN, 448 = the largest, 0x7E's neighbour, zeros, subnormals, min normal
    "e4m3": [0x7F, 0xFF, 0x7E, 0xFE, 0x78, 0x00, 0x80, 0x01, 0x87, 0x08],
    "e5m2": [0x7E, 0x7D, 0xFF, 0x7C, 0xFC, 0x7B, 0xFB, 0x00, 0x80, 0x01, 0x83, 0x04],
}
# exponent ranges per format: 'wide' reaches subnormals and overflow of the result type
RANGES = {"f16": (-26, 16), "bf16": (-135, 128), "f32": (-150, 128), "e4m3": (-10, 9), "e5m2": (-17, 16)}

FLOAT_MODELS = [n for n in MODELS if n != "int-wrap"]
# parameter sets no preset uses, so that every branch of the fused kernel meets its reference
CUSTOM = {
    "fused-carry-flush-rd": FusedModel(
        "fused-carry-flush-rd",
        FusedParams(block=4, frac_bits=13, between_blocks="carry", final_rounding="rd",
                    flush_input_subnormals=True, flush_output_subnormals=True, overflow="ieee"),
        FusedParams(block=3, frac_bits=30, term_rounding="rd", between_blocks="carry",
                    final_rounding="ru", overflow="ieee"),
        FusedParams(block=5, frac_bits=20, term_rounding="rd", final_rounding="rne", input_frac_bits=10),
        0x7FFF, 0x7FFFFFFF, "test", bf16_f16_result=True),
    "fused-outside-ru": FusedModel(
        "fused-outside-ru",
        FusedParams(block=6, frac_bits=14, c_position="outside", sum_frac_bits=20, c_frac_bits=12,
                    final_rounding="ru", overflow="ieee"),
        FusedParams(block=3, frac_bits=30, c_position="outside", sum_frac_bits=33, c_frac_bits=27,
                    outside_rounding="rd", between_blocks="carry", final_rounding="rz", overflow="ieee"),
        FusedParams(block=2, frac_bits=26, c_position="outside", sum_frac_bits=30, c_frac_bits=26,
                    term_rounding="rd", final_rounding="rd"),
        0x7E00, 0x7FC00000, "test", bf16_f16_result=True),
    # zeros that align (MMA-Sim's e_zero), results narrower than their type, products that
    # overflow alone, and FP8 operands' own parameters
    "fused-ezero-narrow": FusedModel(
        "fused-ezero-narrow",
        FusedParams(block=5, frac_bits=18, zero_exponent=-20, final_rounding="rne"),
        FusedParams(block=7, frac_bits=26, zero_exponent=-140, result_frac_bits=13, term_rounding="rd",
                    final_rounding="rz", product_overflow=True),
        FusedParams(block=3, frac_bits=24, zero_exponent=-200, input_frac_bits=10, final_rounding="ru"),
        0x7FFF, 0x7FFFFFFF, "test", bf16_f16_result=True,
        fp8_f16_result=FusedParams(block=8, frac_bits=11, zero_exponent=-6, final_rounding="rne",
                                   zero_sign="positive"),
        fp8_f32_result=FusedParams(block=16, frac_bits=13, zero_exponent=-12, result_frac_bits=10,
                                   final_rounding="rd")),
}
ALL_FLOAT = FLOAT_MODELS + list(CUSTOM)
COMBOS = [("f16", "f16"), ("f16", "f32"), ("bf16", "f32"), ("bf16", "f16"), ("f32", "f32"), ("f32", "f16"),
          ("e4m3", "f32"), ("e4m3", "f16"), ("e5m2", "f32"), ("e5m2", "f16")]


def _model(name):
    return CUSTOM.get(name) or MODELS[name]


def _rng(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _gen(rng, fmt, shape, lo, hi, p_special=0.0):
    e = rng.integers(lo, hi, size=shape)
    v = np.ldexp(1 + rng.random(shape), e) * rng.choice([-1, 1], size=shape)
    with np.errstate(over="ignore"):
        x = v.astype(DT[fmt])
    if p_special:
        m = rng.random(shape) < p_special
        sp = np.array(SPECIALS[fmt], UINT[fmt]).view(DT[fmt])
        x[m] = sp[rng.integers(0, len(sp), size=int(m.sum()))]
    return x


def _cases(rng, fin, rt, S=2, M=3, N=3):
    """(label, a, b, c): narrow, wide (subnormals, overflow), special-heavy, exact cancellation;
    K varies to cover partial and chained blocks."""
    for label, K in (("narrow", 16), ("wide", 20), ("special", 9), ("cancel", 12), ("k1", 1)):
        if label == "cancel":
            # pairs of products that cancel exactly, plus a C that sometimes cancels the rest
            a = _gen(rng, fin, (S, M, K), -3, 3)
            b = _gen(rng, fin, (S, K, N), -3, 3)
            a[:, :, 1::2] = a[:, :, 0::2]
            b[:, 1::2, :] = -b[:, 0::2, :]
            c = _gen(rng, rt, (S, M, N), -3, 3)
            c[0] = 0
            c[1, 0] = -0.0
        else:
            lo, hi = {"narrow": (-2, 2), "wide": RANGES[fin], "special": (-12, 12), "k1": RANGES[fin]}[label]
            p = {"narrow": 0.0, "wide": 0.08, "special": 0.4, "k1": 0.3}[label]
            a = _gen(rng, fin, (S, M, K), lo, hi, p)
            b = _gen(rng, fin, (S, K, N), lo, hi, p)
            c = _gen(rng, rt, (S, M, N), *RANGES[rt], p)
        yield label, a, b, c


def _bits(x):
    return x.view(UINT["f16" if x.dtype.itemsize == 2 else "f32"])


def _supported(model, fin, rt):
    try:
        resolve(model, fin, rt, rt)
        return True
    except ValueError:
        return False


# ------------------------------------------------------------------ kernel == reference

@pytest.mark.parametrize("fin,rt", COMBOS, ids=[f"{a}->{b}" for a, b in COMBOS])
@pytest.mark.parametrize("name", ALL_FLOAT)
def test_kernel_matches_reference(name, fin, rt):
    model = _model(name)
    rng = _rng(name, fin, rt)
    if not _supported(model, fin, rt):
        a = np.zeros((1, 2, 2), DT[fin])
        with pytest.raises(ValueError, match="no .* matrix multiply"):
            mma(model, a, a, np.zeros((1, 2, 2), DT[rt]), rt)
        return
    for label, a, b, c in _cases(rng, fin, rt):
        got = _bits(mma(model, a, b, c, rt))
        want = _bits(reference_mma(model, a, b, c, rt))
        bad = np.argwhere(got != want)
        assert bad.size == 0, (f"{label}: {len(bad)} differ, first {tuple(bad[0])}: kernel "
                               f"{got[tuple(bad[0])]:#x} reference {want[tuple(bad[0])]:#x}")


@pytest.mark.parametrize("name", ["exact", "ieee-chain", "lavapipe-chain", "nvidia-hopper",
                                  "nvidia-volta", "fused-carry-flush-rd"])
def test_c_type_other_than_result_type(name):
    """C is read in its own format (f16 C with an f32 result and the other way round)."""
    model = _model(name)
    rng = _rng("ctype", name)
    for c_fmt, rt in (("f16", "f32"), ("f32", "f16")):
        a = _gen(rng, "f16", (2, 3, 10), -14, 8, 0.1)
        b = _gen(rng, "f16", (2, 10, 3), -14, 8, 0.1)
        c = _gen(rng, c_fmt, (2, 3, 3), -20, 20, 0.1)
        assert np.array_equal(_bits(mma(model, a, b, c, rt)), _bits(reference_mma(model, a, b, c, rt)))


@pytest.mark.parametrize("name", ALL_FLOAT)
def test_serial_and_parallel_identical(name):
    model = _model(name)
    rng = _rng("par", name)
    for fin, rt in COMBOS:
        if not _supported(model, fin, rt):
            continue
        a = _gen(rng, fin, (24, 8, 16), -6, 6, 0.05)
        b = _gen(rng, fin, (24, 16, 8), -6, 6, 0.05)
        c = _gen(rng, rt, (24, 8, 8), -6, 6, 0.05)
        assert np.array_equal(_bits(mma(model, a, b, c, rt, jobs=1)), _bits(mma(model, a, b, c, rt, jobs=2)))


def test_integer_serial_parallel_and_reference():
    rng = _rng("int")
    for dt, cdt, rt in ((np.int8, np.int32, "i32"), (np.uint8, np.uint32, "u32")):
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max + 1, size=(20, 4, 32)).astype(dt)
        b = rng.integers(info.min, info.max + 1, size=(20, 32, 4)).astype(dt)
        cinfo = np.iinfo(cdt)
        c = rng.integers(cinfo.min, cinfo.max + 1, size=(20, 4, 4), dtype=np.int64).astype(cdt)
        c[0, 0, :] = [cinfo.max, cinfo.min, cinfo.max - 5, cinfo.min + 5]
        for sat in (False, True):
            d1 = mma("exact", a, b, c, rt, saturate=sat)
            assert d1.dtype == cdt
            assert np.array_equal(d1, mma("nvidia-hopper", a, b, c, rt, saturate=sat, jobs=2))
            assert np.array_equal(d1[:3], reference_mma("int-wrap", a[:3], b[:3], c[:3], rt, saturate=sat))
            exact = np.einsum("smk,skn->smn", a.astype(np.int64), b.astype(np.int64)) + c.astype(np.int64)
            if sat:
                want = np.clip(exact, cinfo.min, cinfo.max).astype(cdt)
            else:
                want = (exact & 0xFFFFFFFF).astype(np.uint32).view(cdt)
            assert np.array_equal(d1, want)


# ------------------------------------------------------------------ independent arithmetic

def _frac(x) -> Fraction:
    return Fraction(float(x))


def _round_fraction(x: Fraction, fmt: str) -> int:
    """Nearest-even bits of x in fmt, found by comparing neighbours exactly (independent of the
    models): start from numpy's conversion, then look one ulp either side."""
    dt = DT[fmt]
    fi = np.finfo(dt)
    mx = Fraction(float(fi.max))
    ulp_max = Fraction(2) ** (int(fi.maxexp) - 1 - int(fi.nmant))
    if abs(x) >= mx + ulp_max / 2:
        return int(np.array(np.inf if x > 0 else -np.inf, dt).view(UINT[fmt]))
    if x == 0:
        return 0
    t = dt.type
    v = t(float(x))
    cands = [c for c in (v, np.nextafter(v, t(np.inf)), np.nextafter(v, t(-np.inf))) if np.isfinite(c)]
    bits = [int(np.array(c, dt).view(UINT[fmt])) for c in cands]
    # nearest; on a tie the even significand (the bit patterns of neighbours differ by one)
    best = min(range(len(cands)), key=lambda n: (abs(Fraction(float(cands[n])) - x), bits[n] & 1))
    return bits[best]


@pytest.mark.parametrize("fin,rt", COMBOS, ids=[f"{a}->{b}" for a, b in COMBOS])
def test_exact_against_fractions(fin, rt):
    rng = _rng("frac", fin, rt)
    for lo, hi in ((-3, 3), RANGES[fin]):
        a = _gen(rng, fin, (3, 4, 16), lo, hi)
        b = _gen(rng, fin, (3, 16, 4), lo, hi)
        c = _gen(rng, rt, (3, 4, 4), lo, hi)
        if lo == -3:        # force some near-halfway and exactly cancelling sums
            b[0, :, 0] = -b[0, :, 1]
            a[0, 1, :] = a[0, 0, :]
        a = np.where(np.isfinite(a.astype(np.float64)), a, 0).astype(DT[fin])
        b = np.where(np.isfinite(b.astype(np.float64)), b, 0).astype(DT[fin])
        c = np.where(np.isfinite(c.astype(np.float64)), c, 0).astype(DT[rt])
        got = _bits(mma("exact", a, b, c, rt))
        for s in range(3):
            for i in range(4):
                for j in range(4):
                    x = sum(_frac(a[s, i, k]) * _frac(b[s, k, j]) for k in range(16)) + _frac(c[s, i, j])
                    assert int(got[s, i, j]) == _round_fraction(x, rt), (s, i, j)


@pytest.mark.parametrize("fin,rt", COMBOS, ids=[f"{a}->{b}" for a, b in COMBOS])
def test_ieee_chain_against_fraction_fma(fin, rt):
    rng = _rng("fma", fin, rt)
    a = _gen(rng, fin, (2, 3, 8), -8, 8)
    b = _gen(rng, fin, (2, 8, 3), -8, 8)
    c = _gen(rng, rt, (2, 3, 3), -8, 8)
    got = _bits(mma("ieee-chain", a, b, c, rt))
    for s in range(2):
        for i in range(3):
            for j in range(3):
                d = _frac(c[s, i, j])
                for k in range(8):
                    bits = _round_fraction(_frac(a[s, i, k]) * _frac(b[s, k, j]) + d, rt)
                    d = _frac(np.array(bits, UINT[rt]).view(DT[rt]))
                assert int(got[s, i, j]) == bits


@pytest.mark.parametrize("fin,rt", [("f16", "f16"), ("f16", "f32"), ("f32", "f32")])
def test_lavapipe_chain_against_numpy(fin, rt):
    """numpy's float32 ops are IEEE single; its float16 ops round an exact-enough float32 result
    to half, which is correctly rounded for + and * (24 >= 2*11 + 2)."""
    rng = _rng("lvp", fin, rt)
    a = _gen(rng, fin, (3, 4, 16), -10, 6)
    b = _gen(rng, fin, (3, 16, 4), -10, 6)
    c = _gen(rng, rt, (3, 4, 4), -10, 6)
    acc = DT[rt].type
    with np.errstate(over="ignore", invalid="ignore"):
        s = np.zeros((3, 4, 4), acc)
        for k in range(16):
            p = (a[:, :, k, None].astype(acc) * b[:, None, k, :].astype(acc)).astype(acc)
            s = (s + p).astype(acc)
        want = (s + c).astype(acc)
    got = mma("lavapipe-chain", a, b, c, rt)
    assert np.array_equal(_bits(got), _bits(want))


# ------------------------------------------------------------------ hand-worked cases

def _one(model, a_vals, b_vals, c_val, rt, fin="f16"):
    a = np.array(a_vals, DT[fin]).reshape(1, 1, -1)
    b = np.array(b_vals, DT[fin]).reshape(1, -1, 1)
    c = np.array([c_val], DT[rt]).reshape(1, 1, 1)
    return int(_bits(mma(model, a, b, c, rt))[0, 0, 0])


def test_hopper_truncates_addends_before_the_sum():
    # 1 - 2^-26: the small addend is cut to 0 against the quantum 2^-25, so the result is 1.0,
    # where a toward-zero rounding of the exact sum would give 1 - 2^-24.
    assert _one("nvidia-hopper", [1.0, -2.0 ** -13], [1.0, 2.0 ** -13], 0.0, "f32") == 0x3F800000
    assert _one("exact", [1.0, -2.0 ** -13], [1.0, 2.0 ** -13], 0.0, "f32") == 0x3F800000
    # 1 + 3*2^-25 is kept whole, then rounded toward zero (exact rounding: nearest, up).
    assert _one("nvidia-hopper", [1.0, 1.5 * 2.0 ** -12], [1.0, 2.0 ** -12], 0.0, "f32") == 0x3F800000
    assert _one("exact", [1.0, 1.5 * 2.0 ** -12], [1.0, 2.0 ** -12], 0.0, "f32") == 0x3F800001
    # f16 results round to nearest even: 1 + 2^-11 + 2^-13 -> 1 + 2^-10
    assert _one("nvidia-hopper", [1.0, 2.0 ** -6, 2.0 ** -7], [1.0, 2.0 ** -5, 2.0 ** -6], 0.0, "f16") == 0x3C01


def test_block_size_and_rounding_between_blocks():
    # products 1, 0, 0, 0, 2^-24, 2^-24: Volta fuses k0..3 then k4..7 with F = 23 against the
    # rounded 1.0, so both 2^-24 are cut away; Ampere (L = 8, F = 24) and Hopper keep them.
    a = [1.0, 0, 0, 0, 2.0 ** -12, 2.0 ** -12]
    b = [1.0, 0, 0, 0, 2.0 ** -12, 2.0 ** -12]
    assert _one("nvidia-volta", a, b, 0.0, "f32") == 0x3F800000
    assert _one("nvidia-ampere", a, b, 0.0, "f32") == 0x3F800001
    assert _one("nvidia-hopper", a, b, 0.0, "f32") == 0x3F800001
    assert _one("exact", a, b, 0.0, "f32") == 0x3F800001


def test_subnormal_inputs_keep_their_clamped_exponent():
    # 2^-24 * 2^-24 = 2^-48: formal exponent -28, quantum 2^-53, kept exactly
    assert _one("nvidia-hopper", [2.0 ** -24], [2.0 ** -24], 0.0, "f32") == 0x27800000
    # subnormal f16 results, rounded to nearest even: 0.75 * 2^-24 -> 2^-24; 0.375 * 2^-24 -> 0
    assert _one("nvidia-hopper", [1.5 * 2.0 ** -12], [2.0 ** -13], 0.0, "f16") == 0x0001
    assert _one("nvidia-hopper", [1.5 * 2.0 ** -13], [2.0 ** -13], 0.0, "f16") == 0x0000


@pytest.mark.parametrize("rt,nan", [("f16", 0x7FFF), ("f32", 0x7FFFFFFF)])
def test_nvidia_special_values(rt, nan):
    inf, snan = np.inf, np.array(0x7D55, np.uint16).view(np.float16).item()
    assert _one("nvidia-hopper", [snan, 1.0], [1.0, 1.0], 0.0, rt) == nan       # payload dropped
    assert _one("nvidia-hopper", [inf, 1.0], [0.0, 1.0], 0.0, rt) == nan        # inf * 0
    assert _one("nvidia-hopper", [inf, -inf], [1.0, 1.0], 0.0, rt) == nan       # inf - inf
    assert _one("nvidia-hopper", [inf, 1.0], [1.0, 1.0], -inf, rt) == nan       # inf - inf via C
    pinf = 0x7C00 if rt == "f16" else 0x7F800000
    assert _one("nvidia-hopper", [inf, 3.0], [2.0, 1.0], 5.0, rt) == pinf
    assert _one("nvidia-hopper", [-inf, 3.0], [2.0, 1.0], 5.0, rt) == pinf | (1 << (15 if rt == "f16" else 31))
    assert _one("exact", [snan], [1.0], 0.0, rt) == (0x7E00 if rt == "f16" else 0x7FC00000)


def test_f16_overflow_and_largest_finite():
    assert _one("nvidia-hopper", [2.0 ** 15, 1.0], [2.0, 1.0], 0.0, "f16") == 0x7C00
    assert _one("nvidia-hopper", [65504.0, 8.0], [1.0, 1.0], 0.0, "f16") == 0x7BFF   # 65512 -> 65504
    assert _one("nvidia-hopper", [65504.0, 16.0], [1.0, 1.0], 0.0, "f16") == 0x7C00  # 65520 ties to inf


def test_signed_zeros():
    assert _one("exact", [-0.0], [1.0], -0.0, "f32") == 0x80000000
    assert _one("exact", [0.0], [-1.0], 0.0, "f32") == 0x00000000
    assert _one("exact", [1.0, -1.0], [1.0, 1.0], -0.0, "f32") == 0x00000000
    assert _one("ieee-chain", [-0.0, -0.0], [1.0, 1.0], -0.0, "f16") == 0x8000
    # lavapipe's reduction starts from +0, so (+0 + -0) + -0 is +0
    assert _one("lavapipe-chain", [-0.0], [1.0], -0.0, "f32") == 0x00000000
    # The H200 returns no -0 (tests/data/hw/h200/mma_special.npz): a sum of -0s is +0, and so
    # is a negative sum too small for f16 (-2^-26 rounds to zero)
    assert _one("nvidia-hopper", [-0.0], [1.0], -0.0, "f32") == 0x00000000
    assert _one("nvidia-hopper", [-0.0], [1.0], -0.0, "f16") == 0x0000
    assert _one("nvidia-hopper", [-(2.0 ** -13)], [2.0 ** -13], 0.0, "f16") == 0x0000
    assert _one("ieee-chain", [-(2.0 ** -13)], [2.0 ** -13], 0.0, "f16") == 0x8000
    assert _one("nvidia-hopper", [2.0, -2.0], [1.0, 1.0], -0.0, "f32") == 0x00000000


def test_amd_cdna3_truncates_products_and_floors_c_outside():
    # products 1 and -2^-30: the small one is truncated toward zero, the sum stays 1.0
    assert _one("amd-cdna3", [1.0, -2.0 ** -15], [1.0, 2.0 ** -15], 0.0, "f32") == 0x3F800000
    # C = -2^-30 added outside: floored to 24 fraction bits below 2^0, i.e. to -2^-24, and
    # 1 - 2^-24 is an f32; the exact sum 1 - 2^-30 rounds to 1.0
    assert _one("amd-cdna3", [1.0], [1.0], -2.0 ** -30, "f32") == 0x3F7FFFFF
    assert _one("exact", [1.0], [1.0], -2.0 ** -30, "f32") == 0x3F800000


# ------------------------------------------------------------------ integers

def _int1(a, b, c, rt, sat, jobs=1):
    dt = np.int8 if rt == "i32" else np.uint8
    cdt = np.int32 if rt == "i32" else np.uint32
    A = np.array(a, dt).reshape(1, 1, -1)
    B = np.array(b, dt).reshape(1, -1, 1)
    C = np.array([c], np.int64).astype(cdt).reshape(1, 1, 1)
    return int(mma("nvidia-hopper", A, B, C, rt, saturate=sat, jobs=jobs)[0, 0, 0])


def test_integer_wrap_and_saturate_known_answers():
    imax, imin = 2 ** 31 - 1, -2 ** 31
    # 32 * (-128 * -128) = 524288 on top of INT32_MAX
    assert _int1([-128] * 32, [-128] * 32, imax, "i32", False) == imin + 524287
    assert _int1([-128] * 32, [-128] * 32, imax, "i32", True) == imax
    assert _int1([-128] * 32, [127] * 32, imin + 5, "i32", False) == imin + 5 - 520192 + 2 ** 32
    assert _int1([-128] * 32, [127] * 32, imin + 5, "i32", True) == imin
    assert _int1([255] * 32, [255] * 32, 2 ** 32 - 1000, "u32", False) == 2080800 - 1000
    assert _int1([255] * 32, [255] * 32, 2 ** 32 - 1000, "u32", True) == 2 ** 32 - 1
    # only the final + C saturates: INT32_MAX + (100 - 200) is INT32_MAX - 100, although a
    # saturating running sum would have stuck at INT32_MAX after the first product
    assert _int1([10, -10], [10, 20], imax, "i32", True) == imax - 100
    assert _int1([10, -10], [10, 20], imax, "i32", True, jobs=2) == imax - 100
    # u8 products are unsigned: 200 * 200 = 40000
    assert _int1([200], [200], 0, "u32", False) == 40000


def test_integer_32bit_inputs_and_8bit_results_wrap():
    """i32/u32 inputs and i8/u8 results: the low bits of the exact A*B + C (Python integers
    here), from the serial and parallel kernels and the reference alike, at the extremes."""
    rng = _rng("int-wide")
    cases = ((np.int32, np.int32, "i32", 16), (np.uint32, np.uint32, "u32", 16),
             (np.int8, np.int8, "i8", 32), (np.uint8, np.uint8, "u8", 32))
    for dt, cdt, rt, K in cases:
        info, cinfo = np.iinfo(dt), np.iinfo(cdt)
        a = rng.integers(info.min, info.max + 1, size=(3, 4, K), dtype=np.int64).astype(dt)
        b = rng.integers(info.min, info.max + 1, size=(3, K, 4), dtype=np.int64).astype(dt)
        c = rng.integers(cinfo.min, cinfo.max + 1, size=(3, 4, 4), dtype=np.int64).astype(cdt)
        a[0, 0, :], b[0, :, 0], c[0, 0, 0] = info.min, info.min, cinfo.max
        a[0, 1, :], b[0, :, 1] = info.max, info.max
        exact = [[[sum(int(a[s, i, k]) * int(b[s, k, j]) for k in range(K)) + int(c[s, i, j])
                   for j in range(4)] for i in range(4)] for s in range(3)]
        bits = np.iinfo(cdt).bits
        want = np.array([[[x % (1 << bits) for x in row] for row in m] for m in exact],
                        np.uint64).astype(np.uint8 if bits == 8 else np.uint32).view(cdt)
        for got in (mma("exact", a, b, c, rt), mma("int-wrap", a, b, c, rt, jobs=2),
                    reference_mma("exact", a, b, c, rt)):
            assert got.dtype == cdt and np.array_equal(got, want), rt
    # by hand: 16 * (-2^31)^2 = 2^66 leaves 0; (127 * 127) * 32 + 1 = 516129 = 0x7E021 -> 0x21
    A = np.full((1, 1, 16), -2 ** 31, np.int32)
    assert int(mma("exact", A, A.reshape(1, 16, 1), np.full((1, 1, 1), 5, np.int32), "i32")[0, 0, 0]) == 5
    A = np.full((1, 1, 32), 127, np.int8)
    assert int(mma("exact", A, A.reshape(1, 32, 1), np.ones((1, 1, 1), np.int8), "i8")[0, 0, 0]) == 0x21
    info = explain_element("exact", A[0, 0], A[0, 0], np.int8(1), "i8")
    assert info["result"] == {"value": 0x21, "bits": "0x21"} and "2^8" in info["rule"]


def test_integer_preset_is_independent_of_float_preset():
    rng = _rng("intpreset")
    a = rng.integers(-128, 128, size=(3, 4, 32)).astype(np.int8)
    b = rng.integers(-128, 128, size=(3, 32, 4)).astype(np.int8)
    c = rng.integers(-2 ** 31, 2 ** 31, size=(3, 4, 4)).astype(np.int32)
    outs = [mma(m, a, b, c, "i32") for m in ("exact", "nvidia-hopper", "amd-cdna3", "int-wrap")]
    assert all(np.array_equal(outs[0], o) for o in outs[1:])


# ------------------------------------------------------------------ explain, models, errors

@pytest.mark.parametrize("name", ALL_FLOAT)
def test_explain_element_agrees_and_serialises(name):
    model = _model(name)
    rng = _rng("explain", name)
    for fin, rt in COMBOS:
        if not _supported(model, fin, rt):
            continue
        a = _gen(rng, fin, (1, 1, 20), -12, 12, 0.1)
        b = _gen(rng, fin, (1, 20, 1), -12, 12, 0.1)
        c = _gen(rng, rt, (1, 1, 1), -12, 12)
        info = explain_element(model, a[0, 0], b[0, :, 0], c[0, 0, 0], rt)
        json.dumps(info, allow_nan=False)
        d = int(_bits(mma(model, a, b, c, rt))[0, 0, 0])
        assert int(info["result"]["bits"], 16) == d
        assert "correctly_rounded_bits" in info["exact"]
        if name == "exact":
            assert info["matches_correctly_rounded"]


def test_explain_fused_lists_terms_and_blocks():
    a = np.array([1.0, -2.0 ** -13, 0.0], np.float16)
    b = np.array([1.0, 2.0 ** -13, 5.0], np.float16)
    info = explain_element("nvidia-hopper", a, b, np.float32(0.25), "f32")
    (blk,) = info["blocks"]
    assert blk["alignment_exponent"] == 0 and blk["quantum_exponent"] == -25
    ks = [t["k"] for t in blk["terms"]]
    assert ks == [0, 1, 2, "C"]
    assert blk["terms"][1]["kept_quanta"] == 0 and blk["terms"][1]["bits_lost"]
    assert info["result"]["bits"] == "0x3fa00000"
    info = explain_element("int-wrap", np.array([1, 2], np.int8), np.array([3, 4], np.int8),
                           np.int32(5), "i32")
    assert info["result"]["value"] == 16
    json.dumps(info)


def test_models_are_frozen_and_named():
    for name, m in MODELS.items():
        assert get_model(name) is m and m.name == name
        with pytest.raises(FrozenInstanceError):
            m.name = "x"
    assert get_model(MODELS["exact"]) is MODELS["exact"]


def test_errors_name_the_problem():
    a = np.zeros((1, 2, 4), np.float16)
    b = np.zeros((1, 4, 2), np.float16)
    c = np.zeros((1, 2, 2), np.float32)
    with pytest.raises(ValueError, match="unknown MMA model 'nope'"):
        mma("nope", a, b, c, "f32")
    with pytest.raises(ValueError, match="shapes disagree"):
        mma("exact", a, b[:, :3], c, "f32")
    with pytest.raises(ValueError, match="share a dtype"):
        mma("exact", a, b.astype(np.float32), c, "f32")
    with pytest.raises(ValueError, match="result_type"):
        mma("exact", a, b, c, "f64")
    with pytest.raises(ValueError, match="integer MMA only"):
        mma("exact", a, b, c, "f32", saturate=True)
    with pytest.raises(ValueError, match="for integer inputs"):
        mma("int-wrap", a, b, c, "f32")
    with pytest.raises(ValueError, match="need an i8/u8/i32/u32 C"):
        mma("exact", a.astype(np.int8), b.astype(np.int8), c, "f32")
    with pytest.raises(ValueError, match="need an i32/u32 C"):
        mma("exact", a.astype(np.int32), b.astype(np.int32), c.astype(np.int8), "i8")
    with pytest.raises(ValueError, match="8-bit inputs into an i32/u32 result only, not i32 into i32"):
        mma("exact", a.astype(np.int32), b.astype(np.int32), c.astype(np.int32), "i32", saturate=True)
    with pytest.raises(ValueError, match="inconsistent FusedParams"):
        FusedParams(block=8, frac_bits=24, c_position="outside")


def test_mixed_signedness_8bit_products_are_exact():
    """i8 x u8 and u8 x i8 (SPIR-V's per-operand signedness, listed by amd-rdna3): products of the
    two values, summed exactly, + C wrapping modulo 2^32 or saturating; kernels, parallel kernel
    and plain-Python reference agree with sums worked out in Python integers."""
    rng = np.random.default_rng(7)
    a = rng.integers(-128, 128, (3, 16, 16)).astype(np.int8)
    b = rng.integers(0, 256, (3, 16, 16)).astype(np.uint8)
    a[0, 0, :] = -128
    b[0, :, 0] = 255                                  # 16 * (-128 * 255) = -522,240
    c = rng.integers(-2**31, 2**31, (3, 16, 16)).astype(np.int32)
    c[0, 0, 0] = -2**31
    exact = [[[sum(int(a[s, i, k]) * int(b[s, k, j]) for k in range(16)) + int(c[s, i, j])
               for j in range(16)] for i in range(16)] for s in range(3)]
    assert exact[0][0][0] == -522240 - 2**31
    wrapped = np.array([[[((v + 2**31) % 2**32) - 2**31 for v in row] for row in m] for m in exact], np.int64)
    clamped = np.clip(np.array(exact, dtype=object), -2**31, 2**31 - 1).astype(np.int64)
    for x, y in ((a, b), (b.transpose(0, 2, 1).copy(), a.transpose(0, 2, 1).copy())):
        want_w = wrapped if x is a else wrapped.transpose(0, 2, 1)
        want_c = clamped if x is a else clamped.transpose(0, 2, 1)
        cc = c if x is a else c.transpose(0, 2, 1).copy()
        for jobs in (1, 2):
            assert np.array_equal(mma("exact", x, y, cc, "i32", jobs=jobs), want_w)
            assert np.array_equal(mma("exact", x, y, cc, "i32", saturate=True, jobs=jobs), want_c)
        assert np.array_equal(reference_mma("exact", x, y, cc, "i32"), want_w)
        assert np.array_equal(reference_mma("exact", x, y, cc, "i32", saturate=True), want_c)
    with pytest.raises(ValueError, match="share a dtype"):
        mma("exact", a, b.astype(np.int32), c, "i32")


@pytest.mark.parametrize("name", ["nvidia-ada", "nvidia-hopper", "nvidia-blackwell", "exact", "ieee-chain",
                                  "fused-ezero-narrow"])
@pytest.mark.parametrize("fa,fb", [("e4m3", "e5m2"), ("e5m2", "e4m3")])
def test_mixed_fp8_kernel_matches_reference(name, fa, fb):
    """e4m3 x e5m2 (PTX's and SPIR-V's mixed FP8): B read in its own format, the kernel's
    narrower significand shifted up; kernel and reference agree, and a product is the exact
    product of the two values."""
    model = _model(name)
    rng = _rng("mixed", name, fa, fb)
    for rt in ("f32", "f16"):
        for lo, hi, p in ((-3, 3, 0.0), (*RANGES[fa], 0.3)):
            a = _gen(rng, fa, (2, 3, 32), lo, hi, p)
            b = _gen(rng, fb, (2, 32, 3), lo, hi, p)
            c = _gen(rng, rt, (2, 3, 3), -6, 6, p)
            assert np.array_equal(_bits(mma(model, a, b, c, rt)), _bits(reference_mma(model, a, b, c, rt)))
    one = np.zeros((1, 1, 32), DT[fa])
    one[0, 0, 5] = 1.5
    other = np.zeros((1, 32, 1), DT[fb])
    other[0, 5, 0] = -0.375
    assert float(mma("exact", one, other, np.zeros((1, 1, 1), np.float32), "f32")[0, 0, 0]) == -0.5625


def test_mixed_operands_other_than_fp8_are_refused():
    with pytest.raises(ValueError, match="share a dtype"):
        mma("exact", np.zeros((1, 2, 2), np.float16), np.zeros((1, 2, 2), DT["e4m3"]),
            np.zeros((1, 2, 2), np.float32), "f32")
