// C = A * B for row-major f32 matrices, tiled through workgroup memory (no matrix units):
// workgroups of 16x16 invocations stage a 16x16 tile of A and of B per step of K.
// Dispatch (N / 16, M / 16, 1); M, N, K are pipeline overrides and must be multiples of 16.
override M : u32 = 256u;
override N : u32 = 256u;
override K : u32 = 256u;

@group(0) @binding(0) var<storage, read> a : array<f32>;
@group(0) @binding(1) var<storage, read> b : array<f32>;
@group(0) @binding(2) var<storage, read_write> c : array<f32>;

var<workgroup> ta : array<f32, 256>;
var<workgroup> tb : array<f32, 256>;

@compute @workgroup_size(16, 16)
fn main(@builtin(local_invocation_id) lid : vec3<u32>, @builtin(workgroup_id) wg : vec3<u32>) {
  let row = wg.y * 16u + lid.y;
  let col = wg.x * 16u + lid.x;
  var acc = 0.0;
  for (var t = 0u; t < K; t += 16u) {
    ta[lid.y * 16u + lid.x] = a[row * K + t + lid.x];
    tb[lid.y * 16u + lid.x] = b[(t + lid.y) * N + col];
    workgroupBarrier();
    for (var k = 0u; k < 16u; k++) {
      acc = acc + ta[lid.y * 16u + k] * tb[k * 16u + lid.x];
    }
    workgroupBarrier();
  }
  c[row * N + col] = acc;
}
