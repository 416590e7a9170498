#!/usr/bin/env python3
"""The H200 session of issue 11's third part, through Dawn. Usage (via scripts/h200_session.sh,
H200_SCRIPT=scripts/h200_reductions.py; LLAMA_SHADERS: the folder scripts/fetch_llama_wgsl.sh prints, carried):

    h200_reductions.py OUTDIR

1. subgroup float reductions and scans (emu/hw/subgroup_record.py): OUTDIR/subgroups.npz, and
   how many of each case nvidia-h200 reproduces now (subgroups.json);
2. llama.cpp's WebGPU kernels with other inputs (seed LLAMA_SEED, default 1: held out from the
   softcap fit) through scripts/llama_webgpu.py --hw dawn --record: OUTDIR/llama_gpu_s1.npz;
3. a held-out recording of every builtin case (seed H200_SEED, default 6), replayed on
   nvidia-h200 here on 16 processes: OUTDIR/heldout.json; its f16 part comes back
   (OUTDIR/heldout/), the f32 part (too large) does not;
4. f16 atan2(y, x) for every f16 x in [16, 2048) and 24 small y (the subnormal results nvidia-h200
   does not reproduce): OUTDIR/atan2_f16.npz.
H200_STEPS (default "subgroups,llama,heldout") picks the steps; SUBGROUP_SEED (default 1) the
subgroup inputs (another seed is held out from the fit).
OUTDIR then holds 7 files with the session's log (8 may come back from the device).
"""
import json
import os
import pathlib
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("EMU_DAWN_TOGGLES", "vulkan_enable_f16_on_nvidia")
import numpy as np  # noqa: E402

OUT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "h200-out")
OUT.mkdir(parents=True, exist_ok=True)
SEED = int(os.environ.get("H200_SEED", "6"))
SCALE = float(os.environ.get("H200_SCALE", "1.0"))            # a dry run may shrink it
T0 = time.time()


def say(*a):
    print(f"[{time.time() - T0:7.1f}s]", *a, flush=True)


def _eval(keys):
    from emu.hw.builtins_eval import compare
    from emu.hw.builtins_record import load_recording
    _, rec = load_recording(str(OUT / "heldout"), keys=keys)
    return compare(rec, "nvidia-h200", limit=None)


def subgroups():
    from emu.hw import subgroup_record as sr
    from emu.hw.runner import run_on_adapter
    seed = int(os.environ.get("SUBGROUP_SEED", "1"))
    rec = sr.record_subgroups(run_on_adapter, seed=seed, log=say)
    np.savez_compressed(OUT / f"subgroups{'' if seed == 1 else seed}.npz", **rec)
    lanes = rec["lanes"]
    say("subgroups recorded: size", int(rec["size"]), "lanes consecutive:",
        bool(np.all((lanes & 0xFFFF) == (np.arange(sr.N) % sr.WG) % int(rec["size"]))),
        "errors:", [k for k in rec if k.endswith("/error")])
    rows = sr.compare(rec, "nvidia-h200")
    (OUT / f"subgroups{'' if seed == 1 else seed}.json").write_text(json.dumps(rows, indent=1))
    for k, r in rows.items():
        print(f"  {k:<34} {r['equal']:>6}/{r['n']:<6} (NaN as any NaN: {r['equal_nan_any']})", flush=True)
    say("subgroups on nvidia-h200:", sum(r["equal"] for r in rows.values()), "of", sum(r["n"] for r in rows.values()),
        "results;", sum(r["equal"] == r["n"] for r in rows.values()), "of", len(rows), "cases in full")


def atan2_sweep():
    from emu.hw.runner import run_on_adapter
    x = np.arange(0x4C00, 0x6800, dtype=np.uint16).view(np.float16)          # [16, 2048)
    ys = np.concatenate([np.array([1, 3, 17, 100, 513, 1023], np.uint16).view(np.float16),
                         np.float16([1e-4, 2.5e-4, 6.1e-4, 1e-3, 3e-3, 7e-3, 1.2e-2, 2.4e-2, 4.9e-2]),
                         np.float16([0.06, 0.11, 0.2, 0.4, 0.8, 1.5, 3.0, 6.0, 12.0])])[:24]
    ys = np.concatenate([ys, -ys])
    yy, xx = (a.ravel() for a in np.meshgrid(ys, x, indexing="ij"))
    src = "\n".join(["enable f16;", "@group(0) @binding(0) var<storage, read> y: array<f16>;",
                     "@group(0) @binding(1) var<storage, read> x: array<f16>;",
                     "@group(0) @binding(2) var<storage, read_write> o: array<f16>;",
                     "@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {",
                     "  o[g.x] = atan2(y[g.x], x[g.x]);", "}"])
    n = yy.size
    out = run_on_adapter(src, dispatch=(n // 64, 1, 1), backend="dawn",
                         buffers={(0, 0): yy, (0, 1): xx, (0, 2): np.zeros(n, np.float16)})
    np.savez_compressed(OUT / "atan2_f16.npz", y=yy, x=xx, out=np.frombuffer(out[(0, 2)], np.uint16))
    say("atan2 sweep:", n, "results")


def llama():
    folder = os.environ.get("LLAMA_SHADERS", "")
    if not folder or not pathlib.Path(folder).is_dir():
        say("llama kernels: no LLAMA_SHADERS folder; skipped")
        return
    seed = os.environ.get("LLAMA_SEED", "1")
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "llama_webgpu.py"), folder, "--hw", "dawn",
                        "--seed", seed, "--record", str(OUT / f"llama_gpu_s{seed}.npz")],
                       capture_output=True, text=True, timeout=200)
    print(r.stdout[-6000:], r.stderr[-2000:], flush=True)
    say("llama kernels:", r.returncode, r.stdout.count(" dawn  yes"), "ran on dawn")


def heldout():
    from emu.hw.builtins_record import CASES, record_builtins
    s = record_builtins(str(OUT / "heldout"), seed=SEED, scale=SCALE, log=lambda *a: None, max_seconds=150)
    say(f"held-out (seed {SEED}) recorded: {len(s['runs'])} cases in {s['seconds']}s; errors:",
        {k: v["error"][:200] for k, v in s["runs"].items() if "error" in v})
    keys = [c.key for c in CASES]
    rows = {}
    with ProcessPoolExecutor(16) as pool:
        for r in pool.map(_eval, [keys[i::16] for i in range(16)]):
            rows.update(r)
    (OUT / "heldout.json").write_text(json.dumps({"seed": SEED, "rows": rows}, indent=1, default=str))
    bad = {k: r for k, r in rows.items() if r["equal"] != r["n"]}
    say(f"held-out on nvidia-h200: {sum(r['equal'] for r in rows.values())} of {sum(r['n'] for r in rows.values())} "
        f"results equal; {len(rows) - len(bad)} of {len(rows)} cases in full; not:",
        {k: (r["equal"], r["n"]) for k, r in bad.items()})
    for f in (OUT / "heldout").glob("builtins_f32_*.npz"):
        f.unlink()                      # too large to come back; replayed above


if __name__ == "__main__":
    steps = os.environ.get("H200_STEPS", "subgroups,llama,heldout").split(",")
    for step in (globals()[s] for s in steps):
        try:
            step()
        except Exception:           # noqa: BLE001
            import traceback
            say(f"{step.__name__} failed:", traceback.format_exc()[-3000:])
    say("done")
