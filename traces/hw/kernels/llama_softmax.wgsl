// Row softmax (one workgroup per row): max and sum by shared-memory reductions, exp(x - max),
// then a multiply by the reciprocal of the sum.
@group(0) @binding(0) var<storage, read> x : array<f32>;
@group(0) @binding(1) var<storage, read_write> y : array<f32>;

const COLS = 1024u;
const WG = 256u;
var<workgroup> part : array<f32, WG>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg : vec3<u32>, @builtin(local_invocation_index) t : u32) {
  let row = wg.x * COLS;
  var m = -3.4e38;
  for (var c = t; c < COLS; c += WG) { m = max(m, x[row + c]); }
  part[t] = m;
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k /= 2u) {
    if (t < k) { part[t] = max(part[t], part[t + k]); }
    workgroupBarrier();
  }
  let mx = part[0];
  workgroupBarrier();
  var s = 0.0;
  for (var c = t; c < COLS; c += WG) {
    let e = exp(x[row + c] - mx);
    y[row + c] = e;
    s += e;
  }
  part[t] = s;
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k /= 2u) {
    if (t < k) { part[t] += part[t + k]; }
    workgroupBarrier();
  }
  let inv = 1.0 / part[0];
  for (var c = t; c < COLS; c += WG) { y[row + c] = y[row + c] * inv; }
}
