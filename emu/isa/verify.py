"""The IR verifier: structure against the op table, operand types per op, value definitions
before use, and (given a device profile) the cooperative configurations the device supports.

Messages name the instruction's source location; an IR that fails here is a bug in a front end
(structure) or a shader the device cannot run (configurations, subgroup size)."""
from __future__ import annotations

from ..errors import EmuError
from .ir import Block, Function, Inst, Module, reachable
from .ops import ATOMIC_OPS, BARRIERS, BINARY_OPS, COOP_SCALAR_OPS, OPS, SUBGROUP_OPS, UNARY_OPS
from .types import (BOOL, I32, U32, VOID, AtomicType, CoopMatrixType, PointerType, ScalarType, VectorType,
                    scalar_of, width)


DAWN_COOP = "chromium_experimental_subgroup_matrix"
# a module whose cooperative matrices may have VK_NV_cooperative_matrix2's flexible dimensions and
# workgroup scope (the SPIR-V front end's: Vulkan offers them where the device has the feature)
FLEXIBLE_DIMENSIONS = "nv_cooperative_matrix_flexible_dimensions"
VECTOR_INPUTS = ("global_invocation_id", "local_invocation_id", "workgroup_id", "num_workgroups")


class VerifyError(EmuError):
    pass


def holds_f64(t) -> bool:
    """Whether a type holds an f64 (naga's 64-bit floats), as a component, element or member."""
    if isinstance(t, ScalarType):
        return t.name == "f64"
    for sub in ("elem", "pointee"):
        if hasattr(t, sub):
            return holds_f64(getattr(t, sub))
    return any(holds_f64(m.type) for m in getattr(t, "members", ()))


def _has_f64(i: Inst) -> bool:
    return any(holds_f64(v.type) for v in ([i.result] if i.result is not None else []) + list(i.args))


def f64_site(module: Module):
    """The source location of the module's first f64 (a global's or an instruction's), or None."""
    for g in module.globals:
        if holds_f64(g.type):
            return g.loc
    for f in module.functions:
        for i in f.walk():
            if _has_f64(i):
                return i.loc
    return None


def verify(module: Module, profile=None, subgroup_size: int | None = None, entry: Function | None = None) -> None:
    """Structure for every function (WGSL's module errors); the device's rules (configurations,
    subgroup size) only for the functions `entry` reaches, so that a module's other entry points
    still run where one uses what the device lacks. Without `entry`: the module's only compute
    entry point, or none where it has several (each pipeline then checks its own)."""
    if entry is None:
        eps = module.entry_points()
        entry = eps[0] if len(eps) == 1 else None
    on_device = reachable(module, entry) if entry is not None else set()
    v = _Verifier(module, profile, subgroup_size)
    for f in module.functions:
        v.profile, v.sg = (profile, subgroup_size) if f.name in on_device else (None, None)
        v.function(f)


class _Verifier:
    def __init__(self, module, profile, sg):
        self.m, self.profile, self.sg = module, profile, sg
        self.coop_checked: set = set()

    def fail(self, inst: Inst | None, msg: str, hint: str | None = None):
        raise VerifyError(msg, inst.loc if inst is not None else None, hint=hint)

    def function(self, f: Function):
        from .ops import INPUTS
        for name in f.param_builtins.values():
            if name not in INPUTS:
                self.fail(None if f.loc is None else Inst("func", [], loc=f.loc),
                          f"parameter of '{f.name}' is the unknown builtin {name!r}",
                          hint=f"use one of {', '.join(INPUTS)}")
        defined = {p.id for p in f.params}
        self.block(f.body, defined, f, loops=0, breakables=0)
        # Dawn's rule (its subgroup-matrix extension; wgpu's has none): each row of the workgroup
        # is whole subgroups.
        if (f.stage == "compute" and self.sg and DAWN_COOP in self.m.enables and self.uses_coop(f)
                and isinstance(f.workgroup_size[0], int)):
            if f.workgroup_size[0] % self.sg:
                self.fail(None if f.loc is None else Inst("func", [], loc=f.loc),
                          f"workgroup_size.x ({f.workgroup_size[0]}) of '{f.name}' is not a multiple of the "
                          f"subgroup size ({self.sg}); cooperative matrices need whole subgroups",
                          hint=f"use @workgroup_size({self.sg * max(1, f.workgroup_size[0] // self.sg)}, ...)")

    def uses_coop(self, f: Function) -> bool:
        return any(OPS[i.op].cooperative for name in reachable(self.m, f) for i in self.m.function(name).walk())

    def block(self, b: Block, defined: set, f: Function, loops: int, breakables: int):
        defined = set(defined)
        for inst in b.insts:
            self.inst(inst, defined, f, loops, breakables)
            if inst.result is not None:
                defined.add(inst.result.id)
        return defined

    def inst(self, i: Inst, defined: set, f: Function, loops: int, breakables: int):
        d = OPS.get(i.op)
        if d is None:
            self.fail(i, f"unknown op '{i.op}'")
        lo, hi = d.args
        if len(i.args) < lo or (hi is not None and len(i.args) > hi):
            self.fail(i, f"'{i.op}' takes {lo}..{hi if hi is not None else 'n'} operands, not {len(i.args)}")
        for a in i.args:
            if a.id not in defined:
                self.fail(i, f"'{i.op}' uses %{a.id} before it is defined (or outside its block)")
        for name in d.attrs:
            if name not in i.attrs:
                self.fail(i, f"'{i.op}' needs attribute '{name}'")
        if d.result is not None and d.result != (i.result is not None):
            self.fail(i, f"'{i.op}' {'must' if d.result else 'must not'} produce a value")
        if d.blocks is not None and len(i.blocks) != d.blocks:
            self.fail(i, f"'{i.op}' has {d.blocks} blocks, not {len(i.blocks)}")
        check = getattr(self, "op_" + i.op, None)
        if check is not None:
            check(i)
        if self.profile is not None and not self.profile.shader_float64 and _has_f64(i):
            self.fail(i, f"profile '{self.profile.name}' has no 64-bit floats (Vulkan's shaderFloat64, wgpu's "
                         f"feature 'shader-f64'), which this f64 value needs",
                      hint="run it on a profile whose device has them (nvidia-h200, amd-rdna3, lavapipe, "
                           "reference, ...), or compute in f32")
        if i.op == "return" and (i.args[0].type if i.args else VOID) != f.ret:
            self.fail(i, f"'{f.name}' returns {f.ret}, not {i.args[0].type if i.args else 'nothing'}")
        if i.op == "loop":
            body = self.block(i.blocks[0], defined, f, loops + 1, breakables + 1)
            self.block(i.blocks[1], body, f, loops + 1, breakables + 1)
            for x in i.blocks[1].insts[:-1]:
                if x.op == "break_if":
                    self.fail(x, "break_if must be the last instruction of a continuing block")
        elif i.op == "switch":
            if len(i.blocks) != len(i.attrs["cases"]):
                self.fail(i, "switch needs one block per case list")
            for blk in i.blocks:
                self.block(blk, defined, f, loops, breakables + 1)
        else:
            for blk in i.blocks:
                self.block(blk, defined, f, loops, breakables)
        if i.op == "break" and breakables == 0:
            self.fail(i, "break outside a loop or switch")
        if i.op == "continue" and loops == 0:
            self.fail(i, "continue outside a loop")

    # -- per-op type rules ---------------------------------------------------------------------
    def op_if(self, i):
        if i.args[0].type != BOOL:
            self.fail(i, f"if condition must be bool, not {i.args[0].type}")

    def op_break_if(self, i):
        self.op_if(i)

    def op_load(self, i):
        p = i.args[0].type
        if not isinstance(p, PointerType):
            self.fail(i, f"load needs a pointer, not {p}")
        if p.pointee != i.type:
            self.fail(i, f"load of {p} gives {p.pointee}, not {i.type}")
        if _runtime_sized(p.pointee):
            self.fail(i, f"load of {p.pointee}, which holds a runtime-sized array: load its elements")

    def op_convert(self, i):
        for t in (i.args[0].type, i.type):
            try:
                scalar_of(t)
            except TypeError:
                self.fail(i, f"convert of {i.args[0].type} to {i.type}: both are numbers or vectors of them")

    def op_store(self, i):
        p, v = i.args[0].type, i.args[1].type
        if not isinstance(p, PointerType):
            self.fail(i, f"store needs a pointer, not {p}")
        if p.access == "read":
            self.fail(i, f"store through a read-only pointer ({p})")
        if p.pointee != v:
            self.fail(i, f"store of {v} through {p}")

    def op_binary(self, i):
        a, b = i.args[0].type, i.args[1].type
        fn = i.attrs["fn"]
        self.vocabulary(i, "fn", BINARY_OPS)
        from .types import MatrixType, ScalarType, VectorType
        if not all(isinstance(x, (ScalarType, VectorType, MatrixType, CoopMatrixType)) for x in (a, b)):
            self.fail(i, f"binary '{fn}' of {a} and {b}: operands are numbers, vectors or matrices")
        if fn in ("shl", "shr"):
            if width(a) != width(b) or scalar_of(b) != U32:
                self.fail(i, f"shift of {a} by {b}: the amount must be u32 of the same width")
        elif a != b:
            self.fail(i, f"binary '{fn}' of different types {a} and {b}")
        from .ops import COMPARE_OPS
        from .types import VectorType
        want = (BOOL if not isinstance(a, VectorType) else VectorType(BOOL, a.n)) if fn in COMPARE_OPS else a
        if i.type != want:
            self.fail(i, f"binary '{fn}' of {a} gives {want}, not {i.type}")

    def path_ok(self, i, t, path):
        """Each constant index of `path` within the composite it indexes."""
        from .types import ArrayType, MatrixType, StructType, TupleType, VectorType
        if not isinstance(path, (list, tuple)) or not all(isinstance(s, int) for s in path):
            self.fail(i, f"'{i.op}' needs a path of integers, not {path!r}")
        for step in path:
            if isinstance(t, StructType):
                n, nxt = len(t.members), (lambda k: t.members[k].type)
            elif isinstance(t, TupleType):
                n, nxt = len(t.fields), (lambda k: t.fields[k][1])
            elif isinstance(t, ArrayType):
                n, nxt = t.count, (lambda k: t.elem)
            elif isinstance(t, MatrixType):
                n, nxt = t.cols, (lambda k: t.column)
            elif isinstance(t, VectorType):
                n, nxt = t.n, (lambda k: t.elem)
            elif isinstance(t, CoopMatrixType):      # a lane's own elements (their count: the device's)
                n, nxt = None, (lambda k: t.elem)
            else:
                self.fail(i, f"'{i.op}' indexes into {t}, which has no components")
            if step < -1 or (step >= 0 and n is not None and step >= n) or \
                    (step == -1 and isinstance(t, (StructType, TupleType))):
                self.fail(i, f"'{i.op}' index {step} is out of range for {t}")
            t = nxt(max(step, 0))
        return t

    def op_extract(self, i):
        t = self.path_ok(i, i.args[0].type, i.attrs["path"])
        self.dynamic_operands(i, 1)
        if i.type != t:
            self.fail(i, f"extract {i.attrs['path']} of {i.args[0].type} gives {t}, not {i.type}")

    def op_insert(self, i):
        t = self.path_ok(i, i.args[0].type, i.attrs["path"])
        self.dynamic_operands(i, 2)
        if i.args[1].type != t or i.type != i.args[0].type:
            self.fail(i, f"insert of {i.args[1].type} at {i.attrs['path']} of {i.args[0].type}: the "
                         f"component is {t} and the result {i.args[0].type}")

    def dynamic_operands(self, i, fixed: int):
        dyn = sum(1 for s in i.attrs["path"] if s < 0)
        if dyn != len(i.args) - fixed:
            self.fail(i, f"'{i.op}' path has {dyn} dynamic indices but {len(i.args) - fixed} index operands")
        for a in i.args[fixed:]:
            self.integer(i, "index", a.type)

    def integer(self, i, what: str, t):
        """An index, offset or stride: one i32 or u32."""
        from .types import I32
        if t not in (I32, U32):
            self.fail(i, f"'{i.op}' {what} must be i32 or u32, not {t}")

    def op_construct(self, i):
        from .types import ArrayType, MatrixType, ScalarType, StructType, VectorType
        t, got = i.type, [a.type for a in i.args]
        if isinstance(t, StructType):
            ok = got == [m.type for m in t.members]
        elif isinstance(t, ArrayType):
            ok = t.count == len(got) and all(g == t.elem for g in got)
        elif isinstance(t, (VectorType, MatrixType)):
            n = t.n if isinstance(t, VectorType) else t.cols * t.rows
            ok = all(isinstance(g, (ScalarType, VectorType)) and scalar_of(g) == t.elem for g in got) and (
                sum(width(g) for g in got) == n or (isinstance(t, VectorType) and got == [t.elem]))
        else:
            ok = got == [t]
        if not ok:
            self.fail(i, f"construct of {t} from ({', '.join(map(str, got))})")

    def op_const(self, i):
        why = _const_mismatch(i.type, i.attrs["value"])
        if why:
            self.fail(i, f"const of {i.type}: {why}")

    def op_barrier(self, i):
        self.vocabulary(i, "kind", BARRIERS)

    def op_unary(self, i):
        self.vocabulary(i, "fn", UNARY_OPS)
        if i.type != i.args[0].type:
            self.fail(i, f"unary '{i.attrs['fn']}' of {i.args[0].type} gives {i.args[0].type}, not {i.type}")

    def op_atomic(self, i):
        self.vocabulary(i, "fn", ATOMIC_OPS)
        if not isinstance(i.args[0].type, PointerType):
            self.fail(i, f"atomic needs a pointer, not {i.args[0].type}")
        t = i.args[0].type.pointee
        if not isinstance(t, AtomicType) and str(t) not in ("i32", "u32", "i64", "u64"):   # SPIR-V's: plain ints
            self.fail(i, f"atomic needs a pointer to an atomic or a 32- or 64-bit integer, not to {t}")
        want = {"load": 1, "compare_exchange_weak": 3}.get(i.attrs["fn"], 2)
        if len(i.args) != want:
            self.fail(i, f"atomic '{i.attrs['fn']}' takes {want} operand{'s' * (want != 1)}, not {len(i.args)}")
        vec2u = isinstance(t, AtomicType) and t.is_vec2u
        if vec2u != (i.attrs["fn"] in ("store_max", "store_min")):
            self.fail(i, f"atomic '{i.attrs['fn']}' on {t}: store_max and store_min are the operations of "
                         f"atomic<vec2<u32>>, and its only ones")
        wide = t.size == 8
        if wide and self.profile is not None and not self.profile.buffer_int64_atomics:
            # the field is Vulkan's shaderBufferInt64Atomics; workgroup memory is taken to follow it
            where = "buffer" if i.args[0].type.space == "storage" else i.args[0].type.space
            what = ("atomic<vec2<u32>> ('atomic_vec2u_min_max', Dawn's feature 'atomic-vec2u-min-max')" if vec2u
                    else f"{t} (naga's 64-bit atomics, wgpu's SHADER_INT64_ATOMIC_* features)"
                    if isinstance(t, AtomicType) else
                    f"an atomic on {t} (SPIR-V's Int64Atomics, Vulkan's shaderBufferInt64Atomics)")
            self.fail(i, f"profile '{self.profile.name}' has no 64-bit {where} atomics, which {what} needs",
                      hint="run it on a profile whose device has them (nvidia-h200, amd-rdna3, lavapipe, ...), "
                           "or keep the value in two atomic<u32>")

    def op_subgroup(self, i):
        from .types import ScalarType, VectorType
        self.vocabulary(i, "fn", SUBGROUP_OPS)
        fn, ts = i.attrs["fn"], [a.type for a in i.args]
        lane = fn in ("broadcast", "shuffle", "shuffle_xor", "shuffle_up", "shuffle_down", "quad_broadcast")
        want = 0 if fn == "elect" else 2 if lane else 1
        if len(ts) != want:
            self.fail(i, f"subgroup '{fn}' takes {want} operand{'s' * (want != 1)}, not {len(ts)}")
        if fn in ("elect", "all", "any", "ballot"):
            rt = VectorType(U32, 4) if fn == "ballot" else BOOL
            if ts[:1] not in ([], [BOOL]) or i.type != rt:
                self.fail(i, f"subgroup '{fn}' of {', '.join(map(str, ts)) or 'nothing'} gives {i.type}: "
                             f"it takes a bool (elect: nothing) and gives {rt}")
            return
        if not isinstance(ts[0], (ScalarType, VectorType)) or i.type != ts[0]:
            self.fail(i, f"subgroup '{fn}' of {ts[0]} gives {i.type}: it takes a scalar or vector and gives "
                         f"the same type")
        if lane and not (isinstance(ts[1], ScalarType) and ts[1].name in ("i32", "u32")):
            self.fail(i, f"subgroup '{fn}': the lane operand must be i32 or u32, not {ts[1]}")

    def op_coop_reduce(self, i):
        from .types import CoopMatrixType
        self.vocabulary(i, "mode", ("row", "column", "row_column", "2x2"))
        self.vocabulary(i, "fn", ("add", "mul", "min", "max", "first", "second"))
        s, r = i.args[0].type, i.type
        if not (isinstance(s, CoopMatrixType) and isinstance(r, CoopMatrixType) and s.elem == r.elem):
            self.fail(i, f"coop_reduce of {s} to {r}: both matrices of one element type")
        want = {"row": (s.rows, None), "column": (None, s.cols), "row_column": (None, None),
                "2x2": (s.rows // 2, s.cols // 2)}[i.attrs["mode"]]
        if any(w is not None and w != got for w, got in zip(want, (r.rows, r.cols))) or \
                (i.attrs["mode"] == "2x2" and (s.rows % 2 or s.cols % 2)):
            self.fail(i, f"a {i.attrs['mode']} reduction of a {s.rows}x{s.cols} matrix cannot give a "
                         f"{r.rows}x{r.cols} one")

    def op_coop_scalar(self, i):
        self.vocabulary(i, "fn", COOP_SCALAR_OPS)

    def op_texture(self, i):
        from .ops import TEXTURE_OPERANDS, TEXTURE_OPS
        from .types import (F32, I32, SamplerType, ScalarType, TextureType, VectorType, texture_result)
        self.vocabulary(i, "fn", TEXTURE_OPS)
        if "out_of_bounds" in i.attrs:
            self.vocabulary(i, "out_of_bounds", ("zero_texel",))
        roles = i.attrs["operands"]
        if not isinstance(roles, (list, tuple)) or len(roles) != len(i.args) or \
                any(r not in TEXTURE_OPERANDS for r in roles) or len(set(roles)) != len(roles):
            self.fail(i, f"texture operands {roles!r} must name each operand once, from {', '.join(TEXTURE_OPERANDS)}")
        of = dict(zip(roles, (a.type for a in i.args)))
        t = of.get("texture")
        if not isinstance(t, TextureType):
            self.fail(i, f"texture needs a texture operand, not {t}")
        fn = i.attrs["fn"]
        want = texture_result(fn, t)
        if i.type != want:
            self.fail(i, f"texture {fn} of a {t} gives {want}, not {i.type}")
        sampling = fn.startswith(("sample", "gather"))
        if sampling != ("sampler" in of) or "sampler" in of and of["sampler"] != SamplerType("compare" in fn):
            self.fail(i, f"texture {fn} {'needs a sampler' + (' comparison' if 'compare' in fn else '') if sampling else 'takes no sampler'}")

        def integer(x, n=1):
            return (isinstance(x, ScalarType) if n == 1 else isinstance(x, VectorType) and x.n == n) \
                and scalar_of(x).name in ("i32", "u32")
        for role, x in of.items():
            n = t.coords if role in ("coords", "ddx", "ddy", "offset") else 1
            if role == "coords" and not sampling or role in ("array_index", "sample_index", "component") \
                    or role == "level" and (not sampling or t.depth and fn != "sample_compare_level"):
                ok = integer(x, n)
            elif role in ("coords", "ddx", "ddy", "level", "depth_ref"):
                ok = x == (F32 if n == 1 else VectorType(F32, n))
            elif role == "offset":
                ok = integer(x, n) and scalar_of(x) == I32
            elif role == "value":
                ok = x == VectorType(t.texel, 4)
            else:
                continue
            if not ok:
                self.fail(i, f"texture {fn}: the {role} operand of a {t} cannot be {x}")
        if t.arrayed != ("array_index" in of) and fn not in ("dimensions", "num_layers", "num_levels", "num_samples"):
            self.fail(i, f"texture {fn} of a {t} {'needs' if t.arrayed else 'takes no'} array_index")

    def vocabulary(self, i, attr: str, names):
        if i.attrs.get(attr) not in names:
            self.fail(i, f"'{i.op}' {attr} {i.attrs.get(attr)!r} is not one of {', '.join(names)}")

    def op_address_ptr(self, i):
        from .types import U64
        if i.args[0].type != U64 or not isinstance(i.type, PointerType) or i.type.space != "storage":
            self.fail(i, f"address_ptr takes a u64 device address and gives a storage pointer, not "
                         f"{i.args[0].type} -> {i.type}")
        align = i.attrs.get("align", 1)
        if not isinstance(align, int) or align < 1 or align & (align - 1):
            self.fail(i, f"address_ptr align {align!r} is not a power of two")

    def op_array_length(self, i):
        from .types import ArrayType
        p = i.args[0].type
        if not (isinstance(p, PointerType) and isinstance(p.pointee, ArrayType) and p.pointee.count is None):
            self.fail(i, f"array_length needs a pointer to a runtime-sized array, not {p}")

    def op_swizzle(self, i):
        from .types import VectorType
        t = i.args[0].type
        comps = i.attrs["components"]
        if not isinstance(t, VectorType) or not isinstance(comps, (list, tuple)) or \
                not all(isinstance(c, int) and 0 <= c < t.n for c in comps):
            self.fail(i, f"swizzle {comps!r} of {t}: components must index the vector")

    def op_access(self, i):
        if not isinstance(i.args[0].type, PointerType) or not isinstance(i.type, PointerType):
            self.fail(i, "access needs and gives pointers")
        t = self.path_ok(i, i.args[0].type.pointee, i.attrs["path"])
        if i.type.pointee != t and not isinstance(t, CoopMatrixType):
            self.fail(i, f"access {i.attrs['path']} of {i.args[0].type} points at {t}, not {i.type.pointee}")
        dyn = sum(1 for s in i.attrs["path"] if s < 0)
        if dyn != len(i.args) - 1:
            self.fail(i, f"access path has {dyn} dynamic indices but {len(i.args) - 1} operands")
        for a in i.args[1:]:
            self.integer(i, "index", a.type)

    def op_global(self, i):
        g = self.m.global_(i.attrs["name"])
        if g is None:
            self.fail(i, f"'global' names @{i.attrs['name']}, which the module does not declare",
                      hint="declare it with a 'global' line, or fix the name")
        if g.space == "handle":
            if i.type != g.type:
                self.fail(i, f"'global' of the {g.type} @{g.name} gives the {g.type} itself, not {i.type}")
            return
        if not isinstance(i.type, PointerType) or i.type.pointee != g.type or i.type.space != g.space:
            self.fail(i, f"'global' of @{g.name} ({g.space}, {g.type}) must give ptr<{g.space}, {g.type}, ...>, "
                         f"not {i.type}")

    def op_override(self, i):
        o = self.m.override(i.attrs["name"])
        if o is None:
            self.fail(i, f"'override' names @{i.attrs['name']}, which the module does not declare",
                      hint="declare it with an 'override' line, or fix the name")
        if i.type != o.type:
            self.fail(i, f"'override' of @{o.name} ({o.type}) cannot give {i.type}")

    def op_call(self, i):
        fn = self.m.function(i.attrs["callee"])
        if fn is None:
            self.fail(i, f"call of unknown function @{i.attrs['callee']}")
        if (fn.ret != VOID) != (i.result is not None):
            self.fail(i, f"call of @{fn.name} {'must' if fn.ret != VOID else 'must not'} produce a value")
        if len(fn.params) != len(i.args) or any(p.type != a.type for p, a in zip(fn.params, i.args)):
            self.fail(i, f"call of @{fn.name} with operands ({', '.join(str(a.type) for a in i.args)}); "
                         f"it takes ({', '.join(str(p.type) for p in fn.params)})")

    def op_coop_coordinate(self, i):
        self.matrices(i, i.args[0].type)
        k = i.args[1].type
        if not (isinstance(k, ScalarType) and k.name in ("u32", "i32")):
            self.fail(i, f"coop_coordinate's index is u32 or i32, not {k}")
        if i.type != VectorType(U32, 2):
            self.fail(i, f"coop_coordinate gives vec2<u32> (row, column), not {i.type}")

    def op_coop_per_element(self, i):
        m = i.args[0].type
        self.matrices(i, m, i.type)
        fn = self.m.function(i.attrs["callee"])
        if fn is None:
            self.fail(i, f"coop_per_element of unknown function @{i.attrs['callee']}")
        want = [None, None, m.elem] + [a.type.elem if isinstance(a.type, CoopMatrixType) else a.type
                                      for a in i.args[1:]]
        got = [p.type for p in fn.params]
        if (len(got) != len(want) or any(g not in (U32, I32) for g in got[:2])
                or any(w is not None and g != w for g, w in zip(got, want)) or fn.ret != m.elem
                or any(isinstance(a.type, CoopMatrixType) and a.type != m for a in i.args[1:])):
            self.fail(i, f"@{fn.name} takes ({', '.join(map(str, got))}) -> {fn.ret}; a per-element function of "
                         f"{m} takes (u32 row, u32 column, {m.elem} element"
                         f"{''.join(', ' + str(w) for w in want[3:])}) -> {m.elem}, matrix operands of {m}")

    def op_coop_mma(self, i):
        a, b, c = (x.type for x in i.args)
        if not all(isinstance(t, CoopMatrixType) for t in (a, b, c)):
            self.fail(i, "coop_mma needs three cooperative matrices")
        if (a.role, b.role, c.role) != ("A", "B", "C"):
            self.fail(i, f"coop_mma needs roles A, B, C; got {a.role}, {b.role}, {c.role}")
        if a.cols != b.rows or (c.rows, c.cols) != (a.rows, b.cols):
            self.fail(i, f"coop_mma shapes do not agree: {a.rows}x{a.cols} x {b.rows}x{b.cols} + {c.rows}x{c.cols}")
        self.config(i, a, b, c)
        sat = bool(i.attrs.get("saturate"))
        if self.profile is not None and sat and self.profile.find_config(
                a.rows, b.cols, a.cols, a.elem.name, c.elem.name, b_type=b.elem.name, saturating=True) is None:
            # Vulkan's configurations say whether the saturating operand must be present
            self.fail(i, f"the device '{self.profile.name}' has no saturating accumulation for "
                         f"{a.elem}x{b.elem}->{c.elem} at M={a.rows} N={b.cols} K={a.cols}",
                      hint="drop the saturating operand (gl_MatrixOperandsSaturatingAccumulation): the "
                           "device's integer accumulation wraps")

    def op_coop_mul(self, i):
        a, b = (x.type for x in i.args)
        self.matrices(i, a, b, i.type)
        self.config(i, a, b, i.type)

    def op_coop_load(self, i):
        self.matrices(i, i.type)
        self.coop_operands(i, i.args[0], i.args[1:3])
        self.matrix_supported(i, i.type)

    def op_coop_store(self, i):
        self.matrices(i, i.args[2].type)
        self.coop_operands(i, i.args[0], (i.args[1], i.args[3]))
        self.matrix_supported(i, i.args[2].type)

    def coop_operands(self, i, ptr, offset_stride):
        if not isinstance(ptr.type, PointerType):
            self.fail(i, f"'{i.op}' needs a pointer, not {ptr.type}")
        for what, a in zip(("offset", "stride"), offset_stride):
            self.integer(i, what, a.type)

    def op_coop_fill(self, i):
        self.matrices(i, i.type)
        self.matrix_supported(i, i.type)

    def op_input(self, i):
        from .ops import INPUTS
        if i.attrs["builtin"] not in INPUTS:
            self.fail(i, f"'input' of unknown builtin {i.attrs['builtin']!r}",
                      hint=f"use one of {', '.join(INPUTS)}")
        n = 3 if i.attrs["builtin"] in VECTOR_INPUTS else 1
        t = i.type
        if not ((t.n == n if isinstance(t, VectorType) else n == 1) and scalar_of(t).name in ("u32", "i32")
                if isinstance(t, (VectorType, ScalarType)) else False):
            self.fail(i, f"the builtin {i.attrs['builtin']} is {'a 3-vector of 32-bit integers' if n == 3 else 'a 32-bit integer'}, "
                         f"not {t}")

    def matrices(self, i, *types):
        for t in types:
            if not isinstance(t, CoopMatrixType):
                self.fail(i, f"'{i.op}' needs cooperative matrices, not {t}")

    def config(self, i, a, b, c):
        if self.profile is None:
            return
        shape = (a.rows, b.cols, a.cols, a.elem.name, c.elem.name)
        flexible = FLEXIBLE_DIMENSIONS in self.m.enables

        def has(p):         # B's type too: i8 x u8 is a configuration of its own (KHR's BType)
            return (a.scope == "subgroup" and p.find_config(*shape, b_type=b.elem.name) is not None
                    or flexible and p.flexible_mma(a, b, c) is not None)
        if not has(self.profile):
            where = self.profile.where_else(has,
                                            f"{a.elem}x{b.elem}->{c.elem} at M={a.rows} N={b.cols} K={a.cols}",
                                            a.elem.is_int or c.elem.is_int)
            self.fail(i, f"the device '{self.profile.name}' has no matrix unit for "
                         f"{a.elem}x{b.elem}->{c.elem} at M={a.rows} N={b.cols} K={a.cols}",
                      hint=where + "\n" + self.profile.describe_configs())

    def matrix_supported(self, i, t: CoopMatrixType):
        if not isinstance(t, CoopMatrixType):
            self.fail(i, f"'{i.op}' needs a cooperative matrix, not {t}")
        if self.profile is None or (t, id(self.profile)) in self.coop_checked:
            return
        flexible = FLEXIBLE_DIMENSIONS in self.m.enables

        def has(p):
            return (t.scope == "subgroup" and p.matrix_config(t) is not None
                    or flexible and p.flexible_for(t) is not None)
        if not has(self.profile):
            what = {"A": "left (A)", "B": "right (B)", "C": "result (C)"}[t.role]
            where = self.profile.where_else(has,
                                            f"a {what} matrix of {t.rows}x{t.cols} {t.elem}", t.elem.is_int)
            self.fail(i, f"the device '{self.profile.name}' has no {what} matrix of {t.rows}x{t.cols} {t.elem}",
                      hint=where + "\n" + self.profile.describe_configs())
        self.coop_checked.add((t, id(self.profile)))


def _runtime_sized(t) -> bool:
    from .types import ArrayType, StructType
    if isinstance(t, ArrayType):
        return t.count is None or _runtime_sized(t.elem)
    return isinstance(t, StructType) and any(_runtime_sized(m.type) for m in t.members)


def _const_mismatch(t, v) -> str | None:
    """Why constant value `v` cannot be of type `t` (None: it can)."""
    from .types import ArrayType, MatrixType, ScalarType, StructType, VectorType
    if isinstance(t, ScalarType):
        if t.name == "bool":
            return None if isinstance(v, bool) else f"{v!r} is not a bool"
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            return f"{v!r} is not a number"
        if t.name in ("i32", "u32", "i8", "u8", "i16", "u16", "i64", "u64") or t.name.startswith(("i", "u")):
            lo, hi = (-(1 << (8 * t.size - 1)), (1 << (8 * t.size - 1)) - 1) if t.name.startswith("i") \
                else (0, (1 << (8 * t.size)) - 1)
            if not isinstance(v, int) or not lo <= v <= hi:
                return f"{v!r} is not a {t.name}"
        return None
    if isinstance(t, (VectorType, ArrayType, MatrixType, StructType)):
        if isinstance(t, VectorType):
            n, elems = t.n, [t.elem] * t.n
        elif isinstance(t, MatrixType):
            n, elems = t.cols, [t.column] * t.cols
        elif isinstance(t, ArrayType):
            if t.count is None:
                return "a runtime-sized array has no constant"
            n, elems = t.count, None
        else:
            n, elems = len(t.members), [m.type for m in t.members]
        if not isinstance(v, (list, tuple)) or len(v) != n:
            return f"expected {n} components"
        for k, x in enumerate(v):
            why = _const_mismatch(elems[k] if elems else t.elem, x)
            if why:
                return why
    return None
