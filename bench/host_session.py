"""The measurements of bench/README.md that need a machine of many cores (the H200 host), in one
run: `python -m bench.host_session OUT [SIZE] [BIG]`, from the repository root.

1. `emu demo` with empty caches (fresh NUMBA_CACHE_DIR and EMU_JIT_CACHE), then warm (3 runs);
2. jobs scaling of the SIZE^3 GEMM, both kernels (bench/scaling.py);
3. the BIG^3 GEMM on standard-normal f16 inputs (subnormals, exact zeros at some K steps): the
   compiled kernel against the interpreter (EMU_JIT=0), bits compared;
4. `emu run` of the SIZE^3 GEMM (bench/shaders/gemm_simple.wgsl) against its dispatch in one
   process.
Each step runs in its own process under a time limit; OUT/host.json holds every number, and a
short summary is printed."""
from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

NORMAL = r"""
import json, os, sys, time
import numpy as np
import emu
size = int(sys.argv[1])
src = open("bench/shaders/gemm_simple.wgsl").read()
rng = np.random.default_rng(0)
a = rng.standard_normal((size, size)).astype(np.float16)
b = rng.standard_normal((size, size)).astype(np.float16)
r = {"size": size, "subnormals": int((np.abs(a) < 2**-14).sum() + (np.abs(b) < 2**-14).sum())}
out = {}
for jit in ("1", "0"):
    os.environ["EMU_JIT"] = jit
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "g.wgsl"),
                                       constants={"M": size, "N": size, "K": size})
    bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): dev.create_buffer(size=4 * size * size)}
    if jit == "0":      # the interpreter's MMA kernel compiled (or loaded) before the timing
        small = dev.create_compute_pipeline(dev.create_shader_module(src, "g.wgsl"), constants={"M": 64, "N": 64, "K": 64})
        dev.dispatch(small, {(0, 0): dev.create_buffer(a[:64, :64].copy()), (0, 1): dev.create_buffer(b[:64, :64].copy()),
                             (0, 2): dev.create_buffer(size=4 * 64 * 64)}, (4, 4, 1))
    ts = []
    for _ in range(3 if jit == "1" else 1):
        t = time.perf_counter()
        dev.dispatch(pipe, bufs, (size // 16, size // 16, 1))
        ts.append(time.perf_counter() - t)
    out[jit] = bufs[(0, 2)].read(np.uint32)
    k = pipe.pipeline._jit
    r["compiled" if jit == "1" else "interpreted"] = {
        "times": ts, "handed_back": getattr(k, "handed_back", None),
        "special_kernel_used": bool(k.spa.any()) if hasattr(k, "spa") else None}
r["identical"] = bool(np.array_equal(out["0"], out["1"]))
print(json.dumps(r))
"""

DISPATCH = r"""
import json, sys, time
import numpy as np
import emu
size = int(sys.argv[1])
a, b = np.load(sys.argv[2] + "/a.npy"), np.load(sys.argv[2] + "/b.npy")
dev = emu.Device("nvidia-h200")
pipe = dev.create_compute_pipeline(dev.create_shader_module(open("bench/shaders/gemm_simple.wgsl").read(), "g.wgsl"),
                                   constants={"M": size, "N": size, "K": size})
bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): dev.create_buffer(size=4 * size * size)}
ts = []
for _ in range(4):
    t = time.perf_counter()
    dev.dispatch(pipe, bufs, (size // 16, size // 16, 1))
    ts.append(time.perf_counter() - t)
print(json.dumps({"first": ts[0], "min": min(ts[1:]), "bits": bufs[(0, 2)].read(np.uint32).tobytes().hex()[:64]}))
"""


def timed(cmd, env, timeout):
    """(wall s, CPU s of the child, stdout, stderr, exit status) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = 124, e.stdout or "", f"timed out after {timeout} s"
        out = out.decode() if isinstance(out, bytes) else out
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out, err, rc


def main(out: str, size: int = 1024, big: int = 2048) -> int:
    outd = Path(out)
    outd.mkdir(parents=True, exist_ok=True)
    caches = Path(tempfile.mkdtemp(prefix="emu-host-"))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(caches / "numba"), EMU_JIT_CACHE=str(caches / "jit"),
               PYTHONPATH=str(ROOT))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("EMU_JIT", None)
    py = sys.executable
    R: dict = {"cpus": os.cpu_count(), "python": sys.version.split()[0]}
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout if os.path.exists("/usr/bin/lscpu") else ""
    R["lscpu"] = [ln for ln in lscpu.splitlines() if ln.split(":")[0].strip() in
                  ("Model name", "CPU(s)", "Thread(s) per core", "Core(s) per socket", "Socket(s)", "L2 cache", "L3 cache")]
    subprocess.run([py, "-c", "import emu.cli, emu.demo"], cwd=ROOT, env=env)     # .pyc written: not timed
    # 1. the demo, cold then warm
    wall, cpu, so, se, rc = timed([py, "-m", "emu", "demo"], env, 120)
    R["demo_cold"] = {"wall": wall, "cpu": cpu, "ok": "demo: OK" in so, "rc": rc, "stderr": se[-300:]}
    warm = [timed([py, "-m", "emu", "demo"], env, 60) for _ in range(3)]
    R["demo_warm"] = {"walls": [w[0] for w in warm], "cpus": [w[1] for w in warm],
                      "ok": all("demo: OK" in w[2] for w in warm), "stderr": warm[-1][3][-300:]}
    (outd / "host.json").write_text(json.dumps(R, indent=1))     # kept step by step
    # 2. jobs scaling
    wall, cpu, so, se, rc = timed([py, "-m", "bench.scaling", str(size), str(outd)], env, 150)
    R["scaling"] = {"wall": wall, "rc": rc, "table": so.strip().splitlines(), "stderr": se[-500:]}
    (outd / "host.json").write_text(json.dumps(R, indent=1))     # kept step by step
    # 3. standard-normal inputs, compiled against the interpreter
    wall, cpu, so, se, rc = timed([py, "-c", NORMAL, str(big)], env, 150)
    lines = [ln for ln in so.splitlines() if ln.startswith("{")]
    R["normal"] = json.loads(lines[-1]) if lines else {"rc": rc, "stderr": se[-500:]}
    (outd / "host.json").write_text(json.dumps(R, indent=1))     # kept step by step
    # 4. emu run against the dispatch in one process
    import numpy as np
    rng = np.random.default_rng(0)
    np.save(caches / "a.npy", rng.uniform(-1, 1, (size, size)).astype(np.float16))
    np.save(caches / "b.npy", rng.uniform(-1, 1, (size, size)).astype(np.float16))
    np.save(caches / "z.npy", np.zeros((size, size), np.float32))
    wall, cpu, so, se, rc = timed([py, "-c", DISPATCH, str(size), str(caches)], env, 60)
    lines = [ln for ln in so.splitlines() if ln.startswith("{")]
    R["dispatch"] = json.loads(lines[-1]) if lines else {"rc": rc, "stderr": se[-500:]}
    cmd = [py, "-m", "emu", "run", "bench/shaders/gemm_simple.wgsl", "--dispatch", f"{size // 16},{size // 16}",
           "--profile", "nvidia-h200", "--override", f"M={size}", "--override", f"N={size}", "--override", f"K={size}",
           "--buffer", f"0:0={caches}/a.npy", "--buffer", f"0:1={caches}/b.npy", "--buffer", f"0:2={caches}/z.npy",
           "--output", f"0:2={caches}/c.npy"]
    runs = [timed(cmd, env, 60) for _ in range(4)]
    R["emu_run"] = {"walls": [r[0] for r in runs], "cpus": [r[1] for r in runs], "rcs": [r[4] for r in runs],
                    "stderr": runs[-1][3][-300:]}
    c = np.load(caches / "c.npy")
    R["emu_run"]["bits"] = c.view(np.uint32).tobytes().hex()[:64]
    (outd / "host.json").write_text(json.dumps(R, indent=1))
    # the summary
    print(f"{R['cpus']} cpus; " + "; ".join(R["lscpu"]))
    d = R["demo_cold"]
    print(f"demo cold: {d['wall']:.2f} s wall, {d['cpu']:.2f} s CPU, ok {d['ok']}; warm: "
          f"{statistics.median(R['demo_warm']['walls']):.2f} s wall (median of 3), ok {R['demo_warm']['ok']}")
    print("\n".join(R["scaling"]["table"][-6:]) or R["scaling"]["stderr"])
    n = R["normal"]
    if "compiled" in n:
        print(f"normal {big}^3: compiled {min(n['compiled']['times']):.3f} s (first {n['compiled']['times'][0]:.3f}),"
              f" interpreted {n['interpreted']['times'][0]:.3f} s, identical {n['identical']}, handed back "
              f"{n['compiled']['handed_back']}, special kernel {n['compiled']['special_kernel_used']}")
    else:
        print("normal:", n)
    if "min" in R["dispatch"]:
        e = R["emu_run"]
        print(f"emu run {size}^3: {' '.join(f'{w:.2f}' for w in e['walls'])} s wall (rc {e['rcs']}); dispatch in "
              f"one process {R['dispatch']['min']:.3f} s (first {R['dispatch']['first']:.3f}); ratio "
              f"{statistics.median(e['walls'][1:]) / R['dispatch']['min']:.2f}x; same bits "
              f"{e['bits'] == R['dispatch']['bits']}")
    return 0


if __name__ == "__main__":
    a = sys.argv[1:]
    sys.exit(main(a[0] if a else "host-out", int(a[1]) if len(a) > 1 else 1024, int(a[2]) if len(a) > 2 else 2048))
