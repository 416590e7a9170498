"""Element access to VK_NV_cooperative_matrix2 matrices of flexible dimensions and workgroup scope:
the H200's spread of them over invocations (H200 session 5, tests/data/hw/h200/vulkan_nv2_lanes.npz:
traces/hw/vulkan/nv2_lanes_probe.comp's length and (row, column) of every element of every
invocation, f32/f16 accumulators and f16 A/B, 15 shapes at 32..256 invocations), the profile's
rule for it (nvidia-h200's flexible_layout_nv), the probe replayed through emu, and element
writes (tests/shaders/spirv/nv2_element_write.comp)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import emu
from emu.errors import EmuError
from emu.isa.types import F16, F32, CoopMatrixType
from emu.profiles import load_profile

ROOT = Path(__file__).resolve().parents[3]
DATA = np.load(ROOT / "tests" / "data" / "hw" / "h200" / "vulkan_nv2_lanes.npz")
KEYS = sorted({k.split("/")[0] for k in DATA.files})
MATRICES = (("c_f32", "C", F32), ("c_f16", "C", F16), ("a_f16", "A", F16), ("b_f16", "B", F16))


def _shape(key):
    scope, shape, inv = key.split("_")
    rows, cols = map(int, shape.split("x"))
    return ("workgroup" if scope == "wg" else "subgroup"), rows, cols, int(inv)


@pytest.mark.parametrize("key", KEYS)
def test_the_profile_s_layout_is_the_h200_s(key):
    scope, rows, cols, inv = _shape(key)
    p = load_profile("nvidia-h200")
    for name, role, elem in MATRICES:
        r, c = p.flexible_elements(CoopMatrixType(rows, cols, elem, role, scope), inv, 32)
        want = DATA[f"{key}/{name}"]
        assert r.shape == (inv, int(DATA[f"{key}/{name}_length"]))
        assert np.array_equal(r, want[..., 0]) and np.array_equal(c, want[..., 1]), name


def test_the_probe_replays_through_emu():
    """The probe's own SPIR-V (its workgroup-scope build) on nvidia-h200: length() and each
    element read back (KHR element access) give the H200's recording, every invocation."""
    src = (ROOT / "tests" / "shaders" / "spirv" / "nv2_lanes_probe.spvasm").read_text()
    dev = emu.Device("nvidia-h200")
    mod = dev.create_shader_module(src, "tests/shaders/spirv/nv2_lanes_probe.spvasm")
    for key in (k for k in KEYS if k.startswith("wg")):
        _, rows, cols, inv = _shape(key)
        pipe = dev.create_compute_pipeline(mod, constants={"0": rows, "1": cols, "2": inv})
        bufs = {(0, 0): dev.create_buffer(size=16 * inv), (0, 1): dev.create_buffer(size=4 * inv * 256 * 8)}
        dev.dispatch(pipe, bufs, (1, 1, 1))
        n = bufs[(0, 0)].read(np.uint32).reshape(inv, 4)
        rc = bufs[(0, 1)].read(np.uint32).reshape(4, inv, 256, 2)
        for m, (name, _, _) in enumerate(MATRICES):
            want = DATA[f"{key}/{name}"]
            assert (n[:, m] == int(DATA[f"{key}/{name}_length"])).all(), (key, name)
            assert np.array_equal(rc[m, :, :want.shape[1]], want), (key, name)


def _element_write(skip):
    src = (ROOT / "tests" / "shaders" / "spirv" / "nv2_element_write.spvasm").read_text()
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "tests/shaders/spirv/nv2_element_write.spvasm"),
                                       constants={"0": skip})
    b = dev.create_buffer(size=64 * 32 * 4)
    dev.dispatch(pipe, {(0, 0): b}, (1, 1, 1))
    return b.read(np.float32).reshape(64, 32)


def test_element_writes_reach_the_whole_matrix():
    rows, cols = np.mgrid[0:64, 0:32]
    assert np.array_equal(_element_write(0), (rows * 32 + cols) * 2.0 + 1)


def test_element_writes_in_non_uniform_control_flow_are_one_message():
    with pytest.raises(EmuError) as e:
        _element_write(1)
    assert "an element write to coopmat<f32, 64x32, C, workgroup>" in e.value.message
    assert "non-uniform control flow" in e.value.message and "coopMatPerElementNV" in e.value.hint
    assert e.value.where is not None and "lane 1" in str(e.value)


def test_a_profile_without_the_layout_refuses_element_access():
    p = load_profile("nvidia-h200")
    assert p.flexible_elements(CoopMatrixType(64, 32, F32, "C", "workgroup"), 96, 32) is None   # 3 subgroups
