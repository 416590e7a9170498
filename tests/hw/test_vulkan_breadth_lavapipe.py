"""The SPIR-V constructs of llama.cpp's Vulkan shaders that lavapipe (Mesa 25.0.7) also runs:
our own GLSL shaders, through `emu diff --backend vulkan`, bit for bit against the emulator
running the same module. Skipped where no Vulkan device exists. (The emulator's side is checked
against the spec's arithmetic in tests/frontend/spirv.)"""
from __future__ import annotations

from pathlib import Path

import pytest

from emu.hw import vulkan
from emu.hw.diff import diff_shader

ROOT = Path(__file__).resolve().parents[2]
SPIRV = ROOT / "tests" / "shaders" / "spirv"
INFO, WHY = vulkan.available()
pytestmark = pytest.mark.skipif(INFO is None, reason=f"no Vulkan device: {WHY}")


def _identical(name: str, **kw):
    rep = diff_shader((SPIRV / name).read_text(), f"tests/shaders/spirv/{name}", backend="vulkan", **kw)
    assert rep.error is None, rep.error
    assert rep.identical, rep.text()
    return rep


@pytest.mark.parametrize("seed", [1, 2])
def test_integer_dot_products_match_lavapipe(seed):
    from tests.frontend.spirv.test_spirv_int_dot import inputs
    _identical("int_dot.spvasm", buffers={(0, 0): inputs(seed)})     # the wheel's glslang refuses int_dot.comp


@pytest.mark.parametrize("overrides", [{"0": "8", "1": "3"}, {"0": "16", "1": "1"}])
def test_a_spec_id_of_two_types_and_a_workgroup_sized_array_match_lavapipe(overrides):
    rep = _identical("spec_id_twins.comp", dispatch=(3, 1, 1), overrides=overrides)
    assert rep.bindings[0].elements > 0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_clustered_reductions_and_ballot_queries_match_lavapipe(seed):
    import numpy as np
    x = np.random.default_rng(seed).integers(0, 1 << 32, 256, dtype=np.uint64).astype(np.uint32)
    _identical("subgroup_clustered_ballot.comp", dispatch=(4, 1, 1), buffers={(0, 0): x})


@pytest.mark.parametrize("pick", [1, 2])
def test_quad_operations_and_all_equal_match_lavapipe(pick):
    import numpy as np
    from emu.isa.ir import PUSH_CONSTANTS
    x = np.random.default_rng(pick).integers(0, 1 << 32, 128, dtype=np.uint64).astype(np.uint32)
    x[32:40] = 77
    _identical("subgroup_quad_allequal.comp", dispatch=(2, 1, 1),
               buffers={(0, 0): x, PUSH_CONSTANTS: np.array([pick], np.uint32)})


def test_buffer_device_addresses_match_lavapipe():
    """The same scenario on lavapipe with its own addresses (vkGetBufferDeviceAddress): the same
    results, but for the one value that is an address difference (0 - the list's head where the
    walk ended), which each device gives for its own head."""
    import numpy as np
    from emu.frontend.spirv import compile_glsl
    from tests.frontend.spirv.test_spirv_buffer_address import FILE, SIZES, SRC, run_emu, scenario
    seen = {}

    def push(addresses):
        seen.update(addresses)
        return scenario(addresses)
    hw = vulkan.run_spirv(compile_glsl(SRC, FILE), entry="main", dispatch=(1, 1, 1), buffers={(0, 0): bytes(64 * 16)},
                          kinds={(0, 0): "storage"}, outputs=[(0, 0)], push=push, addressed=SIZES)
    got, final, head = run_emu("lavapipe")
    want = np.frombuffer(hw[(0, 0)], np.uint32).reshape(64, 4).copy()
    ended = want[:, 2] == 6
    assert (want[ended, 3] == (-seen["nodes"]) % (1 << 32)).all() and (got[ended, 3] == (-head) % (1 << 32)).all()
    want[ended, 3] = got[ended, 3]
    assert np.array_equal(got, want)
    assert all(final[n] == hw[n] for n in ("src", "dst", "counter"))
    # the list holds each device's own addresses, unchanged
    assert hw["nodes"] == scenario(seen)[1]["nodes"]
    assert final["nodes"] == scenario(dict.fromkeys(SIZES, 0) | {"nodes": head})[1]["nodes"]


def test_a_pointer_used_after_its_loop_matches_lavapipe():
    rep = _identical("pointer_after_loop.spvasm")
    assert rep.bindings[0].elements > 0
