#version 450
// tests/shaders/spirv/ext_maint1.comp for a driver without VK_EXT_cooperative_matrix_maintenance1
// but with VK_NV_cooperative_matrix2 (the H200's 580.159.04): the same outputs through NV2's
// functions (the same SPIR-V instructions under their NV names, the transpose as
// OpCooperativeMatrixTransposeNV), and the coordinates without coopMatGetCoordinateEXT: a
// per-element function writes each element's row and column into it, and the lane reads its
// element k back (KHR element access), which is what coopMatGetCoordinateEXT(d, k) must return.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
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
float position(const in uint row, const in uint col, const in float e) { return float(row * 256u + col); }

#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

void main() {
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
    coopMatLoad(ma, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, b, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    ACC d = coopMatMulAdd(ma, mb, ACC(0.0));
    coopMatStore(d, r, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    ACC q;
    coopMatReduceNV(q, d, gl_CooperativeMatrixReduceRowNV, biggest);
    coopMatStore(q, r, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatReduceNV(q, d, gl_CooperativeMatrixReduceColumnNV, add);
    coopMatStore(q, r, 512, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatReduceNV(q, d, gl_CooperativeMatrixReduceRowAndColumnNV, add);
    coopMatStore(q, r, 768, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatPerElementNV(q, d, scaled, 0.5);
    coopMatStore(q, r, 1024, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ua =
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>(d);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> tb;
    coopMatTransposeNV(tb, coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(d));
    ACC e = coopMatMulAdd(ua, tb, ACC(0.0));
    coopMatStore(e, r, 1280, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, 16, 8, gl_MatrixUseAccumulator> h;
    coopMatReduceNV(h, d, gl_CooperativeMatrixReduceRowNV, add);
    coopMatStore(h, r, 1536, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatPerElementNV(q, d, position);
    uint n = q.length();
    for (uint k = 0; k < n; k++) {
        uint p = uint(q[k]);
        c[2 * (gl_SubgroupInvocationID * n + k)] = p / 256u;
        c[2 * (gl_SubgroupInvocationID * n + k) + 1] = p % 256u;
    }
}
