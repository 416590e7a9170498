#version 450
// A subgroup-scope control barrier inside a branch that only some subgroups take (llama.cpp's
// mul_mm.comp stages a partial cooperative-matrix tile through shared memory so): only that
// subgroup's invocations wait for each other, so it is well defined although other subgroups of
// the workgroup skip it. 64 invocations, two subgroups of 32 on nvidia-h200.
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint v[]; } o;
layout(push_constant) uniform P { uint taken; } p;   // the subgroup that takes the branch
shared uint stage[64];
void main() {
    uint i = gl_LocalInvocationID.x;
    uint s = gl_SubgroupID;
    uint l = gl_SubgroupInvocationID;
    o.v[i] = 0xFFFFFFFFu;
    if (s == p.taken) {
        stage[i] = i * 3u + 1u;
        controlBarrier(gl_ScopeSubgroup, gl_ScopeSubgroup, gl_StorageSemanticsShared,
                       gl_SemanticsAcquireRelease);
        // read the value another invocation of the same subgroup stored before the barrier
        o.v[i] = stage[s * gl_SubgroupSize + (gl_SubgroupSize - 1u - l)];
    } else {
        o.v[i] = 1000u + i;
    }
}
