"""Lane maps: where each element of a cooperative matrix lives in a subgroup.

A :class:`LaneMap` says, for one (matrix shape, role, subgroup size), that
fragment element ``i`` of subgroup invocation ``lane`` holds matrix element
``coords[lane, i] = (row, col)``.  It is data: built once, checked at
construction, then used by the executor only through precomputed index arrays.

Conventions
-----------
* Roles are ``'A'`` (M x K), ``'B'`` (K x N) and ``'C'`` (M x N; the result
  uses C's map).
* A slot that holds no element (only where rows*cols is not a multiple of the
  subgroup size, e.g. the reference map of an 8x8 matrix on 128 lanes) has
  ``coords == (-1, -1)``.  Gathers ignore it; scatters write ``fill`` there.
* An element held by more than one (lane, i) is a *duplicate*.  It is an error
  unless the map is declared ``duplicated=True`` (RDNA3 replicates A and B
  across lane halves).  Gathers read the lowest lane (then lowest i) owner.

Families
--------
:func:`family_map` builds the maps that vendors publish or that were measured:
``nvidia-driver`` (measured on an H200), ``ptx``, ``amd-rdna3``, ``amd-rdna4``,
``amd-cdna3``, ``apple-simdgroup``, ``intel-xmx``, ``lavapipe`` and
``reference``.  Each builder's docstring names its source.  Profiles may also
give a map as a formula (:func:`from_formula`) or an explicit table
(:func:`from_table`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..errors import EmuError

from .formula import Formula, FormulaError

__all__ = [
    "LaneMap", "LaneMapError", "ROLES", "FAMILIES", "family_map", "from_formula", "from_table",
    "nvidia_driver", "ptx", "amd_rdna3", "amd_rdna4", "amd_cdna3", "apple_simdgroup",
    "intel_xmx", "lavapipe", "reference",
]

ROLES = ("A", "B", "C")


class LaneMapError(EmuError, ValueError):
    """A lane map that does not describe its matrix (or cannot be built)."""


@dataclass(frozen=True, eq=False)
class LaneMap:
    rows: int
    cols: int
    subgroup_size: int
    coords: np.ndarray                 # int (subgroup_size, elements_per_lane, 2)
    duplicated: bool = False
    name: str = ""
    # Derived, filled in by __post_init__ (read-only arrays).
    elements_per_lane: int = field(init=False)
    valid: np.ndarray = field(init=False, repr=False)      # bool (lanes, E): slot holds an element
    lane_idx: np.ndarray = field(init=False, repr=False)   # (rows, cols): lowest owner lane
    elem_idx: np.ndarray = field(init=False, repr=False)   # (rows, cols): its fragment index
    flat_idx: np.ndarray = field(init=False, repr=False)   # (rows, cols): lane*E + i
    rows_idx: np.ndarray = field(init=False, repr=False)   # (lanes, E): row of each slot (0 if padded)
    cols_idx: np.ndarray = field(init=False, repr=False)   # (lanes, E): col of each slot (0 if padded)
    owner_count: np.ndarray = field(init=False, repr=False)  # (rows, cols)

    def __post_init__(self):
        label = self.name or "lane map"
        rows, cols, sg = int(self.rows), int(self.cols), int(self.subgroup_size)
        if rows <= 0 or cols <= 0 or sg <= 0:
            raise LaneMapError(f"{label}: rows, cols and subgroup_size must be positive, got {rows}x{cols} on {sg} lanes")
        try:
            coords = np.array(self.coords, dtype=np.int64)
        except (TypeError, ValueError) as exc:
            raise LaneMapError(f"{label}: coords are not an integer array ({exc})") from None
        if coords.ndim != 3 or coords.shape[0] != sg or coords.shape[2] != 2 or coords.shape[1] == 0:
            raise LaneMapError(
                f"{label}: coords must have shape (subgroup_size={sg}, elements_per_lane, 2), got {coords.shape}")
        r, c = coords[..., 0], coords[..., 1]
        pad = (r == -1) & (c == -1)
        bad = ~pad & ((r < 0) | (r >= rows) | (c < 0) | (c >= cols))
        if bad.any():
            lane, i = (int(x) for x in np.argwhere(bad)[0])
            raise LaneMapError(
                f"{label}: lane {lane} element {i} is ({int(r[lane, i])}, {int(c[lane, i])}), outside the "
                f"{rows}x{cols} matrix (use (-1, -1) for a slot that holds nothing)")
        flat = np.where(pad, 0, r * cols + c).ravel()
        count = np.bincount(flat[~pad.ravel()], minlength=rows * cols).reshape(rows, cols)
        if (count == 0).any():
            er, ec = (int(x) for x in np.argwhere(count == 0)[0])
            raise LaneMapError(
                f"{label}: element ({er}, {ec}) of the {rows}x{cols} matrix is held by no lane "
                f"({int((count == 0).sum())} uncovered in all)")
        if (count > 1).any() and not self.duplicated:
            er, ec = (int(x) for x in np.argwhere(count > 1)[0])
            owners = [(int(a), int(b)) for a, b in np.argwhere((r == er) & (c == ec))]
            raise LaneMapError(
                f"{label}: element ({er}, {ec}) is held by {len(owners)} slots (lane, i) {owners[:4]}; "
                "declare the map duplicated=True if the hardware replicates it")

        E = coords.shape[1]
        # Lowest owner of each element: visit slots in reverse (lane, i) order so
        # the first (lowest) owner is written last and wins.
        slot = np.arange(sg * E)
        keep = ~pad.ravel()
        order = slot[keep][::-1]
        lane_idx = np.empty(rows * cols, np.int64)
        elem_idx = np.empty(rows * cols, np.int64)
        lane_idx[flat[order]] = order // E
        elem_idx[flat[order]] = order % E

        def ro(a):
            a = np.ascontiguousarray(a)
            a.setflags(write=False)
            return a

        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "cols", cols)
        object.__setattr__(self, "subgroup_size", sg)
        object.__setattr__(self, "coords", ro(coords))
        object.__setattr__(self, "elements_per_lane", E)
        object.__setattr__(self, "valid", ro(~pad))
        object.__setattr__(self, "lane_idx", ro(lane_idx.reshape(rows, cols)))
        object.__setattr__(self, "elem_idx", ro(elem_idx.reshape(rows, cols)))
        object.__setattr__(self, "flat_idx", ro((lane_idx * E + elem_idx).reshape(rows, cols)))
        object.__setattr__(self, "rows_idx", ro(np.where(pad, 0, r)))
        object.__setattr__(self, "cols_idx", ro(np.where(pad, 0, c)))
        object.__setattr__(self, "owner_count", ro(count))

    # ------------------------------------------------------------------ queries
    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    @property
    def has_padding(self) -> bool:
        return not bool(self.valid.all())

    @property
    def has_duplicates(self) -> bool:
        return bool((self.owner_count > 1).any())

    def owners(self, row: int, col: int) -> list[tuple[int, int]]:
        """Every (lane, i) that holds element (row, col)."""
        hit = (self.coords[..., 0] == row) & (self.coords[..., 1] == col)
        return [(int(a), int(b)) for a, b in np.argwhere(hit)]

    def same_as(self, other: "LaneMap") -> bool:
        return (self.shape == other.shape and self.subgroup_size == other.subgroup_size
                and np.array_equal(self.coords, other.coords))

    def as_table(self) -> list[list[list[int]]]:
        """``table[lane][i] = [row, col]`` (the form profile files use)."""
        return self.coords.tolist()

    def __repr__(self):
        dup = ", duplicated" if self.duplicated else ""
        return (f"LaneMap({self.name or 'unnamed'}: {self.rows}x{self.cols} on {self.subgroup_size} lanes, "
                f"{self.elements_per_lane} per lane{dup})")

    # ------------------------------------------------------------ data motion
    def to_matrix(self, frags: np.ndarray) -> np.ndarray:
        """Fragments (..., lanes, E) -> matrices (..., rows, cols); one fancy index."""
        frags = np.asarray(frags)
        if frags.shape[-2:] != (self.subgroup_size, self.elements_per_lane):
            raise LaneMapError(
                f"{self.name or 'lane map'}: fragments must end in (lanes={self.subgroup_size}, "
                f"E={self.elements_per_lane}), got shape {frags.shape}")
        return frags[..., self.lane_idx, self.elem_idx]

    def to_fragments(self, mat: np.ndarray, fill=0) -> np.ndarray:
        """Matrices (..., rows, cols) -> fragments (..., lanes, E); padded slots get ``fill``."""
        mat = np.asarray(mat)
        if mat.shape[-2:] != (self.rows, self.cols):
            raise LaneMapError(
                f"{self.name or 'lane map'}: matrices must end in ({self.rows}, {self.cols}), got shape {mat.shape}")
        out = mat[..., self.rows_idx, self.cols_idx]
        if self.has_padding:
            out[..., ~self.valid] = fill
        return out

    def replicas_agree(self, frags: np.ndarray) -> np.ndarray:
        """For duplicated maps: per leading index, do all copies of each element agree?"""
        frags = np.asarray(frags)
        back = self.to_fragments(self.to_matrix(frags))
        same = (back == frags) | ~self.valid
        if np.issubdtype(frags.dtype, np.floating):   # NaN copies count as agreeing with NaN
            same |= np.isnan(back) & np.isnan(frags)
        return same.reshape(*frags.shape[:-2], -1).all(axis=-1)


# ---------------------------------------------------------------- helpers
def _grid(sg: int, E: int):
    return np.arange(sg)[:, None], np.arange(E)[None, :]


def _make(rows, cols, sg, row, col, *, duplicated=False, name=""):
    coords = np.stack(np.broadcast_arrays(row, col), axis=-1)
    return LaneMap(rows, cols, sg, coords, duplicated=duplicated, name=name)


def _role(role: str) -> str:
    r = {"A": "A", "B": "B", "C": "C", "RESULT": "C", "R": "C", "D": "C", "ACC": "C",
         "ACCUMULATOR": "C"}.get(str(role).upper())
    if r is None:
        raise LaneMapError(f"unknown role {role!r}; use 'A', 'B' or 'C' (the result uses C's map)")
    return r


def _need(cond: bool, family: str, what: str):
    if not cond:
        raise LaneMapError(f"{family} lane map: {what}")


# ---------------------------------------------------------------- families
def nvidia_driver(role, rows, cols, elem_bits, subgroup_size=32) -> LaneMap:
    """NVIDIA Vulkan driver maps, measured on an H200 (driver 580.159.04).

    The closed form stated in tests/data/hw/h200/lanemaps.json ("general_formula"),
    checked against every measured map by tests/profiles:
    g = lane >> 2, t = lane & 3; v = elements per 32-bit register (2 for 16-bit A/B
    and for every accumulator, 4 for 8-bit A/B); the 'inner' dimension (A, C:
    columns; B: rows) is tiled in 4v, the outer in 8; i = j + v*(p + P*q) gives
    inner = 4vp + vt + j, outer = 8q + g.
    """
    role = _role(role)
    fam = "nvidia-driver"
    _need(subgroup_size == 32, fam, f"needs a subgroup of 32, not {subgroup_size}")
    v = 2 if role == "C" else max(1, 32 // int(elem_bits))
    inner_len, outer_len = (rows, cols) if role == "B" else (cols, rows)
    _need(inner_len % (4 * v) == 0 and outer_len % 8 == 0, fam,
          f"{role} {rows}x{cols} ({elem_bits}-bit) does not tile into 8 x {4 * v} pieces")
    P, Q = inner_len // (4 * v), outer_len // 8
    lane, i = _grid(32, v * P * Q)
    g, t = lane >> 2, lane & 3
    j, p, q = i % v, (i // v) % P, i // (v * P)
    inner, outer = 4 * v * p + v * t + j, 8 * q + g
    row, col = (inner, outer) if role == "B" else (outer, inner)
    return _make(rows, cols, 32, row, col, name=f"{fam} {role} {rows}x{cols} {elem_bits}-bit")


def ptx(role, rows, cols, elem_bits, subgroup_size=32) -> LaneMap:
    """PTX ``mma.sync.m16n8kK`` fragments in PTX register order (PTX ISA 9.7.14.5).

    One 32-bit register holds v = 32/bits elements of A or B (v = 2 for the
    accumulator's pairs); g = lane >> 2, t = lane & 3, register r = i // v, j = i % v:
      A (16 x K):  row = g + 8*(r & 1),  col = (r >> 1)*4v + v*t + j
      B (K x 8):   row = r*4v + v*t + j, col = g
      C (16 x 8):  row = g + 8*(r & 1),  col = 2t + j
    This reproduces the tables for m16n8k8 and m16n8k16 (.f16/.bf16) and
    m16n8k16/m16n8k32 (.u8/.s8).  N = 16 (B and C) is two n8 fragments side by
    side, the first half of the fragment holding columns 0..7 -- our assumption
    of how a compiler would hold two mma.m16n8 results; NVIDIA's Vulkan driver
    interleaves its 16x16 accumulator differently (see :func:`nvidia_driver`).
    """
    role = _role(role)
    fam = "ptx"
    _need(subgroup_size == 32, fam, f"needs a subgroup of 32, not {subgroup_size}")
    v = 2 if role == "C" else max(1, 32 // int(elem_bits))
    n = cols if role in "BC" else 8
    _need(n in (8, 16), fam, f"{role} {rows}x{cols}: N must be 8 or 16")
    halves = n // 8
    if role == "A":
        _need(rows == 16 and cols % (4 * v) == 0, fam, f"A must be 16 x (multiple of {4 * v}), got {rows}x{cols}")
        E = rows * cols // 32
    elif role == "B":
        _need(rows % (4 * v) == 0, fam, f"B rows (K={rows}) must be a multiple of {4 * v}")
        E = rows * 8 // 32
    else:
        _need(rows == 16, fam, f"C must have 16 rows, got {rows}")
        E = 4
    lane, i = _grid(32, E * halves)
    half, i8 = i // E, i % E
    g, t = lane >> 2, lane & 3
    r, j = i8 // v, i8 % v
    if role == "A":
        row, col = g + 8 * (r & 1), (r >> 1) * 4 * v + v * t + j
    elif role == "B":
        row, col = r * 4 * v + v * t + j, g + 8 * half
    else:
        row, col = g + 8 * (r & 1), 2 * t + j + 8 * half
    return _make(rows, cols, 32, row, col, name=f"{fam} {role} {rows}x{cols} {elem_bits}-bit")


def amd_rdna3(role, rows, cols, elem_bits=16, subgroup_size=32) -> LaneMap:
    """RDNA3 (gfx11) WMMA as Mesa RADV lowers VK_KHR_cooperative_matrix.

    Source: radv_nir_lower_cooperative_matrix.c (GFX11 path) and the RDNA3 ISA /
    GPUOpen 'WMMA on RDNA3' note.  A and B are 16 elements per lane, lanes 0..15
    own them and every further group of 16 lanes holds a copy (duplicated):
    A[l][i] = (l % 16, i), B[l][i] = (i, l % 16).  The accumulator interleaves
    rows across the 16-lane groups: C[l][i] = (i * (S/16) + l // 16, l % 16).
    """
    role = _role(role)
    fam = "amd-rdna3"
    _need(subgroup_size in (32, 64), fam, f"needs wave32 or wave64, not {subgroup_size}")
    _need((rows, cols) == (16, 16), fam, f"only 16x16 matrices, got {rows}x{cols}")
    sg = subgroup_size
    if role == "C":
        lane, i = _grid(sg, 256 // sg)
        return _make(16, 16, sg, i * (sg // 16) + lane // 16, lane % 16, name=f"{fam} C 16x16 wave{sg}")
    lane, i = _grid(sg, 16)
    row, col = (lane % 16, i) if role == "A" else (i, lane % 16)
    return _make(16, 16, sg, row, col, duplicated=True, name=f"{fam} {role} 16x16 wave{sg}")


def amd_rdna4(role, rows, cols, elem_bits=16, subgroup_size=32) -> LaneMap:
    """RDNA4 (gfx12) WMMA as Mesa RADV lowers it: no replication.

    Source: radv_nir_lower_cooperative_matrix.c (GFX12 path).  Every role uses
    the accumulator layout (A transposed): lane group b = l // 16 starts at row
    8b (wave32) or at rows 0, 8, 4, 12 (wave64, bit-reversed group), element i
    adds i: C/B[l][i] = (base + i, l % 16), A[l][i] = (l % 16, base + i).
    RADV notes the ISA's A/B order differs only by a K permutation applied to
    both, so products are unchanged.
    """
    role = _role(role)
    fam = "amd-rdna4"
    _need(subgroup_size in (32, 64), fam, f"needs wave32 or wave64, not {subgroup_size}")
    _need((rows, cols) == (16, 16), fam, f"only 16x16 matrices, got {rows}x{cols}")
    sg = subgroup_size
    lane, i = _grid(sg, 256 // sg)
    grp = lane // 16
    base = 8 * grp if sg == 32 else np.array([0, 8, 4, 12])[grp]
    row, col = (lane % 16, base + i) if role == "A" else (base + i, lane % 16)
    return _make(16, 16, sg, row, col, name=f"{fam} {role} 16x16 wave{sg}")


def amd_cdna3(role, rows, cols, elem_bits=16, subgroup_size=64) -> LaneMap:
    """CDNA3 MFMA (non-blocked, wave64), e.g. v_mfma_f32_16x16x16_f16 / 32x32x8_f16.

    Source: AMD CDNA3 ISA matrix-core operand layouts (as tabulated by AMD's
    matrix instruction calculator and IREE's MMASingleSubgroupLayout).  With
    M the tile size (16 or 32) and E = elements per lane:
      A (M x K): (l % M, E*(l // M) + i);  B (K x M): (E*(l // M) + i, l % M)
      C (M x M): rows in blocks of 4 per lane group,
                 row = (i // 4)*(4*64/M) + 4*(l // M) + i % 4,  col = l % M
    (16x16: row = 4*(l // 16) + i; 32x32: row = 8*(i // 4) + 4*(l // 32) + i % 4.)
    """
    role = _role(role)
    fam = "amd-cdna3"
    _need(subgroup_size == 64, fam, f"needs wave64, not {subgroup_size}")
    M = rows if role in "AC" else cols
    _need(M in (16, 32), fam, f"tile size must be 16 or 32, got {rows}x{cols} for {role}")
    groups = 64 // M
    if role == "C":
        _need(rows == cols, fam, f"accumulator must be square, got {rows}x{cols}")
        lane, i = _grid(64, M * M // 64)
        row = (i // 4) * (4 * groups) + 4 * (lane // M) + i % 4
        return _make(M, M, 64, row, lane % M, name=f"{fam} C {M}x{M}")
    K = cols if role == "A" else rows
    _need((K * M) % 64 == 0, fam, f"{role} {rows}x{cols} does not split over 64 lanes")
    E = K * M // 64
    lane, i = _grid(64, E)
    kk, mm = E * (lane // M) + i, lane % M
    row, col = (mm, kk) if role == "A" else (kk, mm)
    return _make(rows, cols, 64, row, col, name=f"{fam} {role} {rows}x{cols}")


def apple_simdgroup(role, rows, cols, elem_bits=16, subgroup_size=32) -> LaneMap:
    """Apple simdgroup_matrix 8x8 (Apple7+): 32 lanes x 2 elements, same for every role.

    Source: Apple's MLX (steel BaseMMAFrag::get_coord) and Philip Turner's
    metal-benchmarks; Metal's spec leaves it opaque.  row = ((l>>1)&3) + 4*((l>>4)&1),
    col = 2*(l&1) + 4*((l>>3)&1) + i.
    """
    fam = "apple-simdgroup"
    role = _role(role)
    _need(subgroup_size == 32, fam, f"needs a SIMD-group of 32, not {subgroup_size}")
    _need((rows, cols) == (8, 8), fam, f"only 8x8 matrices, got {rows}x{cols}")
    lane, i = _grid(32, 2)
    row = ((lane >> 1) & 3) + 4 * ((lane >> 4) & 1)
    col = 2 * (lane & 1) + 4 * ((lane >> 3) & 1) + i
    return _make(8, 8, 32, row, col, name=f"{fam} {role} 8x8")


def intel_xmx(role, rows, cols, elem_bits, subgroup_size) -> LaneMap:
    """Intel XMX/DPAS as Mesa ANV lowers VK_KHR_cooperative_matrix.

    Source: brw_nir_lower_cooperative_matrix.c.  pf = 32/bits elements share a
    dword; element e = c*pf + j of a lane is packed dword c, byte/half j.
      A, C (row-major 'slices'): w = cols/pf;
          row = lane // w + c*(S // w),  col = pf*(lane % w) + j
      B (column 'slices'):
          row = pf*(lane // cols + c*(S // cols)) + j,  col = lane % cols
    """
    role = _role(role)
    fam = "intel-xmx"
    sg = subgroup_size
    pf = max(1, 32 // int(elem_bits))
    _need((rows * cols) % (sg * pf) == 0, fam, f"{role} {rows}x{cols} ({elem_bits}-bit) does not fill whole dwords on {sg} lanes")
    E = rows * cols // sg
    lane, e = _grid(sg, E)
    c, j = e // pf, e % pf
    if role == "B":
        _need(sg % cols == 0, fam, f"B with {cols} columns needs a subgroup that is a multiple of {cols}")
        row, col = pf * (lane // cols + c * (sg // cols)) + j, lane % cols
    else:
        _need(cols % pf == 0 and sg % (cols // pf) == 0, fam,
              f"{role} {rows}x{cols}: {cols // pf if cols % pf == 0 else cols} dwords per row must divide the subgroup of {sg}")
        w = cols // pf
        row, col = lane // w + c * (sg // w), pf * (lane % w) + j
    return _make(rows, cols, sg, row, col, name=f"{fam} {role} {rows}x{cols} {elem_bits}-bit sg{sg}")


def lavapipe(role, rows, cols, elem_bits=16, subgroup_size=8) -> LaneMap:
    """Mesa lavapipe (llvmpipe) cooperative matrices: lane = column.

    Source: lvp_nir_lower_cooperative_matrix.c.  Each lane holds one column of
    A and of the accumulator (element i = row i) and one row of B, stored
    transposed (element i = column i): A/C[l][i] = (i, l), B[l][i] = (l, i).
    Lavapipe advertises only 8x8x8 with a subgroup of 8 (its 256-bit vectors).
    """
    role = _role(role)
    fam = "lavapipe"
    sg = subgroup_size
    if role == "B":
        _need(rows == sg, fam, f"B needs one row per lane: {rows} rows on {sg} lanes")
        lane, i = _grid(sg, cols)
        return _make(rows, cols, sg, lane, i, name=f"{fam} B {rows}x{cols}")
    _need(cols == sg, fam, f"{role} needs one column per lane: {cols} columns on {sg} lanes")
    lane, i = _grid(sg, rows)
    return _make(rows, cols, sg, i, lane, name=f"{fam} {role} {rows}x{cols}")


def reference(role, rows, cols, elem_bits=0, subgroup_size=32) -> LaneMap:
    """A simple map for ANY shape and subgroup size (no vendor claims).

    Element e = row*cols + col (row-major) lives in lane e % S at index e // S;
    E = ceil(rows*cols / S).  Slots past the end are padding, (-1, -1).
    """
    role = _role(role)
    sg = subgroup_size
    _need(sg > 0, "reference", "subgroup size must be positive")
    E = -(-rows * cols // sg)
    lane, i = _grid(sg, E)
    e = i * sg + lane
    inside = e < rows * cols
    row = np.where(inside, e // cols, -1)
    col = np.where(inside, e % cols, -1)
    return _make(rows, cols, sg, row, col, name=f"reference {role} {rows}x{cols} sg{sg}")


FAMILIES: dict[str, Callable[..., LaneMap]] = {
    "nvidia-driver": nvidia_driver,
    "ptx": ptx,
    "amd-rdna3": amd_rdna3,
    "amd-rdna4": amd_rdna4,
    "amd-cdna3": amd_cdna3,
    "apple-simdgroup": apple_simdgroup,
    "intel-xmx": intel_xmx,
    "lavapipe": lavapipe,
    "reference": reference,
}


def family_map(family: str, role: str, rows: int, cols: int, elem_bits: int, subgroup_size: int) -> LaneMap:
    """Build a map of a named family for one matrix (role, shape, element width, subgroup size)."""
    try:
        builder = FAMILIES[family]
    except KeyError:
        raise LaneMapError(f"unknown lane-map family {family!r}; known: {', '.join(FAMILIES)}") from None
    return builder(role, int(rows), int(cols), int(elem_bits), int(subgroup_size))


def from_formula(row: str, col: str, rows: int, cols: int, subgroup_size: int,
                 elements_per_lane: int | None = None, *, duplicated=False, name="formula") -> LaneMap:
    """A map from two formulas in ``lane`` and ``i`` (see :mod:`emu.profiles.formula`).

    The names ``rows``, ``cols`` and ``sg`` (subgroup size) may also appear.
    ``elements_per_lane`` defaults to ceil(rows*cols / subgroup_size).
    """
    names = ("lane", "i", "rows", "cols", "sg")
    E = elements_per_lane if elements_per_lane is not None else -(-rows * cols // subgroup_size)
    if not isinstance(E, int) or isinstance(E, bool) or E <= 0:
        raise LaneMapError(f"{name}: elements_per_lane must be a positive integer, got {E!r}")
    lane, i = _grid(subgroup_size, E)
    env = dict(lane=lane, i=i, rows=rows, cols=cols, sg=subgroup_size)
    try:
        r = Formula(row, names).evaluate(**env)
        c = Formula(col, names).evaluate(**env)
    except FormulaError as exc:
        raise LaneMapError(f"{name}: {exc.message}") from None
    return _make(rows, cols, subgroup_size, r, c, duplicated=duplicated, name=name)


def from_table(table, rows: int, cols: int, subgroup_size: int, *, duplicated=False, name="table") -> LaneMap:
    """A map from ``table[lane][i] = [row, col]``."""
    if not isinstance(table, (list, tuple, np.ndarray)) or len(table) != subgroup_size:
        got = len(table) if isinstance(table, (list, tuple, np.ndarray)) else type(table).__name__
        raise LaneMapError(f"{name}: the table needs one list per lane ({subgroup_size}), got {got}")
    lens = {len(x) if isinstance(x, (list, tuple, np.ndarray)) else -1 for x in table}
    if len(lens) != 1 or -1 in lens:
        raise LaneMapError(f"{name}: every lane must list the same number of [row, col] pairs")
    try:
        arr = np.array(table)
    except ValueError as exc:
        raise LaneMapError(f"{name}: not a regular table of [row, col] pairs ({exc})") from None
    if arr.ndim != 3 or arr.shape[2] != 2 or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
        raise LaneMapError(f"{name}: entries must be [row, col] integer pairs (got shape {arr.shape}, {arr.dtype})")
    return LaneMap(rows, cols, subgroup_size, arr, duplicated=duplicated, name=name)


# --------------------------------------------------------------- flexible and workgroup-scope layouts
def nvidia_tiles(rows: int, cols: int, role: str, invocations: int, subgroup_size: int):
    """The H200 driver's spread of a VK_NV_cooperative_matrix2 matrix of flexible dimensions or
    workgroup scope (tests/data/hw/h200/vulkan_nv2_lanes.npz: 15 shapes at 32..256 invocations, f32
    and f16 accumulators, f16 A and B, every element of every invocation). The subgroups form a grid
    of 2 rows when there are 4 or more, else 1; each holds a tile of the matrix (an accumulator its
    grid cell, A its grid row's rows whole, B its grid column's columns whole, so A and B repeat
    across the grid), spread over its lanes in 8x8 atoms as the 16x16 configurations are: lane l
    has rows 8i + l/4 and columns 8j + 2(l%4) + {0, 1}, row atoms outermost; B the transpose of
    that (columns 8j + l/4, rows 8i + 2(l%4) + {0, 1}, column atoms outermost). Returns (rows, cols),
    each (invocations, length); None where the shape does not split so."""
    import numpy as np
    sg = subgroup_size
    groups = invocations // sg
    if sg != 32 or invocations % sg or groups < 1:
        return None
    gr = 2 if groups >= 4 else 1
    gc = groups // gr
    if gr * gc != groups:
        return None
    t_rows = rows // gr if role in "AC" else rows
    t_cols = cols // gc if role in "BC" else cols
    if role == "B":
        t_rows, t_cols = t_cols, t_rows             # laid out as its transpose
    if t_rows % 8 or t_cols % 8 or t_rows * t_cols == 0:
        return None
    lane = np.arange(sg)
    i, j, b = np.meshgrid(np.arange(t_rows // 8), np.arange(t_cols // 8), np.arange(2), indexing="ij")
    r = 8 * i.ravel()[None, :] + (lane // 4)[:, None]                     # (lanes, length)
    c = 8 * j.ravel()[None, :] + 2 * (lane % 4)[:, None] + b.ravel()[None, :]
    if role == "B":
        r, c = c, r
    g = np.arange(groups)
    r0 = (g // gc) * (rows // gr) if role in "AC" else np.zeros(groups, int)
    c0 = (g % gc) * (cols // gc) if role in "BC" else np.zeros(groups, int)
    out_r = (r0[:, None, None] + r[None]).reshape(invocations, -1)
    out_c = (c0[:, None, None] + c[None]).reshape(invocations, -1)
    return out_r, out_c


FLEXIBLE_LAYOUTS = {"nvidia-tiles": nvidia_tiles}
