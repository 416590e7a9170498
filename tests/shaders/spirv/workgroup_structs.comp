#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
// Workgroup arrays of structs that mix integer and f16 members, as llama.cpp stages quantized
// blocks in shared memory (flash attention's Q as int8x4 words with an f16vec2 scale, mul_mm's
// integer-dot tiles as uint[4] with an f16 scale): members written by some invocations, read by
// others after a barrier, through constant and dynamic indices at every level. The fusion JIT
// keeps one flat array per member (a struct of arrays), each element checked as before.
layout(local_size_x = 64) in;
struct QBlock { int qs[8]; f16vec2 ds; };
struct Tile { uint q[4]; float16_t d; };
layout(set = 0, binding = 0) readonly buffer A { int a[]; };
layout(set = 0, binding = 1) readonly buffer H { float16_t h[]; };
layout(set = 0, binding = 2) writeonly buffer O { uint o[]; };
shared QBlock blocks[8];
shared Tile tiles[2][16];

void main() {
    uint l = gl_LocalInvocationIndex;
    uint i = gl_GlobalInvocationID.x;
    blocks[l / 8].qs[l % 8] = a[i];
    if (l % 8 == 0) {
        blocks[l / 8].ds = f16vec2(h[i], h[i] * float16_t(0.5));
    }
    if (l < 32) {
        tiles[l / 16][l % 16].d = h[i + 64];
    }
    tiles[(l / 4) % 2][(l / 8)].q[l % 4] = uint(a[i]) ^ 0x5A5Au;
    barrier();
    uint b = (l + 3) % 8;
    int s = 0;
    for (uint k = 0; k < 8; k++) {
        s += blocks[b].qs[(k + l) % 8] * int(k + 1);
    }
    f16vec2 ds = blocks[b].ds;
    Tile t = tiles[l % 2][l % 16];
    o[i * 6] = uint(s);
    o[i * 6 + 1] = packFloat2x16(ds);
    o[i * 6 + 2] = uint(blocks[7 - b].ds.y == ds.x) + tiles[1][3].q[l % 4];
    o[i * 6 + 3] = t.q[0] + t.q[1] * 3u + t.q[2] * 5u + t.q[3] * 7u;
    o[i * 6 + 4] = uint(float16BitsToUint16(t.d));
    o[i * 6 + 5] = uint(float16BitsToUint16(tiles[0][l % 16].d * float16_t(2.0)));
}
