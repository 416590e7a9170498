#version 450
// Subgroup operations where the whole workgroup reaches them (the fusion JIT's workgroup mode):
// ggml's matrix-vector reduction (mul_mat_vec: subgroupAdd of a private array in loops bounded by
// a push constant, the subgroups' sums through shared memory after a barrier), shuffles, then
// reductions, scans, broadcasts and votes after the invocations at or past p.live returned (the
// second subgroup of each workgroup is partial: the H200's rank order; the first is whole: the
// butterfly). f32 with specials, int, uint, bool and vec2; clustered reductions.
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_clustered : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_vote : require
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint live; uint rows; } p;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer Y { int y[]; };
layout(set = 0, binding = 2) writeonly buffer O { float o[]; };
layout(set = 0, binding = 3) writeonly buffer U { uint u[]; };
layout(set = 0, binding = 4) writeonly buffer S { float sums[]; };
shared float part[2][4][4];

void main() {
    uint li = gl_LocalInvocationIndex, w = gl_WorkGroupID.x, i = w * 64u + li;
    float temp[2][4];
    for (uint j = 0; j < 2; ++j)
        for (uint n = 0; n < p.rows; ++n)
            temp[j][n] = x[i] * float(j * 4u + n + 1u) + x[(i + 7u * (j * 4u + n)) % 192u];
    for (uint j = 0; j < 2; ++j)
        for (uint n = 0; n < p.rows; ++n)
            temp[j][n] = subgroupAdd(temp[j][n]);
    if (gl_SubgroupInvocationID == 0u)
        for (uint j = 0; j < 2; ++j)
            for (uint n = 0; n < p.rows; ++n)
                part[j][n][gl_SubgroupID] = temp[j][n];
    barrier();
    if (li == 0u)
        for (uint j = 0; j < 2; ++j)
            for (uint n = 0; n < p.rows; ++n) {
                float acc = 0.0;
                for (uint s = 0; s < gl_NumSubgroups; ++s)
                    acc += part[j][n][s];
                sums[w * 8u + j * 4u + n] = acc;
            }

    float v = x[i];
    int iv = y[i];
    uint uv = uint(iv);
    uint at = i * 16u;
    o[at + 0] = subgroupShuffleXor(v, 5u);
    o[at + 1] = subgroupShuffle(v, (li * 7u) % 16u);
    o[at + 2] = subgroupShuffleUp(v, 3u);
    o[at + 3] = subgroupShuffleDown(v, 2u);
    if (li >= p.live)
        return;
    o[at + 4] = subgroupAdd(v);
    o[at + 5] = subgroupMin(v);
    o[at + 6] = subgroupInclusiveAdd(v);
    o[at + 7] = subgroupExclusiveMul(v * 0.125 + 1.0);
    o[at + 8] = subgroupClusteredAdd(v, 4);
    o[at + 9] = subgroupBroadcastFirst(v) + subgroupBroadcast(v, 3);
    vec2 s2 = subgroupMax(vec2(v, -v));
    o[at + 10] = s2.x - s2.y;
    u[at + 0] = uint(subgroupAdd(iv)) ^ subgroupXor(uv);
    u[at + 1] = subgroupExclusiveAdd(uv) + uint(subgroupClusteredMin(iv, 8));
    u[at + 2] = (subgroupAll(v > -1.0) ? 1u : 0u) | (subgroupAny(iv > 990) ? 2u : 0u) | (subgroupElect() ? 4u : 0u);
}
