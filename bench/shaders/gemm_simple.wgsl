// The GEMM a user writes first on Dawn's subgroup matrices: C (f32, M x N) = A (f16, M x K) x
// B (f16, K x N), all row-major. One subgroup of 32 lanes per workgroup computes one 16 x 16 tile
// of C, loading its A and B tiles straight from storage at every step of K. Dispatch (N/16, M/16).
enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;

override M: u32 = 128;
override N: u32 = 128;
override K: u32 = 128;

@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<f16>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;

@compute @workgroup_size(32)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
  let row = wg.y * 16u;
  let col = wg.x * 16u;
  var acc = subgroup_matrix_result<f32, 16, 16>();
  for (var k = 0u; k < K; k += 16u) {
    let l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, row * K + k, K);
    let r = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, row_major>(&b, k * N + col, N);
    acc = subgroupMatrixMultiplyAccumulate(l, r, acc);
  }
  subgroupMatrixStore<row_major>(&c, row * N + col, acc, N);
}
