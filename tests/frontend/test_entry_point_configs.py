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


# naga's integer inputs: 32-bit integer operands, or 8-bit accumulators. The H200's matrix unit
# (traces of its Vulkan driver's configurations) takes u8/i8 to u32/i32 only, and so does every
# GPU emu models: the hint says that no profile runs it, where one that does would be named.
INT_MATRICES = """enable wgpu_cooperative_matrix;
var<private> a: coop_mat16x16<ELEM, A>;
var<private> b: coop_mat16x16<ELEM, B>;
@group(0) @binding(0) var<storage, read_write> d: array<ACC>;
@compute @workgroup_size(32)
fn main() {
  let c = coopLoad<coop_mat16x16<ACC, C>>(&d[0]);
  coopStore(coopMultiplyAdd(a, b, c), &d[0]);
}
"""


@pytest.mark.parametrize("elem, acc, first, where", [
    ("i32", "i32", "has no matrix unit for i32xi32->i32 at M=16 N=16 K=16",
     "no emu profile has i32xi32->i32 at M=16 N=16 K=16: none of the GPUs emu models has one (their integer "
     "matrix units take 8-bit inputs to 32-bit sums); `emu props NAME` lists each one's"),
    ("u32", "u32", "has no matrix unit for u32xu32->u32 at M=16 N=16 K=16",
     "no emu profile has u32xu32->u32 at M=16 N=16 K=16: none of the GPUs emu models has one (their integer "
     "matrix units take 8-bit inputs to 32-bit sums); `emu props NAME` lists each one's"),
])
def test_integer_matrices_no_device_has(elem, acc, first, where):
    src = INT_MATRICES.replace("ELEM", elem).replace("ACC", acc)
    dev = emu.Device("nvidia-h200")
    with pytest.raises(EmuError) as e:
        dev.create_compute_pipeline(dev.create_shader_module(src, "int.wgsl"))
    assert e.value.message == f"the device 'nvidia-h200' {first}"
    assert e.value.hint.splitlines()[0] == where
    assert "M=16 N=16 K=32  i8 x i8 + i32 -> i32" in e.value.hint      # what it has instead


def test_an_8_bit_accumulator_no_device_has():
    src = """enable wgpu_cooperative_matrix;
@group(0) @binding(0) var<storage, read_write> d: array<u32>;
@compute @workgroup_size(32)
fn main() {
  let c = coopLoad<coop_mat16x16<i8, C>>(&d[0]);
  coopStore(c, &d[0]);
}
"""
    dev = emu.Device("nvidia-h200")
    with pytest.raises(EmuError) as e:
        dev.create_compute_pipeline(dev.create_shader_module(src, "i8.wgsl"))
    assert (e.value.loc.line, e.value.loc.col) == (5, 11)
    assert e.value.message == "the device 'nvidia-h200' has no result (C) matrix of 16x16 i8"
    assert e.value.hint.splitlines()[0].startswith("no emu profile has a result (C) matrix of 16x16 i8: ")


def test_a_shape_another_profile_has_is_named():
    src = """enable f16;
enable wgpu_cooperative_matrix;
@group(0) @binding(0) var<storage, read_write> d: array<f16>;
@compute @workgroup_size(32)
fn main() {
  coopStore(coopLoad<coop_mat16x8<f16, A>>(&d[0]), &d[0]);
}
"""
    dev = emu.Device("nvidia-h200")
    with pytest.raises(EmuError) as e:
        dev.create_compute_pipeline(dev.create_shader_module(src, "r.wgsl"))
    assert e.value.hint.splitlines()[0] == "profiles that have a left (A) matrix of 8x16 f16: intel-xe-hpg, " \
                                           "intel-xe2 (--profile NAME)"
