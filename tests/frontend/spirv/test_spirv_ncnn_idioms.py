"""ncnn's Vulkan shader idioms (tests/shaders/spirv/ncnn_idioms.comp): a cooperative matrix loaded
with stride 0 (each row the same vector: ncnn's bias broadcast; Vulkan allows any stride for a
load), a shared array that a specialization constant with default 0 sizes (the module is made,
the pipeline's value sizes it; without one, the pipeline is refused naming the length), and plain
matrix products (OpVectorTimesMatrix, OpMatrixTimesVector, OpMatrixTimesMatrix,
OpMatrixTimesScalar). Every value against numpy (lavapipe 25.0 has no cooperative matrices to compare with)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import emu
from emu.errors import EmuError

FILE = "tests/shaders/spirv/ncnn_idioms.comp"
SRC = (Path(__file__).resolve().parents[3] / FILE).read_text()
SLOTS = 4
OUT_BYTES = 16 * 16 * 2 + 32 * 16 + 32 * 4


def inputs() -> bytes:
    rng = np.random.default_rng(5)
    bias = rng.uniform(-2, 2, 16).astype(np.float16)
    v = rng.integers(-4, 5, (8, 4)).astype(np.float32)      # small integers: every product exact
    return bias.tobytes() + v.tobytes()


def reference() -> tuple:
    raw = inputs()
    bias = np.frombuffer(raw[:32], np.float16)
    v = np.frombuffer(raw[32:], np.float32).reshape(8, 4)
    a, b = v[0:4].T, v[4:8].T                       # GLSL's mat4(c0, c1, c2, c3) takes columns
    m = np.zeros((32, 4), np.float32)
    m[0], m[1] = v[0] @ a, a @ v[1]
    m[2:6] = (a @ b).T
    m[6:10] = (a * 3).T
    i = np.arange(32, dtype=np.uint32)
    slots = np.arange(2 * SLOTS, dtype=np.uint32) * 3
    s = slots[(i + 1) % (2 * SLOTS)] + SLOTS
    return np.tile(bias, (16, 1)), m, s


def split(out: bytes) -> tuple:
    tile = np.frombuffer(out[:512], np.float16).reshape(16, 16)
    m = np.frombuffer(out[512:1024], np.float32).reshape(32, 4)
    return tile, m, np.frombuffer(out[1024:], np.uint32)


def check(out: bytes) -> None:
    for got, want in zip(split(out), reference()):
        assert np.array_equal(got, want)


def test_on_the_emulator():
    dev = emu.Device("nvidia-h200")
    mod = dev.create_shader_module(SRC, FILE)
    pipe = dev.create_compute_pipeline(mod, constants={"0": SLOTS})
    out = dev.create_buffer(size=OUT_BYTES)
    dev.dispatch(pipe, {(0, 0): dev.create_buffer(np.frombuffer(inputs(), np.uint8)), (0, 1): out}, (1, 1, 1))
    check(out.read(np.uint8).tobytes())


def test_an_unset_size_is_refused_at_the_pipeline():
    dev = emu.Device("nvidia-h200")
    mod = dev.create_shader_module(SRC, FILE)            # made: the pipeline's value sizes the array
    with pytest.raises(EmuError) as e:
        dev.create_compute_pipeline(mod)
    assert "an array of length 0 from specialization constants" in e.value.message


def test_a_store_still_needs_a_whole_row():
    src = SRC.replace("coopMatStore(c, tile, 0, 16,", "coopMatStore(c, tile, 0, 8,")
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, FILE), constants={"0": SLOTS})
    out = dev.create_buffer(size=OUT_BYTES)
    with pytest.raises(EmuError) as e:
        dev.dispatch(pipe, {(0, 0): dev.create_buffer(np.frombuffer(inputs(), np.uint8)), (0, 1): out}, (1, 1, 1))
    assert "stride 8 is smaller than the matrix's row of 16 elements" in e.value.message
