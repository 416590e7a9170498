"""Which plain f32 `k - x * y` the H200's Vulkan driver fuses (session 9, 2026-12-02): the 20
variants of tests/shaders/spirv/scalar_contract_probe.comp (scripts/h200_contract_probe.py), each
on 2 input sets of 1,024, raw outputs in tests/data/hw/h200/vulkan_scalar_contract_runs.npz.

Measured: every form fuses alone (0.7 - x*c, z - x*c, x*c - 0.7, 0.7 + x*c, push- and
spec-constant minuends, 1.0 - x*c, 0.7 - x*0.3, 0.7 + (-x)*c, -(x*c) + 0.7, Tint's shape, in a loop,
with or without OpLine); only `0.7 - x * c` after `0.7 - x / c` of the same loads is rounded first
(straight or in coop_elem_probe2.comp's loop: 4,096 of 4,096). emu before: 1,836 of 45,056 values
differed (1,224 of those second results; 612 of -(x*c) + 0.7, which emu rounded); now none."""
import struct
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.isa.ir import PUSH_CONSTANTS
from emu.numerics import nvidia
from emu.numerics.dtypes import FORMAT
from emu.numerics.rounding import round_fraction

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import h200_contract_probe as probe  # noqa: E402

RUNS = np.load(ROOT / "tests" / "data" / "hw" / "h200" / "vulkan_scalar_contract_runs.npz")
TWO = {"12", "13"}          # 0.7 - x / c, then 0.7 - x * c: 2,048 results


def _emu(v, x, c, z):
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(probe.variant_source(v), "scalar_contract_probe.comp"))
    bufs = {(0, 0): dev.create_buffer(x), (0, 1): dev.create_buffer(c), (0, 2): dev.create_buffer(z),
            (0, 3): dev.create_buffer(size=2048 * 4), PUSH_CONSTANTS: dev.create_buffer(np.array([0.7], np.float32))}
    dev.dispatch(pipe, bufs, (4, 1, 1))
    return bufs[(0, 3)].read(np.float32)[:2048 if v in TWO else 1024]


@pytest.mark.parametrize("v", probe.VARIANTS)
def test_emu_gives_the_h200s_results(v):
    for s in range(2):
        x, c, z = (RUNS[f"s{s}/{k}"] for k in "XCZ")
        got = _emu(v, x, c, z)
        gpu = RUNS[f"s{s}/v{v}"][:got.size]
        assert np.array_equal(got.view(np.uint32), gpu.view(np.uint32)), (v, s)


def _fma(a, b, c):
    return np.array([float(round_fraction(Fraction(float(p)) * Fraction(float(q)) + Fraction(float(r)), FORMAT["f32"]))
                     for p, q, r in zip(a, b, c)], np.float32)


def test_the_recording_separates_fused_from_rounded():
    """The models on their own, set 0: `0.7 - x * c` alone is fma(-x, c, 0.7) in all 1,024
    (rounded first: 712); after the division it is 0.7 - (x * c rounded) in all 1,024 (fused: 712),
    and the division before it fma(-x, RCP(c), 0.7) in all 1,024."""
    x, c, z = (RUNS[f"s0/{k}"] for k in "XCZ")
    k = np.full_like(x, np.float32(0.7))
    fused = _fma(-x, c, k).view(np.uint32)
    rounded = nvidia.binary("sub", "f32", k, nvidia.binary("mul", "f32", x, c)).view(np.uint32)
    alone, after = RUNS["s0/v0"].view(np.uint32)[:1024], RUNS["s0/v12"].view(np.uint32)[1024:]
    assert [int((alone == fused).sum()), int((alone == rounded).sum())] == [1024, 712]
    assert [int((after == fused).sum()), int((after == rounded).sum())] == [712, 1024]
    div = _fma(-x, nvidia.binary("div", "f32", np.ones_like(c), c), k).view(np.uint32)
    assert int((RUNS["s0/v12"].view(np.uint32)[:1024] == div).sum()) == 1024


def test_a_store_between_or_other_operands_keep_the_fusion():
    """The rule needs the same loads: with the divisor's buffer written between the two
    statements, or x * z after x / c, emu fuses (as the H200 does everywhere else; not measured)."""
    base = probe.variant_source("12")
    x, c, z = (RUNS[f"s0/{k}"] for k in "XCZ")
    k = np.full_like(x, np.float32(0.7))
    second = "r[1024 + i] = 0.7 - x[i] * c[i];"
    stored = base.replace("readonly buffer C", "buffer C").replace(second, "c[i] = c[i]; " + second)
    other = base.replace(second, "r[1024 + i] = 0.7 - x[i] * z[i];")
    for src, y in ((stored, c), (other, z)):
        assert src != base
        dev = emu.Device("nvidia-h200")
        pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "probe.comp"))
        bufs = {(0, 0): dev.create_buffer(x), (0, 1): dev.create_buffer(c), (0, 2): dev.create_buffer(z),
                (0, 3): dev.create_buffer(size=2048 * 4)}
        dev.dispatch(pipe, bufs, (4, 1, 1))
        got = bufs[(0, 3)].read(np.float32)[1024:]
        assert np.array_equal(got.view(np.uint32), _fma(-x, y, k).view(np.uint32))
