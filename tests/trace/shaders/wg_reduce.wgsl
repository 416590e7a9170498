// A workgroup tree reduction: storage loads and stores, workgroup memory, barriers in a loop,
// a branch that narrows the active mask.
@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> sums: array<f32>;

var<workgroup> tile: array<f32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wg: vec3<u32>) {
  tile[li] = input[wg.x * 64u + li];
  workgroupBarrier();
  for (var s = 32u; s > 0u; s >>= 1u) {
    if (li < s) {
      tile[li] = tile[li] + tile[li + s];
    }
    workgroupBarrier();
  }
  if (li == 0u) {
    sums[wg.x] = tile[0];
  }
}
