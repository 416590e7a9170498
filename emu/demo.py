"""`emu demo`: the main job on a virtual device. Runs the bundled tiled-GEMM kernels (both WGSL
cooperative-matrix dialects) on random f16 inputs and checks each result two ways:
- bit for bit against the profile's matrix-unit model applied tile by tile in plain numpy
  (what the device must compute, independent of lanes, loads and stores; on the fast MMA kernels,
  which tests/perf checks against the reference kernels, so that a cold run compiles few);
- against float64 arithmetic, to show how far the device's rounding is from exact.
"""
from __future__ import annotations

import io
import sys
import time
from importlib import resources

import numpy as np

from .api import Device
from .errors import UsageError
from .jit.coop_kernel import saved
from .numerics.mma import mma
from .numerics.mma_fast import matrix_mma

TILE = 16


def _source(name: str) -> str:
    return resources.files("emu.examples").joinpath(name).read_text()


def expected(profile, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C = A x B as the device's matrix unit computes it: per 16x16 output tile, one
    multiply-add per 16-wide step of K, in K order, starting from a zero accumulator."""
    m, k = a.shape
    n = b.shape[1]
    cfg = profile.find_config(TILE, TILE, TILE, "f16", "f32")
    # every output tile is an independent subgroup: S = (m/16) * (n/16)
    at = a.reshape(m // TILE, TILE, k // TILE, TILE)
    bt = b.reshape(k // TILE, TILE, n // TILE, TILE)
    acc = np.zeros((m // TILE, n // TILE, TILE, TILE), np.float32)
    for kk in range(k // TILE):
        A = np.broadcast_to(at[:, None, :, kk, :], (m // TILE, n // TILE, TILE, TILE)).reshape(-1, TILE, TILE)
        B = np.broadcast_to(bt[kk, :, :, :].transpose(1, 0, 2)[None], (m // TILE, n // TILE, TILE, TILE)).reshape(-1, TILE, TILE)
        args = (profile.model_for(cfg), np.ascontiguousarray(A), np.ascontiguousarray(B),
                acc.reshape(-1, TILE, TILE), "f32")
        d = matrix_mma(*args, tiles=saved("mma_tile.tiles"))
        acc = (mma(*args) if d is None else d).reshape(acc.shape)
    return acc.transpose(0, 2, 1, 3).reshape(m, n)


def run_demo(profile: str = "nvidia-h200", size: int = 128, out=sys.stdout) -> int:
    if size <= 0 or size % 32:
        raise UsageError(f"--size {size}: the example GEMMs need a positive multiple of 32")
    rng = np.random.default_rng(2026)
    a = rng.uniform(-1, 1, (size, size)).astype(np.float16)
    b = rng.uniform(-1, 1, (size, size)).astype(np.float16)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    ok = True
    for name, block in (("gemm_dawn.wgsl", 32), ("gemm_wgpu.wgsl", 16)):
        dev = Device(profile, hints="cli")
        mod = dev.create_shader_module(_source(name), f"emu/examples/{name}")
        pipe = dev.create_compute_pipeline(mod, constants={"M": size, "N": size, "K": size})
        bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b),
                (0, 2): dev.create_buffer(size=4 * size * size)}
        t0 = time.perf_counter()
        dev.dispatch(pipe, bufs, (size // block, size // block, 1))
        dt = time.perf_counter() - t0
        c = bufs[(0, 2)].read(np.float32).reshape(size, size)
        want = expected(dev.profile, a, b)
        same = np.array_equal(c.view(np.uint32), want.view(np.uint32))
        ok &= same
        err = np.abs(c - exact).max()
        print(f"{name}: C = A x B, {size}x{size}x{size} f16 -> f32 on '{dev.profile.name}' "
              f"(subgroup {dev.subgroup_size}), {dt:.2f} s", file=out)
        print(f"  bits equal to the device's matrix-unit model: {'yes' if same else 'NO'}"
              f"{'' if same else f' ({int((c != want).sum())} differ)'}", file=out)
        print(f"  largest difference from exact (float64) arithmetic: {err:.3g}", file=out)
        print(f"  C[0, :4] = {np.array2string(c[0, :4], precision=6)}", file=out)
    print("demo: OK" if ok else "demo: MISMATCH", file=out)
    return 0 if ok else 1


def warmup(profile: str = "nvidia-h200", out=sys.stdout) -> int:
    """`emu warmup`: compile now (or load from numba's cache) the kernels a run on `profile` may
    use, so that no later run stops to compile them: the example GEMMs through the fast paths
    (cooperative loads, stores, multiply-adds), and for each of the profile's matrix configs the
    multiply-add on the fast kernel and on the reference kernels (the interpreter's path, taken
    under a tracer), and mma_call's kernel (a compiled kernel's multiply-adds outside the common
    case). The fusion JIT compiles each plain shader on its first run; not these. The
    examples run twice: small (interpreted: the fast paths) and at 128^3, where they are compiled
    whole (emu/jit/coop_kernel.py; one kernel per shader serves every size)."""
    from .numerics import mma_call
    from .numerics.mma import bits32, packed
    from .numerics.mma_fast import float_mma
    from .numerics.dtypes import NP
    t0 = time.perf_counter()
    run_demo(profile, 32, out=io.StringIO())
    run_demo(profile, 128, out=io.StringIO())
    dev = Device(profile)
    seen = set()
    for cfg in dev.profile.configs:
        key = (cfg.a_type, cfg.b_type, cfg.c_type, cfg.result_type, cfg.saturating_accumulation)
        if key in seen:
            continue
        seen.add(key)
        a = np.zeros((1, cfg.m, cfg.k), NP[cfg.a_type])
        b = np.zeros((1, cfg.k, cfg.n), NP[cfg.b_type])
        c = np.zeros((1, cfg.m, cfg.n), NP[cfg.c_type])
        model = dev.profile.model_for(cfg)
        mma(model, a, b, c, cfg.result_type, saturate=cfg.saturating_accumulation)
        if not cfg.saturating_accumulation:
            matrix_mma(model, a, b, c, cfg.result_type)
            prm = packed(model, a.dtype, c.dtype, cfg.result_type)
            if prm is not None:
                mma_call.address(8 * a.dtype.itemsize, 8 * c.dtype.itemsize)
                # the interpreter's kernel for the subgroups mma_tile leaves (specials, subnormals)
                float_mma(bits32(a), bits32(b), bits32(c), np.empty(c.shape, np.uint32), prm)
    print(f"warmup: kernels for '{dev.profile.name}' ready ({len(seen)} operand type combinations), "
          f"{time.perf_counter() - t0:.1f} s", file=out)
    return 0
