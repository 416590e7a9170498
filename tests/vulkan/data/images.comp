#version 450
// Reads a sampled image two ways (a combined image sampler; a sampled image with a separate
// sampler) at coordinates past both edges, and writes the samples to two storage images: one
// rgba32f (the filtered values' bits), one rgba8 (the store's conversion); tests/vulkan/test_images.py
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform sampler2D combined;
layout(set = 0, binding = 1) uniform texture2D tex;
layout(set = 0, binding = 2) uniform sampler smp;
layout(set = 0, binding = 3, rgba32f) uniform writeonly image2D out_f32;
layout(set = 0, binding = 4, rgba8) uniform writeonly image2D out_u8;
void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    vec2 uv = (vec2(p) + 0.5) / 12.0 - 0.25;
    imageStore(out_f32, p, textureLod(combined, uv, 0.0));
    imageStore(out_u8, p, textureLod(sampler2D(tex, smp), uv, 0.0));
}
