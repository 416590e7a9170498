"""SPV_NV_tensor_addressing (VK_NV_cooperative_matrix2): tensor layouts and views, and the
element each (row, column) of a matrix loads from or stores to through them.

A layout or view is an IR value of u32s (what the front end builds and the executor reads):
  layout of D dimensions (5 D + 2): clamp mode, blockSize[D], dimension[D], stride[D],
                                    offset[D] (i32 bits), span[D], clampValue
  view of D dimensions (3 D + 5):   hasDimensions, permutation[D], dimension[D], stride[D],
                                    clipRowOffset, clipRowSpan, clipColOffset, clipColSpan
The addressing is GL_NV_cooperative_matrix2's: (row, col) -> index in the (clipped) view ->
view coordinate (permuted) -> index in the span -> span coordinate -> tensor coordinate (offset
added, clamped by the mode) -> block coordinate -> element index (times the strides).
"""
from __future__ import annotations

import numpy as np

from ..isa.types import U32, ArrayType

MAX_DIM = 5
CLAMP_MODES = ("Undefined", "Constant", "ClampToEdge", "Repeat", "MirrorRepeat")
UNDEFINED, CONSTANT, CLAMP_TO_EDGE, REPEAT, MIRROR_REPEAT = range(5)
NO_CLIP = (0, 0xFFFFFFFF, 0, 0xFFFFFFFF)


def layout_type(dim: int) -> ArrayType:
    return ArrayType(U32, 5 * dim + 2)


def view_type(dim: int) -> ArrayType:
    return ArrayType(U32, 3 * dim + 5)


def layout_dim(n: int) -> int:
    return (n - 2) // 5


def view_dim(n: int) -> int:
    return (n - 5) // 3


# field -> (first slot, count) of a layout / view of `d` dimensions
def layout_fields(d: int) -> dict:
    return {"clamp_mode": (0, 1), "block": (1, d), "dim": (1 + d, d), "stride": (1 + 2 * d, d),
            "offset": (1 + 3 * d, d), "span": (1 + 4 * d, d), "clamp_value": (1 + 5 * d, 1)}


def view_fields(d: int) -> dict:
    return {"has_dim": (0, 1), "perm": (1, d), "dim": (1 + d, d), "stride": (1 + 2 * d, d),
            "clip": (1 + 3 * d, 4)}


def initial_layout(d: int, clamp: int) -> list[int]:
    """createTensorLayoutNV: dimensions, strides, offsets and spans 0, block sizes 1, clamp value 0."""
    return [clamp] + [1] * d + [0] * (4 * d) + [0]


def initial_view(d: int, has_dim: bool, perm) -> list[int]:
    """createTensorViewNV: dimensions and strides 0, the clip everything."""
    return [int(has_dim)] + list(perm) + [0] * (2 * d) + list(NO_CLIP)


class AddressingError(ValueError):
    """A layout or view that addresses nothing (a zero span or block size): its message."""


def element_index(layout: np.ndarray, view, rows: np.ndarray, cols: np.ndarray, ncols: int, store: bool,
                  blocks: bool = False):
    """(index, accessed, clamped, undefined) for fragment slots (L, E) of lanes whose layout
    (view) values are the rows of `layout` (L, 5D+2) (`view` (L, 3V+5) or None): the element
    index from the load's pointer (with block sizes, the block's); whether the slot is accessed
    (a view's clip skips the rest); whether it lies outside the tensor (a load returns the clamp
    value, a store is dropped); whether it lies outside with clamp mode Undefined (undefined
    behaviour). With `blocks`, also the block coordinates and the coordinates in the block,
    (L, E, D) each (what a decode function is given)."""
    lay = layout.astype(np.int64)
    d = layout_dim(lay.shape[1])
    f = layout_fields(d)

    def col(name, k=0):
        return lay[:, f[name][0] + k][:, None]
    mode = col("clamp_mode")
    span = [col("span", k) for k in range(d)]
    r, c = rows.astype(np.int64), cols.astype(np.int64)
    accessed = np.ones(np.broadcast_shapes(r.shape, mode.shape), np.bool_)
    if view is None:
        index = r * ncols + c
    else:
        vw = view.astype(np.int64)
        v = view_dim(vw.shape[1])
        g = view_fields(v)
        has_dim = bool(vw[0, 0])
        perm = [int(x) for x in vw[0, g["perm"][0]:g["perm"][0] + v]]
        if sorted(perm) != list(range(v)):
            raise AddressingError(f"a tensor view's permutation {perm} does not order its {v} dimensions")
        cro, crs, cco, ccs = (vw[:, g["clip"][0] + k][:, None] for k in range(4))
        accessed = (r >= cro) & (r < cro + crs) & (c >= cco) & (c < cco + ccs)
        index = (r - cro) * np.minimum(ncols, ccs) + (c - cco)
        if has_dim:
            dims = [vw[:, g["dim"][0] + k][:, None] for k in range(v)]
            stride = [vw[:, g["stride"][0] + k][:, None] for k in range(v)]
        else:
            if v != d:
                raise AddressingError(f"a tensor view without dimensions of {v} dimensions on a layout of {d}: "
                                      f"the view then takes the layout's span, so both need the same number")
            dims = span
            stride = [None] * v
            stride[v - 1] = np.ones_like(span[0])
            for k in range(v - 2, -1, -1):
                stride[k] = stride[k + 1] * span[k + 1]
        coord = [None] * v
        for k in range(v - 1, -1, -1):
            i = perm[k]
            _nonzero(dims[i], accessed, "a tensor view's dimension" if has_dim else "the layout's span")
            coord[i] = index % np.maximum(dims[i], 1)
            index = index // np.maximum(dims[i], 1)
        index = sum(coord[k] * stride[k] for k in range(v))
    span_coord = [None] * d
    for k in range(d - 1, -1, -1):
        _nonzero(span[k], accessed, "the layout's span (set its dimensions, or slice it)")
        span_coord[k] = index % np.maximum(span[k], 1)
        index = index // np.maximum(span[k], 1)
    outside = np.zeros_like(accessed)
    linear = np.zeros(accessed.shape, np.int64)
    block_coord, in_block = [], []
    for k in range(d):
        off = col("offset", k)
        off = np.where(off >= 1 << 31, off - (1 << 32), off)
        dim, block = col("dim", k), col("block", k)
        _nonzero(block, accessed, "the layout's block size")
        cc = span_coord[k] + off
        out = (cc < 0) | (cc >= dim)
        outside |= out
        if not store:
            edge = np.clip(cc, 0, np.maximum(dim - 1, 0))
            rep = cc % np.maximum(dim, 1)
            period = np.maximum(2 * dim - 2, 1)
            mir = cc % period
            mir = np.where(mir >= dim, 2 * dim - 2 - mir, mir)
            cc = np.where(out & (mode == CLAMP_TO_EDGE), edge,
                          np.where(out & (mode == REPEAT), rep, np.where(out & (mode == MIRROR_REPEAT), mir, cc)))
        linear += (cc // np.maximum(block, 1)) * col("stride", k)
        block_coord.append(cc // np.maximum(block, 1))
        in_block.append(cc % np.maximum(block, 1))
    undefined = accessed & outside & (mode == UNDEFINED)
    if store:
        clamped = accessed & outside
    else:
        clamped = accessed & outside & (mode == CONSTANT)
    if blocks:
        coords = [np.broadcast_to(x, linear.shape) for x in block_coord], [np.broadcast_to(x, linear.shape) for x in in_block]
        return linear, accessed, clamped, undefined, np.stack(coords[0], -1), np.stack(coords[1], -1)
    return linear, accessed, clamped, undefined


def _nonzero(x, where, what):
    if ((x == 0) & where).any():
        raise AddressingError(f"{what} is 0: no element can be addressed")
