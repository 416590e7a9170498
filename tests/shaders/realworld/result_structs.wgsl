// frexp, modf and atomicCompareExchangeWeak results in constants, private and function variables.
const c = modf(-2.75);
const fr = frexp(vec2<f32>(12.0, -0.375));
var<private> pm = modf(f32(c.whole) * 0.5);
@group(0) @binding(0) var<storage, read_write> o: array<f32, 16>;
@group(0) @binding(1) var<storage, read_write> counter: atomic<u32>;
@compute @workgroup_size(1)
fn main() {
  var m = modf(1.25);
  var f = frexp(48.0);
  m.whole += 1.0;
  var x = atomicCompareExchangeWeak(&counter, 0u, 5u);
  let y = atomicCompareExchangeWeak(&counter, 0u, 9u);
  var copy = x;
  copy.old_value += 100u;
  o[0] = c.fract; o[1] = c.whole;
  o[2] = fr.fract.x; o[3] = f32(fr.exp.x); o[4] = fr.fract.y; o[5] = f32(fr.exp.y);
  o[6] = pm.fract; o[7] = pm.whole;
  o[8] = m.fract; o[9] = m.whole; o[10] = f.fract; o[11] = f32(f.exp);
  o[12] = f32(x.old_value); o[13] = select(0.0, 1.0, x.exchanged);
  o[14] = f32(y.old_value) + select(0.0, 10.0, y.exchanged); o[15] = f32(copy.old_value);
}
