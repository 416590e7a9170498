"""Jobs scaling of the bit-exact GEMM: `python -m bench.scaling [SIZE] [OUT]`. Runs the 1024^3
f16 -> f32 GEMM on nvidia-h200 with both kernels (bench/shaders/gemm_simple.wgsl: one subgroup per
workgroup; emu/examples/gemm_dawn.wgsl: four) at --jobs 1, 2, 4, ... up to the machine's cores,
numpy's f32 matmul in the same process alongside, and prints one table (also written to
OUT/scaling.json when OUT is given). Every run's bits must equal the first run's."""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
KERNELS = {"simple": (ROOT / "bench/shaders/gemm_simple.wgsl", 16),
           "dawn": (ROOT / "emu/examples/gemm_dawn.wgsl", 32)}


def best(fn, runs):
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return min(ts), float(np.median(ts))


def main(size: int = 1024, out: str | None = None) -> int:
    import emu
    cpus = os.cpu_count() or 1
    jobs = [j for j in (1, 2, 4, 8, 16, 32, 64) if j <= cpus]
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (size, size)).astype(np.float16)
    b = rng.uniform(-1, 1, (size, size)).astype(np.float16)
    af, bf = a.astype(np.float32), b.astype(np.float32)
    af @ bf
    np_min, np_med = best(lambda: af @ bf, 50)
    rows, ref = [], None
    for name, (src, block) in KERNELS.items():
        for j in jobs:
            dev = emu.Device("nvidia-h200", jobs=j)
            pipe = dev.create_compute_pipeline(dev.create_shader_module(src.read_text(), str(src)),
                                               constants={"M": size, "N": size, "K": size})
            bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b),
                    (0, 2): dev.create_buffer(size=4 * size * size)}
            grid = (size // block, size // block, 1)
            t = time.perf_counter()
            dev.dispatch(pipe, bufs, grid)
            first = time.perf_counter() - t
            tmin, tmed = best(lambda: dev.dispatch(pipe, bufs, grid), 3)
            bits = bufs[(0, 2)].read(np.uint32)
            ref = bits if ref is None else ref
            rows.append({"kernel": name, "jobs": j, "first_s": first, "min_s": tmin, "median_s": tmed,
                         "numpy_min_s": np_min, "same_bits": bool(np.array_equal(bits, ref)),
                         "compiled": getattr(pipe.pipeline._jit, "handed_back", None) == 0})
    print(f"{cpus} cores, numpy f32 matmul {size}^3: min {np_min * 1e3:.2f} ms, median {np_med * 1e3:.2f} ms")
    print("kernel  jobs   min s  median s  x numpy  speedup vs jobs 1  same bits  compiled")
    for r in rows:
        one = next(x for x in rows if x["kernel"] == r["kernel"] and x["jobs"] == 1)
        print(f"{r['kernel']:<7} {r['jobs']:>4} {r['min_s']:7.3f} {r['median_s']:9.3f} {r['min_s'] / np_min:8.1f}"
              f" {one['min_s'] / r['min_s']:18.2f}  {str(r['same_bits']):>9}  {r['compiled']}")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "scaling.json").write_text(json.dumps({"cpus": cpus, "size": size, "numpy_min_s": np_min,
                                                            "numpy_median_s": np_med, "rows": rows}, indent=1))
    return 0 if all(r["same_bits"] and r["compiled"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1024, sys.argv[2] if len(sys.argv) > 2 else None))
