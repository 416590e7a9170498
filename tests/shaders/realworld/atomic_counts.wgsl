// Histogram of i % 4 in an array of atomics.
@group(0) @binding(0) var<storage, read_write> counts: array<atomic<u32>, 4>;

@compute @workgroup_size(32)
fn main(@builtin(local_invocation_index) i: u32) {
  atomicAdd(&counts[i % 4u], i);
}
