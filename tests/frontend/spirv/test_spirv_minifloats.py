"""SPIR-V's 8- and 4-bit floats (tests/shaders/spirv/minifloat.spvasm: SPV_EXT_float8's E4M3 and
E5M2, SPV_EXT_ocp_microscaling_types' FP4 E2M1 and OpBitcastExtractEXT, read as llama.cpp's FP8 and
MXFP4 dequantization shaders read them) on the emulator: every byte code through each format,
every nibble through E2M1, against ml_dtypes' decoding (the OCP formats: E4M3 without infinities,
0x7F/0xFF NaN; E5M2 IEEE-like; E2M1 +-{0, 0.5, 1, 1.5, 2, 3, 4, 6}). lavapipe (Mesa 25.0.7) has
neither extension: no device run. A conversion to one of them is refused with one message."""
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
    assert "vec4<f8e4m3>" in text and "vec4<f8e5m2>" in text and "vec4<f4e2m1>" in text
    assert print_module(parse_ir(text, "m.ir")) == text


def test_a_conversion_to_a_small_float_is_refused_at_its_line():
    src = SRC.replace("%s3 = OpFConvert %float %pick", "%s3x = OpFConvert %f8b %s1\n%s3 = OpFConvert %float %pick")
    with pytest.raises(EmuError) as e:
        emu.Device().create_shader_module(src, "m.spvasm")
    assert e.value.message.startswith("OpFConvert to f8e5m2: emu reads 8- and 4-bit floats")
    assert e.value.loc.file == "m.spvasm" and "%s3x = OpFConvert" in src.splitlines()[e.value.loc.line - 1]
