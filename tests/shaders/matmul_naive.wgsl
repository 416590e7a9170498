// C = A x B, one invocation per output element, a K loop accumulating in f32.
struct Dims {
    M: u32,
    N: u32,
    K: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> A: array<f32>;   // M x K, row-major
@group(0) @binding(2) var<storage, read> B: array<f32>;   // K x N, row-major
@group(0) @binding(3) var<storage, read_write> C: array<f32>;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.y;
    let col = gid.x;
    if (row >= dims.M || col >= dims.N) {
        return;
    }
    var acc = 0.0;
    for (var k = 0u; k < dims.K; k++) {
        acc += A[row * dims.K + k] * B[k * dims.N + col];
    }
    C[row * dims.N + col] = acc;
}
