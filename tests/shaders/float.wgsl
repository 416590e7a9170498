// f32 and f16 arithmetic, math builtins, conversions (saturating float -> int), bitcasts and
// the packing builtins.
enable f16;

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> exact: array<u32>;    // 24 per invocation (bits)
@group(0) @binding(3) var<storage, read_write> approx: array<f32>;   // 8 per invocation
@group(0) @binding(4) var<storage, read_write> ints: array<i32>;     // 16 per invocation

@compute @workgroup_size(8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let a = x[i];
    let b = y[i];
    let ua = bitcast<u32>(a);
    let ub = bitcast<u32>(b);
    let o = i * 24u;

    exact[o + 0u] = bitcast<u32>(a + b);
    exact[o + 1u] = bitcast<u32>(a - b);
    exact[o + 2u] = bitcast<u32>(a * b);
    exact[o + 3u] = bitcast<u32>(fma(a, b, 1.0));
    exact[o + 4u] = bitcast<u32>(sqrt(abs(a)));
    exact[o + 5u] = bitcast<u32>(floor(a) + ceil(b));
    exact[o + 6u] = bitcast<u32>(round(a));
    exact[o + 7u] = bitcast<u32>(trunc(a) - fract(b));
    exact[o + 8u] = bitcast<u32>(min(a, b) * 2.0 - max(a, b));
    exact[o + 9u] = bitcast<u32>(clamp(a, -1.0, 1.0) + saturate(b) + sign(a) + step(0.0, b));

    // f16 arithmetic, rounded to f16 at every step
    let ha = f16(a);
    let hb = f16(b);
    let hs = ha * hb + ha;
    exact[o + 10u] = bitcast<u32>(vec2<f16>(hs, ha - hb));
    exact[o + 11u] = bitcast<u32>(f32(hs) + f32(hb));
    exact[o + 12u] = pack2x16float(vec2<f32>(a, b));
    exact[o + 13u] = pack4x8snorm(vec4<f32>(a, b, a * 0.5, -b));
    exact[o + 14u] = pack4x8unorm(vec4<f32>(a, b, 0.25, 1.5));
    exact[o + 15u] = pack2x16snorm(vec2<f32>(a, b));
    exact[o + 16u] = pack2x16unorm(vec2<f32>(a, b));
    exact[o + 17u] = bitcast<u32>(unpack4x8snorm(ua).z);
    exact[o + 18u] = bitcast<u32>(unpack4x8unorm(ub).w);
    exact[o + 19u] = bitcast<u32>(unpack2x16snorm(ua).y);
    exact[o + 20u] = bitcast<u32>(unpack2x16unorm(ub).x);
    exact[o + 21u] = bitcast<u32>(unpack2x16float(ua & 0x7bff7bffu).y);
    exact[o + 22u] = bitcast<u32>(quantizeToF16(a));
    exact[o + 23u] = bitcast<u32>(f32(i32(b * 1000.0)) + f32(u32(abs(a) * 3.0e5)));

    let p = i * 8u;
    approx[p + 0u] = sin(a);
    approx[p + 1u] = cos(b);
    approx[p + 2u] = exp(a * 0.1);
    approx[p + 3u] = log(abs(b) + 1.0);
    approx[p + 4u] = pow(abs(a), 1.5);
    approx[p + 5u] = atan2(a, b);
    approx[p + 6u] = tanh(a);
    approx[p + 7u] = inverseSqrt(abs(b) + 1.0);

    let q = i * 16u;
    ints[q + 0u] = i32(a);
    ints[q + 1u] = i32(a * 1.0e12);              // saturates
    ints[q + 2u] = bitcast<i32>(u32(b * 1.0e12)); // saturates to 0 or 4294967040
    ints[q + 3u] = i32(ha) + i32(u32(hb));
    ints[q + 4u] = bitcast<i32>(pack4xI8Clamp(vec4<i32>(i32(a), i32(b), -300, 200)));
    ints[q + 5u] = dot4I8Packed(ua, ub);
    ints[q + 6u] = bitcast<i32>(dot4U8Packed(ua, ub));
    ints[q + 7u] = bitcast<i32>(pack4xU8(vec4<u32>(ua, ub, 511u, 7u)));
    ints[q + 8u] = unpack4xI8(ua).w + bitcast<i32>(unpack4xU8(ub).x) * 1000;
    ints[q + 9u] = bitcast<i32>(pack4xI8(vec4<i32>(-1, i32(a), 127, -128)));
    ints[q + 10u] = bitcast<i32>(pack4xU8Clamp(vec4<u32>(ua, 255u, 256u, 0u)));
    ints[q + 11u] = i32(f16(i32(b * 100.0)));    // i32 -> f16 rounds to nearest even
    ints[q + 12u] = i32(a > b) + i32(a == b) * 2 + i32(!(a < b)) * 4;
    ints[q + 13u] = bitcast<i32>(vec2<f16>(f16(a) + 1.5h, -hb));
    ints[q + 14u] = i32(f32(bitcast<f32>(ua)) == a);
    ints[q + 15u] = i32(u32(-abs(a) - 1.0));     // negative -> 0
}
