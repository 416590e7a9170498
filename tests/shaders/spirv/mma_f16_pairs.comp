#version 450
// D = A x B + C (f16 inputs, f32 C and D), one 16x16x16 multiply-add per workgroup (one subgroup of 32); A and B arrive as
// pairs of 16-bit floats in u32 words, row-major, and pass through shared memory as vec2 pairs
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer BA { uint a[]; };
layout(set = 0, binding = 1) readonly buffer BB { uint b[]; };
layout(set = 0, binding = 2) readonly buffer BC { float c[]; };
layout(set = 0, binding = 3) writeonly buffer BD { float d[]; };
shared f16vec2 sa[128];
shared f16vec2 sb[128];
void main() {
    uint t = gl_WorkGroupID.x, lane = gl_LocalInvocationIndex;
    for (uint e = lane; e < 128u; e += 32u) {
        sa[e] = unpackFloat2x16(a[t * 128u + e]);
        sb[e] = unpackFloat2x16(b[t * 128u + e]);
    }
    barrier();
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mc;
    coopMatLoad(ma, sa, 0, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, sb, 0, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mc, c, t * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
    mc = coopMatMulAdd(ma, mb, mc);
    coopMatStore(mc, d, t * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
}
