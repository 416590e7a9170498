"""The fusion JIT (emu/jit/fuse.py) against the interpreter: same bits, same errors.

Each shader runs twice on the same inputs, once with EMU_JIT=0 (the lockstep interpreter) and once
compiled; every output buffer must match bit for bit. Inputs are full of edge values: integer
extremes and zero divisors, shift amounts past the width, NaN, infinities, signed zeros,
subnormals and f32 values beyond the integer ranges."""
import numpy as np
import pytest

import emu
from emu.errors import EmuError

N = 512

INT_OPS = """
@group(0) @binding(0) var<storage, read> x : array<i32>;
@group(0) @binding(1) var<storage, read> y : array<i32>;
@group(0) @binding(2) var<storage, read> ux : array<u32>;
@group(0) @binding(3) var<storage, read> uy : array<u32>;
@group(0) @binding(4) var<storage, read_write> o : array<i32>;
@group(0) @binding(5) var<storage, read_write> uo : array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  let i = gid.x;
  let a = x[i]; let b = y[i]; let p = ux[i]; let q = uy[i];
  var r = a + b;
  r = r ^ (a - b);
  r = r + a * b;
  r = r ^ (a / b);
  r = r + (a % b);
  r = r ^ (a << q);
  r = r + (a >> q);
  r = r ^ (-a) ^ (~b);
  r = r + select(a, b, a < b) + i32(a >= b) + i32(p);
  var u = p + q;
  u = u ^ (p - q);
  u = u + p * q;
  u = u ^ (p / q);
  u = u + (p % q);
  u = u ^ (p << q) ^ (p >> q) ^ (~q);
  u = u + u32(a) + select(0u, 7u, p > q) + bitcast<u32>(b);
  o[i] = r;
  uo[i] = u;
}
"""

FLOAT_OPS = """
@group(0) @binding(0) var<storage, read> x : array<f32>;
@group(0) @binding(1) var<storage, read> y : array<f32>;
@group(0) @binding(2) var<storage, read_write> o : array<f32>;
@group(0) @binding(3) var<storage, read_write> oi : array<i32>;
@group(0) @binding(4) var<storage, read_write> ou : array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  let i = gid.x;
  let a = x[i]; let b = y[i];
  var r = a + b;
  r = r * (a - b);
  r = r / (a * b + 1.5);
  r = r + (a % b) - (-a);
  r = select(r, a / b, a > b);
  if (a == b || a != a) { r = r + 1.0; }
  o[i] = r;
  oi[i] = i32(a) ^ i32(b * 3.0) ^ bitcast<i32>(a) ^ i32(a <= b);
  ou[i] = u32(a) + u32(b) + bitcast<u32>(r) + u32(f32(i32(a))) + u32(f32(u32(b)));
}
"""

CONTROL = """
@group(0) @binding(0) var<storage, read> x : array<i32>;
@group(0) @binding(1) var<storage, read_write> o : array<i32>;
@compute @workgroup_size(32, 2)
fn main(@builtin(global_invocation_id) gid : vec3<u32>,
        @builtin(local_invocation_index) li : u32,
        @builtin(workgroup_id) wg : vec3<u32>,
        @builtin(num_workgroups) nw : vec3<u32>) {
  let i = gid.x + gid.y * nw.x * 32u;
  let n = x[i] & 63;
  if (n == 5) { return; }
  var acc = i32(li) + i32(wg.x) * 1000;
  var k = 0;
  loop {
    if (k >= n) { break; }
    k = k + 1;
    if ((k & 3) == 1) { continue; }
    var j = 0;
    while (j < k) {
      j = j + 2;
      if (j == 6) { break; }
      acc = acc * 3 + j;
    }
    if (acc == 12345) { return; }
    acc = acc ^ k;
    continuing {
      acc = acc + 1;
      break if acc > 100000000;
    }
  }
  for (var t = 0u; t < 3u; t++) { acc = acc + i32(t); }
  o[i] = acc;
}
"""

EDGE_I = [0, 1, -1, 2, -2, 3, 7, 31, 32, 33, 63, 64, -31, -32, 2**31 - 1, -2**31, 12345, -99999]
EDGE_F = [0.0, -0.0, 1.0, -1.0, 0.5, 3.0, 1e-45, -1e-45, 1.17549435e-38, 3.4e38, -3.4e38, np.inf,
          -np.inf, np.nan, 2.1474836e9, 4.2949673e9, -2.1474839e9, 1e20, -1e20, 16777217.0, 0.1]


def _edge(values, dtype, rng):
    v = np.array(values, dtype)
    extra = rng.choice(v, N - len(v))
    if dtype == np.float32:
        extra = np.where(rng.random(N - len(v)) < 0.5, rng.standard_normal(N - len(v)).astype(dtype) * 100, extra)
    else:
        extra = np.where(rng.random(N - len(v)) < 0.5, rng.integers(-2**31, 2**31, N - len(v)).astype(dtype), extra)
    return np.concatenate([v, extra.astype(dtype)])


def run(src, inputs, outputs, grid, monkeypatch, jit, bounds="strict", constants=None, race_check=True,
        profile="reference"):
    monkeypatch.setenv("EMU_JIT", "1" if jit else "0")
    dev = emu.Device(profile, bounds=bounds, race_check=race_check)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "t.wgsl"), constants=constants)
    bufs = {(0, i): dev.create_buffer(a) for i, a in enumerate(inputs)}
    for j, nbytes in enumerate(outputs):
        bufs[(0, len(inputs) + j)] = dev.create_buffer(size=nbytes)
    dev.dispatch(pipe, bufs, grid)
    assert (pipe.pipeline._jit is not None) == jit, "the JIT did not take this shader"
    return [bufs[(0, len(inputs) + j)].read(np.uint32) for j in range(len(outputs))]


def same(src, inputs, outputs, grid, monkeypatch, **kw):
    a = run(src, inputs, outputs, grid, monkeypatch, False, **kw)
    b = run(src, inputs, outputs, grid, monkeypatch, True, **kw)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_integer_ops(monkeypatch):
    rng = np.random.default_rng(1)
    x, y = _edge(EDGE_I, np.int32, rng), _edge(EDGE_I[::-1], np.int32, rng)
    same(INT_OPS, [x, y, x.view(np.uint32), y.view(np.uint32)], [4 * N, 4 * N], (N // 64, 1, 1),
         monkeypatch)


def test_float_ops(monkeypatch):
    rng = np.random.default_rng(2)
    x, y = _edge(EDGE_F, np.float32, rng), _edge(EDGE_F[::-1], np.float32, rng)
    same(FLOAT_OPS, [x, y], [4 * N, 4 * N, 4 * N], (N // 64, 1, 1), monkeypatch)


NV_FLOAT_OPS = """
@group(0) @binding(0) var<storage, read> x : array<f32>;
@group(0) @binding(1) var<storage, read> y : array<f32>;
@group(0) @binding(2) var<storage, read> z : array<f32>;
@group(0) @binding(3) var<storage, read_write> o : array<f32>;
@group(0) @binding(4) var<storage, read_write> oi : array<i32>;
@group(0) @binding(5) var<storage, read_write> ou : array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  let i = gid.x;
  let a = x[i]; let b = y[i]; let c = z[i];
  var r = a * b + c;
  r = r - (-a) * abs(b);
  r = fma(r, a, -c) + select(a, b - a, a > b);
  if (a == b || a != a) { r = r + 1.0; }
  o[i] = r;
  oi[i] = i32(a) ^ i32(b * 3.0) ^ i32(a * b - c) ^ bitcast<i32>(a + b) ^ i32(a <= b);
  ou[i] = u32(a) + u32(b) + bitcast<u32>(-a) + bitcast<u32>(abs(c)) + u32(f32(i32(a))) + u32(f32(u32(b)));
}
"""


@pytest.mark.parametrize("profile", ["nvidia-h200", "reference"])
def test_float_ops_with_fma(monkeypatch, profile):
    """fma (and, on nvidia-h200, every a * b + c, contracted) and the H200's f32 rules compiled:
    the same bits as the interpreter, including sums that fall exactly halfway between two f32
    values before the rest of the exact result breaks the tie."""
    rng = np.random.default_rng(4)
    x, y, z = (_edge(v, np.float32, rng) for v in (EDGE_F, EDGE_F[::-1], EDGE_F[3:] + EDGE_F[:3]))
    t = np.float32(1 + 2.0 ** -12)                 # t * t = 1 + 2^-11 + 2^-24: halfway
    x[:8], y[:8] = t, t
    z[:8] = np.float32([2.0 ** -80, -2.0 ** -80, 0, -0.0, 2.0 ** -70, -2.0 ** -60, 1e-45, -1e-45])
    same(NV_FLOAT_OPS, [x, y, z], [4 * N] * 3, (N // 64, 1, 1), monkeypatch, profile=profile)


NV_DIV = """
@group(0) @binding(0) var<storage, read> x : array<f32>;
@group(0) @binding(1) var<storage, read> y : array<f32>;
@group(0) @binding(2) var<storage, read_write> o : array<f32>;
@group(0) @binding(3) var<storage, read_write> p : array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  let i = gid.x;
  let a = x[i]; let b = y[i];
  o[i] = a / b;
  p[i] = a % b;
}
"""


@pytest.mark.parametrize("shader", ["ops", "div"])
def test_h200_division_compiled(monkeypatch, shader):
    """f32 x / y and x % y on nvidia-h200 (MUFU.RCP, its measured table an argument of the kernel):
    the interpreter's bits on edge values, subnormal and huge divisors, exact and NaN remainders."""
    rng = np.random.default_rng(5)
    edge = EDGE_F + [1.5e-38, -1.5e-38, 2.0 ** 126, -2.0 ** 127, 6.0, -6.0, 4e11, -4e11]
    x, y = _edge(edge, np.float32, rng), _edge(edge[::-1], np.float32, rng)
    y[::7] = rng.choice(np.float32([0.0, -0.0, 1e-40, -1e-40, 3.0, -1.0]), y[::7].size)
    if shader == "ops":
        same(FLOAT_OPS, [x, y], [4 * N, 4 * N, 4 * N], (N // 64, 1, 1), monkeypatch, profile="nvidia-h200")
    else:
        same(NV_DIV, [x, y], [4 * N, 4 * N], (N // 64, 1, 1), monkeypatch, profile="nvidia-h200")


def test_control_flow(monkeypatch):
    rng = np.random.default_rng(3)
    x = rng.integers(-2**31, 2**31, N, dtype=np.int64).astype(np.int32)
    same(CONTROL, [x], [4 * N], (8, 1, 1), monkeypatch)


OOB = """
@group(0) @binding(0) var<storage, read> x : array<u32>;
@group(0) @binding(1) var<storage, read_write> o : array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  o[gid.x] = x[x[gid.x]];
}
"""


@pytest.mark.parametrize("bounds", ["strict", "webgpu"])
def test_out_of_bounds_same_error_or_clamp(monkeypatch, bounds):
    x = np.arange(256, dtype=np.uint32)
    x[150] = 1000                                    # workgroup 2, lane 22
    results = []
    for jit in (False, True):
        try:
            results.append(run(OOB, [x], [4 * 256], (4, 1, 1), monkeypatch, jit, bounds=bounds))
        except EmuError as e:
            results.append(str(e))
    if bounds == "webgpu":
        np.testing.assert_array_equal(results[0][0], results[1][0])
    else:
        assert isinstance(results[0], str) and results[0] == results[1]
        assert "workgroup (2, 0, 0)" in results[0]


def test_step_limit_same_error(monkeypatch):
    src = """
@group(0) @binding(0) var<storage, read_write> o : array<u32>;
@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  var k = 0u;
  loop { k = k + 1u; if (k == 0u) { break; } }
  o[gid.x] = k;
}
"""
    msgs = []
    for jit in (False, True):
        monkeypatch.setenv("EMU_JIT", "1" if jit else "0")
        dev = emu.Device("reference", max_steps=5000)
        pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "t.wgsl"))
        with pytest.raises(EmuError) as e:
            dev.dispatch(pipe, {(0, 0): dev.create_buffer(size=128)}, (1, 1, 1))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_racy_shader_left_to_interpreter(monkeypatch):
    # reads what other invocations write: lane order would show, so the JIT declines it
    src = """
@group(0) @binding(0) var<storage, read_write> o : array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  o[(gid.x + 1u) % 64u] = o[gid.x] + 1u;
}
"""
    monkeypatch.setenv("EMU_JIT", "1")
    dev = emu.Device("reference")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "t.wgsl"))
    dev.dispatch(pipe, {(0, 0): dev.create_buffer(size=256)}, (1, 1, 1))
    assert pipe.pipeline._jit is None


def test_aliased_buffers_use_interpreter(monkeypatch):
    src = """
@group(0) @binding(0) var<storage, read> a : array<u32>;
@group(0) @binding(1) var<storage, read_write> o : array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  o[(gid.x + 1u) % 64u] = a[gid.x] + 1u;
}
"""
    outs = []
    for jit in (False, True):
        monkeypatch.setenv("EMU_JIT", "1" if jit else "0")
        dev = emu.Device("reference")
        pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "t.wgsl"))
        buf = dev.create_buffer(np.arange(64, dtype=np.uint32))
        dev.dispatch(pipe, {(0, 0): buf, (0, 1): buf}, (1, 1, 1))     # the same buffer twice
        outs.append(buf.read(np.uint32))
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize("use_bias", [0, 1])
def test_output_bound_again_for_an_unread_input(monkeypatch, capfd, use_bias):
    """ggml binds its output again for a fused input it leaves unused: compiled while that binding
    is never read; read after all, the written buffer is restored and the interpreter runs it."""
    src = """
@group(0) @binding(0) var<storage, read> a : array<u32>;
@group(0) @binding(1) var<storage, read_write> o : array<u32>;
@group(0) @binding(2) var<storage, read> bias : array<u32>;
@group(0) @binding(3) var<storage, read> flag : array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  var v = a[gid.x] * 3u;
  if (flag[0] != 0u) { v = v + bias[(gid.x + 1u) % 64u]; }
  o[gid.x] = v;
}
"""
    outs = []
    for jit in (False, True):
        monkeypatch.setenv("EMU_JIT", "1" if jit else "0")
        monkeypatch.setenv("EMU_JIT_WHY", "1")
        dev = emu.Device("reference")
        pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "t.wgsl"))
        out = dev.create_buffer(np.arange(100, 164, dtype=np.uint32))
        bufs = {(0, 0): dev.create_buffer(np.arange(64, dtype=np.uint32)), (0, 1): out, (0, 2): out,
                (0, 3): dev.create_buffer(np.array([use_bias], np.uint32))}
        capfd.readouterr()
        dev.dispatch(pipe, bufs, (1, 1, 1))
        said = capfd.readouterr().err
        outs.append(out.read(np.uint32))
    np.testing.assert_array_equal(outs[0], outs[1])
    assert ("it read a binding that shares memory with a written one" in said) == bool(use_bias), said


def test_bench_shaders(monkeypatch):
    from pathlib import Path
    shaders = Path(__file__).resolve().parents[2] / "bench" / "shaders"
    rng = np.random.default_rng(4)
    a = rng.standard_normal(64 * 64, dtype=np.float32)
    b = rng.standard_normal(64 * 64, dtype=np.float32)
    same((shaders / "matmul_naive.wgsl").read_text(), [a, b], [4 * 64 * 64], (4, 4, 1), monkeypatch,
         constants={"M": 64, "N": 64, "K": 64})
    same((shaders / "vecadd.wgsl").read_text(), [a, b], [4 * 64 * 64], (16, 1, 1), monkeypatch)


PAR = """
@group(0) @binding(0) var<storage, read> x : array<u32>;
@group(0) @binding(1) var<storage, read_write> o : array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  var acc = x[gid.x];
  for (var k = 0u; k < (acc & 15u); k++) { acc = acc * 1664525u + 1013904223u; }
  o[DEST] = acc;
}
"""


@pytest.mark.parametrize("dest", ["gid.x", "gid.x / 7u", "0u"])
def test_parallel_jit_agrees(monkeypatch, dest):
    # jobs=2 runs the compiled kernel on threads; colliding stores (several invocations writing
    # one element) make it rerun serially, so the highest invocation still wins
    x = np.random.default_rng(9).integers(0, 2**32, 8192, dtype=np.uint64).astype(np.uint32)
    src = PAR.replace("DEST", dest)
    outs = []
    for jit, jobs in ((False, 1), (True, 1), (True, 2)):
        monkeypatch.setenv("EMU_JIT", "1" if jit else "0")
        dev = emu.Device("reference", jobs=jobs)
        pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "t.wgsl"))
        bufs = {(0, 0): dev.create_buffer(x), (0, 1): dev.create_buffer(size=4 * 8192)}
        dev.dispatch(pipe, bufs, (128, 1, 1))
        outs.append(bufs[(0, 1)].read(np.uint32))
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], outs[2])


# -- workgroup memory and barriers: the code between barriers runs invocation by invocation, with
# a check that no invocation touches an element another one touched since the last barrier

WG_SHADERS = {
    "shift": """
var<workgroup> t : array<u32, 64>;
@group(0) @binding(0) var<storage, read> x : array<u32>;
@group(0) @binding(1) var<storage, read_write> o : array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li : u32, @builtin(workgroup_id) wg : vec3<u32>) {
  t[li] = x[wg.x * 64u + li];
  workgroupBarrier();
  var acc = 0u;
  for (var r = 0u; r < 5u; r++) {
    let v = t[(li + r) % 64u];
    workgroupBarrier();
    t[li] = v * 3u + acc;
    acc = acc ^ v;
    workgroupBarrier();
    if (r == 3u) { continue; }
  }
  o[wg.x * 64u + li] = t[63u - li] + acc;
}
""",
    # no barrier between a write and other invocations' reads: lane order would show, so the
    # runtime check hands the dispatch to the interpreter (same bits either way)
    "racy": """
var<workgroup> t : array<u32, 64>;
@group(0) @binding(0) var<storage, read> x : array<u32>;
@group(0) @binding(1) var<storage, read_write> o : array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li : u32, @builtin(workgroup_id) wg : vec3<u32>) {
  t[li] = x[wg.x * 64u + li];
  let v = t[(li + 1u) % 64u];
  workgroupBarrier();
  o[wg.x * 64u + li] = v;
}
""",
    "early_exit": """
var<workgroup> t : array<u32, 64>;
@group(0) @binding(0) var<storage, read> x : array<u32>;
@group(0) @binding(1) var<storage, read_write> o : array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li : u32, @builtin(workgroup_id) wg : vec3<u32>) {
  if (wg.x == 1u) { return; }
  t[li] = x[wg.x * 64u + li];
  workgroupBarrier();
  loop {
    if (t[0] > 7u) { break; }
    workgroupBarrier();
    if (li == 0u) { t[0] = t[0] + 1u; }
    workgroupBarrier();
  }
  o[wg.x * 64u + li] = t[li] + t[0];
}
""",
}


@pytest.mark.parametrize("name", sorted(WG_SHADERS))
def test_workgroup_mode(monkeypatch, name):
    x = np.random.default_rng(10).integers(0, 10, 256).astype(np.uint32)
    # "racy" races on purpose (the race detector reports it, tests/reliability/test_races.py):
    # here it checks that the JIT hands it over and the bits agree when races run unchecked
    same(WG_SHADERS[name], [x], [4 * 256], (4, 1, 1), monkeypatch, race_check=name != "racy")


def test_workgroup_divergent_barrier_same_error(monkeypatch):
    src = """
var<workgroup> t : array<u32, 64>;
@group(0) @binding(0) var<storage, read_write> o : array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li : u32) {
  if (li == 5u) { return; }
  t[li] = li;
  workgroupBarrier();
  o[li] = t[63u - li];
}
"""
    msgs = []
    for jit in (False, True):
        monkeypatch.setenv("EMU_JIT", "1" if jit else "0")
        dev = emu.Device("reference")
        pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "t.wgsl"))
        with pytest.raises(EmuError) as e:
            dev.dispatch(pipe, {(0, 0): dev.create_buffer(size=256)}, (1, 1, 1))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_bench_workgroup_shaders(monkeypatch):
    from pathlib import Path
    shaders = Path(__file__).resolve().parents[2] / "bench" / "shaders"
    rng = np.random.default_rng(11)
    a = rng.standard_normal(64 * 64, dtype=np.float32)
    b = rng.standard_normal(64 * 64, dtype=np.float32)
    same((shaders / "matmul_tiled.wgsl").read_text(), [a, b], [4 * 64 * 64], (4, 4, 1), monkeypatch,
         constants={"M": 64, "N": 64, "K": 64})
    same((shaders / "reduce.wgsl").read_text(), [a], [4 * 16], (16, 1, 1), monkeypatch)


def unrolled_reduction(steps: int = 6) -> str:
    """A workgroup-mode shader the size of llama.cpp's unrolled norms: a tree reduction through
    workgroup memory written out step by step (a group between each pair of barriers), inside a
    loop over rows, with function variables that the first group sets and later groups store
    before reading (unconditionally, or in both arms of a branch) or carry across groups."""
    body = []
    for k in range(steps):
        half = 64 >> (k + 1)
        body.append(f"""
    workgroupBarrier();
    tmp = t[li];
    if (li < {half}u) {{
      var u = t[li + {half}u];
      u = u * scale + f32(k{k % 3}) * 0.25;
      if (u > tmp) {{ m = u - tmp; }} else {{ m = tmp - u; }}
      tmp = fma(tmp, 0.5, u * 0.5) + m * 0.125;
      carry = carry + m;
      k{k % 3} = k{k % 3} ^ bitcast<u32>(tmp);
    }}
    workgroupBarrier();
    t[li] = tmp;""")
    return f"""
var<workgroup> t : array<f32, 64>;
@group(0) @binding(0) var<storage, read> x : array<f32>;
@group(0) @binding(1) var<storage, read_write> o : array<f32>;
@group(0) @binding(2) var<storage, read_write> bits : array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li : u32, @builtin(workgroup_id) wg : vec3<u32>) {{
  var tmp = 0.0;
  var m = 0.0;
  var carry = 0.0;
  var scale = 1.0;
  var k0 = 0u;
  var k1 = 1u;
  var k2 = 2u;
  for (var row = 0u; row < 3u; row++) {{
    t[li] = x[(wg.x * 3u + row) * 64u + li] * scale;
    scale = scale * 1.5;
{"".join(body)}
    workgroupBarrier();
    o[(wg.x * 3u + row) * 64u + li] = t[0] + carry;
    workgroupBarrier();
  }}
  bits[wg.x * 64u + li] = k0 + k1 * 3u + k2 * 7u;
}}
"""


def test_long_workgroup_kernel_in_functions(monkeypatch):
    """A long workgroup-mode kernel is cut into functions (emu/jit/outline.py: values one group
    uses are its locals, long groups and statements that hold barriers are functions of their
    own), none as long as the whole, with the interpreter's bits."""
    from emu.jit import outline
    from emu.jit.tier import longest_function
    rng = np.random.default_rng(21)
    x = rng.standard_normal(4 * 3 * 64).astype(np.float32)
    x[::17] = 0.0
    src = unrolled_reduction()
    same(src, [x], [4 * 4 * 3 * 64, 4 * 4 * 64], (4, 1, 1), monkeypatch, profile="nvidia-h200")
    monkeypatch.setenv("EMU_JIT", "1")
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "t.wgsl")).pipeline
    from emu.jit import fuse
    source = fuse.compile_pipeline(pipe).source
    lines = source.count("\n")
    assert source.count("\ndef grp") >= 4, "the groups were not made functions"
    assert longest_function(source) < lines / 2
    assert outline.MIN_LINES > 1
    # values used by one group only are its locals: far fewer per-lane arrays than values
    assert source.count("np.zeros((") <= 6


@pytest.mark.parametrize("name", sorted(WG_SHADERS) + ["unrolled"])
def test_workgroup_kernel_cut_finely_same_bits(monkeypatch, name):
    """Every cut emu/jit/outline.py makes, made as often as it can be (groups cut after each
    statement, every region of two lines a function, runs of statements of a few lines): returns,
    breaks and continues inside the parts, values and variables crossing them, the interpreter's
    bits."""
    from emu.jit import outline
    monkeypatch.setattr(outline, "GROUP_LINES", 1)
    monkeypatch.setattr(outline, "MIN_LINES", 2)
    monkeypatch.setattr(outline, "CHUNK_LINES", 12)
    rng = np.random.default_rng(22)
    if name == "unrolled":
        x = rng.standard_normal(4 * 3 * 64).astype(np.float32)
        same(unrolled_reduction(3), [x], [4 * 4 * 3 * 64, 4 * 4 * 64], (4, 1, 1), monkeypatch, profile="nvidia-h200")
        return
    x = rng.integers(0, 10, 256).astype(np.uint32)
    same(WG_SHADERS[name], [x], [4 * 256], (4, 1, 1), monkeypatch, race_check=name != "racy")


STRUCT_BUFFERS = """
struct Input { n : u32, scale : f32, data : array<f32> }
struct Params { bias : i32, limit : u32 }
@group(0) @binding(0) var<storage, read> inp : Input;
@group(0) @binding(1) var<uniform> params : Params;
@group(0) @binding(2) var<storage, read_write> o : array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  let i = gid.x;
  var v = f32(params.bias);
  if (i < inp.n && i < params.limit) { v = inp.data[i] * inp.scale + v; }
  o[i] = v + f32(arrayLength(&inp.data));
}
"""


def test_struct_buffers(monkeypatch):
    """Buffers that are structs (scalars and a runtime-sized array at an offset): each member the
    kernel indexes is a view of its own into the binding, as SPIR-V's Block-decorated structs are."""
    rng = np.random.default_rng(12)
    inp = np.concatenate([np.array([N - 40], np.uint32), np.array([1.5, 0, 0], np.float32).view(np.uint32),
                          rng.standard_normal(N - 3).astype(np.float32).view(np.uint32)])
    params = np.array([-3, N - 7, 0, 0], np.int32)
    same(STRUCT_BUFFERS, [inp, params], [4 * N], (N // 64, 1, 1), monkeypatch)


# llama.cpp's element-wise shaders (ggml's Vulkan backend): a switch with only a default (a block
# that `break` leaves), a loop of stores (each invocation stores num_iter elements), f16 buffers
# converted to and from f32, inverseSqrt (rms_norm)
SWITCH_LOOP_STORES = """
@group(0) @binding(0) var<storage, read> x : array<i32>;
@group(0) @binding(1) var<storage, read_write> o : array<i32>;
@group(0) @binding(2) var<storage, read_write> p : array<i32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  let i = gid.x;
  let n = x[i];
  var acc = 0;
  for (var k = 0; k < 3; k++) {
    switch (n & 7) {
      case 0, 1: { acc = acc + 10; }
      case 2: { if (k == 1) { continue; } acc = acc * 3; }
      case 3: { if (k == 2) { break; } acc = acc - 7; }
      case 5: { if (k == 1) { p[i] = -5; return; } acc = acc ^ n; }
      default: { acc = acc + n; }
    }
    o[3u * i + u32(k)] = acc;       // a store in a loop: three elements per invocation
  }
  switch (n & 1) {
    default: {
      if (n < 0) { p[i] = acc; break; }
      p[i] = acc + 1;               // a second store instruction into p
    }
  }
}
"""


@pytest.mark.parametrize("profile", ["nvidia-h200", "reference"])
def test_switch_and_stores_in_a_loop(monkeypatch, profile):
    rng = np.random.default_rng(11)
    x = _edge(EDGE_I, np.int32, rng)
    same(SWITCH_LOOP_STORES, [x], [12 * N, 4 * N], (N // 64, 1, 1), monkeypatch, profile=profile)


OVERLAPPING_STORES = """
@group(0) @binding(0) var<storage, read> x : array<u32>;
@group(0) @binding(1) var<storage, read_write> o : array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  for (var k = 0u; k < 2u; k++) {
    o[(gid.x + k) % arrayLength(&o)] = x[gid.x] * 10u + k;
  }
}
"""


def test_stores_in_a_loop_that_overlap_go_to_the_interpreter(monkeypatch):
    """Invocation i stores element i + 1 in its second iteration and i + 1 stores it in its first:
    lockstep lets i's second store win, lane order i + 1's; the kernel sees the second owner and
    the interpreter runs the dispatch (the same bits as the reference)."""
    x = np.arange(N, dtype=np.uint32)
    outs = []
    for jit in (False, True):
        monkeypatch.setenv("EMU_JIT", "1" if jit else "0")
        dev = emu.Device("reference")
        pipe = dev.create_compute_pipeline(dev.create_shader_module(OVERLAPPING_STORES, "t.wgsl"))
        o = dev.create_buffer(size=4 * N)
        dev.dispatch(pipe, {(0, 0): dev.create_buffer(x), (0, 1): o}, (N // 64, 1, 1))
        outs.append(o.read(np.uint32))
        if jit:
            assert pipe.pipeline._jit is not None and pipe.pipeline._jit.guarded
            assert pipe.pipeline.ran == {"interpreted": N // 64, "compiled": 0}
    np.testing.assert_array_equal(outs[0], outs[1])
    assert outs[0][1] == 0 * 10 + 1             # lockstep: invocation 0's second store wins


F16_CONVERSIONS = """
enable f16;
@group(0) @binding(0) var<storage, read> h : array<f16>;
@group(0) @binding(1) var<storage, read> x : array<f32>;
@group(0) @binding(2) var<storage, read_write> o32 : array<f32>;
@group(0) @binding(3) var<storage, read_write> o16 : array<f16>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  let i = gid.x;
  o32[i] = f32(h[i]);
  var r = f16(x[i]);
  if ((i & 7u) == 3u) { r = select(h[i], r, x[i] > 0.0); }
  o16[i] = r;
}
"""


@pytest.mark.parametrize("profile", ["nvidia-h200", "reference"])
def test_f16_loads_stores_and_conversions(monkeypatch, profile):
    """Every f16 bit pattern to f32, and f32 values around every f16 rounding boundary (ties
    included), subnormals, overflow and NaNs with payloads to f16: the bits of emu.numerics."""
    n = 1 << 16
    h = np.arange(n, dtype=np.uint16)
    rng = np.random.default_rng(5)
    base = (rng.integers(0, 1 << 16, n).astype(np.uint32) << 13) + rng.choice(
        np.array([0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF], np.uint32), n)
    x = base + np.uint32(0x38000000) * (rng.random(n) < 0.5)        # the f16 range and beyond
    x[:8] = [0x7FC00001, 0xFFA00000, 0x7F800000, 0x477FEFFF, 0x477FF000, 0x33000000, 0x33000001, 0x80000001]
    outs = [run(F16_CONVERSIONS, [h.view(np.float16), x.view(np.float32)], [4 * n, 2 * n], (n // 64, 1, 1),
                monkeypatch, jit, profile=profile) for jit in (False, True)]
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


NV_RSQ = """
@group(0) @binding(0) var<storage, read> x : array<f32>;
@group(0) @binding(1) var<storage, read_write> o : array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  o[gid.x] = inverseSqrt(x[gid.x]);
}
"""


def test_inverse_sqrt_on_nvidia_h200(monkeypatch):
    """MUFU.RSQ's measured table, compiled: zeros, subnormals (flushed), negatives, NaNs, both
    exponent parities and random bits."""
    rng = np.random.default_rng(6)
    x = rng.integers(0, 1 << 32, 1 << 14, dtype=np.uint64).astype(np.uint32)
    x[:12] = [0, 0x80000000, 1, 0x80000001, 0x3F800000, 0x40000000, 0x40800000, 0x7F800000, 0xFF800000,
              0x7FC00000, 0x7F7FFFFF, 0x00800000]
    same(NV_RSQ, [x.view(np.float32)], [4 * x.size], (x.size // 64, 1, 1), monkeypatch, profile="nvidia-h200")


def test_owners_of_an_earlier_dispatch_do_not_count(monkeypatch):
    """The owner arrays are kept from dispatch to dispatch (a new epoch each): the second dispatch
    of a pipeline stores to the same elements as the first and still runs compiled."""
    monkeypatch.setenv("EMU_JIT", "1")
    x = np.arange(N, dtype=np.int32)
    dev = emu.Device("reference")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SWITCH_LOOP_STORES, "t.wgsl"))
    bufs = {(0, 0): dev.create_buffer(x), (0, 1): dev.create_buffer(size=12 * N), (0, 2): dev.create_buffer(size=4 * N)}
    for _ in range(3):
        dev.dispatch(pipe, bufs, (N // 64, 1, 1))
        assert pipe.pipeline.ran == {"interpreted": 0, "compiled": N // 64}
    assert pipe.pipeline._jit._epoch == 3
