"""Lowering of WGSL calls: user functions, type constructors and conversions (builtin functions
are resolved in builtins_table)."""
from __future__ import annotations

import numpy as np

from ...isa.ir import Function, Value
from ...isa.types import (ArrayType, CoopMatrixType, MatrixType, ScalarType, StructType,
                          Type, VOID, VectorType, contains, is_constructible, scalar_of)
from . import ast as A
from .builtins_table import call_builtin_values, coop_construct, lower_builtin
from .types import ABSTRACT_FLOAT, ABSTRACT_INT, MAT_RE, VEC_RE, can_convert, concrete, is_abstract, unify
from .values import (Const, Val, _Partial, _is_type_name, _np_dtype, _num_name, _pylist,
                     _scalar_or_none, _tn, _unify_types, _zero)
from ...numerics import scalar as ns


class CallLowering:
    """Call, constructor and conversion lowering, mixed into `Lowerer`."""

    def e_CallExpr(self, e: A.CallExpr):
        v = self.call(e)
        if v is None:           # only a call statement may drop the (absent) result
            self.err(e, f"'{e.name}(...)' returns no value, so it cannot be used in an expression",
                     hint="call it as a statement, or give the function a return type")
        return v

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
            return coop_construct(self, t, args, e)
        # inferred template types: vec3(...), array(...)
        if isinstance(t, _Partial):
            t = self.not_too_deep(self.infer_partial(t, args, e), e)
        if not args:
            if not is_constructible(t):
                self.err(e, f"{t} has no zero value")
            if contains(t, CoopMatrixType):     # fragments exist only at run time
                return Val(self.b.op("undef", [], t))
            return Const(t, _zero(t, e))      # a huge array's is held lazily (values.ZeroArray)
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
        if not args and p.name != "array":
            # the zero value: vecN() is a vecN<abstract-int>, matCxR() a matCxR<abstract-float>
            return VectorType(ABSTRACT_INT, p.n) if p.name.startswith("vec") else MatrixType(p.n, p.rows, ABSTRACT_FLOAT)
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
        if _shape(src) is None or _shape(src) != _shape(t):     # e.g. i32(v.xx): not a conversion
            self.err(node, f"cannot convert {_tn(src)} to {t}")
        if isinstance(v, Const) and is_abstract(src) and can_convert(scalar_of(src), scalar_of(t)):
            return self.convert_const(v, t, node)
        if src == t:
            return v
        if isinstance(v, Const) and is_abstract(src) and scalar_of(t).name == "bool":
            # bool(e) of an abstract value is e != 0 at any magnitude (not through i32 or f32)
            return Const(t, (np.asarray(v.value, dtype=_np_dtype(scalar_of(src))) != 0).astype(bool).tolist())
        if isinstance(v, Const):
            arr = np.asarray(v.value, dtype=_np_dtype(scalar_of(src)))
            out = (self.tint or ns).convert(arr, _num_name(scalar_of(src)), scalar_of(t).name)
            return Const(t, _pylist(out))
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
        return call_builtin_values(self, name, args, node)


def _shape(t):
    """What a conversion keeps: () for a scalar, (n,) for a vector, (cols, rows) for a matrix."""
    if isinstance(t, ScalarType):
        return ()
    if isinstance(t, VectorType):
        return (t.n,)
    if isinstance(t, MatrixType):
        return (t.cols, t.rows)
    return None
