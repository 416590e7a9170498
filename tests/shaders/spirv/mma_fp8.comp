#version 450
// FP8 cooperative matrices (GL_EXT_float_e4m3 / GL_EXT_float_e5m2, SPV_EXT_float8): e4m3 x e4m3 + f32
// and e5m2 x e5m2 + f16 at 16x16x32 (K = 64 in two steps), and scalar conversions f32 -> e4m3,
// f32 -> e5m2 (plain, and saturating: saturatedConvertEXT, the SaturatedToLargestFloat8Normal-
// ConversionEXT decoration) and back through byte buffers.
#pragma use_vulkan_memory_model
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_EXT_float_e4m3 : require
#extension GL_EXT_float_e5m2 : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer A4 { floate4m3_t a4[]; };     // 16 x 64, row-major
layout(set = 0, binding = 1) readonly buffer B4 { floate4m3_t b4[]; };     // 64 x 16
layout(set = 0, binding = 2) buffer C32 { float c32[]; };                  // 16 x 16
layout(set = 0, binding = 3) readonly buffer A5 { floate5m2_t a5[]; };
layout(set = 0, binding = 4) readonly buffer B5 { floate5m2_t b5[]; };
layout(set = 0, binding = 5) buffer C16 { float16_t c16[]; };
layout(set = 0, binding = 7) buffer S { float s[]; };                      // scalars in and out
layout(set = 0, binding = 8) buffer S8 { floate4m3_t s4[]; };
layout(set = 0, binding = 9) buffer S5 { floate5m2_t s5[]; };
layout(set = 0, binding = 10) buffer T4 { floate4m3_t t4[]; };            // saturated
layout(set = 0, binding = 11) buffer T5 { floate5m2_t t5[]; };
const uint S_ = gl_ScopeSubgroup;
const int RM = gl_CooperativeMatrixLayoutRowMajor;
void main() {
    coopmat<float, S_, 16, 16, gl_MatrixUseAccumulator> acc;
    coopMatLoad(acc, c32, 0, 16, RM);
    coopmat<float16_t, S_, 16, 16, gl_MatrixUseAccumulator> h;
    coopMatLoad(h, c16, 0, 16, RM);
    for (uint k = 0; k < 2; ++k) {
        coopmat<floate4m3_t, S_, 16, 32, gl_MatrixUseA> a;
        coopmat<floate4m3_t, S_, 32, 16, gl_MatrixUseB> b;
        coopMatLoad(a, a4, k * 32, 64, RM);
        coopMatLoad(b, b4, k * 32 * 16, 16, RM);
        acc = coopMatMulAdd(a, b, acc);
        coopmat<floate5m2_t, S_, 16, 32, gl_MatrixUseA> a_;
        coopmat<floate5m2_t, S_, 32, 16, gl_MatrixUseB> b_;
        coopMatLoad(a_, a5, k * 32, 64, RM);
        coopMatLoad(b_, b5, k * 32 * 16, 16, RM);
        h = coopMatMulAdd(a_, b_, h);
    }
    coopMatStore(acc, c32, 0, 16, RM);
    coopMatStore(h, c16, 0, 16, RM);
    uint i = gl_LocalInvocationID.x;
    for (uint j = i; j < s.length(); j += 32) {
        float x = s[j];
        s4[j] = floate4m3_t(x);
        s5[j] = floate5m2_t(x);
        floate4m3_t y4;
        floate5m2_t y5;
        saturatedConvertEXT(y4, x);
        saturatedConvertEXT(y5, x);
        t4[j] = y4;
        t5[j] = y5;
        s[j] = float(s4[j]) + float(s5[j]);
    }
}
