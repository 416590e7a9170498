"""The race detector: accesses of one workgroup-memory address by different invocations with no
barrier between (at least one a write), and cooperative stores of two subgroups overlapping with
different values, end in one message naming both accesses; it is silent on every shader of the
project, and --no-race-check runs such shaders as lockstep does (as if the barrier were there)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import emu
from emu.errors import EmuError

ROOT = Path(__file__).resolve().parents[2]
OUT = "@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n"
READ_WRITE = OUT + """var<workgroup> t: array<u32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) i: u32) {
  t[i] = i * 10u;
  o[i] = t[(i + 1u) % 64u];
}
"""
WRITE_WRITE = OUT + """var<workgroup> flag: u32;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) i: u32) {
  flag = i;
  workgroupBarrier();
  o[i] = flag;
}
"""
WRITE_AFTER_READ = OUT + """var<workgroup> t: array<u32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) i: u32) {
  let v = t[63u - i];
  t[i] = v + 1u;
  o[i] = v;
}
"""


def run(src, jit=True, race_check=True, groups=1, monkeypatch=None):
    if monkeypatch is not None:
        monkeypatch.setenv("EMU_JIT", "1" if jit else "0")
    dev = emu.Device("reference", race_check=race_check)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "race.wgsl"))
    out = dev.create_buffer(size=4 * 64 * groups)
    dev.dispatch(pipe, {(0, 0): out}, (groups, 1, 1))
    return out.read(np.uint32)


@pytest.mark.parametrize("jit", [False, True])
def test_read_write_race(monkeypatch, jit):
    with pytest.raises(EmuError) as e:
        run(READ_WRITE, jit, monkeypatch=monkeypatch)
    assert str(e.value).splitlines()[0] == (
        "race.wgsl:6:3: error: data race on var<workgroup> 't' (byte 4): this read and a write by "
        "invocation 1 (workgroup (0, 0, 0), subgroup 0, lane 1 (local_invocation_index 1)) at "
        "race.wgsl:5:3, with no workgroupBarrier() between them (undefined behaviour in WGSL)")
    assert e.value.where == "workgroup (0, 0, 0), subgroup 0, lane 0 (local_invocation_index 0)"
    assert "workgroupBarrier()" in e.value.hint


@pytest.mark.parametrize("jit", [False, True])
def test_write_write_race(monkeypatch, jit):
    with pytest.raises(EmuError) as e:
        run(WRITE_WRITE, jit, monkeypatch=monkeypatch)
    assert str(e.value).splitlines()[0] == (
        "race.wgsl:5:3: error: data race on var<workgroup> 'flag' (byte 0): this write and a write by "
        "invocation 63 (workgroup (0, 0, 0), subgroup 1, lane 31 (local_invocation_index 63)) at this "
        "instruction, with no workgroupBarrier() between them (undefined behaviour in WGSL)")
    assert e.value.where == "workgroup (0, 0, 0), subgroup 0, lane 0 (local_invocation_index 0)"


def test_write_after_read_race(monkeypatch):
    with pytest.raises(EmuError) as e:
        run(WRITE_AFTER_READ, False, monkeypatch=monkeypatch)
    assert "this write and a read by invocation 63" in str(e.value) and "race.wgsl:5:3" in str(e.value)


def test_a_barrier_between_is_no_race(monkeypatch):
    fixed = READ_WRITE.replace("  o[i] = t[", "  workgroupBarrier();\n  o[i] = t[")
    for jit in (False, True):
        assert run(fixed, jit, monkeypatch=monkeypatch).tolist() == \
            [((i + 1) % 64) * 10 for i in range(64)]


@pytest.mark.parametrize("jit", [False, True])
def test_no_race_check_runs_as_lockstep(monkeypatch, jit):
    got = run(READ_WRITE, jit, race_check=False, monkeypatch=monkeypatch)
    assert got.tolist() == [((i + 1) % 64) * 10 for i in range(64)]       # as if the barrier were there


def test_cli_option(tmp_path):
    import contextlib
    import io

    from emu.cli import main
    (tmp_path / "r.wgsl").write_text(READ_WRITE)
    np.save(tmp_path / "o.npy", np.zeros(64, np.uint32))
    for extra, rc_want in (([], 1), (["--no-race-check"], 0)):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = main(["run", str(tmp_path / "r.wgsl"), "--dispatch", "1", "--buffer", f"0:0={tmp_path}/o.npy",
                       *extra])
        assert rc == rc_want, err.getvalue()
        assert ("data race" in err.getvalue()) == (rc_want == 1)


# A running maximum per subgroup, as flash attention keeps one per row: every invocation of the
# subgroup reads it, subgroupMax, invocation 0 writes it back. The write waits for the reduction,
# which waits for every read: no race (32 invocations a subgroup, two subgroups, each its own
# rows s, s + 2, s + 4, as the kernel's rows q_tile_row += num_subgroups).
RUNNING_MAX = """enable subgroups;
@group(0) @binding(0) var<storage, read_write> o: array<u32>;
var<workgroup> best: array<u32, 6>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) i: u32, @builtin(subgroup_id) s: u32,
        @builtin(subgroup_invocation_id) l: u32) {
  if (i < 6u) {
    best[i] = 7u;
  }
  workgroupBarrier();
  for (var row = s; row < 6u; row += 2u) {
    let prev = best[row] + 1u;
    let now = subgroupMax(max(prev, i * 7u % 61u + row));
    if (l == 0u) {
      best[row] = now;
    }
  }
  workgroupBarrier();
  o[i] = best[i / 32u + 4u];
}
"""


def test_a_subgroup_reduction_orders_its_reads_before_a_later_write(monkeypatch):
    dev = emu.Device("reference", 32)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(RUNNING_MAX, "max.wgsl"))
    out = dev.create_buffer(size=4 * 64)
    dev.dispatch(pipe, {(0, 0): out}, (1, 1, 1))
    want = [max(8, *(j * 7 % 61 + i // 32 + 4 for j in range(32 * (i // 32), 32 * (i // 32) + 32)))
            for i in range(64)]
    assert out.read(np.uint32).tolist() == want


def test_the_reduction_does_not_order_another_subgroups_reads():
    # soft_max's pattern: all read slot 0 after the last barrier, invocation 0 overwrites it
    # before the next: subgroup 1's reads may come after (lavapipe runs it so and gets it wrong)
    src = RUNNING_MAX.replace("best[row]", "best[0]")
    dev = emu.Device("reference", 32)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "max.wgsl"))
    with pytest.raises(EmuError) as e:
        dev.dispatch(pipe, {(0, 0): dev.create_buffer(size=4 * 64)}, (1, 1, 1))
    assert str(e.value).splitlines()[0] == (
        "max.wgsl:15:7: error: data race on var<workgroup> 'best' (byte 0): this write and a read by several "
        "other invocations at max.wgsl:12:24, with no workgroupBarrier() between them (undefined behaviour "
        "in WGSL)")


def test_a_reduction_does_not_order_a_write_before_a_read():
    # invocation 0 writes, subgroupAdd, the others read: no memory ordering is promised for that
    src = """enable subgroups;
@group(0) @binding(0) var<storage, read_write> o: array<u32>;
var<workgroup> x: u32;
@compute @workgroup_size(32)
fn main(@builtin(local_invocation_index) i: u32) {
  if (i == 0u) { x = 5u; }
  let n = subgroupAdd(1u);
  o[i] = x + n;
}
"""
    dev = emu.Device("reference", 32)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "raw.wgsl"))
    with pytest.raises(EmuError) as e:
        dev.dispatch(pipe, {(0, 0): dev.create_buffer(size=4 * 32)}, (1, 1, 1))
    assert "raw.wgsl:8:12: error: data race on var<workgroup> 'x' (byte 0): this read and a write by " \
           "invocation 0" in str(e.value)


# naga's subgroupBarrier(): invocation 0 of each subgroup writes, the subgroup reads after it
SUBGROUP_BARRIER = """enable subgroups;
@group(0) @binding(0) var<storage, read_write> o: array<u32>;
var<workgroup> x: array<u32, 2>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) i: u32, @builtin(subgroup_id) s: u32,
        @builtin(subgroup_invocation_id) l: u32) {
  if (l == 0u) {
    x[s] = 10u + s;
  }
  subgroupBarrier();
  o[i] = x[READ];
}
"""


def test_subgroup_barrier_orders_a_subgroup():
    dev = emu.Device("reference", 32)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SUBGROUP_BARRIER.replace("READ", "s"), "sb.wgsl"))
    out = dev.create_buffer(size=4 * 64)
    dev.dispatch(pipe, {(0, 0): out}, (1, 1, 1))
    assert out.read(np.uint32).tolist() == [10 + i // 32 for i in range(64)]
    warned = dev.create_shader_module(SUBGROUP_BARRIER.replace("READ", "s"), "sb.wgsl", strict=True).warnings
    assert [(w.message, w.loc.line) for w in warned] == [
        ("subgroupBarrier is naga's: Tint (Dawn, Chrome) has no such function", 10)]


@pytest.mark.parametrize("change, message", [
    (("READ", "1u - s"), "sb.wgsl:11:3: error: data race on var<workgroup> 'x' (byte 4): this read and a write "
                         "by invocation 32"),                         # the other subgroup's slot
    (("  subgroupBarrier();\n", "  if (l < 16u) { subgroupBarrier(); }\n"),
     "sb.wgsl:10:18: error: subgroupBarrier reached by only some invocations of a subgroup (non-uniform "
     "control flow): undefined behaviour in WGSL"),
])
def test_subgroup_barrier_misuse(change, message):
    src = SUBGROUP_BARRIER.replace(*change).replace("READ", "s")
    dev = emu.Device("reference", 32)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "sb.wgsl"))
    with pytest.raises(EmuError) as e:
        dev.dispatch(pipe, {(0, 0): dev.create_buffer(size=4 * 64)}, (1, 1, 1))
    assert str(e.value).splitlines()[0].startswith(message)


COOP = """enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read_write> d: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32) {
  let m = subgroup_matrix_result<f32, 8, 8>(VALUE);
  subgroupMatrixStore(&d, OFFSET, m, false, 8u);
}
"""


def coop(value, offset):
    dev = emu.Device("reference", 32)
    src = COOP.replace("VALUE", value).replace("OFFSET", offset)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "coop.wgsl"))
    d = dev.create_buffer(size=4 * 256)
    dev.dispatch(pipe, {(0, 0): d}, (1, 1, 1))
    return d.read(np.float32)


def test_overlapping_coop_stores_of_different_values():
    with pytest.raises(EmuError) as e:
        coop("f32(li / 32u)", "0u")                 # subgroup 0 stores 0.0, subgroup 1 stores 1.0
    msg = str(e.value).splitlines()[0]
    assert msg.startswith("coop.wgsl:6:3: error: cooperative stores of two subgroups overlap at byte 0 of "
                          "buffer 'd' (@group(0) @binding(0)) with different values (0x0 from workgroup "
                          "(0, 0, 0), subgroup 0 and 0x3f800000 from workgroup (0, 0, 0), subgroup 1)")


def test_overlapping_coop_stores_of_the_same_values_are_benign():
    assert coop("2.0", "0u")[:64].tolist() == [2.0] * 64          # both subgroups store the same tile


def test_coop_stores_side_by_side():
    got = coop("f32(li / 32u)", "(li / 32u) * 64u")                # each subgroup its own tile
    assert got[:64].tolist() == [0.0] * 64 and got[64:128].tolist() == [1.0] * 64


def _project_shaders():
    files = sorted({*ROOT.glob("tests/**/*.wgsl"), *ROOT.glob("emu/examples/*.wgsl"), *ROOT.glob("bench/**/*.wgsl"),
                    *ROOT.glob("tests/**/*.comp"), *ROOT.glob("tests/**/*.spvasm"), *ROOT.glob("emu/examples/*.comp")})
    # a GLSL kernel with a SPIR-V assembly twin (NV2, which the wheel's glslang refuses) runs as the twin
    return [f for f in files if f.stat().st_size < 200_000
            and not (f.suffix == ".comp" and f.with_suffix(".spvasm").is_file())]


def _knows_maintenance1() -> bool:
    from emu.frontend.spirv import grammar
    return "OpCooperativeMatrixGetCoordinateEXT" in grammar.load("core").by_name


OVERRIDES = {"consts_overrides.wgsl": {"COUNT": 8}}       # overrides without a default
# workgroup-scope matrices of flexible dimensions (VK_NV_cooperative_matrix2): the H200's
PROFILES = {"nv2_tensor.spvasm": "nvidia-h200", "nv2_elementwise.spvasm": "nvidia-h200",
            "nv2_2x2.spvasm": "nvidia-h200", "gemm_flexible.comp": "nvidia-h200",
            "ext_maint1.spvasm": "nvidia-h200", "ext_maint1_nv2.spvasm": "nvidia-h200",
            "nv2_lanes_probe.spvasm": "nvidia-h200", "nv2_element_write.spvasm": "nvidia-h200"}


@pytest.mark.parametrize("path", _project_shaders(), ids=lambda p: str(p.relative_to(ROOT)))
def test_silent_on_the_project_shaders(path):
    """Each entry point, one and two workgroups, zeroed buffers: no race reported (other errors,
    such as a shader written to be refused, are not this test's business). WGSL, GLSL and SPIR-V."""
    from emu.api import min_binding_size, used_globals
    dev = emu.Device(PROFILES.get(path.name, "reference"), 32)
    if "OpUnknown(5363" in path.read_text() and not _knows_maintenance1():
        pytest.skip("a VK_EXT_cooperative_matrix_maintenance1 module: the SPIR-V grammar read predates it "
                    "(EMU_SPIRV_GRAMMAR, scripts/glslang_nv2.sh)")
    mod = dev.create_shader_module(path.read_text(), str(path))
    for ep in mod.ir.entry_points():
        for groups in (1, 2):
            try:
                pipe = dev.create_compute_pipeline(mod, ep.name, constants=OVERRIDES.get(path.name))
                bufs = {(g.group, g.binding): dev.create_buffer(size=max(min_binding_size(g.type), 4) * 64)
                        for g in used_globals(mod.ir, pipe.pipeline.entry) if g.space in ("storage", "uniform")}
                dev.dispatch(pipe, bufs, (groups, 1, 1))
            except EmuError as e:
                assert "race" not in e.message and "overlap" not in e.message, str(e)
