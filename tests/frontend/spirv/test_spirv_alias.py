"""Vulkan lets several SPIR-V variables alias one descriptor (llama.cpp's shaders read one buffer
as scalars and as vectors): each declaration sees the same bytes; WGSL keeps its rule (one
variable per @group @binding in an entry point)."""
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
