#version 450
// KHR cooperative-matrix operations beyond the GEMM: column-major loads, scaling, element-wise
// arithmetic, per-element access through length(), conversion to f16, and an int8 multiply-add.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_8bit_storage : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };    // 16x16, column-major
layout(set = 0, binding = 1) readonly buffer B { float16_t b[]; };    // 16x16, row-major
layout(set = 0, binding = 2) readonly buffer C { float c[]; };        // 16x16, row-major
layout(set = 0, binding = 3) writeonly buffer R { float r[]; };
layout(set = 0, binding = 4) writeonly buffer H { float16_t h[]; };
layout(set = 0, binding = 5) readonly buffer IA { int8_t ia[]; };     // 16x32, row-major
layout(set = 0, binding = 6) readonly buffer IB { int8_t ib[]; };     // 32x16, row-major
layout(set = 0, binding = 7) writeonly buffer IR { int ir[]; };       // 16x16, column-major

const int S = gl_ScopeSubgroup;
void main() {
    coopmat<float16_t, S, 16, 16, gl_MatrixUseA> ma;
    coopmat<float16_t, S, 16, 16, gl_MatrixUseB> mb;
    coopmat<float, S, 16, 16, gl_MatrixUseAccumulator> mc;
    coopMatLoad(ma, a, 0, 16, gl_CooperativeMatrixLayoutColumnMajor);
    coopMatLoad(mb, b, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mc, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, S, 16, 16, gl_MatrixUseAccumulator> d = coopMatMulAdd(ma, mb, mc);
    d = d * 0.5;
    d = (d - mc) / mc;
    for (int i = 0; i < d.length(); ++i) {
        d[i] = d[i] + float(i);
    }
    coopMatStore(d, r, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float16_t, S, 16, 16, gl_MatrixUseAccumulator> dh = coopmat<float16_t, S, 16, 16, gl_MatrixUseAccumulator>(d);
    coopMatStore(dh, h, 0, 16, gl_CooperativeMatrixLayoutRowMajor);

    coopmat<int8_t, S, 16, 32, gl_MatrixUseA> xa;
    coopmat<int8_t, S, 32, 16, gl_MatrixUseB> xb;
    coopMatLoad(xa, ia, 0, 32, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(xb, ib, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<int, S, 16, 16, gl_MatrixUseAccumulator> xc = coopmat<int, S, 16, 16, gl_MatrixUseAccumulator>(7);
    xc = coopMatMulAdd(xa, xb, xc);
    coopMatStore(xc, ir, 0, 16, gl_CooperativeMatrixLayoutColumnMajor);
}
