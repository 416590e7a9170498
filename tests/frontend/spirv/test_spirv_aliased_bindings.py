"""Several variables at one descriptor binding in SPIR-V (tests/shaders/spirv/aliased_bindings.comp:
three read-only views of one buffer, two written views of another, as llama.cpp's shaders bind
their quantized blocks): each view reads and writes the same bytes, on the emulator against numpy
and on lavapipe through Vulkan. WGSL keeps its rule (one variable a binding), tested with WGSL."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import emu
from emu.errors import EmuError
from emu.hw import vulkan

FILE = "tests/shaders/spirv/aliased_bindings.comp"
SRC = (Path(__file__).resolve().parents[3] / FILE).read_text()
N = 64


def words() -> np.ndarray:
    return np.random.default_rng(9).integers(0, 2 ** 32, N, dtype=np.uint64).astype(np.uint32)


def reference() -> np.ndarray:
    a = words()
    half = a.view(np.uint16)
    i = np.arange(N, dtype=np.uint32)
    out = np.zeros(2 * N, np.uint32)
    out[:N] = a ^ (half[1::2].astype(np.uint32) << 3) ^ a
    h = out.view(np.uint16)
    h[2 * N::2] = half[0::2] + i.astype(np.uint16)
    h[2 * N + 1::2] = (a[::-1] >> 16).astype(np.uint16)
    return out


def test_views_of_one_buffer_share_its_bytes():
    dev = emu.Device("lavapipe")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SRC, FILE))
    out = dev.create_buffer(size=2 * N * 4)
    dev.dispatch(pipe, {(0, 0): dev.create_buffer(words()), (0, 1): out}, (1, 1, 1))
    assert np.array_equal(out.read(np.uint32), reference())


@pytest.mark.skipif(vulkan.available()[0] is None, reason="no Vulkan device")
def test_the_same_on_lavapipe():
    from emu.frontend.spirv import compile_glsl
    out = vulkan.run_spirv(compile_glsl(SRC, FILE), entry="main", dispatch=(1, 1, 1),
                           buffers={(0, 0): words().tobytes(), (0, 1): bytes(2 * N * 4)},
                           kinds={(0, 0): "storage", (0, 1): "storage"}, outputs=[(0, 1)], spec=[], push=None)
    assert np.array_equal(np.frombuffer(out[(0, 1)], np.uint32), reference())


def test_wgsl_keeps_one_variable_a_binding():
    src = """@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@group(0) @binding(0) var<storage, read_write> b: array<f32>;
@compute @workgroup_size(1) fn main() { a[0] = bitcast<u32>(b[0]); }
"""
    dev = emu.Device()
    with pytest.raises(EmuError) as e:
        dev.create_compute_pipeline(dev.create_shader_module(src, "k.wgsl"))
    assert "@group(0) @binding(0) is used by both 'a' and 'b'" in e.value.message
