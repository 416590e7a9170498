#!/usr/bin/env python3
"""The closing H200 session of issue 11: (1) `emu diff` of our llama.cpp-style kernels
(traces/hw/kernels/llama_*.wgsl) through Dawn against nvidia-h200; (2) a fresh held-out recording
of every builtin case (seed 3, never fitted), replayed on nvidia-h200 in parallel on the machine.
Usage (via scripts/h200_session.sh, H200_SCRIPT=scripts/h200_verify.py): h200_verify.py OUTDIR"""
import json
import os
import pathlib
import sys
import time
from concurrent.futures import ProcessPoolExecutor

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("EMU_DAWN_TOGGLES", "vulkan_enable_f16_on_nvidia")
import numpy as np  # noqa: E402

OUT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "h200-out")
OUT.mkdir(parents=True, exist_ok=True)
SEED, SCALE = int(os.environ.get("H200_SEED", "3")), float(os.environ.get("H200_SCALE", "1.0"))
T0 = time.time()


def say(*a):
    print(f"[{time.time() - T0:7.1f}s]", *a, flush=True)


def kernels():
    rng = np.random.default_rng(11)
    f32 = lambda *s, k=1.0: (rng.standard_normal(s) * k).astype(np.float32)  # noqa: E731
    f16 = lambda *s, k=1.0: (rng.standard_normal(s) * k).astype(np.float16)  # noqa: E731
    d = 128
    freq = (10000.0 ** (-np.arange(0, d, 2) / d)).astype(np.float32)
    return [
        ("llama_rms_norm.wgsl", (64, 1, 1), {(0, 0): f32(64 * 1024), (0, 1): f32(1024), (0, 2): np.zeros(64 * 1024, np.float32)}),
        ("llama_softmax.wgsl", (64, 1, 1), {(0, 0): f32(64 * 1024, k=4.0), (0, 1): np.zeros(64 * 1024, np.float32)}),
        ("llama_gelu_silu.wgsl", (256, 1, 1), {(0, 0): f32(65536, k=3.0), (0, 1): np.zeros(65536, np.float32),
                                               (0, 2): np.zeros(65536, np.float32), (0, 3): np.zeros(65536, np.float16),
                                               (0, 4): np.zeros(65536, np.float16)}),
        ("llama_rope.wgsl", (256, 1, 1), {(0, 0): f32(256 * d), (0, 1): rng.integers(0, 4096, 256).astype(np.int32),
                                          (0, 2): freq, (0, 3): np.zeros(256 * d, np.float32)}),
        ("llama_matmul_f16.wgsl", (2, 2, 1), {(0, 0): f16(64 * 256, k=0.5), (0, 1): f16(256 * 64, k=0.5),
                                              (0, 2): np.zeros(64 * 64, np.float16)}),
    ]


def run_kernels():
    from emu.hw.diff import diff_shader
    reports = []
    for name, grid, bufs in kernels():
        path = ROOT / "traces" / "hw" / "kernels" / name
        try:
            rep = diff_shader(path.read_text(), str(path.relative_to(ROOT)), dispatch=grid, buffers=bufs,
                              backend="dawn", profile="nvidia-h200", first=8)
            js = rep.to_json()
            reports.append(js)
            t = js["totals"]
            say(f"diff {name}: {rep.result.upper()} ({t['equal']} equal, {t['different']} different of {t['elements']})")
            if rep.result != "identical":
                print(rep.text()[:3000], flush=True)
        except Exception as e:
            import traceback
            reports.append({"shader": name, "error": traceback.format_exc()[-2000:]})
            say(f"diff {name}: CRASH {e}")
    return reports


def _eval(keys):
    from emu.hw.builtins_eval import compare
    from emu.hw.builtins_record import load_recording
    _, rec = load_recording(str(OUT / "heldout"), keys=keys)
    return compare(rec, "nvidia-h200", limit=None)


if __name__ == "__main__":
    summary = {"kernels": run_kernels()}
    (OUT / "verify.json").write_text(json.dumps(summary, indent=1, default=str))
    if os.environ.get("H200_KERNELS_ONLY"):
        sys.exit(0)
    from emu.hw.builtins_record import CASES, record_builtins
    s = record_builtins(str(OUT / "heldout"), seed=SEED, scale=SCALE, log=lambda *a: None, max_seconds=240)
    say(f"held-out recorded: {len(s['runs'])} cases in {s['seconds']}s")
    keys = [c.key for c in CASES]
    chunks = [keys[i::16] for i in range(16)]
    rows = {}
    with ProcessPoolExecutor(16) as pool:
        for r in pool.map(_eval, chunks):
            rows.update(r)
    summary["heldout"] = {"seed": SEED, "scale": SCALE, "rows": rows}
    (OUT / "verify.json").write_text(json.dumps(summary, indent=1, default=str))
    bad = {k: r for k, r in rows.items() if r["equal"] != r["n"]}
    say(f"held-out on nvidia-h200: {sum(r['equal'] for r in rows.values())} of {sum(r['n'] for r in rows.values())} "
        f"results equal; {len(rows) - len(bad)} of {len(rows)} cases in full")
    for k, r in rows.items():
        print(f"  {k:<24} {r['equal']:>9}/{r['n']:<9}" + ("" if r["equal"] == r["n"] else "  DIFFERENT"), flush=True)
    say("done")
