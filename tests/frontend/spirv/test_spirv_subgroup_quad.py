"""Quad operations (GroupNonUniformQuad: OpGroupNonUniformQuadBroadcast with a constant and a
push-constant index, OpGroupNonUniformQuadSwap in its three directions) and
OpGroupNonUniformAllEqual of tests/shaders/spirv/subgroup_quad_allequal.comp, bit for bit against
the rule written here in numpy, at subgroup sizes 8 (lavapipe's; tests/hw/test_vulkan_breadth_lavapipe.py
runs it there) and 32 (nvidia-h200's)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.isa.ir import PUSH_CONSTANTS

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))
from h200_subgroup_probe import PROBES  # noqa: E402  (the shaders and launches the recording ran)


def run(profile: str, sg: int | None, file: str, x: np.ndarray, dispatch: tuple, size: int, push: int | None):
    """The words tests/shaders/spirv/`file` writes to binding 1 from `x` at binding 0."""
    dev = emu.Device(profile, subgroup_size=sg)
    f = f"tests/shaders/spirv/{file}"
    pipe = dev.create_compute_pipeline(dev.create_shader_module((ROOT / f).read_text(), f))
    out = dev.create_buffer(size=size)
    binds = {(0, 0): dev.create_buffer(x), (0, 1): out}
    if push is not None:
        binds[PUSH_CONSTANTS] = dev.create_buffer(np.array([push], np.uint32))
    dev.dispatch(pipe, binds, dispatch)
    return out.read(np.uint32)


def _all_equal(x, sg, active=None):
    active = np.ones(len(x), bool) if active is None else active
    out = np.zeros(len(x), bool)
    for s in range(0, len(x), sg):
        vals = x[s:s + sg][active[s:s + sg]]
        out[s:s + sg] = bool(len(vals)) and bool((vals == vals[0]).all())
    return out


def reference(x: np.ndarray, sg: int, pick: int) -> np.ndarray:
    n = len(x)
    lane = np.arange(n)
    quad = lane & ~3
    r = np.zeros((2 * n, 4), np.uint32)
    r[:n, 0] = x[quad | 2]
    r[:n, 1] = x[lane ^ 1] ^ (x[lane ^ 2] << 1)
    r[:n, 2] = ((x & 0xFFFF).astype(np.float32) * np.float32(0.5))[lane ^ 3].view(np.uint32)
    r[:n, 3] = (x >> 3)[quad | pick]
    odd = (x & 1) == 1
    e = _all_equal(x, sg) * 1 | _all_equal(x >> 30, sg) * 2 | 4 | 8 | 16 | (sg == 1) * 32
    e = e | np.where(odd, 64, 0)            # x & 1 is 1 in every odd lane that takes part
    r[n:, 0] = e
    return r


@pytest.mark.parametrize("profile,sg", [("lavapipe", 8), ("nvidia-h200", 32)])
@pytest.mark.parametrize("pick", [0, 3])
def test_quad_operations_and_all_equal_are_bit_exact(profile, sg, pick):
    x = np.random.default_rng(sg + pick).integers(0, 1 << 32, 128, dtype=np.uint64).astype(np.uint32)
    x[32:40] = 77                  # one subgroup of 8 (a quarter of one of 32) holds one value
    got = run(profile, sg, "subgroup_quad_allequal.comp", x, (2, 1, 1), 256 * 16, pick).reshape(256, 4)
    want = reference(x, sg, pick)
    assert np.array_equal(got, want), [(int(a), int(b), got[a, b], want[a, b]) for a, b in np.argwhere(got != want)[:6]]
    if sg == 8:                    # lanes 32..39 all hold 77: subgroupAllEqual(v) is true there only
        assert set(np.flatnonzero(got[128:, 0] & 1) // 8) == {4}


BAD_SWAP = """OpCapability Shader
OpCapability GroupNonUniformQuad
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 4 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%subgroup = OpConstant %uint 3
%seven = OpConstant %uint 7
%main = OpFunction %void None %fn
%l = OpLabel
%r = OpGroupNonUniformQuadSwap %uint %subgroup %seven %subgroup
OpReturn
OpFunctionEnd
"""


def test_a_quad_swap_direction_other_than_0_1_or_2_is_one_message():
    from emu.errors import EmuError
    dev = emu.Device("nvidia-h200")
    with pytest.raises(EmuError) as e:
        dev.create_compute_pipeline(dev.create_shader_module(BAD_SWAP, "bad_swap.spvasm"))
    assert "the direction of OpGroupNonUniformQuadSwap must be the constant 0, 1 or 2" in e.value.message
    assert (e.value.loc.file, e.value.loc.line) == ("bad_swap.spvasm", 13)


RECORDED = Path(__file__).resolve().parents[2] / "data/hw/h100/subgroup_probe.npz"


@pytest.mark.parametrize("name", sorted(PROBES))
def test_all_equal_and_quads_give_the_recorded_gpus_bits(name):
    """scripts/h200_subgroup_probe.py on an H100 (driver 580.159.04, the H200's chip family and
    driver): a float subgroupAllEqual compares as OpFOrdEqual does (-0.0 equals 0.0; any NaN,
    even one NaN everywhere, makes it false), which is what emu does. (lavapipe differs here: it
    gives true for NaNs; emu's lavapipe profile does not model that.)"""
    rec = np.load(RECORDED)
    file, _, dispatch, size, push = PROBES[name]
    assert np.array_equal(run("nvidia-h200", None, file, rec[f"{name}.x"], dispatch, size, push), rec[f"{name}.y"])
    if name == "allequal":        # per subgroup: float result | bits result << 1
        assert list(rec["allequal.y"].reshape(8, 32)[:, 0]) == [2, 1, 0, 0, 0, 0, 3, 3]
