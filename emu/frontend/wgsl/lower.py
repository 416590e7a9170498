"""Lowering: WGSL syntax tree -> cooperative IR, with name resolution, WGSL's type rules and
constant evaluation. Both cooperative dialects (wgpu's coop_mat and Dawn's subgroup_matrix)
lower to the same IR ops.

Expressions evaluate to one of three things:
- `Const`: a value known now (abstract or concrete), folded with the same numerics the device uses;
- `Val`: an IR value computed at run time;
- `Ref`: a memory reference (WGSL's reference type): a pointer value, read by `load` when used.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ...errors import EmuError
from ...isa import ops as OPS_MOD
from ...isa.ir import Block, Builder, Function, Global, Loc, Module, Override, Value
from ...isa.types import (BOOL, F16, F32, I32, U32, VOID, ArrayType, AtomicType, CoopMatrixType,
                          MatrixType, Member, PointerType, ScalarType, StructType, TupleType,
                          Type, VectorType, contains_atomic, is_constructible, scalar_of, width,
                          with_scalar)
from . import ast as A
from .types import (ABSTRACT_FLOAT, ABSTRACT_INT, MAT_RE, MATRIX_ELEMS, SHORTHANDS,
                    UNSUPPORTED_TYPES, VEC_RE, WGSL_SCALARS, can_convert, concrete, is_abstract,
                    unify)


@dataclass
class Const:
    type: Type
    value: Any          # python int/float/bool, or nested lists for composites


@dataclass
class Val:
    v: Value

    @property
    def type(self) -> Type:
        return self.v.type


@dataclass
class Ref:
    ptr: Value

    @property
    def type(self) -> Type:
        return self.ptr.type.pointee

    @property
    def ptype(self) -> PointerType:
        return self.ptr.type


BIN_OPS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "rem", "&": "and", "|": "or",
           "^": "xor", "<<": "shl", ">>": "shr", "==": "eq", "!=": "ne", "<": "lt", "<=": "le",
           ">": "gt", ">=": "ge"}
COMPOUND = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "%=": "%", "&=": "&", "|=": "|", "^=": "^",
            "<<=": "<<", ">>=": ">>"}
SWIZZLE = {c: i for i, c in enumerate("xyzw")} | {c: i for i, c in enumerate("rgba")}
BUILTIN_VALUES = {"global_invocation_id": VectorType(U32, 3), "local_invocation_id": VectorType(U32, 3),
                  "local_invocation_index": U32, "workgroup_id": VectorType(U32, 3),
                  "num_workgroups": VectorType(U32, 3), "subgroup_invocation_id": U32,
                  "subgroup_size": U32, "subgroup_id": U32}
SUBGROUP_FNS = {"subgroupAdd": "add", "subgroupMul": "mul", "subgroupMin": "min", "subgroupMax": "max",
                "subgroupAnd": "and", "subgroupOr": "or", "subgroupXor": "xor",
                "subgroupInclusiveAdd": "inclusive_add", "subgroupExclusiveAdd": "exclusive_add",
                "subgroupInclusiveMul": "inclusive_mul", "subgroupExclusiveMul": "exclusive_mul",
                "subgroupBroadcast": "broadcast", "subgroupBroadcastFirst": "broadcast_first",
                "subgroupShuffle": "shuffle", "subgroupShuffleXor": "shuffle_xor",
                "subgroupShuffleUp": "shuffle_up", "subgroupShuffleDown": "shuffle_down",
                "subgroupBallot": "ballot", "subgroupElect": "elect", "subgroupAll": "all",
                "subgroupAny": "any"}
ATOMIC_FNS = {"atomicLoad": "load", "atomicStore": "store", "atomicAdd": "add", "atomicSub": "sub",
              "atomicMax": "max", "atomicMin": "min", "atomicAnd": "and", "atomicOr": "or",
              "atomicXor": "xor", "atomicExchange": "exchange",
              "atomicCompareExchangeWeak": "compare_exchange_weak"}
COOP_EXTS = ("wgpu_cooperative_matrix", "chromium_experimental_subgroup_matrix")


def _span(node):
    """The whole source range of a node, for error carets."""
    return getattr(node, "full_span", None) or getattr(node, "span", None)


def loc_of(node) -> Loc | None:
    s = getattr(node, "span", None)
    return Loc(s.file, s.line, s.col) if s is not None else None


class NeedsConstants(Exception):
    """An override is used where WGSL needs its value at pipeline creation (an array size, a
    module-scope expression, another override's default): the module is lowered per pipeline,
    with the overrides' values as constants."""


class Lowerer:
    def __init__(self, tree: A.Module, file: str, strict: bool = False, override_values: dict | None = None):
        self.tree, self.file, self.strict = tree, file, strict
        # None: overrides stay run-time values; a dict: lower with them as constants
        self.override_values = override_values
        self.m = Module(file=file, enables=list(tree.enabled))
        self.b = Builder()
        self.warnings: list[EmuError] = []
        self.decls = {}
        for d in tree.decls:
            name = getattr(d, "name", None)
            if name is None:
                continue
            if name in self.decls:
                self.err(d, f"'{name}' is declared twice at module scope",
                         hint=f"rename one of them (the first is at line {self.decls[name].span.line})")
            self.decls[name] = d
        self.bound: dict[str, tuple] = {}      # module-scope name -> (kind, thing)
        self.resolving: set[str] = set()
        self.scopes: list[dict] = []
        self.fn: A.FnDecl | None = None
        self.ret_type: Type = VOID
        self.loop_depth = 0
        self.switch_depth = 0
        self.in_type = 0

    # -- diagnostics ---------------------------------------------------------------------------
    def err(self, node, message: str, hint: str | None = None):
        raise EmuError(message, _span(node), hint=hint)

    def warn(self, node, message: str, hint: str | None = None):
        self.warnings.append(EmuError(message, _span(node), hint=hint, severity="warning"))

    def require(self, node, ext: str, what: str):
        if ext not in self.m.enables:
            self.err(node, f"{what} needs the '{ext}' extension", hint=f"add 'enable {ext};' at the top of the shader")

    # -- module -----------------------------------------------------------------------------------
    def run(self) -> Module:
        for e in self.m.enables:
            if e not in ("f16", "subgroups", "subgroups_f16") + COOP_EXTS:
                self.warn(self.tree.directives[0], f"extension '{e}' is not known to emu; ignored")
        for d in self.tree.decls:
            if isinstance(d, A.ConstAssert):
                self.const_assert(d)
            elif getattr(d, "name", None) is not None and not isinstance(d, A.FnDecl):
                self.resolve(d.name, d)
        for d in self.tree.decls:
            if isinstance(d, A.FnDecl):
                self.resolve(d.name, d)
        # functions in call order: callees first, as they were resolved
        return self.m

    def resolve(self, name: str, node) -> tuple:
        if name in self.bound:
            return self.bound[name]
        d = self.decls.get(name)
        if d is None:
            return None
        if name in self.resolving:
            self.err(node, f"'{name}' refers to itself (a cycle through module-scope declarations)",
                     hint="WGSL allows no recursion and no cyclic declarations")
        self.resolving.add(name)
        saved = (self.scopes, self.fn, self.ret_type, self.b.block, self.loop_depth, self.switch_depth)
        self.scopes, self.fn = [], None
        try:
            if isinstance(d, A.StructDecl):
                r = ("type", self.struct(d))
            elif isinstance(d, A.AliasDecl):
                r = ("type", self.type(d.type))
            elif isinstance(d, A.ConstDecl):
                r = ("const", self.const_decl(d))
            elif isinstance(d, A.OverrideDecl):
                r = ("override", self.override(d))
            elif isinstance(d, A.VarDecl):
                r = ("global", self.global_var(d))
            elif isinstance(d, A.FnDecl):
                r = ("fn", self.function(d))
            else:
                r = None
        finally:
            (self.scopes, self.fn, self.ret_type, self.b.block, self.loop_depth, self.switch_depth) = saved
            self.resolving.discard(name)
        self.bound[name] = r
        return r

    def struct(self, d: A.StructDecl) -> StructType:
        members = []
        for m in d.members:
            t = self.type(m.type)
            al = self.const_int(m.align) if m.align is not None else None
            sz = self.const_int(m.size) if m.size is not None else None
            members.append(Member(m.name, t, al, sz))
        st = StructType(d.name, tuple(members))
        self.m.structs.append(st)
        return st

    def const_decl(self, d) -> Const:
        v = self.expr(d.init)
        if not isinstance(v, Const):
            self.err(d.init, f"const '{d.name}' needs a value known at shader-creation time",
                     hint="use 'let' for values computed at run time")
        if d.type is not None:
            v = self.convert_const(v, self.type(d.type), d.init)
        return v

    def override(self, d: A.OverrideDecl) -> Override:
        t = self.type(d.type) if d.type is not None else None
        oid = self.const_int(d.id) if d.id is not None else None
        given = None
        if self.override_values is not None:
            for key in (d.name, str(oid) if oid is not None else None):
                if key is not None and key in self.override_values:
                    given = self.override_values[key]
        default = None
        if d.init is not None and (given is None or t is None):
            v = self.expr(d.init)
            if not isinstance(v, Const):
                raise NeedsConstants()
            if t is None:
                t = concrete(v.type)
            default = self.convert_const(v, t, d.init).value
        if t is None or not isinstance(t, ScalarType):
            self.err(d, f"override '{d.name}' needs a scalar type", hint=f"write 'override {d.name}: u32 = ...;'")
        if given is not None:
            from ...isa.constants import coerce_scalar
            default = coerce_scalar(t, given, f"override '{d.name}'")
        o = Override(d.name, t, oid, default, loc_of(d))
        self.m.overrides.append(o)
        return o

    def global_var(self, d: A.VarDecl) -> Global:
        space = d.address_space or "handle"
        t = self.type(d.type) if d.type is not None else None
        if space not in ("private", "workgroup", "uniform", "storage"):
            self.err(d, f"module-scope var '{d.name}' needs an address space",
                     hint="write var<storage, read_write>, var<uniform>, var<workgroup> or var<private>")
        access = d.access_mode or ("read" if space in ("storage", "uniform") else "read_write")
        if space == "uniform":
            access = "read"
        init = None
        if d.init is not None:
            if space != "private":
                self.err(d.init, f"a var<{space}> cannot have an initializer")
            c = self.expr(d.init)
            if not isinstance(c, Const):
                self.err(d.init, "a module-scope initializer must be a constant expression")
            if t is None:
                t = concrete(c.type)
            init = self.convert_const(c, t, d.init).value
        if t is None:
            self.err(d, f"var '{d.name}' needs a type")
        group = binding = None
        if space in ("storage", "uniform"):
            if d.group is None or d.binding is None:
                self.err(d, f"resource '{d.name}' needs @group and @binding attributes",
                         hint="write @group(0) @binding(N) before 'var'")
            group, binding = self.const_int(d.group), self.const_int(d.binding)
            if contains_atomic(t) and access != "read_write":
                self.err(d, "atomics in storage need access mode read_write")
        elif d.group is not None or d.binding is not None:
            self.err(d, f"@group/@binding only apply to storage and uniform buffers, not var<{space}>")
        if isinstance(t, ArrayType) and t.count is None and space != "storage":
            self.err(d.type, "a runtime-sized array can only live in a storage buffer")
        g = Global(d.name, space, t, access, group, binding, init, loc_of(d))
        for other in self.m.globals:
            if group is not None and (other.group, other.binding) == (group, binding):
                self.err(d, f"@group({group}) @binding({binding}) is already used by '{other.name}'")
        self.m.globals.append(g)
        return g

    def const_assert(self, d: A.ConstAssert):
        v = self.expr(d.expr)
        if not isinstance(v, Const) or v.type != BOOL:
            self.err(d.expr, "const_assert needs a constant bool expression")
        if not v.value:
            self.err(d.expr, "const_assert failed")

    # -- types -------------------------------------------------------------------------------------
    def type(self, te) -> Type:
        if isinstance(te, A.Ident):
            te = te.as_type()
        name, args = te.name, te.args
        if name in WGSL_SCALARS:
            if name == "f16":
                self.require(te, "f16", "the f16 type")
            return WGSL_SCALARS[name]
        if name in SHORTHANDS:
            t = SHORTHANDS[name]
            if scalar_of(t) == F16:
                self.require(te, "f16", "the f16 type")
            return t
        m = VEC_RE.match(name)
        if m:
            return VectorType(self.scalar_arg(te, args, 0), int(m.group(1)))
        m = MAT_RE.match(name)
        if m:
            s = self.scalar_arg(te, args, 0)
            if not s.is_float:
                self.err(te, f"matrices hold f32 or f16, not {s}")
            return MatrixType(int(m.group(1)), int(m.group(2)), s)
        if name == "array":
            if not args:
                self.err(te, "array needs an element type", hint="write array<f32, N> or array<f32>")
            elem = self.type(args[0])
            count = None
            if len(args) > 1:
                self.in_type += 1
                try:
                    count = self.const_int(args[1], what="array size")
                finally:
                    self.in_type -= 1
                if count <= 0:
                    self.err(args[1], f"array size must be positive, not {count}")
            return ArrayType(elem, count)
        if name == "atomic":
            s = self.scalar_arg(te, args, 0)
            if s not in (I32, U32):
                self.err(te, f"atomic<{s}> is not allowed: atomics hold i32 or u32")
            return AtomicType(s)
        if name == "ptr":
            space = _name(args[0]) if args else None
            pointee = self.type(args[1]) if len(args) > 1 else None
            if space is None or pointee is None:
                self.err(te, "ptr needs an address space and a type", hint="write ptr<function, f32>")
            access = _name(args[2]) if len(args) > 2 else ("read" if space == "uniform" else "read_write" if space != "storage" else "read")
            return PointerType(space, pointee, access)
        if name.startswith("coop_mat"):
            return self.naga_coop_type(te)
        if name.startswith("subgroup_matrix_"):
            return self.dawn_coop_type(te)
        if name.startswith(UNSUPPORTED_TYPES):
            self.err(te, f"'{name}': textures and samplers are not supported by emu (compute-only)",
                     hint="emu runs compute shaders over buffers; use storage buffers instead")
        r = self.resolve(name, te)
        if r is not None and r[0] == "type":
            if args:
                self.err(te, f"'{name}' takes no template arguments")
            return r[1]
        if r is None:
            self.err(te, f"unknown type '{name}'")
        self.err(te, f"'{name}' is not a type")

    def scalar_arg(self, te, args, i) -> ScalarType:
        if len(args) <= i:
            self.err(te, f"'{te.name}' needs an element type", hint=f"write {te.name}<f32>")
        t = self.type(args[i])
        if not isinstance(t, ScalarType):
            self.err(args[i], f"expected a scalar type, not {t}")
        return t

    def naga_coop_type(self, te) -> CoopMatrixType:
        self.require(te, "wgpu_cooperative_matrix", f"'{te.name}'")
        import re
        m = re.match(r"coop_mat(\d+)x(\d+)$", te.name)
        if not m or len(te.args) != 2:
            self.err(te, f"'{te.name}' is not a cooperative matrix type",
                     hint="write coop_mat16x16<f16, A> (or 8x8); the role is A, B or C")
        cols, rows = int(m.group(1)), int(m.group(2))
        elem = self.matrix_elem(te.args[0])
        role = _name(te.args[1])
        if role not in ("A", "B", "C"):
            self.err(te.args[1], f"cooperative matrix role must be A, B or C, not {role}")
        return CoopMatrixType(rows, cols, elem, role)

    def dawn_coop_type(self, te) -> CoopMatrixType:
        self.require(te, "chromium_experimental_subgroup_matrix", f"'{te.name}'")
        kind = te.name[len("subgroup_matrix_"):]
        if kind not in ("left", "right", "result") or len(te.args) != 3:
            self.err(te, f"'{te.name}' is not a subgroup matrix type",
                     hint="write subgroup_matrix_left<T, K, M>, subgroup_matrix_right<T, N, K> or "
                          "subgroup_matrix_result<T, N, M> (columns before rows)")
        elem = self.matrix_elem(te.args[0])
        cols = self.const_int(te.args[1], what="matrix columns")
        rows = self.const_int(te.args[2], what="matrix rows")
        role = {"left": "A", "right": "B", "result": "C"}[kind]
        return CoopMatrixType(rows, cols, elem, role)

    def matrix_elem(self, node) -> ScalarType:
        n = _name(node)
        if n not in MATRIX_ELEMS:
            self.err(node, f"'{n}' cannot be a matrix element type",
                     hint="use one of f16, f32, i32, u32, i8, u8")
        if n == "f16":
            self.require(node, "f16", "f16 matrices")
        return MATRIX_ELEMS[n]

    # -- constants -----------------------------------------------------------------------------
    def const_int(self, e, what: str = "value") -> int:
        v = self.expr(e)
        if isinstance(v, Val) and v.v is not None:
            inst = self._defining(v.v)
            if inst is not None and inst.op == "override":
                return inst.attrs["name"]
        if not isinstance(v, Const) or not isinstance(v.type, ScalarType) or not v.type.is_int:
            self.err(e, f"the {what} must be a constant integer expression")
        return int(v.value)

    def _defining(self, value: Value):
        blk = self.b.block
        if blk is None:
            return None
        for inst in reversed(blk.insts):
            if inst.result is value:
                return inst
        return None

    def convert_const(self, c: Const, t: Type, node) -> Const:
        """An abstract (or matching concrete) constant as type `t`, checking it is representable."""
        if c.type == t:
            return c
        if isinstance(t, ArrayType) and isinstance(c.type, ArrayType):
            if t.count != c.type.count:
                self.err(node, f"cannot use {c.type} as {t}")
            return Const(t, [self.convert_const(Const(c.type.elem, x), t.elem, node).value for x in c.value])
        try:
            cs, ts = scalar_of(c.type), scalar_of(t)
        except TypeError:
            self.err(node, f"cannot use a value of type {_tn(c.type)} as {t}")
        if width(c.type) != width(t) or type(c.type) is not type(t) and not (
                isinstance(c.type, ScalarType) and isinstance(t, ScalarType)):
            if not (isinstance(t, MatrixType) and isinstance(c.type, MatrixType) and
                    (t.cols, t.rows) == (c.type.cols, c.type.rows)):
                self.err(node, f"cannot use a value of type {_tn(c.type)} as {t}")
        if not can_convert(cs, ts):
            self.err(node, f"cannot use a value of type {_tn(c.type)} as {t}",
                     hint=f"convert it explicitly with {ts}(...)")
        return Const(t, _map(c.value, lambda x: self.scalar_value(x, ts, node)))

    def scalar_value(self, x, t: ScalarType, node):
        if t is ABSTRACT_FLOAT:
            return float(x)
        if t.is_int:
            if isinstance(x, float) and not float(x).is_integer():
                self.err(node, f"{x} is not an integer")
            x = int(x)
            lo, hi = (-(1 << 31), (1 << 31) - 1) if t == I32 else (0, (1 << 32) - 1)
            if not lo <= x <= hi:
                self.err(node, f"{x} does not fit in {t} ({lo}..{hi})",
                         hint="WGSL rejects constants out of range of their type")
            return x
        if t.is_float:
            from ...numerics.dtypes import NP
            v = float(np.asarray(float(x), np.float64).astype(NP[t.name]))
            if np.isinf(v) and np.isfinite(float(x)):
                self.err(node, f"{x} is out of range of {t}")
            return v
        if t == BOOL:
            return bool(x)
        return x

    def materialize(self, e, t: Type | None = None) -> Value:
        """An IR value for `e` (constants become const ops, references are loaded)."""
        if isinstance(e, Ref):
            return self.emit_load(e)
        if isinstance(e, Val):
            return e.v
        ct = t if t is not None else concrete(e.type)
        c = self.convert_const(e, ct, None) if ct != e.type else e
        return self.b.op("const", [], ct, value=_freeze(c.value))

    def emit_load(self, r: Ref) -> Value:
        if r.ptype.access == "write":
            self.err(None, "cannot read through a write-only reference")
        if isinstance(r.type, AtomicType):
            return self.b.op("atomic", [r.ptr], r.type.elem, fn="load")
        return self.b.op("load", [r.ptr], r.type)

    def value(self, e):
        """`e` as an rvalue: references are loaded; constants stay constants."""
        if isinstance(e, Ref):
            return Val(self.emit_load(e))
        return e

    # -- functions -------------------------------------------------------------------------------
    def function(self, d: A.FnDecl) -> Function:
        if d.stage in ("vertex", "fragment"):
            self.err(d, f"@{d.stage} entry points are not supported: emu runs compute shaders",
                     hint="emu is a compute-only device")
        params, builtins = [], {}
        self.fn = d
        self.scopes = [{}]
        body = Block()
        self.b.block = body
        self.b.loc = loc_of(d)
        prelude = []
        for i, p in enumerate(d.params):
            if d.stage == "compute":
                bname = p.builtin
                t = self.type(p.type)
                if bname is not None:
                    want = BUILTIN_VALUES.get(bname)
                    if want is None:
                        self.err(p, f"@builtin({bname}) is not a compute-shader input")
                    if bname in ("subgroup_invocation_id", "subgroup_size", "subgroup_id"):
                        self.subgroup_use(p, f"@builtin({bname})")
                    if t != want:
                        self.err(p.type, f"@builtin({bname}) has type {want}, not {t}")
                    v = self.b.value(t, p.name)
                    builtins[len(params)] = bname
                    params.append(v)
                    self.scopes[-1][p.name] = Val(v)
                elif isinstance(t, StructType):
                    vals = []
                    for m, sm in zip(t.members, self.struct_decl(t).members):
                        bn = sm.builtin
                        if bn is None or BUILTIN_VALUES.get(bn) != m.type:
                            self.err(sm, "every member of an entry-point input struct needs a matching @builtin")
                        v = self.b.value(m.type, f"{p.name}.{m.name}")
                        builtins[len(params)] = bn
                        params.append(v)
                        vals.append(v)
                    prelude.append((p.name, t, vals))
                else:
                    self.err(p, f"entry-point parameter '{p.name}' needs a @builtin attribute")
            else:
                t = self.type(p.type)
                if isinstance(t, PointerType) and t.space not in ("function", "private", "workgroup", "storage", "uniform"):
                    self.err(p.type, f"bad address space {t.space}")
                v = self.b.value(t, p.name)
                params.append(v)
                self.scopes[-1][p.name] = Val(v)
        for name, t, vals in prelude:
            self.scopes[-1][name] = Val(self.b.op("construct", vals, t))
        self.ret_type = self.type(d.return_type) if d.return_type is not None else VOID
        if d.stage == "compute" and self.ret_type != VOID:
            self.err(d.return_type, "a compute entry point returns nothing")
        wg = None
        if d.stage == "compute":
            sizes = d.workgroup_size
            if not sizes:
                self.err(d, "a compute entry point needs @workgroup_size",
                         hint="add @workgroup_size(64) (or x, y, z) before 'fn'")
            wg = tuple([self.workgroup_dim(s) for s in sizes] + [1] * (3 - len(sizes)))
        fn = Function(d.name, params, self.ret_type, body, d.stage, wg, builtins, loc_of(d))
        self.block_stmts(d.body.body)
        if self.ret_type != VOID and not _returns(d.body.body):
            self.err(d, f"function '{d.name}' must return a {self.ret_type} on every path",
                     hint="end the function with a return statement")
        self.m.functions.append(fn)
        return fn

    def struct_decl(self, t: StructType) -> A.StructDecl:
        return self.decls[t.name]

    def workgroup_dim(self, e):
        v = self.expr(e)
        if isinstance(v, Const):
            c = self.convert_const(v, concrete(v.type), e)
            if not isinstance(c.type, ScalarType) or not c.type.is_int or c.value < 1:
                self.err(e, "workgroup size must be a positive integer")
            return int(c.value)
        if isinstance(v, Val):
            inst = self._defining(v.v)
            if inst is not None and inst.op == "override":
                self.b.block.insts.remove(inst)
                return inst.attrs["name"]
        self.err(e, "workgroup size must be a constant or an override",
                 hint="emu supports @workgroup_size(N) with N a constant expression or an override name")

    def subgroup_use(self, node, what: str):
        if "subgroups" not in self.m.enables:
            # naga runs subgroup operations without the directive, Tint requires it.
            if self.strict:
                self.warn(node, f"{what} used without 'enable subgroups;': naga accepts this, Tint (Dawn, Chrome) rejects it",
                          hint="add 'enable subgroups;' to run on every WebGPU implementation")

    # -- statements ------------------------------------------------------------------------------
    def block_stmts(self, stmts):
        self.scopes.append({})
        try:
            for s in stmts:
                self.stmt(s)
        finally:
            self.scopes.pop()

    def sub_block(self, stmts) -> Block:
        blk = Block()
        with self.b.at(blk):
            self.block_stmts(stmts)
        return blk

    def stmt(self, s):
        self.b.loc = loc_of(s)
        m = getattr(self, "s_" + type(s).__name__, None)
        if m is None:
            self.err(s, f"unsupported statement {type(s).__name__}")
        m(s)

    def declare(self, node, name: str, binding):
        scope = self.scopes[-1]
        if name in scope:
            self.err(node, f"'{name}' is already declared in this scope")
        scope[name] = binding

    def s_CompoundStmt(self, s):
        self.block_stmts(s.body)

    def s_VarDecl(self, s: A.VarDecl):
        if s.address_space not in (None, "function"):
            self.err(s, f"a function-scope var must be in the function address space, not {s.address_space}")
        t = self.type(s.type) if s.type is not None else None
        init = None
        if s.init is not None:
            e = self.value(self.expr(s.init))
            if t is None:
                t = concrete(e.type)
            init = self.coerce(e, t, s.init)
        if t is None:
            self.err(s, f"var '{s.name}' needs a type or an initializer")
        if isinstance(t, CoopMatrixType):
            pass
        elif not is_constructible(t) and not isinstance(t, CoopMatrixType):
            self.err(s.type or s, f"a function variable cannot have type {t}")
        ptr = self.b.op("var", [init] if init is not None else [], PointerType("function", t, "read_write"),
                        name=s.name)
        ptr.name = s.name
        self.declare(s, s.name, Ref(ptr))

    def s_LetDecl(self, s: A.LetDecl):
        e = self.value(self.expr(s.init))
        if s.type is not None:
            t = self.type(s.type)
            e = Val(self.coerce(e, t, s.init)) if not (isinstance(e, Const) and not is_abstract(e.type) and e.type == t) else e
        if isinstance(e, Const):
            # A let binds a run-time value of a concrete type.
            e = Val(self.materialize(e))
        e.v.name = e.v.name or s.name
        self.declare(s, s.name, e)

    def s_ConstDecl(self, s: A.ConstDecl):
        self.declare(s, s.name, self.const_decl(s))

    def s_ConstAssert(self, s):
        self.const_assert(s)

    def s_AssignStmt(self, s: A.AssignStmt):
        if s.lhs is None:
            e = self.value(self.expr(s.rhs))
            if isinstance(e, Const):
                return
            return
        target = self.expr(s.lhs)
        root = A.strip_parens(s.lhs)
        while isinstance(root, (A.MemberExpr, A.IndexExpr)):
            root = A.strip_parens(root.base)
        if not isinstance(target, Ref) and isinstance(root, A.Ident) and self.lookup(root.name) is not None:
            kind = "a const" if isinstance(self.lookup(root.name), Const) else "a let or a parameter"
            self.err(s.lhs, f"cannot assign to '{root.name}': it is {kind}, which is immutable",
                     hint=f"declare it with 'var {root.name} = ...;' to change it")
        if not isinstance(target, Ref):
            self.err(s.lhs, "cannot assign to this expression: it is not a variable or a part of one",
                     hint="only var, memory locations and their components can be assigned")
        if target.ptype.access == "read":
            self.err(s.lhs, f"cannot assign through a read-only reference ({target.ptype.space}, read)",
                     hint="declare the buffer var<storage, read_write>")
        if isinstance(target.type, AtomicType):
            self.err(s.lhs, "atomics are written with atomicStore", hint="use atomicStore(&x, value)")
        if s.op == "=":
            rhs = self.value(self.expr(s.rhs))
        else:
            rhs = self.binary_values(COMPOUND[s.op], Val(self.emit_load(target)),
                                     self.value(self.expr(s.rhs)), s)
        self.b.emit("store", [target.ptr, self.coerce(rhs, target.type, s.rhs)])

    def s_IncDecStmt(self, s: A.IncDecStmt):
        target = self.expr(s.target)
        if not isinstance(target, Ref) or not isinstance(target.type, ScalarType) or not target.type.is_int:
            self.err(s.target, f"{s.op} needs an integer variable")
        new = self.binary_values("+" if s.op == "++" else "-", Val(self.emit_load(target)),
                                 Const(ABSTRACT_INT, 1), s)
        self.b.emit("store", [target.ptr, self.coerce(new, target.type, s)])

    def cond(self, e, node) -> Value:
        v = self.value(self.expr(e))
        if v.type != BOOL:
            self.err(e, f"a condition must be bool, not {_tn(v.type)}")
        return self.materialize(v)

    def s_IfStmt(self, s: A.IfStmt):
        c = self.cond(s.cond, s)
        then = self.sub_block(s.body.body)
        if s.orelse is None:
            other = Block()
        elif isinstance(s.orelse, A.IfStmt):
            other = Block()
            with self.b.at(other):
                self.scopes.append({})
                self.stmt(s.orelse)
                self.scopes.pop()
        else:
            other = self.sub_block(s.orelse.body)
        self.b.loc = loc_of(s)
        self.b.emit("if", [c], blocks=[then, other])

    def s_LoopStmt(self, s: A.LoopStmt):
        self.loop_depth += 1
        body, cont = Block(), Block()
        self.scopes.append({})
        with self.b.at(body):
            for st in s.body:
                self.stmt(st)
        if s.continuing is not None:
            with self.b.at(cont):
                self.scopes.append({})
                for st in s.continuing.body:
                    self.stmt(st)
                if s.continuing.break_if is not None:
                    self.b.loc = loc_of(s.continuing.break_if)
                    self.b.emit("break_if", [self.cond(s.continuing.break_if.cond, s)])
                self.scopes.pop()
        self.scopes.pop()
        self.loop_depth -= 1
        self.b.loc = loc_of(s)
        self.b.emit("loop", [], blocks=[body, cont])

    def s_ForStmt(self, s: A.ForStmt):
        self.scopes.append({})
        if s.init is not None:
            self.stmt(s.init)
        self.loop_depth += 1
        body, cont = Block(), Block()
        with self.b.at(body):
            if s.cond is not None:
                self.break_unless(s.cond, s)
            self.block_stmts(s.body.body)
        if s.update is not None:
            with self.b.at(cont):
                self.stmt(s.update)
        self.loop_depth -= 1
        self.b.loc = loc_of(s)
        self.b.emit("loop", [], blocks=[body, cont])
        self.scopes.pop()

    def s_WhileStmt(self, s: A.WhileStmt):
        self.loop_depth += 1
        body = Block()
        with self.b.at(body):
            self.break_unless(s.cond, s)
            self.block_stmts(s.body.body)
        self.loop_depth -= 1
        self.b.loc = loc_of(s)
        self.b.emit("loop", [], blocks=[body, Block()])

    def break_unless(self, cond_expr, s):
        self.b.loc = loc_of(cond_expr)
        c = self.cond(cond_expr, s)
        notc = self.b.op("unary", [c], BOOL, fn="not")
        brk = Block()
        with self.b.at(brk):
            self.b.emit("break")
        self.b.emit("if", [notc], blocks=[brk, Block()])

    def s_BreakStmt(self, s):
        if self.loop_depth == 0 and self.switch_depth == 0:
            self.err(s, "break outside a loop or switch")
        self.b.emit("break")

    def s_ContinueStmt(self, s):
        if self.loop_depth == 0:
            self.err(s, "continue outside a loop")
        self.b.emit("continue")

    def s_BreakIfStmt(self, s):
        self.err(s, "'break if' may only end a continuing block")

    def s_ReturnStmt(self, s: A.ReturnStmt):
        if s.value is None:
            if self.ret_type != VOID:
                self.err(s, f"this function must return a {self.ret_type}")
            self.b.emit("return")
            return
        if self.ret_type == VOID:
            self.err(s.value, "this function returns nothing", hint="remove the value or declare a return type with '-> T'")
        v = self.coerce(self.value(self.expr(s.value)), self.ret_type, s.value)
        self.b.emit("return", [v])

    def s_DiscardStmt(self, s):
        self.err(s, "discard is only for fragment shaders; emu runs compute shaders")

    def s_CallStmt(self, s: A.CallStmt):
        self.call(s.call, statement=True)

    def s_SwitchStmt(self, s: A.SwitchStmt):
        sel = self.value(self.expr(s.selector))
        st = concrete(sel.type)
        if st not in (I32, U32):
            self.err(s.selector, f"a switch selector must be i32 or u32, not {_tn(sel.type)}")
        cases, blocks, seen = [], [], set()
        # selector and case values share one type: an abstract selector takes a typed case's type
        for clause in s.clauses:
            for x in clause.selectors:
                if not isinstance(x, A.DefaultSelector):
                    c = self.expr(x)
                    if isinstance(c, Const) and not is_abstract(c.type):
                        st = c.type if is_abstract(sel.type) else st
        selv = self.materialize(sel, st)
        self.switch_depth += 1
        for clause in s.clauses:
            sels = []
            for x in clause.selectors:
                if isinstance(x, A.DefaultSelector):
                    sels.append("default")
                    continue
                c = self.expr(x)
                if not isinstance(c, Const):
                    self.err(x, "case selectors must be constant expressions")
                v = self.convert_const(c, st, x).value
                if v in seen:
                    self.err(x, f"case {v} appears twice in this switch")
                seen.add(v)
                sels.append(v)
            cases.append(sels)
            blocks.append(self.sub_block(clause.body.body))
        self.switch_depth -= 1
        if sum(c.count("default") for c in cases) != 1:
            self.err(s, "a switch needs exactly one default clause")
        self.b.loc = loc_of(s)
        self.b.emit("switch", [selv], blocks=blocks, cases=cases)

    # -- expressions -----------------------------------------------------------------------------
    def expr(self, e):
        m = getattr(self, "e_" + type(e).__name__, None)
        if m is None:
            self.err(e, f"unsupported expression {type(e).__name__}")
        saved = self.b.loc
        self.b.loc = loc_of(e)
        try:
            return m(e)
        finally:
            self.b.loc = saved

    def e_ParenExpr(self, e):
        return self.expr(e.expr)

    def e_IntLiteral(self, e: A.IntLiteral):
        t = {"": ABSTRACT_INT, "i": I32, "u": U32}[e.suffix]
        if t is ABSTRACT_INT and not -(1 << 63) <= e.value < (1 << 63):
            self.err(e, f"integer literal {e.text or e.value} does not fit in 64 bits")
        return self.convert_const(Const(ABSTRACT_INT, e.value), t, e) if t is not ABSTRACT_INT else Const(t, e.value)

    def e_FloatLiteral(self, e: A.FloatLiteral):
        v = e.value
        if e.suffix == "h":
            self.require(e, "f16", "an f16 literal")
        t = {"": ABSTRACT_FLOAT, "f": F32, "h": F16}[e.suffix]
        f = float(v)
        if t is ABSTRACT_FLOAT:
            return Const(t, f)
        return Const(t, self.scalar_value(_round_fraction(v, t), t, e))

    def e_BoolLiteral(self, e):
        return Const(BOOL, bool(e.value))

    def lookup(self, name: str):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def e_Ident(self, e: A.Ident):
        b = self.lookup(e.name)
        if b is not None:
            return b
        r = self.resolve(e.name, e)
        if r is None:
            if e.name in BUILTIN_VALUES:
                self.err(e, f"'{e.name}' is a builtin value: declare it as an entry-point parameter",
                         hint=f"add '@builtin({e.name}) {e.name}: {BUILTIN_VALUES[e.name]}' to the entry point's parameters")
            self.err(e, f"unknown name '{e.name}'")
        kind, thing = r
        if kind == "const":
            return thing
        if kind == "override":
            if self.override_values is not None:
                if thing.default is None:
                    self.err(e, f"override '{thing.name}' has no default and was not set",
                             hint=f"set it (--override {thing.name}=VALUE, or the pipeline's constants)")
                return Const(thing.type, thing.default)
            if self.b.block is None or self.in_type:
                raise NeedsConstants()
            return Val(self.b.op("override", [], thing.type, name=thing.name))
        if kind == "global":
            g = thing
            if self.fn is None:
                self.err(e, f"module-scope var '{e.name}' cannot be used in a constant expression")
            ptr = self.b.op("global", [], PointerType(g.space, g.type, g.access), name=g.name)
            return Ref(ptr)
        if kind == "type":
            self.err(e, f"'{e.name}' is a type, not a value", hint=f"construct a value with {e.name}(...)")
        self.err(e, f"'{e.name}' is a function; call it with {e.name}(...)")

    def e_UnaryExpr(self, e: A.UnaryExpr):
        if e.op == "&":
            r = self.expr(e.operand)
            if not isinstance(r, Ref):
                self.err(e, "'&' needs a variable or a memory location")
            if r.ptype.space == "handle":
                self.err(e, "cannot take the address of a handle")
            return Val(r.ptr)
        if e.op == "*":
            p = self.value(self.expr(e.operand))
            if not isinstance(p.type, PointerType):
                self.err(e, f"'*' needs a pointer, not {_tn(p.type)}")
            return Ref(p.v)
        v = self.value(self.expr(e.operand))
        t = v.type
        s = _scalar_or_none(t)
        if e.op == "-":
            if s is None or not (s.is_float or s.kind == "sint"):
                self.err(e, f"cannot negate a value of type {_tn(t)}")
            return self.unary("neg", v, e)
        if e.op == "!":
            if s != BOOL:
                self.err(e, f"'!' needs bool, not {_tn(t)}")
            return self.unary("not", v, e)
        if e.op == "~":
            if s is None or not s.is_int:
                self.err(e, f"'~' needs an integer, not {_tn(t)}")
            return self.unary("not", v, e)
        self.err(e, f"unknown operator {e.op}")

    def unary(self, fn, v, node):
        if isinstance(v, Const):
            return self.fold(lambda t, *xs: _np_unary(fn, t, *xs), v.type, [v], node)
        return Val(self.b.op("unary", [v.v], v.type, fn=fn))

    def e_BinaryExpr(self, e: A.BinaryExpr):
        if e.op in ("&&", "||"):
            return self.logical(e)
        lhs = self.value(self.expr(e.lhs))
        rhs = self.value(self.expr(e.rhs))
        return self.binary_values(e.op, lhs, rhs, e)

    def logical(self, e):
        lhs = self.value(self.expr(e.lhs))
        if lhs.type != BOOL:
            self.err(e.lhs, f"'{e.op}' needs bool operands, not {_tn(lhs.type)}")
        if isinstance(lhs, Const):
            if (e.op == "&&") != lhs.value:          # decided by the left side
                return lhs
            rhs = self.value(self.expr(e.rhs))
            if rhs.type != BOOL:
                self.err(e.rhs, f"'{e.op}' needs bool operands, not {_tn(rhs.type)}")
            return rhs
        # Short circuit: the right side runs only where it decides the result.
        t = self.b.op("var", [lhs.v], PointerType("function", BOOL, "read_write"), name="")
        rhs_block = Block()
        with self.b.at(rhs_block):
            rhs = self.value(self.expr(e.rhs))
            if rhs.type != BOOL:
                self.err(e.rhs, f"'{e.op}' needs bool operands, not {_tn(rhs.type)}")
            self.b.emit("store", [t, self.materialize(rhs)])
        c = lhs.v if e.op == "&&" else self.b.op("unary", [lhs.v], BOOL, fn="not")
        self.b.emit("if", [c], blocks=[rhs_block, Block()])
        return Val(self.b.op("load", [t], BOOL))

    def binary_values(self, op: str, lhs, rhs, node):
        lt, rt = lhs.type, rhs.type
        if isinstance(lt, MatrixType) or isinstance(rt, MatrixType):
            return self.matrix_binary(op, lhs, rhs, node)
        ls, rs = _scalar_or_none(lt), _scalar_or_none(rt)
        if ls is None or rs is None:
            self.err(node, f"no operator '{op}' for {_tn(lt)} and {_tn(rt)}")
        fn = BIN_OPS[op]
        if op in ("<<", ">>"):
            if not ls.is_int:
                self.err(node, f"'{op}' needs an integer on the left, not {_tn(lt)}")
            if not rs.is_int:
                self.err(node, f"the shift amount must be u32, not {_tn(rt)}")
            if width(lt) != width(rt):
                self.err(node, f"'{op}' needs operands of the same width ({_tn(lt)}, {_tn(rt)})")
            if isinstance(lhs, Const) and isinstance(rhs, Const):
                if is_abstract(lt) or True:
                    return self.fold(lambda t, a, b: _np_shift(fn, t, a, b, self, node), lt,
                                     [lhs, self.convert_const(rhs, with_scalar(rt, U32), node)], node)
            lt2 = concrete(lt)
            l = self.materialize(lhs, lt2)
            r = self.materialize(rhs, with_scalar(rt, U32))
            return Val(self.b.op("binary", [l, r], lt2, fn=fn))
        s = unify(ls, rs)
        if s is None:
            self.err(node, f"no operator '{op}' for {_tn(lt)} and {_tn(rt)}",
                     hint=f"convert one side, e.g. {rs}(...) or {ls}(...)")
        if fn in ("add", "sub", "mul", "div", "rem", "lt", "le", "gt", "ge") and s == BOOL:
            self.err(node, f"no operator '{op}' for bool")
        if fn in ("and", "or", "xor") and s.is_float:
            self.err(node, f"no operator '{op}' for {_tn(lt)}", hint="bit operations need integers")
        if fn == "xor" and s == BOOL:
            self.err(node, "no operator '^' for bool", hint="use != for exclusive or of bools")
        # shapes: a scalar meets a vector by splatting (arithmetic only)
        wl, wr = width(lt), width(rt)
        if wl != wr:
            if fn in ("add", "sub", "mul", "div", "rem") and (wl == 1 or wr == 1) and \
                    (isinstance(lt, ScalarType) or isinstance(rt, ScalarType)):
                n = max(wl, wr)
                if isinstance(lhs, Const) and isinstance(rhs, Const):
                    lhs = Const(VectorType(ls, n), _splat(lhs.value, n) if wl == 1 else lhs.value)
                    rhs = Const(VectorType(rs, n), _splat(rhs.value, n) if wr == 1 else rhs.value)
                else:
                    if wl == 1:
                        lhs = self.splat(lhs, s, n)
                    else:
                        rhs = self.splat(rhs, s, n)
                lt, rt = lhs.type, rhs.type
            else:
                self.err(node, f"no operator '{op}' for {_tn(lt)} and {_tn(rt)}")
        t = with_scalar(lt, s)
        rtype = with_scalar(t, BOOL) if fn in OPS_MOD.COMPARE_OPS else t
        if isinstance(lhs, Const) and isinstance(rhs, Const):
            a = self.convert_const(lhs, t, node)
            b = self.convert_const(rhs, t, node)
            return self.fold(lambda tt, x, y: _np_binary(fn, tt, x, y, self, node), t, [a, b], node,
                             result=rtype)
        t = concrete(t)
        rtype = concrete(rtype)
        l = self.materialize(lhs, t)
        r = self.materialize(rhs, t)
        return Val(self.b.op("binary", [l, r], rtype, fn=fn))

    def splat(self, v, s: ScalarType, n: int):
        s2 = concrete(s)
        x = self.materialize(v, s2)
        return Val(self.b.op("construct", [x], VectorType(s2, n)))

    def matrix_binary(self, op, lhs, rhs, node):
        """Matrix arithmetic expands into column operations (WGSL leaves the order of a dot
        product's sum to the implementation; we sum in index order)."""
        lt, rt = lhs.type, rhs.type
        if isinstance(lhs, Const):
            lhs = Val(self.materialize(lhs, concrete(lt)))
        if isinstance(rhs, Const):
            rhs = Val(self.materialize(rhs, concrete(rt)))
        lt, rt = lhs.type, rhs.type
        if op in ("+", "-") and lt == rt:
            cols = [self.binary_values(op, self.col(lhs, i), self.col(rhs, i), node) for i in range(lt.cols)]
            return Val(self.b.op("construct", [c.v for c in cols], lt))
        if op == "*":
            if isinstance(lt, MatrixType) and isinstance(rt, ScalarType):
                cols = [self.binary_values("*", self.col(lhs, i), rhs, node) for i in range(lt.cols)]
                return Val(self.b.op("construct", [c.v for c in cols], lt))
            if isinstance(rt, MatrixType) and isinstance(lt, ScalarType):
                return self.matrix_binary("*", rhs, lhs, node)
            if isinstance(lt, MatrixType) and isinstance(rt, VectorType) and rt.n == lt.cols:
                acc = None
                for i in range(lt.cols):
                    comp = Val(self.b.op("extract", [rhs.v], rt.elem, path=[i]))
                    term = self.binary_values("*", self.col(lhs, i), comp, node)
                    acc = term if acc is None else self.binary_values("+", acc, term, node)
                return acc
            if isinstance(lt, VectorType) and isinstance(rt, MatrixType) and lt.n == rt.rows:
                comps = [self.builtin_call("dot", [lhs, self.col(rhs, i)], node) for i in range(rt.cols)]
                return Val(self.b.op("construct", [c.v for c in comps], VectorType(lt.elem, rt.cols)))
            if isinstance(lt, MatrixType) and isinstance(rt, MatrixType) and lt.cols == rt.rows:
                cols = [self.matrix_binary("*", lhs, self.col(rhs, j), node) for j in range(rt.cols)]
                return Val(self.b.op("construct", [c.v for c in cols], MatrixType(rt.cols, lt.rows, lt.elem)))
        self.err(node, f"no operator '{op}' for {_tn(lt)} and {_tn(rt)}")

    def col(self, m: Val, i: int) -> Val:
        return Val(self.b.op("extract", [m.v], m.type.column, path=[i]))

    def fold(self, f, t: Type, args: list[Const], node, result: Type | None = None) -> Const:
        """Evaluate a constant expression with the device's own numerics."""
        value = f(t, *[a.value for a in args])
        rt = result or t
        if scalar_of(rt).is_float and not all(math.isfinite(x) for x in _flatten(value)):
            self.err(node, "this constant expression evaluates to an infinity or NaN, which WGSL "
                           "rejects at shader creation", hint="compute it at run time or change the operands")
        return Const(rt, value)

    def e_MemberExpr(self, e: A.MemberExpr):
        base = self.expr(e.base)
        if isinstance(base, Val) and isinstance(base.type, PointerType):
            base = Ref(base.v)          # pointer_composite_access: p.x means (*p).x
        t = base.type
        if isinstance(t, (StructType, TupleType)):
            idx = t.member_index(e.member) if isinstance(t, StructType) else t.field_index(e.member)
            if idx is None:
                names = ", ".join(m.name for m in t.members) if isinstance(t, StructType) else ", ".join(n for n, _ in t.fields)
                self.err(e, f"{_tn(t)} has no member '{e.member}' (it has: {names})")
            mt = t.members[idx].type if isinstance(t, StructType) else t.fields[idx][1]
            return self.component(base, idx, mt, e)
        if isinstance(t, VectorType):
            comps = [SWIZZLE.get(c) for c in e.member]
            sets = set(e.member) <= set("xyzw") or set(e.member) <= set("rgba")
            if None in comps or not sets or any(c >= t.n for c in comps) or len(comps) > 4:
                self.err(e, f"'.{e.member}' is not a valid swizzle of {t}")
            if len(comps) == 1:
                return self.component(base, comps[0], t.elem, e)
            v = self.value(base)
            rt = VectorType(t.elem, len(comps))
            if isinstance(v, Const):
                return Const(rt, [v.value[c] for c in comps])
            return Val(self.b.op("swizzle", [v.v], rt, components=comps))
        self.err(e, f"{_tn(t)} has no members", hint="members exist on structs and vectors")

    def component(self, base, idx: int, t: Type, node):
        if isinstance(base, Ref):
            p = base.ptype
            return Ref(self.b.op("access", [base.ptr], PointerType(p.space, t, p.access), path=[idx]))
        if isinstance(base, Const):
            return Const(t, base.value[idx])
        return Val(self.b.op("extract", [base.v], t, path=[idx]))

    def e_IndexExpr(self, e: A.IndexExpr):
        base = self.expr(e.base)
        if isinstance(base, Val) and isinstance(base.type, PointerType):
            base = Ref(base.v)
        t = base.type
        if isinstance(t, ArrayType):
            et, count = t.elem, t.count
        elif isinstance(t, VectorType):
            et, count = t.elem, t.n
        elif isinstance(t, MatrixType):
            et, count = t.column, t.cols
        else:
            self.err(e, f"cannot index a value of type {_tn(t)}")
        idx = self.value(self.expr(e.index))
        s = _scalar_or_none(idx.type)
        if not isinstance(idx.type, ScalarType) or s is None or not s.is_int:
            self.err(e.index, f"an index must be i32 or u32, not {_tn(idx.type)}")
        if isinstance(idx, Const):
            k = int(idx.value)
            if k < 0 or (count is not None and k >= count):
                self.err(e.index, f"index {k} is out of bounds for {_tn(t)}")
            if isinstance(base, Const):
                return Const(et, base.value[k])
            return self.component(base, k, et, e)
        if isinstance(base, Const):
            base = Val(self.materialize(base, concrete(t)))
            et = concrete(et)
        iv = idx.v
        if isinstance(base, Ref):
            p = base.ptype
            return Ref(self.b.op("access", [base.ptr, iv], PointerType(p.space, et, p.access), path=[-1]))
        return Val(self.b.op("extract", [base.v, iv], et, path=[-1]))

    # -- calls -------------------------------------------------------------------------------------
    def e_CallExpr(self, e: A.CallExpr):
        return self.call(e)

    def call(self, e: A.CallExpr, statement: bool = False):
        name = e.name
        local = self.lookup(name)
        if local is not None:
            self.err(e, f"'{name}' is a value, not a function")
        r = self.resolve(name, e) if name in self.decls else None
        if r is not None:
            kind, thing = r
            if kind == "fn":
                return self.user_call(thing, e, statement)
            if kind == "type":
                return self.construct(thing, e)
            self.err(e, f"'{name}' is not a function")
        if _is_type_name(name):
            if not e.template_args and (VEC_RE.match(name) or MAT_RE.match(name) or name == "array"):
                m = MAT_RE.match(name)
                t = _Partial(name, int(m.group(1)) if m else int(name[3]) if name != "array" else 0,
                             int(m.group(2)) if m else 0)
                return self.construct(t, e)
            return self.construct(self.type(A.TypeExpr(name, e.template_args, span=e.span)), e)
        from .builtins_table import lower_builtin
        return lower_builtin(self, e, statement)

    def user_call(self, fn: Function, e: A.CallExpr, statement: bool):
        if self.fn is None:
            self.err(e, "function calls are not constant expressions")
        if fn.stage is not None:
            self.err(e, f"'{fn.name}' is an entry point and cannot be called")
        if len(e.args) != len(fn.params):
            self.err(e, f"'{fn.name}' takes {len(fn.params)} arguments, not {len(e.args)}")
        args = []
        for a, p in zip(e.args, fn.params):
            v = self.value(self.expr(a))
            args.append(self.coerce(v, p.type, a))
        inst = self.b.emit("call", args, fn.ret, callee=fn.name)
        if fn.ret == VOID:
            return None
        return Val(inst.result)

    def construct(self, t: Type, e: A.CallExpr):
        args = [self.value(self.expr(a)) for a in e.args]
        if isinstance(t, CoopMatrixType):
            from .builtins_table import coop_construct
            return coop_construct(self, t, args, e)
        # inferred template types: vec3(...), array(...)
        if isinstance(t, _Partial):
            t = self.infer_partial(t, args, e)
        if not args:
            if not is_constructible(t):
                self.err(e, f"{t} has no zero value")
            return Const(t, _zero(t))
        if isinstance(t, ScalarType):
            if len(args) != 1:
                self.err(e, f"{t}(...) takes one argument")
            return self.conversion(args[0], t, e)
        if isinstance(t, VectorType):
            if len(args) == 1 and isinstance(args[0].type, VectorType):
                if args[0].type.n != t.n:
                    self.err(e, f"cannot convert {_tn(args[0].type)} to {t}")
                return self.conversion(args[0], t, e)
            if len(args) == 1:
                s = self.conversion(args[0], t.elem, e)
                if isinstance(s, Const):
                    return Const(t, [s.value] * t.n)
                return Val(self.b.op("construct", [s.v], t))
            return self.gather(t, t.elem, args, t.n, e)
        if isinstance(t, MatrixType):
            if len(args) == 1 and isinstance(args[0].type, MatrixType):
                return self.conversion(args[0], t, e)
            if all(isinstance(a.type, VectorType) for a in args):
                return self.gather(t, t.column, args, t.cols, e, unit=t.column)
            return self.gather(t, t.elem, args, t.cols * t.rows, e)
        if isinstance(t, ArrayType):
            if t.count is None or len(args) != t.count:
                self.err(e, f"{t}(...) needs {t.count} elements, got {len(args)}")
            vals = [self.coerce_keep(a, t.elem, e) for a in args]
            if all(isinstance(v, Const) for v in vals):
                return Const(t, [v.value for v in vals])
            return Val(self.b.op("construct", [self.materialize(v, t.elem) for v in vals], t))
        if isinstance(t, StructType):
            if len(args) != len(t.members):
                self.err(e, f"{t.name}(...) needs {len(t.members)} members, got {len(args)}")
            vals = [self.coerce_keep(a, m.type, e) for a, m in zip(args, t.members)]
            if all(isinstance(v, Const) for v in vals):
                return Const(t, [v.value for v in vals])
            return Val(self.b.op("construct", [self.materialize(v, m.type) for v, m in zip(vals, t.members)], t))
        self.err(e, f"cannot construct a value of type {t}")

    def gather(self, t, unit_t, args, n, e, unit=None):
        """Vector/matrix from components: scalars and vectors flattened in order."""
        comps, total = [], 0
        for a in args:
            at = a.type
            if unit is not None:
                if at.n != unit.n:
                    self.err(e, f"{t}(...) takes {t.cols} column vectors of {unit.n} components")
                comps.append(self.coerce_keep(a, VectorType(t.elem, unit.n), e))
                total += 1
                continue
            if isinstance(at, VectorType):
                comps.append(self.coerce_keep(a, VectorType(unit_t, at.n), e))
                total += at.n
            elif isinstance(at, ScalarType):
                comps.append(self.coerce_keep(a, unit_t, e))
                total += 1
            else:
                self.err(e, f"cannot build {t} from {_tn(at)}")
        if total != n:
            self.err(e, f"{t}(...) needs {n} components, got {total}")
        if all(isinstance(c, Const) for c in comps):
            flat = []
            for c in comps:
                flat.extend(c.value if isinstance(c.value, list) else [c.value])
            if isinstance(t, MatrixType):
                return Const(t, [flat[i * t.rows:(i + 1) * t.rows] for i in range(t.cols)])
            return Const(t, flat)
        return Val(self.b.op("construct", [self.materialize(c, c.type if not is_abstract(c.type) else None) for c in comps], t))

    def infer_partial(self, p: "_Partial", args, e) -> Type:
        if not args:
            self.err(e, f"{p.name}(...) without arguments needs its type written out",
                     hint=f"write {p.name}<f32>(...)")
        if p.name == "array":
            s = args[0].type
            for a in args[1:]:
                s2 = _unify_types(s, a.type)
                if s2 is None:
                    self.err(e, f"array elements have different types ({_tn(s)}, {_tn(a.type)})")
                s = s2
            return ArrayType(s if all(isinstance(a, Const) for a in args) else concrete(s), len(args))
        s = None
        for a in args:
            x = _scalar_or_none(a.type) if not isinstance(a.type, MatrixType) else a.type.elem
            if x is None:
                self.err(e, f"cannot build {p.name} from {_tn(a.type)}")
            s = x if s is None else unify(s, x)
            if s is None:
                self.err(e, f"{p.name}(...) components have different types")
        if not all(isinstance(a, Const) for a in args):
            s = concrete(s)
        if p.name.startswith("vec"):
            return VectorType(s, p.n)
        return MatrixType(p.n, p.rows, s)

    def conversion(self, v, t: Type, node):
        """T(e): value conversion (or identity) of a scalar/vector/matrix."""
        src = v.type
        if isinstance(v, Const) and is_abstract(src) and can_convert(scalar_of(src), scalar_of(t)):
            return self.convert_const(v, t, node)
        if src == t:
            return v
        if isinstance(v, Const):
            from ...numerics import scalar as ns
            arr = np.asarray(v.value, dtype=_np_dtype(scalar_of(src)))
            out = ns.convert(arr, _num_name(scalar_of(src)), scalar_of(t).name)
            return Const(t, _pylist(out))
        if not isinstance(src, (ScalarType, VectorType, MatrixType)):
            self.err(node, f"cannot convert {_tn(src)} to {t}")
        return Val(self.b.op("convert", [v.v], t))

    def coerce_keep(self, v, t: Type, node):
        """`v` as type `t` without materialising constants."""
        if isinstance(v, Const):
            return self.convert_const(v, t, node)
        if v.type != t:
            self.err(node, f"expected {t}, got {_tn(v.type)}",
                     hint=f"convert explicitly with {t}(...)" if isinstance(t, (ScalarType, VectorType)) else None)
        return v

    def coerce(self, v, t: Type, node) -> Value:
        """`v` as an IR value of type `t` (abstract constants convert; nothing else does)."""
        v = self.coerce_keep(v, t, node)
        return self.materialize(v, t)

    def builtin_call(self, name, args, node):
        from .builtins_table import call_builtin_values
        return call_builtin_values(self, name, args, node)


@dataclass(frozen=True)
class _Partial(Type):
    """vecN / matCxR / array written without template arguments: inferred from the arguments."""
    name: str
    n: int = 0
    rows: int = 0


def _is_type_name(name: str) -> bool:
    return (name in WGSL_SCALARS or name in SHORTHANDS or VEC_RE.match(name) is not None
            or MAT_RE.match(name) is not None or name == "array" or name.startswith("coop_mat")
            or name.startswith("subgroup_matrix_"))


def _name(node) -> str | None:
    if isinstance(node, (A.Ident, A.TypeExpr)):
        return node.name
    return None


def _tn(t) -> str:
    if isinstance(t, ScalarType) and t.name.startswith("abstract"):
        return t.name
    return str(t)


def _scalar_or_none(t):
    try:
        return scalar_of(t)
    except TypeError:
        return None


def _unify_types(a: Type, b: Type):
    if a == b:
        return a
    if type(a) is not type(b) or width(a) != width(b):
        return None
    s = unify(scalar_of(a), scalar_of(b)) if isinstance(a, (ScalarType, VectorType)) else None
    return with_scalar(a, s) if s is not None else None


def _map(v, f):
    if isinstance(v, list):
        return [_map(x, f) for x in v]
    return f(v)


def _flatten(v):
    return [y for x in v for y in _flatten(x)] if isinstance(v, list) else [v]


def _splat(v, n):
    return [v] * n


def _freeze(v):
    return list(v) if isinstance(v, tuple) else v


def _zero(t):
    if isinstance(t, StructType):
        return [_zero(m.type) for m in t.members]
    if isinstance(t, ArrayType):
        return [_zero(t.elem) for _ in range(t.count)]
    if isinstance(t, MatrixType):
        return [[0.0] * t.rows for _ in range(t.cols)]
    if isinstance(t, VectorType):
        return [_zero(t.elem)] * t.n
    return False if t == BOOL else 0.0 if t.is_float else 0


def _returns(stmts) -> bool:
    """Whether a statement list ends every path in a return (WGSL's behaviour analysis, simplified)."""
    for s in stmts:
        if isinstance(s, A.ReturnStmt):
            return True
        if isinstance(s, A.IfStmt) and s.orelse is not None:
            other = [s.orelse] if isinstance(s.orelse, A.IfStmt) else s.orelse.body
            if _returns(s.body.body) and _returns(other):
                return True
        if isinstance(s, A.CompoundStmt) and _returns(s.body):
            return True
        if isinstance(s, A.SwitchStmt) and all(_returns(c.body.body) for c in s.clauses):
            return True
        if isinstance(s, A.LoopStmt) and not any(isinstance(x, A.BreakStmt) for x in A.walk(A.CompoundStmt(s.body))):
            return True
    return False


def _round_fraction(v: Fraction, t: ScalarType) -> float:
    """Round an exact literal value to f32/f16, to nearest even, in one step."""
    from ...numerics.dtypes import NP
    if v == 0:
        return 0.0
    f = float(v)                  # nearest f64
    # f64 -> f32/f16 could round twice; correct the rare tie created by the first rounding.
    x = np.asarray(f, np.float64).astype(NP[t.name])
    with np.errstate(over="ignore"):      # the neighbours of the largest finite value are infinite
        lo, hi = np.nextafter(x, np.asarray(-np.inf, x.dtype)), np.nextafter(x, np.asarray(np.inf, x.dtype))
    best = min((x, lo, hi), key=lambda c: (abs(Fraction(float(c)) - v) if np.isfinite(c) else Fraction(10) ** 400,
                                           int(np.asarray(c).view(np.uint32 if t.bits == 32 else np.uint16)) & 1))
    return float(best)


def _np_dtype(s: ScalarType):
    from ...numerics.dtypes import NP
    if s is ABSTRACT_INT:
        return object
    if s is ABSTRACT_FLOAT:
        return np.float64
    return NP[s.name]


def _num_name(s: ScalarType) -> str:
    return "f32" if s is ABSTRACT_FLOAT else "i32" if s is ABSTRACT_INT else s.name


def _pylist(a):
    a = np.asarray(a)
    if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        return a.astype(np.float64).tolist()
    return a.tolist()


def _np_unary(fn, t, x):
    s = scalar_of(t)
    if s is ABSTRACT_INT:
        return _map(x, lambda v: -v if fn == "neg" else ~v)
    if s is ABSTRACT_FLOAT:
        return _map(x, lambda v: -v)
    from ...numerics import scalar as ns
    return _pylist(ns.unary(fn, s.name, np.asarray(x, _np_dtype(s))))


def _np_binary(fn, t, a, b, lw: Lowerer, node):
    s = scalar_of(t)
    if s is ABSTRACT_INT or s is ABSTRACT_FLOAT:
        return _map2(a, b, lambda x, y: _abstract_binary(fn, s, x, y, lw, node))
    from ...numerics import scalar as ns
    if fn in ("div", "rem") and s.is_int and np.any(np.asarray(b) == 0):
        lw.err(node, "integer division by zero in a constant expression")
    res = ns.binary(fn, s.name, np.asarray(a, _np_dtype(s)), np.asarray(b, _np_dtype(s)))
    if s.is_int and fn in ("add", "sub", "mul"):
        exact = _map2(a, b, lambda x, y: {"add": x + y, "sub": x - y, "mul": x * y}[fn])
        if _pylist(res) != exact:
            lw.err(node, f"constant expression overflows {s}", hint="WGSL rejects constant overflow")
    return _pylist(res)


def _map2(a, b, f):
    if isinstance(a, list):
        return [_map2(x, y, f) for x, y in zip(a, b)]
    return f(a, b)


def _abstract_binary(fn, s, x, y, lw, node):
    if fn in ("div", "rem") and s is ABSTRACT_INT and y == 0:
        lw.err(node, "integer division by zero in a constant expression")
    if fn == "add": r = x + y
    elif fn == "sub": r = x - y
    elif fn == "mul": r = x * y
    elif fn == "div":
        if s is ABSTRACT_INT:
            r = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        else:
            r = x / y if y != 0 else (float("inf") if x > 0 else float("-inf") if x < 0 else float("nan"))
    elif fn == "rem":
        if s is ABSTRACT_INT:
            r = abs(x) % abs(y) * (1 if x >= 0 else -1)
        else:
            import math
            r = math.fmod(x, y)
    elif fn == "and": r = x & y
    elif fn == "or": r = x | y
    elif fn == "xor": r = x ^ y
    else:
        return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[fn]
    if s is ABSTRACT_INT and not -(1 << 63) <= r < (1 << 63):
        lw.err(node, "abstract integer constant overflows 64 bits")
    return r


def _np_shift(fn, t, a, b, lw, node):
    s = scalar_of(t)
    if s is ABSTRACT_INT:
        def sh(x, y):
            if y >= 64:
                lw.err(node, f"shift by {y} in a constant expression")
            return x << y if fn == "shl" else x >> y
        r = _map2(a, b, sh)
        return r
    bits = 32
    if np.any(np.asarray(b) >= bits):
        lw.err(node, f"shift amount {b} must be less than {bits} in a constant expression")
    from ...numerics import scalar as ns
    return _pylist(ns.binary(fn, s.name, np.asarray(a, _np_dtype(s)), np.asarray(b, np.uint32)))
