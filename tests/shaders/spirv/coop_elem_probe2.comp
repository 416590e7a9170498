#version 450
// coop_elem_probe.comp's follow-up: the H200 fused d[i] + c after a product and not c - d[i]. R's
// blocks of 256 (row-major): 0 x / c, loop d[i] - (i + 0.5); 1 x / c, loop (i + 0.5) + d[i];
// 2 x * 0.3, loop (i + 0.5) - d[i]; 3 scalars 0.7 - x / c; 4 scalars 0.7 - x * c.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };   // 16x16, row-major
layout(set = 0, binding = 1) readonly buffer C { float c[]; };   // 16x16, row-major
layout(set = 0, binding = 2) writeonly buffer R { float r[]; };  // 5 x 256
const int S = gl_ScopeSubgroup;
#define ACC coopmat<float, S, 16, 16, gl_MatrixUseAccumulator>
const int RM = gl_CooperativeMatrixLayoutRowMajor;
void main() {
    ACC mx;
    ACC mc;
    coopMatLoad(mx, x, 0, 16, RM);
    coopMatLoad(mc, c, 0, 16, RM);
    ACC d0 = mx / mc;
    for (int i = 0; i < d0.length(); ++i) d0[i] = d0[i] - (float(i) + 0.5);
    coopMatStore(d0, r, 0, 16, RM);
    ACC d1 = mx / mc;
    for (int i = 0; i < d1.length(); ++i) d1[i] = (float(i) + 0.5) + d1[i];
    coopMatStore(d1, r, 256, 16, RM);
    ACC d2 = mx * 0.3;
    for (int i = 0; i < d2.length(); ++i) d2[i] = (float(i) + 0.5) - d2[i];
    coopMatStore(d2, r, 512, 16, RM);
    for (uint j = gl_LocalInvocationID.x; j < 256; j += 32) {
        r[768 + j] = 0.7 - x[j] / c[j];
        r[1024 + j] = 0.7 - x[j] * c[j];
    }
}
