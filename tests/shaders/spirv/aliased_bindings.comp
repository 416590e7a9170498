#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
// Several variables at one descriptor binding (Vulkan's aliased descriptors; llama.cpp reads its
// quantized blocks so, as A and A_PACKED16): binding 0 read through three views (32-bit words,
// 16-bit halves, uvec4 quads), binding 1 written through two (32-bit words in its first 256 bytes,
// 16-bit halves after them). Invocation i of 64 writes W[i] and H[128 + 2 i], H[128 + 2 i + 1].
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { uint words[]; };
layout(set = 0, binding = 0) readonly buffer A16 { uint16_t halves[]; };
layout(set = 0, binding = 0) readonly buffer A4 { uvec4 quads[]; };
layout(set = 0, binding = 1) writeonly buffer W { uint w[]; };
layout(set = 0, binding = 1) writeonly buffer H { uint16_t h[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    w[i] = words[i] ^ (uint(halves[2 * i + 1]) << 3) ^ quads[i / 4][i % 4];
    h[128 + 2 * i] = halves[2 * i] + uint16_t(i);
    h[128 + 2 * i + 1] = uint16_t(quads[(63 - i) / 4][(63 - i) % 4] >> 16);
}
