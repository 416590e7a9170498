"""Constant values: Python values (nested lists for composites) <-> register form."""
from __future__ import annotations

import math

import numpy as np

from ..errors import HostError
from ..numerics.dtypes import NP
from .types import ArrayType, ScalarType, StructType, Type


def to_array(t: Type, value, lanes: int):
    """`value` broadcast over `lanes` in register form (read-only views, no copies)."""
    if isinstance(t, StructType):
        return tuple(to_array(m.type, v, lanes) for m, v in zip(t.members, value))
    if isinstance(t, ArrayType) and isinstance(t.elem, ArrayType):
        # nested arrays share one axis in register form: their innermost elements, in order
        while isinstance(t.elem, ArrayType):
            value = [x for v in value for x in v]
            t = ArrayType(t.elem.elem, len(value))
    if isinstance(t, ArrayType) and isinstance(t.elem, StructType):
        per = [to_array(t.elem, v, 1) for v in value]
        return _stack_struct(per, lanes)
    dt = NP[_scalar(t).name]
    wide = np.issubdtype(dt, np.floating) or dt in (NP["bf16"], NP["e4m3"], NP["e5m2"])
    arr = np.asarray(value, dtype=np.float64 if wide else None)
    arr = arr.astype(dt)
    return np.broadcast_to(arr, (lanes,) + arr.shape)


def _stack_struct(per, lanes):
    if isinstance(per[0], tuple):
        return tuple(_stack_struct([p[i] for p in per], lanes) for i in range(len(per[0])))
    return np.broadcast_to(np.stack([p[0] for p in per], axis=0), (lanes, len(per)) + per[0].shape[1:])


def _scalar(t: Type) -> ScalarType:
    while not isinstance(t, ScalarType):
        t = t.elem
    return t


def coerce_scalar(t: Type, value, what: str):
    """A host-given value (number or string) as a Python value of scalar type `t`."""
    if not isinstance(t, ScalarType):
        raise HostError(f"{what} has type {t}, which the host cannot set")
    try:
        if isinstance(value, str):
            s = value.strip().lower()
            if t.name == "bool":
                if s in ("true", "1"):
                    return True
                if s in ("false", "0"):
                    return False
                raise ValueError
            value = float(s) if t.is_float else int(s, 0)
        if t.name == "bool":
            return bool(value)
        if t.is_float:
            v = float(value)
            return float(np.asarray(v).astype(NP[t.name]).astype(np.float64)) if math.isfinite(v) else v
        v = int(value)
        lo, hi = (-(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1) if t.kind == "sint" else (0, (1 << t.bits) - 1)
        if not lo <= v <= hi:
            raise HostError(f"{what}: {v} does not fit in {t} ({lo}..{hi})")
        return v
    except (ValueError, OverflowError):
        raise HostError(f"{what}: cannot read {value!r} as {t}",
                        hint=f"give a {t} literal, e.g. {'1.5' if t.is_float else 'true' if t.name == 'bool' else '16'}")
