"""Both cooperative-matrix dialects, every construct, on the `reference` profile (exact
numerics), checked against numpy; and the two dialects lower to the same IR ops."""
import numpy as np
import pytest

import emu
from emu.isa.printer import print_module


def run(src, buffers, out_sizes, profile="reference", sg=32, groups=(1, 1, 1)):
    dev = emu.Device(profile, sg)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "k.wgsl"))
    bufs = {k: dev.create_buffer(v) for k, v in buffers.items()}
    for k, n in out_sizes.items():
        bufs[k] = dev.create_buffer(size=n)
    dev.dispatch(pipe, bufs, groups)
    return bufs


RNG = np.random.default_rng(5)
A16 = (RNG.integers(-8, 8, (16, 16)) / 4).astype(np.float16)     # exact products and sums
B16 = (RNG.integers(-8, 8, (16, 16)) / 4).astype(np.float16)


def test_dawn_template_and_deprecated_forms_agree():
    src = """enable f16;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<f16>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(32)
fn main() {
  let l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, 0u, 16u);
  let r = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>>(&b, 0u, true, 16u);   // col_major
  let p = subgroupMatrixMultiply<f32>(l, r);
  subgroupMatrixStore<row_major>(&c, 0u, p, 16u);
  subgroupMatrixStore(&c, 256u, p, true, 16u);                                          // col_major
}
"""
    out = run(src, {(0, 0): A16, (0, 1): B16}, {(0, 2): 4 * 512})[(0, 2)].read(np.float32)
    want = A16.astype(np.float64) @ B16.astype(np.float64).T
    np.testing.assert_array_equal(out[:256].reshape(16, 16), want)
    np.testing.assert_array_equal(out[256:].reshape(16, 16).T, want)


def test_dawn_fill_zero_scalar_ops_and_accumulate():
    src = """enable f16;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read_write> c: array<f32>;
fn twice(m: subgroup_matrix_result<f32, 16, 16>) -> subgroup_matrix_result<f32, 16, 16> {
  return subgroupMatrixScalarMultiply(m, 2.0);
}
@compute @workgroup_size(64)
fn main(@builtin(subgroup_id) sg: u32) {
  let l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, 0u, 16u);
  let ones = subgroup_matrix_right<f16, 16, 16>(1.0);
  var acc = subgroup_matrix_result<f32, 16, 16>();
  acc = subgroupMatrixScalarAdd(acc, f32(sg));        // each subgroup its own bias
  acc = subgroupMatrixMultiplyAccumulate(l, ones, acc);
  acc = subgroupMatrixScalarSubtract(twice(acc), 1.0);
  subgroupMatrixStore<row_major>(&c, sg * 256u, acc, 16u);
}
"""
    out = run(src, {(0, 0): A16}, {(0, 1): 4 * 512})[(0, 1)].read(np.float32).reshape(2, 16, 16)
    rowsum = A16.astype(np.float64).sum(axis=1, keepdims=True) * np.ones((1, 16))
    for s in range(2):
        np.testing.assert_array_equal(out[s], 2 * (rowsum + s) - 1)


def test_dawn_int8_in_u32_arrays():
    src = """enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read> a: array<i32>;
@group(0) @binding(1) var<storage, read> b: array<i32>;
@group(0) @binding(2) var<storage, read_write> c: array<i32>;
@compute @workgroup_size(32)
fn main() {
  let l = subgroupMatrixLoad<subgroup_matrix_left<i8, 32, 16>, row_major>(&a, 0u, 32u);
  let r = subgroupMatrixLoad<subgroup_matrix_right<i8, 16, 32>, row_major>(&b, 0u, 16u);
  let acc = subgroup_matrix_result<i32, 16, 16>(-5);
  subgroupMatrixStore<row_major>(&c, 0u, subgroupMatrixMultiplyAccumulate(l, r, acc), 16u);
}
"""
    A = RNG.integers(-128, 128, (16, 32), dtype=np.int8)
    B = RNG.integers(-128, 128, (32, 16), dtype=np.int8)
    # reference counts 8-bit strides in matrix elements (bytes): rows are 32 / 16 bytes apart
    out = run(src, {(0, 0): A, (0, 1): B}, {(0, 2): 4 * 256})[(0, 2)].read(np.int32).reshape(16, 16)
    np.testing.assert_array_equal(out, A.astype(np.int64) @ B.astype(np.int64) - 5)


def test_wgpu_dialect_loads_stores_private_and_function_vars():
    src = """enable f16;
enable wgpu_cooperative_matrix;
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<f16>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
var<private> total: coop_mat16x16<f32, C>;
@compute @workgroup_size(32)
fn main() {
  let ta = coopLoad<coop_mat16x16<f16, A>>(&a[0]);            // column-major, stride 16
  let tb = coopLoadT<coop_mat16x16<f16, B>>(&b[0], 16u);      // row-major
  var acc: coop_mat16x16<f32, C>;
  acc = coopMultiplyAdd(ta, tb, acc);
  total = coopMultiplyAdd(ta, tb, acc);
  coopStoreT(total, &c[0], 16u);
  coopStore(acc, &c[256]);
}
"""
    out = run(src, {(0, 0): A16, (0, 1): B16}, {(0, 2): 4 * 512})[(0, 2)].read(np.float32)
    want = A16.astype(np.float64).T @ B16.astype(np.float64)
    np.testing.assert_array_equal(out[:256].reshape(16, 16), 2 * want)
    np.testing.assert_array_equal(out[256:].reshape(16, 16).T, want)


def test_dialects_lower_to_the_same_ops():
    from emu.api import compile_wgsl
    dawn = """enable f16;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read_write> a: array<f16>;
@compute @workgroup_size(32)
fn main() {
  let m = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, 16u, 32u);
  subgroupMatrixStore<row_major>(&a, 16u, m, 32u);
}
"""
    wgpu = """enable f16;
enable wgpu_cooperative_matrix;
@group(0) @binding(0) var<storage, read_write> a: array<f16>;
@compute @workgroup_size(32)
fn main() {
  let m = coopLoadT<coop_mat16x16<f16, A>>(&a[16u], 32u);
  coopStoreT(m, &a[16u], 32u);
}
"""
    ops = []
    for src in (dawn, wgpu):
        ir = print_module(compile_wgsl(src, "k.wgsl")[0], locs=False)
        ops.append([line.split("=", 1)[-1].strip() for line in ir.splitlines() if "coop_" in line])
    assert ops[0] == ops[1]
    assert ops[0][0].startswith("coop_load %") and '{layout = "row_major"}' in ops[0][0]
