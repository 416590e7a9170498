#!/usr/bin/env python3
"""Time bench/shaders/vecadd.wgsl (16M f32) and matmul_naive.wgsl (256^3 f32) on the real adapter.

Usage: python scripts/hw_bench.py [--backend wgpu|dawn] [--runs 5] [--n 16777216] [--size 256]
Prints the adapter, then per shader the median seconds of RUNS dispatches (pipeline and
buffers created once; each run times submit + wait) and a check against numpy."""
import argparse, pathlib, sys
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from emu.hw.runner import available_adapter, timed_dispatch  # noqa: E402

SHADERS = pathlib.Path(__file__).resolve().parents[1] / "bench" / "shaders"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="wgpu", choices=("wgpu", "dawn"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--n", type=int, default=16 * 1024 * 1024)
    ap.add_argument("--size", type=int, default=256)
    args = ap.parse_args()
    info, why = available_adapter(args.backend)
    print(why)
    if info is None:
        return 2
    rng = np.random.default_rng(0)

    n = args.n
    a = rng.standard_normal(n, dtype=np.float32); b = rng.standard_normal(n, dtype=np.float32)
    wg = -(-n // 256)
    rows = -(-wg // 65535)
    dispatch = (-(-wg // rows), rows, 1)
    out, t = timed_dispatch((SHADERS / "vecadd.wgsl").read_text(), dispatch=dispatch,
                            buffers={(0, 0): a, (0, 1): b, (0, 2): a.nbytes}, backend=args.backend, runs=args.runs)
    ok = np.array_equal(np.frombuffer(out[(0, 2)], np.float32), a + b)
    print(f"vecadd   n={n} dispatch={dispatch}: median {t * 1e3:.2f} ms of {args.runs}"
          f" ({3 * a.nbytes / t / 1e9:.2f} GB/s), exact={ok}")

    s = args.size
    A = rng.standard_normal((s, s), dtype=np.float32); B = rng.standard_normal((s, s), dtype=np.float32)
    out, t = timed_dispatch((SHADERS / "matmul_naive.wgsl").read_text(), dispatch=(-(-s // 16), -(-s // 16), 1),
                            buffers={(0, 0): A, (0, 1): B, (0, 2): A.nbytes},
                            overrides={"M": s, "N": s, "K": s}, backend=args.backend, runs=args.runs)
    C = np.frombuffer(out[(0, 2)], np.float32).reshape(s, s)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    err = float(np.max(np.abs(C - ref)) / np.max(np.abs(ref)))
    print(f"matmul   {s}x{s}x{s}: median {t * 1e3:.2f} ms of {args.runs}"
          f" ({2 * s ** 3 / t / 1e9:.2f} GFLOP/s), max rel err {err:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
