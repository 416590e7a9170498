#version 450
// GLSL control flow, integers and builtins through SPIR-V: each invocation writes 8 slots.
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x_id = 0) in;               // the workgroup size is specialization constant 0
layout(constant_id = 1) const int BIAS = 3;
layout(set = 0, binding = 0) readonly buffer In { int x[]; } inp;
layout(set = 0, binding = 1) buffer Out { int y[]; } outp;
layout(set = 1, binding = 0) buffer Counts { uint total; } counts;
layout(push_constant) uniform PC { int scale; uint limit; } pc;
shared int tile[64];
shared uint hits;

int classify(int v) {
    if (v < 0) return -1;
    else if (v == 0) return 0;
    else if (v < 10) return 1;
    return 2;
}

void bump(inout int acc, int by) { acc += by * pc.scale; }

int pick(int v) {
    int r = 0;
    switch (v & 7) {
        case 0: case 1: r = 10; break;
        case 2: r = 20;               // falls through into case 3
        case 3: r += 5; break;
        case 5: { if (v > 16) { r = 50; break; } r = 55; break; }
        default: r = 99;
    }
    return r;
}

void main() {
    uint i = gl_GlobalInvocationID.x;
    uint li = gl_LocalInvocationID.x;
    int v = inp.x[i];
    uint base = i * 8u;
    if (li == 0u) hits = 0u;
    barrier();
    outp.y[base + 0u] = classify(v);
    // for with continue and break: sum of odd j below |v| % 20, stopping at 13
    int s = 0;
    for (int j = 0; j < abs(v) % 20; j++) {
        if (j % 2 == 0) continue;
        if (j > 13) break;
        bump(s, j);
    }
    outp.y[base + 1u] = s;
    // while and do-while
    int n = abs(v), steps = 0;
    while (n > 1) { n = (n % 2 == 0) ? n / 2 : 3 * n + 1; steps++; }
    int d = 0;
    do { d += 2; } while (d < (v & 3) * 2);
    outp.y[base + 2u] = steps * 100 + d;
    outp.y[base + 3u] = pick(v) + BIAS;
    // signed and unsigned arithmetic, GLSL.std.450
    // % of a negative int is undefined in GLSL (lavapipe truncates, SPIR-V's OpSMod floors): abs()
    outp.y[base + 4u] = (v / 3) * 1000 + (abs(v) % 3) * 10 + clamp(v, -5, 5);
    outp.y[base + 5u] = int(uint(v) >> 28u) + (v >> 2) * 16 + findMSB(abs(v) + 1) * 1000 + bitCount(uint(v));
    // workgroup memory, a barrier, a reduction over the tile, atomics
    tile[li] = v;
    barrier();
    outp.y[base + 6u] = tile[(li + 1u) % gl_WorkGroupSize.x] - tile[li] + int(floor(float(v) * 0.25));
    if (uint(abs(v)) < pc.limit) atomicAdd(hits, 1u);
    barrier();
    // subgroup operations (subgroup = workgroup here)
    int ssum = subgroupAdd(v);
    uvec4 ball = subgroupBallot(v > 0);
    outp.y[base + 7u] = ssum + int(bitCount(ball.x)) * 100000 + int(hits) * 10000000;
    if (li == 0u) atomicAdd(counts.total, hits);
}
