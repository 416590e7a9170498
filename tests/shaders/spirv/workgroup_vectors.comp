#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// Workgroup arrays of vectors and of arrays of vectors reached through a pointer to one element
// (a vec4, an f16vec4, a whole row), loaded and stored whole, as llama.cpp's flash attention and
// top-k stage their tiles: the fusion JIT loads and stores such a part scalar by scalar, each
// element checked against the other invocations' accesses since the last barrier.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer A { vec4 a[]; };
layout(set = 0, binding = 1) writeonly buffer O { vec4 o[]; };
shared vec4 tile[32];
shared f16vec4 rows[4][8];
shared uvec2 keys[2][32];
shared f16vec4 sums[8];

void main() {
    uint l = gl_LocalInvocationIndex;
    uint i = gl_GlobalInvocationID.x;
    tile[l] = a[i] * 2.0;
    rows[l / 8][l % 8] = f16vec4(a[i].yxwz);
    keys[l & 1][l] = uvec2(l, floatBitsToUint(a[i].x));
    barrier();
    vec4 mine = tile[(l + 5) % 32];
    f16vec4 h = rows[(l + 1) % 4][l % 8];
    uvec2 k = keys[(l + 1) & 1][l ^ 1];
    barrier();
    if (l < 8) {
        f16vec4 row[8] = rows[l % 4];
        sums[l] = row[(l + 3) % 8] + row[l];
    }
    barrier();
    o[i * 3] = mine + vec4(h);
    o[i * 3 + 1] = vec4(k.x, uintBitsToFloat(k.y), sums[l % 8].xy);
    o[i * 3 + 2] = vec4(tile[31 - l].wz, 1.0, 0.0);
}
