#version 450
// VK_NV_cooperative_matrix2 per-element functions and reductions at both scopes.
// Workgroup scope (128 invocations), D = A * B (64x32x32, f16 -> f32, loaded row-major through
// tensor layouts), each result stored as 64x32 row-major to r[k * 2048 ..]:
//   k = 0  D
//   k = 1  coopMatPerElementNV(D, scaled_add, Y, 0.75): D[i][j] * 0.75 + Y[i][j]
//   k = 2  coopMatPerElementNV(D, signed_by_place): D[i][j] where j == i or j == i + 5, else -D[i][j]
//   k = 3  row sums of D (coopMatReduceNV Row, x + y)
//   k = 4  column sums (Column)
//   k = 5  the sum of all of D (Row|Column)
// Subgroup scope (each of the 4 subgroups: its 16x16 tile T = A[16s.., 0..15] * B[0..15, 0..15]),
// stored as 16x16 row-major to s[s * 768 + k * 256 ..]:
//   k = 0  T,  k = 1  column sums of T,  k = 2  coopMatPerElementNV(T, signed_by_place)
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
layout(local_size_x = 128) in;
layout(binding = 0) readonly buffer A { float16_t a[]; };
layout(binding = 1) readonly buffer B { float16_t b[]; };
layout(binding = 2) readonly buffer Y { float y[]; };
layout(binding = 3) buffer R { float r[]; };
layout(binding = 4) buffer S { float s[]; };

float add(const in float x, const in float y) { return x + y; }
float scaled_add(const in uint row, const in uint col, const in float x, const in float yv, const in float k) {
    return x * k + yv;
}
float signed_by_place(const in uint row, const in uint col, const in float x) {
    return (row == col || col == row + 5u) ? x : -x;
}

void main() {
    tensorLayoutNV<2> la = setTensorLayoutDimensionNV(createTensorLayoutNV(2), 64, 32);
    tensorLayoutNV<2> lb = setTensorLayoutDimensionNV(createTensorLayoutNV(2), 32, 32);
    tensorLayoutNV<2> lr = setTensorLayoutDimensionNV(createTensorLayoutNV(2), 64, 32);
    coopmat<float16_t, gl_ScopeWorkgroup, 64, 32, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeWorkgroup, 32, 32, gl_MatrixUseB> mb;
    coopmat<float, gl_ScopeWorkgroup, 64, 32, gl_MatrixUseAccumulator> my;
    coopMatLoadTensorNV(ma, a, 0, la);
    coopMatLoadTensorNV(mb, b, 0, lb);
    coopMatLoadTensorNV(my, y, 0, lr);
    coopmat<float, gl_ScopeWorkgroup, 64, 32, gl_MatrixUseAccumulator> d =
        coopmat<float, gl_ScopeWorkgroup, 64, 32, gl_MatrixUseAccumulator>(0.0);
    d = coopMatMulAdd(ma, mb, d);
    coopMatStoreTensorNV(d, r, 0, lr);
    coopmat<float, gl_ScopeWorkgroup, 64, 32, gl_MatrixUseAccumulator> e;
    coopMatPerElementNV(e, d, scaled_add, my, 0.75);
    coopMatStoreTensorNV(e, r, 2048, lr);
    coopMatPerElementNV(e, d, signed_by_place);
    coopMatStoreTensorNV(e, r, 4096, lr);
    coopMatReduceNV(e, d, gl_CooperativeMatrixReduceRowNV, add);
    coopMatStoreTensorNV(e, r, 6144, lr);
    coopMatReduceNV(e, d, gl_CooperativeMatrixReduceColumnNV, add);
    coopMatStoreTensorNV(e, r, 8192, lr);
    coopMatReduceNV(e, d, gl_CooperativeMatrixReduceRowAndColumnNV, add);
    coopMatStoreTensorNV(e, r, 10240, lr);

    uint sg = gl_SubgroupID;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ta;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> tb;
    coopMatLoad(ta, a, sg * 16 * 32, 32, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(tb, b, 0, 32, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> t =
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    t = coopMatMulAdd(ta, tb, t);
    uint base = sg * 768;
    coopMatStore(t, s, base, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> u;
    coopMatReduceNV(u, t, gl_CooperativeMatrixReduceColumnNV, add);
    coopMatStore(u, s, base + 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatPerElementNV(u, t, signed_by_place);
    coopMatStore(u, s, base + 512, 16, gl_CooperativeMatrixLayoutRowMajor);
}
