"""Cooperative matrices inside arrays (nested) and structs, in function and private variables:
zero values, dynamic uniform indexing, loads, stores and multiply-adds on elements, passing to and
returning from functions (llama.cpp keeps its accumulators so). And Dawn's relaxed load/store
storage: any scalar or vector array whose elements are at least one matrix element long."""
import numpy as np
import pytest

import emu
from emu.errors import EmuError

RNG = np.random.default_rng(11)


def small(shape, dtype=np.float16):
    """Values whose products and sums are exact in f16 and f32 (every rounding model agrees)."""
    return (RNG.integers(-8, 8, shape) / 4).astype(dtype)


def run(src, inputs, out_bytes, profile="reference", sg=32, groups=(1, 1, 1), **consts):
    dev = emu.Device(profile, sg)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "k.wgsl"), constants=consts or None)
    bufs = {(0, i): dev.create_buffer(x) for i, x in enumerate(inputs)}
    out = dev.create_buffer(size=out_bytes)
    bufs[(0, len(inputs))] = out
    dev.dispatch(pipe, bufs, groups)
    return out


DAWN_ARRAYS = """enable f16;
enable chromium_experimental_subgroup_matrix;
alias L = subgroup_matrix_left<f16, 16, 16>;
alias R = subgroup_matrix_right<f16, 16, 16>;
alias C = subgroup_matrix_result<f32, 16, 16>;
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<f16>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
struct Tiles { l: array<L, 2>, n: u32 }
var<private> acc: array<array<C, 2>, 2>;
fn bump(m: array<C, 2>) -> array<C, 2> {
  var r = m;
  r[1] = subgroupMatrixScalarAdd(r[1], 1.0);
  return r;
}
fn load_right(i: u32) -> R {
  return subgroupMatrixLoad<R, row_major>(&b, i * 256u, 16u);
}
@compute @workgroup_size(32)
fn main() {
  var t: Tiles;
  var rs = array<R, 2>();
  for (var i = 0u; i < 2u; i++) {
    t.l[i] = subgroupMatrixLoad<L, row_major>(&a, i * 256u, 16u);
    rs[i] = load_right(i);
  }
  for (var i = 0u; i < 2u; i++) {
    for (var j = 0u; j < 2u; j++) {
      acc[i][j] = subgroupMatrixMultiplyAccumulate(t.l[i], rs[j], acc[i][j]);
    }
  }
  acc[1] = bump(acc[1]);
  let copy = acc;
  for (var i = 0u; i < 2u; i++) {
    for (var j = 0u; j < 2u; j++) {
      subgroupMatrixStore<row_major>(&c, (i * 2u + j) * 256u, copy[i][j], 16u);
    }
  }
}
"""


@pytest.mark.parametrize("profile", ["reference", "nvidia-h200"])
def test_dawn_nested_arrays_structs_functions(profile):
    A, B = small((2, 16, 16)), small((2, 16, 16))
    out = run(DAWN_ARRAYS, [A, B], 4 * 1024, profile).read(np.float32).reshape(2, 2, 16, 16)
    for i in range(2):
        for j in range(2):
            want = A[i].astype(np.float64) @ B[j].astype(np.float64) + (i == 1 and j == 1)
            np.testing.assert_array_equal(out[i, j], want)


def test_llama_style_f16_accumulator_grid():
    """var acc: array<array<subgroup_matrix_result<f16, 16, 16>, TN>, TM>, zero-initialised,
    indexed by loop counters, as llama.cpp's subgroup-matrix matmul keeps it."""
    src = """enable f16;
enable chromium_experimental_subgroup_matrix;
const TM = 2u;
const TN = 3u;
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<f16>;
@group(0) @binding(2) var<storage, read_write> c: array<f16>;
@compute @workgroup_size(32)
fn main() {
  var acc: array<array<subgroup_matrix_result<f16, 16, 16>, TN>, TM>;
  var lefts = array<subgroup_matrix_left<f16, 16, 16>, TM>();
  for (var m = 0u; m < TM; m++) {
    lefts[m] = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, m * 256u, 16u);
  }
  for (var n = 0u; n < TN; n++) {
    let r = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, row_major>(&b, n * 256u, 16u);
    for (var m = 0u; m < TM; m++) {
      acc[m][n] = subgroupMatrixMultiplyAccumulate(lefts[m], r, acc[m][n]);
    }
  }
  for (var m = 0u; m < TM; m++) {
    for (var n = 0u; n < TN; n++) {
      subgroupMatrixStore<row_major>(&c, (m * TN + n) * 256u, acc[m][n], 16u);
    }
  }
}
"""
    A = (RNG.integers(-2, 3, (2, 16, 16)) / 2).astype(np.float16)
    B = (RNG.integers(-2, 3, (3, 16, 16)) / 2).astype(np.float16)
    out = run(src, [A, B], 2 * 6 * 256, "nvidia-h200").read(np.float16).reshape(2, 3, 16, 16)
    for m in range(2):
        for n in range(3):
            np.testing.assert_array_equal(out[m, n], A[m].astype(np.float64) @ B[n].astype(np.float64))


def test_wgpu_array_of_accumulators_and_struct_member():
    src = """enable f16;
enable wgpu_cooperative_matrix;
struct Acc { tiles: array<coop_mat16x16<f32, C>, 2>, scale: f32 }
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<f16>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(32)
fn main() {
  var s: Acc;
  s.scale = 2.0;
  let x = coopLoadT<coop_mat16x16<f16, A>>(&a[0], 16u);
  for (var j = 0u; j < 2u; j++) {
    let y = coopLoadT<coop_mat16x16<f16, B>>(&b[j * 256u], 16u);
    s.tiles[j] = coopMultiplyAdd(x, y, s.tiles[j]);
    s.tiles[j] = coopMultiplyAdd(x, y, s.tiles[j]);
  }
  coopStoreT(s.tiles[0], &c[0], 16u);
  coopStoreT(s.tiles[1], &c[256], 16u);
}
"""
    A, B = small((16, 16)), small((2, 16, 16))
    out = run(src, [A, B], 4 * 512, "nvidia-h200").read(np.float32).reshape(2, 16, 16)
    for j in range(2):
        np.testing.assert_array_equal(out[j], 2 * (A.astype(np.float64) @ B[j].astype(np.float64)))


RELAXED = """enable f16;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read> a: array<STORE>;
@group(0) @binding(1) var<storage, read_write> c: array<STORE>;
@compute @workgroup_size(32)
fn main() {
  let m = subgroupMatrixLoad<subgroup_matrix_left<ELEM, 8, 8>, row_major>(&a, OFF, STRIDE);
  subgroupMatrixStore<col_major>(&c, OFF, subgroupMatrixScalarAdd(m, ELEM(1)), STRIDE);
}
"""


@pytest.mark.parametrize("store,elem,per", [("vec4<f32>", "f32", 4), ("vec2<u32>", "f32", 2),
                                            ("vec2<f16>", "f32", 1), ("vec3<f32>", "f32", 4),
                                            ("u32", "f16", 1), ("vec4<f16>", "f16", 4)])
def test_dawn_relaxed_storage_offsets_and_strides_count_array_elements(store, elem, per):
    """Tint's rule: offset and stride count the array's elements; a row is read as consecutive
    matrix elements from there (a vec3<f32> element is 16 bytes: 4 f32 slots)."""
    dt = np.float32 if elem == "f32" else np.float16
    esize = np.dtype(dt).itemsize
    word = {"vec4<f32>": 16, "vec2<u32>": 8, "vec2<f16>": 4, "vec3<f32>": 16, "u32": 4, "vec4<f16>": 8}[store]
    slots = word // esize                       # matrix elements per array element
    # stride and offset in array elements: a stride >= one row; both multiples of 16 bytes
    # (Vulkan's alignment rule for cooperative loads and stores)
    stride, off = 3 * -(-8 // slots), 2 * max(1, 16 // word)
    n = (off + 8 * stride) * slots
    flat = np.arange(n, dtype=np.float64).astype(dt)
    src = RELAXED.replace("STORE", store).replace("ELEM", elem).replace("OFF", f"{off}u").replace("STRIDE", f"{stride}u")
    out = run(src, [flat], n * esize, "reference").read(dt)
    base, st = off * slots, stride * slots
    m = np.stack([flat[base + r * st: base + r * st + 8] for r in range(8)]).astype(np.float64)
    got = np.stack([out[base + c * st: base + c * st + 8] for c in range(8)], axis=1)   # col_major
    np.testing.assert_array_equal(got, m + 1)


def test_dawn_relaxed_storage_rejects_shorter_elements():
    src = RELAXED.replace("STORE", "f16").replace("ELEM", "f32").replace("OFF", "0u").replace("STRIDE", "8u")
    with pytest.raises(EmuError) as e:
        run(src, [np.zeros(64, np.float16)], 128)
    assert "the array's elements (f16, 2 bytes) are shorter than the matrix's (f32, 4 bytes)" in e.value.message
    assert (e.value.loc.line, e.value.loc.col) == (7, 74)
