"""Lockstep execution corner cases (small inline shaders; expected values worked out by hand)."""
from __future__ import annotations

import numpy as np
import pytest

import emu

H = "@group(0) @binding(0) var<storage, read_write> out: array<i32>;\n"


def go(src, sg=None, n=16, groups=1):
    dev = emu.Device(subgroup_size=sg)
    p = dev.create_compute_pipeline(dev.create_shader_module(H + src, "t.wgsl"))
    out = dev.create_buffer(size=n * 4)
    dev.dispatch(p, {(0, 0): out}, (groups, 1, 1))
    return out.read(np.int32).tolist()


def test_same_address_from_every_lane_last_lane_wins():
    # a uniform (constant-offset) load and store on a storage buffer
    assert go("""@compute @workgroup_size(4) fn main(@builtin(local_invocation_index) li: u32) {
        out[0] = 42; out[1] = i32(li); out[2] = out[0] + 1; }""", n=4) == [42, 3, 43, 0]


def test_pointer_to_workgroup_memory_parameter():
    assert go("""fn f(p: ptr<workgroup, array<i32, 4>>, i: u32) { (*p)[i] = i32(i) + 100; }
        var<workgroup> w: array<i32, 4>;
        @compute @workgroup_size(4) fn main(@builtin(local_invocation_index) li: u32) {
        f(&w, li); workgroupBarrier(); out[li] = w[3u - li]; }""", n=4) == [103, 102, 101, 100]


def test_frexp_modf_results():
    assert go("""@compute @workgroup_size(4) fn main(@builtin(local_invocation_index) li: u32) {
        let fr = frexp(f32(li) * 1.5); let mf = modf(f32(li) * 1.25);
        out[li] = fr.exp * 100 + i32(fr.fract * 8.0) + i32(mf.fract * 4.0) * 1000 + i32(mf.whole) * 10000; }""",
              n=4) == [0, 11106, 22206, 33304]


def test_return_from_switch_inside_loop_in_helper():
    assert go("""fn g(x: i32) -> i32 {
          for (var i = 0; i < 10; i++) { switch (x + i) { case 5: { return i; } default: {} } }
          return -1; }
        @compute @workgroup_size(8) fn main(@builtin(local_invocation_index) li: u32) { out[li] = g(i32(li)); }""",
              n=8) == [5, 4, 3, 2, 1, 0, -1, -1]


def test_struct_parameter_and_return():
    assert go("""struct S { a: i32, b: vec2<i32> }
        fn h(s: S) -> S { var t = s; t.b.y += s.a; return t; }
        @compute @workgroup_size(4) fn main(@builtin(local_invocation_index) li: u32) {
        let s = h(S(i32(li), vec2(1, 2))); out[li] = s.b.y * 10 + s.b.x; }""", n=4) == [21, 31, 41, 51]


def test_component_assignment_with_dynamic_indices():
    assert go("""@compute @workgroup_size(4) fn main(@builtin(local_invocation_index) li: u32) {
        var v = vec3<i32>(1, 2, 3);
        v[li % 3u] = 9; v.x += 1; let sw = v.zyx;
        var a: array<vec2<i32>, 2>; a[li % 2u].y = 5; a[1] = sw.xy;
        out[li] = sw.x * 100 + sw.y * 10 + sw.z + a[0].y * 1000 + a[1].x * 10000; }""",
              n=4) == [35330, 30392, 95922, 30330]


def test_short_circuit_skips_the_right_side():
    # the right side would index out of bounds on the lanes that must not evaluate it
    assert go("""@compute @workgroup_size(4) fn main(@builtin(local_invocation_index) li: u32) {
        var x = 0; let t = li > 1u && (out[li + 2u] == 0); let f = li < 2u || out[li + 2u] == 0;
        if (t) { x += 1; } if (f) { x += 10; } out[li] = x; }""", n=6)[:4] == [10, 10, 11, 11]


@pytest.mark.parametrize("sg", [4, 32])
def test_broadcast_uniform_among_active_lanes_only(sg):
    # lane 0 is inactive and holds a different lane id: the active lanes agree, so no error
    r = go("""@compute @workgroup_size(8) fn main(@builtin(subgroup_invocation_id) sid: u32) {
        let lane = select(3u, 1u, sid != 0u);
        out[sid] = -1;
        if (sid != 0u) { out[sid] = subgroupBroadcast(i32(sid) * 10, lane); } }""", sg=sg, n=8)
    assert r[0] == -1 and r[1:4] == [10, 10, 10]


def test_broadcast_non_uniform_lane_is_an_error():
    with pytest.raises(emu.EmuError) as ei:
        go("""@compute @workgroup_size(8) fn main(@builtin(subgroup_invocation_id) sid: u32) {
        out[sid] = subgroupBroadcast(1, sid % 2u); }""", sg=8)
    assert "differs" in ei.value.message and ei.value.loc.line == 3


def test_nested_divergent_loops_with_continue_and_return():
    assert go("""fn f(n: i32) -> i32 {
          var s = 0;
          for (var i = 0; i < 8; i++) {
            var j = 0;
            loop {
              if (j >= i) { break; }
              j++;
              if ((i + j) % 3 == 0) { continue; }
              s += j;
              if (s > n) { return s * 100 + i; }
            }
          }
          return s; }
        @compute @workgroup_size(8) fn main(@builtin(local_invocation_index) li: u32) {
        out[li] = f(i32(li) * 9); }""", n=8) == [_nested_ref(i * 9) for i in range(8)]


def _nested_ref(n):
    s = 0
    for i in range(8):
        j = 0
        while j < i:
            j += 1
            if (i + j) % 3 == 0:
                continue
            s += j
            if s > n:
                return s * 100 + i
    return s
