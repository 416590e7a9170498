"""`emu run` / `emu ir` on GLSL and SPIR-V assembly: push constants, specialization constants."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from emu.cli import main

GLSL = """#version 450
layout(local_size_x = 4) in;
layout(constant_id = 3) const uint K = 2u;
layout(set = 0, binding = 0) buffer Out { uint y[]; } o;
layout(push_constant) uniform PC { uint add; } pc;
void main() { o.y[gl_GlobalInvocationID.x] = gl_GlobalInvocationID.x * K + pc.add; }
"""


def test_run_glsl_with_push_and_spec_constants(tmp_path: Path, capsys):
    (tmp_path / "k.comp").write_text(GLSL)
    (tmp_path / "pc.bin").write_bytes(struct.pack("<I", 100))
    np.save(tmp_path / "o.npy", np.zeros(8, np.uint32))
    rc = main([ "run", str(tmp_path / "k.comp"), "--dispatch", "2", "--buffer", f"0:0={tmp_path / 'o.npy'}",
               "--output", f"0:0={tmp_path / 'r.npy'}", "--push-constants", str(tmp_path / "pc.bin"),
               "--spec-constant", "3=5"])
    assert rc == 0, capsys.readouterr().err
    out = np.load(tmp_path / "r.npy")      # typed by the block's array: uint
    assert out.dtype == np.uint32 and out.tolist() == [100 + 5 * i for i in range(8)]


def test_missing_push_constants_is_one_message(tmp_path: Path, capsys):
    (tmp_path / "k.comp").write_text(GLSL)
    np.save(tmp_path / "o.npy", np.zeros(8, np.uint32))
    rc = main(["run", str(tmp_path / "k.comp"), "--dispatch", "2", "--buffer", f"0:0={tmp_path / 'o.npy'}"])
    err = capsys.readouterr().err
    assert rc == 1 and "push-constant block" in err and "--push-constants FILE" in err
    assert "Traceback" not in err


ASM = """; a loop with OpPhi, in SPIR-V assembly
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid
               OpExecutionMode %main LocalSize 4 1 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %arr ArrayStride 4
               OpMemberDecorate %Buf 0 Offset 0
               OpDecorate %Buf Block
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
       %bool = OpTypeBool
      %v3u = OpTypeVector %uint 3
     %ptr_in = OpTypePointer Input %v3u
        %gid = OpVariable %ptr_in Input
        %arr = OpTypeRuntimeArray %uint
        %Buf = OpTypeStruct %arr
    %ptr_buf = OpTypePointer StorageBuffer %Buf
       %pelt = OpTypePointer StorageBuffer %uint
        %buf = OpVariable %ptr_buf StorageBuffer
         %u0 = OpConstant %uint 0
         %u1 = OpConstant %uint 1
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %g3 = OpLoad %v3u %gid
          %g = OpCompositeExtract %uint %g3 0
               OpBranch %head
       %head = OpLabel
          %i = OpPhi %uint %u0 %entry %inext %cont
        %acc = OpPhi %uint %u0 %entry %anext %cont
         %lt = OpULessThanEqual %bool %i %g
               OpLoopMerge %done %cont None
               OpBranchConditional %lt %body %done
       %body = OpLabel
      %anext = OpIAdd %uint %acc %i
               OpBranch %cont
       %cont = OpLabel
      %inext = OpIAdd %uint %i %u1
               OpBranch %head
       %done = OpLabel
          %p = OpAccessChain %pelt %buf %u0 %g
               OpStore %p %acc
               OpReturn
               OpFunctionEnd
"""


def test_run_and_print_spirv_assembly(tmp_path: Path, capsys):
    (tmp_path / "k.spvasm").write_text(ASM)
    np.save(tmp_path / "o.npy", np.zeros(8, np.uint32))
    rc = main(["run", str(tmp_path / "k.spvasm"), "--dispatch", "2", "--buffer", f"0:0={tmp_path / 'o.npy'}",
               "--output", f"0:0={tmp_path / 'r.npy'}"])
    assert rc == 0, capsys.readouterr().err
    assert np.load(tmp_path / "r.npy").tolist() == [g * (g + 1) // 2 for g in range(8)]
    assert main(["ir", str(tmp_path / "k.spvasm")]) == 0
    out = capsys.readouterr().out
    # the loop is structured, and instructions carry their line in the assembly
    assert "  loop {" in out and "k.spvasm:41:" in out


def test_trace_and_explain_a_glsl_gemm(tmp_path: Path, capsys):
    root = Path(__file__).resolve().parents[2]
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (16, 32)).astype(np.float16)
    b = rng.uniform(-1, 1, (32, 16)).astype(np.float16)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    np.save(tmp_path / "c.npy", np.zeros(256, np.float32))
    shader = root / "tests" / "shaders" / "spirv" / "gemm_coopmat.comp"
    rc = main(["run", str(shader), "--profile", "nvidia-h200", "--dispatch", "1,1",
               "--buffer", f"0:0={tmp_path / 'a.npy'}", "--buffer", f"0:1={tmp_path / 'b.npy'}",
               "--buffer", f"0:2={tmp_path / 'c.npy'}", "--spec-constant", "0=16", "--spec-constant", "1=16",
               "--spec-constant", "2=32", "--trace", str(tmp_path / "t.jsonl")])
    assert rc == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main(["explain", str(tmp_path / "t.jsonl"), "--element", "3,5"]) == 0
    out = capsys.readouterr().out
    # the last multiply-add (k = 16..31), at its GLSL line, with the operands as the H200 holds them
    assert "gemm_coopmat.comp:24:" in out and "config f16xf16->f32:16x16x16" in out
    assert f"0x{a[3, 16].view(np.uint16):04x}" in out and f"0x{b[16, 5].view(np.uint16):04x}" in out
