"""SPIR-V instructions -> IR instructions (one method or one table row per instruction family).

The IR's arithmetic takes operands of one type and reads signedness from that type, so the
signed/unsigned SPIR-V opcodes bitcast their operands to the signedness they name first.
"""
from __future__ import annotations

from ...isa.ops import NO_F64_BUILTINS
from ...isa.types import (BOOL, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, ArrayType, CoopMatrixType, MatrixType,
                          PointerType, ScalarType, StructType, Type, VectorType, scalar_of, width,
                          with_scalar)
from ...isa.ir import Value
from .grammar import Instruction, aliases, load
from .module import SUBGROUP_SCOPE, WORKGROUP_SCOPE, BuiltinVar, is_physical
from ...isa.types import VOID, TupleType

# opcode -> (IR binary fn, operand signedness: I any integer (the result's), U, S, F float, B bool)
BINARY = {
    "OpIAdd": ("add", "I"), "OpFAdd": ("add", "F"), "OpISub": ("sub", "I"), "OpFSub": ("sub", "F"),
    "OpIMul": ("mul", "I"), "OpFMul": ("mul", "F"), "OpUDiv": ("div", "U"), "OpSDiv": ("div", "S"),
    "OpFDiv": ("div", "F"), "OpUMod": ("rem", "U"), "OpSRem": ("rem", "S"), "OpFRem": ("rem", "F"),
    "OpBitwiseAnd": ("and", "I"), "OpBitwiseOr": ("or", "I"), "OpBitwiseXor": ("xor", "I"),
    "OpShiftLeftLogical": ("shl", "I"), "OpShiftRightLogical": ("shr", "U"),
    "OpShiftRightArithmetic": ("shr", "S"),
    "OpIEqual": ("eq", "I"), "OpINotEqual": ("ne", "I"),
    "OpULessThan": ("lt", "U"), "OpULessThanEqual": ("le", "U"), "OpUGreaterThan": ("gt", "U"),
    "OpUGreaterThanEqual": ("ge", "U"), "OpSLessThan": ("lt", "S"), "OpSLessThanEqual": ("le", "S"),
    "OpSGreaterThan": ("gt", "S"), "OpSGreaterThanEqual": ("ge", "S"),
    # ordered comparisons are false where an operand is NaN, as the IR's are
    "OpFOrdEqual": ("eq", "F"), "OpFOrdLessThan": ("lt", "F"), "OpFOrdLessThanEqual": ("le", "F"),
    "OpFOrdGreaterThan": ("gt", "F"), "OpFOrdGreaterThanEqual": ("ge", "F"),
    "OpFUnordNotEqual": ("ne", "F"),
    "OpLogicalAnd": ("and", "B"), "OpLogicalOr": ("or", "B"), "OpLogicalEqual": ("eq", "B"),
    "OpLogicalNotEqual": ("ne", "B"),
}
# unordered comparisons: not(the ordered inverse)
UNORDERED = {"OpFUnordEqual": "OpFOrdNotEqual", "OpFUnordLessThan": "OpFOrdGreaterThanEqual",
             "OpFUnordLessThanEqual": "OpFOrdGreaterThan", "OpFUnordGreaterThan": "OpFOrdLessThanEqual",
             "OpFUnordGreaterThanEqual": "OpFOrdLessThan"}
# GLSL.std.450 -> (IR builtin fn, operand signedness)
GLSL = {
    "Round": ("round", "F"), "RoundEven": ("round", "F"), "Trunc": ("trunc", "F"),
    "FAbs": ("abs", "F"), "SAbs": ("abs", "S"), "FSign": ("sign", "F"), "SSign": ("sign", "S"),
    "Floor": ("floor", "F"), "Ceil": ("ceil", "F"), "Fract": ("fract", "F"),
    "Radians": ("radians", "F"), "Degrees": ("degrees", "F"), "Sin": ("sin", "F"), "Cos": ("cos", "F"),
    "Tan": ("tan", "F"), "Asin": ("asin", "F"), "Acos": ("acos", "F"), "Atan": ("atan", "F"),
    "Sinh": ("sinh", "F"), "Cosh": ("cosh", "F"), "Tanh": ("tanh", "F"), "Asinh": ("asinh", "F"),
    "Acosh": ("acosh", "F"), "Atanh": ("atanh", "F"), "Atan2": ("atan2", "F"), "Pow": ("pow", "F"),
    "Exp": ("exp", "F"), "Log": ("log", "F"), "Exp2": ("exp2", "F"), "Log2": ("log2", "F"),
    "Sqrt": ("sqrt", "F"), "InverseSqrt": ("inverseSqrt", "F"),
    "FMin": ("min", "F"), "UMin": ("min", "U"), "SMin": ("min", "S"),
    "FMax": ("max", "F"), "UMax": ("max", "U"), "SMax": ("max", "S"),
    "FClamp": ("clamp", "F"), "UClamp": ("clamp", "U"), "SClamp": ("clamp", "S"),
    # the NaN-avoiding forms (Tint writes them): emu's float min/max are minimumNumber/maximumNumber
    # (a NaN operand gives the other), which is what these require
    "NMin": ("min", "F"), "NMax": ("max", "F"), "NClamp": ("clamp", "F"),
    "FMix": ("mix", "F"), "Step": ("step", "F"), "SmoothStep": ("smoothstep", "F"), "Fma": ("fma", "F"),
    "Ldexp": ("ldexp", "F"), "Length": ("length", "F"), "Distance": ("distance", "F"),
    "Cross": ("cross", "F"), "Normalize": ("normalize", "F"), "FaceForward": ("faceForward", "F"),
    "Reflect": ("reflect", "F"), "Refract": ("refract", "F"),
    "PackSnorm4x8": ("pack4x8snorm", "F"), "PackUnorm4x8": ("pack4x8unorm", "F"),
    "PackSnorm2x16": ("pack2x16snorm", "F"), "PackUnorm2x16": ("pack2x16unorm", "F"),
    "PackHalf2x16": ("pack2x16float", "F"), "UnpackSnorm2x16": ("unpack2x16snorm", "I"),
    "UnpackUnorm2x16": ("unpack2x16unorm", "I"), "UnpackHalf2x16": ("unpack2x16float", "I"),
    "UnpackSnorm4x8": ("unpack4x8snorm", "I"), "UnpackUnorm4x8": ("unpack4x8unorm", "I"),
    "FindILsb": ("firstTrailingBit", "I"), "FindSMsb": ("firstLeadingBit", "S"),
    "FindUMsb": ("firstLeadingBit", "U"),
}
# builtins whose operands may have another number of components than their result
RESHAPING = {"length", "distance", "dot", "pack4x8snorm", "pack4x8unorm", "pack2x16snorm", "pack2x16unorm",
             "pack2x16float", "unpack2x16snorm", "unpack2x16unorm", "unpack2x16float", "unpack4x8snorm",
             "unpack4x8unorm"}
# OpGroupNonUniform* arithmetic -> IR subgroup fn (with the GroupOperation's scan prefix)
GROUP_ARITH = {"IAdd": "add", "FAdd": "add", "IMul": "mul", "FMul": "mul", "SMin": "min", "UMin": "min",
               "FMin": "min", "SMax": "max", "UMax": "max", "FMax": "max", "BitwiseAnd": "and",
               "BitwiseOr": "or", "BitwiseXor": "xor", "LogicalAnd": "and", "LogicalOr": "or",
               "LogicalXor": "xor"}
GROUP_SIGN = {"SMin": "S", "SMax": "S", "UMin": "U", "UMax": "U"}
GROUP_PLAIN = {"OpGroupNonUniformBroadcast": "broadcast", "OpGroupNonUniformBroadcastFirst": "broadcast_first",
               "OpGroupNonUniformShuffle": "shuffle", "OpGroupNonUniformShuffleXor": "shuffle_xor",
               "OpGroupNonUniformShuffleUp": "shuffle_up", "OpGroupNonUniformShuffleDown": "shuffle_down",
               "OpGroupNonUniformBallot": "ballot", "OpGroupNonUniformAll": "all",
               "OpGroupNonUniformAny": "any"}
ATOMICS = {"OpAtomicIAdd": ("add", "I"), "OpAtomicISub": ("sub", "I"), "OpAtomicSMax": ("max", "S"),
           "OpAtomicUMax": ("max", "U"), "OpAtomicSMin": ("min", "S"), "OpAtomicUMin": ("min", "U"),
           "OpAtomicAnd": ("and", "I"), "OpAtomicOr": ("or", "I"), "OpAtomicXor": ("xor", "I"),
           "OpAtomicExchange": ("exchange", "I")}
# instructions that only carry debug, decoration or declaration information inside functions
IGNORED = {"OpLine", "OpNoLine", "OpNop", "OpMemoryBarrier", "OpSelectionMerge", "OpLoopMerge",
           "OpModuleProcessed", "OpName", "OpDecorate"}
FLAG_USES = {0: "A", 1: "B", 2: "C"}


def scalar_of_or_none(t: Type):
    try:
        return scalar_of(t)
    except TypeError:
        return None


def _partner(s: ScalarType, kind: str) -> ScalarType:
    """The integer type of the same width with the signedness `kind` ('S' or 'U')."""
    if kind == "S":
        return {U32: I32, U8: I8, U16: I16, U64: I64}.get(s, s)
    return {I32: U32, I8: U8, I16: U16, I64: U64}.get(s, s)


class OpLowering:
    """Mixin of FunctionLowerer: `lower(i)` for one non-control-flow instruction."""

    def lower(self, i: Instruction):
        op = i.opname
        if op in IGNORED:
            return
        if op == "OpExtInst" and self.info.ext_sets.get(i.ops[0], "").startswith("NonSemantic."):
            return
        if self.physical(i):            # PhysicalStorageBuffer pointers (physical.py)
            return
        if op in BINARY:
            return self.define(i.result, self.binary(i, *BINARY[op], i.ops[0], i.ops[1]))
        if op in UNORDERED:
            inv = self.binary(i, *BINARY.get(UNORDERED[op], ("", "")), i.ops[0], i.ops[1]) \
                if UNORDERED[op] in BINARY else self.ord_ne(i, i.ops[0], i.ops[1])
            return self.define(i.result, self.b.op("unary", [inv], inv.type, fn="not"))
        if op == "OpFOrdNotEqual":
            return self.define(i.result, self.ord_ne(i, i.ops[0], i.ops[1]))
        m = next((getattr(self, "op_" + n[2:]) for n in aliases(op) if hasattr(self, "op_" + n[2:])), None)
        if m is None:
            if op.startswith("OpGroupNonUniform"):
                return self.group(i)
            if op.startswith("OpAtomic"):
                return self.atomic(i)
            self.fail(i, f"{op} is not supported by emu's SPIR-V front end",
                      hint="see emu/frontend/spirv for the supported instructions")
        r = m(i)
        if r is not None and i.result is not None:
            self.define(i.result, r)

    def rtype(self, i: Instruction) -> Type:
        return self.type(i.type_id, i)

    # -- arithmetic -----------------------------------------------------------------------------
    def as_sign(self, v, kind: str, like: Type | None = None):
        """`v` bitcast to the signedness `kind` (or to the integer type of `like`)."""
        s = scalar_of(v.type)
        if not s.is_int:
            return v
        want = scalar_of(like) if like is not None else _partner(s, kind)
        if want == s or not want.is_int:
            return v
        return self.b.op("bitcast", [v], with_scalar(v.type, want))

    def binary(self, i: Instruction, fn: str, kind: str, a_id: int, b_id: int):
        rt = self.rtype(i)
        a, b = self.val(a_id, i), self.val(b_id, i)
        if isinstance(a.type, CoopMatrixType):
            return self.coop_binary(i, fn, rt, a, b)
        if kind == "I":
            like = a.type if fn in ("eq", "ne") else rt
            a = self.as_sign(a, kind, like)
            b = self.as_sign(b, kind, like) if fn not in ("shl",) else b
        elif kind in ("U", "S"):
            a = self.as_sign(a, kind)
            b = self.as_sign(b, kind) if fn != "shr" else b
        if fn in ("shl", "shr"):
            b = self.as_sign(b, "U")
            if scalar_of(b.type) != U32:
                # SPIR-V's amount may be of any width, the IR's is u32: its value (a u64's low word;
                # past the shifted type's width it is undefined)
                b = self.b.op("convert", [b], with_scalar(b.type, U32))
        if width(a.type) != width(b.type):       # vector op scalar
            big = a if width(a.type) > width(b.type) else b
            small = b if big is a else a
            small = self.b.op("construct", [small], with_scalar(big.type, scalar_of(small.type)))
            a, b = (big, small) if big is a else (small, big)
        t = with_scalar(a.type, BOOL) if fn in ("eq", "ne", "lt", "le", "gt", "ge") else a.type
        exact = {"exact": True} if "NoContraction" in self.info.decos.get(i.result, {}) else {}
        r = self.b.op("binary", [a, b], t, fn=fn, **exact)
        return self.as_sign(r, "", rt) if r.type != rt else r

    def ord_ne(self, i, a_id, b_id):
        a, b = self.val(a_id, i), self.val(b_id, i)
        t = with_scalar(a.type, BOOL)
        ne = self.b.op("binary", [a, b], t, fn="ne")
        a_ok = self.b.op("binary", [a, a], t, fn="eq")
        b_ok = self.b.op("binary", [b, b], t, fn="eq")
        both = self.b.op("binary", [a_ok, b_ok], t, fn="and")
        return self.b.op("binary", [ne, both], t, fn="and")

    def op_SMod(self, i):
        # sign of the divisor: r = a rem b; where r != 0 and sign(r) != sign(b): r + b
        rt = self.rtype(i)
        a, b = self.as_sign(self.val(i.ops[0], i), "S"), self.as_sign(self.val(i.ops[1], i), "S")
        r = self.b.op("binary", [a, b], a.type, fn="rem")
        zero = self.b.op("const", [], a.type, value=[0] * width(a.type) if width(a.type) > 1 else 0)
        bt = with_scalar(a.type, BOOL)
        fix = self.b.op("binary", [self.b.op("binary", [r, zero], bt, fn="ne"),
                                   self.b.op("binary", [self.b.op("binary", [r, zero], bt, fn="lt"),
                                                        self.b.op("binary", [b, zero], bt, fn="lt")],
                                             bt, fn="ne")], bt, fn="and")
        out = self.b.op("select", [r, self.b.op("binary", [r, b], a.type, fn="add"), fix], a.type)
        return self.as_sign(out, "", rt)

    def op_FMod(self, i):
        # x - y * floor(x / y)
        a, b = self.val(i.ops[0], i), self.val(i.ops[1], i)
        q = self.b.op("builtin", [self.b.op("binary", [a, b], a.type, fn="div")], a.type, fn="floor")
        return self.b.op("binary", [a, self.b.op("binary", [b, q], a.type, fn="mul")], a.type, fn="sub")

    def unary(self, i, fn, kind):
        rt = self.rtype(i)
        a = self.val(i.ops[0], i)
        if isinstance(a.type, CoopMatrixType):
            return self.b.op("unary", [a], a.type, fn=fn)
        a = self.as_sign(a, kind, rt if kind == "I" else None)
        r = self.b.op("unary", [a], a.type, fn=fn)
        return self.as_sign(r, "", rt) if r.type != rt else r

    def op_SNegate(self, i):
        return self.unary(i, "neg", "S")

    def op_FNegate(self, i):
        return self.unary(i, "neg", "F")

    def op_Not(self, i):
        return self.unary(i, "not", "I")

    def op_LogicalNot(self, i):
        return self.unary(i, "not", "B")

    def op_Select(self, i):
        c, t, f = (self.val(x, i) for x in i.ops)
        rt = self.rtype(i)
        if scalar_of_or_none(c.type) != BOOL or t.type != rt or f.type != rt:
            self.fail(i, f"OpSelect needs a bool condition and two {rt} operands")
        if not isinstance(rt, (ScalarType, VectorType)):
            self.fail(i, f"OpSelect of {rt} is not supported (scalars and vectors only)")
        if width(c.type) != width(rt):
            c = self.b.op("construct", [c], with_scalar(rt, BOOL))
        return self.b.op("select", [f, t, c], rt)

    def op_IsNan(self, i):
        a = self.val(i.ops[0], i)
        return self.b.op("binary", [a, a], with_scalar(a.type, BOOL), fn="ne")

    def op_IsInf(self, i):
        a = self.val(i.ops[0], i)
        s = scalar_of(a.type)
        inf = self.b.op("const", [], a.type, value=[float("inf")] * width(a.type) if width(a.type) > 1 else float("inf"))
        return self.b.op("binary", [self.b.op("builtin", [a], a.type, fn="abs"), inf],
                         with_scalar(a.type, BOOL), fn="eq") if s.is_float else None

    def op_Any(self, i):
        return self.reduce_bool(i, "or")

    def op_All(self, i):
        return self.reduce_bool(i, "and")

    def reduce_bool(self, i, fn):
        v = self.val(i.ops[0], i)
        r = self.b.op("extract", [v], BOOL, path=[0])
        for k in range(1, width(v.type)):
            r = self.b.op("binary", [r, self.b.op("extract", [v], BOOL, path=[k])], BOOL, fn=fn)
        return r

    def op_Dot(self, i):
        a, b = self.val(i.ops[0], i), self.val(i.ops[1], i)
        return self.b.op("builtin", [a, b], self.rtype(i), fn="dot")

    def op_VectorTimesScalar(self, i):
        return self.op_vector_scalar(self.val(i.ops[0], i), self.val(i.ops[1], i))

    def op_MatrixTimesScalar(self, i):
        m, s = self.val(i.ops[0], i), self.val(i.ops[1], i)
        if isinstance(m.type, CoopMatrixType) and s.type == m.type.elem:
            return self.b.op("coop_scalar", [m, s], m.type, fn="mul")
        return self.b.op("construct", [self.op_vector_scalar(self._column(m, k), s) for k in range(m.type.cols)], m.type)

    # plain matrices (OpTypeMatrix: columns of float vectors), as the WGSL front end lowers them:
    # vector x matrix is one dot product a column; matrix x vector sums the columns scaled in order
    def _column(self, m, k):
        return self.b.op("extract", [m], m.type.column, path=[k])

    def op_vector_scalar(self, v, s):
        return self.b.op("binary", [v, self.b.op("construct", [s], v.type)], v.type, fn="mul")

    def op_VectorTimesMatrix(self, i):
        v, m = self.val(i.ops[0], i), self.val(i.ops[1], i)
        dots = [self.b.op("builtin", [v, self._column(m, k)], v.type.elem, fn="dot") for k in range(m.type.cols)]
        return self.b.op("construct", dots, self.rtype(i))

    def op_MatrixTimesVector(self, i):
        return self._matrix_vector(self.val(i.ops[0], i), self.val(i.ops[1], i))

    def _matrix_vector(self, m, v):
        acc = None
        for k in range(m.type.cols):
            term = self.op_vector_scalar(self._column(m, k), self.b.op("extract", [v], v.type.elem, path=[k]))
            acc = term if acc is None else self.b.op("binary", [acc, term], term.type, fn="add")
        return acc

    def op_MatrixTimesMatrix(self, i):
        a, b = self.val(i.ops[0], i), self.val(i.ops[1], i)
        return self.b.op("construct", [self._matrix_vector(a, self._column(b, j)) for j in range(b.type.cols)],
                         self.rtype(i))

    def op_BitCount(self, i):
        return self.builtin(i, "countOneBits", "I", [i.ops[0]])

    def op_BitReverse(self, i):
        return self.builtin(i, "reverseBits", "I", [i.ops[0]])

    def op_BitFieldInsert(self, i):
        rt = self.rtype(i)
        base, ins = (self.as_sign(self.val(x, i), "", rt) for x in i.ops[:2])
        off, cnt = (self.as_sign(self.val(x, i), "U") for x in i.ops[2:4])
        return self.b.op("builtin", [base, ins, off, cnt], rt, fn="insertBits")

    def op_BitFieldSExtract(self, i):
        return self.extract_bits(i, "S")

    def op_BitFieldUExtract(self, i):
        return self.extract_bits(i, "U")

    def extract_bits(self, i, kind):
        rt = self.rtype(i)
        base = self.as_sign(self.val(i.ops[0], i), kind)
        off, cnt = (self.as_sign(self.val(x, i), "U") for x in i.ops[1:3])
        r = self.b.op("builtin", [base, off, cnt], base.type, fn="extractBits")
        return self.as_sign(r, "", rt) if r.type != rt else r

    def builtin(self, i, fn, kind, ids):
        rt = self.rtype(i)
        args = [self.val(x, i) for x in ids]
        if any(not isinstance(a.type, (ScalarType, VectorType)) for a in args):
            self.fail(i, f"{fn} takes scalars and vectors, not {', '.join(str(a.type) for a in args)}")
        if fn not in RESHAPING and any(width(a.type) != width(rt) for a in args[:2 if fn == "refract" else None]):
            self.fail(i, f"{i.opname} {fn} of {', '.join(str(a.type) for a in args)} gives {rt}: its operands "
                         f"have the result's number of components")
        if kind in ("S", "U"):
            args = [self.as_sign(a, kind) for a in args]
        elif kind == "I" and args and scalar_of(args[0].type).is_int and isinstance(rt, (ScalarType, VectorType)) \
                and scalar_of(rt).is_int:
            args = [self.as_sign(a, "", rt) if width(a.type) == width(rt) else a for a in args]
        res_t = rt
        if args and scalar_of(rt).is_int and scalar_of(args[0].type).is_int and width(args[0].type) == width(rt):
            res_t = with_scalar(rt, scalar_of(args[0].type))
        r = self.b.op("builtin", args, res_t, fn=fn)
        return self.as_sign(r, "", rt) if res_t != rt else r

    def op_ExtInst(self, i):
        set_name = self.info.ext_sets.get(i.ops[0])
        name = i.ops[1]
        if set_name == "GLSL.std.450" and name in ("PackDouble2x32", "UnpackDouble2x32") and len(i.ops) == 3:
            return self.bitcast(i, i.ops[2])       # a double as two 32-bit words and back
        if set_name == "GLSL.std.450" and name in ("FrexpStruct", "ModfStruct", "Frexp", "Modf") \
                and len(i.ops) == (3 if name.endswith("Struct") else 4):
            return self.frexp_modf(i, "frexp" if name.startswith("Frexp") else "modf", i.ops[2],
                                   None if name.endswith("Struct") else i.ops[3])
        if set_name != "GLSL.std.450" or name not in GLSL:
            self.fail(i, f"{set_name} {name} is not supported",
                      hint="emu maps the GLSL.std.450 functions that WGSL has to its builtins")
        fn, kind = GLSL[name]
        want = len(load("GLSL.std.450").by_name[name].get("operands", []))
        if len(i.ops) - 2 != want:
            self.fail(i, f"GLSL.std.450 {name} takes {want} operands, not {len(i.ops) - 2}")
        if fn in NO_F64_BUILTINS and scalar_of_or_none(self.rtype(i)) == F64:
            self.fail(i, f"GLSL.std.450 {name} of {self.rtype(i)} runs on no device: the instruction takes only "
                         f"16- and 32-bit floats (glslang has no double {name.lower()}, and drivers reject the "
                         f"module or compute it wrong)",
                      hint=f"compute it in f32: double({name.lower()}(float(x)))")
        return self.builtin(i, fn, kind, i.ops[2:])

    def frexp_modf(self, i, kind: str, x_id: int, out_id: int | None):
        """GLSL.std.450 FrexpStruct / ModfStruct (a struct of the two parts), Frexp / Modf (the
        exponent or whole part stored through a pointer): the IR's frexp / modf, whose exponent
        is an i32 (of an f64: an i64), converted to the integer type the module names; a zero
        fraction of modf takes the sign of x (GLSL.std.450's rule, not WGSL's)."""
        x = self.val(x_id, i)
        if not isinstance(x.type, (ScalarType, VectorType)) or not scalar_of(x.type).is_float:
            self.fail(i, f"{i.ops[1]} takes a float scalar or vector, not {x.type}")
        second = ("exp", with_scalar(x.type, I64 if scalar_of(x.type).bits == 64 else I32)) \
            if kind == "frexp" else ("whole", x.type)
        name = f"__{kind}_result_{x.type}".replace("<", "_").replace(">", "")
        r = self.b.op("builtin", [x], TupleType(name, (("fract", x.type), second)), fn=kind)
        fract = self.b.op("extract", [r], x.type, path=[0])
        part = self.b.op("extract", [r], second[1], path=[1])
        if kind == "modf":
            # GLSL.std.450: "both ... will have the same sign as x", so a zero fraction too (-0 of
            # -2.0, where WGSL's e - trunc(e) is +0): the zero of x's sign, x * 0 (where x is
            # finite: an infinite x keeps the profile's fraction)
            zero = self.const(x.type, [0.0] * width(x.type) if isinstance(x.type, VectorType) else 0.0)
            bools = with_scalar(x.type, BOOL)
            # exact: emu's own arithmetic, not the shader's (no compiler model folds x * 0 to +0)
            signed = self.b.op("binary", [x, zero], x.type, fn="mul", exact=True)
            zeroed = self.b.op("select", [fract, signed, self.b.op("binary", [fract, zero], bools, fn="eq")], x.type)
            fract = self.b.op("select", [fract, zeroed, self.b.op("binary", [signed, zero], bools, fn="eq")], x.type)
        if out_id is None:
            rt = self.rtype(i)
            if not isinstance(rt, StructType) or len(rt.members) != 2 or rt.members[0].type != x.type:
                self.fail(i, f"{i.ops[1]} gives a struct of {x.type} and its second part, not {rt}")
            want = rt.members[1].type
        else:
            p = self.val(out_id, i)
            want = p.type.pointee if isinstance(p.type, PointerType) else None
        if not isinstance(want, (ScalarType, VectorType)) or width(want) != width(x.type) or \
                (kind == "frexp" and not scalar_of(want).is_int) or (kind == "modf" and want != x.type):
            self.fail(i, f"{i.ops[1]}'s {second[0]} part of {x.type} cannot be a {want}")
        if part.type != want:
            part = self.b.op("convert", [self.as_sign(part, "", with_scalar(want, _partner(scalar_of(part.type),
                             "S" if scalar_of(want).kind == "sint" else "U")))], want)
        if out_id is None:
            return self.b.op("construct", [fract, part], rt)
        if p.type.access == "read":
            self.fail(i, "store through a read-only pointer")
        self.b.emit("store", [p, part])
        return fract

    # -- conversions ----------------------------------------------------------------------------
    def convert(self, i, src_kind: str, dst_kind: str | None):
        rt = self.rtype(i)
        a = self.val(i.ops[0], i)
        sat = {}
        if "SaturatedToLargestFloat8NormalConversionEXT" in self.info.decos.get(i.result, {}):
            if scalar_of(rt).name not in ("e4m3", "e5m2"):
                self.fail(i, f"SaturatedToLargestFloat8NormalConversionEXT on a conversion to {rt}: "
                             f"it applies to conversions to e4m3 / e5m2 only (SPV_EXT_float8)")
            sat = {"saturate": True}
        if isinstance(rt, CoopMatrixType) or isinstance(a.type, CoopMatrixType):
            if not (isinstance(rt, CoopMatrixType) and isinstance(a.type, CoopMatrixType)
                    and (rt.rows, rt.cols) == (a.type.rows, a.type.cols)):
                self.fail(i, f"{i.opname} from {a.type} to {rt}: both must be matrices of one shape")
            return self.b.op("coop_convert", [a], rt, **sat)
        if not isinstance(a.type, (ScalarType, VectorType)) or not isinstance(rt, (ScalarType, VectorType)) \
                or width(a.type) != width(rt):
            self.fail(i, f"{i.opname} from {a.type} to {rt}: one number of components, scalars or vectors")
        if src_kind in ("S", "U"):
            a = self.as_sign(a, src_kind)
        dst = rt
        if dst_kind in ("S", "U") and scalar_of(rt).is_int:
            dst = with_scalar(rt, _partner(scalar_of(rt), dst_kind))
        r = self.b.op("convert", [a], dst, native=True, **sat) if dst != a.type else a
        return self.as_sign(r, "", rt) if r.type != rt else r

    def op_ConvertFToU(self, i):
        return self.convert(i, "F", "U")

    def op_ConvertFToS(self, i):
        return self.convert(i, "F", "S")

    def op_ConvertSToF(self, i):
        return self.convert(i, "S", None)

    def op_ConvertUToF(self, i):
        return self.convert(i, "U", None)

    def op_UConvert(self, i):
        return self.convert(i, "U", "U")

    def op_SConvert(self, i):
        return self.convert(i, "S", "S")

    def op_FConvert(self, i):
        return self.convert(i, "F", None)

    def op_QuantizeToF16(self, i):
        return self.b.op("builtin", [self.val(i.ops[0], i)], self.rtype(i), fn="quantizeToF16")

    def op_Bitcast(self, i):
        return self.bitcast(i, i.ops[0])

    def bitcast(self, i, id_):
        rt = self.rtype(i)
        a = self.val(id_, i)
        if isinstance(rt, PointerType) or isinstance(a.type, PointerType):
            self.fail(i, "bitcasts of pointers are not supported")
        if not all(isinstance(t, (ScalarType, VectorType)) and scalar_of(t) != BOOL for t in (a.type, rt)) \
                or a.type.size != rt.size:
            self.fail(i, f"{i.opname} from {a.type} to {rt}: numbers of one size in all "
                         f"(u64 <-> vec2<u32> is one)")
        return self.b.op("bitcast", [a], rt) if a.type != rt else a

    # -- composites -----------------------------------------------------------------------------
    def op_CompositeConstruct(self, i):
        rt = self.rtype(i)
        parts = [self.val(x, i) for x in i.ops]
        if not parts or any(isinstance(p.type, PointerType) for p in parts):
            self.fail(i, f"{rt} is built from values, not pointers")
        if isinstance(rt, CoopMatrixType):
            return self.b.op("coop_fill", [parts[0]], rt)
        return self.b.op("construct", parts, rt)

    def op_CompositeExtract(self, i):
        v = self.val(i.ops[0], i)
        if len(i.ops) < 2 or self.member_type(i, v.type, i.ops[1:]) != self.rtype(i):
            self.fail(i, f"{i.opname} of {v.type} at {list(i.ops[1:])} is not a {self.rtype(i)}")
        return self.b.op("extract", [v], self.rtype(i), path=list(i.ops[1:]))

    def op_CompositeInsert(self, i):
        obj, comp = self.val(i.ops[0], i), self.val(i.ops[1], i)
        if len(i.ops) < 3:
            self.fail(i, f"{i.opname} names no member of {comp.type} to replace")
        if self.member_type(i, comp.type, i.ops[2:]) != obj.type:
            self.fail(i, f"the inserted {obj.type} does not match the member's type")
        return self.b.op("insert", [comp, obj], comp.type, path=list(i.ops[2:]))

    def member_type(self, i, t: Type, path) -> Type:
        """The type at constant `path` inside composite `t` (each index checked)."""
        for k in path:
            if isinstance(t, StructType):
                n, sub = len(t.members), (lambda k: t.members[k].type)
            elif isinstance(t, ArrayType) and t.count is not None:
                n, sub = t.count, (lambda k: t.elem)
            elif isinstance(t, MatrixType):
                n, sub = t.cols, (lambda k: t.column)
            elif isinstance(t, VectorType):
                n, sub = t.n, (lambda k: t.elem)
            elif isinstance(t, CoopMatrixType):
                return t.elem
            else:
                self.fail(i, f"{t} has no components to index")
            if not 0 <= k < n:
                self.fail(i, f"index {k} is out of range for {t} ({n} components)")
            t = sub(k)
        return t

    def op_VectorExtractDynamic(self, i):
        v, k = self.val(i.ops[0], i), self.val(i.ops[1], i)
        return self.b.op("extract", [v, k], self.rtype(i), path=[-1])

    def op_VectorInsertDynamic(self, i):
        v, c, k = (self.val(x, i) for x in i.ops[:3])
        return self.b.op("insert", [v, c, k], v.type, path=[-1])

    def op_VectorShuffle(self, i):
        a, b = self.val(i.ops[0], i), self.val(i.ops[1], i)
        rt = self.rtype(i)
        comps = [c if c != 0xFFFFFFFF else 0 for c in i.ops[2:]]
        n = width(a.type)
        if all(c < n for c in comps):
            return self.b.op("swizzle", [a], rt, components=comps)
        if all(c >= n for c in comps):
            return self.b.op("swizzle", [b], rt, components=[c - n for c in comps])
        s = scalar_of(rt)
        parts = [self.b.op("extract", [a if c < n else b], s, path=[c if c < n else c - n]) for c in comps]
        return self.b.op("construct", parts, rt)

    def op_CopyObject(self, i):
        return self.lookup(i.ops[0], i)

    def op_CopyLogical(self, i):
        # a struct or array as one of the same shape but other (or no) layout decorations:
        # glslang's copy of a buffer's struct into a local variable
        return self.copy_logical(i, self.val(i.ops[0], i), self.rtype(i))

    def copy_logical(self, i, v, t: Type):
        if v.type == t:
            return v
        if isinstance(t, StructType) and isinstance(v.type, StructType) and len(t.members) == len(v.type.members):
            parts = [(k, m.type, v.type.members[k].type) for k, m in enumerate(t.members)]
        elif isinstance(t, ArrayType) and isinstance(v.type, ArrayType) and t.count == v.type.count and t.count:
            parts = [(k, t.elem, v.type.elem) for k in range(t.count)]
        else:
            self.fail(i, f"OpCopyLogical of {v.type} to {t}: they are not of one shape")
        return self.b.op("construct", [self.copy_logical(i, self.b.op("extract", [v], src, path=[k]), dst)
                                       for k, dst, src in parts], t)

    def op_Undef(self, i):
        return self.b.op("undef", [], self.rtype(i))

    # -- memory ---------------------------------------------------------------------------------
    def op_Variable(self, i):
        pt = self.info.types.get(i.type_id)
        if not (isinstance(pt, tuple) and pt[0] == "ptr" and isinstance(pt[2], Type)):
            self.fail(i, f"OpVariable's result type %{i.type_id} is no pointer type")
        pointee = pt[2]
        args = [self.val(i.ops[1], i)] if len(i.ops) > 1 else []
        name = self.info.names.get(i.result)
        return self.b.op("var", args, PointerType("function", pointee), **({"name": name} if name else {}))

    def op_AccessChain(self, i):
        base = self.lookup(i.ops[0], i)
        if isinstance(base, BuiltinVar):
            return self.define(i.result, _BuiltinPart(base, [self.const_index(x, i) for x in i.ops[1:]]))
        self.chains[i.result] = (i.ops[0], list(i.ops[1:]))
        if i.result in self.coop_chains:
            # only cooperative loads and stores use it, as (array, offset): no access of its own
            # (its index check would report an element the matrix access never clamps)
            return self.define(i.result, _CoopChain())
        if isinstance(base.type.pointee, CoopMatrixType) and len(i.ops) == 2:
            # element i of the lane's fragment: read and written through the whole matrix
            return self.define(i.result, _CoopElement(base, self.as_sign(self.val(i.ops[1], i), "U")))
        return self.access(i, base, i.ops[1:])

    op_InBoundsAccessChain = op_AccessChain

    def const_index(self, id_, at):
        c = self.info.consts.get(id_)
        if c is None:
            self.fail(at, "a builtin variable is indexed with a non-constant index")
        return int(c[1])

    def access(self, i, base, index_ids):
        t = base.type.pointee
        path, args = [], [base]
        for x in index_ids:
            c = self.info.consts.get(x)
            if isinstance(t, StructType):
                if c is None:
                    self.fail(i, "a struct member index must be a constant")
                k = int(c[1])
                path.append(k)
                t = t.members[k].type
                continue
            if c is not None and not isinstance(t, CoopMatrixType) and _within(t, int(c[1])):
                path.append(int(c[1]))
            else:
                # a constant index past the end (an array that specialization made shorter, the
                # access in code these constants never run: llama.cpp's flash attention) is an
                # index like any other, checked where it runs
                path.append(-1)
                idx = self.val(x, i)
                if not isinstance(idx.type, ScalarType) or not idx.type.is_int or idx.type.bits != 32:
                    self.fail(i, f"an index of type {idx.type}: emu indexes with 32-bit integers")
                args.append(idx)
            if isinstance(t, ArrayType):
                t = t.elem
            elif isinstance(t, MatrixType):
                t = t.column
            elif isinstance(t, VectorType):
                t = t.elem
            elif isinstance(t, CoopMatrixType):
                t = t.elem
            else:
                self.fail(i, f"cannot index into {t}")
        if not path:
            return base
        return self.b.op("access", args, PointerType(base.type.space, t, base.type.access), path=path)

    def op_PtrAccessChain(self, i):
        self.fail(i, "OpPtrAccessChain (pointer arithmetic) is not supported")

    def op_Load(self, i):
        p = self.lookup(i.ops[0], i)
        if isinstance(p, (BuiltinVar, _BuiltinPart)):
            return self.load_builtin(i, p)
        if isinstance(p, _CoopElement):
            m = self.b.op("load", [p.matrix], p.matrix.type.pointee)
            return self.b.op("extract", [m, p.index], m.type.elem, path=[-1])
        return self.b.op("load", [p], p.type.pointee)

    def load_builtin(self, i, p):
        whole, path = (p, []) if isinstance(p, BuiltinVar) else (p.var, p.path)
        v = self.b.op("input", [], whole.type, builtin=whole.builtin)
        rt = self.rtype(i)
        if path:
            v = self.b.op("extract", [v], scalar_of(whole.type), path=path)
        return self.b.op("bitcast", [v], rt) if v.type != rt else v

    def op_Store(self, i):
        p = self.lookup(i.ops[0], i)
        if isinstance(p, _CoopElement):
            m = self.b.op("load", [p.matrix], p.matrix.type.pointee)
            v = self.val(i.ops[1], i)
            if v.type != m.type.elem:
                self.fail(i, f"storing {v.type} into an element of {m.type}")
            m = self.b.op("insert", [m, v, p.index], m.type, path=[-1])
            self.b.emit("store", [p.matrix, m])
            return
        p, v = self.val(i.ops[0], i), self.val(i.ops[1], i)
        if p.type.access == "read":
            self.fail(i, "store through a read-only pointer")
        self.b.emit("store", [p, v])

    def op_CopyMemory(self, i):
        dst, src = self.val(i.ops[0], i), self.val(i.ops[1], i)
        self.b.emit("store", [dst, self.b.op("load", [src], src.type.pointee)])

    def op_ArrayLength(self, i):
        p = self.val(i.ops[0], i)
        arr = self.b.op("access", [p], PointerType(p.type.space, p.type.pointee.members[i.ops[1]].type,
                                                   p.type.access), path=[i.ops[1]])
        return self.b.op("array_length", [arr], U32)

    # -- calls ----------------------------------------------------------------------------------
    def op_FunctionCall(self, i):
        args = [self.val(x, i) for x in i.ops[1:]]
        rt = self.info.types[i.type_id]
        rt = U64 if is_physical(rt) else rt           # a PhysicalStorageBuffer pointer: its address
        inst = self.b.emit("call", args, rt if rt != VOID else VOID, callee=self.fn_names[i.ops[0]])
        return inst.result

    # -- synchronisation, atomics, subgroups ----------------------------------------------------
    def op_ControlBarrier(self, i):
        execution = self.scope(i, i.ops[0])
        if execution == SUBGROUP_SCOPE:
            # only the invocations of one subgroup wait for each other (llama.cpp's mul_mm stages a
            # partial tile through shared memory so, in a branch that differs between subgroups)
            self.b.emit("barrier", kind="subgroup")
            return
        if execution != WORKGROUP_SCOPE:
            self.fail(i, f"OpControlBarrier with execution scope {execution}: Vulkan allows Workgroup (2) "
                         f"and Subgroup (3) only", hint="use gl_ScopeWorkgroup or gl_ScopeSubgroup")
        sem = self.info.consts.get(i.ops[2], (None, 0))[1]
        # UniformMemory (0x40) alone: storage; WorkgroupMemory (0x100) or no memory: workgroup
        kind = "storage" if sem & 0x40 and not sem & 0x100 else "workgroup"
        self.b.emit("barrier", kind=kind)

    def scope(self, i, id_):
        c = self.info.consts.get(id_)
        if c is None:
            self.fail(i, "the scope operand must be a constant")
        return int(c[1])

    def atomic(self, i):
        op = i.opname
        p = self.val(i.ops[0], i)
        s = scalar_of(p.type.pointee)
        if s not in (I32, U32, I64, U64):
            self.fail(i, f"atomics on {s} are not supported (32- and 64-bit integers only)")
        if op == "OpAtomicLoad":
            return self.define(i.result, self.b.op("atomic", [p], s, fn="load"))
        if op == "OpAtomicStore":
            self.b.emit("atomic", [p, self.as_sign(self.val(i.ops[3], i), "", s)], fn="store")
            return
        if op in ("OpAtomicIIncrement", "OpAtomicIDecrement"):
            one = self.b.op("const", [], s, value=1)
            fn = "add" if op == "OpAtomicIIncrement" else "sub"
            return self.define(i.result, self.b.op("atomic", [p, one], s, fn=fn))
        if op == "OpAtomicCompareExchange":
            value = self.as_sign(self.val(i.ops[4], i), "", s)
            cmp = self.as_sign(self.val(i.ops[5], i), "", s)
            tt = TupleType(f"__atomic_compare_exchange_result_{s}", (("old_value", s), ("exchanged", BOOL)))
            r = self.b.op("atomic", [p, cmp, value], tt, fn="compare_exchange_weak")
            return self.define(i.result, self.b.op("extract", [r], s, path=[0]))
        if op not in ATOMICS:
            self.fail(i, f"{op} is not supported")
        fn, kind = ATOMICS[op]
        if kind in ("S", "U") and _partner(s, kind) != s:
            self.fail(i, f"{op} on a {s} location: emu's atomics take the location's signedness",
                      hint=f"declare the buffer member as {'int' if kind == 'S' else 'uint'}")
        v = self.as_sign(self.val(i.ops[3], i), "", s)
        r = self.b.op("atomic", [p, v], s, fn=fn)
        rt = self.rtype(i)
        return self.define(i.result, self.as_sign(r, "", rt) if rt != s else r)

    def group(self, i):
        op = i.opname
        if self.scope(i, i.ops[0]) != SUBGROUP_SCOPE:
            self.fail(i, f"{op} with a scope other than Subgroup is not supported")
        rt = self.rtype(i)
        if op == "OpGroupNonUniformElect":
            return self.define(i.result, self.b.op("subgroup", [], BOOL, fn="elect"))
        if op in GROUP_PLAIN:
            fn = GROUP_PLAIN[op]
            args = [self.val(x, i) for x in i.ops[1:]]
            if len(args) > 1:
                args[1] = self.as_sign(args[1], "U")
            t = VectorType(U32, 4) if fn == "ballot" else args[0].type
            return self.define(i.result, self.b.op("subgroup", args, t, fn=fn))
        name = op[len("OpGroupNonUniform"):]
        if name in GROUP_ARITH:
            group_op = i.ops[1]
            fn = GROUP_ARITH[name]
            if group_op in ("InclusiveScan", "ExclusiveScan"):
                if fn not in ("add", "mul"):
                    self.fail(i, f"{group_op} of {name} is not supported (add and mul scans only)")
                fn = ("inclusive_" if group_op == "InclusiveScan" else "exclusive_") + fn
            elif group_op not in ("Reduce", "ClusteredReduce"):
                self.fail(i, f"group operation {group_op} is not supported")
            x = self.val(i.ops[2], i)
            x = self.as_sign(x, GROUP_SIGN.get(name, ""), None if name in GROUP_SIGN else rt) \
                if scalar_of(x.type).is_int else x
            r = self.b.op("subgroup", [x], x.type, fn=fn, **self.cluster(i))
            return self.define(i.result, self.as_sign(r, "", rt) if r.type != rt else r)
        self.fail(i, f"{op} is not supported")

    # -- specialization constant expressions ----------------------------------------------------
    def spec_expr(self, i: Instruction):
        if i.opname == "OpSpecConstantComposite":
            rt = self.rtype(i)
            return self.b.op("construct", [self.val(x, i) for x in i.ops], rt)
        if i.opname == "OpSpecConstantOp":
            from .grammar import Instruction as I_
            inner = I_("Op" + i.ops[0][2:] if i.ops[0].startswith("Op") else i.ops[0], 0, i.type_id,
                       i.result, list(i.ops[1:]), i.index)
            saved = self.scopes[-1].get(i.result)
            self.lower(inner)
            v = self.scopes[-1].get(i.result, saved)
            return v
        self.fail(i, f"{i.opname} is not supported")

    # -- cooperative matrices -------------------------------------------------------------------
    def coop_binary(self, i, fn, rt, a, b):
        if isinstance(b.type, CoopMatrixType):
            if fn not in ("add", "sub", "mul", "div"):
                self.fail(i, f"{i.opname} of cooperative matrices is not supported")
            return self.b.op("binary", [a, b], a.type, fn=fn)
        if fn not in ("add", "sub", "mul") or b.type != a.type.elem:
            self.fail(i, f"{i.opname} of {a.type} and {b.type} is not supported")
        return self.b.op("coop_scalar", [a, b], a.type, fn=fn)

    def coop_pointer(self, i, ptr_id):
        """(pointer to the array, element offset) of a cooperative load/store's pointer."""
        p = self.lookup(ptr_id, i)
        if isinstance(p, Value) and isinstance(p.type.pointee, ArrayType):
            return p, self.b.op("const", [], U32, value=0)
        chain = self.chains.get(ptr_id)
        if chain is None or not chain[1]:
            self.fail(i, "a cooperative matrix is loaded from and stored to an element of an array",
                      hint="pass buf.data[offset] (an array element)")
        base_id, idx = chain
        base = self.val(base_id, i)
        arr = self.access(i, base, idx[:-1])
        if not isinstance(arr.type.pointee, ArrayType):
            self.fail(i, "a cooperative matrix is loaded from and stored to an element of an array")
        off = self.val(idx[-1], i)
        if not isinstance(off.type, ScalarType) or not off.type.is_int or off.type.bits != 32:
            self.fail(i, f"an index of type {off.type}: emu indexes with 32-bit integers")
        return arr, self.as_sign(off, "U")

    def layout(self, i, id_):
        c = self.info.consts.get(id_)
        if c is None:
            self.fail(i, "the matrix layout must be a constant")
        lay = {0: "row_major", 1: "col_major"}.get(int(c[1]))
        if lay is None:
            self.fail(i, f"matrix layout {c[1]} is not supported (RowMajorKHR or ColumnMajorKHR)")
        return lay

    def stride(self, i, ops, k):
        if len(ops) > k and isinstance(ops[k], int):
            return self.as_sign(self.val(ops[k], i), "U")
        return self.b.op("const", [], U32, value=0)

    def op_CooperativeMatrixLoadKHR(self, i):
        rt = self.rtype(i)
        arr, off = self.coop_pointer(i, i.ops[0])
        lay = self.layout(i, i.ops[1])
        return self.b.op("coop_load", [arr, off, self.stride(i, i.ops, 2)], rt, layout=lay)

    def op_CooperativeMatrixStoreKHR(self, i):
        arr, off = self.coop_pointer(i, i.ops[0])
        v = self.val(i.ops[1], i)
        lay = self.layout(i, i.ops[2])
        if arr.type.access == "read":
            self.fail(i, "cannot store a matrix into a read-only buffer")
        self.b.emit("coop_store", [arr, off, v, self.stride(i, i.ops, 3)], layout=lay)

    def op_CooperativeMatrixMulAddKHR(self, i):
        a, b, c = (self.val(x, i) for x in i.ops[:3])
        flags = i.ops[3] if len(i.ops) > 3 else frozenset()
        rt = self.rtype(i)
        for t, flag in ((a.type, "MatrixASignedComponentsKHR"), (b.type, "MatrixBSignedComponentsKHR"),
                        (c.type, "MatrixCSignedComponentsKHR"), (rt, "MatrixResultSignedComponentsKHR")):
            s = t.elem
            if s.is_int and (flag in flags) != (s.kind == "sint"):
                self.fail(i, f"{flag} {'is set' if flag in flags else 'is not set'} but the matrix's "
                             f"component type is {s}: emu reads signedness from the component type",
                          hint="declare the matrix with the component type whose signedness the operation uses")
        attrs = {"saturate": True} if "SaturatingAccumulationKHR" in flags else {}
        if rt != c.type:
            self.fail(i, f"the result type {rt} differs from the accumulator's {c.type}")
        return self.b.op("coop_mma", [a, b, c], rt, **attrs)

    def op_CooperativeMatrixConvertNV(self, i):
        # a matrix of one use as another (an accumulator as A or B), element type kept; the
        # maintenance1 name, OpCooperativeMatrixConvertUseEXT, decorated CooperativeMatrixTransposeEXT
        # also transposes (an accumulator to A or B)
        if "CooperativeMatrixTransposeEXT" in self.info.decos.get(i.result, {}):
            return self.transpose(i, "decorated CooperativeMatrixTransposeEXT")
        rt, a = self.rtype(i), self.val(i.ops[0], i)
        if not (isinstance(a.type, CoopMatrixType) and isinstance(rt, CoopMatrixType)
                and (rt.rows, rt.cols, rt.elem) == (a.type.rows, a.type.cols, a.type.elem)):
            self.fail(i, f"{i.opname} from {a.type} to {rt}: one shape and element type")
        return self.b.op("coop_convert", [a], rt)

    def op_CooperativeMatrixTransposeNV(self, i):
        return self.transpose(i, "")

    def transpose(self, i, how: str):
        rt, a = self.rtype(i), self.val(i.ops[0], i)
        if not (isinstance(a.type, CoopMatrixType) and isinstance(rt, CoopMatrixType)
                and (rt.rows, rt.cols) == (a.type.cols, a.type.rows)):
            self.fail(i, f"{i.opname}{' ' + how if how else ''} from {a.type} to {rt}: the result has the "
                         f"columns as rows")
        if how and (a.type.role != "C" or rt.role not in ("A", "B")):
            self.fail(i, f"{i.opname} {how} turns an accumulator into an A or B matrix, not {a.type} into {rt}")
        return self.b.op("coop_convert", [a], rt, transpose=True)

    def op_CooperativeMatrixGetCoordinateEXT(self, i):
        # element `Index` of the lane's part of the matrix -> its (row, column)
        m, k = self.val(i.ops[0], i), self.val(i.ops[1], i)
        rt = self.rtype(i)
        if not isinstance(m.type, CoopMatrixType):
            self.fail(i, f"{i.opname} of {m.type}: it takes a cooperative matrix")
        if rt != VectorType(U32, 2) or scalar_of_or_none(k.type) not in (U32, I32) or width(k.type) != 1:
            self.fail(i, f"{i.opname} takes a 32-bit integer index and gives a vector of two 32-bit unsigned "
                         f"integers (row, column), not {k.type} -> {rt}")
        return self.b.op("coop_coordinate", [m, k], rt)

    def op_CooperativeMatrixReduceNV(self, i):
        rt, m = self.rtype(i), self.val(i.ops[0], i)
        if not isinstance(m.type, CoopMatrixType) or not isinstance(rt, CoopMatrixType):
            self.fail(i, f"{i.opname} reduces a cooperative matrix into one")
        how = i.ops[1] if isinstance(i.ops[1], frozenset) else frozenset([i.ops[1]])
        mode = {frozenset({"Row"}): "row", frozenset({"Column"}): "column",
                frozenset({"Row", "Column"}): "row_column", frozenset({"2x2"}): "2x2"}.get(frozenset(how))
        if mode is None:
            self.fail(i, f"reduction {'|'.join(sorted(how))}: Row, Column, Row|Column or 2x2")
        return self.b.op("coop_reduce", [m], rt, mode=mode, fn=self.combine_fn(i, i.ops[2], m.type.elem))

    def combine_fn(self, i, fid, elem):
        """add/mul/min/max: what a reduction's CombineFunc (two values in, one out) computes."""
        f = self.info.functions.get(fid)
        body = [x for lbl in (f.order if f else []) for x in f.blocks[lbl]
                if x.opname not in ("OpLine", "OpNoLine") and not (
                    x.opname == "OpExtInst" and self.info.ext_sets.get(x.ops[0], "").startswith("NonSemantic."))]
        params = [p.result for p in f.params] if f else []
        fns = {"OpFAdd": "add", "OpIAdd": "add", "OpFMul": "mul", "OpIMul": "mul"}
        ext = {"FMin": "min", "NMin": "min", "UMin": "min", "SMin": "min",
               "FMax": "max", "NMax": "max", "UMax": "max", "SMax": "max"}
        fn = None
        if len(params) == 2 and len(body) == 1 and body[0].opname == "OpReturnValue" and body[0].ops[0] in params:
            fn = "first" if body[0].ops[0] == params[0] else "second"     # returns an operand as it is
        if len(params) == 2 and len(body) == 2 and body[1].opname == "OpReturnValue" \
                and body[1].ops[0] == body[0].result:
            op = body[0]
            if op.opname in fns and sorted(op.ops) == sorted(params):
                fn = fns[op.opname]
            elif op.opname == "OpExtInst" and op.ops[1] in ext and sorted(op.ops[2:]) == sorted(params):
                fn = ext[op.ops[1]]
        if fn is None:
            self.fail(i, "the reduction's combine function must return one operation of its two "
                         "parameters, or one of them: emu reduces with x + y, x * y, min(x, y), max(x, y), "
                         "x or y")
        if fn in ("add", "mul") and elem.is_int and elem.bits < 32:
            self.fail(i, f"{fn} reductions of {elem} matrices are not supported")
        return fn

    def op_CooperativeMatrixPerElementOpNV(self, i):
        # Func(row, column, element, operands...) per element; a matrix operand gives its element
        rt, m = self.rtype(i), self.val(i.ops[0], i)
        if not isinstance(m.type, CoopMatrixType) or m.type != rt:
            self.fail(i, f"{i.opname} maps a cooperative matrix to one of its type")
        if i.ops[1] not in self.fn_names:
            self.fail(i, f"%{i.ops[1]} is no function of the module")
        extras = [self.val(x, i) for x in i.ops[2:]]
        return self.b.op("coop_per_element", [m] + extras, rt, callee=self.fn_names[i.ops[1]])

    # -- tensor layouts and views (SPV_NV_tensor_addressing; emu.memory.tensor: their fields) ----
    def tensor_kind(self, i, id_, want: str):
        """The recorded type of a tensor layout / view operand: ("layout", D, clamp) or
        ("view", D, has_dim, perm)."""
        d = self.info.defs.get(id_)
        k = self.info.tensor_types.get(d.type_id) if d is not None else None
        if k is None or k[0] != want:
            self.fail(i, f"%{id_} is no tensor {want}")
        return k

    def u32(self, value: int):
        return self.b.op("const", [], U32, value=int(value) & 0xFFFFFFFF)

    def tensor_parts(self, v) -> list:
        return [self.b.op("extract", [v], U32, path=[k]) for k in range(v.type.count)]

    def tensor_update(self, i, base_id, want, fn):
        """A copy of the layout / view `base_id` with fields changed by fn(parts, fields, D)."""
        from ...memory import tensor
        kind = self.tensor_kind(i, base_id, want)
        base = self.val(base_id, i)
        parts = self.tensor_parts(base)
        d = kind[1]
        fn(parts, (tensor.layout_fields if want == "layout" else tensor.view_fields)(d), d)
        return self.b.op("construct", parts, base.type)

    def tensor_args(self, i, ids, n):
        if len(ids) != n:
            self.fail(i, f"{i.opname} takes {n} values here, not {len(ids)}")
        return [self.as_sign(self.val(x, i), "U") for x in ids]

    def tensor_set(self, i, want: str, field: str):
        """A copy of the layout / view with `field` set to the operands, in order."""
        def set_(parts, f, d):
            first, count = f[field]
            for k, v in enumerate(self.tensor_args(i, i.ops[1:], count)):
                parts[first + k] = v
        return self.tensor_update(i, i.ops[0], want, set_)

    def op_CreateTensorLayoutNV(self, i):
        from ...memory import tensor
        kind = self.info.tensor_types.get(i.type_id)
        if kind is None or kind[0] != "layout":
            self.fail(i, "OpCreateTensorLayoutNV makes a tensor layout")
        return self.b.op("construct", [self.u32(x) for x in tensor.initial_layout(kind[1], kind[2])], self.rtype(i))

    def op_CreateTensorViewNV(self, i):
        from ...memory import tensor
        kind = self.info.tensor_types.get(i.type_id)
        if kind is None or kind[0] != "view":
            self.fail(i, "OpCreateTensorViewNV makes a tensor view")
        return self.b.op("construct", [self.u32(x) for x in tensor.initial_view(kind[1], kind[2], kind[3])],
                         self.rtype(i))

    def ceil_div(self, a, b):
        one = self.u32(1)
        top = self.b.op("binary", [self.b.op("binary", [a, b], U32, fn="add"), one], U32, fn="sub")
        return self.b.op("binary", [top, b], U32, fn="div")

    def op_TensorLayoutSetDimensionNV(self, i):
        # dimensions and spans set, offsets 0, packed strides counted in blocks
        def set_(parts, f, d):
            dims = self.tensor_args(i, i.ops[1:], d)
            s = self.u32(1)
            for k in range(d - 1, -1, -1):
                parts[f["dim"][0] + k] = parts[f["span"][0] + k] = dims[k]
                parts[f["offset"][0] + k] = self.u32(0)
                parts[f["stride"][0] + k] = s
                s = self.b.op("binary", [s, self.ceil_div(dims[k], parts[f["block"][0] + k])], U32, fn="mul")
        return self.tensor_update(i, i.ops[0], "layout", set_)

    def op_TensorLayoutSetStrideNV(self, i):
        return self.tensor_set(i, "layout", "stride")

    def op_TensorLayoutSetBlockSizeNV(self, i):
        return self.tensor_set(i, "layout", "block")

    def op_TensorLayoutSliceNV(self, i):
        # (offset, span) per dimension: offsets added, spans set
        def set_(parts, f, d):
            vals = self.tensor_args(i, i.ops[1:], 2 * d)
            for k in range(d):
                o = f["offset"][0] + k
                parts[o] = self.b.op("binary", [parts[o], vals[2 * k]], U32, fn="add")
                parts[f["span"][0] + k] = vals[2 * k + 1]
        return self.tensor_update(i, i.ops[0], "layout", set_)

    def op_TensorLayoutSetClampValueNV(self, i):
        def set_(parts, f, d):
            v = self.val(i.ops[1], i)
            if v.type != U32:
                v = self.b.op("bitcast", [v], U32) if scalar_of(v.type).size == 4 else None
                if v is None:
                    self.fail(i, "the clamp value is a 32-bit value (its low bits are the element's)")
            parts[f["clamp_value"][0]] = v
        return self.tensor_update(i, i.ops[0], "layout", set_)

    def op_TensorViewSetDimensionNV(self, i):
        # dimensions set, strides packed (the last 1)
        def set_(parts, f, d):
            dims = self.tensor_args(i, i.ops[1:], d)
            s = self.u32(1)
            for k in range(d - 1, -1, -1):
                parts[f["dim"][0] + k] = dims[k]
                parts[f["stride"][0] + k] = s
                s = self.b.op("binary", [s, dims[k]], U32, fn="mul")
        return self.tensor_update(i, i.ops[0], "view", set_)

    def op_TensorViewSetStrideNV(self, i):
        return self.tensor_set(i, "view", "stride")

    def op_TensorViewSetClipNV(self, i):
        return self.tensor_set(i, "view", "clip")

    def tensor_operands(self, i, ops):
        """(layout, view or None) of a tensor load/store: its TensorAddressingOperands."""
        layout_id, mem, addressing = ops[0], ops[1], ops[2:]
        kind = self.tensor_kind(i, layout_id, "layout")
        flags, params = (addressing[0], addressing[1:]) if addressing else (frozenset(), [])
        flags = flags if isinstance(flags, frozenset) else frozenset([flags])
        if "DecodeFunc" in flags and i.opname != "OpCooperativeMatrixLoadTensorNV":
            self.fail(i, "a decode function decodes tensor loads only (SPV_NV_cooperative_matrix2)")
        view = None
        if "TensorView" in flags:
            vk = self.tensor_kind(i, params[0], "view")
            if not vk[2] and vk[1] != kind[1]:
                self.fail(i, f"a tensor view without dimensions takes the layout's span: it needs the layout's "
                             f"{kind[1]} dimensions, not {vk[1]}")
            view = self.val(params[0], i)
        return self.val(layout_id, i), view

    def op_CooperativeMatrixLoadTensorNV(self, i):
        rt = self.rtype(i)
        arr, off = self.coop_pointer(i, i.ops[0])
        obj = self.val(i.ops[1], i)
        if obj.type != rt:
            self.fail(i, f"the loaded-into matrix is {obj.type}, the result {rt}")
        layout, view = self.tensor_operands(i, i.ops[2:])
        return self.b.op("coop_load_tensor", [arr, off, obj, layout] + ([view] if view is not None else []), rt,
                         **self.decode_attrs(i, i.ops[2:]))

    def op_CooperativeMatrixStoreTensorNV(self, i):
        arr, off = self.coop_pointer(i, i.ops[0])
        v = self.val(i.ops[1], i)
        if not isinstance(v.type, CoopMatrixType):
            self.fail(i, "OpCooperativeMatrixStoreTensorNV stores a cooperative matrix")
        if arr.type.access == "read":
            self.fail(i, "cannot store a matrix into a read-only buffer")
        layout, view = self.tensor_operands(i, i.ops[2:])
        self.b.emit("coop_store_tensor", [arr, off, v, layout] + ([view] if view is not None else []))

    def op_CooperativeMatrixLengthKHR(self, i):
        t = self.info.types.get(i.ops[0])
        if not isinstance(t, CoopMatrixType):
            self.fail(i, f"OpCooperativeMatrixLengthKHR of %{i.ops[0]}, which is no cooperative matrix type")
        return self.b.op("coop_length", [], self.rtype(i), matrix=t)


# the ops whose pointer operand (the first) coop_pointer reads as (array, offset)
COOP_POINTER_OPS = frozenset({"OpCooperativeMatrixLoadKHR", "OpCooperativeMatrixStoreKHR",
                              "OpCooperativeMatrixLoadTensorNV", "OpCooperativeMatrixStoreTensorNV"})


def _within(t, k: int) -> bool:
    """Whether constant index k names a component of composite t (a runtime array: any k >= 0)."""
    n = t.count if isinstance(t, ArrayType) else t.n if isinstance(t, VectorType) else \
        t.cols if isinstance(t, MatrixType) else None
    return k >= 0 and (n is None or k < n)


class _CoopChain:
    """An access chain that only cooperative loads and stores of its own block use (coop_pointer
    takes its base and indices from FunctionLowerer.chains)."""


class _CoopElement:
    """A pointer to one element of a lane's fragment of a cooperative matrix variable."""

    def __init__(self, matrix, index):
        self.matrix, self.index = matrix, index


class _BuiltinPart:
    """A pointer into a builtin vector (gl_GlobalInvocationID.x)."""

    def __init__(self, var: BuiltinVar, path: list):
        self.var, self.path = var, path

    @property
    def builtin(self):
        return self.var.builtin


__all__ = ["OpLowering", "F32", "Type"]
