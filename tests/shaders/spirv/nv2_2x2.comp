#version 450
// VK_NV_cooperative_matrix2's 2x2 reduction at subgroup scope: D = A * B (32x32x32, f16 -> f32, a
// flexible-dimension accumulator of one subgroup), r[0..1023] = D (32x32 row-major) and
// r[1024..1279] = the sums of D's 2x2 blocks (coopMatReduceNV 2x2, x + y: a 16x16 matrix).
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
layout(local_size_x = 32) in;
layout(binding = 0) readonly buffer A { float16_t a[]; };
layout(binding = 1) readonly buffer B { float16_t b[]; };
layout(binding = 2) buffer R { float r[]; };

float add(const in float x, const in float y) { return x + y; }

void main() {
    coopmat<float16_t, gl_ScopeSubgroup, 32, 32, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, 32, 32, gl_MatrixUseB> mb;
    coopMatLoad(ma, a, 0, 32, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, b, 0, 32, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, 32, 32, gl_MatrixUseAccumulator> d =
        coopmat<float, gl_ScopeSubgroup, 32, 32, gl_MatrixUseAccumulator>(0.0);
    d = coopMatMulAdd(ma, mb, d);
    coopMatStore(d, r, 0, 32, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> q;
    coopMatReduceNV(q, d, gl_CooperativeMatrixReduce2x2NV, add);
    coopMatStore(q, r, 1024, 16, gl_CooperativeMatrixLayoutRowMajor);
}
