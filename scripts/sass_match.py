"""The driver's SASS of a random program (emu.hw.randprog) against emu's compiled IR, term by term:
for each output, where the two first part and what differs there (emu/hw/sass.py).

    python scripts/sass_match.py SEED [SEED...] [--path vulkan|dawn] [--all]
    python scripts/sass_match.py --differ RESULT.json [--families f32,func,loop] [--paths vulkan,dawn]
        [--json OUT.json]
    python scripts/sass_match.py --range 0:1200 ...     # every program's terms, not only differing ones

SEED's SASS is DIR/SEED.sass in the first of the path's folders that holds it: --sass DIR (repeatable)
first, then the recordings' folders under /work/main/.hwtmp (SASS_DIRS: fit, fit2 and fit3, glslang's
modules for Vulkan and Tint's for Dawn). One seed prints each output that differs as "driver: ... ; emu: ...";
--all prints the agreeing ones too. --differ reads the (path, seed)s that scripts/randprog_compare.py
--out found differing and prints the table of mechanisms (one row per output that differs in the
recording, at its first difference) with their counts and example seeds; seeds it cannot read are
counted with the reason. Run from the repository root (its emu is the one judged).
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))

from emu.hw import randprog, sass  # noqa: E402

HWTMP = Path("/work/main/.hwtmp")
SASS_DIRS = {"vulkan": [HWTMP / d / "sass" for d in ("sass", "sass_fit2", "sass_fit3")],
             "dawn": [HWTMP / d / "sass" for d in ("sass_tint", "sass_tint_f2", "sass_tint_f3")]}


def sass_dir(seed: int, dirs) -> Path:
    """The first of DIRS holding SEED.sass (the first of them where none does, for the message)."""
    return next((Path(d) for d in dirs if (Path(d) / f"{seed}.sass").exists()), Path(dirs[0]))


def match(seed: int, path: str, folder, profile: str = "nvidia-h200"):
    """(terms, {slot: (emu term, driver term, difference or None)}); raises sass.Unreadable."""
    f = Path(folder) / f"{seed}.sass"
    if not f.exists():
        raise sass.Unreadable(f"no SASS at {f}")
    terms = sass.Terms()
    drv = sass.sass_outputs(f.read_text(), terms, randprog.WORKGROUP)
    emu = sass.ir_outputs(randprog.compiled(randprog.generate(seed), path, profile), terms)
    out = {}
    for slot in sorted(set(drv) | set(emu)):
        if slot not in drv or slot not in emu:
            raise sass.Unreadable(f"output {slot} stored by only one side")
        out[slot] = (emu[slot], drv[slot], sass.first_difference(terms, emu[slot], drv[slot]))
    return terms, out


def show(seed, path, folder, every: bool, depth: int) -> None:
    try:
        terms, outs = match(seed, path, folder)
    except sass.Unreadable as e:
        print(f"== {path} {seed}: cannot read: {e}")
        return
    print(f"== {path} {seed} ({randprog.family_of(seed)})")
    for slot, (e, d, diff) in outs.items():
        if diff is None:
            if every:
                print(f"  o{slot}: same: {terms.show(e, depth)}")
            continue
        where, de, dd = diff
        print(f"  o{slot}: {sass.mechanism(terms, de, dd)}")
        print(f"      driver: {terms.show(dd, depth)}")
        print(f"      emu:    {terms.show(de, depth)}")


def cluster(result: str | None, paths, families, out_json: str | None, depth: int, seeds=None,
            dirs=SASS_DIRS) -> None:
    if result:
        data = json.loads(Path(result).read_text())
        differ, bad_slots = data["differ"], data.get("slots", {})
    else:                                              # every program of the range, every output
        differ, bad_slots = [(p, s) for p in paths for s in range(*seeds)
                             if (sass_dir(s, dirs[p]) / f"{s}.sass").exists()], {}
    table = collections.Counter()
    programs = collections.defaultdict(set)
    examples = collections.defaultdict(list)
    unreadable = collections.Counter()
    unread_seeds = collections.defaultdict(list)
    rows = []
    for path, seed in sorted(map(tuple, differ)):
        if path not in paths or randprog.family_of(seed) not in families:
            continue
        try:
            terms, outs = match(seed, path, sass_dir(seed, dirs[path]))
        except sass.Unreadable as e:
            reason = str(e).split(" at ")[0] if "backward" in str(e) or "no SASS" in str(e) else str(e)[:60]
            unreadable[reason] += 1
            unread_seeds[reason].append(seed)
            continue
        except Exception as e:                          # noqa: BLE001 (a program emu refuses)
            unreadable[f"{type(e).__name__}"] += 1
            unread_seeds[type(e).__name__].append(seed)
            continue
        found = False
        wrong = bad_slots.get(f"{path}/{seed}")
        for slot, (e, d, diff) in outs.items():
            if diff is None or (wrong is not None and slot not in wrong):
                continue
            found = True
            mech = sass.mechanism(terms, diff[1], diff[2])
            key = (randprog.family_of(seed), path, mech)
            table[key] += 1
            programs[key].add(seed)
            if len(examples[key]) < 6 and seed not in [s for s, _ in examples[key]]:
                examples[key].append((seed, slot))
            rows.append({"path": path, "seed": seed, "slot": slot, "mechanism": mech,
                         "driver": terms.show(diff[2], depth), "emu": terms.show(diff[1], depth)})
        if not found:
            key = (randprog.family_of(seed), path, "terms agree (a builtin's numerics, or the matcher's blind spot)")
            table[key] += 1
            programs[key].add(seed)
            if len(examples[key]) < 6:
                examples[key].append((seed, None))
    print(f"{'family':6} {'path':6} {'outputs':>7} {'progs':>5}  mechanism  (examples seed/output)")
    for key, n in sorted(table.items(), key=lambda kv: (-kv[1], kv[0])):
        ex = " ".join(f"{s}/{o}" for s, o in examples[key])
        print(f"{key[0]:6} {key[1]:6} {n:7d} {len(programs[key]):5d}  {key[2]}  ({ex})")
    for reason, n in unreadable.most_common():
        print(f"unreadable: {n:4d}  {reason}  (seeds {unread_seeds[reason][:8]})")
    if out_json:
        Path(out_json).write_text(json.dumps({"rows": rows, "unreadable": {k: v for k, v in unread_seeds.items()}},
                                             indent=1))


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("seeds", nargs="*", type=int)
    ap.add_argument("--path", default="vulkan", choices=randprog.PATHS)
    ap.add_argument("--sass", action="append", default=[],
                    help="a folder of SEED.sass, searched before the path's own (repeatable)")
    ap.add_argument("--all", action="store_true", help="print the outputs that agree too")
    ap.add_argument("--depth", type=int, default=5, help="how deep to print terms")
    ap.add_argument("--differ", help="randprog_compare.py --out JSON: cluster its differing programs")
    ap.add_argument("--paths", default=",".join(randprog.PATHS))
    ap.add_argument("--families", default="f32,func,loop")
    ap.add_argument("--range", help="FIRST:END: cluster every program of these seeds (their SASS "
                    "against emu, whatever the recording says)")
    ap.add_argument("--json", help="with --differ or --range: write each difference here")
    a = ap.parse_args(argv)
    dirs = {p: a.sass + d for p, d in SASS_DIRS.items()}
    if a.differ or a.range:
        cluster(a.differ, a.paths.split(","), a.families.split(","), a.json, a.depth,
                tuple(map(int, a.range.split(":"))) if a.range else None, dirs)
        return 0
    for s in a.seeds:
        show(s, a.path, sass_dir(s, dirs[a.path]), a.all, a.depth)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
