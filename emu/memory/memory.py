"""Memory of the virtual device: every address space is bytes, read and written in WGSL layout.

A `Region` is a 2-D uint8 array (rows, row_bytes). Which row a lane uses depends on the address
space: storage and uniform buffers have one row shared by all lanes, workgroup memory one row per
workgroup of the batch, function and private memory one row per lane. A pointer is a region and a
byte offset (a Python int when it is the same for every lane, else an int64 array over lanes).

Values in registers are numpy arrays with a leading lane axis: scalars (L,), vectors (L, n),
matrices (L, cols, rows), arrays (L, count, ...element); structs are tuples of member values.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..isa.types import (ArrayType, AtomicType, CoopMatrixType, MatrixType, ScalarType, StructType,
                         Type, VectorType, round_up)
from ..numerics.dtypes import NP

ROW_ALIGN = 16   # rows are padded so that every scalar type can view them


class Region:
    def __init__(self, name: str, kind: str, rows: int, nbytes: int, *, data: np.ndarray | None = None,
                 binding: tuple[int, int] | None = None, access: str = "read_write",
                 space: str = "storage"):
        self.name, self.kind, self.binding, self.access, self.space = name, kind, binding, access, space
        self.nbytes = nbytes                         # the bytes the shader may use
        row_bytes = max(ROW_ALIGN, round_up(ROW_ALIGN, nbytes))
        if data is None:
            data = np.zeros((rows, row_bytes), np.uint8)
        self.data = data
        self._views: dict = {}

    def view(self, dtype) -> np.ndarray:
        """The region as (rows, row_bytes // itemsize) elements of `dtype`."""
        dtype = np.dtype(dtype)
        v = self._views.get(dtype)
        if v is None:
            v = self._views[dtype] = self.data.view(dtype)
        return v

    def describe(self) -> str:
        if self.binding is not None:
            return f"buffer '{self.name}' (@group({self.binding[0]}) @binding({self.binding[1]}))"
        return f"{self.space} variable '{self.name}'"


@dataclass
class Ptr:
    region: Region
    offset: int | np.ndarray     # bytes from the start of the row
    type: Type                   # the pointee type
    rows: np.ndarray | None      # row of each lane; None: lane l uses row l (function/private)
    name: str | None = None      # what it points into, for messages ("var<workgroup> 'tile'")

    def at(self, extra, type: Type) -> "Ptr":
        return Ptr(self.region, self.offset + extra, type, self.rows, self.name)

    def describe(self) -> str:
        return self.region.describe() if self.region.binding is not None or not self.name else self.name


class Cell:
    """A variable whose type holds cooperative matrices (alone, or in arrays and structs, as
    llama.cpp keeps its accumulators). It stays in register form (lane fragments), not bytes: how
    a lane holds its fragment is the device's lane map, not a WGSL memory layout. A part of it
    (`acc[i][j]`, `s.m`) is a Cell too, reading and writing the root's value through a path of
    steps: ("member", i), or ("index", i) with i an int or a per-lane index array."""

    def __init__(self, type: Type, value, root: "Cell | None" = None, path: tuple = ()):
        self.type, self.path = type, path
        self.root = root if root is not None else self
        if root is None:
            self._value = value

    @property
    def value(self):
        v = self.root._value
        for kind, i in self.path:
            v = _pick(v, kind, i)
        return v

    def at(self, type: Type, kind: str, i) -> "Cell":
        """The part `type` of this cell: kind "member" (i a member number) or "index" (i an
        element index; nested arrays keep a run of entries per element, see nested_count)."""
        step = (kind, i) if kind == "member" else (("index", nested_count(type)), i)
        return Cell(type, None, self.root, self.path + (step,))

    def store(self, value, mask: np.ndarray):
        old = self.root._value
        self.root._value = _where(mask, _put(old, self.path, value), old)


def _pick(v, kind: str, i):
    if kind == "member":
        return v[i]
    return take(v, i, kind[1])           # ("index", span)


def nested_count(t: Type) -> int | None:
    """For an array of arrays (of arrays...): how many innermost elements it holds, which share
    one axis of its register form (so that nesting depth costs no numpy axes, numpy has 64).
    None for any other type, an array of non-arrays included: its elements keep their own axes."""
    if not isinstance(t, ArrayType):
        return None
    n = 1
    while isinstance(t, ArrayType):
        n *= t.count
        t = t.elem
    return n


def take(v, i, span: int | None):
    """Element `i` (an int, or one index per lane) of an array's register value `v`; `span` is
    nested_count of the element type (the element is itself an array: a run of `span` entries)."""
    if isinstance(v, tuple):                     # an array of structs: a tuple of stacked members
        return tuple(take(x, i, span) for x in v)
    if span is None:
        return v[:, i] if isinstance(i, (int, np.integer)) else v[np.arange(len(v)), i]
    if isinstance(i, (int, np.integer)):
        return v[:, i * span:(i + 1) * span]
    return v[np.arange(len(v))[:, None], np.asarray(i, np.int64)[:, None] * span + np.arange(span)]


def put(v, i, new, span: int | None):
    """`v` with element `i` (as for take) replaced by `new`, every lane."""
    if isinstance(v, tuple):
        return tuple(put(x, i, n, span) for x, n in zip(v, new))
    out = np.array(v)
    if span is None:
        if isinstance(i, (int, np.integer)):
            out[:, i] = new
        else:
            out[np.arange(len(v)), i] = new
    elif isinstance(i, (int, np.integer)):
        out[:, i * span:(i + 1) * span] = new
    else:
        out[np.arange(len(v))[:, None], np.asarray(i, np.int64)[:, None] * span + np.arange(span)] = new
    return out


def _put(v, path: tuple, new):
    """`v` with the part at `path` replaced by `new` (every lane)."""
    if not path:
        return new
    (kind, i), rest = path[0], path[1:]
    if kind == "member":
        items = list(v)
        items[i] = _put(v[i], rest, new)
        return tuple(items)
    return put(v, i, _put(_pick(v, kind, i), rest, new), kind[1])


def _where(mask: np.ndarray, new, old):
    if (isinstance(new, np.ndarray) and isinstance(old, np.ndarray) and new.shape == old.shape
            and new.dtype == old.dtype and mask.all()):
        return new          # every lane writes (a K loop's accumulator): no select to do
    if isinstance(old, tuple):
        return tuple(_where(mask, n, o) for n, o in zip(new, old))
    return np.where(mask.reshape((-1,) + (1,) * (np.ndim(old) - 1)), new, old)


def _repeat(v, n: int):
    if isinstance(v, tuple):
        return tuple(_repeat(x, n) for x in v)
    return np.repeat(v[:, None], n, axis=1)


def _leaf_dtype(t: ScalarType):
    # bool is stored as a u32 (0 or 1) in host-shareable memory, WGSL-wise only in workgroup/private.
    return np.uint32 if t.name == "bool" else NP[t.name]


def _flat(view: np.ndarray) -> np.ndarray:
    return view.reshape(-1)


def _flat_index(ptr: Ptr, view: np.ndarray, lanes: int, i: np.ndarray) -> np.ndarray:
    """Element index into the flattened region for element index `i` (shape (L, ...)) of each
    lane's row: the lane's own row, its workgroup's, or the buffer's single row."""
    if ptr.region.kind == "buffer":
        return i
    rows = np.arange(lanes) if ptr.rows is None else ptr.rows
    return rows.reshape(rows.shape + (1,) * (i.ndim - 1)) * view.shape[1] + i


def load(ptr: Ptr, lanes: int, sel: np.ndarray | None = None):
    """Read the value `ptr` points at for every lane; `sel` restricts the lanes read (others
    get zeros) so that an inactive lane's stale offset is never dereferenced."""
    return _load(ptr, ptr.type, ptr.offset, lanes, sel)


def _load(ptr: Ptr, t: Type, off, lanes: int, sel):
    if isinstance(t, StructType):
        return tuple(_load(ptr, m.type, off + o, lanes, sel) for m, o in zip(t.members, t.offsets))
    if isinstance(t, (ArrayType, MatrixType)):
        leaf, idx = _parts_of(t)
        cols = _shared_columns(ptr, leaf, off, idx)
        if cols is not None:
            return _load_columns(ptr, leaf, cols, lanes)
        return _load(ptr, leaf, _expand(off, lanes)[..., None] + idx, lanes, sel)
    if isinstance(t, VectorType):
        return _load_scalars(ptr, t.elem, off, lanes, sel, t.n)
    if isinstance(t, AtomicType):
        return _load(ptr, t.elem, off, lanes, sel)      # i32, u32, i64, u64 or vec2<u32>
    return _load_scalars(ptr, t, off, lanes, sel, None)


def _nest_offsets(t: ArrayType):
    """The innermost non-array element of a nest of arrays and the byte offset of each of them,
    in order (one axis: the register form of nested arrays, see nested_count)."""
    offs = np.zeros(1, np.int64)
    while isinstance(t, ArrayType):
        offs = (offs[:, None] + np.arange(t.count) * t.stride).reshape(-1)
        t = t.elem
    return t, offs


def _parts_of(t: ArrayType | MatrixType):
    """The element an array (a nest of arrays) or a matrix is made of (a matrix: its column
    vector) and the byte offset of each element, in the order of the value's register form."""
    if isinstance(t, ArrayType):
        return _nest_offsets(t)
    return t.column, np.arange(t.cols) * round_up(t.column.align, t.column.size)


def _shared_columns(ptr: Ptr, leaf: Type, off, idx: np.ndarray):
    """Where every lane reads or writes the same elements of its own row (a lane's variable) or of
    the buffer's one row (an offset the same in every lane): the columns of the region's view as
    the leaf's dtype, (elements,) or (elements, vector width); None where lanes differ (an offset
    per lane, workgroup memory) or the leaf is not a scalar or a vector. Whole arrays and matrices
    are then one slice of columns instead of an index per lane and element (a 512-float array in
    each of 30,000 lanes was 15 M indices, 120 MB)."""
    if not isinstance(off, int) or (ptr.rows is not None and ptr.region.kind != "buffer"):
        return None
    if isinstance(leaf, AtomicType):
        leaf = leaf.elem
    n = leaf.n if isinstance(leaf, VectorType) else None
    elem = leaf.elem if isinstance(leaf, VectorType) else leaf
    if not isinstance(elem, ScalarType):
        return None
    size = np.dtype(_leaf_dtype(elem)).itemsize
    at = off + idx
    if (at % size).any():
        return None
    cols = at // size
    return cols if n is None else cols[:, None] + np.arange(n)


def _leaf_view(ptr: Ptr, leaf: Type):
    if isinstance(leaf, AtomicType):
        leaf = leaf.elem
    elem = leaf.elem if isinstance(leaf, VectorType) else leaf
    return elem, ptr.region.view(_leaf_dtype(elem))


def _load_columns(ptr: Ptr, leaf: Type, cols: np.ndarray, lanes: int):
    elem, view = _leaf_view(ptr, leaf)
    if ptr.region.kind == "buffer":
        out = np.broadcast_to(view[0, cols], (lanes,) + cols.shape).copy()
    else:
        out = view[:, cols]
    return out.astype(np.bool_) if elem.name == "bool" else out


def _store_columns(ptr: Ptr, leaf: Type, cols: np.ndarray, value, mask: np.ndarray, full: bool):
    _, view = _leaf_view(ptr, leaf)
    value = np.asarray(value).astype(view.dtype, copy=False)
    if not full and not mask.all():
        value = np.where(mask.reshape(mask.shape + (1,) * cols.ndim), value, view[:, cols])
    view[:, cols] = value


def _expand(off, lanes: int) -> np.ndarray:
    return np.full(lanes, off, np.int64) if isinstance(off, int) else off


def _load_scalars(ptr: Ptr, t: ScalarType, off, lanes: int, sel, n: int | None):
    dt = _leaf_dtype(t)
    view = ptr.region.view(dt)
    size = np.dtype(dt).itemsize
    if isinstance(off, int) and ptr.rows is None and ptr.region.kind != "buffer":
        # Same offset in every lane's own row: a column slice, no gather.
        i = off // size
        out = view[:, i] if n is None else view[:, i:i + n]
        out = out.copy()
    elif isinstance(off, int) and ptr.region.kind == "buffer":
        i = off // size
        v = view[0, i] if n is None else view[0, i:i + n]
        out = np.broadcast_to(v, (lanes,) + (() if n is None else (n,))).copy()
    else:
        o = _expand(off, lanes)
        if sel is not None:
            o = np.where(sel.reshape(sel.shape + (1,) * (o.ndim - 1)), o, 0)
        i = o // size
        if n is not None:
            i = i[..., None] + np.arange(n)
        out = _flat(view)[_flat_index(ptr, view, lanes, i)]
    return out.astype(np.bool_) if t.name == "bool" else out


def store(ptr: Ptr, value, lanes: int, mask: np.ndarray, full: bool):
    """Write `value` through `ptr` for the lanes of `mask` (all lanes when `full`). Lanes write in
    lane order, so when two lanes hit the same address the higher lane's value remains."""
    _store(ptr, ptr.type, ptr.offset, value, lanes, mask, full)


def _store(ptr: Ptr, t: Type, off, value, lanes, mask, full):
    if isinstance(t, StructType):
        for m, o, v in zip(t.members, t.offsets, value):
            _store(ptr, m.type, off + o, v, lanes, mask, full)
        return
    if isinstance(t, (ArrayType, MatrixType)):
        leaf, idx = _parts_of(t)
        cols = _shared_columns(ptr, leaf, off, idx)
        if cols is not None and ptr.region.kind != "buffer":
            _store_columns(ptr, leaf, cols, value, mask, full)
            return
        _store(ptr, leaf, _expand(off, lanes)[..., None] + idx, value, lanes, mask, full)
        return
    if isinstance(t, AtomicType):
        t = t.elem                  # i32, u32, i64, u64 or vec2<u32>
    n = t.n if isinstance(t, VectorType) else None
    elem = t.elem if isinstance(t, VectorType) else t
    dt = _leaf_dtype(elem)
    view = ptr.region.view(dt)
    size = np.dtype(dt).itemsize
    value = np.asarray(value).astype(dt, copy=False)
    if isinstance(off, int) and ptr.rows is None and ptr.region.kind != "buffer":
        # Same offset in every lane's own row (function/private memory): a column slice.
        i = off // size
        dst = view[:, i] if n is None else view[:, i:i + n]
        if full:
            dst[...] = value
        else:
            np.copyto(dst, value, where=mask.reshape(mask.shape + (1,) * (dst.ndim - 1)))
        return
    o = _expand(off, lanes)
    i = o // size
    if n is not None:
        i = i[..., None] + np.arange(n)
    flat = _flat_index(ptr, view, lanes, i)
    if not full and mask.all():
        full = True
    if full:
        # numpy assigns repeated indices in order: the last (highest) lane wins, deterministically.
        _flat(view)[flat] = value
        return
    m = mask.reshape(mask.shape + (1,) * (flat.ndim - 1))
    flat, value = np.broadcast_arrays(flat, value)
    m = np.broadcast_to(m, flat.shape)
    _flat(view)[flat[m]] = value[m]


def zero_value(t: Type, lanes: int, coop=None):
    """The zero value of `t` in register form; `coop(t)` gives a cooperative matrix's (its
    fragments' shape is the device's lane map)."""
    if isinstance(t, CoopMatrixType):
        return coop(t)
    if isinstance(t, StructType):
        return tuple(zero_value(m.type, lanes, coop) for m in t.members)
    if isinstance(t, ArrayType):
        n, leaf = nested_count(t), t
        while isinstance(leaf, ArrayType):
            leaf = leaf.elem
        inner = zero_value(leaf, lanes, coop)
        if isinstance(inner, tuple):
            return _repeat(inner, n)
        return np.zeros((lanes, n) + inner.shape[1:], inner.dtype)
    if isinstance(t, MatrixType):
        return np.zeros((lanes, t.cols, t.rows), NP[t.elem.name])
    if isinstance(t, VectorType):
        return np.zeros((lanes, t.n), NP[t.elem.name])
    if isinstance(t, AtomicType):
        return zero_value(t.elem, lanes, coop)
    return np.zeros(lanes, NP[t.name])
