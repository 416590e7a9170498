"""The compiled f16 arithmetic and integer <-> float conversions (emu/numerics/scalar_compiled.py),
which the fusion JIT's kernels call, against the interpreter's rules (emu/numerics/scalar.py,
builtins.py, nvidia.py): the same bits for every f16 operand kind (random bit patterns: zeros,
subnormals, infinities, NaNs), for values of everyday size, and for integers around f16's range."""
import numpy as np
import pytest
from numba import njit

from emu.numerics import builtins, nvidia, scalar, sfu
from emu.numerics import scalar_compiled as rt
from emu.numerics.dtypes import INT_MAX, INT_MIN, NP

SPECIAL = np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x3BFF, 0x3C00, 0x3C01, 0x7BFF, 0xFBFF,
                    0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0x7D55, 0x5BFF, 0x1400], np.uint16)


def _pairs(n=400_000):
    rng = np.random.default_rng(16)
    a = rng.integers(0, 1 << 16, n).astype(np.uint16)
    b = rng.integers(0, 1 << 16, n).astype(np.uint16)
    every = rng.uniform(-500, 500, n // 2).astype(np.float16).view(np.uint16)     # everyday values
    a[: n // 2], b[n // 4: 3 * n // 4] = every, every
    sa, sb = np.meshgrid(SPECIAL, SPECIAL)
    return np.concatenate([sa.ravel(), a]), np.concatenate([sb.ravel(), b])


@njit(cache=False, error_model="numpy")
def _binary(op, a, b, c, nan, tab):
    out = np.empty(a.size, np.uint16)
    for i in range(a.size):
        if op == 0:
            out[i] = rt.f16_add(a[i], b[i], nan)
        elif op == 1:
            out[i] = rt.f16_sub(a[i], b[i], nan)
        elif op == 2:
            out[i] = rt.f16_mul(a[i], b[i], nan)
        elif op == 3:
            out[i] = rt.f16_div(a[i], b[i])
        elif op == 4:
            out[i] = rt.nv_f16_div(a[i], b[i], tab)
        else:
            out[i] = rt.f16_fma(a[i], b[i], c[i], nan)
    return out


def _same(got, want):
    want = np.asarray(want).view(np.uint16)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"{bad.size} differ, first at {bad[:5]}: {got[bad[:5]]} != {want[bad[:5]]}"


@pytest.mark.parametrize("model", ["ieee", "nvidia"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "fma"])
def test_f16_arithmetic(model, op):
    a, b = _pairs()
    c = np.roll(a, 7)
    nv = model == "nvidia"
    h = lambda x: x.view(np.float16)        # noqa: E731
    code = {"add": 0, "sub": 1, "mul": 2, "div": 4 if nv else 3, "fma": 5}[op]
    got = _binary(code, a, b, c, 0x7FFF if nv else -1, sfu.table("rcp"))
    if op == "fma":
        want = (nvidia.call if nv else builtins.call)("fma", "f16", h(a), h(b), h(c))
    else:
        want = (nvidia if nv else scalar).binary(op, "f16", h(a), h(b))
    if not nv:      # an IEEE NaN's payload is the host's (unspecified): compare NaN-ness there
        nan = np.isnan(np.asarray(want, np.float16).astype(np.float32))
        assert np.array_equal(np.isnan(h(got).astype(np.float32)), nan)
        got, want = got[~nan], np.asarray(want)[~nan]
    _same(got, want)


@njit(cache=False, error_model="numpy")
def _int_to_f16(x, wgsl):
    out = np.empty(x.size, np.uint16)
    for i in range(x.size):
        out[i] = rt.int_to_f16(x[i], wgsl)
    return out


@pytest.mark.parametrize("ty", ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"])
def test_integer_to_f16(ty):
    rng = np.random.default_rng(3)
    edge = np.array([0, 1, -1, 2047, 2049, 4097, 65504, 65505, 65519, 65520, 65535, -65519, -65520,
                     2 ** 24 + 1, -(2 ** 31), 2 ** 31 - 1, 2 ** 53 + 1, -(2 ** 63), 2 ** 63 - 1], object)
    x = np.concatenate([np.array([int(v) % (1 << (8 * NP[ty].itemsize)) for v in edge], np.uint64).astype(NP[ty]),
                        rng.integers(INT_MIN[ty], INT_MAX[ty], 50_000, dtype=np.int64 if ty != "u64" else np.uint64,
                                     endpoint=True).astype(NP[ty]),
                        rng.integers(-70000, 70000, 50_000).astype(NP[ty])])
    _same(_int_to_f16(x, False), scalar.convert_native(x, ty, "f16"))
    _same(_int_to_f16(x, False), nvidia.convert_native(x, ty, "f16"))
    _same(_int_to_f16(x, True), scalar.convert(x, ty, "f16"))
    _same(_int_to_f16(x, True), nvidia.convert(x, ty, "f16"))


@njit(cache=False, error_model="numpy")
def _to_int(x, lo, hi, nan):
    out = np.empty(x.size, np.int64)
    for i in range(x.size):
        out[i] = rt.float_to_int(x[i], lo, hi, nan)
    return out


@pytest.mark.parametrize("src", ["f16", "f32"])
@pytest.mark.parametrize("ty", ["i8", "u8", "i16", "u16", "i32", "u32"])
def test_float_to_integer(src, ty):
    """float_to_int with the bounds the fusion JIT gives each rule (fuse._Gen.int_bounds)."""
    rng = np.random.default_rng(4)
    if src == "f16":
        x = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    else:
        x = np.concatenate([rng.integers(0, 2 ** 32, 100_000, dtype=np.uint64).astype(np.uint32).view(np.float32),
                            rng.uniform(-70000, 70000, 100_000).astype(np.float32),
                            np.array([np.inf, -np.inf, np.nan, 127.9, -128.9, 255.5, 32767.9, -32768.9, 65535.5,
                                      4e9, -3e9, 2147483520.0], np.float32)])
    wide = np.asarray(x, np.float32)
    lo, hi = scalar.float_bounds_for_int(ty, src)
    ieee = _to_int(wide, lo, hi, 0).astype(NP[ty])
    assert np.array_equal(ieee, scalar.convert(x, src, ty))
    assert np.array_equal(ieee, scalar.convert_native(x, src, ty))
    nv_native = _to_int(wide, float(INT_MIN[ty]), float(INT_MAX[ty]), 0).astype(NP[ty])
    assert np.array_equal(nv_native, nvidia.convert_native(x, src, ty))
    nv = _to_int(wide, lo, hi, int(lo) if ty in ("i32", "u32") else 0).astype(NP[ty])
    if not (src == "f32" and ty in ("i32", "u32")):     # (those: rt.nv_f32_to_i32 and f32_to_u32)
        assert np.array_equal(nv, nvidia.convert(x, src, ty))
