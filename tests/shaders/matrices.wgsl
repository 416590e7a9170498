// matCxR arithmetic: mat x mat, mat x vec, vec x mat, +, -, scalar x mat, transpose,
// determinant, construction from columns and scalars; an entry point taking a struct of builtins.
struct Inputs {
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
}

@group(0) @binding(0) var<storage, read> src: array<mat3x2<f32>>;    // 3 columns of vec2
@group(0) @binding(1) var<storage, read_write> out: array<f32>;      // 32 per invocation

@compute @workgroup_size(4)
fn main(in: Inputs) {
    let i = in.gid.x;
    let a = src[i];                                 // mat3x2: 3 columns, 2 rows
    let b = mat2x3<f32>(vec3<f32>(1.0, 2.0, 3.0), vec3<f32>(-1.0, 0.5, f32(in.li)));
    let ab = a * b;                                 // mat3x2 * mat2x3 = mat2x2
    let ba = b * a;                                 // mat2x3 * mat3x2 = mat3x3
    let v = a * vec3<f32>(1.0, -2.0, 0.5);          // vec2
    let w = vec2<f32>(3.0, -1.0) * a;               // vec3
    let s = (a + a) * 0.5 - a * 2.0;                // mat3x2
    let t = transpose(a);                           // mat2x3
    let o = i * 32u;
    out[o + 0u] = ab[0][0]; out[o + 1u] = ab[0][1]; out[o + 2u] = ab[1][0]; out[o + 3u] = ab[1][1];
    for (var c = 0u; c < 3u; c++) {
        for (var r = 0u; r < 3u; r++) {
            out[o + 4u + c * 3u + r] = ba[c][r];
        }
    }
    out[o + 13u] = v.x; out[o + 14u] = v.y;
    out[o + 15u] = w.x; out[o + 16u] = w.y; out[o + 17u] = w.z;
    out[o + 18u] = s[0].x; out[o + 19u] = s[2].y;
    out[o + 20u] = t[1].z; out[o + 21u] = t[0][1];
    out[o + 22u] = determinant(ab);
    let id = mat2x2<f32>(1.0, 0.0, 0.0, 1.0);
    let sq = ab * id * 2.0;
    out[o + 23u] = sq[1][0];
    var m: mat3x2<f32>;
    m = a;
    m[1] = vec2<f32>(7.0, 8.0);
    m[2].y = -3.0;
    out[o + 24u] = m[1].x + m[2].y + m[0][0];
    out[o + 25u] = f32(in.li);
}
