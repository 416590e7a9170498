"""One SpecId declared with two types (llama.cpp's local_size_x_id = 0 with constant_id = 0 const
int BLOCK): Vulkan sets a SpecId with one value of the constant's size (VkSpecializationMapEntry),
each declaration reading its bytes as its own type; unset, each keeps its own default. And arrays
sized by spec-constant expressions over gl_WorkGroupSize (OpSpecConstantOp CompositeExtract)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import emu
from emu.errors import EmuError
from emu.isa.constants import host_override_values
from emu.isa.ir import Override
from emu.isa.types import F32, I32, U32

from .asm import compute_module

FILE = "tests/shaders/spirv/spec_id_twins.comp"
SRC = (Path(__file__).resolve().parents[3] / FILE).read_text()


def _run(constants, groups=2):
    dev = emu.Device("reference")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SRC, FILE), constants=constants)
    out = dev.create_buffer(size=4 * 4 * 64)
    dev.dispatch(pipe, {(0, 0): out}, (groups, 1, 1))
    return out.read(np.int32).reshape(-1, 4)


def test_unset_each_declaration_keeps_its_default():
    got = _run({})
    # workgroup size 1 (local_size_x_id's default), BLOCK 1024 (constant_id's): part[256], tile[2]
    assert got[:3].tolist() == [[1024, 256, 1, 2], [1024, 256, 1, 2], [0, 0, 0, 0]]


@pytest.mark.parametrize("wg,per", [(8, 3), (16, 1)])
def test_one_host_value_sets_both_declarations(wg, per):
    got = _run({"0": wg, "1": per})
    lanes = np.arange(2 * wg) % wg
    want = np.stack([np.full(2 * wg, wg), np.full(2 * wg, wg // 4),
                     ((lanes * per + 1) % (wg * per)) // per * 10 + (lanes * per + 1) % (wg * per) % per,
                     np.full(2 * wg, wg * per)], 1)
    assert got[:2 * wg].tolist() == want.tolist()


def _twins():
    return [Override("WG", U32, 0, 1), Override("BLOCK", I32, 0, 1024), Override("OTHER", U32, 1, 2)]


def test_the_bytes_of_one_value_are_read_as_each_type():
    assert host_override_values(_twins(), "0", -1, "'{}'") == {"BLOCK": -1, "WG": 0xFFFFFFFF}
    assert host_override_values(_twins(), "0", 0x80000000, "'{}'") == {"WG": 0x80000000, "BLOCK": -(1 << 31)}
    assert host_override_values(_twins(), "BLOCK", -2, "'{}'") == {"BLOCK": -2, "WG": 0xFFFFFFFE}
    assert host_override_values(_twins(), "1", 7, "'{}'") == {"OTHER": 7}
    # a float declaration takes a float value; the int one reads its bits
    fl = [Override("X", U32, 3, 0), Override("F", F32, 3, 0.0)]
    assert host_override_values(fl, "3", 1.0, "'{}'") == {"F": 1.0, "X": 0x3F800000}
    with pytest.raises(EmuError) as e:
        host_override_values(_twins(), "0", 1 << 33, "override '{}'")
    assert "does not fit" in e.value.message


def test_a_spec_id_of_two_sizes_is_one_message():
    from emu.frontend.spirv import compile_source
    asm = compute_module("OpCapability Int64\n", "OpDecorate %a SpecId 0\nOpDecorate %b SpecId 0\n"
                         "%int = OpTypeInt 32 1\n%long = OpTypeInt 64 1\n%a = OpSpecConstant %int 1\n"
                         "%b = OpSpecConstant %long 2\n")
    with pytest.raises(EmuError) as e:
        compile_source(asm, "twins.spvasm")
    assert "SpecId 0 is declared as i32 and as i64, of another size" in e.value.message
    assert e.value.loc is not None and e.value.loc.line == 11      # the second declaration



def test_an_empty_array_from_spec_constants_says_so():
    dev = emu.Device("reference")
    mod = dev.create_shader_module(SRC, FILE)
    with pytest.raises(EmuError) as e:
        dev.create_compute_pipeline(mod, constants={"0": 8, "1": 0})
    assert "an array of length 0 from specialization constants (the values given)" in e.value.message


def test_glslang_13s_line_after_the_return_is_read(monkeypatch):
    """The wheel's glslang (13.1.1, used where EMU_GLSLANG is unset) puts an OpLine between main's
    OpReturn and OpFunctionEnd, outside any block: valid SPIR-V, which ended main's last block in
    that OpLine (so "OpReturn is not supported")."""
    import struct
    from emu.frontend.spirv import compile_glsl
    monkeypatch.delenv("EMU_GLSLANG", raising=False)
    data = compile_glsl(SRC, FILE)
    words = struct.unpack(f"<{len(data) // 4}I", data)
    ops, i = [], 5
    while i < len(words):
        ops.append(words[i] & 0xFFFF)
        i += words[i] >> 16
    assert ops[ops.index(253) + 1] == 8, "this glslang puts no OpLine after OpReturn"   # OpReturn, OpLine
    assert _run({})[:3].tolist() == [[1024, 256, 1, 2], [1024, 256, 1, 2], [0, 0, 0, 0]]
    got = _run({"0": 16, "1": 1})
    assert got[:32, 0].tolist() == [16] * 32 and got[:32, 3].tolist() == [16] * 32


LINE_AFTER_RETURN = """OpCapability Shader
%f = OpString "k.comp"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%main = OpFunction %void None %fn
%l = OpLabel
OpReturn
{after}
OpFunctionEnd
"""


def test_only_debug_lines_may_follow_a_blocks_terminator():
    from emu.frontend.spirv import compile_source
    from emu.isa.printer import print_module
    module, _ = compile_source(LINE_AFTER_RETURN.format(after="OpLine %f 3 0"), "k.spvasm")
    assert print_module(module, locs=False).count("return") == 1
    with pytest.raises(EmuError) as e:
        compile_source(LINE_AFTER_RETURN.format(after="OpReturn"), "k.spvasm")
    assert "OpReturn is outside a block: after a block's terminator" in e.value.message
    assert e.value.loc is not None and e.value.loc.line == 11


def test_a_later_debug_info_version_gives_its_lines():
    """glslang 16.6 imports NonSemantic.Shader.DebugInfo.102 (not .100): its DebugLine still names
    the line of the instruction after it."""
    from emu.frontend.spirv import assemble, compile_source
    asm = LINE_AFTER_RETURN.replace('%f = OpString "k.comp"\n', '%d = OpExtInstImport "NonSemantic.Shader.DebugInfo.100"\n'
                                    '%f = OpString "k.comp"\n').replace(
        "%fn = OpTypeFunction %void\n", "%fn = OpTypeFunction %void\n%uint = OpTypeInt 32 0\n%u7 = OpConstant %uint 7\n"
        "%u0 = OpConstant %uint 0\n%src = OpExtInst %void %d DebugSource %f\n").replace(
        "%l = OpLabel\n", "%l = OpLabel\n%line = OpExtInst %void %d DebugLine %src %u7 %u7 %u0 %u0\n")
    data = assemble(asm.format(after="OpReturn"), "k.spvasm")
    data = data.replace(b"DebugInfo.100", b"DebugInfo.102")
    with pytest.raises(EmuError) as e:
        compile_source(data.decode("utf-8", "surrogateescape"), "k.spv")
    assert "OpReturn is outside a block" in e.value.message
    assert (e.value.loc.file, e.value.loc.line) == ("k.comp", 7)
