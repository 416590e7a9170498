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

Covered: scalars bool / i32 / u32 / f32, and f16 held as its bits (loaded, stored, selected,
converted to and from f32); the builtin input vectors through constant extracts;
constants and overrides (baked into the kernel); function `var`s of scalar type; buffers that are
an array of scalars (runtime-sized or not) or a scalar, indexed once; array_length; unary,
binary, select, convert, bitcast and a few builtins (select, integer min / max / clamp / abs, f32
abs and fma; inverseSqrt on nvidia-h200, through MUFU.RSQ's table) with the rules of emu.numerics (see numerics/scalar_compiled.py), on nvidia-h200 those
of emu.numerics.nvidia (f32 flushing and canonical NaNs; its f32 x / y and x % y through MUFU.RCP,
whose measured table the kernel takes as one more argument); if / loop / break / continue /
break_if / return / switch (a one-shot loop).

Workgroup memory and barriers ("workgroup mode"): values live in per-lane arrays, statements that
hold a barrier run for the whole workgroup at once (their conditions must be the same in every
live invocation, as lockstep requires), and the barrier-free statements between them run as one
group, invocation after invocation. Every access to workgroup memory checks that no other
invocation touched the element since the last barrier (not only since the group began: a race
across a branch or loop that holds a barrier is one the interpreter reports): lane order and
lockstep agree exactly when there is no such conflict, and where there is one the interpreter
takes over. A
barrier that only some invocations reach, or a loop or branch around a barrier whose condition
differs between them, also hands over (the interpreter then reports it).

Anything else (subgroup and cooperative ops, atomics, calls, structs, vectors in registers, f16 arithmetic,
other builtins) leaves the whole entry point to the interpreter: `compile_pipeline` returns None.
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

from ..isa.ir import Block, Function, Inst
from ..isa.ops import OP
from ..isa.types import ArrayType, ScalarType, StructType, VectorType

__all__ = ["compile_pipeline", "Kernel", "Unsupported"]

ERR_OOB, ERR_FALLBACK, ERR_COLLIDE = 1, 2, 3
SCALAR_MODELS = ("ieee", "nvidia-sfu")      # the profiles' scalar arithmetic the generated code has
# f16 is held as its bits (u16): loaded, stored, selected and converted to and from f32, no more
_NP = {"i32": "np.int32", "u32": "np.uint32", "f32": "np.float32", "bool": "np.bool_", "f16": "np.uint16"}
_ZERO = {"i32": "np.int32(0)", "u32": "np.uint32(0)", "f32": "np.float32(0.0)", "bool": "False",
         "f16": "np.uint16(0)"}
_INPUTS = ("global_invocation_id", "local_invocation_id", "local_invocation_index", "workgroup_id",
           "num_workgroups", "subgroup_invocation_id", "subgroup_size", "subgroup_id", "num_subgroups")


# Ops the fusion JIT declines (the interpreter runs pipelines that use them): _Gen.inst has a
# rule for every other op; tests/isa/test_op_coverage.py checks that the two cover the op table.
UNSUPPORTED_OPS = frozenset({
    OP.atomic, OP.call, OP.construct, OP.insert, OP.subgroup, OP.swizzle, OP.undef,
    OP.coop_convert, OP.coop_fill, OP.coop_length, OP.coop_load, OP.coop_mma, OP.coop_mul,
    OP.coop_scalar, OP.coop_store, OP.texture, OP.coop_reduce, OP.coop_load_tensor, OP.coop_store_tensor,
    OP.coop_per_element, OP.coop_coordinate, OP.address_ptr,
})


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
    if isinstance(t, ScalarType) and t.name in _NP:
        return t.name
    raise Unsupported(f"type {t}")


class _Gen:
    def __init__(self, pipe):
        self.pipe = pipe
        self.nv = getattr(pipe.profile, "scalar", "ieee") == "nvidia-sfu"     # emu.numerics.nvidia's rules
        self.rcp = False                # f32 / or % on nvidia-h200: the kernel takes MUFU.RCP's table
        self.rsq = False                # inverseSqrt on nvidia-h200: MUFU.RSQ's table
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
        self.sw_continued: set[int] = set()     # switches a `continue` leaves
        # workgroup mode (workgroup memory or barriers): values live in per-lane arrays, and the
        # code between barriers runs invocation by invocation for the whole workgroup
        self.wg = any(i.op == OP.barrier for i in pipe.entry.walk()) or any(
            g.space == "workgroup" for g in pipe.module.globals
            if any(i.op == OP.global_ and i.attrs["name"] == g.name for i in pipe.entry.walk()))
        self.decls: dict[str, str] = {}         # per-lane arrays (workgroup mode): name -> dtype
        self.wmem: dict[int, tuple] = {}        # workgroup variable's slot -> (dtype, count)
        self.wslots: dict[str, int] = {}        # workgroup variable name -> slot
        self.steps = "stp[local]" if self.wg else "steps"

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
        if not isinstance(elem, ScalarType) or elem.name not in ("i32", "u32", "f32", "f16"):
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

    def buffer_ptr(self, g, t, offset: int = 0):
        """A pointer into a bound buffer: to its struct (resolved by the member accesses that
        follow), to an array ("arr", slot) or to a scalar ("elem", slot, index)."""
        if g.space not in ("storage", "uniform") or g.group is None:
            raise Unsupported(f"global {g.name} in {g.space}")
        if isinstance(t, StructType):
            return ("struct", g, t, offset)
        k = self.buffer(g, t, offset)
        return ("arr", k) if isinstance(t, ArrayType) else ("elem", k, "0")

    # -- code ----------------------------------------------------------------------------
    def block(self, block: Block, depth: int, loop_ctx):
        if not block.insts:
            self.emit(depth, "pass")
            return
        for inst in block.insts:
            self.inst(inst, depth, loop_ctx)

    def inst(self, inst: Inst, d: int, loop_ctx):
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
            elem = t.elem if isinstance(t, ArrayType) else t
            if not self.wg or _scalar(elem) == "bool" or (isinstance(t, ArrayType) and t.count is None):
                raise Unsupported(f"workgroup variable {g.name} of {t}")
            # generated code names a workgroup variable by its slot, never by its WGSL name: Python
            # folds identifiers to NFKC, so `fi` and U+FB01 would become one variable
            slot = self.wslots.setdefault(g.name, len(self.wslots))
            self.wmem[slot] = (_NP[_scalar(elem)], t.count if isinstance(t, ArrayType) else 1)
            self.vals[r.id] = ("warr", slot) if isinstance(t, ArrayType) else ("welem", slot, "np.int64(0)")
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
            if isinstance(base, tuple) and base[0] == "warr" and len(path) == 1:
                self.wg_access(inst, base[1], d)
                return
            while isinstance(base, tuple) and base[0] == "struct" and path:    # members: constant steps
                _, g, st, off = base
                base = self.buffer_ptr(g, st.members[path[0]].type, off + st.offsets[path[0]])
                path = path[1:]
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
                iv = self.lane_var(f"i{r.id}", None)
                self.emit(d, f"{iv} = np.int64({idx})")
                self.emit(d, f"if {iv} < 0 or {iv} >= n{k}:")
                self.fail(d + 1, ERR_OOB)
                self.vals[r.id] = ("elem", k, iv)
        elif op == OP.load:
            p = self.vals.get(a[0].id)
            if isinstance(p, tuple) and p[0] == "var":
                self.emit(d, f"{name} = {p[1]}")
            elif isinstance(p, tuple) and p[0] == "welem":
                self.wg_load(p[1], p[2], name, d)
            elif isinstance(p, tuple) and p[0] == "elem":
                self.loads[p[1]] += 1
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
                self.stores[p[1]].append(self.loop_depth)
                self.emit(d, f"##GUARD {p[1]} {p[2]}")     # the store's owner check, where build() needs one
                self.emit(d, f"b{p[1]}[{p[2]}] = {val}")
                self.emit(d, "if rec:")
                self.emit(d + 1, f"sa{p[1]}[(w - wbase) * {self.pipe.layout.wg_count} + local] = {p[2]}")
            else:
                raise Unsupported("store")
        elif op == OP.array_length:
            p = self.vals.get(a[0].id)
            if not (isinstance(p, tuple) and p[0] == "arr"):
                raise Unsupported("array_length")
            self.emit(d, f"{name} = np.uint32(n{p[1]})")
            self.vals[r.id] = name
        elif op == OP.extract:
            src = self.vals.get(a[0].id)
            path = inst.attrs["path"]
            if not (isinstance(src, tuple) and src[0] == "vec") or len(path) != 1 or path[0] < 0:
                raise Unsupported("extract")
            self.vals[r.id] = src[1][path[0]]
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
            if "bool" in (s, t) or ("f16" in (s, t) and s != t):
                raise Unsupported(f"bitcast {s} to {t}")
            if s == t:
                e = x
            elif t == "f32":
                e = f"rt.bits_f32(np.uint32({x}))" if s == "i32" else f"rt.bits_f32({x})"
            elif s == "f32":
                e = f"rt.f32_bits({x})" if t == "u32" else f"np.int32(rt.f32_bits({x}))"
            else:
                e = f"{_NP[t]}({x})"
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
                raise Unsupported("return with a value")
            self.emit(d, "ret = True")
            self.emit(d, "break")
        elif op == OP.barrier:
            raise Unsupported("barrier inside divergent code")
        else:
            raise Unsupported(op)

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
        self.emit(d, "if ret:")
        self.emit(d + 1, "break")

    def fail(self, d: int, code: int, lane: str = "local"):
        """Stop the whole kernel, saying where (the interpreter takes over from there)."""
        self.emit(d, f"err[0] = {code}")
        self.emit(d, "err[1] = w")
        self.emit(d, f"err[2] = {lane}")
        self.emit(d, "return")

    def lane_var(self, name: str, t) -> str:
        """A value's name: a local, or in workgroup mode its element of a per-lane array."""
        if not self.wg:
            return name
        if t is not None and not (isinstance(t, ScalarType) and t.name in _NP):
            return name                     # a pointer or vector: never held as a value here
        self.decls[name] = "np.int64" if t is None else _NP[t.name]
        return f"{name}[local]"

    # -- workgroup memory: every access checks that no other invocation touched the element
    # since the last barrier (the code between barriers runs invocation after invocation, which
    # matches lockstep only without such conflicts); a conflict hands over to the interpreter
    def wg_access(self, inst: Inst, g: int, d: int):
        r = inst.result
        path = inst.attrs["path"]
        count = self.wmem[g][1]
        if path[0] >= 0:
            if path[0] >= count:
                raise Unsupported("constant index out of range")
            self.vals[r.id] = ("welem", g, f"np.int64({path[0]})")
            return
        iv = self.lane_var(f"i{r.id}", None)
        self.emit(d, f"{iv} = np.int64({self.v(inst.args[1])})")
        self.emit(d, f"if {iv} < 0 or {iv} >= {count}:")
        self.fail(d + 1, ERR_OOB)
        self.vals[r.id] = ("welem", g, iv)

    def wg_load(self, g: int, idx: str, name: str, d: int):
        self.emit(d, f"_i = {idx}")
        self.emit(d, f"_t = wt_{g}[_i]")
        self.emit(d, "if _t >= ep and _t != ep + local:")
        self.fail(d + 1, ERR_FALLBACK)
        self.emit(d, f"_r = rt_{g}[_i]")
        self.emit(d, "if _r < ep:")
        self.emit(d + 1, f"rt_{g}[_i] = ep + local")
        self.emit(d, "elif _r != ep + local:")
        self.emit(d + 1, f"rt_{g}[_i] = ep + 4095")
        self.emit(d, f"{name} = wm_{g}[_i]")

    def wg_store(self, g: int, idx: str, val: str, d: int):
        self.emit(d, f"_i = {idx}")
        self.emit(d, f"_t = wt_{g}[_i]")
        self.emit(d, f"_r = rt_{g}[_i]")
        self.emit(d, "if (_t >= ep and _t != ep + local) or (_r >= ep and _r != ep + local):")
        self.fail(d + 1, ERR_FALLBACK)
        self.emit(d, f"wt_{g}[_i] = ep + local")
        self.emit(d, f"wm_{g}[_i] = {val}")

    # -- workgroup mode: statements that hold a barrier run for the whole workgroup at once;
    # the barrier-free statements between them run as groups, invocation after invocation
    @staticmethod
    def _has_barrier(inst: Inst) -> bool:
        return any(i.op == OP.barrier for i in inst.walk())

    def wg_block(self, block: Block, d: int, wloop, in_body: bool):
        run: list = []
        for inst in block.insts:
            if self._has_barrier(inst):
                if run:
                    self.group(run, d, wloop, in_body)
                    run = []
                if inst.op == OP.barrier:
                    self.emit(d, "_nl = 0")
                    self.emit(d, f"for local in range({self.pipe.layout.wg_count}):")
                    self.emit(d + 1, "_nl += 0 if retd[local] else 1")
                    self.emit(d, f"if _nl != 0 and _nl != {self.pipe.layout.wg_count}:")
                    self.fail(d + 1, ERR_FALLBACK, "0")
                    self.emit(d, "ep += 4096                  # a new barrier interval")
                elif inst.op == OP.if_:
                    self.wg_if(inst, d, wloop, in_body)
                elif inst.op == OP.loop:
                    self.wg_loop(inst, d)
                else:
                    raise Unsupported(f"barrier inside {inst.op}")
            else:
                run.append(inst)
        if run:
            self.group(run, d, wloop, in_body)
        if not block.insts:
            self.emit(d, "pass")

    def group(self, insts, d: int, wloop, in_body: bool):
        n = self.pipe.layout.wg_count
        self.emit(d, f"for local in range({n}):")
        self.emit(d + 1, "if retd[local]:")
        self.emit(d + 2, "continue")
        self.emit(d + 1, "ret = False")
        self.emit(d + 1, "##PRE##")
        self.emit(d + 1, "while True:")
        ctx = ("wg", wloop) if wloop is not None else None
        for inst in insts:
            if inst.op in (OP.break_, OP.continue_, OP.break_if) and ctx is None:
                raise Unsupported(f"{inst.op} outside a loop")
            self.inst(inst, d + 2, ctx)
        self.emit(d + 2, "break")
        self.emit(d + 1, "if ret:")
        self.emit(d + 2, "retd[local] = True")
        if wloop is None:
            return
        # every live invocation must agree on leaving the loop (else the interpreter reports it)
        self.emit(d, "_nl = 0")
        self.emit(d, "_nb = 0")
        self.emit(d, "_nc = 0")
        self.emit(d, f"for local in range({n}):")
        self.emit(d + 1, "if not retd[local]:")
        self.emit(d + 2, "_nl += 1")
        self.emit(d + 2, f"_nb += 1 if wbrk{wloop}[local] else 0")
        self.emit(d + 2, f"_nc += 1 if wcnt{wloop}[local] else 0")
        self.emit(d, "if (_nb != 0 and _nb != _nl) or (_nc != 0 and _nc != _nl):")
        self.fail(d + 1, ERR_FALLBACK, "0")
        self.emit(d, "if _nl == 0 or _nb == _nl:")
        if in_body:
            self.emit(d + 1, f"wexit{wloop} = True")
        self.emit(d + 1, "break")
        if in_body:
            self.emit(d, "if _nc == _nl:")
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
        self.emit(d + 1, f"if brk{n} or ret:")
        self.emit(d + 2, "break")
        # the continuing block: its break_if leaves the outer loop directly
        for i in cont.insts:
            self.inst(i, d + 1, None)
        self.emit(d, "if ret:                         # a return inside the loop")
        self.emit(d + 1, "break")
        self.loop_depth -= 1

    def builtin(self, inst: Inst) -> str:
        """The few numeric builtins with one obvious per-lane form (emu.numerics.builtins)."""
        fn = inst.attrs["fn"]
        t = _scalar(inst.type)
        xs = [self.v(x) for x in inst.args]
        tys = [_scalar(x.type) for x in inst.args]
        if fn == "select" and len(xs) == 3 and tys[0] == tys[1] == t == "f16" and tys[2] == "bool":
            e = f"{xs[1]} if {xs[2]} else {xs[0]}"
            return f"rt.nv_canon_f16({e})" if self.nv else e     # (bits; canonical NaNs there)
        if "f16" in tys + [t]:
            raise Unsupported(f"builtin {fn} on f16")
        if fn == "select" and len(xs) == 3 and tys[0] == tys[1] == t and tys[2] == "bool":
            if self.nv and t == "f32":                  # the builtin canonicalizes NaNs there
                return f"rt.nv_canon({xs[1]} if {xs[2]} else {xs[0]})"
            return f"{xs[1]} if {xs[2]} else {xs[0]}"
        if t in ("i32", "u32") and all(ty == t for ty in tys):
            c = _NP[t]
            if fn == "min" and len(xs) == 2:
                return f"{c}(min({xs[0]}, {xs[1]}))"
            if fn == "max" and len(xs) == 2:
                return f"{c}(max({xs[0]}, {xs[1]}))"
            if fn == "clamp" and len(xs) == 3:
                return f"{c}(min(max({xs[0]}, {xs[1]}), {xs[2]}))"
            if fn == "abs" and len(xs) == 1:
                return xs[0] if t == "u32" else f"np.int32(abs(np.int64({xs[0]})))"
        if fn == "abs" and t == "f32" and len(xs) == 1:
            return f"rt.nv_abs({xs[0]})" if self.nv else f"rt.bits_f32(rt.f32_bits({xs[0]}) & np.uint32(0x7FFFFFFF))"
        if fn == "inverseSqrt" and t == "f32" and len(xs) == 1 and self.nv:     # MUFU.RSQ: its table
            self.rsq = True
            return f"rt.nv_rsq({xs[0]}, rsq_tab)"
        if fn == "fma" and t == "f32" and len(xs) == 3 and tys == ["f32"] * 3:
            return f"rt.{'nv_fma' if self.nv else 'fma_f32'}({xs[0]}, {xs[1]}, {xs[2]})"
        raise Unsupported(f"builtin {fn} on {t}")

    def literal(self, t: str, value) -> str:
        if t == "bool":
            return "True" if value else "False"
        if t == "f32":
            f = float(np.float32(value))
            if not math.isfinite(f):
                raise Unsupported("non-finite constant")
            return f"np.float32({f!r})"
        if t == "f16":
            return f"np.uint16({int(np.array(value, np.float16).view(np.uint16))})"
        v = int(value)
        if t == "u32":
            return f"np.uint32({v & 0xFFFFFFFF})"
        return f"np.int32({v})"

    def input(self, name: str, t):
        if name not in _INPUTS:
            raise Unsupported(f"input {name}")
        self.inputs.add(name)
        if isinstance(t, VectorType):
            return ("vec", [f"in_{name}_{i}" for i in range(t.n)])
        return f"in_{name}"

    def unary(self, fn: str, t: str, x: str) -> str:
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
        if t == "f16":
            self._no(fn, t)
        cmp = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
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
        c = _NP[t]
        ops = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^"}
        if fn in ops:
            return f"{c}(np.int64({x}) {ops[fn]} np.int64({y}))"
        if fn in ("div", "rem"):
            return f"rt.{fn}_{t}({x}, {y})"
        if fn == "shl":
            return f"{c}(np.int64({x}) << (np.int64({y}) & 31))"
        if fn == "shr":
            return f"{c}(np.int64({x}) >> (np.int64({y}) & 31))"
        self._no(fn, t)

    def convert(self, x: str, s: str, t: str, native=False) -> str:
        if s == t:
            return x
        if "f16" in (s, t):                           # only f16 <-> f32 (both rules: numerics.scalar's and nvidia's)
            if {s, t} != {"f16", "f32"}:
                raise Unsupported(f"conversion {s} to {t}")
            return f"rt.{'nv_' if self.nv else ''}{s}_to_{t}({x})"
        if t == "bool":
            return f"({x} != 0)"
        if s == "bool":
            return {"f32": f"np.float32(1.0 if {x} else 0.0)"}.get(t, f"{_NP[t]}(1 if {x} else 0)")
        if s == "f32" and self.nv and native:         # SPIR-V's: saturating, NaN -> 0
            return f"rt.nv_native_f32_to_{t}({x})"
        if s == "f32":
            return f"rt.nv_f32_to_i32({x})" if self.nv and t == "i32" else f"rt.f32_to_{t}({x})"
        if t == "f32":
            return f"np.float32({x})"
        return f"{_NP[t]}(np.int64({x}))"            # i32 <-> u32: the bits

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
    IMPORTS = ["import numpy as np", "from numba import njit", "from emu.numerics import scalar_compiled as rt"]

    def driver(self, params: str, body: list, setup=(), per_workgroup=(), unit=None) -> list:
        """The one loop every generated kernel runs, `run(w0, w1, ...)`: `setup` once, then for each
        workgroup w0..w1 its builtin inputs and `per_workgroup`, then `body` (lines generated at
        depth 2) once per unit. `unit`: (loop variable, count, its first lines, what it is): an
        invocation (the fusion JIT) or a subgroup (the cooperative kernel), each with its own step
        count, return flag and builtin inputs, the body inside a one-shot `while True` that
        `return` and `break` leave; None (workgroup mode): the body runs the workgroup's invocations itself,
        their builtin inputs where it says ##PRE##."""
        wgpre, pre = self.prelude()
        out = ["@njit(cache=True, nogil=True, error_model='numpy')", f"def run({params}):"]
        out += ["    " + x for x in setup]
        out += ["    for w in range(w0, w1):"]
        out += ["        " + x for x in list(wgpre) + list(per_workgroup)]
        if unit is None:
            for line in body:
                if line.strip() == "##PRE##":
                    ind = line[:len(line) - len(line.lstrip())]
                    out += ["        " + ind + x for x in pre]
                else:
                    out.append("        " + line)
            return out + [""]
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
        if any(i.op == OP.barrier and i.attrs["kind"] == "subgroup" for i in fn.walk()):
            raise Unsupported("subgroupBarrier (the interpreter checks it per subgroup)")
        for i, bname in fn.param_builtins.items():
            self.vals[fn.params[i].id] = self.input(bname, fn.params[i].type)
        body_start = len(self.lines)
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
                         + ["rsq_tab"] * self.rsq)
        stored = [k for k in range(len(self.buf_types)) if self.stores[k]]
        self.stored_slots = stored
        sas = "".join(f", sa{k}" for k in stored) + "".join(f", own{k}" for k in self.guarded)
        sas += ", oep" if self.guarded else ""
        tail = f"{sas}{', ' + bufs if bufs else ''}"
        nwg = self.pipe.layout.wg_count
        out = self.IMPORTS + ["", ""]
        params = f"w0, w1, wbase, gx, gy, gz, max_steps, err, rec{tail}"
        if not self.wg:
            return "\n".join(out + self.driver(params, body, unit=("local", nwg, (), "invocation")))
        decl = [f"{k} = np.zeros({nwg}, {t})" for k, t in sorted(self.decls.items())]
        decl += [f"retd = np.zeros({nwg}, np.bool_)", f"stp = np.zeros({nwg}, np.int64)"]
        for g, (t, cnt) in self.wmem.items():
            decl += [f"wm_{g} = np.zeros({cnt}, {t})", f"wt_{g} = np.zeros({cnt}, np.int64)",
                     f"rt_{g} = np.zeros({cnt}, np.int64)"]
        per_wg = [f"wm_{g}[:] = 0" for g in self.wmem] + ["retd[:] = False", "stp[:] = 0", "wsteps = 0",
                                                   "ep += 4096"]
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
           "numerics/mma_call.py", "jit/coop_tiles.py")


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


def aliased(datas, stored) -> bool:
    """Whether a written buffer shares memory with another bound one (a buffer bound twice): the
    order of invocations (or subgroups) would show; the interpreter runs such dispatches."""
    return any(np.shares_memory(datas[i], datas[j])
               for i in range(len(datas)) if stored[i] for j in range(len(datas)) if j != i)


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
                return 0
            args += [got[0], np.int64(got[1])]
            datas.append(got[0])
        from ..numerics import sfu
        args += [sfu.table(t) for t, used in (("rcp", self.rcp), ("rsq", self.rsq)) if used]
        if any(self.stored) and aliased(datas, self.stored):
            return 0
        # run serially: rec False, one unused store address array per written buffer (rec a bool
        # from here, as from _parallel_run: one compiled run serves both)
        dummies = [np.empty(1, np.int64) for _ in self.stored_slots]
        gx, gy, gz = grid
        lo, end = workgroups if workgroups is not None else (0, gx * gy * gz)
        owners = self.owners([int(args[2 * k + 1]) for k in self.guarded], end * self.pipe.layout.wg_count)
        if owners is None:
            return lo
        if not first_use(self, lambda mod: mod.run(0, 0, 0, 1, 1, 1, self.pipe.opts.max_steps,
                                                   np.zeros(3, np.int64), False, *dummies, *owners, *args)):
            return 0
        total = end - lo
        lanes = total * self.pipe.layout.wg_count
        jobs = int(getattr(self.pipe.opts, "jobs", 1) or 1)
        if jobs > 1 and self.has_loops and not self.guarded and total >= 2 and lanes >= 4096:
            if self._parallel(lo, total, lanes, jobs, grid, args):
                return None
        err = np.zeros(3, np.int64)
        self.mod.run(lo, end, lo, gx, gy, gz, self.pipe.opts.max_steps, err, False, *dummies, *owners, *args)
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
    sas = [np.full(lanes, -1, np.int64) for _ in self.stored_slots]
    gx, gy, gz = grid

    def chunk(c0, c1):
        for c in range(c0, c1):
            a, z = lo + total * c // chunks, lo + total * (c + 1) // chunks
            self.mod.run(a, z, lo, gx, gy, gz, self.pipe.opts.max_steps, errs[c], True, *sas, *args)
    run_chunks(chunk, chunks, jobs)
    if errs[:, 0].any():
        return False
    for sa, k in zip(sas, self.stored_slots):
        if rt.collides(sa, int(args[2 * k + 1])):
            return False
    return True


Kernel._parallel = _parallel_run


def compile_pipeline(pipe) -> Kernel | None:
    """The pipeline's entry point as a Kernel, or None when the interpreter must run it."""
    if pipe.opts.tracer is not None or os.environ.get("EMU_JIT", "1") == "0":
        return None
    if getattr(pipe.profile, "scalar", "ieee") not in SCALAR_MODELS:
        return None         # a scalar model the generated code does not know: the interpreter
    try:
        gen = _Gen(pipe)
        source = gen.build()
    except Unsupported as e:
        declined(pipe, "the fusion JIT", e)
        return None
    return Kernel(pipe, gen, source)


def declined(pipe, who: str, why) -> None:
    """With EMU_JIT_WHY=1, say on stderr why a compiled path left an entry point to the interpreter."""
    if os.environ.get("EMU_JIT_WHY", "0") != "0":
        print(f"emu JIT: {pipe.entry.name}: {who} declined it: {why}", file=sys.stderr)
