// Every atomic builtin on storage and workgroup atomics, a histogram, and a claim-once pattern
// with atomicCompareExchangeWeak.
struct Counters {
    add: atomic<u32>,
    sub: atomic<i32>,
    max: atomic<i32>,
    min: atomic<u32>,
    and: atomic<u32>,
    or: atomic<u32>,
    xor: atomic<u32>,
    xchg: atomic<i32>,
}

@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> counters: Counters;
@group(0) @binding(2) var<storage, read_write> hist: array<atomic<u32>, 16>;
@group(0) @binding(3) var<storage, read_write> olds: array<u32>;       // 4 per invocation
@group(0) @binding(4) var<storage, read_write> slots: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> wg_totals: array<u32>;

var<workgroup> local_hist: array<atomic<u32>, 16>;
var<workgroup> local_sum: atomic<i32>;

@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(local_invocation_index) li: u32,
        @builtin(workgroup_id) wid: vec3<u32>) {
    let i = gid.x;
    let v = values[i];
    let o = i * 4u;

    olds[o + 0u] = atomicAdd(&counters.add, v);
    atomicSub(&counters.sub, i32(v));
    atomicMax(&counters.max, i32(v) - 50);
    atomicMin(&counters.min, v + 7u);
    atomicAnd(&counters.and, ~(1u << (v % 32u)));
    atomicOr(&counters.or, 1u << (v % 32u));
    olds[o + 1u] = atomicXor(&counters.xor, v * 2654435761u);
    olds[o + 2u] = bitcast<u32>(atomicExchange(&counters.xchg, i32(i)));

    // histogram, globally and per workgroup
    atomicAdd(&hist[v % 16u], 1u);
    atomicAdd(&local_hist[v % 16u], 1u);
    atomicAdd(&local_sum, i32(v));
    workgroupBarrier();
    if (li < 16u) {
        wg_totals[wid.x * 17u + li] = atomicLoad(&local_hist[li]);
    }
    if (li == 0u) {
        wg_totals[wid.x * 17u + 16u] = bitcast<u32>(atomicLoad(&local_sum));
    }

    // claim-once: every invocation tries to claim slot v % 8; exactly one wins each slot
    let slot = v % 8u;
    var claimed = 0u;
    loop {
        let r = atomicCompareExchangeWeak(&slots[slot], 0u, i + 1u);
        if (r.exchanged) {
            claimed = 1u;
            break;
        }
        if (r.old_value != 0u) {
            break;          // someone else holds it (a weak exchange may fail spuriously: retry)
        }
    }
    olds[o + 3u] = claimed;
    atomicStore(&slots[8u + i], atomicLoad(&slots[slot]));
}
