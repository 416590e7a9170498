"""Text form of the IR: what `emu ir` prints, golden files hold, and `emu.isa.textparser` reads back.

    module "kernel.wgsl"
    enable f16
    struct Params { n: u32, scale: f32 }
    tuple __frexp_result_f32 { fract: f32, exp: i32 }
    override @N : u32 = 64 id(0)
    global @a : array<f32> storage read group(0) binding(0)
    func @main(%0: vec3<u32> builtin(global_invocation_id)) -> void compute workgroup_size(64, 1, 1) {
      %1 = const {value = 3} : u32                      ; kernel.wgsl:4:11
      %2 = binary %0, %1 {fn = "add"} : u32             ; kernel.wgsl:4:9
      if %3 {
        ...
      } {
        ...
      }
    }

An op with blocks ends its line with `{`; its blocks are separated by `} {` lines and closed by a
`}` line (`if`: then, else; `loop`: body, continuing; `switch`: one block per `cases` entry).
Attribute values are integers, floats in exact hexadecimal (`0x1.8p+1`, `nan`, `inf`, `-inf`),
strings, booleans, `null`, lists and types written `<T>`. `struct.NAME` names a `struct` line or,
for the several-valued results of builtins (frexp, modf, atomicCompareExchangeWeak: TupleType), a
`tuple` line; the printer writes a `tuple` line for each one the module uses.
"""
from __future__ import annotations

import json
import math

from .ir import Block, Function, Inst, Module
from .types import ArrayType, AtomicType, PointerType, StructType, TupleType, Type


def format_attr(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v.hex()
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(format_attr(x) for x in v) + "]"
    if isinstance(v, Type):
        return f"<{v}>"
    if v is None:
        return "null"
    raise TypeError(f"cannot print attribute value {v!r}")


def format_struct(t: StructType) -> str:
    parts = []
    for m in t.members:
        s = f"{m.name}: {m.type}"
        if m.align_attr:
            s += f" align({m.align_attr})"
        if m.size_attr:
            s += f" size({m.size_attr})"
        parts.append(s)
    return f"struct {t.name} {{ " + ", ".join(parts) + " }"


def format_tuple(t: TupleType) -> str:
    return f"tuple {t.name} {{ " + ", ".join(f"{n}: {ft}" for n, ft in t.fields) + " }"


def _tuples_in(t, out: dict):
    if isinstance(t, TupleType):
        if t.name not in out:
            for _, ft in t.fields:
                _tuples_in(ft, out)
            out[t.name] = t
    elif isinstance(t, PointerType):
        _tuples_in(t.pointee, out)
    elif isinstance(t, (ArrayType, AtomicType)):
        _tuples_in(t.elem, out)
    elif isinstance(t, StructType):
        for mem in t.members:
            _tuples_in(mem.type, out)
    elif isinstance(t, (list, tuple)):
        for x in t:
            _tuples_in(x, out)


def used_tuples(m: Module) -> list[TupleType]:
    """The tuple types the module uses, in order of first use (fields before their users)."""
    out: dict = {}
    for f in m.functions:
        for p in f.params:
            _tuples_in(p.type, out)
        _tuples_in(f.ret, out)
        for i in f.walk():
            _tuples_in(i.type, out)
            for v in i.attrs.values():
                _tuples_in(v, out)
    return list(out.values())


class Printer:
    def __init__(self, locs: bool = True):
        self.locs = locs
        self.lines: list[str] = []

    def module(self, m: Module) -> str:
        out = self.lines
        out.append(f"module {json.dumps(m.file)}")
        for e in m.enables:
            out.append(f"enable {e}")
        for s in m.structs:
            out.append(format_struct(s))
        for t in used_tuples(m):
            out.append(format_tuple(t))
        for o in m.overrides:
            line = f"override @{o.name} : {o.type}"
            if o.default is not None:
                line += f" = {format_attr(o.default)}"
            if o.id is not None:
                line += f" id({o.id})"
            out.append(line)
        for g in m.globals:
            line = f"global @{g.name} : {g.type} {g.space}"
            if g.aliased:
                line += " aliased"
            if g.space == "storage":
                line += f" {g.access}"
            if g.group is not None:
                line += f" group({g.group}) binding({g.binding})"
            if g.init is not None:
                line += f" = {format_attr(g.init)}"
            out.append(line)
        for f in m.functions:
            self.function(f)
        return "\n".join(out) + "\n"

    def function(self, f: Function):
        params = []
        for i, p in enumerate(f.params):
            s = f"%{p.id}: {p.type}"
            if i in f.param_builtins:
                s += f" builtin({f.param_builtins[i]})"
            params.append(s)
        head = f"func @{f.name}({', '.join(params)}) -> {f.ret}"
        if f.stage:
            head += f" {f.stage} workgroup_size({', '.join(format_attr(x) for x in f.workgroup_size)})"
        self.lines.append(head + " {")
        self.block(f.body, 1)
        self.lines.append("}")

    def block(self, b: Block, depth: int):
        for inst in b.insts:
            self.inst(inst, depth)

    def inst(self, i: Inst, depth: int):
        pad = "  " * depth
        text = f"%{i.result.id} = {i.op}" if i.result is not None else i.op
        if i.args:
            text += " " + ", ".join(f"%{a.id}" for a in i.args)
        if i.attrs:
            text += " {" + ", ".join(f"{k} = {format_attr(v)}" for k, v in i.attrs.items()) + "}"
        if i.result is not None:
            text += f" : {i.type}"
        if i.blocks:
            text += " {"
        if self.locs and i.loc is not None:
            text = f"{text:<60} ; {i.loc}"
        self.lines.append(pad + text)
        for n, b in enumerate(i.blocks):
            if n:
                self.lines.append(pad + "} {")
            self.block(b, depth + 1)
        if i.blocks:
            self.lines.append(pad + "}")


def print_module(m: Module, locs: bool = True) -> str:
    return Printer(locs).module(m)
