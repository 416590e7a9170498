"""SPV_VALVE_mixed_float_dot_product (tests/shaders/spirv/mixed_dot.comp, declared through
GL_EXT_spirv_intrinsics as llama.cpp's shaders do) on the emulator, bit-exact against numpy's
IEEE arithmetic in the order the extension's text states (inputs converted to the result type,
products, their sum in component order, then the accumulator), each step rounded once and none
contracted into an fma, on an IEEE profile and on the H200's (whose driver contracts a*b+c
elsewhere). lavapipe (Mesa 25.0.7) has no VK_VALVE_shader_mixed_float_dot_product: no device run."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import emu
from emu.errors import EmuError

FILE = Path(__file__).resolve().parents[3] / "tests" / "shaders" / "spirv" / "mixed_dot.comp"
SRC = FILE.read_text()
N = 64


def inputs():
    rng = np.random.default_rng(6916)
    x = (rng.standard_normal((N, 2)) * 8).astype(np.float16)
    y = (rng.standard_normal((N, 2)) * 8).astype(np.float16)
    c = (rng.standard_normal(N) * 64).astype(np.float32)
    special = np.array([np.inf, -np.inf, np.nan, -0.0, 6.1e-5, 5.96e-8, 65504, -65504], np.float16)
    x[:8, 0], y[8:16, 1] = special, special
    x[16:20], y[16:20] = 65504, 2               # products past f16's range: finite in f32, inf in f16
    c[20:24] = [1e30, -1e30, 0.0, -0.0]
    x[24:28], y[24:28] = 1.0, [[1, -1], [3, -3], [0.5, 0.25], [1e-3, 1e-3]]   # cancelling products
    x[28], y[28], c[28] = [1, 2 ** -14], [1, 2 ** -14], -1.0      # 1 + 2^-28 rounds to 1 before the -1
    return x, y, c


def reference(x, y, c):
    with np.errstate(all="ignore"):
        f = lambda v: v.astype(np.float32)                               # noqa: E731  exact
        p, pyx, pxy = f(x) * f(y), f(x[:, ::-1]) * f(y), f(x) * f(y[:, ::-1])
        o = [(p[:, 0] + p[:, 1]) + c, (p[:, 0] + p[:, 1]) + np.float32(0), None]
        o[2] = (pyx[:, 0] + pyx[:, 1]) + ((pxy[:, 0] + pxy[:, 1]) + c)
        h16 = x * y
        hh = x * x
        h = [(h16[:, 0] + h16[:, 1]) + c.astype(np.float16), (hh[:, 0] + hh[:, 1]) + np.float16(0)]
    return np.stack(o).astype(np.float32), np.stack(h).astype(np.float16)


def run(profile):
    x, y, c = inputs()
    dev = emu.Device(profile)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SRC, "tests/shaders/spirv/mixed_dot.comp"))
    bufs = {(0, 0): dev.create_buffer(x), (0, 1): dev.create_buffer(y), (0, 2): dev.create_buffer(c),
            (0, 3): dev.create_buffer(size=3 * N * 4), (0, 4): dev.create_buffer(size=2 * N * 2)}
    dev.dispatch(pipe, bufs, (1, 1, 1))
    return bufs[(0, 3)].read(np.float32).reshape(3, N), bufs[(0, 4)].read(np.float16).reshape(2, N)


def _same(a, b):
    return (a.view(np.uint32 if a.itemsize == 4 else np.uint16) == b.view(a.view(np.uint32 if a.itemsize == 4
            else np.uint16).dtype)) | (np.isnan(a) & np.isnan(b))


@pytest.mark.parametrize("profile", ["lavapipe", "nvidia-h200"])
def test_mixed_dot_products_match_ieee_steps(profile):
    o, h = run(profile)
    ro, rh = reference(*inputs())
    assert _same(o, ro).all(), np.argwhere(~_same(o, ro))[:8]
    assert _same(h, rh).all(), np.argwhere(~_same(h, rh))[:8]
    assert np.isinf(rh[0, 16:20]).all() and np.isfinite(ro[0, 16:20]).all()   # the f32 accumulation keeps them
    assert o[0, 28] == 0.0          # step by step; one rounding of the exact value would give 2^-28


def test_a_wrong_accumulator_is_refused_at_its_line():
    src = SRC.replace("float dot2MixAcc32(f16vec2 a, f16vec2 b, float acc);",
                      "float dot2MixAcc32(f16vec2 a, f16vec2 b, float16_t acc);").replace(
        "dot2MixAcc32(x, y, c)", "dot2MixAcc32(x, y, float16_t(c))").replace(
        "dot2MixAcc32(x, y, 0.0)", "dot2MixAcc32(x, y, float16_t(0.0))").replace(
        "dot2MixAcc32(x, y.yx, c)", "dot2MixAcc32(x, y.yx, float16_t(c))").replace(
        "dot2MixAcc32(x.yx, y, dot2MixAcc32", "dot2MixAcc32(x.yx, y, float16_t(dot2MixAcc32").replace(
        "float16_t(c)));", "float16_t(c))));")
    with pytest.raises(EmuError) as e:
        emu.Device().create_shader_module(src, "m.comp")
    assert e.value.message == ("OpFDot2MixAcc32VALVE takes two 2-vectors of f16 or bf16 and an accumulator of f32, "
                               "not vec2<f16>, vec2<f16> and f16 giving f32")
    assert (e.value.loc.file, e.value.loc.line) == ("m.comp", 26)
