"""SPV_KHR_integer_dot_product (core in SPIR-V 1.6): OpSDot, OpUDot, OpSUDot and their
accumulating-saturating forms, on vectors of integers or on 32-bit integers read as four packed
8-bit components (PackedVectorFormat4x8Bit, the lowest-numbered component in the lowest byte).

The instruction's rule, lowered to the IR's integer arithmetic: each component is sign-extended
(S; for OpSUDot the first vector) or zero-extended (U; OpSUDot's second vector) to the result's
width, the products are summed, and the low bits of the exact sum are the result: the IR's
wrapping multiply and add in the result's width give exactly those bits. The AccSat forms then add
the accumulator with saturation, signed (OpSDotAccSat, OpSUDotAccSat) or unsigned (OpUDotAccSat);
a product or partial sum that overflows the result's width is undefined there, as the spec says.
Four packed bytes into a 32-bit result of one signedness is WGSL's dot4I8Packed / dot4U8Packed
builtin (one IR instruction, the form llama.cpp's quantized matrix-vector shaders use).
"""
from __future__ import annotations

from ...isa import types
from ...isa.types import BOOL, I8, U8, ScalarType, VectorType, scalar_of, width, with_scalar

PACKED = "PackedVectorFormat4x8Bit"


def _int_type(bits: int, signed: bool) -> ScalarType:
    return getattr(types, f"{'I' if signed else 'U'}{bits}")


class IntegerDotLowering:
    """Mixin of FunctionLowerer: the integer dot products."""

    def op_SDot(self, i):
        return self.int_dot(i, True, True, saturate=False)

    def op_UDot(self, i):
        return self.int_dot(i, False, False, saturate=False)

    def op_SUDot(self, i):
        return self.int_dot(i, True, False, saturate=False)

    def op_SDotAccSat(self, i):
        return self.int_dot(i, True, True, saturate=True)

    def op_UDotAccSat(self, i):
        return self.int_dot(i, False, False, saturate=True)

    def op_SUDotAccSat(self, i):
        return self.int_dot(i, True, False, saturate=True)

    def int_dot(self, i, a_signed: bool, b_signed: bool, saturate: bool):
        rt = self.rtype(i)
        if not isinstance(rt, ScalarType) or not rt.is_int:
            self.fail(i, f"{i.opname} gives an integer scalar, not {rt}")
        ops = [x for x in i.ops if x != PACKED]
        packed = len(ops) < len(i.ops)
        a, b = self.val(ops[0], i), self.val(ops[1], i)
        acc = self.val(ops[2], i) if saturate else None
        if width(a.type) != width(b.type) or scalar_of(a.type).bits != scalar_of(b.type).bits:
            self.fail(i, f"{i.opname} of {a.type} and {b.type}: both vectors have one number and width of components")
        if acc is not None and acc.type != rt:
            self.fail(i, f"the accumulator of {i.opname} is {acc.type}, not the result type {rt}")
        signed = a_signed              # the signedness of the sum (and of the saturation)
        work = _int_type(rt.bits, signed)
        if isinstance(a.type, ScalarType):
            if not packed or a.type.bits != 32 or not a.type.is_int:
                self.fail(i, f"{i.opname} of the scalars {a.type}: 32-bit integers with PackedVectorFormat4x8Bit")
            if rt.bits == 32 and a_signed == b_signed:
                fn = "dot4I8Packed" if signed else "dot4U8Packed"
                d = self.b.op("builtin", [self.as_sign(a, "U"), self.as_sign(b, "U")], work, fn=fn)
                return self.finish_dot(i, d, acc, rt, signed)
            a, b = (self.b.op("bitcast", [v], VectorType(I8 if s else U8, 4)) for v, s in
                    ((a, a_signed), (b, b_signed)))
        elif not isinstance(a.type, VectorType) or not scalar_of(a.type).is_int:
            self.fail(i, f"{i.opname} of {a.type}: vectors of integers, or packed 32-bit integers")
        elif scalar_of(a.type).bits > rt.bits:
            self.fail(i, f"{i.opname} into {rt} of {a.type}: the result is at least as wide as the components")
        n = a.type.n
        terms = self.b.op("binary", [self.extend(a, a_signed, work), self.extend(b, b_signed, work)],
                          VectorType(work, n), fn="mul")
        d = self.b.op("extract", [terms], work, path=[0])
        for k in range(1, n):
            d = self.b.op("binary", [d, self.b.op("extract", [terms], work, path=[k])], work, fn="add")
        return self.finish_dot(i, d, acc, rt, signed)

    def extend(self, v, signed: bool, work: ScalarType):
        """A vector of integers sign- or zero-extended to `work`'s width, as `work`'s type."""
        s = scalar_of(v.type)
        v = self.as_sign(v, "S" if signed else "U")
        if s.bits != work.bits:
            v = self.b.op("convert", [v], with_scalar(v.type, _int_type(work.bits, signed)))
        return self.as_sign(v, "", with_scalar(v.type, work))

    def finish_dot(self, i, d, acc, rt, signed: bool):
        if acc is not None:
            d = self.saturating_add(self.as_sign(acc, "", d.type), d, signed)
        return self.as_sign(d, "", rt) if d.type != rt else d

    def saturating_add(self, a, b, signed: bool):
        """a + b clamped to the range of their (integer scalar) type."""
        t = a.type
        bits = t.bits
        r = self.b.op("binary", [a, b], t, fn="add")
        zero = self.b.op("const", [], t, value=0)
        if signed:
            # overflow: a and b of one sign and r of the other, ((a ^ r) & (b ^ r)) < 0
            both = self.b.op("binary", [self.b.op("binary", [a, r], t, fn="xor"),
                                        self.b.op("binary", [b, r], t, fn="xor")], t, fn="and")
            over = self.b.op("binary", [both, zero], with_scalar(t, BOOL), fn="lt")
            low = self.b.op("const", [], t, value=-(1 << (bits - 1)))
            high = self.b.op("const", [], t, value=(1 << (bits - 1)) - 1)
            neg = self.b.op("binary", [a, zero], BOOL, fn="lt")
            bound = self.b.op("select", [high, low, neg], t)
        else:
            over = self.b.op("binary", [r, a], BOOL, fn="lt")          # wrapped past the top
            bound = self.b.op("const", [], t, value=(1 << bits) - 1)
        return self.b.op("select", [r, bound, over], t)

