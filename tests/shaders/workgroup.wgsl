// Workgroup memory: a tile shared through barriers, a tree reduction, a 2-D tile transpose and
// workgroupUniformLoad of a value one invocation wrote.
const WG = 64u;

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> sums: array<f32>;        // one per workgroup
@group(0) @binding(2) var<storage, read_write> reversed: array<f32>;    // input reversed per workgroup
@group(0) @binding(3) var<storage, read_write> transposed: array<u32>;  // 8x8 tile transposed
@group(0) @binding(4) var<storage, read_write> flags: array<u32>;

var<workgroup> tile: array<f32, WG>;
var<workgroup> tile2d: array<array<u32, 8>, 8>;
var<workgroup> count: u32;
var<workgroup> counters: array<atomic<u32>, 2>;

@compute @workgroup_size(8, 8)
fn main(@builtin(local_invocation_index) li: u32,
        @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let g = wid.x * WG + li;
    let v = input[g];
    tile[li] = v;
    workgroupBarrier();

    reversed[g] = tile[WG - 1u - li];
    workgroupBarrier();

    // tree reduction in tile: strides 32, 16, ..., 1
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if (li < s) {
            tile[li] += tile[li + s];
        }
        workgroupBarrier();
    }
    if (li == 0u) {
        sums[wid.x] = tile[0];
    }

    // 2-D tile: write (y, x), read (x, y)
    tile2d[lid.y][lid.x] = lid.y * 10u + lid.x + wid.x * 100u;
    workgroupBarrier();
    transposed[g] = tile2d[lid.x][lid.y];

    // one invocation decides; everyone reads it uniformly
    if (li == 5u) {
        count = u32(v > 0.0) + 40u + nwg.x;
    }
    atomicAdd(&counters[li % 2u], 1u);
    let c = workgroupUniformLoad(&count);
    if (c > 40u) {
        workgroupBarrier();      // uniform: every invocation sees the same c
        flags[g] = c * 1000u + atomicLoad(&counters[1]);
    }
}
