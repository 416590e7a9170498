"""SPIR-V's 64-bit types (OpCapability Float64, Int64, Int64Atomics) on the emulator: our GLSL kernels
(spirv64_cases.py) against Python's integers and numpy's float64 value by value, 64-bit literals,
push constants and specialization constants (OpSpecConstant's two words, OpSpecConstantOp on
them, --spec-constant), Offset/ArrayStride layouts of 8-byte members, 64-bit atomics, and one
clear refusal for what no device runs (f64 GLSL.std.450 transcendentals) or a profile lacks
(shaderFloat64, 64-bit atomics). The same kernels run on lavapipe in tests/hw."""
from __future__ import annotations

import struct
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.cli import main as cli
from emu.errors import EmuError

sys.path.insert(0, str(Path(__file__).resolve().parent))
import spirv64_cases as C  # noqa: E402

K = C.F64_SPEC["0"]
PC_SCALE, PC_OFFSET, PC_TAG = 0.8125, -3.0, 7.0


def _length(x, y):
    # the IR's f64 length: sqrt(x*x + y*y) of the operands scaled by a power of two (no overflow)
    big = np.maximum(np.abs(x), np.abs(y))
    k = np.where(np.isfinite(big) & (big > 0), np.frexp(big)[1], 0)
    sx, sy = np.ldexp(x, -k), np.ldexp(y, -k)
    return np.ldexp(np.sqrt(sx * sx + sy * sy), k)


# f64.comp's results from numpy float64 (IEEE binary64, one rounding per operation)
F64_REFERENCE = {
    "x + y": lambda x, y: x + y, "x - y": lambda x, y: x - y, "x * y": lambda x, y: x * y,
    "x / y": lambda x, y: x / y, "mod(x, y)": lambda x, y: x - y * np.floor(x / y), "-x": lambda x, y: -x,
    "abs(x)": lambda x, y: np.abs(x), "min(x, y)": lambda x, y: np.fmin(x, y), "max(x, y)": lambda x, y: np.fmax(x, y),
    "clamp(x, -1.5lf, 2.5lf)": lambda x, y: np.clip(x, -1.5, 2.5),
    "sign(x)": lambda x, y: np.where(x > 0, 1.0, np.where(x < 0, -1.0, x)),
    "floor(x)": lambda x, y: np.floor(x), "ceil(x)": lambda x, y: np.ceil(x), "roundEven(x)": lambda x, y: np.rint(x),
    "trunc(x)": lambda x, y: np.trunc(x), "fract(x)": lambda x, y: x - np.floor(x),
    "sqrt(abs(x))": lambda x, y: np.sqrt(np.abs(x)), "inversesqrt(abs(x))": lambda x, y: 1.0 / np.sqrt(np.abs(x)),
    "fma(x, y, K)": lambda x, y: np.array([float(Fraction(p) * Fraction(q) + Fraction(K)) for p, q in zip(x, y)]),
    "x * y + K": lambda x, y: x * y + K, "mix(x, y, 0.25lf)": lambda x, y: x * 0.75 + y * 0.25,
    "step(x, y)": lambda x, y: np.where(y < x, 0.0, 1.0), "ldexp(x, -3)": lambda x, y: np.ldexp(x, -3),
    "frexp(x, e)": lambda x, y: np.frexp(x)[0], "double(e)": lambda x, y: np.frexp(x)[1].astype(np.float64),
    "modf(x, whole)": lambda x, y: np.copysign(x - np.trunc(x), x), "whole": lambda x, y: np.trunc(x),  # x's sign
    "double(float(x))": lambda x, y: x.astype(np.float32).astype(np.float64),
    "double(float16_t(y))": lambda x, y: y.astype(np.float16).astype(np.float64),     # one rounding
    "double(int(clamp(x, -1e9lf, 1e9lf)))": lambda x, y: np.trunc(np.clip(x, -1e9, 1e9)) + 0.0,
    "double(uint(min(abs(y) * 4096.0lf, 4e9lf)))": lambda x, y: np.trunc(np.minimum(np.abs(y) * 4096, 4e9)),
    "double(int64_t(clamp(x, -9e18lf, 9e18lf))) + 0.5lf": lambda x, y: np.trunc(np.clip(x, -9e18, 9e18)) + 0.5,
    "double(uint64_t(min(abs(x), 1.8e19lf)))": lambda x, y: np.trunc(np.minimum(np.abs(x), 1.8e19)),
    "packDouble2x32(unpackDouble2x32(x) ^ uvec2(1u, 0u))": lambda x, y: (x.view(np.uint64) ^ np.uint64(1)).view(np.float64),
    "uint64BitsToDouble(doubleBitsToUint64(y) >> 1)": lambda x, y: (y.view(np.uint64) >> np.uint64(1)).view(np.float64),
    "x < y ? x : y": lambda x, y: np.where(x < y, x, y),
    "double(x <= y) + 2.0lf * double(x != y) + 4.0lf * double(isinf(x * 1e300lf))":
        lambda x, y: (x <= y) + 2.0 * (x != y) + 4.0 * np.isinf(x * 1e300),
    "double(isnan(x * 1e300lf - x * 1e300lf))": lambda x, y: np.isnan(x * 1e300 - x * 1e300) + 0.0,
    "length(dvec2(x, y))": _length,
    "dot(dvec3(x, y, 1.0lf), dvec3(y, x, K))": lambda x, y: x * y + y * x + K,
    "x * pc.scale + double(pc.offset)": lambda x, y: x * PC_SCALE + PC_OFFSET,
    "double(float(x) * float(y))": lambda x, y: (x.astype(np.float32) * y.astype(np.float32)).astype(np.float64),
    "double(doubleBitsToInt64(x) < 0l) + double(pc.tag)": lambda x, y: np.signbit(x) + PC_TAG,
}


@pytest.mark.parametrize("profile", ["reference", "lavapipe", "nvidia-h200"])
def test_doubles_match_numpy_float64_bit_for_bit(profile):
    x, y = C.f64_inputs()
    em = np.frombuffer(C.run_emu(profile, "f64.comp")[(0, 2)], np.float64).reshape(-1, C.N)
    assert [op for _, op in C.ops("f64.comp")] == list(F64_REFERENCE)
    with np.errstate(all="ignore"):
        for k, op in C.ops("f64.comp"):
            want = np.asarray(F64_REFERENCE[op](x, y), np.float64)
            assert em[k].view(np.uint64).tolist() == want.view(np.uint64).tolist(), op


def _w(v: int) -> int:
    return (v + 2 ** 63) % 2 ** 64 - 2 ** 63


def _f32_bits(v: int) -> int:
    """The bits of the f32 nearest to integer v (ties to even): rounded once."""
    m = abs(v)
    if m.bit_length() > 24:
        sh = m.bit_length() - 24
        q, r = divmod(m, 1 << sh)
        q += r > 1 << (sh - 1) or (r == 1 << (sh - 1) and q & 1)
        m = q << sh
    return struct.unpack("<I", struct.pack("<f", float(-m if v < 0 else m)))[0]


def _f64_bits(v: int) -> int:
    return struct.unpack("<q", struct.pack("<d", float(v)))[0]       # int -> float rounds once


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _i64_reference(a: int, b: int) -> list[int]:
    u, ub = a % 2 ** 64, b % 2 ** 64
    d = 7 if b in (0, -1) else b
    ud, sh = d % 2 ** 64, b & 63
    s, us = C.I64_SPEC["0"], C.I64_SPEC["1"]
    bias, mx, my = -12345678901234, 0xFFFF0000FFFF0000, 0x00000000FFFFFFFF
    return [_w(x) for x in [
        a + b, a - b, a * b, _tdiv(a, d), u // ud, u % ud, a << sh, a >> sh, u >> sh, u << sh, a & b, a | b, a ^ b,
        ~a, -a, (a < b) + 2 * (u < ub) + 4 * (a == b) + 8 * (u >= ub), min(a, b), max(a, b), min(u, ub), max(u, ub),
        max(-1000, min(a, 1000)), abs(a), (a > 0) - (a < 0), (a + 2 ** 31) % 2 ** 32 - 2 ** 31, a % 2 ** 32, u >> 32,
        _f32_bits(a) - (1 << 32 if _f32_bits(a) >> 31 else 0), _f32_bits(u), _f64_bits(a), _f64_bits(u),
        int(float(a & (2 ** 52 - 1)) * 0.75), int(float(u >> 12) * 1.5), (u & 0xFFFFFFFF) << 32 | u >> 32,
        (b & 0xFFFFFFFF) << 32 | (a & 0xFFFFFFFF), a >> 32, a * s + (s * 3 + 1), _w((u ^ us) + mx) + bias,
        (u & my) + 9]]


def _counters(a, b) -> list[int]:
    c = [int(v) for v in C.i64_counters()]
    ua, ub = [int(v) % 2 ** 64 for v in a], [int(v) % 2 ** 64 for v in b]
    c[0] = sum(ua) % 2 ** 64
    c[1] = min([2 ** 63 - 1] + [int(v) for v in a]) % 2 ** 64
    c[2] = max([-2 ** 63] + [int(v) for v in a]) % 2 ** 64
    for v, w in zip(ua, ub):
        c[3] |= (w << 3) % 2 ** 64
        c[4] &= v | 0xF0F0F0F0F0F0F0F0
        c[5] ^= v
        c[6] = max(c[6], w)
    return c[:7] + [(c[7 + k] + w) % 2 ** 64 for k, w in enumerate(ub)]   # exchanged, then swapped back


@pytest.mark.parametrize("profile", ["reference", "lavapipe", "nvidia-h200"])
def test_64_bit_integers_and_atomics_match_python(profile):
    a, b = C.i64_inputs()
    out = C.run_emu(profile, "int64.comp")
    got = np.frombuffer(out[(0, 2)], np.int64).reshape(-1, C.N)
    ops = C.ops("int64.comp")
    assert len(ops) == 38
    for i in range(C.N):
        want = _i64_reference(int(a[i]), int(b[i]))
        for k, op in ops:
            assert int(got[k, i]) == want[k], f"{op} at a={a[i]}, b={b[i]}"
    assert np.frombuffer(out[(0, 3)], np.uint64).tolist() == _counters(a, b)


def test_scalar_layout_struct_takes_its_array_stride():
    dev = emu.Device("reference")
    mod = dev.create_shader_module(C.source("layout64.comp"), "layout64.comp")
    out = next(g for g in mod.ir.globals if g.name == "outp").type
    q = out.members[2].type
    assert out.offsets == (0, 8, 16) and q.stride == 72 and q.elem.offsets == (0, 8, 16, 40, 48, 56)
    inp = next(g for g in mod.ir.globals if g.name == "inp").type.members[0].type
    assert inp.stride == 128 and inp.elem.offsets == (0, 8, 32, 56, 64, 80, 96)
    p = np.zeros(4, np.dtype({"names": list("abcdefg"), "formats": ["<u4", "<f8", ("<f8", 3), "<i8", "<f4", ("<u8", 2),
                                                                     ("<f8", 2)],
                              "offsets": [0, 8, 32, 56, 64, 80, 96], "itemsize": 128}))
    rng = np.random.default_rng(3)
    p["a"], p["b"], p["c"] = [1, 2, 3, 4], rng.standard_normal(4), rng.standard_normal((4, 3))
    p["d"], p["e"] = [-5, 7, 1 << 40, -(1 << 50)], [0.5, 1.5, -2.0, 3.0]
    p["f"], p["g"] = rng.integers(0, 2 ** 63, (4, 2), dtype=np.uint64), rng.standard_normal((4, 2))
    from emu.frontend.spirv.module import PUSH_CONSTANTS
    pc = struct.pack("<f12xqqd8x", 2.0, 3, -11, 0.25)
    pipe = dev.create_compute_pipeline(mod)
    bufs = {(0, 0): dev.create_buffer(p.view(np.uint8)), (0, 1): dev.create_buffer(size=16 + 4 * 72),
            PUSH_CONSTANTS: dev.create_buffer(pc)}
    dev.dispatch(pipe, bufs, (1, 1, 1))
    raw = bufs[(0, 1)].read(np.uint8)
    qd = np.dtype({"names": list("abcdef"), "formats": ["<u4", "<f8", ("<f8", 3), "<i8", "<f4", ("<u8", 2)],
                   "offsets": [0, 8, 16, 40, 48, 56], "itemsize": 72})
    q = raw[16:].view(qd)
    assert raw[:4].view(np.uint32)[0] == 4 and raw[8:16].view(np.float64)[0] == p["c"][1, 1] + p["g"][2, 0]
    assert q["a"].tolist() == [2, 3, 4, 5] and q["b"].tolist() == (p["b"] * 0.25 + p["g"][:, 1]).tolist()
    assert q["c"].tolist() == (p["c"][:, [2, 0, 1]] - p["g"][:, :1]).tolist()
    assert q["d"].tolist() == [(int(v) << 3) - 11 for v in p["d"]]
    assert q["e"].tolist() == (p["e"] * np.float32(2.0)).tolist()
    assert q["f"].tolist() == (p["f"][:, ::-1] ^ p["a"][:, None].astype(np.uint64)).tolist()


U64_SIZED = """#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 1) in;
layout(constant_id = 0) const uint64_t BIG = 0x600000000ul;
const uint LEN = uint(BIG / 0x100000000ul);
layout(set = 0, binding = 0) buffer B { uint n; uint v[LEN]; } b;
void main() { b.n = LEN; }
"""


def test_a_64_bit_spec_constant_expression_sizes_an_array():
    # UDiv of a u64 above 2^32 (an OpSpecConstantOp), then UConvert: 6, and 9 for 0x900000005
    for value, n in ((None, 6), (0x900000005, 9)):
        dev = emu.Device("reference")
        mod = dev.create_shader_module(U64_SIZED, "sized.comp")
        pipe = dev.create_compute_pipeline(mod, constants={} if value is None else {"0": value})
        buf = dev.create_buffer(size=4 + 4 * n)
        dev.dispatch(pipe, {(0, 0): buf}, (1, 1, 1))
        assert buf.read(np.uint32)[0] == n and buf.size == 4 + 4 * n


def test_64_bit_spec_constants_and_push_constants_through_the_cli(tmp_path, capsys):
    (tmp_path / "f.comp").write_text(C.source("f64.comp"))
    x, y = C.f64_inputs()
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    (tmp_path / "pc.bin").write_bytes(C.F64_PUSH)
    rc = cli(["run", str(tmp_path / "f.comp"), "--dispatch", "1", "--buffer", f"0:0={tmp_path / 'x.npy'}",
              "--buffer", f"0:1={tmp_path / 'y.npy'}", "--buffer", f"0:2=zeros:{43 * 64}:f64",
              "--push-constants", str(tmp_path / "pc.bin"), "--spec-constant", "0=0.1",
              "--output", f"0:2={tmp_path / 'o.npy'}"])
    assert rc == 0, capsys.readouterr()
    o = np.load(tmp_path / "o.npy").view(np.float64).reshape(-1, C.N)
    assert o[19].tolist() == (x * y + 0.1).tolist()                  # K = 0.1 from --spec-constant
    assert o[40].tolist() == (x * PC_SCALE + PC_OFFSET).tolist()     # the push-constant block


def _error(src: str, file: str, profile: str = "reference") -> EmuError:
    dev = emu.Device(profile)
    with pytest.raises(EmuError) as e:
        dev.create_compute_pipeline(dev.create_shader_module(src, file))
    return e.value


def test_a_profile_without_doubles_refuses_at_the_first_one():
    e = _error(C.source("f64.comp"), "f64.comp", "intel-xe-hpg")
    assert e.message.startswith("profile 'intel-xe-hpg' has no 64-bit floats (Vulkan's shaderFloat64")
    assert (e.loc.file, e.loc.line) == ("f64.comp", 18)        # double x = x_[i] (its variable's first use)


ATOMIC_U64 = """#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
layout(local_size_x = 4) in;
layout(set = 0, binding = 0) buffer B { uint64_t total; } b;
void main() {
    atomicAdd(b.total, 0x100000001ul);
}
"""


def test_64_bit_atomics_need_the_profiles_int64_atomics():
    e = _error(ATOMIC_U64, "a64.comp", "apple-m1")
    assert e.message == ("profile 'apple-m1' has no 64-bit buffer atomics, which an atomic on u64 (SPIR-V's "
                         "Int64Atomics, Vulkan's shaderBufferInt64Atomics) needs")
    assert (e.loc.file, e.loc.line) == ("a64.comp", 7)
    dev = emu.Device("nvidia-h200")
    buf = dev.create_buffer(np.array([2 ** 64 - 2], np.uint64))
    dev.dispatch(dev.create_compute_pipeline(dev.create_shader_module(ATOMIC_U64, "a64.comp")), {(0, 0): buf}, (1, 1, 1))
    assert buf.read(np.uint64).tolist() == [(2 ** 64 - 2 + 4 * 0x100000001) % 2 ** 64]


SIN_F64 = """OpCapability Shader
OpCapability Float64
%glsl = OpExtInstImport "GLSL.std.450"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%double = OpTypeFloat 64
%half = OpConstant %double 0.5
%main = OpFunction %void None %fn
%l = OpLabel
%s = OpExtInst %double %glsl Sin %half
OpReturn
OpFunctionEnd
"""


def test_f64_transcendentals_run_on_no_device():
    # the rule of the WGSL front end (emu.isa.ops.NO_F64_BUILTINS): GLSL.std.450 Sin takes 16- and
    # 32-bit floats only; glslang has no double sin at all
    with pytest.raises(EmuError) as e:
        emu.Device().create_shader_module(SIN_F64, "sin.spvasm")
    assert e.value.message.startswith("GLSL.std.450 Sin of f64 runs on no device: the instruction takes only "
                                      "16- and 32-bit floats")
    assert (e.value.loc.line, e.value.loc.col) == (13, 1) and "double(sin(float(x)))" in e.value.hint
    glsl = ("#version 450\nlayout(local_size_x = 1) in;\nlayout(binding = 0) buffer B { double v[]; } b;\n"
            "void main() { b.v[0] = sin(b.v[1]); }\n")
    with pytest.raises(EmuError) as e:
        emu.Device().create_shader_module(glsl, "sin.comp")
    assert e.value.message.startswith("glslang: ") and e.value.loc.line == 4


def test_a_64_bit_literal_takes_two_words():
    src = SIN_F64.replace("%s = OpExtInst %double %glsl Sin %half\n", "").replace(
        "%half = OpConstant %double 0.5", "%long = OpTypeInt 64 1\n%big = OpConstant %long -81985529216486896")
    mod = emu.Device().create_shader_module(src, "lit.spvasm")
    assert mod.ir is not None
    from emu.frontend.spirv import assemble
    from emu.frontend.spirv.grammar import decode
    c = next(i for i in decode(assemble(src, "lit.spvasm"), "lit.spv")[0] if i.opname == "OpConstant")
    assert len(c.ops) == 2 and (c.ops[1] << 32 | c.ops[0]) == -81985529216486896 % 2 ** 64


def test_a_switch_on_a_64_bit_selector_reads_two_word_literals():
    dev = emu.Device("reference")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(C.source("switch64.spvasm"), "switch64.spvasm"))
    buf = dev.create_buffer(C.SWITCH64_IN)
    dev.dispatch(pipe, {(0, 0): buf}, (1, 1, 1))
    assert buf.read(np.int64).tolist() == [1, 2, 3, 3]
