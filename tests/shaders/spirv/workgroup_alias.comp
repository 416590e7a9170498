#version 450
// GL_EXT_shared_memory_block (SPIR-V's WorkgroupMemoryExplicitLayoutKHR): the shared blocks alias
// one another, each starting at the first byte of the workgroup's memory, so a float written
// through one block is read as its bits, and as two halves, through the others
#extension GL_EXT_shared_memory_block : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer In { float x[]; } inp;
layout(set = 0, binding = 1) buffer Out { uvec4 y[]; } o;
shared Floats { float f[64]; } sf;
shared Words { uint w[64]; } sw;
shared Halves { float16_t h[128]; } sh;
shared Tail { uint head; uint pad[62]; uint last; } st;
void main() {
    uint l = gl_LocalInvocationID.x;
    sf.f[l] = inp.x[gl_GlobalInvocationID.x];
    barrier();
    uint bits = sw.w[63 - l];
    float16_t lo = sh.h[2 * l], hi = sh.h[2 * l + 1];
    barrier();
    if (l == 0) st.last = 0xABCD1234u;
    barrier();
    o.y[gl_GlobalInvocationID.x] = uvec4(bits, packFloat2x16(f16vec2(lo, hi)), sw.w[63], st.head ^ floatBitsToUint(sf.f[0]));
}
