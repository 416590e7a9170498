"""Sharded dispatch (emu/cluster/shard.py) on a LocalCluster of 2 workers: every test shader gives
the bits (and the warnings) of one process; those that cannot be split run in one process with a
note saying why; commutative atomics are combined exactly; a race between workgroups is reported."""
from __future__ import annotations

import glob
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.cluster import Cluster
from emu.cluster.shard import plan
from emu.hw.diff import buffer_size, random_inputs
from emu.isa.ir import used_globals

ROOT = Path(__file__).resolve().parents[2]
SHADERS = sorted(glob.glob(str(ROOT / "tests/shaders/*.wgsl")) + glob.glob(str(ROOT / "tests/shaders/realworld/*.wgsl"))
                 + glob.glob(str(ROOT / "emu/examples/*.wgsl")))
OVERRIDES = {"consts_overrides.wgsl": {"COUNT": 3}, "gemm_wgpu.wgsl": {"M": 32, "N": 64, "K": 32},
             "gemm_dawn.wgsl": {"M": 64, "N": 128, "K": 32}}
GRIDS = {"gemm_wgpu.wgsl": (4, 2, 1), "gemm_dawn.wgsl": (4, 2, 1)}       # else (8, 1, 1)
# the ones the merge cannot split soundly, and why (the note's words)
ONE_PROCESS = {"atomics.wgsl": "the value atomicAdd returns is used",
               "functions.wgsl": "is both read and written",
               "structs_arrays.wgsl": "is both read and written",
               "swizzle_assign.wgsl": "is both read and written",
               "result_structs.wgsl": "atomicCompareExchangeWeak"}
# written for one workgroup (or their clamped out-of-bounds stores meet on the last element): on
# 8 workgroups, workgroups of two ranges write the same bytes, which is reported, and the dispatch
# runs again in one process
RACES = {"consts_overrides.wgsl", "builtin_misc.wgsl", "mixed_stages.wgsl", "quads.wgsl",
         "staged_f16_gemm.wgsl", "subgroups.wgsl"}


@pytest.fixture(scope="module")
def cluster():
    with Cluster("local:2") as cl:
        yield cl


def cases():
    for f in SHADERS:
        dev = emu.Device("reference")
        mod = dev.create_shader_module(Path(f).read_text(), f)
        for ep in mod.ir.entry_points():
            if ep.name != "clash":        # mixed_stages.wgsl's entry point that binding checks refuse
                yield pytest.param(f, ep.name, id=f"{Path(f).name}:{ep.name}")


def inputs(pipe, seed):
    rng = np.random.default_rng(seed)
    out = {}
    for g in used_globals(pipe.module, pipe.entry):
        if g.space in ("storage", "uniform"):
            n = buffer_size(g.type, 8192)
            if g.space == "uniform":        # sizes and counts: small words, so loops end
                out[(g.group, g.binding)] = rng.integers(1, 9, -(-n // 4)).astype(np.uint32).view(np.uint8)[:n].copy()
            else:
                out[(g.group, g.binding)] = np.frombuffer(random_inputs(g.type, n, rng), np.uint8).copy()
    return out


def run_both(cluster, dev, pipe, arrays, grid, shards=4):
    one = {k: v.copy() for k, v in arrays.items()}
    split = {k: v.copy() for k, v in arrays.items()}
    w1 = [w.format() for w in dev.dispatch(pipe, one, grid)]
    if shards is None:                  # the API's spelling: one range per worker thread
        w2 = [w.format() for w in dev.dispatch(pipe, split, grid, cluster=cluster)]
    else:
        w2 = [w.format() for w in cluster.dispatch(dev, pipe, split, grid, shards=shards)]
    return one, split, w1, w2


@pytest.mark.parametrize("path,entry", list(cases()))
def test_every_test_shader_gives_the_bits_of_one_process(cluster, path, entry):
    name = Path(path).name
    profile = "nvidia-h200" if name.startswith("gemm_") or "f16" in name else "reference"
    dev = emu.Device(profile)
    mod = dev.create_shader_module(Path(path).read_text(), path)
    pipe = dev.create_compute_pipeline(mod, entry, OVERRIDES.get(name))
    arrays = inputs(pipe.pipeline, 7)
    one, split, w1, w2 = run_both(cluster, dev, pipe, arrays, GRIDS.get(name, (8, 1, 1)))
    for k in one:
        assert one[k].tobytes() == split[k].tobytes(), f"binding {k} differs"
    if name in ONE_PROCESS:
        assert w2[0].startswith(f"{path}:") and "note: ran in one process" in w2[0]
        assert ONE_PROCESS[name] in w2[0]
        assert w2[1:] == w1
        assert plan(pipe.pipeline).reason is not None
    elif name in RACES:
        assert "warning: data race between workgroups: workgroups (0, 0, 0)..(1, 0, 0) and (2, 0, 0)..(3, 0, 0) " \
               "both wrote byte" in w2[0]
        assert w2[1:] == w1
    else:
        assert w2 == w1                     # the same out-of-bounds warnings, counts and first places
        assert cluster.last["shards"] == 4
        assert plan(pipe.pipeline).writes   # each writes something, so the merge did work


def test_sharded_gemm_on_h200_is_bit_identical(cluster):
    dev = emu.Device("nvidia-h200")
    src = (ROOT / "emu/examples/gemm_dawn.wgsl").read_text()
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "gemm_dawn.wgsl"),
                                       constants={"M": 128, "N": 128, "K": 64})
    rng = np.random.default_rng(3)
    a = rng.standard_normal((128, 64)).astype(np.float16)
    b = rng.standard_normal((64, 128)).astype(np.float16)
    c = rng.standard_normal((128, 128)).astype(np.float32)
    one, split, w1, w2 = run_both(cluster, dev, pipe, {(0, 0): a, (0, 1): b, (0, 2): c}, (4, 4, 1), shards=3)
    assert w1 == w2 == []
    assert one[(0, 2)].view(np.uint32).tobytes() == split[(0, 2)].view(np.uint32).tobytes()
    assert not np.array_equal(one[(0, 2)], c)


ATOMICS = """
@group(0) @binding(0) var<storage, read_write> sum: array<atomic<u32>, 4>;
@group(0) @binding(1) var<storage, read_write> lo: array<atomic<i32>, 4>;
@group(0) @binding(2) var<storage, read_write> hi: array<atomic<u32>, 4>;
@group(0) @binding(3) var<storage, read_write> ands: array<atomic<u32>, 4>;
@group(0) @binding(4) var<storage, read_write> ors: array<atomic<u32>, 4>;
@group(0) @binding(5) var<storage, read_write> xors: array<atomic<u32>, 4>;
@group(0) @binding(6) var<storage, read> x: array<u32>;
@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  let v = x[g.x];
  atomicAdd(&sum[v % 4u], v);
  atomicSub(&sum[(v >> 3u) % 4u], 7u);
  atomicMin(&lo[v % 4u], bitcast<i32>(v * 2654435761u));
  atomicMax(&hi[v % 4u], v);
  atomicAnd(&ands[v % 4u], ~(1u << (v % 32u)));
  atomicOr(&ors[v % 4u], 1u << (v % 32u));
  atomicXor(&xors[v % 4u], v * 40503u);
}
"""


def test_commutative_atomics_are_combined_exactly(cluster):
    dev = emu.Device("reference")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(ATOMICS, "atomics_all.wgsl"))
    assert plan(pipe.pipeline).writes == {(0, 0): ("atomic", "add", "u32"), (0, 1): ("atomic", "min", "i32"),
                                          (0, 2): ("atomic", "max", "u32"), (0, 3): ("atomic", "and", "u32"),
                                          (0, 4): ("atomic", "or", "u32"), (0, 5): ("atomic", "xor", "u32")}
    rng = np.random.default_rng(1)
    arrays = {(0, b): rng.integers(0, 1 << 32, 4, dtype=np.uint64).astype(np.uint32) for b in range(6)}
    arrays[(0, 1)] = arrays[(0, 1)].view(np.int32)
    arrays[(0, 6)] = rng.integers(0, 1 << 32, 16 * 24, dtype=np.uint64).astype(np.uint32)
    one, split, w1, w2 = run_both(cluster, dev, pipe, arrays, (24, 1, 1), shards=5)
    assert w1 == w2 == []
    for k in one:
        assert one[k].tobytes() == split[k].tobytes(), f"binding {k} differs"
        if k != (0, 6):
            assert one[k].tobytes() != arrays[k].tobytes()


# 64-bit atomics: naga's atomic<u64>/<i64> and Dawn's atomic<vec2<u32>> are merged in 64-bit words
# (a max of the two 32-bit halves apart, or an add without the carry, would differ)
ATOMICS64 = {
    "vec2u": ("""enable atomic_vec2u_min_max;
@group(0) @binding(0) var<storage, read_write> hi: array<atomic<vec2u>, 4>;
@group(0) @binding(1) var<storage, read_write> lo: array<atomic<vec2u>, 4>;
@group(0) @binding(2) var<storage, read> x: array<vec2u>;
@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  let v = x[g.x];
  atomicStoreMax(&hi[v.x % 4u], v);
  atomicStoreMin(&lo[v.y % 4u], v);
}
""", {(0, 0): ("atomic", "max", "u64"), (0, 1): ("atomic", "min", "u64")}),
    "naga64": ("""@group(0) @binding(0) var<storage, read_write> sum: array<atomic<u64>, 4>;
@group(0) @binding(1) var<storage, read_write> lo: array<atomic<i64>, 4>;
@group(0) @binding(2) var<storage, read> x: array<vec2u>;
@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  let v = bitcast<u64>(x[g.x]);
  atomicAdd(&sum[u32(v % 4lu)], v);
  atomicMin(&lo[u32(v >> 62u)], bitcast<i64>(v));
}
""", {(0, 0): ("atomic", "add", "u64"), (0, 1): ("atomic", "min", "i64")}),
}


@pytest.mark.parametrize("which", sorted(ATOMICS64))
def test_64_bit_atomics_are_combined_exactly(cluster, which):
    src, writes = ATOMICS64[which]
    dev = emu.Device("reference")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, f"{which}.wgsl"))
    assert plan(pipe.pipeline).writes == writes
    rng = np.random.default_rng(5)
    arrays = {(0, b): rng.integers(0, 1 << 32, 8, dtype=np.uint64).astype(np.uint32) for b in range(2)}
    arrays[(0, 2)] = rng.integers(0, 1 << 32, (16 * 24, 2), dtype=np.uint64).astype(np.uint32)
    arrays[(0, 2)][::5, 1] = arrays[(0, 0)][1]              # high words that tie with the start values
    one, split, w1, w2 = run_both(cluster, dev, pipe, arrays, (24, 1, 1), shards=5)
    assert w1 == w2 == []
    for k in one:
        assert one[k].tobytes() == split[k].tobytes(), f"binding {k} differs"
    assert one[(0, 0)].tobytes() != arrays[(0, 0)].tobytes() and one[(0, 1)].tobytes() != arrays[(0, 1)].tobytes()


RACE = """
@group(0) @binding(0) var<storage, read_write> out: array<u32, 8>;
@compute @workgroup_size(4)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) i: u32) {
  out[i] = wg.x + 1u;          // every workgroup writes the same four words
}
"""


def test_a_race_between_workgroups_is_reported_and_the_result_is_one_process(cluster):
    dev = emu.Device("reference")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(RACE, "race.wgsl"))
    one, split, w1, w2 = run_both(cluster, dev, pipe, {(0, 0): np.zeros(8, np.uint32)}, (6, 1, 1), shards=None)
    assert w1 == []
    assert len(w2) == 1 and "warning: data race between workgroups: workgroups (0, 0, 0)..(2, 0, 0) and " \
                              "(3, 0, 0)..(5, 0, 0) both wrote byte 0 of 'out'" in w2[0]
    assert split[(0, 0)].tolist() == one[(0, 0)].tolist() == [6, 6, 6, 6, 0, 0, 0, 0]


def test_emu_run_cluster_writes_the_same_file(tmp_path):
    import contextlib
    import io
    from emu.cli import main
    rng = np.random.default_rng(0)
    for n in "ab":
        np.save(tmp_path / f"{n}.npy", rng.standard_normal((64, 64)).astype(np.float16))
    base = ["run", "@gemm_wgpu", "--dispatch", "4,4", "--profile", "nvidia-h200", "--override", "M=64",
            "--override", "N=64", "--override", "K=64", "--buffer", f"0:0={tmp_path}/a.npy",
            "--buffer", f"0:1={tmp_path}/b.npy", "--buffer", "0:2=zeros:64x64:f32"]
    outs = []
    for extra in ([], ["--cluster", "local:2", "--shards", "3"]):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = main(base + extra + ["--output", f"0:2={tmp_path}/c{len(outs)}.npy"])
        line = err.getvalue()       # emu run's summary line, and nothing else
        assert rc == 0 and line.startswith("emu: ran 'main' on nvidia-h200, dispatch 4x4x1 (16 workgroups) in ")
        assert line.count("\n") == 1 and (" s, on the cluster; wrote " in line) == bool(extra), line
        outs.append((tmp_path / f"c{len(outs)}.npy").read_bytes())
    assert outs[0] == outs[1]


def test_cluster_spec_and_missing_engine_are_one_message(tmp_path):
    import subprocess
    import sys
    from emu.cli import main
    assert main(["run", "@gemm_wgpu", "--dispatch", "1", "--cluster", "local:0"]) == 2
    code = ("import sys; sys.modules['distributed'] = None\nfrom emu.cli import main\n"
            "sys.exit(main(['run', '@gemm_wgpu', '--dispatch', '1', '--override', 'M=16', '--override', 'N=16', "
            "'--override', 'K=16', '--cluster', 'local:2']))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        "emu: error: --cluster needs Dask's distributed, which is not installed",
        "   hint: install the extra: pip install 'emu-gpu[cluster]' (Dask's distributed)"]


def test_merge_of_interleaved_writes_and_the_first_overlap():
    """Two ranges writing every other 2-byte unit (10,000 runs each: the merge's mask path), then
    one unit written by both."""
    from emu.cluster.shard import _merge, changed_runs

    class Var:
        name, group, binding, loc = "out", 0, 0, None
    init = np.zeros(40000, np.uint8)
    full = np.random.default_rng(5).integers(1, 256, init.size, dtype=np.uint8)
    unit = np.arange(init.size) // 2
    finals = [np.where(unit % 2 == s, full, init) for s in (0, 1)]
    runs = [{"written": {(0, 0): changed_runs(f, init)}} for f in finals]
    assert runs[0]["written"][(0, 0)][0].size == 10000
    merged, race = _merge(runs, [(0, 1), (1, 2)], {(0, 0): init}, {(0, 0): ("plain",)}, {(0, 0): Var}, (2, 1, 1))
    assert race is None and merged[(0, 0)].tobytes() == full.tobytes()
    finals[1][30000:30002] = 7                  # unit 15000 (range 0's) written by range 1 too
    runs[1] = {"written": {(0, 0): changed_runs(finals[1], init)}}
    merged, race = _merge(runs, [(0, 1), (1, 2)], {(0, 0): init}, {(0, 0): ("plain",)}, {(0, 0): Var}, (2, 1, 1))
    assert merged is None
    assert race.message.startswith("data race between workgroups: workgroups (0, 0, 0)..(0, 0, 0) and "
                                   "(1, 0, 0)..(1, 0, 0) both wrote byte 30000 of 'out'")


STRICT = """
@group(0) @binding(0) var<storage, read_write> out: array<u32, 64>;
@compute @workgroup_size(8)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) i: u32) {
  out[wg.x * 8u + i + select(0u, 100u, wg.x >= 5u)] = wg.x;
}
"""


def test_an_error_in_one_range_is_the_error_of_one_process(cluster):
    dev = emu.Device("reference", bounds="strict")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(STRICT, "strict.wgsl"))
    errors = []
    for run in (lambda b: dev.dispatch(pipe, b, (8, 1, 1)), lambda b: cluster.dispatch(dev, pipe, b, (8, 1, 1), shards=4)):
        with pytest.raises(emu.EmuError) as e:
            run({(0, 0): np.zeros(64, np.uint32)})
        errors.append(e.value.format())
    assert errors[0] == errors[1]
    assert "workgroup (5, 0, 0)" in errors[0] and errors[0].startswith("strict.wgsl:5:")


def test_a_worker_killed_during_a_dispatch_loses_nothing(cluster):
    """(The last test of the module: the cluster has one worker less until its nanny restarts it.)"""
    import os
    import signal
    import threading
    dev = emu.Device("nvidia-h200")
    src = (ROOT / "emu/examples/gemm_wgpu.wgsl").read_text()
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "gemm_wgpu.wgsl"),
                                       constants={"M": 256, "N": 256, "K": 1024})
    rng = np.random.default_rng(4)
    a = rng.standard_normal((256, 1024)).astype(np.float16)
    b = rng.standard_normal((1024, 256)).astype(np.float16)
    one = np.zeros((256, 256), np.float32)
    dev.dispatch(pipe, {(0, 0): a, (0, 1): b, (0, 2): one}, (16, 16, 1))
    cluster.dispatch(dev, pipe, {(0, 0): a, (0, 1): b, (0, 2): np.zeros((256, 256), np.float32)}, (16, 16, 1))
    split, killed, done = np.zeros((256, 256), np.float32), [], threading.Event()

    def kill_a_busy_worker():
        client = cluster.client
        while not killed and not done.is_set():
            busy = [w for w, tasks in client.processing().items() if tasks]
            if busy:
                pids = client.run(os.getpid, workers=[busy[0]])
                killed.append(pids[busy[0]])
                os.kill(killed[0], signal.SIGKILL)
    t = threading.Thread(target=kill_a_busy_worker)
    t.start()
    try:
        warned = cluster.dispatch(dev, pipe, {(0, 0): a, (0, 1): b, (0, 2): split}, (16, 16, 1), shards=8)
    finally:
        done.set()
        t.join()
    assert warned == [] and killed
    assert one.view(np.uint32).tobytes() == split.view(np.uint32).tobytes()
