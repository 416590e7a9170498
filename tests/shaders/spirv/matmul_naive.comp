#version 450
// C = A x B for row-major f32 matrices A (M x K), B (K x N), C (M x N): one invocation per element
// of C in 16x16 workgroups, a plain loop over K. The sizes come in a push-constant block (as
// llama.cpp's kernels take theirs) and an instanced uniform block scales the result, so the
// buffers are Block-decorated structs of one or more members. Dispatch (ceil(N/16), ceil(M/16)).
layout(local_size_x = 16, local_size_y = 16) in;
layout(push_constant) uniform Sizes { uint M; uint N; uint K; } sz;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(set = 0, binding = 3) uniform Params { float scale; int bias; } params;

void main() {
    uint col = gl_GlobalInvocationID.x, row = gl_GlobalInvocationID.y;
    if (row >= sz.M || col >= sz.N) {
        return;
    }
    float acc = 0.0;
    for (uint k = 0u; k < sz.K; k++) {
        acc += a[row * sz.K + k] * b[k * sz.N + col];
    }
    c[row * sz.N + col] = acc * params.scale + float(params.bias);
}
