#version 450
// f32 transcendentals as llama.cpp's softmax, rope and activation shaders call them (exp, exp2,
// log, log2, pow, sin, cos, tan, tanh; floor, ceil, round, trunc): on nvidia-h200 MUFU's measured
// tables through the driver's sequences, which the fusion JIT compiles
// (emu/numerics/scalar_compiled.py) and must match bit for bit. Two inputs per invocation,
// special values among them; thirteen outputs each.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer Y { float y[]; };
layout(set = 0, binding = 2) writeonly buffer O { float o[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    float a = x[i], b = y[i];
    o[8u * i + 0u] = exp(a);
    o[8u * i + 1u] = exp2(b);
    o[8u * i + 2u] = log(a);
    o[8u * i + 3u] = log2(b);
    o[8u * i + 4u] = pow(a, b);
    o[8u * i + 5u] = sin(a);
    o[8u * i + 6u] = cos(b);
    o[8u * i + 7u] = tan(a);
    o[4096u + 4u * i] = floor(a);
    o[4096u + 4u * i + 1u] = ceil(b);
    o[4096u + 4u * i + 2u] = roundEven(a * 2.0);
    o[4096u + 4u * i + 3u] = trunc(b);
    o[6144u + i] = tanh(a * 0.25) + tanh(b);
}
