#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// f16 arithmetic and the conversions between integers and floats that llama.cpp's flash-attention
// and dequantizing kernels use (the fusion JIT compiles them with the interpreter's rules,
// emu/numerics/scalar_compiled.py): integers of 8, 16 and 32 bits to f16 (OpConvertSToF /
// OpConvertUToF: 65519 rounds to 65504, 65520 to infinity), an int8 table staged through a
// shared f16 array as ggml's iq4_nl table is, f16 + - * / and negation on scalars and an f16vec4
// times a scalar, f16 comparisons (NaNs, signed zeros), bool <-> f16, f16 -> integers of 8, 16 and
// 32 bits and f32 -> 8-bit integers (OpConvertFToS / FToU: truncated, saturated, NaN -> 0);
// f16 min, max, clamp and abs (NaN operands ignored, -0 below +0).
// The inputs hold every kind of f16 (zeros, subnormals, infinities, NaNs). One invocation per row.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer B { float16_t b[]; };
layout(set = 0, binding = 2) readonly buffer I { int ints[]; };
layout(set = 0, binding = 3) readonly buffer Q { int8_t q[]; };
layout(set = 0, binding = 4) readonly buffer F { float f[]; };
layout(set = 0, binding = 5) writeonly buffer O { float16_t o[]; };
layout(set = 0, binding = 6) writeonly buffer N { int n[]; };
shared float16_t table[16];

void main() {
    uint i = gl_GlobalInvocationID.x;
    uint l = gl_LocalInvocationIndex;
    for (uint k = l; k < 16; k += gl_WorkGroupSize.x) {
        table[k] = float16_t(q[k]);
    }
    barrier();
    float16_t x = a[i], y = b[i];
    int v = ints[i];
    uint base = i * 24;
    o[base + 0] = x + y;
    o[base + 1] = x - y;
    o[base + 2] = x * y;
    o[base + 3] = x / y;
    o[base + 4] = -x;
    o[base + 5] = float16_t(v);
    o[base + 6] = float16_t(uint(v));
    o[base + 7] = float16_t(int16_t(v));
    o[base + 8] = float16_t(uint16_t(v));
    o[base + 9] = float16_t(q[i % 256]);
    o[base + 10] = float16_t(uint8_t(q[i % 256]));
    f16vec4 w = f16vec4(table[i % 16], x, y, float16_t(-0.0)) * (x - float16_t(8.0));
    o[base + 11] = w.x;
    o[base + 12] = w.y;
    o[base + 13] = w.z;
    o[base + 14] = w.w;
    o[base + 15] = float16_t(x < y) + float16_t(x == y) * float16_t(2.0) + float16_t(x >= y) * float16_t(4.0)
                 + float16_t(x != y) * float16_t(8.0) + float16_t(bool(x)) * float16_t(16.0);
    o[base + 16] = x + y * x - float16_t(0.1);
    o[base + 17] = table[(i + 3) % 16] * y;
    o[base + 18] = float16_t(int8_t(v));
    o[base + 19] = float16_t(v >> 8) + float16_t(0.5);
    o[base + 20] = min(x, y);
    o[base + 21] = max(x, y);
    o[base + 22] = clamp(x, y, float16_t(2.0));
    o[base + 23] = abs(y);
    uint nb = i * 8;
    n[nb + 0] = int(x);
    n[nb + 1] = int(uint(x));
    n[nb + 2] = int(int16_t(x));
    n[nb + 3] = int(uint16_t(x));
    n[nb + 4] = int(int8_t(x));
    n[nb + 5] = int(uint8_t(y));
    n[nb + 6] = int(int8_t(f[i]));
    n[nb + 7] = int(uint8_t(f[i])) + int(int16_t(f[i])) * 256;
}
