"""Cooperative-matrix handlers.

A matrix value is held in its distributed form: an array (lanes, elements_per_lane), lane l's row
being the fragment that the profile's lane map gives that lane. Loads and stores address memory
straight from the map (no full matrix is built); a multiply gathers each subgroup's full operands
with one fancy index, runs the profile's numeric model over all subgroups at once, and scatters
the result back to fragments.
"""
from __future__ import annotations

import numpy as np

from ..isa.types import ArrayType, CoopMatrixType
from ..jit import coop_fast as _coop_fast
from ..jit import mma_fast as _mma_fast
from ..memory.memory import Ptr
from ..numerics import mma as nmma
from ..numerics import scalar as nscalar
from ..numerics.dtypes import NP
from .handlers import handler


def find_config(profile, t: CoopMatrixType):
    """The profile config whose role `t.role` has t's shape and element type."""
    for c in profile.configs:
        if t.role == "A" and (c.m, c.k, c.a_type) == (t.rows, t.cols, t.elem.name):
            return c
        if t.role == "B" and (c.k, c.n, c.b_type) == (t.rows, t.cols, t.elem.name):
            return c
        if t.role == "C" and (c.m, c.n) == (t.rows, t.cols) and t.elem.name in (c.c_type, c.result_type):
            return c
    return None


_MAPS: dict = {}


def lane_map(ex, t: CoopMatrixType):
    """The profile's lane map for matrix type `t` at the batch's subgroup size (cached)."""
    prof, sg = ex.pipe.profile, ex.opts.subgroup_size
    key = (id(prof), t, sg)
    lm = _MAPS.get(key)
    if lm is None:
        lm = _MAPS[key] = prof.lane_map(find_config(prof, t), t.role, sg)
    return lm


def zero_fragments(ex, t: CoopMatrixType) -> np.ndarray:
    return np.zeros((ex.lanes, lane_map(ex, t).rows_idx.shape[1]), NP[t.elem.name])


def _subgroups(ex, inst, mask):
    """Indices of the subgroups that execute this op; each must have all its live lanes active."""
    sg = ex.opts.subgroup_size
    m = mask.reshape(-1, sg)
    live = ex.live.reshape(-1, sg)
    on = m.any(axis=1)
    partial = on & (m != live).any(axis=1)
    if partial.any():
        s = int(np.flatnonzero(partial)[0])
        lanes = np.zeros(ex.lanes, np.bool_)
        lanes[s * sg:(s + 1) * sg] = live[s] & ~m[s]
        ex.fail(inst, "cooperative matrix operation in non-uniform control flow: only some "
                      "invocations of the subgroup reached it", lanes,
                hint="every invocation of a subgroup must execute cooperative matrix operations "
                     "together; make the branch or loop condition subgroup-uniform")
    return np.flatnonzero(on)


def _uniform(ex, inst, what: str, value: np.ndarray, subgroups: np.ndarray, mask) -> np.ndarray:
    """Per-subgroup value of an operand that must be the same across the subgroup."""
    sg = ex.opts.subgroup_size
    v = np.asarray(value).astype(np.int64).reshape(-1, sg)[subgroups]
    m = mask.reshape(-1, sg)[subgroups]
    first = v[np.arange(len(subgroups)), np.argmax(m, axis=1)]
    bad = m & (v != first[:, None])
    if bad.any():
        s, l = np.argwhere(bad)[0]
        lanes = np.zeros(ex.lanes, np.bool_)
        lanes[subgroups[s] * sg + l] = True
        ex.fail(inst, f"the {what} of a cooperative matrix access differs between invocations of "
                      f"a subgroup", lanes, hint=f"compute the {what} from subgroup-uniform values only")
    return first


def _addresses(ex, inst, ptr: Ptr, t: CoopMatrixType, offset, stride, layout, unit, subgroups, mask):
    """Byte address of every fragment element of every executing subgroup: (S, lanes, E), and
    the per-element validity (padding slots of a map are -1)."""
    lm = lane_map(ex, t)
    arr = ptr.type
    if not isinstance(arr, ArrayType):
        ex.fail(inst, f"cooperative matrix access needs a pointer to an array, not to {arr}")
    esize = t.elem.size
    word = arr.stride                      # bytes per array element
    off = _uniform(ex, inst, "offset", offset, subgroups, mask)
    st = _uniform(ex, inst, "stride", stride, subgroups, mask)
    major = t.cols if layout == "row_major" else t.rows
    # Offsets count array elements. A stride counts array elements too, except where the profile
    # (or the op) says it counts matrix elements, as a Dawn toggle can make it for 8-bit types.
    stride_bytes = st * (esize if unit == "matrix_element" else word)
    small = st * (1 if unit == "matrix_element" or esize == word else word // esize) < major
    if small.any():
        s = int(np.flatnonzero(small)[0])
        ex.fail(inst, f"stride {int(st[s])} is smaller than the matrix's "
                      f"{'row' if layout == 'row_major' else 'column'} of {major} elements "
                      f"({t}, {layout})", _lanes_of(ex, subgroups[s]),
                hint="rows (row_major) or columns (col_major) would overlap; pass the leading "
                     "dimension of the matrix in memory")
    r, c = lm.rows_idx, lm.cols_idx                       # (lanes, E)
    major_i, minor_i = (r, c) if layout == "row_major" else (c, r)
    base = _const0(ptr.offset, ex, subgroups) + off * word  # (S,)
    addr = (base[:, None, None] + stride_bytes[:, None, None] * major_i[None]
            + minor_i[None] * esize)
    return addr, lm


def _const0(offset, ex, subgroups):
    if isinstance(offset, int):
        return np.full(len(subgroups), offset, np.int64)
    sg = ex.opts.subgroup_size
    return np.asarray(offset, np.int64).reshape(-1, sg)[subgroups, 0]


def _lanes_of(ex, s):
    sg = ex.opts.subgroup_size
    lanes = np.zeros(ex.lanes, np.bool_)
    lanes[s * sg:(s + 1) * sg] = True
    return lanes


def _placed(ex, inst, ptr: Ptr, t: CoopMatrixType, offset, stride, subgroups, mask):
    """Byte addresses (S, lanes, E) of a cooperative load or store, bounds applied and traced,
    and the lane map that placed them."""
    layout = inst.attrs["layout"]
    addr, lm = _addresses(ex, inst, ptr, t, offset, stride, layout, _unit(ex, inst, t), subgroups, mask)
    addr = _bounds(ex, inst, ptr, t, addr, lm, subgroups, layout)
    if ex.opts.tracer is not None:
        ex.opts.tracer.access(ex, inst, subgroups, addr)
    return addr, lm


def _bounds(ex, inst, ptr: Ptr, t, addr, lm, subgroups, layout):
    """Check the access stays inside the buffer; where it does not, fail or apply the
    profile's measured out-of-bounds behaviour (with --robust)."""
    limit = ptr.region.nbytes
    over = ((addr + t.elem.size > limit) | (addr < 0)) & lm.valid[None]
    bad = over.reshape(len(subgroups), -1).any(axis=1)
    if not bad.any():
        return addr
    behaviour = ex.pipe.profile.oob_behavior if ex.opts.robust else "error"
    s = int(np.flatnonzero(bad)[0])
    if behaviour == "error":
        ex.fail(inst, f"cooperative matrix access out of bounds: {t} touches byte "
                      f"{int(addr[s][over[s]].max()) + t.elem.size} of {ptr.region.describe()}, "
                      f"which has {limit} bytes", _lanes_of(ex, subgroups[s]),
                hint="check offset and stride; --robust applies the profile's out-of-bounds "
                     "behaviour instead")
    if behaviour == "h200-rebase":
        # Measured on the H200: the whole matrix is read from offset 0 as a dense matrix
        # (stride = its row length in matrix elements).
        major = t.cols if layout == "row_major" else t.rows
        r, c = lm.rows_idx, lm.cols_idx
        major_i, minor_i = (r, c) if layout == "row_major" else (c, r)
        dense = _const0(ptr.offset, ex, subgroups)[:, None, None] + (major_i * major + minor_i)[None] * t.elem.size
        return np.where(bad[:, None, None], dense, addr)
    if behaviour == "zero":
        return np.where(over, -1, addr)          # -1: read as zero, not written
    if behaviour == "clamp":
        return np.clip(addr, 0, limit - t.elem.size)
    raise AssertionError(behaviour)


@handler("coop_load")
def h_coop_load(ex, inst, mask, frame):
    ptr, offset, stride = (frame.vals[a.id] for a in inst.args)
    t: CoopMatrixType = inst.type
    subgroups = _subgroups(ex, inst, mask)
    fast = _coop_fast.load(ex, inst, ptr, offset, stride, subgroups, mask)   # in-bounds, untraced
    if fast is not None:
        return fast
    sg = ex.opts.subgroup_size
    addr, lm = _placed(ex, inst, ptr, t, offset, stride, subgroups, mask)
    dt = np.dtype(NP[t.elem.name])
    out = np.zeros((ex.lanes // sg, sg, lm.rows_idx.shape[1]), dt)
    rows = _region_rows(ex, ptr, subgroups)
    raw = ptr.region.data
    nbytes = dt.itemsize
    safe = np.where(addr < 0, 0, addr)
    gathered = np.zeros(addr.shape + (nbytes,), np.uint8)
    for b in range(nbytes):
        gathered[..., b] = raw[rows[:, None, None], safe + b]
    vals = gathered.view(dt)[..., 0]
    vals = np.where((addr >= 0) & lm.valid[None], vals, np.zeros((), dt))
    out[subgroups] = vals
    return out.reshape(ex.lanes, -1)


def _region_rows(ex, ptr: Ptr, subgroups):
    sg = ex.opts.subgroup_size
    if ptr.region.kind == "buffer":
        return np.zeros(len(subgroups), np.int64)
    if ptr.rows is None:
        # A private array: each lane reads its own row; cooperative access needs shared memory.
        return subgroups * sg
    return np.asarray(ptr.rows).reshape(-1, sg)[subgroups, 0]


def _unit(ex, inst, t):
    return inst.attrs.get("stride_unit") or (
        ex.pipe.profile.stride_unit_8bit if t.elem.size == 1 else "array_element")


@handler("coop_store")
def h_coop_store(ex, inst, mask, frame):
    ptr, offset, value, stride = (frame.vals[a.id] for a in inst.args)
    t: CoopMatrixType = inst.args[2].type
    subgroups = _subgroups(ex, inst, mask)
    if _coop_fast.store(ex, inst, ptr, offset, value, stride, subgroups, mask):   # in-bounds, untraced
        return
    sg = ex.opts.subgroup_size
    addr, lm = _placed(ex, inst, ptr, t, offset, stride, subgroups, mask)
    frags = value.reshape(-1, sg, value.shape[-1])[subgroups]
    keep = (addr >= 0) & lm.valid[None]
    rows = np.broadcast_to(_region_rows(ex, ptr, subgroups)[:, None, None], addr.shape)
    raw = ptr.region.data
    nbytes = frags.dtype.itemsize
    bytes_ = np.ascontiguousarray(frags).view(np.uint8).reshape(frags.shape + (nbytes,))
    # Lanes write in lane order: where maps duplicate an element, the copies hold the same value.
    for b in range(nbytes):
        raw[rows[keep], addr[keep] + b] = bytes_[..., b][keep]


def _matrices(ex, value, t, subgroups):
    lm = lane_map(ex, t)
    sg = ex.opts.subgroup_size
    return lm.to_matrix(value.reshape(-1, sg, value.shape[-1])[subgroups])


def _fragments(ex, mats, t, subgroups):
    lm = lane_map(ex, t)
    sg = ex.opts.subgroup_size
    frags = lm.to_fragments(mats)
    out = np.zeros((ex.lanes // sg, sg, frags.shape[-1]), frags.dtype)
    out[subgroups] = frags
    return out.reshape(ex.lanes, -1)


def _model(ex, a_t, c_t):
    prof = ex.pipe.profile
    return prof.model_for(prof.find_config(a_t.rows, c_t.cols, a_t.cols, a_t.elem.name, c_t.elem.name))


@handler("coop_mma")
def h_coop_mma(ex, inst, mask, frame):
    a, b, c = (frame.vals[x.id] for x in inst.args)
    ta, tb, tc = (x.type for x in inst.args)
    subgroups = _subgroups(ex, inst, mask)
    if not inst.attrs.get("saturate"):
        # the same bits straight from fragments, without building matrices (emu/jit/mma_fast.py)
        D = _mma_fast.frag_mma(_model(ex, ta, tc), a, b, c,
                               [lane_map(ex, t) for t in (ta, tb, tc, inst.type)], tc.elem.name,
                               subgroups, ex.opts.subgroup_size, getattr(ex.opts, "jobs", 1))
        if D is not None:
            return D
    A, B, C = (_matrices(ex, v, t, subgroups) for v, t in ((a, ta), (b, tb), (c, tc)))
    D = nmma.mma(_model(ex, ta, tc), A, B, C, tc.elem.name, saturate=bool(inst.attrs.get("saturate")))
    return _fragments(ex, D, inst.type, subgroups)


@handler("coop_mul")
def h_coop_mul(ex, inst, mask, frame):
    a, b = (frame.vals[x.id] for x in inst.args)
    ta, tb = (x.type for x in inst.args)
    tr: CoopMatrixType = inst.type
    subgroups = _subgroups(ex, inst, mask)
    A, B = _matrices(ex, a, ta, subgroups), _matrices(ex, b, tb, subgroups)
    # A product without accumulator is the multiply-add with C = +0 on these units.
    C = np.zeros((len(subgroups), tr.rows, tr.cols), NP[tr.elem.name])
    D = nmma.mma(_model(ex, ta, tr), A, B, C, tr.elem.name)
    return _fragments(ex, D, tr, subgroups)


@handler("coop_scalar")
def h_coop_scalar(ex, inst, mask, frame):
    m, s = (frame.vals[x.id] for x in inst.args)
    return nscalar.binary(inst.attrs["fn"], inst.type.elem.name, m, np.asarray(s)[:, None])


@handler("coop_fill")
def h_coop_fill(ex, inst, mask, frame):
    v = frame.vals[inst.args[0].id]
    n = lane_map(ex, inst.type).rows_idx.shape[1]
    return np.ascontiguousarray(np.broadcast_to(np.asarray(v)[:, None], (ex.lanes, n)))


@handler("coop_convert")
def h_coop_convert(ex, inst, mask, frame):
    v = frame.vals[inst.args[0].id]
    src, dst = inst.args[0].type, inst.type
    conv = nscalar.convert_saturating if inst.attrs.get("saturate") else nscalar.convert
    if lane_map(ex, src) is lane_map(ex, dst):
        return conv(v, src.elem.name, dst.elem.name)
    subgroups = _subgroups(ex, inst, mask)
    mats = conv(_matrices(ex, v, src, subgroups), src.elem.name, dst.elem.name)
    return _fragments(ex, mats, dst, subgroups)


@handler("coop_length")
def h_coop_length(ex, inst, mask, frame):
    return ex.constant(inst.type, int(lane_map(ex, inst.attrs["matrix"]).rows_idx.shape[1]))
