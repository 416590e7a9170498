"""Constructs that shaders written elsewhere (Tint's and naga's corpora, production kernels) use,
each reproduced by our own shader under tests/shaders/realworld/ with its outputs asserted."""
from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.cli import main
from emu.errors import EmuError

SHADERS = Path(__file__).resolve().parents[1] / "shaders" / "realworld"


# Kept here, not under tests/shaders: every shader file there compiles without constants.
OVERRIDE_SCRATCH = """// A workgroup array sized by an override that has no default: the host must set it.
override wg_size: u32;
var<workgroup> scratch: array<f32, wg_size>;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(wg_size)
fn main(@builtin(local_invocation_index) i: u32, @builtin(workgroup_id) w: vec3<u32>) {
  scratch[i] = f32(i) * 2.0 + f32(w.x);
  workgroupBarrier();
  out[w.x * wg_size + i] = scratch[wg_size - 1u - i];
}
"""


def source(name: str) -> str:
    if name == "override_scratch":
        return OVERRIDE_SCRATCH
    return (SHADERS / f"{name}.wgsl").read_text()


def shader_file(tmp_path, name: str):
    path = tmp_path / f"{name}.wgsl"
    path.write_text(source(name))
    return path


def run(name, bindings, groups, *, constants=None, entry=None, dev=None):
    """Run shader `name`; `bindings` maps (group, binding) to a numpy array or a byte count."""
    dev = dev or emu.Device()
    m = dev.create_shader_module(source(name), f"{name}.wgsl")
    p = dev.create_compute_pipeline(m, entry_point=entry, constants=constants)
    bufs = {k: dev.create_buffer(size=v) if isinstance(v, int) else dev.create_buffer(v)
            for k, v in bindings.items()}
    dev.dispatch(p, bufs, groups)
    return bufs


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


# -- overrides -----------------------------------------------------------------------------------

@pytest.mark.parametrize("wg", [4, 64])
def test_override_without_default_sizes_workgroup_array(wg):
    out = run("override_scratch", {(0, 0): 2 * wg * 4}, (2, 1, 1), constants={"wg_size": wg})
    got = out[(0, 0)].read(np.float32).reshape(2, wg)
    i = np.arange(wg)
    want = np.stack([(wg - 1 - i) * 2.0 + w for w in range(2)]).astype(np.float32)
    np.testing.assert_array_equal(got, want)


def test_override_without_default_unset_is_an_error_at_the_pipeline():
    dev = emu.Device()
    m = dev.create_shader_module(source("override_scratch"), "override_scratch.wgsl")
    with pytest.raises(EmuError) as e:
        dev.create_compute_pipeline(m)
    assert "override 'wg_size' has no default and was not set" in str(e.value)
    assert "override_scratch.wgsl:3:" in str(e.value)


def test_emu_ir_override(tmp_path):
    f = shader_file(tmp_path, "override_scratch")
    rc, out, err = cli("ir", f, "--override", "wg_size=16")
    assert (rc, err) == (0, "")
    assert "global @scratch : array<f32, 16> workgroup" in out
    assert "workgroup_size(16, 1, 1)" in out
    rc, out, err = cli("ir", f)
    assert rc != 0 and out == ""
    assert "override_scratch.wgsl:3:36: error: override 'wg_size' has no default and was not set" in err
    assert "Traceback" not in err


def test_emu_run_override_sized_output(tmp_path):
    rc, out, err = cli("run", "-q", shader_file(tmp_path, "override_scratch"), "--dispatch", "1", "--override", "wg_size=8",
                       "--buffer", f"0:0={_save(tmp_path / 'z.npy', np.zeros(8, np.float32))}",
                       "--output", f"0:0={tmp_path}/o.npy")
    assert (rc, out, err) == (0, "", "")
    np.testing.assert_array_equal(np.load(tmp_path / "o.npy"), np.arange(7, -1, -1, dtype=np.float32) * 2)


def _save(path, arr):
    np.save(path, arr)
    return path


# -- modules with graphics entry points; bindings shared between entry points ---------------------

def test_mixed_stage_module_runs_its_compute_entry_point():
    out = run("mixed_stages", {(0, 0): 8 * 4}, (1, 1, 1), entry="cs")
    np.testing.assert_array_equal(out[(0, 0)].read(np.uint32), np.arange(8, dtype=np.uint32) * 3 + 1)


def test_mixed_stage_module_refuses_a_graphics_entry_point():
    dev = emu.Device()
    m = dev.create_shader_module(source("mixed_stages"), "mixed_stages.wgsl")
    assert [f.name for f in m.ir.entry_points()] == ["cs", "clash"]
    with pytest.raises(EmuError) as e:
        dev.create_compute_pipeline(m, entry_point="fs")
    assert str(e.value).startswith("mixed_stages.wgsl:23:1: error: 'fs' is a @fragment entry point")


def test_binding_shared_by_two_variables_of_one_entry_point_is_refused():
    dev = emu.Device()
    m = dev.create_shader_module(source("mixed_stages"), "mixed_stages.wgsl")
    with pytest.raises(EmuError) as e:
        dev.create_compute_pipeline(m, entry_point="clash")
    msg = str(e.value)
    assert "@group(0) @binding(0) is used by both 'outv' and 'colors' in entry point 'clash'" in msg
    assert msg.startswith("mixed_stages.wgsl:8:")


# -- --output of atomics ---------------------------------------------------------------------------

def test_output_of_atomic_array_has_the_atomics_type(tmp_path):
    rc, out, err = cli("run", "-q", SHADERS / "atomic_counts.wgsl", "--dispatch", "1", "--output", f"0:0={tmp_path}/c.npy")
    assert (rc, out, err) == (0, "", "")
    got = np.load(tmp_path / "c.npy")
    assert got.dtype == np.uint32
    i = np.arange(32)
    np.testing.assert_array_equal(got, [i[i % 4 == k].sum() for k in range(4)])


# -- quad operations -----------------------------------------------------------------------------

@pytest.mark.parametrize("sg", [4, 8, 16])
def test_quad_operations(sg):
    out = run("quads", {(0, 0): 16 * 16, (0, 1): 16 * 8}, (1, 1, 1), dev=emu.Device(subgroup_size=sg))
    got = out[(0, 0)].read(np.int32).reshape(16, 4)
    i = np.arange(16)
    x = i * 10 + 1
    want = np.stack([x[(i & ~3) | 2], x[i ^ 1], x[i ^ 2], x[i ^ 3]], axis=1)
    np.testing.assert_array_equal(got, want)
    v = np.stack([i * 0.5, -i * 0.5], axis=1).astype(np.float32)
    np.testing.assert_array_equal(out[(0, 1)].read(np.float32).reshape(16, 2), v[(i & ~3) | 3] + v[i ^ 1])


def test_quad_broadcast_needs_a_constant_id():
    src = source("quads").replace("quadBroadcast(x, 2u)", "quadBroadcast(x, lane)")
    with pytest.raises(EmuError) as e:
        emu.Device().create_shader_module(src, "q.wgsl")
    assert str(e.value).startswith("q.wgsl:9:37: error: quadBroadcast's id must be a constant from 0 to 3")


# -- builtin result structs ------------------------------------------------------------------------

def test_result_structs_in_variables_and_constants():
    out = run("result_structs", {(0, 0): 64, (0, 1): np.zeros(1, np.uint32)}, (1, 1, 1))
    got = out[(0, 0)].read(np.float32)
    want = [-0.75, -2.0, 0.75, 4, -0.75, -1, 0.0, -1.0, 0.25, 2.0, 0.75, 6, 0, 1, 5, 100]
    np.testing.assert_array_equal(got, np.asarray(want, np.float32))
    assert out[(0, 1)].read(np.uint32).tolist() == [5]


def test_result_struct_ir_round_trips():
    from emu.isa.printer import print_module
    from emu.isa.textparser import parse_ir
    m, _ = emu.compile_wgsl(source("result_structs"), "result_structs.wgsl")
    text = print_module(m)
    assert "global @pm : struct.__modf_result_f32 private = [0x0.0p+0, -0x1.0000000000000p+0]" in text
    assert print_module(parse_ir(text, "r.ir")) == text


# -- num_subgroups, workgroupUniformLoad of an atomic, inferred zero values -------------------------

@pytest.mark.parametrize("sg", [4, 8, 32])
def test_num_subgroups_atomic_uniform_load_and_inferred_zeros(sg):
    out = run("builtin_misc", {(0, 0): 80, (0, 1): 80}, (1, 1, 1), dev=emu.Device(subgroup_size=sg))
    i = np.arange(20)
    n = -(-20 // sg)
    np.testing.assert_array_equal(out[(0, 0)].read(np.uint32), n * 1000 + (i // sg) * 100)
    np.testing.assert_array_equal(out[(0, 1)].read(np.float32), np.full(20, 210.0, np.float32))


# -- swizzle assignment, b--b ----------------------------------------------------------------------

def test_swizzle_assignment_and_split_decrement():
    out = run("swizzle_assign", {(0, 0): 32, (0, 1): 8}, (1, 1, 1))
    assert out[(0, 0)].read(np.uint32).reshape(2, 4).tolist() == [[12, 7, 198, 4], [10, 20, 33, 40]]
    assert out[(0, 1)].read(np.int32).tolist() == [6, 12]


def test_swizzle_assignment_refuses_a_repeated_component():
    src = "@compute @workgroup_size(1)\nfn main() {\n  var v = vec2f();\n  v.xx = vec2f(1.0);\n}\n"
    with pytest.raises(EmuError) as e:
        emu.Device().create_shader_module(src, "s.wgsl")
    assert str(e.value).startswith("s.wgsl:4:3: error: cannot assign to a swizzle that names a component twice")
