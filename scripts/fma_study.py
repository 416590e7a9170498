"""Which product the driver fused into each add, read from its SASS, beside emu's fma formation.

    python scripts/fma_study.py --range 0:1200 [--path vulkan] [--sass DIR ...] [--families f32,func,loop]
        [--f16] [--show] [--json OUT.json]

For every random program (emu.hw.randprog) whose SASS is in one of the --sass folders (SEED.sass;
default: the path's folders), emu's IR as fma formation sees it (randprog.compiled(fma=False)) is
evaluated in emu.hw.sass's terms, guided by the driver: at each add or subtract with a product
operand the three ways to compute it (the product rounded, the left or the right product fused)
are built, and the one the driver's terms hold is the driver's decision (the evaluation goes on
with it, so later adds are judged on the driver's values). Adds where none or several are found
(another mechanism differs there) are left out. Then emu's own fma formation runs on the same IR
and its decision per add is tabulated against the driver's: "driver -> emu: count (seed:add ...)".
--show prints each disagreeing add with its operands' definitions and users. Run from the
repository root (its emu is the one judged); --f16 judges the f16 adds instead of the f32 ones.
"""
from __future__ import annotations

import argparse
import collections
import copy
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))

from emu.hw import randprog, sass  # noqa: E402
from emu.isa import compiler  # noqa: E402
from emu.profiles import load_profile  # noqa: E402

SASS_DIRS = {"vulkan": ["/work/main/.hwtmp/sass/sass", "/work/main/.hwtmp/sass_fit2/sass"],
             "dawn": ["/work/main/.hwtmp/sass_tint/sass"]}


class _Guided(sass._Ir):
    """emu's IR evaluated in terms, each add with a product operand computed as the driver did."""

    def __init__(self, module, terms, driver: set):
        super().__init__(module, terms, True)
        self.driver, self.decided = driver, {}

    def _held(self, v) -> bool:
        t = self.t
        for x in (v, t.mk("neg", v)):
            if x in self.driver or any(t.op(d) == t.op(x) and sass._same(t, x, d) for d in self.driver):
                return True
        return False

    def _binary(self, fn, args, i):
        res = super()._binary(fn, args, i)
        if fn not in ("add", "sub") or self._kind(i.args[0].type) != "float" or isinstance(res, list):
            return res
        t, h = self.t, self._f16(i.args[0].type)
        mul, fma = ("hmul", "hfma") if h else ("mul", "fma")
        ways = {"round": res}
        for side, (p, c) in enumerate(((args[0], args[1]), (args[1], args[0]))):
            neg = p if t.op(p) != "neg" else t.args(p)[0]
            if t.op(neg) not in (mul, "scale") or (h and t.op(neg) == "scale"):
                continue
            a, b = t.args(neg)
            if (t.op(p) == "neg") != (fn == "sub" and side == 1):
                a = t.mk("neg", a)
            ways[f"fuse{side}"] = t.mk(fma, a, b, t.mk("neg", c) if fn == "sub" and side == 0 else c)
        if len(ways) == 1:
            return res
        held = [k for k, v in ways.items() if self._held(v)]
        if len({ways[k] for k in held}) == 1:
            self.decided.setdefault(i.result.id, set()).add(held[0])
        return ways[held[0]] if held else res


def driver_decisions(seed: int, path: str, dirs) -> dict | None:
    """{add id: 'round' | 'fuse0' | 'fuse1'} the driver's SASS shows (None: no readable SASS)."""
    f = next((Path(d) / f"{seed}.sass" for d in dirs if (Path(d) / f"{seed}.sass").exists()), None)
    if f is None:
        return None
    terms = sass.Terms()
    try:
        drv = sass.sass_outputs(f.read_text(), terms, randprog.WORKGROUP)
        m = randprog.compiled(randprog.generate(seed), path, fma=False)
        held = set()
        for v in drv.values():
            held |= terms.below(v)
        entry = next(fn for fn in m.functions if fn.stage is not None)
        ir = _Guided(m, terms, held)
        for p in entry.params:
            ir.env[p.id] = [sass.Aff(tid=1), sass.Aff(), sass.Aff()]
        ir.run(entry)
    except sass.Unreadable:
        return None
    # an add in an unrolled loop decided two ways is left out
    return {k: next(iter(v)) for k, v in ir.decided.items() if len(v) == 1}, m


def emu_decisions(module, path: str) -> dict:
    """{add id: 'fuse0' | 'fuse1'} of emu's fma formation over ``module`` (the pre-fma IR)."""
    defs = {i.result.id: i for f in module.functions for i in f.walk() if i.result is not None}
    before = {k: list(i.args) for k, i in defs.items() if i.op == "binary" and i.attrs.get("fn") in ("add", "sub")}
    st = compiler.stack_for(load_profile("nvidia-h200"), path == "vulkan")
    compiler.form_fma(module, st.types, st.divide, after_division=st.nvidia)
    out = {}
    for f in module.functions:
        now = {i.result.id: i for i in f.walk() if i.result is not None}
        for k, args in before.items():
            i = now.get(k)
            if i is None or i.op != "builtin" or i.attrs.get("fn") != "fma":
                continue
            widened = i.attrs.get("contracted") == "fma-widened"
            fused = sorted(map(repr, (_factor(x, now) for x in i.args[:2])))
            for side, v in enumerate(args):
                d = defs.get(v.id)
                if d is not None and d.op == "unary" and d.attrs.get("fn") == "neg":
                    d = defs.get(d.args[0].id)
                if d is None or (d.op == "convert") != widened:
                    continue
                if widened or (d.op == "binary" and d.attrs["fn"] in ("mul", "div") and fused == sorted(map(repr, [
                        _factor(d.args[0], defs),
                        _factor(d.args[1], defs) if d.attrs["fn"] == "mul" else ("rcp", d.args[1].id)]))):
                    out[k] = f"fuse{side}"
    return out


def _factor(v, defs):
    """A fused multiply-add's factor as the product's operand it stands for: a negation's operand,
    ('rcp', y) for RCP(y)."""
    d = defs.get(v.id)
    if d is not None and d.op == "unary" and d.attrs.get("fn") == "neg":
        v, d = d.args[0], defs.get(d.args[0].id)
    if d is not None and d.op == "binary" and d.attrs.get("fn") == "div" and defs.get(d.args[0].id) is not None \
            and defs[d.args[0].id].op == "const" and defs[d.args[0].id].attrs.get("value") == 1.0:
        return ("rcp", d.args[1].id)
    return v.id


def _show(module, add_id) -> str:
    insts = [i for f in module.functions for i in f.walk()]
    defs = {i.result.id: i for i in insts if i.result is not None}
    users = collections.defaultdict(list)
    for i in insts:
        for a in i.args:
            users[a.id].append(i)
    name = lambda i: i.attrs.get("fn") or i.op
    i = defs[add_id]
    lines = [f"    %{add_id} = {name(i)}(" + ", ".join(f"%{a.id}" for a in i.args) + ")"]
    for a in i.args:
        d = defs.get(a.id)
        if d is not None:
            lines.append(f"      %{a.id} = {name(d)}(" + ", ".join(f"%{x.id}" for x in d.args) + "), used by "
                         + ", ".join(name(u) + (f" %{u.result.id}" if u.result else "") for u in users[a.id]))
    return "\n".join(lines)


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--range", required=True, help="FIRST:END seeds")
    ap.add_argument("--path", default="vulkan", choices=randprog.PATHS)
    ap.add_argument("--sass", nargs="*", help="folders of SEED.sass (default: the path's)")
    ap.add_argument("--families", default="f32,func,loop")
    ap.add_argument("--f16", action="store_true", help="judge the f16 adds (default: f32)")
    ap.add_argument("--show", action="store_true", help="print each disagreeing add")
    ap.add_argument("--json", help="write {seed: {add: [driver, emu]}} here")
    a = ap.parse_args(argv)
    lo, hi = map(int, a.range.split(":"))
    table, where, record = collections.Counter(), collections.defaultdict(list), {}
    for seed in range(lo, hi):
        if randprog.family_of(seed) not in a.families.split(","):
            continue
        got = driver_decisions(seed, a.path, a.sass or SASS_DIRS[a.path])
        if got is None:
            continue
        drv, module = got
        f16 = {i.result.id for f in module.functions for i in f.walk() if i.result is not None and "16" in str(i.type)}
        emu = emu_decisions(copy.deepcopy(module), a.path)
        for k, d in drv.items():
            if (k in f16) != a.f16:
                continue
            e = emu.get(k, "round")
            table[(d, e)] += 1
            record.setdefault(seed, {})[k] = [d, e]
            if d != e:
                where[(d, e)].append((seed, k))
                if a.show:
                    print(f"{seed}:{k} driver {d}, emu {e}\n{_show(module, k)}")
    agree = sum(n for (d, e), n in table.items() if d == e)
    print(f"{agree} of {sum(table.values())} adds decided as the driver")
    for (d, e), n in sorted(table.items()):
        ex = " ".join(f"{s}:{k}" for s, k in where[(d, e)][:12])
        print(f"  driver {d:5} emu {e:5} {n:6d}  {ex}")
    if a.json:
        Path(a.json).write_text(json.dumps(record))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
