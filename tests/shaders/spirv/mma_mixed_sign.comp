#version 450
// An i8 x u8 multiply-add (SPIR-V's per-operand signedness; amd-rdna3 lists it), stored as i32.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer IA { int8_t ia[]; };
layout(set = 0, binding = 1) readonly buffer IB { uint8_t ib[]; };
layout(set = 0, binding = 2) writeonly buffer IR { int ir[]; };
const int S = gl_ScopeSubgroup;
void main() {
    coopmat<int8_t, S, 16, 16, gl_MatrixUseA> xa;
    coopmat<uint8_t, S, 16, 16, gl_MatrixUseB> xb;
    coopMatLoad(xa, ia, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(xb, ib, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<int, S, 16, 16, gl_MatrixUseAccumulator> xc = coopmat<int, S, 16, 16, gl_MatrixUseAccumulator>(-7);
    xc = coopMatMulAdd(xa, xb, xc);
    coopMatStore(xc, ir, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
