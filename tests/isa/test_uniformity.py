"""Static uniformity of cooperative-matrix operations: warn where Tint (Dawn) rejects a shader
that emu can run, as it rejected an earlier form of emu's own Dawn GEMM on the H200."""
from pathlib import Path

import pytest

from emu.api import compile_wgsl

HERE = Path(__file__).parent
ROOT = HERE.parents[1]

# The Dawn GEMM as first written: tile positions from local_invocation_index / subgroup_size.
# Dawn on the H200 answered "subgroupMatrixStore requires argument 1 to be uniform".
OLD_GEMM = (ROOT / "emu" / "examples" / "gemm_dawn.wgsl").read_text().replace(
    "@builtin(subgroup_id) sg: u32,", "@builtin(local_invocation_index) lidx: u32,").replace(
    "  let subgroups = INVOCATIONS / sg_size;", "  let sg = lidx / sg_size;\n  let subgroups = INVOCATIONS / sg_size;")


def warnings_of(src, name="k.wgsl"):
    _, warnings = compile_wgsl(src, name)
    return [(w.loc.line, w.message) for w in warnings]


def test_offsets_from_invocation_ids_are_flagged():
    w = warnings_of(OLD_GEMM)
    assert [line for line, _ in w] == [31, 33, 34, 35, 37]
    assert all("depends on local_invocation_index, which is not uniform: Tint (Dawn, Chrome) rejects"
               in m for _, m in w)
    # the tile loop starts at the subgroup's index, so its trip count varies with the invocation
    assert w[0][1].startswith("the matrix constructor is in control flow")
    assert w[1][1].startswith("subgroupMatrixLoad's offset") and w[4][1].startswith("subgroupMatrixStore's offset")


def test_branches_variables_and_loops_on_invocation_ids():
    w = warnings_of((HERE / "nonuniform_coop.wgsl").read_text())
    assert w == [
        (10, "subgroupMatrixStore is in control flow that depends on local_invocation_index, which is "
             "not uniform: Tint (Dawn, Chrome) rejects this shader"),
        (12, "subgroupMatrixStore's offset depends on local_invocation_index, which is not uniform: "
             "Tint (Dawn, Chrome) rejects this shader"),
        (14, "subgroupMatrixStore is in control flow that depends on local_invocation_index, which is "
             "not uniform: Tint (Dawn, Chrome) rejects this shader"),
    ]


@pytest.mark.parametrize("path", ["emu/examples/gemm_dawn.wgsl", "emu/examples/gemm_wgpu.wgsl"]
                         + [str(p.relative_to(ROOT)) for p in sorted((ROOT / "traces" / "hw" / "kernels").glob("*.wgsl"))])
def test_kernels_that_ran_on_dawn_are_not_flagged(path):
    # each of these compiled and ran on the H200 through Dawn
    assert warnings_of((ROOT / path).read_text(), path) == []


def test_recording_shader_is_not_flagged():
    from emu.hw.record import shader
    assert warnings_of(shader("f16", "f32", 16, 16, 16, 32)) == []
    assert warnings_of(shader("u8", "u32", 16, 16, 32, 32)) == []


# A split-K loop as ONNX Runtime's subgroup-matrix MatMul writes it: each subgroup of 32 takes
# every kSplit-th K block from local_invocation_index / 32, which Tint cannot prove uniform, so
# the program turns the check off with a module-scope diagnostic directive.
SPLIT_K = """enable f16;
enable chromium_experimental_subgroup_matrix;
{directive}
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read_write> c: array<f16>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lidx: u32) {
  var acc: subgroup_matrix_result<f16, 8, 8>;
  for (var kb = lidx / 32u; kb < 4u; kb += 2u) {
    let m = subgroupMatrixLoad<subgroup_matrix_left<f16, 8, 8>>(&a, kb * 64u, false, 8u);
    acc = subgroupMatrixMultiplyAccumulate(m, subgroupMatrixLoad<subgroup_matrix_right<f16, 8, 8>>(&a, 0u, false, 8u), acc);
  }
  subgroupMatrixStore(&c, 0u, acc, false, 8u);
}
"""


def test_diagnostic_directive_sets_the_matrix_uniformity_severity():
    flagged = warnings_of(SPLIT_K.replace("{directive}", ""))
    assert [line for line, _ in flagged] == [11, 12, 12, 14]   # loop body, and the store after the loop
    assert all(m.endswith("Tint (Dawn, Chrome) rejects this shader") for _, m in flagged)
    # turned off: Tint compiles it, so emu says nothing
    assert warnings_of(SPLIT_K.replace("{directive}", "diagnostic(off, chromium.subgroup_matrix_uniformity);")) == []
    # lowered to a warning: Tint compiles it and reports each site; the last directive wins
    w = warnings_of(SPLIT_K.replace("{directive}", "diagnostic(off, chromium.subgroup_matrix_uniformity);\n"
                                                   "diagnostic(warning, chromium.subgroup_matrix_uniformity);"))
    assert [line for line, _ in w] == [12, 13, 13, 15]
    assert all(m.endswith("Tint (Dawn, Chrome) reports it as a warning (chromium.subgroup_matrix_uniformity)")
               for _, m in w)


def test_messages_use_the_shaders_own_dialect():
    """A wgpu-dialect coopStoreT in a branch was reported under Dawn's name subgroupMatrixStore."""
    src = """enable f16;
enable wgpu_cooperative_matrix;
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read_write> c: array<f16>;
@compute @workgroup_size(32)
fn main(@builtin(local_invocation_index) li: u32) {
  let m = coopLoad<coop_mat16x16<f16, C>>(&a[0], 16u);
  if (li < 16u) {
    coopStoreT(m, &c[0], 16u);
    coopStore(m, &c[256], 16u);
  }
  let n = coopLoadT<coop_mat16x16<f16, C>>(&a[li], 16u);
  coopStore(n, &c[512], 16u);
}
"""
    assert warnings_of(src) == [
        (9, "coopStoreT is in control flow that depends on local_invocation_index, which is not uniform: "
            "Tint (Dawn, Chrome) rejects this shader"),
        (10, "coopStore is in control flow that depends on local_invocation_index, which is not uniform: "
             "Tint (Dawn, Chrome) rejects this shader"),
        (12, "coopLoadT's offset depends on local_invocation_index, which is not uniform: "
             "Tint (Dawn, Chrome) rejects this shader"),
    ]
