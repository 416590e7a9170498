#version 450
// out[i] = in[i] * pc.scale + SHIFT, for the ICD's C client (tests/vulkan/icd_client.c)
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint SHIFT = 0;
layout(set = 0, binding = 0) readonly buffer In { uint a[]; };
layout(set = 0, binding = 1) writeonly buffer Out { uint b[]; };
layout(push_constant) uniform PC { uint scale; uint n; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) b[i] = a[i] * pc.scale + SHIFT;
}
