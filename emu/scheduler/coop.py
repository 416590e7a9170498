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
from ..memory import coop as mcoop
from ..memory.memory import Ptr
from ..numerics import builtins as nbuiltins
from ..numerics import nvidia as nnvidia
from ..numerics import scalar as nscalar
from ..numerics.dtypes import NP
from . import fastpaths
from .registry import handler


def _mma(*args, **kw):
    """emu.numerics.mma's multiply-add, imported at the first cooperative multiply-add (~8 ms of
    every start of a program that has none, such as the Vulkan driver's)."""
    from ..numerics.mma import mma
    return mma(*args, **kw)


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
    return np.flatnonzero(_together(ex, inst, mask, ex.opts.subgroup_size, "subgroup"))


def _whole_workgroup(ex, inst, mask):
    """A workgroup-scope matrix operation is executed by every invocation of the workgroup."""
    _together(ex, inst, mask, ex.wg_lanes, "workgroup")    # its lanes, padded to whole subgroups


def _together(ex, inst, mask, n: int, scope: str):
    """Which groups of `n` lanes (subgroups, workgroups) execute the op: all their live lanes or none."""
    m = mask.reshape(-1, n)
    live = ex.live.reshape(-1, n)
    on = m.any(axis=1)
    partial = on & (m != live).any(axis=1)
    if partial.any():
        s = int(np.flatnonzero(partial)[0])
        lanes = np.zeros(ex.lanes, np.bool_)
        lanes[s * n:(s + 1) * n] = live[s] & ~m[s]
        what = "" if scope == "subgroup" else "workgroup-scope "
        ex.fail(inst, f"{what}cooperative matrix operation in non-uniform control flow: only some "
                      f"invocations of the {scope} reached it", lanes,
                hint=f"every invocation of a {scope} must execute {what}cooperative matrix operations "
                     f"together; make the branch or loop condition {scope}-uniform")
    return on


def _placed(ex, inst, ptr: Ptr, t: CoopMatrixType, offset, stride, subgroups, mask):
    """Byte addresses (S, lanes, E) of a cooperative load or store, bounds applied and traced,
    and the lane map that placed them."""
    lm = lane_map(ex, t)
    p = mcoop.place(ex, inst, ptr, t, offset, stride, subgroups, mask, lm,
                    small_stride_fails=not _rows_may_overlap(ex, inst))
    addr = mcoop.bounded(ex, inst, ptr, p, subgroups)
    if ex.opts.tracer is not None:
        ex.opts.tracer.access(ex, inst, subgroups, addr)
    return addr, lm


def _rows_may_overlap(ex, inst) -> bool:
    """Vulkan's OpCooperativeMatrixLoadKHR/NV take any stride: a shorter one than a row (column)
    reads rows that overlap, and 0 repeats one row (ncnn loads a bias vector into every row so);
    WGSL's subgroupMatrixLoad and every store need a whole row (rows stored over each other race)."""
    from ..frontend import is_spirv_file
    return inst.op == "coop_load" and is_spirv_file(ex.pipe.module.file)


@handler("coop_load")
def h_coop_load(ex, inst, mask, frame):
    ptr, offset, stride = (frame.vals[a.id] for a in inst.args)
    t: CoopMatrixType = inst.type
    subgroups = _subgroups(ex, inst, mask)
    watched = _watched(ex, ptr)
    fast = None if watched else fastpaths.run_op(ex, inst, ptr, offset, stride, subgroups, mask)
    if fast is not None:
        return fast
    sg = ex.opts.subgroup_size
    addr, lm = _placed(ex, inst, ptr, t, offset, stride, subgroups, mask)
    if watched:
        _shadow(ex, inst, ptr, t, addr, lm, lm.valid[None], subgroups)
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
    watched = _watched(ex, ptr)
    if not check and not watched and fastpaths.run_op(ex, inst, ptr, offset, value, stride, subgroups, mask):
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
        _overlap(ex, inst, ptr, t, addr, rows, keep, frags, subgroups, raw.shape[1])
    if watched:
        _shadow(ex, inst, ptr, t, addr, lm, keep, subgroups, frags)
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


def _overlap(ex, inst, ptr, t, addr, rows, keep, frags, subgroups, row_bytes):
    """Two subgroups storing different values to one element in one instruction is a race (which
    value remains is undefined); the same value, as when subgroups of a workgroup share a tile, is
    a race to the memory model too, but every GPU keeps the value: reported as _same_value_stores
    says, and run on."""
    key = (rows.astype(np.int64) * row_bytes + addr)[keep]
    who = np.broadcast_to(subgroups[:, None, None], addr.shape)[keep]
    bits = np.ascontiguousarray(frags).view(f"u{frags.dtype.itemsize}")[keep]
    order = np.lexsort((who, key))
    k, w, b = key[order], who[order], bits[order]
    meet = (k[1:] == k[:-1]) & (w[1:] != w[:-1])
    clash = np.flatnonzero(meet & (b[1:] != b[:-1]))
    if clash.size == 0:
        if meet.any() and t.scope == "subgroup":        # (a workgroup-scope store is one operation)
            _same_value_stores(ex, inst, ptr, int(w[int(np.flatnonzero(meet)[0]) + 1]), int(meet.sum()))
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


def _watched(ex, ptr) -> bool:
    """Whether a cooperative access takes part in race detection: one of workgroup memory."""
    return ex.races is not None and ptr.region is ex.wg_mem


def _shadow(ex, inst, ptr, t, addr, lm, keep, subgroups, frags=None):
    """A cooperative load (frags None) or store of workgroup memory, element by element, against
    the accesses since the last barrier (emu/memory/races.py: the element is the subgroup's, or
    at workgroup scope the workgroup's, access). Stops at a race; a store of the same value over
    another subgroup's store is reported after the run instead."""
    races = ex.races
    sg = ex.opts.subgroup_size
    on = np.broadcast_to(keep, addr.shape) & (addr >= 0)
    s_idx, lane, e = np.nonzero(on)
    off = addr[on].astype(np.int64)
    wg = mcoop.region_rows(ptr, sg, subgroups).astype(np.int64)[s_idx]
    who = subgroups[s_idx].astype(np.int64)
    code = races.agent(who) if t.scope == "subgroup" else races.workgroup_agent
    nbytes = t.elem.size
    same = None
    if frags is not None:
        raw = ptr.region.data
        now = raw[wg[:, None], off[:, None] + np.arange(nbytes)]
        new = np.ascontiguousarray(frags).view(np.uint8).reshape(frags.shape + (nbytes,))[on]
        same = (now == new).all(axis=1)
    found = races.matrix(inst, frags is not None, wg, off, nbytes, who, code, same)
    if found is None:
        return
    j, stamp, other, gran, other_wrote, benign = found
    if benign:
        _same_value_stores(ex, inst, ptr, int(who[j]), int(same.sum()))
        return
    var, at = ex.workgroup_variable(gran * races.granule)
    barrier, memory, lang = ex.sync_words()
    first = int(who[j]) * sg
    what = "store" if frags is not None else "load"
    by = f"subgroup {int(who[j]) % races.nsg}" if t.scope == "subgroup" else "the workgroup (workgroup scope)"
    ex.fail(inst, f"data race on {memory} '{var}' (byte {at}, element ({int(lm.rows_idx[lane[j], e[j]])}, "
                  f"{int(lm.cols_idx[lane[j], e[j]])}) of the matrix): this cooperative matrix {what} by {by} and "
                  f"{ex.racing(inst, first, stamp, other, other_wrote)}, with no {barrier} between them "
                  f"(undefined behaviour in {lang if lang != 'WGSL' else 'WGSL and in the Vulkan memory model'})",
            mcoop.lanes_of(ex, int(who[j])),
            hint=f"put a {barrier} between the two accesses (every invocation of the workgroup reaches "
                 "it), or give each subgroup its own part of the memory (--no-race-check runs it anyway, as "
                 "if the barrier were there)")


def _same_value_stores(ex, inst, ptr, second: int, count: int):
    """Reported once per site after the run: two subgroups stored the same bits to elements."""
    lanes = mcoop.lanes_of(ex, second)
    ex.pipe.bounds_log.note(
        ex, inst, ptr.describe(), "cooperative matrix store",
        "a data race all the same (WGSL's and the Vulkan memory model: two subgroups' writes of one element, "
        "whatever the values, with no barrier between them are undefined behaviour); emu keeps the value, "
        "as GPUs do", lanes, count, unit="element",
        text=f"cooperative matrix stores of two subgroups write the same value to elements of {ptr.describe()}",
        hint="give each subgroup its own tile (check the offsets against subgroup_size), or let one subgroup "
             f"store it; a {ex.sync_words()[0]} orders stores of two instructions (--no-race-check silences this)")


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
    sat = bool(inst.attrs.get("saturate"))
    prof = ex.pipe.profile
    cfg = prof.find_config(ta.rows, tc.cols, ta.cols, ta.elem.name, tc.elem.name) if ta.scope == "subgroup" else None
    if cfg is not None:
        D = _mma(prof.model_for(cfg), A, B, C, tc.elem.name, saturate=sat)
    else:
        D = _flexible_mma(ex, inst, ta, tb, tc, A, B, C, sat, mask)
    return _fragments(ex, D, inst.type, subgroups)


def _flexible_mma(ex, inst, ta, tb, tc, A, B, C, sat, mask):
    """A multiply-add of VK_NV_cooperative_matrix2's flexible dimensions: K steps of the entry's
    granularity, each one multiply-add of the matrix unit (its configuration's numerics), in K order."""
    prof = ex.pipe.profile
    wg = ex.pipe.layout.wg_count
    if ta.scope == "workgroup":
        _whole_workgroup(ex, inst, mask)
    found = prof.flexible_mma(ta, tb, tc, wg if ta.scope == "workgroup" else None)
    if found is None:
        sizes = sorted({f["workgroup_invocations"] for f in prof.flexible_nv if f["scope"] == "workgroup"})
        ex.fail(inst, f"the device '{prof.name}' has no flexible-dimension configuration for "
                      f"{ta.elem}x{tb.elem}->{tc.elem} at M={ta.rows} N={tb.cols} K={ta.cols} "
                      f"({ta.scope} scope{f', {wg} invocations' if ta.scope == 'workgroup' else ''})",
                hint=f"`emu props {prof.name}` lists its VkCooperativeMatrixFlexibleDimensionsPropertiesNV"
                     + (f"; workgroup scope runs with {', '.join(map(str, sizes))} invocations" if sizes else ""))
    f, base = found
    model, kg = prof.model_for(base), f["k_granularity"]
    D = C
    for k0 in range(0, ta.cols, kg):
        D = _mma(model, A[:, :, k0:k0 + kg], B[:, k0:k0 + kg, :], D, tc.elem.name, saturate=sat)
    return D


def fragment_length(ex, inst, t: CoopMatrixType) -> int:
    """Elements a lane holds of `t`; of a matrix held whole by each subgroup (flexible dimensions,
    workgroup scope) the driver's count, where the profile knows its layout (else refused)."""
    if ex.pipe.profile.is_flexible(t):
        return int(flexible_elements(ex, inst, t)[0].shape[1])
    return int(lane_map(ex, t).rows_idx.shape[1])


def flexible_elements(ex, inst, t: CoopMatrixType):
    """(rows, cols), each (invocations of the group, length): the driver's element of each index
    of a flexible or workgroup-scope matrix, for each invocation of its subgroup or workgroup."""
    n = ex.wg_lanes if t.scope == "workgroup" else ex.opts.subgroup_size
    got = ex.pipe.profile.flexible_elements(t, n, ex.opts.subgroup_size)
    if got is None:
        ex.fail(inst, f"element access to {t}: how the driver spreads a matrix of flexible dimensions "
                      f"or workgroup scope over invocations is not modelled for it (length and index are "
                      f"its own)",
                hint="use coopMatPerElementNV (row, column and value of every element), a reduction, "
                     "or a matrix of a configuration's shape at subgroup scope"
                     + ("" if ex.pipe.profile.flexible_layout_nv else
                        f"; the profile '{ex.pipe.profile.name}' gives no flexible_layout_nv"))
    return got


def _flexible_slots(ex, inst, t, k):
    """Per lane: (lane of its subgroup's copy, slot) holding the lane's element `k` of the flexible
    matrix `t` (held whole by each subgroup: element e of lane l is position e * lanes + l)."""
    rows, cols = flexible_elements(ex, inst, t)
    sg = ex.opts.subgroup_size
    me = np.arange(ex.lanes) % rows.shape[0]
    k = np.broadcast_to(np.asarray(k, np.int64), (ex.lanes,))
    p = rows[me, k] * t.cols + cols[me, k]
    return (np.arange(ex.lanes) // sg) * sg + p % sg, p // sg


def flexible_take(ex, inst, v, t, k):
    """Each lane's element `k` of the flexible matrix value `v` (the driver's index)."""
    lane, slot = _flexible_slots(ex, inst, t, k)
    return v[lane, slot]


def flexible_put(ex, inst, v, t, k, new, mask):
    """`v` with each active lane's element `k` set to `new`, in every subgroup's copy (each holds
    the whole matrix); all of the group's invocations take part (else their copies would part)."""
    n = ex.wg_lanes if t.scope == "workgroup" else ex.opts.subgroup_size
    m, live = mask.reshape(-1, n), ex.live.reshape(-1, n)
    partial = m.any(axis=1) & (m != live).any(axis=1)
    if partial.any():
        g = int(np.flatnonzero(partial)[0])
        lanes = np.zeros(ex.lanes, np.bool_)
        lanes[g * n:(g + 1) * n] = live[g] & ~m[g]
        ex.fail(inst, f"an element write to {t} in non-uniform control flow: only some invocations of the "
                      f"{t.scope} reached it; emu holds such a matrix whole in every subgroup and models its "
                      f"element writes only when every invocation of the {t.scope} makes them together",
                lanes, hint=f"make the condition {t.scope}-uniform, or write the elements with "
                            f"coopMatPerElementNV (its function sees each element's row and column)")
    lane, slot = _flexible_slots(ex, inst, t, k)
    sg = ex.opts.subgroup_size
    out = np.array(v, copy=True)
    on = np.flatnonzero(mask)
    first = (on // n) * n + (lane[on] % sg)              # the element's lane in the group's first subgroup
    new = np.broadcast_to(np.asarray(new), (ex.lanes,))
    for j in range(n // sg):
        out[first + j * sg, slot[on]] = new[on]
    return out


@handler("coop_mul")
def h_coop_mul(ex, inst, mask, frame):
    a, b = (frame.vals[x.id] for x in inst.args)
    ta, tb = (x.type for x in inst.args)
    tr: CoopMatrixType = inst.type
    subgroups = _subgroups(ex, inst, mask)
    A, B = _matrices(ex, a, ta, subgroups), _matrices(ex, b, tb, subgroups)
    # A product without accumulator is the multiply-add with C = +0 on these units.
    C = np.zeros((len(subgroups), tr.rows, tr.cols), NP[tr.elem.name])
    D = _mma(matrix_model(ex, ta, tr), A, B, C, tr.elem.name)
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
    conv = nscalar.convert_saturating if inst.attrs.get("saturate") else \
        nnvidia.convert_native if ex.pipe.profile.scalar == "nvidia-sfu" else nscalar.convert
    if lane_map(ex, src) is lane_map(ex, dst) and not inst.attrs.get("transpose"):
        return conv(v, src.elem.name, dst.elem.name)
    subgroups = _subgroups(ex, inst, mask)
    mats = conv(_matrices(ex, v, src, subgroups), src.elem.name, dst.elem.name)
    if inst.attrs.get("transpose"):
        mats = np.ascontiguousarray(mats.transpose(0, 2, 1))
    return _fragments(ex, mats, dst, subgroups)


# The H200's order for a row (column) of a reduction, over the positions of the elements in it:
# ("tree", k) adds the pairs whose positions differ in bit k; ("fold", bits) adds, from the first,
# the elements whose positions differ in those bits (the first bit least significant); the bits
# not named follow as trees in increasing order. Measured (tests/data/hw/h200/vulkan/README.md):
# rows of 16x16 subgroup accumulators (f32, f16) and of a 64x32 one at workgroup scope (128
# invocations), columns of 16x16 subgroup ones and of the 64x32 workgroup one, each all of its runs.
REDUCE_ORDER = {"row": (("tree", (3,)), ("tree", (1,)), ("tree", (2,)), ("tree", (0,))),
                "column": (("fold", (3, 4)), ("tree", (0,)), ("tree", (1,)), ("tree", (2,)))}


def _ordered_sum(comb, vals: list, mode: str):
    """Combine vals[0..n-1] in REDUCE_ORDER[mode]; a missing partner passes."""
    bits = max(1, (len(vals) - 1).bit_length())
    stages = [(kind, tuple(b for b in group if b < bits)) for kind, group in REDUCE_ORDER[mode]]
    named = {b for _, group in stages for b in group}
    stages = [st for st in stages if st[1]] + [("tree", (b,)) for b in range(bits) if b not in named]
    cur = dict(enumerate(vals))
    for kind, group in stages:
        mask = sum(1 << b for b in group)
        nxt = {}
        for i in cur:
            if i & mask:
                continue
            acc = None
            for q in range(1 << len(group)):
                j = i | sum(1 << b for n, b in enumerate(group) if q >> n & 1)
                if j in cur:
                    acc = cur[j] if acc is None else comb(acc, cur[j])
            nxt[i] = acc
        cur = nxt
    return cur[0]


def _subgroup_total(comb, frags, sg):
    """The H200's sum of a subgroup's elements (S, lanes, E) -> (S,): each lane adds its even
    fragment slots in order, and its odd ones (the pairs' two halves), both as butterflies over the
    lanes (xor 1, 2, 4, ...), then the two halves (72 of 72 recorded 16x16 f32 sums; the next best
    of 3,265,920 orders 57)."""
    total = None
    for h in (0, 1):
        half = frags[:, :, h::2]
        p = half[:, :, 0]
        for k in range(1, half.shape[2]):
            p = comb(p, half[:, :, k])
        p = np.asarray(p)
        step = 1
        while step < sg:
            p = np.asarray(comb(p, p[:, np.arange(sg) ^ step]))
            step *= 2
        total = p if total is None else np.asarray(comb(total, p))
    return total[:, 0]


@handler("coop_reduce")
def h_coop_reduce(ex, inst, mask, frame):
    """Each group (a row, a column, the matrix, a 2x2 block) is combined in the order the H200
    does it: rows and columns REDUCE_ORDER, 2x2 blocks each row's pair then the rows, measured.
    The whole matrix: each subgroup's part as _subgroup_total adds it, then (workgroup scope) the
    subgroups in order, over the driver's spread of a flexible matrix where the profile has it;
    without one, each lane's elements in fragment order, then across the lanes as a butterfly."""
    v = frame.vals[inst.args[0].id]
    src, dst = inst.args[0].type, inst.type
    ty, fn, mode = src.elem.name, inst.attrs["fn"], inst.attrs["mode"]
    subgroups = _subgroups(ex, inst, mask)
    if src.scope == "workgroup":
        _whole_workgroup(ex, inst, mask)
    if fn in ("first", "second"):
        # a combine function that returns one operand (llama.cpp's smearing reduce): the element
        # that operand carries through the same order of combination
        comb = (lambda a, b: a) if fn == "first" else (lambda a, b: b)  # noqa: E731
    elif fn in ("add", "mul"):
        comb = lambda a, b: scalar_numerics(ex, "scalar").binary(fn, ty, a, b)  # noqa: E731
    else:       # min / max: the model's reduction combine where it has one (the H200 flushes there)
        num = scalar_numerics(ex, "builtins")
        combine = getattr(num, "reduce_minmax", None)
        comb = (lambda a, b: combine(fn, ty, a, b)) if combine else (lambda a, b: num.call(fn, ty, a, b))
    if mode in ("row", "column"):
        mats = _matrices(ex, v, src, subgroups)                        # (S, rows, cols)
        lines = mats if mode == "row" else mats.transpose(0, 2, 1)
        r = np.asarray(_ordered_sum(comb, [lines[:, :, k] for k in range(lines.shape[2])], mode))  # (S, lines)
        out = np.ascontiguousarray(np.broadcast_to(r[:, :, None] if mode == "row" else r[:, None, :],
                                                   (len(subgroups), dst.rows, dst.cols)))
        return _fragments(ex, out.astype(mats.dtype, copy=False), dst, subgroups)
    if mode == "2x2":
        # each row's pair of the block, then the two rows (H200 session 4: 2,048 of 2,048)
        b = _matrices(ex, v, src, subgroups).reshape(len(subgroups), src.rows // 2, 2, src.cols // 2, 2)
        out = comb(comb(b[:, :, 0, :, 0], b[:, :, 0, :, 1]), comb(b[:, :, 1, :, 0], b[:, :, 1, :, 1]))
        return _fragments(ex, np.ascontiguousarray(np.asarray(out).astype(b.dtype, copy=False)), dst, subgroups)
    lm = lane_map(ex, src)
    sg = ex.opts.subgroup_size
    frags = v.reshape(-1, sg, v.shape[-1])[subgroups]              # (S, lanes, E)
    out = np.zeros((len(subgroups), dst.rows, dst.cols), frags.dtype)
    flexible = ex.pipe.profile.is_flexible(src)
    if not flexible and lm.valid.all() and frags.shape[2] % 2 == 0:
        out[:] = _subgroup_total(comb, frags, sg)[:, None, None]
        return _fragments(ex, out, dst, subgroups)
    if flexible and ex.pipe.profile.flexible_elements(src, ex.wg_lanes if src.scope == "workgroup" else sg, sg):
        # each subgroup's part (the driver's spread) so, then the subgroups in order (64x32 at 128
        # invocations: 8 of 8 recorded runs)
        rows, cols = flexible_elements(ex, inst, src)
        mats = _matrices(ex, v, src, subgroups)                    # (S, rows, cols): each holds it whole
        total = None
        for g in range(rows.shape[0] // sg):
            part = _subgroup_total(comb, mats[:, rows[g * sg:(g + 1) * sg], cols[g * sg:(g + 1) * sg]], sg)
            total = part if total is None else np.asarray(comb(total, part))
        out[:] = total[:, None, None]
        return _fragments(ex, out, dst, subgroups)
    group = np.zeros_like(lm.rows_idx)                             # the whole matrix

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
        mine = []
        for lane in range(sg):
            idx = [i for i in range(group.shape[1]) if lm.valid[lane, i] and group[lane, i] == g]
            if idx:
                mine.append(fold([frags[:, lane, i] for i in idx]))
        out[:] = np.asarray(butterfly(mine))[:, None, None]
    return _fragments(ex, out, dst, subgroups)


@handler("coop_coordinate")
def h_coop_coordinate(ex, inst, mask, frame):
    """The lane map's (row, column) of each lane's element `index`; an index past the lane's
    elements is undefined in SPIR-V, so it is refused."""
    t = inst.args[0].type
    n = fragment_length(ex, inst, t)
    idx = np.asarray(frame.vals[inst.args[1].id]).astype(np.int64).reshape(-1)
    idx = np.broadcast_to(idx, (ex.lanes,))
    k = np.clip(idx, 0, n - 1)
    if ex.pipe.profile.is_flexible(t):
        rows, cols = flexible_elements(ex, inst, t)
        lane, valid = np.arange(ex.lanes) % rows.shape[0], np.ones_like(rows, np.bool_)
    else:
        lm = lane_map(ex, t)
        rows, cols, valid = lm.rows_idx, lm.cols_idx, lm.valid
        lane = np.arange(ex.lanes) % ex.opts.subgroup_size
    bad = mask & ((idx != k) | ~valid[lane, k])
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        ex.fail(inst, f"coopMatGetCoordinateEXT of element {int(idx[first])} of {t}: a lane holds elements "
                      f"0..{n - 1} (OpCooperativeMatrixLengthKHR); any other index is undefined behaviour",
                bad, hint="keep the index below the matrix's length()")
    return np.stack([rows[lane, k], cols[lane, k]], axis=1).astype(np.uint32)


@handler("coop_length")
def h_coop_length(ex, inst, mask, frame):
    return ex.constant(inst.type, fragment_length(ex, inst, inst.attrs["matrix"]))


# -- tensor addressing (VK_NV_cooperative_matrix2) ----------------------------------------------

def _tensor_placed(ex, inst, ptr, offset, layout, view, t, subgroups, mask, store):
    """Byte addresses (S, lanes, E) of a tensor load/store (-1: not accessed, or dropped), the
    slots a load fills with the clamp value, the accessed slots, and the lane map."""
    from ..memory import tensor
    sg = ex.opts.subgroup_size
    lm = lane_map(ex, t)
    arr = ptr.type if isinstance(ptr.type, ArrayType) else ArrayType(ptr.type, None)
    off = mcoop.uniform(ex, inst, "offset", offset, subgroups, mask)
    base = mcoop.pointer_base(ptr, sg, subgroups) + off * arr.stride            # (S,)
    S = len(subgroups)
    lay = np.asarray(layout).reshape(-1, sg, np.shape(layout)[-1])[subgroups].reshape(S * sg, -1)
    vw = None if view is None else np.asarray(view).reshape(-1, sg, np.shape(view)[-1])[subgroups].reshape(S * sg, -1)
    rows = np.tile(lm.rows_idx, (S, 1))
    cols = np.tile(lm.cols_idx, (S, 1))
    try:
        index, accessed, clamped, undefined = tensor.element_index(lay, vw, rows, cols, t.cols, store)
    except tensor.AddressingError as e:
        ex.fail(inst, f"tensor {'store' if store else 'load'} of {t}: {e}", mcoop.lanes_of(ex, int(subgroups[0])))
    shape = (S, sg, -1)
    index, accessed, clamped, undefined = (x.reshape(shape) for x in (index, accessed, clamped, undefined))
    valid = lm.valid[None]
    what = f"tensor {'store' if store else 'load'} of {t}"

    def refuse(bad, why, hint):
        s, lane, e = (int(x) for x in np.argwhere(bad)[0])
        lanes = np.zeros(ex.lanes, np.bool_)
        lanes[subgroups[s] * sg + lane] = True
        ex.fail(inst, f"element ({int(lm.rows_idx[lane, e])}, {int(lm.cols_idx[lane, e])}) of a {what} "
                      f"{why(s, lane, e)}", lanes, hint=hint)
    if (undefined & valid).any():
        refuse(undefined & valid, lambda *_: "lies outside the layout's dimensions, and its clamp mode is "
                                              "Undefined: undefined behaviour",
               "slice inside the dimensions, or create the layout with a clamp mode "
               "(gl_CooperativeMatrixClampModeConstantNV reads the clamp value, drops stores)")
    used = accessed & ~clamped & valid
    addr = np.where(used, base[:, None, None] + index * t.elem.size, -1)
    limit = ptr.region.nbytes
    over = used & ((addr < 0) | (addr + t.elem.size > limit))
    if over.any():
        refuse(over, lambda s, lane, e: f"is at byte {int(addr[s, lane, e])}, outside {ptr.region.describe()} "
                                        f"({limit} bytes)",
               "the layout's dimensions and strides address more than the buffer holds; check them "
               "and the element offset")
    if ex.opts.tracer is not None:
        ex.opts.tracer.access(ex, inst, subgroups, addr)
    return addr, clamped & accessed & valid, accessed & valid, lm


@handler("coop_load_tensor")
def h_coop_load_tensor(ex, inst, mask, frame):
    ptr, offset, obj, layout = (frame.vals[a.id] for a in inst.args[:4])
    view = frame.vals[inst.args[4].id] if len(inst.args) > 4 else None
    t: CoopMatrixType = inst.type
    subgroups = _subgroups(ex, inst, mask)
    if t.scope == "workgroup":
        _whole_workgroup(ex, inst, mask)
    sg = ex.opts.subgroup_size
    if "decode" in inst.attrs:
        return _decoded(ex, inst, mask, frame, ptr, offset, obj, layout, view, t, subgroups)
    addr, clamped, accessed, lm = _tensor_placed(ex, inst, ptr, offset, layout, view, t, subgroups, mask, False)
    if _watched(ex, ptr):
        _shadow(ex, inst, ptr, t, addr, lm, True, subgroups)
    dt = np.dtype(NP[t.elem.name])
    rows = mcoop.region_rows(ptr, sg, subgroups)
    raw = ptr.region.data
    safe = np.where(addr < 0, 0, addr)
    gathered = np.zeros(addr.shape + (dt.itemsize,), np.uint8)
    for b in range(dt.itemsize):
        gathered[..., b] = raw[rows[:, None, None], safe + b]
    vals = gathered.view(dt)[..., 0]
    # the clamp value's low bits, as the element's bits
    cv = np.asarray(layout).reshape(-1, sg, np.shape(layout)[-1])[subgroups][..., -1].astype(np.uint64)
    cv = (cv & ((1 << (8 * dt.itemsize)) - 1)).astype(f"u{dt.itemsize}").view(dt)[..., None]
    old = np.asarray(obj).reshape(-1, sg, np.shape(obj)[-1])[subgroups].astype(dt, copy=False)
    vals = np.where(clamped, cv, np.where(accessed, vals, old))
    out = np.zeros((ex.lanes // sg, sg, lm.rows_idx.shape[1]), dt)
    out[subgroups] = np.where(lm.valid[None], vals, np.zeros((), dt))
    return out.reshape(ex.lanes, -1)


def _decoded(ex, inst, mask, frame, ptr, offset, obj, layout, view, t, subgroups):
    """A block load (SPV_NV_cooperative_matrix2's DecodeFunc): each element is the decode
    function's value for the device address of its block (the load's pointer plus the block's
    index times the block's size), the block's coordinates and the element's in the block; the
    function runs once per element slot, over the lanes holding it (clamped elements take the
    clamp value, clipped ones keep the object's)."""
    from ..memory import tensor
    from .frame import Frame
    sg = ex.opts.subgroup_size
    lm = lane_map(ex, t)
    table = ex.addresses
    start = None if table is None else table.bound.get(ptr.region.binding)
    if start is None:
        ex.fail(inst, f"a block load decodes {ptr.describe()} through device addresses, but it has none",
                mcoop.lanes_of(ex, int(subgroups[0])), hint="bind a storage buffer (emu gives it an address)")
    arr = ptr.type if isinstance(ptr.type, ArrayType) else ArrayType(ptr.type, None)
    off = mcoop.uniform(ex, inst, "offset", offset, subgroups, mask)
    base = mcoop.pointer_base(ptr, sg, subgroups) + off * arr.stride
    S = len(subgroups)
    lay = np.asarray(layout).reshape(-1, sg, np.shape(layout)[-1])[subgroups].reshape(S * sg, -1)
    vw = None if view is None else np.asarray(view).reshape(-1, sg, np.shape(view)[-1])[subgroups].reshape(S * sg, -1)
    try:
        index, accessed, clamped, undefined, block, inside = tensor.element_index(
            lay, vw, np.tile(lm.rows_idx, (S, 1)), np.tile(lm.cols_idx, (S, 1)), t.cols, False, blocks=True)
    except tensor.AddressingError as e:
        ex.fail(inst, f"tensor load of {t}: {e}", mcoop.lanes_of(ex, int(subgroups[0])))
    if (undefined & lm.valid[np.arange(S * sg) % sg]).any():
        ex.fail(inst, f"an element of a tensor load of {t} lies outside the layout's dimensions, and its clamp "
                      f"mode is Undefined: undefined behaviour", mcoop.lanes_of(ex, int(subgroups[0])),
                hint="slice inside the dimensions, or create the layout with a clamp mode")

    def full(x):                       # executing subgroups' (S * sg, ...) -> every lane's
        out = np.zeros((ex.lanes // sg, sg) + x.shape[1:], x.dtype)
        out[subgroups] = x.reshape((S, sg) + x.shape[1:])
        return out.reshape((ex.lanes,) + x.shape[1:])
    addr = full((np.uint64(start) + (np.repeat(base, sg)[:, None] + index * inst.attrs["decode_size"])
                 .astype(np.uint64)))
    decode = full(accessed & ~clamped & lm.valid[np.arange(S * sg) % sg])
    block, inside = full(block.astype(np.uint32)), full(inside.astype(np.uint32))
    fn = ex.pipe.module.function(inst.attrs["decode"])
    dt = np.dtype(NP[t.elem.name])
    out = np.array(obj, dtype=dt, copy=True)
    for e in range(out.shape[1]):
        on = mask & decode[:, e]
        if not on.any():
            continue
        for p, v in zip(fn.params, (addr[:, e], block[:, e], inside[:, e])):
            frame.vals[p.id] = v
        callee = Frame(frame.vals, ex.lanes)
        ex.run_block(fn.body, on, callee)
        out[:, e] = np.where(on, callee.retval, out[:, e])
    cv = np.asarray(layout)[:, -1].astype(np.uint64) & np.uint64((1 << (8 * dt.itemsize)) - 1)
    cv = cv.astype(f"u{dt.itemsize}").view(dt)
    out = np.where(full(clamped) & mask[:, None], cv[:, None], out)
    return np.where(full(np.broadcast_to(lm.valid[np.arange(S * sg) % sg], clamped.shape)), out, np.zeros((), dt))


@handler("coop_store_tensor")
def h_coop_store_tensor(ex, inst, mask, frame):
    ptr, offset, value, layout = (frame.vals[a.id] for a in inst.args[:4])
    view = frame.vals[inst.args[4].id] if len(inst.args) > 4 else None
    t: CoopMatrixType = inst.args[2].type
    subgroups = _subgroups(ex, inst, mask)
    if t.scope == "workgroup":
        _whole_workgroup(ex, inst, mask)
    sg = ex.opts.subgroup_size
    addr, _, _, lm = _tensor_placed(ex, inst, ptr, offset, layout, view, t, subgroups, mask, True)
    frags = value.reshape(-1, sg, value.shape[-1])[subgroups].astype(NP[t.elem.name], copy=False)
    keep = addr >= 0
    rows = np.broadcast_to(mcoop.region_rows(ptr, sg, subgroups)[:, None, None], addr.shape)
    raw = ptr.region.data
    if ex.opts.race_check and len(subgroups) > 1:
        _overlap(ex, inst, ptr, t, addr, rows, keep, frags, subgroups, raw.shape[1])
    if _watched(ex, ptr):
        _shadow(ex, inst, ptr, t, addr, lm, keep, subgroups, frags)
    nbytes = frags.dtype.itemsize
    bytes_ = np.ascontiguousarray(frags).view(np.uint8).reshape(frags.shape + (nbytes,))
    for b in range(nbytes):
        raw[rows[keep], addr[keep] + b] = bytes_[..., b][keep]


@handler("coop_per_element")
def h_coop_per_element(ex, inst, mask, frame):
    """The function runs once per element slot for the lanes holding that element (lane maps
    that repeat an element run it for each copy: the spec allows 'at least once')."""
    from .frame import Frame
    m = frame.vals[inst.args[0].id]
    t: CoopMatrixType = inst.type
    _subgroups(ex, inst, mask)
    if t.scope == "workgroup":
        _whole_workgroup(ex, inst, mask)
    fn = ex.pipe.module.function(inst.attrs["callee"])
    lm = lane_map(ex, t)
    reps = ex.lanes // ex.opts.subgroup_size
    valid, rows, cols = (np.tile(x, (reps, 1)) for x in (lm.valid, lm.rows_idx, lm.cols_idx))
    extras = [(a.type, frame.vals[a.id]) for a in inst.args[1:]]
    out = np.array(m, copy=True)
    for e in range(out.shape[1]):
        on = mask & valid[:, e]
        if not on.any():
            continue
        coords = [x[:, e].astype(NP[p.type.name]) for x, p in zip((rows, cols), fn.params)]   # u32 or i32
        vals = coords + [m[:, e]] + [v[:, e] if isinstance(ty, CoopMatrixType) else v for ty, v in extras]
        for p, v in zip(fn.params, vals):
            frame.vals[p.id] = v
        callee = Frame(frame.vals, ex.lanes)
        ex.run_block(fn.body, on, callee)
        out[:, e] = np.where(on, callee.retval, out[:, e])
    return out
