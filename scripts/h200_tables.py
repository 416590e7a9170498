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

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("EMU_DAWN_TOGGLES", "vulkan_enable_f16_on_nvidia")

OUT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "h200-out")
OUT.mkdir(parents=True, exist_ok=True)
T0 = time.time()


def say(*a):
    print(f"[{time.time() - T0:7.1f}s]", *a, flush=True)


from emu.hw.sfu_record import record_tables  # noqa: E402
from emu.hw.builtins_record import record_builtins, save_parts  # noqa: E402

try:
    saved, summary = record_tables(log=say)
    parts = save_parts(saved, str(OUT), "tables")
    summary["files"] = parts
    (OUT / "tables.json").write_text(json.dumps(summary, indent=1))
except Exception:
    import traceback
    say("tables failed:", traceback.format_exc())
s = record_builtins(str(OUT), seed=2, scale=1.0, log=lambda *a: None, max_seconds=300, part_bytes=14 << 20)
say(f"held-out: {len(s['runs'])} cases in {s['seconds']}s; errors:",
    {k: v["error"][:200] for k, v in s["runs"].items() if "error" in v}, s["files"])
say("done")
