// C = A x B + C with f16 accumulation (16x16x16), wgpu's dialect: A row-major (coopLoadT), B given
// transposed (N x K, read column-major with coopLoad), the result stored row-major into c and
// column-major into ct. One subgroup per 16 x 16 tile.
enable f16;
enable wgpu_cooperative_matrix;

override M: u32 = 64;
override N: u32 = 64;
override K: u32 = 64;

@group(0) @binding(0) var<storage, read> a: array<f16>;      // M x K, row-major
@group(0) @binding(1) var<storage, read> bt: array<f16>;     // B transposed: N x K, row-major
@group(0) @binding(2) var<storage, read_write> c: array<f16>;   // M x N, row-major
@group(0) @binding(3) var<storage, read_write> ct: array<f16>;  // the result, column-major

@compute @workgroup_size(32)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
  let row = wg.y * 16u;
  let col = wg.x * 16u;
  var acc = coopLoadT<coop_mat16x16<f16, C>>(&c[row * N + col], N);
  for (var k = 0u; k < K; k += 16u) {
    let ta = coopLoadT<coop_mat16x16<f16, A>>(&a[row * K + k], K);
    let tb = coopLoad<coop_mat16x16<f16, B>>(&bt[col * K + k], K);
    acc = coopMultiplyAdd(ta, tb, acc);
  }
  coopStoreT(acc, &c[row * N + col], N);
  coopStore(acc, &ct[col * M + row], M);
}
