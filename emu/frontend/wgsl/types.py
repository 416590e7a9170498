"""WGSL type rules the lowering needs: abstract numeric types, conversion ranks, type names."""
from __future__ import annotations

import re

from ...isa.types import (BF16, BOOL, F16, F32, F64, I8, I32, I64, U8, U32, U64, ArrayType, MatrixType, ScalarType,
                          TupleType, Type, VectorType, scalar_of, with_scalar)

# The types of literals and constant expressions before they meet a concrete type.
ABSTRACT_INT = ScalarType("abstract-int", "sint", 64)
ABSTRACT_FLOAT = ScalarType("abstract-float", "float", 64)


def is_abstract(t: Type) -> bool:
    try:
        return scalar_of(t) in (ABSTRACT_INT, ABSTRACT_FLOAT)
    except TypeError:
        if isinstance(t, TupleType):
            return any(is_abstract(m.type) for m in t.members)
        return isinstance(t, ArrayType) and is_abstract(t.elem)


def result_tuple(kind: str, t: Type) -> TupleType:
    """The result struct of frexp or modf (`kind`) of a value of type `t`: the fraction, and the
    exponent (i32; naga's f64: i64; an abstract float's: an abstract integer) or the whole part."""
    s = scalar_of(t)
    ext = with_scalar(t, ABSTRACT_INT if s is ABSTRACT_FLOAT else I64 if s == F64 else I32)
    second = ("exp", ext) if kind == "frexp" else ("whole", t)
    return TupleType(f"__{kind}_result_{t}".replace("<", "_").replace(">", ""), (("fract", t), second))


def concrete(t: Type) -> Type:
    """The type an abstract value takes when nothing else decides: i32 or f32."""
    if isinstance(t, ArrayType):
        return ArrayType(concrete(t.elem), t.count)
    if isinstance(t, TupleType) and is_abstract(t):          # frexp/modf of an abstract float
        return result_tuple(t.name.split("_")[2], concrete(t.members[0].type))
    try:
        s = scalar_of(t)
    except TypeError:
        return t
    if s is ABSTRACT_INT:
        return with_scalar(t, I32)
    if s is ABSTRACT_FLOAT:
        return with_scalar(t, F32)
    return t


def can_convert(src: ScalarType, dst: ScalarType) -> bool:
    """Automatic conversion of abstract scalars (WGSL's feasible conversions)."""
    if src == dst:
        return True
    if src is ABSTRACT_INT:
        return dst in (I32, U32, I64, U64, F32, F16, F64, ABSTRACT_FLOAT)
    if src is ABSTRACT_FLOAT:
        return dst in (F32, F16, F64)
    return False


def unify(a: ScalarType, b: ScalarType) -> ScalarType | None:
    """The scalar type both convert to, preferring the concrete one (None if there is none)."""
    if a == b:
        return a
    if can_convert(a, b):
        return b
    if can_convert(b, a):
        return a
    return None


SHORTHANDS = {}
for _n in (2, 3, 4):
    for _s, _t in (("f", F32), ("h", F16), ("i", I32), ("u", U32)):
        SHORTHANDS[f"vec{_n}{_s}"] = VectorType(_t, _n)
    for _r in (2, 3, 4):
        for _s, _t in (("f", F32), ("h", F16)):
            SHORTHANDS[f"mat{_n}x{_r}{_s}"] = MatrixType(_n, _r, _t)

MAT_RE = re.compile(r"mat([234])x([234])$")
VEC_RE = re.compile(r"vec([234])$")
WGSL_SCALARS = {"bool": BOOL, "i32": I32, "u32": U32, "f32": F32, "f16": F16, "i64": I64, "u64": U64, "f64": F64}
# Element types a cooperative matrix may have (bf16 only from front ends that can spell it).
MATRIX_ELEMS = {"f16": F16, "f32": F32, "i32": I32, "u32": U32, "i8": I8, "u8": U8, "bf16": BF16}
# names an 8-bit float would go by (f8, fp8, float8_e4m3fn, e5m2, bf8...): refused with the reason
FP8_SPELLING = re.compile(r"^(?:f8|fp8|bf8|float8|e4m3|e5m2)|e4m3|e5m2", re.IGNORECASE)
HANDLE_TYPES = ("texture_", "sampler")
