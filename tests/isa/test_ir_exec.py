"""IR text runs directly (files named *.ir): the path for other front ends, and for the ops
WGSL cannot spell (element-type conversion, length of a matrix)."""
from pathlib import Path

import numpy as np

import emu

HERE = Path(__file__).parent


def test_coop_convert_and_length_from_ir_text():
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module((HERE / "coop_convert.ir").read_text(), "coop_convert.ir"))
    a = np.arange(256, dtype=np.float32) * np.float32(1.001)
    bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(size=512), (0, 2): dev.create_buffer(size=4)}
    dev.dispatch(pipe, bufs, (1, 1, 1))
    # stored col_major: the transpose of the f16-rounded matrix
    np.testing.assert_array_equal(bufs[(0, 1)].read(np.float16).reshape(16, 16).T,
                                  a.reshape(16, 16).astype(np.float16))
    # 256 elements over 32 lanes of the H200's map
    assert bufs[(0, 2)].read(np.uint32)[0] == 8


def test_saturating_conversion():
    text = (HERE / "coop_convert.ir").read_text()
    text = text.replace("array<f16> storage", "array<i32> storage").replace(
        "coop_convert %3 : coopmat<f16, 16x16, C>", "coop_convert %3 {saturate = true} : coopmat<i32, 16x16, C>").replace(
        "ptr<storage, array<f16>, read_write>", "ptr<storage, array<i32>, read_write>")
    dev = emu.Device("reference")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(text, "sat.ir"))
    a = np.linspace(-5e9, 5e9, 256).astype(np.float32)
    bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(size=1024), (0, 2): dev.create_buffer(size=4)}
    dev.dispatch(pipe, bufs, (1, 1, 1))
    got = bufs[(0, 1)].read(np.int32).reshape(16, 16).T.reshape(-1)
    want = np.clip(np.trunc(a.astype(np.float64)), -2**31, 2**31 - 1).astype(np.int64)
    np.testing.assert_array_equal(got, want)
