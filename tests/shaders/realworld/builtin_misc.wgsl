// num_subgroups; workgroupUniformLoad of an atomic; vecN() and matCxR() zero values (abstract).
enable subgroups;
const v = vec4();
const x = v.x * 2u;
var<private> f : vec3f = vec3();
const m = mat2x2();
var<workgroup> counter: atomic<u32>;
@group(0) @binding(0) var<storage, read_write> o: array<u32, 20>;
@group(0) @binding(1) var<storage, read_write> t: array<f32, 20>;

@compute @workgroup_size(20)
fn main(@builtin(local_invocation_index) i: u32, @builtin(num_subgroups) n: u32,
        @builtin(subgroup_id) s: u32) {
  atomicAdd(&counter, i + 1u);
  let total = workgroupUniformLoad(&counter);
  o[i] = n * 1000u + s * 100u + x;
  t[i] = f32(total) + f.y + m[1].x + f32(vec2().y);
}
