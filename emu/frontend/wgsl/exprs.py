"""Lowering of WGSL expressions (literals, names, operators, member and index access) to IR
values, references or folded constants."""
from __future__ import annotations

import math

import numpy as np

from ...isa import ops as OPS_MOD
from ...isa.ir import Block
from ...isa.types import (ArrayType, BOOL, CoopMatrixType, F16, F32, F64, I32, I64, MatrixType, PointerType, ScalarType,
                          StructType, TupleType, Type, U32, U64, VectorType, scalar_of, width,
                          with_scalar)
from . import ast as A
from .types import ABSTRACT_FLOAT, ABSTRACT_INT, concrete, is_abstract, unify
from .values import (BIN_OPS, BUILTIN_VALUES, Const, NeedsConstants, Ref, SWIZZLE, SwizzleRef, Val, _flatten, _map,
                     _np_binary, _np_shift, _np_unary, _round_fraction, _scalar_or_none, _splat,
                     _tn, loc_of)


class ExpressionLowering:
    """Expression lowering, mixed into `Lowerer`."""

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
        t = {"": ABSTRACT_INT, "i": I32, "u": U32, "li": I64, "lu": U64}[e.suffix]
        if t in (I64, U64):
            self.int64_use(e, f"the literal {e.text}")
        if t is ABSTRACT_INT and not -(1 << 63) <= e.value < (1 << 63):
            self.err(e, f"integer literal {e.text or e.value} does not fit in 64 bits")
        return self.convert_const(Const(ABSTRACT_INT, e.value), t, e) if t is not ABSTRACT_INT else Const(t, e.value)

    def e_FloatLiteral(self, e: A.FloatLiteral):
        v = e.value
        if e.suffix == "h":
            self.require(e, "f16", "an f16 literal")
        if e.suffix == "lf":
            self.f64_use(e, f"the literal {e.text}")
        t = {"": ABSTRACT_FLOAT, "f": F32, "h": F16, "lf": F64}[e.suffix]
        f = float(v)
        if t is ABSTRACT_FLOAT:
            return Const(t, f)
        r = _round_fraction(v, t)
        if self.tint and t is F16:          # Tint: the nearest f32, then toward zero
            r = float(self.tint.quantize_f16(np.float32(_round_fraction(v, F32))))
        if not np.isfinite(r):            # rounds to an infinity: WGSL refuses the literal
            self.err(e, f"{e.text or v} is out of range of {t}",
                     hint=f"the largest finite {t} is {'65504' if t is F16 else '3.40282347e+38'}")
        return Const(t, self.scalar_value(r, t, e))

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
                if thing.default is None and self.defer_unset:
                    self.unset_overrides.setdefault(thing.name, e)
                    if self.in_type:
                        self.unset_sizes.setdefault(thing.name, e)
                    return Const(thing.type, 1)
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
            if g.space == "handle":         # a texture or sampler: the value itself, no reference
                return Val(self.b.op("global", [], g.type, name=g.name))
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

    def coop_binary(self, op: str, lhs, rhs, node):
        """naga's operators on cooperative matrices: m + m and m - m of one type, element by element
        (the lane maps agree, so fragment by fragment), and m * s or s * m by a scalar of the element
        type. Tint has none of them (Dawn spells scaling subgroupMatrixScalarMultiply)."""
        lt, rt = lhs.type, rhs.type
        naga = "wgpu_cooperative_matrix" in self.m.enables
        if naga and op in ("+", "-") and lt == rt:
            return Val(self.b.op("binary", [self.materialize(lhs), self.materialize(rhs)], lt,
                                 fn=BIN_OPS[op]))
        if naga and op == "*" and isinstance(lt, CoopMatrixType) != isinstance(rt, CoopMatrixType):
            m, s = (lhs, rhs) if isinstance(lt, CoopMatrixType) else (rhs, lhs)
            if _scalar_or_none(s.type) is not None and isinstance(s.type, ScalarType) and \
                    unify(_scalar_or_none(s.type), m.type.elem) == m.type.elem:
                return Val(self.b.op("coop_scalar", [self.materialize(m), self.materialize(s, m.type.elem)],
                                     m.type, fn="mul"))
        self.err(node, f"no operator '{op}' for {_tn(lt)} and {_tn(rt)}",
                 hint="naga has + and - of two matrices of one type and * by a scalar of the element type; "
                      "Dawn's matrices take subgroupMatrixScalarAdd/Subtract/Multiply; multiply matrices "
                      "with coopMultiplyAdd (Dawn: subgroupMatrixMultiplyAccumulate)")

    def binary_values(self, op: str, lhs, rhs, node):
        lt, rt = lhs.type, rhs.type
        if isinstance(lt, CoopMatrixType) or isinstance(rt, CoopMatrixType):
            return self.coop_binary(op, lhs, rhs, node)
        if isinstance(lt, MatrixType) or isinstance(rt, MatrixType):
            return self.matrix_binary(op, lhs, rhs, node)
        ls, rs = _scalar_or_none(lt), _scalar_or_none(rt)
        if ls is None or rs is None:
            self.err(node, f"no operator '{op}' for {_tn(lt)} and {_tn(rt)}")
        fn = BIN_OPS[op]
        if op in ("<<", ">>"):
            if not ls.is_int:
                self.err(node, f"'{op}' needs an integer on the left, not {_tn(lt)}")
            if not rs.is_int or (rs != U32 and not is_abstract(rt)):
                self.err(node, f"the shift amount must be u32, not {_tn(rt)}",
                         hint=None if not rs.is_int else f"convert it: {with_scalar(rt, U32)}(...)")
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
        rt = result or t
        if self.tint and scalar_of(t) == F16:       # Tint: in float, each f16 result quantized
            value = f(with_scalar(t, F32), *[a.value for a in args])
            if scalar_of(rt) == F16:
                value = _map(value, lambda x: float(self.tint.quantize_f16(np.float32(x))))
            return self.finite_const(rt, value, node)
        return self.finite_const(rt, f(t, *[a.value for a in args]), node)

    def finite_const(self, rt: Type, value, node) -> Const:
        """A folded constant expression: WGSL rejects one of float type that is infinite or NaN."""
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
            if isinstance(base, SwizzleRef):        # v.zyx.xy: components of the vector in memory
                base, comps = base.ref, [base.comps[c] for c in comps]
            if len(comps) == 1:
                return self.component(base, comps[0], t.elem, e)
            if isinstance(base, Ref):
                return SwizzleRef(base, comps, loc_of(e))
            v = self.value(base)
            rt = VectorType(t.elem, len(comps))
            if isinstance(v, Const):
                return Const(rt, [v.value[c] for c in comps])
            return Val(self.b.op("swizzle", [v.v], rt, components=comps))
        self.err(e, f"{_tn(t)} has no members", hint="members exist on structs and vectors")

    def swizzle_index(self, base: SwizzleRef, e: A.IndexExpr) -> Ref:
        """v.zyx[i]: component zyx[i] of the vector in memory."""
        t = base.type
        idx = self.value(self.expr(e.index))
        s = _scalar_or_none(idx.type)
        if not isinstance(idx.type, ScalarType) or s is None or not s.is_int:
            self.err(e.index, f"an index must be i32 or u32, not {_tn(idx.type)}")
        if isinstance(idx, Const):
            if not 0 <= int(idx.value) < t.n:
                self.err(e.index, f"index {idx.value} is out of bounds for {_tn(t)}")
            return self.component(base.ref, base.comps[int(idx.value)], t.elem, e)
        table = self.b.op("const", [], VectorType(U32, t.n), value=list(base.comps))
        which = self.b.op("extract", [table, idx.v], U32, path=[-1])
        p = base.ref.ptype
        return Ref(self.b.op("access", [base.ref.ptr, which], PointerType(p.space, t.elem, p.access), path=[-1]))

    def component(self, base, idx: int, t: Type, node):
        if isinstance(base, Ref):
            p = base.ptype
            return Ref(self.b.op("access", [base.ptr], PointerType(p.space, t, p.access), path=[idx]))
        if isinstance(base, Const):
            return Const(t, base.value[idx])
        return Val(self.b.op("extract", [base.v], t, path=[idx]))

    def e_IndexExpr(self, e: A.IndexExpr):
        return self.index(self.expr(e.base), e)

    def target(self, e):
        """An assignment's left side: as an expression, except that an element of a swizzle of a
        variable (v.zyx[i]) is that component of the variable."""
        e = A.strip_parens(e)
        if isinstance(e, A.IndexExpr):
            return self.index(self.expr(e.base), e, assigned=True)
        return self.expr(e)

    def index(self, base, e: A.IndexExpr, assigned: bool = False):
        if isinstance(base, Val) and isinstance(base.type, PointerType):
            base = Ref(base.v)
        if isinstance(base, SwizzleRef):
            if assigned:
                return self.swizzle_index(base, e)
            base = self.value(base)
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
        if isinstance(idx, Const) and count is None:
            # a runtime-sized array: the index stays an operand, bounded at run time like any other
            if idx.type is ABSTRACT_INT:
                idx = self.convert_const(idx, I32, e.index)
            if int(idx.value) < 0:
                self.err(e.index, f"index {int(idx.value)} is out of bounds for {_tn(t)}")
            idx = Val(self.materialize(idx, idx.type))
        if isinstance(idx, Const):
            k = int(idx.value)
            if k < 0 or k >= count:
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
