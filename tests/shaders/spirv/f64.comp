#version 450
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// Doubles in SPIR-V (OpCapability Float64): arithmetic, comparisons, GLSL.std.450, conversions to
// and from every width, bitcasts through two 32-bit words, a push-constant block and a
// specialization constant of 64-bit types. Invocation i reads x = X[i], y = Y[i] and writes
// result k at O[k * N + i]; every multiply-add is precise (not contracted), except op 20's.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer X { double x_[]; };
layout(set = 0, binding = 1) readonly buffer Y { double y_[]; };
layout(set = 0, binding = 2) buffer O { precise double o[]; };
layout(push_constant) uniform PC { uint tag; double scale; int64_t offset; } pc;
layout(constant_id = 0) const double K = 0.375lf;
const uint N = 64u;

void main() {
    uint i = gl_GlobalInvocationID.x;
    double x = x_[i], y = y_[i];
    int e;
    double whole;
    o[0 * N + i] = x + y;
    o[1 * N + i] = x - y;
    o[2 * N + i] = x * y;
    o[3 * N + i] = x / y;
    o[4 * N + i] = mod(x, y);
    o[5 * N + i] = -x;
    o[6 * N + i] = abs(x);
    o[7 * N + i] = min(x, y);
    o[8 * N + i] = max(x, y);
    o[9 * N + i] = clamp(x, -1.5lf, 2.5lf);
    o[10 * N + i] = sign(x);
    o[11 * N + i] = floor(x);
    o[12 * N + i] = ceil(x);
    o[13 * N + i] = roundEven(x);
    o[14 * N + i] = trunc(x);
    o[15 * N + i] = fract(x);
    o[16 * N + i] = sqrt(abs(x));
    o[17 * N + i] = inversesqrt(abs(x));
    o[18 * N + i] = fma(x, y, K);
    o[19 * N + i] = x * y + K;
    o[20 * N + i] = mix(x, y, 0.25lf);
    o[21 * N + i] = step(x, y);
    o[22 * N + i] = ldexp(x, -3);
    o[23 * N + i] = frexp(x, e);
    o[24 * N + i] = double(e);
    o[25 * N + i] = modf(x, whole);
    o[26 * N + i] = whole;
    o[27 * N + i] = double(float(x));
    o[28 * N + i] = double(float16_t(y));
    o[29 * N + i] = double(int(clamp(x, -1e9lf, 1e9lf)));
    o[30 * N + i] = double(uint(min(abs(y) * 4096.0lf, 4e9lf)));
    o[31 * N + i] = double(int64_t(clamp(x, -9e18lf, 9e18lf))) + 0.5lf;
    o[32 * N + i] = double(uint64_t(min(abs(x), 1.8e19lf)));
    o[33 * N + i] = packDouble2x32(unpackDouble2x32(x) ^ uvec2(1u, 0u));
    o[34 * N + i] = uint64BitsToDouble(doubleBitsToUint64(y) >> 1);
    o[35 * N + i] = x < y ? x : y;
    o[36 * N + i] = double(x <= y) + 2.0lf * double(x != y) + 4.0lf * double(isinf(x * 1e300lf));
    o[37 * N + i] = double(isnan(x * 1e300lf - x * 1e300lf));
    o[38 * N + i] = length(dvec2(x, y));
    o[39 * N + i] = dot(dvec3(x, y, 1.0lf), dvec3(y, x, K));
    o[40 * N + i] = x * pc.scale + double(pc.offset);
    o[41 * N + i] = double(float(x) * float(y));
    o[42 * N + i] = double(doubleBitsToInt64(x) < 0l) + double(pc.tag);
}
