#!/usr/bin/env python3
"""The H200 session of issue 11's second half: the vectors the replay and the kernel measurement
need, recorded through Dawn. Usage (via scripts/h200_session.sh, H200_SCRIPT=scripts/h200_numerics.py):

    h200_numerics.py OUTDIR          (LLAMA_SHADERS: the folder scripts/fetch_llama_wgsl.sh prints, if carried)

1. llama.cpp's WebGPU kernels as scripts/llama_webgpu.py instantiates them, run on the GPU (--hw dawn):
   OUTDIR/llama_gpu.npz (inputs and outputs; replay with llama_webgpu.py --against);
2. a held-out recording of every builtin case (seed H200_SEED, default 5; never fitted):
   OUTDIR/heldout/ (emu.hw.builtins_record's format; H200_NO_HELDOUT=1 skips it);
3. the pack/unpack builtins over 2^21 inputs each (the held-out recording has 2^16-2^18),
   replayed there on nvidia-h200 (their outputs are too large to bring back): OUTDIR/pack.json.
"""
import contextlib
import dataclasses
import io
import json
import os
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("EMU_DAWN_TOGGLES", "vulkan_enable_f16_on_nvidia")

OUT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "h200-out")
OUT.mkdir(parents=True, exist_ok=True)
SEED = int(os.environ.get("H200_SEED", "5"))
SCALE = float(os.environ.get("H200_SCALE", "1.0"))            # a dry run may shrink both
PACK_N = int(os.environ.get("H200_PACK_N", str(1 << 21)))
T0 = time.time()


def say(*a):
    print(f"[{time.time() - T0:7.1f}s]", *a, flush=True)


from emu.hw import builtins_record as br  # noqa: E402
from emu.hw import runner  # noqa: E402

# 1. kernels
llama = os.environ.get("LLAMA_SHADERS", "")
if llama and pathlib.Path(llama).is_dir():
    sys.path.insert(0, str(ROOT / "scripts"))
    import llama_webgpu  # noqa: E402
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            rc = llama_webgpu.main([llama, "--hw", "dawn", "--record", str(OUT / "llama_gpu.npz")])
    except Exception as e:          # noqa: BLE001
        rc = f"{type(e).__name__}: {e}"
    (OUT / "llama_gpu.txt").write_text(buf.getvalue())
    say(f"llama kernels: {rc}")
    print(buf.getvalue()[-6000:], flush=True)
else:
    say("llama kernels: no LLAMA_SHADERS folder; skipped")

# 2. held-out recording
if not os.environ.get("H200_NO_HELDOUT"):
    s = br.record_builtins(str(OUT / "heldout"), seed=SEED, scale=SCALE, log=lambda *a: None, max_seconds=120)
    say(f"held-out (seed {SEED}): {len(s['runs'])} cases in {s['seconds']}s; errors:",
        {k: v["error"][:200] for k, v in s["runs"].items() if "error" in v})

# 2b. expressions around tanh as flash attention's logit softcap writes them (H200_EXTRA=1)
EXTRA = [br.Case("f32", f"softcap_{k}", ("f", "f"), body, ("f32",), "hyp", ref)
         for k, body, ref in (("tanh", "o0[i] = tanh(a);", lambda a, b: np.tanh(a)),
                              ("uniform", "o0[i] = b * tanh(a);", lambda a, b: b * np.tanh(a)),
                              ("const", "o0[i] = 20.0 * tanh(a);", lambda a, b: 20 * np.tanh(a)),
                              ("scaled", "o0[i] = b * tanh(a * 0.125);", lambda a, b: b * np.tanh(a / 8)))]
if os.environ.get("H200_EXTRA"):
    import numpy as np  # noqa: E402
    extra, runs = {}, {}
    for case in EXTRA:
        try:
            n, arrays, res = br.run_case(case, SEED, 1.0, runner.run_on_adapter)
            enc = br.encode(res[0], br.reference(case, arrays, 0), True)
            extra.update({f"{case.key}/0/{k}": v for k, v in enc.items()})
            runs[case.key] = {"n": n}
        except Exception as e:      # noqa: BLE001
            runs[case.key] = {"error": f"{type(e).__name__}: {e}"[:300]}
    (OUT / "extra").mkdir(exist_ok=True)
    files = br.save_parts(extra, str(OUT / "extra"), "builtins_f32")
    (OUT / "extra" / "builtins.json").write_text(json.dumps({"seed": SEED, "scale": 1.0, "files": {"f32": files},
                                                             "runs": runs}))
    say("extra:", runs)

# 3. pack/unpack over 2^21 inputs, compared on this machine
from emu.hw.builtins_eval import compare  # noqa: E402
rows = {}
for case in br.CASES:
    if "pack" not in case.name or os.environ.get("H200_NO_PACK"):
        continue
    big = dataclasses.replace(case, n=PACK_N)
    try:
        n, arrays, res = br.run_case(big, SEED, 1.0, runner.run_on_adapter)
        br.BY_KEY[case.key] = big           # compare() finds the case's shader by key
        rows[case.key] = compare({case.key: (arrays, res, None)}, "nvidia-h200", limit=None)[case.key]
    except Exception as e:          # noqa: BLE001
        rows[case.key] = {"error": f"{type(e).__name__}: {e}"[:500]}
    finally:
        br.BY_KEY[case.key] = case
(OUT / "pack.json").write_text(json.dumps({"seed": SEED, "n": PACK_N, "rows": rows}, indent=1))
say("pack/unpack on nvidia-h200:", {k: (r.get("equal"), r.get("n"), r.get("error")) for k, r in rows.items()})
say("done")
