"""VK_NV_cooperative_matrix2 at subgroup scope (tests/shaders/spirv/nv2_reduce.spvasm, SPIR-V
assembly since glslang 13.1.1 refuses GL_NV_cooperative_matrix2): row, column and whole-matrix
reductions with add and max combine functions (f32 and f16), and an accumulator converted to use A
(OpCooperativeMatrixConvertNV) feeding a multiply. Inputs are small integers, so every sum is
exact in any order and numpy's is the reference; the H200's order is what traces/hw/vulkan
compares."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import emu
from emu.errors import EmuError

SRC = (Path(__file__).resolve().parents[3] / "tests" / "shaders" / "spirv" / "nv2_reduce.spvasm").read_text()
FILE = "tests/shaders/spirv/nv2_reduce.spvasm"


def _run(src=SRC):
    rng = np.random.default_rng(5)
    a = rng.integers(-3, 4, (16, 16)).astype(np.float16)
    b = rng.integers(-3, 4, (16, 16)).astype(np.float16)
    c = rng.integers(-8, 9, (16, 16)).astype(np.float32)
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, FILE))
    bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): dev.create_buffer(c),
            (0, 3): dev.create_buffer(size=4 * 5 * 256), (0, 4): dev.create_buffer(size=2 * 256)}
    dev.dispatch(pipe, bufs, (1, 1, 1))
    r = bufs[(0, 3)].read(np.float32).reshape(5, 16, 16)
    return a, b, c, r, bufs[(0, 4)].read(np.float16).reshape(16, 16)


def test_reductions_and_a_use_conversion():
    a, b, c, r, h = _run()
    d = a.astype(np.float64) @ b.astype(np.float64) + c
    assert np.array_equal(r[0], d)
    assert np.array_equal(r[1], np.broadcast_to(d.sum(axis=1, keepdims=True), (16, 16)))   # Row
    assert np.array_equal(r[2], np.broadcast_to(d.max(axis=0, keepdims=True), (16, 16)))   # Column
    assert np.array_equal(r[3], np.full((16, 16), d.sum()))                                # Row|Column
    assert np.array_equal(r[4], d @ b.astype(np.float64))                  # D (f16) as A, times B
    assert np.array_equal(h.astype(np.float64), np.broadcast_to(d.sum(axis=1, keepdims=True), (16, 16)))


def test_a_combine_function_emu_cannot_name_is_one_message():
    src = SRC.replace("%fs = OpFAdd %float %fa %fb", "%fs = OpFSub %float %fa %fb")
    with pytest.raises(EmuError) as e:
        _run(src)
    assert "combine function must return one operation of its two parameters" in e.value.message
    assert e.value.loc is not None and e.value.loc.file == FILE


def test_the_wgsl_emitter_refuses_a_reduction():
    from emu.api import compile_wgsl
    from emu.hw.emit import emit
    module, _ = compile_wgsl(SRC, FILE)
    with pytest.raises(EmuError) as e:
        emit(module, "dawn")
    assert "no WGSL spelling" in e.value.message


def test_row_sums_add_in_the_h200_order():
    """The H200's own results of nv2_reduce.spvasm for 8 random float inputs
    (tests/data/hw/h200/vulkan_nv2_runs.npz): D, the row sums (f32 and f16: each lane adds the
    same register slot of the two 8-column tiles, then a butterfly over the 4 lanes of the row, then
    the two slots), the whole-matrix sum (each lane's even and odd slots, a butterfly over the lanes
    for each, then the two: fitted on these and vulkan_maint1_runs.npz), the column maxima and the
    converted multiply, bit for bit."""
    runs = np.load(Path(__file__).resolve().parents[2] / "data" / "hw" / "h200" / "vulkan_nv2_runs.npz")
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SRC, FILE))
    for t in range(8):
        bufs = {(0, 0): dev.create_buffer(runs[f"t{t}/A"]), (0, 1): dev.create_buffer(runs[f"t{t}/B"]),
                (0, 2): dev.create_buffer(runs[f"t{t}/C"]), (0, 3): dev.create_buffer(size=4 * 5 * 256),
                (0, 4): dev.create_buffer(size=2 * 256)}
        dev.dispatch(pipe, bufs, (1, 1, 1))
        r = bufs[(0, 3)].read(np.float32).reshape(5, 16, 16)
        gpu = runs[f"t{t}/R"]
        for k in range(5):
            assert np.array_equal(r[k].view(np.uint32), gpu[k].view(np.uint32)), (t, k)
        h = bufs[(0, 4)].read(np.float16).reshape(16, 16)
        assert np.array_equal(h.view(np.uint16), runs[f"t{t}/H"].view(np.uint16)), t


@pytest.mark.parametrize("keep", ["%fa", "%fb"])
def test_a_combine_function_returning_an_operand_keeps_the_first_or_last(keep):
    """llama.cpp's flash attention reduces with a function that returns one of its operands (to
    smear a value over a row): whatever the order of combination, keeping the first operand keeps
    the row's first element (the second, its last), as each combination keeps operand order."""
    src = SRC.replace("%fs = OpFAdd %float %fa %fb\n", "").replace("OpReturnValue %fs", f"OpReturnValue {keep}")
    a, b, c, r, _ = _run(src)
    d = a.astype(np.float64) @ b.astype(np.float64) + c
    k = 0 if keep == "%fa" else -1
    assert np.array_equal(r[1], np.broadcast_to(d[:, k:][:, :1], (16, 16)))               # Row
    assert np.array_equal(r[3], np.full((16, 16), d.reshape(-1)[k]))                    # Row|Column
