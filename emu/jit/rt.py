"""Runtime helpers of the fusion JIT that are not arithmetic (the arithmetic is in
emu/numerics/scalar_compiled.py)."""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def collides(addr, n):
    """Whether two lanes stored to one element: addr[lane] is the element lane stored (or -1)."""
    seen = np.zeros(n, np.bool_)
    for i in range(addr.shape[0]):
        a = addr[i]
        if a >= 0:
            if seen[a]:
                return True
            seen[a] = True
    return False
