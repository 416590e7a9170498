#version 450
// VK_NV_cooperative_matrix2's block loads (llama.cpp's coopmat2 shaders of quantized weights):
// a 16 x 32 f16 A matrix loaded through a decode function from blocks of 4 elements along a
// row, each block 8 bytes: 4 signed bytes and an f16 scale (and 2 bytes of padding): element
// (r, c) = q[c % 4] * scale of block (r, c / 4); rows 12..15 lie outside the 12-row tensor and
// read the clamp value (0x4000: 2.0), or with ClampToEdge (a spec constant, as llama.cpp sets its
// layouts' clamp modes) row 11. Stored row-major (16 x 32 f16) for the test to read.
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : enable
#extension GL_EXT_buffer_reference : enable
layout(local_size_x = 32) in;
layout(constant_id = 0) const uint CLAMP = gl_CooperativeMatrixClampModeConstantNV;
struct Block { int8_t q[4]; float16_t scale; float16_t pad; };
layout(binding = 0) readonly buffer Blocks { Block blocks[]; };
layout(binding = 1) buffer Out { float16_t o[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer BlockRef { Block b; };

float16_t decode(const in BlockRef ref, const in uint blockCoord[2], const in uint coordInBlock[2]) {
    return float16_t(ref.b.q[coordInBlock[1]]) * ref.b.scale;
}

void main() {
    tensorLayoutNV<2, CLAMP> l = createTensorLayoutNV(2, CLAMP);
    l = setTensorLayoutBlockSizeNV(l, 1, 4);       // before the dimensions: their strides count blocks
    l = setTensorLayoutDimensionNV(l, 12, 32);
    l = setTensorLayoutClampValueNV(l, 0x4000);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 32, gl_MatrixUseA> m;
    coopMatLoadTensorNV(m, blocks, 0, sliceTensorLayoutNV(l, 0, 16, 0, 32), decode);
    coopMatStore(m, o, 0, 32, gl_CooperativeMatrixLayoutRowMajor);
}
