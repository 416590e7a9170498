"""Scalar ops on cooperative-matrix elements run with the profile's scalar arithmetic: on
nvidia-h200 (fragments are registers, the op is the SM's FMUL/FADD) f32 subnormals flush and NaNs
come out canonical, as emu.numerics.nvidia states for every f32 operation (the scalar rule, not a
recording of matrix elements with subnormals or NaNs)."""
import numpy as np

import emu
from emu.numerics import nvidia

SRC = """enable f16;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read_write> c: array<f32>;
@group(0) @binding(1) var<storage, read> s: array<f32>;
@compute @workgroup_size(32)
fn main() {
  var m = subgroupMatrixLoad<subgroup_matrix_result<f32, 16, 16>, row_major>(&c, 0u, 16u);
  m = subgroupMatrixScalarMultiply(m, s[0]);
  m = subgroupMatrixScalarAdd(m, s[1]);
  subgroupMatrixStore<row_major>(&c, 0u, m, 16u);
}
"""


def test_matrix_scalar_ops_follow_the_profile():
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 1 << 32, 256, dtype=np.uint64).astype(np.uint32)
    bits[:8] = [1, 0x80000005, 0x007FFFFF, 0x7F800001, 0xFFC01234, 0x7F7FFFFF, 0x00800000, 0x3F800000]
    c = bits.view(np.float32)
    s = np.float32([1.0, -0.0])
    out = {}
    for prof in ("nvidia-h200", "reference"):
        dev = emu.Device(prof)
        bc = dev.create_buffer(c.copy())
        pipe = dev.create_compute_pipeline(dev.create_shader_module(SRC, "m.wgsl"))
        dev.dispatch(pipe, {(0, 0): bc, (0, 1): dev.create_buffer(s)}, (1, 1, 1))
        out[prof] = bc.read(np.uint32)
    want = nvidia.binary("add", "f32", nvidia.binary("mul", "f32", c, s[0]), s[1])
    assert out["nvidia-h200"].tolist() == want.view(np.uint32).tolist()
    assert out["reference"][:3].tolist() == [1, 0x80000005, 0x007FFFFF]          # IEEE keeps subnormals
