// A workgroup array sized by an override that has no default: the host must set it.
override wg_size: u32;
var<workgroup> scratch: array<f32, wg_size>;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(wg_size)
fn main(@builtin(local_invocation_index) i: u32, @builtin(workgroup_id) w: vec3<u32>) {
  scratch[i] = f32(i) * 2.0 + f32(w.x);
  workgroupBarrier();
  out[w.x * wg_size + i] = scratch[wg_size - 1u - i];
}
