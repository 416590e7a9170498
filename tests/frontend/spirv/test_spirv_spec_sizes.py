"""Specialization constants that size types (cooperative matrix shapes, arrays of matrices,
shared arrays from spec-constant expressions), as llama.cpp's mul_mm.comp uses them: the module
is lowered per pipeline with its values and checked against the device then; every result bit for
bit against the nvidia-h200 matrix unit."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.errors import EmuError
from emu.frontend.spirv.module import PUSH_CONSTANTS
from emu.numerics.mma import mma

SRC = (Path(__file__).resolve().parents[3] / "tests" / "shaders" / "spirv" / "gemm_spec_tiles.comp").read_text()
FILE = "tests/shaders/spirv/gemm_spec_tiles.comp"


def _reference(profile, a, b, tm, tn, tk):
    """D^T = A B^T per TM x TN tile, one multiply-add of the (TM, TN, TK) config per K step."""
    m, k = a.shape
    n = b.shape[0]
    mp, np_ = -(-m // tm) * tm, -(-n // tn) * tn
    ap = np.zeros((mp, k), np.float16)
    ap[:m] = a
    bp = np.zeros((np_, k), np.float16)
    bp[:n] = b
    model = profile.model_for(profile.find_config(tm, tn, tk, "f16", "f32"))
    tiles = (mp // tm) * (np_ // tn)
    acc = np.zeros((tiles, tm, tn), np.float32)
    for k0 in range(0, k, tk):
        at = ap[:, k0:k0 + tk].reshape(mp // tm, 1, tm, tk)
        bt = bp[:, k0:k0 + tk].reshape(1, np_ // tn, tn, tk).transpose(0, 1, 3, 2)
        A = np.broadcast_to(at, (mp // tm, np_ // tn, tm, tk)).reshape(tiles, tm, tk)
        B = np.broadcast_to(bt, (mp // tm, np_ // tn, tk, tn)).reshape(tiles, tk, tn)
        acc = mma(model, np.ascontiguousarray(A), np.ascontiguousarray(B), acc, "f32")
    d = acc.reshape(mp // tm, np_ // tn, tm, tn).transpose(0, 2, 1, 3).reshape(mp, np_)
    return d[:m, :n]


def _run(dev, consts, m, n, k, seed=1):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (n, k)).astype(np.float16)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SRC, FILE), constants=consts)
    wg, tm, tile = consts["0"], consts["1"], consts["4"]
    rows, cols = 2 * tm, (wg // 64) * tile
    bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): dev.create_buffer(size=4 * m * n),
            PUSH_CONSTANTS: dev.create_buffer(struct.pack("<3I", m, n, k))}
    dev.dispatch(pipe, bufs, (-(-m // rows), -(-n // cols), 1))
    return a, b, bufs[(0, 2)].read(np.float32).reshape(n, m)


@pytest.mark.parametrize("wg,tm,tn,tk,tile", [(64, 16, 16, 16, 32), (128, 16, 8, 16, 16), (64, 16, 8, 8, 32)])
def test_spec_constant_shapes_bit_for_bit(wg, tm, tn, tk, tile):
    dev = emu.Device("nvidia-h200")
    m, n, k = 40, 56, 48            # ragged: partial tiles are zero-padded and not stored
    a, b, d = _run(dev, {"0": wg, "1": tm, "2": tn, "3": tk, "4": tile}, m, n, k)
    want = _reference(dev.profile, a, b, tm, tn, tk)
    assert np.array_equal(d.T.view(np.uint32), want.view(np.uint32))


def test_a_shape_the_device_lacks_is_refused_at_the_pipeline():
    dev = emu.Device("nvidia-h200")
    mod = dev.create_shader_module(SRC, FILE)          # the defaults are valid; the check waits
    # 24 rows: no configuration's, and no multiple of the 16-row granularity of VK_NV_cooperative_matrix2's
    # flexible dimensions (32 is one)
    with pytest.raises(EmuError) as e:
        dev.create_compute_pipeline(mod, constants={"0": 64, "1": 24, "2": 16, "3": 16, "4": 32})
    assert "'nvidia-h200' has no" in e.value.message and "24x16" in e.value.message


def test_a_spec_constant_expression_giving_an_empty_array_is_one_message():
    dev = emu.Device("nvidia-h200")
    mod = dev.create_shader_module(SRC, FILE)
    with pytest.raises(EmuError) as e:
        dev.create_compute_pipeline(mod, constants={"0": 64, "1": 16, "2": 16, "3": 16, "4": 8})
    assert e.value.message.startswith("an array of length 0")
    assert "--spec-constant ID=VALUE" in e.value.hint
