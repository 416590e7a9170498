"""Cooperative-matrix handlers.

A matrix value is held in its distributed form: an array (lanes, elements_per_lane), lane l's row
being the fragment that the profile's lane map gives that lane. Loads and stores address memory
straight from the map (no full matrix is built); a multiply gathers each subgroup's full operands
with one fancy index, runs the profile's numeric model over all subgroups at once, and scatters
the result back to fragments.
"""
from __future__ import annotations

import numpy as np

from ..isa.types import CoopMatrixType
from ..memory import coop as mcoop
from ..memory.memory import Ptr
from ..numerics import builtins as nbuiltins
from ..numerics import mma as nmma
from ..numerics import nvidia as nnvidia
from ..numerics import scalar as nscalar
from ..numerics.dtypes import NP
from . import fastpaths
from .registry import handler


def scalar_numerics(ex, which):
    """The profile's scalar model: emu.numerics.scalar/builtins (IEEE) or emu.numerics.nvidia."""
    if ex.pipe.profile.scalar == "nvidia-sfu":
        return nnvidia
    return nscalar if which == "scalar" else nbuiltins


def lane_map(ex, t: CoopMatrixType):
    """The profile's lane map for matrix type `t` at the batch's subgroup size."""
    return ex.pipe.profile.matrix_lane_map(t, ex.opts.subgroup_size)


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


def _placed(ex, inst, ptr: Ptr, t: CoopMatrixType, offset, stride, subgroups, mask):
    """Byte addresses (S, lanes, E) of a cooperative load or store, bounds applied and traced,
    and the lane map that placed them."""
    lm = lane_map(ex, t)
    p = mcoop.place(ex, inst, ptr, t, offset, stride, subgroups, mask, lm)
    addr = mcoop.bounded(ex, inst, ptr, p, subgroups)
    if ex.opts.tracer is not None:
        ex.opts.tracer.access(ex, inst, subgroups, addr)
    return addr, lm


@handler("coop_load")
def h_coop_load(ex, inst, mask, frame):
    ptr, offset, stride = (frame.vals[a.id] for a in inst.args)
    t: CoopMatrixType = inst.type
    subgroups = _subgroups(ex, inst, mask)
    fast = fastpaths.run_op(ex, inst, ptr, offset, stride, subgroups, mask)
    if fast is not None:
        return fast
    sg = ex.opts.subgroup_size
    addr, lm = _placed(ex, inst, ptr, t, offset, stride, subgroups, mask)
    dt = np.dtype(NP[t.elem.name])
    out = np.zeros((ex.lanes // sg, sg, lm.rows_idx.shape[1]), dt)
    rows = mcoop.region_rows(ptr, sg, subgroups)
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


@handler("coop_store")
def h_coop_store(ex, inst, mask, frame):
    ptr, offset, value, stride = (frame.vals[a.id] for a in inst.args)
    t: CoopMatrixType = inst.args[2].type
    subgroups = _subgroups(ex, inst, mask)
    # where two subgroups' tiles may overlap and races are checked, the reference path runs: it
    # holds every address, to compare the values
    check = ex.opts.race_check and _tiles_meet(ex, inst, ptr, t, offset, stride, subgroups, mask)
    if not check and fastpaths.run_op(ex, inst, ptr, offset, value, stride, subgroups, mask):
        return
    sg = ex.opts.subgroup_size
    addr, lm = _placed(ex, inst, ptr, t, offset, stride, subgroups, mask)
    # as the matrix's element type: a value built without one (an 'undef') may be held wider
    frags = value.reshape(-1, sg, value.shape[-1])[subgroups].astype(NP[t.elem.name], copy=False)
    keep = (addr >= 0) & lm.valid[None]
    rows = np.broadcast_to(mcoop.region_rows(ptr, sg, subgroups)[:, None, None], addr.shape)
    raw = ptr.region.data
    nbytes = frags.dtype.itemsize
    if check:
        _overlap(ex, inst, ptr, addr, rows, keep, frags, subgroups, raw.shape[1])
    bytes_ = np.ascontiguousarray(frags).view(np.uint8).reshape(frags.shape + (nbytes,))
    # Lanes write in lane order: where maps duplicate an element, the copies hold the same value.
    for b in range(nbytes):
        raw[rows[keep], addr[keep] + b] = bytes_[..., b][keep]


def _tiles_meet(ex, inst, ptr, t, offset, stride, subgroups, mask) -> bool:
    """Whether the byte ranges of two executing subgroups' tiles intersect (cheap: one range per
    subgroup); only then can their stores overlap."""
    if len(subgroups) < 2:
        return False
    p = mcoop.place(ex, inst, ptr, t, offset, stride, subgroups, mask, lane_map(ex, t),
                    small_stride_fails=False)
    outer, inner = (t.rows, t.cols) if p.layout == "row_major" else (t.cols, t.rows)
    # each tile row (column) is one byte interval: S x outer intervals, not S x lanes x elements
    rows = mcoop.region_rows(ptr, ex.opts.subgroup_size, subgroups).astype(np.int64) << 40
    lo = (rows + p.base.astype(np.int64))[:, None] + \
        np.asarray(p.stride_bytes, np.int64).reshape(-1, 1) * np.arange(outer)
    lo = np.sort(lo.reshape(-1))
    return bool((lo[1:] < lo[:-1] + inner * t.elem.size).any())


def _overlap(ex, inst, ptr, addr, rows, keep, frags, subgroups, row_bytes):
    """Two subgroups storing different values to one element is a race (which value remains is
    undefined); the same value, as when subgroups of a workgroup share a tile, is benign."""
    key = (rows.astype(np.int64) * row_bytes + addr)[keep]
    who = np.broadcast_to(subgroups[:, None, None], addr.shape)[keep]
    bits = np.ascontiguousarray(frags).view(f"u{frags.dtype.itemsize}")[keep]
    order = np.lexsort((who, key))
    k, w, b = key[order], who[order], bits[order]
    clash = np.flatnonzero((k[1:] == k[:-1]) & (w[1:] != w[:-1]) & (b[1:] != b[:-1]))
    if clash.size == 0:
        return
    i = clash[0]
    sg = ex.opts.subgroup_size
    first, second = int(w[i]), int(w[i + 1])
    byte = int(k[i] % row_bytes)
    lanes = np.zeros(ex.lanes, np.bool_)
    lanes[second * sg:(second + 1) * sg] = True
    ex.fail(inst, f"cooperative stores of two subgroups overlap at byte {byte} of {ptr.describe()} with "
                  f"different values (0x{int(b[i]):x} from {ex.where(first * sg).split(', lane')[0]} and "
                  f"0x{int(b[i + 1]):x} from {ex.where(second * sg).split(', lane')[0]}): which one "
                  f"remains is undefined", lanes,
            hint="give each subgroup its own tile (check the offsets), or let one subgroup store it "
                 "(--no-race-check runs it anyway: the higher subgroup's value remains)")


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


def matrix_model(ex, a_t, c_t):
    """The profile's numeric model for a multiply of A type `a_t` into C type `c_t`."""
    prof = ex.pipe.profile
    return prof.model_for(prof.find_config(a_t.rows, c_t.cols, a_t.cols, a_t.elem.name, c_t.elem.name))


@handler("coop_mma")
def h_coop_mma(ex, inst, mask, frame):
    a, b, c = (frame.vals[x.id] for x in inst.args)
    ta, tb, tc = (x.type for x in inst.args)
    subgroups = _subgroups(ex, inst, mask)
    D = fastpaths.run_op(ex, inst, a, b, c, subgroups)     # e.g. straight from fragments
    if D is not None:
        return D
    A, B, C = (_matrices(ex, v, t, subgroups) for v, t in ((a, ta), (b, tb), (c, tc)))
    D = nmma.mma(matrix_model(ex, ta, tc), A, B, C, tc.elem.name, saturate=bool(inst.attrs.get("saturate")))
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
    D = nmma.mma(matrix_model(ex, ta, tr), A, B, C, tr.elem.name)
    return _fragments(ex, D, tr, subgroups)


def _scalar_model(ex):
    """The profile's scalar arithmetic for element-wise matrix ops (fragments live in registers:
    the SM's own FMUL/FADD, as for any scalar, on nvidia-h200)."""
    return nnvidia if ex.pipe.profile.scalar == "nvidia-sfu" else nscalar


@handler("coop_scalar")
def h_coop_scalar(ex, inst, mask, frame):
    m, s = (frame.vals[x.id] for x in inst.args)
    return _scalar_model(ex).binary(inst.attrs["fn"], inst.type.elem.name, m, np.asarray(s)[:, None])


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
    if lane_map(ex, src) is lane_map(ex, dst) and not inst.attrs.get("transpose"):
        return conv(v, src.elem.name, dst.elem.name)
    subgroups = _subgroups(ex, inst, mask)
    mats = conv(_matrices(ex, v, src, subgroups), src.elem.name, dst.elem.name)
    if inst.attrs.get("transpose"):
        mats = np.ascontiguousarray(mats.transpose(0, 2, 1))
    return _fragments(ex, mats, dst, subgroups)


REDUCE_MODES = ("row", "column", "row_column", "2x2")
REDUCE_FNS = ("add", "mul", "min", "max")


@handler("coop_reduce")
def h_coop_reduce(ex, inst, mask, frame):
    """Each group (a row, a column, the matrix, a 2x2 block) is combined in the order a subgroup
    does it. Rows and columns: a lane's elements of the group, by position, sit in register slots
    (position % 2: two accumulator elements a 32-bit register) of successive tiles (position // 2);
    each slot is combined over the tiles, then across the lanes holding the group as a butterfly
    (lane pairs at distance 1, 2, 4, ... of their order), then the slots in order: on the H200,
    row sums of f32 and f16 accumulators, 256 of 256 (traces/hw/vulkan/README.md). Whole matrix
    and 2x2 blocks (not measured): each lane's elements in fragment order, then the butterfly."""
    v = frame.vals[inst.args[0].id]
    src, dst = inst.args[0].type, inst.type
    ty, fn, mode = src.elem.name, inst.attrs["fn"], inst.attrs["mode"]
    subgroups = _subgroups(ex, inst, mask)
    lm = lane_map(ex, src)
    sg = ex.opts.subgroup_size
    frags = v.reshape(-1, sg, v.shape[-1])[subgroups]              # (S, lanes, E)
    if fn in ("add", "mul"):
        comb = lambda a, b: scalar_numerics(ex, "scalar").binary(fn, ty, a, b)  # noqa: E731
    else:
        comb = lambda a, b: scalar_numerics(ex, "builtins").call(fn, ty, a, b)  # noqa: E731
    rows, cols = lm.rows_idx, lm.cols_idx
    group = {"row": rows, "column": cols, "row_column": np.zeros_like(rows),
             "2x2": (rows // 2) * (src.cols // 2) + cols // 2}[mode]
    out = np.zeros((len(subgroups), dst.rows, dst.cols), frags.dtype)
    other = cols if mode == "row" else rows          # an element's position within its row / column
    slots = 2 if mode in ("row", "column") else 1

    def fold(vals):
        p = vals[0]
        for x in vals[1:]:
            p = comb(p, x)
        return p

    def butterfly(vals):
        while len(vals) > 1:
            vals = [comb(vals[k], vals[k + 1]) for k in range(0, len(vals) - 1, 2)] + \
                   ([vals[-1]] if len(vals) % 2 else [])
        return vals[0]

    for g in np.unique(group[lm.valid]):
        per_slot = [[] for _ in range(slots)]
        for lane in range(sg):
            idx = [i for i in range(group.shape[1]) if lm.valid[lane, i] and group[lane, i] == g]
            if not idx:
                continue
            if slots > 1:
                idx.sort(key=lambda i: other[lane, i])
            for s in range(slots):
                mine = [frags[:, lane, i] for i in idx[s::slots]]
                if mine:
                    per_slot[s].append(fold(mine))
        r = np.asarray(fold([butterfly(v) for v in per_slot if v]))[:, None, None]
        if mode == "row":
            out[:, g:g + 1, :] = r
        elif mode == "column":
            out[:, :, g:g + 1] = r
        elif mode == "2x2":
            out[:, g // (src.cols // 2):g // (src.cols // 2) + 1, g % (src.cols // 2):g % (src.cols // 2) + 1] = r
        else:
            out[:] = r
    return _fragments(ex, out, dst, subgroups)


@handler("coop_length")
def h_coop_length(ex, inst, mask, frame):
    return ex.constant(inst.type, int(lane_map(ex, inst.attrs["matrix"]).rows_idx.shape[1]))
