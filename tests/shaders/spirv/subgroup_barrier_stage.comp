#version 450
// A subgroup-scope control barrier (subgroupBarrier()) ordering shared-memory accesses within
// each subgroup, with no workgroup barrier between: every invocation stores its value, then
// after the subgroup barrier reads the values other invocations of its own subgroup stored
// (reversed, and one a vector), as llama.cpp's mul_mm stages a tile per subgroup. The fusion JIT
// runs each subgroupBarrier() for the whole workgroup at once and tells its sub-intervals apart in
// the access tags (emu/jit/rt.py's clash). 128 invocations, four subgroups of 32 on nvidia-h200.
// The push constant `cross` makes the read take another subgroup's element: a data race (no
// barrier of their scope between) that the interpreter reports.
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 128) in;
layout(std430, binding = 0) buffer Out { uint v[]; } o;
layout(push_constant) uniform P { uint cross; } p;
shared uint stage[128];
shared uvec2 pairs[128];
void main() {
    uint i = gl_LocalInvocationID.x;
    uint s = gl_SubgroupID;
    uint l = gl_SubgroupInvocationID;
    uint g = gl_WorkGroupID.x;
    stage[i] = i * 3u + 1u + g;
    pairs[i] = uvec2(i, g);
    subgroupBarrier();
    uint other = s * gl_SubgroupSize + (gl_SubgroupSize - 1u - l);
    uint src = (other + p.cross * gl_SubgroupSize) % 128u;
    uvec2 q = pairs[(other + 1u) % gl_SubgroupSize + s * gl_SubgroupSize];
    uint x = stage[src] + q.x * 1000u + q.y;
    subgroupBarrier();
    stage[other] = x;          // over what the other invocation read before the barrier
    subgroupBarrier();
    o.v[g * 128u + i] = stage[i] ^ (x << 8);
}
