enable f16;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read_write> a: array<f16>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(subgroup_id) sg: u32) {
  var off = 0u;
  if (lid > 40u) { off = 256u; }
  let m = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, sg * 256u, 16u);
  if (lid < 32u) {
    subgroupMatrixStore<row_major>(&a, 0u, m, 16u);
  }
  subgroupMatrixStore<row_major>(&a, off, m, 16u);
  for (var i = 0u; i < lid; i++) {
    subgroupMatrixStore<row_major>(&a, 512u, m, 16u);
  }
}
