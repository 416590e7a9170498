"""The Python API (emu.Device) with the inputs a new user gives it: each mistake ends in one
ArgumentError (an EmuError and a ValueError) that says what is wrong and what the shader
declares; numpy arrays bind directly; errors print their source line and caret; hints speak
Python, not command-line flags."""
from __future__ import annotations

import numpy as np
import pytest

import emu
from emu.api import DtypeWarning
from emu.errors import ArgumentError

SAXPY = """@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    y[gid.x] = 2.0 * x[gid.x] + y[gid.x];
}
"""

GRID = """@group(0) @binding(0) var<storage, read_write> g: array<array<f32, 8>, 4>;
@group(0) @binding(1) var<storage, read_write> v: array<vec4<u32>, 2>;

@compute @workgroup_size(8, 4)
fn main(@builtin(local_invocation_id) l: vec3<u32>) {
    g[l.y][l.x] = f32(l.y * 8u + l.x);
    if (l.y == 0u && l.x < 2u) { v[l.x] = vec4<u32>(l.x, 1u, 2u, 3u); }
}
"""

HALF = """enable f16;
@group(0) @binding(0) var<storage, read> h: array<f16>;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;

@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) { o[gid.x] = f32(h[gid.x]); }
"""


@pytest.fixture(scope="module")
def saxpy():
    dev = emu.Device()
    return dev, dev.create_compute_pipeline(dev.create_shader_module(SAXPY, "saxpy.wgsl"))


def test_numpy_arrays_bind_directly_and_receive_results(saxpy):
    dev, pipe = saxpy
    x, y = np.arange(8, dtype=np.float32), np.ones(8, np.float32)
    dev.dispatch(pipe, {(0, 0): x, (0, 1): y}, 2)          # an int is the x count
    assert y.tolist() == [1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0]
    assert x.tolist() == list(range(8))                     # read-only: untouched


def test_non_contiguous_output_array_is_refused(saxpy):
    dev, pipe = saxpy
    y = np.ones(16, np.float32)[::2]
    with pytest.raises(ArgumentError) as ei:
        dev.dispatch(pipe, {(0, 0): np.zeros(8, np.float32), (0, 1): y}, 2)
    assert "binding (0, 1) ('y', written by the shader): the numpy array must be contiguous and writable" in str(ei.value)


@pytest.mark.parametrize("groups,why", [
    ("4,1,1", "dispatch size '4,1,1': expected workgroup counts (x, y, z), e.g. (4, 1, 1)"),
    ((4, 1, 1, 2), "dispatch size (4, 1, 1, 2): 4 numbers; a dispatch has one to three (x, y, z)"),
    ((), "dispatch size (): 0 numbers; a dispatch has one to three (x, y, z)"),
    ((4.5, 1, 1), "dispatch size (4.5, 1, 1): 4.5 is not a whole number of workgroups"),
    ((True, 1), "dispatch size (True, 1): True is not a whole number of workgroups"),
    ((2, -1), "dispatch size (2, -1, 1) must not be negative"),
])
def test_bad_dispatch_sizes(saxpy, groups, why):
    dev, pipe = saxpy
    with pytest.raises(ArgumentError) as ei:
        dev.dispatch(pipe, {(0, 0): np.zeros(8, np.float32), (0, 1): np.zeros(8, np.float32)}, groups)
    assert str(ei.value).splitlines()[0] == f"emu: error: {why}"
    assert isinstance(ei.value, ValueError) and isinstance(ei.value, emu.EmuError)


def test_whole_floats_and_numpy_ints_are_dispatch_sizes(saxpy):
    dev, pipe = saxpy
    y = np.zeros(8, np.float32)
    dev.dispatch(pipe, {(0, 0): np.ones(8, np.float32), (0, 1): y}, (np.int64(2), 1.0))
    assert y.tolist() == [2.0] * 8


@pytest.mark.parametrize("key,why", [
    ((0,), "binding key (0,): expected (group, binding), two whole numbers"),
    ("0:1", "binding key '0:1': expected (group, binding), two whole numbers"),
    ((0, 1.5), "binding key (0, 1.5): expected (group, binding), two whole numbers"),
    ((0, 7), "binding key (0, 7): the shader declares no @group(0) @binding(7)"),
])
def test_bad_binding_keys_name_what_the_shader_declares(saxpy, key, why):
    dev, pipe = saxpy
    with pytest.raises(ArgumentError) as ei:
        dev.dispatch(pipe, {(0, 0): np.zeros(8, np.float32), (0, 1): np.zeros(8, np.float32), key: np.zeros(4)}, 1)
    assert str(ei.value).splitlines() == [f"emu: error: {why}",
                                          "   hint: the shader declares (0, 0) 'x', (0, 1) 'y'"]


def test_bad_binding_values(saxpy):
    dev, pipe = saxpy
    with pytest.raises(ArgumentError) as ei:
        dev.dispatch(pipe, {(0, 0): [1.0, 2.0], (0, 1): np.zeros(8, np.float32)}, 1)
    assert "binding (0, 0) ('x'): expected an emu Buffer or a numpy array, got list" in str(ei.value)
    with pytest.raises(ArgumentError) as ei:
        dev.dispatch(pipe, [np.zeros(8, np.float32)], 1)
    assert "bindings must be a dict {(group, binding): buffer}, not list" in str(ei.value)


def test_missing_binding_hint_is_python_and_str_shows_the_source_line(saxpy):
    dev, pipe = saxpy
    with pytest.raises(emu.EmuError) as ei:
        dev.dispatch(pipe, {(0, 0): np.zeros(8, np.float32)}, 1)
    assert str(ei.value).splitlines() == [
        "saxpy.wgsl:2:1: error: the shader uses 'y' at @group(0) @binding(1) (storage, array<f32>) but no buffer is bound there",
        "   @group(0) @binding(1) var<storage, read_write> y: array<f32>;",
        "   ^",
        "   hint: bind one, e.g. bindings={(0, 1): buffer}"]


def test_too_small_buffer(saxpy):
    dev, pipe = saxpy
    with pytest.raises(emu.EmuError) as ei:
        dev.dispatch(pipe, {(0, 0): np.zeros(8, np.float32), (0, 1): dev.create_buffer(size=2)}, 1)
    assert "has 2 bytes; its type array<f32> needs at least 4" in str(ei.value)


def test_shader_error_str_has_line_and_caret_and_wgpu_keywords_work():
    dev = emu.Device()
    with pytest.raises(emu.EmuError) as ei:
        dev.create_shader_module(code="@compute @workgroup_size(1) fn main() { let a = b; }", label="k.wgsl")
    assert str(ei.value).splitlines() == ["k.wgsl:1:49: error: unknown name 'b'",
                                          "   @compute @workgroup_size(1) fn main() { let a = b; }",
                                          "                                                   ^"]
    mod = dev.create_shader_module(code=SAXPY, label="saxpy.wgsl")
    assert mod.file == "saxpy.wgsl"
    pipe = dev.create_compute_pipeline(compute={"module": mod, "entry_point": "main"}, layout="auto", label="p")
    y = np.zeros(4, np.float32)
    dev.dispatch(pipe, {(0, 0): np.ones(4, np.float32), (0, 1): y}, (1, 1, 1))
    assert y.tolist() == [2.0] * 4
    with pytest.raises(ArgumentError) as ei:
        dev.create_shader_module(code=b"\x03\x02#\x07")
    assert "code must be WGSL text (a str), not bytes" in str(ei.value)


def test_entry_point_hint_is_python():
    dev = emu.Device()
    two = SAXPY + "\n@compute @workgroup_size(1) fn other() { }\n"
    with pytest.raises(emu.EmuError) as ei:
        dev.create_compute_pipeline(dev.create_shader_module(two, "two.wgsl"))
    assert "entry_point=NAME" in ei.value.hint and "--entry" not in str(ei.value)


def test_dtype_that_does_not_match_the_wgsl_element_type_warns():
    dev = emu.Device()
    pipe = dev.create_compute_pipeline(dev.create_shader_module(HALF, "half.wgsl"))
    out = np.zeros(4, np.float32)
    with pytest.warns(DtypeWarning) as w:
        dev.dispatch(pipe, {(0, 0): np.ones(4, np.float32), (0, 1): out}, 1)
    assert len(w) == 1 and str(w[0].message) == (
        "binding (0, 0): float32 data is bound to 'h' (array<f16>), whose elements are f16: the bytes are taken "
        "as they are (convert with .astype(numpy.float16))")
    assert out.tolist() == [0.0, 1.875, 0.0, 1.875]     # float32 1.0's two halves read as f16, as it says
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dev.dispatch(pipe, {(0, 0): np.ones(4, np.float16), (0, 1): out}, 1)    # the right dtype: silent
    assert out.tolist() == [1.0] * 4


def test_read_shapes():
    dev = emu.Device()
    pipe = dev.create_compute_pipeline(dev.create_shader_module(GRID, "grid.wgsl"))
    g, v = dev.create_buffer(size=128), dev.create_buffer(size=32)
    dev.dispatch(pipe, {(0, 0): g, (0, 1): v}, 1)
    assert g.read().shape == (4, 8) and g.read().dtype == np.float32
    assert g.read()[3, 7] == 31.0
    assert v.read().tolist() == [[0, 1, 2, 3], [1, 1, 2, 3]]
    assert g.read(np.float32).shape == (32,)                       # a dtype alone: flat, as before
    assert g.read(np.float32, shape=(8, 4))[7, 3] == 31.0
    assert g.read(np.float32, shape=(-1, 16)).shape == (2, 16)
    with pytest.raises(ArgumentError) as ei:
        g.read(np.float32, shape=(64, 64))
    assert "shape (64, 64) needs 4096 elements of float32, but the 128-byte buffer holds 32" in str(ei.value)
    made = dev.create_buffer(np.zeros((4, 4), np.float16))
    assert made.read().shape == (4, 4) and made.read().dtype == np.float16     # never bound: as made


def test_create_buffer_checks_size():
    dev = emu.Device()
    with pytest.raises(ArgumentError) as ei:
        dev.create_buffer(np.zeros(8, np.float32), size=16)
    assert "size 16 is smaller than the data (32 bytes)" in str(ei.value)
    for bad in (-4, 2.5, "64"):
        with pytest.raises(ArgumentError):
            dev.create_buffer(size=bad)
    with pytest.raises(ArgumentError) as ei:
        dev.create_buffer([1, 2, 3])
    assert "data must be a numpy array or bytes, not list" in str(ei.value)
    assert dev.create_buffer(np.ones(2, np.float32), size=16).read(np.float32).tolist() == [1, 1, 0, 0]
