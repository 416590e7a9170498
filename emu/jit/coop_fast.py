"""Fast paths of cooperative loads, stores and multiply-adds, registered for coop_load and coop_store
(emu/scheduler/fastpaths.py: never while a tracer observes), for the common case only: the stride is legal, every element of every executing subgroup is inside the buffer and
aligned to its size. Then the addresses follow from (base, stride) per subgroup and the lane map,
so the bounds check is two comparisons per subgroup and the gather or scatter is one compiled
loop. Both place the access with emu/memory/coop.py:place. Anything else returns None and the
handler in emu/scheduler/coop.py runs its general path
(which raises the errors and applies the profile's out-of-bounds behaviour) as before.
Writes go in (subgroup, lane, element) order, as the general path's fancy assignment does.
The compiled loops are numba's (emu/jit/coop_tiles.py, emu/numerics/mma_tile.py and mma_fast.py),
called through their saved machine code (coop_kernel.saved): a process whose kernels ran before
interprets a cooperative shader without importing numba (~0.4 s of a warm run)."""
from __future__ import annotations

import numpy as np

from ..isa.types import ArrayType
from ..memory import coop as mcoop
from ..numerics import mma as nmma
from ..numerics.dtypes import NP
from ..scheduler.coop import lane_map, matrix_model
from .coop_kernel import saved

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


_IDX: dict = {}


def _plan(ex, inst, ptr, t, offset, stride, subgroups, mask):
    """(rows, base, stride, major, minor, valid) in elements of t's size, or None."""
    if not isinstance(ptr.type, ArrayType) or len(subgroups) == 0:
        return None
    lm = ex.pipe.profile.matrix_lane_map(t, ex.opts.subgroup_size)
    # placed by the same function as the general path (so the same errors)
    p = mcoop.place(ex, inst, ptr, t, offset, stride, subgroups, mask, lm, small_stride_fails=False)
    if not p.legal or not p.dense_inside(ptr.region.nbytes):
        return None
    esize = p.esize
    key = (id(lm), p.layout)
    idx = _IDX.get(key)
    if idx is None:
        maj, mnr = mcoop.major_minor(lm, p.layout)
        idx = _IDX[key] = (lm, np.ascontiguousarray(maj, np.int64), np.ascontiguousarray(mnr, np.int64),
                           np.ascontiguousarray(lm.valid))
    rows = np.ascontiguousarray(mcoop.region_rows(ptr, ex.opts.subgroup_size, subgroups), np.int64)
    return (rows, p.base // esize, p.stride_bytes // esize) + idx[1:]


def load(ex, inst, ptr, offset, stride, subgroups, mask):
    """Fragments (lanes, E) of a cooperative load, or None (use the general path)."""
    t = inst.type
    plan = _plan(ex, inst, ptr, t, offset, stride, subgroups, mask)
    if plan is None:
        return None
    dt = np.dtype(NP[t.elem.name])
    sg = ex.opts.subgroup_size
    E = plan[3].shape[1]
    out = np.zeros((ex.lanes // sg, sg, E), dt)
    u = _UINT[dt.itemsize]
    saved("coop_tiles.gather", u.__name__)(ptr.region.view(u), plan[0], plan[1], plan[2], plan[3], plan[4], plan[5],
            np.ascontiguousarray(subgroups, np.int64), out.view(u))
    return out.reshape(ex.lanes, -1)


def store(ex, inst, ptr, offset, value, stride, subgroups, mask):
    """Do a cooperative store and return True, or return None (use the general path)."""
    t = inst.args[2].type
    plan = _plan(ex, inst, ptr, t, offset, stride, subgroups, mask)
    if plan is None:
        return None
    sg = ex.opts.subgroup_size
    frags = np.ascontiguousarray(value).reshape(-1, sg, value.shape[-1])
    u = _UINT[frags.dtype.itemsize]
    saved("coop_tiles.scatter", u.__name__)(ptr.region.view(u), plan[0], plan[1], plan[2], plan[3], plan[4], plan[5],
             np.ascontiguousarray(subgroups, np.int64), frags.view(u))
    return True


def mma(ex, inst, a, b, c, subgroups):
    """A cooperative multiply-add straight on fragments (emu/numerics/mma_fast.py), without
    building matrices; None where that kernel does not apply."""
    ta, tb, tc = (x.type for x in inst.args)
    if ta.scope != "subgroup" or ex.pipe.profile.find_config(ta.rows, tc.cols, ta.cols, ta.elem.name,
                                                             tc.elem.name) is None:
        return None         # flexible dimensions: K steps of a configuration (scheduler.coop)
    return nmma.frag_mma_with(_Saved(a.dtype, c.dtype, tc.elem.name), matrix_model(ex, ta, tc), a, b, c,
                              [lane_map(ex, t) for t in (ta, tb, tc, inst.type)], tc.elem.name,
                              subgroups, ex.opts.subgroup_size, getattr(ex.opts, "jobs", 1))


class _Saved:
    """mma_fast's kernels (mma_fast.KERNELS) through their saved machine code, one saved function
    per operand and result type (the saved code takes the argument types of its first call);
    the two for subgroups the fast kernels hand back (rare) through numba."""

    def __init__(self, a, c, result: str):
        types = f"{a}-{c}-{result}"
        self.tiles = saved("mma_tile.tiles", types)
        self.run = saved("mma_fast._run", types)
        self.run_exact = saved("mma_fast._run_exact", types)

    @staticmethod
    def float_mma(*args):
        from ..numerics.mma_fast import float_mma
        return float_mma(*args)

    @staticmethod
    def reference(*args):
        from ..numerics.mma_fast import KERNELS
        return KERNELS.reference(*args)
