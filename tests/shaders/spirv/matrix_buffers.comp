#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// Buffers of matrices read as llama.cpp's mul_mm reads B eight values at a time (an array of
// f16mat2x4 or mat2x4, loaded whole, its columns taken apart), a column reached by a dynamic
// index, an element of a column, and a matrix made of two columns: the fusion JIT holds a matrix
// as its columns' scalars.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer H { f16mat2x4 h[]; };
layout(set = 0, binding = 1) readonly buffer F { mat2x4 f[]; };
layout(set = 0, binding = 2) writeonly buffer O { vec4 o[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    f16mat2x4 a = h[i];
    mat2x4 b = f[i];
    o[i * 4] = vec4(a[0]) + b[1];
    o[i * 4 + 1] = vec4(a[1].wzyx) * b[0].x;
    mat2x4 m = mat2x4(b[1] * 2.0, vec4(a[0]));
    o[i * 4 + 2] = f[(i + 1) % 64][i & 1] + m[i & 1];
    o[i * 4 + 3] = vec4(float(h[i][1][i & 3]), f[i][0][2], float(a[0].y + a[1].z), 0.0);
}
