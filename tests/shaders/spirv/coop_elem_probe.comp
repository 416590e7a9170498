#version 450
// Which element updates of a cooperative matrix the H200's driver fuses with the product before
// them (coop_ops.comp showed: a division, then a loop over length() adding to each element).
// R's blocks of 256 (row-major): 0 x * 0.3 (OpMatrixTimesScalar), loop +(i + 0.5); 1 x * c (element-wise),
// loop +1+i; 2 x / c, straight-line d[0] += 1, d[3] -= 2; 3 x / c, loop d[i] = i - d[i];
// 4 x / c stored as block 5 before the loop +1 (the product has a second user).
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };   // 16x16, row-major
layout(set = 0, binding = 1) readonly buffer C { float c[]; };   // 16x16, row-major
layout(set = 0, binding = 2) writeonly buffer R { float r[]; };  // 6 x 256
const int S = gl_ScopeSubgroup;
#define ACC coopmat<float, S, 16, 16, gl_MatrixUseAccumulator>
const int RM = gl_CooperativeMatrixLayoutRowMajor;
void main() {
    ACC mx;
    ACC mc;
    coopMatLoad(mx, x, 0, 16, RM);
    coopMatLoad(mc, c, 0, 16, RM);
    ACC d0 = mx * 0.3;
    for (int i = 0; i < d0.length(); ++i) d0[i] = d0[i] + (float(i) + 0.5);
    coopMatStore(d0, r, 0, 16, RM);
    ACC d1 = mx * mc;
    for (int i = 0; i < d1.length(); ++i) d1[i] = d1[i] + (1.0 + float(i));
    coopMatStore(d1, r, 256, 16, RM);
    ACC d2 = mx / mc;
    d2[0] = d2[0] + 1.0;
    d2[3] = d2[3] - 2.0;
    coopMatStore(d2, r, 512, 16, RM);
    ACC d3 = mx / mc;
    for (int i = 0; i < d3.length(); ++i) d3[i] = float(i) - d3[i];
    coopMatStore(d3, r, 768, 16, RM);
    ACC d4 = mx / mc;
    coopMatStore(d4, r, 1280, 16, RM);
    for (int i = 0; i < d4.length(); ++i) d4[i] = d4[i] + 1.0;
    coopMatStore(d4, r, 1024, 16, RM);
}
