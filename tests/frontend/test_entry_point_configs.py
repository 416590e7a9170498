"""Configurations are checked per selected entry point, not per module: a module where one entry
point uses a matrix configuration the device lacks still runs its other entry points (as naga's
mixed cooperative-matrix inputs need), and selecting the one that uses it gives one message at its
source location naming the configuration and listing the device's. A private matrix variable of
the other entry point is not made either (its configuration may be one the device lacks). Our own
shader."""
import numpy as np
import pytest

import emu
from emu.errors import EmuError

TWO_ENTRIES = """enable f16;
enable wgpu_cooperative_matrix;
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<f16>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<storage, read_write> small: array<f32>;
var<private> kept: coop_mat8x8<f32, A>;

fn tile_16x16() {
    let x = coopLoad<coop_mat16x16<f16, A>>(&a[0], 16u);
    let y = coopLoad<coop_mat16x16<f16, B>>(&b[0], 16u);
    let z = coopLoad<coop_mat16x16<f32, C>>(&c[0], 16u);
    coopStore(coopMultiplyAdd(x, y, z), &c[0], 16u);
}

@compute @workgroup_size(32)
fn fits() {
    tile_16x16();
}

@compute @workgroup_size(32)
fn lacks() {
    let x = coopLoad<coop_mat8x8<f32, A>>(&small[0], 8u);
    let y = coopLoad<coop_mat8x8<f32, B>>(&small[0], 8u);
    let z = coopLoad<coop_mat8x8<f32, C>>(&small[0], 8u);
    coopStore(coopMultiplyAdd(x, y, z), &small[0], 8u);
    kept = x;
}
"""


def test_the_entry_point_with_a_config_the_device_has_runs():
    dev = emu.Device("nvidia-h200")
    mod = dev.create_shader_module(TWO_ENTRIES, "two.wgsl")
    pipe = dev.create_compute_pipeline(mod, entry_point="fits")
    rng = np.random.default_rng(10)
    a = rng.integers(-3, 4, (16, 16)).astype(np.float16)
    b = rng.integers(-3, 4, (16, 16)).astype(np.float16)
    c0 = rng.integers(-8, 9, (16, 16)).astype(np.float32)
    bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): dev.create_buffer(c0),
            (0, 3): dev.create_buffer(np.zeros(64, np.float32))}
    dev.dispatch(pipe, bufs, (1, 1, 1))
    got = bufs[(0, 2)].read(np.float32).reshape(16, 16)
    # wgpu's loads and stores are column-major: memory holds the transposes, so C^T = A^T B^T + C0^T
    # there, i.e. b @ a + c0 here. Small integers: every product and sum is exact in any rounding.
    want = (b.astype(np.float64) @ a.astype(np.float64) + c0).astype(np.float32)
    assert np.array_equal(got, want)


def test_selecting_the_entry_point_with_a_missing_config_names_it():
    dev = emu.Device("nvidia-h200")
    mod = dev.create_shader_module(TWO_ENTRIES, "two.wgsl")
    with pytest.raises(EmuError) as e:
        dev.create_compute_pipeline(mod, entry_point="lacks")
    err = e.value
    assert err.loc is not None and (err.loc.line, err.loc.col) == (23, 13)
    assert "the device 'nvidia-h200' has no left (A) matrix of 8x8 f32" in err.message
    assert "M=16 N=16 K=16  f16 x f16 + f32 -> f32" in err.hint
    text = err.format({"two.wgsl": TWO_ENTRIES})
    assert "two.wgsl:23:13" in text and "Traceback" not in text
