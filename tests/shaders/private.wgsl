// var<private>: per-invocation globals with initializers, modified by helpers, never shared.
struct State {
    seed: u32,
    hits: array<u32, 4>,
}

var<private> rng: State = State(12345u, array<u32, 4>(0u, 0u, 0u, 0u));
var<private> scale: f32 = 0.5;
var<private> history: array<vec2<i32>, 3> = array(vec2(1, -1), vec2(2, -2), vec2(3, -3));
var<private> plain: i32;                 // zero-initialised

@group(0) @binding(0) var<storage, read_write> out: array<u32>;    // 8 per invocation

fn next() -> u32 {
    // xorshift32
    var x = rng.seed;
    x ^= x << 13u;
    x ^= x >> 17u;
    x ^= x << 5u;
    rng.seed = x;
    rng.hits[x % 4u] += 1u;
    return x;
}

@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    rng.seed += i;
    for (var k = 0u; k < i % 5u + 1u; k++) {
        _ = next();
    }
    scale *= f32(i);
    history[i % 3u].y += i32(i);
    plain -= 7;
    let o = i * 8u;
    out[o + 0u] = rng.seed;
    out[o + 1u] = rng.hits[0] + rng.hits[1] * 10u + rng.hits[2] * 100u + rng.hits[3] * 1000u;
    out[o + 2u] = bitcast<u32>(scale);
    out[o + 3u] = bitcast<u32>(history[0].y * 10000 + history[1].y * 100 + history[2].y);
    out[o + 4u] = bitcast<u32>(plain);
}
