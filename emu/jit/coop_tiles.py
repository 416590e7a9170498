"""The compiled loads and stores of emu/jit/coop_kernel.py's generated kernels, and the check after
a run that no element was stored by two subgroups (numba; in their own module so that building a
kernel's source, and loading it without numba (emu/jit/native.py), does not import numba)."""
from __future__ import annotations

import numpy as np
from numba import njit

from .rt import clash

# called only from compiled code: no Python or C wrapper to compile
_compiled_only = njit(cache=True, nogil=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)


@_compiled_only
def load_tile(src, n, off, st, col, out):
    """out[0] = the matrix at element `off` of src, rows (columns where col) `st` apart; False
    where it does not lie wholly inside src[:n] or the stride is shorter than a row (column)."""
    R, C = out.shape[1], out.shape[2]
    nmaj, major = (C, R) if col else (R, C)
    if st < major or off < 0 or off + st * (nmaj - 1) + major > n:
        return False
    for i in range(R):
        for j in range(C):
            out[0, i, j] = src[off + st * j + i] if col else src[off + st * i + j]
    return True


@_compiled_only
def store_tile(dst, n, off, st, col, val, log, nlog, base, gid):
    """The matrix val[0] into dst as load_tile reads it, and the store logged; False (nothing
    written) where it does not fit or the log is full."""
    R, C = val.shape[1], val.shape[2]
    nmaj, major = (C, R) if col else (R, C)
    if st < major or off < 0 or off + st * (nmaj - 1) + major > n or nlog[0] >= log.shape[0]:
        return False
    put_tile(dst, off, st, col, val)
    t = nlog[0]
    log[t, 0] = base
    log[t, 1] = gid
    log[t, 2] = off
    log[t, 3] = st
    log[t, 4] = R
    log[t, 5] = C
    log[t, 6] = col
    nlog[0] = t + 1
    return True


@_compiled_only
def put_tile(dst, off, st, col, val):
    """The matrix val[0] into dst as load_tile reads it (checked by wg_tile first)."""
    R, C = val.shape[1], val.shape[2]
    for i in range(R):
        for j in range(C):
            if col:
                dst[off + st * j + i] = val[0, i, j]
            else:
                dst[off + st * i + j] = val[0, i, j]


@_compiled_only
def log_elem(log, nlog, base, gid, off):
    """A scalar store of element `off` by invocation `gid` logged as a 1 x 1 tile; False where
    the log is full."""
    t = nlog[0]
    if t >= log.shape[0]:
        return False
    log[t, 0] = base
    log[t, 1] = gid
    log[t, 2] = off
    log[t, 3] = 1
    log[t, 4] = 1
    log[t, 5] = 1
    log[t, 6] = 0
    nlog[0] = t + 1
    return True


@_compiled_only
def wg_tile(wt, rt, n, off, st, col, R, C, ib, ep, me, sg, wgc, write):
    """A cooperative access of workgroup memory by agent `me` (a subgroup), element by element
    against the tags of the barrier interval that began at `ib` (emu/jit/fuse.py's wg_load and
    wg_store: wt the last writer, rt the reader or ep + 4095 for several; `ep` the current
    sub-interval's base, past ib after a subgroupBarrier()): False where the tile does not lie
    wholly inside wt[:n] or another agent wrote an element (or, for a write, read one) in this
    interval unordered with this access (emu/jit/rt.py's clash). Tags only; the data moves with
    load_tile / store_tile."""
    nmaj, major = (C, R) if col else (R, C)
    if st < major or off < 0 or off + st * (nmaj - 1) + major > n:
        return False
    for i in range(R):
        for j in range(C):
            x = off + st * j + i if col else off + st * i + j
            t = wt[x]
            r = rt[x]
            if clash(t, ib, ep, me, sg, wgc):
                return False
            if write:
                if clash(r, ib, ep, me, sg, wgc):
                    return False
                wt[x] = ep + me
            elif r < ib or (r & 4095) == me:
                rt[x] = ep + me
            elif r != ep + me:
                rt[x] = ep + 4095
    return True


@njit(cache=True, nogil=True)
def _disjoint(log, nlog, owner):
    """Whether no element was stored by two subgroups (owner: -1 per element, stamped here)."""
    return _disjoint_part(log, nlog, owner, 0)


@njit(cache=True, nogil=True)
def _disjoint_grid(log, nlog):
    """_disjoint where every logged store is one cell of one grid: the same buffer (base), stride,
    shape and layout, each store's first element at a multiple of its lines (in line index) and of
    a line's length (within a stride), its lines inside that stride. Then two stores meet only
    where they are the same cell: one owner a cell (~nlog of them), not one an element. 1
    (disjoint), 0 (not), -1 (no such grid: _disjoint_part decides)."""
    if nlog == 0:
        return 1
    base, st, R, C, col = log[0, 0], log[0, 3], log[0, 4], log[0, 5], log[0, 6]
    nl, ln = (C, R) if col else (R, C)
    rows = 0
    for t in range(nlog):
        if log[t, 0] != base or log[t, 3] != st or log[t, 4] != R or log[t, 5] != C or log[t, 6] != col:
            return -1
        r, c = log[t, 2] // st, log[t, 2] % st         # offsets are >= 0 (store_tile)
        if r % nl or c % ln or c + ln > st:
            return -1
        rows = max(rows, r // nl + 1)
    per = (st + ln - 1) // ln
    owner = np.full(rows * per, -1, np.int64)
    for t in range(nlog):
        k = log[t, 2] // st // nl * per + log[t, 2] % st // ln
        o = owner[k]
        if o != -1 and o != log[t, 1]:
            return 0
        owner[k] = log[t, 1]
    return 1


@njit(cache=True, nogil=True)
def _disjoint_part(log, nlog, owner, lo):
    """_disjoint for the elements lo .. lo + owner.size only (owner[x - lo] for element x): the
    parts of one dispatch's elements are checked on separate threads, each on its own owner."""
    hi = lo + owner.size
    for t in range(nlog):
        base, gid, off, st, R, C, col = (log[t, 0], log[t, 1], log[t, 2], log[t, 3], log[t, 4],
                                         log[t, 5], log[t, 6])
        nl, ln = (C, R) if col else (R, C)          # lines of contiguous elements, st apart
        first = base + off
        if first >= hi or first + st * (nl - 1) + ln <= lo:
            continue
        for i in range(nl):
            x0 = first + st * i
            for x in range(max(x0, lo), min(x0 + ln, hi)):
                o = owner[x - lo]
                if o != -1 and o != gid:
                    return False
                owner[x - lo] = gid
    return True


# the interpreter's cooperative loads and stores in bounds (emu/jit/coop_fast.py): a gather and a
# scatter of whole fragments through the lane map
@njit(cache=True, nogil=True)
def gather(view, rows, base, stride, major, minor, valid, sgs, out):
    lanes, E = major.shape
    for t in range(sgs.shape[0]):
        s = sgs[t]
        r = rows[t]
        b = base[t]
        st = stride[t]
        for ln in range(lanes):
            for e in range(E):
                if valid[ln, e]:
                    out[s, ln, e] = view[r, b + st * major[ln, e] + minor[ln, e]]


@njit(cache=True, nogil=True)
def scatter(view, rows, base, stride, major, minor, valid, sgs, frags):
    lanes, E = major.shape
    for t in range(sgs.shape[0]):
        s = sgs[t]
        r = rows[t]
        b = base[t]
        st = stride[t]
        for ln in range(lanes):
            for e in range(E):
                if valid[ln, e]:
                    view[r, b + st * major[ln, e] + minor[ln, e]] = frags[s, ln, e]
