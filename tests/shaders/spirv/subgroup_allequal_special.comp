#version 450
// subgroupAllEqual where float equality and bit equality part: signed zeros, NaNs of one payload
// and of several, a NaN among numbers (first, last); bit 0 from the f32 operand, bit 1 from its
// bits as uint (the reference)
#extension GL_KHR_shader_subgroup_vote : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer In { uint x[]; } inp;
layout(set = 0, binding = 1) buffer Out { uint y[]; } o;
void main() {
    uint i = gl_GlobalInvocationID.x;
    o.y[i] = (subgroupAllEqual(uintBitsToFloat(inp.x[i])) ? 1u : 0u) | (subgroupAllEqual(inp.x[i]) ? 2u : 0u);
}
