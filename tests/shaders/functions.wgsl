// Function calls: value parameters, pointer parameters into function, private and storage
// memory, struct values passed and returned, helpers calling helpers, early return in loops.
struct Pair {
    lo: i32,
    hi: i32,
}

@group(0) @binding(0) var<storage, read_write> data: array<i32>;
@group(0) @binding(1) var<storage, read_write> out: array<i32>;   // 8 per invocation

var<private> counter: i32 = 100;

fn square(x: i32) -> i32 {
    return x * x;
}

fn sum_of_squares(a: i32, b: i32) -> i32 {
    return square(a) + square(b);
}

fn swap(a: ptr<function, i32>, b: ptr<function, i32>) {
    let t = *a;
    *a = *b;
    *b = t;
}

fn bump(p: ptr<private, i32>, by: i32) -> i32 {
    *p += by;
    return *p;
}

fn scale_storage(p: ptr<storage, i32, read_write>, k: i32) {
    *p = *p * k;
}

fn add_into(v: ptr<function, vec2<i32>>, d: i32) {
    (*v).x += d;
    v.y -= d;            // pointer_composite_access
}

fn order(p: Pair) -> Pair {
    if (p.lo > p.hi) {
        return Pair(p.hi, p.lo);
    }
    return p;
}

// Returns from inside a loop with a per-lane trip count.
fn first_multiple_of_7_from(x: i32) -> i32 {
    var i = x;
    loop {
        if (i % 7 == 0) {
            return i;
        }
        i++;
    }
}

fn fill(arr: ptr<function, array<i32, 4>>, v: i32) {
    for (var i = 0; i < 4; i++) {
        (*arr)[i] = v + i;
    }
}

@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let x = data[i];
    let o = i * 8u;

    out[o + 0u] = sum_of_squares(x, x + 1);

    var a = x;
    var b = -x * 2;
    swap(&a, &b);
    out[o + 1u] = a * 1000 + b;

    out[o + 2u] = bump(&counter, x) + bump(&counter, 1);

    scale_storage(&data[i], 3);
    out[o + 3u] = data[i];

    var v = vec2<i32>(x, x);
    add_into(&v, 5);
    out[o + 4u] = v.x * 100 + v.y;

    let p = order(Pair(x, 10 - x));
    out[o + 5u] = p.lo * 1000 + p.hi;

    out[o + 6u] = first_multiple_of_7_from(x);

    var arr: array<i32, 4>;
    fill(&arr, x);
    out[o + 7u] = arr[0] + arr[1] * 10 + arr[3] * 100;
}
