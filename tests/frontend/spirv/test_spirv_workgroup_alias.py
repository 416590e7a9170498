"""WorkgroupMemoryExplicitLayoutKHR (GLSL's GL_EXT_shared_memory_block, as llama.cpp's
flash-attention shaders use it): the Block-decorated workgroup variables alias one another, each
starting at the first byte of the workgroup's memory (tests/shaders/spirv/workgroup_alias.comp).
Lavapipe (Mesa 25.0.7) has not workgroupMemoryExplicitLayout: the values are checked against the
bytes written, in numpy."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import emu
from emu.errors import EmuError
from emu.isa.printer import print_module
from emu.isa.textparser import parse_ir

FILE = "tests/shaders/spirv/workgroup_alias.comp"
SRC = (Path(__file__).resolve().parents[3] / FILE).read_text()


def test_aliased_blocks_read_each_others_bytes():
    dev = emu.Device("reference")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SRC, FILE))
    x = np.random.default_rng(3).normal(0, 1, 192).astype(np.float32)
    x[:4] = [np.inf, -0.0, 6.1e-5, np.float32(1.0) + np.float32(2 ** -23)]
    out = dev.create_buffer(size=192 * 16)
    dev.dispatch(pipe, {(0, 0): dev.create_buffer(x), (0, 1): out}, (3, 1, 1))
    got = out.read(np.uint32).reshape(3, 64, 4)
    bits = x.view(np.uint32).reshape(3, 64)
    assert np.array_equal(got[:, :, 0], bits[:, ::-1])              # Words.w[63 - l]: Floats.f's bits
    # Halves.h[2l], h[2l+1] packed again: the float's bits (NaN halves too: moves keep payloads)
    assert np.array_equal(got[:, :, 1], bits)
    halves = bits.view(np.uint16)
    assert (((halves & 0x7C00) == 0x7C00) & ((halves & 0x3FF) != 0) & ((halves & 0x200) == 0)).any()
    assert (got[:, :, 2] == 0xABCD1234).all()                       # Tail.last is Words.w[63]
    assert (got[:, :, 3] == 0).all()                                # Tail.head is Floats.f[0]


def test_the_ir_says_aliased_and_reads_it_back():
    module, _ = emu.api.compile_wgsl(SRC, FILE)
    text = print_module(module)
    lines = [ln for ln in text.splitlines() if ln.startswith("global @s")]
    assert len(lines) == 4 and all(" workgroup aliased" in ln for ln in lines), lines
    again = parse_ir(text, "alias.ir")
    assert [g.aliased for g in again.globals if g.space == "workgroup"] == [True] * 4
    assert print_module(again) == text


def test_wgsl_has_no_aliased_variables():
    from emu.hw.emit import emit
    module, _ = emu.api.compile_wgsl(SRC, FILE)
    with pytest.raises(EmuError) as e:
        emit(module, "dawn")
    assert "WGSL has no aliased variables" in e.value.message
