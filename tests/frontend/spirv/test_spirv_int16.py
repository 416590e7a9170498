"""SPIR-V's 16-bit integers (OpCapability Int16 and 16-bit storage) on the emulator: our GLSL kernel
(int16_cases.py, tests/shaders/spirv/int16.comp) against Python's integers value by value, on an
IEEE profile and on the H200's; 16-bit buffer elements, vectors, a uniform block, push constants
and a specialization constant; the IR's i16/u16 in text; SPIR-V's int -> f16 rounding. The same
kernel runs on lavapipe in tests/hw/test_vulkan_int16_lavapipe.py."""
from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.cli import main as cli

sys.path.insert(0, str(Path(__file__).resolve().parent))
import int16_cases as C  # noqa: E402

S = C.SPEC["0"]
TAG, BIAS, MASK = struct.unpack("<IhH", C.PUSH)
SCALE, SHIFT, PX, PY = struct.unpack("<Hhhh", C.UNIFORM[:8])


def w16(v):
    return (v + 2 ** 15) % 2 ** 16 - 2 ** 15


def w32(v):
    return (v + 2 ** 31) % 2 ** 32 - 2 ** 31


def tdiv(a, b):
    return abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)


def f16(v) -> np.float16:
    with np.errstate(over="ignore"):
        return np.float16(np.float64(v))     # one RNE (infinity from 65520)


def f16_bits(v) -> int:
    return int(np.array([v], np.float16).view(np.int16)[0])


def f32_bits(v) -> int:
    return int(np.array([v], np.float32).view(np.int32)[0])


def msb(u):
    return u.bit_length() - 1


# int16.comp's results from Python's integers: a, b (int16), ua, ub (uint16), bx = B[i].x (uint16),
# d, ud, sh as the kernel makes them, i the invocation
O_REFERENCE = {
    "a + b": lambda a, b, ua, ub, bx, d, ud, sh, i: w16(a + b),
    "a - b": lambda a, b, ua, ub, bx, d, ud, sh, i: w16(a - b),
    "a * b": lambda a, b, ua, ub, bx, d, ud, sh, i: w16(a * b),
    "a / d": lambda a, b, ua, ub, bx, d, ud, sh, i: w16(tdiv(a, d)),
    "a % d": lambda a, b, ua, ub, bx, d, ud, sh, i: a % d,               # OpSMod: the divisor's sign
    "int16_t(ua / ud)": lambda a, b, ua, ub, bx, d, ud, sh, i: w16(ua // ud),
    "int16_t(ua % ud)": lambda a, b, ua, ub, bx, d, ud, sh, i: w16(ua % ud),
    "a << sh": lambda a, b, ua, ub, bx, d, ud, sh, i: w16(a << sh),
    "a >> sh": lambda a, b, ua, ub, bx, d, ud, sh, i: a >> sh,
    "int16_t(ua >> sh)": lambda a, b, ua, ub, bx, d, ud, sh, i: w16(ua >> sh),
    "a & b": lambda a, b, ua, ub, bx, d, ud, sh, i: a & b,
    "a | b": lambda a, b, ua, ub, bx, d, ud, sh, i: a | b,
    "a ^ b": lambda a, b, ua, ub, bx, d, ud, sh, i: a ^ b,
    "~a": lambda a, b, ua, ub, bx, d, ud, sh, i: ~a,
    "-a": lambda a, b, ua, ub, bx, d, ud, sh, i: w16(-a),
    "int16_t(a < b) + 2s * int16_t(ua < ub) + 4s * int16_t(a == b) + 8s * int16_t(ua >= ub)":
        lambda a, b, ua, ub, bx, d, ud, sh, i: (a < b) + 2 * (ua < ub) + 4 * (a == b) + 8 * (ua >= ub),
    "min(a, b)": lambda a, b, ua, ub, bx, d, ud, sh, i: min(a, b),
    "max(a, b)": lambda a, b, ua, ub, bx, d, ud, sh, i: max(a, b),
    "int16_t(min(ua, ub))": lambda a, b, ua, ub, bx, d, ud, sh, i: w16(min(ua, ub)),
    "int16_t(max(ua, ub))": lambda a, b, ua, ub, bx, d, ud, sh, i: w16(max(ua, ub)),
    "clamp(a, -1000s, 1000s)": lambda a, b, ua, ub, bx, d, ud, sh, i: min(max(a, -1000), 1000),
    "abs(a)": lambda a, b, ua, ub, bx, d, ud, sh, i: w16(abs(a)),          # abs(INT16_MIN) wraps
    "sign(a)": lambda a, b, ua, ub, bx, d, ud, sh, i: (a > 0) - (a < 0),
    "int16_t(int(a) * 3 + 1)": lambda a, b, ua, ub, bx, d, ud, sh, i: w16(3 * a + 1),
    "int16_t(uint(ua) * 5u)": lambda a, b, ua, ub, bx, d, ud, sh, i: w16(5 * ua),
    "int16_t(int8_t(a))": lambda a, b, ua, ub, bx, d, ud, sh, i: (a + 128) % 256 - 128,
    "int16_t(uint8_t(ua))": lambda a, b, ua, ub, bx, d, ud, sh, i: ua & 255,
    "int16_t(int64_t(a) * -3l)": lambda a, b, ua, ub, bx, d, ud, sh, i: w16(-3 * a),
    "int16_t(float(a) * 0.5)": lambda a, b, ua, ub, bx, d, ud, sh, i: int(a * 0.5),
    "int16_t(float16_t(b) * 0.25hf)": lambda a, b, ua, ub, bx, d, ud, sh, i: int(float(f16(b)) * 0.25),
    "int16_t(uint16_t(abs(float(ub) * 0.75)))": lambda a, b, ua, ub, bx, d, ud, sh, i: w16(int(ub * 0.75)),
    "float16BitsToInt16(float16_t(a) * 0.5hf)": lambda a, b, ua, ub, bx, d, ud, sh, i: f16_bits(float(f16(a)) * 0.5),
    "int16_t(pack16(unpack8(ua).yx))": lambda a, b, ua, ub, bx, d, ud, sh, i: w16((ua & 255) << 8 | ua >> 8),
    "a * S + pc.bias": lambda a, b, ua, ub, bx, d, ud, sh, i: w16(a * S + BIAS),
    "int16_t(ua & pc.mask) + int16_t(pc.tag)": lambda a, b, ua, ub, bx, d, ud, sh, i: w16((ua & MASK) + TAG),
    "int16_t(ua * u.scale) + (a >> u.shift) + u.pair.x - u.pair.y":
        lambda a, b, ua, ub, bx, d, ud, sh, i: w16(ua * SCALE + (a >> SHIFT) + PX - PY),
    "i16vec2(a, b).yx[i & 1u]": lambda a, b, ua, ub, bx, d, ud, sh, i: a if i & 1 else b,
    "(u16vec2(ua, ub) * u16vec2(3us, 5us) + bv).x > 1000us ? 1s : 0s":
        lambda a, b, ua, ub, bx, d, ud, sh, i: int((3 * ua + bx) % 2 ** 16 > 1000),
    "bitCount(a)": lambda a, b, ua, ub, bx, d, ud, sh, i: bin(ua).count("1"),
    "int16_t(findLSB(ub))": lambda a, b, ua, ub, bx, d, ud, sh, i: msb(ub & -ub),
    "int16_t(findMSB(ub))": lambda a, b, ua, ub, bx, d, ud, sh, i: msb(ub),
    "int16_t(double(a) * 0.75lf)": lambda a, b, ua, ub, bx, d, ud, sh, i: int(a * 0.75),
}

W_REFERENCE = {
    "int(a)": lambda a, b, ua, ub, i: a,
    "int(ua)": lambda a, b, ua, ub, i: ua,
    "int(uint(a))": lambda a, b, ua, ub, i: a,                  # sign-extended, then the same bits
    "int(pack32(u16vec2(ua, ub)))": lambda a, b, ua, ub, i: w32(ua | ub << 16),
    "int(unpack16(uint(a) * 2654435761u).y)": lambda a, b, ua, ub, i: (a % 2 ** 32 * 2654435761) % 2 ** 32 >> 16,
    "floatBitsToInt(float(a))": lambda a, b, ua, ub, i: f32_bits(a),
    "floatBitsToInt(float(ub))": lambda a, b, ua, ub, i: f32_bits(ub),
    "int(float16BitsToUint16(float16_t(ub)))": lambda a, b, ua, ub, i: f16_bits(f16(ub)) & 0xFFFF,
    "int(int64_t(a) << 20)": lambda a, b, ua, ub, i: w32(a << 20),
    "int(uint64_t(ub) * 65537ul)": lambda a, b, ua, ub, i: w32(ub * 65537),
    "int(a) * int(b)": lambda a, b, ua, ub, i: a * b,
    "int(uint16BitsToHalf(ua) > 0.0hf) + 2 * int(isnan(int16BitsToFloat16(a)))":
        lambda a, b, ua, ub, i: int(np.array([ua], np.uint16).view(np.float16)[0] > 0)
        + 2 * int(np.isnan(np.array([a], np.int16).view(np.float16)[0])),
}


def reference() -> tuple[np.ndarray, np.ndarray]:
    a_, b_ = C.inputs()
    o = np.zeros((len(C.ops("o")), C.N), np.int64)
    w = np.zeros((len(C.ops("w")), C.N), np.int64)
    for i in range(C.N):
        a, ua = int(a_[i]), int(a_[i]) & 0xFFFF
        bx, ub = int(b_[i, 0]), int(b_[i, 1])
        b = w16(bx)
        d = 7 if b in (0, -1) else b
        ud = 3 if ub == 0 else ub
        for k, op in C.ops("o"):
            o[k, i] = O_REFERENCE[op](a, b, ua, ub, bx, d, ud, ub & 15, i)
        for k, op in C.ops("w"):
            w[k, i] = W_REFERENCE[op](a, b, ua, ub, i)
    return o, w


def test_every_result_of_the_kernel_has_a_reference():
    assert [op for _, op in C.ops("o")] == list(O_REFERENCE) and len(O_REFERENCE) == 42
    assert [op for _, op in C.ops("w")] == list(W_REFERENCE) and len(W_REFERENCE) == 12


@pytest.mark.parametrize("profile", ["lavapipe", "nvidia-h200"])
def test_16_bit_integers_match_python_value_by_value(profile):
    o, w = C.results(C.run_emu(profile))
    ro, rw = reference()
    wrong = [f"O[{k}] {op} at i={i}: emu {o[k, i]}, Python {ro[k, i]}" for k, op in C.ops("o")
             for i in np.flatnonzero(o[k] != ro[k])]
    wrong += [f"W[{k}] {op} at i={i}: emu {w[k, i]}, Python {rw[k, i]}" for k, op in C.ops("w")
              for i in np.flatnonzero(w[k] != rw[k])]
    assert wrong == [], "\n".join(wrong[:20])
    a, _ = C.inputs()
    assert o[21, 3] == -32768 and a[3] == -32768                   # abs(INT16_MIN) wraps
    assert w[7].tolist().count(0x7BFF) >= 1                        # a u16 in (65504, 65520) -> 65504, not inf


GLSL_MSB = """#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) buffer O { int16_t v[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    v[i] = int16_t(findMSB(v[i])) + int16_t(16 * findLSB(v[i]));
}
"""


def test_find_msb_of_signed_16_bit_values():
    # FindSMsb of int16_t (lavapipe 25.0.7's LLVM backend crashes on it: no device run here)
    x = np.array([0, -1, 1, -2, 2, 255, -256, 32767, -32768, 16384, -16385, 3, -3, 4096, -4097, 6], np.int16)
    dev = emu.Device("lavapipe")
    buf = dev.create_buffer(x.copy())
    dev.dispatch(dev.create_compute_pipeline(dev.create_shader_module(GLSL_MSB, "msb16.comp")), {(0, 0): buf}, (1, 1, 1))

    def smsb(v):
        return msb(~v if v < 0 else v)

    def lsb(v):
        return msb((v & 0xFFFF) & -(v & 0xFFFF))
    want = [w16(smsb(int(v)) + 16 * lsb(int(v))) for v in x]
    assert buf.read(np.int16).tolist() == want


def test_emu_ir_prints_16_bit_types(tmp_path, capsys):
    p = tmp_path / "k.comp"
    p.write_text(C.SOURCE)
    assert cli(["ir", str(p)]) == 0
    text = capsys.readouterr().out
    assert ": i16" in text and ": u16" in text and "vec2<u16>" in text and "array<i16>" in text
    from emu.isa.printer import print_module
    from emu.isa.textparser import parse_ir
    assert print_module(parse_ir(text, "k.ir")) == text          # the text form reads back
