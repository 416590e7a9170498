// Elementwise activations: GELU with the tanh approximation, and SiLU (x * sigmoid(x)), in f32
// and in f16.
enable f16;
@group(0) @binding(0) var<storage, read> x : array<f32>;
@group(0) @binding(1) var<storage, read_write> gelu : array<f32>;
@group(0) @binding(2) var<storage, read_write> silu : array<f32>;
@group(0) @binding(3) var<storage, read_write> gelu_h : array<f16>;
@group(0) @binding(4) var<storage, read_write> silu_h : array<f16>;

const SQRT_2_OVER_PI = 0.7978845608028654;
const GELU_COEF_A = 0.044715;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g : vec3<u32>) {
  let i = g.x;
  let v = x[i];
  gelu[i] = 0.5 * v * (1.0 + tanh(SQRT_2_OVER_PI * v * (1.0 + GELU_COEF_A * v * v)));
  silu[i] = v / (1.0 + exp(-v));
  let h = f16(v);
  gelu_h[i] = f16(0.5) * h * (f16(1.0) + tanh(f16(SQRT_2_OVER_PI) * h * (f16(1.0) + f16(GELU_COEF_A) * h * h)));
  silu_h[i] = h / (f16(1.0) + exp(-h));
}
