"""SPIR-V's integer instructions that the IR has no op of, written with its ops: OpUMulExtended and
OpSMulExtended (the full product of two integers as its low and high halves; GLSL's umulExtended /
imulExtended, which llama.cpp's shaders use for division by a constant).

An 8-, 16- or 32-bit product is computed exactly in the integer type of twice the width; a 64-bit
one, for which the IR has no wider type, from its 32-bit halves (four exact 64-bit partial
products), the signed high half corrected from the unsigned one."""
from __future__ import annotations

from ...isa.types import (BOOL, I16, I32, I64, U16, U32, U64, ScalarType, StructType, VectorType, scalar_of, width,
                          with_scalar)
from .grammar import Instruction

WIDER = {8: (I16, U16), 16: (I32, U32), 32: (I64, U64)}


class IntegerLowering:
    """Mixin of FunctionLowerer (emu/frontend/spirv/lower.py)."""

    def op_UMulExtended(self, i: Instruction):
        return self.mul_extended(i, signed=False)

    def op_SMulExtended(self, i: Instruction):
        return self.mul_extended(i, signed=True)

    def mul_extended(self, i: Instruction, signed: bool):
        rt = self.rtype(i)
        a, b = self.val(i.ops[0], i), self.val(i.ops[1], i)
        member = rt.members[0].type if isinstance(rt, StructType) and len(rt.members) == 2 else None

        def like_member(t):
            return isinstance(t, (ScalarType, VectorType)) and scalar_of(t).is_int and width(t) == width(member) \
                and scalar_of(t).bits == scalar_of(member).bits
        if member is None or rt.members[1].type != member or not like_member(member) \
                or not like_member(a.type) or not like_member(b.type):
            got = f"a struct of {', '.join(str(m.type) for m in rt.members)}" if isinstance(rt, StructType) else rt
            self.fail(i, f"{i.opname} of {a.type} and {b.type} gives a struct of two integers of their width "
                         f"(the low and high halves), not {got}")
        a, b = self.as_sign(a, "S" if signed else "U"), self.as_sign(b, "S" if signed else "U")
        bits = scalar_of(a.type).bits
        if bits == 64:
            lo, hi = self.mul64(a, b, signed)
        else:
            wide = with_scalar(a.type, WIDER[bits][0 if signed else 1])
            p = self.b.op("binary", [self.b.op("convert", [a], wide), self.b.op("convert", [b], wide)], wide, fn="mul")
            lo = self.b.op("convert", [p], a.type)                  # modulo 2^bits: the low half
            hi = self.b.op("convert", [self.shift(p, "shr", bits)], a.type)
        return self.b.op("construct", [self.as_sign(lo, "", member), self.as_sign(hi, "", member)], rt)

    def shift(self, v, fn: str, n: int):
        amount = with_scalar(v.type, U32)
        return self.b.op("binary", [v, self.const(amount, [n] * amount.n if isinstance(amount, VectorType) else n)],
                         v.type, fn=fn)

    def mul64(self, a, b, signed: bool):
        """(low, high) of the 128-bit product of two 64-bit integers, as u64 pieces: the unsigned
        product of the halves, then (signed) high - (a < 0 ? b : 0) - (b < 0 ? a : 0)."""
        ut = with_scalar(a.type, U64)
        ua, ub = self.as_sign(a, "U"), self.as_sign(b, "U")

        def op(fn, x, y):
            return self.b.op("binary", [x, y], ut, fn=fn)

        mask = self.const(ut, [0xFFFFFFFF] * ut.n if isinstance(ut, VectorType) else 0xFFFFFFFF)
        al, ah, bl, bh = op("and", ua, mask), self.shift(ua, "shr", 32), op("and", ub, mask), self.shift(ub, "shr", 32)
        ll, hl, lh, hh = op("mul", al, bl), op("mul", ah, bl), op("mul", al, bh), op("mul", ah, bh)
        mid = op("add", op("add", self.shift(ll, "shr", 32), op("and", hl, mask)), op("and", lh, mask))
        lo = op("or", op("and", ll, mask), self.shift(mid, "shl", 32))
        hi = op("add", op("add", hh, self.shift(hl, "shr", 32)), op("add", self.shift(lh, "shr", 32),
                                                                     self.shift(mid, "shr", 32)))
        if signed:
            zero = self.const(ut, [0] * ut.n if isinstance(ut, VectorType) else 0)
            szero = self.const(a.type, [0] * ut.n if isinstance(ut, VectorType) else 0)
            for x, y in ((a, ub), (b, ua)):
                neg = self.b.op("binary", [x, szero], with_scalar(x.type, BOOL), fn="lt")
                hi = op("sub", hi, self.b.op("select", [zero, y, neg], ut))
        return lo, hi
