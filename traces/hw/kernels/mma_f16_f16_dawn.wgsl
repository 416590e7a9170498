// C = 0.5 * (A x B + C): f16 inputs, f16 accumulation on the matrix units (16x16x16), then a
// scalar multiply of the accumulator (Dawn only). Row-major M x K, K x N, M x N; one subgroup per
// 16 x 16 tile of C, walking K in steps of 16. Dawn's dialect.
enable f16;
enable chromium_experimental_subgroup_matrix;

override M: u32 = 64;
override N: u32 = 64;
override K: u32 = 64;

@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<f16>;
@group(0) @binding(2) var<storage, read_write> c: array<f16>;

@compute @workgroup_size(32)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
  let row = wg.y * 16u;
  let col = wg.x * 16u;
  var acc = subgroupMatrixLoad<subgroup_matrix_result<f16, 16, 16>, row_major>(&c, row * N + col, N);
  for (var k = 0u; k < K; k += 16u) {
    let l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, row * K + k, K);
    let r = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, row_major>(&b, k * N + col, N);
    acc = subgroupMatrixMultiplyAccumulate(l, r, acc);
  }
  acc = subgroupMatrixScalarMultiply(acc, 0.5h);
  subgroupMatrixStore<row_major>(&c, row * N + col, acc, N);
}
