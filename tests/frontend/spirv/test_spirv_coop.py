"""GLSL KHR cooperative matrices on the nvidia-h200 profile, checked bit for bit against its
matrix-unit model (emu.numerics.mma with the profile's model) and lane maps, as `emu demo`
checks the WGSL GEMMs."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import emu
from emu.demo import expected
from emu.errors import EmuError
from emu.isa.types import F32, CoopMatrixType
from emu.numerics.mma import mma

SHADERS = Path(__file__).resolve().parents[3] / "tests" / "shaders" / "spirv"


def _module(dev, name):
    return dev.create_shader_module((SHADERS / name).read_text(), f"tests/shaders/spirv/{name}")


@pytest.mark.parametrize("m,n,k", [(32, 48, 64), (64, 32, 16)])
def test_glsl_gemm_matches_the_h200_matrix_unit(m, n, k):
    rng = np.random.default_rng(m + n + k)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(_module(dev, "gemm_coopmat.comp"), constants={"0": m, "1": n, "2": k})
    bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): dev.create_buffer(size=4 * m * n)}
    dev.dispatch(pipe, bufs, (n // 16, m // 16, 1))
    c = bufs[(0, 2)].read(np.float32).reshape(m, n)
    want = expected(dev.profile, a, b)
    assert np.array_equal(c.view(np.uint32), want.view(np.uint32))


def test_coop_operations_bit_for_bit():
    rng = np.random.default_rng(12)
    A = rng.uniform(-1, 1, (16, 16)).astype(np.float16)
    B = rng.uniform(-1, 1, (16, 16)).astype(np.float16)
    C = rng.uniform(0.5, 2, (16, 16)).astype(np.float32)
    XA = rng.integers(-128, 128, (16, 32)).astype(np.int8)
    XB = rng.integers(-128, 128, (32, 16)).astype(np.int8)
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(_module(dev, "coop_ops.comp"))
    bufs = {(0, 0): dev.create_buffer(np.ascontiguousarray(A.T)), (0, 1): dev.create_buffer(B),
            (0, 2): dev.create_buffer(C), (0, 3): dev.create_buffer(size=1024),
            (0, 4): dev.create_buffer(size=512), (0, 5): dev.create_buffer(XA),
            (0, 6): dev.create_buffer(XB), (0, 7): dev.create_buffer(size=1024)}
    dev.dispatch(pipe, bufs, (1, 1, 1))

    prof = dev.profile
    model = prof.model_for(prof.find_config(16, 16, 16, "f16", "f32"))
    d = mma(model, A[None], B[None], C[None], "f32")[0]
    # the H200 divides as x * MUFU.RCP(y) and fuses that product with the element's add of the
    # unrolled loop: fma(x, RCP(y), i) (measured, tests/profiles/test_h200_coop_element_fma.py);
    # element i of each lane's fragment is where the H200's lane map puts it
    from emu.numerics import sfu
    x = (d * np.float32(0.5) - C).astype(np.float64)
    rcp = sfu.rcp(C).astype(np.float64)
    lm = prof.matrix_lane_map(CoopMatrixType(16, 16, F32, "C"), 32)
    for lane in range(lm.rows_idx.shape[0]):
        for i in range(lm.rows_idx.shape[1]):
            r, c = lm.rows_idx[lane, i], lm.cols_idx[lane, i]
            d[r, c] = _fma32(x[r, c], rcp[r, c], i)
    r = bufs[(0, 3)].read(np.float32).reshape(16, 16)
    assert np.array_equal(r.view(np.uint32), d.view(np.uint32))
    h = bufs[(0, 4)].read(np.float16).reshape(16, 16)
    assert np.array_equal(h.view(np.uint16), d.astype(np.float16).view(np.uint16))
    x = XA.astype(np.int64) @ XB.astype(np.int64) + 7
    assert np.array_equal(bufs[(0, 7)].read(np.int32).reshape(16, 16).T, x.astype(np.int32))


def _fma32(a, b, c):
    """f32 fma of f32 operands: the exact a * b + c, rounded once to nearest-even."""
    from fractions import Fraction

    from emu.numerics.dtypes import FORMAT
    from emu.numerics.rounding import round_fraction
    return np.float32(float(round_fraction(Fraction(float(a)) * Fraction(float(b)) + Fraction(c), FORMAT["f32"])))


def test_a_configuration_the_h200_lacks_is_refused():
    # 16x24: no configuration's shape, and no multiple of VK_NV_cooperative_matrix2's 16x16
    # granularity (16x32 is one: a flexible-dimension matrix, tests/frontend/spirv/test_spirv_nv2_workgroup.py)
    src = (SHADERS / "gemm_coopmat.comp").read_text().replace(
        "16, 16, gl_MatrixUseAccumulator", "16, 24, gl_MatrixUseAccumulator")
    with pytest.raises(EmuError) as e:
        emu.Device("nvidia-h200").create_shader_module(src, "k32.comp")
    assert "'nvidia-h200' has no result (C) matrix of 16x24 f32" in e.value.message
    assert (e.value.loc.file, e.value.loc.line) == ("k32.comp", 17)


def test_saturating_accumulation_is_refused_where_the_device_has_none():
    src = (SHADERS / "coop_ops.comp").read_text().replace(
        "xc = coopMatMulAdd(xa, xb, xc);",
        "xc = coopMatMulAdd(xa, xb, xc, gl_MatrixOperandsSaturatingAccumulation);")
    with pytest.raises(EmuError) as e:
        emu.Device("nvidia-h200").create_shader_module(src, "sat.comp")
    assert "satur" in e.value.message


def test_mixed_signedness_int8_multiply_add_on_amd_rdna3():
    """i8 x u8 -> i32 from GLSL (glslang writes the operand signedness): exact products of the two
    values, + C (was: 'a and b must share a dtype', with no source location)."""
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, (16, 16)).astype(np.int8)
    b = rng.integers(0, 256, (16, 16)).astype(np.uint8)
    a[0, :] = -128
    b[:, 0] = 255
    dev = emu.Device("amd-rdna3")
    pipe = dev.create_compute_pipeline(_module(dev, "mma_mixed_sign.comp"))
    bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): dev.create_buffer(size=1024)}
    dev.dispatch(pipe, bufs, (1, 1, 1))
    got = bufs[(0, 2)].read(np.int32).reshape(16, 16)
    want = a.astype(np.int64) @ b.astype(np.int64) - 7
    assert got[0, 0] == 16 * -128 * 255 - 7
    assert np.array_equal(got, want)


def test_an_out_of_bounds_glsl_matrix_load_is_reported_once():
    """coopMatLoad(m, a, offset, ...) is an access chain to a[offset] that only the load uses: it
    lowers to the load's (array, offset) as WGSL's subgroupMatrixLoad(&a, offset, ...) does, with no
    element access of its own, so a load past the end is one report, the matrix access's (there was
    also an 'index clamped to the last element' for the element, which nothing clamped)."""
    from emu.api import compile_wgsl
    from emu.isa.printer import print_module
    src = (SHADERS / "gemm_coopmat.comp").read_text()
    text = print_module(compile_wgsl(src, "tests/shaders/spirv/gemm_coopmat.comp")[0], locs=False)
    accesses = [line.split("{")[1] for line in text.splitlines() if "= access " in line]
    assert accesses == ["path = [0]} : ptr<storage, array<f16>, read>"] * 2 + \
        ["path = [0]} : ptr<storage, array<f32>, read_write>"]
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(_module(dev, "gemm_coopmat.comp"), constants={"0": 64, "1": 64, "2": 64})
    bufs = {(0, 0): dev.create_buffer(np.ones(64 * 64 - 2000, np.float16)),
            (0, 1): dev.create_buffer(np.ones(64 * 64, np.float16)), (0, 2): dev.create_buffer(size=4 * 64 * 64)}
    warned = [str(w) for w in dev.dispatch(pipe, bufs, (4, 4, 1))]
    assert len(warned) == 1 and "out-of-bounds cooperative matrix access into buffer 'A'" in warned[0], warned
