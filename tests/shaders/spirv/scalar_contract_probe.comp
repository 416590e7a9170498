#version 450
// Which plain f32 `k - x * y` the H200's Vulkan driver fuses (session 9). One statement per
// variant (V, set by `#define V n`; the runner and tests/profiles/test_h200_scalar_contract.py
// put it in): 0..12 and 16, 17 one result per invocation (4 groups of 256), 13..15 the loop of
// coop_elem_probe2.comp's scalar blocks (4 groups of 32, 8 iterations each); 16, 17 in the shape
// Tint gives WGSL (a bounds return, clamped indices, the operands loaded first).
#define V 0
#if V >= 13 && V <= 15
layout(local_size_x = 32) in;
#else
layout(local_size_x = 256) in;
#endif
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer C { float c[]; };
layout(set = 0, binding = 2) readonly buffer Z { float z[]; };
layout(set = 0, binding = 3) writeonly buffer R { float r[]; };
layout(push_constant) uniform P { float pk; };
layout(constant_id = 0) const float SK = 0.7;
void main() {
#if V < 13 || V > 15
    uint i = gl_GlobalInvocationID.x;
#if V == 0
    r[i] = 0.7 - x[i] * c[i];
#elif V == 1
    r[i] = z[i] - x[i] * c[i];
#elif V == 2
    r[i] = x[i] * c[i] - 0.7;
#elif V == 3
    r[i] = 0.7 + x[i] * c[i];
#elif V == 4
    r[i] = pk - x[i] * c[i];
#elif V == 5
    r[i] = SK - x[i] * c[i];
#elif V == 6
    r[i] = 0.7 - x[i] / c[i];
#elif V == 7
    r[i] = 0.7 - x[i] * 0.3;
#elif V == 8
    r[i] = 1.0 - x[i] * c[i];
#elif V == 9
    r[i] = 0.7 + (-x[i]) * c[i];
#elif V == 10
    r[i] = -(x[i] * c[i]) + 0.7;
#elif V == 11
    r[i] = z[i] + x[i] * c[i];
#elif V == 12
    r[i] = 0.7 - x[i] / c[i];
    r[1024 + i] = 0.7 - x[i] * c[i];
#elif V == 16 || V == 17
    uint n = uint(r.length());
    if (i >= n) return;
    float a = x[min(i, uint(x.length()) - 1)];
    float b = c[min(i, uint(c.length()) - 1)];
#if V == 16
    float k = z[min(i, uint(z.length()) - 1)];
#else
    float k = 0.7;
#endif
    r[min(i, n - 1)] = k - a * b;
#endif
#else
    uint base = gl_WorkGroupID.x * 256;
    for (uint j = base + gl_LocalInvocationID.x; j < base + 256; j += 32) {
#if V == 13
        r[j] = 0.7 - x[j] / c[j];
        r[1024 + j] = 0.7 - x[j] * c[j];
#elif V == 14
        r[j] = 0.7 - x[j] * c[j];
#elif V == 15
        r[j] = z[j] - x[j] * c[j];
#endif
    }
#endif
}
