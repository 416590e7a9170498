"""IR -> WGSL: the emitter that sends a shader the emulator parsed to a real GPU.

    text = emit(module, dialect="dawn")          # or "wgpu"
    text = emit_source(src, "k.wgsl", "wgpu")    # parse, lower, emit
    canonical_ir(module)                         # IR text for comparing two modules

One rule per op of the op table (``EMIT_RULES[op]``, a test asserts the coverage). The output is
plain WGSL that the emulator's own front end lowers back to the same IR: every SSA value becomes a
``let`` whose initializer lowers to exactly the instruction it came from, memory goes through
pointer ``let``s (``let _v7 = &a;``, ``let _v9 = &(*_v7)[_v8];``), structured control flow maps
back to ``if``/``loop``/``switch``, and constants are written bit-exactly (hexadecimal floats;
NaN and infinities through ``bitcast``). Where WGSL has no word for an IR value the emitter
rebuilds the source construct the front end lowered: a reference to a vector component (WGSL
cannot take its address) is written where it is loaded or stored, ``a && b`` / ``a || b`` (lowered
to a temporary, an ``if`` and a load) becomes the short-circuit expression again.

Cooperative ops are written in the chosen dialect: Dawn's ``subgroupMatrixLoad<T, row_major>(&a,
off, stride)`` family or wgpu's (naga's) ``coopLoadT<T>(&a[off], stride)`` family. An op that the
target dialect cannot express (wgpu has no scalar-matrix ops, no multiply without accumulator,
only 8x8 and 16x16 matrices of f16/f32/i32/u32) is an ``EmitError`` that names it.

``canonical_ir`` prints a module without locations, with values renumbered in order of first
appearance and the side-effect-free instructions (constants, address computations, arithmetic)
placed just before their first use in their block, so that two modules that compute the same
thing in the same order of memory accesses and control flow print the same text.
"""
from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass

import numpy as np

from ..errors import EmuError
from ..isa.ir import Block, Function, Inst, Module, Value
from ..isa.ops import ATOMIC, OP, OPS
from ..frontend.wgsl.names import ATOMIC_FNS, BIN_OPS, COMPOUND, SUBGROUP_FNS, TEXTURE_FNS
from ..isa.types import (BOOL, ArrayType, AtomicType, CoopMatrixType, MatrixType, PointerType,
                         ScalarType, StructType, TupleType, Type, VectorType, contains, is_handle)

__all__ = ["emit", "emit_source", "EMIT_RULES", "EmitError", "DIALECTS", "canonical_ir",
           "dialect_of", "COOP_EXTENSION"]

DIALECTS = ("dawn", "wgpu")
COOP_EXTENSION = {"dawn": "chromium_experimental_subgroup_matrix", "wgpu": "wgpu_cooperative_matrix"}
_COOP_EXTS = set(COOP_EXTENSION.values())

BIN_SYMBOL = {op: symbol for symbol, op in BIN_OPS.items()}
_COMPOUND = tuple(BIN_OPS[op] for op in COMPOUND.values())   # binary fns with an `op=` form
# WGSL spellings: the front end's tables read backwards, so both directions stay one table
_SUBGROUP_NAMES = {op: name for name, op in SUBGROUP_FNS.items()}
_ATOMIC_NAMES = {op: name for name, op in ATOMIC_FNS.items()}
_BARRIERS = {"workgroup": "workgroupBarrier", "storage": "storageBarrier", "texture": "textureBarrier",
             "subgroup": "subgroupBarrier"}
_SCALAR_OPS = {"add": "subgroupMatrixScalarAdd", "sub": "subgroupMatrixScalarSubtract",
               "mul": "subgroupMatrixScalarMultiply"}
_SUBGROUP_BUILTINS = ("subgroup_invocation_id", "subgroup_size", "subgroup_id", "num_subgroups")
_PREDECLARED = frozenset(
    ["bool", "f16", "f32", "i32", "u32", "array", "atomic", "ptr", "bitcast", "select", "arrayLength"]
    + [f"vec{n}" for n in (2, 3, 4)] + [f"vec{n}{s}" for n in (2, 3, 4) for s in "fhiu"]
    + [f"mat{c}x{r}" for c in (2, 3, 4) for r in (2, 3, 4)]
    + [f"mat{c}x{r}{s}" for c in (2, 3, 4) for r in (2, 3, 4) for s in "fh"])
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class EmitError(EmuError):
    """An IR construct the chosen WGSL dialect cannot express."""


def dialect_of(module: Module) -> str:
    """The cooperative dialect a module was written in ('wgpu' or 'dawn'; 'dawn' when neither)."""
    return "wgpu" if COOP_EXTENSION["wgpu"] in module.enables else "dawn"


def emit(module: Module, dialect: str = "dawn", *, complete_enables: bool = True,
         header: bool = True) -> str:
    """WGSL text for `module` in `dialect` ('dawn' or 'wgpu').

    complete_enables: add the directives the target compiler needs and the module lacks
    (``enable subgroups;`` for Tint where subgroup operations or builtins are used).
    """
    if dialect not in DIALECTS:
        raise EmitError(f"unknown WGSL dialect {dialect!r}", hint="use --dialect dawn or --dialect wgpu")
    return _Emitter(module, dialect, complete_enables, header).run()


def emit_source(source: str, file: str = "<input>", dialect: str | None = None, **kw) -> str:
    """Parse and lower a WGSL shader and emit it again (in its own dialect when None)."""
    from ..frontend.wgsl import compile_source
    module, _ = compile_source(source, file)
    return emit(module, dialect or dialect_of(module), **kw)


# =============================================================================== constants

def _nonfinite_bits(v: float, t: ScalarType) -> tuple[int, bool]:
    """The u32 whose bitcast gives NaN/inf `v` as f32, and whether an f16 conversion follows
    (f16 has no 16-bit bitcast source: an f32 of the same class converts to it)."""
    if t.name == "f32":
        return _float_bits(v, t), False
    return (0xFF800000 if v < 0 else 0x7F800000) if math.isinf(v) else 0x7FC00000, True


def _float_literal(v: float, t: ScalarType) -> str:
    suffix = "f" if t.name == "f32" else "h"
    v = float(v)
    if math.isnan(v) or math.isinf(v):
        # (only where a run-time value is allowed: a const-expression may not be NaN or infinite;
        # the emitter writes these through a `let`, see _Emitter.literal)
        bits, via = _nonfinite_bits(v, t)
        text = f"bitcast<f32>({bits:#010x}u)"
        return f"f16({text})" if via else text
    dt = np.float32 if t.name == "f32" else np.float16
    if float(dt(v)) != v:
        raise EmitError(f"the constant {v!r} is not a {t} value")
    if v == 0.0:
        return ("-" if math.copysign(1.0, v) < 0 else "") + f"0.0{suffix}"
    sign = "-" if v < 0 else ""
    if t.name == "f16":
        # exact decimal: naga reads no hexadecimal f16 literals (every f16 is a short decimal)
        from decimal import Decimal
        text = format(Decimal(abs(v)), "f")
        return f"{sign}{text if '.' in text else text + '.0'}h"
    h = float.hex(abs(v))                  # '0x1.8000000000000p+1'
    mant, exp = h[2:].split("p")
    if "." in mant:
        whole, frac = mant.split(".")
        frac = frac.rstrip("0")
        mant = whole + ("." + frac if frac else "")
    return f"{sign}0x{mant}p{exp}{suffix}"


def _float_bits(v: float, t: ScalarType) -> int:
    if t.name == "f32":
        return int(np.array(v, np.float32).view(np.uint32))
    return int(np.array(v, np.float16).view(np.uint16))


# =============================================================================== bindings

@dataclass
class _Ref:
    """How emitted code refers to an IR value."""
    kind: str                  # 'value' | 'ptr' | 'place' (a vector-component reference) | 'inline'
    expr: str = ""             # value expression; for 'ptr' the pointer expression
    place: str = ""            # for 'ptr' and 'place': the reference (memory view) expression


class _Fail(Exception):
    """An expression reconstruction that does not lower back to the same instructions."""


def _is_pure(i: Inst) -> bool:
    d = OPS.get(i.op)
    return d is not None and not d.effects and i.op != OP.load


# =============================================================================== the emitter

class _Emitter:
    def __init__(self, module: Module, dialect: str, complete_enables: bool, header: bool):
        self.m, self.d, self.complete, self.header = module, dialect, complete_enables, header
        self.out: list[str] = []
        self.indent = 0
        self.pre: list[str] | None = None     # run-time lets a constant needs (NaN, infinity)
        names = {s.name for s in module.structs} | {g.name for g in module.globals} | \
            {o.name for o in module.overrides} | {f.name for f in module.functions}
        for f in module.functions:
            for i in f.walk():
                if i.op == OP.var and isinstance(i.attrs.get("name"), str):
                    names.add(i.attrs["name"])
        self.module_names = names
        prefix = "_"
        while any(re.match(rf"^{re.escape(prefix)}([vptn]\d+|in_)", n) for n in names):
            prefix += "e"
        self.P = prefix

    # -- output ----------------------------------------------------------------------------------
    def line(self, text: str):
        self.out.append("  " * self.indent + text)

    def fail(self, inst: Inst | None, message: str, hint: str | None = None):
        raise EmitError(message, inst.loc if inst is not None else None, hint=hint)

    # -- types -----------------------------------------------------------------------------------
    def ty(self, t: Type, inst: Inst | None = None) -> str:
        if isinstance(t, ScalarType):
            if t.name in ("bf16", "i8", "u8", "i16", "u16", "e4m3", "e5m2", "e2m1"):
                self.fail(inst, f"WGSL has no {t} values ({t} exists in SPIR-V and inside cooperative matrices)",
                          hint="run the SPIR-V itself (emu diff --backend vulkan), or use 32-bit integers")
            if t.name == "f64" and self.d == "dawn":
                self.fail(inst, "f64 is naga's (wgpu's SHADER_F64 feature): Tint (Dawn) has no 64-bit floats",
                          hint="emit with --dialect wgpu, or compute in f32")
            return t.name
        if isinstance(t, VectorType):
            return f"vec{t.n}<{self.ty(t.elem, inst)}>"
        if isinstance(t, MatrixType):
            return f"mat{t.cols}x{t.rows}<{self.ty(t.elem, inst)}>"
        if isinstance(t, ArrayType):
            return f"array<{self.ty(t.elem, inst)}>" if t.count is None else \
                f"array<{self.ty(t.elem, inst)}, {t.count}>"
        if isinstance(t, TupleType):
            self.fail(inst, f"the result type of {t.name.strip('_')} has no name in WGSL")
        if isinstance(t, StructType):
            return t.name
        if isinstance(t, AtomicType):
            return f"atomic<{t.elem}>"
        if isinstance(t, PointerType):
            acc = f", {t.access}" if t.space == "storage" else ""
            return f"ptr<{t.space}, {self.ty(t.pointee, inst)}{acc}>"
        if isinstance(t, CoopMatrixType):
            return self.coop_ty(t, inst)
        if is_handle(t):
            return str(t)       # the IR writes textures and samplers as WGSL does
        self.fail(inst, f"type {t} has no WGSL spelling")

    def coop_ty(self, t: CoopMatrixType, inst=None) -> str:
        if self.d == "dawn":
            kind = {"A": "left", "B": "right", "C": "result"}[t.role]
            return f"subgroup_matrix_{kind}<{t.elem}, {t.cols}, {t.rows}>"
        # naga spells any shape coop_mat{cols}x{rows} (its rectangular inputs: 16x8, 8x16, 16x32)
        if t.elem.name not in ("f16", "f32", "i32", "u32", "i8", "u8"):
            self.fail(inst, f"the wgpu dialect has no {t.elem} cooperative matrices ({t})",
                      hint="emit with --dialect dawn")
        return f"coop_mat{t.cols}x{t.rows}<{t.elem}, {t.role}>"

    def literal(self, t: Type, v, inst=None) -> str:
        if isinstance(t, ScalarType):
            if t.name == "bool":
                return "true" if v else "false"
            if t.name == "u32":
                return f"{int(v)}u"
            if t.name == "i32":
                v = int(v)
                return "i32(-2147483648)" if v == -(1 << 31) else f"{v}i"
            if t.name == "u64":                 # naga's 64-bit literals
                return f"{int(v)}lu"
            if t.name == "i64":
                v = int(v)
                return "(-9223372036854775807li - 1li)" if v == -(1 << 63) else f"{v}li"
            if t.name == "f64":
                self.ty(t, inst)                # (refused in the Dawn dialect)
                v = float(v)
                if math.isfinite(v):            # the shortest decimal that reads back as v
                    return f"{v!r}lf"
                bits = int(np.array(v, np.float64).view(np.uint64))
                return f"bitcast<f64>({bits:#018x}lu)"
            if t.name in ("f32", "f16"):
                if not math.isfinite(float(v)):
                    # WGSL const-expressions cannot be NaN or infinite (Tint rejects even
                    # bitcast<f32>(0x7f800000u)): the bits go through a run-time `let`
                    if getattr(self, "pre", None) is None:
                        self.fail(inst, f"a {t} NaN or infinity cannot be written in a module-scope "
                                        f"initializer (WGSL const-expressions are finite)")
                    bits, via = _nonfinite_bits(float(v), t)
                    name = f"{self.P}n{len(self.pre)}_{inst.result.id if inst is not None and inst.result is not None else 0}"
                    self.pre.append(f"let {name} = {bits:#010x}u;")
                    return f"f16(bitcast<f32>({name}))" if via else f"bitcast<f32>({name})"
                return _float_literal(v, t)
            self.fail(inst, f"a constant of type {t} has no WGSL spelling")
        if isinstance(t, VectorType):
            return f"{self.ty(t, inst)}({', '.join(self.literal(t.elem, x, inst) for x in v)})"
        if isinstance(t, MatrixType):
            return f"{self.ty(t, inst)}({', '.join(self.literal(t.column, c, inst) for c in v)})"
        if isinstance(t, ArrayType):
            return f"{self.ty(t, inst)}({', '.join(self.literal(t.elem, x, inst) for x in v)})"
        if isinstance(t, StructType) and not isinstance(t, TupleType):
            return f"{t.name}({', '.join(self.literal(m.type, x, inst) for m, x in zip(t.members, v))})"
        self.fail(inst, f"a constant of type {t} has no WGSL spelling")

    # -- module ----------------------------------------------------------------------------------
    def run(self) -> str:
        m = self.m
        if self.header:
            self.line(f"// emitted by emu from {m.file} (IR -> WGSL, {self.d} dialect)")
        if self.complete and self.d == "dawn":
            ops = {i.op for f in m.functions for i in f.walk()}
            if OP.subgroup in ops:
                # emu defines subgroup operations in divergent control flow (over the active lanes);
                # Tint rejects them unless this rule is off, which is what a differential test wants
                self.line("diagnostic(off, subgroup_uniformity);")
            if any(OPS[o].cooperative for o in ops):
                # Tint proves subgroup uniformity from workgroup uniformity only: a tile offset
                # computed from local_invocation_index / subgroup_size fails that proof (the
                # diagnostic defaults to error). emu checks subgroup uniformity at run time.
                # Tint's resolver knows the rule only in the "chromium" namespace and ignores any
                # other (the chromium_experimental spelling left the check on, on the H200)
                self.line("diagnostic(off, chromium.subgroup_matrix_uniformity);")
        for e in self.enables():
            self.line(f"enable {e};")
        for s in m.structs:
            self.line(f"struct {s.name} {{")
            for mem in s.members:
                attrs = (f"@align({mem.align_attr}) " if mem.align_attr else "") + \
                        (f"@size({mem.size_attr}) " if mem.size_attr else "")
                self.line(f"  {attrs}{mem.name}: {self.ty(mem.type)},")
            self.line("}")
        for o in m.overrides:
            text = (f"@id({o.id}) " if o.id is not None else "") + f"override {o.name}: {self.ty(o.type)}"
            if o.default is not None:
                text += f" = {self.literal(o.type, o.default)}"
            self.line(text + ";")
        for g in m.globals:
            if g.aliased:
                self.fail(None, f"var<workgroup> '{g.name}' aliases the other workgroup blocks (SPIR-V's "
                                f"WorkgroupMemoryExplicitLayoutKHR): WGSL has no aliased variables",
                          hint="run the SPIR-V module with --backend vulkan")
            if g.space == "storage":
                decl = f"@group({g.group}) @binding({g.binding}) var<storage, {g.access}>"
            elif g.space == "uniform":
                decl = f"@group({g.group}) @binding({g.binding}) var<uniform>"
            elif g.space == "handle":
                decl = f"@group({g.group}) @binding({g.binding}) var"
            else:
                decl = f"var<{g.space}>"
            text = f"{decl} {g.name}: {self.ty(g.type)}"
            if g.init is not None:
                text += f" = {self.literal(g.type, g.init)}"
            self.line(text + ";")
        for f in m.functions:
            self.function(f)
        return "\n".join(self.out) + "\n"

    def enables(self) -> list[str]:
        out = []
        uses_coop = any(OPS[i.op].cooperative for f in self.m.functions for i in f.walk()) or \
            any(contains(g.type, CoopMatrixType) for g in self.m.globals)
        for e in self.m.enables:
            e2 = COOP_EXTENSION[self.d] if e in _COOP_EXTS else e
            if e2 not in out:
                out.append(e2)
        if self.complete:
            if uses_coop and COOP_EXTENSION[self.d] not in out:
                out.append(COOP_EXTENSION[self.d])
            # Dawn's subgroup matrices need the device feature 'subgroups' too (maxSubgroupSize):
            # the directive makes the runner request it
            if self.d == "dawn" and "subgroups" not in out and (self.uses_subgroups() or uses_coop):
                out.append("subgroups")
        return out

    def uses_subgroups(self) -> bool:
        for f in self.m.functions:
            if any(b in _SUBGROUP_BUILTINS for b in f.param_builtins.values()):
                return True
            if any(i.op == OP.subgroup or (i.op == OP.input and i.attrs["builtin"] in _SUBGROUP_BUILTINS)
                   for i in f.walk()):
                return True
        return False

    # -- functions -------------------------------------------------------------------------------
    def function(self, f: Function):
        self.f = f
        self.refs: dict[int, _Ref] = {}
        self.skip: set[int] = set()
        self.plans: dict[int, str] = {}      # id(store) -> statement written in its place
        self.uses: dict[int, list[Inst]] = {}
        self.defs: dict[int, Inst] = {}
        self.used_names: dict[str, int] = {}     # module-scope name -> its last use (program order)
        self.order: dict[int, int] = {}           # id(inst) -> its place in program order
        for n, i in enumerate(f.walk()):
            self.order[id(i)] = n
            for a in i.args:
                self.uses.setdefault(a.id, []).append(i)
            if i.result is not None:
                self.defs[i.result.id] = i
            if i.op in (OP.global_, OP.override):
                self.used_names[i.attrs["name"]] = n
            elif i.op == OP.call:
                self.used_names[i.attrs["callee"]] = n
            elif i.op == OP.builtin:
                self.used_names[i.attrs["fn"]] = n
            for t in [i.type] + [a.type for a in i.args]:
                if isinstance(t, StructType):
                    self.used_names[t.name] = n
        for i in f.walk():                        # a global's name is spelled where its pointer is used
            if i.op in (OP.global_, OP.override):
                last = max((self.order[id(u)] for u in self.uses.get(i.result.id, [])), default=0)
                self.used_names[i.attrs["name"]] = max(self.used_names[i.attrs["name"]], last)
        # constants that must stay constant expressions in WGSL (Tint: subgroupBroadcast's lane)
        # and a texture gather's component and a sampling offset
        for i in f.walk():
            const_args = [i.args[1]] if i.op == OP.subgroup and i.attrs["fn"] == "broadcast" and len(i.args) == 2 \
                else [a for a, r in zip(i.args, i.attrs["operands"]) if r in ("component", "offset")] \
                if i.op == OP.texture else []
            for a in const_args:
                d = self.defs.get(a.id)
                if d is not None and d.op == OP.const and len(self.uses[a.id]) == 1:
                    self.refs[d.result.id] = _Ref("inline", self.literal(d.type, d.attrs["value"], d))
                    self.skip.add(id(d))
        # `T()` for a zero-filled matrix (the front end lowers it to const 0 + coop_fill)
        self.zero_fill: set[int] = set()
        for i in f.walk():
            if i.op == OP.coop_fill:
                d = self.defs.get(i.args[0].id)
                if d is not None and d.op == OP.const and len(self.uses[i.args[0].id]) == 1 and \
                        d.attrs["value"] == 0 and not (isinstance(d.attrs["value"], float) and
                                                       math.copysign(1.0, d.attrs["value"]) < 0):
                    self.zero_fill.add(id(i))
                    self.skip.add(id(d))
        params = []
        extra_inputs = {}
        for i in f.walk():
            if i.op == OP.input:
                if f.stage != "compute":
                    self.fail(i, f"the builtin input {i.attrs['builtin']} is used in '{f.name}', which "
                                 f"is not an entry point; WGSL reads builtins as entry-point parameters")
                extra_inputs.setdefault(i.attrs["builtin"], i.type)
        for n, p in enumerate(f.params):
            name = f"{self.P}p{n}"
            if isinstance(p.type, PointerType):
                self.refs[p.id] = _Ref("ptr", name, f"(*{name})")
            else:
                self.refs[p.id] = _Ref("value", name)
            attr = f"@builtin({f.param_builtins[n]}) " if n in f.param_builtins else ""
            params.append(f"{attr}{name}: {self.ty(p.type)}")
        for b, t in extra_inputs.items():
            params.append(f"@builtin({b}) {self.P}in_{b}: {self.ty(t)}")
        head = f"fn {f.name}({', '.join(params)})"
        if f.ret is not None and str(f.ret) != "void":
            head += f" -> {self.ty(f.ret)}"
        if f.stage == "compute":
            wg = ", ".join(str(x) for x in f.workgroup_size)
            self.line(f"@compute @workgroup_size({wg})")
        elif f.stage is not None:
            self.fail(None, f"@{f.stage} entry points cannot be emitted (compute only)")
        self.line(head + " {")
        self.indent += 1
        self.scopes: list[list] = []
        self.block(f.body)
        self.indent -= 1
        self.line("}")

    # -- blocks and scopes -----------------------------------------------------------------------
    def block(self, b: Block, can_nest: bool = True, tail=None, tail_uses: frozenset = frozenset()):
        """`tail` (a loop's continuing) is written after the block's own braces close; a fresh
        scope may still open where nothing declared from there on is one of `tail_uses`."""
        frame = [set(), 0, can_nest, tail_uses, b]     # names here, extra braces opened, may nest
        self.scopes.append(frame)
        saved = getattr(self, "cur", None)
        for idx, inst in enumerate(b.insts):
            if id(inst) in self.skip:
                continue
            self.cur = (b, idx)
            rule = EMIT_RULES.get(inst.op)
            if rule is None:
                self.fail(inst, f"no emitter rule for the op '{inst.op}'")
            rule(self, inst)
        for _ in range(frame[1]):
            self.indent -= 1
            self.line("}")
        if tail is not None:
            tail()
        self.scopes.pop()
        self.cur = saved

    def declare_var(self, inst: Inst) -> str:
        """A WGSL name for a function variable: its own name where WGSL allows it here."""
        want = inst.attrs.get("name")
        frame = self.scopes[-1]
        ok = isinstance(want, str) and _IDENT.match(want) is not None and want not in _reserved() \
            and not want.startswith("__") and want != "_" and self.used_names.get(want, -1) < self.order[id(inst)] \
            and want not in _PREDECLARED and not want.startswith(self.P + "t")
        if ok and want in frame[0]:
            if frame[2] or self._rest_unused_by_tail(frame):
                self.line("{")          # a fresh scope holds the rest of the block
                self.indent += 1
                frame[1] += 1
                frame[0] = set()
            else:
                ok = False
        name = want if ok else f"{self.P}t{inst.result.id}"
        frame[0].add(name)
        return name

    def _rest_unused_by_tail(self, frame) -> bool:
        """Whether a loop's continuing uses nothing the rest of its body (from here) defines: then
        a sibling's name can take a fresh scope that closes before the continuing."""
        b, (_, at) = frame[4], self.cur
        if self.cur[0] is not b or not frame[3]:
            return self.cur[0] is b
        defined = {x.result.id for inst in b.insts[at:] for x in inst.walk() if x.result is not None}
        return not (defined & frame[3])

    # -- references ------------------------------------------------------------------------------
    def ref(self, v: Value, inst: Inst | None = None) -> _Ref:
        r = self.refs.get(v.id)
        if r is None:
            self.fail(inst, f"%{v.id} is used before the emitter defined it")
        return r

    def val(self, v: Value, inst: Inst | None = None) -> str:
        r = self.ref(v, inst)
        if r.kind == "place":
            self.fail(inst, "a reference to a vector component cannot be a value in WGSL")
        return r.expr

    def ptr(self, v: Value, inst: Inst | None = None) -> str:
        r = self.ref(v, inst)
        if r.kind == "place":
            self.fail(inst, "WGSL cannot take the address of a vector component",
                      hint="load or store the component where it is used")
        return r.expr

    def place(self, v: Value, inst: Inst | None = None) -> str:
        r = self.ref(v, inst)
        if r.kind not in ("ptr", "place"):
            self.fail(inst, f"%{v.id} is not a pointer")
        return r.place

    def let(self, inst: Inst, expr: str):
        name = f"{self.P}v{inst.result.id}"
        self.line(f"let {name} = {expr};")
        if isinstance(inst.type, PointerType):
            self.refs[inst.result.id] = _Ref("ptr", name, f"(*{name})")
        else:
            self.refs[inst.result.id] = _Ref("value", name)

    # -- access paths ----------------------------------------------------------------------------
    def path_steps(self, base_t: Type, path, dyn: list[str], inst) -> tuple[list[str], bool]:
        """WGSL selectors for an access/extract path, and whether a step enters a vector."""
        steps, t, into_vector, k = [], base_t, False, 0
        for s in path:
            if isinstance(t, (StructType, TupleType)):
                if s < 0:
                    self.fail(inst, "a struct member cannot be chosen at run time")
                name = t.members[s].name if isinstance(t, StructType) else t.fields[s][0]
                t = t.members[s].type if isinstance(t, StructType) else t.fields[s][1]
                steps.append(f".{name}")
                continue
            idx = dyn[k] if s < 0 else str(s)
            if s < 0:
                k += 1
            if isinstance(t, VectorType):
                into_vector, t = True, t.elem
            elif isinstance(t, MatrixType):
                t = t.column
            elif isinstance(t, ArrayType):
                t = t.elem
            else:
                self.fail(inst, f"cannot index into {t}")
            steps.append(f"[{idx}]")
        return steps, into_vector

    # -- expression reconstruction ---------------------------------------------------------------
    def rebuild(self, window: list[Inst], root: Value, const_ok: bool) -> str:
        """A WGSL expression that lowers to exactly the instructions of `window` with result
        `root` (each used once, memory accesses in the same order); raises _Fail."""
        wdefs = {i.result.id: i for i in window if i.result is not None}
        post: list[Inst] = []

        def sub(v: Value, const_ok: bool = False, uses: int = 1) -> str:
            d = wdefs.get(v.id)
            if d is None:
                r = self.refs.get(v.id)
                if r is None or r.kind == "place":
                    raise _Fail()
                return r.expr
            if len(self.uses.get(v.id, ())) != uses or d in post:
                raise _Fail()
            if d.op == OP.load and d.args[0].id in wdefs and wdefs[d.args[0].id].op == OP.var \
                    and wdefs[d.args[0].id].attrs.get("name") == "":
                text = logical(d, wdefs[d.args[0].id])
            else:
                text = self.inline(d, sub, sub_place, const_ok)
            post.append(d)
            return text

        def logical(load: Inst, var: Inst) -> str:
            """`lhs && rhs` / `lhs || rhs` inside a rebuilt expression (see _logical)."""
            if len(var.args) != 1 or len(self.uses.get(var.result.id, ())) != 2 or var in post:
                raise _Fail()
            lhs = var.args[0]
            iff = next((x for x in window if x.op == OP.if_ and x.blocks[0].insts
                        and x.blocks[0].insts[-1].op == OP.store
                        and x.blocks[0].insts[-1].args[0] is var.result), None)
            if iff is None or iff.blocks[1].insts:
                raise _Fail()
            cond = wdefs.get(iff.args[0].id)
            op = "&&"
            # the left side is used by the temporary and by the `if` (&&) or its negation (||)
            lhs_text = sub(lhs, uses=2)
            post.append(var)
            if iff.args[0] is not lhs:
                if cond is None or cond.op != OP.unary or cond.attrs["fn"] != "not" or cond.args[0] is not lhs \
                        or len(self.uses.get(cond.result.id, ())) != 1:
                    raise _Fail()
                op = "||"
                post.append(cond)
            then = iff.blocks[0].insts
            rhs = self.rebuild(then[:-1], then[-1].args[1], True)
            post.append(iff)
            return f"({lhs_text} {op} {rhs})"

        def sub_place(v: Value) -> str:
            d = wdefs.get(v.id)
            if d is None:
                r = self.refs.get(v.id)
                if r is None or r.kind not in ("ptr", "place"):
                    raise _Fail()
                return r.place
            if len(self.uses.get(v.id, ())) != 1 or d in post:
                raise _Fail()
            if d.op == OP.global_:
                post.append(d)
                return d.attrs["name"]
            if d.op == OP.access:
                dyn = [sub(a) for a in d.args[1:]]
                base = sub_place(d.args[0])
                steps, _ = self.path_steps(d.args[0].type.pointee, d.attrs["path"], dyn, d)
                post.append(d)
                return base + "".join(steps)
            raise _Fail()

        text = sub(root, const_ok)
        if sorted(map(id, post)) != sorted(map(id, window)):
            raise _Fail()
        want = [i for i in window if not _is_pure(i)]
        got = [i for i in post if not _is_pure(i)]
        if [id(i) for i in want] != [id(i) for i in got]:
            raise _Fail()
        return text

    def inline(self, d: Inst, sub, sub_place, const_ok: bool) -> str:
        """The expression of one instruction inside a rebuilt expression."""
        op = d.op
        a = d.args
        if op == OP.const:
            if not const_ok or not _finite_value(d.attrs["value"]):
                raise _Fail()
            return self.literal(d.type, d.attrs["value"], d)
        if op == OP.load:
            return sub_place(a[0])
        if op == OP.binary:
            lc, rc = self.is_const(a[0]), self.is_const(a[1])
            x = sub(a[0], not rc)
            y = sub(a[1], not lc)
            return f"({x} {BIN_SYMBOL[d.attrs['fn']]} {y})"
        if op == OP.unary:
            sym = "-" if d.attrs["fn"] == "neg" else ("!" if a[0].type == BOOL or
                                                      getattr(a[0].type, "elem", None) == BOOL else "~")
            return f"({sym}{sub(a[0])})"
        if op in (OP.access, OP.global_):
            return "&" + self._place_of(d, sub, sub_place)
        if op in (OP.builtin, OP.construct, OP.select):
            allc = all(self.is_const(x) for x in a)
            args = [sub(x, not allc) for x in a]
        elif op in (OP.call, OP.bitcast, OP.atomic):
            args = [sub(x, True) for x in a]
        elif op == OP.subgroup:
            args = [sub(a[0])] + [sub(x, True) for x in a[1:]]
        elif op in (OP.convert, OP.array_length, OP.extract, OP.swizzle, OP.override):
            args = [sub(x) for x in a]
        else:
            raise _Fail()
        return EXPR_RULES[op](self, d, args)

    def _place_of(self, d, sub, sub_place):
        if d.op == OP.global_:
            return d.attrs["name"]
        dyn = [sub(x) for x in d.args[1:]]
        base = sub_place(d.args[0])
        steps, into_vector = self.path_steps(d.args[0].type.pointee, d.attrs["path"], dyn, d)
        if into_vector:
            raise _Fail()
        return base + "".join(steps)

    def is_const(self, v: Value) -> bool:
        d = self.defs.get(v.id)
        return d is not None and d.op == OP.const


def _finite_value(v) -> bool:
    if isinstance(v, (list, tuple)):
        return all(_finite_value(x) for x in v)
    return not isinstance(v, float) or math.isfinite(v)


def _reserved():
    from ..frontend.wgsl.lexer import KEYWORDS, RESERVED_WORDS
    return KEYWORDS | RESERVED_WORDS


# =============================================================================== expression rules
# (inst, operand expressions) -> WGSL expression; shared by `let` statements and rebuilt expressions

def _x_builtin(em, i, a):
    return f"{i.attrs['fn']}({', '.join(a)})"


def _x_construct(em, i, a):
    return f"{em.ty(i.type, i)}({', '.join(a)})"


def _x_call(em, i, a):
    return f"{i.attrs['callee']}({', '.join(a)})"


def _x_subgroup(em, i, a):
    if "cluster" in i.attrs:
        em.fail(i, "WGSL has no clustered subgroup operations", hint="run the SPIR-V module with --backend vulkan")
    return f"{_SUBGROUP_NAMES[i.attrs['fn']]}({', '.join(a)})"


def _x_atomic(em, i, a):
    return f"{_ATOMIC_NAMES[i.attrs['fn']]}({', '.join(a)})"


def _x_select(em, i, a):
    return f"select({', '.join(a)})"


def _x_bitcast(em, i, a):
    return f"bitcast<{em.ty(i.type, i)}>({a[0]})"


def _x_convert(em, i, a):
    return f"{em.ty(i.type, i)}({a[0]})"


def _x_array_length(em, i, a):
    return f"arrayLength({a[0]})"


def _x_extract(em, i, a):
    steps, _ = em.path_steps(i.args[0].type, i.attrs["path"], a[1:], i)
    return a[0] + "".join(steps)


def _x_swizzle(em, i, a):
    comps = i.attrs["components"]
    if len(comps) == 1:
        return f"{a[0]}[{comps[0]}]"
    return a[0] + "." + "".join("xyzw"[c] for c in comps)


def _x_override(em, i, a):
    return i.attrs["name"]


EXPR_RULES = {OP.builtin: _x_builtin, OP.construct: _x_construct, OP.call: _x_call,
              OP.subgroup: _x_subgroup, OP.atomic: _x_atomic, OP.select: _x_select,
              OP.bitcast: _x_bitcast, OP.convert: _x_convert, OP.array_length: _x_array_length,
              OP.extract: _x_extract, OP.swizzle: _x_swizzle, OP.override: _x_override}


# =============================================================================== statement rules
# One per op of the op table: EMIT_RULES[op](emitter, inst) writes the WGSL for `inst`.

def r_const(em: _Emitter, i: Inst):
    em.pre = []
    text = em.literal(i.type, i.attrs["value"], i)
    for line in em.pre:
        em.line(line)
    em.pre = None
    em.let(i, text)


def r_input(em, i):
    em.refs[i.result.id] = _Ref("value", f"{em.P}in_{i.attrs['builtin']}")


def r_override(em, i):
    em.let(i, i.attrs["name"])


def r_undef(em, i):
    from ..isa.types import is_constructible
    if not is_constructible(i.type):
        em.fail(i, f"no zero value of {i.type} can be written in WGSL")
    em.let(i, f"{em.ty(i.type, i)}()")


def r_global(em, i):
    if is_handle(i.type):       # a texture or sampler: named where it is used (WGSL has no let of one)
        em.refs[i.result.id] = _Ref("value", i.attrs["name"])
        return
    em.let(i, f"&{i.attrs['name']}")


_TEXTURE_NAMES = {v: k for k, v in TEXTURE_FNS.items()}


def r_texture(em, i):
    text = f"{_TEXTURE_NAMES[i.attrs['fn']]}({', '.join(em.val(a, i) for a in i.args)})"
    if i.result is None:
        em.line(text + ";")
    else:
        em.let(i, text)


def r_var(em: _Emitter, i: Inst):
    if i.attrs.get("name") == "" and _logical(em, i):
        return
    t = i.type.pointee
    name = em.declare_var(i)
    init = f" = {em.val(i.args[0], i)}" if i.args else ""
    em.line(f"var {name}: {em.ty(t, i)}{init};")
    p = f"{em.P}v{i.result.id}"
    em.line(f"let {p} = &{name};")
    em.refs[i.result.id] = _Ref("ptr", p, f"(*{p})")


def _logical(em: _Emitter, var: Inst) -> bool:
    """`var t = lhs; if lhs { ...; t = rhs; }; load t` is `lhs && rhs` (|| with `if !lhs`)."""
    if len(var.args) != 1 or var.args[0].type != BOOL:
        return False
    b, idx = em.cur
    insts = b.insts
    lhs = var.args[0]
    j, op = idx + 1, "&&"
    try:
        if insts[j].op == OP.unary and insts[j].attrs["fn"] == "not" and insts[j].args[0] is lhs:
            neg = insts[j]
            j, op = j + 1, "||"
            if len(em.uses.get(neg.result.id, ())) != 1:
                return False
        else:
            neg = None
        iff, load = insts[j], insts[j + 1]
    except IndexError:
        return False
    cond = neg.result if neg is not None else lhs
    if iff.op != OP.if_ or iff.args[0] is not cond or iff.blocks[1].insts:
        return False
    then = iff.blocks[0].insts
    if not then or then[-1].op != OP.store or then[-1].args[0] is not var.result:
        return False
    if load.op != OP.load or load.args[0] is not var.result or len(em.uses[var.result.id]) != 2:
        return False
    try:
        rhs = em.rebuild(then[:-1], then[-1].args[1], True)
    except _Fail:
        return False
    em.let(load, f"({em.val(lhs, var)} {op} {rhs})")
    em.skip.update({id(x) for x in (iff, load) + ((neg,) if neg is not None else ())})
    return True


def r_access(em: _Emitter, i: Inst):
    dyn = [em.val(a, i) for a in i.args[1:]]
    base = em.place(i.args[0], i)
    steps, into_vector = em.path_steps(i.args[0].type.pointee, i.attrs["path"], dyn, i)
    place = base + "".join(steps)
    if not into_vector:
        name = f"{em.P}v{i.result.id}"
        em.line(f"let {name} = &{place};")
        em.refs[i.result.id] = _Ref("ptr", name, f"(*{name})")
        return
    # WGSL cannot name a pointer to a vector component: the reference is written where it is
    # read or written. Rebuild `c = e` and `c op= e` so the access keeps its place.
    em.refs[i.result.id] = _Ref("place", "", place)
    b, idx = em.cur
    uses = em.uses.get(i.result.id, [])
    pos = {id(x): n for n, x in enumerate(b.insts)}
    if not uses or not all(id(u) in pos for u in uses):
        return
    uses = sorted(uses, key=lambda u: pos[id(u)])
    if len(uses) == 1 and uses[0].op == OP.store and uses[0].args[0] is i.result:
        s = uses[0]
        window = b.insts[idx + 1:pos[id(s)]]
        try:
            rhs = em.rebuild(window, s.args[1], True) if window else em.val(s.args[1], s)
        except (_Fail, EmitError):
            return
        em.skip.update(id(x) for x in window)
        em.plans[id(s)] = f"{place} = {rhs};"
        return
    if len(uses) == 2 and uses[0].op == OP.load and uses[1].op == OP.store and uses[1].args[0] is i.result:
        ld, s = uses
        bi = em.defs.get(s.args[1].id)
        if (bi is None or bi.op != OP.binary or bi.attrs["fn"] not in _COMPOUND or bi.args[0] is not ld.result
                or len(em.uses.get(ld.result.id, ())) != 1 or len(em.uses.get(bi.result.id, ())) != 1
                or id(bi) not in pos or not pos[id(ld)] < pos[id(bi)] < pos[id(s)]
                or pos[id(s)] != pos[id(bi)] + 1):
            return
        window = b.insts[pos[id(ld)] + 1:pos[id(bi)]]
        try:
            rhs = em.rebuild(window, bi.args[1], True) if window else em.val(bi.args[1], bi)
        except (_Fail, EmitError):
            return
        em.skip.update(id(x) for x in window + [ld, bi])
        em.plans[id(s)] = f"{place} {BIN_SYMBOL[bi.attrs['fn']]}= {rhs};"


def r_load(em, i):
    em.let(i, em.place(i.args[0], i))


def r_store(em, i):
    plan = em.plans.get(id(i))
    if plan is not None:
        em.line(plan)
        return
    em.line(f"{em.place(i.args[0], i)} = {em.val(i.args[1], i)};")


def r_address_ptr(em, i):
    em.fail(i, "WGSL has no pointers from device addresses (SPIR-V's PhysicalStorageBuffer)",
            hint="run the SPIR-V module with --backend vulkan")


def r_array_length(em, i):
    em.let(i, f"arrayLength({em.ptr(i.args[0], i)})")


def r_atomic(em, i):
    args = [em.ptr(i.args[0], i)] + [em.val(a, i) for a in i.args[1:]]
    text = _x_atomic(em, i, args)
    if i.attrs["fn"] in (ATOMIC.store, ATOMIC.store_max, ATOMIC.store_min):     # no result in WGSL
        em.line(text + ";")
        em.refs[i.result.id] = _Ref("value", "")
    else:
        em.let(i, text)


def r_barrier(em, i):
    # workgroupUniformLoad(p) lowers to barrier, load, barrier: write it as such again, since
    # Tint's uniformity analysis treats its result (not a plain load) as uniform
    b, idx = em.cur
    nxt = b.insts[idx + 1:idx + 3]
    if (i.attrs["kind"] == "workgroup" and len(nxt) == 2 and nxt[0].op == OP.load
            and nxt[1].op == OP.barrier and nxt[1].attrs["kind"] == "workgroup"
            and isinstance(nxt[0].args[0].type, PointerType) and nxt[0].args[0].type.space == "workgroup"
            and em.ref(nxt[0].args[0], nxt[0]).kind == "ptr" and not _has_atomic(nxt[0].type)):
        em.let(nxt[0], f"workgroupUniformLoad({em.ptr(nxt[0].args[0], nxt[0])})")
        em.skip.update((id(nxt[0]), id(nxt[1])))
        return
    em.line(f"{_BARRIERS[i.attrs['kind']]}();")


def _has_atomic(t):
    return contains(t, AtomicType)


def _expr_rule(name):
    def rule(em, i):
        em.let(i, EXPR_RULES[name](em, i, [em.val(a, i) for a in i.args]))
    rule.__name__ = f"r_{name}"
    return rule


def r_extract(em, i):
    em.let(i, _x_extract(em, i, [em.val(a, i) for a in i.args]))


def r_insert(em, i):
    # WGSL has no expression for "a copy with one component replaced": a variable does it.
    name = f"{em.P}t{i.result.id}"
    em.line(f"var {name} = {em.val(i.args[0], i)};")
    n_dyn = sum(1 for s in i.attrs["path"] if s < 0)
    dyn = [em.val(a, i) for a in i.args[1:1 + n_dyn]]
    steps, _ = em.path_steps(i.args[0].type, i.attrs["path"], dyn, i)
    em.line(f"{name}{''.join(steps)} = {em.val(i.args[-1], i)};")
    em.let(i, name)


def r_unary(em, i):
    t = i.args[0].type
    is_bool = t == BOOL or getattr(t, "elem", None) == BOOL
    sym = "-" if i.attrs["fn"] == "neg" else ("!" if is_bool else "~")
    em.let(i, f"{sym}{em.val(i.args[0], i)}")


def r_binary(em, i):
    if em.d == "dawn" and isinstance(i.type, CoopMatrixType):
        em.fail(i, f"Dawn's subgroup matrices have no element-wise '{BIN_SYMBOL[i.attrs['fn']]}'",
                hint="emit with --dialect wgpu (naga adds and subtracts matrices of one type)")
    em.let(i, f"{em.val(i.args[0], i)} {BIN_SYMBOL[i.attrs['fn']]} {em.val(i.args[1], i)}")


def r_call(em, i):
    text = _x_call(em, i, [em.ptr(a, i) if isinstance(a.type, PointerType) else em.val(a, i)
                           for a in i.args])
    if i.result is None:
        em.line(text + ";")
    else:
        em.let(i, text)


def r_subgroup(em, i):
    em.let(i, _x_subgroup(em, i, [em.val(a, i) for a in i.args]))


def r_if(em, i):
    em.line(f"if ({em.val(i.args[0], i)}) {{")
    em.indent += 1
    em.block(i.blocks[0])
    em.indent -= 1
    if i.blocks[1].insts:
        em.line("} else {")
        em.indent += 1
        em.block(i.blocks[1])
        em.indent -= 1
    em.line("}")


def r_loop(em, i):
    body, cont = i.blocks
    em.line("loop {")
    em.indent += 1

    def continuing():
        if cont.insts:
            em.line("continuing {")
            em.indent += 1
            em.block(cont)
            em.indent -= 1
            em.line("}")
    uses = frozenset(a.id for top in cont.insts for x in top.walk() for a in x.args)
    em.block(body, can_nest=not cont.insts, tail=continuing, tail_uses=uses)
    em.indent -= 1
    em.line("}")


def r_switch(em, i):
    sel_t = i.args[0].type
    em.line(f"switch ({em.val(i.args[0], i)}) {{")
    em.indent += 1
    for cases, blk in zip(i.attrs["cases"], i.blocks):
        labels = ["default" if c == "default" else em.literal(sel_t, c, i) for c in cases]
        head = "default:" if labels == ["default"] else f"case {', '.join(labels)}:"
        em.line(f"{head} {{")
        em.indent += 1
        em.block(blk)
        em.indent -= 1
        em.line("}")
    em.indent -= 1
    em.line("}")


def r_break(em, i):
    em.line("break;")


def r_continue(em, i):
    em.line("continue;")


def r_break_if(em, i):
    em.line(f"break if {em.val(i.args[0], i)};")


def r_return(em, i):
    em.line(f"return {em.val(i.args[0], i)};" if i.args else "return;")


# -- cooperative matrices ------------------------------------------------------------------------

def _no_unit(em, i):
    if i.attrs.get("stride_unit"):
        em.fail(i, f"{i.op} with stride_unit={i.attrs['stride_unit']!r} cannot be written in WGSL "
                   f"(the unit is the device's, not the shader's)")


def r_coop_fill(em, i):
    if id(i) in em.zero_fill:
        em.let(i, f"{em.coop_ty(i.type, i)}()")
        return
    em.let(i, f"{em.coop_ty(i.type, i)}({em.val(i.args[0], i)})")


def r_coop_load(em, i):
    _no_unit(em, i)
    t, layout = i.type, i.attrs["layout"]
    off, stride = em.val(i.args[1], i), em.val(i.args[2], i)
    if em.d == "dawn":
        em.let(i, f"subgroupMatrixLoad<{em.coop_ty(t, i)}, {layout}>({em.ptr(i.args[0], i)}, {off}, {stride})")
    else:
        fn = "coopLoadT" if layout == "row_major" else "coopLoad"
        em.let(i, f"{fn}<{em.coop_ty(t, i)}>(&{em.place(i.args[0], i)}[{off}], {stride})")


def r_coop_store(em, i):
    _no_unit(em, i)
    layout = i.attrs["layout"]
    off, v, stride = (em.val(a, i) for a in i.args[1:])
    em.coop_ty(i.args[2].type, i)
    if em.d == "dawn":
        em.line(f"subgroupMatrixStore<{layout}>({em.ptr(i.args[0], i)}, {off}, {v}, {stride});")
    else:
        fn = "coopStoreT" if layout == "row_major" else "coopStore"
        em.line(f"{fn}({v}, &{em.place(i.args[0], i)}[{off}], {stride});")


def r_coop_mma(em, i):
    if i.attrs.get("saturate"):
        em.fail(i, "a saturating multiply-accumulate cannot be written in WGSL (neither dialect has one)")
    a, b, c = (em.val(x, i) for x in i.args)
    em.coop_ty(i.type, i)
    fn = "subgroupMatrixMultiplyAccumulate" if em.d == "dawn" else "coopMultiplyAdd"
    em.let(i, f"{fn}({a}, {b}, {c})")


def r_coop_mul(em, i):
    if em.d == "wgpu":
        em.fail(i, "the wgpu dialect has no matrix multiply without accumulator",
                hint="emit with --dialect dawn (subgroupMatrixMultiply), or write coopMultiplyAdd with a zero C")
    a, b = (em.val(x, i) for x in i.args)
    em.let(i, f"subgroupMatrixMultiply<{i.type.elem}>({a}, {b})")


def r_coop_scalar(em, i):
    if em.d == "wgpu" and i.attrs["fn"] == "mul":          # naga's matrix * scalar
        em.let(i, f"{em.val(i.args[0], i)} * {em.val(i.args[1], i)}")
        return
    if em.d == "wgpu":
        em.fail(i, f"the wgpu dialect has no matrix-scalar operation ({i.attrs['fn']})",
                hint="emit with --dialect dawn (subgroupMatrixScalar*)")
    em.let(i, f"{_SCALAR_OPS[i.attrs['fn']]}({em.val(i.args[0], i)}, {em.val(i.args[1], i)})")


def r_coop_convert(em, i):
    em.fail(i, f"neither WGSL dialect converts a cooperative matrix's elements "
               f"({i.args[0].type} -> {i.type})")


def r_coop_reduce(em, i):
    em.fail(i, "matrix reductions (VK_NV_cooperative_matrix2) have no WGSL spelling")


def r_coop_nv2(em, i):
    em.fail(i, f"{i.op} (VK_NV_cooperative_matrix2: per-element functions, tensor layouts) has no WGSL spelling")


def r_coop_coordinate(em, i):
    em.fail(i, "neither WGSL dialect tells which element of a cooperative matrix a lane holds "
               "(coopMatGetCoordinateEXT)")


def r_coop_length(em, i):
    em.fail(i, "neither WGSL dialect asks a cooperative matrix for its per-lane length")


EMIT_RULES = {
    OP.const: r_const, OP.input: r_input, OP.override: r_override, OP.undef: r_undef,
    OP.global_: r_global, OP.var: r_var, OP.access: r_access, OP.load: r_load, OP.store: r_store,
    OP.array_length: r_array_length, OP.address_ptr: r_address_ptr, OP.atomic: r_atomic, OP.barrier: r_barrier,
    OP.construct: _expr_rule(OP.construct), OP.extract: r_extract, OP.insert: r_insert,
    OP.swizzle: _expr_rule(OP.swizzle), OP.unary: r_unary, OP.binary: r_binary,
    OP.select: _expr_rule(OP.select), OP.convert: _expr_rule(OP.convert),
    OP.bitcast: _expr_rule(OP.bitcast), OP.builtin: _expr_rule(OP.builtin), OP.subgroup: r_subgroup,
    OP.call: r_call, OP.if_: r_if, OP.loop: r_loop, OP.switch: r_switch, OP.break_: r_break,
    OP.continue_: r_continue, OP.break_if: r_break_if, OP.return_: r_return,
    OP.coop_fill: r_coop_fill, OP.coop_load: r_coop_load, OP.coop_store: r_coop_store,
    OP.coop_mma: r_coop_mma, OP.coop_mul: r_coop_mul, OP.coop_scalar: r_coop_scalar,
    OP.coop_convert: r_coop_convert, OP.coop_length: r_coop_length, OP.texture: r_texture,
    OP.coop_reduce: r_coop_reduce, OP.coop_per_element: r_coop_nv2, OP.coop_load_tensor: r_coop_nv2,
    OP.coop_store_tensor: r_coop_nv2, OP.coop_coordinate: r_coop_coordinate,
}


# =============================================================================== canonical IR

def canonical_ir(module: Module, reorder: bool = True) -> str:
    """The module's IR text without locations, values renumbered by first appearance and (with
    `reorder`) pure instructions placed just before their first use in their block."""
    from ..isa.printer import print_module
    m = copy.deepcopy(module)
    if reorder:
        for f in m.functions:
            _canon_block(f.body)
    text = print_module(m, locs=False)
    ids: dict[str, str] = {}

    def renum(mt):
        return "%" + ids.setdefault(mt.group(1), str(len(ids)))
    out = []
    for line in text.splitlines():
        if line.startswith("func "):
            ids.clear()                      # number each function from 0
        out.append(re.sub(r"%(\d+)", renum, line))
    return "\n".join(out) + "\n"


def _uses_in(inst: Inst) -> list[Value]:
    out = list(inst.args)
    for b in inst.blocks:
        for x in b.insts:
            out.extend(_uses_in(x))
    return out


def _canon_block(b: Block):
    for i in b.insts:
        for nb in i.blocks:
            _canon_block(nb)
    _fold_bitcasts(b)
    pure = {i.result.id: i for i in b.insts if _is_pure(i) and i.result is not None}
    placed: set[int] = set()
    out: list[Inst] = []

    def place(v: Value):
        p = pure.get(v.id)
        if p is None or id(p) in placed:
            return
        placed.add(id(p))
        for a in p.args:
            place(a)
        out.append(p)
    for i in b.insts:
        if _is_pure(i) and i.result is not None:
            continue
        for v in _uses_in(i):
            place(v)
        out.append(i)
    for i in b.insts:                       # unused pure values, in their order
        if _is_pure(i) and i.result is not None and id(i) not in placed:
            place(i.result)
    b.insts[:] = out


def _fold_bitcasts(b: Block):
    """`bitcast<f32>(const u32)` (how NaN and infinity constants are written) as an f32 const."""
    defs = {i.result.id: i for i in b.insts if i.result is not None}
    counts: dict[int, int] = {}
    for i in b.insts:
        for v in _uses_in(i):
            counts[v.id] = counts.get(v.id, 0) + 1
    drop = set()
    for i in b.insts:
        if i.op == OP.bitcast and str(i.type) == "f32" and str(i.args[0].type) == "u32":
            c = defs.get(i.args[0].id)
            if c is not None and c.op == OP.const and counts.get(c.result.id) == 1:
                i.op, i.args = OP.const, []
                i.attrs = {"value": float(np.array(c.attrs["value"], np.uint32).view(np.float32))}
                drop.add(id(c))
                counts[i.result.id] = counts.get(i.result.id, 0)
    # f16 NaN/inf: f16(bitcast<f32>(u32)) -- the conversion of that f32 constant
    defs = {i.result.id: i for i in b.insts if i.result is not None}
    for i in b.insts:
        if i.op == OP.convert and str(i.type) == "f16" and str(i.args[0].type) == "f32":
            c = defs.get(i.args[0].id)
            if c is not None and c.op == OP.const and counts.get(c.result.id) == 1 and \
                    not math.isfinite(c.attrs["value"]):
                i.op, i.args, i.attrs = OP.const, [], {"value": c.attrs["value"]}
                drop.add(id(c))
    if drop:
        b.insts[:] = [i for i in b.insts if id(i) not in drop]
