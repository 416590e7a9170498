// C (f32) = A x B + C at 16x8x16 with column-major operands: A given transposed (K x M) and read
// col_major, C stored col_major into ct (N x M). One subgroup per 16 x 8 tile. Dawn's dialect.
enable f16;
enable chromium_experimental_subgroup_matrix;

override M: u32 = 64;
override N: u32 = 64;
override K: u32 = 64;

@group(0) @binding(0) var<storage, read> at: array<f16>;    // A transposed: K x M, row-major
@group(0) @binding(1) var<storage, read> b: array<f16>;     // K x N, row-major
@group(0) @binding(2) var<storage, read> c: array<f32>;     // M x N, row-major
@group(0) @binding(3) var<storage, read_write> ct: array<f32>;  // the result, column-major (N x M)

@compute @workgroup_size(32)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
  let row = wg.y * 16u;
  let col = wg.x * 8u;
  var acc = subgroupMatrixLoad<subgroup_matrix_result<f32, 8, 16>, row_major>(&c, row * N + col, N);
  for (var k = 0u; k < K; k += 16u) {
    let l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, col_major>(&at, k * M + row, M);
    let r = subgroupMatrixLoad<subgroup_matrix_right<f16, 8, 16>, row_major>(&b, k * N + col, N);
    acc = subgroupMatrixMultiplyAccumulate(l, r, acc);
  }
  subgroupMatrixStore<col_major>(&ct, col * M + row, acc, M);
}
