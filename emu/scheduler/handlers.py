"""Executor handlers, one per op of the op table. Handlers move values and masks; every bit of
arithmetic is done by emu.numerics (the handlers never compute numbers themselves)."""
from __future__ import annotations

import numpy as np

from ..errors import EmuError
from ..isa.ir import Inst
from ..isa.types import (U64, ArrayType, AtomicType, CoopMatrixType, MatrixType, StructType, TupleType, VectorType,
                         contains, scalar_of, width)
from ..memory import memory
from ..memory.memory import Cell, Ptr, nested_count, put, take
from ..numerics import builtins as nbuiltins
from ..numerics import scalar as nscalar
from ..numerics.dtypes import NP
from ..numerics import reduce as nreduce
from . import coop as _coop  # noqa: F401  (registers the cooperative-matrix handlers)
from . import textures as _textures  # noqa: F401  (registers the texture handler)
from .coop import scalar_numerics, zero_fragments
from .frame import Breakable, Frame
from .registry import HANDLERS, handler  # noqa: F401  (HANDLERS re-exported)


def _args(ex, inst: Inst, frame: Frame):
    return [frame.vals[a.id] for a in inst.args]


# -- values --------------------------------------------------------------------------------------

@handler("const")
def h_const(ex, inst, mask, frame):
    return ex.constant(inst.type, inst.attrs["value"])


@handler("undef")
def h_undef(ex, inst, mask, frame):
    return ex.zero(inst.type)


@handler("input")
def h_input(ex, inst, mask, frame):
    return ex.inputs[inst.attrs["builtin"]]


@handler("override")
def h_override(ex, inst, mask, frame):
    return ex.constant(inst.type, ex.pipe.overrides[inst.attrs["name"]])


# -- memory --------------------------------------------------------------------------------------

@handler("global")
def h_global(ex, inst, mask, frame):
    return ex.globals[inst.attrs["name"]]


@handler("var")
def h_var(ex, inst, mask, frame):
    t = inst.type.pointee
    if contains(t, CoopMatrixType):
        init = frame.vals[inst.args[0].id] if inst.args else ex.zero(t)
        return Cell(t, _copy(init))
    name = inst.attrs.get("name")
    ptr = Ptr(ex.lane_mem, ex.pipe.layout.var_offsets[inst.result.id], t, None,
              f"function variable '{name}'" if name else None)
    init = frame.vals[inst.args[0].id] if inst.args else memory.zero_value(t, ex.lanes)
    memory.store(ptr, init, ex.lanes, mask, False)
    return ptr


def _copy(v):
    return tuple(_copy(x) for x in v) if isinstance(v, tuple) else np.array(v)


def _cell_access(ex, inst, cell: Cell, mask, frame):
    """A part of a variable held in registers: a Cell reading through the same root."""
    t = cell.type
    dyn = iter(inst.args[1:])
    for step in inst.attrs["path"]:
        if isinstance(t, StructType):
            cell = cell.at(t.members[step].type, "member", step)
        elif isinstance(t, CoopMatrixType):     # element i of the lane's fragment (SPIR-V's access chain)
            if ex.pipe.profile.is_flexible(t):
                raise EmuError(f"a pointer to one element of {t} (a flexible-dimension matrix, spread as the "
                               f"driver does) is not run yet", inst.loc,
                               hint="load the matrix and use OpCompositeExtract/Insert on the value")
            count = _fragment_length(ex, inst, t)
            idx = step if step >= 0 else _checked_index(ex, inst, frame.vals[next(dyn).id], count, mask)
            cell = cell.at(t.elem, "index", idx)
        else:
            elem, count = ((t.elem, t.count) if isinstance(t, ArrayType) else
                           (t.column, t.cols) if isinstance(t, MatrixType) else (t.elem, t.n))
            idx = step if step >= 0 else _checked_index(ex, inst, frame.vals[next(dyn).id], count, mask)
            cell = cell.at(elem, "index", idx)
        t = cell.type
    return cell


@handler("access")
def h_access(ex, inst, mask, frame):
    ptr: Ptr = frame.vals[inst.args[0].id]
    if isinstance(ptr, Cell):
        return _cell_access(ex, inst, ptr, mask, frame)
    t = ptr.type
    off = 0
    dyn = iter(inst.args[1:])
    for step in inst.attrs["path"]:
        if isinstance(t, StructType):
            off = off + t.offsets[step]
            t = t.members[step].type
            continue
        if isinstance(t, ArrayType):
            stride, elem = t.stride, t.elem
            count = t.count if t.count is not None else (ptr.region.nbytes - _const_part(ptr.offset + off)) // stride
        elif isinstance(t, MatrixType):
            stride, elem, count = _col_stride(t), t.column, t.cols
        else:  # vector
            stride, elem, count = t.elem.size, t.elem, t.n
        if step >= 0:
            idx = step
        else:
            v = next(dyn)
            idx = _checked_index(ex, inst, frame.vals[v.id], count, mask, ptr)
        off = off + idx * stride
        t = elem
    return Ptr(ptr.region, ptr.offset + off, t, ptr.rows, ptr.name)


def _const_part(off):
    return off if isinstance(off, int) else int(off.min(initial=0))


def _col_stride(t: MatrixType) -> int:
    return -(-t.column.size // t.column.align) * t.column.align


def _checked_index(ex, inst, idx: np.ndarray, count: int, mask, ptr=None):
    """Per-lane index as int64. Out of range on an active lane: clamped to the last element, as
    Dawn's robustness transform does, and the site reported after the dispatch; an error with
    bounds="strict"."""
    idx = idx.astype(np.int64)
    bad = ((idx < 0) | (idx >= count)) & mask
    if bad.any():
        lane = int(np.flatnonzero(bad)[0])
        what = ptr.describe() if ptr is not None else \
            f"'{inst.args[0].name}'" if inst.args[0].name else "a value"
        if ex.opts.bounds == "strict":
            ex.fail(inst, f"index {int(idx[lane])} is out of bounds for an array of {count} elements in {what}",
                    bad, hint="guard the access with a bounds check; without --bounds strict emu clamps "
                              "the index as WebGPU implementations do and reports the site")
        ex.pipe.bounds_log.note(ex, inst, f"{what} ({count} elements)", "index", "clamped to the last "
                                "element, as WebGPU's robust access allows", bad, bad.sum())
        idx = np.clip(idx, 0, max(count - 1, 0))
    return np.where(mask, idx, 0)


@handler("load")
def h_load(ex, inst, mask, frame):
    ptr = frame.vals[inst.args[0].id]
    if isinstance(ptr, Cell):
        return ptr.value
    if ex.races is not None and ptr.region is ex.wg_mem:
        ex.race(inst, ptr, False, mask)
    return memory.load(ptr, ex.lanes, None if isinstance(ptr.offset, int) else mask)


@handler("store")
def h_store(ex, inst, mask, frame):
    ptr, value = frame.vals[inst.args[0].id], frame.vals[inst.args[1].id]
    if isinstance(ptr, Cell):
        ptr.store(value, mask)
        return
    if ex.races is not None and ptr.region is ex.wg_mem:
        ex.race(inst, ptr, True, mask)
    memory.store(ptr, value, ex.lanes, mask, False)


@handler("address_ptr")
def h_address_ptr(ex, inst, mask, frame):
    """A PhysicalStorageBuffer pointer: the buffer that holds the device address, bounds-checked
    for the whole pointee (emu/memory/addresses.py)."""
    from ..memory.addresses import AddressFault
    table = ex.addresses
    t = inst.type.pointee
    if table is None:
        ex.fail(inst, "the shader reads or writes through a device address, but no buffer of the device has one",
                mask, hint="ask for a buffer's address (Device.buffer_device_address / vkGetBufferDeviceAddress) "
                           "and pass it to the shader")
    try:
        off = table.offsets(frame.vals[inst.args[0].id], t.size, mask, inst.attrs.get("align", 1))
    except AddressFault as e:
        ex.fail(inst, e.message, e.lanes, hint=e.hint)
    return Ptr(table.region, off, t, None, "the buffer at a device address")


@handler("array_length")
def h_array_length(ex, inst, mask, frame):
    ptr: Ptr = frame.vals[inst.args[0].id]
    n = (ptr.region.nbytes - _const_part(ptr.offset)) // ptr.type.stride
    return ex.constant(inst.type, n)


@handler("atomic")
def h_atomic(ex, inst, mask, frame):
    ptr: Ptr = frame.vals[inst.args[0].id]
    operands = [frame.vals[a.id] for a in inst.args[1:]]
    vec2u = isinstance(ptr.type, AtomicType) and ptr.type.is_vec2u
    if vec2u:
        # atomic<vec2<u32>> (atomic_vec2u_min_max): an unsigned 64-bit min/max of x + (y << 32),
        # the vector's bytes read as one little-endian u64, as Tint's backends bitcast it
        v = np.broadcast_to(np.asarray(operands[0], np.uint32), (ex.lanes, 2)).astype(np.uint64)
        operands = [v[:, 0] | (v[:, 1] << np.uint64(32))]
    ty = U64 if vec2u else scalar_of(ptr.type)
    dt = NP[ty.name]                    # i32, u32, or naga's i64, u64
    view = ptr.region.view(dt)
    off = np.broadcast_to(np.asarray(ptr.offset, np.int64), (ex.lanes,)) // dt.itemsize
    rows = (np.zeros(ex.lanes, np.int64) if ptr.region.kind == "buffer"
            else np.arange(ex.lanes) if ptr.rows is None else ptr.rows)
    flat = rows * view.shape[1] + off
    from ..numerics import atomics as natomics     # numba: imported by a shader that uses atomics
    result = natomics.rmw(inst.attrs["fn"], ty.name, view.reshape(-1), flat, mask, *operands)
    if vec2u:
        return np.stack([result & np.uint64(0xFFFFFFFF), result >> np.uint64(32)], axis=1).astype(np.uint32)
    return result


@handler("barrier")
def h_barrier(ex, inst, mask, frame):
    # Lockstep execution already orders every access before the barrier ahead of every access
    # after it; what remains to check is that the whole workgroup (for subgroupBarrier: the
    # whole subgroup) reached it together.
    kind = inst.attrs["kind"]
    group = ex.opts.subgroup_size if kind == "subgroup" else ex.wg_lanes
    wg_mask = mask.reshape(-1, group)
    live = ex.live.reshape(-1, group)
    partial = wg_mask.any(axis=1) & (wg_mask != live).any(axis=1)
    if partial.any():
        w = int(np.flatnonzero(partial)[0])
        lanes = np.zeros(ex.lanes, np.bool_)
        lanes[w * group:(w + 1) * group] = live[w] & ~wg_mask[w]
        what = "subgroup" if kind == "subgroup" else "workgroup"
        ex.fail(inst, f"{kind}Barrier reached by only some invocations of a {what} "
                      f"(non-uniform control flow): undefined behaviour in WGSL", lanes,
                hint="move the barrier out of the branch or loop whose condition differs between "
                     "invocations")
    if ex.races is not None and kind == "workgroup":
        ex.races.barrier(mask)
    elif ex.races is not None and kind == "subgroup":
        ex.races.subgroup_sync(mask, full=True)


# -- composites ----------------------------------------------------------------------------------

@handler("construct")
def h_construct(ex, inst, mask, frame):
    t = inst.type
    args = _args(ex, inst, frame)
    L = ex.lanes
    if isinstance(t, StructType):
        return tuple(args)
    if isinstance(t, ArrayType):
        # an array of arrays lays its elements' runs end to end on one axis (nested_count)
        join = np.concatenate if isinstance(t.elem, ArrayType) else np.stack
        if isinstance(args[0], tuple):
            return _stack_tuples(args, join)
        return join([np.broadcast_to(a, np.shape(args[0])) for a in args], axis=1)
    if isinstance(t, VectorType):
        if len(args) == 1 and np.ndim(args[0]) == 1:
            return np.broadcast_to(args[0][:, None], (L, t.n))
        return np.concatenate([a.reshape(L, -1) for a in args], axis=1)
    if isinstance(t, MatrixType):
        flat = np.concatenate([a.reshape(L, -1) for a in args], axis=1)
        return flat.reshape(L, t.cols, t.rows)
    return args[0]


def _stack_tuples(items, join):
    if isinstance(items[0], tuple):
        return tuple(_stack_tuples([it[i] for it in items], join) for i in range(len(items[0])))
    return join(items, axis=1)


def _take(ex, inst, v, t, step, dyn_val, mask):
    """Component `step` (or the dynamic index) of register value `v` of type `t`."""
    if isinstance(t, StructType):
        return v[step], t.members[step].type
    if isinstance(t, TupleType):        # frexp, modf, atomicCompareExchangeWeak results
        return v[step], t.fields[step][1]
    if isinstance(t, ArrayType):
        elem, count = t.elem, t.count
    elif isinstance(t, MatrixType):
        elem, count = t.column, t.cols
    elif isinstance(t, CoopMatrixType):     # element i of the lane's fragment (SPIR-V, GLSL)
        elem, count = t.elem, _fragment_length(ex, inst, t)
        if ex.pipe.profile.is_flexible(t):  # held whole by each subgroup: the driver's element i
            from .coop import flexible_take
            k = step if step >= 0 else _checked_index(ex, inst, dyn_val, count, mask)
            return flexible_take(ex, inst, v, t, k), elem
    else:
        elem, count = t.elem, t.n
    span = nested_count(elem) if isinstance(t, ArrayType) else None
    if step >= 0:
        return take(v, step, span), elem
    return take(v, _checked_index(ex, inst, dyn_val, count, mask), span), elem


def _fragment_length(ex, inst, t: CoopMatrixType) -> int:
    from .coop import fragment_length
    return fragment_length(ex, inst, t)


@handler("extract")
def h_extract(ex, inst, mask, frame):
    v = frame.vals[inst.args[0].id]
    t = inst.args[0].type
    dyn = iter(inst.args[1:])
    for step in inst.attrs["path"]:
        d = frame.vals[next(dyn).id] if step < 0 else None
        v, t = _take(ex, inst, v, t, step, d, mask)
    return v


@handler("insert")
def h_insert(ex, inst, mask, frame):
    base = frame.vals[inst.args[0].id]
    elem = frame.vals[inst.args[1].id]
    dyn = [frame.vals[a.id] for a in inst.args[2:]]
    return _insert(ex, inst, base, inst.args[0].type, list(inst.attrs["path"]), dyn, elem, mask)


def _insert(ex, inst, v, t, path, dyn, elem, mask):
    step, rest = path[0], path[1:]
    if isinstance(t, StructType):
        items = list(v)
        items[step] = elem if not rest else _insert(ex, inst, v[step], t.members[step].type, rest, dyn, elem, mask)
        return tuple(items)
    sub_t = t.elem if isinstance(t, (ArrayType, VectorType, CoopMatrixType)) else t.column
    count = t.count if isinstance(t, ArrayType) else t.cols if isinstance(t, MatrixType) else \
        _fragment_length(ex, inst, t) if isinstance(t, CoopMatrixType) else t.n
    if step < 0:
        idx, dyn = _checked_index(ex, inst, dyn[0], count, mask), dyn[1:]
    else:
        idx = step
    if isinstance(t, CoopMatrixType) and ex.pipe.profile.is_flexible(t):
        from .coop import flexible_put
        return flexible_put(ex, inst, v, t, idx, elem, mask)
    span = nested_count(sub_t) if isinstance(t, ArrayType) else None
    new_sub = elem if not rest else _insert(ex, inst, take(v, idx, span), sub_t, rest, dyn, elem, mask)
    return put(v, idx, new_sub, span)


@handler("swizzle")
def h_swizzle(ex, inst, mask, frame):
    v = frame.vals[inst.args[0].id]
    return v[:, list(inst.attrs["components"])]


# -- arithmetic: all in numerics -----------------------------------------------------------------

_num = scalar_numerics       # (defined with the matrix handlers, which use it too)


@handler("unary")
def h_unary(ex, inst, mask, frame):
    return _num(ex, "scalar").unary(inst.attrs["fn"], scalar_of(inst.args[0].type).name, frame.vals[inst.args[0].id])


@handler("binary")
def h_binary(ex, inst, mask, frame):
    a, b = frame.vals[inst.args[0].id], frame.vals[inst.args[1].id]
    return _num(ex, "scalar").binary(inst.attrs["fn"], scalar_of(inst.args[0].type).name, a, b)


@handler("select")
def h_select(ex, inst, mask, frame):
    f, t, c = _args(ex, inst, frame)
    return nbuiltins.call("select", scalar_of(inst.type).name, f, t, c)


@handler("convert")
def h_convert(ex, inst, mask, frame):
    src = scalar_of(inst.args[0].type).name
    model = _num(ex, "scalar")
    conv = model.convert_native if inst.attrs.get("native") and hasattr(model, "convert_native") else model.convert
    if inst.attrs.get("saturate"):
        conv = nscalar.convert_saturating
    return conv(frame.vals[inst.args[0].id], src, scalar_of(inst.type).name)


@handler("bitcast")
def h_bitcast(ex, inst, mask, frame):
    s, d = inst.args[0].type, inst.type
    return nscalar.bitcast(frame.vals[inst.args[0].id], scalar_of(s).name, width(s),
                           scalar_of(d).name, width(d))


@handler("builtin")
def h_builtin(ex, inst, mask, frame):
    args = _args(ex, inst, frame)
    ty = scalar_of(inst.args[0].type).name if inst.args else scalar_of(inst.type).name
    return _num(ex, "builtins").call(inst.attrs["fn"], ty, *args)


# -- subgroups -----------------------------------------------------------------------------------

# every active invocation's operand reaches every invocation's result (see emu/memory/races.py)
SUBGROUP_REDUCTIONS = frozenset(("add", "mul", "min", "max", "and", "or", "xor", "all", "any", "ballot"))


def _lane_outside(ex, inst, mask, ids):
    """subgroupShuffle(v, id) / subgroupShuffleXor(v, mask) naming an invocation outside the
    subgroup gets an indeterminate value in WGSL (a kernel written for wider subgroups, run on
    narrower ones): the site is reported once, as out-of-bounds accesses are."""
    sg = ex.opts.subgroup_size
    ids = np.broadcast_to(ids, mask.shape)
    src = ids if inst.attrs["fn"] == "shuffle" else (np.arange(ex.lanes) % sg) ^ ids
    bad = mask & ((src < 0) | (src >= sg))
    if not bad.any():
        return
    name = "subgroupShuffle" if inst.attrs["fn"] == "shuffle" else "subgroupShuffleXor"
    text = f"{name} reads invocation {int(src[bad].max())} of a subgroup of {sg}"     # as first seen
    if ex.opts.bounds == "strict":
        ex.fail(inst, f"{text}: the value is indeterminate in WGSL", bad,
                hint=f"keep the invocation id below subgroup_size ({sg} here)")
    ex.pipe.bounds_log.note(ex, inst, name, "subgroup invocation", "WGSL leaves the value indeterminate: "
                            "emu gives each invocation its own value", bad, bad.sum(), unit="invocation",
                            text=text)


@handler("subgroup")
def h_subgroup(ex, inst, mask, frame):
    args = _args(ex, inst, frame)
    ty = scalar_of(inst.args[0].type).name if inst.args else "bool"
    if ex.races is not None and inst.attrs["fn"] in SUBGROUP_REDUCTIONS:
        ex.races.subgroup_sync(mask, full=False)
    if inst.attrs["fn"] in ("shuffle", "shuffle_xor"):
        _lane_outside(ex, inst, mask, np.asarray(args[1]).astype(np.int64))
    try:
        # a clustered reduction is the reduction of each cluster of consecutive invocations
        # (a power of two; one larger than the subgroup is the whole subgroup)
        sg = min(ex.opts.subgroup_size, inst.attrs.get("cluster", ex.opts.subgroup_size))
        return nreduce.subgroup(inst.attrs["fn"], ty, sg, mask, *args,
                                order=ex.pipe.profile.subgroup_order, num=_num(ex, "scalar"))
    except nreduce.NonUniform as e:
        lanes = np.zeros(ex.lanes, np.bool_)
        lanes[e.lane] = True
        ex.fail(inst, str(e), lanes, hint="the lane/delta operand must be the same in every active "
                                          "invocation of the subgroup (subgroup-uniform)")


# -- calls and control flow ----------------------------------------------------------------------

@handler("call")
def h_call(ex, inst, mask, frame):
    fn = ex.pipe.module.function(inst.attrs["callee"])
    # Value ids are unique module-wide and WGSL has no recursion: the callee shares the table.
    for p, a in zip(fn.params, inst.args):
        frame.vals[p.id] = frame.vals[a.id]
    callee = Frame(frame.vals, ex.lanes)
    ex.run_block(fn.body, mask, callee)
    if inst.result is not None and (mask & ~callee.dead).any():
        # WGSL's front end refuses such a function; IR text can still hold one
        ex.fail(inst, f"@{fn.name} reached its end without returning a value", mask & ~callee.dead,
                hint=f"end @{fn.name} with a return on every path")
    return callee.retval


@handler("if")
def h_if(ex, inst, mask, frame):
    cond = frame.vals[inst.args[0].id]
    then_mask = mask & cond
    else_mask = mask & ~cond
    if then_mask.any():
        ex.run_block(inst.blocks[0], then_mask, frame)
    if else_mask.any() and inst.blocks[1].insts:
        ex.run_block(inst.blocks[1], else_mask & ~frame.dead, frame)


def loop_cost(inst) -> int:
    """Steps one iteration of a loop counts: 1 and its instructions, nested ones included (the
    JIT counts the same, emu/jit/fuse.py)."""
    return 1 + sum(1 for b in inst.blocks for i in b.insts for _ in i.walk())


@handler("loop")
def h_loop(ex, inst, mask, frame):
    ctx = Breakable(True, np.zeros(ex.lanes, np.bool_), np.zeros(ex.lanes, np.bool_))
    frame.breakables.append(ctx)
    active = mask.copy()
    body, continuing = inst.blocks
    cost = ex.pipe.loop_costs.get(id(inst))
    if cost is None:
        cost = ex.pipe.loop_costs[id(inst)] = loop_cost(inst)
    while active.any():
        ex.loop_step(inst, active, cost)
        ctx.continued[:] = False
        ex.run_block(body, active, frame)
        frame.dead &= ~ctx.continued          # continued lanes run the continuing block
        cmask = active & ~frame.dead
        if continuing.insts and cmask.any():
            ex.run_block(continuing, cmask, frame)
        active &= ~frame.dead
    frame.breakables.pop()
    frame.dead &= ~ctx.broken                 # broken lanes go on after the loop


@handler("switch")
def h_switch(ex, inst, mask, frame):
    sel = frame.vals[inst.args[0].id]
    ctx = Breakable(False, np.zeros(ex.lanes, np.bool_))
    frame.breakables.append(ctx)
    cases = inst.attrs["cases"]
    matched = np.zeros(ex.lanes, np.bool_)
    default = None
    for block, selectors in zip(inst.blocks, cases):
        m = np.zeros(ex.lanes, np.bool_)
        for s in selectors:
            if s == "default":
                default = block
            else:
                m |= sel == s
        m &= mask
        matched |= m
        if m.any():
            ex.run_block(block, m, frame)
    if default is not None:
        m = mask & ~matched
        if m.any():
            ex.run_block(default, m, frame)
    frame.breakables.pop()
    frame.dead &= ~ctx.broken


@handler("break")
def h_break(ex, inst, mask, frame):
    frame.breakables[-1].broken |= mask
    frame.dead |= mask


@handler("continue")
def h_continue(ex, inst, mask, frame):
    loop = next(b for b in reversed(frame.breakables) if b.is_loop)
    loop.continued |= mask
    frame.dead |= mask


@handler("break_if")
def h_break_if(ex, inst, mask, frame):
    m = mask & frame.vals[inst.args[0].id]
    frame.breakables[-1].broken |= m
    frame.dead |= m


@handler("return")
def h_return(ex, inst, mask, frame):
    if inst.args:
        v = frame.vals[inst.args[0].id]
        frame.retval = v if frame.retval is None else _merge(frame.retval, v, mask)
    frame.dead |= mask


def _merge(old, new, mask):
    if isinstance(old, tuple):
        return tuple(_merge(o, n, mask) for o, n in zip(old, new))
    m = mask.reshape(mask.shape + (1,) * (np.ndim(old) - 1))
    return np.where(m, new, old)


