"""Nested arrays share one axis of their register form (memory.nested_count), so a nest is not
limited by numpy's 64 axes: Tint's corpus has a private array nested 65 deep
(bug/chromium/1449474.wgsl); emu used to stop at 24 levels. Every use of a nest is checked here
against values worked out by hand: constants, zero values, constant and per-lane indices, whole
rows read, written and copied, nests in structs and in storage buffers. Our own shaders."""
import numpy as np
import pytest

import emu

NEST = """struct S { a: f32, b: array<array<u32, 2>, 3> }
@group(0) @binding(0) var<storage, read_write> o: array<u32, 32>;
@group(0) @binding(1) var<storage, read_write> sb: array<S, 2>;
var<private> deep = array(array(array(array(5i, 6i), array(7i, 8i))), array(array(array(1i, 2i), array(3i, 4i))));
@compute @workgroup_size(4)
fn main(@builtin(local_invocation_index) i: u32) {
    var m: array<array<u32, 3>, 4>;
    for (var r = 0u; r < 4u; r++) { for (var c = 0u; c < 3u; c++) { m[r][c] = r * 10u + c + i * 100u; } }
    let row = m[i];
    o[i * 8u + 0u] = row[2];
    o[i * 8u + 1u] = m[3 - i][i % 3u];
    let k = array<array<u32, 2>, 2>(array<u32, 2>(1u, 2u), array<u32, 2>(3u, 4u));
    o[i * 8u + 2u] = k[i % 2u][1];
    o[i * 8u + 3u] = u32(deep[i % 2u][0][1][i / 2u]);
    var s = sb[i % 2u];
    s.b[i % 3u][1] = 77u + i;
    o[i * 8u + 4u] = s.b[i % 3u][1] + s.b[2][0];
    var cp = m;
    cp[1] = array<u32, 3>(9u, 9u, 9u);
    o[i * 8u + 5u] = cp[1][i % 3u] + cp[2][1];
    var z: array<array<array<u32, 2>, 2>, 2>;
    z[i % 2u][1][i / 2u] = 5u;
    o[i * 8u + 6u] = z[0][1][0] * 10u + z[1][1][1];
    if (i == 0u) { sb[1] = s; }
}
"""


def test_nested_arrays_in_registers_and_memory():
    dev = emu.Device("reference")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(NEST, "nest.wgsl"))
    o, sb = dev.create_buffer(size=128), dev.create_buffer(np.arange(14, dtype=np.uint32))
    dev.dispatch(pipe, {(0, 0): o, (0, 1): sb}, (1, 1, 1))
    # lane i: m[r][c] = 10r + c + 100i; deep = [[[[5,6],[7,8]]], [[[1,2],[3,4]]]]; sb[j] is 7 words
    # (a, then b row by row) holding 7j .. 7j + 6; z has 5 where the lane wrote it
    assert o.read(np.uint32).reshape(4, 8).tolist() == [
        [2, 30, 2, 7, 77 + 5, 9 + 21, 50, 0],
        [112, 121, 4, 3, 78 + 12, 9 + 121, 0, 0],
        [222, 212, 2, 8, 79 + 5, 9 + 221, 0, 0],
        [332, 300, 4, 4, 80 + 12, 9 + 321, 5, 0]]
    assert sb.read(np.uint32).tolist() == [0, 1, 2, 3, 4, 5, 6, 0, 1, 77, 3, 4, 5, 6]


@pytest.mark.parametrize("depth", [65, 100])
def test_arrays_nested_past_numpys_axis_limit(depth):
    # Tint's bug/chromium/1449474.wgsl nests a private constant 65 deep; here read back through
    # the whole nest and through a row half way down
    value = "array(" * depth + "-6i" + ")" * depth
    src = f"""@group(0) @binding(0) var<storage, read_write> o: array<i32, 2>;
var<private> arr = {value};
@compute @workgroup_size(1)
fn main() {{
    o[0] = arr{'[0]' * depth};
    let half = arr{'[0]' * (depth // 2)};
    o[1] = half{'[0]' * (depth - depth // 2)} * 2;
}}
"""
    dev = emu.Device("reference")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "deep.wgsl"))
    o = dev.create_buffer(size=8)
    dev.dispatch(pipe, {(0, 0): o}, (1, 1, 1))
    assert o.read(np.int32).tolist() == [-6, -12]


def test_arrays_alternating_with_structs_past_the_axis_limit_are_refused():
    src = "struct S0 { x: i32 }\n" + "".join(f"struct S{k} {{ a: array<S{k - 1}, 1> }}\n" for k in range(1, 70))
    src += "@compute @workgroup_size(1) fn main() { var v: S69; }\n"
    with pytest.raises(emu.EmuError) as e:
        emu.compile_wgsl(src, "s.wgsl")
    assert e.value.message == ("array<struct.S60, 1> alternates arrays and structs 61 levels deep; emu allows 60 "
                               "(WGSL guarantees 15 levels of composite nesting)")
    assert (e.value.loc.line, e.value.loc.col) == (62, 17)
