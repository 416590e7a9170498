// '--' is a decrement statement's token; where an expression continues or starts it is two minus
// signs (WGSL takes the longest token the parser state accepts): a--b is a - (-b), --b is -(-b).
const two = 2i;
const one = 1i;
const c2 = two--one;          // 2 - (-1) = 3
const c3 = two---one;         // 2 - (-(-1)) = 1
const c4 = two----one;        // 2 - (-(-(-1))) = 3

@group(0) @binding(0) var<storage, read_write> out: array<i32>;

@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wg: vec3u) {
  let o = 8u * wg.x;          // each workgroup its own eight results
  var x = 5i;
  let y = --x;                // -(-x) = 5, x unchanged
  out[o + 0u] = c2;
  out[o + 1u] = c3;
  out[o + 2u] = c4;
  out[o + 3u] = y;
  out[o + 4u] = x--x;              // 5 - (-5) = 10
  x--;                        // the statement still decrements
  out[o + 5u] = x;
  out[o + 6u] = x---x;             // 4 - (-(-4)) = 0
  out[o + 7u] = -x--x;             // (-4) - (-4) = 0
}
