"""SPIR-V functions -> the cooperative IR: the structured control flow is rebuilt from the merge
instructions (OpSelectionMerge / OpLoopMerge) into the IR's nested if / loop / switch blocks.

The IR is SSA within a block and its nested blocks. A SPIR-V value whose definition does not
enclose a use once the blocks are nested (a loop-header value used after the loop, a value of
the body used in the continue construct) and every OpPhi become function variables: stored where
defined, loaded where used. Functions are lowered twice: the first pass finds those values.
"""
from __future__ import annotations

from ...errors import EmuError
from ...isa.ir import Block, Builder, Function, Loc, Module, Value
from ...isa.types import (BOOL, I32, I64, U32, U64, VOID, ArrayType, CoopMatrixType, MatrixType, PointerType,
                          ScalarType, StructType, Type, VectorType, scalar_of, with_scalar)
from ...isa.verify import FLEXIBLE_DIMENSIONS
from .grammar import Instruction
from .images import ImageLowering, is_handle_desc
from .integers import IntegerLowering
from .minifloats import MiniFloatLowering
from .mixed_dot import MixedDotLowering
from .intdot import IntegerDotLowering
from .subgroups import SubgroupLowering
from .physical import DecodeLowering, PhysicalLowering
from .module import SUBGROUP_SCOPE, BuiltinVar, ModuleInfo, SpirvFunction, ident, is_physical
from .ops import OpLowering


class _Retry(Exception):
    pass


def _coop_chains(fn) -> set:
    """The access chains whose every use is the pointer of a cooperative load or store in the same
    block (glslang's coopMatLoad(m, buf, offset, ...)): lowered as the load's (array, offset), with
    no access instruction of their own, as WGSL's subgroupMatrixLoad(&buf, offset, ...) is."""
    from .ops import COOP_POINTER_OPS
    chains = {}
    for label in fn.order:
        for i in fn.blocks[label]:
            if i.opname in ("OpAccessChain", "OpInBoundsAccessChain"):
                chains[i.result] = label
    uses: dict = {}
    for label in fn.order:
        for i in fn.blocks[label]:
            for k in i.id_at:                # ids only: a literal equal to a chain's id is no use
                x = i.ops[k]
                if x in chains:
                    good = k == 0 and i.opname in COOP_POINTER_OPS and chains[x] == label
                    uses[x] = uses.get(x, True) and good
    return {x for x, good in uses.items() if good}


class FunctionLowerer(ImageLowering, IntegerLowering, MixedDotLowering, MiniFloatLowering, IntegerDotLowering,
                      SubgroupLowering, PhysicalLowering, DecodeLowering, OpLowering):
    def __init__(self, info: ModuleInfo, module: Module, b: Builder, fn: SpirvFunction, name: str,
                 fn_names: dict, demoted: set):
        self.info, self.module, self.b, self.fn = info, module, b, fn
        self.fn_names = fn_names
        self.demoted = demoted          # SPIR-V ids kept in function variables
        self.missed: set = set()        # ids found not enclosing a use (first pass)
        self.scopes: list[dict] = []    # per open IR block: SPIR-V id -> Value
        self.vars: dict[int, Value] = {}
        self.chains: dict[int, tuple] = {}   # access-chain pointer id -> (base id, index ids)
        self.defined: set = set()
        self.active: set = set()        # blocks being emitted (a cycle among them is no loop)
        self.name = name
        self.loc: Loc | None = None
        self.coop_chains = _coop_chains(fn)
        # predecessor label -> [(phi id, incoming id)]
        self.phi_moves: dict[int, list] = {}
        for label in fn.order:
            for i in fn.blocks[label]:
                if i.opname == "OpPhi":
                    demoted.add(i.result)
                    for k in range(0, len(i.ops), 2):
                        self.phi_moves.setdefault(i.ops[k + 1], []).append((i.result, i.ops[k]))

    # -- messages -------------------------------------------------------------------------------
    def fail(self, i: Instruction, message: str, hint: str | None = None):
        self.info.fail(i, message, hint)

    # -- values ---------------------------------------------------------------------------------
    def define(self, id_: int, v):
        self.scopes[-1][id_] = v
        self.defined.add(id_)
        if id_ in self.demoted and id_ in self.vars and isinstance(v, Value):
            self.b.emit("store", [self.vars[id_], v])

    def lookup(self, id_: int, at: Instruction | None = None):
        for s in reversed(self.scopes):
            if id_ in s:
                return s[id_]
        info = self.info
        if id_ in info.consts:
            t, v = info.consts[id_]
            return self._cache(id_, self.const(t, v))
        if id_ in info.overrides:
            o = info.overrides[id_]
            return self._cache(id_, self.b.op("override", [], o.type, name=o.name))
        if id_ in info.spec_exprs:
            return self._cache(id_, self.spec_expr(info.spec_exprs[id_]))
        if id_ in info.globals:
            g = info.globals[id_]
            if g.space == "handle":          # an image or sampler: the value itself
                return self._cache(id_, self.handle_var(id_))
            return self._cache(id_, self.b.op("global", [], PointerType(g.space, g.type, g.access), name=g.name))
        if id_ in info.builtin_vars:
            return info.builtin_vars[id_]
        if id_ in self.vars:
            if id_ in self.demoted:
                v = self.vars[id_]
                return self.b.op("load", [v], v.type.pointee)
        d = info.defs.get(id_)
        if id_ in self.defined and d is not None and d.opname in ("OpAccessChain", "OpInBoundsAccessChain") \
                and not is_physical(info.types.get(d.type_id)):
            # a pointer defined in a block that does not enclose this use: the IR keeps no
            # pointers in variables, so the chain is made again here from its base and indices
            self.lower(d)
            return self.scopes[-1][id_]
        if id_ in self.defined or id_ not in self.demoted:
            # defined in a block that does not enclose this use: keep it in a variable
            self.missed.add(id_)
            raise _Retry()
        self.fail(at, f"%{id_} is used before it is defined")

    def _cache(self, id_, v):
        self.scopes[-1][id_] = v
        return v

    def val(self, id_: int, at: Instruction) -> Value:
        v = self.lookup(id_, at)
        if not isinstance(v, Value):
            self.fail(at, f"%{id_} is not a value here" if not isinstance(v, BuiltinVar) else
                      "a builtin variable is used as a value; load it first")
        return v

    def cond(self, id_: int, at: Instruction) -> Value:
        v = self.val(id_, at)
        if v.type != BOOL:
            self.fail(at, f"the condition %{id_} is {v.type}, not bool")
        return v

    def const(self, t: Type, value) -> Value:
        if isinstance(t, CoopMatrixType):
            s = self.const(_storage_scalar(t.elem), value)
            return self.b.op("coop_fill", [s], t)
        return self.b.op("const", [], t, value=value)

    def type(self, id_: int, at: Instruction) -> Type:
        return self.info.type(id_, at)

    # -- the function ---------------------------------------------------------------------------
    def run(self) -> Function:
        fn = self.fn
        ft = self.info.types[fn.inst.ops[1]]
        ret = self.info.types[ft[1]]
        ret = U64 if is_physical(ret) else ret        # a PhysicalStorageBuffer pointer: its address
        params = []
        body = Block()
        self.b.block = body
        self.scopes.append({})
        for p in fn.params:
            pt = self.info.types[p.type_id]
            t = self._param_type(pt, p)
            v = self.b.value(t, self.info.names.get(p.result))
            params.append(v)
            self.scopes[-1][p.result] = v
            self.defined.add(p.result)
        for id_ in sorted(self.demoted):
            d = self.info.defs.get(id_)
            if d is None or d.type_id is None:
                continue
            t = self.type(d.type_id, d)
            self.vars[id_] = self.b.op("var", [], PointerType("function", t))
        self.region(fn.order[0], {})
        self.scopes.pop()
        _drop_trailing(body, "continue")
        f = Function(self.name, params, ret, body, loc=self.info.loc(fn.inst))
        _place_variables(f)
        return f

    def _param_type(self, pt, p):
        if is_physical(pt):
            return U64                  # a PhysicalStorageBuffer pointer: its address
        if isinstance(pt, tuple) or is_handle_desc(pt):        # a pointer parameter
            pointee = pt[2] if isinstance(pt, tuple) else pt
            if is_handle_desc(pointee):
                self.fail(p, "a function parameter holding an image or sampler is not supported by emu",
                          hint="use the image's variable inside the function (or write the code in main)")
            from .module import SPACES
            return PointerType(SPACES.get(pt[1], "function"), pointee)
        return pt

    # -- structured control flow ----------------------------------------------------------------
    def region(self, label: int, exits: dict):
        """Emit blocks from `label` on until a branch reaches one of `exits` (label -> 'end',
        'break' or 'continue')."""
        mine = []
        try:
            while label is not None:
                if label in exits:
                    self.exit(exits[label])
                    return
                self.enter(label, mine)
                label = self.region_step(label, exits)
        finally:
            self.active.difference_update(mine)

    def enter(self, label: int, mine: list):
        """A block reached again while it is being emitted: a cycle that is no loop."""
        if label in self.active:
            self.fail(self.fn.blocks[label][-1] if self.fn.blocks.get(label) else self.fn.inst,
                      f"a branch back to %{label} outside a loop's back edge (unstructured control flow)",
                      hint="emu needs structured SPIR-V: loops declared with OpLoopMerge")
        self.active.add(label)
        mine.append(label)

    def region_step(self, label: int, exits: dict):
        """Emit block `label` (a whole loop where it heads one); the label to go on with."""
        merge, term = self.block_parts(label)
        if merge is not None and merge.opname == "OpLoopMerge":
            return self.loop(label, merge, term)
        self.lower_block(label)
        self.set_loc(term)
        return self.terminator(label, term, merge, exits)

    def block_parts(self, label: int):
        insts = self.fn.blocks.get(label)
        if not insts:
            self.fail(self.fn.inst, f"branch to %{label}, which is not a block of this function")
        merge = next((i for i in insts if i.opname in ("OpSelectionMerge", "OpLoopMerge")), None)
        return merge, insts[-1]

    def lower_block(self, label: int):
        for i in self.fn.blocks[label][:-1]:
            if i.opname in ("OpSelectionMerge", "OpLoopMerge"):
                continue
            self.set_loc(i)
            if i.opname == "OpPhi":
                v = self.vars[i.result]
                self.scopes[-1][i.result] = self.b.op("load", [v], v.type.pointee)
                continue
            self.lower(i)

    def exit(self, action: str):
        if action in ("break", "continue"):
            self.b.emit(action)
        elif action == "loop-break":
            self.fail(self.fn.inst, "a branch from a switch case out of the enclosing loop is not supported yet",
                      hint="set a flag in the case and break the loop after the switch")

    def phi_copies(self, pred: int):
        moves = self.phi_moves.get(pred)
        if not moves:
            return
        vals = [(phi, self.val(src, self.info.defs.get(phi))) for phi, src in moves]
        for phi, v in vals:
            self.b.emit("store", [self.vars[phi], v])

    def nested(self, label: int, exits: dict) -> Block:
        blk = Block()
        with self.b.at(blk):
            self.scopes.append({})
            try:
                self.region(label, exits)
            finally:
                self.scopes.pop()
        return blk

    def terminator(self, label: int, term: Instruction, merge, exits: dict):
        op = term.opname
        if op in ("OpReturn", "OpReturnValue"):
            args = [self.val(term.ops[0], term)] if op == "OpReturnValue" else []
            self.b.emit("return", args)
            return None
        if op == "OpUnreachable":      # no invocation gets here
            return None
        if op in ("OpKill", "OpTerminateInvocation"):
            self.fail(term, f"{op} is not allowed in a compute shader")
        if op == "OpBranch":
            self.phi_copies(label)
            return term.ops[0]
        if op == "OpBranchConditional":
            self.phi_copies(label)
            cond = self.cond(term.ops[0], term)
            t, f = term.ops[1], term.ops[2]
            if merge is not None:
                m = merge.ops[0]
                inner = {**_loop_exits(exits), m: "end"}
                self.b.emit("if", [cond], blocks=[self.nested(t, inner), self.nested(f, inner)])
                return m
            if t == f:
                return t
            if t in exits and f in exits:
                self.b.emit("if", [cond], blocks=[self.nested(t, exits), self.nested(f, exits)])
                return None
            if t in exits or f in exits:
                out, on = (t, f) if t in exits else (f, t)
                c = cond if out == t else self.b.op("unary", [cond], BOOL, fn="not")
                self.b.emit("if", [c], blocks=[self.nested(out, exits), Block()])
                return on
            self.fail(term, "a conditional branch without OpSelectionMerge that leaves no construct "
                            "(unstructured control flow)",
                      hint="emu needs structured SPIR-V, as glslang and spirv-opt write it")
        if op == "OpSwitch":
            self.phi_copies(label)
            if merge is None:
                self.fail(term, "OpSwitch without OpSelectionMerge")
            return self.switch(term, merge.ops[0], exits)
        self.fail(term, f"{op} does not end a block")

    def switch(self, term: Instruction, m: int, exits: dict):
        sel = self.val(term.ops[0], term)
        if scalar_of(sel.type) not in (I32, U32, I64, U64) or not isinstance(sel.type, ScalarType):
            self.fail(term, f"switch on {sel.type}: emu switches on 32- and 64-bit integers")
        default = term.ops[1]
        targets: dict[int, list] = {}
        sel_t = scalar_of(sel.type)
        for k in range(2, len(term.ops), 2):
            lit = term.ops[k]
            if sel_t.kind == "sint" and lit >> (sel_t.bits - 1):
                lit -= 1 << sel_t.bits
            targets.setdefault(term.ops[k + 1], []).append(lit)
        if default != m:
            targets.setdefault(default, []).append("default")
        inner = {k: ("loop-break" if v == "break" else v) for k, v in _loop_exits(exits).items()}
        inner[m] = "break"
        cases, blocks = [], []
        for tgt, lits in targets.items():
            if tgt == m:
                blk = Block()
            else:
                blk = self.nested(tgt, inner)
                _drop_trailing(blk, "break")
            cases.append(lits)
            blocks.append(blk)
        if not any("default" in c for c in cases):
            cases.append(["default"])
            blocks.append(Block())
        self.b.emit("switch", [sel], blocks=blocks, cases=cases)
        return m

    def loop(self, header: int, merge: Instruction, term: Instruction):
        m, cont = merge.ops[0], merge.ops[1]
        body_exits = {m: "break", cont: "continue"}
        body = Block()
        with self.b.at(body):
            self.scopes.append({})
            try:
                self.lower_block(header)
                self.set_loc(term)
                self.region(self.terminator(header, term, None, body_exits), body_exits)
            finally:
                self.scopes.pop()
        _drop_trailing(body, "continue")
        continuing = Block()
        if cont != header:
            with self.b.at(continuing):
                self.scopes.append({})
                try:
                    self.continue_construct(cont, header, m)
                finally:
                    self.scopes.pop()
        self.b.emit("loop", [], blocks=[body, continuing])
        return m

    def continue_construct(self, label: int, header: int, m: int):
        """The continue construct, ending in the back edge: a plain branch to the header, or a
        conditional one between the header and the merge (break_if)."""
        exits = {header: "end", m: "break"}
        mine: list = []
        try:
            self.continue_blocks(label, header, m, exits, mine)
        finally:
            self.active.difference_update(mine)
        return

    def continue_blocks(self, label, header, m, exits, mine):
        while label is not None and label not in exits:
            self.enter(label, mine)
            merge, term = self.block_parts(label)
            if merge is not None and merge.opname == "OpLoopMerge":
                label = self.loop(label, merge, term)
                continue
            self.lower_block(label)
            self.set_loc(term)
            if term.opname == "OpBranchConditional" and merge is None and \
                    {term.ops[1], term.ops[2]} == {header, m}:
                self.phi_copies(label)
                cond = self.cond(term.ops[0], term)
                if term.ops[1] == header:
                    cond = self.b.op("unary", [cond], BOOL, fn="not")
                self.b.emit("break_if", [cond])
                return
            label = self.terminator(label, term, merge, exits)
        if label == m:
            self.b.emit("break")

    def set_loc(self, i: Instruction):
        self.info.current = i
        loc = self.info.loc(i)
        self.b.loc = loc


def _loop_exits(exits: dict) -> dict:
    """The exits a nested selection keeps: the enclosing loop's break and continue."""
    return {k: v for k, v in exits.items() if v in ("break", "continue", "loop-break")}


def _place_variables(f: Function):
    """A function's variables without a source line (glslang declares them before its first
    OpLine) take that of their first use, for messages about their type."""
    first: dict = {}
    for i in f.walk():
        for a in i.args:
            if i.loc is not None:
                first.setdefault(a.id, i.loc)
    for i in f.walk():
        if i.op == "var" and i.loc is None and i.result is not None:
            i.loc = first.get(i.result.id)


def _drop_trailing(block: Block, op: str):
    """A `continue` that ends a loop body (or a `break` that ends a switch case) is implied."""
    if block.insts and block.insts[-1].op == op:
        block.insts.pop()


def _storage_scalar(s: ScalarType) -> ScalarType:
    return s


def lower_module(info: ModuleInfo, file: str, constants: dict | None) -> Module:
    from .module import PUSH_CONSTANTS  # noqa: F401  (documented there)
    # Vulkan with VK_NV_cooperative_matrix2's flexibleDimensions feature admits matrices of any
    # multiple of a granularity (emu enables it where a device offers it); Dawn and wgpu do not
    module = Module(file=file, enables=[FLEXIBLE_DIMENSIONS])
    module.structs = list(info.structs)
    module.overrides = list({id(o): o for o in info.overrides.values()}.values())
    if info.needs_constants:
        # lowered for one pipeline's values: they become the defaults the pipeline resolves
        module.needs_constants = True
        module.unset_overrides = list(info.unset_sizes)     # the pipeline's constants must set these
        module.unset_sizes = list(info.unset_sizes)
        for o in module.overrides:
            o.default = info.host_value(o)
    used = set()
    module.globals = list(info.globals.values())
    module.combined_samplers = [g.name for g in info.combined.values()]
    module.binding_aliases = True
    fn_names: dict[int, str] = {}
    taken = set()
    entries = {fid: name for fid, name in info.entry_points}
    for fid, f in info.functions.items():
        base = ident(entries[fid]) if fid in entries else info.name(fid, f"f{fid}")
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        taken.add(name)
        fn_names[fid] = name
    b = Builder()
    for fid, f in info.functions.items():
        demoted: set = set()
        for _ in range(64):
            start = b.next_id
            fl = FunctionLowerer(info, module, b, f, fn_names[fid], fn_names, demoted)
            try:
                func = fl.run()
                break
            except _Retry:
                demoted |= fl.missed
                b.next_id = start
                b.block = None
        else:
            raise EmuError(f"could not place the values of function '{fn_names[fid]}' in structured blocks")
        if fid in entries:
            func.stage = "compute"
            func.workgroup_size = _workgroup_size(info, fid, f)
        module.functions.append(func)
        used.add(fid)
    if not info.entry_points:
        raise EmuError(f"{file} has no GLCompute entry point",
                       hint="emu runs compute shaders: #pragma shader_stage(compute) / OpEntryPoint GLCompute")
    # callees first is not needed: calls are by name
    return module


def _workgroup_size(info: ModuleInfo, fid: int, f: SpirvFunction):
    for gid, d in info.decos.items():
        if d.get("BuiltIn") == ["WorkgroupSize"]:
            return _size_from_composite(info, gid, f)
    modes = info.modes.get(fid, {})
    if "LocalSize" in modes:
        return tuple(modes["LocalSize"][:3])
    if "LocalSizeId" in modes:
        return tuple(_size_item(info, x, f) for x in modes["LocalSizeId"][:3])
    info.fail(f.inst, "the entry point has no LocalSize", hint="declare layout(local_size_x = N) in;")


def _size_item(info: ModuleInfo, id_: int, f):
    if id_ in info.consts:
        return int(info.consts[id_][1])
    if id_ in info.overrides:
        return info.overrides[id_].name
    info.fail(f.inst, f"workgroup size component %{id_} must be a constant or a specialization constant")


def _size_from_composite(info: ModuleInfo, id_: int, f):
    if id_ in info.consts:
        return tuple(int(x) for x in info.consts[id_][1])
    expr = info.spec_exprs.get(id_)
    if expr is None or expr.opname != "OpSpecConstantComposite":
        info.fail(f.inst, "the WorkgroupSize builtin must be a (specialization) constant composite")
    return tuple(_size_item(info, x, f) for x in expr.ops)


__all__ = ["lower_module", "SUBGROUP_SCOPE", "VOID", "ArrayType", "MatrixType", "StructType",
           "VectorType", "with_scalar"]
