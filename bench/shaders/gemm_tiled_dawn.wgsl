// Tiled GEMM staged through workgroup memory, Dawn's dialect: C (f32, M x N) = A (f16, M x K) x
// B (f16, K x N), all row-major. A workgroup of four subgroups owns a 32 x 32 tile of C; each K
// step the workgroup copies a 32 x 32 tile of A and of B into var<workgroup> (each invocation
// some elements), meets at a barrier, and each subgroup multiplies its 16 x 16 part from there.
enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;

override M: u32 = 64;
override N: u32 = 64;
override K: u32 = 64;

@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<f16>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;

const BM = 32u;
const BN = 32u;
const BK = 32u;
var<workgroup> ta: array<f16, BM * BK>;
var<workgroup> tb: array<f16, BK * BN>;

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) t: u32,
        @builtin(subgroup_id) sg: u32) {
  let row0 = wg.y * BM;
  let col0 = wg.x * BN;
  let sr = (sg / 2u) * 16u;
  let sc = (sg % 2u) * 16u;
  var acc = subgroup_matrix_result<f32, 16, 16>();
  for (var k0 = 0u; k0 < K; k0 += BK) {
    for (var i = 0u; i < BM * BK / 128u; i++) {
      let e = t + i * 128u;
      ta[e] = a[(row0 + e / BK) * K + k0 + e % BK];
      tb[e] = b[(k0 + e / BN) * N + col0 + e % BN];
    }
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk += 16u) {
      let l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>>(&ta, sr * BK + kk, false, BK);
      let r = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>>(&tb, kk * BN + sc, false, BN);
      acc = subgroupMatrixMultiplyAccumulate(l, r, acc);
    }
    workgroupBarrier();
  }
  subgroupMatrixStore(&c, (row0 + sr) * N + col0 + sc, acc, false, N);
}
