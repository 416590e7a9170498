"""The fusion JIT: an entry point of plain scalar code compiled into one numba kernel that runs
every invocation of a dispatch, lane after lane, with real per-lane branches and loops.

The interpreter (emu.scheduler) runs each IR instruction over all lanes of a batch in lockstep.
Running each invocation to its end before the next starts gives the same memory only where no
invocation can see another's writes in between. The compiler therefore takes an entry point only
when, for every buffer it touches, it either only reads it, or writes it and never reads it. Then
every read sees the memory as it was before the dispatch. Where one store instruction runs at most
once per invocation, the later (higher) invocation wins an address in both orders; a buffer stored
more often (a store in a loop, as llama.cpp's element-wise shaders do, or several store
instructions) keeps each element's owner in the run, and a second invocation storing to an element
stops the kernel: the interpreter runs the dispatch (an earlier part it interpreted is whole
batches of its own, Pipeline._interpret_first). At dispatch time the buffers must not
overlap (the same buffer bound twice), or the interpreter runs instead.

Covered: scalars bool / i8..i64 / u8..u64 / f32 (64-bit integers without division or float
conversion), and f16 held as its bits: + - * / fma, negation, comparisons, min / max / clamp /
abs, conversions to and from every integer of 32 bits or fewer and f32 (each the interpreter's
rule, through its numba twin in emu/numerics/scalar_compiled.py); matrices in buffers (as their
columns); the
builtin input vectors; constants and overrides (baked into the kernel); vectors, arrays and
structs held in registers as their scalars (construct, extract, insert, swizzle, constants, and
the scalar ops applied per component); function `var`s and var<private> globals of any such type
(aggregates in arrays of their scalar leaves, indexed with each index checked); calls, inlined
(a `return` leaves a one-shot loop around the callee's body; pointer parameters are the caller's
pointers); buffers that are an array of scalars (runtime-sized or not), a scalar, a struct's
members, or an array of vectors, arrays or structs (each scalar type inside a view of its own,
indexed by element); array_length; unary, binary, select, convert, bitcast and builtins (select,
integer and f32 min / max / clamp, abs, f32 floor / ceil / round / trunc, fma and dot; on nvidia-h200 inverseSqrt, exp, exp2,
log, log2, pow, sin, cos, tan through MUFU's measured tables) with the rules of emu.numerics (see
numerics/scalar_compiled.py), on nvidia-h200 those of emu.numerics.nvidia (f32 flushing and
canonical NaNs; its f32 x / y and x % y through MUFU.RCP, whose measured table the kernel takes as
one more argument, as every table it reads); if / loop / break / continue / break_if / return /
switch (a one-shot loop).

Workgroup memory and barriers ("workgroup mode"): values live in per-lane arrays, statements that
hold a barrier (workgroupBarrier, or subgroupBarrier: ordering only, a subgroup's lanes being in
step; see sg_tags) run for the whole workgroup at once (their conditions must be the same in every
live invocation, as lockstep requires), and the barrier-free statements between them run as one
group, invocation after invocation. Every access to workgroup memory checks that no other
invocation touched the element since the last barrier (not only since the group began: a race
across a branch or loop that holds a barrier is one the interpreter reports): lane order and
lockstep agree exactly when there is no such conflict, and where there is one the interpreter
takes over. Workgroup arrays of structs are one flat array per member. A
barrier that only some invocations reach, or a loop or branch around a barrier whose condition
differs between them, also hands over (the interpreter then reports it). Workgroup arrays may be
arrays of arrays (flattened row-major); a switch with only a default around a barrier runs as a
one-shot loop that the whole workgroup must leave together. A long workgroup-mode kernel (an
unrolled shader: thousands of lines) is cut into functions of bounded length, the values one
group uses made its locals (emu/jit/outline.py), so that numba's time and memory grow with the
kernel's length, not faster.

Subgroup operations also run in workgroup mode: a statement holding one runs for the whole
workgroup at once, as a barrier does, and the operation combines each subgroup's active
invocations in emu.numerics.reduce's order (see _Gen.subgroup); f16 subgroup arithmetic and
ballots are declined.

Anything else (cooperative ops, atomics, matrix arithmetic, f16 transcendentals and f16 %,
recursion, other builtins) leaves the whole entry point to the interpreter: `compile_pipeline` returns None.
With --jobs N > 1 an entry point with loops runs its workgroups on N threads, keeping each store's
address per invocation; if two invocations stored to one element (so their order would matter)
the dispatch is run again serially, which is exact since the kernel reads only buffers it never
writes.

Errors keep the interpreter's words: a kernel that meets an out-of-bounds index, a constant
index it cannot vouch for, or a lane that runs more steps than --max-steps
allows stops and says in which workgroup; the dispatch then goes on in the interpreter from the
batch holding that workgroup, which reaches the same instruction with the same memory (reads see
only what was there before the dispatch) and raises the same EmuError, or finishes. An out-of-bounds index hands over in both bounds modes: the
interpreter clamps it and reports the site (or stops, with --bounds strict), so the values and
the report are the same with and without the compiler.

Generated source is written to a cache folder (EMU_JIT_CACHE, default ~/.cache/emu/jit) named by a
hash of its text, and compiled there by numba with cache=True, so a shader compiles once per
machine; its first line is a hash of the code it calls (_stamp), so that a changed callee means a
new file. The folder must be private (ours, 0700): a folder others can write would let them plant
the code we import. Generated code names no shader identifier (slots and value ids only).
"""
from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..isa.ir import Block, Function, Inst, Value
from ..isa.ops import OP
from ..isa.types import ArrayType, MatrixType, ScalarType, StructType, VectorType
from ..numerics.dtypes import INT_MAX, INT_MIN
from ..numerics.reduce import identity
from ..numerics.scalar import float_bounds_for_int
from . import outline

__all__ = ["compile_pipeline", "Kernel", "Unsupported"]

ERR_OOB, ERR_FALLBACK, ERR_COLLIDE = 1, 2, 3
SCALAR_MODELS = ("ieee", "nvidia-sfu")      # the profiles' scalar arithmetic the generated code has
# f16 is held as its bits (u16): loaded, stored, selected and converted to and from f32, no more
_NP = {"i32": "np.int32", "u32": "np.uint32", "f32": "np.float32", "bool": "np.bool_", "f16": "np.uint16"}
_ZERO = {"i32": "np.int32(0)", "u32": "np.uint32(0)", "f32": "np.float32(0.0)", "bool": "False",
         "f16": "np.uint16(0)"}
# 8- and 16-bit integers: values of their own numpy type, arithmetic through int64 wrapped back
# (emu.numerics.scalar's rules); _NP itself stays the cooperative kernel's (it moves these as bits)
_NARROW = {"i8": "np.int8", "u8": "np.uint8", "i16": "np.int16", "u16": "np.uint16"}
# 64-bit integers: their arithmetic on uint64 (which wraps), no division or float conversion
_WIDE = {"i64": "np.int64", "u64": "np.uint64"}
_NPX = {**_NP, **_NARROW, **_WIDE}
_ZERO.update({t: f"{c}(0)" for t, c in {**_NARROW, **_WIDE}.items()})
_WIDTH = {"i8": 8, "u8": 8, "i16": 16, "u16": 16, "i32": 32, "u32": 32, "i64": 64, "u64": 64}
MAX_LEAVES = 256            # scalars of one aggregate value held in registers (more: the interpreter)
_INPUTS = ("global_invocation_id", "local_invocation_id", "local_invocation_index", "workgroup_id",
           "num_workgroups", "subgroup_invocation_id", "subgroup_size", "subgroup_id", "num_subgroups")


# Ops the fusion JIT declines (the interpreter runs pipelines that use them): _Gen.inst (and
# _Gen.aggregate, for vectors, arrays and structs held as values) has a rule for every other op;
# tests/isa/test_op_coverage.py checks that the two cover the op table.
UNSUPPORTED_OPS = frozenset({
    OP.atomic,
    OP.coop_convert, OP.coop_fill, OP.coop_length, OP.coop_load, OP.coop_mma, OP.coop_mul,
    OP.coop_scalar, OP.coop_store, OP.texture, OP.coop_reduce, OP.coop_load_tensor, OP.coop_store_tensor,
    OP.coop_per_element, OP.coop_coordinate, OP.address_ptr,
})


_SG_REDUCE = ("add", "mul", "min", "max", "and", "or", "xor")
_SG_SCAN = ("inclusive_add", "exclusive_add", "inclusive_mul", "exclusive_mul")
_SG_MOVE = ("broadcast", "broadcast_first", "shuffle", "shuffle_xor", "shuffle_up", "shuffle_down", "quad_broadcast")


def _sg_identity(op: str, t: str):
    """What an inactive invocation contributes to a subgroup reduction (emu.numerics.reduce)."""
    return identity(op, t).item()


def _flat_count(t) -> int:
    """The scalars of a vector or array (of vectors or arrays), as workgroup memory lays them flat."""
    n = 1
    while isinstance(t, (ArrayType, VectorType)):
        n, t = n * (t.n if isinstance(t, VectorType) else t.count), t.elem
    return n


class Unsupported(Exception):
    """The entry point needs something the JIT does not cover (the interpreter runs it)."""


class Slot(NamedTuple):
    """A buffer the generated code indexes: a bound global, or one member of its struct (SPIR-V's
    Block-decorated structs, WGSL's structs of arrays), at a byte offset of the binding."""
    g: object               # the global (its group and binding)
    t: object               # the array or scalar at that offset
    elem: ScalarType
    offset: int

    def view(self, reg, dtype):
        """(the slot's elements in `reg` as a flat array of `dtype`, their count), or None where
        the bound buffer is too small to hold them (the interpreter runs the dispatch)."""
        t, avail = self.t, reg.nbytes - self.offset
        if isinstance(t, ArrayType):
            n = avail // t.stride if t.count is None else t.count
            need = n * t.stride
        else:
            n, need = 1, self.elem.size
        if avail < 0 or need > avail:
            return None
        return reg.view(dtype).reshape(-1)[self.offset // np.dtype(dtype).itemsize:], n


def _scalar(t) -> str:
    if isinstance(t, ScalarType) and t.name in _NPX:
        return t.name
    raise Unsupported(f"type {t}")


def _parts(t) -> list:
    """The component types of an aggregate held in registers (vector, array, struct), in order."""
    if isinstance(t, VectorType):
        return [t.elem] * t.n
    if isinstance(t, ArrayType) and t.count is not None:
        return [t.elem] * t.count
    if isinstance(t, StructType):
        return [m.type for m in t.members]
    if isinstance(t, MatrixType):       # (its columns)
        return [t.column] * t.cols
    raise Unsupported(f"type {t}")


def _column_stride(t: MatrixType) -> int:
    """The bytes from one column of a matrix in a buffer to the next (MatrixType.size's)."""
    return t.size // t.cols


def _count_leaves(t) -> int:
    return 1 if isinstance(t, ScalarType) else sum(_count_leaves(x) for x in _parts(t))


_EX2, _LG2 = "rt.nv_ex2({}, ex2_tab)", "rt.nv_lg2({}, lg2_tab, lg2_neg1_tab)"
_SIN, _COS = "rt.nv_sincos({}, 0, sin_tab)", "rt.nv_sincos({}, 8388608, sin_tab)"
_L2E, _LN2 = "np.float32(1.4426950408889634)", "np.float32(0.6931471805599453)"
# nvidia-h200's f32 transcendentals: the MUFU sequences of emu.numerics.nvidia._F32 (its result
# flushed and canonical, as nvidia.call does), and the tables each reads
_NV_SFU = {
    "exp2": (_EX2.format("{0}"), ("ex2",)),
    "exp": (_EX2.format(f"rt.nv_mul({{0}}, {_L2E})"), ("ex2",)),
    "log2": (_LG2.format("{0}"), ("lg2", "lg2_neg1")),
    "log": (f"rt.nv_mul({_LG2.format('{0}')}, {_LN2})", ("lg2", "lg2_neg1")),
    "pow": (_EX2.format(f"rt.nv_mul({{1}}, {_LG2.format('{0}')})"), ("ex2", "lg2", "lg2_neg1")),
    "sin": (_SIN.format("{0}"), ("sin",)),
    "cos": (_COS.format("{0}"), ("sin",)),
    "tan": (f"rt.nv_mul({_SIN.format('{0}')}, rt.nv_rcp({_COS.format('{0}')}, rcp_tab))", ("sin", "rcp")),
    "tanh": ("rt.nv_tanh({0}, ex2_tab, rcp_tab)", ("ex2", "rcp")),
}


# the 32-bit integer bit builtins (emu.numerics.builtins), of the value's unsigned bits `{0}`;
# results wrap to the type (firstTrailingBit / firstLeadingBit of 0: T(-1))
_BIT_FNS = {
    "countOneBits": "rt.one_bits32({0})",
    "countTrailingZeros": "rt.trailing_zeros32({0})",
    "countLeadingZeros": "32 - rt.bit_length32({0})",
    "firstTrailingBit": "np.int64(-1) if {0} == 0 else rt.trailing_zeros32({0})",
    "firstLeadingBit": "rt.bit_length32({0}) - 1",
}


class _Gen:
    def __init__(self, pipe):
        self.pipe = pipe
        self.nv = getattr(pipe.profile, "scalar", "ieee") == "nvidia-sfu"     # emu.numerics.nvidia's rules
        # subgroupBarrier()s: workgroup memory's tags tell their sub-intervals apart (sg_tags)
        self.sgbar = any(i.op == OP.barrier and i.attrs["kind"] == "subgroup" for i in pipe.entry.walk())
        self.rcp = False                # f32 / or % on nvidia-h200: the kernel takes MUFU.RCP's table
        self.rsq = False                # inverseSqrt on nvidia-h200: MUFU.RSQ's table
        self.tabs: list[str] = []       # the other MUFU tables the kernel reads (emu.numerics.sfu)
        self.module = pipe.module
        self.entry: Function = pipe.entry
        self.lines: list[str] = []
        self.vals: dict[int, object] = {}       # value id -> expression / ('vec', [..]) / pointer
        self.bufs: dict[str, int] = {}          # global name -> buffer slot
        self.buf_types: list = []
        self.loads: dict[int, int] = {}
        self.stores: dict[int, list] = {}
        self.inputs: set[str] = set()
        self.loop_depth = 0
        self.nloops = 0
        self.nagree = 0
        self.sw_continued: set[int] = set()     # switches a `continue` leaves
        # workgroup mode (workgroup memory or barriers): values live in per-lane arrays, and the
        # code between barriers runs invocation by invocation for the whole workgroup
        self.wg = any(i.op in (OP.barrier, OP.subgroup) for i in pipe.entry.walk()) or any(
            g.space == "workgroup" for g in pipe.module.globals
            if any(i.op == OP.global_ and i.attrs["name"] == g.name for i in pipe.entry.walk()))
        self.decls: dict[str, str] = {}         # per-lane arrays (workgroup mode): name -> dtype
        self.scratch: dict[str, tuple] = {}     # a subgroup op's arrays: name -> (dtype, count)
        self.helpers: dict[str, list] = {}      # the module's subgroup helpers: name -> their lines
        self.track_reads = False                # rdf[slot] = True at each buffer read (the fusion kernel)
        self.wmem: dict[int, tuple] = {}        # workgroup variable's slot -> (dtype, count)
        self.wslots: dict[str, int] = {}        # workgroup variable name -> slot
        self.wtypes: dict[int, object] = {}     # workgroup variable's slot -> its type (arrays of arrays)
        self.steps = "stp[local]" if self.wg else "steps"
        self.privs: dict[str, tuple] = {}       # private (function) storage: leaf -> (dtype, size, zero)
        self.ret_flag = "ret"                   # what `return` sets: the entry's flag, or an inlined call's
        self.ret_val = None                     # an inlined call's result names
        self.inlining: list[str] = []           # the functions being inlined (no recursion)
        self.fake_id = 1 << 40                  # ids of the per-component instructions of vector ops
        self.private_globals: dict = {}         # var<private> (SPIR-V's Private): name -> its storage

    # -- helpers --------------------------------------------------------------------------
    def emit(self, depth: int, text: str):
        self.lines.append("    " * depth + text)

    def v(self, value) -> str:
        e = self.vals.get(value.id)
        if not isinstance(e, str):
            raise Unsupported(f"value %{value.id} used as a scalar")
        return e

    def slot_elem(self, g, t, offset: int) -> ScalarType:
        """The element type of the array or scalar `t` at `offset` in buffer `g`, or Unsupported."""
        elem = t.elem if isinstance(t, ArrayType) else t
        if not isinstance(elem, ScalarType) or elem.name not in _NPX or elem.name == "bool":
            raise Unsupported(f"buffer {g.name} of {t}")
        if isinstance(t, ArrayType) and t.stride != elem.size:
            raise Unsupported(f"buffer {g.name}: stride {t.stride}")
        return elem

    def buffer(self, g, t, offset: int = 0) -> int:
        """The slot of the array or scalar `t` at byte `offset` of buffer `g` (the whole binding, or
        one member of its struct: each member is a slot of its own, its own view of the binding)."""
        key = (g.name, offset)
        k = self.bufs.get(key)
        if k is None:
            elem = self.slot_elem(g, t, offset)
            if offset % elem.size:
                raise Unsupported(f"buffer {g.name}: a member at offset {offset}")
            k = self.bufs[key] = len(self.buf_types)
            self.buf_types.append(Slot(g, t, elem, offset))
            self.loads[k] = 0
            self.stores[k] = []
        return k

    def read(self, k: int, d: int):
        """A read of slot k: counted, and in the fusion kernel flagged as it runs (a binding that
        shares memory with a written one may be bound and never read: ggml's unused inputs)."""
        self.loads[k] += 1
        if self.track_reads:
            self.emit(d, f"rdf[{k}] = True")

    def buffer_ptr(self, g, t, offset: int = 0):
        """A pointer into a bound buffer: to its struct (resolved by the member accesses that
        follow), to an array ("arr", slot) or to a scalar ("elem", slot, index)."""
        if g.space not in ("storage", "uniform") or g.group is None:
            raise Unsupported(f"global {g.name} in {g.space}")
        if isinstance(t, StructType):
            return ("struct", g, t, offset)
        if isinstance(t, ArrayType) and not isinstance(t.elem, ScalarType):
            return ("aarr", g, t, offset)
        if isinstance(t, VectorType):           # a vector member: its components are scalars of the struct
            return ("vecb", g, t, offset)
        k = self.buffer(g, t, offset)
        return ("arr", k) if isinstance(t, ArrayType) else ("elem", k, "0")

    def leaf_slot(self, g, arr, offset: int, leaf) -> int:
        """The slot of the scalars of type `leaf` inside the elements of `arr` (an array of vectors,
        arrays or structs at byte `offset` of buffer g): a view of the binding as `leaf`'s type,
        whose count is the array's element count."""
        ty = _scalar(leaf)
        if ty == "bool" or arr.stride % leaf.size or offset % leaf.size:
            raise Unsupported(f"buffer {g.name} of {arr}")
        key = (g.name, offset, ty)
        k = self.bufs.get(key)
        if k is None:
            k = self.bufs[key] = len(self.buf_types)
            self.buf_types.append(Slot(g, arr, leaf, offset))
            self.loads[k] = 0
            self.stores[k] = []
        return k

    def element_access(self, inst: Inst, base, d: int):
        """A pointer into an element of a buffer's array of aggregates: ("bp", g, array, offset,
        outer index, type reached, byte offset in the element, [(index, stride)]), or, at a scalar,
        ("elem", slot, index)."""
        r = inst.result
        dyn = iter(inst.args[1:])
        path = list(inst.attrs["path"])
        if base[0] == "aarr":
            _, g, arr, off = base
            k0 = self.leaf_slot(g, arr, off, self.first_leaf(arr.elem))
            step = path.pop(0)
            if step >= 0:
                if arr.count is not None and step >= arr.count:
                    raise Unsupported("constant index out of range")
                self.emit(d, f"if {step} >= n{k0}:")
                self.fail(d + 1, ERR_FALLBACK)
                outer = str(step)
            else:
                outer = self.checked_index(d, f"i{r.id}", self.v(next(dyn)), f"n{k0}")
            base = ("bp", g, arr, off, outer, arr.elem, 0, ())
        _, g, arr, off, outer, t, inner, terms = base
        terms = list(terms)
        for j, step in enumerate(path):
            if isinstance(t, StructType):
                inner += t.offsets[step]
                t = t.members[step].type
                continue
            if isinstance(t, VectorType):
                count, stride, elem = t.n, t.elem.size, t.elem
            elif isinstance(t, ArrayType) and t.count is not None:
                count, stride, elem = t.count, t.stride, t.elem
            elif isinstance(t, MatrixType):
                count, stride, elem = t.cols, _column_stride(t), t.column
            else:
                raise Unsupported(f"access into {t}")
            if step >= 0:
                if step >= count:
                    raise Unsupported("constant index out of range")
                inner += step * stride
            else:
                iv = self.checked_index(d, f"i{r.id}_{j}", self.v(next(dyn)), count)
                terms.append((iv, stride))
            t = elem
        p = ("bp", g, arr, off, outer, t, inner, tuple(terms))
        if isinstance(t, ScalarType):
            p = self.leaf_elem(p, d, f"e{r.id}")
        self.vals[r.id] = p

    @staticmethod
    def first_leaf(t):
        while not isinstance(t, ScalarType):
            t = t.members[0].type if isinstance(t, StructType) else t.elem
        return t

    def leaf_elem(self, p, d: int, name: str):
        """("elem", slot, index) of the scalar a "bp" pointer reaches (its index in a lane variable)."""
        _, g, arr, off, outer, t, inner, terms = p
        k = self.leaf_slot(g, arr, off, t)
        size = t.size
        if inner % size or any(st % size for _, st in terms):
            raise Unsupported(f"buffer {g.name}: a {t} at an offset not a multiple of its size")
        idx = " + ".join([f"np.int64({outer}) * {arr.stride // size}", str(inner // size)]
                         + [f"{iv} * {st // size}" for iv, st in terms])
        name = self.lane_var(name, None)
        self.emit(d, f"{name} = {idx}")
        return ("elem", k, name)

    def bp_parts(self, p, t, d: int, name: str):
        """The pointers to the scalars of the aggregate a "bp" pointer reaches, nested as its value."""
        _, g, arr, off, outer, _t, inner, terms = p
        if isinstance(t, ScalarType):
            return self.leaf_elem(p, d, name)
        if isinstance(t, StructType):
            offs = [t.offsets[i] for i in range(len(t.members))]
        elif isinstance(t, VectorType):
            offs = [i * t.elem.size for i in range(t.n)]
        elif isinstance(t, ArrayType) and t.count is not None:
            offs = [i * t.stride for i in range(t.count)]
        elif isinstance(t, MatrixType):
            offs = [i * _column_stride(t) for i in range(t.cols)]
        else:
            raise Unsupported(f"a load of {t}")
        return ("vec", [self.bp_parts(("bp", g, arr, off, outer, x, inner + o, terms), x, d, f"{name}_{i}")
                        for i, (x, o) in enumerate(zip(_parts(t), offs))])

    def buf_write(self, p, value, d: int):
        """Store an aggregate value through nested scalar pointers (bp_parts)."""
        if isinstance(p, tuple) and p[0] == "vec":
            for x, y in zip(p[1], value[1]):
                self.buf_write(x, y, d)
            return
        self.store_elem(p, value, d)

    def store_elem(self, p, val: str, d: int):
        self.stores[p[1]].append(self.loop_depth)
        self.emit(d, f"##GUARD {p[1]} {p[2]}")     # the store's owner check, where build() needs one
        self.emit(d, f"b{p[1]}[{p[2]}] = {val}")
        self.emit(d, "if rec:")
        self.emit(d + 1, f"sa{p[1]}[(w - wbase) * {self.pipe.layout.wg_count} + local] = {p[2]}")

    # -- code ----------------------------------------------------------------------------
    def block(self, block: Block, depth: int, loop_ctx):
        if not block.insts:
            self.emit(depth, "pass")
            return
        for inst in block.insts:
            self.inst(inst, depth, loop_ctx)

    def inst(self, inst: Inst, d: int, loop_ctx):
        if inst.result is None or inst.result.id < 1 << 40:
            self.at = inst                      # (the instruction a decline names)
        if self.aggregate(inst, d, loop_ctx):
            return
        op = inst.op
        r = inst.result
        name = self.lane_var(f"v{r.id}", inst.type) if r is not None else None
        a = inst.args
        if op == OP.const:
            t = _scalar(inst.type)
            self.emit(d, f"{name} = {self.literal(t, inst.attrs['value'])}")
            self.vals[r.id] = name
        elif op == OP.override:
            t = _scalar(inst.type)
            self.emit(d, f"{name} = {self.literal(t, self.pipe.overrides[inst.attrs['name']])}")
            self.vals[r.id] = name
        elif op == OP.input:
            self.vals[r.id] = self.input(inst.attrs["builtin"], inst.type)
        elif op == OP.global_ and self.module.global_(inst.attrs["name"]).space == "workgroup":
            g = self.module.global_(inst.attrs["name"])
            t = g.type
            elem, total = t, 1          # arrays of arrays (and vectors): one flat array, row-major
            while isinstance(elem, (ArrayType, VectorType)):
                n = elem.n if isinstance(elem, VectorType) else elem.count
                if n is None:
                    raise Unsupported(f"workgroup variable {g.name} of {t}")
                elem, total = elem.elem, total * n
            if self.wg and isinstance(elem, StructType) and not g.aliased:    # (aliased blocks share bytes)
                self.vals[r.id] = ("wsarr", self.wg_members(g, elem, total), t, "0")
                return
            if not self.wg or _scalar(elem) == "bool":
                raise Unsupported(f"workgroup variable {g.name} of {t}")
            # generated code names a workgroup variable by its slot, never by its WGSL name: Python
            # folds identifiers to NFKC, so `fi` and U+FB01 would become one variable
            slot = self.wslots.setdefault(g.name, len(self.wslots))
            self.wtypes[slot] = t
            self.wmem[slot] = (_NPX[_scalar(elem)], total)
            self.vals[r.id] = ("warr", slot) if isinstance(t, ArrayType) else ("welem", slot, "np.int64(0)")
        elif op == OP.global_ and inst.attrs["name"] in self.private_globals:
            self.vals[r.id] = ("pv", self.private_globals[inst.attrs["name"]], "0")
        elif op == OP.global_:
            g = self.module.global_(inst.attrs["name"])
            self.vals[r.id] = self.buffer_ptr(g, g.type)
        elif op == OP.var:
            t = inst.type.pointee
            ty = _scalar(t)
            init = self.v(a[0]) if a else _ZERO[ty]
            mv = self.lane_var(f"m{r.id}", t)
            self.emit(d, f"{mv} = {init}")
            self.vals[r.id] = ("var", mv)
        elif op == OP.access:
            base = self.vals.get(a[0].id)
            path = inst.attrs["path"]
            if isinstance(base, tuple) and base[0] == "wsarr":
                self.wg_struct_access(inst, base, d)
                return
            if isinstance(base, tuple) and base[0] == "warr":
                self.wg_access(inst, base[1], d)
                return
            if isinstance(base, tuple) and base[0] == "wpart":
                self.wg_access(inst, base[1], d, base[3], base[2])
                return
            if isinstance(base, tuple) and base[0] in ("aarr", "bp"):
                self.element_access(inst, base, d)
                return
            while isinstance(base, tuple) and base[0] in ("struct", "vecb") and path:    # constant steps
                _, g, st, off = base
                if base[0] == "vecb":
                    if not 0 <= path[0] < st.n:
                        raise Unsupported("a dynamic index into a vector of a buffer")
                    base = self.buffer_ptr(g, st.elem, off + path[0] * st.elem.size)
                else:
                    base = self.buffer_ptr(g, st.members[path[0]].type, off + st.offsets[path[0]])
                path = path[1:]
            if isinstance(base, tuple) and base[0] == "aarr" and path:
                self.element_access(Inst(op, a[:1] + a[len(a) - sum(1 for x in path if x < 0):], inst.type,
                                         {"path": path}, [], inst.loc, r), base, d)
                return
            if not path:
                self.vals[r.id] = base
                return
            if not (isinstance(base, tuple) and base[0] == "arr") or len(path) != 1:
                raise Unsupported("access")
            k = base[1]
            if path[0] >= 0:
                # a constant index: the interpreter does not check it; keep it only when in range
                self.emit(d, f"if {path[0]} >= n{k}:")
                self.fail(d + 1, ERR_FALLBACK)
                self.vals[r.id] = ("elem", k, str(path[0]))
            else:
                idx = self.v(a[1])
                iv = self.checked_index(d, f"i{r.id}", idx, f"n{k}")
                self.vals[r.id] = ("elem", k, iv)
        elif op == OP.load:
            p = self.vals.get(a[0].id)
            if isinstance(p, tuple) and p[0] == "var":
                self.emit(d, f"{name} = {p[1]}")
            elif isinstance(p, tuple) and p[0] == "welem":
                self.wg_load(p[1], p[2], name, d)
            elif isinstance(p, tuple) and p[0] == "elem":
                self.read(p[1], d)
                self.emit(d, f"{name} = b{p[1]}[{p[2]}]")
            else:
                raise Unsupported("load")
            _scalar(inst.type)
            self.vals[r.id] = name
        elif op == OP.store:
            p = self.vals.get(a[0].id)
            val = self.v(a[1])
            if isinstance(p, tuple) and p[0] == "var":
                self.emit(d, f"{p[1]} = {val}")
            elif isinstance(p, tuple) and p[0] == "welem":
                self.wg_store(p[1], p[2], val, d)
            elif isinstance(p, tuple) and p[0] == "elem":
                self.store_elem(p, val, d)
            else:
                raise Unsupported("store")
        elif op == OP.array_length:
            p = self.vals.get(a[0].id)
            if not (isinstance(p, tuple) and p[0] == "arr"):
                raise Unsupported("array_length")
            self.emit(d, f"{name} = np.uint32(n{p[1]})")
            self.vals[r.id] = name
        elif op == OP.unary:
            self.emit(d, f"{name} = {self.unary(inst.attrs['fn'], _scalar(a[0].type), self.v(a[0]))}")
            self.vals[r.id] = name
        elif op == OP.binary:
            self.emit(d, f"{name} = {self.binary(inst.attrs['fn'], _scalar(a[0].type), self.v(a[0]), self.v(a[1]))}")
            self.vals[r.id] = name
        elif op == OP.select:
            _scalar(inst.type)
            f, t, c = (self.v(x) for x in a)
            self.emit(d, f"{name} = {t} if {c} else {f}")
            self.vals[r.id] = name
        elif op == OP.builtin:
            self.emit(d, f"{name} = {self.builtin(inst)}")
            self.vals[r.id] = name
        elif op == OP.convert:
            self.emit(d, f"{name} = {self.convert(self.v(a[0]), _scalar(a[0].type), _scalar(inst.type), inst.attrs.get('native'))}")
            self.vals[r.id] = name
        elif op == OP.bitcast:
            s, t = _scalar(a[0].type), _scalar(inst.type)
            x = self.v(a[0])
            if "bool" in (s, t) or a[0].type.size != inst.type.size:
                raise Unsupported(f"bitcast {s} to {t}")
            if s == t:
                e = x
            elif t == "f32":
                e = f"rt.bits_f32(np.uint32({x}))" if s == "i32" else f"rt.bits_f32({x})"
            elif s == "f32":
                e = f"rt.f32_bits({x})" if t == "u32" else f"np.int32(rt.f32_bits({x}))"
            else:
                e = f"{_NPX[t]}({x})"
            self.emit(d, f"{name} = {e}")
            self.vals[r.id] = name
        elif op == OP.if_:
            self.emit(d, f"if {self.v(a[0])}:")
            self.block(inst.blocks[0], d + 1, loop_ctx)
            if inst.blocks[1].insts:
                self.emit(d, "else:")
                self.block(inst.blocks[1], d + 1, loop_ctx)
        elif op == OP.loop:
            self.loop(inst, d)
        elif op == OP.break_:
            if loop_ctx is None:
                raise Unsupported("break outside a loop")
            if isinstance(loop_ctx, tuple) and loop_ctx[0] == "wg":     # a workgroup-mode loop: flag the lane
                self.emit(d, f"wbrk{loop_ctx[1]}[local] = True")
            elif not isinstance(loop_ctx, tuple):
                self.emit(d, f"brk{loop_ctx} = True")
            self.emit(d, "break")                       # (a switch's: out of its one-shot loop)
        elif op == OP.continue_:
            self.continue_(loop_ctx, d)
        elif op == OP.switch:
            self.switch(inst, d, loop_ctx)
        elif op == OP.break_if:
            if isinstance(loop_ctx, tuple):
                self.emit(d, f"wbrk{loop_ctx[1]}[local] = {self.v(a[0])}")
            else:
                self.emit(d, f"if {self.v(a[0])}:")
                self.emit(d + 1, "break")
        elif op == OP.return_:
            if a:
                if self.ret_val is None:
                    raise Unsupported("return with a value")
                self.assign(d, self.ret_val, self.val(a[0]))
            self.emit(d, f"{self.ret_flag} = True")
            self.emit(d, "break")
        elif op == OP.barrier:
            raise Unsupported("barrier inside divergent code")
        elif op == OP.subgroup:
            raise Unsupported("subgroup operation inside divergent code")
        else:
            raise Unsupported(op)

    # -- aggregates in registers: a vector, array or struct value is ("vec", [its components]),
    # each a scalar's name or an aggregate again; private (function) variables of such types live
    # in arrays of their scalar leaves ("pv" pointers); calls are inlined
    def val(self, value):
        """A value: a scalar's expression, or an aggregate's ("vec", [...])."""
        e = self.vals.get(value.id)
        if isinstance(e, str) or (isinstance(e, tuple) and e[0] == "vec"):
            return e
        raise Unsupported(f"value %{value.id} of {value.type}")

    def fresh(self, base: str, t):
        """Names (lane variables) to hold a value of type t."""
        if isinstance(t, ScalarType):
            return self.lane_var(base, t) if _scalar(t) else base
        if _count_leaves(t) > MAX_LEAVES:
            raise Unsupported(f"a value of {t} in registers")
        return ("vec", [self.fresh(f"{base}_{i}", x) for i, x in enumerate(_parts(t))])

    def assign(self, d: int, target, value):
        if isinstance(target, str):
            if not isinstance(value, str):
                raise Unsupported("an aggregate where a scalar was expected")
            self.emit(d, f"{target} = {value}")
            return
        if not (isinstance(value, tuple) and value[0] == "vec" and len(value[1]) == len(target[1])):
            raise Unsupported("an aggregate of another shape")
        for x, y in zip(target[1], value[1]):
            self.assign(d, x, y)

    def constant(self, t, value):
        if isinstance(t, ScalarType):
            return self.literal(_scalar(t), value)
        return ("vec", [self.constant(x, v) for x, v in zip(_parts(t), value, strict=True)])

    def zero(self, t):
        if isinstance(t, ScalarType):
            return _ZERO[_scalar(t)]
        return ("vec", [self.zero(x) for x in _parts(t)])

    def bind(self, r, t, value, d: int):
        """Give the result `r` the value (copied into its own names: a later store to what it
        was read from must not change it)."""
        target = self.fresh(f"v{r.id}", t)
        self.assign(d, target, value)
        self.vals[r.id] = target

    def component(self, value, i: int, t):
        """Component i of a vector operand of type t (a scalar operand: itself, a splat)."""
        if isinstance(t, VectorType):
            return value[1][i]
        return value

    def elementwise(self, inst: Inst, d: int, loop_ctx):
        """A vector op as one scalar op per component (the scalar rules of each)."""
        n = inst.type.n
        out = []
        for i in range(n):
            args = []
            for x in inst.args:
                self.fake_id += 1
                v = Value(self.fake_id, x.type.elem if isinstance(x.type, VectorType) else x.type)
                self.vals[v.id] = self.component(self.val(x), i, x.type)
                args.append(v)
            self.fake_id += 1
            res = Value(self.fake_id, inst.type.elem)
            self.inst(Inst(inst.op, args, inst.type.elem, inst.attrs, [], inst.loc, res), d, loop_ctx)
            out.append(self.vals[res.id])
        self.vals[inst.result.id] = ("vec", out)

    def repack(self, inst: Inst, d: int):
        """A bitcast between vectors (or a vector and a scalar) of different component counts: the
        same bytes, little-endian, through one 64-bit integer per result component."""
        src, dst = inst.args[0].type, inst.type
        sc = src.elem if isinstance(src, VectorType) else src
        dc = dst.elem if isinstance(dst, VectorType) else dst
        if src.size != dst.size or src.size > 4 or any(x.name not in _NPX or x.name == "bool" for x in (sc, dc)):
            raise Unsupported(f"bitcast {src} to {dst}")
        v = self.val(inst.args[0])
        comps = v[1] if isinstance(v, tuple) else [v]

        def bits(x, ty):            # a component's bits as a non-negative int64
            raw = f"rt.f32_bits({x})" if ty.name == "f32" else x
            return f"(np.int64({raw}) & {(1 << 8 * ty.size) - 1})"

        word = " | ".join(f"({bits(x, sc)} << {8 * sc.size * i})" for i, x in enumerate(comps))
        n = dst.n if isinstance(dst, VectorType) else 1
        out = []
        for k in range(n):
            part = f"((({word}) >> {8 * dc.size * k}) & {(1 << 8 * dc.size) - 1})"
            name = self.lane_var(f"v{inst.result.id}_{k}", dc)
            e = f"rt.bits_f32(np.uint32({part}))" if dc.name == "f32" else f"{_NPX[dc.name]}({part})"
            self.emit(d, f"{name} = {e}")
            out.append(name)
        self.vals[inst.result.id] = ("vec", out) if isinstance(dst, VectorType) else out[0]

    def take(self, value, t, path, inst):
        for step in path:
            if step < 0 or not (isinstance(value, tuple) and value[0] == "vec"):
                raise Unsupported(f"{inst.op} with a dynamic index")
            value, t = value[1][step], _parts(t)[step]
        return value, t

    def put(self, value, t, path, new):
        if not path:
            return new
        step = path[0]
        if step < 0:
            raise Unsupported("insert with a dynamic index")
        items = list(value[1])
        items[step] = self.put(items[step], _parts(t)[step], path[1:], new)
        return ("vec", items)

    def aggregate(self, inst: Inst, d: int, loop_ctx) -> bool:
        """The ops on aggregates, private variables of aggregate type and calls; False for the rest."""
        op, r, a, t = inst.op, inst.result, inst.args, inst.type
        if op in (OP.unary, OP.binary, OP.select, OP.convert, OP.bitcast, OP.builtin) and isinstance(t, VectorType):
            if op == OP.builtin and not all(isinstance(x.type, (VectorType, ScalarType)) for x in a):
                raise Unsupported(f"builtin {inst.attrs['fn']} on {t}")
            if op == OP.bitcast and not (isinstance(a[0].type, VectorType) and a[0].type.n == t.n):
                self.repack(inst, d)
            else:
                self.elementwise(inst, d, loop_ctx)
        elif op == OP.bitcast and isinstance(a[0].type, VectorType):
            self.repack(inst, d)
        elif op == OP.builtin and inst.attrs["fn"] in ("any", "all") and isinstance(a[0].type, VectorType):
            join = " or " if inst.attrs["fn"] == "any" else " and "
            name = self.lane_var(f"v{r.id}", t)
            self.emit(d, f"{name} = {join.join(f'({c})' for c in self.val(a[0])[1])}")
            self.vals[r.id] = name
        elif op == OP.construct:
            vals = [self.val(x) for x in a]
            if isinstance(t, VectorType):
                comps = []
                for x, v in zip(a, vals):
                    comps += v[1] if isinstance(x.type, VectorType) else [v]
                comps = comps * t.n if len(comps) == 1 else comps
            elif isinstance(t, (ArrayType, StructType, MatrixType)):
                comps = vals
            else:
                raise Unsupported(f"construct {t}")
            if len(comps) != len(_parts(t)):
                raise Unsupported(f"construct {t}")
            self.vals[r.id] = ("vec", comps)
        elif op == OP.extract:
            src = self.vals.get(a[0].id)
            if not (isinstance(src, tuple) and src[0] == "vec"):
                raise Unsupported("extract")
            self.vals[r.id] = self.take(src, a[0].type, inst.attrs["path"], inst)[0]
        elif op == OP.insert:
            self.vals[r.id] = self.put(self.val(a[0]), a[0].type, list(inst.attrs["path"]), self.val(a[1]))
        elif op == OP.swizzle:
            src = self.val(a[0])
            self.vals[r.id] = ("vec", [src[1][c] for c in inst.attrs["components"]])
        elif op == OP.undef:
            self.bind(r, t, self.zero(t), d)
        elif op == OP.const and not isinstance(t, ScalarType):
            self.bind(r, t, self.constant(t, inst.attrs["value"]), d)
        elif op == OP.var and not isinstance(t.pointee, ScalarType):
            self.private_var(inst, d)
        elif op == OP.access and isinstance(self.vals.get(a[0].id), tuple) and self.vals[a[0].id][0] == "pv":
            self.private_access(inst, d)
        elif op == OP.load and isinstance(self.vals.get(a[0].id), tuple) and self.vals[a[0].id][0] == "pv":
            _, node, idx = self.vals[a[0].id]
            self.bind(r, t, self.priv_read(node, idx, t), d)
        elif op == OP.store and isinstance(self.vals.get(a[0].id), tuple) and self.vals[a[0].id][0] == "pv":
            _, node, idx = self.vals[a[0].id]
            self.priv_write(d, node, idx, self.val(a[1]))
        elif op == OP.load and isinstance(self.vals.get(a[0].id), tuple) and self.vals[a[0].id][0] == "wpart":
            _, g, idx, pt = self.vals[a[0].id]
            self.bind(r, t, self.wg_read(g, idx, pt, d, f"wl{r.id}"), d)
        elif op == OP.store and isinstance(self.vals.get(a[0].id), tuple) and self.vals[a[0].id][0] == "wpart":
            _, g, idx, pt = self.vals[a[0].id]
            self.wg_write(g, idx, pt, self.val(a[1]), d)
        elif op in (OP.load, OP.store) and isinstance(self.vals.get(a[0].id), tuple) and \
                self.vals[a[0].id][0] == "wsarr":        # a whole struct of workgroup memory
            _, slots, st, idx = self.vals[a[0].id]
            if not isinstance(st, StructType):
                raise Unsupported(f"a {op} of {st} in workgroup memory")
            firsts = [str(int(idx) * _flat_count(m.type)) if idx.isdigit() else f"{idx} * {_flat_count(m.type)}"
                      for m in st.members]
            if op == OP.load:
                self.bind(r, t, ("vec", [self.wg_read(g, f, m.type, d, f"wl{r.id}_{j}") for j, (g, f, m) in
                                         enumerate(zip(slots, firsts, st.members))]), d)
            else:
                for g, f, m, v in zip(slots, firsts, st.members, self.val(a[1])[1]):
                    self.wg_write(g, f, m.type, v, d)
        elif op == OP.load and not isinstance(t, ScalarType):
            self.fake_id += 1
            self.bind(r, t, self.buf_read(self.vals.get(a[0].id), t, d), d)
        elif op == OP.store and not isinstance(a[1].type, ScalarType):
            p = self.vals.get(a[0].id)
            if not (isinstance(p, tuple) and p[0] == "bp"):
                raise Unsupported(f"a store of {a[1].type}")
            self.fake_id += 1
            self.buf_write(self.bp_parts(p, a[1].type, d, f"e{self.fake_id}"), self.val(a[1]), d)
        elif op == OP.call:
            self.call(inst, d)
        else:
            return False
        return True

    def private_var(self, inst: Inst, d: int):
        r, t = inst.result, inst.type.pointee
        node = self.priv_node(f"pm{r.id}", t, 1)
        for leaf in self.leaves(node):
            _, name = leaf
            dt, size, zero = self.privs[name]
            if self.local_leaf(name):
                self.emit(d, f"{name} = {zero}")
                continue
            where = "" if not self.wg else f"local * {size}:(local + 1) * {size}"
            self.emit(d, f"{name}[{where or ':'}] = {zero}")
        if inst.args:
            self.priv_write(d, node, "0", self.val(inst.args[0]))
        self.vals[r.id] = ("pv", node, "0")

    def private_init(self):
        """var<private> globals the module's functions use: their storage, set at the start of
        each invocation to their initializer or zero (as the executor does)."""
        used = {i.attrs["name"] for f in self.module.functions for i in f.walk() if i.op == OP.global_}
        gs = [g for g in self.module.globals if g.space == "private" and g.name in used]
        if not gs:
            return
        d = 2
        if self.wg:
            self.emit(0, f"for local in range({self.pipe.layout.wg_count}):")
            d = 1
        for j, g in enumerate(gs):
            node = self.private_globals[g.name] = self.priv_node(f"pg{j}", g.type, 1)
            value = self.zero(g.type) if g.init is None else self.constant(g.type, g.init)
            self.priv_write(d, node, "0", value)

    def priv_node(self, base: str, t, size: int):
        """The storage of a private variable of type t: ("leaf", array name) for a scalar (one array
        element per place the enclosing arrays give it), ("struct", [members]), ("arr", count, element)."""
        if isinstance(t, ScalarType):
            ty = _scalar(t)
            self.privs[base] = (_NPX[ty], size, _ZERO[ty])
            return ("leaf", base)
        if isinstance(t, StructType):
            return ("struct", [self.priv_node(f"{base}_{i}", m.type, size) for i, m in enumerate(t.members)])
        count = len(_parts(t))
        if size * count > 1 << 16:
            raise Unsupported(f"a private variable of {t}")
        return ("arr", count, self.priv_node(base, _parts(t)[0], size * count))

    def leaves(self, node):
        if node[0] == "leaf":
            return [node]
        kids = node[1] if node[0] == "struct" else [node[2]]
        return [x for k in kids for x in self.leaves(k)]

    def local_leaf(self, name: str) -> bool:
        """A scalar leaf outside any array, one invocation at a time: a plain local, no array."""
        return not self.wg and self.privs[name][1] == 1

    def leaf_ref(self, node, idx: str) -> str:
        name = node[1]
        if self.local_leaf(name):
            return name
        if self.wg:
            return f"{name}[local * {self.privs[name][1]} + {idx}]"
        return f"{name}[{idx}]"

    def private_access(self, inst: Inst, d: int):
        _, node, idx = self.vals[inst.args[0].id]
        dyn = iter(inst.args[1:])
        for j, step in enumerate(inst.attrs["path"]):
            if node[0] == "struct":
                node = node[1][step]
                continue
            if node[0] != "arr":
                raise Unsupported("access into a scalar")
            count = node[1]
            if step >= 0:
                if step >= count:
                    raise Unsupported("constant index out of range")
                ix = str(step)
            else:
                ix = self.checked_index(d, f"i{inst.result.id}_{j}", self.v(next(dyn)), count)
            idx = ix if idx == "0" else f"({idx}) * {count} + {ix}"
            node = node[2]
        self.vals[inst.result.id] = ("pv", node, idx)

    def priv_read(self, node, idx: str, t):
        if node[0] == "leaf":
            return self.leaf_ref(node, idx)
        if node[0] == "struct":
            return ("vec", [self.priv_read(k, idx, m.type) for k, m in zip(node[1], t.members)])
        return ("vec", [self.priv_read(node[2], str(i) if idx == "0" else f"({idx}) * {node[1]} + {i}", x)
                        for i, x in enumerate(_parts(t))])

    def priv_write(self, d: int, node, idx: str, value):
        if node[0] == "leaf":
            if not isinstance(value, str):
                raise Unsupported("an aggregate stored to a scalar")
            self.emit(d, f"{self.leaf_ref(node, idx)} = {value}")
            return
        kids = node[1] if node[0] == "struct" else [node[2]] * node[1]
        if not (isinstance(value, tuple) and value[0] == "vec" and len(value[1]) == len(kids)):
            raise Unsupported("a store of another shape")
        for i, (k, v) in enumerate(zip(kids, value[1])):
            sub = idx if node[0] == "struct" else (str(i) if idx == "0" else f"({idx}) * {node[1]} + {i}")
            self.priv_write(d, k, sub, v)

    def buf_read(self, p, t, d: int):
        """An aggregate loaded from a buffer: its scalars one by one."""
        if isinstance(p, tuple) and p[0] == "struct":
            _, g, st, off = p
            return ("vec", [self.buf_read(self.buffer_ptr(g, m.type, off + st.offsets[i]), m.type, d)
                            for i, m in enumerate(st.members)])
        if isinstance(p, tuple) and p[0] == "bp":
            return self.buf_read(self.bp_parts(p, t, d, f"e{self.fake_id}"), t, d)
        if isinstance(p, tuple) and p[0] == "vecb":
            _, g, vt, off = p
            return ("vec", [self.buf_read(self.buffer_ptr(g, vt.elem, off + i * vt.elem.size), vt.elem, d)
                            for i in range(vt.n)])
        if isinstance(p, tuple) and p[0] == "vec":
            return ("vec", [self.buf_read(x, y, d) for x, y in zip(p[1], _parts(t))])
        if isinstance(p, tuple) and p[0] == "elem":
            self.read(p[1], d)
            return f"b{p[1]}[{p[2]}]"
        if isinstance(p, tuple) and p[0] == "arr" and isinstance(t, ArrayType) and t.count is not None:
            k = p[1]
            self.emit(d, f"if {t.count - 1} >= n{k}:")
            self.fail(d + 1, ERR_FALLBACK)
            self.read(k, d)
            return ("vec", [f"b{k}[{i}]" for i in range(t.count)])
        raise Unsupported(f"a load of {t}")

    def call(self, inst: Inst, d: int):
        """The callee's body in place: its parameters are the arguments (values or pointers), a
        `return` leaves the one-shot loop around it."""
        fn = self.module.function(inst.attrs["callee"])
        if fn.name in self.inlining or len(self.inlining) > 16:
            raise Unsupported("a recursive call")
        for p, x in zip(fn.params, inst.args):
            if x.id not in self.vals:
                raise Unsupported("call")
            self.vals[p.id] = self.vals[x.id]
        n = self.nloops
        self.nloops += 1
        saved = self.ret_flag, self.ret_val
        self.ret_flag = f"cr{n}"
        self.ret_val = None
        if inst.result is not None:
            self.ret_val = self.fresh(f"v{inst.result.id}", fn.ret)
            self.assign(d, self.ret_val, self.zero(fn.ret))
        self.inlining.append(fn.name)
        self.emit(d, f"cr{n} = False")
        self.emit(d, "while True:                 # an inlined call; 'return' leaves it")
        self.block(fn.body, d + 1, None)
        self.emit(d + 1, "break")
        self.inlining.pop()
        if inst.result is not None:
            self.emit(d, f"if not cr{n}:              # the end of a function that returns a value")
            self.fail(d + 1, ERR_FALLBACK)
            self.vals[inst.result.id] = self.ret_val
        self.ret_flag, self.ret_val = saved

    def continue_(self, ctx, d: int):
        """`continue` of the innermost loop from inside `ctx` (a loop, or a switch in one)."""
        if ctx is None:
            raise Unsupported("continue outside a loop")
        if isinstance(ctx, tuple) and ctx[0] == "sw":   # leave the switch, then continue outside it
            self.sw_continued.add(ctx[1])
            self.emit(d, f"swc{ctx[1]} = True")
        elif isinstance(ctx, tuple):
            self.emit(d, f"wcnt{ctx[1]}[local] = True")
        self.emit(d, "break")                           # out of the one-shot body (or switch) loop

    def switch(self, inst: Inst, d: int, ctx):
        """A switch as a one-shot loop that `break` leaves: the first case that lists the selector
        (no fallthrough, as the IR's switch), else the default; a `continue` inside sets a flag
        and continues the loop around it after the switch, a `return` leaves as everywhere."""
        t = _scalar(inst.args[0].type)
        if t not in ("i32", "u32"):
            raise Unsupported(f"switch on {t}")
        n = self.nloops
        self.nloops += 1
        sel = self.v(inst.args[0])
        self.emit(d, f"swc{n} = False")
        self.emit(d, "while True:                 # a switch; 'break' leaves it")
        default, first = None, True
        for block, selectors in zip(inst.blocks, inst.attrs["cases"]):
            values = [s for s in selectors if s != "default"]
            if len(values) < len(selectors):
                default = block
            if not values:
                continue
            cond = " or ".join(f"{sel} == {self.literal(t, v)}" for v in values)
            self.emit(d + 1, f"{'if' if first else 'elif'} {cond}:")
            self.block(block, d + 2, ("sw", n, ctx))
            first = False
        if default is not None:
            if not first:
                self.emit(d + 1, "else:")
            self.block(default, d + (1 if first else 2), ("sw", n, ctx))
        self.emit(d + 1, "break")
        if n in self.sw_continued:
            self.emit(d, f"if swc{n}:")
            self.continue_(ctx, d + 1)
        self.emit(d, f"if {self.ret_flag}:")
        self.emit(d + 1, "break")

    def fail(self, d: int, code: int, lane: str = "local"):
        """Stop the whole kernel, saying where (the interpreter takes over from there)."""
        self.emit(d, f"err[0] = {code}")
        self.emit(d, "err[1] = w")
        self.emit(d, f"err[2] = {lane}")
        self.emit(d, "return")

    def checked_index(self, d: int, name: str, value: str, bound) -> str:
        """`value` as the lane's int64 index `name`; outside [0, bound) the kernel hands the
        dispatch to the interpreter (ERR_OOB), which reports the access."""
        iv = self.lane_var(name, None)
        self.emit(d, f"{iv} = np.int64({value})")
        self.emit(d, f"if {iv} < 0 or {iv} >= {bound}:")
        self.fail(d + 1, ERR_OOB)
        return iv

    def lane_var(self, name: str, t) -> str:
        """A value's name: a local, or in workgroup mode its element of a per-lane array."""
        if not self.wg:
            return name
        if t is not None and not (isinstance(t, ScalarType) and t.name in _NPX):
            return name                     # a pointer or vector: never held as a value here
        self.decls[name] = "np.int64" if t is None else _NPX[t.name]
        return f"{name}[local]"

    # -- workgroup memory: every access checks that no other invocation touched the element
    # since the last barrier (the code between barriers runs invocation after invocation, which
    # matches lockstep only without such conflicts); a conflict hands over to the interpreter
    def wg_access(self, inst: Inst, g: int, d: int, t=None, base=None):
        """An element of workgroup array g (from `base`, a part of it of type `t`, on): each index
        checked against its dimension, then the flat (row-major) index; a vector or array element
        is a part ("wpart": its first flat index and type), loaded and stored scalar by scalar."""
        r = inst.result
        path = inst.attrs["path"]
        t = t or self.wtypes.get(g, ArrayType(None, self.wmem[g][1]))
        dyn = iter(inst.args[1:])
        flat = [] if base is None else [base]
        for j, step in enumerate(path):
            if not isinstance(t, (ArrayType, VectorType)):
                raise Unsupported("access into workgroup memory")
            count = t.n if isinstance(t, VectorType) else t.count
            t = t.elem
            inner = 1
            x = t
            while isinstance(x, (ArrayType, VectorType)):
                inner, x = inner * (x.n if isinstance(x, VectorType) else x.count), x.elem
            if step >= 0:
                if step >= count:
                    raise Unsupported("constant index out of range")
                flat.append(f"{step * inner}")
                continue
            iv = self.checked_index(d, f"i{r.id}" + (f"_{j}" if j else ""), self.v(next(dyn)), count)
            flat.append(iv if inner == 1 else f"{iv} * {inner}")
        const = sum(int(x) for x in flat if x.isdigit())
        dyn_parts = [x for x in flat if not x.isdigit()]
        if not dyn_parts:
            idx = f"np.int64({const})"
        else:
            idx = self.lane_var(f"i{r.id}", None)
            if len(dyn_parts) > 1 or const or dyn_parts[0] != idx:
                self.emit(d, f"{idx} = {' + '.join(dyn_parts + ([str(const)] if const else []))}")
        if isinstance(t, (ArrayType, VectorType)):
            if _flat_count(t) > MAX_LEAVES:
                raise Unsupported("a pointer to a large part of a workgroup array")
            self.vals[r.id] = ("wpart", g, idx, t)
            return
        self.vals[r.id] = ("welem", g, idx)

    def wg_members(self, g, st: StructType, count: int) -> list:
        """A workgroup variable of `count` structs (an array, or arrays of arrays, of them) as one
        flat array per member, each member's scalars row-major after the struct's index (a struct
        of arrays: each element is still one element, its accesses checked as before)."""
        slots = []
        for m, mem in enumerate(st.members):
            leaf = mem.type
            while isinstance(leaf, (ArrayType, VectorType)):
                leaf = leaf.elem
            if not isinstance(leaf, ScalarType) or _scalar(leaf) == "bool" or (
                    isinstance(mem.type, ArrayType) and mem.type.count is None):
                raise Unsupported(f"workgroup variable {g.name} of {g.type}")
            slot = self.wslots.setdefault(f"{g.name}\0{m}", len(self.wslots))
            self.wtypes[slot] = mem.type
            self.wmem[slot] = (_NPX[_scalar(leaf)], count * _flat_count(mem.type))
            slots.append(slot)
        return slots

    def wg_struct_access(self, inst: Inst, base, d: int):
        """An access into a workgroup variable of structs (wg_members): the index of the struct
        (each index checked), then the member's array from that struct's first scalar on."""
        r = inst.result
        _, slots, t, outer = base
        dyn = list(inst.args[1:])
        path = list(inst.attrs["path"])
        parts = [] if outer == "0" else [outer]
        while path and not isinstance(t, StructType):
            step = path.pop(0)
            count, t = t.count, t.elem
            inner, y = 1, t                 # structs in each element of this step
            while isinstance(y, ArrayType):
                inner, y = inner * y.count, y.elem
            if step >= 0:
                if step >= count:
                    raise Unsupported("constant index out of range")
                parts.append(str(step * inner))
            else:
                iv = self.checked_index(d, f"i{r.id}_s{len(parts)}", self.v(dyn.pop(0)), count)
                parts.append(iv if inner == 1 else f"{iv} * {inner}")
        const = sum(int(x) for x in parts if x.isdigit())
        dyn_parts = [x for x in parts if not x.isdigit()]
        if dyn_parts:
            idx = self.lane_var(f"i{r.id}_s", None)
            self.emit(d, f"{idx} = {' + '.join(dyn_parts + ([str(const)] if const else []))}")
        else:
            idx = str(const)
        if not path:                        # a pointer to a struct (or to arrays of them)
            self.vals[r.id] = ("wsarr", slots, t, idx)
            return
        m = path.pop(0)
        g, mt = slots[m], t.members[m].type
        n = _flat_count(mt)
        first = str(int(idx) * n) if idx.isdigit() else (idx if n == 1 else f"{idx} * {n}")
        rest = Inst(inst.op, inst.args[:1] + dyn, inst.type, {"path": path}, [], inst.loc, r)
        self.wg_access(rest, g, d, mt, first)

    def wg_read(self, g: int, idx: str, t, d: int, name: str):
        """A part of workgroup array g at flat index idx, of type t, loaded scalar by scalar."""
        if isinstance(t, ScalarType):
            v = self.lane_var(name, t)
            self.wg_load(g, idx, v, d)
            return v
        inner = _flat_count(_parts(t)[0])
        return ("vec", [self.wg_read(g, f"{idx} + {i * inner}", x, d, f"{name}_{i}")
                        for i, x in enumerate(_parts(t))])

    def wg_write(self, g: int, idx: str, t, value, d: int):
        if isinstance(t, ScalarType):
            self.wg_store(g, idx, value, d)
            return
        inner = _flat_count(_parts(t)[0])
        for i, (x, v) in enumerate(zip(_parts(t), value[1])):
            self.wg_write(g, f"{idx} + {i * inner}", x, v, d)

    # With subgroup barriers (self.sgbar) the tags are `ep + local` of the current sub-interval (a
    # subgroupBarrier starts one, the whole workgroup at once), `ib` where the barrier interval
    # began: an access of another invocation of the interval is ordered with this one only where
    # a subgroupBarrier of their one subgroup came between (wg.clash), as emu/memory/races.py has it
    def sg_tags(self) -> str:
        return f"ib, ep, local, {self.pipe.opts.subgroup_size}, {self.pipe.layout.wg_count}"

    def wg_load(self, g: int, idx: str, name: str, d: int):
        self.emit(d, f"_i = {idx}")
        self.emit(d, f"_t = wt_{g}[_i]")
        if self.sgbar:      # (a read of this invocation's own in an earlier sub-interval is renewed)
            clash, mine = f"wg.clash(_t, {self.sg_tags()})", "_r < ib or (_r & 4095) == local"
        else:
            clash, mine = "_t >= ep and _t != ep + local", "_r < ep"
        self.emit(d, f"if {clash}:")
        self.fail(d + 1, ERR_FALLBACK)
        self.emit(d, f"_r = rt_{g}[_i]")
        self.emit(d, f"if {mine}:")
        self.emit(d + 1, f"rt_{g}[_i] = ep + local")
        self.emit(d, "elif _r != ep + local:")
        self.emit(d + 1, f"rt_{g}[_i] = ep + 4095")
        self.emit(d, f"{name} = wm_{g}[_i]")

    def wg_store(self, g: int, idx: str, val: str, d: int):
        self.emit(d, f"_i = {idx}")
        self.emit(d, f"_t = wt_{g}[_i]")
        self.emit(d, f"_r = rt_{g}[_i]")
        if self.sgbar:
            self.emit(d, f"if wg.clash(_t, {self.sg_tags()}) or wg.clash(_r, {self.sg_tags()}):")
        else:
            self.emit(d, "if (_t >= ep and _t != ep + local) or (_r >= ep and _r != ep + local):")
        self.fail(d + 1, ERR_FALLBACK)
        self.emit(d, f"wt_{g}[_i] = ep + local")
        self.emit(d, f"wm_{g}[_i] = {val}")

    # -- workgroup mode: statements that hold a barrier run for the whole workgroup at once;
    # the barrier-free statements between them run as groups, invocation after invocation
    @staticmethod
    def _has_barrier(inst: Inst) -> bool:
        """A statement that synchronizes invocations: a barrier or a subgroup operation."""
        return any(i.op in (OP.barrier, OP.subgroup) for i in inst.walk())

    def wg_block(self, block: Block, d: int, wloop, in_body: bool):
        run: list = []
        starts = [len(self.lines)]          # where each statement of the block begins
        for inst in block.insts:
            if self._has_barrier(inst):
                if run:
                    self.group(run, d, wloop, in_body)
                    starts.append(len(self.lines))
                    run = []
                if inst.op == OP.barrier:
                    self.emit(d, "if wg.parted(retd):")
                    self.fail(d + 1, ERR_FALLBACK, "0")
                    self.emit(d, "ep += 4096                  # a new barrier interval")
                    if self.sgbar and inst.attrs["kind"] != "subgroup":
                        self.emit(d, "ib = ep")
                elif inst.op == OP.subgroup:
                    self.at = inst
                    self.emit(d, outline.STMT_BEGIN)
                    self.subgroup(inst, d)
                    self.emit(d, outline.STMT_END)
                elif inst.op in (OP.if_, OP.loop, OP.switch):
                    self.emit(d, outline.STMT_BEGIN)
                    if inst.op == OP.if_:
                        self.wg_if(inst, d, wloop, in_body)
                    elif inst.op == OP.loop:
                        self.wg_loop(inst, d)
                    else:
                        self.wg_switch(inst, d)
                    self.emit(d, outline.STMT_END)
                else:
                    raise Unsupported(f"barrier inside {inst.op}")
                starts.append(len(self.lines))
            else:
                run.append(inst)
        if run:
            self.group(run, d, wloop, in_body)
            starts.append(len(self.lines))
        if not block.insts:
            self.emit(d, "pass")
        outline.chunk(self.lines, starts, "    " * d)

    def group(self, insts, d: int, wloop, in_body: bool):
        n = self.pipe.layout.wg_count

        def head(skip: str):
            self.emit(d, outline.GROUP_BEGIN)       # (a function of its own where long: emu/jit/outline.py)
            self.emit(d, f"for local in range({n}):")
            self.emit(d + 1, f"if {skip}:")
            self.emit(d + 2, "continue")
            self.emit(d + 1, "ret = False")
            self.emit(d + 1, "##PRE##")
            self.emit(d + 1, "while True:")

        def tail():
            self.emit(d + 2, "break")
            self.emit(d + 1, "if ret:")
            self.emit(d + 2, "retd[local] = True")
            self.emit(d, outline.GROUP_END)
        # a long group is cut between its statements into groups run one after the other (each
        # a function of its own: numba's time grows faster than a function's length); a later
        # part skips the invocations that left the group in an earlier one (a return, or in a
        # loop's body a break or continue), as the one-shot loop of the whole group did
        skip = "retd[local]"
        if wloop is not None and in_body:
            skip += f" or wbrk{wloop}[local] or wcnt{wloop}[local]"
        head("retd[local]")
        start = len(self.lines)
        ctx = ("wg", wloop) if wloop is not None else None
        for j, inst in enumerate(insts):
            if inst.op in (OP.break_, OP.continue_, OP.break_if) and ctx is None:
                raise Unsupported(f"{inst.op} outside a loop")
            self.inst(inst, d + 2, ctx)
            if len(self.lines) - start > outline.GROUP_LINES and j + 1 < len(insts):
                tail()
                head(skip)
                start = len(self.lines)
        tail()
        if wloop is None:
            return
        # every live invocation must agree on leaving the loop (else the interpreter reports it)
        self.nagree += 1            # (a name of its own at each: see outline.split)
        a = f"_a{self.nagree}"
        self.emit(d, f"{a} = wg.agree(retd, wbrk{wloop}[:], wcnt{wloop}[:])")
        self.emit(d, f"if {a} == 1:")
        self.fail(d + 1, ERR_FALLBACK, "0")
        self.emit(d, f"if {a} == 2:")
        if in_body:
            self.emit(d + 1, f"wexit{wloop} = True")
        self.emit(d + 1, "break")
        if in_body:
            self.emit(d, f"if {a} == 3:")
            self.emit(d + 1, "break")

    def wg_if(self, inst: Inst, d: int, wloop, in_body: bool):
        c = self.vals.get(inst.args[0].id)
        if not isinstance(c, str):
            raise Unsupported("condition")
        self.emit(d, "_nl = 0")
        self.emit(d, "_nt = 0")
        self.emit(d, f"for local in range({self.pipe.layout.wg_count}):")
        self.emit(d + 1, "if not retd[local]:")
        self.emit(d + 2, "_nl += 1")
        self.emit(d + 2, f"_nt += 1 if {c} else 0")
        self.emit(d, "if _nt != 0 and _nt != _nl:")
        self.fail(d + 1, ERR_FALLBACK, "0")
        self.emit(d, "if _nl > 0 and _nt == _nl:")
        self.wg_block(inst.blocks[0], d + 1, wloop, in_body)
        if inst.blocks[1].insts:
            self.emit(d, "elif _nl > 0:")
            self.wg_block(inst.blocks[1], d + 1, wloop, in_body)

    # -- subgroup operations (workgroup mode): a statement holding one runs for the whole
    # workgroup at once, as a barrier does; the operation gathers the active invocations' values
    # of each subgroup (each cluster) and combines them in a helper function of the module (one
    # per kind of operation, shared by its sites) in the order emu.numerics.reduce takes: the
    # profile's subgroup_order, its scalar rules
    def subgroup(self, inst: Inst, d: int):
        fn = inst.attrs["fn"]
        sg, nwg = self.pipe.opts.subgroup_size, self.pipe.layout.wg_count
        size = min(sg, inst.attrs.get("cluster", sg)) if fn in _SG_REDUCE else sg
        r = inst.result
        x = inst.args[0] if inst.args else None
        xs = [] if x is None else (self.val(x)[1] if isinstance(x.type, VectorType) else [self.v(x)])
        elem = None if x is None else (x.type.elem if isinstance(x.type, VectorType) else x.type)
        t = "bool" if x is None else _scalar(elem)
        if not all(isinstance(e, str) for e in xs):
            raise Unsupported(f"subgroup {fn} of {x.type}")
        if t == "f16" and fn not in _SG_MOVE:
            raise Unsupported(f"subgroup {fn} on f16")
        if fn not in _SG_REDUCE + _SG_SCAN + _SG_MOVE + ("all", "any", "elect"):
            raise Unsupported(f"subgroup {fn}")
        out = self.fresh(f"v{r.id}", inst.type)
        outs = out[1] if isinstance(out, tuple) else [out]
        rid = r.id
        self.scratch["sgm"] = ("np.bool_", max(self.scratch.get("sgm", (0, 0))[1], sg))
        self.scratch["sgt"] = ("np.int64", max(self.scratch.get("sgt", (0, 0))[1], sg))
        sa = [f"sga{rid}_{k}" for k in range(len(xs))]
        sr = [f"sgr{rid}_{k}" for k in range(len(outs))]
        for a in sa:
            self.scratch[a] = self.scratch[f"{a}_t"] = (_NPX[t], size)
        for b, o in zip(sr, outs):
            self.scratch[b] = (_NPX[t if fn != "elect" else "bool"], size)
        sel = fn in _SG_MOVE and fn != "broadcast_first"
        self.emit(d, f"for _c in range({-(-nwg // size)}):")
        self.emit(d + 1, "_n = 0")
        self.emit(d + 1, f"for _j in range({size}):")
        self.emit(d + 2, f"local = _c * {size} + _j")
        self.emit(d + 2, f"sgm[_j] = local < {nwg} and not retd[local]")
        self.emit(d + 2, "if sgm[_j]:")
        if any("in_" in e for e in xs + ([self.v(inst.args[1])] if sel else [])):
            self.emit(d + 3, "##PRE##")             # (an operand that is a builtin input)
        self.emit(d + 3, "_n += 1")
        for a, e in zip(sa, xs):
            self.emit(d + 3, f"{a}[_j] = {e}")
        if sel:
            self.emit(d + 3, f"sgt[_j] = np.int64({self.v(inst.args[1])})")
        self.emit(d + 1, "if _n == 0:")
        self.emit(d + 2, "continue")
        m = f"sgm[:{size}]"
        if fn == "elect":
            self.emit(d + 1, f"{self.sg_helper(fn, t, self.sg_elect)}({m}, {sr[0]})")
        body = (lambda e: self.sg_move(fn, e)) if fn in _SG_MOVE else (lambda e: self.sg_combine(fn, t, e))
        for a, b in zip(sa, sr):
            h = self.sg_helper(fn, t, body)
            if sel:
                self.emit(d + 1, f"if not {h}({a}, {m}, sgt[:{size}], {b}):")
                self.fail(d + 2, ERR_FALLBACK, "0")
            else:
                self.emit(d + 1, f"{h}({a}, {m}, _n, {b}, {a}_t)")
        self.emit(d + 1, f"for _j in range({size}):")
        self.emit(d + 2, "if sgm[_j]:")
        self.emit(d + 3, f"local = _c * {size} + _j")
        for o, b in zip(outs, sr):
            self.emit(d + 3, f"{o} = {b}[_j]")
        self.vals[r.id] = out

    def sg_helper(self, fn: str, t: str, body) -> str:
        """The name of the module's helper that runs subgroup `fn` on values of type t, written
        once: helper(a, m, n, b, tmp) (a move: helper(a, m, sel, b) -> False to hand over)."""
        name = f"sg_{fn}_{t}"
        if name not in self.helpers:
            saved, self.lines = self.lines, []
            args = "a, m, sel, b" if fn in _SG_MOVE and fn != "broadcast_first" else "a, m, n, b, tmp"
            if fn == "elect":
                args = "m, b"
            self.emit(1, "size = m.shape[0]")
            body(1)
            self.helpers[name] = ["@njit(cache=True, nogil=True, error_model='numpy')",
                                  f"def {name}({args}):"] + self.lines + [""]
            self.lines = saved
        return name

    def sg_elect(self, d: int):
        self.emit(d, "f = True")
        self.emit(d, "for j in range(size):")
        self.emit(d + 1, "b[j] = m[j] and f")
        self.emit(d + 1, "f = f and not m[j]")

    def sg_comb(self, how: str, t: str, a: str, b: str) -> str:
        """One step of a subgroup reduction or scan: emu.numerics.reduce's combine of a and b."""
        if how in ("min", "max"):
            if t in _WIDTH:
                return f"{_NPX[t]}({how}({a}, {b}))"
            if t == "f32":
                e = f"rt.fminmax_f32({a}, {b}, {how == 'max'})"
                return f"rt.nv_canon({e})" if self.nv else e
            raise Unsupported(f"subgroup {how} on {t}")
        if how in ("all", "any"):
            return f"(({a}) {'and' if how == 'all' else 'or'} ({b}))"
        return self.binary(how, t, a, b)

    def sg_combine(self, fn: str, t: str, d: int):
        """b = the reduction or scan of the active (m) values of a, as emu.numerics.reduce gives it."""
        how = fn.split("_")[-1]
        scan = fn in _SG_SCAN
        if t == "f32" and self.nv != (self.pipe.profile.subgroup_order == "nvidia"):
            raise Unsupported(f"subgroup {fn}: order {self.pipe.profile.subgroup_order} with these scalar rules")
        if t == "f32" and self.nv:              # the H200's order (emu.numerics.reduce._nvidia)
            if not scan:                        # a whole cluster: the butterfly
                self.emit(d, "if n == size:")
                self.sg_butterfly(how, t, "a", d + 1)
                self.emit(d + 1, "return")
            # the rank scan over the active invocations in lane order, the last rank's value to all
            self.emit(d, "k = 0")
            self.emit(d, "for j in range(size):")
            self.emit(d + 1, "if m[j]:")
            self.emit(d + 2, "b[k] = a[j]")
            self.emit(d + 2, "k += 1")
            if fn.startswith("exclusive"):
                self.emit(d, "for j in range(n - 1, 0, -1):")
                self.emit(d + 1, "b[j] = b[j - 1]")
                self.emit(d, f"b[0] = {self.literal(t, 0.0 if how == 'add' else 1.0)}")
            self.emit(d, "st = 1")
            self.emit(d, "while st < n:")
            self.emit(d + 1, "for j in range(n - 1, st - 1, -1):")
            self.emit(d + 2, f"b[j] = {self.sg_comb(how, t, 'b[j]', 'b[j - st]')}")
            self.emit(d + 1, "st *= 2")
            if scan:                            # each active invocation its rank's value
                self.emit(d, "k = n")
                self.emit(d, "for j in range(size - 1, -1, -1):")
                self.emit(d + 1, "if m[j]:")
                self.emit(d + 2, "k -= 1")
                self.emit(d + 2, "b[j] = b[k]")
            else:
                self.emit(d, "b[:] = b[n - 1]")
            return
        if how in ("all", "any"):                # (emu.numerics.reduce: over the active values)
            self.emit(d, f"v = {how == 'all'}")
            self.emit(d, "for j in range(size):")
            self.emit(d + 1, "if m[j]:")
            self.emit(d + 2, f"v = {self.sg_comb(how, t, 'v', 'a[j]')}")
            self.emit(d, "b[:] = v")
            return
        ident = self.literal(t, _sg_identity(how, t))
        if not scan:
            self.emit(d, "for j in range(size):")
            self.emit(d + 1, f"tmp[j] = a[j] if m[j] else {ident}")
            self.sg_butterfly(how, t, "tmp", d)
            return
        # Hillis-Steele over the lanes, the identity shifted in (emu.numerics.reduce.subgroup)
        self.emit(d, "for j in range(size):")
        self.emit(d + 1, f"b[j] = a[j] if m[j] else {ident}")
        if fn.startswith("exclusive"):
            self.emit(d, "for j in range(size - 1, 0, -1):")
            self.emit(d + 1, "b[j] = b[j - 1]")
            self.emit(d, f"b[0] = {ident}")
        self.emit(d, "st = 1")
        self.emit(d, "while st < size:")
        self.emit(d + 1, "for j in range(size - 1, -1, -1):")
        self.emit(d + 2, f"b[j] = {self.sg_comb(how, t, 'b[j]', f'(b[j - st] if j >= st else {ident})')}")
        self.emit(d + 1, "st *= 2")

    def sg_butterfly(self, how: str, t: str, src: str, d: int):
        """b = the butterfly of src (lane ^ 1, ^ 2, ...; each lane combining its own value first);
        tmp is scratch (src may be tmp)."""
        self.emit(d, "for j in range(size):")
        self.emit(d + 1, f"b[j] = {src}[j]")
        self.emit(d, "st = 1")
        self.emit(d, "while st < size:")
        self.emit(d + 1, "for j in range(size):")
        self.emit(d + 2, f"tmp[j] = {self.sg_comb(how, t, 'b[j]', 'b[j ^ st]')}")
        self.emit(d + 1, "for j in range(size):")
        self.emit(d + 2, "b[j] = tmp[j]")
        self.emit(d + 1, "st *= 2")

    def sg_move(self, fn: str, d: int):
        """broadcast / shuffles: each active invocation the value of its source invocation. False
        (the interpreter takes the dispatch) where a source is inactive (its value is not the
        interpreter's), subgroupBroadcast's id differs between invocations, or a shuffle names an
        invocation outside the subgroup (the interpreter reports that site)."""
        if fn == "broadcast":
            self.emit(d, "f = np.int64(-1)")
            self.emit(d, "for j in range(size):")
            self.emit(d + 1, "if m[j]:")
            self.emit(d + 2, "if f < 0:")
            self.emit(d + 3, "f = sel[j]")
            self.emit(d + 2, "elif sel[j] != f:")
            self.emit(d + 3, "return False")
        if fn == "broadcast_first":             # (a, m, n, b, tmp)
            self.emit(d, "for j in range(size):")
            self.emit(d + 1, "if m[j]:")
            self.emit(d + 2, "b[:] = a[j]")
            self.emit(d + 2, "return")
            return
        src = {"broadcast": "f", "shuffle": "sel[j]", "shuffle_xor": "j ^ sel[j]",
               "shuffle_up": "j - sel[j]", "shuffle_down": "j + sel[j]",
               "quad_broadcast": "(j & ~3) | sel[j]"}[fn]
        self.emit(d, "for j in range(size):")
        self.emit(d + 1, "if m[j]:")
        self.emit(d + 2, f"s = np.int64({src})")
        self.emit(d + 2, "if s < 0 or s >= size:")
        if fn in ("shuffle", "shuffle_xor"):
            self.emit(d + 3, "return False")
        else:
            self.emit(d + 3, "s = j                      # (the interpreter: the invocation's own value)")
        self.emit(d + 2, "if not m[s]:")
        self.emit(d + 3, "return False")
        self.emit(d + 2, "b[j] = a[s]")
        self.emit(d, "return True")

    def wg_switch(self, inst: Inst, d: int):
        """A switch with only a default around a barrier (glslang's block that `break` leaves):
        run once, as a loop body whose `break` every live invocation must agree on."""
        if inst.attrs["cases"] != [["default"]]:
            raise Unsupported("barrier inside a switch with cases")

        def continues(block):
            return any(i.op == OP.continue_ or (i.op != OP.loop and any(continues(b) for b in i.blocks))
                       for i in block.insts)
        if continues(inst.blocks[0]):
            raise Unsupported("continue inside a switch around a barrier")
        n = self.nloops
        self.nloops += 1
        self.decls[f"wbrk{n}"] = "np.bool_"
        self.decls[f"wcnt{n}"] = "np.bool_"
        self.emit(d, f"wbrk{n}[:] = False")
        self.emit(d, f"wcnt{n}[:] = False")
        self.emit(d, f"wexit{n} = False")
        self.emit(d, "while True:                     # the switch; a uniform 'break' leaves it")
        self.wg_block(inst.blocks[0], d + 1, n, True)
        self.emit(d + 1, "break")

    def wg_loop(self, inst: Inst, d: int):
        n = self.nloops
        self.nloops += 1
        body, cont = inst.blocks
        cost = 1 + sum(1 for b in (body, cont) for i in b.insts for _ in i.walk())
        self.decls[f"wbrk{n}"] = "np.bool_"
        self.decls[f"wcnt{n}"] = "np.bool_"
        self.loop_depth += 1
        self.emit(d, "while True:")
        self.emit(d + 1, f"wsteps += {cost}")
        self.emit(d + 1, "if wsteps > max_steps:")
        self.fail(d + 2, ERR_FALLBACK, "0")
        self.emit(d + 1, f"wbrk{n}[:] = False")
        self.emit(d + 1, f"wcnt{n}[:] = False")
        self.emit(d + 1, f"wexit{n} = False")
        self.emit(d + 1, "while True:                 # the body; a uniform 'continue' leaves it")
        self.wg_block(body, d + 2, n, True)
        self.emit(d + 2, "break")
        self.emit(d + 1, f"if wexit{n}:")
        self.emit(d + 2, "break")
        self.wg_block(cont, d + 1, n, False)
        self.loop_depth -= 1

    def loop(self, inst: Inst, d: int):
        n = self.nloops
        self.nloops += 1
        body, cont = inst.blocks
        cost = 1 + sum(1 for b in (body, cont) for i in b.insts for _ in i.walk())
        self.loop_depth += 1
        self.emit(d, "while True:")
        self.emit(d + 1, f"{self.steps} += {cost}")
        # per invocation, as the interpreter counts: in workgroup mode its own loops and the
        # workgroup's (uniform) loops around them
        self.emit(d + 1, f"if {self.steps}{' + wsteps' if self.wg else ''} > max_steps:")
        self.fail(d + 2, ERR_FALLBACK)
        self.emit(d + 1, f"brk{n} = False")
        self.emit(d + 1, "while True:                 # the body; 'continue' leaves it")
        self.block(body, d + 2, n)
        self.emit(d + 2, "break")
        self.emit(d + 1, f"if brk{n} or {self.ret_flag}:")
        self.emit(d + 2, "break")
        # the continuing block: its break_if leaves the outer loop directly
        for i in cont.insts:
            self.inst(i, d + 1, None)
        self.emit(d, f"if {self.ret_flag}:             # a return inside the loop")
        self.emit(d + 1, "break")
        self.loop_depth -= 1

    def builtin(self, inst: Inst) -> str:
        """The few numeric builtins with one obvious per-lane form (emu.numerics.builtins)."""
        fn = inst.attrs["fn"]
        t = _scalar(inst.type)
        if fn == "dot" and t == "f32" and len(inst.args) == 2 and all(
                isinstance(x.type, VectorType) for x in inst.args):
            a, b = (self.val(x)[1] for x in inst.args)
            if not self.nv:     # builtins._dot: the products summed in float64 from +0, one rounding
                return "np.float32(" + " + ".join(["0.0"] + [f"np.float64({x}) * np.float64({y})"
                                                             for x, y in zip(a, b)]) + ")"
            # the driver's order (emu.numerics.nvidia._dot): y * y' first, then fma x, z, w
            e = f"rt.nv_mul({a[1]}, {b[1]})"
            for k in (0,) + tuple(range(2, len(a))):
                e = f"rt.nv_fma({a[k]}, {b[k]}, {e})"
            return e
        xs = [self.v(x) for x in inst.args]
        tys = [_scalar(x.type) for x in inst.args]
        if fn == "select" and len(xs) == 3 and tys[0] == tys[1] == t == "f16" and tys[2] == "bool":
            e = f"{xs[1]} if {xs[2]} else {xs[0]}"
            return f"rt.nv_canon_f16({e})" if self.nv else e     # (bits; canonical NaNs there)
        if fn == "fma" and tys == [t] * 3 == ["f16"] * 3:      # (nvidia: the IEEE fma, NaNs canonical)
            return f"rt.f16_fma({xs[0]}, {xs[1]}, {xs[2]}, {0x7FFF if self.nv else -1})"
        if t == "f16" and tys == [t] * len(xs) and fn in ("min", "max", "clamp", "abs"):
            # builtins._minmax on the exactly widened values, narrowed back (each an operand, or
            # NaN); nvidia: NaNs canonical at the end (its _NO_FTZ builtins, and abs)
            def mm(x, y, is_max):
                return f"rt.f32_to_f16(rt.fminmax_f32(rt.f16_to_f32({x}), rt.f16_to_f32({y}), {is_max}))"
            if fn == "abs" and len(xs) == 1:
                e = f"np.uint16({xs[0]} & np.uint16(0x7FFF))"
            elif fn == "clamp" and len(xs) == 3:
                e = mm(mm(xs[0], xs[1], True), xs[2], False)
            elif len(xs) == 2 and fn != "clamp":
                e = mm(xs[0], xs[1], fn == "max")
            else:
                raise Unsupported(f"builtin {fn} on f16")
            return f"rt.nv_canon_f16({e})" if self.nv else e
        if "f16" in tys + [t]:
            raise Unsupported(f"builtin {fn} on f16")
        if fn == "select" and len(xs) == 3 and tys[0] == tys[1] == t and tys[2] == "bool":
            if self.nv and t == "f32":                  # the builtin canonicalizes NaNs there
                return f"rt.nv_canon({xs[1]} if {xs[2]} else {xs[0]})"
            return f"{xs[1]} if {xs[2]} else {xs[0]}"
        if t in _WIDTH and all(ty == t for ty in tys):
            c = _NPX[t]
            if fn == "min" and len(xs) == 2:
                return f"{c}(min({xs[0]}, {xs[1]}))"
            if fn == "max" and len(xs) == 2:
                return f"{c}(max({xs[0]}, {xs[1]}))"
            if fn == "clamp" and len(xs) == 3:
                return f"{c}(min(max({xs[0]}, {xs[1]}), {xs[2]}))"
            if fn == "abs" and len(xs) == 1:
                return xs[0] if t[0] == "u" else f"{c}(abs(np.int64({xs[0]})))"
        if t in ("i32", "u32") and tys == [t] and fn in _BIT_FNS:   # builtins.py's, on the unsigned bits
            u = f"np.uint32({xs[0]})"
            if fn == "firstLeadingBit" and t == "i32":  # the first bit unlike the sign
                u = f"(~{u} if {xs[0]} < 0 else {u})"
            return f"{_NPX[t]}({_BIT_FNS[fn].format(u)})"
        if fn in ("min", "max", "clamp") and t == "f32" and tys == [t] * len(xs):
            canon = "rt.nv_canon" if self.nv else ""    # (nvidia: FMNMX, not flushed; NaNs canonical)
            if fn == "clamp" and len(xs) == 3:
                return f"{canon}(rt.fminmax_f32(rt.fminmax_f32({xs[0]}, {xs[1]}, True), {xs[2]}, False))"
            if len(xs) == 2:
                return f"{canon}(rt.fminmax_f32({xs[0]}, {xs[1]}, {fn == 'max'}))"
        if fn in ("floor", "ceil", "round", "trunc") and t == "f32" and tys == [t]:     # exact
            e = f"np.float32(np.{'rint' if fn == 'round' else fn}({xs[0]}))"
            return f"rt.nv_canon({e})" if self.nv else e
        if fn == "abs" and t == "f32" and len(xs) == 1:
            return f"rt.nv_abs({xs[0]})" if self.nv else f"rt.bits_f32(rt.f32_bits({xs[0]}) & np.uint32(0x7FFFFFFF))"
        if fn == "inverseSqrt" and t == "f32" and len(xs) == 1 and self.nv:     # MUFU.RSQ: its table
            self.rsq = True
            return f"rt.nv_rsq({xs[0]}, rsq_tab)"
        if self.nv and t == "f32" and tys == [t] * len(xs) and fn in _NV_SFU:     # emu.numerics.nvidia._F32
            for tab in _NV_SFU[fn][1]:
                if tab == "rcp":
                    self.rcp = True
                elif tab not in self.tabs:
                    self.tabs.append(tab)
            return "rt.nv_out(" + _NV_SFU[fn][0].format(*xs) + ")"
        if fn == "fma" and t == "f32" and len(xs) == 3 and tys == ["f32"] * 3:
            return f"rt.{'nv_fma' if self.nv else 'fma_f32'}({xs[0]}, {xs[1]}, {xs[2]})"
        raise Unsupported(f"builtin {fn} on {t}")

    def literal(self, t: str, value) -> str:
        if t == "bool":
            return "True" if value else "False"
        if t == "f32":
            f = float(np.float32(value))
            if not math.isfinite(f):                    # infinities and NaNs by their bits
                return f"rt.bits_f32(np.uint32({int(np.array(value, np.float32).view(np.uint32))}))"
            return f"np.float32({f!r})"
        if t == "f16":
            return f"np.uint16({int(np.array(value, np.float16).view(np.uint16))})"
        v = int(value)
        if t[0] == "u":
            return f"{_NPX[t]}({v & ((1 << _WIDTH[t]) - 1)})"
        return f"{_NPX[t]}({v})"

    def input(self, name: str, t):
        if name not in _INPUTS:
            raise Unsupported(f"input {name}")
        self.inputs.add(name)
        if isinstance(t, VectorType):
            return ("vec", [f"in_{name}_{i}" for i in range(t.n)])
        return f"in_{name}"

    def unary(self, fn: str, t: str, x: str) -> str:
        if t in _WIDE and fn in ("neg", "not"):
            e = f"np.uint64(0) - np.uint64({x})" if fn == "neg" else f"~np.uint64({x})"
            return f"{_WIDE[t]}({e})"
        if t in _NARROW and fn in ("neg", "not"):
            return f"{_NARROW[t]}({'-' if fn == 'neg' else '~'}np.int64({x}))"
        if fn == "neg" and t == "f16":                 # the sign flipped (nvidia: NaNs canonical)
            e = f"np.uint16({x} ^ np.uint16(0x8000))"
            return f"rt.nv_canon_f16({e})" if self.nv else e
        if fn == "neg":
            return {"i32": f"np.int32(-np.int64({x}))", "u32": f"np.uint32(-np.int64({x}))",
                    "f32": f"rt.{'nv_neg' if self.nv else 'neg_f32'}({x})"}.get(t) or self._no(fn, t)
        if fn == "not":
            return {"bool": f"not {x}", "i32": f"np.int32(~np.int64({x}))",
                    "u32": f"np.uint32(~np.int64({x}))"}.get(t) or self._no(fn, t)
        return self._no(fn, t)

    def _no(self, fn, t):
        raise Unsupported(f"{fn} on {t}")

    def binary(self, fn: str, t: str, x: str, y: str) -> str:
        cmp = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
        if t == "f16":                                  # in f32, rounded once (scalar_compiled)
            if fn in cmp:
                return f"(rt.f16_to_f32({x}) {cmp[fn]} rt.f16_to_f32({y}))"
            if fn in ("add", "sub", "mul"):
                return f"rt.f16_{fn}({x}, {y}, {0x7FFF if self.nv else -1})"
            if fn == "div" and self.nv:                 # through MUFU.RCP: its table is an argument
                self.rcp = True
                return f"rt.nv_f16_div({x}, {y}, rcp_tab)"
            if fn == "div":
                return f"rt.f16_div({x}, {y})"
            self._no(fn, t)
        if t == "bool":
            ops = {"and": "and", "or": "or", "xor": "!=", "ne": "!=", "eq": "=="}
            if fn not in ops:
                self._no(fn, t)
            return f"(({x}) {ops[fn]} ({y}))"
        if fn in cmp:
            return f"({x} {cmp[fn]} {y})"
        if t == "f32" and self.nv:                      # emu.numerics.nvidia's FTZ and NaN rules
            if fn in ("add", "sub", "mul"):
                return f"rt.nv_{fn}({x}, {y})"
            if fn in ("div", "rem"):                    # through MUFU.RCP: its table is an argument
                self.rcp = True
                return f"rt.nv_{fn}({x}, {y}, rcp_tab)"
            self._no(fn, t)
        if t == "f32":
            ops = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
            if fn in ops:
                return f"np.float32({x} {ops[fn]} {y})"
            if fn == "rem":
                return f"np.float32(np.fmod({x}, {y}))"
            self._no(fn, t)
        c = _NPX[t]
        ops = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^"}
        if t in _WIDE:
            if fn in ops:
                return f"{c}(np.uint64({x}) {ops[fn]} np.uint64({y}))"
            if fn == "shl":
                return f"{c}(np.uint64({x}) << np.uint64(np.int64({y}) & 63))"
            if fn == "shr":                             # arithmetic for i64, logical for u64
                return f"{c}({c}({x}) >> {c}(np.int64({y}) & 63))"
            self._no(fn, t)
        if fn in ops:
            return f"{c}(np.int64({x}) {ops[fn]} np.int64({y}))"
        if fn in ("div", "rem"):                        # (int64 holds every narrow quotient)
            return f"rt.{fn}_{t}({x}, {y})" if t in ("i32", "u32") else f"{c}(rt._{fn}(np.int64({x}), np.int64({y})))"
        if fn in ("shl", "shr"):                        # the amount modulo the width
            return f"{c}(np.int64({x}) {'<<' if fn == 'shl' else '>>'} (np.int64({y}) & {_WIDTH[t] - 1}))"
        self._no(fn, t)

    def convert(self, x: str, s: str, t: str, native=False) -> str:
        """The interpreter's conversion rule (scalar.convert, or convert_native for SPIR-V's own
        instructions; nvidia's on the H200) for one value."""
        if s == t:
            return x
        if t == "bool":
            return f"(rt.f16_to_f32({x}) != 0)" if s == "f16" else f"({x} != 0)"
        if s == "bool":
            return {"f32": f"np.float32(1.0 if {x} else 0.0)", "f16": f"np.uint16(15360 if {x} else 0)"}.get(
                t, f"{_NPX[t]}(1 if {x} else 0)")
        if {s, t} == {"f16", "f32"}:                  # (both rules: numerics.scalar's and nvidia's)
            return f"rt.{'nv_' if self.nv else ''}{s}_to_{t}({x})"
        if t == "f16":                                # from an integer: SPIR-V's rounding or WGSL's
            return f"rt.int_to_f16({x}, {not native})"
        if s in ("f32", "f16") and t in _NARROW or (s == "f16" and t in ("i32", "u32")):
            return f"{_NPX[t]}(rt.float_to_int({'rt.f16_to_f32(' + x + ')' if s == 'f16' else x}, "\
                   f"{self.int_bounds(s, t, native)}))"
        if (s in ("f32", "f16") and t in _WIDE) or (s in _WIDE and t == "f32"):
            raise Unsupported(f"conversion {s} to {t}")
        if s == "f32" and self.nv and native:         # SPIR-V's: saturating, NaN -> 0
            return f"rt.nv_native_f32_to_{t}({x})"
        if s == "f32":
            return f"rt.nv_f32_to_i32({x})" if self.nv and t == "i32" else f"rt.f32_to_{t}({x})"
        if t == "f32":
            return f"np.float32({x})"
        return f"{_NPX[t]}(np.int64({x}))"            # i32 <-> u32: the bits

    def int_bounds(self, s: str, t: str, native) -> str:
        """float_to_int's bounds and NaN value for float type s to integer type t, as the
        interpreter's rule has them: SPIR-V's conversion on the H200 saturates to t's range
        (nvidia.convert_native), every other clamps to the values s holds exactly
        (scalar.float_bounds_for_int); a NaN gives 0, or on the H200 WGSL's i32 / u32 the low end."""
        if self.nv and native:
            return f"{INT_MIN[t]}.0, {INT_MAX[t]}.0, 0"
        lo, hi = float_bounds_for_int(t, s)
        return f"{lo!r}, {hi!r}, {int(lo) if self.nv and t in ('i32', 'u32') else 0}"

    def prelude(self) -> tuple[list, list]:
        """The lines that set the builtin inputs the code reads: (per workgroup, per invocation),
        from `w` (the workgroup's index) and `local` (the invocation's)."""
        wx, wy, wz = self.pipe.layout.wg_size
        sg = self.pipe.opts.subgroup_size
        pre = []
        need = self.inputs
        if need & {"local_invocation_id", "global_invocation_id"}:
            pre += [f"in_local_invocation_id_0 = np.uint32(local % {wx})",
                    f"in_local_invocation_id_1 = np.uint32((local // {wx}) % {wy})",
                    f"in_local_invocation_id_2 = np.uint32(local // {wx * wy})"]
        if need & {"workgroup_id", "global_invocation_id"}:
            pre += ["in_workgroup_id_0 = np.uint32(w % gx)",
                    "in_workgroup_id_1 = np.uint32((w // gx) % gy)",
                    "in_workgroup_id_2 = np.uint32(w // (gx * gy))"]
        if "global_invocation_id" in need:
            pre += [f"in_global_invocation_id_{i} = np.uint32(np.int64(in_workgroup_id_{i}) * {n} "
                    f"+ np.int64(in_local_invocation_id_{i}))" for i, n in enumerate((wx, wy, wz))]
        if "num_workgroups" in need:
            pre += ["in_num_workgroups_0 = np.uint32(gx)", "in_num_workgroups_1 = np.uint32(gy)",
                    "in_num_workgroups_2 = np.uint32(gz)"]
        if "local_invocation_index" in need:
            pre.append("in_local_invocation_index = np.uint32(local)")
        if "subgroup_invocation_id" in need:
            pre.append(f"in_subgroup_invocation_id = np.uint32(local % {sg})")
        if "subgroup_id" in need:
            pre.append(f"in_subgroup_id = np.uint32(local // {sg})")
        if "subgroup_size" in need:
            pre.append(f"in_subgroup_size = np.uint32({sg})")
        if "num_subgroups" in need:
            pre.append(f"in_num_subgroups = np.uint32({-(-self.pipe.layout.wg_count // sg)})")
        return ([p for p in pre if p.startswith("in_workgroup_id")],
                [p for p in pre if not p.startswith("in_workgroup_id")])

    # -- the whole kernel ------------------------------------------------------------------
    IMPORTS = ["import numpy as np", "from numba import njit", "from emu.numerics import scalar_compiled as rt",
               "from emu.jit import rt as wg"]

    def driver(self, params: str, body: list, setup=(), per_workgroup=(), unit=None) -> list:
        """The one loop every generated kernel runs, `run(w0, w1, ...)`: `setup` once, then for each
        workgroup w0..w1 its builtin inputs and `per_workgroup`, then `body` (lines generated at
        depth 2) once per unit. `unit`: (loop variable, count, its first lines, what it is): an
        invocation (the fusion JIT) or a subgroup (the cooperative kernel), each with its own step
        count, return flag and builtin inputs, the body inside a one-shot `while True` that
        `return` and `break` leave; None (workgroup mode): the body runs the workgroup's invocations itself,
        their builtin inputs where it says ##PRE##."""
        wgpre, pre = self.prelude()
        deco = "@njit(cache=True, nogil=True, error_model='numpy')"
        if unit is None:
            lines = []
            for line in body:
                if line.strip() == "##PRE##":
                    ind = line[:len(line) - len(line.lstrip())]
                    lines += [ind + x for x in pre]
                else:
                    lines.append(line)
            # each group's own values as its locals, each long group a function (emu/jit/outline.py)
            lines = outline.prune(lines, {x.split(" = ", 1)[0] for x in pre})
            local = outline.localize(lines, set(self.decls))
            lines, packed, gone = outline.pack(lines, {k: t for k, t in self.decls.items() if k not in local},
                                               self.pipe.layout.wg_count)
            setup = packed + [x for x in setup if x.split(" = ", 1)[0] not in local | gone]
            outer = {p.strip() for p in params.split(",")} | {"w"} | {
                x.split(" = ", 1)[0].strip() for x in list(setup) + list(wgpre) + list(per_workgroup)}
            outer.discard("")
            # the workgroup's epoch and loop steps in an array, so that functions can advance them
            setup, per_workgroup, lines = ([outline.WG_STATE.sub(outline.wg_state, x) for x in part]
                                           for part in (setup, per_workgroup, lines))
            setup = [f"wst = np.zeros({3 + self.nloops}, np.int64)"] + setup
            outer |= {"wst"}
            funcs, lines = outline.split(lines, {n for n in outer if n.isidentifier()}, deco)
            out = funcs + [deco, f"def run({params}):"]
            out += ["    " + x for x in setup]
            out += ["    for w in range(w0, w1):"]
            out += ["        " + x for x in list(wgpre) + list(per_workgroup)]
            return out + ["        " + x for x in lines] + [""]
        out = [deco, f"def run({params}):"]
        out += ["    " + x for x in setup]
        out += ["    for w in range(w0, w1):"]
        out += ["        " + x for x in list(wgpre) + list(per_workgroup)]
        var, count, first, what = unit
        out += [f"        for {var} in range({count}):"]
        out += ["            " + x for x in list(first) + ["steps = 0", "ret = False"] + pre]
        out += [f"            while True:             # one {what}; 'return' leaves it"]
        out += ["        " + line for line in body]
        return out + ["                break", ""]

    def _guards(self, body: list) -> list:
        """The body with each store's ##GUARD line made the owner check of a guarded buffer (none
        elsewhere): the element's owner is the first invocation that stored to it in this run,
        `oep` (the run's epoch, shifted past the invocation bits) plus its flat index plus one.
        A value below `oep` is an earlier run's, so the arrays are kept from run to run (Kernel.
        owners): a dispatch of 16 M elements would otherwise fault in 128 MB of new pages."""
        out = []
        for line in body:
            if line.strip().startswith("##GUARD"):
                ind = line[:len(line) - len(line.lstrip())]
                _, k, idx = line.split()
                if int(k) in self.guarded:
                    me = f"oep + np.int64(w) * {self.pipe.layout.wg_count} + local + 1"
                    out += [ind + f"_o = own{k}[{idx}]",
                            ind + f"if _o >= oep and _o != {me}:",
                            ind + f"    err[0] = {ERR_COLLIDE}", ind + "    err[1] = w", ind + "    err[2] = local",
                            ind + "    return",
                            ind + f"own{k}[{idx}] = {me}"]
                continue
            out.append(line)
        return out

    def build(self) -> str:
        fn = self.entry
        for i, bname in fn.param_builtins.items():
            self.vals[fn.params[i].id] = self.input(bname, fn.params[i].type)
        self.track_reads = True
        body_start = len(self.lines)
        self.private_init()
        if self.wg:
            self.wg_block(fn.body, 0, None, False)
        else:
            self.block(fn.body, 2, None)
        body = self.lines[body_start:]
        del self.lines[body_start:]
        for k, st in self.stores.items():
            if st and self.loads[k]:
                raise Unsupported(f"buffer {self.buf_types[k].g.name}: read and written (other invocations "
                                  f"could see its stores)")
        # a buffer stored more than once per invocation (a store in a loop, or several stores): lane
        # order and lockstep agree unless two invocations store to one element; each element keeps
        # its owner, and a second owner stops the kernel (the interpreter runs the dispatch)
        self.guarded = [k for k, st in self.stores.items() if st and (len(st) > 1 or st[0] > 0)]
        body = self._guards(body)
        bufs = ", ".join([f"b{k}, n{k}" for k in range(len(self.buf_types))] + ["rcp_tab"] * self.rcp
                         + ["rsq_tab"] * self.rsq + [f"{t}_tab" for t in self.tabs])
        stored = [k for k in range(len(self.buf_types)) if self.stores[k]]
        self.stored_slots = stored
        sas = "".join(f", sa{k}" for k in stored) + "".join(f", own{k}" for k in self.guarded)
        sas += ", oep" if self.guarded else ""
        tail = f"{sas}{', ' + bufs if bufs else ''}"
        nwg = self.pipe.layout.wg_count
        out = self.IMPORTS + ["", ""] + [x for h in self.helpers.values() for x in h]
        params = f"w0, w1, wbase, gx, gy, gz, max_steps, err, rdf, rec{tail}"
        lanes = nwg if self.wg else 1           # private storage: per invocation of a workgroup
        privs = [f"{k} = np.zeros({size * lanes}, {dt})" for k, (dt, size, _) in sorted(self.privs.items())
                 if not self.local_leaf(k)]
        if not self.wg:
            return "\n".join(out + self.driver(params, body, privs, unit=("local", nwg, (), "invocation")))
        decl = privs + [f"{k} = np.zeros({nwg}, {t})" for k, t in sorted(self.decls.items())]
        decl += [f"{k} = np.zeros({n}, {t})" for k, (t, n) in sorted(self.scratch.items())]
        decl += [f"retd = np.zeros({nwg}, np.bool_)", f"stp = np.zeros({nwg}, np.int64)"]
        for g, (t, cnt) in self.wmem.items():
            decl += [f"wm_{g} = np.zeros({cnt}, {t})", f"wt_{g} = np.zeros({cnt}, np.int64)",
                     f"rt_{g} = np.zeros({cnt}, np.int64)"]
        per_wg = [f"wm_{g}[:] = 0" for g in self.wmem] + ["retd[:] = False", "stp[:] = 0", "wsteps = 0",
                                                   "ep += 4096"] + ["ib = ep"] * self.sgbar
        return "\n".join(out + self.driver(params, body, decl + ["ep = np.int64(0)"], per_wg))


def _private(p: Path) -> bool:
    """True if `p` is a real folder of ours that no one else can write to: the JIT imports the
    .py files in it, so a folder others can write is a place to plant code."""
    try:
        st = os.lstat(p)
    except OSError:
        return False
    import stat
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()
            and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


_CACHE: dict = {}           # EMU_JIT_CACHE's value -> the folder checked for it


def _cache_dir() -> Path:
    """EMU_JIT_CACHE or ~/.cache/emu/jit, created private (0700); where that is not possible or
    not private, a fresh private folder of this process (compiled again next time)."""
    d = os.environ.get("EMU_JIT_CACHE")
    if d in _CACHE:
        return _CACHE[d]
    p = Path(d) if d else Path.home() / ".cache" / "emu" / "jit"
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        pass
    if not _private(p):
        import tempfile
        import warnings
        warnings.warn(f"emu JIT: the cache folder {p} is not a private folder of this user "
                      f"(owned by another user, writable by others, or missing); using a temporary "
                      f"private one", RuntimeWarning)
        p = Path(tempfile.mkdtemp(prefix="emu-jit-"))     # created 0700 by us, unique
    _CACHE[d] = p
    return p


_MODULES: dict[str, object] = {}


_STAMP: list = []


# the modules whose compiled functions generated kernels call (their imports within emu included)
_CALLED = ("numerics/scalar_compiled.py", "numerics/scalar.py", "numerics/dtypes.py", "numerics/rounding.py",
           "numerics/mma_kernels.py", "numerics/mma_params.py", "numerics/mma_tile.py", "numerics/mma_fast.py",
           "numerics/mma_call.py", "jit/coop_tiles.py", "jit/rt.py")


def _stamp() -> str:
    """A hash of the code generated kernels call (_CALLED): numba's cache checks only a kernel's
    own file, so a kernel compiled against older callees (an upgrade, another checkout sharing the
    cache) would keep their old machine code; with this line in its source it is another file."""
    if not _STAMP:
        h = hashlib.sha256()
        root = Path(__file__).resolve().parents[1]
        for name in _CALLED:
            h.update(name.encode() + (root / name).read_bytes())
        _STAMP.append(h.hexdigest()[:16])
    return _STAMP[0]


def _stamped(source: str) -> tuple[str, str]:
    """The source as written to the cache, and the hash that names its file (and the file of its
    machine code, emu/jit/native.py)."""
    source = f"# compiled against emu's kernels {_stamp()}\n{source}"
    return source, hashlib.sha256(source.encode()).hexdigest()[:24]


class _Module:
    """The generated module's functions, each called without numba where its machine code was
    saved (emu/jit/native.py); the module itself (numba) is imported when a call needs it."""

    def __init__(self, source: str):
        self.source = source
        self.hash = _stamped(source)[1]

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        from . import native
        f = native.Function(native.path(_cache_dir(), f"emu_jit_{self.hash}.{name}"),
                            lambda: getattr(_load(self.source), name))
        setattr(self, name, f)
        return f


def _load(source: str):
    source, h = _stamped(source)
    mod = _MODULES.get(h)
    if mod is not None:
        return mod
    path = _cache_dir() / f"emu_jit_{h}.py"
    if not path.exists() or path.read_text() != source:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(source)
        os.replace(tmp, path)
    name = f"emu_jit_{h}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    _MODULES[h] = mod
    return mod


def aliased(datas, stored, owners=None) -> bool:
    """Whether a written buffer shares memory with another bound one (a buffer bound twice): the
    order of invocations (or subgroups) would show; the interpreter runs such dispatches. Views of
    one variable (`owners`: each view's; the scalars of different types in its structs) are not
    that: its members never overlap."""
    return any(np.shares_memory(datas[i], datas[j])
               for i in range(len(datas)) if stored[i] for j in range(len(datas))
               if j != i and (owners is None or owners[i] is not owners[j]))


def _sharing(datas, stored, owners) -> set | None:
    """The bindings that share memory with a written one (and are only read), or None where two
    written ones do. Views of one variable (owners) are not that (see aliased)."""
    out = set()
    for i in range(len(datas)):
        for j in range(len(datas)):
            if stored[i] and j != i and owners[i] is not owners[j] and np.shares_memory(datas[i], datas[j]):
                if stored[j]:
                    return None
                out.add(j)
    return out


def first_use(kernel, warm) -> bool:
    """Load kernel.mod (its saved machine code, else compiled by numba or from numba's caches) and
    call warm(mod), which compiles it for this dispatch's argument types on an empty range. False where numba cannot build it (a
    construct it cannot type): the interpreter runs the pipeline from then on, said once."""
    if kernel.mod is not None:
        return True
    from . import tier
    try:
        kernel.mod = _Module(kernel.source)
        tier.timed_compile(kernel, kernel.kind, lambda: warm(kernel.mod))
    except Exception as e:
        import warnings
        warnings.warn(f"emu JIT: {kernel.pipe.entry.name} left to the interpreter ({type(e).__name__}: "
                      f"{str(e).splitlines()[0] if str(e) else ''})", RuntimeWarning)
        kernel.pipe._jit = None
        kernel.mod = None
        return False
    return True


def pending_tier(kernel):
    """The executor's question before a dispatch: a Tier (emu/jit/tier.py) while the interpreter
    may run it instead of compiling the kernel, or None (it runs compiled)."""
    from . import tier
    return tier.pending(kernel, kernel.kind, _stamped(kernel.source)[1], _cache_dir())


class Kernel:
    """A compiled entry point: run(grid, buffers) -> None (done) or the first workgroup from which
    the interpreter must take over."""
    kind = "fusion"
    tier = pending_tier

    def __init__(self, pipe, gen: _Gen, source: str):
        self.pipe = pipe
        self.source = source
        self.slots = gen.buf_types
        self.stored = [bool(gen.stores[k]) for k in range(len(gen.buf_types))]
        self.stored_slots = gen.stored_slots
        self.guarded = gen.guarded                  # slots whose elements keep their owner
        self.whole_batches = bool(gen.guarded)      # (the executor: see Pipeline._interpret_first)
        self.has_loops = gen.nloops > 0
        self.rcp = gen.rcp
        self.rsq = gen.rsq
        self.tabs = gen.tabs
        self.mod = None

    def run(self, grid, regions: dict, workgroups: tuple[int, int] | None = None):
        """`workgroups`: (first, end) flat indices, the range to run (default: the whole grid)."""
        from ..numerics.dtypes import NP
        args = []
        datas = []
        for s in self.slots:
            reg = regions.get((s.g.group, s.g.binding))
            got = None if reg is None else s.view(reg, np.uint16 if s.elem.name == "f16" else NP[s.elem.name])
            if got is None:
                declined(self.pipe, "this dispatch's kernel", f"binding {s.g.name} missing or too small")
                return 0
            args += [got[0], np.int64(got[1])]
            datas.append(got[0])
        from ..numerics import sfu
        args += [sfu.table(t) for t, used in (("rcp", self.rcp), ("rsq", self.rsq)) if used]
        args += [sfu.table(t) for t in self.tabs]
        # a written buffer bound again (ggml binds the output for inputs a fusion leaves unused):
        # the kernel runs if that other binding is only read and then never is; the written
        # buffers are kept first, and restored for the interpreter if it was read after all
        shared = _sharing(datas, self.stored, [s.g for s in self.slots])
        if shared is None:
            declined(self.pipe, "this dispatch's kernel", "two written bindings share memory")
            return 0
        kept = [(datas[k], datas[k].copy()) for k in range(len(datas)) if self.stored[k]] if shared else []
        # run serially: rec False, one unused store address array per written buffer (rec a bool
        # from here, as from _parallel_run: one compiled run serves both)
        dummies = [np.empty(1, np.int64) for _ in self.stored_slots]
        gx, gy, gz = grid
        lo, end = workgroups if workgroups is not None else (0, gx * gy * gz)
        owners = self.owners([args[2 * k].size for k in self.guarded], end * self.pipe.layout.wg_count)
        if owners is None:
            return lo
        if not first_use(self, lambda mod: mod.run(0, 0, 0, 1, 1, 1, self.pipe.opts.max_steps, np.zeros(3, np.int64),
                                                   np.zeros(1, np.bool_), False, *dummies, *owners, *args)):
            return 0
        total = end - lo
        lanes = total * self.pipe.layout.wg_count
        jobs = int(getattr(self.pipe.opts, "jobs", 1) or 1)
        if jobs > 1 and self.has_loops and not self.guarded and total >= 2 and lanes >= 4096 and not shared:
            if self._parallel(lo, total, lanes, jobs, grid, args):
                return None
        err = np.zeros(3, np.int64)
        rdf = np.zeros(max(len(self.slots), 1), np.bool_)
        self.mod.run(lo, end, lo, gx, gy, gz, self.pipe.opts.max_steps, err, rdf, False, *dummies, *owners, *args)
        if rdf[sorted(shared)].any():
            for view, was in kept:
                view[:] = was
            declined(self.pipe, "this dispatch's kernel", "it read a binding that shares memory with a written one")
            return 0
        if err[0] == 0:
            return None
        if err[0] == ERR_COLLIDE:       # two invocations stored to one element: their order shows
            return lo
        return int(err[1])


OWNER_BITS = 40            # an owner: (epoch << OWNER_BITS) + flat invocation index + 1


def _owners(self, sizes: list, invocations: int):
    """The guarded slots' owner arrays (at least `sizes` elements, kept from run to run) and this
    run's epoch (shifted) as the last item; [] for a kernel without guarded slots, None where the
    dispatch has too many invocations for the owner's bits (the interpreter runs it)."""
    if not sizes:
        return []
    if invocations >= 1 << OWNER_BITS:
        return None
    arrays = getattr(self, "_owner_arrays", None) or [np.zeros(0, np.int64) for _ in sizes]
    epoch = getattr(self, "_epoch", 0) + 1
    if epoch >= 1 << (62 - OWNER_BITS):         # (every 4 M runs) start again from zeros
        arrays, epoch = [np.zeros(0, np.int64) for _ in sizes], 1
    arrays = [a if a.size >= n else np.zeros(max(n, 1), np.int64) for a, n in zip(arrays, sizes)]
    self._owner_arrays, self._epoch = arrays, epoch
    return arrays + [np.int64(epoch << OWNER_BITS)]


Kernel.owners = _owners


def _parallel_run(self, lo, total, lanes, jobs, grid, args) -> bool:
    """Run the dispatch on `jobs` threads; True if that gave the serial result. It does unless
    an invocation stopped (an error to report) or two invocations stored to one address (then the
    order would matter): the caller then runs it serially from the start, which is exact because
    the kernel reads only buffers it never writes."""
    from . import rt
    from ..numerics.pool import run_chunks
    chunks = min(total, 2 * jobs)
    errs = np.zeros((chunks, 3), np.int64)
    rdf = np.zeros(max(len(self.slots), 1), np.bool_)
    sas = [np.full(lanes, -1, np.int64) for _ in self.stored_slots]
    gx, gy, gz = grid

    def chunk(c0, c1):
        for c in range(c0, c1):
            a, z = lo + total * c // chunks, lo + total * (c + 1) // chunks
            self.mod.run(a, z, lo, gx, gy, gz, self.pipe.opts.max_steps, errs[c], rdf, True, *sas, *args)
    run_chunks(chunk, chunks, jobs)
    if errs[:, 0].any():
        return False
    for sa, k in zip(sas, self.stored_slots):
        if rt.collides(sa, args[2 * k].size):
            return False
    return True


Kernel._parallel = _parallel_run


def compile_pipeline(pipe) -> Kernel | None:
    """The pipeline's entry point as a Kernel, or None when the interpreter must run it."""
    if pipe.opts.tracer is not None or os.environ.get("EMU_JIT", "1") == "0":
        return None
    if getattr(pipe.profile, "scalar", "ieee") not in SCALAR_MODELS:
        return None         # a scalar model the generated code does not know: the interpreter
    gen = None
    try:
        gen = _Gen(pipe)
        source = gen.build()
    except Unsupported as e:
        declined(pipe, "the fusion JIT", e, getattr(gen, "at", None))
        return None
    return Kernel(pipe, gen, source)


def declined(pipe, who: str, why, at=None) -> None:
    """With EMU_JIT_WHY=1, say on stderr why a compiled path left an entry point to the interpreter
    (`at`: the instruction it stopped at, named with its source location)."""
    if os.environ.get("EMU_JIT_WHY", "0") != "0":
        where = f" (at {at.op}{f', {at.loc}' if at.loc is not None else ''})" if at is not None else ""
        print(f"emu JIT: {pipe.entry.name}: {who} declined it: {why}{where}", file=sys.stderr)
