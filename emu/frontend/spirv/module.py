"""Module-level SPIR-V: names, decorations, types, constants, specialization constants, variables
and entry points, turned into the IR's types, overrides and globals.

Mapping to emu: DescriptorSet/Binding are the IR's group/binding; the push-constant block is a
uniform at PUSH_CONSTANTS (group, binding) that `--push-constants FILE` fills; specialization
constants are overrides whose id is their SpecId (`--spec-constant ID=VALUE`).
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

import numpy as np

from ...errors import EmuError
from ...isa.ir import Global, Loc, Override
from ...isa.types import (BF16, BOOL, F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, VOID, ArrayType, CoopMatrixType,
                          MatrixType, Member, PointerType, ScalarType, StructType, Type, VectorType)
from . import images, minifloats, mixed_dot
from ..capabilities import SPIRV_CAPABILITIES
from .grammar import Instruction, enum_names
from ...isa.ir import PUSH_CONSTANTS  # noqa: F401  (also spelled here)


SPACES = {"StorageBuffer": "storage", "Uniform": "uniform", "Workgroup": "workgroup",
          "Private": "private", "Function": "function", "PushConstant": "uniform"}
# SPIR-V BuiltIn -> the IR's input names
BUILTINS = {"GlobalInvocationId": "global_invocation_id", "LocalInvocationId": "local_invocation_id",
            "LocalInvocationIndex": "local_invocation_index", "WorkgroupId": "workgroup_id",
            "NumWorkgroups": "num_workgroups", "SubgroupLocalInvocationId": "subgroup_invocation_id",
            "SubgroupSize": "subgroup_size", "SubgroupId": "subgroup_id", "NumSubgroups": "num_subgroups"}
ROLES = {0: "A", 1: "B", 2: "C"}     # MatrixAKHR, MatrixBKHR, MatrixAccumulatorKHR
SUBGROUP_SCOPE = 3
WORKGROUP_SCOPE = 2
# the instructions that end a block (SPIR-V 2.2.5); only debug lines may follow up to the next OpLabel
TERMINATORS = {"OpBranch", "OpBranchConditional", "OpSwitch", "OpReturn", "OpReturnValue", "OpKill",
               "OpUnreachable", "OpTerminateInvocation"}
CAPABILITIES = SPIRV_CAPABILITIES       # (emu/frontend/capabilities.py: data the Vulkan driver reads too)


def ident(name: str) -> str:
    """A SPIR-V debug name as an IR identifier (glslang mangles functions as 'f(i1;')."""
    s = re.sub(r"[^A-Za-z0-9_]", "_", name).strip("_") or "v"
    return s if not s[0].isdigit() else "_" + s


def _holds_void(t) -> bool:
    """Whether void stands somewhere inside a variable's type (an invalid module: an array or a
    struct member of OpTypeVoid), which no layout can place."""
    if t == VOID:
        return True
    if isinstance(t, ArrayType):
        return _holds_void(t.elem)
    if isinstance(t, StructType):
        return any(_holds_void(m.type) for m in t.members)
    return False


@dataclass
class BuiltinVar:
    """An Input variable decorated BuiltIn: loads read the invocation's builtin value."""
    builtin: str
    type: Type


@dataclass
class SpirvFunction:
    inst: Instruction
    params: list[Instruction] = field(default_factory=list)
    blocks: dict[int, list[Instruction]] = field(default_factory=dict)   # label -> instructions
    order: list[int] = field(default_factory=list)


class ModuleInfo:
    """Everything outside function bodies, read in one pass over the instructions."""

    def __init__(self, insts: list[Instruction], file: str, locate, constants: dict | None = None,
                 defer_unset: bool = False):
        self.file, self.locate = file, locate
        self.constants = dict(constants or {})   # host values of spec constants (by name or SpecId)
        self.needs_constants = False             # a spec constant sizes a type: lowered per pipeline
        # making a shader module (defer_unset): a size the defaults make invalid is the pipeline's
        # to set (llama.cpp's defaults size some arrays 0); these spec constants must be given
        self.defer_unset, self.unset_sizes = defer_unset, []
        self._read: set[str] = set()             # the spec constants a size was computed from
        self.spec_defaults: dict[int, object] = {}
        self._evaluating: set[int] = set()
        self.names: dict[int, str] = {}
        self.member_names: dict[tuple[int, int], str] = {}
        self.decos: dict[int, dict[str, list]] = {}
        self.member_decos: dict[tuple[int, int], dict[str, list]] = {}
        self.strings: dict[int, str] = {}
        self.ext_sets: dict[int, str] = {}
        self.defs: dict[int, Instruction] = {}
        self.types: dict[int, object] = {}
        self.tensor_types: dict[int, tuple] = {}     # tensor layout / view type id -> its constants
        self.consts: dict[int, tuple[Type, object]] = {}
        self.overrides: dict[int, Override] = {}
        self.spec_exprs: dict[int, Instruction] = {}   # OpSpecConstantComposite / Op
        self.globals: dict[int, Global] = {}
        self.handle_vars: dict[int, Instruction] = {}   # image / sampler variables (images.py)
        self.combined: dict[int, Global] = {}           # combined image sampler id -> its sampler half
        self.builtin_vars: dict[int, BuiltinVar] = {}
        self.entry_points: list[tuple[int, str]] = []
        # every name of every capability declared (WorkgroupMemoryExplicitLayoutKHR changes variables)
        self.capabilities: set[str] = {n for x in insts if x.opname == "OpCapability" and x.ops
                                       for n in enum_names("Capability", x.ops[0])}
        self.modes: dict[int, dict[str, list]] = {}
        self.functions: dict[int, SpirvFunction] = {}
        self.structs: list[StructType] = []
        self._struct_names: set[str] = set()
        self.global_names: set[str] = set()
        # ArrayStride of the arrays of each element type: a struct laid out by Offset decorations
        # also takes its size from them (scalar layout packs a u64vec2 at 8 bytes, not 16)
        self.elem_strides: dict[int, int] = {}
        arrays = {x.result: x.ops[0] for x in insts if x.opname in ("OpTypeArray", "OpTypeRuntimeArray") and x.ops}
        fn: SpirvFunction | None = None
        label = None
        self.current: Instruction | None = None     # the instruction being read, for messages
        for i in insts:
            self.current = i
            if i.result is not None:
                self.defs[i.result] = i
            op = i.opname
            if fn is not None:
                if op == "OpFunctionEnd":
                    self.functions[fn.inst.result] = fn
                    fn = None
                elif op == "OpFunctionParameter":
                    fn.params.append(i)
                elif op == "OpLabel":
                    label = i.result
                    fn.blocks[label] = []
                    fn.order.append(label)
                elif label is not None:
                    fn.blocks[label].append(i)
                    if op in TERMINATORS:
                        label = None
                elif not self.debug_line(i):
                    # glslang 13 puts an OpLine between a block's terminator and OpFunctionEnd (valid);
                    # anything else outside a block is a malformed module
                    self.fail(i, f"{op} is outside a block: after a block's terminator or before the "
                                 "function's first OpLabel", hint="the SPIR-V module is malformed: check it with spirv-val")
                continue
            if op == "OpFunction":
                fn, label = SpirvFunction(i), None
            elif op == "OpCapability":
                if not enum_names("Capability", i.ops[0]) & (CAPABILITIES | images.CAPABILITIES | mixed_dot.CAPABILITIES
                                                           | minifloats.CAPABILITIES):
                    self.fail(i, f"capability {i.ops[0]} is not supported by emu",
                              hint="emu runs compute shaders with the Shader, Int8, Float16, Int64, Float64, "
                                   "8/16-bit storage, GroupNonUniform* and CooperativeMatrixKHR capabilities")
            elif op == "OpExtInstImport":
                self.ext_sets[i.result] = i.ops[0]
                if i.ops[0] not in ("GLSL.std.450",) and not i.ops[0].startswith("NonSemantic."):
                    self.fail(i, f"extended instruction set '{i.ops[0]}' is not supported",
                              hint="emu knows GLSL.std.450 and ignores NonSemantic.* sets")
            elif op == "OpMemoryModel":
                if i.ops[0] not in ("Logical", "PhysicalStorageBuffer64"):
                    self.fail(i, f"addressing model {i.ops[0]} is not supported (Logical and PhysicalStorageBuffer64)")
            elif op == "OpEntryPoint":
                if i.ops[0] == "GLCompute":
                    self.entry_points.append((i.ops[1], i.ops[2]))
            elif op in ("OpExecutionMode", "OpExecutionModeId"):
                self.modes.setdefault(i.ops[0], {})[i.ops[1]] = i.ops[2:]
            elif op == "OpString":
                self.strings[i.result] = i.ops[0]
            elif op == "OpName":
                self.names[i.ops[0]] = i.ops[1]
            elif op == "OpMemberName":
                self.member_names[(i.ops[0], i.ops[1])] = i.ops[2]
            elif op in ("OpDecorate", "OpDecorateId"):
                self.decos.setdefault(i.ops[0], {})[i.ops[1]] = i.ops[2:]
                if i.ops[1] == "ArrayStride" and i.ops[0] in arrays and len(i.ops) > 2:
                    self.elem_strides[arrays[i.ops[0]]] = i.ops[2]
            elif op == "OpMemberDecorate":
                self.member_decos.setdefault((i.ops[0], i.ops[1]), {})[i.ops[2]] = i.ops[3:]
            elif op == "OpTypeForwardPointer":
                self._type(i)
            elif op.startswith("OpType"):
                self.types[i.result] = self._type(i)
            elif op in ("OpConstant", "OpConstantTrue", "OpConstantFalse", "OpConstantComposite",
                        "OpConstantNull"):
                self.consts[i.result] = self._constant(i)
            elif op in ("OpSpecConstant", "OpSpecConstantTrue", "OpSpecConstantFalse"):
                self._spec_constant(i)
            elif op in ("OpSpecConstantComposite", "OpSpecConstantOp", "OpSpecConstantCompositeReplicateEXT"):
                self.spec_exprs[i.result] = i
            elif op == "OpVariable":
                self._variable(i)
            elif op == "OpUndef":
                t = self.type(i.type_id, i)
                self.consts[i.result] = (t, _zero(t))
        self.current = None
        images.declare(self)

    def add_global(self, key, g: Global):
        self.globals[key] = g

    # -- messages -------------------------------------------------------------------------------
    def debug_line(self, i: Instruction) -> bool:
        """OpLine, OpNoLine or a NonSemantic extended instruction (debug info, no effect)."""
        return i.opname in ("OpLine", "OpNoLine") or \
            (i.opname == "OpExtInst" and self.ext_sets.get(i.ops[0], "").startswith("NonSemantic."))

    def loc(self, i: Instruction) -> Loc | None:
        return self.locate(i)

    def fail(self, i: Instruction, message: str, hint: str | None = None):
        loc = self.loc(i)
        if loc is None or loc.file != self.file:
            message = f"{message} [{describe(i, self)}]"
        raise EmuError(message, loc, hint=hint)

    def name(self, id_: int, default: str) -> str:
        return ident(self.names[id_]) if id_ in self.names else default

    # -- types ----------------------------------------------------------------------------------
    def type(self, id_: int, at: Instruction) -> Type:
        t = self.types.get(id_)
        if is_physical(t):
            return U64          # a PhysicalStorageBuffer pointer as data: its 64-bit address
        if t is None or isinstance(t, tuple):
            self.fail(at, f"%{id_} is not a data type here")
        return t

    def _type(self, i: Instruction):
        op, o = i.opname, i.ops
        if op == "OpTypeVoid":
            return VOID
        if op == "OpTypeBool":
            return BOOL
        if op == "OpTypeInt":
            t = {(32, 1): I32, (32, 0): U32, (8, 1): I8, (8, 0): U8, (16, 1): I16, (16, 0): U16,
                 (64, 1): I64, (64, 0): U64}.get((o[0], o[1]))
            if t is None:
                self.fail(i, f"{o[0]}-bit integers are not supported: emu's IR has 8-, 16-, 32- and 64-bit integers",
                          hint="use 8-, 16-, 32- or 64-bit integers (int8_t ... int64_t)")
            return t
        if op == "OpTypeFloat":
            if o[0] == 16 and len(o) > 1 and o[1] == "BFloat16KHR":
                return BF16
            if len(o) > 1 and (o[0], o[1]) in minifloats.ENCODINGS:
                return minifloats.ENCODINGS[o[0], o[1]]
            t = {32: F32, 16: F16, 64: F64}.get(o[0])
            if t is None or len(o) > 1:
                self.fail(i, f"{o[0]}-bit floats{' (' + o[1] + ')' if len(o) > 1 else ''} are not supported: "
                             f"emu's IR has f16, bf16, f32, f64, the 8-bit floats of SPV_EXT_float8 (e4m3, e5m2) "
                             f"and the FP4 of SPV_EXT_ocp_microscaling_types (e2m1)",
                          hint="use float (f32), double, float16_t, bfloat16_t, floate4m3_t or floate5m2_t; "
                               "FP6 (SPV_EXT_ocp_microscaling_types) has no matrix multiply-add in SPIR-V")
            return t
        if op == "OpTypeVector":
            elem = self.type(o[0], i)
            if not isinstance(elem, ScalarType) or elem == VOID or not 2 <= o[1] <= 4:
                self.fail(i, f"a vector of {o[1]} {elem}: 2 to 4 numbers or booleans")
            return VectorType(elem, o[1])
        if op == "OpTypeMatrix":
            col = self.type(o[0], i)
            if not isinstance(col, VectorType) or not col.elem.is_float or not 2 <= o[1] <= 4:
                self.fail(i, f"a matrix of {o[1]} columns of {col}: 2 to 4 float vectors")
            return MatrixType(o[1], col.n, col.elem)
        if op in ("OpTypeImage", "OpTypeSampler", "OpTypeSampledImage"):
            return images.handle_type(self, i)
        if op in ("OpTypeArray", "OpTypeRuntimeArray") and images.is_handle_desc(self.types.get(o[0])):
            return images.HandleArray(i)        # refused at its variable (which has a source line)
        if op == "OpTypeArray":
            elem = self.type(o[0], i)
            if o[1] in self.consts:
                n = int(self.consts[o[1]][1])
            else:
                # sized by a specialization constant: the module is lowered with the host's values
                self._read = set()
                n = self.spec_value(o[1], i)
                self.needs_constants = True
                if n < 1 and self.defer_unset:
                    self.unset_sizes += sorted(self._read - set(self.unset_sizes))
                    n = 1                   # a placeholder: each pipeline lowers it again with its values
            if n < 1:
                how = "" if o[1] in self.consts else \
                    " from specialization constants (" + ("the values given" if self.constants else "their defaults") + ")"
                self.fail(i, f"an array of length {n}{how}", hint="an array's length must be positive; where "
                          "specialization constants size it, set them with --spec-constant ID=VALUE")
            t = ArrayType(elem, n)
            self._check_stride(i, t)
            return t
        if op == "OpTypeRuntimeArray":
            t = ArrayType(self.type(o[0], i), None)
            self._check_stride(i, t)
            return t
        if op == "OpTypeStruct":
            return self._struct(i)
        if op == "OpTypePointer":
            pointee = self.types.get(o[1])
            if is_physical(pointee):
                pointee = U64   # a variable holding a PhysicalStorageBuffer pointer holds its address
            if not isinstance(pointee, (Type, images.HandleArray)) and not images.is_handle_desc(pointee):
                self.fail(i, f"a pointer to %{o[1]}, which is no data type")
            return ("ptr", o[0], pointee)
        if op == "OpTypeForwardPointer":
            if o[1] != "PhysicalStorageBuffer":
                self.fail(i, f"a forward pointer of the {o[1]} storage class (PhysicalStorageBuffer only)")
            self.types[o[0]] = ("ptr", o[1], None)     # its pointee comes with its OpTypePointer
            return None
        if op == "OpTypeFunction":
            return ("fn", o[0], o[1:])
        if op == "OpTypeCooperativeMatrixKHR":
            elem = self.type(o[0], i)
            if not all(x in self.consts for x in o[1:5]):
                self.needs_constants = True     # sized by spec constants (llama.cpp's TM, TN, TK)
            scope, rows, cols, use = (self.spec_value(x, i) for x in o[1:5])
            if scope not in (SUBGROUP_SCOPE, WORKGROUP_SCOPE):
                self.fail(i, f"cooperative matrices of scope {scope}: Subgroup or Workgroup (VK_NV_cooperative_matrix2)")
            if use not in ROLES:
                self.fail(i, f"matrix use {use}: MatrixAKHR, MatrixBKHR or MatrixAccumulatorKHR")
            return CoopMatrixType(rows, cols, elem, ROLES[use], "workgroup" if scope == WORKGROUP_SCOPE else "subgroup")
        if op in ("OpTypeTensorLayoutNV", "OpTypeTensorViewNV"):
            return self._tensor_type(i)
        self.fail(i, f"{op} is not supported by emu's SPIR-V front end",
                  hint="emu runs compute shaders over buffers; images, samplers and physical pointers "
                       "are not modelled")

    def _tensor_type(self, i: Instruction) -> Type:
        """SPV_NV_tensor_addressing's layouts and views as u32 arrays (tensor.py: their fields);
        the type's constants (clamp mode, permutation) are recorded for the create op."""
        from ...memory import tensor
        o = i.ops
        if not all(x in self.consts for x in o):
            self.needs_constants = True     # a clamp mode from a spec constant (llama.cpp's)
        dim = self.spec_value(o[0], i)
        if not 1 <= dim <= tensor.MAX_DIM:
            self.fail(i, f"a tensor {'layout' if i.opname == 'OpTypeTensorLayoutNV' else 'view'} of "
                         f"{dim} dimensions: 1 to {tensor.MAX_DIM}")
        if i.opname == "OpTypeTensorLayoutNV":
            clamp = self.spec_value(o[1], i)
            if not 0 <= clamp < len(tensor.CLAMP_MODES):
                self.fail(i, f"tensor clamp mode {clamp}: 0 to {len(tensor.CLAMP_MODES) - 1}")
            self.tensor_types[i.result] = ("layout", dim, clamp)
            return tensor.layout_type(dim)
        has_dim = self.spec_value(o[1], i)
        perm = [self.spec_value(x, i) for x in o[2:]]
        if sorted(perm) != list(range(dim)):
            self.fail(i, f"a tensor view's permutation {perm} must order the {dim} dimensions 0..{dim - 1}")
        self.tensor_types[i.result] = ("view", dim, bool(has_dim), perm)
        return tensor.view_type(dim)

    def spec_value(self, id_: int, at: Instruction) -> int:
        """The integer value of a (specialization) constant for this module's host values."""
        if id_ in self.consts:
            return int(self.consts[id_][1])
        if id_ in self.overrides:
            o = self.overrides[id_]
            self._read.add(o.name)
            # unset, each declaration keeps its own default (glslang's local_size_x_id and a
            # constant_id const of the same id differ)
            v = self.host_value(o)
            return int(self.spec_defaults.get(id_, v) if v is o.default else v)
        e = self.spec_exprs.get(id_)
        if e is None or e.opname != "OpSpecConstantOp" or id_ in self._evaluating:
            self.fail(at, f"%{id_} must be an integer (specialization) constant here")
        op = e.ops[0][2:] if e.ops[0].startswith("Op") else e.ops[0]
        t = self.type(e.type_id, at)
        self._evaluating.add(id_)
        try:
            if op == "CompositeExtract":      # gl_WorkGroupSize.x sizing an array
                return self._spec_component(e.ops[1], e.ops[2:], at)
            args = [self.spec_value(x, at) for x in e.ops[1:]]
        finally:
            self._evaluating.discard(id_)
        if op in UNSIGNED_SPEC_OPS:       # the operands as unsigned values of their own widths
            args = [a % (1 << getattr(self.types.get(getattr(self.defs.get(x), "type_id", None)), "bits", 32))
                    for a, x in zip(args, e.ops[1:])]
        if op == "Select":
            return args[1] if args[0] else args[2]
        fn = SPEC_INT_OPS.get(op)
        if fn is None or not isinstance(t, ScalarType) or not (t.is_int or t == BOOL):
            self.fail(at, f"a specialization constant expression {op} sizes a type: emu evaluates "
                          f"integer arithmetic, shifts, bit operations and comparisons there")
        try:
            r = int(fn(*args))
        except ZeroDivisionError:
            self.fail(at, f"the specialization constant expression {op} divides by zero")
        if t == BOOL:
            return int(bool(r))
        r &= (1 << t.bits) - 1
        return r - (1 << t.bits) if t.kind == "sint" and r >> (t.bits - 1) else r

    def _spec_component(self, id_: int, path: list, at: Instruction) -> int:
        """The integer at `path` (literal indices) of a (specialization) constant composite."""
        if not path:
            return self.spec_value(id_, at)
        e = self.spec_exprs.get(id_)
        if e is not None and e.opname == "OpSpecConstantComposite" and path[0] < len(e.ops):
            return self._spec_component(e.ops[path[0]], path[1:], at)
        c = self.consts.get(id_)
        if c is not None and isinstance(c[1], list):
            v = c[1]
            for k in path:
                v = v[k]
            return int(v)
        self.fail(at, f"%{id_} must be a constant composite here")

    def host_value(self, o: Override):
        """The host's value of a spec constant (by name or SpecId), else its default."""
        from ...isa.constants import host_override_values
        declared = list({id(x): x for x in self.overrides.values()}.values())
        for key in (o.name, str(o.id)):
            if key in self.constants:
                return host_override_values(declared, key, self.constants[key],
                                            "specialization constant '{}'")[o.name]
        return o.default

    def _check_stride(self, i: Instruction, t: ArrayType):
        d = self.decos.get(i.result, {})
        if "ArrayStride" in d:
            try:
                natural = t.stride
            except TypeError:
                return
            if d["ArrayStride"][0] != natural:
                self.fail(i, f"ArrayStride {d['ArrayStride'][0]} of {t} differs from its natural stride "
                             f"{natural}: explicit strides (std140 arrays) are not supported yet",
                          hint="use std430/scalar layout (a buffer block, or layout(std430) on the uniform)")

    def _struct(self, i: Instruction) -> StructType:
        members, offsets = [], []
        for k, mid in enumerate(i.ops):
            mt = self.type(mid, i)
            d = self.member_decos.get((i.result, k), {})
            if "RowMajor" in d and isinstance(mt, MatrixType):
                self.fail(i, "row-major matrices in buffers are not supported", hint="use column_major")
            members.append(Member(ident(self.member_names.get((i.result, k), f"m{k}")), mt))
            offsets.append(d["Offset"][0] if "Offset" in d else None)
        base = self.name(i.result, f"S{i.result}")
        name, n = base, 1
        while name in self._struct_names:
            n += 1
            name = f"{base}_{n}"
        self._struct_names.add(name)
        t = StructType(name, tuple(members))
        if all(o is not None for o in offsets) and members:
            t = self._explicit_layout(i, t, offsets, self.elem_strides.get(i.result))
        self.structs.append(t)
        return t

    def _explicit_layout(self, i, t: StructType, offsets, stride: int | None = None) -> StructType:
        """The struct with @align/@size attributes that place each member at its Offset, and
        where it is an array's element, of the array's stride as its size: its members then
        aligned to their scalars (Vulkan's scalar layout, the least any layout aligns them)."""
        out = self._place(i, t, list(t.members), offsets)
        if stride is not None and out.size != stride:
            members = [Member(m.name, m.type, _scalar_align(m.type), m.size_attr) for m in t.members]
            out = self._place(i, t, members, offsets)
            last = out.members[-1]
            if out.size < stride:        # std140/std430 padding after the last member
                out = StructType(t.name, out.members[:-1] + (
                    Member(last.name, last.type, last.align_attr, stride - out.offsets[-1]),))
        return out

    def _place(self, i, t: StructType, members: list, offsets) -> StructType:
        for k in range(len(members)):
            trial = StructType(t.name, tuple(members))
            if trial.offsets[k] == offsets[k]:
                continue
            if k and trial.offsets[k] < offsets[k]:
                prev = members[k - 1]
                members[k - 1] = Member(prev.name, prev.type, prev.align_attr, offsets[k] - trial.offsets[k - 1])
            trial = StructType(t.name, tuple(members))
            if trial.offsets[k] != offsets[k]:
                low = offsets[k] & -offsets[k] if offsets[k] else members[k].type.align
                m = members[k]
                members[k] = Member(m.name, m.type, low, m.size_attr)
        out = StructType(t.name, tuple(members))
        if list(out.offsets) != list(offsets):
            self.fail(i, f"member offsets {offsets} of struct {t.name} cannot be laid out by emu "
                         f"(it places them at {list(out.offsets)})")
        return out

    # -- constants ------------------------------------------------------------------------------
    def _constant(self, i: Instruction):
        t = self.type(i.type_id, i)
        op = i.opname
        if op == "OpConstantTrue":
            return t, True
        if op == "OpConstantFalse":
            return t, False
        if op == "OpConstantNull":
            return t, _zero(t)
        if op == "OpConstantComposite":
            parts = []
            for c in i.ops:
                if c not in self.consts:
                    self.fail(i, f"constituent %{c} of a constant composite is not a constant")
                parts.append(self.consts[c][1])
            if isinstance(t, CoopMatrixType):
                return t, parts[0]
            return t, parts
        return t, literal(t, i.ops, i, self)

    def _spec_constant(self, i: Instruction):
        t = self.type(i.type_id, i)
        if i.opname == "OpSpecConstant":
            default = literal(t, i.ops, i, self)
        else:
            default = i.opname == "OpSpecConstantTrue"
        spec = self.decos.get(i.result, {}).get("SpecId")
        self.spec_defaults[i.result] = default
        if spec is None:      # not settable: a constant
            self.consts[i.result] = (t, default)
            return
        same = [o for o in self.overrides.values() if o.id == spec[0]]
        kept = next((o for o in same if o.type == t), None)
        if kept is not None:      # glslang declares local_size_x_id twice: one host value
            self.overrides[i.result] = kept
            return
        if same and (not isinstance(t, ScalarType) or same[0].type.size != t.size):
            # one host value of the constant's size (VUID-VkSpecializationMapEntry-constantID-00776)
            self.fail(i, f"SpecId {spec[0]} is declared as {same[0].type} and as {t}, of another size: "
                         f"Vulkan sets it with one value of the constant's size",
                      hint="declare the constant with types of one size (int and uint)")
        # a SpecId declared with two types of one size is one host value, its bytes read as
        # each type (emu.isa.constants.host_override_values)
        name = self.name(i.result, f"spec{spec[0]}")
        taken = {o.name for o in self.overrides.values()}
        name = name if name not in taken else f"{name}_{t}"
        self.overrides[i.result] = Override(name, t, spec[0], default, self.loc(i))

    # -- variables ------------------------------------------------------------------------------
    def _variable(self, i: Instruction):
        ptr = self.types[i.type_id]
        sc, pointee = ptr[1], ptr[2]
        d = self.decos.get(i.result, {})
        if isinstance(pointee, images.HandleArray):
            self.fail(i, "arrays of images or samplers (descriptor arrays) are not supported by emu",
                      hint="declare each image and sampler at its own binding")
        if images.is_handle_desc(pointee):
            if sc != "UniformConstant":
                self.fail(i, f"an image or sampler variable in the {sc} storage class (UniformConstant holds them)")
            self.handle_vars[i.result] = i      # declared once the module is read (images.declare)
            return
        if sc == "Input":
            if "BuiltIn" not in d:
                self.fail(i, "a compute shader's Input variables must be builtins")
            b = BUILTINS.get(d["BuiltIn"][0])
            if b is None:
                self.fail(i, f"builtin {d['BuiltIn'][0]} is not supported",
                          hint=f"emu provides {', '.join(BUILTINS)}")
            self.builtin_vars[i.result] = BuiltinVar(b, pointee)
            return
        space = SPACES.get(sc)
        if space is None or sc == "Function":
            self.fail(i, f"variables in the {sc} storage class are not supported")
        if pointee is None or isinstance(pointee, tuple) or _holds_void(pointee):
            self.fail(i, "the variable's type is not a data type")
        block_decos = self.decos.get(i.type_id and self.defs[i.type_id].ops[1], {})
        if sc == "Uniform" and "BufferBlock" in block_decos:
            space = "storage"
        group = binding = None
        access = "read_write"
        if space in ("storage", "uniform"):
            if sc == "PushConstant":
                group, binding = PUSH_CONSTANTS
            else:
                if "DescriptorSet" not in d or "Binding" not in d:
                    self.fail(i, "a buffer variable needs DescriptorSet and Binding decorations")
                group, binding = d["DescriptorSet"][0], d["Binding"][0]
            st = self.defs[i.type_id].ops[1]
            members = len(pointee.members) if isinstance(pointee, StructType) else 0
            readonly = "NonWritable" in d or (members and all(
                "NonWritable" in self.member_decos.get((st, k), {}) for k in range(members)))
            access = "read" if readonly or space == "uniform" else "read_write"
        init = None
        if len(i.ops) > 1:
            if i.ops[1] not in self.consts:
                self.fail(i, "a module-scope variable's initializer must be a constant")
            init = self.consts[i.ops[1]][1]
        block = pointee.name if isinstance(pointee, StructType) else f"g{i.result}"
        base = "push_constants" if sc == "PushConstant" else \
            self.name(i.result, block) if self.names.get(i.result) else block   # anonymous blocks
        name, n = base, 1
        while name in self.global_names:
            n += 1
            name = f"{base}_{n}"
        self.global_names.add(name)
        # with WorkgroupMemoryExplicitLayoutKHR, the Block-decorated workgroup variables alias
        # one another: each starts at the first byte of the workgroup's memory
        aliased = space == "workgroup" and "WorkgroupMemoryExplicitLayoutKHR" in self.capabilities \
            and "Block" in block_decos
        self.globals[i.result] = Global(name, space, pointee, access, group, binding, init, self.loc(i),
                                        aliased=aliased)


def is_physical(t) -> bool:
    """A PhysicalStorageBuffer pointer type (a ("ptr", class, pointee) tuple)."""
    return isinstance(t, tuple) and len(t) == 3 and t[0] == "ptr" and t[1] == "PhysicalStorageBuffer"


def _scalar_align(t: Type) -> int:
    """The alignment of `t` in Vulkan's scalar block layout: that of its largest scalar."""
    if isinstance(t, ScalarType):
        return t.size
    if isinstance(t, StructType):
        return max(_scalar_align(m.type) for m in t.members)
    return _scalar_align(t.elem)


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


# OpSpecConstantOp's integer operations, for lengths of arrays (operands as read: signed for
# signed types, the result wrapped to the result type)
SPEC_INT_OPS = {
    "IAdd": lambda a, b: a + b, "ISub": lambda a, b: a - b, "IMul": lambda a, b: a * b,
    "UDiv": lambda a, b: a // b, "SDiv": _tdiv,
    "UMod": lambda a, b: a % b, "SRem": lambda a, b: a - b * _tdiv(a, b),
    "SMod": lambda a, b: a % b, "ShiftLeftLogical": lambda a, b: a << b,
    "ShiftRightLogical": lambda a, b: a >> b, "ShiftRightArithmetic": lambda a, b: a >> b,
    "BitwiseAnd": lambda a, b: a & b, "BitwiseOr": lambda a, b: a | b, "BitwiseXor": lambda a, b: a ^ b,
    "Not": lambda a: ~a, "SNegate": lambda a: -a, "IEqual": lambda a, b: a == b,
    "INotEqual": lambda a, b: a != b, "ULessThan": lambda a, b: a < b, "SLessThan": lambda a, b: a < b,
    "UGreaterThan": lambda a, b: a > b, "SGreaterThan": lambda a, b: a > b,
    "ULessThanEqual": lambda a, b: a <= b, "SLessThanEqual": lambda a, b: a <= b,
    "UGreaterThanEqual": lambda a, b: a >= b, "SGreaterThanEqual": lambda a, b: a >= b,
    "UConvert": lambda a: a, "SConvert": lambda a: a,
    "LogicalAnd": lambda a, b: a and b, "LogicalOr": lambda a, b: a or b, "LogicalNot": lambda a: not a,
    "LogicalEqual": lambda a, b: bool(a) == bool(b), "LogicalNotEqual": lambda a, b: bool(a) != bool(b),
}
UNSIGNED_SPEC_OPS = {"UDiv", "UMod", "ShiftRightLogical", "ULessThan", "UGreaterThan", "ULessThanEqual",
                     "UGreaterThanEqual", "UConvert"}


def literal(t: Type, words: list, i: Instruction, info) -> object:
    """The value of OpConstant's literal words for scalar type `t` (a 64-bit one takes two
    words, the low-order word first)."""
    if not isinstance(t, ScalarType):
        info.fail(i, f"a literal constant of type {t}")
    n = 2 if t.bits == 64 else 1
    if len(words) != n:
        info.fail(i, f"a {t} literal takes {n} word{'s' * (n > 1)}, not {len(words)}")
    w = words[0] | (words[1] << 32 if n == 2 else 0)
    if t.is_float:
        if t.bits == 64:
            return struct.unpack("<d", struct.pack("<Q", w))[0]
        if t.bits == 32:
            return struct.unpack("<f", struct.pack("<I", w))[0]
        if t.bits < 16:                 # an 8- or 4-bit float: its code in the low bits
            from ...numerics.dtypes import NP
            return float(np.array([w & ((1 << t.bits) - 1)], np.uint8).view(NP[t.name])[0])
        dt = np.float16 if t.name == "f16" else None
        if dt is None:
            import ml_dtypes
            dt = ml_dtypes.bfloat16
        return float(np.array([w & 0xFFFF], np.uint16).view(dt)[0])
    bits = t.bits
    w &= (1 << bits) - 1
    if t.kind == "sint" and w >> (bits - 1):
        w -= 1 << bits
    return w


def _zero(t: Type):
    if isinstance(t, ScalarType):
        return False if t.name == "bool" else 0.0 if t.is_float else 0
    if isinstance(t, VectorType):
        return [_zero(t.elem)] * t.n
    if isinstance(t, MatrixType):
        return [[_zero(t.elem)] * t.rows] * t.cols
    if isinstance(t, ArrayType):
        return [_zero(t.elem)] * (t.count or 0)
    if isinstance(t, StructType):
        return [_zero(m.type) for m in t.members]
    if isinstance(t, CoopMatrixType):
        return _zero(t.elem)
    return 0


def describe(i: Instruction, info=None) -> str:
    """An instruction as spirv-dis would write it (ids by their debug names where known)."""
    def idn(x):
        if info is not None and x in info.names:
            return f"%{info.names[x]}"
        return f"%{x}"
    parts = [f"{idn(i.result)} = " if i.result is not None else "", i.opname]
    if i.type_id is not None:
        parts.append(f" {idn(i.type_id)}")
    for o in i.ops[:6]:
        parts.append(f" {o}" if isinstance(o, (str, frozenset)) else f" {o}")
    return f"instruction {i.index}: " + "".join(parts)


def pointer_of(space: str, pointee: Type, access: str) -> PointerType:
    return PointerType(space, pointee, access)
