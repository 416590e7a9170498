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


@njit(cache=True, nogil=True)
def agree(retd, brk, cnt):
    """What a workgroup's live invocations (retd False) do at the end of a group in the body of a
    loop that holds a barrier (emu/jit/fuse.py's workgroup mode): 0 go on, 1 they disagree on
    leaving it (the interpreter takes over and reports it), 2 all break (or none is live), 3 all
    continue."""
    nl = nb = nc = 0
    for i in range(retd.shape[0]):
        if not retd[i]:
            nl += 1
            nb += 1 if brk[i] else 0
            nc += 1 if cnt[i] else 0
    if (nb != 0 and nb != nl) or (nc != 0 and nc != nl):
        return 1
    if nl == 0 or nb == nl:
        return 2
    return 3 if nc == nl else 0


@njit(cache=True, nogil=True)
def parted(retd):
    """Whether some of a workgroup's invocations returned and some did not (at a barrier: the
    interpreter takes over and reports it)."""
    n = 0
    for i in range(retd.shape[0]):
        n += 0 if retd[i] else 1
    return n != 0 and n != retd.shape[0]


@njit(cache=True, nogil=True, inline="always")
def _subgroup(who, sg, wgc):
    """The subgroup of an access tag's author: an invocation (below wgc) or a subgroup's agent
    (wgc + the subgroup: emu/jit/coop_kernel.py's cooperative accesses)."""
    return who // sg if who < wgc else who - wgc


@njit(cache=True, nogil=True, inline="always")
def clash(t, ib, ep, me, sg, wgc):
    """Whether the access tag t of an element of workgroup memory (its author in the low 12 bits,
    4095 for several readers) makes an access by `me` now a race in the interpreter's terms
    (emu/memory/races.py): an access of this barrier interval (t >= ib) by another author, unless
    a subgroupBarrier() of their one subgroup came between (t below the current sub-interval's
    base ep). The workgroup runs each subgroupBarrier() at once, so it came between for all."""
    if t < ib or t == ep + me:
        return False
    who = t & 4095
    if who == me:
        return False
    return not (t < ep and who != 4095 and _subgroup(who, sg, wgc) == _subgroup(me, sg, wgc))
