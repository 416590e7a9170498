"""Mul-add contraction for devices whose compiler fuses (nvidia-h200: measured, see
traces/hw/contraction): results round once, as an independently computed fma chain."""
from pathlib import Path

import numpy as np

import emu
from emu.api import compile_wgsl
from emu.isa.contract import contract_fma
from emu.isa.printer import print_module

ROOT = Path(__file__).resolve().parents[2]


def _matmul(profile, a, b):
    M = a.shape[0]
    dev = emu.Device(profile)
    src = (ROOT / "bench" / "shaders" / "matmul_naive.wgsl").read_text()
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "matmul_naive.wgsl"),
                                       constants={"M": M, "N": M, "K": M})
    bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): dev.create_buffer(size=4 * M * M)}
    dev.dispatch(pipe, bufs, (M // 16, M // 16, 1))
    return bufs[(0, 2)].read(np.float32).reshape(M, M)


def test_h200_profile_contracts_and_reference_does_not():
    rng = np.random.default_rng(3)
    M = 32
    a = rng.standard_normal((M, M)).astype(np.float32)
    b = rng.standard_normal((M, M)).astype(np.float32)
    fused = np.zeros((M, M), np.float32)
    unfused = np.zeros((M, M), np.float32)
    for k in range(M):
        p = a[:, k:k + 1].astype(np.float64) * b[k:k + 1, :].astype(np.float64)     # exact
        fused = (p + fused).astype(np.float32)   # one rounding (exact in f64 here: checked below)
        unfused = unfused + (a[:, k:k + 1] * b[k:k + 1, :])
        assert np.all(np.abs(p) < 2.0 ** 40)
    np.testing.assert_array_equal(_matmul("nvidia-h200", a, b), fused)
    np.testing.assert_array_equal(_matmul("reference", a, b), unfused)


def test_rewrite_forms():
    src = """
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(1) fn main() {
  let a = o[0]; let b = o[1]; let c = o[2];
  let p = a * b;
  o[3] = p + c;           // p has two uses (here and below): not contracted
  o[4] = c - a * b;       // fma(-a, b, c)
  o[5] = a * b - c;       // fma(a, b, -c)
  o[6] = p * 2.0;
  let i = u32(a) * 3u + 1u;  // integers are never contracted
  o[7] = f32(i);
}
"""
    m, _ = compile_wgsl(src, "k.wgsl")
    assert contract_fma(m) == 2
    text = print_module(m, locs=False)
    assert text.count('{fn = "fma"}') == 2 and text.count('{fn = "neg"}') == 2
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "k.wgsl"))
    # a*b = 1 + 2^-11 + 2^-24 exactly, which f32 rounds to c = 1 + 2^-11: unfused, c - a*b is 0;
    # fused, it is -2^-24
    vals = np.array([1 + 2.0 ** -12, 1 + 2.0 ** -12, 1 + 2.0 ** -11, 0, 0, 0, 0, 0], np.float32)
    buf = dev.create_buffer(vals)
    dev.dispatch(pipe, {(0, 0): buf}, (1, 1, 1))
    out = buf.read(np.float32)
    assert np.float32(vals[0] * vals[1]) == vals[2]
    assert out[3] == np.float32(2 + 2.0 ** -10)           # (a*b rounded) + c
    assert out[4] == -(2.0 ** -24) and out[5] == 2.0 ** -24


def test_h200_reciprocal_sqrt_is_one_rsq():
    """1.0 / sqrt(x) runs as MUFU.RSQ on the H200 (llama.cpp's rms_norm, recorded through Dawn):
    rewritten for that profile only, and only when the sqrt feeds nothing else."""
    from emu.numerics import sfu
    src = """@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  let s = sqrt(a[g.x]);
  a[g.x + 64u] = 1.0 / sqrt(a[g.x]);
  a[g.x + 128u] = 1.0 / s + s;
}"""
    x = np.random.default_rng(1).uniform(0.5, 8, 64).astype(np.float32)
    out = {}
    for prof in ("nvidia-h200", "reference"):
        dev = emu.Device(prof)
        buf = dev.create_buffer(np.concatenate([x, np.zeros(128, np.float32)]))
        dev.dispatch(dev.create_compute_pipeline(dev.create_shader_module(src, "r.wgsl")), {(0, 0): buf}, (1, 1, 1))
        out[prof] = buf.read(np.float32)
    assert out["nvidia-h200"][64:128].view(np.uint32).tolist() == sfu.rsq(x).view(np.uint32).tolist()
    s = sfu.sqrt(x)
    assert out["nvidia-h200"][128:].view(np.uint32).tolist() == (sfu.rcp(s) + s).astype(np.float32).view(np.uint32).tolist()
    ieee = np.float32(1) / np.sqrt(x)                    # the reference profile: two IEEE roundings
    assert out["reference"][64:128].view(np.uint32).tolist() == ieee.view(np.uint32).tolist()


def test_product_returned_by_a_function_fuses_with_the_callers_add():
    """The driver inlines calls and keeps variables in registers before contracting: a product a
    helper returns (directly or through a variable it stored last) fuses with the caller's add or
    subtract (llama.cpp's flash attention with logit softcap, recorded on the H200: 1,024 of 1,024
    outputs only so). Not where the helper writes memory, or a use of the result is not the add."""
    src = """
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
fn capped(x: f32) -> f32 {
  var v = x;
  v = o[1] * v;
  return v;
}
fn scaled(x: f32) -> f32 { return x * o[1]; }
fn writes(x: f32) -> f32 { o[7] = x; return x * o[1]; }
@compute @workgroup_size(1) fn main() {
  let a = o[0]; let c = o[2];
  o[3] = capped(a) - c;       // fma(o[1], a, -c)
  o[4] = c - scaled(a);       // fma(-a, o[1], c)
  let t = scaled(a);
  o[5] = t + c + t;           // two uses: rounded product
  o[6] = writes(a) - c;       // the helper stores to a global: not moved, not fused
}
"""
    m, _ = compile_wgsl(src, "k.wgsl")
    assert contract_fma(m) == 2
    names = [f.name for f in m.functions]
    assert sum(n.startswith("capped__fma") for n in names) == 1 and sum(n.startswith("scaled__fma") for n in names) == 1
    vals = np.array([1 + 2.0 ** -12, 1 + 2.0 ** -12, 1 + 2.0 ** -11, 0, 0, 0, 0, 0], np.float32)
    out = {}
    for prof in ("nvidia-h200", "reference"):
        dev = emu.Device(prof)
        buf = dev.create_buffer(vals)
        dev.dispatch(dev.create_compute_pipeline(dev.create_shader_module(src, "k.wgsl")), {(0, 0): buf}, (1, 1, 1))
        out[prof] = buf.read(np.float32)
    h, r = out["nvidia-h200"], out["reference"]
    assert h[3] == 2.0 ** -24 and h[4] == -(2.0 ** -24)       # fused: the exact product's tail
    assert r[3] == 0 and r[4] == 0                            # a*b rounds to c first
    assert h[5] == r[5] == np.float32(3 * (1 + 2.0 ** -11))
    assert h[6] == 0 and h[7] == vals[0]


def test_product_kept_in_a_variable_fuses_with_its_one_reader():
    """`v = a * b; v += c` runs as fma(a, b, c) on the H200 (llama.cpp's flash attention with a mask
    and logit softcap: `v = softcap * tanh(v); v += slope * mask` fuses the first product, 3,072 of
    3,072 outputs); a variable read twice, or stored to in a branch between, keeps the product."""
    src = """
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(1) fn main() {
  let a = o[0]; let c = o[2];
  var v = 0.0;
  v = a * a;
  v += c;                     // fma(a, a, c)
  o[3] = v;
  var w = a * a;
  o[4] = w + c;               // fma(a, a, c)
  var u = a * a;
  let twice = u;
  o[5] = u + c + twice;       // read twice: rounded
  var t = a * a;
  if (c > 5.0) { t = 1.0; }     // never taken
  o[6] = t + c;               // a branch between: rounded
}
"""
    m, _ = compile_wgsl(src, "k.wgsl")
    assert contract_fma(m) == 2
    vals = np.array([1 + 2.0 ** -12, 0, -(1 + 2.0 ** -11), 0, 0, 0, 0, 0], np.float32)
    dev = emu.Device("nvidia-h200")
    buf = dev.create_buffer(vals)
    dev.dispatch(dev.create_compute_pipeline(dev.create_shader_module(src, "k.wgsl")), {(0, 0): buf}, (1, 1, 1))
    out = buf.read(np.float32)
    assert out[3] == 2.0 ** -24                         # a*a = 1 + 2^-11 + 2^-24 exactly
    assert out[4] == 2.0 ** -24
    assert out[5] == np.float32(1 + 2.0 ** -11)         # (a*a rounded) + c = 0, + a*a rounded
    assert out[6] == 0
