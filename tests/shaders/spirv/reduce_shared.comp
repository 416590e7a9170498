#version 450
// sums[w] = the sum of x[256 w .. 256 w + 255] (0 for elements at or past n, the count the input
// buffer starts with): a tree reduction in shared memory, one barrier() per level, and the count
// of negative inputs per workgroup through an integer shared variable. The input block holds its
// count and then the array, 16 bytes in. Dispatch (ceil(n / 256)) workgroups.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X { uint n; uint pad0, pad1, pad2; float x[]; };
layout(set = 0, binding = 1) writeonly buffer Sums { float sums[]; };
layout(set = 0, binding = 2) writeonly buffer Negatives { uint negatives[]; };
shared float partial[256];
shared uint neg[256];

void main() {
    uint li = gl_LocalInvocationIndex, w = gl_WorkGroupID.x, i = w * 256u + li;
    float v = i < n ? x[i] : 0.0;
    partial[li] = v;
    neg[li] = v < 0.0 ? 1u : 0u;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1u) {
        if (li < s) {
            partial[li] += partial[li + s];
            neg[li] += neg[li + s];
        }
        barrier();
    }
    if (li == 0u) {
        sums[w] = partial[0];
        negatives[w] = neg[0];
    }
}
