// The compiler model's other decisions on nvidia-h200 (emu/isa/compiler.py): smoothstep as Tint
// writes it, t * (t * (3 - 2t)), its square taken first (square) and 3 - 2t fused (fma), a common factor taken out (factor), a constant factor
// of a square put outermost and fused (square, fma), and c - x * y kept rounded after x / y of the
// same loads (rounded-after-division).
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read> z: array<f32>;
@group(0) @binding(3) var<storage, read_write> o: array<f32>;

@compute @workgroup_size(4)
fn main(@builtin(local_invocation_index) i: u32) {
    o[i] = smoothstep(0.0, 2.0, x[i]);
    o[i + 4u] = x[i] * z[i] + y[i] * z[i];
    o[i + 8u] = (0.044715 * x[i]) * x[i] + z[i];
    let q = x[i] / y[i];
    o[i + 12u] = q;
    o[i + 16u] = 0.7 - x[i] * y[i];
}
