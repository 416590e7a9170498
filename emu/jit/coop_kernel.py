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

Taken only when: no workgroup memory, barriers or subgroup ops; the builtins read are workgroup_id,
num_workgroups, subgroup_id, subgroup_size and num_subgroups; workgroups are whole subgroups; no
scalar stores; every buffer is either read or written, never both; matrices live in function
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
from ..isa.types import ArrayType, CoopMatrixType, ScalarType
from ..numerics import mma as nmma, mma_params
from . import native
from .fuse import _NP, ERR_FALLBACK, SCALAR_MODELS, Unsupported, _Gen, _cache_dir, _stamp, aliased, first_use

_UINT = {1: "np.uint8", 2: "np.uint16", 4: "np.uint32"}
_UINT_NP = {1: np.uint8, 2: np.uint16, 4: np.uint32}
_UNIFORM = frozenset({"workgroup_id", "num_workgroups", "subgroup_id", "subgroup_size", "num_subgroups"})
_TYPED = ("i32", "u32", "f32")
# Below this many subgroups in a dispatch the interpreter runs it: loading a compiled kernel from
# numba's cache (~0.1-0.2 s) or compiling one (seconds) costs more than interpreting a few subgroups
MIN_SUBGROUPS = 64
LOG_COLS = 7            # a logged store: owner base, subgroup, offset, stride, rows, cols, column-major
ERR_SPECIAL = 3         # a subgroup needs mma_call's kernel, not loaded yet: load it and run again


class _CoopGen(_Gen):
    """_Gen with one invocation per subgroup and the cooperative ops."""

    def __init__(self, pipe):
        super().__init__(pipe)
        if self.wg:
            raise Unsupported("workgroup memory or barriers")
        sg = pipe.opts.subgroup_size
        if pipe.layout.wg_count % sg:
            raise Unsupported("a workgroup of part of a subgroup")
        self.nsub = pipe.layout.wg_count // sg
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
        if name not in _UNIFORM:
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
        self.mats[name] = (_UINT[t.elem.size], t.rows, t.cols)
        return name

    def m(self, value) -> str:
        e = self.vals.get(value.id)
        if not (isinstance(e, tuple) and e[0] == "mat"):
            raise Unsupported(f"value %{value.id} as a matrix")
        return e[1]

    def tile(self, inst, ptr_val, t: CoopMatrixType):
        """(slot, column-major, the pointer's element) of a cooperative access of a buffer's array
        or of the array from one of its elements on (&a[i], wgpu's form)."""
        p = self.vals.get(ptr_val.id)
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

    def inst(self, inst, d: int, loop_ctx):
        op, r, a = inst.op, inst.result, inst.args
        t = inst.type
        held = self.vals.get(a[0].id) if a else None
        if op == OP.var and isinstance(t.pointee, CoopMatrixType):
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
            self.emit(d, f"v{r.id} = {_NP[t.name]}(ovs[{self.ovs.index(name)}])")
            self.vals[r.id] = f"v{r.id}"
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
                         f"{col}, {self.m(a[2])}, slog, nlog, obase{k}, gid):")
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
            self.emit(d, f"v{r.id} = np.uint32({int(n.rows_idx.shape[1])})")
            self.vals[r.id] = f"v{r.id}"
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
        self.block(fn.body, 2, None)
        body = self.lines
        if self.ncoop == 0:
            raise Unsupported("no cooperative ops (the fusion JIT's case)")
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
        # one unit per subgroup: `local` its first invocation, `gid` its index in the dispatch
        unit = ("sgi", self.nsub, [f"local = sgi * {sg}", f"gid = w * {self.nsub} + sgi"], "subgroup")
        params = f"w0, w1, gx, gy, gz, max_steps, err, slog, nlog, ovs, spa{prms}{bufs}"
        return "\n".join(out + self.driver(params, body, setup, unit=unit))


class Kernel:
    """A compiled cooperative entry point: run(grid, regions, workgroups) -> None (done) or the
    range's first workgroup (the buffers it wrote restored: the interpreter runs the range)."""

    def __init__(self, pipe, gen: _CoopGen, source: str):
        self.pipe = pipe
        self.source = source
        self.slots = gen.buf_types
        self.buffers = [(s.g.group, s.g.binding) for s in gen.buf_types]
        self.stored = [bool(gen.stores[k]) for k in range(len(gen.buf_types))]
        self.prms = gen.prms
        self.ovs = np.array([int(pipe.overrides[n]) for n in gen.ovs] or [0], np.int64)
        self.nsub = gen.nsub
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
        saved = [r.data.copy() for r in written]
        ok = self._run(grid, lo, total, args, nowned, max_steps)
        if ok is None and self._load_special():
            # a subgroup needed mma_call's kernel: with it loaded, the range runs again
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

    def _run(self, grid, lo, total, args, nowned, max_steps):
        """The range on --jobs threads: True (done), False (hand it back) or None (a subgroup
        needs mma_call's kernel, not loaded yet)."""
        from ..numerics.pool import run_chunks
        gx, gy, gz = grid
        jobs = max(1, min(int(getattr(self.pipe.opts, "jobs", 1) or 1), total))
        chunks = 1 if jobs == 1 else min(total, 8 * jobs)    # handed out one by one (pool.run_chunks)
        errs = np.zeros((chunks, 3), np.int64)
        nlogs = np.zeros((chunks, 1), np.int64)
        logs = [None] * chunks

        def chunk(c0, c1):
            for c in range(c0, c1):
                a, z = lo + total * c // chunks, lo + total * (c + 1) // chunks
                logs[c] = np.empty(((z - a) * self.nsub * 4 + 64, LOG_COLS), np.int64)
                self.mod.run(a, z, gx, gy, gz, max_steps, errs[c], logs[c], nlogs[c], self.ovs, self.spa,
                             *self.prms, *args)
        run_chunks(chunk, chunks, jobs, per_thread=8)
        if (errs[:, 0] == ERR_SPECIAL).any() and not self.spa.all():
            return None
        ok = not errs[:, 0].any()
        if ok and nowned:
            owner = np.full(nowned, -1, np.int64)
            disjoint = saved("coop_tiles._disjoint")
            ok = all(disjoint(logs[c], int(nlogs[c, 0]), owner) for c in range(chunks))
        return ok


_SAVED: dict = {}


def saved(name: str):
    """The numba function `name` (coop_tiles._disjoint, mma_tile.tiles: module.function under
    emu/jit or emu/numerics), called without numba where its machine code was saved."""
    f = _SAVED.get(name)
    if f is None:
        def numba_function():
            import importlib
            mod, fn = name.split(".")
            pkg = "emu.jit" if mod == "coop_tiles" else "emu.numerics"
            return getattr(importlib.import_module(f"{pkg}.{mod}"), fn)
        f = _SAVED[name] = native.Function(native.path(_cache_dir(), f"{name}.{_stamp()}"), numba_function)
    return f


def compile_pipeline(pipe) -> Kernel | None:
    """The pipeline's entry point as a compiled cooperative Kernel, or None."""
    if pipe.opts.tracer is not None or getattr(pipe.profile, "scalar", "ieee") not in SCALAR_MODELS:
        return None
    try:
        gen = _CoopGen(pipe)
        source = gen.build()
    except Unsupported:
        return None
    return Kernel(pipe, gen, source)
