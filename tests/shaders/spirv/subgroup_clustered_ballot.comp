#version 450
// clustered subgroup reductions (GroupNonUniformClustered), also in divergent control flow where
// only the active invocations of a cluster take part, and the ballot queries: bit counts
// (reduce and scans), find LSB / MSB, bit extract, inverse ballot
#extension GL_KHR_shader_subgroup_clustered : require
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer In { uint x[]; } inp;
layout(set = 0, binding = 1) buffer Out { uvec4 y[]; } o;
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint v = inp.x[i];
    uvec4 r;
    r.x = subgroupClusteredAdd(v & 0xFFFFu, 4);
    r.y = subgroupClusteredMax(v, 2) ^ subgroupClusteredMin(int(v), 8);
    r.z = subgroupClusteredXor(v, 16) + subgroupClusteredOr(v >> 7, 4) * 3u;
    r.w = floatBitsToUint(subgroupClusteredAdd(float(v & 0xFFu) * 0.25, 4) + subgroupClusteredMul(float(v & 3u), 2));
    uvec4 d = uvec4(0);
    if (v % 3u != 0u)
        d.x = subgroupClusteredAdd(v & 0xFFFFu, 4) + subgroupClusteredAnd(v, 2);
    uvec4 b = subgroupBallot((v & 1u) == 1u);
    d.y = subgroupBallotBitCount(b) | subgroupBallotInclusiveBitCount(b) << 8 | subgroupBallotExclusiveBitCount(b) << 16;
    d.z = (v & 1u) == 1u ? subgroupBallotFindLSB(b) | subgroupBallotFindMSB(b) << 8 : 0xFFFFu;
    d.w = (subgroupBallotBitExtract(b, (v >> 8) & 7u) ? 1u : 0u) | (subgroupInverseBallot(b) ? 2u : 0u)
        | (subgroupInverseBallot(uvec4(0x55555555u, 0xF0F0F0F0u, 1u, 0u)) ? 4u : 0u);
    o.y[2 * i] = r;
    o.y[2 * i + 1] = d;
}
