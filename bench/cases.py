"""One measurement per process: `python -m bench.cases NAME [ARGS...]` prints one JSON line.

bench/run.py starts every case in its own process, so that each reports its own peak RSS (read
by the parent from wait4) and numba's and the JIT's caches can be cold or warm on purpose.
Each timed case does one untimed warm-up run (compilation, cache loads) and then RUNS timed runs;
it reports all of them, the parent takes the median.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHADERS = ROOT / "bench" / "shaders"
GEMM = ROOT / "emu" / "examples" / "gemm_dawn.wgsl"


def _out(**kw):
    import resource
    kw["peak_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024     # KiB on Linux
    print(json.dumps(kw), flush=True)


def _timed(fn, runs):
    fn()                                    # warm-up: compilation, caches, first touches
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return ts


def _vecadd_grid(n):
    wg = -(-n // 256)
    rows = -(-wg // 65535)
    return (-(-wg // rows), rows, 1)


# ------------------------------------------------------------------------------- emu

SIMPLE = SHADERS / "gemm_simple.wgsl"
GLSL = ROOT / "tests" / "shaders" / "spirv" / "gemm_coopmat.comp"


def emu_gemm(profile, size, runs, jobs=None, trace="off", kernel="dawn"):
    """kernel: 'dawn' (emu/examples/gemm_dawn.wgsl, 4 subgroups per workgroup), 'simple'
    (bench/shaders/gemm_simple.wgsl, one subgroup and one tile per workgroup) or 'glsl' (its GLSL
    twin tests/shaders/spirv/gemm_coopmat.comp: GL_KHR_cooperative_matrix through glslang and the
    SPIR-V front end, sizes as specialization constants). numpy's f32 matmul
    of the same size is timed in the same process after each run (numpy_times), for ratios that
    do not depend on what else the machine was doing between processes."""
    # the compiled path's steady state: compiled at the warm-up (by default a kernel not in the
    # cache is interpreted while that costs less than compiling it: emu/jit/tier.py)
    os.environ.setdefault("EMU_JIT", "1")
    import emu
    size, runs = int(size), int(runs)
    src, block = {"simple": (SIMPLE, 16), "glsl": (GLSL, 16)}.get(kernel, (GEMM, 32))
    tracer = None
    if trace in ("on", "jsonl"):
        import tempfile
        from emu.trace.tracer import MemorySink, Tracer
        tmp = tempfile.TemporaryDirectory()
        tracer = Tracer(sink=MemorySink()) if trace == "on" else Tracer(Path(tmp.name) / "t.jsonl")
    dev = emu.Device(profile, jobs=None if jobs in (None, "all") else int(jobs), tracer=tracer)
    mod = dev.create_shader_module(src.read_text(), str(src.relative_to(ROOT)))
    pipe = dev.create_compute_pipeline(mod, constants={"0": size, "1": size, "2": size} if kernel == "glsl"
                                       else {"M": size, "N": size, "K": size})
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (size, size)).astype(np.float16)
    b = rng.uniform(-1, 1, (size, size)).astype(np.float16)
    bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b),
            (0, 2): dev.create_buffer(size=4 * size * size)}
    grid = (size // block, size // block, 1)
    af, bf = a.astype(np.float32), b.astype(np.float32)
    af @ bf
    ts, nps = [], []
    dev.dispatch(pipe, bufs, grid)          # warm-up
    for _ in range(runs):
        t = time.perf_counter()
        dev.dispatch(pipe, bufs, grid)
        ts.append(time.perf_counter() - t)
        for _ in range(5):
            t = time.perf_counter()
            af @ bf
            nps.append(time.perf_counter() - t)
    check = None
    if size <= 256:
        from emu.demo import expected
        want = expected(dev.profile, a, b)
        got = bufs[(0, 2)].read(np.float32).reshape(size, size)
        check = bool(np.array_equal(got.view(np.uint32), want.view(np.uint32)))
    extra = {}
    if trace == "on":                       # the sink keeps arrays; reading builds the schema's lists
        import resource
        extra["rss_before_read"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        t = time.perf_counter()
        extra["records"] = len(tracer.records)
        extra["read_s"] = time.perf_counter() - t
    if trace == "jsonl":
        tracer.end()
        extra["file_bytes"] = (Path(tmp.name) / "t.jsonl").stat().st_size // (runs + 1)     # per dispatch
    _out(times=ts, numpy_times=nps, bound_bytes=a.nbytes + b.nbytes + 4 * size * size, bit_exact=check,
         jobs=dev.jobs, **extra)


def emu_run(kernel, size, runs, mode="own"):
    """`emu run` of the GEMM as a user starts it (a child process; wall from start to exit, warm
    caches, bytecode caching on as in an installed package) against the same dispatch in this
    process, alternately: each round one `emu run` (its wall and CPU seconds), then one timed dispatch here (after an untimed
    warm-up round of each), so that both see the same load. ratios: run / dispatch per round.
    same_bits: the file `emu run` wrote holds the bits of the dispatch here. mode 'served': with
    an `emu serve` started first (same environment), which every round's `emu run` hands its
    command to (served: how many runs the server says it ran); 'own' (default): EMU_SERVE=0."""
    import resource
    import tempfile
    import emu
    size, runs = int(size), int(runs)
    src, block = (SIMPLE, 16) if kernel == "simple" else (GEMM, 32)
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (size, size)).astype(np.float16)
    b = rng.uniform(-1, 1, (size, size)).astype(np.float16)
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src.read_text(), str(src.relative_to(ROOT))),
                                       constants={"M": size, "N": size, "K": size})
    bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): dev.create_buffer(size=4 * size * size)}
    grid = (size // block, size // block, 1)
    env = dict(os.environ, EMU_SERVE="0" if mode == "own" else "1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    walls, cpus, disp, loads = [], [], [], []
    with tempfile.TemporaryDirectory() as d:
        server = None
        if mode == "served":
            log = open(Path(d) / "serve.log", "w+")
            server = subprocess.Popen([sys.executable, "-m", "emu", "serve", "--idle", "300"], env=env,
                                      stderr=log, stdout=subprocess.DEVNULL)
            while "serving" not in (Path(d) / "serve.log").read_text():
                if server.poll() is not None:
                    raise SystemExit(f"emu serve failed: {(Path(d) / 'serve.log').read_text()[-300:]}")
                time.sleep(0.05)
        np.save(Path(d) / "a.npy", a)
        np.save(Path(d) / "b.npy", b)
        out = Path(d) / "c.npy"
        cmd = [sys.executable, "-m", "emu", "run", str(src), "--dispatch", f"{grid[0]},{grid[1]}",
               "--profile", "nvidia-h200", "--override", f"M={size}", "--override", f"N={size}",
               "--override", f"K={size}", "--buffer", f"0:0={d}/a.npy", "--buffer", f"0:1={d}/b.npy",
               "--buffer", f"0:2=zeros:{size * size}:f32", "--output", f"0:2={out}"]
        for i in range(runs + 1):           # round 0: warm-up (caches, page cache, pyc files)
            c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            p = subprocess.run(cmd, env=env, capture_output=True, text=True)
            wall = time.perf_counter() - t
            c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if p.returncode != 0:
                raise SystemExit(f"emu run failed: {p.stderr[-300:]}")
            t = time.perf_counter()
            dev.dispatch(pipe, bufs, grid)
            dt = time.perf_counter() - t
            if i:
                walls.append(wall)
                cpus.append(c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime)
                disp.append(dt)
                loads.append(os.getloadavg()[0])
        same = bool(np.array_equal(np.load(out).view(np.uint32), bufs[(0, 2)].read(np.uint32)))
        served = None
        if server is not None:
            server.terminate()
            server.wait(timeout=60)
            log.close()
            served = (Path(d) / "serve.log").read_text().count("ran a command: exit status 0")
    _out(times=walls, cpu=cpus, dispatch_times=disp, ratios=[w / t for w, t in zip(walls, disp)], loadavg=loads,
         same_bits=same, mode=mode, served=served)


def emu_demo_start(runs):
    """`emu demo` as a user starts it, in a child process: once with empty numba and JIT caches
    (NUMBA_CACHE_DIR, EMU_JIT_CACHE pointed at a new folder), then `runs` times with the caches
    it filled. Wall and CPU seconds of each (bytecode caching on, as in an installed package)."""
    import resource
    import tempfile
    runs = int(runs)
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, NUMBA_CACHE_DIR=str(Path(d) / "numba"), EMU_JIT_CACHE=str(Path(d) / "jit"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        walls, cpus, said = [], [], []
        for _ in range(runs + 1):
            c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            p = subprocess.run([sys.executable, "-m", "emu", "demo"], env=env, capture_output=True, text=True)
            walls.append(time.perf_counter() - t)
            c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime)
            said.append("compiling kernels" in p.stderr)
            if p.returncode != 0 or "demo: OK" not in p.stdout:
                raise SystemExit(f"emu demo failed: {p.stderr[-300:]}")
    _out(times=walls[1:], cold=walls[0], cold_cpu=cpus[0], warm_cpu=min(cpus[1:]), notice=said)


def emu_shader(name, n, runs, jit="1"):
    os.environ["EMU_JIT"] = jit
    import emu
    n, runs = int(n), int(runs)
    dev = emu.Device("reference")
    rng = np.random.default_rng(0)
    src = (SHADERS / f"{name}.wgsl").read_text()
    mod = dev.create_shader_module(src, f"bench/shaders/{name}.wgsl")
    if name == "vecadd":
        a = rng.standard_normal(n, dtype=np.float32)
        b = rng.standard_normal(n, dtype=np.float32)
        pipe = dev.create_compute_pipeline(mod)
        bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): dev.create_buffer(size=4 * n)}
        grid = _vecadd_grid(n)
        check = lambda: np.array_equal(bufs[(0, 2)].read(np.float32), a + b)   # noqa: E731
        bound = 12 * n
    elif name == "reduce":
        a = rng.standard_normal(n, dtype=np.float32)
        pipe = dev.create_compute_pipeline(mod)
        bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(size=4 * (n // 256))}
        w = n // 256
        rows = -(-w // 65535)
        while w % rows:
            rows += 1
        grid = (w // rows, rows, 1)             # exactly w workgroups
        check = lambda: bool(np.allclose(bufs[(0, 1)].read(np.float32), a.reshape(-1, 256).sum(1), atol=1e-3))  # noqa: E731
        bound = 4 * n + 4 * (n // 256)
    else:                                   # matmul_naive, matmul_tiled: n is the size
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        pipe = dev.create_compute_pipeline(mod, constants={"M": n, "N": n, "K": n})
        bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): dev.create_buffer(size=4 * n * n)}
        grid = (n // 16, n // 16, 1)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        check = lambda: bool(np.abs(bufs[(0, 2)].read(np.float32).reshape(n, n) - ref).max() < 1e-3 * n)  # noqa: E731
        bound = 12 * n * n
    ts = _timed(lambda: dev.dispatch(pipe, bufs, grid), runs)
    _out(times=ts, bound_bytes=bound, ok=check(), jit=pipe.pipeline._jit is not None)


def emu_compile():
    """First dispatch minus steady-state dispatch, summed over the paths that compile numba code:
    the GEMM's MMA and load/store kernels (h200 and reference models) and the fusion JIT
    (vector add, naive matmul). Cold or warm depends on NUMBA_CACHE_DIR / EMU_JIT_CACHE. EMU_JIT=1:
    these small dispatches would otherwise run interpreted (emu/jit/tier.py), compiling nothing."""
    os.environ["EMU_JIT"] = "1"
    t0 = time.perf_counter()
    import emu
    t_import = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    jobs = []
    for profile in ("nvidia-h200", "reference"):
        dev = emu.Device(profile)
        pipe = dev.create_compute_pipeline(dev.create_shader_module(GEMM.read_text(), "gemm.wgsl"),
                                           constants={"M": 64, "N": 64, "K": 64})
        a = rng.uniform(-1, 1, (64, 64)).astype(np.float16)
        bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(a), (0, 2): dev.create_buffer(size=4 * 64 * 64)}
        jobs.append((dev, pipe, bufs, (2, 2, 1)))
    dev = emu.Device("reference")
    for name, grid, consts in (("vecadd", (16, 1, 1), None), ("matmul_naive", (4, 4, 1), {"M": 64, "N": 64, "K": 64})):
        pipe = dev.create_compute_pipeline(dev.create_shader_module((SHADERS / f"{name}.wgsl").read_text(), name),
                                           constants=consts)
        x = rng.standard_normal(4096, dtype=np.float32)
        bufs = {(0, 0): dev.create_buffer(x), (0, 1): dev.create_buffer(x), (0, 2): dev.create_buffer(size=4 * 4096)}
        jobs.append((dev, pipe, bufs, grid))
    first = second = 0.0
    for d, p, b, g in jobs:
        t = time.perf_counter()
        d.dispatch(p, b, g)
        first += time.perf_counter() - t
        t = time.perf_counter()
        d.dispatch(p, b, g)
        second += time.perf_counter() - t
    _out(compile=first - second, first=first, steady=second, import_s=t_import)


def emu_edit(name, runs):
    """`emu run` of a shader just edited (bench/edit_loop.py's case `name`): wall and CPU seconds
    of each run, each a new kernel; how each ran (its summary line); whether all gave one result."""
    from bench import edit_loop
    got = edit_loop.measure(name, int(runs), [("this", ROOT)], log=lambda s: None)["this"]
    _out(times=[g["wall"] for g in got], cpu=[g["cpu"] for g in got], loadavg=[g["load"][1] for g in got],
         ran=[(g["stderr"].splitlines() or [""])[-1].split(" s, ", 1)[-1].split(";")[0] for g in got],
         same_bits=len({g["bits"] for g in got}) == 1)


# ------------------------------------------------------------------------------- peers

def numpy_matmul(size, runs):
    size, runs = int(size), int(runs)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    ts = _timed(lambda: a @ b, runs)
    info = ""
    try:
        from threadpoolctl import threadpool_info
        info = ";".join(f"{d.get('internal_api')} {d.get('architecture')} x{d.get('num_threads')}"
                        for d in threadpool_info())
    except ImportError:
        pass
    _out(times=ts, bound_bytes=3 * a.nbytes, blas=info)


def numpy_add(n, runs):
    n, runs = int(n), int(runs)
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    c = np.empty_like(a)
    ts = _timed(lambda: np.add(a, b, out=c), runs)
    _out(times=ts, bound_bytes=3 * a.nbytes)


def numpy_reduce(n, runs):
    n, runs = int(n), int(runs)
    a = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    ts = _timed(lambda: a.reshape(-1, 256).sum(axis=1), runs)
    _out(times=ts, bound_bytes=a.nbytes)


def lavapipe(name, size, runs):
    size, runs = int(size), int(runs)
    from emu.hw.runner import available_adapter, timed_dispatch
    info, why = available_adapter("wgpu")
    if info is None:
        _out(skipped=why)
        return
    rng = np.random.default_rng(0)
    src = (SHADERS / f"{name}.wgsl").read_text()
    if name == "vecadd":
        a = rng.standard_normal(size, dtype=np.float32)
        out, t = timed_dispatch(src, dispatch=_vecadd_grid(size), buffers={(0, 0): a, (0, 1): a, (0, 2): a.nbytes},
                                runs=runs)
        _out(times=[t], median_only=True, adapter=why, bound_bytes=3 * a.nbytes)
        return
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    out, t = timed_dispatch(src, dispatch=(size // 16, size // 16, 1), buffers={(0, 0): a, (0, 1): b, (0, 2): a.nbytes},
                            overrides={"M": size, "N": size, "K": size}, runs=runs)
    c = np.frombuffer(out[(0, 2)], np.float32).reshape(size, size)
    ok = bool(np.abs(c - a.astype(np.float64) @ b).max() < 1e-3 * size)
    _out(times=[t], median_only=True, adapter=why, ok=ok, bound_bytes=3 * a.nbytes)


def tinygrad(size, runs):
    """A f16 x f16 -> f32 matmul on tinygrad's PYTHON device emulating an sm_80 GPU's tensor
    cores (DEV=PYTHON::sm_80, set by the parent). Times realize() of fresh tensors."""
    size, runs = int(size), int(runs)
    from tinygrad import Tensor, dtypes
    from tinygrad.helpers import getenv  # noqa: F401
    rng = np.random.default_rng(0)

    def one():
        a = Tensor(rng.uniform(-1, 1, (size, size)).astype(np.float16)).realize()
        b = Tensor(rng.uniform(-1, 1, (size, size)).astype(np.float16)).realize()
        t = time.perf_counter()
        a.matmul(b, dtype=dtypes.float32).realize()
        return time.perf_counter() - t
    one()                                   # warm-up: scheduling and "compilation" cached
    ts = [one() for _ in range(runs)]
    from importlib.metadata import version
    _out(times=ts, version=version("tinygrad"), python=sys.version.split()[0],
         bound_bytes=2 * 2 * size * size + 4 * size * size)


def cudasim(size, runs):
    size, runs = int(size), int(runs)
    assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
    sys.path.insert(0, str(ROOT))
    from bench import cudasim_matmul
    ts = []
    for _ in range(runs):                   # no warm-up: the simulator compiles nothing
        t = time.perf_counter()
        c, a, b = cudasim_matmul.run(size)
        ts.append(time.perf_counter() - t)
    ok = bool(np.abs(c - a.astype(np.float64) @ b).max() < 1e-3 * size)
    _out(times=ts, ok=ok, bound_bytes=3 * 4 * size * size)


if __name__ == "__main__":
    globals()[sys.argv[1]](*sys.argv[2:])
