"""OpUMulExtended / OpSMulExtended on a real device: our kernels (tests/frontend/spirv/
mul_extended_cases.py: GLSL's 32-bit umulExtended / imulExtended and a fastdiv, and the 8-, 16- and
64-bit forms in SPIR-V assembly) through the Vulkan API on lavapipe against the emulator's lavapipe
profile and Python's integers, bit for bit. Skipped where no Vulkan device exists.
Measured on lavapipe (Mesa 25.0.7): 640 of 640 and 576 of 576 results identical."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from emu.hw import vulkan

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "frontend" / "spirv"))
import mul_extended_cases as C  # noqa: E402

INFO, WHY = vulkan.available()
pytestmark = pytest.mark.skipif(INFO is None, reason=f"no Vulkan device: {WHY}")


@pytest.mark.parametrize("name", list(C.KERNELS))
def test_the_full_product_is_identical_on_lavapipe(name):
    hw, em = C.run_vulkan(name), C.run_emu("lavapipe", name)
    assert hw.size == C.KERNELS[name][1] * C.N
    assert np.array_equal(hw, em) and np.array_equal(hw, C.reference(name))
