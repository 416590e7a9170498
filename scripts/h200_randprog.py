"""Record emu.hw.randprog's random programs on the H200, through Dawn (WGSL) and Vulkan (GLSL).

    python scripts/h200_randprog.py --prepare BUNDLE FIRST COUNT    # here: each seed's GLSL compiled
        to SPIR-V as emu compiles it (glslang -g; the device has no glslang), BUNDLE/spv/SEED.spv
    python scripts/h200_randprog.py OUT BUNDLE FIRST COUNT [--nv2]   # there, through
        scripts/h200_session.sh (its .gl debs and wheels, its ICD probe, EMU_DAWN_TOGGLES):
        H200_SCRIPT=scripts/h200_randprog.py H200_ARGS="BUNDLE FIRST COUNT --nv2" bash scripts/h200_session.sh

There: one process per path and batch runs its seeds, each program through Dawn or through the
Vulkan API, saving OUT/PATH_FIRST.npz every 25 programs: `dawn/SEED` or `vulkan/SEED` (the outputs'
uint32 bits) and `errors` (JSON: seed and path -> message); --judge FIRST COUNT adds a held-out batch. The inputs
are the program's own (Program.inputs(), from the seed). A time budget (RANDPROG_BUDGET_S, 240)
stops starting programs; what ran is kept. --nv2 also runs tests/shaders/spirv/nv2_reduce.spvasm on
rows of f32 subnormals (OUT/nv2_subnormal_runs.npz). tests/hw/test_randprog.py replays the
recordings kept in tests/data/hw/h200/.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from emu.hw import randprog  # noqa: E402



def prepare(bundle: Path, first: int, count: int) -> None:
    from emu.frontend.spirv import compile_glsl
    (bundle / "spv").mkdir(parents=True, exist_ok=True)
    for seed in range(first, first + count):
        p = randprog.generate(seed)
        text, file = randprog.source(p, "vulkan")
        (bundle / "spv" / f"{seed}.spv").write_bytes(compile_glsl(text, file))
    from emu.frontend.spirv import spirv_binary
    src = (ROOT / "tests" / "shaders" / "spirv" / "nv2_reduce.spvasm").read_text()
    (bundle / "nv2_reduce.spv").write_bytes(spirv_binary(src, "nv2_reduce.spvasm"))
    print(f"prepared {count} programs in {bundle}")


def _run_dawn(p, bundle):
    from emu.hw.runner import run_on_adapter
    return run_on_adapter(p.wgsl, entry="main", dispatch=(p.invocations // randprog.WORKGROUP, 1, 1),
                          buffers={(0, 0): p.inputs(), (0, 1): p.invocations * p.n_outputs * 4},
                          outputs=[(0, 1)], backend="dawn")


def _run_vulkan(p, bundle):
    from emu.hw import vulkan
    spv = (Path(bundle) / "spv" / f"{p.seed}.spv").read_bytes()
    return vulkan.run_spirv(spv, entry="main", dispatch=(p.invocations // randprog.WORKGROUP, 1, 1),
                            buffers={(0, 0): p.inputs().tobytes(), (0, 1): bytes(p.invocations * p.n_outputs * 4)},
                            kinds={(0, 0): "storage", (0, 1): "storage"}, outputs=[(0, 1)])


RUNNERS = {"dawn": _run_dawn, "vulkan": _run_vulkan}


def _run(path, bundle, seeds, deadline):
    """Each seed's program through PATH until the deadline: ({seed: output bits}, {key: error})."""
    got, errors = {}, {}
    for seed in seeds:
        if time.time() > deadline:
            break
        try:
            r = RUNNERS[path](randprog.generate(seed), bundle)
            got[seed] = np.frombuffer(r[(0, 1)], np.uint32).copy()
        except Exception as e:
            errors[f"{path}/{seed}"] = f"{type(e).__name__}: {e}"[:400]
    return got, errors


def nv2_subnormals(bundle: Path, out: Path) -> None:
    """nv2_reduce.spvasm with A = B = 0 and C rows of f32 subnormals (all negative, all positive,
    mixed, and subnormals beside normal values): D = C, its column maxima, row and total sums."""
    from emu.hw import vulkan
    spv = (bundle / "nv2_reduce.spv").read_bytes()
    rng = np.random.default_rng(29)
    runs = {}
    for t in range(4):
        bits = rng.integers(1, 1 << 23, (16, 16)).astype(np.uint32)
        sign = {0: np.full((16, 16), 1 << 31), 1: np.zeros((16, 16)), 2: rng.integers(0, 2, (16, 16)) << 31,
                3: rng.integers(0, 2, (16, 16)) << 31}[t].astype(np.uint32)
        c = (bits | sign).view(np.float32)
        if t == 3:
            c = c.copy()
            c[:, ::4] = rng.standard_normal((16, 4)).astype(np.float32)
        a = np.zeros((16, 16), np.float16)
        bufs = {(0, 0): a, (0, 1): a, (0, 2): c, (0, 3): np.zeros(5 * 256, np.float32), (0, 4): np.zeros(256, np.float16)}
        try:
            got = vulkan.run_spirv(spv, entry="main", dispatch=(1, 1, 1), buffers={k: v.tobytes() for k, v in bufs.items()},
                                   kinds={k: "storage" for k in bufs}, outputs=[(0, 3), (0, 4)])
        except Exception as e:
            print(f"nv2 subnormals: {type(e).__name__}: {e}", flush=True)
            return
        runs[f"t{t}/C"] = c
        runs[f"t{t}/R"] = np.frombuffer(got[(0, 3)], np.float32).reshape(5, 16, 16)
        runs[f"t{t}/H"] = np.frombuffer(got[(0, 4)], np.float16).reshape(16, 16)
    np.savez_compressed(out / "nv2_subnormal_runs.npz", **runs)
    print("nv2 subnormals saved", flush=True)


def _gpu() -> str:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True).stdout.strip()
    except OSError:
        return "no nvidia-smi"


def worker(path: str, bundle: Path, out: Path, first: int, count: int, budget: float) -> None:
    """One path's seeds in this process, saved every 25 programs to OUT/PATH_FIRST.npz (a process
    pool of Dawn and Vulkan workers stalled on the device once and saved nothing)."""
    t0 = time.time()
    res, errs = {}, {}
    for k in range(first, first + count, 25):
        if time.time() - t0 > budget:
            break
        seeds = list(range(k, min(k + 25, first + count)))
        got, err = _run(path, bundle, seeds, t0 + budget)
        res.update({f"{path}/{s}": v for s, v in got.items()})
        errs.update(err)
        np.savez_compressed(out / f"{path}_{first}.npz", errors=json.dumps(errs), **res)
        print(path, first, len(res), len(errs), round(time.time() - t0, 1), flush=True)


def main(argv) -> int:
    if argv[0] == "--prepare":
        prepare(Path(argv[1]), int(argv[2]), int(argv[3]))
        return 0
    if argv[0] == "--worker":
        worker(argv[1], Path(argv[2]), Path(argv[3]), int(argv[4]), int(argv[5]), float(argv[6]))
        return 0
    out, bundle, first, count = Path(argv[0]), Path(argv[1]), int(argv[2]), int(argv[3])
    batches = {"fit": (first, count)}
    if "--judge" in argv:          # held-out seeds, kept in their own file
        k = argv.index("--judge")
        batches["judge"] = (int(argv[k + 1]), int(argv[k + 2]))
    out.mkdir(parents=True, exist_ok=True)
    if "--nv2" in argv:
        nv2_subnormals(bundle, out)
    print({"generator": randprog.GENERATOR_VERSION, "batches": batches, "gpu": _gpu()}, flush=True)
    budget = os.environ.get("RANDPROG_BUDGET_S", "240")
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", path, str(bundle), str(out), str(a), str(n), budget])
             for path in randprog.PATHS for a, n in batches.values()]
    for p in procs:
        p.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
