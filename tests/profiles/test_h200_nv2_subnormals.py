"""VK_NV_cooperative_matrix2 reductions over rows of f32 subnormals on the H200 (scripts/h200_randprog.py
--nv2: tests/shaders/spirv/nv2_reduce.spvasm with A = B = 0 and C of subnormals; all negative,
all positive, mixed signs, mixed with normal columns; raw outputs in
tests/data/hw/h200/vulkan_nv2_subnormal_runs.npz, recorded 2026-12-07 on driver 580.159.04).

Measured: D = C keeps every subnormal (the matrix unit passes C through), sums flush, and the
column maxima of negative subnormals are -0.0 and of positive ones +0.0: the reduction's max
flushes its f32 result (emu before: the subnormal itself, 256 of 256 maxima differed per run)."""
from pathlib import Path

import numpy as np
import pytest

import emu

ROOT = Path(__file__).resolve().parents[1]
RUNS = np.load(ROOT / "data" / "hw" / "h200" / "vulkan_nv2_subnormal_runs.npz")
KERNEL = (ROOT / "shaders" / "spirv" / "nv2_reduce.spvasm").read_text()


@pytest.mark.parametrize("t", range(4))
def test_emu_gives_the_h200s_reductions_of_subnormal_rows(t):
    c = RUNS[f"t{t}/C"]
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(KERNEL, "nv2_reduce.spvasm"))
    zero = np.zeros((16, 16), np.float16)
    bufs = {(0, 0): zero, (0, 1): zero, (0, 2): c, (0, 3): np.zeros(5 * 256, np.float32),
            (0, 4): np.zeros(256, np.float16)}
    bufs = {k: dev.create_buffer(v) for k, v in bufs.items()}
    dev.dispatch(pipe, bufs, (1, 1, 1))
    r = bufs[(0, 3)].read(np.float32).reshape(5, 16, 16)
    assert np.array_equal(r.view(np.uint32), RUNS[f"t{t}/R"].view(np.uint32))
    assert np.array_equal(bufs[(0, 4)].read(np.float16).view(np.uint16), RUNS[f"t{t}/H"].view(np.uint16).ravel())


def test_the_recording_shows_the_flushed_maxima():
    negative = RUNS["t0/R"][2].view(np.uint32)
    assert (negative == 0x80000000).all() and (RUNS["t0/C"].view(np.uint32) & 0x7F800000 == 0).all()
    assert (RUNS["t1/R"][2] == 0).all() and not np.signbit(RUNS["t1/R"][2]).any()
    assert np.array_equal(RUNS["t0/R"][0].view(np.uint32), RUNS["t0/C"].view(np.uint32))
