"""Subgroup operations over the active lanes of each subgroup.

Reductions and scans combine lanes in a fixed butterfly / Hillis-Steele order (log2(size) steps),
the shape hardware reductions take; inactive lanes contribute the operation's identity. The float
results therefore follow one stated order. A profile may name another: ``order="nvidia"`` is the
H200's (measured through Dawn, tests/data/hw/h200/subgroups.npz: every result of 78 cases) --
a float reduction of a whole subgroup is the butterfly (lane ^ 1, ^ 2, ... each lane combining its
own value first), but of a partial one the Hillis-Steele scan over the active lanes in lane order
(their ranks), its last value given to all; scans are always that rank scan, an exclusive one
starting from +0 (add) or 1 (mul); f16 min/max combine as `own < other ? own : other` (a NaN
from the other lane wins), other arithmetic is the profile's scalar model (`num`).
"""
from __future__ import annotations

import numpy as np

from . import builtins, scalar
from .dtypes import NP


class NonUniform(Exception):
    def __init__(self, message: str, lane: int):
        super().__init__(message)
        self.lane = lane


def identity(fn: str, ty: str):
    dt = np.dtype(NP[ty])
    if fn in ("add", "or", "xor"):
        return np.array(-0.0 if dt.kind == "f" else 0).astype(dt)   # x + -0 == x, also for -0
    if fn == "mul":
        return np.array(1).astype(dt)
    if fn == "and":
        return np.array(-1).astype(np.int64).astype(dt) if dt.kind in "iu" else np.array(True)
    if fn in ("min", "max"):
        if dt.kind == "f":
            return np.array(np.inf if fn == "min" else -np.inf).astype(dt)
        info = np.iinfo(dt)
        return np.array(info.max if fn == "min" else info.min).astype(dt)
    raise ValueError(fn)


def _combine(fn: str, ty: str, a, b):
    if fn in ("min", "max"):
        return builtins.call(fn, ty, a, b)
    return scalar.binary(fn, ty, a, b)


def _grouped(x, sg):
    return x.reshape((-1, sg) + x.shape[1:])


def _lanes_mask(m, x):
    return m.reshape(m.shape + (1,) * (x.ndim - m.ndim))


_NVIDIA_ORDERED = ("add", "mul", "min", "max", "inclusive_add", "exclusive_add", "inclusive_mul", "exclusive_mul")


def subgroup(fn: str, ty: str, sg: int, mask: np.ndarray, *args, order: str = "butterfly", num=None):
    if order == "nvidia" and fn in _NVIDIA_ORDERED and np.dtype(NP[ty]).kind == "f":
        return _nvidia(fn, ty, sg, mask, np.asarray(args[0]), num)
    m = mask.reshape(-1, sg)
    lane = np.arange(sg)
    if fn == "elect":
        first = np.argmax(m, axis=1)
        return (lane[None, :] == first[:, None]).reshape(-1)
    x = _grouped(np.asarray(args[0]), sg)
    if fn in ("all", "any"):
        if fn == "all":
            r = np.all(x | ~m, axis=1)
        else:
            r = np.any(x & m, axis=1)
        return np.repeat(r, sg)
    if fn == "ballot":
        bits = (x & m).astype(np.uint64)
        words = np.zeros((x.shape[0], 4), np.uint32)
        for w in range(min(4, (sg + 31) // 32)):
            part = bits[:, w * 32:(w + 1) * 32]
            words[:, w] = (part << np.arange(part.shape[1], dtype=np.uint64)).sum(axis=1).astype(np.uint32)
        return np.repeat(words, sg, axis=0)
    if fn in ("add", "mul", "min", "max", "and", "or", "xor"):
        ident = identity(fn, ty)
        v = np.where(_lanes_mask(m, x), x, ident)
        step = 1
        while step < sg:
            v = _combine(fn, ty, v, v[:, lane ^ step])
            step <<= 1
        return v.reshape((-1,) + x.shape[2:])
    if fn in ("inclusive_add", "exclusive_add", "inclusive_mul", "exclusive_mul"):
        op = fn.split("_")[1]
        ident = identity(op, ty)
        v = np.where(_lanes_mask(m, x), x, ident)
        if fn.startswith("exclusive"):
            v = np.concatenate([np.broadcast_to(ident, v[:, :1].shape), v[:, :-1]], axis=1)
        step = 1
        while step < sg:
            shifted = np.concatenate([np.broadcast_to(ident, v[:, :step].shape), v[:, :-step]], axis=1)
            v = _combine(op, ty, v, shifted)
            step <<= 1
        return v.reshape((-1,) + x.shape[2:])
    if fn == "broadcast_first":
        first = np.argmax(m, axis=1)
        return np.repeat(x[np.arange(x.shape[0]), first], sg, axis=0)
    # Lane-addressed operations: src lane per lane.
    sel = _grouped(np.asarray(args[1]).astype(np.int64), sg)
    if fn == "broadcast":
        # The lane id must be the same across the subgroup (WGSL requires a constant).
        first = np.argmax(m, axis=1)            # the first active lane's id is the reference
        src = np.broadcast_to(sel[np.arange(sel.shape[0]), first][:, None], sel.shape)
        diff = (sel != src) & m
        if diff.any():
            raise NonUniform("subgroupBroadcast's lane id differs between invocations", int(np.flatnonzero(diff.reshape(-1))[0]))
    elif fn == "shuffle":
        src = sel
    elif fn == "quad_broadcast":
        src = (lane[None, :] & ~3) | sel      # lane `sel` of each group of four
    elif fn == "shuffle_xor":
        src = lane[None, :] ^ sel
    elif fn == "shuffle_up":
        src = lane[None, :] - sel
    else:  # shuffle_down
        src = lane[None, :] + sel
    # A source outside the subgroup is indeterminate in WGSL: we return the lane's own value.
    src = np.where((src >= 0) & (src < sg), src, lane[None, :])
    return x[np.arange(x.shape[0])[:, None], src].reshape((-1,) + x.shape[2:])


def _nvidia(fn, ty, sg, mask, x, num):
    """The H200's order (see the module's docstring); `num`: the scalar model (binary, call)."""
    op = fn.split("_")[-1]
    binary, call = (num or scalar).binary, getattr(num, "call", builtins.call)
    if op in ("min", "max") and ty == "f16":
        comb = (lambda a, b: np.where(a < b, a, b)) if op == "min" else (lambda a, b: np.where(a > b, a, b))
    elif op in ("min", "max"):
        comb = lambda a, b: call(op, ty, a, b)          # noqa: E731
    else:
        comb = lambda a, b: binary(op, ty, a, b)        # noqa: E731
    m = mask.reshape(-1, sg)
    v = _grouped(x, sg)
    n = m.sum(axis=1)
    out = np.zeros_like(v)
    whole = (n == sg) if fn in ("add", "mul", "min", "max") else np.zeros(n.shape, bool)
    if whole.any():                                     # whole subgroups: the butterfly
        w = v[whole]
        lane = np.arange(sg)
        step = 1
        while step < sg:
            w = comb(w, w[:, lane ^ step])
            step <<= 1
        out[whole] = w
    part = ~whole
    if part.any():
        out[part] = _rank_scan(fn, op, m[part], v[part], n[part], comb)
    return out.reshape(x.shape)


def _rank_scan(fn, op, m, v, n, comb):
    """Hillis-Steele over each subgroup's active lanes by rank (lane order); a reduction gives
    every lane the last rank's value."""
    sg = m.shape[1]
    rank = np.cumsum(m, axis=1) - 1
    g_idx, l_idx = np.nonzero(m)
    c = np.zeros_like(v)
    c[g_idx, rank[g_idx, l_idx]] = v[g_idx, l_idx]
    if fn.startswith("exclusive"):
        first = np.zeros_like(c[:, :1]) if op == "add" else np.ones_like(c[:, :1])
        c = np.concatenate([first, c[:, :-1]], axis=1)
    step = 1
    while step < sg:
        c = np.concatenate([c[:, :step], comb(c[:, step:], c[:, :-step])], axis=1)
        step <<= 1
    out = np.zeros_like(v)
    if fn in ("add", "mul", "min", "max"):
        out[:] = c[np.arange(c.shape[0]), np.maximum(n - 1, 0)][:, None]
    else:
        out[g_idx, l_idx] = c[g_idx, rank[g_idx, l_idx]]
    return out
