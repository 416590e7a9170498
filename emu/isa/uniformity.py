"""Static uniformity of cooperative-matrix operations, as Tint (Dawn, Chrome) checks it.

At run time the executor stops a cooperative op that only part of a subgroup reaches, or whose
offset or stride differs between its lanes. Statically, WGSL's uniformity analysis goes further:
Tint rejects a subgroup-matrix call in control flow, or with an offset or stride, that depends on
a per-invocation value (local_invocation_index, global_invocation_id, ...), even where the value
happens to be the same across each subgroup (`local_invocation_index / subgroup_size`). emu runs
such shaders, and warns that a real Dawn will not compile them.

The analysis is a taint walk over the IR: values computed from non-uniform builtins, loads through
pointers they index, variables written with them or under branches on them, and results of
atomics and lane-varying subgroup ops are non-uniform.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .ir import Block, Function, Inst, Module
from .ops import OP, OPS

NON_UNIFORM_INPUTS = ("local_invocation_id", "local_invocation_index", "global_invocation_id",
                      "subgroup_invocation_id")
# Subgroup ops whose result differs between lanes (reductions and broadcasts are uniform).
LANE_VARYING_SUBGROUP = ("inclusive_add", "exclusive_add", "inclusive_mul", "exclusive_mul",
                         "shuffle", "shuffle_xor", "shuffle_up", "shuffle_down", "elect", "quad_broadcast")
HINT = ("compute matrix offsets and strides from workgroup_id, subgroup_id, subgroup_size, constants, "
        "overrides and uniform buffers, and keep matrix operations out of branches and loops that "
        "depend on invocation ids")


@dataclass
class Finding:
    inst: Inst
    message: str


@dataclass
class _State:
    taint: dict = field(default_factory=dict)     # value id -> the non-uniform source it came from
    roots: dict = field(default_factory=dict)     # pointer value id -> id of its var/global
    dirty: dict = field(default_factory=dict)     # var/global id -> source: written non-uniformly
    findings: list = field(default_factory=list)
    seen: set = field(default_factory=set)


def check(module: Module) -> list[Finding]:
    """Findings for every entry point (one per offending instruction)."""
    out: list[Finding] = []
    for f in module.entry_points():
        st = _State()
        for i, name in f.param_builtins.items():
            if name in NON_UNIFORM_INPUTS:
                st.taint[f.params[i].id] = name
        _Walker(module, st).block(f.body, None)
        out.extend(st.findings)
    unique, seen = [], set()
    for x in out:
        if id(x.inst) not in seen:
            seen.add(id(x.inst))
            unique.append(x)
    return sorted(unique, key=lambda x: (x.inst.loc.line, x.inst.loc.col) if x.inst.loc else (0, 0))


# Ops that take the walker's default rule: a result is non-uniform where an operand is (ops
# without a result carry nothing; loops and ifs see their exits). _Walker.inst has its own rule
# for the others, cooperative ops one rule together; tests/isa/test_op_coverage.py checks this.
FROM_OPERANDS = frozenset({
    OP.const, OP.override, OP.undef, OP.array_length, OP.construct, OP.extract, OP.insert,
    OP.swizzle, OP.unary, OP.binary, OP.select, OP.convert, OP.bitcast, OP.builtin,
    OP.barrier, OP.break_, OP.continue_, OP.break_if, OP.return_, OP.texture, OP.address_ptr,
})


class _Walker:
    def __init__(self, module: Module, st: _State):
        self.m, self.st = module, st

    def source(self, inst: Inst, values) -> str | None:
        for v in values:
            s = self.st.taint.get(v.id)
            if s is not None:
                return s
        return None

    def block(self, b: Block, control: str | None) -> str | None:
        """Walk `b` under `control` (the source of a non-uniform condition, or None); returns the
        control state after it (a non-uniform break or return taints what follows)."""
        for inst in b.insts:
            control = self.inst(inst, control) or control
        return control

    def inst(self, i: Inst, control: str | None) -> str | None:
        st = self.st
        op = i.op
        res = i.result.id if i.result is not None else None
        if op == OP.input:
            if i.attrs["builtin"] in NON_UNIFORM_INPUTS:
                st.taint[res] = i.attrs["builtin"]
        elif op in (OP.var, OP.global_):
            st.roots[res] = res
            if i.args:
                self.write(res, self.source(i, i.args), control)
        elif op == OP.access:
            st.roots[res] = st.roots.get(i.args[0].id)
            s = self.source(i, i.args)
            if s:
                st.taint[res] = s
        elif op == OP.load:
            root = st.roots.get(i.args[0].id)
            s = self.source(i, i.args) or st.dirty.get(root)
            if s:
                st.taint[res] = s
        elif op == OP.store:
            self.write(st.roots.get(i.args[0].id), self.source(i, i.args), control)
        elif op == OP.atomic:
            self.write(st.roots.get(i.args[0].id), self.source(i, i.args), control)
            if res is not None:
                st.taint[res] = "an atomic's result"
        elif op == OP.subgroup:
            s = self.source(i, i.args[1:]) if i.attrs["fn"] not in LANE_VARYING_SUBGROUP and \
                "cluster" not in i.attrs else f"{i.attrs['fn']} (different in each lane or cluster)"
            if s:
                st.taint[res] = s
        elif op == OP.coop_coordinate:
            st.taint[res] = "coopMatGetCoordinateEXT (each lane holds other elements)"
        elif op == OP.call:
            self.call(i, control)
        elif op == OP.if_:
            c = self.source(i, i.args) or control
            after = [self.block(b, c) for b in i.blocks]
            return self.escaped(i, c, control) or next((a for a in after if a and a != c), None)
        elif op == OP.switch:
            c = self.source(i, i.args) or control
            for b in i.blocks:
                self.block(b, c)
            return self.escaped(i, c, control)
        elif op == OP.loop:
            # twice: what the body writes in one iteration is read by the next
            for _ in range(2):
                self.block(i.blocks[0], control)
                self.block(i.blocks[1], control)
            exits = self.exit_condition(i)
            if exits and not control:
                # lanes leave at different iterations: the body itself is non-uniform
                self.block(i.blocks[0], exits)
                self.block(i.blocks[1], exits)
            return exits
        elif OPS[op].cooperative:
            self.coop(i, control)
            s = self.source(i, i.args)
            if s and res is not None and op not in (OP.coop_load,):
                st.taint[res] = s
        elif res is not None:
            s = self.source(i, i.args)
            if s:
                st.taint[res] = s
        return None

    def write(self, root, s, control):
        if root is not None and (s or control):
            self.st.dirty.setdefault(root, s or control)

    def escaped(self, i: Inst, c: str | None, control: str | None) -> str | None:
        """A break/continue/return under a non-uniform condition makes the code after it
        non-uniform."""
        if c and c != control and any(x.op in (OP.return_,) for b in i.blocks for y in b.insts for x in y.walk()):
            return c
        return None

    def exit_condition(self, loop: Inst) -> str | None:
        for b in loop.blocks:
            for y in b.insts:
                for x in y.walk():
                    if x.op in (OP.break_if,) and self.st.taint.get(x.args[0].id):
                        return self.st.taint[x.args[0].id]
                    if x.op == OP.if_ and self.st.taint.get(x.args[0].id) and \
                            any(z.op in (OP.break_, OP.return_) for blk in x.blocks for w in blk.insts for z in w.walk()):
                        return self.st.taint[x.args[0].id]
        return None

    def call(self, i: Inst, control: str | None):
        fn: Function = self.m.function(i.attrs["callee"])
        for p, a in zip(fn.params, i.args):
            s = self.st.taint.get(a.id)
            if s:
                self.st.taint[p.id] = s
            if a.id in self.st.roots:
                self.st.roots[p.id] = self.st.roots[a.id]
        self.block(fn.body, control)
        if i.result is not None:
            rets = [x for x in fn.walk() if x.op == OP.return_ and x.args]
            s = self.source(i, i.args) or next((self.st.taint.get(r.args[0].id) for r in rets
                                                 if self.st.taint.get(r.args[0].id)), None)
            if s:
                self.st.taint[i.result.id] = s

    def coop(self, i: Inst, control: str | None):
        st = self.st
        what = {OP.coop_load: "subgroupMatrixLoad", OP.coop_store: "subgroupMatrixStore",
                OP.coop_mma: "the matrix multiply-add", OP.coop_mul: "the matrix multiply",
                OP.coop_scalar: "the matrix scalar op", OP.coop_fill: "the matrix constructor",
                OP.coop_convert: "the matrix conversion"}.get(i.op, i.op)
        if control:
            st.findings.append(Finding(i, f"{what} is in control flow that depends on {control}, which "
                                          f"is not uniform: Tint (Dawn, Chrome) rejects this shader"))
            return
        if i.op in (OP.coop_load, OP.coop_store):
            ptr, off = i.args[0], i.args[1]
            stride = i.args[2] if i.op == OP.coop_load else i.args[3]
            for name, v in (("pointer", ptr), ("offset", off), ("stride", stride)):
                s = st.taint.get(v.id)
                if s:
                    st.findings.append(Finding(i, f"{what}'s {name} depends on {s}, which is not "
                                                  f"uniform: Tint (Dawn, Chrome) rejects this shader"))
                    return
