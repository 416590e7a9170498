"""emu's matrix-unit models against MMA-Sim (microsoft/MMA-Sim, the `mmasim` package: models of
each architecture validated bit for bit on the real GPUs, arXiv:2511.10909) as an oracle: for
every architecture x format that both cover, the same random dot products go through emu's model
and through MMA-Sim's, and every result bit must agree.

Optional: MMA-Sim needs PyTorch, so the `oracle` extra is not part of `test` (CI does not install
it). Run it with

    pip install -e '.[oracle]'
    python -m pytest tests/numerics/test_mmasim_oracle.py
    python -m tests.numerics.test_mmasim_oracle        # the same as a table (from the root)

Without mmasim every test here is skipped, saying so. The whole run takes about 5 minutes on 2
idle cores (most of it MMA-Sim's PyTorch arithmetic and its import), so it runs only where asked
for: this file named on the command line (as above) or EMU_MMASIM=1; a plain `python -m pytest`
skips it, saying how to run it, and CI does not install the extra.

Each configuration is one instruction of MMA-Sim's (its PTX/MFMA name, its K) against the emu
model that stands for that architecture, over five input families of 2^15 dot products each
(163,840 results per configuration): 'normal' (exponents near 1), 'wide' (every finite bit
pattern: subnormals, zeros, overflowing products), 'special' (a third of the operands drawn from
signed zeros, infinities, NaNs, subnormals, the extremes), 'cancel' (products that cancel in pairs,
exactly or within an ulp, and a C that cancels the rest), 'tiny' (subnormal and smallest-normal
operands with zeros of both signs: where zero addends move the alignment).
"""
from __future__ import annotations

import os
import zlib
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from emu.numerics.mma import mma
from emu.numerics.mma_ref import FORMATS

N = 1 << 15
FAMILIES = ("normal", "wide", "special", "cancel", "tiny")
NP_IN = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32,
         "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}

# (emu model, MMA-Sim class, MMA-Sim architecture, MMA-Sim instruction, operand format, result, K)
_NV_BASE = {   # arch -> [(instruction, operands, result, K)], mma.sync f16 / bf16 / tf32
    "Volta": [("m8n8k4.f32.f16.f16.f32", "f16", "f32", 4), ("m8n8k4.f16.f16.f16.f16", "f16", "f16", 4)],
    "Turing": [("m16n8k8.f32.f16.f16.f32", "f16", "f32", 8), ("m16n8k8.f16.f16.f16.f16", "f16", "f16", 8)],
}
_SM80 = [("m16n8k16.f32.f16.f16.f32", "f16", "f32", 16), ("m16n8k16.f16.f16.f16.f16", "f16", "f16", 16),
         ("m16n8k16.f32.bf16.bf16.f32", "bf16", "f32", 16), ("m16n8k8.f32.tf32.tf32.f32", "f32", "f32", 8)]
_FP8 = [("e4m3", "e4m3"), ("e5m2", "e5m2"), ("e4m3", "e5m2"), ("e5m2", "e4m3")]   # A, B (mixed too)
_SM89 = [(f"m16n8k32.{r}.{a}.{b}.{r}", a if a == b else f"{a}.{b}", r, 32) for a, b in _FP8 for r in ("f32", "f16")]
_ARCH = {"Volta": "nvidia-volta", "Turing": "nvidia-turing", "Ampere": "nvidia-ampere",
         "Ada Lovelace": "nvidia-ada", "Hopper": "nvidia-hopper", "Blackwell": "nvidia-blackwell",
         "RTX Blackwell": "nvidia-rtx-blackwell"}
CONFIGS = []
for _arch, _insts in {**_NV_BASE, "Ampere": _SM80, "Ada Lovelace": _SM80 + _SM89, "Hopper": _SM80,
                      "Blackwell": _SM80, "RTX Blackwell": _SM80 + _SM89}.items():
    CONFIGS += [(_ARCH[_arch], "MMA", _arch, i, t, r, k) for i, t, r, k in _insts]
# FP8 on Hopper: wgmma (m64nNk32); on Blackwell: tcgen05.mma kind::f8f6f4 (mma.sync has none there)
CONFIGS += [("nvidia-hopper", "WGMMA", "Hopper", f"m64n8k32.{r}.{a}.{b}", a if a == b else f"{a}.{b}", r, 32)
            for a, b in _FP8 for r in ("f32", "f16")]
CONFIGS += [("nvidia-blackwell", "TCGen05MMA", "Blackwell", f"m64n8k32.kind::f8f6f4.{r}.{a}.{b}",
             a if a == b else f"{a}.{b}", r, 32) for a, b in _FP8 for r in ("f32", "f16")]
CONFIGS += [("amd-cdna3", "MFMA", "CDNA3", f"f32_16x16x16_{t}", t, "f32", 16) for t in ("f16", "bf16")]


def _rng(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _fields(fmt):
    """(exponent bits, fraction bits, total bits, finite_only) of an emu format name."""
    f = FORMATS[fmt]
    return f.ebits, f.fbits, f.nbits, f.finite_only


def _compose(sign, exp, frac, fmt):
    eb, fb, nb, _ = _fields(fmt)
    return ((sign.astype(np.uint64) << (nb - 1)) | (exp.astype(np.uint64) << fb) | frac.astype(np.uint64))


def _random_bits(rng, shape, fmt, lo, hi):
    """Operands with biased exponent fields in [lo, hi] and random sign and fraction (NaN patterns
    of a format without infinities avoided)."""
    eb, fb, nb, fn = _fields(fmt)
    bits = _compose(rng.integers(0, 2, shape), rng.integers(lo, hi + 1, shape),
                    rng.integers(0, 1 << fb, shape, dtype=np.uint64), fmt)
    if fn:                           # e4m3: S.1111.111 is NaN
        nan = (bits & ((1 << (nb - 1)) - 1)) == (1 << (nb - 1)) - 1
        bits[nan] -= 1
    return bits


def _specials(fmt):
    eb, fb, nb, fn = _fields(fmt)
    top = ((1 << eb) - 1) << fb
    sign = 1 << (nb - 1)
    one = ((1 << (eb - 1)) - 1) << fb
    vals = [0, sign, 1, sign | 1, (1 << fb) - 1, 1 << fb, sign | (1 << fb), one, sign | one]
    if fn:                                            # e4m3: NaN only, the largest finite 448
        vals += [top | ((1 << fb) - 1), sign | top | ((1 << fb) - 1), top | ((1 << fb) - 2)]
    else:
        vals += [top, sign | top, top | (1 << (fb - 1)), sign | top | 1, top - 1, sign | (top - 1)]
    return np.array(vals, np.uint64)


def _formats(fmt):
    """(A's format, B's format) of a configuration's operand field ('e4m3' or 'e4m3.e5m2')."""
    fa, _, fb = fmt.partition(".")
    return fa, fb or fa


def _family(fam, fmt, cfmt, K, seed):
    """(A bits (N, K), B bits (N, K), C bits (N,)) of one input family."""
    rng = _rng(fam, fmt, cfmt, K, seed)
    fa, fb = _formats(fmt)

    def bias(f):
        return (1 << (_fields(f)[0] - 1)) - 1

    def near(f, shape, up=0):                            # exponents within 3 of 1 (times 2^up)
        return _random_bits(rng, shape, f, max(1, bias(f) + up - 3), bias(f) + up + 3)

    def wide(f, shape):                                  # every finite pattern
        eb, _, _, fn = _fields(f)
        return _random_bits(rng, shape, f, 0, (1 << eb) - 1 - (0 if fn else 1))

    def tiny(f, shape, p_zero):                          # subnormals, smallest normals, signed zeros
        x = _random_bits(rng, shape, f, 0, 2)
        zero = rng.random(shape) < p_zero
        x[zero] = rng.integers(0, 2, int(zero.sum())).astype(np.uint64) << (_fields(f)[2] - 1)
        return x
    if fam == "normal":
        return near(fa, (N, K)), near(fb, (N, K)), near(cfmt, (N,), 2)
    if fam == "wide":
        return wide(fa, (N, K)), wide(fb, (N, K)), wide(cfmt, (N,))
    if fam == "special":
        a, b, c = near(fa, (N, K)), near(fb, (N, K)), near(cfmt, (N,))
        for x, f in ((a, fa), (b, fb), (c, cfmt)):
            pick = rng.random(x.shape) < 1 / 3
            x[pick] = rng.choice(_specials(f), int(pick.sum()))
        return a, b, c
    if fam == "cancel":   # half the rows: products cancel in pairs (exactly, or within an ulp);
        a, b = near(fa, (N, K)), near(fb, (N, K))                   # every row: C cancels the sum
        rows = rng.random(N) < 0.5
        a[rows, 1::2] = a[rows, 0::2] ^ np.uint64(1 << (_fields(fa)[2] - 1))
        frac = (1 << _fields(fb)[1]) - 1
        nudge = (rng.random((N, K // 2)) < 0.5) & ((b[:, 0::2] & frac) != frac)
        b[rows, 1::2] = (b[:, 0::2] + nudge.astype(np.uint64))[rows]
        prods = _as(a, fa).astype(np.float64) * _as(b, fb).astype(np.float64)
        cdt = np.float16 if cfmt == "f16" else np.float32
        with np.errstate(over="ignore"):
            c = (-prods.sum(1)).astype(cdt).view(UINT[np.dtype(cdt).itemsize]).astype(np.uint64)
        return a, b, c
    assert fam == "tiny"
    return tiny(fa, (N, K), 0.25), tiny(fb, (N, K), 0.25), tiny(cfmt, (N,), 0.5)


def _as(bits, fmt):
    nb = _fields(fmt)[2]
    return bits.astype(UINT[(nb + 7) // 8]).view(NP_IN[fmt])


def _mmasim(cls, arch, inst, fmt, result, a, b, c):
    import torch
    from mmasim.amd import sim as amd
    from mmasim.nv_ptx import sim as nv
    op = (amd if cls == "MFMA" else nv).__dict__[cls](arch, inst)
    tdt = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
           "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
    signed = {1: np.int8, 2: np.int16, 4: np.int32}

    def tensor(x, f):
        nb = _fields(f)[2]
        return torch.from_numpy(np.ascontiguousarray(x.astype(UINT[(nb + 7) // 8]).view(signed[(nb + 7) // 8]))) \
            .view(tdt[f])
    fa, fb = _formats(fmt)
    d = op.dpa(tensor(a, fa), tensor(b, fb), tensor(c, result))
    width = 2 if result == "f16" else 4
    return d.view({2: torch.int16, 4: torch.int32}[width]).numpy().view(UINT[width])


def compare(config, fam):
    """(values compared, values that differ, first differing index or None)."""
    model, cls, arch, inst, fmt, result, K = config
    a, b, c = _family(fam, fmt, result, K, inst)
    ref = _mmasim(cls, arch, inst, fmt, result, a, b, c)
    fa, fb = _formats(fmt)
    got = mma(model, _as(a, fa)[:, None, :], _as(b, fb)[:, :, None], _as(c, result)[:, None, None], result)
    got = got.reshape(-1).view(UINT[got.dtype.itemsize])
    bad = np.flatnonzero(got != ref)
    return len(ref), len(bad), (int(bad[0]) if len(bad) else None), (a, b, c, got, ref)


def _ids(cfg):
    return f"{cfg[0]}-{cfg[3]}"


def _asked_for(config) -> bool:
    return os.environ.get("EMU_MMASIM") == "1" or any(Path(__file__).name in str(a) for a in config.args)


@pytest.mark.parametrize("fam", FAMILIES)
@pytest.mark.parametrize("config", CONFIGS, ids=_ids)
def test_equals_mmasim(config, fam, request):
    if not _asked_for(request.config):      # before importing it: torch's import alone takes seconds
        pytest.skip("the MMA-Sim oracle takes minutes: run it by naming tests/numerics/test_mmasim_oracle.py "
                    "or with EMU_MMASIM=1 (with the 'oracle' extra installed)")
    pytest.importorskip("mmasim", reason="MMA-Sim is not installed: pip install -e '.[oracle]' "
                                          "(it needs PyTorch) to compare emu's models with it")
    n, nbad, first, (a, b, c, got, ref) = compare(config, fam)
    assert n == N
    assert nbad == 0, (f"{config[0]} vs MMA-Sim {config[2]} {config[3]} ({fam}): {nbad} of {n} differ; "
                       f"first at {first}: a={[hex(x) for x in a[first]]} b={[hex(x) for x in b[first]]} "
                       f"c={hex(c[first])} emu={hex(got[first])} MMA-Sim={hex(ref[first])}")


if __name__ == "__main__":
    print("| emu model | MMA-Sim instruction | operands | result | family | values | differ |")
    print("|---|---|---|---|---|---|---|")
    total = bad = 0
    for cfg in CONFIGS:
        for fam in FAMILIES:
            n, nbad, _, _ = compare(cfg, fam)
            total, bad = total + n, bad + nbad
            print(f"| {cfg[0]} | {cfg[2]} {cfg[3]} | {cfg[4]} | {cfg[5]} | {fam} | {n:,} | {nbad:,} |")
    print(f"\n{len(CONFIGS)} configurations x {len(FAMILIES)} families: {total:,} values, {bad:,} differ")
