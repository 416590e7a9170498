"""Time to first result after an edit: `emu run` of a shader just changed, as a user's edit-run
loop starts it (a child process, wall from start to exit, output written).

    python -m bench.edit_loop [--runs N] [--before /path/to/older/checkout] [--cases small,large]

Each measurement edits the shader anew: the column of every tile gets `+ (M - SIZE) * T` with a
token T never used before, which is zero at the size run (the same results) but makes a new
generated kernel, so nothing of the shader's own is in any cache: its IR, its kernel's source,
numba's cache entry and the saved machine code are all new, while emu's built-in kernels are
warm (as on a machine where emu has run before). With --before, the same edits run on that
checkout too (`python -m emu` from its folder), alternately with this one, so that both see the
same load. Each case reports wall and CPU seconds (min and median), the load average around the
runs, which way the dispatch ran (the summary line of `emu run`, where it prints one) and
whether every run's output had the same bits.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

# name: (shader, dtype of A and B, size, workgroup tile, dispatch note)
CASES = {
    "small-coop": (ROOT / "emu" / "examples" / "gemm_wgpu.wgsl", np.float16, 64, 16,
                   "64x64 GEMM on the matrix units (wgpu dialect, 16 workgroups)"),
    "small-naive": (ROOT / "bench" / "shaders" / "matmul_naive.wgsl", np.float32, 64, 16,
                    "64x64 f32 GEMM, one invocation per element (16 workgroups of 256)"),
    "medium-coop": (ROOT / "emu" / "examples" / "gemm_wgpu.wgsl", np.float16, 512, 16,
                    "512x512 GEMM on the matrix units (1024 workgroups)"),
    "large-coop": (ROOT / "emu" / "examples" / "gemm_wgpu.wgsl", np.float16, 1024, 16,
                   "1024x1024 GEMM on the matrix units (4096 workgroups)"),
    "large-naive": (ROOT / "bench" / "shaders" / "matmul_naive.wgsl", np.float32, 512, 16,
                    "512x512 f32 GEMM, one invocation per element (1024 workgroups of 256)"),
}
EDIT_AT = {"gemm_wgpu.wgsl": "let col = wg.x * TILE", "matmul_naive.wgsl": "let col = gid.x"}


def edited(src: Path, size: int, token: int) -> str:
    text = src.read_text()
    at = EDIT_AT[src.name]
    assert at in text, at
    return text.replace(at, f"{at} + (M - {size}u) * {token}u", 1)


def one(checkout: Path, shader: Path, size: int, tile: int, d: Path, out: Path, env) -> dict:
    cmd = [sys.executable, "-m", "emu", "run", str(shader), "--dispatch", f"{size // tile},{size // tile}",
           "--override", f"M={size}", "--override", f"N={size}", "--override", f"K={size}",
           "--buffer", f"0:0={d}/a.npy", "--buffer", f"0:1={d}/b.npy",
           "--buffer", f"0:2=zeros:{size}x{size}:f32", "--output", f"0:2={out}"]
    load0 = os.getloadavg()[0]
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=checkout, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"emu run failed in {checkout}: {p.stderr[-500:]}")
    return dict(wall=wall, cpu=c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime,
                load=(load0, os.getloadavg()[0]), stderr=p.stderr.strip(), bits=np.load(out).tobytes())


def fmt(xs) -> str:
    return f"{min(xs):.2f} / {statistics.median(xs):.2f}"


def _env() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)        # as an installed package runs
    env.pop("EMU_JIT", None)                        # the default: the tiered run
    env["EMU_SERVE"] = "0"
    return env


def measure(name: str, runs: int, checkouts, log=print) -> dict:
    """{checkout label: [one()'s dict per run]} for case `name`; checkouts: [(label, folder)],
    measured alternately after one untimed run each (emu's own caches and bytecode)."""
    src, dt, size, tile, _ = CASES[name]
    env = _env()
    token = time.time_ns() // 1000 % 10**9
    got = {k: [] for k, _ in checkouts}
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        rng = np.random.default_rng(0)
        np.save(d / "a.npy", rng.standard_normal((size, size)).astype(dt))
        np.save(d / "b.npy", rng.standard_normal((size, size)).astype(dt))
        for r in range(-1, runs):
            for k, root in (checkouts if r % 2 == 0 else checkouts[::-1]):
                token += 1
                shader = d / f"edit_{token}_{src.name}"
                shader.write_text(edited(src, size, token))
                g = one(root, shader, size, tile, d, d / "c.npy", env)
                if r < 0:
                    continue
                got[k].append(g)
                log(f"[edit_loop] {name} {k} run {r + 1}: {g['wall']:.2f} s wall, {g['cpu']:.2f} s CPU, "
                    f"load {g['load'][0]:.1f}-{g['load'][1]:.1f}; {g['stderr'].splitlines()[-1:] or ''}")
    return got


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.edit_loop", description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--before", type=Path, help="an older checkout to measure alternately with this one")
    ap.add_argument("--cases", default="small-coop,small-naive,medium-coop,large-coop,large-naive")
    args = ap.parse_args(argv)
    checkouts = [("after", ROOT)] + ([("before", args.before.resolve())] if args.before else [])
    rows = []
    for name in args.cases.split(","):
        got = measure(name, args.runs, checkouts, log=lambda s: print(s, flush=True))
        same = len({g["bits"] for gs in got.values() for g in gs}) == 1
        for k, _ in checkouts:
            gs = got[k]
            loads = [x for g in gs for x in g["load"]]
            said = "; ".join(sorted({line for g in gs for line in g["stderr"].splitlines()
                                     if line.startswith("compiling")}))[:160]
            rows.append(f"| {CASES[name][4]} | {k} | {fmt([g['wall'] for g in gs])} | {fmt([g['cpu'] for g in gs])} | "
                        f"{min(loads):.1f}-{max(loads):.1f} | {'yes' if same else 'NO'} | {said or '-'} |")
    print("\n| case | code | wall s (min / median) | CPU s (min / median) | load | same bits | compile line |")
    print("|---|---|---:|---:|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
