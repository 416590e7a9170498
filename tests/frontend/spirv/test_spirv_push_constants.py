"""A GLSL/SPIR-V push-constant block needs the bytes Vulkan's pipeline layout must cover: the
block's members up to the end of the last one (VUID-VkComputePipelineCreateInfo-layout-10069: the
block contained in the push constant range), not std430's size with its trailing padding."""
import numpy as np
import pytest

import emu
from emu.errors import EmuError
from emu.isa.ir import PUSH_CONSTANTS

SRC = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer O { float o[]; };
layout(push_constant) uniform P { BLOCK } pc;
void main() { o[0] = READ; }
"""


def _run(block, read, data):
    dev = emu.Device("reference")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SRC.replace("BLOCK", block).replace("READ", read),
                                                                "pc.comp"))
    o = dev.create_buffer(size=16)
    binds = {(0, 0): o}
    if data is not None:
        binds[PUSH_CONSTANTS] = dev.create_buffer(np.asarray(data, np.float32))
    dev.dispatch(pipe, binds, 1)
    return o.read(np.float32)[0]


@pytest.mark.parametrize("block, read, n", [
    ("vec4 a; float b;", "pc.b", 5),             # std430: 32 bytes; the members end at 20
    ("float s; vec3 v;", "pc.v.z", 7),           # v at 16: 28 (std430: 32)
    ("float s; mat3 m;", "pc.m[2][2]", 15),      # columns 16 apart: the last ends at 60 (64)
    ("vec2 a; float f[3];", "pc.f[2]", 5),       # f at 8, stride 4: 20 (std430: 24)
])
def test_the_block_needs_its_members_bytes(block, read, n):
    data = np.arange(1, n + 1, dtype=np.float32)
    assert _run(block, read, data) == n          # the last member's last float, read from the n given
    with pytest.raises(EmuError) as e:
        _run(block, read, data[:-1])
    assert str(e.value).splitlines()[0] == (
        f"pc.comp:5:1: error: the push constants given have {4 * n - 4} bytes; the shader's block struct.P "
        f"needs {4 * n} (its members end at byte {4 * n}: Vulkan's push constant range must contain the block)")
    assert e.value.hint.startswith(f"pass at least {4 * n} bytes with ")


def test_none_given_names_the_size_it_needs():
    with pytest.raises(EmuError) as e:
        _run("vec4 a; float b;", "pc.b", None)
    assert str(e.value).splitlines()[0] == (
        "pc.comp:5:1: error: the shader reads a push-constant block (struct.P, 20 bytes) but none was given")
