"""naga's operators on cooperative matrices (its validator: + and - of two matrices of one type,
* of a matrix and a scalar of its element type, either side): element by element, each element
rounded once as the profile's scalar arithmetic does. naga's first cooperative-matrix input adds
two private matrices (`a + a`); emu used to type that sum as its element (f32), then refused it.
Tint has no such operators; Dawn's matrices use subgroupMatrixScalar*. Our own shader."""
import numpy as np
import pytest

import emu
from emu.errors import EmuError

SRC = """enable wgpu_cooperative_matrix;
@group(0) @binding(0) var<storage, read_write> buf: array<f32>;
var<private> pa: coop_mat8x8<f32, A>;
@compute @workgroup_size(8, 8, 1)
fn main() {
    let a2 = pa + pa;
    let x = coopLoadT<coop_mat8x8<f32, C>>(&buf[0], 8u);
    let y = coopLoadT<coop_mat8x8<f32, C>>(&buf[64], 8u);
    coopStoreT(x + y, &buf[128], 8u);
    coopStoreT(x - y, &buf[192], 8u);
    coopStoreT(2.0 * x, &buf[256], 8u);
    coopStoreT(y * 0.1f, &buf[320], 8u);
    coopStoreT(a2, &buf[384], 8u);
}
"""


@pytest.mark.parametrize("profile", ["apple-m1", "reference"])
def test_naga_matrix_operators(profile):
    dev = emu.Device(profile)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SRC, "ops.wgsl"))
    rng = np.random.default_rng(5)
    x, y = (rng.standard_normal(64).astype(np.float32) for _ in range(2))
    buf = dev.create_buffer(np.concatenate([x, y, np.full(320, 7, np.float32)]))
    dev.dispatch(pipe, {(0, 0): buf}, (1, 1, 1))
    o = buf.read(np.float32)
    np.testing.assert_array_equal(o[128:192], x + y)          # f32 + f32: one IEEE rounding
    np.testing.assert_array_equal(o[192:256], x - y)
    np.testing.assert_array_equal(o[256:320], np.float32(2) * x)
    np.testing.assert_array_equal(o[320:384], y * np.float32(0.1))
    np.testing.assert_array_equal(o[384:448], np.zeros(64, np.float32))


@pytest.mark.parametrize("expr,col", [("x * y", 13), ("x / 2.0", 13), ("x + pa", 13), ("x * 2u", 13)])
def test_what_naga_has_not_is_refused(expr, col):
    src = SRC.replace("coopStoreT(x + y,", f"coopStoreT({expr},")
    with pytest.raises(EmuError) as e:
        emu.Device("apple-m1").create_shader_module(src, "ops.wgsl")
    assert e.value.message.startswith(f"no operator '{expr.split()[1]}' for coopmat<f32, 8x8, C> and ")
    assert (e.value.loc.line, e.value.loc.col) == (9, 16) and "naga has + and -" in e.value.hint


def test_dawn_matrices_have_no_operators():
    src = """enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read_write> buf: array<f32>;
@compute @workgroup_size(32)
fn main() {
    let x = subgroupMatrixLoad<subgroup_matrix_result<f32, 8, 8>>(&buf, 0u, false, 8u);
    subgroupMatrixStore(&buf, 64u, x + x, false, 8u);
}
"""
    with pytest.raises(EmuError) as e:
        emu.Device("apple-m1").create_shader_module(src, "dawn.wgsl")
    assert e.value.message == "no operator '+' for coopmat<f32, 8x8, C> and coopmat<f32, 8x8, C>"
    assert "subgroupMatrixScalarAdd" in e.value.hint
    assert (e.value.loc.line, e.value.loc.col) == (6, 36)
