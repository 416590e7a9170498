// Integer arithmetic as WGSL defines it at run time: two's-complement wrap, division and
// remainder by zero and of MIN by -1, shift amounts masked to 5 bits, and the bit builtins.
@group(0) @binding(0) var<storage, read> a: array<i32>;
@group(0) @binding(1) var<storage, read> b: array<i32>;
@group(0) @binding(2) var<storage, read_write> si: array<i32>;   // 16 per invocation
@group(0) @binding(3) var<storage, read_write> ui: array<u32>;   // 16 per invocation

@compute @workgroup_size(8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let x = a[i];
    let y = b[i];
    let ux = bitcast<u32>(x);
    let uy = bitcast<u32>(y);
    let o = i * 16u;

    si[o + 0u] = x + y;
    si[o + 1u] = x - y;
    si[o + 2u] = x * y;
    si[o + 3u] = x / y;
    si[o + 4u] = x % y;
    si[o + 5u] = x << uy;
    si[o + 6u] = x >> uy;
    si[o + 7u] = -x;
    si[o + 8u] = abs(x);
    si[o + 9u] = countLeadingZeros(x) + countOneBits(y) * 100;
    si[o + 10u] = firstLeadingBit(x);
    si[o + 11u] = firstTrailingBit(y);
    si[o + 12u] = extractBits(x, uy & 31u, 5u);
    si[o + 13u] = insertBits(x, y, 4u, 9u);
    si[o + 14u] = reverseBits(x) ^ ~y;
    si[o + 15u] = clamp(x, -1000, 1000) + sign(y) + min(x, y) % 7 + max(x, y) % 5;

    ui[o + 0u] = ux + uy;
    ui[o + 1u] = ux - uy;
    ui[o + 2u] = ux * uy;
    ui[o + 3u] = ux / uy;
    ui[o + 4u] = ux % uy;
    ui[o + 5u] = ux << uy;
    ui[o + 6u] = ux >> uy;
    ui[o + 7u] = countTrailingZeros(ux);
    ui[o + 8u] = firstLeadingBit(ux);
    ui[o + 9u] = extractBits(ux, 3u, uy);
    ui[o + 10u] = insertBits(ux, uy, uy % 40u, 12u);
    ui[o + 11u] = reverseBits(ux);
    ui[o + 12u] = (ux & uy) | (ux ^ 0xF0F0F0F0u);
    ui[o + 13u] = min(ux, uy) + max(ux, uy);
    ui[o + 14u] = select(0u, 1u, x < y) | select(0u, 2u, ux < uy) | select(0u, 4u, x == y) | select(0u, 8u, ux >= uy);
    var z = ux;
    z++;
    z -= 3u;
    z *= 5u;
    z >>= 1u;
    ui[o + 15u] = z;
}
