#version 450
// The H200's integer configurations: i8 x i8 -> i32 and u8 x u8 -> u32, 16x16x32 and 16x8x32, two
// K steps (K = 64) onto a loaded C; signed operands row-major, unsigned ones column-major. Sums
// past 2^31 (2^32) wrap: none of the device's configurations saturates.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_8bit_storage : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer IA { int8_t ia[]; };     // 16x64, row-major
layout(set = 0, binding = 1) readonly buffer IB { int8_t ib[]; };     // 64x16, row-major
layout(set = 0, binding = 2) readonly buffer IC { int ic[]; };        // 16x16, row-major
layout(set = 0, binding = 3) writeonly buffer IR { int ir[]; };       // 16x16, then 16x8, row-major
layout(set = 0, binding = 4) readonly buffer UA { uint8_t ua[]; };    // 16x64, column-major
layout(set = 0, binding = 5) readonly buffer UB { uint8_t ub[]; };    // 64x16, column-major
layout(set = 0, binding = 6) readonly buffer UC { uint uc[]; };       // 16x16, column-major
layout(set = 0, binding = 7) writeonly buffer UR { uint ur[]; };      // 16x16, then 16x8, column-major

const int S = gl_ScopeSubgroup;
const int RM = gl_CooperativeMatrixLayoutRowMajor, CM = gl_CooperativeMatrixLayoutColumnMajor;
void main() {
    coopmat<int, S, 16, 16, gl_MatrixUseAccumulator> i16;
    coopmat<int, S, 16, 8, gl_MatrixUseAccumulator> i8n;
    coopmat<uint, S, 16, 16, gl_MatrixUseAccumulator> u16;
    coopmat<uint, S, 16, 8, gl_MatrixUseAccumulator> u8n;
    coopMatLoad(i16, ic, 0, 16, RM);
    coopMatLoad(i8n, ic, 0, 16, RM);                 // C's first 8 columns
    coopMatLoad(u16, uc, 0, 16, CM);
    coopMatLoad(u8n, uc, 0, 16, CM);
    for (uint k = 0; k < 64; k += 32) {
        coopmat<int8_t, S, 16, 32, gl_MatrixUseA> sa;
        coopmat<int8_t, S, 32, 16, gl_MatrixUseB> sb;
        coopmat<int8_t, S, 32, 8, gl_MatrixUseB> sbn;
        coopMatLoad(sa, ia, k, 64, RM);
        coopMatLoad(sb, ib, k * 16, 16, RM);
        coopMatLoad(sbn, ib, k * 16, 16, RM);        // B's first 8 columns
        i16 = coopMatMulAdd(sa, sb, i16);
        i8n = coopMatMulAdd(sa, sbn, i8n);
        coopmat<uint8_t, S, 16, 32, gl_MatrixUseA> ua_;
        coopmat<uint8_t, S, 32, 16, gl_MatrixUseB> ub_;
        coopmat<uint8_t, S, 32, 8, gl_MatrixUseB> ubn;
        coopMatLoad(ua_, ua, k * 16, 16, CM);
        coopMatLoad(ub_, ub, k, 64, CM);
        coopMatLoad(ubn, ub, k, 64, CM);
        u16 = coopMatMulAdd(ua_, ub_, u16);
        u8n = coopMatMulAdd(ua_, ubn, u8n);
    }
    coopMatStore(i16, ir, 0, 16, RM);
    coopMatStore(i8n, ir, 256, 8, RM);
    coopMatStore(u16, ur, 0, 16, CM);
    coopMatStore(u8n, ur, 256, 16, CM);
}
