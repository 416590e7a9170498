"""naga's var<push_constant> (newer wgpu spells it var<immediate>): one read-only block the host
sets per dispatch, no @group/@binding. emu binds it like a uniform at the push-constant slot, as
for SPIR-V's PushConstant (`--push-constants FILE` on the command line). Our own shaders."""
import struct

import numpy as np
import pytest

import emu
from emu.errors import EmuError
from emu.frontend.spirv.module import PUSH_CONSTANTS

SRC = """struct Params {{ scale: f32, n: u32 }}
var<{space}> pc: Params;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {{
    if id.x < pc.n {{ out[id.x] = f32(id.x) * pc.scale; }}
}}
"""


def run(src, bindings):
    dev = emu.Device("reference")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "pc.wgsl"))
    bufs = {k: dev.create_buffer(v) for k, v in bindings.items()}
    dev.dispatch(pipe, bufs, (1, 1, 1))
    return bufs


@pytest.mark.parametrize("space", ["push_constant", "immediate"])
def test_push_constants_are_read_from_the_push_constant_block(space):
    bufs = run(SRC.format(space=space), {(0, 0): np.full(8, -1, np.float32),
                                         PUSH_CONSTANTS: np.frombuffer(struct.pack("<fI", 1.5, 5), np.uint8)})
    np.testing.assert_array_equal(bufs[(0, 0)].read(np.float32), [0, 1.5, 3, 4.5, 6, -1, -1, -1])


def test_missing_push_constants_name_the_block():
    with pytest.raises(EmuError) as e:
        run(SRC.format(space="push_constant"), {(0, 0): np.zeros(8, np.float32)})
    assert e.value.message == "the shader reads a push-constant block (struct.Params, 8 bytes) but none was given"
    assert (e.value.loc.line, e.value.loc.col) == (2, 1)


@pytest.mark.parametrize("decl, message", [
    ("@group(0) @binding(1) var<push_constant> pc: Params;",
     "var<push_constant> 'pc' takes no @group/@binding: the host sets push constants apart from bind groups"),
    ("var<immediate, read> pc: Params;", "var<immediate, read>: only var<storage> takes an access mode"),
    ("var<push_constant> pc: Params = Params(1.0, 2u);", "a var<push_constant> cannot have an initializer"),
    ("var<constant> pc: Params;",
     "var<constant> 'pc': 'constant' is not an address space of module-scope variables"),
    ("var<function> pc: Params;", "var<function> 'pc' is only allowed inside a function"),
])
def test_push_constant_declaration_errors(decl, message):
    src = SRC.format(space="push_constant").replace("var<push_constant> pc: Params;", decl)
    with pytest.raises(EmuError) as e:
        run(src, {(0, 0): np.zeros(8, np.float32)})
    assert e.value.message == message
    assert e.value.loc.line == 2


def test_two_push_constant_blocks_in_one_entry_point():
    src = """var<push_constant> a: u32;
var<immediate> b: u32;
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1)
fn main() { out[0] = a + b; }
"""
    with pytest.raises(EmuError) as e:
        run(src, {(0, 0): np.zeros(1, np.uint32), PUSH_CONSTANTS: np.zeros(4, np.uint8)})
    assert e.value.message == "entry point 'main' uses two push-constant blocks, 'a' and 'b': a pipeline has one"
    assert (e.value.loc.line, e.value.loc.col) == (2, 1)


def test_cli_push_constants_fill_a_wgsl_block(tmp_path, capsys):
    from emu.cli import main
    shader = tmp_path / "pc.wgsl"
    shader.write_text(SRC.format(space="immediate"))
    pc = tmp_path / "pc.bin"
    pc.write_bytes(struct.pack("<fI", -2.0, 3))
    out = tmp_path / "out.npy"
    assert main(["run", str(shader), "--dispatch", "1", "--buffer", "0:0=zeros:8:f32",
                 "--push-constants", str(pc), "--output", f"0:0={out}"]) == 0
    np.testing.assert_array_equal(np.load(out), [0, -2, -4, 0, 0, 0, 0, 0])
