// contract.wgsl's twin in GLSL: through glslang straight to the driver (no translator).
#version 450
layout(local_size_x = 4) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Y { float y[]; };
layout(std430, set = 0, binding = 2) readonly buffer Z { float z[]; };
layout(std430, set = 0, binding = 3) buffer O { float o[]; };

void main() {
    uint i = gl_LocalInvocationIndex;
    o[i] = x[i] * y[i] + z[i];
    o[i + 4u] = z[i] / y[i] + x[i];
    o[i + 8u] = 1.0 / sqrt(y[i]);
    o[i + 12u] = x[i] / y[i];
}
