#!/usr/bin/env python3
"""The second H200 session of issue 11: the special function unit's whole tables (sqrt over [1, 4),
lg2 over six binades, sin/cos at every reachable 2^-25 revolution cell), through CUDA, and a fresh
held-out recording of every builtin case (seed 2, full size) through Dawn.
Usage (via scripts/h200_session.sh, H200_SCRIPT=scripts/h200_tables.py): h200_tables.py OUTDIR"""
import json
import os
import pathlib
import sys
import time
import zlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("EMU_DAWN_TOGGLES", "vulkan_enable_f16_on_nvidia")
import numpy as np  # noqa: E402

OUT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "h200-out")
OUT.mkdir(parents=True, exist_ok=True)
T0 = time.time()


def say(*a):
    print(f"[{time.time() - T0:7.1f}s]", *a, flush=True)


from emu.hw.sfu_record import record_tables  # noqa: E402
from emu.hw.builtins_record import record_builtins  # noqa: E402

try:
    saved, summary = record_tables(log=say)
    parts, part, size = [], {}, 0
    for k in list(saved) + [None]:
        if k is not None:
            part[k] = saved[k]
            size += len(zlib.compress(np.ascontiguousarray(saved[k]).tobytes(), 1))
        if part and (k is None or size > (14 << 20)):
            name = f"tables_{len(parts)}.npz"
            np.savez_compressed(OUT / name, **part)
            parts.append(name)
            part, size = {}, 0
    summary["files"] = parts
    (OUT / "tables.json").write_text(json.dumps(summary, indent=1))
except Exception as e:
    import traceback
    say("tables failed:", traceback.format_exc())
s = record_builtins(str(OUT), seed=2, scale=1.0, log=lambda *a: None, max_seconds=300, part_bytes=14 << 20)
say(f"held-out: {len(s['runs'])} cases in {s['seconds']}s; errors:",
    {k: v["error"][:200] for k, v in s["runs"].items() if "error" in v}, s["files"])
say("done")
