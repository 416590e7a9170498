// '--' is a decrement statement's token; where an expression continues or starts it is two minus
// signs (WGSL takes the longest token the parser state accepts): a--b is a - (-b), --b is -(-b).
const two = 2i;
const one = 1i;
const c2 = two--one;          // 2 - (-1) = 3
const c3 = two---one;         // 2 - (-(-1)) = 1
const c4 = two----one;        // 2 - (-(-(-1))) = 3

@group(0) @binding(0) var<storage, read_write> out: array<i32, 8>;

@compute @workgroup_size(1)
fn main() {
  var x = 5i;
  let y = --x;                // -(-x) = 5, x unchanged
  out[0] = c2;
  out[1] = c3;
  out[2] = c4;
  out[3] = y;
  out[4] = x--x;              // 5 - (-5) = 10
  x--;                        // the statement still decrements
  out[5] = x;
  out[6] = x---x;             // 4 - (-(-4)) = 0
  out[7] = -x--x;             // (-4) - (-4) = 0
}
