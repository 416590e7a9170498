// Quad operations: lanes in groups of four (0-3, 4-7, ...) of a subgroup.
enable subgroups;
@group(0) @binding(0) var<storage, read_write> o: array<vec4<i32>>;
@group(0) @binding(1) var<storage, read_write> f: array<vec2<f32>>;

@compute @workgroup_size(16)
fn main(@builtin(subgroup_invocation_id) lane: u32, @builtin(local_invocation_index) i: u32) {
  let x = i32(i) * 10 + 1;
  o[i] = vec4<i32>(quadBroadcast(x, 2u), quadSwapX(x), quadSwapY(x), quadSwapDiagonal(x));
  let v = vec2<f32>(f32(i), -f32(i)) * 0.5;
  f[i] = quadBroadcast(v, 3) + quadSwapX(v);
}
