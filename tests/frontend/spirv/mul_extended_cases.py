"""Our kernels of OpUMulExtended / OpSMulExtended (tests/shaders/spirv/mul_extended.comp: GLSL's
umulExtended / imulExtended on 32-bit scalars and vectors and a fastdiv; mul_extended_widths.spvasm:
8-, 16- and 64-bit operands), their inputs and their results from Python's integers, shared by the
emulator's test (test_spirv_mul_extended.py) and the run on lavapipe (tests/hw/
test_vulkan_mul_extended_lavapipe.py)."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

SHADERS = Path(__file__).resolve().parents[3] / "tests" / "shaders" / "spirv"
N = 64
KERNELS = {"mul_extended.comp": (np.uint32, 10), "mul_extended_widths.spvasm": (np.uint64, 9)}
# fastdiv by 7 (llama.cpp's init_fastdiv_values: L = ceil(log2 d), mp = floor(2^32 (2^L - d) / d) + 1)
DIVISOR = 7
SHIFT = (DIVISOR - 1).bit_length()
MAGIC = (2 ** 32 * (2 ** SHIFT - DIVISOR)) // DIVISOR + 1
PUSH = struct.pack("<III", DIVISOR, MAGIC, SHIFT)


def source(name: str) -> str:
    return (SHADERS / name).read_text()


def inputs(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The extremes, sign boundaries and byte/halfword boundaries of the width, then random."""
    dt, _ = KERNELS[name]
    bits = np.dtype(dt).itemsize * 8
    top = 2 ** bits - 1
    special = [0, 1, top, top - 1, 2 ** (bits - 1), 2 ** (bits - 1) - 1, 2 ** (bits - 1) + 1, 0xFF, 0x80, 0x7F,
               0xFFFF, 0x8000, 0x7FFF, 0x1_0001, 3, 7]
    rng = np.random.default_rng(bits)
    a = np.array(special + [int(x) for x in rng.integers(0, 2 ** 63, N - len(special), dtype=np.uint64)], object)
    b = np.array(special[::-1] + [int(x) for x in rng.integers(0, 2 ** 63, N - len(special), dtype=np.uint64)], object)
    a, b = a % 2 ** bits, b % 2 ** bits
    b[20:30] = b[20:30] | 2 ** (bits - 1)              # negative as signed
    return a.astype(dt), b.astype(dt)


def _s(v: int, bits: int) -> int:
    v %= 2 ** bits
    return v - 2 ** bits if v >> (bits - 1) else v


def _halves(p: int, bits: int) -> tuple[int, int]:
    p %= 2 ** (2 * bits)
    return p % 2 ** bits, p >> bits


def reference(name: str) -> np.ndarray:
    """Each result row (k) for the N invocations, as the kernel stores them (unsigned)."""
    a_, b_ = inputs(name)
    rows = []
    for a, b in zip(a_.tolist(), b_.tolist()):
        if name == "mul_extended.comp":
            hi, lo = _halves(a * b, 32)[::-1]
            shi, slo = _halves(_s(a, 32) * _s(b, 32), 32)[::-1]
            v = [_halves(x * y, 32) for x, y in ((a, b), (b, 0xFFFFFFFF), (a ^ b, a))]
            i2 = [_halves(x * y, 32) for x, y in ((_s(a, 32), -2 ** 31), (_s(-b, 32), _s(a, 32)))]
            fast = ((a * MAGIC >> 32) + a) % 2 ** 32 >> SHIFT
            rows.append([hi, lo, shi, slo, v[0][1] ^ v[1][1] ^ v[2][1], (v[0][0] + v[1][0] + v[2][0]) % 2 ** 32,
                         i2[0][1], i2[1][1], i2[1][0], fast])
        else:
            lo, hi = _halves(a * b, 64)
            slo, shi = _halves(_s(a, 64) * _s(b, 64), 64)
            l16, h16 = _halves((a % 2 ** 16) * (b % 2 ** 16), 16)
            sl16, sh16 = _halves(_s(a, 16) * _s(b, 16), 16)
            l8, h8 = _halves((a % 256) * (b % 256), 8)
            sl8, sh8 = _halves(_s(a, 8) * _s(b, 8), 8)
            x = _halves(_s(a, 64) * _s(b, 64), 64)[1] ^ _halves(_s(b, 64) * _s(-a, 64), 64)[1]
            rows.append([lo, hi, slo, shi, l16 | h16 << 16, sl16 | sh16 << 16, l8 | h8 << 8, sl8 | sh8 << 8, x])
    return np.array(rows, object).T.astype(KERNELS[name][0])


def _data(name: str) -> dict:
    a, b = inputs(name)
    dt, rows = KERNELS[name]
    return {(0, 0): a.tobytes(), (0, 1): b.tobytes(), (0, 2): bytes(rows * N * np.dtype(dt).itemsize)}


def result(name: str, out: dict) -> np.ndarray:
    return np.frombuffer(out[(0, 2)], KERNELS[name][0]).reshape(-1, N)


def run_emu(profile: str, name: str) -> np.ndarray:
    import emu
    from emu.frontend.spirv.module import PUSH_CONSTANTS
    dev = emu.Device(profile)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(source(name), name))
    bufs = {k: dev.create_buffer(np.frombuffer(v, np.uint8).copy()) for k, v in _data(name).items()}
    if name.endswith(".comp"):
        bufs[PUSH_CONSTANTS] = dev.create_buffer(np.frombuffer(PUSH, np.uint8).copy())
    dev.dispatch(pipe, bufs, (1, 1, 1))
    return result(name, {(0, 2): bufs[(0, 2)].read(np.uint8).tobytes()})


def run_vulkan(name: str) -> np.ndarray:
    from emu.frontend.spirv import spirv_binary
    from emu.hw.vulkan import run_spirv
    data = _data(name)
    out = run_spirv(spirv_binary(source(name), name), entry="main", dispatch=(1, 1, 1), buffers=data,
                    kinds={k: "storage" for k in data}, outputs=[(0, 2)], spec=[],
                    push=PUSH if name.endswith(".comp") else None)
    return result(name, out)
