"""The H200's integer cooperative matrices from GLSL (tests/shaders/spirv/mma_int8.comp): i8 x i8
-> i32 and u8 x u8 -> u32 at 16x16x32 and 16x8x32, K = 64 in two steps, with the operands' extremes
(-128, 127, 255) and C near the 32-bit limits: exact products and sums, wrapping modulo 2^32 (the
H200's integer accumulation, tests/data/hw/h200/mma_int.npz). The driver lists no mixed-signedness
and no saturating configuration: both are refused."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.errors import EmuError

ROOT = Path(__file__).resolve().parents[3]
KERNEL = (ROOT / "tests" / "shaders" / "spirv" / "mma_int8.comp").read_text()
sys.path.insert(0, str(ROOT / "scripts"))
from h200_vulkan import int8_buffers, int8_inputs  # noqa: E402  (the H200 session's inputs, scripts/)


def expected(sa, sb, sc, ua, ub, uc):
    """(IR, UR) as the kernel stores them: exact sums, modulo 2^32."""
    s = sa.astype(np.int64) @ sb.astype(np.int64) + sc
    u = ua.astype(np.int64) @ ub.astype(np.int64) + uc
    ir = np.concatenate([s.ravel(), s[:, :8].ravel()]) & 0xFFFFFFFF
    ur = np.concatenate([u.T.ravel(), u[:, :8].T.ravel()]) & 0xFFFFFFFF
    return ir.astype(np.uint32).view(np.int32), ur.astype(np.uint32)


@pytest.mark.parametrize("seed", [0, 1])
def test_int8_multiply_add_wraps_exactly_on_the_h200_profile(seed):
    ins = int8_inputs(np.random.default_rng(seed))
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(KERNEL, "tests/shaders/spirv/mma_int8.comp"))
    bufs = {k: dev.create_buffer(v) for k, v in int8_buffers(*ins).items()}
    dev.dispatch(pipe, bufs, (1, 1, 1))
    ir, ur = expected(*ins)
    got_i, got_u = bufs[(0, 3)].read(np.int32), bufs[(0, 7)].read(np.uint32)
    assert np.array_equal(got_i, ir) and np.array_equal(got_u, ur)
    sa, sb, sc = ins[:3]
    exact = int(sa[0].astype(np.int64) @ sb[:, 0].astype(np.int64)) + int(sc[0, 0])
    assert exact > 2 ** 31 - 1 and got_i[0] == exact - 2 ** 32        # wrapped, not saturated
    ua, ub, uc = ins[3:]
    assert got_u[0] == (64 * 255 * 255 + int(uc[0, 0])) - 2 ** 32


def _refused(src):
    with pytest.raises(EmuError) as e:
        emu.Device("nvidia-h200").create_shader_module(src, "k.comp")
    return e.value


def test_mixed_signedness_is_refused_where_the_device_lists_none():
    src = KERNEL.replace("coopmat<int8_t, S, 32, 16, gl_MatrixUseB> sb;", "coopmat<uint8_t, S, 32, 16, gl_MatrixUseB> sb;") \
        .replace("coopMatLoad(sb, ib, k * 16, 16, RM);", "coopMatLoad(sb, ua, k * 16, 16, RM);")
    assert src != KERNEL
    err = _refused(src)
    assert "nvidia-h200" in err.message and "u8" in err.message
    assert err.loc.line == KERNEL.splitlines().index("        i16 = coopMatMulAdd(sa, sb, i16);") + 1


@pytest.mark.parametrize("line", ["i16 = coopMatMulAdd(sa, sb, i16);", "u16 = coopMatMulAdd(ua_, ub_, u16);"])
def test_saturating_accumulation_is_refused_where_the_device_has_none(line):
    src = KERNEL.replace(line, line.replace(");", ", gl_MatrixOperandsSaturatingAccumulation);"))
    assert src != KERNEL
    err = _refused(src)
    assert "no saturating accumulation" in err.message and err.loc.line == KERNEL.splitlines().index("        " + line) + 1
    assert "wraps" in err.hint
