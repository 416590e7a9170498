// A register-tiled matmul with f16 accumulation: each invocation keeps a 2x2 tile of C in f16
// registers; 16x16 tiles of A and B pass through workgroup memory. C (M x N) = A (M x K) * B (K x N).
enable f16;
@group(0) @binding(0) var<storage, read> a : array<f16>;
@group(0) @binding(1) var<storage, read> b : array<f16>;
@group(0) @binding(2) var<storage, read_write> c : array<f16>;

const M = 64u;
const N = 64u;
const K = 256u;
const T = 16u;
var<workgroup> ta : array<f16, 1024>;    // 32 x 32 of A
var<workgroup> tb : array<f16, 1024>;    // 32 x 32 of B

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg : vec3<u32>, @builtin(local_invocation_id) l : vec3<u32>) {
  let r0 = wg.y * 32u + l.y * 2u;
  let c0 = wg.x * 32u + l.x * 2u;
  var acc = array<f16, 4>(f16(0.0), f16(0.0), f16(0.0), f16(0.0));
  for (var k0 = 0u; k0 < K; k0 += 32u) {
    for (var j = 0u; j < 4u; j++) {
      let e = (l.y * 16u + l.x) * 4u + j;
      let rr = e / 32u;
      let cc = e % 32u;
      ta[e] = a[(wg.y * 32u + rr) * K + k0 + cc];
      tb[e] = b[(k0 + rr) * N + wg.x * 32u + cc];
    }
    workgroupBarrier();
    for (var k = 0u; k < 32u; k++) {
      let a0 = ta[(l.y * 2u) * 32u + k];
      let a1 = ta[(l.y * 2u + 1u) * 32u + k];
      let b0 = tb[k * 32u + l.x * 2u];
      let b1 = tb[k * 32u + l.x * 2u + 1u];
      acc[0] += a0 * b0;
      acc[1] += a0 * b1;
      acc[2] += a1 * b0;
      acc[3] += a1 * b1;
    }
    workgroupBarrier();
  }
  c[r0 * N + c0] = acc[0];
  c[r0 * N + c0 + 1u] = acc[1];
  c[(r0 + 1u) * N + c0] = acc[2];
  c[(r0 + 1u) * N + c0 + 1u] = acc[3];
}
