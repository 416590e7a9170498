#version 450
// f32 x / y + z: on an H200 one fused multiply-add of x and RCP(y) (tests/profiles/test_h200_div_add.py)
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer X { vec4 x[]; };
layout(set = 0, binding = 1) readonly buffer Y { vec4 y[]; };
layout(set = 0, binding = 2) readonly buffer Z { vec4 z[]; };
layout(set = 0, binding = 3) writeonly buffer R { vec4 r[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    r[i] = x[i] / y[i] + z[i];
}
