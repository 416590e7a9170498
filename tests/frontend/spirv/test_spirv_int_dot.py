"""SPV_KHR_integer_dot_product: OpSDot, OpUDot, OpSUDot and their AccSat forms, packed 4x8-bit
and on vectors (tests/shaders/spirv/int_dot.comp), bit for bit against the spec's rule written
here in numpy (components extended to the result's width, products summed, the low 32 bits; the
AccSat forms add the accumulator with saturation). tests/hw/test_vulkan_breadth_lavapipe.py
runs the same shader on lavapipe."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import emu

# int_dot.comp's SPIR-V twin: the wheel's glslang (13.1.1) refuses GL_EXT_integer_dot_product
FILE = "tests/shaders/spirv/int_dot.spvasm"
SRC = (Path(__file__).resolve().parents[3] / FILE).read_text()


def inputs(seed: int = 1) -> np.ndarray:
    """64 random uvec4 words; some accumulators next to the saturation bounds."""
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 1 << 32, (64, 4), dtype=np.uint64).astype(np.uint32)
    w[:16, 2] = 0x7FFFFFFF - rng.integers(0, 40000, 16)      # a signed accumulator near the top
    w[16:32, 2] = 0x80000000 + rng.integers(0, 40000, 16)    # and near the bottom
    w[:32, 3] = 0xFFFFFFFF - rng.integers(0, 80000, 32)      # an unsigned one near the top
    return w


def _bytes(x, signed):
    b = (x[:, None].astype(np.int64) >> np.array([0, 8, 16, 24])) & 0xFF
    return (b ^ 0x80) - 0x80 if signed else b


def _s32(x):
    return ((np.asarray(x, np.int64) + (1 << 31)) % (1 << 32)) - (1 << 31)


def _sat_s(a, d):
    return np.clip(a + d, -(1 << 31), (1 << 31) - 1)


def _sat_u(a, d):
    return _s32(np.clip(a + d, 0, (1 << 32) - 1))


def reference(w: np.ndarray) -> np.ndarray:
    x, y, z, ww = (w[:, k].astype(np.int64) for k in range(4))
    acc, uacc = _s32(z), ww
    a8, b8s, b8 = _bytes(x, True), _bytes(y, True), _bytes(y, False)
    sdot = (a8 * b8s).sum(1)
    udot = (_bytes(x, False) * b8).sum(1)
    sudot = (a8 * b8).sum(1)
    xs, ys, zs, ws = _s32(x), _s32(y), _s32(z), _s32(ww)
    out = np.stack([
        sdot, _s32(udot), sudot, _sat_s(acc, sdot),
        _sat_u(uacc, udot), _sat_s(acc, sudot), sdot, _sat_s(acc, sdot),
        _s32(xs * ys + ys * zs + zs * ws), _s32(x * z + y * ww), a8[:, 0] * b8[:, 2] + a8[:, 1] * b8[:, 3],
        _sat_u(uacc, b8[:, 0] * b8[:, 2] + b8[:, 1] * b8[:, 3]),
        _sat_s(acc, a8[:, 2] * b8[:, 0] + a8[:, 3] * b8[:, 1]),
        _sat_s(acc, (x & 0xFFF) * 3 - 5 * (y & 0xFFF)), _s32(-(xs + ys + zs + ws)), np.zeros_like(x)], 1)
    return out.astype(np.int64).astype(np.int32)


def test_every_integer_dot_product_is_bit_exact():
    dev = emu.Device("reference")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SRC, FILE))
    w = inputs()
    out = dev.create_buffer(size=64 * 16 * 4)
    dev.dispatch(pipe, {(0, 0): dev.create_buffer(w), (0, 1): out}, (1, 1, 1))
    got = out.read(np.int32).reshape(64, 16)
    want = reference(w)
    assert np.array_equal(got, want), np.argwhere(got != want)[:8]
    # the accumulators near the bounds saturated (the test reaches the AccSat rule)
    assert (got[:16, 3] == 0x7FFFFFFF).any() and (got[16:32, 3] == -(1 << 31)).any()
    assert (got[:32, 4] == -1).any()


def test_packed_same_signedness_is_one_ir_builtin():
    from emu.isa.printer import print_module
    module, _ = emu.api.compile_wgsl(SRC, FILE)
    text = print_module(module)
    assert "dot4I8Packed" in text and "dot4U8Packed" in text

