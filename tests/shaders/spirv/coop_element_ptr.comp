#version 450
// Elements of cooperative matrices written and read through pointers (OpAccessChain into a
// variable holding matrices, as llama.cpp's mul_mm does with its accumulators): every element of
// acc[1] becomes 2 * it + its fragment index, acc[0] is read element by element into acc[1].
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer In { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float y[]; };
void main() {
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[2];
    coopMatLoad(acc[0], x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(acc[1], x, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    for (int k = 0; k < acc[1].length(); ++k) {
        acc[1][k] = 2.0 * acc[1][k] + float(k) + acc[0][k] * 0.0;
    }
    coopMatStore(acc[1], y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
