// c[i] = a[i] + b[i] over n = arrayLength(&c) f32 elements, 256 invocations per workgroup.
// A 1D grid is capped at 65535 workgroups, so with W = ceil(n / 256) workgroups dispatch
// (ceil(W / R), R, 1) where R = ceil(W / 65535); the index is linearised over the x extent.
// 16M elements: dispatch (32768, 2, 1).
@group(0) @binding(0) var<storage, read> a : array<f32>;
@group(0) @binding(1) var<storage, read> b : array<f32>;
@group(0) @binding(2) var<storage, read_write> c : array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid : vec3<u32>,
        @builtin(num_workgroups) nwg : vec3<u32>) {
  let i = gid.x + gid.y * (nwg.x * 256u);
  if (i < arrayLength(&c)) {
    c[i] = a[i] + b[i];
  }
}
