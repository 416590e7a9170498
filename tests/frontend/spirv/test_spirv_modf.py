"""GLSL.std.450 Modf/ModfStruct: "both the return value and the output parameter will have the
same sign as x", so modf(-2.0) is (-0.0, -2.0) on every profile (WGSL's modf, e - trunc(e), gives
+0.0 there: emu's WGSL keeps that). lavapipe's SPIR-V modf agrees (tests/hw/test_vulkan_64bit_lavapipe.py:
f64.comp's 3 values that differed before)."""
import numpy as np
import pytest

import emu

GLSL = """#version 450
layout(local_size_x = 4) in;
layout(set = 0, binding = 0) buffer X { vec2 x[]; };
layout(set = 0, binding = 1) buffer O { vec2 o[]; };
layout(set = 0, binding = 2) buffer W { vec2 w[]; };
void main() { uint i = gl_LocalInvocationID.x; vec2 wh; o[i] = modf(x[i], wh); w[i] = wh; }
"""
WGSL = """@group(0) @binding(0) var<storage, read_write> x: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> o: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> w: array<vec2<f32>>;
@compute @workgroup_size(4) fn main(@builtin(local_invocation_index) i: u32) {
  let r = modf(x[i]); o[i] = r.fract; w[i] = r.whole;
}
"""
X = np.array([-2.0, -0.0, 0.0, 3.0, -1.5, 2.25, -7.0, -1e30], np.float32)


def _run(profile, src, file):
    dev = emu.Device(profile)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, file))
    o, w = dev.create_buffer(size=32), dev.create_buffer(size=32)
    dev.dispatch(pipe, {(0, 0): dev.create_buffer(X), (0, 1): o, (0, 2): w}, 1)
    return o.read(np.float32), w.read(np.float32)


@pytest.mark.parametrize("profile", ["reference", "lavapipe", "nvidia-h200"])
def test_a_zero_fraction_has_the_sign_of_x(profile):
    fract, whole = _run(profile, GLSL, "modf.comp")
    assert fract.tolist() == [-0.0, -0.0, 0.0, 0.0, -0.5, 0.25, -0.0, -0.0]
    assert np.signbit(fract).tolist() == [True, True, False, False, True, False, True, True]
    assert whole.tolist() == [-2.0, -0.0, 0.0, 3.0, -1.0, 2.0, -7.0, float(np.float32(-1e30))]
    assert np.signbit(whole).tolist() == np.signbit(X).tolist()


def test_wgsl_modf_keeps_e_minus_trunc():
    fract, _ = _run("reference", WGSL, "modf.wgsl")
    assert np.signbit(fract).tolist() == [False, False, False, False, True, False, False, False]


MODF_STRUCT = """               OpCapability Shader
          %std = OpExtInstImport "GLSL.std.450"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %lid
               OpExecutionMode %main LocalSize 8 1 1
               OpDecorate %lid BuiltIn LocalInvocationId
               OpDecorate %ra ArrayStride 4
               OpMemberDecorate %B 0 Offset 0
               OpDecorate %B Block
               OpDecorate %vx DescriptorSet 0
               OpDecorate %vx Binding 0
               OpDecorate %vo DescriptorSet 0
               OpDecorate %vo Binding 1
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
      %float = OpTypeFloat 32
       %uint = OpTypeInt 32 0
     %v3uint = OpTypeVector %uint 3
     %uint_0 = OpConstant %uint 0
         %ra = OpTypeRuntimeArray %float
          %B = OpTypeStruct %ra
         %pB = OpTypePointer StorageBuffer %B
         %vx = OpVariable %pB StorageBuffer
         %vo = OpVariable %pB StorageBuffer
         %pf = OpTypePointer StorageBuffer %float
        %pin = OpTypePointer Input %v3uint
        %lid = OpVariable %pin Input
         %MS = OpTypeStruct %float %float
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %id = OpLoad %v3uint %lid
          %i = OpCompositeExtract %uint %id 0
         %px = OpAccessChain %pf %vx %uint_0 %i
          %x = OpLoad %float %px
          %r = OpExtInst %MS %std ModfStruct %x
          %f = OpCompositeExtract %float %r 0
         %po = OpAccessChain %pf %vo %uint_0 %i
               OpStore %po %f
               OpReturn
               OpFunctionEnd
"""


def test_modf_struct_too():
    """ModfStruct (what naga and Tint emit for WGSL's modf) had been lowered as an unknown builtin
    'modfs' (an internal error at dispatch); now the same rule as Modf."""
    dev = emu.Device("reference")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(MODF_STRUCT, "modf.spvasm"))
    o = dev.create_buffer(size=32)
    dev.dispatch(pipe, {(0, 0): dev.create_buffer(X), (0, 1): o}, 1)
    fract = o.read(np.float32)
    assert fract.tolist() == [-0.0, -0.0, 0.0, 0.0, -0.5, 0.25, -0.0, -0.0]
    assert np.signbit(fract).tolist() == [True, True, False, False, True, False, True, True]
