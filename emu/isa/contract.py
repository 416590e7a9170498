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
(measured: 65,536 of 65,536 results of x / y + z, tests/data/hw/h200/vulkan/README.md).

The driver contracts after inlining calls and keeping function variables in registers, so a
product a function returns (directly or through a variable it stores last) fuses with the add
its caller makes of the result: that call goes to a copy of the function which takes the addend
and returns the fma (measured: llama.cpp's flash attention with logit softcap,
`exp(softcap * tanh(s) - max)` with the product made in a helper, 1,024 of 1,024 outputs).
"""
from __future__ import annotations

from collections import Counter

from .ir import Block, Builder, Function, Inst, Module
from .types import F16, F32, scalar_of


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
            for inst in blk.insts:
                if f16 and _reciprocal_sqrt(inst, defs, uses):      # rewritten in place
                    out.append(inst)
                    count += 1
                    continue
                new = _contract(inst, defs, uses, b, types, reassociate=f16, divide=divide, fwd=fwd)
                if new is not None:
                    out.extend(new)
                    count += 1
                else:
                    out.append(inst)
            blk.insts[:] = out
    return count + _contract_calls(module, b, types, divide)


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
