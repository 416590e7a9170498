#version 450
// A GEMM of VK_NV_cooperative_matrix2's flexible dimensions at subgroup scope, in plain
// GL_KHR_cooperative_matrix GLSL: 32x32 tiles of C (f32) = A (f16, M x K) x B (f16, K x N), both
// row-major, K in steps of 32; one subgroup of 32 per tile. No configuration of the H200 has these
// shapes; its flexible-dimension one (16x16x16 granularity, subgroup scope) admits them.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(constant_id = 0) const uint M = 64;
layout(constant_id = 1) const uint N = 64;
layout(constant_id = 2) const uint K = 64;
layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer B { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };

void main() {
    uint tm = gl_WorkGroupID.y * 32u, tn = gl_WorkGroupID.x * 32u;
    coopmat<float, gl_ScopeSubgroup, 32, 32, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeSubgroup, 32, 32, gl_MatrixUseAccumulator>(0.0);
    for (uint k = 0u; k < K; k += 32u) {
        coopmat<float16_t, gl_ScopeSubgroup, 32, 32, gl_MatrixUseA> ma;
        coopmat<float16_t, gl_ScopeSubgroup, 32, 32, gl_MatrixUseB> mb;
        coopMatLoad(ma, a, tm * K + k, K, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(mb, b, k * N + tn, N, gl_CooperativeMatrixLayoutRowMajor);
        acc = coopMatMulAdd(ma, mb, acc);
    }
    coopMatStore(acc, c, tm * N + tn, N, gl_CooperativeMatrixLayoutRowMajor);
}
