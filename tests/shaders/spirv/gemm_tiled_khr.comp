#version 450
// Tiled GEMM staged through shared memory, GL_KHR_cooperative_matrix: C (f32, M x N) = A (f16,
// M x K) x B (f16, K x N), row-major. A workgroup of four subgroups owns a 32 x 32 tile of C;
// each K step it copies 32 x 32 tiles of A and B into shared memory, meets at barrier(), and
// each subgroup multiplies its 16 x 16 part from there.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 128) in;
layout(constant_id = 0) const uint M = 64;
layout(constant_id = 1) const uint N = 64;
layout(constant_id = 2) const uint K = 64;
layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer B { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
const uint BM = 32, BN = 32, BK = 32;
shared float16_t ta[BM * BK];
shared float16_t tb[BK * BN];

void main() {
    uint row0 = gl_WorkGroupID.y * BM;
    uint col0 = gl_WorkGroupID.x * BN;
    uint sr = (gl_SubgroupID / 2) * 16;
    uint sc = (gl_SubgroupID % 2) * 16;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    for (uint k0 = 0; k0 < K; k0 += BK) {
        for (uint i = 0; i < BM * BK / 128; i++) {
            uint e = gl_LocalInvocationIndex + i * 128;
            ta[e] = a[(row0 + e / BK) * K + k0 + e % BK];
            tb[e] = b[(k0 + e / BN) * N + col0 + e % BN];
        }
        barrier();
        for (uint kk = 0; kk < BK; kk += 16) {
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> l;
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> r;
            coopMatLoad(l, ta, sr * BK + kk, BK, gl_CooperativeMatrixLayoutRowMajor);
            coopMatLoad(r, tb, kk * BN + sc, BN, gl_CooperativeMatrixLayoutRowMajor);
            acc = coopMatMulAdd(l, r, acc);
        }
        barrier();
    }
    coopMatStore(acc, c, (row0 + sr) * N + col0 + sc, N, gl_CooperativeMatrixLayoutRowMajor);
}
