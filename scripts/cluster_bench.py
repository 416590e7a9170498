#!/usr/bin/env python3
"""Speed-up of emu.cluster over one process: a sharded GEMM and a corpus campaign.

Usage: python scripts/cluster_bench.py OUT_DIR [--workers 16] [--n 2048] [--corpus DIR]

GEMM: the bundled wgpu GEMM (f16 inputs, f32 accumulator) of n^3 on nvidia-h200, in one process with
one thread (jobs=1), in one process with a thread per core (jobs=cores), and split over a LocalCluster
of --workers processes of one thread; the three results compared bit for bit, and the sharded run's
time split into the workers' runs, the rest of the round trip (inputs sent, results back) and the merge.
Corpus: emu's front end over every .wgsl file under --corpus (scoped by what files use), by scripts/corpus.py's pool with one
worker process, and by `emu campaign corpus` on the cluster; the two tables compared.
Writes OUT_DIR/cluster_bench.json and prints a summary.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def gemm(n: int, workers: int, out: dict) -> None:
    import emu
    from emu.cluster import Cluster
    src = resources.files("emu.examples").joinpath("gemm_wgpu.wgsl").read_text()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    grid = (n // 16, n // 16, 1)
    results = {}
    for label, jobs in (("one process, 1 thread", 1), (f"one process, {os.cpu_count()} threads", os.cpu_count())):
        dev = emu.Device("nvidia-h200", jobs=jobs)
        pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "gemm_wgpu.wgsl"),
                                           constants={"M": n, "N": n, "K": n})
        c = np.zeros((n, n), np.float32)
        dev.dispatch(pipe, {(0, 0): a, (0, 1): b, (0, 2): c}, (1, 1, 1))        # compile
        t0 = time.perf_counter()
        dev.dispatch(pipe, {(0, 0): a, (0, 1): b, (0, 2): c}, grid)
        out[label] = round(time.perf_counter() - t0, 3)
        results[label] = c
        print(f"gemm {n}^3 {label}: {out[label]:.2f} s", flush=True)
    dev = emu.Device("nvidia-h200", jobs=1)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "gemm_wgpu.wgsl"),
                                       constants={"M": n, "N": n, "K": n})
    t0 = time.perf_counter()
    with Cluster(f"local:{workers}") as cl:
        out["cluster start"] = round(time.perf_counter() - t0, 3)
        c = np.zeros((n, n), np.float32)
        cl.dispatch(dev, pipe, {(0, 0): a, (0, 1): b, (0, 2): c}, (grid[0], workers, 1))   # pipelines made
        c = np.zeros((n, n), np.float32)
        t0 = time.perf_counter()
        notes = cl.dispatch(dev, pipe, {(0, 0): a, (0, 1): b, (0, 2): c}, grid)
        wall = time.perf_counter() - t0
        st = cl.last
    label = f"cluster, {workers} workers of 1 thread"
    out[label] = round(wall, 3)
    out["cluster shards"] = st["shards"]
    out["cluster worker seconds (min, max)"] = [round(min(st["worker_s"]), 3), round(max(st["worker_s"]), 3)]
    out["cluster round trip (submit to all results back)"] = round(st["run_s"], 3)
    out["cluster merge"] = round(st["merge_s"], 3)
    out["cluster notes"] = [w.format() for w in notes]
    same = all(np.array_equal(r.view(np.uint32), c.view(np.uint32)) for r in results.values())
    out["gemm bits identical"] = bool(same)
    one = out["one process, 1 thread"]
    print(f"gemm {n}^3 {label}: {wall:.2f} s (workers {min(st['worker_s']):.2f}..{max(st['worker_s']):.2f} s, "
          f"round trip {st['run_s']:.2f} s, merge {st['merge_s']:.3f} s); speed-up {one / wall:.1f}x over 1 thread, "
          f"{out[f'one process, {os.cpu_count()} threads'] / wall:.2f}x over {os.cpu_count()} threads; "
          f"bits identical: {same}", flush=True)


def corpus(folder: str, workers: int, out_dir: Path, out: dict) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + sys.path[1:]))
    t0 = time.perf_counter()
    one = subprocess.run([sys.executable, str(ROOT / "scripts/corpus.py"), folder, "--scope", "--jobs", "1"],
                         capture_output=True, text=True, env=env)
    out["corpus one process"] = round(time.perf_counter() - t0, 3)
    jsonl = out_dir / "campaign.jsonl"
    jsonl.unlink(missing_ok=True)
    t0 = time.perf_counter()
    many = subprocess.run([sys.executable, "-m", "emu", "campaign", "corpus", folder, "--scope", "--cluster",
                           f"local:{workers}", "--out", str(jsonl)], capture_output=True, text=True, env=env)
    out[f"corpus campaign, {workers} workers"] = round(time.perf_counter() - t0, 3)
    t1, t2 = one.stdout.splitlines(), many.stdout.splitlines()
    out["corpus tables identical"] = t1[1:] == t2[1:]
    out["corpus table"] = t2[:8]
    out["campaign progress"] = many.stderr.strip().splitlines()[-2:]
    (out_dir / "corpus_one.txt").write_text(one.stdout + one.stderr)
    (out_dir / "corpus_campaign.txt").write_text(many.stdout + many.stderr)
    print(f"corpus: one process {out['corpus one process']:.1f} s, campaign on {workers} workers "
          f"{out[f'corpus campaign, {workers} workers']:.1f} s (both including start-up): speed-up "
          f"{out['corpus one process'] / out[f'corpus campaign, {workers} workers']:.1f}x; tables identical: "
          f"{out['corpus tables identical']}", flush=True)
    print("\n".join(t2[:6]), flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--corpus", default=None)
    args = ap.parse_args()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = {"cores": os.cpu_count(), "n": args.n, "workers": args.workers}
    save = lambda: (out_dir / "cluster_bench.json").write_text(json.dumps(out, indent=1))   # noqa: E731
    try:                                      # saved after each part: a run stopped by its limit keeps the rest
        gemm(args.n, args.workers, out)
        save()
        if args.corpus:
            corpus(args.corpus, args.workers, out_dir, out)
    finally:
        save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
