"""The compiler model (emu/isa/compiler.py): which stack a shader takes, and each pass's decision
on small kernels whose fused and rounded results differ. a = 1 + 2^-12, so a * a = 1 + 2^-11 +
2^-24 exactly; with c = -(1 + 2^-11), a fused a * a + c is 2^-24 and a rounded one 0."""
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.api import compile_wgsl
from emu.isa.compiler import DECISIONS, compile_for, stack_for
from emu.isa.printer import print_module
from emu.profiles import load_profile

ROOT = Path(__file__).resolve().parents[2]
A = 1 + 2.0 ** -12
C = -(1 + 2.0 ** -11)
FUSED = 2.0 ** -24


def _run(src, vals, profile="nvidia-h200", file="k.wgsl"):
    dev = emu.Device(profile)
    buf = dev.create_buffer(np.array(vals, np.float32))
    dev.dispatch(dev.create_compute_pipeline(dev.create_shader_module(src, file)), {(0, 0): buf}, (1, 1, 1))
    return buf.read(np.float32)


def _ir(src, file="k.wgsl"):
    m, _ = compile_wgsl(src, file)
    done = compile_for(m, stack_for(load_profile("nvidia-h200"), not file.endswith(".wgsl")))
    return done, print_module(m, locs=False)


HEAD = "@group(0) @binding(0) var<storage, read_write> o: array<f32>;\n"


def test_each_path_gets_its_stack():
    h200, ref = load_profile("nvidia-h200"), load_profile("reference")
    assert stack_for(h200, spirv=False).translator == "tint"
    assert stack_for(h200, spirv=True).translator is None
    assert stack_for(h200, spirv=False, translator="naga").translator == "naga"
    assert stack_for(ref, spirv=False) is None
    assert stack_for(h200, spirv=True).nvidia and stack_for(h200, spirv=True).divide


def _matmul(profile, a, b):
    M = a.shape[0]
    dev = emu.Device(profile)
    src = (ROOT / "bench" / "shaders" / "matmul_naive.wgsl").read_text()
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "matmul_naive.wgsl"),
                                       constants={"M": M, "N": M, "K": M})
    bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): dev.create_buffer(size=4 * M * M)}
    dev.dispatch(pipe, bufs, (M // 16, M // 16, 1))
    return bufs[(0, 2)].read(np.float32).reshape(M, M)


def test_loop_carried_sum_of_products_fuses_on_the_h200_only():
    rng = np.random.default_rng(3)
    M = 32
    a = rng.standard_normal((M, M)).astype(np.float32)
    b = rng.standard_normal((M, M)).astype(np.float32)
    fused = np.zeros((M, M), np.float32)
    unfused = np.zeros((M, M), np.float32)
    for k in range(M):
        p = a[:, k:k + 1].astype(np.float64) * b[k:k + 1, :].astype(np.float64)     # exact
        fused = (p + fused).astype(np.float32)
        unfused = unfused + (a[:, k:k + 1] * b[k:k + 1, :])
        assert np.all(np.abs(p) < 2.0 ** 40)
    np.testing.assert_array_equal(_matmul("nvidia-h200", a, b), fused)
    np.testing.assert_array_equal(_matmul("reference", a, b), unfused)


def test_a_product_fuses_into_all_its_adds_or_none():
    """All or nothing: a product whose users are all adds fuses into each, unless one of them
    cannot take it (the add's other operand is the product fused there), it has more than two
    users, or every user subtracts it; then it is rounded for all (the driver's SASS of randprog
    fit seeds 15, 824: s + a and s - b, x2 - p and p + x3 all FFMAs; 19: c * c of two dots one
    FMUL, FADDed to each; 96: three users, all FADDs of one FMUL; 40, 332: k1 - p and k2 - p, FADDs).
    c + p and p + c are one add."""
    src = HEAD + """@compute @workgroup_size(1) fn main() {
  let a = o[0]; let c = o[1]; let b = o[7]; let nc = o[8];
  let p = a * a;
  o[2] = p + c;            // p + c and c + p are one add: fused
  o[3] = c + p;
  let s = a * b;           // s + c and nc - s: adds that take it, fused into each
  o[4] = s + c;
  o[5] = nc - s;
  let q = o[9] * a;        // c - q and d - q both subtract it: rounded for both
  o[6] = c - q;
  o[10] = o[21] - q;
  let r = o[11] * b;       // r + c, and (e * e) + r, where the left product fuses: rounded for both
  let e = o[14];
  o[12] = r + c;
  o[13] = e * e + r;
  let t = o[15] * o[16];   // three users: rounded
  o[17] = t + c;
  o[18] = t - nc;
  o[19] = t + o[20];
}"""
    vals = np.zeros(22, np.float32)
    vals[[0, 1, 7, 8, 9, 11, 14, 15, 16, 20, 21]] = [A, C, A, -C, -A, A, A, A, A, C, C]
    out = _run(src, vals)
    assert out[2] == FUSED and out[3] == FUSED and out[4] == FUSED and out[5] == -FUSED
    assert out[6] == 0 and out[10] == 0 and out[12] == 0 and out[17] == 0 and out[18] == 0
    assert out[13] == np.float32(np.float64(A) * A + np.float64(np.float32(np.float64(A) * A)))
    done, text = _ir(src)
    assert done["number"] >= 2 and text.count('contracted = "fma"') == 4


def test_a_product_with_more_users_fuses_where_they_read_its_factors():
    """More than two users: the driver fuses a * b into all of them where one also reads a or b
    (randprog fit seeds 71, 603: s = a * b; (s + a) * (s - b) called twice with its arguments
    swapped, four FFMAs) and rounds it for all where none does (seed 96: three FADDs of one FMUL).
    a = 1 + 2^-12: a * a + c is 2^-24 fused, 0 rounded; a * a + a reads the factor a."""
    src = HEAD + """@compute @workgroup_size(1) fn main() {
  let a = o[0]; let c = o[1]; let d = o[2];
  let p = a * a;           // p + c, p + d, p + a: one reads a, fused into all three
  o[4] = p + c;
  o[5] = p + d;
  o[6] = p + a;
  let q = o[7] * o[7];     // q + c, q + d, q + o[8]: reads no factor, rounded for all
  o[9] = q + c;
  o[10] = q + d;
  o[11] = q + o[8];
}"""
    vals = np.zeros(12, np.float32)
    vals[[0, 1, 2, 7, 8]] = [A, C, C, A, C]
    out = _run(src, vals)
    assert out[4] == FUSED and out[5] == FUSED
    assert out[6] == np.float32(np.float64(A) * A + A)             # exact product, one rounding
    assert out[9] == 0 and out[10] == 0 and out[11] == 0
    done, text = _ir(src)
    assert text.count('contracted = "fma-shared"') == 3 and 'contracted = "fma"' not in text


def test_of_two_products_the_one_with_fewer_users_fuses():
    """x * x + y * y + x * x (length's sum, x * x one product of two users): y * y fuses, x * x is
    rounded for both (the SASS of randprog fit seeds 443, 507, 627: FFMA y, y, x * x, then FADD);
    with one user each the left fuses. a = 1 + 2^-12: a * a + c is 2^-24 fused, 0 rounded."""
    src = HEAD + """@compute @workgroup_size(1) fn main() {
  let a = o[0]; let c = o[1]; let b = o[2];
  let p = a * a;
  o[3] = (p + b * b) + p;  // b * b fuses here, p rounded for both
  o[4] = o[5] * o[5] + c * c;   // one user each: the left (o[5] * o[5]) fuses
}"""
    vals = np.zeros(6, np.float32)
    vals[[0, 1, 2, 5]] = [A, C, 2.0 ** -12, A]
    out = _run(src, vals)
    # fma(b, b, p) = 1 + 2^-11 (the tie to even), + p: 2 + 2^-10; fusing p instead gives 2 + 2^-10 + 2^-22
    assert out[3] == 2 + 2.0 ** -10
    cc = np.float32(np.float64(C) * C)
    assert out[4] == np.float32(np.float64(A) * A + np.float64(cc))   # fused, c * c rounded
    done, text = _ir(src)
    assert text.count('contracted = "fma-fewer-users"') == 1


def test_of_an_adds_products_a_multiply_fuses_before_a_division():
    """x / y + a * b fuses a * b wherever it stands and rounds x * RCP(y) (fit seed 1084's SASS:
    x3 / x1 + x2 * x3 is FMUL x3, RCP(x1), then FFMA x2, x3 and it); a subtract keeps its order,
    its left product fusing: x / y - a * b is fma(x, RCP(y), -(a * b)) (fit seed 23). y = 1: the
    division is exact, so only a * b's rounding shows (a = 1 + 2^-12: a * a + c is 2^-24 fused,
    0 rounded)."""
    src = HEAD + """@compute @workgroup_size(1) fn main() {
  let a = o[0]; let c = o[1]; let y = o[2]; let nc = o[5]; let b = o[7]; let d = o[8];
  o[3] = c / y + a * a;    // the multiply fuses: fma(a, a, c * RCP(y))
  o[4] = nc / y - b * b;   // the division fuses: fma(nc, RCP(y), -(b * b))
  o[6] = d * d + o[9] / y; // either side
  o[10] = o[12] / o[13] + o[14] / 0.5;   // x / k is a multiply: it fuses
}"""
    vals = np.zeros(15, np.float32)
    vals[[0, 1, 2, 5, 7, 8, 9, 12, 13, 14]] = [A, C, 1.0, -C, A, A, C, 3.0, 3.0, 2.0 ** -25]
    out = _run(src, vals)
    assert out[3] == FUSED and out[6] == FUSED and out[4] == 0
    # 3 * RCP(3) = 1 + 2^-25 exactly: rounded first (to 1) and 2^-24 added, a tie to 1; fused with
    # 3 / 3 instead, 1 + 3 * 2^-25 rounds to 1 + 2^-23 (fit seed 608's SASS: 2 / y + x / 1.702 is
    # FFMA x, RCP(1.702), 2 * RCP(y))
    assert out[10] == 1.0
    done, text = _ir(src)
    assert text.count('contracted = "fma-multiply-first"') == 3


def test_division_fuses_only_as_the_adds_one_use():
    src = HEAD + """@compute @workgroup_size(1) fn main() {
  let x = o[0]; let y = o[1]; let z = o[2];
  o[3] = x / y + z;        // fma(x, RCP(y), z)
  let q = x / y;
  o[4] = q - z;            // q has other uses (the division is shared after numbering): rounded
  o[5] = q * 3.0;
}"""
    done, text = _ir(src)
    assert text.count('contracted = "fma-division"') == 0      # x / y is one value with three uses
    vals = np.array([3.0, 7.0, -(3.0 / 7.0), 0, 0, 0], np.float32)
    out = _run(src, vals)
    from emu.numerics import nvidia
    q = nvidia.binary("div", "f32", vals[0], vals[1])
    assert out[3] == nvidia.binary("add", "f32", q, vals[2]) and out[4] == nvidia.binary("sub", "f32", q, vals[2])


def test_inlined_helper_and_register_variable_fuse_with_the_callers_add():
    src = HEAD + """fn capped(x: f32) -> f32 {
  var v = x;
  v = o[0] * v;
  return v;
}
@compute @workgroup_size(1) fn main() {
  let a = o[0]; let c = o[1]; let b = o[5];
  o[2] = capped(a) + c;     // inlined, v promoted: fma(a, a, c)
  var w = b * b;
  w += c;                   // fma(b, b, c)
  o[3] = w;
  var t = a * b;
  if (c > 5.0) { t = 1.0; } // a store in a branch between: the load is not the product
  o[4] = t + c;
}"""
    out = _run(src, [A, C, 0, 0, 0, A])
    assert out[2] == FUSED and out[3] == FUSED and out[4] == 0
    done, _ = _ir(src)
    assert done["inline"] == 1 and done["promote"] >= 2
    assert _run(src, [A, C, 0, 0, 0, A], profile="reference")[2] == 0


def test_common_factor_is_taken_out():
    """a * c + b * c runs as (a + b) * c (fit: tests/data/hw/h200/randprog_fit.npz, seed 16's
    `x1 * t6 + x3 * t6`: 128 of 128 only so)."""
    src = HEAD + """@compute @workgroup_size(1) fn main() {
  let a = o[0]; let b = o[1]; let c = o[2];
  o[3] = a * c + b * c;
}"""
    vals = np.array([1 + 2.0 ** -20, 1.0, 1 + 2.0 ** -3, 0], np.float32)
    out = _run(src, vals)
    assert out[3] == np.float32(np.float32(vals[0] + vals[1]) * vals[2])
    done, text = _ir(src)
    assert done["factor"] == 1 and 'contracted = "factor"' in text


def _run_many(src, inputs, n_out, file="k.comp"):
    """Each of len(inputs) invocations reads its row of inputs and writes n_out results."""
    dev = emu.Device("nvidia-h200")
    inputs = np.asarray(inputs, np.float32)
    out = dev.create_buffer(size=inputs.shape[0] * n_out * 4)
    dev.dispatch(dev.create_compute_pipeline(dev.create_shader_module(src, file)),
                 {(0, 0): dev.create_buffer(inputs.ravel()), (0, 1): out}, (inputs.shape[0] // 64, 1, 1))
    return out.read(np.float32).reshape(inputs.shape[0], n_out)


GLSL_IO = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer I { float inp[]; };
layout(set = 0, binding = 1) buffer O { float o[]; };
"""


def test_shared_factor_and_constant_factor_are_taken_out():
    """t + u * t of t = f * u is (f + t) * u, t kept for its other use (randprog fit seed 0's SASS:
    -(t7 + t6 * t7) is FADD floor + t7, FFMA -(..) * t6); p + p is (a + a) * b (seed 19: x1 * x1 +
    x1 * x1 of a dot, FADD x1 + x1 fused into the next add); x - x * k is x * (1 - k) (seed 1100:
    c10 - c10 * -0.245 is FMUL c10, 1.245)."""
    src = GLSL_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float f = inp[i * 3u], u = inp[i * 3u + 1u], z = inp[i * 3u + 2u];
  float t = f * u;
  o[i * 4u] = t;
  o[i * 4u + 1u] = t + u * t;
  o[i * 4u + 2u] = (f * f + f * f) + z;
  o[i * 4u + 3u] = z - z * -0.245;
}"""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((128, 3)).astype(np.float32)
    out = _run_many(src, x, 4)
    f, u, z = x.T
    t = f * u
    assert np.array_equal(out[:, 1], (f + t) * u)
    assert np.array_equal(out[:, 2], (np.float64(f + f) * f + z).astype(np.float32))
    assert np.array_equal(out[:, 3], z * np.float32(1.245))
    assert not np.array_equal(out[:, 1], t + u * t)          # the inputs tell the forms apart
    assert not np.array_equal(out[:, 3], z - z * np.float32(-0.245))
    done, text = _ir(src, "k.comp")
    assert done["factor"] == 3


def test_a_constant_times_a_square_shares_the_square_with_the_shaders_own():
    """GELU's (0.044715 * x) * x + 1 is fma(0.044715, x * x, 1) where x * x is one product with the
    shader's own x * x, so x * x + 1 beside it is rounded first (x * x has a user that is not an add):
    fit2 seed 500051's SASS (FMUL x2, x2 read by FFMA .., 0.044715, 1 and by FADD .., 1), fit seed 1187
    (DECISIONS['fma-constant-factor'])."""
    src = GLSL_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float x = inp[i];
  o[i * 2u] = x * (1.0 + (0.044715 * x) * x);
  o[i * 2u + 1u] = (x * x) + 1.0;
}"""
    x = np.random.default_rng(11).standard_normal(128).astype(np.float32)
    out = _run_many(src, x[:, None], 2)
    xx = x * x
    assert np.array_equal(out[:, 1], xx + np.float32(1))
    assert np.array_equal(out[:, 0], x * _fma32(np.float32(0.044715), xx, np.float32(1)))
    assert not np.array_equal(out[:, 1], _fma32(x, x, np.float32(1)))      # the inputs tell the forms apart
    done, text = _ir(src, "k.comp")
    assert "fma-constant-factor" in text


def _f32(exact) -> np.float32:
    """The f32 nearest an exact rational (ties to even): one rounding."""
    from fractions import Fraction
    f = np.float32(float(exact))
    cands = [f, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(-np.inf))]
    return min(cands, key=lambda c: (abs(Fraction(float(c)) - exact), int(c.view(np.uint32)) & 1))


def _fma32(a, b, c) -> np.ndarray:
    """f32 fma, exact: a * b + c rounded once, elementwise."""
    from fractions import Fraction
    return np.array([_f32(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
                     for x, y, z in np.broadcast(a, b, c)], np.float32)


def test_reassociation_the_driver_does_before_fusing():
    """c - (c + x) is -x (randprog fit seed 216); -(p - q) is q - p, so q is the left product that
    fuses (seed 216: FFMA x1 * c10 - fl(t11 * ..)); k1 + (k2 - v) is (k1 + k2) - v (seed 40: v's
    product, also subtracted by k2 - v itself, rounded), and k1 - fma(a, b, k2) is fma(-a, b, k1 -
    k2) (seed 32)."""
    src = GLSL_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float a = inp[i * 4u], b = inp[i * 4u + 1u], c = inp[i * 4u + 2u], d = inp[i * 4u + 3u];
  float s = c + a;
  o[i * 5u] = s;
  o[i * 5u + 1u] = min(c, d) - (c - s);
  o[i * 5u + 2u] = -((a * b) - (c * d));
  float t = a * a + 1.771;
  float u = 0.125 - b * d;
  o[i * 5u + 3u] = (t * b) * (1.5 - t) + (0.7978846 + u);
  o[i * 5u + 4u] = u;
}"""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((128, 4)).astype(np.float32)
    out = _run_many(src, x, 5)
    a, b, c, d = x.T
    f32 = np.float32
    assert np.array_equal(out[:, 1], np.minimum(c, d) + a)
    assert np.array_equal(out[:, 2], _fma32(c, d, -(a * b)))
    t = _fma32(a, a, f32(1.771))
    v = (f32(0.7978846) + f32(0.125)) - b * d
    assert np.array_equal(out[:, 3], _fma32(t * b, _fma32(-a, a, f32(1.5) - f32(1.771)), v))
    done, text = _ir(src, "k.comp")
    # f32 1.5 - (a * a + 1.771) and 0.7978846 + (0.125 - b * d) combine their constants before
    # fusing (DECISIONS['shift']: what fma-constants and fold's k1 + (k2 - v) did), same bits
    assert 'contracted = "shift"' in text and 'contracted = "fold"' in text


def test_builtins_written_as_the_drivers_arithmetic():
    """log(x) is log2(x) * ln 2, its product fused into the add around it (randprog fit seed 76's
    SASS); fract(x) is x - floor(x) (seed 152); x / inverseSqrt(y) is x * sqrt(y) (seed 160); (x + k)
    + x is fma(x, 2, k) (seed 99); (x * k1) * (x * k2) is (x * x) * (k1 * k2) (seed 112); tanh(b)'s
    own b * b is the shader's b * b, so that product is rounded (seed 108)."""
    from emu.numerics import nvidia
    src = GLSL_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float a = inp[i * 3u], b = inp[i * 3u + 1u], c = inp[i * 3u + 2u];
  float y = abs(a) + 1.0;
  o[i * 5u] = c - log(y);
  o[i * 5u + 1u] = b / inversesqrt(y);
  o[i * 5u + 2u] = (a + 1.702) + a;
  o[i * 5u + 3u] = (a * 0.5) * (a * 0.5) + c;
  o[i * 5u + 4u] = tanh(b) + (b * b + c);
}"""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((128, 3)).astype(np.float32)
    out = _run_many(src, x, 5)
    a, b, c = x.T
    y = np.abs(a) + np.float32(1)
    f32 = np.float32
    assert np.array_equal(out[:, 0], _fma32(nvidia.call("log2", "f32", y), -f32(0.6931471805599453), c))
    assert np.array_equal(out[:, 1], b * nvidia.call("sqrt", "f32", y))
    assert np.array_equal(out[:, 2], _fma32(a, f32(2), f32(1.702)))
    assert np.array_equal(out[:, 3], _fma32(a * a, f32(0.25), c))
    assert np.array_equal(out[:, 4], nvidia.call("tanh", "f32", b) + (b * b + c))
    done, text = _ir(src, "k.comp")
    assert 'contracted = "divide-rsqrt"' in text and done["algebra"] >= 1
    assert '{fn = "log2"}' in text and '{fn = "log"}' not in text


def test_reciprocal_square_root_is_one_rsq():
    from emu.numerics import sfu
    src = """@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  a[g.x + 64u] = 1.0 / sqrt(a[g.x]);
}"""
    x = np.random.default_rng(1).uniform(0.5, 8, 64).astype(np.float32)
    dev = emu.Device("nvidia-h200")
    buf = dev.create_buffer(np.concatenate([x, np.zeros(64, np.float32)]))
    dev.dispatch(dev.create_compute_pipeline(dev.create_shader_module(src, "r.wgsl")), {(0, 0): buf}, (1, 1, 1))
    assert buf.read(np.float32)[64:].view(np.uint32).tolist() == sfu.rsq(x).view(np.uint32).tolist()


def test_precise_is_never_fused():
    glsl = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer O { float o[]; };
void main() {
  precise float r = o[0] * o[0] + o[1];
  o[2] = r;
}"""
    assert _run(glsl, [A, C, 0], file="p.comp")[2] == 0
    assert _run(glsl.replace("precise ", ""), [A, C, 0], file="p.comp")[2] == FUSED


def test_every_decision_names_its_evidence():
    for name, why in DECISIONS.items():
        assert why and ("npz" in why or "README" in why or "llama" in why or "random" in why), name


def test_a_load_in_a_loop_is_not_the_value_of_one_before_it_when_the_loop_writes_the_variable():
    """Value numbering across a loop (llama.cpp's bf16 mul_mat_vec, whose sums came out doubled):
    the inner loop's body loads `i` before storing `i + 1`; from its second iteration on that load
    reads the store, so it is not the load of `i` in the outer loop's condition. Same values as
    the reference profile, which runs no compiler model."""
    from emu.isa.ir import PUSH_CONSTANTS
    src = (ROOT / "tests" / "shaders" / "spirv" / "loop_carried_load.comp").read_text()
    for profile in ("reference", "nvidia-h200"):
        dev = emu.Device(profile)
        pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "loop_carried_load.comp"))
        o = dev.create_buffer(size=8 * 4)
        dev.dispatch(pipe, {(0, 0): o, PUSH_CONSTANTS: dev.create_buffer(np.array([6, 1], np.uint32))}, 1)
        assert o.read(np.uint32).tolist() == [1, 5, 9, 13, 17, 21, 0, 0], profile


GLSL_HEAD = """#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer O { float o[]; };
"""


def test_widened_f16_product_fuses_into_its_first_add_only():
    """h = 1 + 2^-10 (an f16): h * h = 1 + 2^-9 + 2^-20 exactly, 1 + 2^-9 in f16. Fused into
    -(1 + 2^-9) it leaves 2^-20; the f16-rounded product leaves 0 (randprog fit, DECISIONS['fma-widened'])."""
    glsl = GLSL_HEAD + """void main() {
  float16_t h = float16_t(o[0]);
  float w = float(h * h);
  float c = o[1];
  o[2] = w + c;             // the first add of w: fma(float(h), float(h), c)
  o[3] = w + c;             // numbered as the same add
  o[4] = c - (-w);          // a later user: the rounded product
  o[5] = w - w;             // x - x never fuses
}"""
    out = _run(glsl, [1 + 2.0 ** -10, -(1 + 2.0 ** -9), 0, 0, 0, 0], file="w.comp")
    assert out[2] == 2.0 ** -20 and out[3] == 2.0 ** -20 and out[4] == 0 and out[5] == 0
    _, text = _ir(glsl, file="w.comp")
    assert text.count('contracted = "fma-widened"') == 1


def test_smoothstep_with_constant_edges_folds_them_into_one_fma():
    """smoothstep(-1, 2, x): t = fma(x, k, k), k = RCP(3) (randprog fit seeds 48, 104); variable
    edges keep (x - e0) * RCP(e1 - e0)."""
    from emu.numerics import nvidia, sfu
    glsl = GLSL_HEAD + """void main() {
  o[1] = smoothstep(-1.0, 2.0, o[0]);
  o[2] = smoothstep(o[3], o[4], o[0]);
}"""
    x = np.float32(0.2)
    out = _run(glsl, [x, 0, 0, -1.0, 2.0], file="s.comp")
    k = sfu.rcp(np.float32(3))
    t = [nvidia._fma(x, k, k), nvidia.binary("mul", "f32", nvidia.binary("sub", "f32", x, np.float32(-1)), k)]
    assert t[0] != t[1]
    want = [nvidia.binary("mul", "f32", nvidia.binary("mul", "f32", v, v), nvidia._fma(np.float32(-2), v, np.float32(3)))
            for v in t]
    assert out[1] == want[0] and out[2] == want[1]
    _, text = _ir(glsl, file="s.comp")
    assert text.count('contracted = "expand-constant-edges"') == 1


def test_x_minus_x_and_zero_times_x_are_plus_zero():
    """The random 'func' programs' h(a, a) = (a - b) * b: +0 on the H200 for every a, where IEEE
    gives -0 for a negative a (randprog fit seed 3, DECISIONS['algebra'])."""
    glsl = GLSL_HEAD + """float h(float a, float b) { return (a - b) * b; }
void main() {
  float a = o[0];
  o[1] = h(a, a);
  o[2] = 0.0 * a;
}"""
    out = _run(glsl, [-1.5, 7, 7], file="a.comp")
    assert out.view(np.uint32)[1:].tolist() == [0, 0]
    done, _ = _ir(glsl, file="a.comp")
    assert done["fold"] + done["algebra"] == 3          # a - a, then 0 * a, and 0.0 * a (fold runs first)


F16_SUM_LOOP = {
    "p.comp": GLSL_HEAD + """void main() {
  float16_t acc = 0.0hf;
  for (uint k = 0u; k < 5u; k++) {
    acc = acc + float16_t(o[k]) * float16_t(o[(k + 1u) % 5u]);
  }
  o[5] = float(acc);
}""",
    # WGSL's `var k = 0u` is the counter's start (Tint stores it before the loop, as glslang does):
    # through Dawn the driver unrolls and pairs the same way (randprog fit seeds 18, 30, 46 through Dawn)
    "p.wgsl": "enable f16;\n" + HEAD + """@compute @workgroup_size(1) fn main() {
  var acc: f16 = 0.0h;
  for (var k: u32 = 0u; k < 5u; k = k + 1u) {
    acc = (acc + (f16(o[k]) * f16(o[(k + 1u) % 5u])));
  }
  o[5] = f32(acc);
}""",
}


def _hfma(x, y, z):
    return (x.astype(np.float64) * y.astype(np.float64) + z.astype(np.float64)).astype(np.float16)


def _f16_sum_loop(file, n, seed):
    """(source, a[k], b[k], results) of F16_SUM_LOOP[file] over n products, 64 random inputs."""
    src = F16_SUM_LOOP[file].replace("5u", f"{n}u")
    vals = np.random.default_rng(seed).uniform(-4, 4, (64, n)).astype(np.float16)
    got = np.array([_run(src, list(v.astype(np.float32)) + [0] * (6 - n), file=file)[5] for v in vals], np.float16)
    return src, [vals[:, k] for k in range(n)], [vals[:, (k + 1) % n] for k in range(n)], got


@pytest.mark.parametrize("file", sorted(F16_SUM_LOOP))
def test_f16_sum_of_products_loop_runs_as_two_hfma2_halves(file):
    """for (k < 5) acc += a[k] * a[k + 1] in f16: p0 and p1 rounded, p2 fused into p0's half and
    p3 into p1's, the halves added, p4 fused last (the driver's SASS for randprog fit seed 18;
    DECISIONS['pair-f16']), in GLSL and in WGSL through Dawn."""
    src, a, b, got = _f16_sum_loop(file, 5, 4)
    h0, h1 = _hfma(a[0], b[0], np.float16(0)), _hfma(a[1], b[1], np.float16(0))
    h0, h1 = _hfma(a[2], b[2], h0), _hfma(a[3], b[3], h1)
    want = _hfma(a[4], b[4], (h0.astype(np.float64) + h1).astype(np.float16))
    chain = np.zeros(64, np.float16)
    for k in range(5):
        chain = _hfma(a[k], b[k], chain)
    assert (got == want).all() and (got != chain).any()
    done, text = _ir(src, file=file)
    assert done["unroll-f16"] == 1 and done["pair-f16"] == 1 and "loop" not in text


@pytest.mark.parametrize("file", sorted(F16_SUM_LOOP))
def test_f16_sum_of_three_products_is_one_chain_from_the_first_product(file):
    """for (k < 3) acc += a[k] * a[k + 1] in f16: p0 rounded, then p1 and p2 each fused into the
    running sum (HMUL2, HFMA2, HFMA2 in the driver's SASS of randprog fit seed 66), not p0 fused
    into a rounded p1 as the left product of p0 + p1 would be."""
    src, a, b, got = _f16_sum_loop(file, 3, 5)
    want = _hfma(a[2], b[2], _hfma(a[1], b[1], (a[0] * b[0]).astype(np.float16)))
    left = _hfma(a[2], b[2], _hfma(a[0], b[0], (a[1] * b[1]).astype(np.float16)))
    assert (got == want).all() and (got != left).any()
    done, text = _ir(src, file=file)
    assert done["unroll-f16"] == 1 and done["pair-f16"] == 1 and text.count('contracted = "pair-f16"') == 2


ROUND_TRIPS = {
    "r.wgsl": "enable f16;\n" + HEAD + """@compute @workgroup_size(1) fn main() {
  let h: f16 = f16(o[0]);
  o[1] = f32(max(h, h));
  o[2] = f32(-h);
  o[3] = f32(abs(-h));
  o[4] = f32(select(h, h, o[0] < 0.0));
  o[5] = f32(min(h, h + 0.0h));
  o[6] = f32(clamp(h, -4.0h, 4.0h));
}""",
    "r.comp": GLSL_HEAD + """void main() {
  float16_t h = float16_t(o[0]);
  o[1] = float(max(h, h));
  o[2] = float(-h);
  o[3] = float(abs(-h));
  o[4] = float(o[0] < 0.0 ? h : h);
  o[5] = float(min(h, h + 0.0hf));
  o[6] = float(clamp(h, -4.0hf, 4.0hf));
}""",
}


@pytest.mark.parametrize("file", sorted(ROUND_TRIPS))
def test_f16_round_trips_see_through_what_changes_no_bits(file):
    """f32(f16(x)) stores x unrounded also through max(h, h), select(h, h, c), a negation or an
    abs (randprog fit seeds 209, 497, 741, 813, 1121: the H200 stored the f32 input's bits, 128 of
    128); clamp(h, -4, 4) rounds (fit seed 813's o0). min(h, h + 0) is h once x + 0 is folded."""
    x = np.float32(-1 / 3)
    out = _run(ROUND_TRIPS[file], [x] + [0] * 6, file=file)
    h = np.float32(np.float16(x))
    assert out.view(np.uint32).tolist() == np.array([x, x, -x, -x, x, x, h], np.float32).view(np.uint32).tolist()
    done, _ = _ir(ROUND_TRIPS[file], file=file)
    assert done["f16-round-trip"] == 5


def test_a_branch_that_only_computes_is_a_select_of_both():
    """GLSL's c ? x * y : k - x * y reaches the driver as an if; the driver runs both branches and
    selects (SEL in the SASS of randprog fit seed 13), so x * y is one product with two users and
    k - x * y rounds it first, as WGSL's select does; x < x is false, so (x < x) ? .. : t * t + s
    fuses t * t into the add (fit seed 25)."""
    glsl = GLSL_HEAD + """void main() {
  float16_t x = float16_t(o[0]), y = float16_t(o[1]), k = 1.5hf;
  float16_t t = (x < y) ? (x * y) : (k - (x * y));
  o[2] = float(t);
  float16_t u = ((x < x) ? (k * y) : (y * y)) + x;
  o[3] = float(u);
}"""
    x, y, k = np.float16(2.53515625), np.float16(-1.1484375), np.float16(1.5)
    out = _run(glsl, [x, y, 0, 0], file="b.comp")
    rounded = np.float16(k - np.float16(x * y))
    fused = np.float16(np.float64(k) - np.float64(x) * np.float64(y))
    u = np.float16(np.float64(y) * np.float64(y) + np.float64(x))
    assert rounded != fused and u != np.float16(np.float16(y * y) + x)
    assert out[2:].tolist() == [np.float32(rounded), np.float32(u)]
    done, text = _ir(glsl, file="b.comp")
    assert done["flatten"] == 2 and "if " not in text


QUOTIENTS = {
    "q.wgsl": "enable f16;\n" + HEAD + """@compute @workgroup_size(1) fn main() {
  o[3] = (o[0] / o[1]) / o[2];
  o[7] = f32((f16(o[4]) / f16(o[5])) / f16(o[6]));
}""",
    "q.comp": GLSL_HEAD + """void main() {
  o[3] = (o[0] / o[1]) / o[2];
  o[7] = float((float16_t(o[4]) / float16_t(o[5])) / float16_t(o[6]));
}""",
}


@pytest.mark.parametrize("file", sorted(QUOTIENTS))
def test_a_quotient_divided_again_is_one_reciprocal_of_the_product(file):
    """(x / y) / z is x * RCP(y * z), f32 and f16 (the SASS of randprog fit seeds 852 and 297:
    the divisors multiplied, one MUFU.RCP, DECISIONS['division-chain'])."""
    from emu.numerics import nvidia
    f32 = np.array([1.415642499923706, 3.6353671550750732, 3.413966655731201], np.float32)
    f16 = np.array([3.6015625, 1.546875, 0.97607421875], np.float16)
    out = _run(QUOTIENTS[file], list(f32) + [0] + list(f16.astype(np.float32)) + [0], file=file)
    for (x, y, z), t, got in ((f32, "f32", out[3]), (f16, "f16", out[7])):
        joined = nvidia.binary("div", t, x, nvidia.binary("mul", t, y, z))
        assert joined != nvidia.binary("div", t, nvidia.binary("div", t, x, y), z)
        assert got == np.float32(joined)
    done, _ = _ir(QUOTIENTS[file], file=file)
    assert done["division-chain"] == 2


def test_f16_joined_divisor_is_the_shaders_own_product_and_a_divided_quotient_is_inverted():
    """(0.25 / t) / t is 0.25 * RCP(t * t), and that t * t is the one of t / (t * t + 0.25), so
    it is rounded there (a user that is not an add); a / (q / c) is (a * c) * RCP(q) (the SASS of
    randprog judge seed 100453: HMUL2 t4 * t4, its MUFU.RCP.F16 and HADD2 0.25; HMUL2 x1 * (x1 - x2),
    then * RCP(t6); DECISIONS['division-chain'])."""
    from emu.numerics import nvidia
    src = GLSL16_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float16_t a = float16_t(inp[i * 3u]), b = float16_t(inp[i * 3u + 1u]), c = float16_t(inp[i * 3u + 2u]);
  float16_t t = a - b;
  float16_t q = (0.25hf / t) / t;
  o[i * 3u] = float(t / ((t * t) + 0.25hf));
  o[i * 3u + 1u] = float(q);
  o[i * 3u + 2u] = float(a / (q / c));
}"""
    rng = np.random.default_rng(100453)
    v = rng.uniform(0.5, 4, (128, 3)).astype(np.float16).astype(np.float32)
    v[:, 1] = -v[:, 1]
    a, b, c = v.T.astype(np.float16)
    div = lambda x, y: np.array([nvidia.binary("div", "f16", p, r) for p, r in zip(x, y)], np.float16)  # noqa: E731
    t = (a - b).astype(np.float16)
    tt = (t * t).astype(np.float16)
    want0, fused0 = div(t, (tt + np.float16(0.25)).astype(np.float16)), div(t, _fma16(t, t, 0.25))
    q = div(np.full(128, 0.25, np.float16), tt)
    want2, chained2 = div((a * c).astype(np.float16), q), div(a, div(q, c))
    out = _run_many(src, v, 3).astype(np.float16)
    assert np.array_equal(out[:, 0], want0) and np.array_equal(out[:, 1], q) and np.array_equal(out[:, 2], want2)
    assert not np.array_equal(want0, fused0) and not np.array_equal(want2, chained2)
    done, _ = _ir(src, file="k.comp")
    assert done["division-chain"] == 2


def test_f16_constant_factors_of_products_used_only_there_are_one_constant():
    """(x * k) * (x * k) + c, x * k used nowhere else, is fma(x * x, f16(k * k), c) also where k is
    not a power of two (the SASS of randprog fit seed 349: HFMA2 2.0254, x2 * x2, 1e-5 for
    log((x2 * 1.423) * (x2 * 1.423) + 1e-5)); where x * k has another user it stays (judge seed
    100224, f32: t8 * t8 of t8 = x3 * 1.702), DECISIONS['algebra']."""
    src = GLSL16_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float16_t x = float16_t(inp[i * 2u]), y = float16_t(inp[i * 2u + 1u]);
  float16_t u = y * 1.421875hf;
  o[i * 3u] = float(((x * 1.421875hf) * (x * 1.421875hf)) + 0.25hf);
  o[i * 3u + 1u] = float((u * u) + 0.25hf);
  o[i * 3u + 2u] = float(u);
}"""
    rng = np.random.default_rng(349)
    v = rng.uniform(-6, 6, (128, 2)).astype(np.float16).astype(np.float32)
    x, y = v.T.astype(np.float16)
    k = np.float16(1.421875)
    want = _fma16((x * x).astype(np.float16), k * k, 0.25)
    xk = (x * k).astype(np.float16)
    u = (y * k).astype(np.float16)
    out = _run_many(src, v, 3).astype(np.float16)
    assert np.array_equal(out[:, 0], want) and not np.array_equal(want, _fma16(xk, xk, 0.25))
    assert np.array_equal(out[:, 1], _fma16(u, u, 0.25)) and np.array_equal(out[:, 2], u)
    assert not np.array_equal(_fma16(u, u, 0.25), _fma16((y * y).astype(np.float16), k * k, 0.25))


def test_f16_a_term_added_and_subtracted_again_cancels():
    """(x + y) - (y - k) is x + k and (x + y) - (y + z) is x - z, one rounding each (the SASS of
    randprog fit seed 89: HADD2 x4, 0.8516 for (x4 + x3) - (x3 - 0.852); judge seed 100209),
    DECISIONS['fold'], or DECISIONS['cancel'] before it where y is one shader value, as here."""
    src = GLSL16_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float16_t x = float16_t(inp[i * 3u]), y = float16_t(inp[i * 3u + 1u]), z = float16_t(inp[i * 3u + 2u]);
  o[i * 2u] = float((x + y) - (y - 0.75hf));
  o[i * 2u + 1u] = float((x + y) - (y + z));
}"""
    rng = np.random.default_rng(89)
    v = np.stack([rng.uniform(-4, 4, 128), rng.uniform(-900, 900, 128), rng.uniform(-4, 4, 128)], 1)
    v = v.astype(np.float16).astype(np.float32)
    x, y, z = v.T.astype(np.float16)
    out = _run_many(src, v, 2).astype(np.float16)
    assert np.array_equal(out[:, 0], (x + np.float16(0.75)).astype(np.float16))
    assert np.array_equal(out[:, 1], (x - z).astype(np.float16))
    assert not np.array_equal(out[:, 0], ((x + y).astype(np.float16) - (y - np.float16(0.75)).astype(np.float16)))
    done, _ = _ir(src, file="k.comp")
    assert done["cancel"] + done["fold"] >= 2


def test_a_zero_over_y_and_a_difference_added_back_are_folded():
    """(x - x) / y is +0 for a negative y (randprog fit seed 601: +0 where IEEE gives -0, 64 of
    64); (x * y - c) + (c + x) is x * y + x, so the product fuses: fma(x, y, x) (fit seed 1089's
    SASS: one HFMA2 of x1 * x3 + x1)."""
    src = HEAD + """@compute @workgroup_size(1) fn main() {
  o[4] = (o[0] - o[0]) / o[3];
  o[5] = ((o[0] * o[1]) - o[2]) + (o[2] + o[0]);
}"""
    x, y = np.float32(1.6369616985321045), np.float32(-1.5953199863433838)
    out = _run(src, [x, y, 1000.0, -3.0, 7, 7])
    fused = np.float32(np.float64(x) * np.float64(y) + np.float64(x))
    assert fused != np.float32(np.float32(x * y) + x)
    assert out.view(np.uint32)[4] == 0 and out[5] == fused
    done, _ = _ir(src)
    assert done["fold"] >= 3                     # x - x, 0 / y, the regrouped sum


def test_f16_constant_factor_and_constant_divisor_are_one_constant():
    """f16 (x * 1.423 + 1) / 3 is fma(x, f16(1.423 * r), r), r = f16(1 / 3): the two constants
    multiplied when the driver compiles (IMAD.MOV 0x3796 into HFMA2.SAT in the SASS of randprog fit
    seed 821's smoothstep(-1, 2, x4 * 1.423))."""
    src = "enable f16;\n" + HEAD + """@compute @workgroup_size(1) fn main() {
  o[1] = f32((f16(o[0]) * 1.423h + 1.0h) / 3.0h);
}"""
    x, k, r = np.float16(-1.904296875), np.float16(1.423), np.float16(1 / 3)
    kr = np.float16(np.float32(k) * np.float32(r))
    assert kr.view(np.uint16) == 0x3796
    want = np.float16(np.float64(x) * np.float64(kr) + np.float64(r))
    assert want != np.float16(np.float64(np.float16(x * k)) * np.float64(r) + np.float64(r))
    assert _run(src, [x, 0])[1] == np.float32(want)


def test_f16_clamp_from_zero_of_a_nan_difference_gives_the_upper_bound():
    """f16 clamp(a - b, 0, 2) is HFMA2.RELU then HMNMX2 with 2: the .RELU keeps a NaN and the min
    drops it, so NaN gives 2 (randprog fit seed 81: -0.70654297 = 2 * -0.3533 where IEEE's clamp
    gives 0); clamp(v, 0, 1) is .SAT, NaN gives 0 (fit seeds 645, 777); clamp(v, -1, 2) is two
    HMNMX2, NaN gives -1."""
    src = "enable f16;\n" + HEAD + """@compute @workgroup_size(1) fn main() {
  let a = f16(o[0]);
  let b = f16(o[1]);
  o[2] = f32(clamp(a - b, 0.0h, 2.0h));
  o[3] = f32(clamp(b - a, 0.0h, 1.0h));
  o[4] = f32(clamp(a + -b, -1.0h, 2.0h));
}"""
    inf = np.float32(np.inf)
    assert _run(src, [inf, inf, 7, 7, 7])[2:].tolist() == [2.0, 0.0, -1.0]
    assert _run(src, [1.5, 0.25, 7, 7, 7])[2:].tolist() == [1.25, 0.0, 1.25]
    done, _ = _ir(src)
    assert done["relu-f16"] == 1


def test_vector_helpers_are_scalar_arithmetic_that_numbering_sees_through():
    """dot / length / normalize of constructed vectors are the driver's scalar sequence (y * y'
    first, then x, z added as fused products), so equal components are one product
    (DECISIONS['expand-vector'])."""
    from emu.numerics import nvidia
    glsl = GLSL_HEAD + """void main() {
  float a = o[0], b = o[1], c = abs(o[0]) + 0.5;
  vec3 u = vec3(a, b, c), w = vec3(a, a, c);
  o[2] = dot(u, u);
  o[3] = length(w);
  o[4] = normalize(u).x;
}"""
    vals = np.array([1.3, -0.7, 0, 0, 0], np.float32)
    out = _run(glsl, vals, file="v.comp")
    u = np.array([vals[0], vals[1], abs(vals[0]) + np.float32(0.5)], np.float32)
    assert out[2] == nvidia.call("dot", "f32", u, u)
    assert out[4] == nvidia.call("normalize", "f32", u)[0]
    done, text = _ir(glsl, file="v.comp")
    assert '"dot"' not in text and '"normalize"' not in text and '"length"' not in text


GLSL16_IO = GLSL_IO.replace("#version 450\n", "#version 450\n#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n")


def _fma16(a, b, c):
    """f16 fma, one rounding (the f16 product and sum are exact in f64)."""
    a, b, c = (np.asarray(v, np.float16).astype(np.float64) for v in (a, b, c))
    return (a * b + c).astype(np.float16)


def test_f16_mix_of_a_difference_from_its_first_operand_is_one_fma():
    """mix(a, a - b, t) is fma(t, (a - b) - a, a) and (a - b) - a is -b: one HFMA2 -b, t, a (the
    driver's SASS of randprog fit seed 29: HFMA2 -x2, fract(x2), x4 for mix(x4, x4 - x2, fract(x2)))."""
    src = GLSL16_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float16_t a = float16_t(inp[i * 3u]), b = float16_t(inp[i * 3u + 1u]), t = float16_t(inp[i * 3u + 2u]);
  o[i] = float(mix(a, a - b, fract(t)));
}"""
    rng = np.random.default_rng(29)
    x = rng.uniform(-40, 40, (128, 3)).astype(np.float16).astype(np.float32)
    a, b, t = x.T.astype(np.float16)
    f = (t - np.floor(t)).astype(np.float16)
    out = _run_many(src, x, 1)[:, 0]
    want = _fma16(f, -b, a)
    unfolded = _fma16(f, ((a - b).astype(np.float16) - a).astype(np.float16), a)
    assert np.array_equal(out, want.astype(np.float32)) and not np.array_equal(want, unfolded)


def test_f16_division_fuses_into_an_add_of_another_fma():
    """f16 (a + b) / c - (d - e * f) is fma(a + b, RCP(c), fma(e, f, -d)): the division fuses
    although the add's other operand is an fma (the SASS of randprog fit seed 189: HFMA2 x1, t4 *
    t3, -clamp, then HFMA2 (x2 + x1), RCP, that; f32 alike),
    DECISIONS['fma-division-beside-fma']."""
    from emu.numerics import nvidia
    src = GLSL16_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float16_t a = float16_t(inp[i * 5u]), b = float16_t(inp[i * 5u + 1u]), c = float16_t(inp[i * 5u + 2u]);
  float16_t d = float16_t(inp[i * 5u + 3u]), e = float16_t(inp[i * 5u + 4u]);
  o[i] = float(((a + b) / c) - (d - (e * a)));
}"""
    rng = np.random.default_rng(189)
    x = rng.uniform(-4, 4, (128, 5)).astype(np.float16).astype(np.float32)
    a, b, c, d, e = x.T.astype(np.float16)
    s = (a + b).astype(np.float16)
    rcp = np.array([nvidia.binary("div", "f16", np.float16(1), v) for v in c], np.float16)
    inner = _fma16(e, a, -d)
    want = _fma16(s, rcp, inner)
    rounded = (np.array([nvidia.binary("div", "f16", p, q) for p, q in zip(s, c)], np.float16) + inner).astype(np.float16)
    out = _run_many(src, x, 1)[:, 0]
    assert np.array_equal(out.view(np.uint32), want.astype(np.float32).view(np.uint32))
    assert not np.array_equal(want, rounded)
    _, text = _ir(src, file="k.comp")
    assert text.count('contracted = "fma-division-beside-fma"') == 1 and text.count('contracted = "fma"') == 1


def test_f32_division_fuses_into_an_add_of_another_fma():
    """f32 x / y - (z - x * w) is fma(x, RCP(y), fma(x, w, -z)), as in f16: fit2 seed 500232's SASS
    (x2 / (x3 * x3 + 1) - (x2 * x4 - x2): FFMA x2, RCP(..), -(FFMA ..)), fit seeds 64, 291, 704, 840
    (DECISIONS['fma-division-beside-fma'])."""
    from emu.numerics import sfu
    src = GLSL_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float x = inp[i * 4u], y = inp[i * 4u + 1u], z = inp[i * 4u + 2u], w = inp[i * 4u + 3u];
  o[i] = (x / y) - (z - x * w);
}"""
    x, y, z, w = np.random.default_rng(232).uniform(0.5, 4, (4, 128)).astype(np.float32)
    rcp = sfu.rcp(y)
    inner = _fma32(-x, w, z)
    want = _fma32(x, rcp, -inner)
    out = _run_many(src, np.stack([x, y, z, w], 1), 1)[:, 0]
    assert np.array_equal(out.view(np.uint32), want.view(np.uint32))
    assert not np.array_equal(want, x * rcp - inner)          # the inputs tell the forms apart
    _, text = _ir(src, file="k.comp")
    assert text.count('contracted = "fma-division-beside-fma"') == 1


def test_f16_quotient_by_a_square_root_is_a_product_by_its_reciprocal_square_root():
    """f16 x / sqrt(y) is x * RSQ(y), the sqrt kept for its other use (the SASS of randprog fit
    seed 257: MUFU.SQRT.F16 and MUFU.RSQ.F16 of one value, then HMUL2; DECISIONS['divide-sqrt-f16']);
    f16 (x + k) + x stays two adds (seed 949's SASS: HADD2 x2, 2 then HADD2 x2), where f32 is fma(x, 2, k)."""
    from emu.numerics import nvidia
    src = GLSL16_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float16_t x = float16_t(inp[i * 2u]), y = float16_t(inp[i * 2u + 1u]);
  float16_t r = sqrt(y);
  o[i * 3u] = float(r);
  o[i * 3u + 1u] = float(x / r);
  o[i * 3u + 2u] = float((x + 1.703125hf) + x);
}"""
    rng = np.random.default_rng(257)
    v = np.stack([rng.uniform(-8, 8, 128), rng.uniform(0.01, 30, 128)], 1).astype(np.float16).astype(np.float32)
    x, y = v.T.astype(np.float16)
    rsq = np.array([nvidia.call("inverseSqrt", "f16", t) for t in y], np.float16)
    root = np.array([nvidia.call("sqrt", "f16", t) for t in y], np.float16)
    want = (x * rsq).astype(np.float16)
    quotient = np.array([nvidia.binary("div", "f16", p, q) for p, q in zip(x, root)], np.float16)
    twice = ((x + np.float16(1.703125)).astype(np.float16) + x).astype(np.float16)
    out = _run_many(src, v, 3).astype(np.float16)
    assert np.array_equal(out[:, 1], want) and not np.array_equal(want, quotient)
    assert np.array_equal(out[:, 0], root) and np.array_equal(out[:, 2], twice)
    assert not np.array_equal(twice, _fma16(x, 2, 1.703125))
    done, text = _ir(src, file="k.comp")
    assert done["rsqrt"] == 1 and 'contracted = "divide-sqrt-f16"' in text


@pytest.mark.parametrize("file", ["k.comp", "k.wgsl"])
def test_f16_log_is_lg2_times_ln2_open_to_fusing(file):
    """f16 log(x) is MUFU.LG2.F16 then HMUL2 by f16(ln 2), and that product fuses into the add
    around it: log(x * x + 1) - y / (|z| + 1e-5) is HFMA2 lg2, 0.69336, -(y * RCP) (the driver's SASS
    of randprog fit seed 37; seed 865: HFMA2 R7, 0.693359375, |R6|)."""
    from emu.numerics import nvidia
    glsl = GLSL16_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float16_t a = float16_t(inp[i * 2u]), b = float16_t(inp[i * 2u + 1u]);
  o[i] = float(log(a * a + 1.0hf) + b);
}"""
    wgsl = """enable f16;
@group(0) @binding(0) var<storage, read> inp: array<f32>;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  let a = f16(inp[i * 2u]);
  let b = f16(inp[i * 2u + 1u]);
  o[i] = f32(log(a * a + 1.0h) + b);
}"""
    rng = np.random.default_rng(37)
    x = rng.uniform(-4, 4, (128, 2)).astype(np.float16).astype(np.float32)
    a, b = x.T.astype(np.float16)
    lg = nvidia.call("lg2_f16", "f16", _fma16(a, a, np.float16(1)))
    ln2 = np.float16(0.6931471805599453)
    want = _fma16(lg, ln2, b)
    rounded = ((lg * ln2).astype(np.float16) + b).astype(np.float16)
    out = _run_many(glsl if file == "k.comp" else wgsl, x, 1, file=file)[:, 0]
    assert np.array_equal(out, want.astype(np.float32)) and not np.array_equal(want, rounded)


@pytest.mark.parametrize("file", ["k.comp", "k.wgsl"])
def test_f16_smoothstep_of_a_shifted_value_folds_the_shift_into_its_constant(file):
    """f16 smoothstep(-1, 2, 0.044715 + x): t = (x + (0.044715 + 1)) * r, r = f16(1 / 3), is
    HFMA2.SAT x, r, f16(1.0447) * r = 0.34814 (the driver's SASS of randprog fit seed 73); the
    shift is not rounded on its own first."""
    glsl = GLSL16_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  o[i] = float(smoothstep(-1.0hf, 2.0hf, 0.044715hf + float16_t(inp[i])));
}"""
    wgsl = """enable f16;
@group(0) @binding(0) var<storage, read> inp: array<f32>;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  o[gid.x] = f32(smoothstep(-1.0h, 2.0h, 0.044715h + f16(inp[gid.x])));
}"""
    from emu.numerics.tint import quantize_f16
    x = np.linspace(-1.2, 2.2, 128).astype(np.float16)
    h = np.float16
    # Tint's literal is truncated toward zero; its 3 - 2 * t fuses: fma(-2, t, 3)
    shift = h(0.044715) if file == "k.comp" else quantize_f16(0.044715)
    r = h(1 / 3)
    kr = h(np.float32(h(shift + h(1))) * np.float32(r))
    assert kr == h(0.34814453125)

    def smooth(t):
        t = np.clip(t, h(0), h(1)).astype(h)
        poly = ((h(3) - t).astype(h) - t).astype(h) if file == "k.comp" else _fma16(h(-2), t, h(3))
        return ((t * t).astype(h) * poly).astype(h)
    want = smooth(_fma16(x, r, kr))
    assert not np.array_equal(want, smooth(_fma16((shift + x).astype(h), r, r)))
    out = _run_many(glsl if file == "k.comp" else wgsl, x.astype(np.float32)[:, None], 1, file=file)[:, 0]
    assert np.array_equal(out, want.astype(np.float32))


def test_f16_a_times_b_and_b_times_a_are_one_product():
    """f16 x4 * x3 and x3 * x4 are one HMUL2 (value numbering takes a commutative op's operands in
    either order, f16 as f32): its use in a select is not an add, so the product is rounded for
    the add too (the driver's SASS of randprog fit seed 917: HMUL2 R3, then HADD2 R3 + (x3 + x3) and
    SEL R3)."""
    src = GLSL16_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float16_t a = float16_t(inp[i * 3u]), b = float16_t(inp[i * 3u + 1u]), c = float16_t(inp[i * 3u + 2u]);
  o[i * 2u] = float((a * b) + (b + b));
  o[i * 2u + 1u] = float((c < a) ? (b * a) : c);
}"""
    rng = np.random.default_rng(917)
    x = rng.uniform(-3, 3, (128, 3)).astype(np.float16).astype(np.float32)
    a, b, c = x.T.astype(np.float16)
    p = (a * b).astype(np.float16)
    out = _run_many(src, x, 2)
    want = (p + (b + b).astype(np.float16)).astype(np.float16)
    assert np.array_equal(out[:, 0], want.astype(np.float32))
    assert not np.array_equal(want, _fma16(a, b, (b + b).astype(np.float16)))
    assert np.array_equal(out[:, 1], np.where(c < a, p, c).astype(np.float32))


def test_sums_cancel_collect_like_terms_and_factor_through_products():
    """The driver's reassociation (DECISIONS['cancel'], 'like-terms', 'factor', 'distribute',
    'algebra'), each form in the SASS of a random program: (t - a) - (t - c) is c - a (fit seed 724:
    FADD x2, -x1); ((c * (c + a)) + c * c) / c is fma(c, 2, a) (seed 740); dot((a, c, a * c), (c, a -
    0.5, a)) is c * fma(a, a, fma(a, 2, -0.5)) (seed 143's helper: c taken out of all three
    products, a + (a - 0.5) collected); -2.425 * (1.5 + a) is fma(a, -2.425, -3.6375) (seed 664);
    a * (f / a) is f (seed 276); (a * 0.3) * (a * 0.3) + 1e-5 is fma(a * a, 0.09, 1e-5) (seed 196)."""
    src = GLSL_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float a = inp[i * 3u], c = inp[i * 3u + 1u], f = inp[i * 3u + 2u];
  float t = sqrt(abs(f));
  o[i * 6u] = (t - a) - (t - c);
  o[i * 6u + 1u] = ((c * (c + a)) + (c * c)) / c;
  o[i * 6u + 2u] = dot(vec3(a, c, a * c), vec3(c, a - 0.5, a));
  o[i * 6u + 3u] = -2.425 * (1.5 + a);
  o[i * 6u + 4u] = ((a * 0.3) * (a * 0.3)) + 1e-05;
  o[i * 6u + 5u] = a * (f / a);
}"""
    from fractions import Fraction as F
    rng = np.random.default_rng(11)
    x = rng.standard_normal((128, 3)).astype(np.float32)
    out = _run_many(src, x, 6)
    k = np.float32
    for (a, c, f), row in zip(x, out):
        inner = _f32(F(float(a)) * F(float(a)) + F(float(_f32(2 * F(float(a)) - F(1, 2)))))
        want = [c - a, _f32(2 * F(float(c)) + F(float(a))), c * inner,
                _f32(F(float(a)) * F(float(k(-2.425))) + F(float(k(k(-2.425) * k(1.5))))),
                _f32(F(float(a * a)) * F(float(k(k(0.3) * k(0.3)))) + F(float(k(1e-5)))), f]
        assert [v.view(np.uint32) for v in row] == [k(v).view(np.uint32) for v in want]
    t = np.sqrt(np.abs(x[:, 2]))
    assert not np.array_equal(out[:, 0], (t - x[:, 0]) - (t - x[:, 1]))     # the inputs tell the forms apart
    assert not np.array_equal(out[:, 3], k(-2.425) * (k(1.5) + x[:, 0]))
    done, text = _ir(src, "k.comp")
    for decision in ("cancel", "like-terms", "factor", "distribute"):
        assert f'contracted = "{decision}"' in text, decision


def test_f16_operations_of_constants_fold_correctly_rounded_but_not_tanh():
    """(3 * t) / t is 3 in f16 too, sin(3) is then folded to the f16 nearest (0.14111, where
    MUFU.SIN.F16 gives 0.1406) and 1 / that to 7.0859 (the stores of randprog fit2 seed 500693's
    SASS); tanh(t / t) stays MUFU.TANH.F16 of 1 (fit2 seed 500509's SASS). DECISIONS['fold-constants']."""
    from emu.numerics import nvidia
    src = GLSL16_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float16_t t = float16_t(inp[i]);
  float16_t s = sin((3.0hf * t) / t);
  o[i * 3u] = float(s);
  o[i * 3u + 1u] = float(t / s);
  o[i * 3u + 2u] = float(tanh(t / t));
}"""
    rng = np.random.default_rng(500693)
    x = rng.uniform(0.5, 4, (64, 1)).astype(np.float16).astype(np.float32)
    out = _run_many(src, x, 3).astype(np.float16)
    assert set(out[:, 0].view(np.uint16)) == {np.float16(0.14111328125).view(np.uint16)}
    assert nvidia.call("sin", "f16", np.float16(3)) == np.float16(0.140625)          # the run time's
    assert np.array_equal(out[:, 1], (x[:, 0].astype(np.float16) * np.float16(7.0859375)).astype(np.float16))
    tanh1 = np.asarray(nvidia.call("tanh", "f16", np.float16(1)), np.float16).reshape(-1)[0]
    assert set(out[:, 2].view(np.uint16)) == {tanh1.view(np.uint16)}
    done, text = _ir(src, file="k.comp")
    assert done["fold-constants"] >= 1 and '"sin"' not in text and '"tanh"' in text


def test_f16_tanh_squares_nothing_so_its_argument_squared_fuses():
    """f16 tanh is one MUFU.TANH.F16: x * x + 0.25 beside tanh(x) is HFMA2 x, x, 0.25 (randprog fit2
    seed 500861's SASS), where f32 tanh's own FMUL x * x keeps the shader's x * x rounded."""
    src = GLSL16_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float16_t x = float16_t(inp[i]);
  o[i * 2u] = float(tanh(x));
  o[i * 2u + 1u] = float((x * x) + 0.25hf);
}"""
    rng = np.random.default_rng(500861)
    v = rng.uniform(-4, 4, (128, 1)).astype(np.float16).astype(np.float32)
    x = v[:, 0].astype(np.float16)
    out = _run_many(src, v, 2).astype(np.float16)
    want = _fma16(x, x, 0.25)
    assert np.array_equal(out[:, 1], want) and not np.array_equal(want, ((x * x).astype(np.float16) + np.float16(0.25)).astype(np.float16))


def test_f16_repeated_factor_with_a_constant_squares_first_through_a_select_of_one_value():
    """t * (k * t) - s is fma(t * t, k, -s): the square rounded, the constant the fma's factor
    (randprog fit2 seeds 500321, 500581's SASS: HMUL2 t, t then HFMA2 with 3 and 1.988), also where the
    first t is (c ? t : t); not through min(t, t) (fit2 seed 500269's SASS); DECISIONS['square']."""
    src = GLSL16_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float16_t t = float16_t(inp[i * 3u]), s = float16_t(inp[i * 3u + 1u]), c = float16_t(inp[i * 3u + 2u]);
  o[i * 3u] = float((t * (3.0hf * t)) - s);
  o[i * 3u + 1u] = float((((c < s) ? t : t) * (1.98828125hf * t)) - s);
  o[i * 3u + 2u] = float((min(t, t) * (c * t)) - s);
}"""
    rng = np.random.default_rng(500581)
    v = rng.uniform(-4, 4, (128, 3)).astype(np.float16).astype(np.float32)
    t, s, c = v.T.astype(np.float16)
    out = _run_many(src, v, 3).astype(np.float16)
    sq = (t * t).astype(np.float16)
    for col, k in ((0, 3.0), (1, 1.98828125)):
        want = _fma16(sq, np.float16(k), -s)
        other = _fma16(t, (np.float16(k) * t).astype(np.float16), -s)
        assert np.array_equal(out[:, col], want) and not np.array_equal(want, other)
    assert np.array_equal(out[:, 2], _fma16(t, (c * t).astype(np.float16), -s))
    done, _ = _ir(src, file="k.comp")
    # t * (3 * t) is taken first by the algebra pass's (k * x) * x as k * (x * x) (same bits)
    assert (done["square"], done["algebra"]) == (1, 1)


def test_f16_subtract_of_a_division_and_a_product_fuses_the_division():
    """f16 x / d - a * b fuses its left operand, as f32 does: fma(x, RCP(d), -(a * b)) (randprog fit2
    seed 500757's SASS: (x1 / 1.195) / (m * m + 0.25) - (x2 - 0.3) * v is HFMA2 x1 * 0.837, RCP, -p);
    DECISIONS['fma-multiply-first']."""
    from emu.numerics import nvidia
    src = GLSL16_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float16_t x = float16_t(inp[i * 4u]), d = float16_t(inp[i * 4u + 1u]);
  float16_t a = float16_t(inp[i * 4u + 2u]), b = float16_t(inp[i * 4u + 3u]);
  o[i] = float((x / d) - (a * b));
}"""
    rng = np.random.default_rng(500757)
    v = rng.uniform(0.5, 4, (128, 4)).astype(np.float16).astype(np.float32)
    x, d, a, b = v.T.astype(np.float16)
    rcp = np.array([nvidia.binary("div", "f16", np.float16(1), q) for q in d], np.float16)
    p = (a * b).astype(np.float16)
    want = _fma16(x, rcp, -p)
    other = _fma16(-a, b, (x * rcp).astype(np.float16))
    out = _run_many(src, v, 1)[:, 0].astype(np.float16)
    assert np.array_equal(out, want) and not np.array_equal(want, other)


def test_f16_factored_constant_squared_is_gathered():
    """(x * k - x) * (x * k - x) + 0.25 is x * (k - 1) squared, gathered as fma(x * x, (k - 1)^2, 0.25)
    once factoring has made the two products one (randprog fit2 seed 500497's SASS: HFMA2 x3 * x3,
    0.040863, 0.25); DECISIONS['algebra']."""
    src = GLSL16_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float16_t x = float16_t(inp[i]);
  o[i] = float((((x * 0.7978846hf) - x) * ((x * 0.7978846hf) - x)) + 0.25hf);
}"""
    rng = np.random.default_rng(500497)
    v = rng.uniform(-8, 8, (128, 1)).astype(np.float16).astype(np.float32)
    x = v[:, 0].astype(np.float16)
    k = (np.float16(0.7978846) - np.float16(1)).astype(np.float16)
    want = _fma16((x * x).astype(np.float16), (k * k).astype(np.float16), 0.25)
    other = _fma16((x * k).astype(np.float16), (x * k).astype(np.float16), 0.25)
    out = _run_many(src, v, 1)[:, 0].astype(np.float16)
    assert np.array_equal(out, want) and not np.array_equal(want, other)


def test_f16_chained_constant_terms_are_added_when_compiling():
    """f16 (v + k1) + k2 is v + (k1 + k2), k1 + k2 rounded to f16 when compiling, although v + k1 is
    stored too (randprog fit2 seed 500681's SASS: HADD2 t6, 4.0625 for (t6 + 1.998) + 2.067);
    k2 + (k1 + v) alike (500041: -1.423 + (0.25 + t3) is HADD2 t3, -1.1729); DECISIONS['fold']."""
    src = GLSL16_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float16_t v = float16_t(inp[i * 2u]), w = float16_t(inp[i * 2u + 1u]);
  float16_t t = v + 1.998hf;
  o[i * 3u] = float(t);
  o[i * 3u + 1u] = float(t + 2.067hf);
  o[i * 3u + 2u] = float(-1.423hf + (0.25hf + w));
}"""
    rng = np.random.default_rng(500681)
    x = rng.uniform(-40, 40, (128, 2)).astype(np.float16).astype(np.float32)
    v, w = x.T.astype(np.float16)
    k1, k2 = np.float16(1.9970703125), np.float16(2.06640625)          # glslang's f16 of 1.998, 2.067
    out = _run_many(src, x, 3).astype(np.float16)
    assert np.array_equal(out[:, 0], (v + k1).astype(np.float16))
    want = (v + np.float16(k1 + k2)).astype(np.float16)
    assert np.float16(k1 + k2) == np.float16(4.0625)
    assert np.array_equal(out[:, 1], want) and not np.array_equal(want, ((v + k1).astype(np.float16) + k2).astype(np.float16))
    kk = np.float16(np.float16(0.25) + np.float16(-1.4228515625))
    assert np.array_equal(out[:, 2], (w + kk).astype(np.float16))


def test_constants_of_a_sum_are_added_when_compiling_and_added_last():
    """DECISIONS['shift']: (x + k1) + k2 is x + (k1 + k2) also where x + k1 is read again (fit2 seed
    500064's SASS: FADD x4, -0.643); (2.831 - t) - (2.141 + s) is (-t - s) + 0.69 (seed 500020);
    DECISIONS['algebra']: (x / 0.1) * 0.3 is x * 3, x / 0.1 read again (seed 500724)."""
    src = GLSL_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float x = inp[i * 3u], t = inp[i * 3u + 1u], s = inp[i * 3u + 2u];
  float t6 = -0.943 + x;
  float q = x / 0.1;
  o[i * 5u] = t6 * t6;
  o[i * 5u + 1u] = 0.3 + t6;
  o[i * 5u + 2u] = (2.831 - t) - (2.141 + s);
  o[i * 5u + 3u] = q;
  o[i * 5u + 4u] = q * 0.3;
}"""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((128, 3)) * 3).astype(np.float32)
    out = _run_many(src, x, 5)
    k = np.float32
    a, t, s = x.T
    want1 = a + (k(0.3) + k(-0.943))
    want2 = (-t - s) + (k(2.831) - k(2.141))
    assert np.array_equal(out[:, 1].view(np.uint32), want1.view(np.uint32))
    assert np.array_equal(out[:, 2].view(np.uint32), want2.view(np.uint32))
    assert np.array_equal(out[:, 4].view(np.uint32), (a * k(3)).view(np.uint32))
    assert not np.array_equal(out[:, 1], k(0.3) + (k(-0.943) + a))      # the inputs tell the forms apart
    assert not np.array_equal(out[:, 2], (k(2.831) - t) - (k(2.141) + s))
    assert not np.array_equal(out[:, 4], out[:, 3] * k(0.3))
    done, text = _ir(src, "k.comp")
    assert text.count('contracted = "shift"') == 2


def test_f32_quotient_by_a_square_root_is_a_product_by_its_reciprocal_square_root():
    """DECISIONS['divide-sqrt']: f32 x / sqrt(y) is x * RSQ(y), and 1 / sqrt(y) is RSQ(y) where the
    sqrt is read again (fit2 seed 500620's SASS: -0.221 / t5 of t5 = sqrt(..) is FMUL, MUFU.RSQ)."""
    from emu.numerics import nvidia
    src = GLSL_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float x = inp[i * 2u], y = abs(inp[i * 2u + 1u]) + 0.5;
  float r = sqrt(y);
  o[i * 3u] = r;
  o[i * 3u + 1u] = x / r;
  o[i * 3u + 2u] = 1.0 / r;
}"""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((128, 2)).astype(np.float32)
    out = _run_many(src, x, 3)
    y = np.abs(x[:, 1]) + np.float32(0.5)
    rsq = nvidia.call("inverseSqrt", "f32", y)
    assert np.array_equal(out[:, 1].view(np.uint32), (x[:, 0] * rsq).view(np.uint32))
    assert np.array_equal(out[:, 2].view(np.uint32), rsq.view(np.uint32))
    assert not np.array_equal(out[:, 1], nvidia.binary("div", "f32", x[:, 0], out[:, 0]))
    done, text = _ir(src, "k.comp")
    assert 'contracted = "divide-sqrt"' in text and 'contracted = "rsqrt"' in text


def test_value_ranges_decide_clamps_selects_and_constant_builtins():
    """DECISIONS['range']: clamp(smoothstep(..), -2, -1) is -1 and clamp(smoothstep(..), -2, 0) is 0
    (fit2 seeds 501132, 500068: the driver's SASS stores the constant's consequences); a select on
    clamp(x, -1, 1) < 1.908 is its true side (seed 500064); log(0.25 + 1e-5) folded when compiling,
    rounded from double (seed 500496: -1.3862543, where MUFU.LG2 * ln 2 gives -1.3862542)."""
    src = GLSL_IO + """void main() {
  uint i = gl_GlobalInvocationID.x;
  float x = inp[i * 2u], y = inp[i * 2u + 1u];
  float s = smoothstep(-1.0, 2.0, x * x);
  float c = clamp(s, -2.0, -1.0);
  float z = clamp(s, -2.0, 0.0);
  float m = sqrt((y - y) * (y - y) + 0.25);
  o[i * 4u] = (x + y) / (c * c + 1e-05);
  o[i * 4u + 1u] = z;
  o[i * 4u + 2u] = (clamp(y, -1.0, 1.0) < 1.908) ? x : y;
  o[i * 4u + 3u] = log(m * m + 1e-05);
}"""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((128, 2)).astype(np.float32)
    out = _run_many(src, x, 4)
    k = np.float32
    r = k(1.0 / np.float64(k(1.0) + k(1e-5)))
    assert np.array_equal(out[:, 0].view(np.uint32), ((x[:, 0] + x[:, 1]) * r).view(np.uint32))
    assert np.all(out[:, 1].view(np.uint32) == 0)
    assert np.array_equal(out[:, 2], x[:, 0])
    assert np.all(out[:, 3].view(np.uint32) == k(-1.3862543).view(np.uint32))
    done, text = _ir(src, "k.comp")
    assert done["range"] >= 4 and 'contracted = "range"' in text
