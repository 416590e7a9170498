"""SPIR-V's 8- and 4-bit floats: SPV_EXT_float8 (Float8E4M3EXT, Float8E5M2EXT: the IR's e4m3, e5m2)
and SPV_EXT_ocp_microscaling_types (Float4E2M1EXT: the IR's e2m1, and OpBitcastExtractEXT), as
llama.cpp's MXFP4 and FP8 dequantization shaders and FP8 cooperative-matrix kernels use them.
SPIR-V gives these types no arithmetic. The 8-bit floats convert both ways (OpLowering.convert,
with SaturatedToLargestFloat8NormalConversionEXT) and make cooperative matrices; the 4-bit float
is read (constants, bitcasts, conversions to wider floats and integers, which are exact) and a
conversion to it is refused with one message.

A 4-bit float is held in one byte, its code in the low 4 bits (the IR's e2m1, as ml_dtypes holds
float4_e2m1fn): a bitcast between four of them and 16 bits is written with shifts and masks of
the nibbles, component 0 in the lowest bits, as OpBitcast orders components."""
from __future__ import annotations

from ...isa.types import (E2M1, E4M3, E5M2, U8, U16, U32, U64, ScalarType, VectorType, scalar_of,
                          width, with_scalar)
from .grammar import Instruction

ENCODINGS = {(8, "Float8E4M3EXT"): E4M3, (8, "Float8E5M2EXT"): E5M2, (4, "Float4E2M1EXT"): E2M1}
CAPABILITIES = {"Float8EXT", "Float8CooperativeMatrixEXT", "Float4EXT", "BitcastExtractEXT"}
UNSIGNED = {8: U8, 16: U16, 32: U32, 64: U64}


def _bits(t) -> int:
    return scalar_of(t).bits * width(t)


class MiniFloatLowering:
    """Mixin of FunctionLowerer (emu/frontend/spirv/lower.py), before OpLowering: the bitcasts and
    conversions of 4- and 8-bit floats, the rest handed on."""

    def op_Bitcast(self, i: Instruction):
        rt, a = self.rtype(i), self.val(i.ops[0], i)
        if E2M1 not in (scalar_of(rt) if isinstance(rt, (ScalarType, VectorType)) else None,
                          scalar_of(a.type) if isinstance(a.type, (ScalarType, VectorType)) else None):
            return super().op_Bitcast(i)
        if _bits(a.type) != _bits(rt) or _bits(rt) not in UNSIGNED:
            self.fail(i, f"OpBitcast from {a.type} to {rt}: numbers of one bit width in all")
        word = UNSIGNED[_bits(rt)]
        if scalar_of(rt) == E2M1:                     # a word -> 2, 4, ... 4-bit codes
            x = self.as_word(a, word)
            parts = [self.nibble(self.shift(x, "shr", 4 * k) if k else x, E2M1) for k in range(width(rt))]
            return parts[0] if len(parts) == 1 else self.b.op("construct", parts, rt)
        parts = [self.b.op("extract", [a], E2M1, path=[k]) if isinstance(a.type, VectorType) else a
                 for k in range(width(a.type))]
        x = None
        for k, p in enumerate(parts):                   # 4-bit codes -> one word
            code = self.b.op("convert", [self.b.op("bitcast", [p], U8)], word)
            code = self.shift(code, "shl", 4 * k) if k else code
            x = code if x is None else self.b.op("binary", [x, code], word, fn="or")
        return self.b.op("bitcast", [x], rt) if rt != word else x

    def as_word(self, v, word: ScalarType):
        """`v` (any scalar or vector of the word's width) as that unsigned integer."""
        return self.b.op("bitcast", [v], word) if v.type != word else v

    def nibble(self, x, to):
        """The low 4 bits of the unsigned integer (vector) `x` as 4-bit floats (vector) `to`."""
        mask = self.const(x.type, [15] * x.type.n if isinstance(x.type, VectorType) else 15)
        code = self.b.op("convert", [self.b.op("binary", [x, mask], x.type, fn="and")], with_scalar(x.type, U8))
        return self.b.op("bitcast", [code], with_scalar(x.type, to))

    def op_BitcastExtractEXT(self, i: Instruction):
        rt, base, offset = self.rtype(i), self.val(i.ops[0], i), self.val(i.ops[1], i)
        ok = isinstance(rt, (ScalarType, VectorType)) and isinstance(base.type, (ScalarType, VectorType)) \
            and width(rt) == width(base.type) and scalar_of(base.type).bits > scalar_of(rt).bits \
            and scalar_of(base.type).bits in UNSIGNED and isinstance(offset.type, ScalarType) and offset.type.is_int
        if not ok:
            self.fail(i, f"OpBitcastExtractEXT of {base.type} at {offset.type} to {rt}: a narrower type of as many "
                         f"components, at an integer offset")
        word = with_scalar(base.type, UNSIGNED[scalar_of(base.type).bits])
        x = self.b.op("bitcast", [base], word) if base.type != word else base
        off = self.b.op("convert", [self.as_sign(offset, "U")], U32) if offset.type != U32 else offset
        if isinstance(word, VectorType):
            off = self.b.op("construct", [off], with_scalar(word, U32))
        x = self.b.op("binary", [x, off], word, fn="shr")
        if scalar_of(rt) == E2M1:
            return self.nibble(x, E2M1)
        narrow = self.b.op("convert", [x], with_scalar(word, UNSIGNED[scalar_of(rt).bits]))
        return self.b.op("bitcast", [narrow], rt) if narrow.type != rt else narrow

    def convert(self, i: Instruction, src_kind: str, dst_kind: str | None):
        rt = self.rtype(i)
        if isinstance(rt, (ScalarType, VectorType)) and scalar_of(rt) == E2M1:
            self.fail(i, f"{i.opname} to {rt}: emu reads 4-bit floats (bitcasts, conversions to wider types) "
                         f"but does not convert to them",
                      hint="convert to floate4m3_t / floate5m2_t, float16_t or float, or store the codes as integers")
        return super().convert(i, src_kind, dst_kind)
