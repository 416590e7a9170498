"""Our kernels of 64-bit types (tests/shaders/spirv/f64.comp, int64.comp, layout64.comp, switch64.spvasm), their
inputs, push constants and specialization constants, shared by the emulator's tests
(tests/frontend/spirv/test_spirv_64bit.py) and the run on lavapipe's Vulkan
(tests/hw/test_vulkan_64bit_lavapipe.py).

f64.comp and int64.comp: invocation i reads x = X[i], y = Y[i] (a = A[i], b = B[i]) and writes
result k at O[k * N + i]; `ops(kernel)` lists the kernel's (k, GLSL expression) as written in it."""
from __future__ import annotations

import re
import struct
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
SHADERS = ROOT / "tests" / "shaders" / "spirv"
sys.path.insert(0, str(ROOT / "tests" / "frontend"))
from f64_cases import inputs as f64_inputs  # noqa: E402

N = 64
# f64.comp: PC { uint tag; double scale; int64_t offset; }, K (SpecId 0) set to 0.1
F64_PUSH = struct.pack("<I4xdq", 7, 0.8125, -3)
F64_SPEC = {"0": 0.1}
# int64.comp: PC { uint tag; int64_t bias; u64vec2 mask; }, S (SpecId 0) and U (SpecId 1)
I64_PUSH = struct.pack("<I4xqQQ", 9, -12345678901234, 0xFFFF0000FFFF0000, 0x00000000FFFFFFFF)
I64_SPEC = {"0": -300000000000, "1": 2 ** 64 - 5}
SWITCH64_IN = np.array([5000000000, -3, 705032704, -4294967299], np.int64)    # switch64.spvasm's selectors
SPECIAL = [0, -1, 1, -2 ** 63, 2 ** 63 - 1, 2 ** 32, -2 ** 32, 2 ** 32 - 1, 2 ** 31, -2 ** 31, 2 ** 53 + 1,
           -(2 ** 53 + 1), 2 ** 63 - 512, 2 ** 62 + 3]


def source(name: str) -> str:
    return (SHADERS / name).read_text()


def ops(name: str) -> list[tuple[int, str]]:
    return [(int(k), e) for k, e in re.findall(r"o\[(\d+) \* N \+ i\] = (.*);", source(name))]


def i64_inputs() -> tuple[np.ndarray, np.ndarray]:
    """a: the extremes and word boundaries, then random; b: small values (shift amounts, divisors
    of every sign), the extremes reversed, random."""
    rng = np.random.default_rng(5)
    a = np.array(SPECIAL + list(rng.integers(-2 ** 63, 2 ** 63 - 1, N - len(SPECIAL), dtype=np.int64)), np.int64)
    b = np.concatenate([rng.integers(-70, 70, 24), rng.integers(-2 ** 63, 2 ** 63 - 1, N - 24, dtype=np.int64)])
    b = b.astype(np.int64)
    b[:len(SPECIAL)] = SPECIAL[::-1]
    return a, b


def i64_counters() -> np.ndarray:
    """int64.comp's binding 3: sum, lo, hi, ors, ands, xors, umax, then 64 slots."""
    c = np.zeros(7 + N, np.uint64)
    c[1], c[2], c[4] = 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1       # lo = INT64_MAX, hi = INT64_MIN
    c[7:] = np.arange(N, dtype=np.uint64) * np.uint64(0x100000001)
    return c


def run_emu(profile: str, name: str) -> dict:
    """The kernel on the emulator: {binding: its bytes}."""
    import emu
    from emu.frontend.spirv.module import PUSH_CONSTANTS
    dev = emu.Device(profile)
    if name == "f64.comp":
        x, y = f64_inputs()
        data, spec, push = {(0, 0): x, (0, 1): y, (0, 2): len(ops(name)) * N * 8}, F64_SPEC, F64_PUSH
    else:
        a, b = i64_inputs()
        data = {(0, 0): a, (0, 1): b, (0, 2): len(ops(name)) * N * 8, (0, 3): i64_counters()}
        spec, push = I64_SPEC, I64_PUSH
    pipe = dev.create_compute_pipeline(dev.create_shader_module(source(name), name), constants=spec)
    bufs = {k: dev.create_buffer(v) if isinstance(v, np.ndarray) else dev.create_buffer(size=v) for k, v in data.items()}
    bufs[PUSH_CONSTANTS] = dev.create_buffer(push)
    dev.dispatch(pipe, bufs, (1, 1, 1))
    return {k: bufs[k].read(np.uint8).tobytes() for k in data}


def run_vulkan(name: str) -> dict:
    """The kernel's SPIR-V (glslang's) on the Vulkan device: {binding: its bytes}."""
    from emu.frontend.spirv import compile_glsl
    from emu.hw.vulkan import run_spirv
    if name == "f64.comp":
        x, y = f64_inputs()
        data = {(0, 0): x.tobytes(), (0, 1): y.tobytes(), (0, 2): bytes(len(ops(name)) * N * 8)}
        spec, push = [(0, struct.pack("<d", F64_SPEC["0"]))], F64_PUSH
    else:
        a, b = i64_inputs()
        data = {(0, 0): a.tobytes(), (0, 1): b.tobytes(), (0, 2): bytes(len(ops(name)) * N * 8),
                (0, 3): i64_counters().tobytes()}
        spec = [(0, struct.pack("<q", I64_SPEC["0"])), (1, struct.pack("<Q", I64_SPEC["1"]))]
        push = I64_PUSH
    return run_spirv(compile_glsl(source(name), name), entry="main", dispatch=(1, 1, 1), buffers=data,
                     kinds={k: "storage" for k in data}, outputs=list(data), spec=spec, push=push)
