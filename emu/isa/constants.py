"""Constant values: Python values (nested lists for composites) <-> register form."""
from __future__ import annotations

import math

import numpy as np

from ..errors import HostError
from ..numerics.dtypes import MINIFLOATS, NP
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
    wide = np.issubdtype(dt, np.floating) or _scalar(t).name in ("bf16", *MINIFLOATS)
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


def _floaty(value) -> bool:
    if isinstance(value, str):
        s = value.strip().lower()
        return not s.startswith(("0x", "-0x")) and any(c in s for c in ".einf")
    return isinstance(value, float)


def host_override_values(overrides: list, key, value, what: str) -> dict:
    """{override name: value} for a host value given by name or SpecId. Overrides that share a
    SpecId are one API constant: Vulkan gives it as bytes of the constant's size
    (VkSpecializationMapEntry, VUID-VkSpecializationMapEntry-constantID-00776), and each
    declaration reads those bytes as its own type, so -1 set for a SpecId declared as i32 and
    as u32 reads 0xFFFFFFFF in the u32 one. The value is read by the declaration named, else by
    the first whose type takes it (a float's by a float declaration), then its bytes by the
    others."""
    named = [o for o in overrides if o.name == key]
    target = named[0] if named else next((o for o in overrides if o.id is not None and str(o.id) == str(key)), None)
    if target is None:
        return {}
    twins = [o for o in overrides if target.id is not None and o.id == target.id and o is not target]
    if not twins:
        return {target.name: coerce_scalar(target.type, value, what.format(target.name))}
    order = [target] if named else sorted([target] + twins, key=lambda o: o.type.is_float != _floaty(value))
    src, v, err = None, None, None
    for o in order:
        try:
            src, v = o, coerce_scalar(o.type, value, what.format(o.name))
            break
        except HostError as e:
            err = err or e
    if src is None:
        raise err
    out = {}
    for o in [target] + twins:
        out[o.name] = v if o is src else reinterpret(src.type, v, o.type)
    return out


def reinterpret(src: ScalarType, value, dst: ScalarType):
    """`value` of scalar type `src` read as `dst` of the same size (its bytes)."""
    if src.name == "bool" or dst.name == "bool":          # a VkBool32: 0 or 1
        return bool(value) if dst.name == "bool" else int(bool(value))
    raw = np.asarray(value, np.float64 if src.is_float else None).astype(NP[src.name]).tobytes()
    out = np.frombuffer(raw, NP[dst.name])[0]
    return float(out) if dst.is_float else int(out)
