#version 450
// quad operations (GroupNonUniformQuad: broadcast with a constant and a uniform index, the three
// swaps) on uint, float and vectors, and subgroupAllEqual on uint, float (signed zeros), vectors and bools
// (a NaN operand: tests/shaders/spirv/subgroup_allequal_special.comp)
#extension GL_KHR_shader_subgroup_quad : require
#extension GL_KHR_shader_subgroup_vote : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer In { uint x[]; } inp;
layout(set = 0, binding = 1) buffer Out { uvec4 y[]; } o;
layout(push_constant) uniform P { uint pick; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint v = inp.x[i];
    uvec4 r;
    r.x = subgroupQuadBroadcast(v, 2u);
    r.y = subgroupQuadSwapHorizontal(v) ^ (subgroupQuadSwapVertical(v) << 1);
    r.z = floatBitsToUint(subgroupQuadSwapDiagonal(float(v & 0xFFFFu) * 0.5));
    r.w = subgroupQuadBroadcast(uvec2(v, v >> 3), pc.pick).y;
    uint k = gl_SubgroupInvocationID;
    uint e = 0u;
    e |= subgroupAllEqual(v) ? 1u : 0u;
    e |= subgroupAllEqual(v >> 30) ? 2u : 0u;
    e |= subgroupAllEqual(k < 64u) ? 4u : 0u;                   // true everywhere
    e |= subgroupAllEqual((k & 1u) == 1u ? -0.0 : 0.0) ? 8u : 0u;   // -0.0 equals 0.0
    e |= subgroupAllEqual(uvec2(7u, v & 0u)) ? 16u : 0u;        // true
    e |= subgroupAllEqual(uvec2(7u, k)) ? 32u : 0u;             // false (subgroup > 1)
    if ((v & 1u) == 1u)                                          // only the odd values take part
        e |= subgroupAllEqual(v & 1u) ? 64u : 0u;               // true among them
    o.y[i] = r;
    o.y[64 * 2 + i] = uvec4(e, 0u, 0u, 0u);
}
