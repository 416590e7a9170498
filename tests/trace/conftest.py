"""Helpers for the tracing tests: run the example GEMMs (or a small shader) with a tracer."""
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.trace.select import Selection
from emu.trace.tracer import MemorySink, Tracer

HERE = Path(__file__).parent
BLOCK = {"gemm_dawn": 32, "gemm_wgpu": 16}


def example(name: str) -> str:
    return resources.files("emu.examples").joinpath(f"{name}.wgsl").read_text()


def gemm_inputs(size=32, seed=0, specials=False):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (size, size)).astype(np.float16)
    b = rng.uniform(-1, 1, (size, size)).astype(np.float16)
    if specials:
        a[0, 0], a[1, 2], b[3, 1] = np.nan, np.inf, -np.inf
    return a, b


def run_gemm(kernel, profile, tracer=None, size=32, subgroup_size=None, a=None, b=None):
    """(output C as float32 matrix, records or None) of C = A x B on the example kernel."""
    if a is None:
        a, b = gemm_inputs(size)
    dev = emu.Device(profile, subgroup_size, tracer=tracer)
    mod = dev.create_shader_module(example(kernel), f"emu/examples/{kernel}.wgsl")
    pipe = dev.create_compute_pipeline(mod, constants={"M": size, "N": size, "K": size})
    bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b),
            (0, 2): dev.create_buffer(size=4 * size * size)}
    grid = (size // BLOCK[kernel], size // BLOCK[kernel], 1)
    if tracer is not None:
        tracer.begin(dev, mod, pipe, grid)
    dev.dispatch(pipe, bufs, grid)
    if tracer is not None:
        tracer.end()
    return bufs[(0, 2)].read(np.float32).reshape(size, size), (tracer.records if tracer else None)


def traced(kernel, profile, size=32, subgroup_size=None, a=None, b=None, **sel):
    tr = Tracer(sink=MemorySink(), selection=Selection.parse(**sel))
    return run_gemm(kernel, profile, tr, size, subgroup_size, a, b)


def run_reduce(tracer=None, groups=3):
    src = (HERE / "shaders" / "wg_reduce.wgsl").read_text()
    dev = emu.Device("reference", 32, tracer=tracer)
    mod = dev.create_shader_module(src, "tests/trace/shaders/wg_reduce.wgsl")
    pipe = dev.create_compute_pipeline(mod)
    x = (np.arange(64 * groups, dtype=np.float32) % 7) - 3
    bufs = {(0, 0): dev.create_buffer(x), (0, 1): dev.create_buffer(size=4 * groups)}
    if tracer is not None:
        tracer.begin(dev, mod, pipe, (groups, 1, 1))
    dev.dispatch(pipe, bufs, (groups, 1, 1))
    if tracer is not None:
        tracer.end()
    return bufs[(0, 1)].read(np.float32), x, (tracer.records if tracer else None)


@pytest.fixture
def cli(emu_cli):
    """Run `emu ...` in-process: (exit code, stdout, stderr) (emu's pytest plugin's emu_cli)."""
    return emu_cli
