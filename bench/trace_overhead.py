"""What tracing costs when it is off, and what it costs when on.

    python bench/trace_overhead.py [--repeat 7] [--quick]

"untraced baseline": the executor with every tracing hook removed (Batch.run_block and the
cooperative load/store handlers recompiled from their own source without the lines that test
Options.tracer), so it is always the current executor minus the hooks. "tracing off": the real
executor with Options.tracer = None. The goal is off <= baseline + 5%. "tracing on" runs with a
tracer writing to memory (default ops: cooperative ops and barriers; and with --trace-ops all).

Workloads: the example GEMM on the H200 profile (matrix units, few large instructions), a naive
scalar matmul (many instructions over many lanes), and the same with one small workgroup and a
long loop (instruction issue dominates: the worst case for a per-instruction check). Untraced
scalar kernels normally run compiled (emu/jit, which a tracer turns off), so the scalar ones are
also measured with EMU_JIT=0: the interpreter, where the hooks are.
Times are the best of --repeat runs, the variants interleaved so drift hits them alike.
"""
from __future__ import annotations

import argparse
import inspect
import os
import statistics
import sys
import textwrap
import time
from importlib import resources
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import emu  # noqa: E402
from emu.scheduler import coop, executor, handlers  # noqa: E402
from emu.trace.select import Selection  # noqa: E402
from emu.trace.tracer import MemorySink, Tracer  # noqa: E402


def _strip_tracing(fn):
    """`fn` recompiled from its source without the tracing lines: `tracer = self.opts.tracer` and
    every `if ... tracer is not None:` block."""
    src = textwrap.dedent(inspect.getsource(fn))
    out, skip_indent = [], None
    for line in src.splitlines():
        indent = len(line) - len(line.lstrip())
        if skip_indent is not None:
            if line.strip() and indent > skip_indent:
                continue
            skip_indent = None
        s = line.strip()
        if s.startswith("if ") and "tracer is not None" in s and s.endswith(":"):
            skip_indent = indent
            continue
        if s == "tracer = self.opts.tracer":
            continue
        if s.startswith("@handler"):
            continue
        out.append(line)
    code = "\n".join(out)
    assert "tracer" not in code.replace("# emu.trace tracer", ""), code
    ns: dict = {}
    exec(compile(code, f"<untraced {fn.__name__}>", "exec"), fn.__globals__, ns)
    return ns[fn.__name__]


class Untraced:
    """Context manager: the executor without tracing hooks."""

    def __enter__(self):
        self.saved = (executor.Batch.run_block, handlers.HANDLERS["coop_load"], handlers.HANDLERS["coop_store"])
        executor.Batch.run_block = _strip_tracing(executor.Batch.run_block)
        handlers.HANDLERS["coop_load"] = _strip_tracing(coop.h_coop_load)
        handlers.HANDLERS["coop_store"] = _strip_tracing(coop.h_coop_store)

    def __exit__(self, *exc):
        executor.Batch.run_block, handlers.HANDLERS["coop_load"], handlers.HANDLERS["coop_store"] = self.saved


def gemm_workload(size):
    src = resources.files("emu.examples").joinpath("gemm_dawn.wgsl").read_text()
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (size, size)).astype(np.float16)
    b = rng.uniform(-1, 1, (size, size)).astype(np.float16)

    def run(tracer=None):
        dev = emu.Device("nvidia-h200", tracer=tracer)
        mod = dev.create_shader_module(src, "gemm_dawn.wgsl")
        pipe = dev.create_compute_pipeline(mod, constants={"M": size, "N": size, "K": size})
        out = dev.create_buffer(size=4 * size * size)
        dev.dispatch(pipe, {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): out},
                     (size // 32, size // 32, 1))
        return out.read(np.uint32)
    return f"gemm_dawn {size}^3 f16 (nvidia-h200)", run


def naive_workload(m, n, k):
    src = (ROOT / "bench" / "shaders" / "matmul_naive.wgsl").read_text()
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, m * k).astype(np.float32)
    b = rng.uniform(-1, 1, k * n).astype(np.float32)

    def run(tracer=None):
        dev = emu.Device("reference", 32, tracer=tracer)
        mod = dev.create_shader_module(src, "matmul_naive.wgsl")
        pipe = dev.create_compute_pipeline(mod, constants={"M": m, "N": n, "K": k})
        out = dev.create_buffer(size=4 * m * n)
        dev.dispatch(pipe, {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): out},
                     (-(-n // 16), -(-m // 16), 1))
        return out.read(np.uint32)
    return f"matmul_naive {m}x{n}x{k} f32 ({m * n} invocations)", run


def best(fn, times):
    t0 = time.perf_counter()
    r = fn()
    times.append(time.perf_counter() - t0)
    return r


def measure(name, run, repeat, jit=True):
    os.environ["EMU_JIT"] = "1" if jit else "0"
    if not jit:
        name += " [EMU_JIT=0]"
    run()                                   # warm up (numba, caches)
    base, off, on, on_all = [], [], [], []
    ref = run()
    for _ in range(repeat):
        with Untraced():
            r_base = best(run, base)
        r_off = best(run, off)
        r_on = best(lambda: run(Tracer(sink=MemorySink())), on)
        best(lambda: run(Tracer(sink=MemorySink(), selection=Selection.parse(ops="all"))), on_all)
        assert np.array_equal(r_base, ref) and np.array_equal(r_off, ref) and np.array_equal(r_on, ref)
    os.environ.pop("EMU_JIT", None)
    b, o = min(base), min(off)
    return {"workload": name, "baseline_s": b, "off_s": o, "off_overhead_pct": 100 * (o - b) / b,
            "off_overhead_median_pct": 100 * (statistics.median(off) - statistics.median(base))
            / statistics.median(base),
            "on_default_s": min(on), "on_all_s": min(on_all)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="smaller workloads")
    args = ap.parse_args(argv)
    works = ([gemm_workload(64), naive_workload(32, 32, 32), naive_workload(16, 16, 64)] if args.quick else
             [gemm_workload(128), naive_workload(64, 64, 64), naive_workload(16, 16, 256)])
    rows = []
    for i, (name, run) in enumerate(works):
        for jit in ((True,) if i == 0 else (True, False)):
            rows.append(measure(name, run, args.repeat, jit))
    print(f"{'workload':<56} {'baseline':>9} {'off':>9} {'off vs base':>12} {'(median)':>9} "
          f"{'on:default':>11} {'on:all':>9}")
    worst = 0.0
    for r in rows:
        worst = max(worst, r["off_overhead_pct"])
        print(f"{r['workload']:<56} {r['baseline_s']:>8.3f}s {r['off_s']:>8.3f}s {r['off_overhead_pct']:>+11.2f}% "
              f"{r['off_overhead_median_pct']:>+8.2f}% {r['on_default_s']:>10.3f}s {r['on_all_s']:>8.3f}s")
    print(f"worst tracing-off overhead (best of {args.repeat}): {worst:+.2f}% "
          f"({'within' if worst <= 5 else 'OVER'} the 5% goal)")
    return 0 if worst <= 5 else 1


if __name__ == "__main__":
    sys.exit(main())
