"""SPV_VALVE_mixed_float_dot_product (VK_VALVE_shader_mixed_float_dot_product; llama.cpp's matrix
shaders use it through GL_EXT_spirv_intrinsics): OpFDot2MixAcc32VALVE, the dot product of two
2-vectors of f16 or bf16 added to an f32 accumulator, and OpFDot2MixAcc16VALVE, the same in the
16-bit type itself, written with the IR's ops.

The extension leaves the order and precision of the steps to the implementation (as cooperative
matrix multiply-adds do). emu computes them in the order its text states, each step rounded in the
result type and never contracted: the inputs converted to the result type (exact), multiplied
component-wise (exact in f32 for 16-bit inputs), the products summed in component order, then the
sum added to the accumulator. No device that has the extension has been measured."""
from __future__ import annotations

from ...isa.types import BF16, F16, F32, ScalarType, VectorType, with_scalar
from .grammar import Instruction

CAPABILITIES = {"DotProductFloat16AccFloat32VALVE", "DotProductFloat16AccFloat16VALVE", "DotProductBFloat16AccVALVE"}


class MixedDotLowering:
    """Mixin of FunctionLowerer (emu/frontend/spirv/lower.py)."""

    def op_FDot2MixAcc32VALVE(self, i: Instruction):
        return self.mixed_dot(i, wide=True)

    def op_FDot2MixAcc16VALVE(self, i: Instruction):
        return self.mixed_dot(i, wide=False)

    def mixed_dot(self, i: Instruction, wide: bool):
        rt = self.rtype(i)
        a, b, acc = (self.val(x, i) for x in i.ops[:3])
        ok = isinstance(a.type, VectorType) and a.type == b.type and a.type.n == 2 \
            and a.type.elem in (F16, BF16) and acc.type == rt and isinstance(rt, ScalarType) \
            and (rt == F32 if wide else rt == a.type.elem)
        if not ok:
            want = "f32" if wide else "the vectors' component type"
            self.fail(i, f"{i.opname} takes two 2-vectors of f16 or bf16 and an accumulator of {want}, "
                         f"not {a.type}, {b.type} and {acc.type} giving {rt}")
        if wide:
            a, b = (self.b.op("convert", [v], with_scalar(v.type, F32), native=True) for v in (a, b))
        p = self.b.op("binary", [a, b], a.type, fn="mul", exact=True)
        s = self.b.op("extract", [p], rt, path=[0])
        for k in range(1, a.type.n):
            s = self.b.op("binary", [s, self.b.op("extract", [p], rt, path=[k])], rt, fn="add", exact=True)
        return self.b.op("binary", [s, acc], rt, fn="add", exact=True)
