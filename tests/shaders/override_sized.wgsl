// Overrides that size a workgroup array and feed another override: each pipeline lowers the
// shader again with its own values.
override WG: u32 = 64;
override HALF = WG / 2u;
var<workgroup> tile: array<f32, WG>;
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) i: u32, @builtin(workgroup_id) w: vec3<u32>) {
  tile[i] = f32(i);
  workgroupBarrier();
  if (i < HALF) { o[w.x * WG + i] = tile[i] + tile[i + HALF]; }
}
