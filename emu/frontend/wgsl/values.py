"""What lowering computes with: the three kinds of expression result (`Const`, `Val`, `Ref`),
the WGSL name tables, and the constant-folding and type helpers the lowering mixins share.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ...isa.ir import Loc, Value
from ...isa.types import (ArrayType, BOOL, MatrixType, PointerType, ScalarType, StructType, Type,
                          U32, VectorType, scalar_of, width, with_scalar)
from . import ast as A
from .names import ATOMIC_FNS, BIN_OPS, COMPOUND, QUAD_SWAPS, SUBGROUP_FNS  # noqa: F401  (re-exported)
from .types import ABSTRACT_FLOAT, ABSTRACT_INT, MAT_RE, SHORTHANDS, VEC_RE, WGSL_SCALARS, unify
from ...numerics.dtypes import NP
from ...numerics import scalar as ns


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
class SwizzleRef:
    """Several components of a vector in memory (`v.zy`): read as a swizzle of the loaded vector,
    assigned component by component."""
    ref: Ref
    comps: list[int]
    loc: Loc | None = None      # of the swizzle: where its load and swizzle are, when it is read

    @property
    def type(self) -> Type:
        return VectorType(self.ref.type.elem, len(self.comps))


@dataclass
class Ref:
    ptr: Value

    @property
    def type(self) -> Type:
        return self.ptr.type.pointee

    @property
    def ptype(self) -> PointerType:
        return self.ptr.type


SWIZZLE = {c: i for i, c in enumerate("xyzw")} | {c: i for i, c in enumerate("rgba")}
BUILTIN_VALUES = {"global_invocation_id": VectorType(U32, 3), "local_invocation_id": VectorType(U32, 3),
                  "local_invocation_index": U32, "workgroup_id": VectorType(U32, 3),
                  "num_workgroups": VectorType(U32, 3), "subgroup_invocation_id": U32,
                  "subgroup_size": U32, "subgroup_id": U32, "num_subgroups": U32}
COOP_EXTS = ("wgpu_cooperative_matrix", "chromium_experimental_subgroup_matrix")
VEC2U_ATOMICS = "atomic_vec2u_min_max"      # Dawn's atomic<vec2<u32>> with atomicStoreMax/Min


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


class ZeroArray:
    """The zero value of an array too large to hold as a list (array<i32, 636109182>() would
    take gigabytes): WGSL allows it, and a constant index into it is a zero element. It
    becomes an IR value only through `materialize`, which refuses it (`lazy_site`)."""
    __slots__ = ("elem", "count", "site")

    def __init__(self, elem, count: int, site=None):
        self.elem, self.count, self.site = elem, count, site

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, k):
        if not isinstance(k, (int, np.integer)) or not 0 <= k < self.count:
            raise IndexError(k)
        return _copy(self.elem)


def _copy(v):
    return [_copy(x) for x in v] if isinstance(v, list) else v


def lazy_site(v):
    """The constructor of a ZeroArray inside constant value `v` (None when it holds none)."""
    if isinstance(v, ZeroArray):
        return v.site or True
    if isinstance(v, list):
        return next((s for s in map(lazy_site, v) if s is not None), None)
    return None


def _all_zero(v) -> bool:
    """Whether constant value `v` is the zero value of its type (a lazy huge zero array is)."""
    if isinstance(v, ZeroArray):
        return True
    if isinstance(v, list):
        return all(map(_all_zero, v))
    return v == 0 and not (isinstance(v, float) and math.copysign(1.0, v) < 0)


def _zero(t, site=None):
    from ...isa.types import MAX_VALUE_BYTES
    if isinstance(t, StructType):
        return [_zero(m.type, site) for m in t.members]
    if isinstance(t, ArrayType):
        if t.size > MAX_VALUE_BYTES:
            return ZeroArray(_zero(t.elem, site), t.count, site)
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
    """Round an exact literal value to f32/f16 (or f64), to nearest even, in one step."""
    if v == 0:
        return 0.0
    if t.bits == 64:
        try:
            return float(v)                        # int / int in Python: one correct rounding
        except OverflowError:
            return float("inf") if v > 0 else float("-inf")
    info = np.finfo(NP[t.name])
    if abs(v) >= Fraction(2) ** info.maxexp - Fraction(2) ** (info.maxexp - info.nmant - 2):
        return float("inf") if v > 0 else float("-inf")     # the largest finite + half an ulp or more
    f = float(v)                  # nearest f64
    # f64 -> f32/f16 could round twice; correct the rare tie created by the first rounding.
    with np.errstate(over="ignore"):      # beyond the type (the caller says so), or the neighbours of
        x = np.asarray(f, np.float64).astype(NP[t.name])       # the largest finite value: infinite
        lo, hi = np.nextafter(x, np.asarray(-np.inf, x.dtype)), np.nextafter(x, np.asarray(np.inf, x.dtype))
    best = min((x, lo, hi), key=lambda c: (abs(Fraction(float(c)) - v) if np.isfinite(c) else Fraction(10) ** 400,
                                           int(np.asarray(c).view(np.uint32 if t.bits == 32 else np.uint16)) & 1))
    return float(best)


def _np_dtype(s: ScalarType):
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
    return _pylist(ns.unary(fn, s.name, np.asarray(x, _np_dtype(s))))


def _np_binary(fn, t, a, b, lw, node):
    s = scalar_of(t)
    if s is ABSTRACT_INT or s is ABSTRACT_FLOAT:
        return _map2(a, b, lambda x, y: _abstract_binary(fn, s, x, y, lw, node))
    if fn in ("div", "rem") and s.is_int and np.any(np.asarray(b) == 0):
        lw.err(node, "integer division by zero in a constant expression")
    res = (getattr(lw, "tint", None) or ns).binary(fn, s.name, np.asarray(a, _np_dtype(s)), np.asarray(b, _np_dtype(s)))
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
            import math      # x % 0 and inf % y are NaN (said as such by the caller), not a ValueError
            r = math.fmod(x, y) if y != 0 and math.isfinite(x) else float("nan")
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
    bits = s.bits
    if np.any(np.asarray(b) >= bits):
        lw.err(node, f"shift amount {b} must be less than {bits} in a constant expression")
    return _pylist(ns.binary(fn, s.name, np.asarray(a, _np_dtype(s)), np.asarray(b, np.uint32)))
