// out[w] = the sum of a[256 w .. 256 w + 255]: a tree reduction in workgroup memory with a
// barrier per level. Dispatch (X, Y, 1) workgroups with X * Y = n / 256 (n a multiple of 256).
@group(0) @binding(0) var<storage, read> a : array<f32>;
@group(0) @binding(1) var<storage, read_write> out : array<f32>;

var<workgroup> sh : array<f32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) li : u32, @builtin(workgroup_id) wg : vec3<u32>,
        @builtin(num_workgroups) nw : vec3<u32>) {
  let w = wg.x + wg.y * nw.x;
  sh[li] = a[w * 256u + li];
  workgroupBarrier();
  for (var s = 128u; s > 0u; s = s >> 1u) {
    if (li < s) {
      sh[li] = sh[li] + sh[li + s];
    }
    workgroupBarrier();
  }
  if (li == 0u) {
    out[w] = sh[0];
  }
}
