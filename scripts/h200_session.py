#!/usr/bin/env python3
"""One session on a machine with a real GPU (an NVIDIA H200 here): every differential test and
recording this repository has for it, in one go. Usage: python3 scripts/h200_session.py OUTDIR

1. the adapter: Dawn's and wgpu-native's view (features, subgroup sizes, subgroup-matrix configs);
2. `emu diff` of every cooperative kernel -- the examples (emu/examples, f16 -> f32, both
   dialects) and traces/hw/kernels (f16 -> f16 in both dialects, f16 -> f32 at 16x8x16 with
   column-major operands, u8 and i8) -- through Dawn, wgpu-dialect kernels emitted as Dawn WGSL;
3. `emu diff` of the plain test shaders (tests/shaders) through Dawn and through wgpu-native;
4. `emu record` (every reported config; narrow/normal/wide/special inputs);
5. `emu fit` of the recorded vectors against the nvidia-h200 profile (and a search if it does not
   reproduce them), writing a fitted profile.

OUTDIR gets: session.log is the caller's; diffs.json (every diff report, emitted WGSL included),
vectors/{mma_f16,mma_f32,mma_int}.npz + vectors/record.json, fit.json, fitted_profile.json.
With H200_STAND_IN=1 the 'GPU' is the emulator itself behind the runner (a dry run anywhere).
"""
import json
import os
import pathlib
import sys
import time
import traceback

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "hw"))
os.environ.setdefault("EMU_DAWN_TOGGLES", "vulkan_enable_f16_on_nvidia")

import numpy as np  # noqa: E402

OUT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", "h200-out"))
OUT.mkdir(parents=True, exist_ok=True)
T0 = time.time()


def say(*a):
    print(f"[{time.time() - T0:7.1f}s]", *a, flush=True)


def stand_in():
    """H200_STAND_IN=1: pretend the emulator (nvidia-h200 profile) is an H200 behind Dawn."""
    import emu
    from emu.hw import adapters, diff, runner
    info = {"vendor": "nvidia", "vendor_id": 0x10DE, "device": "NVIDIA H200 (stand-in)", "backend_type": "Vulkan",
            "adapter_type": "DiscreteGPU", "description": "emulator stand-in", "subgroup_min_size": 32,
            "subgroup_max_size": 32, "quirks": [], "binding": "dawn", "features": []}
    adapters.available = lambda b: (dict(info, binding=b), f"{b}: stand-in")
    from emu.profiles import load_profile
    p = load_profile("nvidia-h200")
    diff.adapter_configs = lambda b: p.props_dawn()

    def run(source, *, entry=None, dispatch=(1, 1, 1), buffers=None, outputs=None, overrides=None,
            backend="dawn", features=()):
        dev = emu.Device("nvidia-h200")
        pipe = dev.create_compute_pipeline(dev.create_shader_module(source, "gpu.wgsl"), entry,
                                           {k: str(int(v)) for k, v in (overrides or {}).items()})
        hs = {k: dev.create_buffer(np.frombuffer(np.ascontiguousarray(v).tobytes() if isinstance(v, np.ndarray)
                                                 else bytes(v), np.uint8).copy()) for k, v in buffers.items()}
        dev.dispatch(pipe, hs, dispatch)
        outs = outputs or list(hs)
        return {k: hs[k].read(np.uint8).tobytes()[: len(np.ascontiguousarray(buffers[k]).tobytes())] for k in outs}
    runner.run_on_adapter = run


if os.environ.get("H200_STAND_IN"):
    stand_in()

from emu.hw import adapters  # noqa: E402
from emu.hw.diff import adapter_configs, diff_shader  # noqa: E402

# ------------------------------------------------------------------------------ 1. the adapter
summary = {"adapters": {}, "diffs": [], "started": time.strftime("%Y-%m-%d %H:%M:%S")}
for b in ("dawn", "wgpu"):
    info, why = adapters.available(b)
    say(f"adapter {b}: {why}")
    if info is not None:
        summary["adapters"][b] = {k: v for k, v in info.items() if k != "limits"}
        summary["adapters"][b]["limits"] = {k: v for k, v in info.get("limits", {}).items() if "subgroup" in k
                                            or "invocations" in k or "workgroup" in k}
cfgs = adapter_configs("dawn")
summary["dawn_subgroup_matrix_configs"] = cfgs
say(f"Dawn subgroupMatrixConfigs: {json.dumps(cfgs)}")

# ------------------------------------------------------------------------------ inputs
rng = np.random.default_rng(2024)


def f16(n, lo=-2, hi=2):
    e = rng.integers(lo, hi, size=n)
    return (np.ldexp(1 + rng.random(n), e) * rng.choice([-1, 1], size=n)).astype(np.float16)


def f32(n, lo=-4, hi=4):
    e = rng.integers(lo, hi, size=n)
    return (np.ldexp(1 + rng.random(n), e) * rng.choice([-1, 1], size=n)).astype(np.float32)


def u8(n):
    return rng.integers(0, 256, size=n, dtype=np.uint8).view(np.uint32) if n % 4 == 0 else None


MNK = 64
KERNELS = [
    # file, dispatch, overrides, buffers
    ("emu/examples/gemm_dawn.wgsl", (4, 4, 1), {}, {(0, 0): f16(128 * 128), (0, 1): f16(128 * 128),
                                                     (0, 2): np.zeros(128 * 128, np.float32)}),
    ("emu/examples/gemm_wgpu.wgsl", (8, 8, 1), {}, {(0, 0): f16(128 * 128), (0, 1): f16(128 * 128),
                                                     (0, 2): np.zeros(128 * 128, np.float32)}),
    ("emu/examples/gemm_dawn.wgsl", (2, 2, 1), {"M": "64", "N": "64", "K": "256"},
     {(0, 0): f16(64 * 256, -8, 8), (0, 1): f16(256 * 64, -8, 8), (0, 2): np.zeros(64 * 64, np.float32)}),
    ("traces/hw/kernels/mma_f16_f16_dawn.wgsl", (4, 4, 1), {},
     {(0, 0): f16(MNK * MNK), (0, 1): f16(MNK * MNK), (0, 2): f16(MNK * MNK)}),
    ("traces/hw/kernels/mma_f16_f16_wgpu.wgsl", (4, 4, 1), {},
     {(0, 0): f16(MNK * MNK), (0, 1): f16(MNK * MNK), (0, 2): f16(MNK * MNK), (0, 3): np.zeros(MNK * MNK, np.float16)}),
    ("traces/hw/kernels/mma_f16_f32_16x8x16_colmajor_dawn.wgsl", (8, 4, 1), {},
     {(0, 0): f16(MNK * MNK, -8, 8), (0, 1): f16(MNK * MNK, -8, 8), (0, 2): f32(MNK * MNK),
      (0, 3): np.zeros(MNK * MNK, np.float32)}),
    ("traces/hw/kernels/mma_u8_u32_dawn.wgsl", (4, 4, 1), {},
     {(0, 0): u8(MNK * MNK), (0, 1): u8(MNK * MNK), (0, 2): rng.integers(0, 1 << 32, MNK * MNK, dtype=np.uint64).astype(np.uint32)}),
    ("traces/hw/kernels/mma_i8_i32_16x8x32_dawn.wgsl", (8, 4, 1), {},
     {(0, 0): u8(MNK * 32).view(np.int32), (0, 1): u8(32 * MNK).view(np.int32),
      (0, 2): np.zeros(MNK * MNK, np.int32),
      (0, 3): rng.integers(-(1 << 31), 1 << 31, MNK * MNK, dtype=np.int64).astype(np.int32)}),
]


def run_diff(path, backend, dispatch, overrides, buffers, seed=1):
    t = time.time()
    src = (ROOT / path).read_text()
    try:
        rep = diff_shader(src, path, dispatch=dispatch, seed=seed, backend=backend, overrides=overrides,
                          buffers=buffers, first=64)
    except Exception:
        say(f"diff {path} on {backend}: CRASH\n{traceback.format_exc()}")
        summary["diffs"].append({"shader": path, "backend": backend, "result": "crash",
                                 "error": traceback.format_exc()[-3000:]})
        return
    js = rep.to_json()
    js["seconds"] = round(time.time() - t, 2)
    summary["diffs"].append(js)
    tot = js["totals"]
    say(f"diff {path} on {backend}: {rep.result.upper()} ({tot['equal']} equal, {tot['different']} different of "
        f"{tot['elements']}) in {js['seconds']}s")
    if rep.result != "identical":
        print(rep.text(), flush=True)


# ------------------------------------------------------------------------------ 2. cooperative kernels
for path, dispatch, overrides, buffers in KERNELS:
    run_diff(path, "dawn", dispatch, overrides, buffers)

# ------------------------------------------------------------------------------ 3. plain test shaders
try:
    from backends import shader_run
except Exception:      # no pytest there: the defaults
    def shader_run(name):
        return {"dispatch": (2, 1, 1), "overrides": {}, "buffers": {}}
plain = [p for p in sorted((ROOT / "tests" / "shaders").glob("*.wgsl"))
         if "cooperative_matrix" not in p.read_text() and "subgroup_matrix" not in p.read_text()]
for backend in ("dawn", "wgpu"):
    if backend not in summary["adapters"]:
        say(f"skipping plain shaders on {backend}: no adapter")
        continue
    for p in plain:
        r = shader_run(p.name)
        run_diff(str(p.relative_to(ROOT)), backend, r["dispatch"], r["overrides"], r["buffers"])

with open(OUT / "diffs.json", "w") as f:
    json.dump(summary, f, indent=1, default=str)

# ------------------------------------------------------------------------------ 4. record
from emu.cli import main as emu_main  # noqa: E402

say("emu record")
try:
    rc = emu_main(["record", "--out", str(OUT / "vectors")])
    say(f"emu record: exit {rc}")
except Exception:
    say(f"emu record crashed:\n{traceback.format_exc()}")

# ------------------------------------------------------------------------------ 5. fit
if (OUT / "vectors").is_dir() and list((OUT / "vectors").glob("mma_*.npz")):
    say("emu fit (new vectors) against nvidia-h200")
    try:
        rc = emu_main(["fit", str(OUT / "vectors"), "--profile", "nvidia-h200", "--out",
                       str(OUT / "fitted_profile.json"), "--report", str(OUT / "fit.json")])
        say(f"emu fit: exit {rc}")
    except Exception:
        say(f"emu fit crashed:\n{traceback.format_exc()}")

# a summary table at the end of the log
print("\nSUMMARY (shader, backend, result, equal/different)")
for d in summary["diffs"]:
    tot = d.get("totals", {})
    print(f"  {d['shader']:<56} {d['backend']:<5} {d['result']:<10} {tot.get('equal', '-')}/{tot.get('different', '-')}"
          + (f"  [{d.get('error_stage')}]" if d.get("error_stage") else ""))
with open(OUT / "diffs.json", "w") as f:
    summary["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    json.dump(summary, f, indent=1, default=str)
say("done")
