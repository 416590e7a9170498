#version 450
// Each invocation writes its WorkgroupId, GlobalInvocationId and NumWorkgroups at its global
// position in a grid of W x H x D invocations (push constants), for vkCmdDispatchBase
layout(local_size_x = 4, local_size_y = 2, local_size_z = 1) in;
layout(set = 0, binding = 0) writeonly buffer Out { uvec4 o[]; };
layout(push_constant) uniform PC { uint w; uint h; } pc;
void main() {
    uvec3 g = gl_GlobalInvocationID, wg = gl_WorkGroupID, n = gl_NumWorkGroups;
    uint i = g.x + pc.w * (g.y + pc.h * g.z);
    o[i] = uvec4(wg.x | (wg.y << 8) | (wg.z << 16), g.x | (g.y << 8) | (g.z << 16),
                 n.x | (n.y << 8) | (n.z << 16), gl_LocalInvocationIndex);
}
