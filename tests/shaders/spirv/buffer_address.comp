#version 450
// buffer device addresses (GL_EXT_buffer_reference: SPIR-V's PhysicalStorageBuffer pointers):
// buffers reached through addresses in push constants and in other buffers (a linked list),
// pointer arithmetic on an address, a reference passed to a function, loads and stores with
// Aligned operands, an atomic through a reference, a reference converted back to its address
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 64) in;
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Vecs { vec4 v[]; };
layout(buffer_reference) buffer Node;
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Node { uint value; uint pad; Node next; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Counter { uint hits; uint last; };
layout(push_constant) uniform PC { Vecs src; Vecs dst; Node head; Counter counter; } pc;
layout(set = 0, binding = 0) buffer Out { uvec4 o[]; } res;

float second(Vecs p, uint k) { return p.v[k].y; }

void main() {
    uint i = gl_GlobalInvocationID.x;
    vec4 x = pc.src.v[i];
    pc.dst.v[i] = x * 2.0 + vec4(1.0);
    // the neighbour's vector through an address computed here
    Vecs moved = Vecs(uint64_t(pc.src) + 16ul * uint64_t(i ^ 1u));
    float y = moved.v[0].x + second(pc.src, i);
    // a linked list: each node holds the address of the next (0 ends it)
    Node n = pc.head;
    uint sum = 0u, steps = 0u;
    for (uint k = 0u; k < (i & 7u) && uint64_t(n) != 0ul; k++) {
        sum += n.value * (k + 1u);
        n = n.next;
        steps++;
    }
    uint old = atomicAdd(pc.counter.hits, 1u);
    res.o[i] = uvec4(floatBitsToUint(y), sum, steps, uint(uint64_t(n) - uint64_t(pc.head)) + (old < 64u ? 0u : 1000u));
}
