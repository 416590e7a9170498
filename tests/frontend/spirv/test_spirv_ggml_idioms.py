"""Idioms of llama.cpp's Vulkan shaders that emu's ICD met running test-backend-ops: several SPIR-V
variables aliasing one descriptor (one buffer read as scalars and as vectors: each declaration sees
the same bytes; WGSL keeps its one-variable-per-binding rule), and elements of cooperative matrices
read and written through pointers (the accumulators of mul_mm)."""
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.errors import EmuError

SHADER = Path(__file__).resolve().parents[2] / "shaders" / "spirv" / "alias_binding.comp"


@pytest.mark.parametrize("profile", ["reference", "nvidia-h200"])
def test_two_declarations_of_one_binding_share_its_bytes(profile):
    dev = emu.Device(profile=profile)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SHADER.read_text(), file="alias_binding.comp"))
    a = np.arange(64, dtype=np.uint32) * 3 + 1
    out = np.full(64, 0xFFFFFFFF, np.uint32)
    dev.dispatch(pipe, {(0, 0): a, (0, 1): out}, 1)
    want = np.full(64, 0xFFFFFFFF, np.uint32)
    for i in range(16):
        want[4 * i] = a[4 * i + 3] + a[4 * i]
        want[4 * i + 1] = a[4 * i + 1]
        want[4 * i + 2: 4 * i + 4] = a[4 * i + 2: 4 * i + 4] * 2
    assert out.tolist() == want.tolist()


def test_wgsl_still_refuses_two_variables_at_one_binding():
    src = """@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@group(0) @binding(0) var<storage, read_write> b: array<vec2u>;
@compute @workgroup_size(1) fn main() { a[0] = b[0].x; }"""
    dev = emu.Device()
    with pytest.raises(EmuError, match=r"@group\(0\) @binding\(0\) is used by both 'a' and 'b'"):
        dev.create_compute_pipeline(dev.create_shader_module(src), entry_point="main")


def test_coop_matrix_elements_through_pointers():
    """OpAccessChain into a variable of cooperative matrices (llama.cpp's accumulators): element k
    of each lane's fragment, read and written in place."""
    src = (SHADER.parent / "coop_element_ptr.comp").read_text()
    dev = emu.Device(profile="nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, file="coop_element_ptr.comp"))
    x = np.arange(512, dtype=np.float32)
    y = np.zeros(256, np.float32)
    dev.dispatch(pipe, {(0, 0): x, (0, 1): y}, 1)
    # element k of lane l's fragment is (row, col) of the profile's accumulator lane map
    lm = dev.profile.lane_map(dev.profile.find_config(m=16, n=16, k=16, a_type="f16", c_type="f32"), "C", 32)
    want = 2 * x[256:].reshape(16, 16)
    for lane in range(32):
        for k in range(8):
            r, c = lm.coords[lane, k]
            want[r, c] += k
    assert y.reshape(16, 16).tolist() == want.tolist()


@pytest.mark.parametrize("taken", [0, 1])
def test_subgroup_scope_control_barrier_in_a_branch_of_one_subgroup(taken):
    """controlBarrier(gl_ScopeSubgroup, ...) (OpControlBarrier with execution scope Subgroup) waits
    for the subgroup only: a branch that one subgroup of the workgroup takes and the other skips is
    well defined (llama.cpp's mul_mm staging a partial tile), and the shared-memory value another
    lane of the subgroup stored before it is seen after it."""
    from emu.isa.ir import PUSH_CONSTANTS
    src = (SHADER.parent / "subgroup_barrier_branch.comp").read_text()
    dev = emu.Device(profile="nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, file="subgroup_barrier_branch.comp"))
    out = dev.create_buffer(size=64 * 4)
    dev.dispatch(pipe, {(0, 0): out, PUSH_CONSTANTS: dev.create_buffer(np.array([taken], np.uint32))}, 1)
    want = [1000 + i for i in range(64)]
    for l in range(32):
        want[32 * taken + l] = (32 * taken + 31 - l) * 3 + 1
    assert out.read(np.uint32).tolist() == want


def test_workgroup_scope_control_barrier_in_such_a_branch_is_still_an_error():
    src = (SHADER.parent / "subgroup_barrier_branch.comp").read_text().replace(
        "controlBarrier(gl_ScopeSubgroup, gl_ScopeSubgroup", "controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup")
    from emu.isa.ir import PUSH_CONSTANTS
    dev = emu.Device(profile="nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, file="subgroup_barrier_branch.comp"))
    with pytest.raises(EmuError, match=r"workgroupBarrier reached by only some invocations of a workgroup"):
        dev.dispatch(pipe, {(0, 0): dev.create_buffer(size=256),
                            PUSH_CONSTANTS: dev.create_buffer(np.array([0], np.uint32))}, 1)


@pytest.mark.parametrize("n, total", [(8, 0 + 3 + 6 + 9 + 100 + 15 + 18 + 21), (4, 0 + 3 + 6 + 9), (2, 3)])
def test_constant_index_past_a_specialized_array_in_code_that_never_runs(n, total):
    """OpAccessChain with a constant index past the end of an array that specialization made
    shorter, in a branch the same constant turns off: the pipeline is valid (llama.cpp's KHR-coopmat
    flash attention with q4_0..q8_0 K failed vkCreateComputePipelines with "index 4 is out of range
    for array<i32, 2>")."""
    src = (SHADER.parent / "spec_short_array.comp").read_text()
    dev = emu.Device(profile="nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, file="spec_short_array.comp"),
                                       constants={"0": n})
    out = dev.create_buffer(size=16)
    dev.dispatch(pipe, {(0, 0): out}, 1)
    assert out.read(np.int32)[0] == total
