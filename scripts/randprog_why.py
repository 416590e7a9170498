"""Why a recorded random program (emu.hw.randprog) differs: which fused multiply-adds would give the
GPU's bits.

    python scripts/randprog_why.py tests/data/hw/h200/randprog_fit.npz SEED [SEED...] [--path vulkan]
        [--depth 2] [--ir]

For each differing output it takes the IR as the compiler model leaves it before fma formation,
lists the adds and subtracts in that output's cone that could fuse (each product or negated
product operand, f32 x / y as x * RCP(y)), starts from the model's choices, and tries changing
one site, then two (``--depth``), until the output's 128 invocations all give the recorded bits.
It prints the model's choices and the changes that reproduce the recording, each site as its
source line and the operand fused. Run from the repository root (its emu is the one judged).
"""
from __future__ import annotations

import argparse
import copy
import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path.cwd()))

from emu.hw import randprog  # noqa: E402
from emu.isa import compiler  # noqa: E402
from emu.isa.ir import Builder, Inst  # noqa: E402
from emu.isa.types import scalar_of  # noqa: E402

FUSED = ("fma", "fma-shared", "fma-fewer-users", "fma-division", "fma-constant-factor", "fma-widened")


def run_ir(module, prog, path, profile):
    from emu.api import Device, ShaderModule
    text, file = randprog.source(prog, path)
    dev = Device(profile)
    pipe = dev.create_compute_pipeline(ShaderModule(module, text, file, []))
    out = dev.create_buffer(size=prog.invocations * prog.n_outputs * 4)
    dev.dispatch(pipe, {(0, 0): dev.create_buffer(prog.inputs()), (0, 1): out},
                 (prog.invocations // randprog.WORKGROUP, 1, 1))
    return out.read(np.uint32).reshape(prog.invocations, prog.n_outputs)


def _defs(module):
    return {i.result.id: i for f in module.functions for i in f.walk() if i.result is not None}


def _product(v, defs):
    """(product inst, negated) where v is a product, an f32 division, an f16 product widened to
    f32, or the negation of one."""
    d = defs.get(v.id)
    neg = False
    if d is not None and compiler._widened_product(v, defs, v.type) is not None:
        return d, False
    if d is not None and d.op == "unary" and d.attrs["fn"] == "neg":
        d, neg = defs.get(d.args[0].id), True
    if d is None or d.op != "binary" or d.attrs.get("exact") or d.type != v.type:
        return None
    if d.attrs["fn"] == "mul" or (d.attrs["fn"] == "div" and scalar_of(d.type).name == "f32"):
        return d, neg
    return None


def sites(module, types):
    """{add/sub result id: (inst, [sides with a product operand])}."""
    defs = _defs(module)
    out = {}
    for f in module.functions:
        for i in f.walk():
            if i.op == "binary" and i.attrs["fn"] in ("add", "sub") and not i.attrs.get("exact") \
                    and compiler._fusable_type(i.type, types):
                sides = [s for s in (0, 1) if _product(i.args[s], defs) is not None]
                if sides:
                    out[i.result.id] = (i, sides)
    return out


def cone(module, store_slot_value):
    """Result ids that the value depends on (through pure instructions and loads)."""
    defs = _defs(module)
    seen, todo = set(), [store_slot_value]
    while todo:
        v = todo.pop()
        if v.id in seen:
            continue
        seen.add(v.id)
        d = defs.get(v.id)
        if d is not None:
            todo += d.args
    return seen


def output_values(module):
    """{output slot: stored value} for o[i * K + slot] = v in the entry point's top level."""
    defs = _defs(module)
    out = {}
    for f in module.functions:
        for i in f.walk():
            if i.op != "store":
                continue
            acc = defs.get(i.args[0].id)
            if acc is None or acc.op != "access":
                continue
            root = defs.get(acc.args[0].id)
            if root is None or root.attrs.get("name") != "O":
                continue
            idx = defs.get(acc.args[1].id)           # i * K + slot
            if idx is not None and idx.op == "binary":
                c = defs.get(idx.args[1].id)
                if c is not None and c.op == "const":
                    out[int(c.attrs["value"])] = i.args[1]
    return out


def apply(module, plan, types):
    """A copy of module with each site in plan (id -> side) fused with that operand's product."""
    m = copy.deepcopy(module)
    b = Builder(compiler._next_id(m))
    defs = _defs(m)
    for f in m.functions:
        for blk in compiler._blocks(f.body):
            out = []
            for inst in blk.insts:
                side = plan.get(inst.result.id) if inst.result is not None else None
                if side is None:
                    out.append(inst)
                    continue
                p, negated = _product(inst.args[side], defs)
                pre = []
                c = inst.args[1 - side]
                a, mm = compiler._factors(p, inst.loc, b, pre, defs)
                sub = inst.attrs["fn"] == "sub"

                def neg(v):
                    n = Inst("unary", [v], v.type, {"fn": "neg"}, [], inst.loc, b.value(v.type))
                    pre.append(n)
                    return n.result
                if sub and side == 0:
                    c = neg(c)
                if negated != (sub and side == 1):
                    a = neg(a)
                inst.op, inst.args, inst.attrs = "builtin", [a, mm, c], {"fn": "fma", "contracted": "why"}
                out += pre + [inst]
            blk.insts[:] = out
    compiler._remove_dead(m)
    return m


def model_plan(before, after):
    """The model's choices: {site id: side} read off the fully compiled IR."""
    defs_b, defs_a = _defs(before), _defs(after)
    plan = {}
    for rid, inst in defs_a.items():
        if inst.op == "builtin" and inst.attrs.get("contracted") in FUSED and rid in defs_b:
            orig = defs_b[rid]
            if orig.op != "binary":
                continue
            c = inst.args[2]
            cd = defs_a.get(c.id)
            cid = cd.args[0].id if cd is not None and cd.op == "unary" and cd.attrs["fn"] == "neg" else None
            plan[rid] = 0 if c.id == orig.args[1].id or cid == orig.args[1].id else 1
    return plan


def describe(module, rid, side, src_lines):
    inst = _defs(module)[rid]
    line = src_lines[inst.loc.line - 1].strip() if inst.loc else "?"
    what = "rounded" if side is None else ("left" if side == 0 else "right") + " product fused"
    return f"%{rid} {inst.attrs['fn']} ({what}): {line}"


def why(rec, seed, path, profile, depth, show_ir, exhaustive=256):
    prog = randprog.generate(seed)
    gpu = rec[(path, seed)].reshape(prog.invocations, prog.n_outputs)
    from emu.profiles import load_profile
    types = compiler.stack_for(load_profile(profile), path == "vulkan").types
    before = randprog.compiled(prog, path, profile, fma=False)
    after = randprog.compiled(prog, path, profile)
    got = run_ir(copy.deepcopy(after), prog, path, profile)
    bad = [j for j in range(prog.n_outputs) if not np.array_equal(got[:, j], gpu[:, j])]
    src = randprog.source(prog, path)[0].splitlines()
    print(f"== {path} {seed} ({prog.family}): outputs differing {bad}")
    if show_ir:
        from emu.isa.printer import print_module
        print(print_module(before, locs=False))
    if not bad:
        return
    plan0 = model_plan(before, after)
    outs = output_values(before)
    all_sites = sites(before, types)
    for j in bad:
        n_bad = int((got[:, j] != gpu[:, j]).sum())
        if j not in outs:
            print(f"  o{j}: {n_bad}/128 differ; store not found")
            continue
        c = cone(before, outs[j])
        local = {rid: s for rid, s in all_sites.items() if rid in c}
        print(f"  o{j}: {n_bad}/128 differ; {len(local)} sites; the model:")
        for rid in sorted(local):
            print("     ", describe(before, rid, plan0.get(rid), src))
        options = [(rid, alt) for rid, (_, sides) in sorted(local.items())
                   for alt in [None] + sides if alt != plan0.get(rid)]
        found = []
        combos = []
        if np.prod([len(s) + 1 for _, s in local.values()]) <= exhaustive:
            for choice in itertools.product(*[[(rid, alt) for alt in [None] + s] for rid, (_, s) in sorted(local.items())]):
                combos.append(tuple(c for c in choice if c[1] != plan0.get(c[0])))
            combos.sort(key=len)
        else:
            for k in range(1, depth + 1):
                combos += [c for c in itertools.combinations(options, k) if len({rid for rid, _ in c}) == k]
        for combo in combos:
            if found and len(combo) > len(found[0]):
                break
            if combo:
                plan = dict(plan0)
                for rid, alt in combo:
                    plan[rid] = alt
                plan = {r: s for r, s in plan.items() if s is not None}
                try:
                    out = run_ir(apply(before, plan, types), prog, path, profile)
                except Exception as e:                 # noqa: BLE001 (a plan the executor refuses)
                    print("      (plan failed:", e, ")")
                    continue
                if np.array_equal(out[:, j], gpu[:, j]):
                    found.append(combo)
        if not found:
            print(f"    no fma choice reproduces o{j} (tried {len(combos)})")
        for combo in found[:6]:
            print("    reproduced by:", "; ".join(describe(before, rid, alt, src) for rid, alt in combo))


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("recording")
    ap.add_argument("seeds", nargs="+", type=int)
    ap.add_argument("--path", default="vulkan", choices=randprog.PATHS)
    ap.add_argument("--profile", default="nvidia-h200")
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--ir", action="store_true", help="print the IR before fma formation")
    a = ap.parse_args(argv)
    rec = randprog.load_recording(a.recording)
    for s in a.seeds:
        why(rec, s, a.path, a.profile, a.depth, a.ir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
