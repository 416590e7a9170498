"""Out-of-bounds accesses are legal WGSL. By default emu runs them the way a WebGPU
implementation does (indices clamped, cooperative matrices by the profile's measured rule, else
Dawn's) and reports each site once: file:line:col, what it touched, the first workgroup/lane and
how many accesses. bounds="strict" (--bounds strict) stops at the first. The fusion JIT gives
the same values and the same report."""
import contextlib
import io

import numpy as np
import pytest

import emu
from emu.cli import main as cli_main
from emu.errors import EmuError, HostError

# Ragged tile edge: every invocation reads its neighbour, the last one past the end, and
# select() throws that value away (ordinary in production kernels).
RAGGED = """@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    let n = arrayLength(&x);
    let right = x[i + 1u];
    y[i] = select(0.0, right, i + 1u < n) + x[i];
}
"""


def run(src, inputs, out_bytes, groups, bounds=None, profile="reference", **kw):
    dev = emu.Device(profile, **({} if bounds is None else {"bounds": bounds}), **kw)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "k.wgsl"))
    bufs = {(0, i): dev.create_buffer(a) for i, a in enumerate(inputs)}
    out = bufs[(0, len(inputs))] = dev.create_buffer(size=out_bytes)
    warnings = dev.dispatch(pipe, bufs, groups)
    return out, warnings


def test_default_runs_as_webgpu_and_reports_the_site_once():
    x = np.arange(256, dtype=np.float32)
    out, warnings = run(RAGGED, [x], 4 * 256, (4, 1, 1))
    want = x + np.append(x[1:], 0)
    np.testing.assert_array_equal(out.read(np.float32), want)
    assert len(warnings) == 1
    w = warnings[0]
    assert w.severity == "warning" and (w.loc.file, w.loc.line, w.loc.col) == ("k.wgsl", 7, 17)
    assert w.message == ("out-of-bounds index into buffer 'x' (@group(0) @binding(0)) (256 elements): "
                         "1 access out of bounds; clamped to the last element, as WebGPU's robust access allows")
    assert w.where == "first in workgroup (3, 0, 0), subgroup 1, lane 31 (local_invocation_index 63)"
    assert "--bounds strict" in w.hint


def test_strict_stops_at_the_first():
    x = np.arange(256, dtype=np.float32)
    with pytest.raises(EmuError) as e:
        run(RAGGED, [x], 4 * 256, (4, 1, 1), bounds="strict")
    assert (e.value.loc.line, e.value.loc.col) == (7, 17)
    assert "index 256 is out of bounds for an array of 256 elements in buffer 'x'" in e.value.message
    assert "workgroup (3, 0, 0)" in e.value.where


def test_every_site_once_counts_over_batches():
    """Two sites, the second hit by many lanes in many batches: one warning each, in source
    order, with the first lane and every access counted."""
    src = """@group(0) @binding(0) var<storage, read> x: array<u32, 8>;
@group(0) @binding(1) var<storage, read_write> y: array<u32>;
@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    var local = array<u32, 4>(1u, 2u, 3u, 4u);
    let a = x[g.x % 16u];
    let b = local[g.x % 8u];
    y[g.x] = a + b;
}
"""
    x = np.arange(8, dtype=np.uint32) * 10
    dev = emu.Device("reference")
    dev.options.batch_lanes = 64                       # two workgroups a batch: 8 batches
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "k.wgsl"))
    out = dev.create_buffer(size=4 * 512)
    warnings = dev.dispatch(pipe, {(0, 0): dev.create_buffer(x), (0, 1): out}, (16, 1, 1))
    g = np.arange(512)
    want = x[np.minimum(g % 16, 7)] + np.array([1, 2, 3, 4])[np.minimum(g % 8, 3)]
    np.testing.assert_array_equal(out.read(np.uint32), want)
    assert [(w.loc.line, w.loc.col) for w in warnings] == [(6, 13), (7, 13)]
    assert "buffer 'x' (@group(0) @binding(0)) (8 elements): 256 accesses out of bounds" in warnings[0].message
    assert warnings[0].where.startswith("first in workgroup (0, 0, 0), subgroup 0, lane 8 ")
    assert "function variable 'local' (4 elements): 256 accesses out of bounds" in warnings[1].message
    assert warnings[1].where.startswith("first in workgroup (0, 0, 0), subgroup 0, lane 4 ")


@pytest.mark.parametrize("bounds", ["webgpu", "strict"])
def test_fusion_jit_same_values_same_report(monkeypatch, bounds):
    x = np.arange(256, dtype=np.float32)
    seen = []
    for jit in ("0", "1"):
        monkeypatch.setenv("EMU_JIT", jit)
        try:
            out, warnings = run(RAGGED, [x], 4 * 256, (4, 1, 1), bounds=bounds)
            seen.append((out.read(np.float32).tobytes(), [w.format() for w in warnings]))
        except EmuError as e:
            seen.append(e.format())
    assert seen[0] == seen[1]
    assert isinstance(seen[0], str) == (bounds == "strict")


COOP = """enable f16;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read_write> d: array<f32>;
@compute @workgroup_size(32)
fn main() {
  let l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, OFFSET, 16u);
  let r = subgroup_matrix_right<f16, 16, 16>(1.0h);
  subgroupMatrixStore<row_major>(&d, 0u, subgroupMatrixMultiply<f32>(l, r), 16u);
}
"""


@pytest.mark.parametrize("profile", ["reference", "nvidia-h200"])
def test_cooperative_load_past_the_end_reads_from_offset_zero_like_dawn(profile):
    """The H200 (through Dawn) reads a matrix that does not fit as a dense one from offset 0,
    which is what Dawn's robustness transform writes; profiles that measured nothing do the same."""
    a = np.arange(300, dtype=np.float16)
    out, warnings = run(COOP.replace("OFFSET", "200u"), [a], 4 * 256, (1, 1, 1), profile=profile)
    dense = a[:256].astype(np.float64).reshape(16, 16)
    np.testing.assert_array_equal(out.read(np.float32).reshape(16, 16), dense @ np.ones((16, 16)))
    assert len(warnings) == 1 and (warnings[0].loc.line, warnings[0].loc.col) == (7, 11)
    assert warnings[0].message.startswith(
        "out-of-bounds cooperative matrix access into buffer 'a' (@group(0) @binding(0)): ")
    assert "elements out of bounds; the matrix was read or written at offset 0 with the minimum " \
           "stride, as Dawn does" in warnings[0].message
    assert warnings[0].where.startswith("first in workgroup (0, 0, 0), subgroup 0, lane 0")


def test_cooperative_matrix_larger_than_the_buffer_reads_zero():
    a = np.arange(100, dtype=np.float16)                 # not even one dense 16x16 matrix
    out, warnings = run(COOP.replace("OFFSET", "0u"), [a], 4 * 256, (1, 1, 1))
    m = np.zeros(256)
    m[:100] = a
    np.testing.assert_array_equal(out.read(np.float32).reshape(16, 16), m.reshape(16, 16) @ np.ones((16, 16)))
    assert len(warnings) == 1


def test_bad_bounds_option_is_one_message():
    with pytest.raises(HostError) as e:
        emu.Device("reference", bounds="loose")
    assert "bounds must be one of webgpu, strict, not 'loose'" in e.value.message


@pytest.mark.parametrize("cmd", ["run", "ir"])
def test_help_says_what_the_default_is(cmd):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert cli_main([cmd, "--help"]) == 0
    text = " ".join(buf.getvalue().split())
    assert "webgpu (the default)" in text or "by default (indices clamped" in text
    assert "--bounds strict" in text or "strict: stop" in text


# ONNX Runtime's Im2ColMatMul shares 32 im2col rows across a subgroup with subgroupShuffle(v, m)
# for m < 32: on an 8-lane device (lavapipe) ids 8..31 name no invocation. WGSL leaves such a
# result indeterminate; emu gives each invocation its own value and reports the site.
SHUFFLE_WIDE = """enable subgroups;
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> y: array<u32>;
@compute @workgroup_size(16)
fn main(@builtin(local_invocation_index) i: u32) {
  y[i] = subgroupShuffle(x[i], i % 16u) + subgroupShuffleXor(x[i], 8u) * 1000u;
  for (var m = 8u; m < 12u; m++) {
    y[i] += subgroupShuffle(x[i], m) * 0u;     // one site, whatever id it names each time
  }
}
"""


def test_shuffle_of_an_invocation_outside_the_subgroup_is_reported():
    x = np.arange(16, dtype=np.uint32) * 10
    out, warnings = run(SHUFFLE_WIDE, [x], 64, (1, 1, 1), profile="lavapipe")
    assert [(w.loc.line, w.loc.col) for w in warnings] == [(6, 10), (6, 43), (8, 13)]
    assert warnings[0].message == ("subgroupShuffle reads invocation 15 of a subgroup of 8: 8 invocations; WGSL "
                                   "leaves the value indeterminate: emu gives each invocation its own value")
    assert warnings[1].message.startswith("subgroupShuffleXor reads invocation 15 of a subgroup of 8: 16 invocations")
    assert "subgroup 1, lane 0" in warnings[0].format() and "subgroup 0, lane 0" in warnings[1].format()
    assert warnings[2].message.startswith("subgroupShuffle reads invocation 8 of a subgroup of 8: 64 invocations")
    assert np.array_equal(out.read(np.uint32), x + x * 1000)   # each its own value, twice
    # on 16 lanes every id names an invocation: the values are the shuffled ones, and no report
    out, warnings = run(SHUFFLE_WIDE, [x], 64, (1, 1, 1), profile="reference", subgroup_size=16)
    assert warnings == [] and np.array_equal(out.read(np.uint32), x + np.roll(x.reshape(2, 8), 1, 0).reshape(-1) * 1000)
    with pytest.raises(EmuError, match=r"subgroupShuffle reads invocation 15 of a subgroup of 8: the value is "
                                       r"indeterminate in WGSL"):
        run(SHUFFLE_WIDE, [x], 64, (1, 1, 1), profile="lavapipe", bounds="strict")
