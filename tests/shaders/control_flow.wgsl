// Control flow with per-lane divergence: every construct writes into its own output slot.
@group(0) @binding(0) var<storage, read> input: array<i32>;
@group(0) @binding(1) var<storage, read_write> out: array<i32>;   // 8 slots per invocation

fn classify(x: i32) -> i32 {
    if (x < 0) {
        return -1;
    } else if (x == 0) {
        return 0;
    } else if (x < 10) {
        return 1;
    } else {
        return 2;
    }
}

// Early return from inside nested loops of a helper.
fn find_first_divisor(n: i32) -> i32 {
    for (var d = 2; d < n; d++) {
        var k = 0;
        loop {
            if (k >= 1) { break; }
            if (n % d == 0) {
                return d;
            }
            k++;
        }
    }
    return n;
}

fn pick(x: i32) -> i32 {
    var r = 0;
    switch (x & 7) {
        case 0, 1: { r = 10; }
        case 2: { r = 20; }
        case 3, 4, 5: {
            r = 30;
            if (x > 16) { break; }
            r = 35;
        }
        default: { r = 99; }
    }
    return r;
}

@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let x = input[i];
    let base = i * 8u;

    out[base + 0u] = classify(x);

    // for with continue: sum of the odd numbers below |x| (divergent trip counts)
    var s = 0;
    let n = abs(x) % 20;
    for (var j = 0; j < n; j++) {
        if (j % 2 == 0) { continue; }
        s += j;
    }
    out[base + 1u] = s;

    // while: collatz steps (bounded)
    var c = abs(x) % 37 + 1;
    var steps = 0;
    while (c != 1 && steps < 200) {
        if (c % 2 == 0) { c = c / 2; } else { c = 3 * c + 1; }
        steps++;
    }
    out[base + 2u] = steps;

    // loop + continuing + break if
    var k = 0;
    var acc = 0;
    loop {
        if (k == 3) {
            k++;
            continue;
        }
        acc += k * k;
        continuing {
            k++;
            break if k >= (abs(x) % 7) + 2;
        }
    }
    out[base + 3u] = acc;

    // break/continue in nested loops: count pairs (a, b) with a < b < m, a + b odd, stop inner at 5
    var pairs = 0;
    let m = abs(x) % 9;
    for (var a = 0; a < m; a++) {
        if (a == 4) { continue; }
        for (var b = a + 1; b < m; b++) {
            if (b >= 6) { break; }
            if ((a + b) % 2 == 0) { continue; }
            pairs++;
        }
        if (pairs > 6) { break; }
    }
    out[base + 4u] = pairs;

    out[base + 5u] = pick(x);
    out[base + 6u] = find_first_divisor(abs(x) % 50 + 2);

    // switch on u32 with a default in the middle, and a nested loop inside a case
    var t = 0;
    switch (u32(abs(x)) % 4u) {
        case 0u: { t = 1; }
        default: { t = -5; }
        case 2u: {
            for (var q = 0; q < 4; q++) {
                if (q == 2) { break; }   // breaks the for, not the switch
                t += 100;
            }
            t += 1;
        }
    }
    out[base + 7u] = t;
}
