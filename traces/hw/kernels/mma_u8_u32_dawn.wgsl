// C (u32) = A x B + C + 7 with u8 inputs (16x16x32): A (M x K bytes) and B (K x N bytes) packed four
// to a u32 word. Offsets and strides count array elements (words), as on the H200 (profile field
// stride_unit_8bit = array_element). One subgroup per 16 x 16 tile. Dawn's dialect.
enable chromium_experimental_subgroup_matrix;

override M: u32 = 64;
override N: u32 = 64;
override K: u32 = 64;

@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> c: array<u32>;

@compute @workgroup_size(32)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
  let row = wg.y * 16u;
  let col = wg.x * 16u;
  var acc = subgroupMatrixLoad<subgroup_matrix_result<u32, 16, 16>, row_major>(&c, row * N + col, N);
  for (var k = 0u; k < K; k += 32u) {
    let l = subgroupMatrixLoad<subgroup_matrix_left<u8, 32, 16>, row_major>(&a, (row * K + k) / 4u, K / 4u);
    let r = subgroupMatrixLoad<subgroup_matrix_right<u8, 16, 32>, row_major>(&b, (k * N + col) / 4u, N / 4u);
    acc = subgroupMatrixMultiplyAccumulate(l, r, acc);
  }
  acc = subgroupMatrixScalarAdd(acc, 7u);
  subgroupMatrixStore<row_major>(&c, row * N + col, acc, N);
}
