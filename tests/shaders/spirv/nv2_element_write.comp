#version 450
// Element writes to a VK_NV_cooperative_matrix2 workgroup-scope matrix (64x32 f32 accumulator, 128
// invocations): a per-element function fills it with row * 32 + column, every invocation then sets
// each element it holds (index k < length(): the driver's spread, H200 session 5) to 2x + 1, and
// the matrix is stored row-major to r; with SKIP = 1 the odd invocations skip the writes.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
layout(constant_id = 0) const uint SKIP = 0;
layout(local_size_x = 128) in;
layout(binding = 0) buffer R { float r[]; };

float place(const in uint row, const in uint col, const in float e) { return float(row * 32u + col); }

void main() {
    coopmat<float, gl_ScopeWorkgroup, 64, 32, gl_MatrixUseAccumulator> m =
        coopmat<float, gl_ScopeWorkgroup, 64, 32, gl_MatrixUseAccumulator>(0.0);
    coopMatPerElementNV(m, m, place);
    if (SKIP == 0u || gl_LocalInvocationIndex % 2u == 0u) {
        for (uint k = 0; k < m.length(); k++) {
            m[k] = m[k] * 2.0 + 1.0;
        }
    }
    coopMatStore(m, r, 0, 32, gl_CooperativeMatrixLayoutRowMajor);
}
