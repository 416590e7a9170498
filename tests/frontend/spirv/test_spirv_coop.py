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
    # (B 16x24 too: glslang 16 refuses a product of 16x16 matrices into a 16x24 one)
    src = (SHADERS / "gemm_coopmat.comp").read_text().replace(
        "16, 16, gl_MatrixUseAccumulator", "16, 24, gl_MatrixUseAccumulator").replace(
        "16, 16, gl_MatrixUseB", "16, 24, gl_MatrixUseB")
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


LITERAL_CLASH = """; a matrix load whose access chain's id equals a literal elsewhere in its function
               OpCapability Shader
               OpCapability VulkanMemoryModel
               OpCapability CooperativeMatrixKHR
               OpExtension "SPV_KHR_cooperative_matrix"
               OpMemoryModel Logical Vulkan
               OpEntryPoint GLCompute %main "main" %va %vb %wgid
               OpExecutionMode %main LocalSize 32 1 1
               OpDecorate %wgid BuiltIn WorkgroupId
               OpDecorate %ra ArrayStride 4
               OpMemberDecorate %A 0 Offset 0
               OpDecorate %A Block
               OpDecorate %va DescriptorSet 0
               OpDecorate %va Binding 0
               OpDecorate %rb ArrayStride 4
               OpMemberDecorate %B 0 Offset 0
               OpDecorate %B Block
               OpDecorate %vb DescriptorSet 0
               OpDecorate %vb Binding 1
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
      %float = OpTypeFloat 32
       %uint = OpTypeInt 32 0
        %int = OpTypeInt 32 1
     %uint_3 = OpConstant %uint 3
    %uint_16 = OpConstant %uint 16
     %uint_2 = OpConstant %uint 2
    %uint_64 = OpConstant %uint 64
      %int_0 = OpConstant %int 0
     %uint_0 = OpConstant %uint 0
        %acc = OpTypeCooperativeMatrixKHR %float %uint_3 %uint_16 %uint_16 %uint_2
         %ra = OpTypeRuntimeArray %float
          %A = OpTypeStruct %ra
        %pA = OpTypePointer StorageBuffer %A
         %va = OpVariable %pA StorageBuffer
         %rb = OpTypeRuntimeArray %float
          %B = OpTypeStruct %rb
         %pB = OpTypePointer StorageBuffer %B
         %vb = OpVariable %pB StorageBuffer
         %pf = OpTypePointer StorageBuffer %float
     %v3uint = OpTypeVector %uint 3
       %pin = OpTypePointer Input %v3uint
       %wgid = OpVariable %pin Input
       %arr = OpTypeArray %float %uint_64
      %undef = OpUndef %arr
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %wg = OpLoad %v3uint %wgid
         %wx = OpCompositeExtract %uint %wg 0
        %off = OpIAdd %uint %wx %uint_64
      %chain = OpAccessChain %pf %va %int_0 %off
          %m = OpCooperativeMatrixLoadKHR %acc %chain %int_0 %uint_16 None
          %e = OpCompositeExtract %float %undef LITERAL
      %store = OpAccessChain %pf %vb %int_0 %uint_0
               OpCooperativeMatrixStoreKHR %store %m %int_0 %uint_16 None
               OpReturn
               OpFunctionEnd
"""


def test_a_literal_equal_to_an_access_chains_id_is_no_use_of_it():
    """_coop_chains counts only id operands as uses: a literal (here OpCompositeExtract's index)
    equal to the matrix load's access chain id made the chain look used elsewhere, so it lowered
    as an element access of its own and a load past the end was reported twice (once 'index
    clamped to the last element', which nothing clamped), as a[64] of a 40-element buffer is here."""
    from emu.frontend.spirv import assemble
    from emu.frontend.spirv.grammar import decode
    insts, _ = decode(assemble(LITERAL_CLASH.replace("LITERAL", "0"), "clash.spvasm"), "clash.spvasm")
    chain = next(i.result for i in insts if i.opname == "OpAccessChain")
    src = LITERAL_CLASH.replace("LITERAL", str(chain))
    insts, _ = decode(assemble(src, "clash.spvasm"), "clash.spvasm")
    assert [i.ops[-1] for i in insts if i.opname == "OpCompositeExtract"] == [0, chain] and chain < 64
    assert next(i.result for i in insts if i.opname == "OpAccessChain") == chain
    from emu.api import compile_wgsl
    from emu.isa.printer import print_module
    text = print_module(compile_wgsl(src, "clash.spvasm")[0], locs=False)
    assert [line.split("{")[1] for line in text.splitlines() if "= access " in line] == \
        ["path = [0]} : ptr<storage, array<f32>, read_write>"] * 2
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "clash.spvasm"))
    bufs = {(0, 0): dev.create_buffer(np.ones(40, np.float32)), (0, 1): dev.create_buffer(size=4 * 256)}
    warned = [str(w) for w in dev.dispatch(pipe, bufs, (1, 1, 1))]
    assert len(warned) == 1 and "out-of-bounds cooperative matrix access into buffer" in warned[0], warned
