// C = A * B for row-major f32 matrices A (M x K), B (K x N), C (M x N).
// One invocation per element of C, workgroups of 16x16, a plain loop over K, no tiling.
// Dispatch (ceil(N / 16), ceil(M / 16), 1); M, N, K are pipeline overrides (default 256).
override M : u32 = 256u;
override N : u32 = 256u;
override K : u32 = 256u;

@group(0) @binding(0) var<storage, read> a : array<f32>;
@group(0) @binding(1) var<storage, read> b : array<f32>;
@group(0) @binding(2) var<storage, read_write> c : array<f32>;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  let col = gid.x;
  let row = gid.y;
  if (row >= M || col >= N) {
    return;
  }
  var acc = 0.0;
  for (var k = 0u; k < K; k++) {
    acc = acc + a[row * K + k] * b[k * N + col];
  }
  c[row * N + col] = acc;
}
