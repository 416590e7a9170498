"""One test, every backend: the `backend` fixture (tests/hw/backends.py) runs each kernel on the
emulator and, through the emitter, on every real adapter there is (wgpu-native, Dawn); the
results must be what numpy says WGSL computes."""
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from backends import backend  # noqa: E402,F401  (the fixture)

ROOT = pathlib.Path(__file__).resolve().parents[2]

INT_KERNEL = """
@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> c: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  if (i >= arrayLength(&c)) { return; }
  let x = a[i];
  let y = b[i];
  var v = vec2<u32>(x * y + (x >> (y & 31u)), 0u);
  v.y = select(x / y, 0xffffffffu, y == 0u);     // u32 division by zero is x in WGSL: guarded here
  c[i] = v.x ^ (v.y << 1u);
}
"""


def test_vecadd_on_every_backend(backend):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(1000).astype(np.float32)
    b = rng.standard_normal(1000).astype(np.float32)
    out = backend.run((ROOT / "tests/shaders/vecadd.wgsl").read_text(), dispatch=(16, 1, 1),
                      buffers={(0, 0): a, (0, 1): b, (0, 2): np.zeros(1000, np.float32)})
    np.testing.assert_array_equal(np.frombuffer(out[(0, 2)], np.float32), a + b)


def test_integer_kernel_on_every_backend(backend):
    rng = np.random.default_rng(1)
    a = rng.integers(0, 1 << 32, 777, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, 777, dtype=np.uint64).astype(np.uint32)
    b[::7] = 0
    out = backend.run(INT_KERNEL, dispatch=(13, 1, 1), buffers={(0, 0): a, (0, 1): b, (0, 2): np.zeros(777, np.uint32)})
    x, y = a.astype(np.uint64), b.astype(np.uint64)
    vx = (x * y + (x >> (y & 31))) & 0xFFFFFFFF
    vy = np.where(y == 0, 0xFFFFFFFF, x // np.maximum(y, 1))
    want = (vx ^ ((vy << 1) & 0xFFFFFFFF)).astype(np.uint32)
    np.testing.assert_array_equal(np.frombuffer(out[(0, 2)], np.uint32), want)


def test_backend_profile_describes_the_device(backend):
    p = backend.profile()
    if backend.is_gpu and "llvmpipe" in str(backend.info.get("device")):
        assert p.name == "lavapipe" and p.default_subgroup_size == 8
    else:
        assert p.name
