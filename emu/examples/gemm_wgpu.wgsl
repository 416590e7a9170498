// Tiled GEMM on the matrix units, wgpu's dialect: C (f32, M x N) = A (f16, M x K) x B (f16, K x N).
// All matrices row-major, so tiles are loaded and stored with the transposed forms (coopLoadT /
// coopStoreT read and write row-major). One subgroup per workgroup owns one 16 x 16 tile of C.
enable f16;
enable wgpu_cooperative_matrix;

override M: u32 = 128;
override N: u32 = 128;
override K: u32 = 128;

@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<f16>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;

const TILE: u32 = 16u;

@compute @workgroup_size(32)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
  let row = wg.y * TILE;
  let col = wg.x * TILE;
  var acc: coop_mat16x16<f32, C>;
  for (var k = 0u; k < K; k += TILE) {
    let ta = coopLoadT<coop_mat16x16<f16, A>>(&a[row * K + k], K);
    let tb = coopLoadT<coop_mat16x16<f16, B>>(&b[k * N + col], N);
    acc = coopMultiplyAdd(ta, tb, acc);
  }
  coopStoreT(acc, &c[row * N + col], N);
}
