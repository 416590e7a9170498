// Tiled GEMM on the matrix units, Dawn's dialect: C (f32, M x N) = A (f16, M x K) x B (f16, K x N).
// All matrices row-major. A workgroup of 128 invocations computes a 32 x 32 block of C: four
// 16 x 16 tiles, shared out over its subgroups (four of 32 lanes, two of 64, ...). Each subgroup
// walks K in steps of 16, accumulating on the matrix unit. Tile positions come from workgroup_id
// and subgroup_id only, so matrix loads and stores take subgroup-uniform offsets, as Tint requires.
enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;

override M: u32 = 128;
override N: u32 = 128;
override K: u32 = 128;

@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<f16>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;

const TILE: u32 = 16u;
const BLOCK: u32 = 32u;     // 2 x 2 tiles per workgroup
const INVOCATIONS: u32 = 128u;

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wg: vec3<u32>,
        @builtin(subgroup_id) sg: u32,
        @builtin(subgroup_size) sg_size: u32) {
  let subgroups = INVOCATIONS / sg_size;
  for (var t = sg; t < 4u; t += subgroups) {
    let row = wg.y * BLOCK + (t / 2u) * TILE;
    let col = wg.x * BLOCK + (t % 2u) * TILE;
    var acc = subgroup_matrix_result<f32, 16, 16>();
    for (var k = 0u; k < K; k += TILE) {
      let l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, row * K + k, K);
      let r = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, row_major>(&b, k * N + col, N);
      acc = subgroupMatrixMultiplyAccumulate(l, r, acc);
    }
    subgroupMatrixStore<row_major>(&c, row * N + col, acc, N);
  }
}
