"""Our own shader with the constructs of a production subgroup-matrix GEMM (llama.cpp's WebGPU
matmul is built so): tests/shaders/staged_f16_gemm.wgsl, on the H200 profile, against numpy. The
select()-guarded loads read past the end of the ragged inputs: by default that runs as WebGPU's
and is reported; with bounds="strict" it stops there."""
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.errors import EmuError

SRC = (Path(__file__).parent.parent / "shaders" / "staged_f16_gemm.wgsl").read_text()


def run(m, n, k, bounds="webgpu"):
    rng = np.random.default_rng(4)
    a = rng.integers(-3, 4, (m, k)).astype(np.float32)      # small integers: exact in f16 sums
    b = rng.integers(-3, 4, (n, k)).astype(np.float32)
    dev = emu.Device("nvidia-h200", bounds=bounds)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SRC, "staged_f16_gemm.wgsl"))
    c = dev.create_buffer(size=4 * m * n)
    warnings = dev.dispatch(pipe, {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): c,
                                   (0, 3): dev.create_buffer(np.array([m, n, k, 0], np.uint32))}, (1, 1, 1))
    return c.read(np.float32).reshape(n, m), b.astype(np.float64) @ a.T.astype(np.float64), warnings


def test_full_tiles_exact_and_no_report():
    got, want, warnings = run(32, 16, 32)
    np.testing.assert_array_equal(got, want)
    assert warnings == []


def test_ragged_tiles_read_past_the_end_inside_select():
    got, want, warnings = run(20, 12, 24)
    np.testing.assert_array_equal(got, want)
    assert [(w.loc.line, w.loc.col) for w in warnings] == [(41, 42), (46, 42)]
    assert "98 accesses out of bounds" in warnings[0].message and "subgroup 0, lane 16 " in warnings[0].where
    assert "buffer 'a' (@group(0) @binding(0))" in warnings[0].message
    assert "buffer 'b' (@group(0) @binding(1))" in warnings[1].message


def test_ragged_tiles_strict_stops_at_the_first():
    with pytest.raises(EmuError) as e:
        run(20, 12, 24, bounds="strict")
    assert (e.value.loc.line, e.value.loc.col) == (41, 42) and "buffer 'a'" in e.value.message
