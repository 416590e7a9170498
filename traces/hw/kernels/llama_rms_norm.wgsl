// RMS normalisation of each row (one workgroup per row), as inference kernels run it:
// y = x * inverseSqrt(mean(x^2) + eps) * w, the mean from a shared-memory tree reduction.
@group(0) @binding(0) var<storage, read> x : array<f32>;
@group(0) @binding(1) var<storage, read> w : array<f32>;
@group(0) @binding(2) var<storage, read_write> y : array<f32>;

const COLS = 1024u;
const WG = 256u;
const EPS = 1e-6;
var<workgroup> part : array<f32, WG>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg : vec3<u32>, @builtin(local_invocation_index) t : u32) {
  let row = wg.x * COLS;
  var s = 0.0;
  for (var c = t; c < COLS; c += WG) {
    let v = x[row + c];
    s += v * v;
  }
  part[t] = s;
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k /= 2u) {
    if (t < k) { part[t] += part[t + k]; }
    workgroupBarrier();
  }
  let scale = inverseSqrt(part[0] / f32(COLS) + EPS);
  for (var c = t; c < COLS; c += WG) {
    y[row + c] = x[row + c] * scale * w[c];
  }
}
