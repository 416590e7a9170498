"""Cooperative-matrix addressing and bounds: where each fragment element of a cooperative load or
store lies in memory, and what happens when it lies outside the buffer.

The reference handlers (emu/scheduler/coop.py) and the compiled fast path (emu/jit/coop_fast.py)
both call `place`, so they check the same things in the same order and agree on every address.

`ex` is the executing batch: it gives `lanes`, `opts.subgroup_size`, `opts.bounds`,
`pipe.profile` and `fail(inst, message, lanes, hint)` (which raises).

Out-of-bounds behaviours are the table `OOB_POLICIES`, keyed by the profile's `oob_behavior`
value. To add one, write a function `(OutOfBounds) -> addresses` and add it to the table and to
`emu.profiles.OOB_BEHAVIORS` (a test checks that the two agree).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..isa.types import ArrayType, CoopMatrixType, ScalarType, VectorType
from .memory import Ptr


def stride_unit(ex, inst, t: CoopMatrixType) -> str:
    """What a stride counts: the op's own `stride_unit`, else the profile's rule for 8-bit
    matrices, else array elements."""
    return inst.attrs.get("stride_unit") or (
        ex.pipe.profile.stride_unit_8bit if t.elem.size == 1 else "array_element")


def lanes_of(ex, s: int) -> np.ndarray:
    """The lane mask of subgroup `s` of the batch."""
    sg = ex.opts.subgroup_size
    lanes = np.zeros(ex.lanes, np.bool_)
    lanes[s * sg:(s + 1) * sg] = True
    return lanes


def uniform(ex, inst, what: str, value, subgroups: np.ndarray, mask) -> np.ndarray:
    """Per-subgroup value of an operand that must be the same across the subgroup."""
    sg = ex.opts.subgroup_size
    v = np.asarray(value).reshape(-1, sg)
    if len(subgroups) == len(v) and (v == v[:, :1]).all() and mask.all():
        return v[:, 0].astype(np.int64)     # every lane of every subgroup: nothing to pick
    v = v.astype(np.int64)[subgroups]
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


def pointer_base(ptr: Ptr, sg: int, subgroups: np.ndarray) -> np.ndarray:
    """The pointer's byte offset for each executing subgroup (its first lane's)."""
    if isinstance(ptr.offset, int):
        return np.full(len(subgroups), ptr.offset, np.int64)
    return np.asarray(ptr.offset, np.int64).reshape(-1, sg)[subgroups, 0]


def region_rows(ptr: Ptr, sg: int, subgroups: np.ndarray) -> np.ndarray:
    """The region row each executing subgroup addresses."""
    if ptr.region.kind == "buffer":
        return np.zeros(len(subgroups), np.int64)
    if ptr.rows is None:
        # A private array: each lane reads its own row; cooperative access needs shared memory.
        return subgroups * sg
    return np.asarray(ptr.rows).reshape(-1, sg)[subgroups, 0]


def major_minor(lm, layout: str):
    """The lane map's (major, minor) element indices (lanes, E) for a layout."""
    r, c = lm.rows_idx, lm.cols_idx
    return (r, c) if layout == "row_major" else (c, r)


@dataclass
class Placement:
    """Where a cooperative access of the executing subgroups lies: element (lane l, slot e) of
    subgroup s is at byte base[s] + stride_bytes[s] * major[l, e] + minor[l, e] * esize."""
    t: CoopMatrixType
    layout: str
    lm: object              # the lane map
    base: np.ndarray        # (S,) bytes
    stride_bytes: np.ndarray  # (S,) bytes between rows (row_major) or columns (col_major)
    legal: bool             # the stride is at least one row (column) long

    @property
    def esize(self) -> int:
        return self.t.elem.size

    def addresses(self) -> np.ndarray:
        """Byte address of every fragment element of every executing subgroup: (S, lanes, E)."""
        major_i, minor_i = major_minor(self.lm, self.layout)
        return (self.base[:, None, None] + self.stride_bytes[:, None, None] * major_i[None]
                + minor_i[None] * self.esize)

    def dense_inside(self, nbytes: int) -> bool:
        """Whether the whole strided matrix of every subgroup lies in [0, nbytes) and every
        element is aligned to its size (a conservative, cheap check over (base, stride))."""
        t, esize = self.t, self.esize
        nmaj, major = (t.rows, t.cols) if self.layout == "row_major" else (t.cols, t.rows)
        top = self.base + self.stride_bytes * (nmaj - 1) + (major - 1) * esize + esize
        if (self.base < 0).any() or (top > nbytes).any():
            return False
        return not ((self.base % esize).any() or (self.stride_bytes % esize).any())


def place(ex, inst, ptr: Ptr, t: CoopMatrixType, offset, stride, subgroups, mask, lm, *,
          small_stride_fails: bool = True) -> Placement:
    """Check the uniform offset and stride of a cooperative access and place it. A stride shorter
    than one row (column) fails; with `small_stride_fails=False` the placement is returned
    marked not legal instead, for a caller that leaves the failure to the general path or whose
    rows may overlap (a Vulkan load)."""
    arr = ptr.type
    if isinstance(arr, (ScalarType, VectorType)):
        arr = ArrayType(arr, None)         # a pointer to an element: the memory from there on
    if not isinstance(arr, ArrayType):
        ex.fail(inst, f"cooperative matrix access needs a pointer to an array, not to {arr}")
    layout = inst.attrs["layout"]
    unit = stride_unit(ex, inst, t)
    esize = t.elem.size
    word = arr.stride                      # bytes per array element
    off = uniform(ex, inst, "offset", offset, subgroups, mask)
    st = uniform(ex, inst, "stride", stride, subgroups, mask)
    major = t.cols if layout == "row_major" else t.rows
    # Offsets count array elements. A stride counts array elements too, except where the profile
    # (or the op) says it counts matrix elements, as a Dawn toggle can make it for 8-bit types.
    stride_bytes = st * (esize if unit == "matrix_element" else word)
    small = st * (1 if unit == "matrix_element" or esize == word else word // esize) < major
    if small.any() and small_stride_fails:
        s = int(np.flatnonzero(small)[0])
        ex.fail(inst, f"stride {int(st[s])} is smaller than the matrix's "
                      f"{'row' if layout == 'row_major' else 'column'} of {major} elements "
                      f"({t}, {layout})", lanes_of(ex, subgroups[s]),
                hint="rows (row_major) or columns (col_major) would overlap; pass the leading "
                     "dimension of the matrix in memory")
    base = pointer_base(ptr, ex.opts.subgroup_size, subgroups) + off * word   # (S,)
    if not small.any() or not small_stride_fails:
        aligned(ex, inst, ptr, t, layout, major, word, base, stride_bytes, subgroups)
    return Placement(t, layout, lm, base, stride_bytes, not small.any())


def aligned(ex, inst, ptr: Ptr, t: CoopMatrixType, layout: str, major: int, word: int, base, stride_bytes,
            subgroups):
    """Both dialects lower to Vulkan's OpCooperativeMatrixLoadKHR/StoreKHR (Dawn and naga), whose
    pointer and stride must be multiples of the smaller of 16 bytes and one row's (column's)
    natural alignment; otherwise the access is undefined, so it is an error."""
    row = major * t.elem.size
    need = min(16, row & -row)
    bad = (base % need != 0) | (stride_bytes % need != 0)
    if not bad.any():
        return
    s = int(np.flatnonzero(bad)[0])
    what = "Store" if inst.op == "coop_store" else "Load"
    b, st = int(base[s]), int(stride_bytes[s])
    found = f"its start, byte {b}," if b % need else f"its stride, {st} bytes,"
    step = f"{need // word} array elements" if need > word and need % word == 0 else f"{need} bytes"
    ex.fail(inst, f"misaligned cooperative matrix {what.lower()}: {t} ({layout}) in {ptr.region.describe()}: "
                  f"{found} is not a multiple of {need} bytes (the smaller of 16 and the "
                  f"{'row' if layout == 'row_major' else 'column'}'s {row} bytes), as Vulkan's "
                  f"OpCooperativeMatrix{what}KHR requires (Dawn and wgpu both use it)",
            lanes_of(ex, subgroups[s]),
            hint=f"make the offset and the stride multiples of {step}")


# -- out of bounds ---------------------------------------------------------------------------------

@dataclass
class OutOfBounds:
    """A cooperative access with elements outside its buffer, handed to a policy."""
    ex: object
    inst: object
    ptr: Ptr
    placement: Placement
    subgroups: np.ndarray
    addr: np.ndarray        # (S, lanes, E) bytes
    over: np.ndarray        # (S, lanes, E): the element lies outside
    bad: np.ndarray         # (S,): the subgroup has an element outside

    @property
    def limit(self) -> int:
        return self.ptr.region.nbytes

    def fail(self):
        """The emulator's error for this access (raises)."""
        t, s = self.placement.t, int(np.flatnonzero(self.bad)[0])
        self.ex.fail(self.inst, f"cooperative matrix access out of bounds: {t} touches byte "
                                f"{int(self.addr[s][self.over[s]].max()) + t.elem.size} of "
                                f"{self.ptr.region.describe()}, which has {self.limit} bytes",
                     lanes_of(self.ex, self.subgroups[s]),
                     hint="check offset and stride; without --bounds strict emu applies the "
                          "profile's out-of-bounds behaviour (else Dawn's) and reports the site")


def _oob_error(o: OutOfBounds) -> np.ndarray:
    o.fail()


def _oob_h200_rebase(o: OutOfBounds) -> np.ndarray:
    # Measured on the H200: the whole matrix is read from offset 0 as a dense matrix
    # (stride = its row length in matrix elements).
    p = o.placement
    major = p.t.cols if p.layout == "row_major" else p.t.rows
    major_i, minor_i = major_minor(p.lm, p.layout)
    start = pointer_base(o.ptr, o.ex.opts.subgroup_size, o.subgroups)
    dense = start[:, None, None] + (major_i * major + minor_i)[None] * p.esize
    return np.where(o.bad[:, None, None], dense, o.addr)


def _oob_zero(o: OutOfBounds) -> np.ndarray:
    return np.where(o.over, -1, o.addr)          # -1: read as zero, not written


def _oob_clamp(o: OutOfBounds) -> np.ndarray:
    return np.clip(o.addr, 0, o.limit - o.placement.esize)


# profile's oob_behavior -> what an out-of-bounds access does (returns the addresses to use;
# an address of -1 reads as zero and is not written)
OOB_POLICIES: dict[str, Callable[[OutOfBounds], np.ndarray]] = {
    "error": _oob_error,
    "h200-rebase": _oob_h200_rebase,
    "zero": _oob_zero,
    "clamp": _oob_clamp,
}


# What a WebGPU implementation does where the profile measured nothing: Dawn's robustness
# transform replaces a matrix that does not fit by one at offset 0 with the minimum stride (its
# MSL, HLSL and SPIR-V for subgroupMatrixLoad/Store select both), which is also what the H200 shows.
WEBGPU_OOB = "h200-rebase"
OOB_DONE = {"h200-rebase": "the matrix was read or written at offset 0 with the minimum stride, as Dawn does",
            "zero": "those elements read as zero and were not written",
            "clamp": "those addresses were clamped to the buffer's last element"}


def bounded(ex, inst, ptr: Ptr, p: Placement, subgroups) -> np.ndarray:
    """The addresses of a placed access with bounds applied: inside the buffer they are as
    placed; where not, the profile's out-of-bounds policy decides (an error with
    bounds="strict"), and the site is reported after the dispatch."""
    addr = p.addresses()
    limit = ptr.region.nbytes
    over = ((addr + p.esize > limit) | (addr < 0)) & p.lm.valid[None]
    bad = over.reshape(len(subgroups), -1).any(axis=1)
    if not bad.any():
        return addr
    o = OutOfBounds(ex, inst, ptr, p, subgroups, addr, over, bad)
    if ex.opts.bounds == "strict":
        o.fail()
    behaviour = ex.pipe.profile.oob_behavior
    behaviour = WEBGPU_OOB if behaviour == "error" else behaviour
    sg = ex.opts.subgroup_size
    lanes = np.zeros(ex.lanes, np.bool_)
    first = int(subgroups[int(np.flatnonzero(bad)[0])])
    lanes[first * sg:(first + 1) * sg] = True
    ex.pipe.bounds_log.note(ex, inst, ptr.region.describe(), "cooperative matrix access",
                            OOB_DONE[behaviour], lanes, over.sum(), unit="element")
    out = OOB_POLICIES[behaviour](o)
    # a buffer smaller than the rebased matrix: what still lies outside reads 0, is not written
    return np.where(((out + p.esize > limit) | (out < 0)) & p.lm.valid[None], -1, out)
