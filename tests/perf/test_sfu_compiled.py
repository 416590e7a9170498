"""The compiled forms of MUFU's units (emu/numerics/scalar_compiled.py: nv_ex2, nv_lg2, nv_sincos)
and of f32 min / max, which the fusion JIT's kernels call, against the reference forms
(emu/numerics/sfu.py, emu/numerics/builtins.py): the same bits on random bit patterns (every
exponent, NaNs, infinities, subnormals, signed zeros) and on f32 values of everyday size."""
import numpy as np
import pytest
from numba import njit

from emu.numerics import builtins, nvidia, sfu
from emu.numerics import scalar_compiled as rt

SPECIAL = np.array([0, 0x80000000, 1, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0x7F800000,
                    0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001, 0x3F800000, 0xBF800000, 0x3F000000,
                    0xBF000000, 0x43000000, 0xC3000000, 0x42FE0000, 0xC2FC0000, 0x40490FDB, 0x3F7FFFFF],
                   np.uint32)


def _inputs(n=200_000):
    rng = np.random.default_rng(30)
    return np.concatenate([SPECIAL, rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32),
                           (rng.standard_normal(n) * 20).astype(np.float32).view(np.uint32)]).view(np.float32)


@njit(cache=False)
def _ex2(x, t):
    out = np.empty(x.size, np.float32)
    for i in range(x.size):
        out[i] = rt.nv_ex2(x[i], t)
    return out


@njit(cache=False)
def _lg2(x, t, t1):
    out = np.empty(x.size, np.float32)
    for i in range(x.size):
        out[i] = rt.nv_lg2(x[i], t, t1)
    return out


@njit(cache=False)
def _sincos(x, quarter, t):
    out = np.empty(x.size, np.float32)
    for i in range(x.size):
        out[i] = rt.nv_sincos(x[i], quarter, t)
    return out


@njit(cache=False)
def _minmax(a, b, is_max):
    out = np.empty(a.size, np.float32)
    for i in range(a.size):
        out[i] = rt.fminmax_f32(a[i], b[i], is_max)
    return out


def _same(got, want):
    got, want = got.view(np.uint32), np.asarray(want, np.float32).view(np.uint32)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"{bad.size} differ, first inputs at {bad[:5]}: {got[bad[:5]]} != {want[bad[:5]]}"


@pytest.mark.parametrize("unit", ["ex2", "lg2", "sin", "cos"])
def test_mufu_units_compiled_same_bits(unit):
    x = _inputs()
    if unit == "ex2":
        _same(_ex2(x, sfu.table("ex2")), sfu.ex2(x))
    elif unit == "lg2":
        _same(_lg2(x, sfu.table("lg2"), sfu.table("lg2_neg1")), sfu.lg2(x))
    else:
        _same(_sincos(x, 0 if unit == "sin" else 1 << 23, sfu.table("sin")), getattr(sfu, unit)(x))


@njit(cache=False)
def _tanh(x, t_ex2, t_rcp):
    out = np.empty(x.size, np.float32)
    for i in range(x.size):
        out[i] = rt.nv_tanh(x[i], t_ex2, t_rcp)
    return out


def test_nvidia_tanh_compiled_same_bits():
    """The H200's tanh (CUDA's tanhf: EX2 and RCP above 0.6, the odd polynomial below), around
    both of its thresholds too."""
    x = np.concatenate([_inputs(), np.random.default_rng(32).uniform(-10, 10, 100_000).astype(np.float32),
                        np.array([0x3F19999A, 0x3F199999, 0x41102CB4, 0x41102CB3, 0xBF19999A, 0xC1102CB4],
                                 np.uint32).view(np.float32)])
    _same(_tanh(x, sfu.table("ex2"), sfu.table("rcp")), nvidia.call("tanh", "f32", x))


@pytest.mark.parametrize("fn", ["min", "max"])
def test_f32_min_max_compiled_same_bits(fn):
    x = _inputs(50_000)
    y = np.random.default_rng(31).permutation(x)
    pairs = np.array([0, 0x80000000, 0x7FC00000, 0xFFC00001, 0x3F800000], np.uint32).view(np.float32)
    a = np.concatenate([x, np.repeat(pairs, pairs.size)])
    b = np.concatenate([y, np.tile(pairs, pairs.size)])
    _same(_minmax(a, b, fn == "max"), builtins.call(fn, "f32", a, b))


def test_tables_kept_on_disk_and_checked(tmp_path, monkeypatch):
    """sfu.table keeps a rebuilt table in EMU_SFU_CACHE; a kept file whose CRC is not the measured
    table's (damaged, or planted) is rebuilt, not used."""
    monkeypatch.setenv("EMU_SFU_CACHE", str(tmp_path))
    sfu.table.cache_clear()
    try:
        fresh = sfu.table("rcp").copy()
        (kept,) = tmp_path.glob("rcp-*.npy")
        sfu.table.cache_clear()
        loaded = sfu.table("rcp")
        assert np.array_equal(loaded, fresh)                     # loaded from the file,
        assert isinstance(loaded.base, np.memmap) and not loaded.flags.writeable     # mapped, not read
        mark = kept.with_name(kept.name + ".checked")
        assert mark.read_text() == sfu._signature(str(kept))     # its CRC checked once, noted
        sfu.table.cache_clear()
        assert np.array_equal(sfu.table("rcp"), fresh)
        bad = np.load(kept)
        bad[12345] ^= 1
        np.save(kept, bad)
        sfu.table.cache_clear()
        assert np.array_equal(sfu.table("rcp"), fresh)          # damaged: rebuilt
        assert np.array_equal(np.load(kept), fresh)             # and kept again
    finally:
        sfu.table.cache_clear()
