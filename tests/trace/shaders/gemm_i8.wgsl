// An 8-bit integer multiply-add (Dawn dialect): i8 A and B packed four to an i32 word, i32 C = 5.
enable subgroups;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read> a: array<i32>;
@group(0) @binding(1) var<storage, read> b: array<i32>;
@group(0) @binding(2) var<storage, read_write> c: array<i32>;
@compute @workgroup_size(32)
fn main() {
  let l = subgroupMatrixLoad<subgroup_matrix_left<i8, 16, 16>, row_major>(&a, 0u, 16u);
  let r = subgroupMatrixLoad<subgroup_matrix_right<i8, 16, 16>, row_major>(&b, 0u, 16u);
  var acc = subgroup_matrix_result<i32, 16, 16>(5);
  acc = subgroupMatrixMultiplyAccumulate(l, r, acc);
  subgroupMatrixStore<row_major>(&c, 0u, acc, 16u);
}
