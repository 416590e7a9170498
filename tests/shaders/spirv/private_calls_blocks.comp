#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// The constructs of llama.cpp-style kernels that the fusion JIT (emu/jit/fuse.py) inlines and
// holds in registers: a buffer of quantized blocks (an array of structs with an f16 scale and
// 8-bit quants), an array of vec2 read whole and by component, a push-constant struct loaded
// whole into a function variable and passed by pointer, private arrays indexed per invocation
// (dynamic indices, one out of range on purpose for lanes >= 60), functions with a return value
// and pointer parameters, vector arithmetic, constants and swizzles, 8- and 16-bit integer
// arithmetic (wrapping, shifts, division), 64-bit integer arithmetic and umulExtended, dot, a
// private global array with an initializer, an infinite constant, bitcasts between vector
// widths, a vec4 stored whole. One invocation per output.
layout(local_size_x = 32) in;
struct block { float16_t d; int8_t qs[6]; };
struct params { uint n; float scale; int bias[2]; uint16_t mask; };
layout(set = 0, binding = 0) readonly buffer A { block blocks[]; };
layout(set = 0, binding = 1) readonly buffer B { vec2 pairs[]; };
layout(set = 0, binding = 2) writeonly buffer O { vec4 outs[]; };
layout(set = 0, binding = 3) writeonly buffer P { uint16_t halves[]; };
layout(push_constant) uniform PC { params p; } pc;
uint primes[4] = uint[4](3u, 5u, 7u, 11u);

float dequant(uint b, uint j) {
    return float(blocks[b].d) * float(blocks[b].qs[j]);
}

uint wrap_mix(inout params q, uint i) {
    uint8_t x = uint8_t(i * 37u);
    int16_t y = int16_t(int(i) * -1999);
    x = x * uint8_t(7) + uint8_t(200);
    y = (y >> 3) ^ int16_t(q.bias[i & 1u]);
    int16_t z = y / int16_t(int(i % 5u) - 2);
    q.n += 1u;
    return uint(x) + uint(uint16_t(z)) + (uint(uint16_t(y) & q.mask) << 8);
}

void main() {
    uint i = gl_GlobalInvocationID.x;
    params q = pc.p;
    if (i >= q.n) { return; }
    float acc[6];
    for (uint j = 0u; j < 6u; j++) { acc[j] = dequant(i, j) * q.scale; }
    uint k = (i * 7u) % 6u;
    float picked = acc[k] + acc[5u - k];
    vec2 pr = pairs[i];
    vec2 sw = pr.yx * vec2(2.0, -0.5) + vec2(q.bias[0]);
    uint m = wrap_mix(q, i);
    ivec2 idx[3] = ivec2[3](ivec2(1, 2), ivec2(int(i), -1), ivec2(3, int(m & 7u)));
    int far = idx[i % 3u].y + idx[2].x;
    if (i >= 60u) { far += int(acc[i - 54u]); }      // index 6..: out of range, clamped and reported
    float dd = dot(vec4(pr, sw), vec4(acc[0], acc[1], picked, 0.5));
    outs[i] = vec4(picked + dd, sw.x, sw.y + pr.x, float(far) + float(q.n));
    primes[i & 3u] += i;
    uint hi, lo;
    umulExtended(m * 2654435761u, i + 0x9E3779B9u, hi, lo);
    uint64_t w = uint64_t(hi) * 0x9E3779B97F4A7C15ul - int64_t(lo);
    w ^= w >> 29;
    float best = max(-1.0 / 0.0, picked);
    i8vec4 q4 = unpack8(int(m) ^ int(w));                  // bitcasts between widths
    int packed = pack32(q4 * i8vec4(int8_t(1), int8_t(-2), int8_t(3), int8_t(4)));
    u16vec2 h2 = unpack16(uint(packed) + uint(w >> 32));
    halves[i] = uint16_t(m + uint(w) + primes[(i + 1u) & 3u] * primes[i & 3u]) ^ uint16_t(0x5A5A)
                ^ uint16_t(isinf(best) ? 1u : 0u) ^ h2.x ^ (h2.y << 3);
}
