#version 450
// An array whose length a specialization constant sets, and an access at a constant index that
// only a longer array has, in a branch the same constant decides (llama.cpp's flash attention with
// quantized K: its packed-integer array is 8, 4, 2 or 1 long). With N = 2 the access is past the
// end but never runs: the pipeline is valid.
layout(local_size_x = 1) in;
layout(constant_id = 0) const uint N = 8;
layout(std430, binding = 0) buffer O { int o[]; };
void main() {
    int a[N];
    for (uint k = 0u; k < N; k++) a[k] = int(k) * 3;
    if (N == 8u) { a[4] = 100; }
    int s = 0;
    for (uint k = 0u; k < N; k++) s += a[k];
    o[0] = s;
}
