"""Lowering: WGSL syntax tree -> cooperative IR, with name resolution, WGSL's type rules and
constant evaluation. Both cooperative dialects (wgpu's coop_mat and Dawn's subgroup_matrix)
lower to the same IR ops.

Expressions evaluate to one of three things:
- `Const`: a value known now (abstract or concrete), folded with the same numerics the device uses;
- `Val`: an IR value computed at run time;
- `Ref`: a memory reference (WGSL's reference type): a pointer value, read by `load` when used.
"""
from __future__ import annotations

import numpy as np

from ...errors import EmuError
from ...isa.ir import Block, Builder, Function, Global, Module, NoCurrentBlock, Override, Value
from ...isa.types import (ArrayType, AtomicType, BOOL, CoopMatrixType, F16, I32, I64, MatrixType, Member,
                          PointerType, ScalarType, StructType, TupleType, Type, U32, U64, VOID, VectorType,
                          contains, contains_atomic, is_handle, scalar_of, width)
from . import ast as A
from .types import (ABSTRACT_FLOAT, FP8_SPELLING, MATRIX_ELEMS, MAT_RE, SHORTHANDS, HANDLE_TYPES, VEC_RE,
                    WGSL_SCALARS, can_convert, concrete)
from .calls import CallLowering
from .textures import IMPLICIT_LOD, texture_type
from .exprs import ExpressionLowering
from .stmts import StatementLowering
from .values import (BUILTIN_VALUES, COOP_EXTS, VEC2U_ATOMICS, Const, NeedsConstants, Ref, SwizzleRef, Val, _freeze, _map,
                     _all_zero, _name, _returns, _span, _tn, lazy_site, loc_of)
from ...isa.types import MAX_REGISTER_AXES, MAX_VALUE_BYTES, register_axes
from ...isa.constants import coerce_scalar
from ...numerics.dtypes import NP


# Extensions only Tint (Dawn) knows (naga refuses 'enable subgroups;' as unimplemented)
DAWN_ONLY_ENABLES = ("chromium_experimental_subgroup_matrix", "subgroups", "subgroups_f16", VEC2U_ATOMICS)


class Lowerer(StatementLowering, ExpressionLowering, CallLowering):
    def __init__(self, tree: A.Module, file: str, strict: bool = False, override_values: dict | None = None,
                 defer_unset: bool = False, const_eval: str = "wgsl"):
        self.tree, self.file, self.strict = tree, file, strict
        # how const-expressions fold: WGSL's rules, or Dawn's (Tint's host float arithmetic, which
        # quantizes f16 toward zero: emu.numerics.tint)
        from ...numerics import tint
        self.tint = tint if const_eval == "tint" else None
        # None: overrides stay run-time values; a dict: lower with them as constants
        self.override_values = override_values
        # Creating a shader module: an override without a value yet lowers as a placeholder (1);
        # each pipeline lowers again with its constants, where a missing one is the error.
        self.defer_unset = defer_unset
        self.unset_overrides: dict[str, object] = {}     # name -> first use (a node)
        self.unset_sizes: dict[str, object] = {}         # those used in a type: name -> first such use
        self.m = Module(file=file, enables=list(tree.enabled))
        self.b = Builder()
        self.warnings: list[EmuError] = []
        self.decls = {}
        for d in tree.decls:
            name = getattr(d, "name", None)
            if name is None:
                continue
            if name in self.decls:
                self.err(d, f"'{name}' is declared twice at module scope",
                         hint=f"rename one of them (the first is at line {self.decls[name].span.line})")
            self.decls[name] = d
        self.bound: dict[str, tuple] = {}      # module-scope name -> (kind, thing)
        self.resolving: set[str] = set()
        self.scopes: list[dict] = []
        self.fn: A.FnDecl | None = None
        self.ret_type: Type = VOID
        self.loop_depth = 0
        self.switch_depth = 0
        self.in_type = 0
        self.warned_int64 = False
        self.warned_f64 = False
        # (node, type): the type the program declares for the value of `node` (a let's or var's
        # declared type, an assignment's target), for calls that infer from it: coopLoad<_, A>
        self.expected: tuple | None = None

    # -- diagnostics ---------------------------------------------------------------------------
    def err(self, node, message: str, hint: str | None = None):
        raise EmuError(message, _span(node), hint=hint)

    def warn(self, node, message: str, hint: str | None = None):
        self.warnings.append(EmuError(message, _span(node), hint=hint, severity="warning"))

    def require(self, node, ext: str, what: str):
        if ext not in self.m.enables:
            self.err(node, f"{what} needs the '{ext}' extension", hint=f"add 'enable {ext};' at the top of the shader")

    # -- module -----------------------------------------------------------------------------------
    def run(self) -> Module:
        for d in self.tree.directives:
            if isinstance(d, A.EnableDirective) and "f64" in d.names:
                # naga refuses it too (an unknown enable-extension); its f64 is a device feature
                self.err(d, "there is no 'f64' extension to enable: naga's f64 needs no directive (it is wgpu's "
                            "SHADER_F64 device feature, 'shader-f64'), and Tint has no f64",
                         hint="remove 'f64' from the enable directive")
        for e in self.m.enables:
            if e not in ("f16", "subgroups", "subgroups_f16", VEC2U_ATOMICS) + COOP_EXTS:
                self.warn(self.tree.directives[0], f"extension '{e}' is not known to emu; ignored")
        for d in self.tree.decls:
            if isinstance(d, A.ConstAssert):
                self.const_assert(d)
            elif getattr(d, "name", None) is not None and not isinstance(d, A.FnDecl):
                self.resolve(d.name, d)
        graphics = self.graphics_only()
        for d in self.tree.decls:
            if isinstance(d, A.FnDecl) and d.name not in graphics:
                self.resolve(d.name, d)
        # functions in call order: callees first, as they were resolved
        return self.m

    def graphics_only(self) -> set[str]:
        """Vertex and fragment entry points, and the functions only they call: not lowered (emu
        runs compute shaders), so what only graphics may use is refused only when selected. The
        module records the entry points, to name them if a pipeline asks for one."""
        fns = {d.name: d for d in self.tree.decls if isinstance(d, A.FnDecl)}
        calls = {name: {n.name for n in A.walk(d.body) if isinstance(n, A.CallExpr) and n.name in fns}
                 for name, d in fns.items()}

        def reach(roots):
            seen, todo = set(), list(roots)
            while todo:
                n = todo.pop()
                if n not in seen:
                    seen.add(n)
                    todo.extend(calls[n])
            return seen
        graphics = [d for d in fns.values() if d.stage in ("vertex", "fragment")]
        compute = reach(n for n, d in fns.items() if d.stage == "compute")
        for d in graphics:
            self.m.graphics_entries.append((d.name, d.stage, loc_of(d)))
        # a function that reaches textureSample & co. can only serve a fragment shader, called or
        # not (WGSL checks the stage along an entry point's call graph); called from compute, it is
        # lowered and refused at the call
        implicit = {n for n, d in fns.items()
                    if any(isinstance(c, A.CallExpr) and c.name in IMPLICIT_LOD for c in A.walk(d.body))}
        fragment_only = {n for n in fns if reach([n]) & implicit}
        return (reach(d.name for d in graphics) | fragment_only) - compute

    def resolve(self, name: str, node) -> tuple:
        if name in self.bound:
            return self.bound[name]
        d = self.decls.get(name)
        if d is None:
            return None
        if name in self.resolving:
            self.err(node, f"'{name}' refers to itself (a cycle through module-scope declarations)",
                     hint="WGSL allows no recursion and no cyclic declarations")
        self.resolving.add(name)
        saved = (self.scopes, self.fn, self.ret_type, self.b.block, self.loop_depth, self.switch_depth)
        self.scopes, self.fn = [], None
        try:
            if isinstance(d, A.StructDecl):
                r = ("type", self.struct(d))
            elif isinstance(d, A.AliasDecl):
                r = ("type", self.type(d.type))
            elif isinstance(d, A.ConstDecl):
                r = ("const", self.const_decl(d))
            elif isinstance(d, A.OverrideDecl):
                r = ("override", self.override(d))
            elif isinstance(d, A.VarDecl):
                r = ("global", self.global_var(d))
            elif isinstance(d, A.FnDecl):
                r = ("fn", self.function(d))
            else:
                r = None
        except NoCurrentBlock:
            self.err(d, f"'{name}' is declared with a value emu cannot compute when the module is "
                        f"created (module-scope initializers must be constant expressions)",
                     hint="compute it in the entry point instead")
        finally:
            (self.scopes, self.fn, self.ret_type, self.b.block, self.loop_depth, self.switch_depth) = saved
            self.resolving.discard(name)
        self.bound[name] = r
        return r

    def not_too_deep(self, t, node):
        # nested arrays cost one axis however deep; arrays of structs of arrays one per level
        if register_axes(t) > MAX_REGISTER_AXES:
            self.err(node, f"{t if len(str(t)) < 80 else str(t)[:80] + '...'} alternates arrays and structs "
                           f"{register_axes(t)} levels deep; emu allows {MAX_REGISTER_AXES} (WGSL guarantees 15 "
                           f"levels of composite nesting)", hint="flatten the type into a one-dimensional array")
        return t

    def struct(self, d: A.StructDecl) -> StructType:
        members = []
        seen = set()
        for m in d.members:
            if m.name in seen:
                self.err(m, f"struct '{d.name}' has two members named '{m.name}'", hint="rename one of them")
            seen.add(m.name)
            t = self.type(m.type)
            al = self.const_int(m.align) if m.align is not None else None
            sz = self.const_int(m.size) if m.size is not None else None
            if al is not None and (al < 1 or al & (al - 1)):
                self.err(m.align, f"@align({al}) of '{m.name}' is not a power of two", hint="e.g. @align(16)")
            try:
                natural = t.size
            except TypeError:                   # a runtime-sized array: no size to compare
                natural = None
            if sz is not None and (sz < 1 or (natural is not None and sz < natural)):
                self.err(m.size, f"@size({sz}) of '{m.name}' is smaller than its type {t} ({natural} bytes)",
                         hint=f"give at least @size({natural})")
            members.append(Member(m.name, t, al, sz))
        st = self.not_too_deep(StructType(d.name, tuple(members)), d)
        self.m.structs.append(st)
        return st

    def const_decl(self, d) -> Const:
        v = self.expr(d.init)
        if not isinstance(v, Const):
            self.err(d.init, f"const '{d.name}' needs a value known at shader-creation time",
                     hint="use 'let' for values computed at run time")
        if d.type is not None:
            v = self.convert_const(v, self.type(d.type), d.init)
        return v

    def override(self, d: A.OverrideDecl) -> Override:
        t = self.type(d.type) if d.type is not None else None
        oid = self.const_int(d.id) if d.id is not None else None
        given = None
        if self.override_values is not None:
            for key in (d.name, str(oid) if oid is not None else None):
                if key is not None and key in self.override_values:
                    given = self.override_values[key]
        default = None
        if d.init is not None and (given is None or t is None):
            v = self.expr(d.init)
            if not isinstance(v, Const):
                raise NeedsConstants()
            if t is None:
                t = concrete(v.type)
            default = self.convert_const(v, t, d.init).value
        if t is None or not isinstance(t, ScalarType):
            self.err(d, f"override '{d.name}' needs a scalar type", hint=f"write 'override {d.name}: u32 = ...;'")
        if given is not None:
            default = coerce_scalar(t, given, f"override '{d.name}'")
        o = Override(d.name, t, oid, default, loc_of(d))
        self.m.overrides.append(o)
        return o

    def global_var(self, d: A.VarDecl) -> Global:
        space = d.address_space or "handle"
        written = space          # as the shader spells it, for messages
        push = space in ("push_constant", "immediate")
        if push:
            # naga's push constants (newer wgpu spells them var<immediate>): one read-only block
            # the host sets per dispatch. emu binds it like a uniform at the push-constant slot,
            # as for SPIR-V's PushConstant, which --push-constants FILE fills.
            if d.group is not None or d.binding is not None:
                self.err(d, f"var<{space}> '{d.name}' takes no @group/@binding: the host sets push "
                            f"constants apart from bind groups", hint=f"write var<{space}> {d.name}: T;")
            if d.access_mode is not None:
                self.err(d, f"var<{space}, {d.access_mode}>: only var<storage> takes an access mode",
                         hint=f"write var<{space}> (push constants are read-only)")
            space = "uniform"
        # only a workgroup array may be sized by an override the pipeline sets later
        saved, self.defer_unset = self.defer_unset, self.defer_unset and space == "workgroup"
        try:
            t = self.type(d.type) if d.type is not None else None
        finally:
            self.defer_unset = saved
        if is_handle(t) != (space == "handle"):
            self.err(d, f"var<{space}> '{d.name}' cannot hold a {t}" if space != "handle" else
                     f"module-scope var '{d.name}' needs an address space",
                     hint="declare textures and samplers without an address space: "
                          "@group(0) @binding(0) var t: texture_2d<f32>;" if space != "handle" else
                     "write var<storage, read_write>, var<uniform>, var<workgroup> or var<private>")
        if space not in ("private", "workgroup", "uniform", "storage", "handle"):
            self.err(d, f"var<{space}> '{d.name}': '{space}' is not an address space of module-scope "
                        f"variables" if space != "function" else
                     f"var<function> '{d.name}' is only allowed inside a function",
                     hint="write var<storage, read_write>, var<uniform>, var<workgroup>, var<private> "
                          "or var<push_constant> (var<immediate>)")
        if d.access_mode is not None and (space != "storage" or d.access_mode not in ("read", "read_write")):
            self.err(d, f"var<{space}, {d.access_mode}>: " + (
                f"'{d.access_mode}' is not an access mode of storage buffers" if space == "storage"
                else "only var<storage> takes an access mode"),
                hint="write var<storage, read> or var<storage, read_write>" if space == "storage"
                else f"write var<{space}>")
        access = d.access_mode or ("read" if space in ("storage", "uniform") else "read_write")
        if space in ("uniform", "handle"):
            access = "read"
        init = None
        if d.init is not None:
            if space != "private":
                self.err(d.init, f"a var<{written}> cannot have an initializer")
            c = self.expr(d.init)
            if not isinstance(c, Const):
                self.err(d.init, "a module-scope initializer must be a constant expression")
            if t is None:
                t = concrete(c.type)
            init = self.convert_const(c, t, d.init).value
            if lazy_site(init) is not None:
                # a huge zero-valued array (held lazily): a private var starts at zero anyway;
                # one inside a value that is not all zero cannot be written out
                if not _all_zero(init):
                    self.err(d.init, f"{t.name if isinstance(t, StructType) else _tn(t)} is a value of {t.size} bytes; emu allows initializers up to "
                                     f"{MAX_VALUE_BYTES} bytes unless they are all zero",
                             hint="leave the initializer out (a private variable starts at zero) and assign "
                                  "the elements that are not zero")
                init = None
        if t is None:
            self.err(d, f"var '{d.name}' needs a type")
        if contains(t, PointerType):
            self.err(d.type or d, f"var<{space}> '{d.name}' cannot hold a pointer ({t}): WGSL's pointers are not storable",
                     hint="keep the value itself, or pass the pointer to a function as a parameter")
        group = binding = None
        if space == "handle" and d.init is not None:
            self.err(d.init, "a texture or sampler cannot have an initializer")
        if push:
            from ...isa.ir import PUSH_CONSTANTS
            group, binding = PUSH_CONSTANTS
        elif space in ("storage", "uniform", "handle"):
            if d.group is None or d.binding is None:
                self.err(d, f"resource '{d.name}' needs @group and @binding attributes",
                         hint="write @group(0) @binding(N) before 'var'")
            group, binding = self.const_int(d.group), self.const_int(d.binding)
            if contains_atomic(t) and access != "read_write":
                self.err(d, "atomics in storage need access mode read_write")
        elif d.group is not None or d.binding is not None:
            self.err(d, f"@group/@binding only apply to storage and uniform buffers, not var<{space}>")
        if space != "storage" and t is not None and contains(t, AtomicType, lambda a: a.is_vec2u):
            self.err(d.type, f"atomic<vec2<u32>> can only be in the storage address space, not {space}",
                     hint="declare it var<storage, read_write> with @group and @binding")
        if isinstance(t, ArrayType) and t.count is None and space != "storage":
            self.err(d.type, "a runtime-sized array can only live in a storage buffer")
        g = Global(d.name, space, t, access, group, binding, init, loc_of(d))
        # variables of different entry points may share a binding: the pipeline checks its own
        self.m.globals.append(g)
        return g

    def const_assert(self, d: A.ConstAssert):
        v = self.expr(d.expr)
        if not isinstance(v, Const) or v.type != BOOL:
            self.err(d.expr, "const_assert needs a constant bool expression")
        if not v.value:
            self.err(d.expr, "const_assert failed")

    # -- types -------------------------------------------------------------------------------------
    def type(self, te) -> Type:
        if isinstance(te, A.Ident):
            te = te.as_type()
        if not isinstance(te, A.TypeExpr):         # e.g. array<2>: a value where a type goes
            self.err(te, "expected a type here", hint="e.g. array<f32, 2>")
        name, args = te.name, te.args
        if name in WGSL_SCALARS:
            if name == "f16":
                self.require(te, "f16", "the f16 type")
            if name in ("i64", "u64"):
                self.int64_use(te, f"the type {name}")
            if name == "f64":
                self.f64_use(te, "the type f64")
            return WGSL_SCALARS[name]
        if name in ("i8", "u8") and "wgpu_cooperative_matrix" in self.m.enables:
            # naga's 8-bit integers: the storage of 8-bit cooperative matrices (array<i8>)
            return MATRIX_ELEMS[name]
        if name in SHORTHANDS:
            t = SHORTHANDS[name]
            if scalar_of(t) == F16:
                self.require(te, "f16", "the f16 type")
            return t
        m = VEC_RE.match(name)
        if m:
            return VectorType(self.scalar_arg(te, args, 0), int(m.group(1)))
        m = MAT_RE.match(name)
        if m:
            s = self.scalar_arg(te, args, 0)
            if not s.is_float:
                self.err(te, f"matrices hold f32 or f16, not {s}")
            return MatrixType(int(m.group(1)), int(m.group(2)), s)
        if name == "array":
            if not args:
                self.err(te, "array needs an element type", hint="write array<f32, N> or array<f32>")
            elem = self.type(args[0])
            if (isinstance(elem, ArrayType) and elem.count is None) or \
                    getattr(elem, "runtime_array", None) is not None:    # e.g. array<array<u32>, 3>
                self.err(te, f"the elements of an array need a fixed size; {elem} is runtime-sized",
                         hint="only the outermost array of a storage buffer may be runtime-sized")
            count = None
            if len(args) > 1:
                self.in_type += 1
                try:
                    count = self.const_int(args[1], what="array size")
                finally:
                    self.in_type -= 1
                if count <= 0:
                    self.err(args[1], f"array size must be positive, not {count}")
            return self.not_too_deep(ArrayType(elem, count), te)
        if name == "atomic":
            if args and isinstance(v := self.type(args[0]), VectorType) and (v.n, v.elem) == (2, U32):
                # a 64-bit unsigned value that only atomicStoreMax/atomicStoreMin touch
                self.require(te, VEC2U_ATOMICS, "atomic<vec2<u32>>")
                return AtomicType(v)
            s = self.scalar_arg(te, args, 0)
            if s in (I64, U64):
                self.int64_use(te, f"atomic<{s}>")
            elif s not in (I32, U32):
                self.err(te, f"atomic<{s}> is not allowed: atomics hold i32 or u32 (or naga's i64 or u64)")
            return AtomicType(s)
        if name == "ptr":
            space = _name(args[0]) if args else None
            pointee = self.type(args[1]) if len(args) > 1 else None
            if space is None or pointee is None:
                self.err(te, "ptr needs an address space and a type", hint="write ptr<function, f32>")
            access = _name(args[2]) if len(args) > 2 else ("read" if space == "uniform" else "read_write" if space != "storage" else "read")
            if space not in ("function", "private", "workgroup", "uniform", "storage"):
                self.err(te, f"'{space}' is not an address space",
                         hint="use function, private, workgroup, uniform or storage")
            if len(args) > 2 and (space != "storage" or access not in ("read", "read_write")):
                self.err(te, f"ptr<{space}, ..., {access}>: only storage pointers take an access mode "
                             f"(read or read_write)", hint=f"write ptr<{space}, {pointee}>")
            return PointerType(space, pointee, access)
        if name.startswith("coop_mat"):
            return self.naga_coop_type(te)
        if name.startswith("subgroup_matrix_"):
            return self.dawn_coop_type(te)
        if name.startswith(HANDLE_TYPES):
            return texture_type(self, te)
        r = self.resolve(name, te)
        if r is not None and r[0] == "type":
            if args:
                self.err(te, f"'{name}' takes no template arguments")
            return r[1]
        if r is None:
            self.refuse_fp8(te, name)
            self.err(te, f"unknown type '{name}'")
        self.err(te, f"'{name}' is not a type")

    def scalar_arg(self, te, args, i) -> ScalarType:
        if len(args) <= i:
            self.err(te, f"'{te.name}' needs an element type", hint=f"write {te.name}<f32>")
        t = self.type(args[i])
        if not isinstance(t, ScalarType):
            self.err(args[i], f"expected a scalar type, not {t}")
        return t

    def naga_coop_type(self, te) -> CoopMatrixType:
        self.require(te, "wgpu_cooperative_matrix", f"'{te.name}'")
        import re
        m = re.match(r"coop_mat(\d+)x(\d+)$", te.name)
        if not m or len(te.args) != 2:
            self.err(te, f"'{te.name}' is not a cooperative matrix type",
                     hint="write coop_mat16x16<f16, A> (or 8x8); the role is A, B or C")
        cols, rows = int(m.group(1)), int(m.group(2))
        elem = self.matrix_elem(te.args[0])
        role = _name(te.args[1])
        if role not in ("A", "B", "C"):
            self.err(te.args[1], f"cooperative matrix role must be A, B or C, not {role}")
        return CoopMatrixType(rows, cols, elem, role)

    def dawn_coop_type(self, te) -> CoopMatrixType:
        self.require(te, "chromium_experimental_subgroup_matrix", f"'{te.name}'")
        kind = te.name[len("subgroup_matrix_"):]
        if kind not in ("left", "right", "result") or len(te.args) != 3:
            self.err(te, f"'{te.name}' is not a subgroup matrix type",
                     hint="write subgroup_matrix_left<T, K, M>, subgroup_matrix_right<T, N, K> or "
                          "subgroup_matrix_result<T, N, M> (columns before rows)")
        elem = self.matrix_elem(te.args[0])
        cols = self.const_int(te.args[1], what="matrix columns")
        rows = self.const_int(te.args[2], what="matrix rows")
        if rows < 1 or cols < 1:
            self.err(te, f"a subgroup matrix of {cols} columns and {rows} rows: sizes must be positive")
        role = {"left": "A", "right": "B", "result": "C"}[kind]
        return CoopMatrixType(rows, cols, elem, role)

    def refuse_fp8(self, node, name: str):
        """An 8-bit float spelling: WGSL has none (neither Tint nor naga ships one), so emu
        accepts none, and says where FP8 does run."""
        if FP8_SPELLING.match(name or ""):
            self.err(node, f"'{name}': WGSL has no 8-bit float type (no WGSL implementation, Tint/Dawn or "
                           f"naga/wgpu, spells e4m3 or e5m2 yet, and emu invents no spelling)",
                     hint="write the kernel in GLSL (GL_EXT_float_e4m3, GL_EXT_float_e5m2) or SPIR-V "
                          "(SPV_EXT_float8); `emu props NAME` lists the profiles' FP8 configurations")

    def matrix_elem(self, node) -> ScalarType:
        n = _name(node)
        self.refuse_fp8(node, n)
        if n not in MATRIX_ELEMS:
            self.err(node, f"'{n}' cannot be a matrix element type",
                     hint="use one of f16, f32, i32, u32, i8, u8")
        if n == "f16":
            self.require(node, "f16", "f16 matrices")
        return MATRIX_ELEMS[n]

    # -- constants -----------------------------------------------------------------------------
    def const_int(self, e, what: str = "value") -> int:
        v = self.expr(e)
        if isinstance(v, Val) and v.v is not None:
            inst = self._defining(v.v)
            if inst is not None and inst.op == "override":
                return inst.attrs["name"]
        if not isinstance(v, Const) or not isinstance(v.type, ScalarType) or not v.type.is_int:
            self.err(e, f"the {what} must be a constant integer expression")
        return int(v.value)

    def _defining(self, value: Value):
        blk = self.b.block
        if blk is None:
            return None
        for inst in reversed(blk.insts):
            if inst.result is value:
                return inst
        return None

    def convert_const(self, c: Const, t: Type, node) -> Const:
        """An abstract (or matching concrete) constant as type `t`, checking it is representable."""
        if c.type == t:
            return c
        if isinstance(t, ArrayType) and isinstance(c.type, ArrayType):
            if t.count != c.type.count:
                self.err(node, f"cannot use {c.type} as {t}")
            return Const(t, [self.convert_const(Const(c.type.elem, x), t.elem, node).value for x in c.value])
        if isinstance(t, TupleType) and isinstance(c.type, TupleType) and len(t.members) == len(c.type.members):
            # frexp/modf of an abstract float, concretized member by member
            return Const(t, [self.convert_const(Const(cm.type, x), tm.type, node).value
                             for cm, tm, x in zip(c.type.members, t.members, c.value)])
        try:
            cs, ts = scalar_of(c.type), scalar_of(t)
        except TypeError:
            self.err(node, f"cannot use a value of type {_tn(c.type)} as {t}")
        if width(c.type) != width(t) or type(c.type) is not type(t) and not (
                isinstance(c.type, ScalarType) and isinstance(t, ScalarType)):
            if not (isinstance(t, MatrixType) and isinstance(c.type, MatrixType) and
                    (t.cols, t.rows) == (c.type.cols, c.type.rows)):
                self.err(node, f"cannot use a value of type {_tn(c.type)} as {t}")
        if not can_convert(cs, ts):
            self.err(node, f"cannot use a value of type {_tn(c.type)} as {t}",
                     hint=f"convert it explicitly with {ts}(...)")
        return Const(t, _map(c.value, lambda x: self.scalar_value(x, ts, node)))

    def scalar_value(self, x, t: ScalarType, node):
        if t is ABSTRACT_FLOAT:
            return float(x)
        if t.is_int:
            if isinstance(x, float) and not float(x).is_integer():
                self.err(node, f"{x} is not an integer")
            x = int(x)
            lo, hi = (-(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1) if t.kind == "sint" else (0, (1 << t.bits) - 1)
            if not lo <= x <= hi:
                self.err(node, f"{x} does not fit in {t} ({lo}..{hi})",
                         hint="WGSL rejects constants out of range of their type")
            return x
        if t.is_float:
            with np.errstate(over="ignore"):      # said below, in one message
                v = float(np.asarray(float(x), np.float64).astype(NP[t.name]))
                if self.tint and t == F16:      # Tint: to float, then toward zero
                    v = float(self.tint.quantize_f16(np.float32(float(x))))
            if np.isinf(v) and np.isfinite(float(x)):
                self.err(node, f"{x} is out of range of {t}")
            return v
        if t == BOOL:
            return bool(x)
        return x

    def materialize(self, e, t: Type | None = None) -> Value:
        """An IR value for `e` (constants become const ops, references are loaded)."""
        if isinstance(e, Ref):
            return self.emit_load(e)
        if isinstance(e, Val):
            return e.v
        ct = t if t is not None else concrete(e.type)
        site = lazy_site(e.value)
        if site is not None:
            self.err(site if site is not True else None,
                     f"{ct} is a value of {ct.size} bytes; emu allows values up to {MAX_VALUE_BYTES} bytes "
                     f"(a huge zero-valued array is evaluated only where a constant index picks an element)",
                     hint="index it with a constant, or keep large arrays in storage buffers")
        c = self.convert_const(e, ct, None) if ct != e.type else e
        return self.b.op("const", [], ct, value=_freeze(c.value))

    def emit_load(self, r: Ref) -> Value:
        if r.ptype.access == "write":
            self.err(None, "cannot read through a write-only reference")
        if isinstance(r.type, AtomicType):
            if r.type.is_vec2u:
                raise EmuError("an atomic<vec2<u32>> cannot be read: the 'atomic_vec2u_min_max' extension has "
                               "only atomicStoreMax and atomicStoreMin", self.b.loc,
                               hint="keep a copy in a plain vec2<u32> where the shader needs the value")
            return self.b.op("atomic", [r.ptr], r.type.elem, fn="load")
        return self.b.op("load", [r.ptr], r.type)

    def value(self, e):
        """`e` as an rvalue: references are loaded; constants stay constants."""
        if isinstance(e, Ref):
            return Val(self.emit_load(e))
        if isinstance(e, SwizzleRef):
            saved, self.b.loc = self.b.loc, e.loc
            try:
                return Val(self.b.op("swizzle", [self.emit_load(e.ref)], e.type, components=list(e.comps)))
            finally:
                self.b.loc = saved
        return e

    def typed_value(self, node, t: Type | None):
        """`node` as an rvalue where the program declares the type `t` for it."""
        saved, self.expected = self.expected, (A.strip_parens(node), t) if t is not None else None
        try:
            return self.value(self.expr(node))
        finally:
            self.expected = saved

    def expected_type(self, node) -> Type | None:
        return self.expected[1] if self.expected is not None and self.expected[0] is node else None

    # -- functions -------------------------------------------------------------------------------
    def function(self, d: A.FnDecl) -> Function:
        if d.stage in ("vertex", "fragment"):
            self.err(d, f"@{d.stage} entry points are not supported: emu runs compute shaders",
                     hint="emu is a compute-only device")    # reached only through a call of one
        params, builtins = [], {}
        self.fn = d
        self.scopes = [{}]
        body = Block()
        self.b.block = body
        self.b.loc = loc_of(d)
        prelude = []
        for i, p in enumerate(d.params):
            if d.stage == "compute":
                bname = p.builtin
                t = self.type(p.type)
                if bname is not None:
                    want = BUILTIN_VALUES.get(bname)
                    if want is None:
                        self.err(p, f"@builtin({bname}) is not a compute-shader input")
                    if bname in ("subgroup_invocation_id", "subgroup_size", "subgroup_id", "num_subgroups"):
                        self.subgroup_use(p, f"@builtin({bname})")
                    if t != want:
                        self.err(p.type, f"@builtin({bname}) has type {want}, not {t}")
                    v = self.b.value(t, p.name)
                    builtins[len(params)] = bname
                    params.append(v)
                    self.scopes[-1][p.name] = Val(v)
                elif isinstance(t, StructType):
                    vals = []
                    for m, sm in zip(t.members, self.struct_decl(t).members):
                        bn = sm.builtin
                        if bn is None or BUILTIN_VALUES.get(bn) != m.type:
                            self.err(sm, "every member of an entry-point input struct needs a matching @builtin")
                        v = self.b.value(m.type, f"{p.name}.{m.name}")
                        builtins[len(params)] = bn
                        params.append(v)
                        vals.append(v)
                    prelude.append((p.name, t, vals))
                else:
                    self.err(p, f"entry-point parameter '{p.name}' needs a @builtin attribute")
            else:
                t = self.type(p.type)
                if isinstance(t, PointerType) and t.space not in ("function", "private", "workgroup", "storage", "uniform"):
                    self.err(p.type, f"bad address space {t.space}")
                v = self.b.value(t, p.name)
                params.append(v)
                self.scopes[-1][p.name] = Val(v)
        for name, t, vals in prelude:
            self.scopes[-1][name] = Val(self.b.op("construct", vals, t))
        self.ret_type = self.type(d.return_type) if d.return_type is not None else VOID
        if d.stage == "compute" and self.ret_type != VOID:
            self.err(d.return_type, "a compute entry point returns nothing")
        wg = None
        if d.stage == "compute":
            sizes = d.workgroup_size
            if not sizes:
                self.err(d, "a compute entry point needs @workgroup_size",
                         hint="add @workgroup_size(64) (or x, y, z) before 'fn'")
            if len(sizes) > 3:
                self.err(d, f"@workgroup_size takes 1 to 3 sizes (x, y, z), not {len(sizes)}",
                         hint="write @workgroup_size(x), (x, y) or (x, y, z)")
            wg = tuple([self.workgroup_dim(s) for s in sizes] + [1] * (3 - len(sizes)))
            lane_ids = sorted({"subgroup_invocation_id", "subgroup_id"} & set(builtins.values()))
            if self.strict and lane_ids and any(isinstance(s, int) and s > 1 for s in wg[1:]):
                # naga's validator refuses these with a 2-D or 3-D workgroup; Tint accepts them
                self.warn(d, f"@builtin({lane_ids[0]}) with a multi-dimensional @workgroup_size: Tint (Dawn, "
                             f"Chrome) accepts this, naga (wgpu, Firefox) rejects it",
                          hint="use a one-dimensional @workgroup_size(x) to run on every WebGPU implementation")
        fn = Function(d.name, params, self.ret_type, body, d.stage, wg, builtins, loc_of(d))
        self.block_stmts(d.body.body)
        if self.ret_type != VOID and not _returns(d.body.body):
            self.err(d, f"function '{d.name}' must return a {self.ret_type} on every path",
                     hint="end the function with a return statement")
        self.m.functions.append(fn)
        return fn

    def struct_decl(self, t: StructType) -> A.StructDecl:
        return self.decls[t.name]

    def workgroup_dim(self, e):
        v = self.expr(e)
        if isinstance(v, Const):
            c = self.convert_const(v, concrete(v.type), e)
            if not isinstance(c.type, ScalarType) or not c.type.is_int or c.value < 1:
                self.err(e, "workgroup size must be a positive integer")
            return int(c.value)
        if isinstance(v, Val):
            inst = self._defining(v.v)
            if inst is not None and inst.op == "override":
                self.b.block.insts.remove(inst)
                return inst.attrs["name"]
        self.err(e, "workgroup size must be a constant or an override",
                 hint="emu supports @workgroup_size(N) with N a constant expression or an override name")

    def int64_use(self, node, what: str):
        # naga's 64-bit integers (wgpu's SHADER_INT64 feature); WGSL and Tint have none
        if self.strict and not self.warned_int64:
            self.warned_int64 = True
            self.warn(node, f"{what}: 64-bit integers are naga's (wgpu's SHADER_INT64 feature); Tint (Dawn, "
                            f"Chrome) has none", hint="use i32/u32 (or vec2<u32>) to run on every WebGPU implementation")

    def f64_use(self, node, what: str):
        # naga's 64-bit floats (wgpu's SHADER_F64 feature); WGSL and Tint have none, so a module
        # written for Dawn (an extension only Tint knows) cannot hold one
        dawn = next((d for d in self.tree.directives if isinstance(d, A.EnableDirective)
                     for e in d.names if e in DAWN_ONLY_ENABLES or e.startswith("chromium_")), None)
        if dawn is not None:
            ext = next(e for e in dawn.names if e in DAWN_ONLY_ENABLES or e.startswith("chromium_"))
            self.err(node, f"{what}: f64 is naga's (wgpu's SHADER_F64 feature) and Tint (Dawn, Chrome) has none, "
                           f"but this module enables '{ext}' (line {dawn.span.line}), which only Tint knows: "
                           f"no WebGPU implementation runs it",
                     hint="compute in f32 in a Dawn shader, or drop the Dawn extension to run it as a wgpu shader")
        if self.strict and not self.warned_f64:
            self.warned_f64 = True
            self.warn(node, f"{what}: 64-bit floats are naga's (wgpu's SHADER_F64 feature); Tint (Dawn, "
                            f"Chrome) has none", hint="use f32 to run on every WebGPU implementation")

    def subgroup_use(self, node, what: str):
        if "subgroups" not in self.m.enables:
            # naga runs subgroup operations without the directive, Tint requires it.
            if self.strict:
                self.warn(node, f"{what} used without 'enable subgroups;': naga accepts this, Tint (Dawn, Chrome) rejects it",
                          hint="add 'enable subgroups;' to run on every WebGPU implementation")
