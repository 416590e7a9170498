#version 450
// Which elements each invocation holds of VK_NV_cooperative_matrix2 matrices whose distribution
// the driver chooses (flexible dimensions; workgroup scope): a per-element function fills each
// matrix with its row, then with its column, and every invocation reads its elements back (KHR
// element access). ROWS x COLS (spec constants 0 and 1), invocations local_size_x (constant 2),
// SCOPE at build time (-DSCOPE=gl_ScopeWorkgroup or gl_ScopeSubgroup); per invocation and matrix
// (0 f32 accumulator, 1 f16 accumulator, 2 f16 A, 3 f16 B): n[4 * inv + m] = length(), then
// rc[((m * INV + inv) * SLOTS + k) * 2 + {0, 1}] = (row, column) of element k.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#ifndef SCOPE
#define SCOPE gl_ScopeWorkgroup
#endif
layout(constant_id = 0) const uint ROWS = 64;
layout(constant_id = 1) const uint COLS = 64;
layout(local_size_x_id = 2) in;
const uint SLOTS = 256;
layout(binding = 0) buffer N { uint n[]; };
layout(binding = 1) buffer RC { uint rc[]; };

float rowf(const in uint row, const in uint col, const in float e) { return float(row); }
float colf(const in uint row, const in uint col, const in float e) { return float(col); }
float16_t rowh(const in uint row, const in uint col, const in float16_t e) { return float16_t(row); }
float16_t colh(const in uint row, const in uint col, const in float16_t e) { return float16_t(col); }

void put(uint m, uint len, uint k, float r, float c) {
    uint at = ((m * gl_WorkGroupSize.x + gl_LocalInvocationIndex) * SLOTS + k) * 2;
    rc[at] = uint(r);
    rc[at + 1] = uint(c);
}

void main() {
    uint me = gl_LocalInvocationIndex;
    coopmat<float, SCOPE, ROWS, COLS, gl_MatrixUseAccumulator> fa = coopmat<float, SCOPE, ROWS, COLS, gl_MatrixUseAccumulator>(0.0);
    coopmat<float, SCOPE, ROWS, COLS, gl_MatrixUseAccumulator> fr, fc;
    coopMatPerElementNV(fr, fa, rowf);
    coopMatPerElementNV(fc, fa, colf);
    n[4 * me] = fr.length();
    for (uint k = 0; k < fr.length() && k < SLOTS; k++) put(0, fr.length(), k, fr[k], fc[k]);
    coopmat<float16_t, SCOPE, ROWS, COLS, gl_MatrixUseAccumulator> ha = coopmat<float16_t, SCOPE, ROWS, COLS, gl_MatrixUseAccumulator>(0.0);
    coopmat<float16_t, SCOPE, ROWS, COLS, gl_MatrixUseAccumulator> hr, hc;
    coopMatPerElementNV(hr, ha, rowh);
    coopMatPerElementNV(hc, ha, colh);
    n[4 * me + 1] = hr.length();
    for (uint k = 0; k < hr.length() && k < SLOTS; k++) put(1, hr.length(), k, float(hr[k]), float(hc[k]));
    coopmat<float16_t, SCOPE, ROWS, COLS, gl_MatrixUseA> aa = coopmat<float16_t, SCOPE, ROWS, COLS, gl_MatrixUseA>(0.0);
    coopmat<float16_t, SCOPE, ROWS, COLS, gl_MatrixUseA> ar, ac;
    coopMatPerElementNV(ar, aa, rowh);
    coopMatPerElementNV(ac, aa, colh);
    n[4 * me + 2] = ar.length();
    for (uint k = 0; k < ar.length() && k < SLOTS; k++) put(2, ar.length(), k, float(ar[k]), float(ac[k]));
    coopmat<float16_t, SCOPE, ROWS, COLS, gl_MatrixUseB> ba = coopmat<float16_t, SCOPE, ROWS, COLS, gl_MatrixUseB>(0.0);
    coopmat<float16_t, SCOPE, ROWS, COLS, gl_MatrixUseB> br, bc;
    coopMatPerElementNV(br, ba, rowh);
    coopMatPerElementNV(bc, ba, colh);
    n[4 * me + 3] = br.length();
    for (uint k = 0; k < br.length() && k < SLOTS; k++) put(3, br.length(), k, float(br[k]), float(bc[k]));
}
