// i8 inputs at 16x8x32, packed four to an i32 word (offsets and strides in words, as on the H200):
// d = A x B - 3 (subgroupMatrixMultiply without accumulator, then a scalar subtract) and
// e = A x B + e (multiply-accumulate; e's random contents make the i32 sums wrap).
// One subgroup per 16 x 8 tile; K = 32. Dawn's dialect.
enable chromium_experimental_subgroup_matrix;

override M: u32 = 64;
override N: u32 = 64;

@group(0) @binding(0) var<storage, read> a: array<i32>;     // M x 32 bytes
@group(0) @binding(1) var<storage, read> b: array<i32>;     // 32 x N bytes
@group(0) @binding(2) var<storage, read_write> d: array<i32>;
@group(0) @binding(3) var<storage, read_write> e: array<i32>;

@compute @workgroup_size(32)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
  let row = wg.y * 16u;
  let col = wg.x * 8u;
  let l = subgroupMatrixLoad<subgroup_matrix_left<i8, 32, 16>, row_major>(&a, row * 8u, 8u);
  let r = subgroupMatrixLoad<subgroup_matrix_right<i8, 8, 32>, row_major>(&b, col / 4u, N / 4u);
  let p = subgroupMatrixScalarSubtract(subgroupMatrixMultiply<i32>(l, r), 3i);
  subgroupMatrixStore<row_major>(&d, row * N + col, p, N);
  let prev = subgroupMatrixLoad<subgroup_matrix_result<i32, 8, 16>, row_major>(&e, row * N + col, N);
  subgroupMatrixStore<row_major>(&e, row * N + col, subgroupMatrixMultiplyAccumulate(l, r, prev), N);
}
