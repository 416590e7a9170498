// Every subgroup builtin, uniform and in divergent control flow, at any subgroup size.
enable subgroups;

@group(0) @binding(0) var<storage, read> values: array<i32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;   // 32 per invocation

@compute @workgroup_size(128)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(subgroup_invocation_id) sid: u32,
        @builtin(subgroup_size) size: u32,
        @builtin(subgroup_id) sgid: u32) {
    let i = gid.x;
    let v = values[i];
    let u = bitcast<u32>(v);
    let o = i * 32u;

    out[o + 0u] = bitcast<u32>(subgroupAdd(v));
    out[o + 1u] = bitcast<u32>(subgroupMul(v % 3 + 2));
    out[o + 2u] = bitcast<u32>(subgroupMin(v));
    out[o + 3u] = bitcast<u32>(subgroupMax(v));
    out[o + 4u] = subgroupAnd(u | 0xF0u);
    out[o + 5u] = subgroupOr(1u << (u % 32u));
    out[o + 6u] = subgroupXor(u * 40503u);
    out[o + 7u] = bitcast<u32>(subgroupInclusiveAdd(v));
    out[o + 8u] = bitcast<u32>(subgroupExclusiveAdd(v));
    out[o + 9u] = subgroupInclusiveMul(u % 5u + 1u);
    out[o + 10u] = subgroupExclusiveMul(u % 5u + 1u);
    out[o + 11u] = bitcast<u32>(subgroupBroadcast(v, 1u));
    out[o + 12u] = bitcast<u32>(subgroupBroadcastFirst(v * 3));
    out[o + 13u] = bitcast<u32>(subgroupShuffle(v, (sid + 3u) % size));
    out[o + 14u] = bitcast<u32>(subgroupShuffleXor(v, 1u));
    out[o + 15u] = bitcast<u32>(subgroupShuffleUp(v, 1u));
    out[o + 16u] = bitcast<u32>(subgroupShuffleDown(v, 2u));
    let b = subgroupBallot(v > 0);
    out[o + 17u] = b.x;
    out[o + 18u] = b.y;
    out[o + 19u] = b.z;
    out[o + 20u] = b.w;
    out[o + 21u] = u32(subgroupElect());
    out[o + 22u] = u32(subgroupAll(v > -1000)) + 2u * u32(subgroupAny(v == 7));
    out[o + 23u] = sid;
    out[o + 24u] = size;
    out[o + 25u] = sgid;
    out[o + 26u] = bitcast<u32>(subgroupAdd(f32(v) * 0.25));     // exact in any order
    let fv = subgroupShuffleXor(vec2<f32>(f32(v), -f32(sid)), 2u);
    out[o + 27u] = bitcast<u32>(fv.x + fv.y);

    // divergent: only lanes with sid % 3 != 0 take part
    out[o + 28u] = 0xFFFFFFFFu;
    out[o + 29u] = 0xFFFFFFFFu;
    out[o + 30u] = 0xFFFFFFFFu;
    if (sid % 3u != 0u) {
        out[o + 28u] = bitcast<u32>(subgroupAdd(v));
        out[o + 29u] = u32(subgroupElect()) + 2u * subgroupBallot(true).x;
        out[o + 30u] = bitcast<u32>(subgroupBroadcastFirst(v)) ;
    }
    out[o + 31u] = bitcast<u32>(subgroupMax(select(v, -v, sid % 2u == 0u)));
}
