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
            "nv2_lanes_probe.spvasm": "nvidia-h200", "nv2_element_write.spvasm": "nvidia-h200",
            "nv2_decode.spvasm": "nvidia-h200"}


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


# Cooperative matrix loads and stores of workgroup memory take part element by element: each
# element access is its subgroup's (emu/memory/races.py). Subgroups 0 and 1 of a 64-invocation
# workgroup at 32 lanes; FIRST, then BETWEEN, then SECOND.
WG_COOP = """diagnostic(off, chromium.subgroup_matrix_uniformity);
enable subgroups;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read_write> d: array<f32>;
var<workgroup> t: array<f32, 128>;
@compute @workgroup_size(64)
fn main(@builtin(subgroup_id) s: u32, @builtin(local_invocation_index) li: u32) {
  FIRST
  BETWEEN
  SECOND
}
"""
M8 = "subgroup_matrix_result<f32, 8, 8>"
STORE = f"if (s == WHO) {{ subgroupMatrixStore(&t, 0u, {M8}(VALUE), false, 8u); }}"
LOAD = f"if (s == WHO) {{ let m = subgroupMatrixLoad<{M8}>(&t, 0u, false, 8u); subgroupMatrixStore(&d, 0u, m, false, 8u); }}"


def wg_coop(first, second, between=""):
    """(d's first 64 values, the run's warnings)."""
    dev = emu.Device("reference", 32)
    src = WG_COOP.replace("FIRST", first).replace("BETWEEN", between).replace("SECOND", second)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "wgc.wgsl"))
    d = dev.create_buffer(size=4 * 256)
    warnings = dev.dispatch(pipe, {(0, 0): d}, (1, 1, 1))
    return d.read(np.float32)[:64].tolist(), warnings


def wg_coop_error(first, second, between="") -> EmuError:
    with pytest.raises(EmuError) as e:
        wg_coop(first, second, between)
    return e.value


def _sg(code, who, value="1.0"):
    return code.replace("WHO", f"{who}u").replace("VALUE", value)


def test_a_matrix_store_and_another_subgroups_matrix_load_race():
    e = wg_coop_error(_sg(STORE, 0), _sg(LOAD, 1))
    assert str(e).splitlines()[0] == (
        "wgc.wgsl:10:26: error: data race on var<workgroup> 't' (byte 0, element (0, 0) of the matrix): this "
        "cooperative matrix load by subgroup 1 and a write by the cooperative matrix store of subgroup 0 "
        "(workgroup (0, 0, 0), subgroup 0) at wgc.wgsl:8:18, with no workgroupBarrier() between them "
        "(undefined behaviour in WGSL and in the Vulkan memory model)")
    assert e.where == "workgroup (0, 0, 0), subgroup 1, lane 0 (local_invocation_index 32)"
    assert e.hint.startswith("put a workgroupBarrier() between the two accesses")


def test_a_barrier_orders_a_matrix_store_and_another_subgroups_load():
    assert wg_coop(_sg(STORE, 0), _sg(LOAD, 1), "workgroupBarrier();") == ([1.0] * 64, [])


def test_a_subgroup_is_ordered_with_its_own_matrix_operations():
    # its store then its load, and its invocations' writes then its load: one subgroup, in order
    assert wg_coop(_sg(STORE, 0), _sg(LOAD, 0)) == ([1.0] * 64, [])
    assert wg_coop("if (s == 0u) { t[li] = 2.0; t[li + 32u] = 2.0; }", _sg(LOAD, 0)) == ([2.0] * 64, [])


@pytest.mark.parametrize("first, second, message", [
    ("if (s == 1u) { t[li - 32u] = 2.0; }", _sg(LOAD, 0),
     "wgc.wgsl:10:26: error: data race on var<workgroup> 't' (byte 0, element (0, 0) of the matrix): this "
     "cooperative matrix load by subgroup 0 and a write by invocation 32 (workgroup (0, 0, 0), subgroup 1, "
     "lane 0 (local_invocation_index 32)) at wgc.wgsl:8:18, with no workgroupBarrier() between them"),
    (_sg(LOAD, 1), "t[li] = 3.0;",
     "wgc.wgsl:10:3: error: data race on var<workgroup> 't' (byte 0): this write and a read by the cooperative "
     "matrix load of subgroup 1 (workgroup (0, 0, 0), subgroup 1) at wgc.wgsl:8:26, with no workgroupBarrier() "
     "between them (undefined behaviour in WGSL)"),
    (_sg(STORE, 0), _sg(STORE, 1, "2.0"),
     "wgc.wgsl:10:18: error: data race on var<workgroup> 't' (byte 0, element (0, 0) of the matrix): this "
     "cooperative matrix store by subgroup 1 and a write by the cooperative matrix store of subgroup 0"),
])
def test_matrix_and_other_accesses_of_two_subgroups_race(first, second, message):
    assert str(wg_coop_error(first, second)).splitlines()[0].startswith(message)


def test_subgroups_with_their_own_tiles_do_not_race():
    own = f"subgroupMatrixStore(&t, s * 64u, {M8}(f32(s + 1u)), false, 8u);"
    back = f"let m = subgroupMatrixLoad<{M8}>(&t, s * 64u, false, 8u); subgroupMatrixStore(&d, s * 64u, m, false, 8u);"
    assert wg_coop(own, back) == ([1.0] * 64, [])


def test_matrix_loads_of_two_subgroups_and_scalar_reads_do_not_race():
    assert wg_coop(f"let m = subgroupMatrixLoad<{M8}>(&t, 0u, false, 8u);", "d[li] = t[li % 64u];") == ([0.0] * 64, [])


@pytest.mark.parametrize("first, second, line", [
    (f"subgroupMatrixStore(&t, 0u, {M8}(1.0), false, 8u);", "", "wgc.wgsl:8:3"),   # one instruction
    (_sg(STORE, 0), _sg(STORE, 1), "wgc.wgsl:10:18"),                               # two
])
def test_two_subgroups_storing_the_same_value_is_reported_and_runs(first, second, line):
    # a data race to the memory model whatever the values; GPUs keep the value, and so does emu
    vals, warnings = wg_coop(first, second + " workgroupBarrier(); " + _sg(LOAD, 0))
    assert vals == [1.0] * 64 and len(warnings) == 1
    w = warnings[0]
    assert w.severity == "warning" and str(w).splitlines()[0] == (
        f"{line}: warning: cooperative matrix stores of two subgroups write the same value to elements of "
        "var<workgroup> 't': 64 elements; a data race all the same (WGSL's and the Vulkan memory model: two "
        "subgroups' writes of one element, whatever the values, with no barrier between them are undefined "
        "behaviour); emu keeps the value, as GPUs do")
    assert w.where == "first in workgroup (0, 0, 0), subgroup 1, lane 0 (local_invocation_index 32)"
    assert w.hint.startswith("give each subgroup its own tile")


def test_one_matrix_store_holding_elements_twice_is_no_race():
    # amd-rdna3's A map holds each element in two lanes of the subgroup (lanes 16-31 repeat 0-15):
    # one store writes each element twice, from the one subgroup; stored, loaded back, stored out
    from emu.isa.types import F16, CoopMatrixType
    dev = emu.Device("amd-rdna3", 32)
    lm = dev.profile.matrix_lane_map(CoopMatrixType(16, 16, F16, "A"), 32)
    held = list(zip(lm.rows_idx[lm.valid].tolist(), lm.cols_idx[lm.valid].tolist()))
    assert len(held) == 512 and len(set(held)) == 256
    src = """diagnostic(off, chromium.subgroup_matrix_uniformity);
enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read_write> a: array<f16>;
@group(0) @binding(1) var<storage, read_write> d: array<f16>;
var<workgroup> t: array<f16, 512>;
@compute @workgroup_size(64)
fn main(@builtin(subgroup_id) s: u32) {
  let m = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>>(&a, s * 256u, false, 16u);
  subgroupMatrixStore(&t, s * 256u, m, false, 16u);
  let r = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>>(&t, s * 256u, false, 16u);
  subgroupMatrixStore(&d, s * 256u, r, false, 16u);
}
"""
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "dup.wgsl"))
    x = np.arange(512).astype(np.float16)
    d = dev.create_buffer(size=2 * 512)
    assert dev.dispatch(pipe, {(0, 0): dev.create_buffer(x), (0, 1): d}, (1, 1, 1)) == []
    assert np.array_equal(d.read(np.float16), x)


# SPIR-V: a GLSL KHR cooperative matrix, and VK_NV_cooperative_matrix2's tensor-layout loads and
# stores at subgroup and workgroup scope (assembly, as the wheel's glslang refuses NV2)
KHR = """#version 450
#extension GL_KHR_cooperative_matrix : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_shader_subgroup_basic : enable
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer D { float d[]; };
shared float t[256];
void main() {
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m =
      coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(1.0);
  if (gl_SubgroupID == 0) coopMatStore(m, t, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  BETWEEN
  if (gl_SubgroupID == 1) {
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> r;
    coopMatLoad(r, t, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(r, d, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  }
}
"""
def nv2(invocations, builtin, scope, rows, cols, body):
    """A module of `invocations` invocations: `builtin` (SubgroupId, LocalInvocationIndex) in %i,
    var<workgroup> t: float[rows * cols], d: a storage buffer of floats, %mat an f32 accumulator
    of `scope` (3 subgroup, 2 workgroup), %one of it filled with 1.0, %l a rows x cols tensor
    layout, %t0 / %d0 the first elements; then `body`."""
    return f"""; SPIR-V
; Version: 1.6
               OpCapability Shader
               OpCapability VulkanMemoryModel
               OpCapability CooperativeMatrixTensorAddressingNV
               OpCapability TensorAddressingNV
               OpCapability CooperativeMatrixKHR
               OpCapability GroupNonUniform
               OpExtension "SPV_KHR_cooperative_matrix"
               OpExtension "SPV_NV_cooperative_matrix2"
               OpExtension "SPV_NV_tensor_addressing"
               OpMemoryModel Logical Vulkan
               OpEntryPoint GLCompute %main "main" %t %d %in
               OpExecutionMode %main LocalSize {invocations} 1 1
               OpName %t "t"
               OpDecorate %in BuiltIn {builtin}
               OpDecorate %rt ArrayStride 4
               OpDecorate %D Block
               OpMemberDecorate %D 0 Offset 0
               OpDecorate %d Binding 0
               OpDecorate %d DescriptorSet 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
       %bool = OpTypeBool
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
   %uint_264 = OpConstant %uint 264
      %scope = OpConstant %uint {scope}
       %rows = OpConstant %uint {rows}
       %cols = OpConstant %uint {cols}
      %count = OpConstant %uint {rows * cols}
     %layout = OpTypeTensorLayoutNV %uint_2 %uint_0
        %mat = OpTypeCooperativeMatrixKHR %float %scope %rows %cols %uint_2
    %float_1 = OpConstant %float 1
        %one = OpConstantComposite %mat %float_1
        %arr = OpTypeArray %float %count
 %ptr_wg_arr = OpTypePointer Workgroup %arr
          %t = OpVariable %ptr_wg_arr Workgroup
%ptr_wg_float = OpTypePointer Workgroup %float
         %rt = OpTypeRuntimeArray %float
          %D = OpTypeStruct %rt
   %ptr_sb_D = OpTypePointer StorageBuffer %D
          %d = OpVariable %ptr_sb_D StorageBuffer
%ptr_sb_float = OpTypePointer StorageBuffer %float
%ptr_in_uint = OpTypePointer Input %uint
         %in = OpVariable %ptr_in_uint Input
      %undef = OpUndef %mat
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %i = OpLoad %uint %in
         %l0 = OpCreateTensorLayoutNV %layout
          %l = OpTensorLayoutSetDimensionNV %layout %l0 %rows %cols
         %t0 = OpAccessChain %ptr_wg_float %t %uint_0
         %d0 = OpAccessChain %ptr_sb_float %d %uint_0 %uint_0
{body}
               OpReturn
               OpFunctionEnd
"""


# subgroup 0 stores a 16x16 f32 tile through a tensor layout, then BETWEEN, subgroup 1 loads it
NV2_SUBGROUP = nv2(64, "SubgroupId", 3, 16, 16, """        %is0 = OpIEqual %bool %i %uint_0
               OpSelectionMerge %m0 None
               OpBranchConditional %is0 %then0 %m0
      %then0 = OpLabel
               OpCooperativeMatrixStoreTensorNV %t0 %one %l None None
               OpBranch %m0
         %m0 = OpLabel
BETWEEN
        %is1 = OpIEqual %bool %i %uint_1
               OpSelectionMerge %m1 None
               OpBranchConditional %is1 %then1 %m1
      %then1 = OpLabel
          %r = OpCooperativeMatrixLoadTensorNV %mat %t0 %undef %l None None
               OpCooperativeMatrixStoreTensorNV %d0 %r %l None None
               OpBranch %m1
         %m1 = OpLabel""")
# the workgroup (128 invocations) stores a 64x32 f32 matrix, then BETWEEN, then AFTER
NV2_WORKGROUP = nv2(128, "LocalInvocationIndex", 2, 64, 32, """               OpCooperativeMatrixStoreTensorNV %t0 %one %l None None
BETWEEN
AFTER""")
SPV_BARRIER = "               OpControlBarrier %uint_2 %uint_2 %uint_264"
NV2_SCALAR_READ = """         %ti = OpAccessChain %ptr_wg_float %t %i
          %v = OpLoad %float %ti
         %di = OpAccessChain %ptr_sb_float %d %uint_0 %i
               OpStore %di %v"""
NV2_WS_LOAD = """          %r = OpCooperativeMatrixLoadTensorNV %mat %t0 %undef %l None None
               OpCooperativeMatrixStoreTensorNV %d0 %r %l None None"""


def spirv_run(src, file, floats):
    dev = emu.Device("nvidia-h200", 32)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, file))
    d = dev.create_buffer(size=4 * floats)
    warnings = dev.dispatch(pipe, {(0, 0): d}, (1, 1, 1))
    return d.read(np.float32), warnings


@pytest.mark.parametrize("src, file, line", [
    (KHR.replace("BETWEEN", ""), "khr.comp", "khr.comp:15:1"),
    (NV2_SUBGROUP.replace("BETWEEN", ""), "nv2.spvasm", "nv2.spvasm:70:11"),
])
def test_spirv_matrix_store_and_another_subgroups_load_race(src, file, line):
    with pytest.raises(EmuError) as e:
        spirv_run(src, file, 256)
    first = str(e.value).splitlines()[0]
    assert first.startswith(f"{line}: error: data race on shared (Workgroup) variable 't' (byte 0, element (0, 0) of the "
                            "matrix): this cooperative matrix load by subgroup 1 and a write by the cooperative "
                            "matrix store of subgroup 0 (workgroup (0, 0, 0), subgroup 0) at "), first
    assert first.endswith(", with no barrier() (OpControlBarrier, Workgroup scope) between them (undefined "
                          "behaviour in GLSL and SPIR-V)"), first
    assert e.value.hint.startswith("put a barrier() (OpControlBarrier, Workgroup scope) between the two accesses")
    assert e.value.where == "workgroup (0, 0, 0), subgroup 1, lane 0 (local_invocation_index 32)"


GLSL_READ_WRITE = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer O { uint o[]; };
shared uint t[64];
void main() {
  uint i = gl_LocalInvocationIndex;
  t[i] = i * 10u;
  o[i] = t[(i + 1u) % 64u];
}
"""


@pytest.mark.parametrize("jit", [False, True])
def test_a_glsl_race_names_glsls_barrier(monkeypatch, jit):
    """A GLSL (SPIR-V) shader's race names barrier() / OpControlBarrier and shared memory, not
    WGSL's workgroupBarrier() and var<workgroup>."""
    monkeypatch.setenv("EMU_JIT", "1" if jit else "0")
    dev = emu.Device("reference")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(GLSL_READ_WRITE, "race.comp"))
    with pytest.raises(EmuError) as e:
        dev.dispatch(pipe, {(0, 0): dev.create_buffer(size=4 * 64)}, (1, 1, 1))
    assert str(e.value).splitlines()[0] == (
        "race.comp:8:1: error: data race on shared (Workgroup) variable 't' (byte 4): this read and a write by "
        "invocation 1 (workgroup (0, 0, 0), subgroup 0, lane 1 (local_invocation_index 1)) at race.comp:7:1, "
        "with no barrier() (OpControlBarrier, Workgroup scope) between them (undefined behaviour in GLSL and SPIR-V)")
    assert e.value.hint == ("put a barrier() (OpControlBarrier, Workgroup scope) between the two accesses, let one "
                            "invocation do both, or use atomics (--no-race-check runs it anyway, as if the barrier "
                            "were there)")
    assert "workgroupBarrier" not in str(e.value) + e.value.hint


@pytest.mark.parametrize("src, file", [
    (KHR.replace("BETWEEN", "barrier();"), "khr.comp"),
    (NV2_SUBGROUP.replace("BETWEEN", SPV_BARRIER), "nv2.spvasm"),
])
def test_spirv_barrier_orders_the_matrix_store_and_load(src, file):
    d, warnings = spirv_run(src, file, 256)
    assert d.tolist() == [1.0] * 256 and warnings == []


def test_workgroup_scope_store_races_with_an_invocations_read():
    # which subgroup stores an element of a workgroup-scope matrix is the driver's
    src = NV2_WORKGROUP.replace("BETWEEN", "").replace("AFTER", NV2_SCALAR_READ)
    with pytest.raises(EmuError) as e:
        spirv_run(src, "ws.spvasm", 2048)
    assert str(e.value).splitlines()[0] == (
        "ws.spvasm:61:11: error: data race on shared (Workgroup) variable 't' (byte 0): this read and a write by "
        "the workgroup-scope cooperative matrix store at ws.spvasm:58:16, with no barrier() (OpControlBarrier, "
        "Workgroup scope) between them (undefined behaviour in GLSL and SPIR-V)")


@pytest.mark.parametrize("between, after, total", [
    (SPV_BARRIER, NV2_SCALAR_READ, 128.0),      # each invocation reads one element after the barrier
    ("", NV2_WS_LOAD, 2048.0),                  # the workgroup's own store, then its own load
])
def test_workgroup_scope_accesses_ordered(between, after, total):
    d, warnings = spirv_run(NV2_WORKGROUP.replace("BETWEEN", between).replace("AFTER", after), "ws.spvasm", 2048)
    assert d.sum() == total and warnings == []
