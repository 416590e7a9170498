#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_spirv_intrinsics : require
// SPV_VALVE_mixed_float_dot_product through GL_EXT_spirv_intrinsics (as llama.cpp's matrix shaders
// declare it): OpFDot2MixAcc32VALVE (f16vec2 . f16vec2 + f32) and OpFDot2MixAcc16VALVE (all f16),
// chained as a 4-term dot product. Invocation i reads x = X[i], y = Y[i] (f16vec2) and c = C[i] and
// writes result k at O[k * N + i] (f32 results) or H[k * N + i] (f16 results).
spirv_instruction(extensions = ["SPV_VALVE_mixed_float_dot_product"], capabilities = [6912], id = 6916)
float dot2MixAcc32(f16vec2 a, f16vec2 b, float acc);
spirv_instruction(extensions = ["SPV_VALVE_mixed_float_dot_product"], capabilities = [6913], id = 6917)
float16_t dot2MixAcc16(f16vec2 a, f16vec2 b, float16_t acc);

layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer X { f16vec2 x_[]; };
layout(set = 0, binding = 1) readonly buffer Y { f16vec2 y_[]; };
layout(set = 0, binding = 2) readonly buffer C { float c_[]; };
layout(set = 0, binding = 3) buffer O { float o[]; };
layout(set = 0, binding = 4) buffer H { float16_t h[]; };
const uint N = 64u;

void main() {
    uint i = gl_GlobalInvocationID.x;
    f16vec2 x = x_[i], y = y_[i];
    float c = c_[i];
    o[0 * N + i] = dot2MixAcc32(x, y, c);
    o[1 * N + i] = dot2MixAcc32(x, y, 0.0);
    o[2 * N + i] = dot2MixAcc32(x.yx, y, dot2MixAcc32(x, y.yx, c));
    h[0 * N + i] = dot2MixAcc16(x, y, float16_t(c));
    h[1 * N + i] = dot2MixAcc16(x, x, float16_t(0.0));
}
