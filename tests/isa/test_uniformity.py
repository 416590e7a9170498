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
