"""--jobs changes how many threads the compiled kernels use, never a result: a tiled GEMM on the
matrix units (parallel MMA kernel), an atomics shader (atomics run in the interpreter's defined
order) and the `emu run --jobs` command line give the same bits with 1 and 2 jobs."""
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.cli import main

ROOT = Path(__file__).resolve().parents[2]
GEMM = (ROOT / "emu" / "examples" / "gemm_dawn.wgsl").read_text()

ATOMICS = """
@group(0) @binding(0) var<storage, read> x : array<u32>;
@group(0) @binding(1) var<storage, read_write> hist : array<atomic<u32>, 16>;
@group(0) @binding(2) var<storage, read_write> order : array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  let v = x[gid.x];
  let old = atomicAdd(&hist[v % 16u], v);
  order[gid.x] = old;
  atomicMax(&hist[(v / 16u) % 16u], gid.x);
}
"""


def gemm(jobs, profile):
    dev = emu.Device(profile, jobs=jobs)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(GEMM, "gemm_dawn.wgsl"),
                                       constants={"M": 128, "N": 96, "K": 64})
    rng = np.random.default_rng(5)
    a = rng.uniform(-2, 2, (128, 64)).astype(np.float16)
    b = rng.uniform(-2, 2, (64, 96)).astype(np.float16)
    a[3, 5] = np.inf
    b[7, 9] = np.nan
    bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b),
            (0, 2): dev.create_buffer(size=4 * 128 * 96)}
    dev.dispatch(pipe, bufs, (3, 4, 1))
    return bufs[(0, 2)].read(np.uint32)


@pytest.mark.parametrize("profile", ["nvidia-h200", "reference"])
def test_gemm_jobs_agree(profile):
    np.testing.assert_array_equal(gemm(1, profile), gemm(2, profile))


def atomics(jobs):
    dev = emu.Device("reference", jobs=jobs)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(ATOMICS, "atomics.wgsl"))
    x = np.random.default_rng(6).integers(0, 1000, 1024).astype(np.uint32)
    bufs = {(0, 0): dev.create_buffer(x), (0, 1): dev.create_buffer(size=64),
            (0, 2): dev.create_buffer(size=4 * 1024)}
    dev.dispatch(pipe, bufs, (16, 1, 1))
    return bufs[(0, 1)].read(np.uint32), bufs[(0, 2)].read(np.uint32)


def test_atomics_jobs_agree():
    for x, y in zip(atomics(1), atomics(2)):
        np.testing.assert_array_equal(x, y)


def test_cli_jobs(tmp_path):
    rng = np.random.default_rng(8)
    np.save(tmp_path / "a.npy", rng.uniform(-1, 1, (64, 64)).astype(np.float16))
    np.save(tmp_path / "b.npy", rng.uniform(-1, 1, (64, 64)).astype(np.float16))
    np.save(tmp_path / "z.npy", np.zeros((64, 64), np.float32))
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"c{jobs}.npy"
        rc = main(["run", str(ROOT / "emu" / "examples" / "gemm_dawn.wgsl"), "--profile", "nvidia-h200",
                   "--dispatch", "2,2", "--override", "M=64", "--override", "N=64", "--override", "K=64",
                   "--buffer", f"0:0={tmp_path / 'a.npy'}", "--buffer", f"0:1={tmp_path / 'b.npy'}",
                   "--buffer", f"0:2={tmp_path / 'z.npy'}",
                   "--output", f"0:2={out}", "--jobs", jobs])
        assert rc == 0
        outs.append(np.load(out))
    np.testing.assert_array_equal(outs[0].view(np.uint32), outs[1].view(np.uint32))
