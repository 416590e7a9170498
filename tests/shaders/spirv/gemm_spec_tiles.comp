#version 450
// A blocked GEMM whose shapes are all specialization constants, the way tuned GEMM libraries
// write them: D (f32, column-major, N columns of M) = A (f16, M x K row-major) x B^T
// (B f16, N x K row-major). Workgroup of WG invocations = WG / 32 subgroups in a 2 x (S/2) grid;
// each subgroup owns WT = (TILE_N / TN) accumulators of TM x TN in an array sized by a spec-
// constant expression; A and B go through shared memory as f16vec2 pairs (the matrix loads read
// vector elements); the result leaves through a shared f32 staging tile, column-major.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;       // also the workgroup size (its own default: 1)
layout(constant_id = 1) const uint TM = 16;
layout(constant_id = 2) const uint TN = 16;
layout(constant_id = 3) const uint TK = 16;
layout(constant_id = 4) const uint TILE_N = 32;   // columns of D per subgroup
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer BD { float d[]; };
layout(push_constant) uniform P { uint M; uint N; uint K; } p;

const uint SUBGROUPS = WG / 32;
const uint ROWS = 2 * TM;                          // rows of D per workgroup
const uint COLS = (SUBGROUPS / 2) * TILE_N;        // columns of D per workgroup
const uint WT = TILE_N / TN;
const uint STRIDE = TK / 2 + 4;                    // f16vec2 per staged row (padded by 16 bytes: a
                                                   // matrix load needs rows at multiples of 16 bytes)
shared f16vec2 sa[ROWS * STRIDE];
shared f16vec2 sb[COLS * STRIDE];
shared float stage[TM * TN * SUBGROUPS];

void main() {
    uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
    uint r0 = gl_WorkGroupID.x * ROWS, c0 = gl_WorkGroupID.y * COLS;
    uint sr = sg % 2, sc = sg / 2;
    coopmat<float, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> acc[WT];
    [[unroll]] for (uint t = 0; t < WT; t++)
        acc[t] = coopmat<float, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>(0.0);
    for (uint k0 = 0; k0 < p.K; k0 += TK) {
        for (uint e = gl_LocalInvocationIndex; e < ROWS * (TK / 2); e += WG) {
            uint r = e / (TK / 2), kk = 2 * (e % (TK / 2));
            uint i = (r0 + r) * p.K + k0 + kk;
            sa[r * STRIDE + kk / 2] = r0 + r < p.M ? f16vec2(a[i], a[i + 1]) : f16vec2(0.0);
        }
        for (uint e = gl_LocalInvocationIndex; e < COLS * (TK / 2); e += WG) {
            uint c = e / (TK / 2), kk = 2 * (e % (TK / 2));
            uint i = (c0 + c) * p.K + k0 + kk;
            sb[c * STRIDE + kk / 2] = c0 + c < p.N ? f16vec2(b[i], b[i + 1]) : f16vec2(0.0);
        }
        barrier();
        coopmat<float16_t, gl_ScopeSubgroup, TM, TK, gl_MatrixUseA> ma;
        coopMatLoad(ma, sa, sr * TM * STRIDE, STRIDE, gl_CooperativeMatrixLayoutRowMajor);
        [[unroll]] for (uint t = 0; t < WT; t++) {
            coopmat<float16_t, gl_ScopeSubgroup, TK, TN, gl_MatrixUseB> mb;
            coopMatLoad(mb, sb, (sc * TILE_N + t * TN) * STRIDE, STRIDE, gl_CooperativeMatrixLayoutColumnMajor);
            acc[t] = coopMatMulAdd(ma, mb, acc[t]);
        }
        barrier();
    }
    [[unroll]] for (uint t = 0; t < WT; t++) {
        coopMatStore(acc[t], stage, sg * TM * TN, TM, gl_CooperativeMatrixLayoutColumnMajor);
        for (uint e = lane; e < TM * TN; e += 32) {
            uint row = r0 + sr * TM + e % TM, col = c0 + sc * TILE_N + t * TN + e / TM;
            if (row < p.M && col < p.N)
                d[col * p.M + row] = stage[sg * TM * TN + e];
        }
    }
}
