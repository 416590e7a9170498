#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
// 16-bit integers in SPIR-V (OpCapability Int16, StorageBuffer16BitAccess,
// UniformAndStorageBuffer16BitAccess, StoragePushConstant16): arithmetic, shifts, bit operations,
// comparisons and GLSL.std.450 on int16_t/uint16_t, conversions to and from every integer width and
// every float, bitcasts (u16vec2 <-> uint, float16_t <-> int16_t, u8vec2 <-> uint16_t), 16-bit
// buffer elements and vectors, a uniform block and a push-constant block with 16-bit members, a
// 16-bit specialization constant. Invocation i reads a = A[i], b = B[i] and writes result k at
// O[k * N + i] (16-bit results) or W[k * N + i] (32-bit results); divisors are never 0 (nor -1
// under INT16_MIN): SPIR-V leaves those undefined.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { int16_t a_[]; };
layout(set = 0, binding = 1) readonly buffer B { u16vec2 b_[]; };
layout(set = 0, binding = 2) buffer O { int16_t o[]; };
layout(set = 0, binding = 3) buffer W { int w[]; };
layout(set = 0, binding = 4) uniform U { uint16_t scale; int16_t shift; i16vec2 pair; } u;
layout(push_constant) uniform PC { uint tag; int16_t bias; uint16_t mask; } pc;
layout(constant_id = 0) const int16_t S = -7s;
const uint N = 64u;

void main() {
    uint i = gl_GlobalInvocationID.x;
    int16_t a = a_[i];
    uint16_t ua = uint16_t(a);
    u16vec2 bv = b_[i];
    int16_t b = int16_t(bv.x);
    uint16_t ub = bv.y;
    int16_t d = (b == 0s || b == -1s) ? 7s : b;
    uint16_t ud = ub == 0us ? 3us : ub;
    int16_t sh = int16_t(ub & 15us);
    o[0 * N + i] = a + b;
    o[1 * N + i] = a - b;
    o[2 * N + i] = a * b;
    o[3 * N + i] = a / d;
    o[4 * N + i] = a % d;
    o[5 * N + i] = int16_t(ua / ud);
    o[6 * N + i] = int16_t(ua % ud);
    o[7 * N + i] = a << sh;
    o[8 * N + i] = a >> sh;
    o[9 * N + i] = int16_t(ua >> sh);
    o[10 * N + i] = a & b;
    o[11 * N + i] = a | b;
    o[12 * N + i] = a ^ b;
    o[13 * N + i] = ~a;
    o[14 * N + i] = -a;
    o[15 * N + i] = int16_t(a < b) + 2s * int16_t(ua < ub) + 4s * int16_t(a == b) + 8s * int16_t(ua >= ub);
    o[16 * N + i] = min(a, b);
    o[17 * N + i] = max(a, b);
    o[18 * N + i] = int16_t(min(ua, ub));
    o[19 * N + i] = int16_t(max(ua, ub));
    o[20 * N + i] = clamp(a, -1000s, 1000s);
    o[21 * N + i] = abs(a);
    o[22 * N + i] = sign(a);
    o[23 * N + i] = int16_t(int(a) * 3 + 1);
    o[24 * N + i] = int16_t(uint(ua) * 5u);
    o[25 * N + i] = int16_t(int8_t(a));
    o[26 * N + i] = int16_t(uint8_t(ua));
    o[27 * N + i] = int16_t(int64_t(a) * -3l);
    o[28 * N + i] = int16_t(float(a) * 0.5);
    o[29 * N + i] = int16_t(float16_t(b) * 0.25hf);
    o[30 * N + i] = int16_t(uint16_t(abs(float(ub) * 0.75)));
    o[31 * N + i] = float16BitsToInt16(float16_t(a) * 0.5hf);
    o[32 * N + i] = int16_t(pack16(unpack8(ua).yx));
    o[33 * N + i] = a * S + pc.bias;
    o[34 * N + i] = int16_t(ua & pc.mask) + int16_t(pc.tag);
    o[35 * N + i] = int16_t(ua * u.scale) + (a >> u.shift) + u.pair.x - u.pair.y;
    o[36 * N + i] = i16vec2(a, b).yx[i & 1u];
    o[37 * N + i] = (u16vec2(ua, ub) * u16vec2(3us, 5us) + bv).x > 1000us ? 1s : 0s;
    o[38 * N + i] = bitCount(a);
    o[39 * N + i] = int16_t(findLSB(ub));
    o[40 * N + i] = int16_t(findMSB(ub));
    o[41 * N + i] = int16_t(double(a) * 0.75lf);
    w[0 * N + i] = int(a);
    w[1 * N + i] = int(ua);
    w[2 * N + i] = int(uint(a));
    w[3 * N + i] = int(pack32(u16vec2(ua, ub)));
    w[4 * N + i] = int(unpack16(uint(a) * 2654435761u).y);
    w[5 * N + i] = floatBitsToInt(float(a));
    w[6 * N + i] = floatBitsToInt(float(ub));
    w[7 * N + i] = int(float16BitsToUint16(float16_t(ub)));
    w[8 * N + i] = int(int64_t(a) << 20);
    w[9 * N + i] = int(uint64_t(ub) * 65537ul);
    w[10 * N + i] = int(a) * int(b);
    w[11 * N + i] = int(uint16BitsToHalf(ua) > 0.0hf) + 2 * int(isnan(int16BitsToFloat16(a)));
}
