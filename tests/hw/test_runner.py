"""emu.hw.runner on a real WebGPU adapter (lavapipe on CI), through every installed binding,
checked against numpy. The parsing tests at the top need no adapter."""
import pathlib

import numpy as np
import pytest

from emu.hw import adapters
from emu.hw.runner import (HwError, available_adapter, compute_entry_points, parse_bindings,
                           run_on_adapter, timed_dispatch)

ROOT = pathlib.Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "shaders"


# --- reading the source (no adapter needed) ---------------------------------------------------

DECLS = """
// @group(0) @binding(7) var<storage, read_write> commented_out : array<u32>;
/* @group(0) @binding(8) var<uniform> /* nested */ also_commented : vec4f; */
struct Params { n : u32, scale : f32 }
@group(0) @binding(0) var<storage, read> a : array<f32>;
@group(0) @binding(1) var<storage> b : array<f32>;
@binding(2) @group(0) var<storage, read_write> c : array<atomic<u32>>;
@group(1u) @binding(0x3) var<uniform> params : Params;
@group(2) @binding(0) var tex : texture_2d<f32>;
var<workgroup> tile : array<f32, 64>;
@compute @workgroup_size(8, 8) fn first() {}
@workgroup_size(64)
@compute
fn second(@builtin(local_invocation_index) i : u32) {}
fn helper() -> u32 { return 1u; }
"""


def test_parse_bindings_spaces_and_access():
    d = parse_bindings(DECLS)
    assert sorted(d) == [(0, 0), (0, 1), (0, 2), (1, 3), (2, 0)]
    assert (d[(0, 0)].space, d[(0, 0)].access, d[(0, 0)].layout_type) == ("storage", "read", "read-only-storage")
    assert d[(0, 1)].layout_type == "read-only-storage"          # var<storage> defaults to read
    assert (d[(0, 2)].name, d[(0, 2)].layout_type) == ("c", "storage")
    assert (d[(1, 3)].name, d[(1, 3)].layout_type) == ("params", "uniform")
    assert d[(2, 0)].space == "handle"


def test_compute_entry_points():
    assert compute_entry_points(DECLS) == ["first", "second"]


def test_available_adapter_never_raises():
    info, why = available_adapter("no-such-backend")
    assert info is None and "no-such-backend" in why


# --- shaders on the adapter ----------------------------------------------------------------------

VECADD = """
@group(0) @binding(0) var<storage, read> a : array<f32>;
@group(0) @binding(1) var<storage, read> b : array<f32>;
@group(0) @binding(2) var<storage, read_write> c : array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  if (gid.x < arrayLength(&c)) { c[gid.x] = a[gid.x] + b[gid.x]; }
}
"""


def test_vector_add_f32(hw_backend):
    rng = np.random.default_rng(1)
    n = 1000
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    out = run_on_adapter(VECADD, dispatch=(-(-n // 64), 1, 1), backend=hw_backend,
                         buffers={(0, 0): a, (0, 1): b, (0, 2): np.zeros(n, np.float32)})
    assert list(out) == [(0, 2)]
    np.testing.assert_array_equal(np.frombuffer(out[(0, 2)], np.float32), a + b)


def test_bench_shaders_small(hw_backend):
    rng = np.random.default_rng(2)
    n = 3 * 256 + 5
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    out = run_on_adapter((BENCH / "vecadd.wgsl").read_text(), dispatch=(2, 2, 1), backend=hw_backend,
                         buffers={(0, 0): a, (0, 1): b, (0, 2): a.nbytes})
    np.testing.assert_array_equal(np.frombuffer(out[(0, 2)], np.float32), a + b)

    M, N, K = 40, 24, 33
    A = rng.standard_normal((M, K), dtype=np.float32)
    B = rng.standard_normal((K, N), dtype=np.float32)
    out = run_on_adapter((BENCH / "matmul_naive.wgsl").read_text(), dispatch=(-(-N // 16), -(-M // 16)),
                         buffers={(0, 0): A, (0, 1): B, (0, 2): M * N * 4},
                         overrides={"M": M, "N": N, "K": K}, backend=hw_backend)
    C = np.frombuffer(out[(0, 2)], np.float32).reshape(M, N)
    np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=1e-4, atol=1e-4)


INT_LOOP = """
@group(0) @binding(0) var<storage, read> seed : array<u32>;
@group(0) @binding(1) var<storage, read_write> hash : array<u32>;
@group(0) @binding(2) var<storage, read_write> steps : array<i32>;
@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  let i = gid.x;
  if (i >= arrayLength(&seed)) { return; }
  var h = seed[i];
  for (var k = 0u; k < 100u; k++) {
    h = h * 1664525u + 1013904223u;   // wraps modulo 2^32
    h = h ^ (h >> 13u);
  }
  hash[i] = h;
  // Collatz steps of (i + 1): a data-dependent loop, with a signed counter
  var x = i + 1u;
  var s = 0i;
  loop {
    if (x == 1u) { break; }
    if ((x & 1u) == 0u) { x = x / 2u; } else { x = 3u * x + 1u; }
    s = s - 1i;
  }
  steps[i] = s;
}
"""


def test_integer_loop(hw_backend):
    n = 300
    seed = np.random.default_rng(3).integers(0, 2 ** 32, n, dtype=np.uint32)
    out = run_on_adapter(INT_LOOP, dispatch=-(-n // 32), backend=hw_backend,
                         buffers={(0, 0): seed, (0, 1): seed.nbytes, (0, 2): n * 4})
    h = seed.copy()
    for _ in range(100):
        h = h * np.uint32(1664525) + np.uint32(1013904223)
        h ^= h >> np.uint32(13)
    steps = []
    for x in range(1, n + 1):
        s = 0
        while x != 1:
            x = x // 2 if x % 2 == 0 else 3 * x + 1
            s -= 1
        steps.append(s)
    np.testing.assert_array_equal(np.frombuffer(out[(0, 1)], np.uint32), h)
    np.testing.assert_array_equal(np.frombuffer(out[(0, 2)], np.int32), np.array(steps, np.int32))


WG_REDUCE = """
const WG : u32 = 64u;
var<workgroup> tile : array<u32, WG>;
@group(0) @binding(0) var<storage, read> x : array<u32>;
@group(0) @binding(1) var<storage, read_write> reversed : array<u32>;
@group(0) @binding(2) var<storage, read_write> sums : array<u32>;
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li : u32, @builtin(workgroup_id) wg : vec3<u32>) {
  // Workgroup memory is written before it is read: lavapipe does not zero-initialise it
  // (through wgpu-native), whatever the WGSL spec says.
  let g = wg.x * WG + li;
  tile[li] = x[g];
  workgroupBarrier();
  reversed[g] = tile[WG - 1u - li];
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
    if (li < stride) { tile[li] = tile[li] + tile[li + stride]; }
    workgroupBarrier();
  }
  if (li == 0u) { sums[wg.x] = tile[0]; }
}
"""


def test_workgroup_memory_barrier(hw_backend):
    groups = 7
    x = np.random.default_rng(4).integers(0, 1 << 20, groups * 64, dtype=np.uint32)
    out = run_on_adapter(WG_REDUCE, dispatch=(groups,), backend=hw_backend,
                         buffers={(0, 0): x, (0, 1): x.nbytes, (0, 2): groups * 4})
    xs = x.reshape(groups, 64)
    np.testing.assert_array_equal(np.frombuffer(out[(0, 1)], np.uint32).reshape(groups, 64), xs[:, ::-1])
    np.testing.assert_array_equal(np.frombuffer(out[(0, 2)], np.uint32), xs.sum(axis=1, dtype=np.uint32))


ATOMICS = """
@group(0) @binding(0) var<storage, read> values : array<u32>;
@group(0) @binding(1) var<storage, read_write> hist : array<atomic<u32>, 16>;
@group(0) @binding(2) var<storage, read_write> stats : array<atomic<i32>, 2>;   // max, min
var<workgroup> local_count : atomic<u32>;
@group(0) @binding(3) var<storage, read_write> per_group : array<u32>;
@compute @workgroup_size(128)
fn main(@builtin(global_invocation_id) gid : vec3<u32>, @builtin(local_invocation_index) li : u32,
        @builtin(workgroup_id) wg : vec3<u32>) {
  if (li == 0u) { atomicStore(&local_count, 0u); }
  workgroupBarrier();
  let v = values[gid.x];
  atomicAdd(&hist[v % 16u], 1u);
  atomicMax(&stats[0], i32(v) - 500);
  atomicMin(&stats[1], i32(v) - 500);
  if ((v & 1u) == 1u) { atomicAdd(&local_count, 1u); }
  workgroupBarrier();
  if (li == 0u) { per_group[wg.x] = atomicLoad(&local_count); }
}
"""


def test_atomics(hw_backend):
    groups = 5
    v = np.random.default_rng(5).integers(0, 1000, groups * 128, dtype=np.uint32)
    stats0 = np.array([np.iinfo(np.int32).min, np.iinfo(np.int32).max], np.int32)
    out = run_on_adapter(ATOMICS, dispatch=(groups,), backend=hw_backend,
                         buffers={(0, 0): v, (0, 1): 16 * 4, (0, 2): stats0, (0, 3): groups * 4})
    np.testing.assert_array_equal(np.frombuffer(out[(0, 1)], np.uint32), np.bincount(v % 16, minlength=16))
    assert np.frombuffer(out[(0, 2)], np.int32).tolist() == [int(v.max()) - 500, int(v.min()) - 500]
    np.testing.assert_array_equal(np.frombuffer(out[(0, 3)], np.uint32), (v.reshape(groups, 128) & 1).sum(axis=1))


UNIFORM_OVERRIDES = """
struct Params { n : u32, scale : f32, bias : vec2<f32> }
@group(1) @binding(0) var<uniform> p : Params;
@group(0) @binding(0) var<storage, read_write> y : array<f32>;
@group(0) @binding(1) var<storage, read_write> unused_here : array<f32>;
override offset : f32 = 0.0;
@id(7) override negate : bool = false;
@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  if (gid.x >= p.n) { return; }
  var v = y[gid.x] * p.scale + p.bias.y + offset;
  if (negate) { v = -v; }
  y[gid.x] = v;
}
@compute @workgroup_size(1)
fn other() { unused_here[0] = 1.0; }
"""


def test_uniform_overrides_and_entry(hw_backend):
    y = np.arange(40, dtype=np.float32)
    params = np.zeros(4, np.float32)
    params.view(np.uint32)[0] = 37                        # only the first 37 are touched
    params[1], params[3] = 2.0, 0.25                      # scale, bias.y (vec2 at offset 8)
    bufs = {(0, 0): y, (0, 1): np.full(3, 5.0, np.float32), (1, 0): params}
    out = run_on_adapter(UNIFORM_OVERRIDES, entry="main", dispatch=(3,), buffers=bufs,
                         overrides={"offset": 1.0, "7": True}, backend=hw_backend)
    want = y.copy()
    want[:37] = -(y[:37] * 2.0 + 0.25 + 1.0)
    np.testing.assert_array_equal(np.frombuffer(out[(0, 0)], np.float32), want)
    # a read_write binding the entry point does not use is bound all the same, and comes back as given
    np.testing.assert_array_equal(np.frombuffer(out[(0, 1)], np.float32), [5, 5, 5])
    out = run_on_adapter(UNIFORM_OVERRIDES, entry="other", buffers=bufs, outputs=[(0, 1)], backend=hw_backend)
    assert list(out) == [(0, 1)]
    np.testing.assert_array_equal(np.frombuffer(out[(0, 1)], np.float32), [1, 5, 5])


def test_unpadded_sizes_and_bytes(hw_backend):
    src = """
@group(0) @binding(0) var<storage, read_write> w : array<u32>;
@compute @workgroup_size(1) fn main() { w[0] = w[0] + 0x01010101u; w[1] = 0xFFFFFFFFu; }"""
    out = run_on_adapter(src, buffers={(0, 0): b"\x01\x02\x03\x04\x05\x06"}, backend=hw_backend)
    # 6 bytes given, padded to 8 on the device, 6 bytes back
    assert out[(0, 0)] == b"\x02\x03\x04\x05\xff\xff"


def test_f16(hw_backend, hw_info):
    if "shader-f16" not in hw_info["features"]:
        pytest.skip("adapter lacks shader-f16")
    src = """
enable f16;
@group(0) @binding(0) var<storage, read> a : array<f16>;
@group(0) @binding(1) var<storage, read_write> c : array<f16>;
@compute @workgroup_size(8) fn main(@builtin(global_invocation_id) g : vec3<u32>) {
  c[g.x] = a[g.x] * 3.0h + 1.0h;
}"""
    a = np.random.default_rng(6).standard_normal(16).astype(np.float16)
    out = run_on_adapter(src, dispatch=(2,), buffers={(0, 0): a, (0, 1): a.nbytes}, backend=hw_backend)
    np.testing.assert_array_equal(np.frombuffer(out[(0, 1)], np.float16), a * np.float16(3) + np.float16(1))


def test_subgroup_size(hw_backend, hw_info):
    if adapters.feature_name(hw_backend, "subgroups") not in hw_info["features"]:
        pytest.skip("adapter lacks the subgroups feature")
    src = """
enable subgroups;
@group(0) @binding(0) var<storage, read_write> o : array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li : u32, @builtin(subgroup_size) s : u32,
        @builtin(subgroup_invocation_id) sid : u32) {
  o[li] = s;
  o[64u + li] = sid;
  o[128u + li] = subgroupAdd(1u);
}"""
    o = np.frombuffer(run_on_adapter(src, buffers={(0, 0): 3 * 64 * 4}, backend=hw_backend)[(0, 0)], np.uint32)
    size = int(o[0])
    assert (o[:64] == size).all() and size in (4, 8, 16, 32, 64, 128)
    if "subgroup_min_size" in hw_info:
        assert hw_info["subgroup_min_size"] <= size <= hw_info["subgroup_max_size"]
    assert (o[64:128] == np.arange(64) % size).all()
    assert (o[128:] == size).all()


def test_errors_name_the_problem(hw_backend):
    with pytest.raises(HwError, match="rejected the shader"):
        run_on_adapter("@compute @workgroup_size(1) fn main() { let x : u32 = 1.5; }", backend=hw_backend)
    with pytest.raises(HwError, match=r"no @group\(0\) @binding\(5\)"):
        run_on_adapter(VECADD, buffers={(0, 5): 4}, backend=hw_backend)
    with pytest.raises(HwError, match=r"\(0, 0\): a"):
        run_on_adapter(VECADD, buffers={(0, 2): 4}, backend=hw_backend)
    with pytest.raises(HwError, match="entry="):
        run_on_adapter(UNIFORM_OVERRIDES, buffers={(0, 0): 4}, backend=hw_backend)
    # the device is still usable after refused shaders
    out = run_on_adapter(VECADD, backend=hw_backend, buffers={(0, 0): np.ones(4, np.float32),
                                                              (0, 1): np.ones(4, np.float32), (0, 2): 16})
    assert np.frombuffer(out[(0, 2)], np.float32).tolist() == [2, 2, 2, 2]


def test_timed_dispatch(hw_backend):
    src = """
@group(0) @binding(0) var<storage, read_write> counter : array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g : vec3<u32>) { counter[g.x] += 1u; }"""
    out, seconds = timed_dispatch(src, dispatch=(4,), buffers={(0, 0): 256 * 4}, runs=3, backend=hw_backend)
    # outputs are those of the first dispatch, though four more (one warm-up, three timed) ran
    assert (np.frombuffer(out[(0, 0)], np.uint32) == 1).all()
    assert 0 < seconds < 10


WG_ZERO = """
var<workgroup> scratch : array<u32, 256>;
@group(0) @binding(0) var<storage, read_write> seen : array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li : u32, @builtin(workgroup_id) wg : vec3<u32>) {
  var first = 0u;
  for (var k = 0u; k < 4u; k++) { first = first | scratch[li * 4u + k]; }   // before any write
  workgroupBarrier();
  for (var k = 0u; k < 4u; k++) { scratch[li * 4u + k] = 0xA5A5A5A5u ^ (wg.x * 64u + li); }
  workgroupBarrier();
  seen[wg.x * 64u + li] = first;
}
"""


def test_workgroup_memory_zero_init(hw_backend, hw_info):
    """WGSL zero-initialises workgroup memory; an adapter with the quirk
    'workgroup-memory-not-zeroed' (lavapipe through wgpu-native) may not."""
    groups = 64
    seen = None
    for _ in range(2):       # the second dispatch finds memory that the first one dirtied
        out = run_on_adapter(WG_ZERO, dispatch=(groups,), buffers={(0, 0): groups * 64 * 4}, backend=hw_backend)
        seen = np.frombuffer(out[(0, 0)], np.uint32)
        if seen.any():
            break
    if "workgroup-memory-not-zeroed" in hw_info["quirks"]:
        if seen.any():
            pytest.xfail(f"known deviation on {hw_info['device']} through {hw_backend}: "
                         f"{int(np.count_nonzero(seen))} of {seen.size} invocations read non-zero "
                         "workgroup memory before writing it")
        return
    assert not seen.any(), (f"{int(np.count_nonzero(seen))} invocations read non-zero workgroup memory: "
                            "add 'workgroup-memory-not-zeroed' to adapters.known_quirks for this adapter")
