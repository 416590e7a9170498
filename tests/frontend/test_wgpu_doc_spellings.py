"""wgpu's cooperative-matrix document spells loads three ways, and all must run as written:
coopLoad<_, A>(ptr, stride) and coopLoadT<f32, A>(ptr, 8u) (element, or '_', and role; the size
from the declared type of the value), and naga's coopLoad<coop_mat8x8<f32, C>>(&buf[i]) (whole
type, stride optional). Its full example uses @workgroup_size(8, 8, 1) for an 8x8 f32 tile on a
device with 32-lane subgroups: Dawn requires workgroup x to be whole subgroups, wgpu does not.
These are our own shaders reproducing each of the document's constructs."""
import numpy as np
import pytest

import emu
from emu.errors import EmuError

RNG = np.random.default_rng(3)


def ints(shape):
    return RNG.integers(-4, 5, shape).astype(np.float32)     # exact in every rounding model


def run(src, buffers, groups, profile="apple-m1", entry=None):
    dev = emu.Device(profile)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "doc.wgsl"), entry_point=entry)
    bufs = {k: dev.create_buffer(v) for k, v in buffers.items()}
    dev.dispatch(pipe, bufs, groups)
    return bufs


# A helper taking element pointers, loads in the <_, role> spelling, column-major storage.
TILE_FN = """enable wgpu_cooperative_matrix;
alias TileA = coop_mat8x8<f32, A>;
alias TileB = coop_mat8x8<f32, B>;
alias TileC = coop_mat8x8<f32, C>;
@group(0) @binding(0) var<storage, read> lhs: array<f32>;
@group(0) @binding(1) var<storage, read> rhs: array<f32>;
@group(0) @binding(2) var<storage, read_write> acc: array<f32>;

fn mul_add_tile(pa: ptr<storage, f32>, pb: ptr<storage, f32>, pc: ptr<storage, f32, read_write>, ld: u32) {
    let x: TileA = coopLoad<_, A>(pa, ld);
    let y: TileB = coopLoad<_, B>(pb, ld);
    let z: TileC = coopLoad<_, C>(pc, ld);
    let r: TileC = coopMultiplyAdd(x, y, z);
    coopStore(r, pc, ld);
}

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(workgroup_id) g: vec3<u32>) {
    let at = g.x * 64u;
    mul_add_tile(&lhs[at], &rhs[at], &acc[at], 8u);
}
"""

# Row-major tiles in struct-wrapped buffers, element pointers bound by let, coopLoadT<f32, role>.
ROW_MAJOR = """enable wgpu_cooperative_matrix;
struct Buf { data: array<f32> }
@group(0) @binding(0) var<storage, read> ba: Buf;
@group(0) @binding(1) var<storage, read> bb: Buf;
@group(0) @binding(2) var<storage, read_write> bc: Buf;
alias TileA = coop_mat8x8<f32, A>;
alias TileB = coop_mat8x8<f32, B>;
alias TileC = coop_mat8x8<f32, C>;

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(workgroup_id) g: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
    let first = g.x * 64u;
    let pa = &ba.data[first];
    let pb = &bb.data[first];
    let pc = &bc.data[first];
    let x: TileA = coopLoadT<f32, A>(pa, 8u);
    let y: TileB = coopLoadT<f32, B>(pb, 8u);
    let z: TileC = coopLoadT<f32, C>(pc, 8u);
    let r: TileC = coopMultiplyAdd(x, y, z);
    coopStoreT(r, pc, 8u);
}
"""


def test_underscore_element_column_major_helper_function():
    A, B, C = ints((3, 8, 8)), ints((3, 8, 8)), ints((3, 8, 8))
    # column-major storage: memory tile t holds M.T row by row
    bufs = run(TILE_FN, {(0, 0): A.transpose(0, 2, 1).copy(), (0, 1): B.transpose(0, 2, 1).copy(),
                         (0, 2): C.transpose(0, 2, 1).copy()}, (3, 1, 1))
    out = bufs[(0, 2)].read(np.float32).reshape(3, 8, 8).transpose(0, 2, 1)
    np.testing.assert_array_equal(out, A @ B + C)


@pytest.mark.parametrize("profile", ["apple-m1", "reference"])
def test_element_and_role_row_major_8x8_workgroup(profile):
    A, B, C = ints((2, 8, 8)), ints((2, 8, 8)), ints((2, 8, 8))
    bufs = run(ROW_MAJOR, {(0, 0): A, (0, 1): B, (0, 2): C}, (2, 1, 1), profile)
    np.testing.assert_array_equal(bufs[(0, 2)].read(np.float32).reshape(2, 8, 8), A @ B + C)


def test_naga_whole_type_spelling_default_stride_and_private_matrices():
    """naga's own test spelling: coopLoad<coop_mat8x8<f32, C>>(&buf[4]) with the stride left out
    (one matrix row/column), multiply-add with zero-valued var<private> matrices, copy by '='."""
    src = """enable wgpu_cooperative_matrix;
var<private> pa: coop_mat8x8<f32, A>;
var<private> pb: coop_mat8x8<f32, B>;
@group(0) @binding(0) var<storage, read_write> buf: array<f32>;
@compute @workgroup_size(8, 8, 1)
fn main() {
    var c = coopLoad<coop_mat8x8<f32, C>>(&buf[4]);
    var d = coopMultiplyAdd(pa, pb, c);
    coopStore(d, &buf[100]);
    c = d;
}
"""
    data = ints(200)
    out = run(src, {(0, 0): data}, (1, 1, 1))[(0, 0)].read(np.float32)
    np.testing.assert_array_equal(out[100:164], data[4:68])     # 0 * 0 + C, stride 8 both ways
    np.testing.assert_array_equal(out[:100], data[:100])


def test_dawn_keeps_its_workgroup_rule():
    src = """enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read_write> buf: array<f32>;
@compute @workgroup_size(8, 8, 1)
fn main() {
    let m = subgroupMatrixLoad<subgroup_matrix_result<f32, 8, 8>, row_major>(&buf, 0u, 8u);
    subgroupMatrixStore<row_major>(&buf, 64u, m, 8u);
}
"""
    with pytest.raises(EmuError) as e:
        run(src, {(0, 0): ints(128)}, (1, 1, 1))
    assert "workgroup_size.x (8) of 'main' is not a multiple of the subgroup size (32)" in e.value.message


@pytest.mark.parametrize("decl,needle", [
    ("let x = coopLoadT<f32, A>(pa, 8u);", "coopLoadT needs the matrix size: it comes from the declared type of the value, and this one has no declared type"),
    ("let x: coop_mat8x8<f32, B> = coopLoadT<f32, A>(pa, 8u);", "coopLoadT makes a coopmat<f32, 8x8, A>, but the value is declared coopmat<f32, 8x8, B>"),
    ("let x: TileA = coopLoadT<f32, D>(pa, 8u);", "cooperative matrix role must be A, B or C, not D"),
])
def test_inferred_size_errors(decl, needle):
    src = ROW_MAJOR.replace("let x: TileA = coopLoadT<f32, A>(pa, 8u);", decl)
    with pytest.raises(EmuError) as e:
        run(src, {}, (1, 1, 1))
    assert needle in e.value.message
    assert e.value.loc.line == 16


def test_naga_8bit_storage_and_rectangular_names():
    """naga spells 8-bit storage array<i8> and names coop_mat{columns}x{rows}: coop_mat32x16<i8, A>
    is a 16x32 A (M=16, K=32), coop_mat16x32<i8, B> a 32x16 B; i8 x i8 -> i32 on the H200."""
    src = """enable wgpu_cooperative_matrix;
@group(0) @binding(0) var<storage, read> x: array<i8>;
@group(0) @binding(1) var<storage, read> w: array<i8>;
@group(0) @binding(2) var<storage, read_write> acc: array<i32>;
@compute @workgroup_size(32)
fn main() {
    let a = coopLoadT<coop_mat32x16<i8, A>>(&x[0], 32u);
    let b = coopLoadT<coop_mat16x32<i8, B>>(&w[0], 16u);
    var c = coopLoadT<coop_mat16x16<i32, C>>(&acc[0], 16u);
    c = coopMultiplyAdd(a, b, c);
    coopStoreT(c, &acc[0], 16u);
}
"""
    X = RNG.integers(-128, 128, (16, 32)).astype(np.int8)
    W = RNG.integers(-128, 128, (32, 16)).astype(np.int8)
    C = RNG.integers(-1000, 1000, (16, 16)).astype(np.int32)
    bufs = run(src, {(0, 0): X, (0, 1): W, (0, 2): C}, (1, 1, 1), "nvidia-h200")
    want = X.astype(np.int64) @ W.astype(np.int64) + C
    np.testing.assert_array_equal(bufs[(0, 2)].read(np.int32).reshape(16, 16), want)


def test_8bit_scalars_are_naga_only():
    with pytest.raises(EmuError) as e:
        run("@group(0) @binding(0) var<storage, read> x: array<i8>;\n"
            "@compute @workgroup_size(1) fn main() { _ = x[0]; }\n", {(0, 0): np.zeros(4, np.int8)}, (1, 1, 1))
    assert e.value.message == "unknown type 'i8'" and (e.value.loc.line, e.value.loc.col) == (1, 51)


def test_naga_mixed_f16_shape_16x16x32_on_reference():
    """naga's mixed-precision shape: coop_mat32x16<f16, A> (M=16, K=32), coop_mat16x32<f16, B> and
    an f32 accumulator. No shipped device lists f16 16x16x32; the reference profile has it, exact."""
    src = """enable wgpu_cooperative_matrix;
enable f16;
@group(0) @binding(0) var<storage, read> x: array<f16>;
@group(0) @binding(1) var<storage, read> w: array<f16>;
@group(0) @binding(2) var<storage, read_write> acc: array<f32>;
@compute @workgroup_size(32)
fn main() {
    let a = coopLoadT<coop_mat32x16<f16, A>>(&x[0], 32u);
    let b = coopLoadT<coop_mat16x32<f16, B>>(&w[0], 16u);
    var c = coopLoadT<coop_mat16x16<f32, C>>(&acc[0], 16u);
    c = coopMultiplyAdd(a, b, c);
    coopStoreT(c, &acc[0], 16u);
}
"""
    X = RNG.integers(-8, 9, (16, 32)).astype(np.float16)
    W = RNG.integers(-8, 9, (32, 16)).astype(np.float16)
    C = RNG.integers(-100, 100, (16, 16)).astype(np.float32)
    bufs = run(src, {(0, 0): X, (0, 1): W, (0, 2): C}, (1, 1, 1), "reference")
    want = X.astype(np.float64) @ W.astype(np.float64) + C       # small integers: exact in f32
    np.testing.assert_array_equal(bufs[(0, 2)].read(np.float32).reshape(16, 16), want)
    with pytest.raises(EmuError) as e:
        run(src, {(0, 0): X, (0, 1): W, (0, 2): C}, (1, 1, 1), "nvidia-h200")
    assert e.value.message == "the device 'nvidia-h200' has no left (A) matrix of 16x32 f16"


H200_REFUSES = {"i32": "the device 'nvidia-h200' has no left (A) matrix of 16x16 i32",
                "u32": "the device 'nvidia-h200' has no left (A) matrix of 16x16 u32",
                "i8": "the device 'nvidia-h200' has no result (C) matrix of 16x16 i8",
                "u8": "the device 'nvidia-h200' has no result (C) matrix of 16x16 u8"}
INT_SRC = """enable wgpu_cooperative_matrix;
@group(0) @binding(0) var<storage, read> x: array<{t}>;
@group(0) @binding(1) var<storage, read> w: array<{t}>;
@group(0) @binding(2) var<storage, read> acc: array<{t}>;
@group(0) @binding(3) var<storage, read_write> out: array<{t}>;
@compute @workgroup_size(32)
fn main() {{
    let a = coopLoadT<coop_mat{k}x16<{t}, A>>(&x[0], {k}u);
    let b = coopLoadT<coop_mat16x{k}<{t}, B>>(&w[0], 16u);
    let c = coopLoadT<coop_mat16x16<{t}, C>>(&acc[0], 16u);
    coopStoreT(coopMultiplyAdd(a, b, c), &out[0], 16u);
}}
"""


@pytest.mark.parametrize("t,k", [("i32", 16), ("u32", 16), ("i8", 32), ("u8", 32)])
@pytest.mark.parametrize("jit", ["0", "1"])
def test_naga_integer_shapes_wrap_on_reference(monkeypatch, t, k, jit):
    """naga's integer shapes: i32/u32 16x16x16, and i8/u8 inputs into an i8/u8 accumulator at
    16x16x32. The result is the low 32 (8) bits of the exact A*B + C, as SPIR-V's
    OpCooperativeMatrixMulAddKHR defines it without SaturatingAccumulation. Only the reference
    profile lists them; the compiled cooperative kernel leaves integers to the interpreter."""
    from emu.jit import coop_kernel
    monkeypatch.setenv("EMU_JIT", jit)
    monkeypatch.setattr(coop_kernel, "MIN_SUBGROUPS", 1)
    dt = np.dtype({"i32": np.int32, "u32": np.uint32, "i8": np.int8, "u8": np.uint8}[t])
    lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
    # 32-bit: |entries| below 2^28, so the int64 sum is exact, yet far past 2^32; 8-bit: any
    big = (1 << 28) if dt.itemsize == 4 else None
    X, W, C = (RNG.integers(max(lo, -big) if big else lo, (min(hi, big) if big else hi) + 1, shape,
                            dtype=np.int64).astype(dt) for shape in ((16, k), (k, 16), (16, 16)))
    src = INT_SRC.format(t=t, k=k)              # 8-bit: naga's array<i8> / array<u8> storage
    bufs = run(src, {(0, 0): X, (0, 1): W, (0, 2): C, (0, 3): np.zeros((16, 16), dt)}, (1, 1, 1),
               "reference")
    exact = X.astype(np.int64) @ W.astype(np.int64) + C.astype(np.int64)
    want = (exact & ((1 << (8 * dt.itemsize)) - 1)).astype(dt.str.replace("i", "u")).view(dt)
    assert np.abs(exact).max() >= (1 << (8 * dt.itemsize))          # the wrap is exercised
    np.testing.assert_array_equal(bufs[(0, 3)].read(dt).reshape(16, 16), want)
    dev = emu.Device("reference")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "doc.wgsl"))
    assert coop_kernel.compile_pipeline(pipe.pipeline) is None
    with pytest.raises(EmuError) as e:
        run(src, {(0, 0): X, (0, 1): W, (0, 2): C, (0, 3): np.zeros((16, 16), dt)}, (1, 1, 1), "nvidia-h200")
    assert e.value.message == H200_REFUSES[t]
