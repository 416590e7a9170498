// var<uniform> struct with uniform-buffer layout (vec3 alignment, arrays of vec4, a matrix).
struct Params {
    offset: vec3<f32>,          // 0
    count: u32,                 // 12
    weights: array<vec4<f32>, 2>, // 16
    transform: mat2x2<f32>,     // 48
    mode: i32,                  // 64
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> points: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4<f32>>;

@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= params.count) {
        return;
    }
    let p = params.transform * points[i];
    let w = params.weights[i % 2u];
    var r = vec4<f32>(p + params.offset.xy, params.offset.z, 0.0) * w;
    switch (params.mode) {
        case 1: { r.w = dot(w, vec4<f32>(1.0)); }
        case 2: { r.w = w[i % 4u]; }
        default: { r.w = -1.0; }
    }
    out[i] = r;
}
