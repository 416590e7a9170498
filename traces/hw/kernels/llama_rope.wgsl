// Rotary position embedding (NeoX-style pairs i, i + D/2) of one head per workgroup row:
// theta = pos * freq[i]; (x0, x1) -> (x0 cos - x1 sin, x0 sin + x1 cos).
@group(0) @binding(0) var<storage, read> x : array<f32>;
@group(0) @binding(1) var<storage, read> pos : array<i32>;
@group(0) @binding(2) var<storage, read> freq : array<f32>;
@group(0) @binding(3) var<storage, read_write> y : array<f32>;

const D = 128u;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg : vec3<u32>, @builtin(local_invocation_index) i : u32) {
  let base = wg.x * D;
  let theta = f32(pos[wg.x]) * freq[i];
  let c = cos(theta);
  let s = sin(theta);
  let x0 = x[base + i];
  let x1 = x[base + i + D / 2u];
  y[base + i] = x0 * c - x1 * s;
  y[base + i + D / 2u] = x0 * s + x1 * c;
}
