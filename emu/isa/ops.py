"""The op table: every IR op, defined once.

The verifier checks every instruction against this table (ops of IR text too); the printer and
the IR text parser write and read any instruction in the table's shape (operands, attrs, type,
blocks), and tests/isa/test_op_coverage.py round-trips every op through both and checks that
every dispatcher (executor, emitter, fusion JIT, tracer, uniformity) covers every op. Other code
names ops and their `fn` vocabularies through the checked names OP, BINARY, UNARY, ATOMIC,
SUBGROUP below, never as string literals.

`args` is (min, max) operand count (max None: variadic). `attrs` names the attributes the op
requires; `optional` those it may carry. `blocks` is the number of nested blocks (None: any).
"""
from __future__ import annotations

import keyword
from dataclasses import dataclass


@dataclass(frozen=True)
class OpDef:
    name: str
    args: tuple[int, int | None]
    result: bool | None     # produces a value (None: when its callee returns one)
    doc: str
    attrs: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    blocks: int | None = 0
    effects: bool = False   # writes memory, synchronises or transfers control
    terminator: bool = False
    cooperative: bool = False


BINARY_OPS = ("add", "sub", "mul", "div", "rem", "and", "or", "xor", "shl", "shr",
              "eq", "ne", "lt", "le", "gt", "ge")
COMPARE_OPS = ("eq", "ne", "lt", "le", "gt", "ge")
UNARY_OPS = ("neg", "not")
ATOMIC_OPS = ("load", "store", "add", "sub", "max", "min", "and", "or", "xor", "exchange",
              "compare_exchange_weak",
              "store_max", "store_min")   # atomic<vec2<u32>> only, as one 64-bit unsigned value
BARRIERS = ("workgroup", "storage", "texture", "subgroup")
SUBGROUP_OPS = ("add", "mul", "min", "max", "and", "or", "xor", "inclusive_add", "exclusive_add",
                "inclusive_mul", "exclusive_mul", "broadcast", "broadcast_first", "shuffle",
                "shuffle_xor", "shuffle_up", "shuffle_down", "ballot", "elect", "all", "any",
                "quad_broadcast")
INPUTS = ("global_invocation_id", "local_invocation_id", "local_invocation_index", "workgroup_id",
          "num_workgroups", "subgroup_invocation_id", "subgroup_size", "subgroup_id", "num_subgroups")
# `fn` of builtin that no device runs on f64: the GLSL.std.450 instructions that SPIR-V drivers
# run them with take only 16- and 32-bit floats (glslang has no double overloads; lavapipe, Mesa
# 25.0.7, takes naga's invalid f64 SPIR-V and gives sin(0.5) = 0, exp(0.5) = 3.6e-313; sqrt and
# inverseSqrt, which take 64 bits, were right), and HLSL and Metal have no f64 ones either. Both
# front ends refuse an f64 call of one (WGSL folds one of constants first).
NO_F64_BUILTINS = frozenset(("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
                             "acosh", "atanh", "atan2", "pow", "exp", "log", "exp2", "log2", "degrees",
                             "radians"))
COOP_SCALAR_OPS = ("add", "sub", "mul")
LAYOUTS = ("row_major", "col_major")
# `fn` of texture: WGSL's texture builtins that run in compute shaders
TEXTURE_OPS = ("load", "store", "dimensions", "num_layers", "num_levels", "num_samples", "sample_level",
               "sample_grad", "sample_compare_level", "gather", "gather_compare",
               "sample_base_clamp_to_edge")
# `operands` of texture: the role of each operand, in order
TEXTURE_OPERANDS = ("texture", "sampler", "component", "coords", "array_index", "level", "sample_index",
                    "ddx", "ddy", "depth_ref", "offset", "value")

_OPS = [
    # values
    OpDef("const", (0, 0), True, "a constant of the result type", attrs=("value",)),
    OpDef("input", (0, 0), True, "a builtin input value of the invocation", attrs=("builtin",)),
    OpDef("override", (0, 0), True, "the pipeline's value of a module override", attrs=("name",)),
    OpDef("undef", (0, 0), True, "a zero value (for declared, never-assigned lets of paths)"),
    # memory
    OpDef("global", (0, 0), True, "pointer to a module-scope variable", attrs=("name",)),
    OpDef("var", (0, 1), True, "allocate a function variable, zero or its operand as initial value",
          optional=("name",), effects=True),
    OpDef("access", (1, None), True,
          "pointer into a composite: `path` lists constant indices, -1 takes the next operand",
          attrs=("path",)),
    OpDef("load", (1, 1), True, "read the value a pointer points at"),
    OpDef("store", (2, 2), False, "write a value through a pointer", effects=True),
    OpDef("array_length", (1, 1), True, "element count of a runtime-sized array"),
    OpDef("address_ptr", (1, 1), True, "pointer to the memory at a device address (a u64 operand: a "
          "buffer's device address plus an offset; SPIR-V's PhysicalStorageBuffer pointers); `align`: "
          "the alignment the shader promises (its Aligned operand)", optional=("align",), effects=True),
    OpDef("atomic", (1, 3), True, "atomic read-modify-write through a pointer", attrs=("fn",),
          effects=True),
    OpDef("barrier", (0, 0), False, "control and memory barrier of the workgroup (or subgroup)",
          attrs=("kind",),
          effects=True),
    # composites
    OpDef("construct", (1, None), True,
          "vector/matrix/array/struct from components (one scalar operand splats a vector)"),
    OpDef("extract", (1, None), True,
          "component of a composite value: `path` as in access", attrs=("path",)),
    OpDef("insert", (2, None), True,
          "copy of a composite with one component replaced: `path` as in access", attrs=("path",)),
    OpDef("swizzle", (1, 1), True, "vector of the listed components", attrs=("components",)),
    # arithmetic (operands already of one type; numerics does the work)
    OpDef("unary", (1, 1), True, "neg (arithmetic negation) or not (bitwise/logical)", attrs=("fn",)),
    OpDef("binary", (2, 2), True, "arithmetic, bit, shift or comparison of two operands "
          "(`exact`: never contracted into a fused multiply-add, SPIR-V's NoContraction; `contracted`: "
          "the compiler model's decision that kept it rounded, emu/isa/compiler.py)",
          attrs=("fn",), optional=("exact", "contracted")),
    OpDef("select", (3, 3), True, "select(f, t, cond) per component"),
    OpDef("convert", (1, 1), True, "value conversion to the result type (`native`: SPIR-V's own, "
          "which the device's instruction does, not WGSL's clamped one; `saturate`: to an 8-bit "
          "float, out-of-range values become its largest finite one, SPV_EXT_float8)",
          optional=("native", "saturate")),
    OpDef("bitcast", (1, 1), True, "reinterpret the bits as the result type"),
    OpDef("builtin", (0, None), True, "a numeric builtin function of WGSL (`contracted`: the compiler "
          "model's decision that formed it, emu/isa/compiler.py)", attrs=("fn",), optional=("contracted",)),
    # subgroups
    OpDef("subgroup", (0, 2), True, "subgroup operation over the active lanes (`cluster` N: a "
          "reduction over each N consecutive invocations, SPIR-V's ClusteredReduce)", attrs=("fn",),
          optional=("cluster",), effects=True),
    # textures
    OpDef("texture", (1, 7), None, "a texture builtin: `fn` names it, `operands` gives the role of "
          "each operand (texture, sampler, coords, level, ...); `out_of_bounds` \"zero_texel\": an out-of-bounds "
          "load gives the zero texel (Vulkan's robustImageAccess2) instead of a clamped one (WebGPU)",
          attrs=("fn", "operands"), optional=("out_of_bounds",), effects=True),
    # calls and control flow
    OpDef("call", (0, None), None, "call a function of the module", attrs=("callee",),
          effects=True),
    OpDef("if", (1, 1), False, "run block 0 where the condition holds, block 1 elsewhere", blocks=2,
          effects=True),
    OpDef("loop", (0, 0), False,
          "run block 0 (body) then block 1 (continuing) until every lane broke or returned",
          blocks=2, effects=True),
    OpDef("switch", (1, 1), False,
          "run the block whose `cases` entry lists the selector ('default' matches the rest)",
          attrs=("cases",), blocks=None, effects=True),
    OpDef("break", (0, 0), False, "leave the innermost loop or switch", effects=True,
          terminator=True),
    OpDef("continue", (0, 0), False, "go to the continuing block of the innermost loop",
          effects=True, terminator=True),
    OpDef("break_if", (1, 1), False, "end of a continuing block: leave the loop where true",
          effects=True, terminator=True),
    OpDef("return", (0, 1), False, "leave the function (with a value)", effects=True,
          terminator=True),
    # cooperative matrices
    OpDef("coop_fill", (1, 1), True, "matrix with every element equal to the scalar operand",
          cooperative=True),
    OpDef("coop_load", (3, 3), True,
          "load a matrix from (array pointer, element offset, stride)", attrs=("layout",),
          optional=("stride_unit",), effects=True, cooperative=True),
    OpDef("coop_store", (4, 4), False,
          "store a matrix to (array pointer, element offset, value, stride)", attrs=("layout",),
          optional=("stride_unit",), effects=True, cooperative=True),
    OpDef("coop_mma", (3, 3), True, "A x B + C on the device's matrix unit",
          optional=("saturate",), effects=True, cooperative=True),
    OpDef("coop_mul", (2, 2), True, "A x B on the device's matrix unit", effects=True,
          cooperative=True),
    OpDef("coop_scalar", (2, 2), True, "element-wise matrix (op) scalar", attrs=("fn",),
          effects=True, cooperative=True),
    OpDef("coop_convert", (1, 1), True, "convert each element to the result's element type "
          "(and use; transposed with `transpose`)", optional=("saturate", "transpose"), cooperative=True),
    OpDef("coop_reduce", (1, 1), True,
          "combine a matrix's rows, columns, all elements or 2x2 blocks with fn (add, mul, min, max, or "
          "first / second: the combine function returns that operand); every element of the result "
          "gets its group's value (VK_NV_cooperative_matrix2)", attrs=("mode", "fn"),
          cooperative=True),
    OpDef("coop_per_element", (1, None), True,
          "call `callee`(row, column, element, operands...) for every element of the matrix (an operand "
          "that is a matrix of its type gives its element); the results form the matrix "
          "(VK_NV_cooperative_matrix2)", attrs=("callee",), effects=True, cooperative=True),
    OpDef("coop_load_tensor", (4, 5), True,
          "load a matrix from (array pointer, element offset) through a tensor layout (and view), "
          "elements the view clips keeping the third operand's (VK_NV_cooperative_matrix2); with "
          "`decode`, each element is `decode`(the device address of its block, of `decode_size` bytes "
          "each, the block coordinates, the coordinates in the block) instead of the bytes there",
          optional=("decode", "decode_size"), effects=True, cooperative=True),
    OpDef("coop_store_tensor", (4, 5), False,
          "store a matrix (third operand) to (array pointer, element offset) through a tensor layout "
          "(and view)", effects=True, cooperative=True),
    OpDef("coop_length", (0, 0), True, "number of elements each lane holds of the result type",
          attrs=("matrix",), cooperative=True),
    OpDef("coop_coordinate", (2, 2), True, "(row, column) of the element the lane holds at index "
          "(second operand) of the matrix (first operand), as vec2<u32> "
          "(VK_EXT_cooperative_matrix_maintenance1)"),
]

OPS: dict[str, OpDef] = {o.name: o for o in _OPS}


class Names:
    """A vocabulary as checked names: `OP.coop_load` is "coop_load", and a misspelt name fails
    with AttributeError where it is written, instead of comparing unequal forever. Names that are
    Python keywords take a trailing underscore (`OP.if_`, `UNARY.not_`)."""

    def __init__(self, kind: str, names):
        self._kind, self._names = kind, tuple(names)
        for n in self._names:
            setattr(self, n + "_" if keyword.iskeyword(n) else n, n)

    def __iter__(self):
        return iter(self._names)

    def __contains__(self, name) -> bool:
        return name in self._names

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"<{self._kind}: {', '.join(self._names)}>"


OP = Names("op", OPS)                       # IR op names
BINARY = Names("binary fn", BINARY_OPS)     # `fn` of binary
UNARY = Names("unary fn", UNARY_OPS)        # `fn` of unary
ATOMIC = Names("atomic fn", ATOMIC_OPS)     # `fn` of atomic
SUBGROUP = Names("subgroup fn", SUBGROUP_OPS)   # `fn` of subgroup
TEXTURE = Names("texture fn", TEXTURE_OPS)      # `fn` of texture
