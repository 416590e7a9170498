#version 450
// OpUMulExtended / OpSMulExtended (GLSL umulExtended / imulExtended): the 64-bit product of two
// 32-bit integers as its low and high words, on scalars and vectors, and llama.cpp's use of it:
// division by a constant as a multiply-high by a magic number and a shift (fastdiv).
// Invocation i reads a = A[i], b = B[i] and writes result k at O[k * N + i].
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { uint a_[]; };
layout(set = 0, binding = 1) readonly buffer B { uint b_[]; };
layout(set = 0, binding = 2) buffer O { uint o[]; };
layout(push_constant) uniform PC { uint divisor; uint magic; uint shift; } pc;
const uint N = 64u;

uint fastdiv(uint n, uint mp, uint l) {
    uint msbs, lsbs;
    umulExtended(n, mp, msbs, lsbs);
    return (msbs + n) >> l;
}

void main() {
    uint i = gl_GlobalInvocationID.x;
    uint a = a_[i], b = b_[i];
    uint hi, lo;
    umulExtended(a, b, hi, lo);
    o[0 * N + i] = hi;
    o[1 * N + i] = lo;
    int shi, slo;
    imulExtended(int(a), int(b), shi, slo);
    o[2 * N + i] = uint(shi);
    o[3 * N + i] = uint(slo);
    uvec3 vhi, vlo;
    umulExtended(uvec3(a, b, a ^ b), uvec3(b, 0xFFFFFFFFu, a), vhi, vlo);
    o[4 * N + i] = vhi.x ^ vhi.y ^ vhi.z;
    o[5 * N + i] = vlo.x + vlo.y + vlo.z;
    ivec2 ihi, ilo;
    imulExtended(ivec2(int(a), -int(b)), ivec2(-2147483647 - 1, int(a)), ihi, ilo);
    o[6 * N + i] = uint(ihi.x);
    o[7 * N + i] = uint(ihi.y);
    o[8 * N + i] = uint(ilo.y);
    o[9 * N + i] = fastdiv(a, pc.magic, pc.shift);
}
