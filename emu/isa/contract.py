"""Floating-point contraction: `a * b + c` as one fused multiply-add, as GPU compilers emit it.

WGSL lets an implementation contract a multiply feeding an add (the result is then rounded once).
Drivers differ in when they do; a profile that names a device whose compiler contracts (NVIDIA's
does) applies this rewrite so that plain shader arithmetic rounds as that device's does. The rule
here: an f32 add or subtract whose operand is an f32 multiply used nowhere else becomes `fma`,
unless either is marked `exact` (GLSL's `precise`, SPIR-V's NoContraction); with ``f16=True``
(NVIDIA's driver on an H200: measured, f16 `a * b + c` rounds once) f16 ones too, and the
driver's f32 `1.0 / sqrt(x)` is `inverseSqrt(x)` (one MUFU.RSQ, measured in llama.cpp's rms_norm). With
``divide=True`` (a device that divides f32 as `x * RCP(y)`: the H200) an f32 division used only by
the add is such a product too: `x / y + c` is `fma(x, 1 / y, c)`, and `1 / y` is RCP(y) there
(measured: 65,536 of 65,536 results of x / y + z, tests/data/hw/h200/vulkan/README.md). There
`-(a * b) + c` fuses too, and `c - x * y` after a division x / y of the same loads is rounded first
(session 9: `_after_its_division`).

The driver contracts after inlining calls and keeping function variables in registers, so a
product a function returns (directly or through a variable it stores last) fuses with the add
its caller makes of the result: that call goes to a copy of the function which takes the addend
and returns the fma (measured: llama.cpp's flash attention with logit softcap,
`exp(softcap * tanh(s) - max)` with the product made in a helper, 1,024 of 1,024 outputs).

It unrolls a loop over a cooperative matrix's elements too (`for (i < m.length()) m[i] = m[i] + c`):
each element of a product or division just stored in m fuses with its add (measured on the H200:
tests/data/hw/h200/vulkan_coop_ops.npz).
"""
from __future__ import annotations

from collections import Counter

from .ir import Block, Builder, Function, Inst, Module
from .types import F16, F32, CoopMatrixType, scalar_of


def contract_fma(module: Module, f16: bool = False, divide: bool = False) -> int:
    """Rewrite the module in place; returns how many adds/subtracts became fma.

    With ``f16=True`` (the H200's driver) a product whose left factor is itself a constant times
    x, used nowhere else, ``(k * x) * y + c``, is fused as ``fma(k, x * y, c)``: measured on the
    H200 in GELU's ``0.044715 * v * v + 1`` (traces/hw/README.md)."""
    types = (F32, F16) if f16 else (F32,)
    uses = Counter(a.id for f in module.functions for i in f.walk() for a in i.args)
    defs = {i.result.id: i for f in module.functions for i in f.walk() if i.result is not None}
    ids = max(defs, default=-1) + 1
    b = Builder(ids)
    fwd = _forwarded_loads(module)
    count = 0
    for f in module.functions:
        for blk in _blocks(f.body):
            out = []
            orig = list(blk.insts)
            for k, inst in enumerate(orig):
                if f16 and _reciprocal_sqrt(inst, defs, uses):      # rewritten in place
                    out.append(inst)
                    count += 1
                    continue
                if divide and _after_its_division(inst, orig[:k], defs):
                    out.append(inst)
                    continue
                new = _contract(inst, defs, uses, b, types, reassociate=f16, divide=divide, fwd=fwd)
                if new is not None:
                    out.extend(new)
                    count += 1
                else:
                    out.append(inst)
            blk.insts[:] = out
    return count + _contract_calls(module, b, types, divide) + _contract_element_loops(module, b, types, divide)


def _contract_calls(module: Module, b: Builder, types, divide: bool) -> int:
    """`f(...) + c` where f ends `return a * m` (or `v = a * m; return v`) -> `f'(..., c)`, f' the
    copy of f that returns fma(a, m, c); only where moving the call to the add changes nothing:
    f writes nothing but its own variables and nothing between the call and the add has effects."""
    uses = Counter(a.id for f in module.functions for i in f.walk() for a in i.args)
    defs = {i.result.id: i for f in module.functions for i in f.walk() if i.result is not None}
    fwd = _forwarded_loads(module)
    count = 0
    for f in list(module.functions):
        for blk in _blocks(f.body):
            k = 0
            while k < len(blk.insts):
                inst = blk.insts[k]
                new = _contract_call(module, blk.insts[:k], inst, defs, uses, b, types, divide, fwd)
                if new is not None:
                    call, pre = new
                    blk.insts.remove(call)
                    k -= 1
                    blk.insts[k:k + 1] = pre
                    k += len(pre) - 1
                    count += 1
                k += 1
    return count


def _contract_call(module, before, inst, defs, uses, b, types, divide, fwd):
    if inst.op != "binary" or inst.attrs["fn"] not in ("add", "sub") or inst.attrs.get("exact") \
            or scalar_of(inst.type) not in types:
        return None
    for side, v in enumerate(inst.args):
        call = defs.get(v.id)
        if call is None or call.op != "call" or uses[v.id] != 1 or call not in before:
            continue
        between = before[before.index(call) + 1:]
        if any(i.blocks or i.op in ("store", "atomic", "barrier", "call", "subgroup", "texture")
               or i.op.startswith("coop") for i in between):
            continue
        fn = module.function(call.attrs["callee"])
        tail = fn and _returned_product(fn, defs, uses, divide, fwd)
        if tail is None or tail[0].type != inst.type:
            continue
        c = inst.args[1 - side]
        pre = []
        if side == 0 and inst.attrs["fn"] == "sub":        # f() - c = fma(a, m, -c)
            neg = Inst("unary", [c], c.type, {"fn": "neg"}, [], inst.loc, b.value(c.type))
            pre.append(neg)
            c = neg.result
        name = f"{fn.name}__fma{b.next_id}"
        module.functions.append(_with_fma(fn, tail[0], name, b, negate=side == 1 and inst.attrs["fn"] == "sub"))
        inst.op, inst.args, inst.attrs = "call", list(call.args) + [c], {"callee": name}
        return call, pre + [inst]
    return None


def _returned_product(fn, defs, uses, divide, fwd):
    """(product, return) when fn's last statement returns a product used nowhere else, directly
    or as the value it just stored in one of its variables; fn has no other return and writes
    only its own variables."""
    body = fn.body.insts
    if not body or body[-1].op != "return" or not body[-1].args:
        return None
    for i in fn.walk():
        if i.op == "return" and i is not body[-1]:
            return None
        if i.op in ("atomic", "barrier", "call", "subgroup", "texture") or i.op.startswith("coop"):
            return None
        if i.op == "store" and _root(i.args[0], defs).op != "var":
            return None
    p = _product(body[-1].args[0], defs, uses, divide, fwd)
    return (p, body[-1]) if p is not None and p in body else None


def _forwarded_loads(module: Module) -> dict:
    """{load's value id: the value it reads} for each load of a function variable that reads the
    value stored by a store earlier in its block (nothing between that could store to it: no
    call, no nested block) and is that value's only reader (the variable's next access in the block
    is a store, or there is none and the block is the function's body): the driver keeps such a
    variable in a register, so a product stored there reaches the load's user as a product."""
    out = {}
    for f in module.functions:
        var_ids = {i.result.id for i in f.walk() if i.op == "var"}
        direct = set(var_ids)             # only loaded and stored through, never indexed or passed
        for i in f.walk():
            for k, a in enumerate(i.args):
                if a.id in var_ids and not (i.op == "load" or (i.op == "store" and k == 0)):
                    direct.discard(a.id)
        for blk in _blocks(f.body):
            stored = {}
            for j, inst in enumerate(blk.insts):
                if inst.blocks or inst.op == "call":
                    stored.clear()
                elif inst.op == "var" and inst.args:
                    stored[inst.result.id] = inst.args[0]
                elif inst.op == "store" and inst.args[0].id in direct:
                    stored[inst.args[0].id] = inst.args[1]
                elif inst.op == "load" and inst.args[0].id in stored:
                    value = stored.pop(inst.args[0].id)          # a later load is a second reader
                    if _only_reader(blk.insts[j + 1:], inst.args[0].id, blk is f.body):
                        out[inst.result.id] = value
    return out


def _only_reader(rest, ptr_id, top: bool) -> bool:
    for inst in rest:
        for i in inst.walk():
            if any(a.id == ptr_id for a in i.args):
                return i is inst and i.op == "store"
    return top


def _root(ptr, defs):
    d = defs[ptr.id]
    while d.op == "access":
        d = defs[d.args[0].id]
    return d


def _with_fma(fn, product: Inst, name, b: Builder, negate: bool):
    """A copy of fn (fresh values) taking one more operand c and returning fma(a, m, c) of the
    product it returned ((-a) * m + c with negate)."""
    vals = {}

    def val(v):
        if v.id not in vals:
            vals[v.id] = b.value(v.type, v.name)
        return vals[v.id]

    def copy(blk):
        return Block([Inst(i.op, [val(a) for a in i.args], i.type, dict(i.attrs), [copy(s) for s in i.blocks],
                           i.loc, val(i.result) if i.result is not None else None) for i in blk.insts])

    params = [val(p) for p in fn.params]
    body = copy(fn.body)
    c = b.value(fn.ret)
    p = next(i for i in body.insts if i.result is vals[product.result.id])
    ret = body.insts[-1]
    a, m, pre = _factors(p, ret.loc, b)
    if negate:
        n = Inst("unary", [a], a.type, {"fn": "neg"}, [], ret.loc, b.value(a.type))
        pre.append(n)
        a = n.result
    fma = Inst("builtin", [a, m, c], fn.ret, {"fn": "fma"}, [], ret.loc, b.value(fn.ret))
    body.insts[-1:-1] = pre + [fma]
    ret.args = [fma.result]
    return Function(name, params + [c], fn.ret, body, loc=fn.loc)


def _blocks(b: Block):
    yield b
    for i in b.insts:
        for sub in i.blocks:
            yield from _blocks(sub)


def _product(v, defs, uses, divide=False, fwd=None):
    if fwd and v.id in fwd and uses[v.id] == 1:      # a load of what a variable was just given
        v = fwd[v.id]
    d = defs.get(v.id)
    fns = ("mul", "div") if divide else ("mul",)
    if d is not None and d.op == "binary" and d.attrs["fn"] in fns and uses[v.id] == 1 \
            and not d.attrs.get("exact") and (d.attrs["fn"] == "mul" or scalar_of(d.type) == F32):
        return d
    return None



def _after_its_division(inst: Inst, before, defs) -> bool:
    """`c - x * y` (f32) where the block divided the same two values, x / y, before it (the same
    loads: nothing between writes what they read): the H200's driver rounds that product first
    (measured: `r = 0.7 - x[i] / c[i]; r2 = 0.7 - x[i] * c[i]`, straight or in a loop, 4,096 of
    4,096 second results rounded first, while `0.7 - x[i] * c[i]` alone, z - x * c, x * c - 0.7,
    0.7 + x * c and pk - x * c all fused: tests/profiles/test_h200_scalar_contract.py). Only the
    shape measured; why the division matters is not known."""
    if inst.op != "binary" or inst.attrs["fn"] != "sub" or inst.type != F32 or inst.attrs.get("exact"):
        return False
    p = defs.get(inst.args[1].id)
    if p is None or p.op != "binary" or p.attrs["fn"] != "mul" or p.type != F32:
        return False
    roots = set()
    keys = [_value_key(a, defs, roots) for a in p.args]
    for j, d in enumerate(before):
        if d.op == "binary" and d.attrs["fn"] == "div" and d.type == F32 \
                and [_value_key(a, defs, set()) for a in d.args] == keys:
            between = before[j + 1:]
            if not any(i.blocks or i.op in ("call", "atomic", "barrier", "texture")
                       or i.op == "store" and _root_id(i.args[0], defs) in roots for i in between):
                return True
    return False


def _value_key(v, defs, roots: set):
    """What v computes, as a comparable tree (loads by what they read; the roots of the variables
    read added to roots): two values with one key are equal where nothing between them writes
    those roots."""
    d = defs.get(v.id)
    if d is None or d.op in ("var", "global", "input", "call", "atomic", "subgroup", "texture"):
        return ("value", v.id)
    if d.op == "load":
        roots.add(_root_id(d.args[0], defs))
    if d.op == "const":
        return ("const", repr(d.type), repr(d.attrs.get("value")))
    return (d.op, repr(d.type), repr(sorted(d.attrs.items())), tuple(_value_key(a, defs, roots) for a in d.args))


def _root_id(ptr, defs):
    d = defs.get(ptr.id)
    while d is not None and d.op == "access":
        ptr = d.args[0]
        d = defs.get(ptr.id)
    return ptr.id


def _reciprocal_sqrt(inst: Inst, defs, uses) -> bool:
    """f32 `1.0 / sqrt(x)` (the sqrt used only there) becomes `inverseSqrt(x)` in place."""
    if inst.op != "binary" or inst.attrs["fn"] != "div" or inst.type != F32 or inst.attrs.get("exact"):
        return False
    one, root = (defs.get(a.id) for a in inst.args)
    if one is None or one.op != "const" or one.attrs.get("value") != 1.0 or root is None \
            or root.op != "builtin" or root.attrs["fn"] != "sqrt" or uses[inst.args[1].id] != 1:
        return False
    inst.op, inst.args, inst.attrs = "builtin", list(root.args), {"fn": "inverseSqrt"}
    return True


def _factors(p: Inst, loc, b: Builder):
    """(a, m, instructions to add) with a * m the product p computes: x / y is x * (1 / y)."""
    if p.attrs["fn"] == "mul":
        return p.args[0], p.args[1], []
    x, y = p.args
    t = y.type
    one = Inst("const", [], t, {"value": [1.0] * t.n if hasattr(t, "n") else 1.0}, [], loc, b.value(t))
    rcp = Inst("binary", [one.result, y], t, {"fn": "div"}, [], loc, b.value(t))
    return x, rcp.result, [one, rcp]


def _const_product(v, defs, uses):
    """(k, x) when v = k * x (k a constant) is used only once, else None."""
    d = _product(v, defs, uses)
    if d is None:
        return None
    k, x = d.args
    kd = defs.get(k.id)
    return (k, x) if kd is not None and kd.op == "const" else None


def _contract(inst: Inst, defs, uses, b: Builder, types=(F32,), reassociate=False, divide=False, fwd=None):
    if inst.op != "binary" or inst.attrs["fn"] not in ("add", "sub") or inst.attrs.get("exact"):
        return None
    try:
        if scalar_of(inst.type) not in types:
            return None
    except TypeError:
        return None
    x, y = inst.args
    neg = []

    def negate(v):
        n = Inst("unary", [v], v.type, {"fn": "neg"}, [], inst.loc, b.value(v.type))
        neg.append(n)
        return n.result

    for side in (0, 1) if inst.attrs["fn"] == "add" else ():
        n = defs.get(inst.args[side].id)              # -(a*b) + c, c + -(a*b): fma(-a, b, c)
        if n is not None and n.op == "unary" and n.attrs["fn"] == "neg" and uses[n.result.id] == 1 \
                and n.type == inst.type and not n.attrs.get("exact"):
            p = _product(n.args[0], defs, uses, divide, fwd)
            if p is not None:
                a, m, pre = _factors(p, inst.loc, b)
                inst.op, inst.args, inst.attrs = "builtin", [negate(a), m, inst.args[1 - side]], {"fn": "fma"}
                return neg + pre + [inst]
    p = _product(x, defs, uses, divide, fwd)
    if p is not None:                                   # a*b + c, a*b - c
        c = y if inst.attrs["fn"] == "add" else negate(y)
        a, m, pre = _factors(p, inst.loc, b)
    else:
        p = _product(y, defs, uses, divide, fwd)
        if p is None:
            return None
        a, m, pre = _factors(p, inst.loc, b)            # c + a*b, c - a*b
        c = x
        if inst.attrs["fn"] == "sub":
            a = negate(a)
    kx = _const_product(a, defs, uses) if reassociate and not neg and p.attrs["fn"] == "mul" else None
    if kx is not None and not (kx[0].type == kx[1].type == m.type == inst.type):
        kx = None                                       # only where every operand has one type
    if kx is not None:                                  # (k * x) * m + c -> fma(k, x * m, c)
        k, x = kx
        xm = Inst("binary", [x, m], m.type, {"fn": "mul"}, [], inst.loc, b.value(m.type))
        pre.append(xm)
        a, m = k, xm.result
    inst.op, inst.args, inst.attrs = "builtin", [a, m, c], {"fn": "fma"}
    return neg + pre + [inst]


def _contract_element_loops(module: Module, b: Builder, types, divide: bool) -> int:
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
                add.op, add.args, add.attrs = "builtin", [a, fy, c], {"fn": "fma"}
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

