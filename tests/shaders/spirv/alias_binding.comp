#version 450
// Two declarations of one descriptor (set 0, binding 0), as llama.cpp's shaders read one buffer
// as scalars and as vectors: the same bytes through both; the output likewise.
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(set = 0, binding = 0) readonly buffer A4 { uvec4 a4[]; };
layout(set = 0, binding = 1) writeonly buffer B { uint b[]; };
layout(set = 0, binding = 1) writeonly buffer B2 { uvec2 b2[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uvec4 v = a4[i];
    b[4 * i] = a[4 * i + 3] + v.x;           // element 3 of the vector read as a scalar
    b2[2 * i + 1] = v.zw * 2u;               // elements 2 and 3 through the uvec2 view
    b[4 * i + 1] = v.y;
}
