// One module with vertex, fragment and compute entry points. The graphics ones use what only
// graphics may (locations, position, discard, derivatives); the compute one still runs.
// The vertex shader's 'colors' shares @group(0) @binding(0) with the compute shader's 'outv'.
struct VertexOut {
  @builtin(position) pos: vec4<f32>,
  @location(0) shade: f32,
}
@group(0) @binding(0) var<storage, read> colors: array<f32>;
@group(0) @binding(0) var<storage, read_write> outv: array<u32>;
@group(0) @binding(1) var<storage, read_write> both: array<u32>;

fn fragment_only(x: f32) -> f32 {
  if (x < 0.0) { discard; }
  return dpdx(x);
}

fn shared_helper(i: u32) -> u32 { return i * 3u + 1u; }

@vertex fn vs(@builtin(vertex_index) i: u32) -> VertexOut {
  return VertexOut(vec4<f32>(f32(shared_helper(i))), colors[i]);
}

@fragment fn fs(@location(0) shade: f32) -> @location(0) vec4<f32> {
  return vec4<f32>(fragment_only(shade));
}

@compute @workgroup_size(8)
fn cs(@builtin(local_invocation_index) i: u32) {
  outv[i] = shared_helper(i);
}

// Uses two variables at one binding: only this entry point is refused.
@compute @workgroup_size(1)
fn clash() {
  outv[0] = u32(colors[0]);
}
