#version 450
// VK_NV_cooperative_matrix2 at workgroup scope (128 invocations: 4 subgroups hold each matrix):
// tensor-layout loads and stores of flexible-dimension matrices, D = A * B (64x32x32, f16 -> f32).
//  A (50 x 32, row-major) is loaded as a 64 x 32 slice with clamp mode Constant: rows 50..63 lie
//    outside the layout and read the clamp value's bits (0x3C00: 1.0);
//  B is given transposed (Bt, 32 x 32 row-major, B[k][n] = Bt[n][k]) and loaded through the
//    view that swaps the two dimensions;
//  D is stored through a layout of 56 rows (Constant): rows 56..63 are dropped; and transposed
//    (DT[n][m] = D[m][n], row stride 72) through the same view, clipped to rows 0..39 of D.
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
layout(local_size_x = 128) in;
layout(binding = 0) readonly buffer A { float16_t a[]; };
layout(binding = 1) readonly buffer Bt { float16_t bt[]; };
layout(binding = 2) buffer D { float d[]; };
layout(binding = 3) buffer DT { float dt[]; };

void main() {
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> la = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    la = setTensorLayoutDimensionNV(la, 50, 32);
    la = setTensorLayoutClampValueNV(la, 0x3C00);
    tensorLayoutNV<2> lb = createTensorLayoutNV(2);
    lb = setTensorLayoutDimensionNV(lb, 32, 32);
    tensorViewNV<2, false, 1, 0> swap = createTensorViewNV(2, false, 1, 0);

    coopmat<float16_t, gl_ScopeWorkgroup, 64, 32, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeWorkgroup, 32, 32, gl_MatrixUseB> mb;
    coopMatLoadTensorNV(ma, a, 0, sliceTensorLayoutNV(la, 0, 64, 0, 32));
    coopMatLoadTensorNV(mb, bt, 0, sliceTensorLayoutNV(lb, 0, 32, 0, 32), swap);
    coopmat<float, gl_ScopeWorkgroup, 64, 32, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeWorkgroup, 64, 32, gl_MatrixUseAccumulator>(0.0);
    acc = coopMatMulAdd(ma, mb, acc);

    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> ld = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    ld = setTensorLayoutDimensionNV(ld, 56, 32);
    coopMatStoreTensorNV(acc, d, 0, sliceTensorLayoutNV(ld, 0, 64, 0, 32));

    tensorLayoutNV<2> lt = createTensorLayoutNV(2);
    lt = setTensorLayoutDimensionNV(lt, 32, 64);
    lt = setTensorLayoutStrideNV(lt, 72, 1);
    tensorViewNV<2, false, 1, 0> clip = setTensorViewClipNV(swap, 0, 40, 0, 32);
    coopMatStoreTensorNV(acc, dt, 0, sliceTensorLayoutNV(lt, 0, 32, 0, 64), clip);
}
