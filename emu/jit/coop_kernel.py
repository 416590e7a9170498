"""Cooperative kernels compiled whole: an entry point whose every value is the same in all lanes of
a subgroup (address arithmetic, loop counters, tile positions from workgroup_id and subgroup_id)
becomes one numba kernel that runs each subgroup to its end, its scalars as scalars and its
cooperative matrices as whole matrices of raw bits: loads gather straight from storage, the K loop
runs compiled, each multiply-add is emu/numerics/mma_tile.py's vector code (the common case) or
mma_fast's kernel on one subgroup (tile_mma), stores scatter straight to storage. A subgroup those
leave (a zero or subnormal result, an infinity, NaN or overflow) calls emu/numerics/mma_call.py's
kernel, which covers every case, by its address. Nothing returns to Python per instruction.

It shares the fusion JIT's code generator (emu/jit/fuse.py): _Gen emits the scalar code and the one
loop every generated kernel runs (_Gen.driver: workgroups, then units of a workgroup, each to its
end); this subclass adds the cooperative ops and makes the unit a subgroup, not an invocation. Since every value is
subgroup-uniform, every lane of a subgroup would compute the same scalars, and a matrix held whole
is the same as its fragments under any lane map (no op here exposes a fragment).

Workgroup mode (a kernel with workgroup memory or barriers: tiles of A and B staged through
var<workgroup> / shared memory, as real GEMMs are written): the fusion JIT's workgroup mode runs
the code, a workgroup's invocations one after another between barriers (the statements holding
a barrier for the whole workgroup at once), every value per lane, workgroup memory a
per-workgroup array whose every access is checked against the others since the last barrier.
A matrix op runs once per subgroup, in its first invocation's turn, on that subgroup's matrices:
exact when every invocation of the subgroup would reach it together with the same operands,
which _Uniformity proves from the IR (else: None). A cooperative load or store of workgroup
memory is checked element by element as the subgroup's access (coop_tiles.wg_tile), so a lane
touching an element a matrix op of its own or another subgroup touched in the same barrier
interval (a race, or an order lane by lane would get wrong) hands the dispatch back. Scalar
stores to buffers are logged with the matrix stores: an element stored by two invocations (or
an invocation and a subgroup) hands it back. 16- and 8-bit scalars move as bits (loads and
stores only).

Taken only when: no subgroup ops (subgroupBarrier() is taken, as the fusion JIT takes it); outside workgroup mode the builtins read are workgroup_id,
num_workgroups, subgroup_id, subgroup_size and num_subgroups, and no scalar stores; workgroups
are whole subgroups; every buffer is either read or written, never both; matrices live in function
variables or values; cooperative loads and stores take a whole buffer (an array of the matrix's
element size); the multiply-adds are float models that mma_fast covers, of a configuration's
shape or of flexible dimensions at subgroup scope (VK_NV_cooperative_matrix2: K steps of a
configuration, each over C's tiles of its size). Anything else: None, and
the interpreter (or the fusion JIT) runs it.

Order. The interpreter runs all subgroups in lockstep; here a subgroup runs to its end before the
next starts. That gives the same memory because reads see only buffers no one writes, and the
stores of different subgroups must not meet: every store is logged (site, subgroup, offset,
stride) and, after the run, the logs are checked for an element stored by two subgroups.

Anything unusual hands the whole dispatch back: an access not wholly inside its buffer or with a
stride shorter than a row, a step count past --max-steps, two subgroups storing one element. The
written buffers are copied before the run and restored, and the interpreter runs the dispatch from
its start: its bits, its errors and its reports, since it is the reference. (The first subgroup
that needs mma_call's kernel also restores them: the kernel is loaded and the range runs again.)

Kernel.run(grid, regions, (first, end)) runs that range of workgroups (emu/cluster's shards) in
chunks on --jobs threads; the generated `run(w0, w1, ...)` runs any range of workgroups.
"""
from __future__ import annotations

import numpy as np
from ..isa.ops import OP
from ..isa.types import ArrayType, CoopMatrixType, ScalarType, contains
from ..numerics import mma as nmma, mma_params
from . import native
from .fuse import _NP, ERR_FALLBACK, ERR_OOB, declined, SCALAR_MODELS, Unsupported, _Gen, _cache_dir, _stamp, aliased, first_use, pending_tier

_UINT = {1: "np.uint8", 2: "np.uint16", 4: "np.uint32"}
_UINT_NP = {1: np.uint8, 2: np.uint16, 4: np.uint32}
_UNIFORM = frozenset({"workgroup_id", "num_workgroups", "subgroup_id", "subgroup_size", "num_subgroups"})
_TYPED = ("i32", "u32", "f32")
# Below this many subgroups in a dispatch the interpreter runs it: loading a compiled kernel from
# numba's cache (~0.1-0.2 s) or compiling one (seconds) costs more than interpreting a few subgroups
MIN_SUBGROUPS = 64
LANE_AGENT = 1 << 40    # a scalar store's agent in the store log: past every subgroup's number
ERR_LOG = 4             # the store log is full: the range runs again with a larger one
LOG_COLS = 7            # a logged store: owner base, subgroup, offset, stride, rows, cols, column-major
ERR_SPECIAL = 3         # a subgroup needs mma_call's kernel, not loaded yet: load it and run again


def _raw(t) -> str | None:
    """The unsigned type that holds a scalar the generated code moves only as bits (f16, bf16,
    8-bit integers), or None."""
    if isinstance(t, ScalarType) and t.name not in _NP and t.size in (1, 2):
        return _UINT[t.size]
    return None


def _matrixy(inst) -> bool:
    """Whether an instruction makes or moves a cooperative matrix (a subgroup's, as a whole)."""
    if inst.op.startswith("coop_"):
        return True
    if inst.op == OP.var:
        return contains(inst.type.pointee, CoopMatrixType)
    t = inst.args[1].type if inst.op == OP.store else inst.type
    return isinstance(t, CoopMatrixType)


class _Uniformity:
    """Which values are the same in every invocation of a subgroup, and which instructions run
    with all of a subgroup's invocations together (subgroup-uniform control flow), found from the
    IR alone: the inputs of _UNIFORM, constants and overrides, what is computed from those, loads
    through uniform pointers (of buffers the kernel never writes, of workgroup memory whose
    accesses are checked, of function variables every store of which is uniform in uniform
    control flow). A branch or loop on a value that is not uniform, or one that some invocations
    leave by break, continue or return under such a branch, is not uniform control flow; after
    it the subgroup runs together again unless a return left it. local_invocation_index divided
    by a multiple of the subgroup size (wgpu's dialect has no subgroup_id) is uniform too."""

    def __init__(self, fn, sg: int, overrides: dict):
        self.bad_vars: set[int] = set()
        self.sg, self.overrides = sg, overrides
        while True:
            self.vals: set[int] = {p.id for i, p in enumerate(fn.params)
                                   if fn.param_builtins.get(i) in _UNIFORM}
            self.index = {p.id for i, p in enumerate(fn.params)
                          if fn.param_builtins.get(i) == "local_invocation_index"}
            self.ints: dict[int, int] = {}
            self.base: dict[int, int] = {}      # a pointer into a function variable -> the variable
            self.ctx: set[int] = set()
            self.vars: set[int] = set()
            self.split_return = False
            before = len(self.bad_vars)
            self.block(fn.body, True, [])
            if len(self.bad_vars) == before:
                break

    def block(self, block, uni: bool, exits: list) -> bool:
        for inst in block.insts:
            uni = self.inst(inst, uni, exits)
        return uni

    def u(self, v) -> bool:
        return v.id in self.vals

    def inst(self, inst, uni: bool, exits: list) -> bool:
        op, a = inst.op, inst.args
        if uni and not self.split_return:
            self.ctx.add(id(inst))
        if op == OP.if_:
            cu = uni and self.u(a[0])
            inner: list = []
            ea = self.block(inst.blocks[0], cu, inner)
            eb = self.block(inst.blocks[1], cu, inner)
            exits += inner
            if cu:
                return ea and eb
            if inner:                   # some invocations left the loop (or returned): split
                exits.append(False)
                return False
            return uni
        if op == OP.loop:
            inner = []
            body, cont = inst.blocks
            ctx = set(self.ctx)
            self.block(cont, self.block(body, uni, inner), inner)
            if uni and not all(inner):  # a split exit: the loop's iterations are not uniform
                self.ctx = ctx
                self.block(cont, self.block(body, False, []), [])
            return uni
        if op in (OP.break_, OP.continue_):
            exits.append(uni)
            return uni
        if op == OP.break_if:
            exits.append(uni and self.u(a[0]))
            return uni
        if op == OP.return_:
            if not uni:
                self.split_return = True
            exits.append(uni)
            return uni
        if op == OP.store:
            if self.base.get(a[0].id, a[0].id) in self.vars and not (uni and (self.u(a[1]) or _matrixy(inst))):
                self.bad_vars.add(self.base.get(a[0].id, a[0].id))
            return uni
        r = inst.result
        if r is None:
            return uni
        if op == OP.input:
            ok = inst.attrs["builtin"] in _UNIFORM
            if inst.attrs["builtin"] == "local_invocation_index":
                self.index.add(r.id)
        elif op in (OP.const, OP.override) and isinstance(inst.type, ScalarType) and inst.type.name in ("i32", "u32"):
            ok = True
            v = inst.attrs["value"] if op == OP.const else self.overrides[inst.attrs["name"]]
            self.ints[r.id] = int(v)
        elif op == OP.binary and a[0].id in self.index and a[1].id in self.ints:
            c, fn = self.ints[a[1].id], inst.attrs["fn"]
            ok = (fn == "div" and c > 0 and c % self.sg == 0) or (fn == "shr" and 0 <= c < 32 and (1 << c) % self.sg == 0)
        elif op == OP.var:
            self.vars.add(r.id)
            if a and not (self.u(a[0]) or _matrixy(inst)):
                self.bad_vars.add(r.id)
            ok = True
        elif op == OP.load:
            ok = self.u(a[0]) and self.base.get(a[0].id, a[0].id) not in self.bad_vars
        elif op in (OP.const, OP.override, OP.global_, OP.array_length, OP.coop_length):
            ok = True
        elif op == OP.access and self.base.get(a[0].id, a[0].id) in self.vars:
            self.base[r.id] = self.base.get(a[0].id, a[0].id)
            ok = all(self.u(x) for x in a)
        elif op in (OP.access, OP.extract, OP.unary, OP.binary, OP.select, OP.convert, OP.bitcast,
                    OP.builtin):
            ok = all(self.u(x) for x in a)
        else:
            ok = _matrixy(inst)
        if ok:
            self.vals.add(r.id)
        return uni


class _CoopGen(_Gen):
    """_Gen with one invocation per subgroup and the cooperative ops."""

    def __init__(self, pipe):
        super().__init__(pipe)
        sg = self.sg = pipe.opts.subgroup_size
        if pipe.layout.wg_count % sg:
            raise Unsupported("a workgroup of part of a subgroup")
        self.nsub = pipe.layout.wg_count // sg
        self.smats: dict[str, tuple] = {}       # per-subgroup matrices (workgroup mode)
        self.marrs: dict[str, tuple] = {}       # arrays of matrices: name -> (dtype, count, rows, cols)
        self.wsize: dict[int, int] = {}         # workgroup variable's slot -> element bytes
        self.scalar_stores = False
        if self.wg:
            # workgroup mode (fuse.py): invocation by invocation between barriers, every value
            # per lane; a matrix op runs once per subgroup, in its first invocation's turn, on
            # that subgroup's matrices, which needs it in uniform control flow with uniform operands
            if pipe.layout.wg_count + self.nsub >= 4095:
                raise Unsupported("a workgroup too large for the access tags")
            self.uni = _Uniformity(pipe.entry, sg, pipe.overrides)
            self.gid = f"(w * {self.nsub} + local // {sg})"
        else:
            self.gid = "gid"
        self.mats: dict[str, tuple] = {}        # matrix array name -> (dtype, rows, cols)
        self.mmas: dict[tuple, int] = {}        # (M, N, K, model, in, c, result) -> slot
        self.prms: list = []
        self.wide: list = []
        self.tile16: list = []
        self.mma_bits: list = []                # (operand bits, C's bits) per slot, for mma_call
        self.mma_shapes: list = []              # (M, N, K) per slot: the configuration's
        self.flex = False                       # a multiply-add of flexible dimensions (in tiles)
        self.ovs: list[str] = []                # integer overrides, passed at run time
        self.ncoop = 0
        self.coop_slots: set[int] = set()       # buffers a cooperative op touches

    def input(self, name, t):
        if name not in _UNIFORM and not self.wg:
            raise Unsupported(f"input {name} differs between lanes")
        return super().input(name, t)

    def slot_elem(self, g, t, offset: int) -> ScalarType:
        elem = t.elem if isinstance(t, ArrayType) else t
        if (not isinstance(elem, ScalarType) or elem.size not in _UINT
                or (isinstance(t, ArrayType) and t.stride != elem.size)):
            raise Unsupported(f"buffer {g.name} of {t}")
        return elem

    def mat(self, name: str, t: CoopMatrixType) -> str:
        if t.elem.size not in _UINT:
            raise Unsupported(f"matrix of {t.elem}")
        if self.wg:
            self.smats[name] = (_UINT[t.elem.size], t.rows, t.cols)
            return f"{name}[local // {self.sg}]"
        self.mats[name] = (_UINT[t.elem.size], t.rows, t.cols)
        return name

    def lane_var(self, name: str, t) -> str:
        raw = _raw(t)
        if raw is None or not self.wg:
            return super().lane_var(name, t)
        self.decls[name] = raw
        return f"{name}[local]"

    def m(self, value) -> str:
        e = self.vals.get(value.id)
        if not (isinstance(e, tuple) and e[0] == "mat"):
            raise Unsupported(f"value %{value.id} as a matrix")
        return e[1]

    def tile(self, inst, ptr_val, t: CoopMatrixType):
        """(slot, column-major, the pointer's element) of a cooperative access of a buffer's array
        or of the array from one of its elements on (&a[i], wgpu's form); of workgroup memory:
        (("w", its slot), ...)."""
        p = self.vals.get(ptr_val.id)
        if isinstance(p, tuple) and p[0] in ("warr", "welem"):
            g = p[1]
            if self.wsize[g] != t.elem.size:
                raise Unsupported("cooperative access of workgroup memory of another element size")
            layout = inst.attrs["layout"]
            if layout not in ("row_major", "col_major"):
                raise Unsupported(f"layout {layout}")
            self.ncoop += 1
            return ("w", g), layout == "col_major", ("np.int64(0)" if p[0] == "warr" else p[2])
        if not (isinstance(p, tuple) and (p[0] == "arr" or (p[0] == "elem" and isinstance(p[1], int)))):
            raise Unsupported("cooperative access through a pointer other than into a buffer's array")
        k = p[1]
        if p[0] == "elem" and not isinstance(self.buf_types[k].t, ArrayType):
            raise Unsupported("cooperative access of a scalar buffer")
        if self.buf_types[k].elem.size != t.elem.size:
            raise Unsupported("cooperative access of an array of another element size")
        layout = inst.attrs["layout"]
        if layout not in ("row_major", "col_major"):
            raise Unsupported(f"layout {layout}")
        self.coop_slots.add(k)
        self.ncoop += 1
        return k, layout == "col_major", ("np.int64(0)" if p[0] == "arr" else p[2])

    def wg_tile(self, ptr_val) -> bool:
        p = self.vals.get(ptr_val.id)
        return isinstance(p, tuple) and p[0] in ("warr", "welem")

    def tile_tags(self) -> str:
        """ck_wtile's tag arguments: the interval's start and current tag base (fuse._Gen.sg_tags),
        the subgroup's agent, the subgroup size and the workgroup's invocations."""
        wgc = self.pipe.layout.wg_count
        return f"{'ib' if self.sgbar else 'ep'}, ep, {wgc} + local // {self.sg}, {self.sg}, {wgc}"

    def wview(self, g: int) -> str:
        """Workgroup variable g as raw bits of its element size (a matrix's form)."""
        dt, _ = self.wmem[g]
        raw = _UINT[self.wsize[g]]
        return f"wm_{g}" if dt == raw else f"wm_{g}.view({raw})"

    def inst(self, inst, d: int, loop_ctx):
        op, r, a = inst.op, inst.result, inst.args
        t = inst.type
        if self.wg and _matrixy(inst) and op != OP.coop_length:
            if id(inst) not in self.uni.ctx:
                raise Unsupported("a cooperative op in control flow that is not subgroup-uniform")
            if any(not isinstance(x.type, CoopMatrixType) and x.id not in self.uni.vals for x in a):
                raise Unsupported("an operand of a cooperative op that may differ between lanes")
            self.emit(d, f"if local % {self.sg} == 0:      # once per subgroup, for all its lanes")
            d += 1
        elif self.wg and op == OP.global_ and self.module.global_(inst.attrs["name"]).space == "workgroup":
            g = self.module.global_(inst.attrs["name"])
            elem = g.type.elem if isinstance(g.type, ArrayType) else g.type
            raw = _raw(elem)
            if raw is not None and (not isinstance(g.type, ArrayType) or g.type.count is not None):
                slot = self.wslots.setdefault(g.name, len(self.wslots))
                self.wmem[slot] = (raw, g.type.count if isinstance(g.type, ArrayType) else 1)
                self.vals[r.id] = ("warr", slot) if isinstance(g.type, ArrayType) else ("welem", slot, "np.int64(0)")
                self.wsize[slot] = elem.size
                return
            super().inst(inst, d, loop_ctx)
            if g.name not in self.wslots:       # structs: a slot per member (fuse._Gen.wg_members)
                raise Unsupported(f"workgroup variable {g.name} of {g.type} with cooperative ops")
            self.wsize[self.wslots[g.name]] = elem.size
            return
        elif self.wg and op in (OP.load, OP.store):
            p = self.vals.get(a[0].id)
            vt = t if op == OP.load else a[1].type
            if isinstance(p, tuple) and p[0] == "elem" and op == OP.store:
                # a scalar store to a buffer: logged, so that two invocations storing one element
                # (whose order would show) hand the dispatch back
                k = p[1]
                self.scalar_stores = True
                self.stores[k].append(self.loop_depth)
                self.emit(d, f"b{k}[{p[2]}] = {self.v(a[1])}")
                self.emit(d, f"if not ck_log(slog, nlog, obase{k}, {LANE_AGENT} + w * "
                             f"{self.pipe.layout.wg_count} + local, {p[2]}):")
                self.fail(d + 1, ERR_LOG)
                return
            if _raw(vt) is not None and isinstance(p, tuple) and p[0] in ("elem", "welem"):
                # a 16- or 8-bit scalar moved as its bits, between buffers and workgroup memory
                if op == OP.load:
                    name = self.lane_var(f"v{r.id}", t)
                    if p[0] == "welem":
                        self.wg_load(p[1], p[2], name, d)
                    else:
                        self.loads[p[1]] += 1
                        self.emit(d, f"{name} = b{p[1]}[{p[2]}]")
                    self.vals[r.id] = name
                else:
                    self.wg_store(p[1], p[2], self.v(a[1]), d)
                return
        held = self.vals.get(a[0].id) if a else None
        if op == OP.var and isinstance(t.pointee, ArrayType) and contains(t.pointee, CoopMatrixType):
            # an array of matrices (nested arrays flattened, row-major): zeroed, as WGSL's var
            dims, et = [], t.pointee
            while isinstance(et, ArrayType):
                if et.count is None:
                    raise Unsupported("a runtime-sized array of matrices")
                dims.append(et.count)
                et = et.elem
            if a or not isinstance(et, CoopMatrixType) or et.elem.size not in _UINT:
                raise Unsupported(f"variable of {t.pointee}")
            name = f"m{r.id}"
            self.marrs[name] = (_UINT[et.elem.size], int(np.prod(dims)), et.rows, et.cols)
            self.emit(d, f"{name}[local // {self.sg}][:] = 0" if self.wg else f"{name}[:] = 0")
            self.vals[r.id] = ("marr", name, dims)
        elif op == OP.access and isinstance(held, tuple) and held[0] == "marr":
            _, name, dims = held
            path = inst.attrs["path"]
            if len(path) != len(dims):
                raise Unsupported("a part of an array of matrices")
            flat = self.lane_var(f"i{r.id}", None)
            dyn = iter(a[1:])
            parts = []
            for n, step in zip(dims, path):
                parts.append((n, str(step) if step >= 0 else f"np.int64({self.v(next(dyn))})"))
            expr = "np.int64(0)"
            for n, x in parts:
                expr = f"({expr}) * {n} + {x}"
            self.emit(d, f"{flat} = {expr}")
            for n, x in parts:
                if not x.isdigit():
                    self.emit(d, f"if {x} < 0 or {x} >= {n}:")
                    self.fail(d + 1, ERR_FALLBACK)
            at = f"{name}[local // {self.sg}, {flat}]" if self.wg else f"{name}[0, {flat}]"
            self.vals[r.id] = ("mvar", at)
        elif op == OP.var and isinstance(t.pointee, CoopMatrixType):
            name = self.mat(f"m{r.id}", t.pointee)
            self.emit(d, f"{name}[:] = 0" if not a else f"ck_copy({name}, {self.m(a[0])})")
            self.vals[r.id] = ("mvar", name)
        elif op == OP.load and isinstance(held, tuple) and held[0] == "mvar":
            name = self.mat(f"c{r.id}", t)
            self.emit(d, f"ck_copy({name}, {held[1]})")
            self.vals[r.id] = ("mat", name)
        elif op == OP.store and isinstance(held, tuple) and held[0] == "mvar":
            self.emit(d, f"ck_copy({held[1]}, {self.m(a[1])})")
        elif op == OP.store and isinstance(held, tuple) and held[0] == "elem":
            raise Unsupported("a store of a scalar to a buffer")
        elif op == OP.override and t.name in ("i32", "u32"):
            # an argument, not baked in: one compiled kernel serves every size of a shader
            name = inst.attrs["name"]
            if name not in self.ovs:
                self.ovs.append(name)
            v = self.lane_var(f"v{r.id}", t)     # (per lane in workgroup mode, as every value: groups may be functions)
            self.emit(d, f"{v} = {_NP[t.name]}(ovs[{self.ovs.index(name)}])")
            self.vals[r.id] = v
        elif op == OP.const and isinstance(t, ScalarType) and t.name == "f16":
            # only a fill uses it: its bits, as the interpreter's constant holds them
            self.vals[r.id] = ("bits", int(np.array(inst.attrs["value"], np.float16).view(np.uint16)))
        elif op == OP.coop_fill:
            name = self.mat(f"c{r.id}", t)
            src = a[0].type
            if isinstance(held, tuple) and held[0] == "bits" and src.name == t.elem.name:
                bits = str(held[1])
            elif isinstance(src, ScalarType) and src.name == t.elem.name and src.name in _TYPED:
                bits = {"f32": f"rt.f32_bits({self.v(a[0])})"}.get(src.name, f"np.uint32({self.v(a[0])})")
            else:
                raise Unsupported(f"fill with {src}")
            self.emit(d, f"{name}[:] = {bits}")
            self.vals[r.id] = ("mat", name)
        elif op == OP.coop_load and self.wg_tile(a[0]):
            (_, g), col, at = self.tile(inst, a[0], t)
            name = self.mat(f"c{r.id}", t)
            off, st, n = f"{at} + np.int64({self.v(a[1])})", f"np.int64({self.v(a[2])})", self.wmem[g][1]
            self.emit(d, f"if not (ck_wtile(wt_{g}, rt_{g}, {n}, {off}, {st}, {col}, {t.rows}, {t.cols}, "
                         f"{self.tile_tags()}, False) and "
                         f"ck_load({self.wview(g)}, {n}, {off}, {st}, {col}, {name})):")
            self.fail(d + 1, ERR_FALLBACK)
            self.vals[r.id] = ("mat", name)
        elif op == OP.coop_store and self.wg_tile(a[0]):
            (_, g), col, at = self.tile(inst, a[0], a[2].type)
            mt = a[2].type
            off, st, n = f"{at} + np.int64({self.v(a[1])})", f"np.int64({self.v(a[3])})", self.wmem[g][1]
            self.emit(d, f"if not ck_wtile(wt_{g}, rt_{g}, {n}, {off}, {st}, {col}, {mt.rows}, {mt.cols}, "
                         f"{self.tile_tags()}, True):")
            self.fail(d + 1, ERR_FALLBACK)
            self.emit(d, f"ck_wput({self.wview(g)}, {off}, {st}, {col}, {self.m(a[2])})")
        elif op == OP.coop_load:
            k, col, at = self.tile(inst, a[0], t)
            name = self.mat(f"c{r.id}", t)
            self.loads[k] += 1
            self.emit(d, f"if not ck_load(u{k}, nb{k}, {at} + np.int64({self.v(a[1])}), np.int64({self.v(a[2])}), "
                         f"{col}, {name}):")
            self.fail(d + 1, ERR_FALLBACK)
            self.vals[r.id] = ("mat", name)
        elif op == OP.coop_store:
            k, col, at = self.tile(inst, a[0], a[2].type)
            self.stores[k].append(self.loop_depth)
            self.emit(d, f"if not ck_store(u{k}, nb{k}, {at} + np.int64({self.v(a[1])}), np.int64({self.v(a[3])}), "
                         f"{col}, {self.m(a[2])}, slog, nlog, obase{k}, {self.gid}):")
            self.fail(d + 1, ERR_FALLBACK)
        elif op == OP.coop_mma:
            if inst.attrs.get("saturate"):
                raise Unsupported("saturating multiply-add")
            s = self.mma_slot(*(x.type for x in a), t)
            name = self.mat(f"c{r.id}", t)
            M, N, K = self.mma_shapes[s]
            A, B, C = (self.m(x) for x in a)
            if (M, N, K) == (a[0].type.rows, t.cols, a[0].type.cols):
                self.mma_tile(d, s, f"{A}, {B}, {C}, {name}")
            else:
                # flexible dimensions (VK_NV_cooperative_matrix2): K steps of the configuration's
                # K in order, each over C's tiles of the configuration's size, as the interpreter's
                # _flexible_mma runs them (an element's bits depend only on its row of A, column
                # of B and element of C)
                self.flex = True
                for x, rows, cols, et in (("fa", M, K, a[0].type.elem), ("fb", K, N, a[1].type.elem),
                                          ("fc", M, N, t.elem), ("fd", M, N, t.elem)):
                    self.mats[f"{x}{r.id}"] = (_UINT[et.size], rows, cols)
                q, i, j = (f"{x}{r.id}" for x in ("q", "ti", "tj"))
                self.emit(d, f"ck_copy({name}, {C})")
                self.emit(d, f"for {q} in range({a[0].type.cols // K}):")
                self.emit(d + 1, f"for {i} in range({t.rows // M}):")
                self.emit(d + 2, f"for {j} in range({t.cols // N}):")
                e = d + 3
                self.emit(e, f"ck_part(fa{r.id}, {A}, {i} * {M}, {q} * {K})")
                self.emit(e, f"ck_part(fb{r.id}, {B}, {q} * {K}, {j} * {N})")
                self.emit(e, f"ck_part(fc{r.id}, {name}, {i} * {M}, {j} * {N})")
                self.mma_tile(e, s, f"fa{r.id}, fb{r.id}, fc{r.id}, fd{r.id}")
                self.emit(e, f"ck_put({name}, fd{r.id}, {i} * {M}, {j} * {N})")
            self.vals[r.id] = ("mat", name)
        elif op == OP.coop_length:
            if self.pipe.profile.is_flexible(inst.attrs["matrix"]):
                raise Unsupported("the length of a matrix of flexible dimensions (the interpreter refuses it)")
            n = self.pipe.profile.matrix_lane_map(inst.attrs["matrix"], self.pipe.opts.subgroup_size)
            v = self.lane_var(f"v{r.id}", inst.type)
            self.emit(d, f"{v} = np.uint32({int(n.rows_idx.shape[1])})")
            self.vals[r.id] = v
        else:
            super().inst(inst, d, loop_ctx)

    def mma_tile(self, d: int, s: int, ops: str):
        """One multiply-add of slot s's shape, `ops` naming A, B, C and the result: the common case
        in vector registers (tile16), else mma_fast's kernel; a subgroup they leave (zeros,
        subnormal results, infinities, NaNs) goes to mma_call's kernel, compiled once for all
        shaders and called by its address (0 until a run needs it). (f16 results: what tile16
        leaves, subnormals mostly in f16's range, goes to mma_fast's kernel first, as it did before
        tile16 covered them.)"""
        e = d
        if self.tile16[s]:
            self.emit(e, f"if not mt.tile16(wt{s}, {ops}, prm{s}):")
            e += 1
        if not self.tile16[s] or self.mma_bits[s][1] == 16:
            self.emit(e, f"if mf.tile_mma(ws{s}, {ops}, prm{s}, {self.wide[s]}):")
            e += 1
        self.emit(e, f"if spa[{s}] == 0:")
        self.fail(e + 1, ERR_SPECIAL)
        self.emit(e, f"mc.call(spa[{s}], {ops}, prm{s}, {mma_params.use32(self.prms[s])})")

    def mma_slot(self, ta, tb, tc, tr) -> int:
        from ..numerics.dtypes import NP
        prof = self.pipe.profile
        if ta.scope != "subgroup" or tr.elem.name != tc.elem.name:
            raise Unsupported("no such configuration")
        cfg = prof.find_config(ta.rows, tc.cols, ta.cols, ta.elem.name, tc.elem.name)
        if cfg is None:             # flexible dimensions: the configuration each K step runs
            found = prof.flexible_mma(ta, tb, tc)
            cfg = found[1] if found is not None else None
            if cfg is None or ta.rows % cfg.m or tc.cols % cfg.n or ta.cols % cfg.k:
                raise Unsupported("no such configuration")
        model = prof.model_for(cfg)
        key = (cfg.m, cfg.n, cfg.k, model, ta.elem.name, tc.elem.name)
        s = self.mmas.get(key)
        if s is None:
            prm = nmma.packed(model, np.dtype(NP[ta.elem.name]), np.dtype(NP[tc.elem.name]), tc.elem.name)
            if prm is None:
                raise Unsupported(f"multiply-add model {model} on {ta.elem.name}")
            s = self.mmas[key] = len(self.prms)
            self.prms.append(prm)
            self.wide.append(None if mma_params.only32(prm, cfg.m, cfg.n, cfg.k) else True)
            self.tile16.append(mma_params.covers(prm, cfg.m, cfg.n, cfg.k))
            self.mma_shapes.append((cfg.m, cfg.n, cfg.k))
            self.mma_bits.append((8 * ta.elem.size, 8 * tc.elem.size))
        return s

    def build(self) -> str:
        fn = self.entry
        for i, bname in fn.param_builtins.items():
            self.vals[fn.params[i].id] = self.input(bname, fn.params[i].type)
        if self.wg:
            self.wg_block(fn.body, 0, None, False)
        else:
            self.block(fn.body, 2, None)
        body = self.lines
        if self.ncoop == 0:
            raise Unsupported("no cooperative ops (the fusion JIT's case)")
        if self.rcp or self.rsq or self.tabs:
            raise Unsupported("f32 division, inverseSqrt or a transcendental on this profile (MUFU's tables)")
        for k in range(len(self.buf_types)):
            if self.stores[k] and self.loads[k]:
                raise Unsupported(f"buffer {self.buf_types[k].g.name}: read and written")
        self.stored_slots = [k for k in range(len(self.buf_types)) if self.stores[k]]
        sg = self.pipe.opts.subgroup_size
        nb = len(self.buf_types)
        bufs = "".join(f", b{k}, n{k}, u{k}, nb{k}, obase{k}" for k in range(nb))
        prms = "".join(f", prm{s}" for s in range(len(self.prms)))
        out = self.IMPORTS + [
            "from emu.numerics import mma_fast as mf",
            "from emu.numerics import mma_tile as mt",
            "from emu.numerics import mma_call as mc",
            "from emu.jit.coop_tiles import load_tile as ck_load, store_tile as ck_store",
            "from emu.jit.coop_tiles import wg_tile as ck_wtile, put_tile as ck_wput, log_elem as ck_log",
            "",
            "",
            "@njit(cache=True, nogil=True, inline='always')",
            "def ck_copy(dst, src):",
            "    for i in range(dst.shape[1]):",
            "        for j in range(dst.shape[2]):",
            "            dst[0, i, j] = src[0, i, j]",
            "",
            ""] + ([
            "@njit(cache=True, nogil=True, inline='always')",
            "def ck_part(dst, src, r0, c0):",
            "    for i in range(dst.shape[1]):",
            "        for j in range(dst.shape[2]):",
            "            dst[0, i, j] = src[0, r0 + i, c0 + j]",
            "",
            "",
            "@njit(cache=True, nogil=True, inline='always')",
            "def ck_put(dst, src, r0, c0):",
            "    for i in range(src.shape[1]):",
            "        for j in range(src.shape[2]):",
            "            dst[0, r0 + i, c0 + j] = src[0, i, j]",
            "",
            ""] if self.flex else [])
        setup = []
        for s, (M, N, K) in enumerate(self.mma_shapes):
            if self.tile16[s]:
                setup.append(f"wt{s} = mt.workspace()")
            if not self.tile16[s] or self.mma_bits[s][1] == 16:
                setup.append(f"ws{s} = mf.tile_workspace({M}, {N}, {K}, prm{s}, {mma_params.use32(self.prms[s])})")
        setup += [f"{name} = np.zeros((1, {R}, {C}), {dt})" for name, (dt, R, C) in sorted(self.mats.items())]
        setup += [f"{name} = np.zeros(({self.nsub}, 1, {R}, {C}), {dt})"
                  for name, (dt, R, C) in sorted(self.smats.items())]
        setup += [f"{name} = np.zeros(({self.nsub if self.wg else 1}, {n}, 1, {R}, {C}), {dt})"
                  for name, (dt, n, R, C) in sorted(self.marrs.items())]
        params = f"w0, w1, gx, gy, gz, max_steps, err, slog, nlog, ovs, spa{prms}{bufs}"
        if self.wg:
            # fuse.py's workgroup mode: per-lane values, workgroup memory with its access tags
            n = self.pipe.layout.wg_count
            setup += [f"{k} = np.zeros({n}, {t})" for k, t in sorted(self.decls.items())]
            setup += [f"retd = np.zeros({n}, np.bool_)", f"stp = np.zeros({n}, np.int64)", "ep = np.int64(0)"]
            for g, (t, cnt) in self.wmem.items():
                setup += [f"wm_{g} = np.zeros({cnt}, {t})", f"wt_{g} = np.zeros({cnt}, np.int64)",
                          f"rt_{g} = np.zeros({cnt}, np.int64)"]
            per_wg = [f"wm_{g}[:] = 0" for g in self.wmem] + ["retd[:] = False", "stp[:] = 0", "wsteps = 0",
                                                               "ep += 4096"] + ["ib = ep"] * self.sgbar
            return "\n".join(out + self.driver(params, body, setup, per_wg))
        # one unit per subgroup: `local` its first invocation, `gid` its index in the dispatch
        unit = ("sgi", self.nsub, [f"local = sgi * {sg}", f"gid = w * {self.nsub} + sgi"], "subgroup")
        return "\n".join(out + self.driver(params, body, setup, unit=unit))


class Kernel:
    """A compiled cooperative entry point: run(grid, regions, workgroups) -> None (done) or the
    range's first workgroup (the buffers it wrote restored: the interpreter runs the range)."""
    kind = "cooperative"
    tier = pending_tier

    def __init__(self, pipe, gen: _CoopGen, source: str):
        self.pipe = pipe
        self.source = source
        self.slots = gen.buf_types
        self.buffers = [(s.g.group, s.g.binding) for s in gen.buf_types]
        self.stored = [bool(gen.stores[k]) for k in range(len(gen.buf_types))]
        self.prms = gen.prms
        self.ovs = np.array([int(pipe.overrides[n]) for n in gen.ovs] or [0], np.int64)
        self.nsub = gen.nsub
        # store log rows per workgroup (grown when short): a few per subgroup and per invocation
        self.log_rows = gen.nsub * 4 + (4 * pipe.layout.wg_count if gen.scalar_stores else 0)
        self.mma_bits = gen.mma_bits
        self.spa = np.zeros(max(1, len(gen.prms)), np.int64)    # mma_call's addresses, once needed
        self.special_failed = False
        self.mod = None
        self.handed_back = 0                    # dispatches handed to the interpreter (for tests)

    def _args(self, regions):
        from ..numerics.dtypes import NP
        args, datas, obase = [], [], 0
        for key, s, st in zip(self.buffers, self.slots, self.stored):
            reg = regions.get(key)
            got = None if reg is None else s.view(reg, _UINT_NP[s.elem.size])
            if got is None:
                return None, None
            u, n = got
            view = s.view(reg, NP[s.elem.name])[0] if s.elem.name in _TYPED else u
            nb = (reg.nbytes - s.offset) // s.elem.size
            args += [view, np.int64(n), u, np.int64(nb), np.int64(obase)]
            obase += nb if st else 0
            datas.append(u)
        if aliased(datas, self.stored):
            return None, None
        return args, obase

    def run(self, grid, regions: dict, workgroups: tuple[int, int] | None = None):
        """`workgroups`: (first, end) flat indices, the range to run (default: the whole grid).
        Returns None (done) or `first` (the interpreter runs the range)."""
        gx, gy, gz = grid
        lo, end = workgroups if workgroups is not None else (0, gx * gy * gz)
        total = end - lo
        args, nowned = self._args(regions)
        if args is None or total * self.nsub < MIN_SUBGROUPS:
            return lo
        max_steps = self.pipe.opts.max_steps
        if not first_use(self, lambda mod: mod.run(0, 0, 1, 1, 1, max_steps, np.zeros(3, np.int64),
                                                   np.zeros((1, LOG_COLS), np.int64), np.zeros(1, np.int64),
                                                   self.ovs, self.spa, *self.prms, *args)):
            return lo
        written = [regions[key] for key, st in zip(self.buffers, self.stored) if st]
        from ..numerics.pool import copy
        saved = [copy(r.data, self.jobs(total)) for r in written]
        ok = self._run(grid, lo, total, args, nowned, max_steps)
        while ok is None or ok == ERR_LOG:
            # a subgroup needed mma_call's kernel (loaded now), or the store log was too small
            # (larger now): the range runs again
            if ok is None and not self._load_special():
                break
            if ok == ERR_LOG:
                if self.log_rows > 1 << 22:
                    ok = False
                    break
                self.log_rows *= 8
            for r, sv in zip(written, saved):
                r.data[...] = sv
            ok = self._run(grid, lo, total, args, nowned, max_steps)
        if ok:
            return None
        for r, sv in zip(written, saved):
            r.data[...] = sv
        self.handed_back += 1
        return lo

    def _load_special(self) -> bool:
        """mma_call's kernels' addresses into spa; False (the interpreter runs such dispatches,
        said once) where numba cannot build them."""
        if self.special_failed:
            return False
        from ..numerics import mma_call
        try:
            for s, (ab, cd) in enumerate(self.mma_bits):
                self.spa[s] = mma_call.address(ab, cd)
        except Exception as e:
            import warnings
            warnings.warn(f"emu JIT: multiply-adds outside the common case left to the interpreter "
                          f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})", RuntimeWarning)
            self.special_failed = True
            self.spa[:] = 0
            return False
        return True

    def jobs(self, workgroups: int) -> int:
        return max(1, min(int(getattr(self.pipe.opts, "jobs", 1) or 1), workgroups))

    def _run(self, grid, lo, total, args, nowned, max_steps):
        """The range on --jobs threads: True (done), False (hand it back) or None (a subgroup
        needs mma_call's kernel, not loaded yet)."""
        from ..numerics.pool import guided, run_parts
        gx, gy, gz = grid
        jobs = self.jobs(total)
        # chunks that shrink toward the end, handed out one by one (~9 a thread; the last ones
        # ~1/64 of a thread's share, so that the threads end together)
        bounds = [(0, total)] if jobs == 1 else guided(total, jobs, max(1, total // (64 * jobs)))
        chunks = len(bounds)
        errs = np.zeros((chunks, 3), np.int64)
        nlogs = np.zeros((chunks, 8), np.int64)     # a count a cache line: each store adds one
        # one log for all chunks, each its rows: log_rows a workgroup and 64 more a chunk
        room = np.cumsum([0] + [(z - a) * self.log_rows + 64 for a, z in bounds])
        log = np.empty((int(room[-1]), LOG_COLS), np.int64)
        call = self.mod.run.bind((0, 0, gx, gy, gz, max_steps, errs[0], log[:1], nlogs[0, :1], self.ovs, self.spa,
                                  *self.prms, *args), (0, 1, 6, 7, 8))

        def chunk(c):
            a, z = bounds[c]
            call(lo + a, lo + z, errs[c], log[room[c]:room[c + 1]], nlogs[c, :1])
        run_parts(chunk, chunks, jobs)
        if (errs[:, 0] == ERR_SPECIAL).any() and not self.spa.all():
            return None
        if (errs[:, 0] == ERR_LOG).any() and not np.isin(errs[:, 0], (ERR_OOB, ERR_FALLBACK)).any():
            return ERR_LOG
        ok = not errs[:, 0].any()
        if ok and nowned:
            # no element stored by two subgroups: per cell where the stores are tiles of one grid,
            # else per element, the elements in `parts` ranges, one a thread
            stores = log if chunks == 1 else np.concatenate([log[room[c]:room[c] + nlogs[c, 0]]
                                                             for c in range(chunks)])
            n = int(nlogs[0, 0]) if chunks == 1 else len(stores)
            on_grid = saved("coop_tiles._disjoint_grid")(stores, n)      # tiles of one grid: ~20 us
            if on_grid >= 0:
                return bool(on_grid)
            parts = max(1, min(jobs, nowned >> 16))
            disjoint = saved("coop_tiles._disjoint_part")
            each = [False] * parts

            def check(p):
                a, z = nowned * p // parts, nowned * (p + 1) // parts
                each[p] = disjoint(stores, n, np.full(z - a, -1, np.int64), a)
            run_parts(check, parts, jobs)
            ok = all(each)
        return ok


_SAVED: dict = {}


def saved(name: str, variant: str = ""):
    """The numba function `name` (coop_tiles._disjoint_part, mma_tile.tiles: module.function under
    emu/jit or emu/numerics), called without numba where its machine code was saved; `variant`
    names one of several saved codes of it (its code is saved for the argument types of its first
    call: a caller whose types vary names them)."""
    f = _SAVED.get((name, variant))
    if f is None:
        def numba_function():
            import importlib
            mod, fn = name.split(".")
            pkg = "emu.jit" if mod == "coop_tiles" else "emu.numerics"
            return getattr(importlib.import_module(f"{pkg}.{mod}"), fn)
        key = f"{name}.{variant}.{_stamp()}" if variant else f"{name}.{_stamp()}"
        f = _SAVED[(name, variant)] = native.Function(native.path(_cache_dir(), key), numba_function)
    return f


def compile_pipeline(pipe) -> Kernel | None:
    """The pipeline's entry point as a compiled cooperative Kernel, or None."""
    if pipe.opts.tracer is not None or getattr(pipe.profile, "scalar", "ieee") not in SCALAR_MODELS:
        return None
    try:
        gen = _CoopGen(pipe)
        source = gen.build()
    except Unsupported as e:
        declined(pipe, "the cooperative kernel", e)
        return None
    return Kernel(pipe, gen, source)
