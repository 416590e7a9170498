"""The driver's unrolling of loops over a cooperative matrix's elements (the compiler model's
`unroll` pass, emu/isa/compiler.py): `v = x / y; for (i < v.length()) v[i] = v[i] + c;` runs as
one fused multiply-add per element, since the unrolled, register-held fragment gives each
element's product the add as its only user."""
from __future__ import annotations

from collections import Counter

from .ir import Block, Builder, Inst, Module
from .types import CoopMatrixType, scalar_of


def contract_element_loops(module: Module, types, divide: bool) -> int:
    """`v = x / y; for (i = ...; ...; ++i) v[i] = v[i] + c;` on a cooperative matrix -> each add is
    fma(x[i], 1 / y[i], c) (and x * y or x * k likewise): the driver unrolls the loop over the
    fragment and keeps it in registers, so each element's product has the add as its only user
    (measured: coop_ops.comp's 256 f32 results on the H200, tests/profiles/test_h200_coop_element_fma.py;
    emu before: 29 differed). Only where each element is updated at most once after the product:
    the loop's counter goes up by 1 in its continuing block and nothing else writes it, and the
    loop touches v only in that one update; nothing touches v between the product and the loop.
    Measured on the H200 (tests/profiles/test_h200_coop_element_fma.py, coop_elem_probe*.comp,
    4 runs of 256 each): v[i] + c fuses after x / y, x * y and x * 0.3; c + v[i] and v[i] - c after
    x / y; c - v[i] after x * 0.3, not after x / y; straight-line updates (d[0] += 1, no loop) and a
    product also stored before the loop are rounded first."""
    uses = Counter(a.id for f in module.functions for i in f.walk() for a in i.args)
    defs = {i.result.id: i for f in module.functions for i in f.walk() if i.result is not None}
    b = Builder(max(defs, default=-1) + 1)
    count = 0
    for f in module.functions:
        var_ids = {i.result.id for i in f.walk() if i.op == "var"}
        for blk in _blocks(f.body):
            k = 0
            while k < len(blk.insts):
                st = blk.insts[k]
                k += 1
                if st.op != "store" or st.args[0].id not in var_ids:
                    continue
                v = st.args[0].id
                m = defs.get(st.args[1].id)
                if not isinstance(st.args[1].type, CoopMatrixType) or scalar_of(st.args[1].type) not in types \
                        or m is None or uses[m.result.id] != 1 or m.attrs.get("exact") \
                        or not (m.op == "binary" and m.attrs["fn"] in (("mul", "div") if divide else ("mul",))
                                or m.op == "coop_scalar" and m.attrs["fn"] == "mul"):
                    continue
                nxt = next((j for j in range(k, len(blk.insts))
                            if any(a.id == v for i in blk.insts[j].walk() for a in i.args)), None)
                update = nxt is not None and _element_update(blk.insts[nxt], v, defs, uses)
                if not update:
                    continue
                add, e, c = update
                x, y = m.args
                if not (x.type == m.type == st.args[1].type and y.type in (m.type, scalar_of(m.type))):
                    continue
                if add.attrs["fn"] == "sub" and add.args[1] is e.result and not (
                        m.op == "coop_scalar" and defs.get(y.id) is not None and defs[y.id].op == "const"):
                    continue        # c - v[i] only where v is v * constant (see the docstring)
                pre = []
                if m.op == "binary" and m.attrs["fn"] == "div":      # x / y is x * RCP(y): 1 / y
                    one = Inst("const", [], scalar_of(y.type), {"value": 1.0}, [], m.loc, b.value(scalar_of(y.type)))
                    ones = Inst("coop_fill", [one.result], y.type, {}, [], m.loc, b.value(y.type))
                    rcp = Inst("binary", [ones.result, y], y.type, {"fn": "div"}, [], m.loc, b.value(y.type))
                    pre, y = [one, ones, rcp], rcp.result
                blk.insts[nxt:nxt] = pre
                k = nxt + len(pre) + 1
                idx = e.args[1:]
                ex = Inst("extract", [x, *idx], add.type, dict(e.attrs), [], add.loc, b.value(add.type))
                new = [ex]
                fy = y
                if isinstance(y.type, CoopMatrixType):
                    ey = Inst("extract", [y, *idx], add.type, dict(e.attrs), [], add.loc, b.value(add.type))
                    new.append(ey)
                    fy = ey.result
                a = ex.result
                if add.attrs["fn"] == "sub" and add.args[0] is e.result:         # v[i] - c
                    n = Inst("unary", [c], c.type, {"fn": "neg"}, [], add.loc, b.value(c.type))
                    new.append(n)
                    c = n.result
                elif add.attrs["fn"] == "sub":                                  # c - v[i]
                    n = Inst("unary", [a], a.type, {"fn": "neg"}, [], add.loc, b.value(a.type))
                    new.append(n)
                    a = n.result
                body = blk.insts[nxt + len(pre)].blocks[0].insts
                at = body.index(add)
                add.op, add.args, add.attrs = "builtin", [a, fy, c], {"fn": "fma", "contracted": "unroll"}
                body[at:at] = new
                count += 1
    return count


def _element_update(loop: Inst, v, defs, uses):
    """(the add, the extract of v it reads, the other addend) when loop is `for (...; ++i)` whose
    only access to variable v is one `v[i] = v[i] + c` (or -) at the top of its body, with i the
    loop's counter; else None."""
    if loop.op != "loop":
        return None
    body, cont = loop.blocks
    counter = _counter(cont, defs)
    if counter is None or any(i.op == "store" and i.args[0].id == counter for i in _walk(body)):
        return None
    touching = [i for i in _walk(loop.blocks[0]) + _walk(cont) if any(a.id == v for a in i.args)]
    if len(touching) != 3 or any(i not in body.insts for i in touching):
        return None
    load1, load2, store = touching
    if [load1.op, load2.op, store.op] != ["load", "load", "store"]:
        return None
    ins = defs.get(store.args[1].id)
    if ins is None or ins.op != "insert" or ins.args[0] is not load2.result or uses[ins.result.id] != 1 \
            or uses[load2.result.id] != 1 or uses[load1.result.id] != 1:
        return None
    add = defs.get(ins.args[1].id)
    if add is None or add.op != "binary" or add.attrs["fn"] not in ("add", "sub") or add.attrs.get("exact") \
            or add not in body.insts or uses[add.result.id] != 1:
        return None
    for side, arg in enumerate(add.args):
        e = defs.get(arg.id)
        if e is not None and e.op == "extract" and e.args[0] is load1.result and uses[arg.id] == 1 \
                and e.attrs.get("path") == ins.attrs.get("path") == [-1] and len(e.args) == len(ins.args) - 1 == 2 \
                and _from(e.args[1], counter, defs) and _from(ins.args[2], counter, defs):
            c = add.args[1 - side]
            # only well-typed updates (the verifier names an ill-typed one after this pass)
            if add.type == e.type == c.type == scalar_of(load1.type) and ins.type == load1.type:
                return add, e, c
    return None


def _counter(cont: Block, defs):
    """The variable a continuing block only steps by one (`store i, load i + 1`), else None."""
    stores = [i for i in _walk(cont) if i.op == "store"]
    if len(stores) != 1:
        return None
    inc = defs.get(stores[0].args[1].id)
    if inc is None or inc.op != "binary" or inc.attrs["fn"] != "add":
        return None
    ld, one = (defs.get(a.id) for a in inc.args)
    if ld is None or ld.op != "load" or ld.args[0].id != stores[0].args[0].id \
            or one is None or one.op != "const" or one.attrs.get("value") != 1:
        return None
    return stores[0].args[0].id


def _from(value, counter, defs) -> bool:
    """value is the counter variable's current value (a load of it, or that bitcast)."""
    d = defs.get(value.id)
    if d is not None and d.op == "bitcast":
        d = defs.get(d.args[0].id)
    return d is not None and d.op == "load" and d.args[0].id == counter


def _walk(blk: Block) -> list:
    return [j for i in blk.insts for j in i.walk()]



def _blocks(b: Block):
    yield b
    for i in b.insts:
        for sub in i.blocks:
            yield from _blocks(sub)
