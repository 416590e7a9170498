// const and abstract-numeric evaluation, overrides with @id and defaults (set from the host),
// and type aliases.
alias Index = u32;
alias Vec = vec4<f32>;

const BIG = 0x7fffffffffff;               // abstract int wider than 32 bits
const SMALL = BIG / 0x10000 - 2147483647; // back in i32 range after abstract arithmetic
const THIRD = 1.0 / 3.0;                  // abstract float, rounded once to f32 where used
const MIXED = 3 + 0.5;                    // abstract int + abstract float -> abstract float
const NEG_MOD = -7 % 3;                   // truncated remainder: -1
const SHIFTED = (1 << 40) >> 38;          // abstract ints shift past 32 bits: 4
const ARR = array(1, 2, 3, 4);            // const array of abstract ints
const V = vec3(1, 2, 3) * 2;              // abstract vector arithmetic
const WIDE = 4294967295;                  // fits u32, not i32
const_assert SMALL == 2147483647 - 2147483647 + (0x7fffffffffff / 0x10000) - 2147483647;
const_assert ARR[2] == 3;

override SCALE: f32 = 2.0;
@id(7) override OFFSET: i32 = -3;
override COUNT: u32;                      // no default: the host must set it
@id(9) override FLAG: bool = false;

@group(0) @binding(0) var<storage, read_write> out: array<u32>;   // 16 per invocation

@compute @workgroup_size(COUNT)
fn main(@builtin(local_invocation_index) li: Index) {
    let o = li * 16u;
    out[o + 0u] = u32(SMALL);
    out[o + 1u] = bitcast<u32>(THIRD);               // f32 nearest to 1/3
    out[o + 2u] = bitcast<u32>(f32(MIXED) * SCALE);
    out[o + 3u] = bitcast<u32>(NEG_MOD + OFFSET);
    out[o + 4u] = u32(SHIFTED);
    var arr = ARR;
    arr[li % 4u] += 10;
    out[o + 5u] = u32(arr[0] + arr[1] + arr[2] + arr[3] + ARR[li % 4u]);
    out[o + 6u] = u32(V.z) + u32(V[li % 3u]);
    out[o + 7u] = WIDE - li;
    out[o + 8u] = COUNT;
    out[o + 9u] = COUNT * 2u;
    out[o + 10u] = select(0u, 1u, FLAG);
    let v: Vec = Vec(THIRD, 0.1, 1e-3, 0.5) * SCALE;
    out[o + 11u] = bitcast<u32>(v.y);
    out[o + 12u] = bitcast<u32>(v.z);
    out[o + 13u] = u32(-(-2147483647 - 1) / 2);         // abstract: no i32 overflow in between
    out[o + 14u] = bitcast<u32>(i32(2.9) + i32(-2.9)); // abstract float -> i32 truncates: 0
    out[o + 15u] = u32(0.1 + 0.2 == 0.3);              // abstract float is f64: false
}
