"""Our kernel of 16-bit integers (tests/shaders/spirv/int16.comp), its inputs, uniform block, push
constants and specialization constant, shared by the emulator's test (test_spirv_int16.py) and the
run on lavapipe's Vulkan (tests/hw/test_vulkan_int16_lavapipe.py).

Invocation i reads a = A[i] (int16_t) and B[i] (u16vec2: b = int16_t(.x), ub = .y) and writes
16-bit result k at O[k * N + i], 32-bit result k at W[k * N + i]; `ops(buffer)` lists the kernel's
(k, GLSL expression) as written in it."""
from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
KERNEL = "int16.comp"
SOURCE = (ROOT / "tests" / "shaders" / "spirv" / KERNEL).read_text()
N = 64
# U { uint16_t scale; int16_t shift; i16vec2 pair; } (std140: 8 bytes, padded to 16)
UNIFORM = struct.pack("<Hhhh8x", 40503, 3, -1234, 32767)
# PC { uint tag; int16_t bias; uint16_t mask; }
PUSH = struct.pack("<IhH", 9, -30000, 0xF0F0)
SPEC = {"0": -1213}
SPECIAL = [0, -1, 1, -32768, 32767, 255, -256, 256, 128, -129, 16384, -16385, 21845, -21846, 7, -7]


def ops(buffer: str) -> list[tuple[int, str]]:
    return [(int(k), e) for k, e in re.findall(rf"\b{buffer}\[(\d+) \* N \+ i\] = (.*);", SOURCE)]


def inputs() -> tuple[np.ndarray, np.ndarray]:
    """A: the extremes and byte boundaries, then random; B: (x, y) pairs of small values (shift
    amounts, divisors of every sign), the extremes reversed, random."""
    rng = np.random.default_rng(16)
    a = np.array(SPECIAL + list(rng.integers(-2 ** 15, 2 ** 15, N - len(SPECIAL))), np.int16)
    b = rng.integers(0, 2 ** 16, (N, 2)).astype(np.uint16)
    b[:len(SPECIAL), 0] = np.array(SPECIAL[::-1], np.int16).view(np.uint16)
    b[16:40, :] = rng.integers(-40, 40, (24, 2)).astype(np.int16).view(np.uint16)
    return a, b


def _data():
    a, b = inputs()
    return {(0, 0): a.tobytes(), (0, 1): b.tobytes(), (0, 2): bytes(len(ops("o")) * N * 2),
            (0, 3): bytes(len(ops("w")) * N * 4), (0, 4): UNIFORM}


def results(out: dict) -> tuple[np.ndarray, np.ndarray]:
    """(O as int16 rows, W as int32 rows) of a run's bindings."""
    return (np.frombuffer(out[(0, 2)], np.int16).reshape(-1, N),
            np.frombuffer(out[(0, 3)], np.int32).reshape(-1, N))


def run_emu(profile: str) -> dict:
    """The kernel on the emulator: {binding: its bytes}."""
    import emu
    from emu.frontend.spirv.module import PUSH_CONSTANTS
    dev = emu.Device(profile)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SOURCE, KERNEL), constants=SPEC)
    bufs = {k: dev.create_buffer(np.frombuffer(v, np.uint8).copy()) for k, v in _data().items()}
    bufs[PUSH_CONSTANTS] = dev.create_buffer(np.frombuffer(PUSH, np.uint8).copy())
    dev.dispatch(pipe, bufs, (1, 1, 1))
    return {k: bufs[k].read(np.uint8).tobytes() for k in _data()}


def run_vulkan() -> dict:
    """The kernel's SPIR-V (glslang's) on the Vulkan device: {binding: its bytes}."""
    from emu.frontend.spirv import compile_glsl
    from emu.hw.vulkan import run_spirv
    data = _data()
    kinds = {k: "uniform" if k == (0, 4) else "storage" for k in data}
    return run_spirv(compile_glsl(SOURCE, KERNEL), entry="main", dispatch=(1, 1, 1), buffers=data, kinds=kinds,
                     outputs=[(0, 2), (0, 3)], spec=[(0, struct.pack("<h", SPEC["0"]))], push=PUSH)
