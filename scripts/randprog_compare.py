"""emu against recorded random programs (emu.hw.randprog), per path and family.

    python scripts/randprog_compare.py tests/data/hw/h200/randprog_judge.npz [more.npz] \
        [--seeds FIRST:END] [--paths vulkan] [--families f32,func] [--procs 2] [--profile nvidia-h200] [--out result.json]

Prints the table (programs identical bit for bit, outputs identical) and the (path, seed)s that
differ; --out writes both as JSON, with the output slots that differ per (path, seed) ("slots":
{"vulkan/12": [0, 2]}, what scripts/sass_match.py --differ reads). Run from the repository root (its emu is the one judged).
"""
from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))

from emu.hw import randprog  # noqa: E402


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("recordings", nargs="+")
    ap.add_argument("--seeds", default="0:1000000000", help="FIRST:END")
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--profile", default="nvidia-h200")
    ap.add_argument("--paths", default=",".join(randprog.PATHS), help="which paths, e.g. vulkan")
    ap.add_argument("--families", default=",".join(randprog.FAMILIES), help="which families, e.g. f32,func")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    lo, hi = map(int, a.seeds.split(":"))
    rec = {}
    for f in a.recordings:
        rec.update(randprog.load_recording(f))
    paths = a.paths.split(",")
    items = sorted((k, v) for k, v in rec.items() if lo <= k[1] < hi and k[0] in paths
                   and randprog.family_of(k[1]) in a.families.split(","))
    parts = [dict(items[k::a.procs]) for k in range(a.procs)]
    with ProcessPoolExecutor(a.procs) as pool:
        results = list(pool.map(partial(randprog.compare, profile=a.profile), parts))
    table, differ, slots = {}, [], {}
    for r in results:
        slots.update(r["slots"])
        for k, v in r["table"].items():
            row = table.setdefault(k, [0, 0, 0, 0])
            for j in range(4):
                row[j] += v[j]
        differ += r["differ"]
    print(randprog.format_table(table))
    print(f"{len(differ)} programs differ:", sorted(differ)[:40], "..." if len(differ) > 40 else "")
    if a.out:
        Path(a.out).write_text(json.dumps({"table": {f"{p}/{f}": v for (p, f), v in table.items()},
                                           "differ": sorted(differ),
                                           "slots": {f"{p}/{s}": v for (p, s), v in sorted(slots.items())}}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
