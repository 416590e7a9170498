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
    from tests.frontend.spirv.test_spirv_dots import inputs
    _identical("int_dot.comp", buffers={(0, 0): inputs(seed)})


@pytest.mark.parametrize("overrides", [{"0": "8", "1": "3"}, {"0": "16", "1": "1"}])
def test_a_spec_id_of_two_types_and_a_workgroup_sized_array_match_lavapipe(overrides):
    rep = _identical("spec_id_twins.comp", dispatch=(3, 1, 1), overrides=overrides)
    assert rep.bindings[0].elements > 0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_clustered_reductions_and_ballot_queries_match_lavapipe(seed):
    import numpy as np
    x = np.random.default_rng(seed).integers(0, 1 << 32, 256, dtype=np.uint64).astype(np.uint32)
    _identical("subgroup_clustered_ballot.comp", dispatch=(4, 1, 1), buffers={(0, 0): x})
