"""WGSL builtin functions: overload resolution (argument and result types) and lowering to IR.

Numeric builtins become one `builtin` op whose arithmetic lives in emu.numerics; constant
arguments fold through the same numerics. Atomics, barriers, subgroup operations and both
cooperative-matrix dialects lower to their own ops.
"""
from __future__ import annotations


import numpy as np

from ...isa.types import (BOOL, F16, F32, I32, U32, ArrayType, AtomicType, CoopMatrixType, MatrixType,
                          PointerType, ScalarType, TupleType, VectorType, scalar_of, width, with_scalar)
from . import ast as A
from .types import ABSTRACT_FLOAT, ABSTRACT_INT, concrete, is_abstract, result_tuple, unify
from .values import (ATOMIC_FNS, QUAD_SWAPS, SUBGROUP_FNS, Const, Ref, Val, _name, _np_dtype, _pylist,
                     _scalar_or_none, _tn)
from ...isa.types import NoScalarType
from ...isa.ops import NO_F64_BUILTINS
from ...numerics import builtins as nb
from .names import TEXTURE_FNS
from .textures import IMPLICIT_LOD, lower_texture

# `lw` below is the Lowerer (lower.py), which reaches these functions through calls.py

# name -> (argument kinds, result rule). Kinds: 'F' float scalar/vector T, 'N' numeric T (int or
# float), 'S' signed numeric, 'I' integer T, 'u32' etc. fixed; results: 'T' same as the generic
# argument, 'S' its scalar, or a fixed type.
_V2F, _V4F = VectorType(F32, 2), VectorType(F32, 4)
GENERIC = {
    **{n: ("F", "T") for n in (
        "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "degrees", "exp",
        "exp2", "floor", "fract", "inverseSqrt", "log", "log2", "radians", "round", "saturate",
        "sin", "sinh", "sqrt", "tan", "tanh", "trunc")},
    "abs": ("N", "T"), "sign": ("S", "T"),
    "min": ("NN", "T"), "max": ("NN", "T"), "clamp": ("NNN", "T"),
    "atan2": ("FF", "T"), "pow": ("FF", "T"), "step": ("FF", "T"),
    "fma": ("FFF", "T"), "smoothstep": ("FFF", "T"),
    **{n: ("I", "T") for n in ("countOneBits", "countLeadingZeros", "countTrailingZeros",
                               "firstLeadingBit", "firstTrailingBit", "reverseBits")},
}
FIXED = {
    "pack4x8snorm": ([_V4F], U32), "pack4x8unorm": ([_V4F], U32),
    "pack2x16snorm": ([_V2F], U32), "pack2x16unorm": ([_V2F], U32), "pack2x16float": ([_V2F], U32),
    "unpack4x8snorm": ([U32], _V4F), "unpack4x8unorm": ([U32], _V4F),
    "unpack2x16snorm": ([U32], _V2F), "unpack2x16unorm": ([U32], _V2F), "unpack2x16float": ([U32], _V2F),
    "pack4xI8": ([VectorType(I32, 4)], U32), "pack4xU8": ([VectorType(U32, 4)], U32),
    "pack4xI8Clamp": ([VectorType(I32, 4)], U32), "pack4xU8Clamp": ([VectorType(U32, 4)], U32),
    "unpack4xI8": ([U32], VectorType(I32, 4)), "unpack4xU8": ([U32], VectorType(U32, 4)),
    "dot4I8Packed": ([U32, U32], I32), "dot4U8Packed": ([U32, U32], U32),
}


def lower_builtin(lw: Lowerer, e: A.CallExpr, statement: bool):
    try:
        return _lower_builtin(lw, e, statement)
    except NoScalarType as x:
        # the rules below assume numbers, vectors or matrices: an array, struct or pointer was given
        lw.err(e, f"'{e.name}' cannot take {x.args[0].split(' has no')[0]}: its arguments are "
                  f"scalars, vectors or matrices")


def _lower_builtin(lw: Lowerer, e: A.CallExpr, statement: bool):
    name = e.name
    if name in ("workgroupBarrier", "storageBarrier", "textureBarrier", "subgroupBarrier"):
        _arity(lw, e, 0)
        if name == "subgroupBarrier":          # naga's (wgpu's subgroup feature); not in Tint
            lw.subgroup_use(e, name)
            if lw.strict:
                lw.warn(e, "subgroupBarrier is naga's: Tint (Dawn, Chrome) has no such function",
                        hint="a workgroupBarrier() runs everywhere (it orders the whole workgroup)")
        lw.b.emit("barrier", kind=name[: -len("Barrier")])
        return None
    if name == "workgroupUniformLoad":
        _arity(lw, e, 1)
        p = lw.value(lw.expr(e.args[0]))
        if not isinstance(p.type, PointerType) or p.type.space != "workgroup":
            lw.err(e, "workgroupUniformLoad needs a pointer into workgroup memory")
        lw.b.emit("barrier", kind="workgroup")
        t = p.type.pointee
        # of an atomic: its value, read atomically
        v = lw.b.op("atomic", [p.v], t.elem, fn="load") if isinstance(t, AtomicType) else lw.b.op("load", [p.v], t)
        lw.b.emit("barrier", kind="workgroup")
        return Val(v)
    if name == "arrayLength":
        _arity(lw, e, 1)
        p = lw.value(lw.expr(e.args[0]))
        if not (isinstance(p.type, PointerType) and isinstance(p.type.pointee, ArrayType)
                and p.type.pointee.count is None):
            lw.err(e, f"arrayLength needs a pointer to a runtime-sized array, not {_tn(p.type)}",
                   hint="pass &buffer (or &buffer.member) of an array<T> in storage")
        return Val(lw.b.op("array_length", [p.v], U32))
    if name == "bitcast":
        _arity(lw, e, 1)
        if len(e.template_args) != 1:
            lw.err(e, "bitcast needs its target type: bitcast<T>(e)")
        t = lw.type(e.template_args[0])
        v = lw.value(lw.expr(e.args[0]))
        src = concrete(v.type)
        if isinstance(v, Const) and is_abstract(v.type):
            v = lw.convert_const(v, src, e)
        ok = isinstance(t, (ScalarType, VectorType)) and isinstance(src, (ScalarType, VectorType)) \
            and width(t) * scalar_of(t).size == width(src) * scalar_of(src).size and scalar_of(t) != BOOL \
            and scalar_of(src) != BOOL
        if not ok:
            lw.err(e, f"cannot bitcast {_tn(v.type)} to {t}: the sizes differ or a type is bool")
        return Val(lw.b.op("bitcast", [lw.materialize(v, src)], t))
    if name in ATOMIC_FNS:
        return _atomic(lw, e, ATOMIC_FNS[name])
    if name in SUBGROUP_FNS:
        return _subgroup(lw, e, SUBGROUP_FNS[name])
    if name in QUAD_SWAPS:
        return _subgroup(lw, e, "shuffle_xor", mask=QUAD_SWAPS[name])
    if name in COOP_FNS:
        return COOP_FNS[name](lw, e)
    if name in TEXTURE_FNS or name in IMPLICIT_LOD:
        return lower_texture(lw, e, statement)
    args = [lw.value(lw.expr(a)) for a in e.args]
    return call_builtin_values(lw, name, args, e)


def _arity(lw, e, n):
    if len(e.args) != n:
        lw.err(e, f"{e.name} takes {n} argument{'s' if n != 1 else ''}, not {len(e.args)}")


def call_builtin_values(lw: Lowerer, name: str, args, node):
    if name in GENERIC:
        kinds, _ = GENERIC[name]
        if len(args) != len(kinds):
            lw.err(node, f"{name} takes {len(kinds)} argument{'s' if len(kinds) != 1 else ''}, not {len(args)}")
        t = _common(lw, name, args, node)
        s = scalar_of(t)
        kind = kinds[0]
        if kind == "F" and not s.is_float or kind == "I" and not s.is_int or \
                kind in "NS" and s == BOOL or kind == "S" and s.kind == "uint":
            what = {"F": "f32 or f16 (or naga's f64)", "I": "i32 or u32", "N": "a number", "S": "a signed number"}[kind]
            lw.err(node, f"{name} needs {what}, not {_tn(t)}")
        if kind == "I":
            t = concrete(t)      # the bit functions take i32/u32 only: an abstract integer becomes i32
        return _emit(lw, name, t, [lw.coerce_keep(a, t, node) for a in args], t, node)
    if name in FIXED:
        params, rt = FIXED[name]
        if len(args) != len(params):
            lw.err(node, f"{name} takes {len(params)} argument(s), not {len(args)}")
        vals = [lw.coerce_keep(a, p, node) for a, p in zip(args, params)]
        return _emit(lw, name, params[0], vals, rt, node)
    if name in ("dot", "length", "distance", "normalize", "cross"):
        n = {"dot": 2, "length": 1, "distance": 2, "normalize": 1, "cross": 2}[name]
        if len(args) != n:
            lw.err(node, f"{name} takes {n} argument(s)")
        t = _common(lw, name, args, node)
        s = scalar_of(t)
        if name != "dot" and not s.is_float or s == BOOL:
            lw.err(node, f"{name} needs float{' vectors' if name != 'length' else ''}, not {_tn(t)}")
        if name in ("dot", "normalize", "cross") and not isinstance(t, VectorType) or \
                name == "cross" and t.n != 3:
            lw.err(node, f"{name} needs {'vec3' if name == 'cross' else 'vector'} arguments, not {_tn(t)}")
        rt = s if name in ("dot", "length", "distance") else t
        return _emit(lw, name, t, [lw.coerce_keep(a, t, node) for a in args], rt, node)
    if name == "mix":
        if len(args) != 3:
            lw.err(node, "mix takes 3 arguments")
        t = _common(lw, name, args[:2], node)
        third = with_scalar(args[2].type, scalar_of(t)) if width(args[2].type) == 1 else t
        if not scalar_of(t).is_float:
            lw.err(node, f"mix needs floats, not {_tn(t)}")
        vals = [lw.coerce_keep(a, t, node) for a in args[:2]] + [lw.coerce_keep(args[2], concrete(third) if not is_abstract(t) else third, node)]
        return _emit(lw, name, t, vals, t, node)
    if name == "select":
        if len(args) != 3:
            lw.err(node, "select takes 3 arguments: select(f, t, cond)")
        t = _common(lw, name, args[:2], node)
        c = args[2]
        if scalar_of(c.type) != BOOL or width(c.type) not in (1, width(t)):
            lw.err(node, f"select's condition must be bool or vec{width(t)}<bool>, not {_tn(c.type)}")
        vals = [lw.coerce_keep(a, t, node) for a in args[:2]] + [c]
        return _emit(lw, name, t, vals, t, node)
    if name in ("all", "any"):
        if len(args) != 1 or scalar_of(args[0].type) != BOOL:
            lw.err(node, f"{name} takes one bool or vector of bool")
        a = args[0]
        if isinstance(a.type, ScalarType):
            return a
        comps = [lw.component(a, i, BOOL, node) for i in range(a.type.n)]
        acc = comps[0]
        for c in comps[1:]:
            acc = lw.binary_values("&" if name == "all" else "|", acc, c, node)
        return acc
    if name in ("extractBits", "insertBits"):
        n = 3 if name == "extractBits" else 4
        if len(args) != n:
            lw.err(node, f"{name} takes {n} arguments")
        t = concrete(_common(lw, name, args[: n - 2], node))     # i32 or u32 only, as the bit functions
        if not scalar_of(t).is_int:
            lw.err(node, f"{name} needs integers, not {_tn(t)}")
        vals = [lw.coerce_keep(a, t, node) for a in args[: n - 2]] + \
               [lw.coerce_keep(a, U32, node) for a in args[n - 2:]]
        return _emit(lw, name, t, vals, t, node)
    if name == "ldexp":
        if len(args) != 2:
            lw.err(node, "ldexp takes 2 arguments")
        t = concrete(args[0].type) if not isinstance(args[0], Const) or not isinstance(args[1], Const) else args[0].type
        if is_abstract(t) and scalar_of(t) is ABSTRACT_INT:
            t = with_scalar(t, ABSTRACT_FLOAT)
        if not scalar_of(t).is_float:
            lw.err(node, f"ldexp needs a float, not {_tn(args[0].type)}")
        e2t = with_scalar(t, I32)
        return _emit(lw, name, t, [lw.coerce_keep(args[0], t, node), lw.coerce_keep(args[1], e2t, node)], t, node)
    if name in ("frexp", "modf"):
        if len(args) != 1:
            lw.err(node, f"{name} takes 1 argument")
        # a constant abstract number folds in binary64 (WGSL's AbstractFloat), to an abstract result
        abstract = isinstance(args[0], Const) and is_abstract(args[0].type)
        t = with_scalar(args[0].type, ABSTRACT_FLOAT) if abstract else concrete(args[0].type)
        if not scalar_of(t).is_float:
            lw.err(node, f"{name} needs a float, not {_tn(args[0].type)}")
        rt = result_tuple(name, t)
        if isinstance(args[0], Const):
            # a constant expression: folded with the device's numerics, a constant struct
            c = lw.convert_const(args[0], t, node)
            parts = nb.call(name, "f64" if abstract else scalar_of(t).name,
                            np.asarray([c.value], _np_dtype(scalar_of(t))))
            return Const(rt, [_pylist(p)[0] for p in parts])
        v = lw.coerce(args[0], t, node)
        return Val(lw.b.op("builtin", [v], rt, fn=name))
    if name in ("reflect", "faceForward", "refract"):
        n = 2 if name == "reflect" else 3
        if len(args) != n:
            lw.err(node, f"{name} takes {n} arguments, not {len(args)}")
        t = _common(lw, name, args[:2 if name == "refract" else n], node)
        if not isinstance(t, VectorType) or not scalar_of(t).is_float:
            lw.err(node, f"{name} needs float vectors, not {_tn(t)}")
        vals = [lw.coerce_keep(a, t, node) for a in args[:2 if name == "refract" else n]]
        if name == "refract":
            vals.append(lw.coerce_keep(args[2], scalar_of(t), node))
        return _emit(lw, name, t, vals, t, node)
    if name in ("transpose", "determinant"):
        return _matrix_fn(lw, name, args, node)
    if name == "quantizeToF16":
        if len(args) != 1 or scalar_of(concrete(args[0].type)) != F32:
            lw.err(node, "quantizeToF16 takes f32 or vecN<f32>")
        t = concrete(args[0].type)
        return _emit(lw, name, t, [lw.coerce_keep(args[0], t, node)], t, node)
    lw.err(node, f"unknown function '{name}'")


def _matrix_fn(lw: Lowerer, name, args, node):
    """transpose moves components; determinant expands along the first column into the
    ordinary multiply/subtract ops (so the arithmetic stays in numerics)."""
    if len(args) != 1 or not isinstance(args[0].type, MatrixType):
        lw.err(node, f"{name} takes one matrix, not {', '.join(_tn(a.type) for a in args) or 'nothing'}")
    m = args[0]
    t = m.type
    # (a constant abstract matrix stays abstract: its determinant folds in binary64)

    def el(c, r):
        return lw.component(lw.component(m, c, t.column, node), r, t.elem, node)
    if name == "transpose":
        rt = MatrixType(t.rows, t.cols, t.elem)
        if isinstance(m, Const):
            return Const(rt, [[m.value[c][r] for c in range(t.cols)] for r in range(t.rows)])
        cols = [lw.b.op("construct", [el(c, r).v for c in range(t.cols)], rt.column) for r in range(t.rows)]
        return Val(lw.b.op("construct", cols, rt))
    if t.cols != t.rows:
        lw.err(node, f"determinant needs a square matrix, not {_tn(t)}")
    if isinstance(m, Const) and lw.tint and t.elem in (F32, F16) and not is_abstract(args[0].type):
        # Dawn folds a concrete one on the host, in its own order (emu.numerics.tint.determinant)
        return lw.finite_const(t.elem, float(lw.tint.determinant(t.elem.name, m.value)), node)

    def det(rows, cols):
        if len(rows) == 1:
            return el(cols[0], rows[0])
        acc = None
        for k, r in enumerate(rows):
            minor = det([x for x in rows if x != r], cols[1:])
            term = lw.binary_values("*", el(cols[0], r), minor, node)
            acc = term if acc is None else lw.binary_values("-" if k % 2 else "+", acc, term, node)
        return acc
    return det(list(range(t.rows)), list(range(t.cols)))


def _common(lw, name, args, node):
    """The one type the generic arguments share (abstract constants convert to it)."""
    t = args[0].type
    for a in args[1:]:
        at = a.type
        if width(at) != width(t) or type(at) is not type(t):
            lw.err(node, f"{name}: arguments have different types ({_tn(t)}, {_tn(at)})")
        s = unify(scalar_of(t), scalar_of(at))
        if s is None:
            lw.err(node, f"{name}: arguments have different types ({_tn(t)}, {_tn(at)})",
                   hint="convert one of them explicitly")
        t = with_scalar(t, s)
    if not all(isinstance(a, Const) for a in args):
        t = concrete(t)
    return t


def _emit(lw: Lowerer, name, t, vals, rt, node):
    if all(isinstance(v, Const) for v in vals):
        s = scalar_of(t)
        if s is ABSTRACT_INT and name in _EXACT:
            return Const(rt, _abstract_int(lw, name, [v.value for v in vals], node))
        # abstract floats fold in binary64, as WGSL's AbstractFloat is
        ty = "f64" if s is ABSTRACT_FLOAT else "i32" if s is ABSTRACT_INT else s.name
        try:
            arrs = [np.asarray([v.value], _np_dtype(_conc(scalar_of(v.type)))) for v in vals]
        except OverflowError:
            lw.err(node, f"{name}(...) of constants that do not fit in {ty} "
                         f"({', '.join(str(v.value) for v in vals)})", hint=f"give the arguments values that fit in {ty}")
        # Dawn folds concrete f32 and f16 with the host's float functions (emu.numerics.tint)
        tint = lw.tint if s in (F32, F16) else None
        out = (tint or nb).call(name, ty, *arrs)
        if tint and not tint.folds_as_h200(name):
            lw.warn(node, f"{name} of constants folds to its correctly rounded value here: this machine's C "
                          f"library does not give glibc's results, which Dawn's Tint folds with on the "
                          f"H200's host, so the last bit may differ from the H200's",
                    hint="compute it at run time, or run emu on a glibc (Linux) host for Dawn's bits")
        value = _pylist(out)[0]
        if scalar_of(rt) is ABSTRACT_INT:
            value = _map(value, int)
        return lw.finite_const(rt, value, node)
    if scalar_of(t).name == "f64" and name in NO_F64_BUILTINS:
        lw.err(node, f"{name} of f64 runs on no device: naga writes it as GLSL.std.450 {name[0].upper() + name[1:]}, "
                     f"which takes only 16- and 32-bit floats (so the driver rejects the SPIR-V), and HLSL and "
                     f"Metal have no f64 {name} either",
               hint=f"compute it in f32: f64({name}(f32(x))), or fold it from constants")
    args = [lw.materialize(v, concrete(v.type)) for v in vals]
    return Val(lw.b.op("builtin", args, concrete(rt), fn=name))


_EXACT = ("abs", "sign", "min", "max", "clamp", "dot", "select")


def _abstract_int(lw, name, vals, node):
    """An abstract-integer builtin of constants, exactly (WGSL's abstract integers are 64-bit):
    what does not fit 64 bits, and clamp's low above its high, are shader-creation errors."""
    def fit(r):
        if not -(1 << 63) <= r < (1 << 63):
            lw.err(node, f"{name}(...) of abstract integers gives {r}, which does not fit in 64 bits",
                   hint="WGSL's abstract integers are 64-bit; convert an argument to a concrete type")
        return r

    def clamp(e, low, high):
        if low > high:
            lw.err(node, f"clamp's low ({low}) is greater than its high ({high})")
        return min(max(e, low), high)
    if name == "dot":
        acc = 0
        for x, y in zip(*vals):
            acc = fit(acc + fit(x * y))
        return acc
    if name == "select":
        f, t, c = vals
        return [b if k else a for a, b, k in zip(f, t, c if isinstance(c, list) else [c] * len(f))] \
            if isinstance(f, list) else (t if c else f)
    one = {"abs": lambda x: x if x == -(1 << 63) else abs(x),     # abs of the most negative is itself
           "sign": lambda x: (x > 0) - (x < 0), "min": min, "max": max, "clamp": clamp}[name]

    def each(*xs):
        return [each(*c) for c in zip(*xs)] if isinstance(xs[0], list) else fit(one(*xs))
    return each(*vals)


def _conc(s):
    return I32 if s is ABSTRACT_INT else s


def _map(v, f):
    return [_map(x, f) for x in v] if isinstance(v, list) else f(v)


# -- atomics -------------------------------------------------------------------------------------

def _atomic(lw: Lowerer, e, fn):
    n = {"load": 1, "store": 2, "compare_exchange_weak": 3}.get(fn, 2)
    _arity(lw, e, n)
    p = lw.value(lw.expr(e.args[0]))
    if not isinstance(p.type, PointerType) or not isinstance(p.type.pointee, AtomicType):
        lw.err(e.args[0], f"{e.name} needs a pointer to an atomic, not {_tn(p.type)}",
               hint="declare the variable as atomic<u32> (or atomic<i32>) and pass &x")
    if p.type.space not in ("storage", "workgroup"):
        lw.err(e.args[0], "atomics live in storage or workgroup memory")
    vec2u = p.type.pointee.is_vec2u
    if vec2u != (fn in ("store_max", "store_min")):
        if vec2u:
            lw.err(e, f"{e.name} does not take atomic<vec2<u32>>: the 'atomic_vec2u_min_max' extension has "
                      f"only atomicStoreMax and atomicStoreMin (no result)",
                   hint=f"write {'atomicStoreMin' if fn == 'min' else 'atomicStoreMax'}(&x, value)")
        lw.err(e, f"{e.name} takes a pointer to atomic<vec2<u32>>, not {_tn(p.type)}",
               hint=f"use {'atomicMin' if fn == 'store_min' else 'atomicMax'} on atomic<u32> or atomic<i32>")
    s = p.type.pointee.elem
    vals = [lw.coerce(lw.value(lw.expr(a)), s, a) for a in e.args[1:]]
    if fn in ("store", "store_max", "store_min"):
        lw.b.emit("atomic", [p.v] + vals, s, fn=fn)
        return None
    if fn == "compare_exchange_weak":
        rt = TupleType(f"__atomic_compare_exchange_result_{s}", (("old_value", s), ("exchanged", BOOL)))
        return Val(lw.b.op("atomic", [p.v] + vals, rt, fn=fn))
    return Val(lw.b.op("atomic", [p.v] + vals, s, fn=fn))


# -- subgroups -----------------------------------------------------------------------------------

def _subgroup(lw: Lowerer, e, fn, mask: int | None = None):
    """A subgroup operation; `mask`: the fixed lane mask of a quad swap (a shuffle_xor)."""
    lw.subgroup_use(e, e.name)
    if fn == "elect":
        _arity(lw, e, 0)
        return Val(lw.b.op("subgroup", [], BOOL, fn=fn))
    if fn == "ballot" and not e.args:
        # naga's subgroupBallot(): of every active invocation (WGSL's needs the predicate)
        if lw.strict:
            lw.warn(e, "subgroupBallot() without a predicate: naga accepts this, Tint (Dawn, Chrome) rejects it",
                    hint="write subgroupBallot(true) to run on every WebGPU implementation")
        return Val(lw.b.op("subgroup", [lw.b.op("const", [], BOOL, value=True)], VectorType(U32, 4), fn=fn))
    two = fn in ("broadcast", "shuffle", "shuffle_xor", "shuffle_up", "shuffle_down", "quad_broadcast")
    _arity(lw, e, 2 if two and mask is None else 1)
    v = lw.value(lw.expr(e.args[0]))
    t = concrete(v.type)
    s = _scalar_or_none(t)
    if fn in ("all", "any", "ballot"):
        if t != BOOL:
            lw.err(e, f"{e.name} needs a bool, not {_tn(t)}")
        rt = VectorType(U32, 4) if fn == "ballot" else BOOL
        return Val(lw.b.op("subgroup", [lw.materialize(v, BOOL)], rt, fn=fn))
    if s is None or not isinstance(t, (ScalarType, VectorType)):
        lw.err(e, f"{e.name} needs a scalar or vector, not {_tn(t)}")
    if s == F16 and "subgroups_f16" not in lw.m.enables and "f16" not in lw.m.enables:
        lw.err(e, f"{e.name} on f16 needs f16 support", hint="add 'enable f16;'")
    if fn in ("and", "or", "xor") and not s.is_int:
        lw.err(e, f"{e.name} needs integers, not {_tn(t)}")
    if s == BOOL and fn not in ("broadcast", "broadcast_first", "shuffle", "shuffle_xor", "shuffle_up",
                                "shuffle_down", "quad_broadcast"):
        lw.err(e, f"{e.name} needs numbers, not {_tn(t)}")
    args = [lw.materialize(v, t)]
    if mask is not None:
        args.append(lw.b.op("const", [], U32, value=mask))
    elif two:
        lane = lw.value(lw.expr(e.args[1]))
        if fn == "broadcast" and not isinstance(lane, Const):
            lw.warn(e.args[1], "subgroupBroadcast's lane should be a constant expression (Tint requires it)")
        ls = _scalar_or_none(lane.type)
        if ls is None or not ls.is_int or not isinstance(lane.type, ScalarType):
            lw.err(e.args[1], f"the lane argument must be u32 or i32, not {_tn(lane.type)}")
        if isinstance(lane, Const) and fn == "broadcast" and not 0 <= int(lane.value) < 128:
            lw.err(e.args[1], f"lane {lane.value} is outside every subgroup (0..127)")
        if fn == "quad_broadcast" and not (isinstance(lane, Const) and 0 <= int(lane.value) < 4):
            lw.err(e.args[1], "quadBroadcast's id must be a constant from 0 to 3")
        args.append(lw.materialize(lane, U32 if is_abstract(lane.type) else lane.type))
    return Val(lw.b.op("subgroup", args, t, fn=fn))


# -- cooperative matrices ------------------------------------------------------------------------

def coop_construct(lw: Lowerer, t: CoopMatrixType, args, e):
    """subgroup_matrix_left<f16, 16, 16>() (zero) or (...)(value): fill."""
    if len(args) > 1:
        lw.err(e, f"{t} takes no argument (zero) or one (the fill value)")
    s = t.elem
    storage = {"i8": I32, "u8": U32}.get(s.name, s)
    if args:
        v = lw.coerce(args[0], storage, e.args[0])
    else:
        v = lw.materialize(Const(storage, 0.0 if storage.is_float else 0), storage)
    return Val(lw.b.op("coop_fill", [v], t))


def _ptr_and_offset(lw: Lowerer, node):
    """A pointer to an array (or to one element of memory) and an element offset: Dawn passes
    (&array, offset), wgpu passes &array[offset] or a pointer to an element; all become
    (pointer, offset). A pointer to an element addresses the memory from that element on."""
    e = A.strip_parens(node)
    if isinstance(e, A.UnaryExpr) and e.op == "&":
        inner = A.strip_parens(e.operand)
        if isinstance(inner, A.IndexExpr):
            base = lw.expr(inner.base)
            if isinstance(base, Ref) and isinstance(base.type, ArrayType):
                idx = lw.value(lw.expr(inner.index))
                return base.ptr, lw.coerce(idx, U32 if is_abstract(idx.type) else concrete(idx.type), inner.index)
    p = lw.value(lw.expr(node))
    if not isinstance(p.type, PointerType) or not isinstance(p.type.pointee, (ArrayType, ScalarType, VectorType)):
        lw.err(node, f"a cooperative matrix is loaded from and stored to an array, not {_tn(p.type)}",
               hint="pass &buffer (Dawn) or &buffer[index] (wgpu)")
    return p.v, None


def _check_array(lw, ptr, t: CoopMatrixType, node, relaxed: bool = True):
    """The memory a matrix is loaded from or stored to. The exact form: an array of the matrix's
    element type (8-bit matrices: of i32/u32, four elements a word). Relaxed (Dawn's templated
    load/store, wgpu's "scalar or vector elements"): any array of f32, f16, i32 or u32 scalars or
    vectors whose elements are at least one matrix element long; offsets and strides count the
    array's elements, and a row (column) is read as consecutive matrix elements."""
    p = ptr.type.pointee
    elem = p.elem if isinstance(p, ArrayType) else p
    want = {"i8": I32, "u8": U32}.get(t.elem.name, t.elem)
    if elem == want or elem == t.elem:
        return
    comp = elem.elem if isinstance(elem, VectorType) else elem
    hint = "8-bit matrices live in i32/u32 arrays, four elements a word" if t.elem.size == 1 else None
    if not relaxed or not isinstance(comp, ScalarType) or comp.name not in ("f32", "f16", "i32", "u32"):
        lw.err(node, f"a {t} is stored in an array<{want}>, not array<{elem}>", hint=hint)
    stride = p.stride if isinstance(p, ArrayType) else -(-elem.size // elem.align) * elem.align
    if stride < t.elem.size:
        lw.err(node, f"the array's elements ({elem}, {stride} bytes) are shorter than the matrix's "
                     f"({t.elem}, {t.elem.size} bytes)", hint=f"use an array of {want} or of wider elements")


def _u32(lw, node):
    v = lw.value(lw.expr(node))
    if _scalar_or_none(v.type) not in (U32, I32, ABSTRACT_INT) or not isinstance(v.type, ScalarType):
        lw.err(node, f"expected u32, not {_tn(v.type)}")
    return lw.coerce(v, U32 if v.type is not I32 else I32, node)


def _layout(lw, e, i, default=None):
    if len(e.template_args) > i:
        n = _name(e.template_args[i])
        if n not in ("row_major", "col_major"):
            lw.err(e.template_args[i], f"layout must be row_major or col_major, not {n}")
        return n
    return default


def _dawn_load(lw: Lowerer, e):
    lw.require(e, "chromium_experimental_subgroup_matrix", "subgroupMatrixLoad")
    if not e.template_args:
        lw.err(e, "subgroupMatrixLoad needs the matrix type: subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, offset, stride)")
    t = lw.type(e.template_args[0])
    if not isinstance(t, CoopMatrixType):
        lw.err(e.template_args[0], f"subgroupMatrixLoad loads a subgroup matrix type, not {t}")
    layout = _layout(lw, e, 1)
    args = list(e.args)
    deprecated = layout is None
    if deprecated:
        # Deprecated form: (ptr, offset, col_major: bool, stride)
        if len(args) != 4:
            lw.err(e, "subgroupMatrixLoad takes (ptr, offset, stride) with a <T, row_major|col_major> template")
        cm = lw.expr(args[2])
        if not isinstance(cm, Const) or cm.type != BOOL:
            lw.err(args[2], "the col_major argument must be a constant bool")
        layout = "col_major" if cm.value else "row_major"
        args = [args[0], args[1], args[3]]
    if len(args) != 3:
        lw.err(e, f"subgroupMatrixLoad takes 3 arguments (ptr, offset, stride), not {len(args)}")
    ptr, extra = _ptr_and_offset(lw, args[0])
    _check_array(lw, ptr, t, args[0], relaxed=not deprecated)
    off = _u32(lw, args[1])
    stride = _u32(lw, args[2])
    return Val(lw.b.op("coop_load", [ptr, off, stride], t, layout=layout))


def _dawn_store(lw: Lowerer, e):
    lw.require(e, "chromium_experimental_subgroup_matrix", "subgroupMatrixStore")
    layout = _layout(lw, e, 0)
    args = list(e.args)
    deprecated = layout is None
    if deprecated:
        if len(args) != 5:
            lw.err(e, "subgroupMatrixStore takes (ptr, offset, value, stride) with a <row_major|col_major> template")
        cm = lw.expr(args[3])
        if not isinstance(cm, Const) or cm.type != BOOL:
            lw.err(args[3], "the col_major argument must be a constant bool")
        layout = "col_major" if cm.value else "row_major"
        args = [args[0], args[1], args[2], args[4]]
    if len(args) != 4:
        lw.err(e, f"subgroupMatrixStore takes 4 arguments (ptr, offset, value, stride), not {len(args)}")
    ptr, _ = _ptr_and_offset(lw, args[0])
    if ptr.type.access == "read":
        lw.err(args[0], "cannot store a matrix into a read-only buffer", hint="declare it var<storage, read_write>")
    off = _u32(lw, args[1])
    v = _matrix_value(lw, args[2])
    _check_array(lw, ptr, v.type, args[0], relaxed=not deprecated)
    stride = _u32(lw, args[3])
    lw.b.emit("coop_store", [ptr, off, v.v, stride], layout=layout)
    return None


def _matrix_value(lw, node) -> Val:
    v = lw.value(lw.expr(node))
    if not isinstance(v.type, CoopMatrixType):
        lw.err(node, f"expected a cooperative matrix, not {_tn(v.type)}")
    return v


def _check_mma(lw, e, a: Val, b: Val, rt: CoopMatrixType | None, acc: Val | None):
    ta, tb = a.type, b.type
    if ta.role != "A" or tb.role != "B":
        lw.err(e, f"multiply needs a left (A) and a right (B) matrix, not {ta.role} and {tb.role}",
               hint="subgroupMatrixMultiply(left, right) / coopMultiplyAdd(a, b, c)")
    if ta.cols != tb.rows:
        lw.err(e, f"K differs: the left matrix is {ta.rows}x{ta.cols} (K={ta.cols}), the right "
                  f"{tb.rows}x{tb.cols} (K={tb.rows})")
    if ta.elem != tb.elem:
        lw.err(e, f"the left and right matrices have different element types ({ta.elem}, {tb.elem})")
    if acc is not None:
        tc = acc.type
        if tc.role != "C":
            lw.err(e, f"the accumulator must be a result (C) matrix, not {tc.role}")
        if (tc.rows, tc.cols) != (ta.rows, tb.cols):
            lw.err(e, f"the accumulator is {tc.rows}x{tc.cols}; A x B is {ta.rows}x{tb.cols}")


def _dawn_mul(lw: Lowerer, e):
    lw.require(e, "chromium_experimental_subgroup_matrix", e.name)
    acc = e.name.endswith("Accumulate")
    if len(e.args) != (3 if acc else 2):
        lw.err(e, f"{e.name} takes {3 if acc else 2} arguments")
    a, b = _matrix_value(lw, e.args[0]), _matrix_value(lw, e.args[1])
    if acc:
        c = _matrix_value(lw, e.args[2])
        _check_mma(lw, e, a, b, None, c)
        return Val(lw.b.op("coop_mma", [a.v, b.v, c.v], c.type))
    if len(e.template_args) != 1:
        lw.err(e, "subgroupMatrixMultiply needs the result element type: subgroupMatrixMultiply<f32>(l, r)")
    rs = lw.matrix_elem(e.template_args[0])
    rt = CoopMatrixType(a.type.rows, b.type.cols, rs, "C")
    _check_mma(lw, e, a, b, rt, None)
    return Val(lw.b.op("coop_mul", [a.v, b.v], rt))


def _dawn_scalar(lw: Lowerer, e):
    lw.require(e, "chromium_experimental_subgroup_matrix", e.name)
    _arity(lw, e, 2)
    m = _matrix_value(lw, e.args[0])
    storage = {"i8": I32, "u8": U32}.get(m.type.elem.name, m.type.elem)
    s = lw.coerce(lw.value(lw.expr(e.args[1])), storage, e.args[1])
    fn = {"subgroupMatrixScalarAdd": "add", "subgroupMatrixScalarSubtract": "sub",
          "subgroupMatrixScalarMultiply": "mul"}[e.name]
    return Val(lw.b.op("coop_scalar", [m.v, s], m.type, fn=fn))


def _naga_load(lw: Lowerer, e):
    lw.require(e, "wgpu_cooperative_matrix", e.name)
    if len(e.args) not in (1, 2):
        lw.err(e, f"{e.name} takes (pointer, [stride])")
    ptr, off = _ptr_and_offset(lw, e.args[0])
    t = _naga_load_type(lw, e, ptr)
    _check_array(lw, ptr, t, e.args[0])
    layout = "row_major" if e.name == "coopLoadT" else "col_major"
    if off is None:
        off = lw.materialize(Const(U32, 0), U32)
    stride = _u32(lw, e.args[1]) if len(e.args) > 1 else \
        lw.materialize(Const(U32, t.cols if layout == "row_major" else t.rows), U32)
    return Val(lw.b.op("coop_load", [ptr, off, stride], t, layout=layout))


def _naga_load_type(lw: Lowerer, e, ptr) -> CoopMatrixType:
    """The matrix type a coopLoad makes: written whole (coopLoad<coop_mat8x8<f32, A>>), or as
    <element, role> (element `_`: the pointer's) with the size from the declared type of the
    value, as wgpu's document writes it: let a: coop_mat8x8<f32, A> = coopLoad<_, A>(p, s)."""
    want = lw.expected_type(e)
    if len(e.template_args) == 1:
        t = lw.type(e.template_args[0])
        if not isinstance(t, CoopMatrixType):
            lw.err(e.template_args[0], f"{e.name} loads a coop_mat type, not {t}")
        return t
    usage = (f"write the matrix type, {e.name}<coop_mat8x8<f32, A>>(ptr, stride), or declare the "
             f"value's type: let a: coop_mat8x8<f32, A> = {e.name}<f32, A>(ptr, stride)")
    if len(e.template_args) > 2:
        lw.err(e, f"{e.name} takes <matrix type> or <element type, role>", hint=usage)
    if not isinstance(want, CoopMatrixType):
        lw.err(e, f"{e.name} needs the matrix size: it comes from the declared type of the value, "
                  f"and this one has {'no declared type' if want is None else f'type {want}'}", hint=usage)
    elem, role = want.elem, want.role
    if e.template_args:
        en, role = _name(e.template_args[0]), _name(e.template_args[1])
        if role not in ("A", "B", "C"):
            lw.err(e.template_args[1], f"cooperative matrix role must be A, B or C, not {role}")
        if en != "_":                   # '_': the declared type's (the storage is checked apart)
            elem = lw.matrix_elem(e.template_args[0])
    t = CoopMatrixType(want.rows, want.cols, elem, role)
    if t != want:
        lw.err(e, f"{e.name} makes a {t}, but the value is declared {want}")
    return t


def _naga_store(lw: Lowerer, e):
    lw.require(e, "wgpu_cooperative_matrix", e.name)
    if len(e.args) not in (2, 3):
        lw.err(e, f"{e.name} takes (matrix, pointer, [stride])")
    v = _matrix_value(lw, e.args[0])
    ptr, off = _ptr_and_offset(lw, e.args[1])
    _check_array(lw, ptr, v.type, e.args[1])
    layout = "row_major" if e.name == "coopStoreT" else "col_major"
    if off is None:
        off = lw.materialize(Const(U32, 0), U32)
    t = v.type
    stride = _u32(lw, e.args[2]) if len(e.args) > 2 else \
        lw.materialize(Const(U32, t.cols if layout == "row_major" else t.rows), U32)
    lw.b.emit("coop_store", [ptr, off, v.v, stride], layout=layout)
    return None


def _naga_mma(lw: Lowerer, e):
    lw.require(e, "wgpu_cooperative_matrix", e.name)
    _arity(lw, e, 3)
    a, b, c = (_matrix_value(lw, x) for x in e.args)
    _check_mma(lw, e, a, b, None, c)
    return Val(lw.b.op("coop_mma", [a.v, b.v, c.v], c.type))


COOP_FNS = {
    "subgroupMatrixLoad": _dawn_load, "subgroupMatrixStore": _dawn_store,
    "subgroupMatrixMultiply": _dawn_mul, "subgroupMatrixMultiplyAccumulate": _dawn_mul,
    "subgroupMatrixScalarAdd": _dawn_scalar, "subgroupMatrixScalarSubtract": _dawn_scalar,
    "subgroupMatrixScalarMultiply": _dawn_scalar,
    "coopLoad": _naga_load, "coopLoadT": _naga_load, "coopStore": _naga_store,
    "coopStoreT": _naga_store, "coopMultiplyAdd": _naga_mma,
}
