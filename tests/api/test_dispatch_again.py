"""A buffer whose size is not a multiple of 16 bytes is padded once, at its first dispatch; a
second dispatch with the same buffer reuses the padded row (it once failed to broadcast)."""
import numpy as np

import emu

SHADER = """
struct P { scale: u32, n: u32 }
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<uniform> p: P;
@compute @workgroup_size(8) fn main(@builtin(global_invocation_id) g: vec3u) {
    if (g.x < p.n) { out[g.x] = out[g.x] * p.scale + 1u; }
}
"""


def test_second_dispatch_with_an_8_byte_buffer():
    dev = emu.Device(profile="nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SHADER), entry_point="main")
    out = dev.create_buffer(np.zeros(6, np.uint32))          # 24 bytes
    p = dev.create_buffer(np.array([3, 6], np.uint32))        # 8 bytes
    for _ in range(3):
        dev.dispatch(pipe, {(0, 0): out, (0, 1): p}, 1)
    assert out.read(np.uint32).tolist() == [13] * 6           # ((0*3+1)*3+1)*3+1
