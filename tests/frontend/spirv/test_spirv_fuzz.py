"""Fuzzed SPIR-V: random edits of our valid modules (words replaced, deleted or inserted,
opcodes changed, operands pointed at other ids) go through the reader, the lowering, the
verifier and a short run on nvidia-h200. Each must end in success or one EmuError: never
another exception, never a hang."""
from __future__ import annotations

import random
import signal
import struct
from functools import lru_cache
from pathlib import Path

import pytest

import emu
from emu.errors import EmuError
from emu.frontend.spirv import assemble, compile_glsl
from emu.frontend.spirv.grammar import load

SHADERS = Path(__file__).resolve().parents[3] / "tests" / "shaders" / "spirv"


@lru_cache(maxsize=None)
def seeds() -> list[list[int]]:
    """Our kernels as SPIR-V: the GLSL ones compiled, the assembly ones (VK_NV_cooperative_matrix2
    and bf16, which the wheel's glslang refuses; a .comp with an .spvasm twin is taken from it)
    assembled."""
    out = []
    for p in sorted(SHADERS.glob("*.comp")) + sorted(SHADERS.glob("*.spvasm")):
        if p.suffix == ".comp" and p.with_suffix(".spvasm").is_file():
            continue
        data = compile_glsl(p.read_text(), p.name) if p.suffix == ".comp" else assemble(p.read_text(), p.name)
        out.append(list(struct.unpack(f"<{len(data) // 4}I", data)))
    return out


def _starts(w: list[int]) -> list[int]:
    i, out = 5, []
    while i < len(w) and w[i] >> 16:
        out.append(i)
        i += w[i] >> 16
    return out


def mutate(w: list[int], rng: random.Random, operands_only: bool) -> bytes:
    w = list(w)
    opcodes = sorted(load().instructions)
    for _ in range(rng.randint(1, 3)):
        starts = _starts(w) or [5]
        if operands_only:       # keep every word count: an operand now names another id or value
            s = rng.choice(starts)
            n = w[s] >> 16
            if n > 1:
                w[s + rng.randrange(1, n)] = rng.choice([0, 1, 3, w[3] - 1, rng.randrange(1, w[3]),
                                                         rng.getrandbits(32)])
            continue
        k = rng.randrange(5, max(6, len(w)))
        r = rng.random()
        if r < 0.4 and k < len(w):
            w[k] = rng.choice([0, 1, 2, 16, w[3] - 1, w[3] + 5, rng.getrandbits(32), rng.choice(w)])
        elif r < 0.6 and starts[0] < len(w):
            s = rng.choice(starts)
            w[s] = (w[s] & 0xFFFF0000) | rng.choice(opcodes)
        elif r < 0.8 and k < len(w):
            del w[k]
        else:
            w.insert(k, rng.choice(w))
    return struct.pack(f"<{len(w)}I", *w)


class _Hang(BaseException):
    pass


def _alarm(signum, frame):
    raise _Hang()


def outcome(data: bytes) -> str:
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, 20)
    try:
        dev = emu.Device("nvidia-h200", max_steps=20000)
        mod = dev.create_shader_module(data.decode("utf-8", "surrogateescape"), "fuzz.spv")
        pipe = dev.create_compute_pipeline(mod)
        bufs = {(g.group, g.binding): dev.create_buffer(size=65536) for g in mod.ir.globals
                if g.space in ("storage", "uniform")}
        dev.dispatch(pipe, bufs, (1, 1, 1))
        return "ok"
    except EmuError:
        return "error"
    except _Hang:
        return "hang"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("operands_only", [False, True])
def test_mutated_modules_end_in_a_result_or_one_error(operands_only):
    seen = set()
    for n in range(200):
        rng = random.Random(f"spirv:{operands_only}:{n}")
        result = outcome(mutate(rng.choice(seeds()), rng, operands_only))
        assert result in ("ok", "error"), f"mutant {n}: {result}"
        seen.add(result)
    assert "error" in seen


def test_an_invalid_module_is_named_by_spirv_val():
    # the first OpTypePointer's pointee becomes an id that is no type
    w = list(seeds()[0])
    s = next(i for i in _starts(w) if w[i] & 0xFFFF == load().by_name["OpTypePointer"]["opcode"])
    w[s + 3] = next(w[i + 1] for i in _starts(w) if w[i] & 0xFFFF == load().by_name["OpLabel"]["opcode"])
    with pytest.raises(EmuError) as e:
        emu.Device().create_shader_module(struct.pack(f"<{len(w)}I", *w).decode("utf-8", "surrogateescape"),
                                          "bad.spv")
    assert "OpTypePointer" in e.value.message or "not valid SPIR-V" in e.value.message


def test_a_variable_of_a_function_type_is_one_message():
    # found by fuzzing (a mutant of ext_maint1's: OpVariable's result type pointed at OpTypeFunction)
    src = """OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%main = OpFunction %void None %fn
%l = OpLabel
%v = OpVariable %fn Function
OpReturn
OpFunctionEnd
"""
    with pytest.raises(EmuError) as e:
        dev = emu.Device("nvidia-h200")
        dev.create_compute_pipeline(dev.create_shader_module(src, "fnvar.spvasm"))
    assert "OpVariable's result type" in e.value.message and "no pointer type" in e.value.message
    assert e.value.loc is not None and (e.value.loc.file, e.value.loc.line) == ("fnvar.spvasm", 9)


FOUND_64 = """OpCapability Shader
OpCapability Float64
%glsl = OpExtInstImport "GLSL.std.450"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%double = OpTypeFloat 64
%v3 = OpTypeVector %double 3
%one = OpConstant %double 1
%three = OpConstantComposite %v3 %one %one %one
%main = OpFunction %void None %fn
%l = OpLabel
%r = {}
OpReturn
OpFunctionEnd
"""


@pytest.mark.parametrize("inst,message", [
    # found by fuzzing the 64-bit kernels (f64.comp, int64.comp): a scalar FMax, FConvert or
    # ConvertSToF of a vector operand ran into a shape error in the executor, as did an
    # OpCompositeInsert without indexes
    ("OpExtInst %double %glsl FMax %one %three", "OpExtInst max of f64, vec3<f64> gives f64: its operands have "
                                                 "the result's number of components"),
    ("OpCompositeInsert %double %one %one", "OpCompositeInsert names no member of f64 to replace"),
    ("OpCompositeExtract %double %three", "OpCompositeExtract of vec3<f64> at [] is not a f64"),
    ("OpFConvert %double %three", "OpFConvert from vec3<f64> to f64: one number of components, scalars or vectors"),
    ("OpBitcast %double %three", "OpBitcast from vec3<f64> to f64: numbers of one size in all (u64 <-> "
                                 "vec2<u32> is one)")])
def test_malformed_composites_and_builtin_shapes_are_one_message(inst, message):
    with pytest.raises(EmuError) as e:
        dev = emu.Device("nvidia-h200")
        dev.create_compute_pipeline(dev.create_shader_module(FOUND_64.format(inst), "found.spvasm"))
    assert e.value.message == message
    assert (e.value.loc.file, e.value.loc.line) == ("found.spvasm", 15)


def test_a_workgroup_array_of_void_is_one_message():
    # found by fuzzing (a mutant whose workgroup array's element type became OpTypeVoid): it ended in
    # a TypeError from the layout ("void has no host-shareable alignment")
    src = """OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%uint_4 = OpConstant %uint 4
%arr = OpTypeArray %void %uint_4
%ptr = OpTypePointer Workgroup %arr
%tile = OpVariable %ptr Workgroup
%main = OpFunction %void None %fn
%l = OpLabel
OpReturn
OpFunctionEnd
"""
    with pytest.raises(EmuError) as e:
        dev = emu.Device("nvidia-h200")
        dev.create_compute_pipeline(dev.create_shader_module(src, "voidarr.spvasm"))
    assert "not a data type" in e.value.message
    assert e.value.loc is not None and (e.value.loc.file, e.value.loc.line) == ("voidarr.spvasm", 11)
