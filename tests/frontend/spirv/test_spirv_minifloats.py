"""SPIR-V's 8- and 4-bit floats (tests/shaders/spirv/minifloat.spvasm: SPV_EXT_float8's E4M3 and
E5M2, SPV_EXT_ocp_microscaling_types' FP4 E2M1 and OpBitcastExtractEXT, read as llama.cpp's FP8 and
MXFP4 dequantization shaders read them) on the emulator: every byte code through each format,
every nibble through E2M1, against ml_dtypes' decoding (the OCP formats: E4M3 without infinities,
0x7F/0xFF NaN; E5M2 IEEE-like; E2M1 +-{0, 0.5, 1, 1.5, 2, 3, 4, 6}). lavapipe (Mesa 25.0.7) has
neither extension: no device run. Conversions to E4M3 and E5M2 round (or saturate) as
SPV_EXT_float8 says; a conversion to E2M1 is refused with one message."""
from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import emu
from emu.errors import EmuError

FILE = "tests/shaders/spirv/minifloat.spvasm"
SRC = (Path(__file__).resolve().parents[3] / FILE).read_text()
N = 64


def words() -> np.ndarray:
    """Each invocation's word: the 256 byte codes 4 by 4 (code 4i + k in byte k)."""
    return np.arange(256, dtype=np.uint8).view(np.uint32)


def decode(codes, dt) -> np.ndarray:
    return np.asarray(codes, np.uint8).view(dt).astype(np.float32)


def reference() -> np.ndarray:
    w = words()
    b = w.view(np.uint8).reshape(N, 4)
    f4 = ml_dtypes.float4_e2m1fn
    r = np.zeros((6, N, 4), np.float32)
    r[0], r[1] = decode(b, ml_dtypes.float8_e4m3fn), decode(b, ml_dtypes.float8_e5m2)
    r[2], r[3] = decode(b & 15, f4), decode(b >> 4, f4)
    low = (w & 0xFFFF)[:, None] >> (4 * np.arange(4, dtype=np.uint32))
    r[4] = decode(low & 15, f4)
    r[5, :, 0] = w >> 16                                          # through four E2M1 and back
    r[5, :, 1] = r[1, :, 0].astype(np.float16).astype(np.float32)
    r[5, :, 2] = np.trunc(r[2, :, 0]).astype(np.int32)                 # float(int(x)): no -0
    r[5, :, 3] = np.where(np.arange(N) % 2 == 1, 1.5, r[0, :, 2])
    return r


@pytest.mark.parametrize("profile", ["lavapipe", "nvidia-h200"])
def test_every_code_decodes_as_ml_dtypes_does(profile):
    dev = emu.Device(profile)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SRC, FILE))
    out = dev.create_buffer(size=6 * N * 16)
    dev.dispatch(pipe, {(0, 0): dev.create_buffer(words()), (0, 1): out}, (1, 1, 1))
    got, want = out.read(np.float32).reshape(6, N, 4), reference()
    same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), [(k, i) for k, i, _ in np.argwhere(~same)[:8]]
    assert np.isnan(got[0].ravel()[[0x7F, 0xFF]]).all() and got[0].ravel()[0x7E] == 448.0   # E4M3: no inf
    assert np.isinf(got[1].ravel()[0x7C]) and got[1].ravel()[0x7B] == 57344.0                # E5M2: inf
    assert sorted(set(got[2].ravel().tolist())) == [-6, -4, -3, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 3, 4, 6]


def test_ir_text_names_the_small_floats(capsys):
    from emu.cli import main as cli
    from emu.isa.printer import print_module
    from emu.isa.textparser import parse_ir
    assert cli(["ir", str(Path(__file__).resolve().parents[3] / FILE)]) == 0
    text = capsys.readouterr().out
    assert "vec4<e4m3>" in text and "vec4<e5m2>" in text and "vec4<e2m1>" in text
    assert print_module(parse_ir(text, "m.ir")) == text


def test_conversions_to_the_8_bit_floats_round_and_saturate_as_spv_ext_float8_says():
    """Rows 0 and 1 go once more through the other 8-bit format: every E4M3 value converted to
    E5M2 (round to nearest even, NaN stays NaN) and every E5M2 value to E4M3 with
    SaturatedToLargestFloat8NormalConversionEXT (beyond 448, infinities included, -> +-448)."""
    src = SRC.replace("               OpDecorate %gid BuiltIn GlobalInvocationId",
                      "               OpDecorate %gid BuiltIn GlobalInvocationId\n"
                      "               OpDecorate %x1 SaturatedToLargestFloat8NormalConversionEXT")
    src = src.replace("               OpStore %o0 %r0", "%x0 = OpFConvert %v4f8b %r0\n%y0 = OpFConvert %v4float %x0\n"
                                                      "               OpStore %o0 %y0")
    src = src.replace("               OpStore %o1 %r1", "%x1 = OpFConvert %v4f8a %r1\n%y1 = OpFConvert %v4float %x1\n"
                                                      "               OpStore %o1 %y1")
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "m.spvasm"))
    out = dev.create_buffer(size=6 * N * 16)
    dev.dispatch(pipe, {(0, 0): dev.create_buffer(words()), (0, 1): out}, (1, 1, 1))
    got = out.read(np.float32).reshape(6, N, 4)[:2].reshape(2, 256)
    b = words().view(np.uint8)
    e4 = decode(b, ml_dtypes.float8_e4m3fn).astype(np.float64)
    e5 = decode(b, ml_dtypes.float8_e5m2).astype(np.float64)
    want = np.stack([e4.astype(ml_dtypes.float8_e5m2).astype(np.float32),
                     np.clip(e5, -448, 448).astype(ml_dtypes.float8_e4m3fn).astype(np.float32)])
    same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), np.argwhere(~same)[:8].tolist()
    assert got[0, 0x7E] == 448.0 and got[0, 0x39] == 1.0 and got[0, 0x3B] == 1.5   # 1.125, 1.375: ties to even
    assert np.isnan(got[0, [0x7F, 0xFF]]).all()
    assert got[1, 0x7C] == 448.0 and got[1, 0xFC] == -448.0 and got[1, 0x7B] == 448.0   # +-inf, 57344 saturate
    assert np.isnan(got[1, [0x7D, 0xFF]]).all() and got[1, 0x3C] == 1.0


def test_a_conversion_to_the_4_bit_float_is_refused_at_its_line():
    src = SRC.replace("%s3 = OpFConvert %float %pick", "%s3x = OpFConvert %f4 %s1\n%s3 = OpFConvert %float %pick")
    with pytest.raises(EmuError) as e:
        emu.Device().create_shader_module(src, "m.spvasm")
    assert e.value.message.startswith("OpFConvert to e2m1: emu reads 4-bit floats")
    assert e.value.loc.file == "m.spvasm" and "%s3x = OpFConvert" in src.splitlines()[e.value.loc.line - 1]
