// Scalar arithmetic the device's compilers round differently (emu/isa/compiler.py): on
// nvidia-h200 x * y + z is one fused multiply-add, x / y + z is fma(x, RCP(y), z), 1 / sqrt(y) is
// one RSQ; on a profile that contracts nothing each is rounded as written.
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read> z: array<f32>;
@group(0) @binding(3) var<storage, read_write> o: array<f32>;

@compute @workgroup_size(4)
fn main(@builtin(local_invocation_index) i: u32) {
    o[i] = x[i] * y[i] + z[i];
    o[i + 4u] = z[i] / y[i] + x[i];
    o[i + 8u] = 1.0 / sqrt(y[i]);
    o[i + 12u] = x[i] / y[i];
}
