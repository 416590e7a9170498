#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
// 64-bit integers in SPIR-V (OpCapability Int64, Int64Atomics): arithmetic, shifts, bit
// operations, comparisons, GLSL.std.450 on int64_t/uint64_t, conversions to and from 32-bit
// integers and floats, bitcasts through two 32-bit words, 64-bit atomics, a push-constant block
// and specialization constants of 64-bit types (one an OpSpecConstantOp). Invocation i reads
// a = A[i], b = B[i] and writes result k at O[k * N + i]; divisors are never 0 (nor -1 under
// INT64_MIN): SPIR-V leaves those undefined.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { int64_t a_[]; };
layout(set = 0, binding = 1) readonly buffer B { int64_t b_[]; };
layout(set = 0, binding = 2) buffer O { int64_t o[]; };
layout(set = 0, binding = 3) buffer C { uint64_t sum; int64_t lo; int64_t hi; uint64_t ors; uint64_t ands;
                                        uint64_t xors; uint64_t umax; uint64_t slot[64]; } c;
layout(push_constant) uniform PC { uint tag; int64_t bias; u64vec2 mask; } pc;
layout(constant_id = 0) const int64_t S = -7l;
layout(constant_id = 1) const uint64_t U = 0x8000000000000001ul;
const int64_t S3 = S * 3l + 1l;
const uint N = 64u;

void main() {
    uint i = gl_GlobalInvocationID.x;
    int64_t a = a_[i], b = b_[i];
    uint64_t ua = uint64_t(a), ub = uint64_t(b);
    int64_t d = (b == 0l || b == -1l) ? 7l : b;
    uint sh = uint(b) & 63u;
    o[0 * N + i] = a + b;
    o[1 * N + i] = a - b;
    o[2 * N + i] = a * b;
    o[3 * N + i] = a / d;
    o[4 * N + i] = int64_t(ua / uint64_t(d));
    o[5 * N + i] = int64_t(ua % uint64_t(d));
    o[6 * N + i] = a << sh;
    o[7 * N + i] = a >> sh;
    o[8 * N + i] = int64_t(ua >> sh);
    o[9 * N + i] = int64_t(ua << int64_t(sh));
    o[10 * N + i] = a & b;
    o[11 * N + i] = a | b;
    o[12 * N + i] = a ^ b;
    o[13 * N + i] = ~a;
    o[14 * N + i] = -a;
    o[15 * N + i] = int64_t(a < b) + 2l * int64_t(ua < ub) + 4l * int64_t(a == b) + 8l * int64_t(ua >= ub);
    o[16 * N + i] = min(a, b);
    o[17 * N + i] = max(a, b);
    o[18 * N + i] = int64_t(min(ua, ub));
    o[19 * N + i] = int64_t(max(ua, ub));
    o[20 * N + i] = clamp(a, -1000l, 1000l);
    o[21 * N + i] = abs(a);
    o[22 * N + i] = sign(a);
    o[23 * N + i] = int64_t(int(a));
    o[24 * N + i] = int64_t(uint(a));
    o[25 * N + i] = int64_t(uint64_t(uint(ua >> 32)));
    o[26 * N + i] = int64_t(floatBitsToInt(float(a)));
    o[27 * N + i] = int64_t(floatBitsToUint(float(ua)));
    o[28 * N + i] = doubleBitsToInt64(double(a));
    o[29 * N + i] = doubleBitsToInt64(double(ua));
    o[30 * N + i] = int64_t(double(a & 0xFFFFFFFFFFFFFl) * 0.75lf);
    o[31 * N + i] = int64_t(uint64_t(double(ua >> 12) * 1.5lf));
    o[32 * N + i] = int64_t(packUint2x32(unpackUint2x32(ua).yx));
    o[33 * N + i] = packInt2x32(ivec2(int(a), int(b)));
    o[34 * N + i] = int64_t(unpackInt2x32(a).y);
    o[35 * N + i] = a * S + S3;
    o[36 * N + i] = int64_t((ua ^ U) + pc.mask.x) + pc.bias;
    o[37 * N + i] = int64_t(ua & pc.mask.y) + int64_t(pc.tag);
    atomicAdd(c.sum, ua);
    atomicMin(c.lo, a);
    atomicMax(c.hi, a);
    atomicOr(c.ors, ub << 3);
    atomicAnd(c.ands, ua | 0xF0F0F0F0F0F0F0F0ul);
    atomicXor(c.xors, ua);
    atomicMax(c.umax, ub);
    uint64_t old = atomicExchange(c.slot[i], ua);
    atomicCompSwap(c.slot[i], ua, old + ub);
}
