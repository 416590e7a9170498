#version 450
// llama.cpp's mul_mm tail, as its KHR cooperative-matrix build writes C: each subgroup stores its
// 16x16 f32 tile of C into its own part of a shared stage, a subgroupBarrier() orders that store
// before its invocations' reads, and the invocations copy the elements inside the matrix (M and N
// need not be multiples of 16) to C one by one, then a second subgroupBarrier() before the stage
// is written again for the next tile. Two subgroups of 32 per workgroup, two tiles each; A (f16,
// M x K) and B (f16, K x N) row-major, K a multiple of 16, A's and B's rows padded to whole tiles.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint M = 40;
layout(constant_id = 1) const uint N = 56;
layout(constant_id = 2) const uint K = 48;
layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer B { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
shared float stage[2 * 256];

void main() {
    uint s = gl_SubgroupID, l = gl_SubgroupInvocationID;
    uint tm = gl_WorkGroupID.y * 16u;
    for (uint t = 0u; t < 2u; t++) {
        uint tn = (gl_WorkGroupID.x * 4u + s * 2u + t) * 16u;
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc =
            coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
        for (uint k = 0u; k < K; k += 16u) {
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
            coopMatLoad(ma, a, tm * K + k, K, gl_CooperativeMatrixLayoutRowMajor);
            coopMatLoad(mb, b, k * 64u + tn, 64u, gl_CooperativeMatrixLayoutRowMajor);
            acc = coopMatMulAdd(ma, mb, acc);
        }
        coopMatStore(acc, stage, s * 256u, 16u, gl_CooperativeMatrixLayoutColumnMajor);
        subgroupBarrier();
        for (uint e = l; e < 256u; e += gl_SubgroupSize) {
            uint r = e % 16u, col = e / 16u;
            if (tm + r < M && tn + col < N) {
                c[(tm + r) * N + tn + col] = stage[s * 256u + e];
            }
        }
        subgroupBarrier();
    }
}
