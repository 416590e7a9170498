#!/usr/bin/env python3
"""The H200 session for scalar arithmetic and builtins (issue 11). Usage:
    python3 scripts/h200_builtins.py OUTDIR [--seed S] [--scale X]
Run by scripts/h200_session.sh with H200_SCRIPT=scripts/h200_builtins.py (it finds the Vulkan ICD).

1. `emu record --builtins`: every WGSL builtin/operator case of emu/hw/builtins_record.py through
   Dawn (f16 unary: all 65,536 inputs; f32: random bits, domain values, specials);
2. the special function unit through CUDA (emu/hw/sfu_record.py): PTX approximations over dense
   bands, and candidate instruction sequences compared with Dawn's results for the same inputs;
3. the SASS of the CUDA kernel (nvcc + cuobjdump), to see what each PTX approximation becomes.
OUTDIR gets builtins.json, builtins_*.npz, sfu_*.npz, sfu.json, sass.txt.
"""
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("EMU_DAWN_TOGGLES", "vulkan_enable_f16_on_nvidia")
import numpy as np  # noqa: E402

args = sys.argv[1:]
OUT = pathlib.Path(args[0] if args else os.environ.get("OUT", "h200-out"))
seed = int(args[args.index("--seed") + 1]) if "--seed" in args else 1
scale = float(args[args.index("--scale") + 1]) if "--scale" in args else 0.5
OUT.mkdir(parents=True, exist_ok=True)
T0 = time.time()


def say(*a):
    print(f"[{time.time() - T0:7.1f}s]", *a, flush=True)


from emu.hw import adapters  # noqa: E402
from emu.hw.builtins_record import load_recording, record_builtins, save_parts  # noqa: E402
from emu.hw.sfu_record import _f16_src, _kernel_src, PRIMS, record_sfu  # noqa: E402

info, why = adapters.available("dawn")
say("adapter:", why)
s = record_builtins(str(OUT), seed=seed, scale=scale, log=say, max_seconds=300, part_bytes=14 << 20)
say(f"recorded {len(s['runs'])} cases in {s['seconds']}s; errors:",
    {k: v["error"][:200] for k, v in s["runs"].items() if "error" in v})
_, rec = load_recording(str(OUT))
dawn = {k: (v[0], v[1]) for k, v in rec.items() if v[0] is not None}
saved, summary, raw = record_sfu(seed, dawn, log=say)
# the WGSL builtin over the same dense bands as the PTX approximation: where do they differ?
from emu.hw.builtins_record import Case  # noqa: E402
bands = {}
for fn, prim in (("exp2(a)", "ex2"), ("log2(a)", "lg2"), ("inverseSqrt(a)", "rsq"), ("1.0 / a", "rcp"),
                 ("sin(a)", "sin"), ("cos(a)", "cos"), ("sqrt(a)", "sqrt"), ("tanh(a)", "tanh")):
    if prim not in raw:
        continue
    x, bits = raw[prim]
    try:
        c = Case("f32", "band_" + prim, ("f",), f"o0[i] = {fn};", ("f32",))
        from emu.hw import builtins_record as br
        from emu.hw.runner import run_on_adapter
        outs = run_on_adapter(br.shader(c), dispatch=br._dispatch(x.size), backend="dawn",
                              buffers={(0, 0): x, (0, 1): np.zeros_like(x)}, outputs=[(0, 1)])
        got = np.frombuffer(outs[(0, 1)], np.uint32).copy()
        diff = np.flatnonzero(got != bits)
        summary.setdefault("bands", {})[prim] = {"wgsl": fn, "n": int(x.size), "different": int(diff.size)}
        bands[f"{prim}/i"] = diff[: 1 << 20].astype(np.uint32)
        bands[f"{prim}/v"] = got[diff[: 1 << 20]]
        say(f"band {fn} vs {prim}: {diff.size} of {x.size} differ")
    except Exception as e:
        summary.setdefault("bands", {})[prim] = {"error": str(e)[:1000]}
        say(f"band {fn}: {e}")
if bands:
    np.savez_compressed(OUT / "bands.npz", **bands)
summary["seed"] = seed
parts = save_parts(saved, str(OUT), "sfu")
summary["files"] = parts
with open(OUT / "sfu.json", "w") as f:
    json.dump(summary, f, indent=1)
say("sfu:", summary.get("error") or f"{len(summary['prims'])} primitives, files {parts}")
try:   # what the PTX approximations compile to
    src = pathlib.Path("/tmp/sfu_k.cu")
    src.write_text(_kernel_src([f"p_{k}(a)" for k in PRIMS]) + _f16_src())
    subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "-o", "/tmp/sfu_k.cubin", str(src)], check=True, timeout=120,
                   capture_output=True)
    sass = subprocess.run(["cuobjdump", "-sass", "/tmp/sfu_k.cubin"], capture_output=True, text=True, timeout=60).stdout
    (OUT / "sass.txt").write_text(sass[:2_000_000])
    say("sass:", len(sass), "chars")
except Exception as e:
    say("no SASS:", e)
say("done")
