"""VK_NV_cooperative_matrix2's block loads (CooperativeMatrixBlockLoadsNV; llama.cpp's coopmat2
shaders of quantized weights): tests/shaders/spirv/nv2_decode.comp loads a matrix through a
decode function that reads each element's block (4 signed bytes and an f16 scale) by its device
address; every element bit for bit against numpy, the clamped rows the clamp value. (Lavapipe
has no cooperative matrices.)"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import emu

# nv2_decode.comp's SPIR-V twin: the wheel's glslang (13.1.1) lacks NV2's clamp modes
FILE = "tests/shaders/spirv/nv2_decode.spvasm"
SRC = (Path(__file__).resolve().parents[3] / FILE).read_text()


@pytest.mark.parametrize("clamp", [None, 2])
def test_each_element_is_its_blocks_decoded_value(clamp):
    """Rows 12..15 lie outside the tensor: the clamp value (the default clamp mode, Constant), or
    with the spec constant set to ClampToEdge (2), row 11's elements."""
    dev = emu.Device("nvidia-h200")
    consts = {} if clamp is None else {"0": clamp}
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SRC, FILE), constants=consts)
    rng = np.random.default_rng(1)
    nb = 12 * 8                                         # 12 rows of 8 blocks of 4 elements
    q = rng.integers(-128, 128, (nb, 4)).astype(np.int8)
    scale = rng.uniform(-2, 2, nb).astype(np.float16)
    raw = np.zeros((nb, 8), np.uint8)
    raw[:, :4] = q.view(np.uint8)
    raw[:, 4:6] = scale.view(np.uint8).reshape(nb, 2)
    out = dev.create_buffer(size=16 * 32 * 2)
    dev.dispatch(pipe, {(0, 0): dev.create_buffer(raw), (0, 1): out}, (1, 1, 1))
    got = out.read(np.float16).reshape(16, 32)
    r, c = np.meshgrid(np.arange(12), np.arange(32), indexing="ij")
    block = r * 8 + c // 4
    want = np.full((16, 32), 2.0, np.float16)          # rows 12..15: the clamp value 0x4000
    want[:12] = q[block, c % 4].astype(np.float16) * scale[block]
    if clamp == 2:
        want[12:] = want[11]
    assert np.array_equal(got.view(np.uint16), want.view(np.uint16))


def test_the_ir_names_the_decode_function_and_the_block_size():
    from emu.isa.printer import print_module
    module, _ = emu.api.compile_wgsl(SRC, FILE)
    line = next(ln for ln in print_module(module).splitlines() if "coop_load_tensor" in ln)
    assert 'decode = "decode_1_u1_2__u1_2"' in line and "decode_size = 8" in line, line
