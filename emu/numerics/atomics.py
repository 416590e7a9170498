"""Atomic read-modify-write, one lane after another in lane order (a defined, deterministic
order for what a GPU leaves unordered). Integer arithmetic wraps, as WGSL's atomics do."""
from __future__ import annotations

import numba
import numpy as np

# Operation codes for the kernel.
_CODES = {"add": 0, "sub": 1, "max": 2, "min": 3, "and": 4, "or": 5, "xor": 6, "exchange": 7,
          "store": 7, "load": 8, "compare_exchange_weak": 9, "store_max": 2, "store_min": 3}


@numba.njit(cache=True, nogil=True)
def _rmw(code, mem, idx, active, val, cmp, old, exchanged):
    for lane in range(idx.shape[0]):
        if not active[lane]:
            continue
        i = idx[lane]
        cur = mem[i]
        old[lane] = cur
        v = val[lane]
        if code == 0:
            mem[i] = cur + v
        elif code == 1:
            mem[i] = cur - v
        elif code == 2:
            mem[i] = max(cur, v)
        elif code == 3:
            mem[i] = min(cur, v)
        elif code == 4:
            mem[i] = cur & v
        elif code == 5:
            mem[i] = cur | v
        elif code == 6:
            mem[i] = cur ^ v
        elif code == 7:
            mem[i] = v
        elif code == 9:
            if cur == cmp[lane]:
                mem[i] = v
                exchanged[lane] = True


def rmw(fn: str, ty: str, mem: np.ndarray, idx: np.ndarray, mask: np.ndarray, *operands):
    """Apply atomic `fn` to `mem[idx[lane]]` for each active lane in lane order.
    Returns the old values; compare_exchange_weak returns (old, exchanged)."""
    dt = mem.dtype
    L = idx.shape[0]
    if fn == "compare_exchange_weak":
        cmp, val = (np.ascontiguousarray(np.broadcast_to(o, (L,)), dt) for o in operands)
    else:
        val = np.ascontiguousarray(np.broadcast_to(operands[0], (L,)), dt) if operands else np.zeros(L, dt)
        cmp = val
    old = np.zeros(L, dt)
    exchanged = np.zeros(L, np.bool_)
    _rmw(_CODES[fn], mem, np.ascontiguousarray(idx, np.int64), np.ascontiguousarray(mask), val, cmp, old, exchanged)
    if fn == "compare_exchange_weak":
        return (old, exchanged)
    return old
