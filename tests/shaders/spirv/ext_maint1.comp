#version 450
// VK_EXT_cooperative_matrix_maintenance1 at subgroup scope, one subgroup, 16x16 matrices (the 2x2
// reduction needs a result of half the size, which the H200 has only with NV2's flexible dimensions):
// D = A * B (f16 -> f32), then into r (row-major 16x16 blocks, in this order):
//   0 D;  1 coopMatReduceEXT rows (max);  2 columns (x + y);  3 rows and columns (x + y);
//   4 coopMatPerElementEXT: D * s + row - column (s a push-free operand: 0.5);
//   5 E = f16(D) as A (a type and use conversion in one) times coopMatTransposeEXT(f16(D)) as B;
//   6 the row sums into a 16x8 accumulator (stored with stride 16: columns 8..15 stay);
// and c[2 * (lane * length + e) + {0, 1}] = coopMatGetCoordinateEXT(D, e) for each element e a
// lane holds (32 lanes).
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_cooperative_matrix_maintenance1 : require
layout(local_size_x = 32) in;
layout(binding = 0) readonly buffer A { float16_t a[]; };
layout(binding = 1) readonly buffer B { float16_t b[]; };
layout(binding = 2) buffer R { float r[]; };
layout(binding = 3) buffer C { uint c[]; };

float biggest(const in float x, const in float y) { return max(x, y); }
float add(const in float x, const in float y) { return x + y; }
float scaled(const in uint row, const in uint col, const in float e, const in float s) {
    return e * s + float(row) - float(col);
}

#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

void main() {
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
    coopMatLoad(ma, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, b, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    ACC d = coopMatMulAdd(ma, mb, ACC(0.0));
    coopMatStore(d, r, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    ACC q;
    coopMatReduceEXT(q, d, gl_CooperativeMatrixReduceRowEXT, biggest);
    coopMatStore(q, r, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatReduceEXT(q, d, gl_CooperativeMatrixReduceColumnEXT, add);
    coopMatStore(q, r, 512, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatReduceEXT(q, d, gl_CooperativeMatrixReduceRowAndColumnEXT, add);
    coopMatStore(q, r, 768, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatPerElementEXT(q, d, scaled, 0.5);
    coopMatStore(q, r, 1024, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ua =
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>(d);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> tb;
    coopMatTransposeEXT(tb, coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(d));
    ACC e = coopMatMulAdd(ua, tb, ACC(0.0));
    coopMatStore(e, r, 1280, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, 16, 8, gl_MatrixUseAccumulator> h;
    coopMatReduceEXT(h, d, gl_CooperativeMatrixReduceRowEXT, add);
    coopMatStore(h, r, 1536, 16, gl_CooperativeMatrixLayoutRowMajor);
    uint n = d.length();
    for (uint k = 0; k < n; k++) {
        uvec2 rc = coopMatGetCoordinateEXT(d, k);
        c[2 * (gl_SubgroupInvocationID * n + k)] = rc.x;
        c[2 * (gl_SubgroupInvocationID * n + k) + 1] = rc.y;
    }
}
