#version 450
// Three constructs of ncnn's Vulkan shaders (the ncnn wheel's convolution and inner-product
// kernels), each in one line:
//  - a cooperative matrix loaded with stride 0: every row is the same vector (a bias broadcast);
//  - a shared array sized by a specialization constant whose default is 0 (the pipeline sets it);
//  - plain matrices: vector x matrix, matrix x vector, matrix x matrix, matrix x scalar.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(constant_id = 0) const uint SLOTS = 0;
layout(std430, binding = 0) readonly buffer In { float16_t bias[16]; vec4 v[8]; };
layout(std430, binding = 1) writeonly buffer Out { float16_t tile[16 * 16]; vec4 m[32]; uint s[32]; };
shared uint slots[SLOTS * 2u];
void main() {
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c;
    coopMatLoad(c, bias, 0, 0, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(c, tile, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    uint i = gl_LocalInvocationID.x;
    if (i < SLOTS * 2u) slots[i] = i * 3u;
    barrier();
    s[i] = slots[(i + 1u) % (SLOTS * 2u)] + SLOTS;
    if (i == 0u) {
        mat4 a = mat4(v[0], v[1], v[2], v[3]);
        mat4 b = mat4(v[4], v[5], v[6], v[7]);
        m[0] = v[0] * a;
        m[1] = a * v[1];
        mat4 ab = a * b;
        mat4 a3 = a * 3.0;
        for (int k = 0; k < 4; k++) { m[2 + k] = ab[k]; m[6 + k] = a3[k]; }
    }
}
