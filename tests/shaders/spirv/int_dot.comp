#version 450
// GL_EXT_integer_dot_product: every SPIR-V integer dot product (OpSDot, OpUDot, OpSUDot and the
// AccSat forms), on packed 4x8-bit words and on vectors of 8- and 32-bit integers
#extension GL_EXT_integer_dot_product : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer In { uvec4 w[]; } inp;
layout(set = 0, binding = 1) buffer Res { ivec4 r[]; } res;
void main() {
    uint i = gl_GlobalInvocationID.x;
    uvec4 v = inp.w[i];
    int acc = int(v.z);
    uint uacc = v.w;
    i8vec4 a8 = unpack8(int(v.x));
    u8vec4 b8 = unpack8(v.y);
    ivec4 r0, r1, r2, r3;
    // packed: signed, unsigned, mixed, saturating
    r0.x = dotPacked4x8EXT(int(v.x), int(v.y));
    r0.y = int(dotPacked4x8EXT(v.x, v.y));
    r0.z = dotPacked4x8EXT(int(v.x), v.y);
    r0.w = dotPacked4x8AccSatEXT(int(v.x), int(v.y), acc);
    r1.x = int(dotPacked4x8AccSatEXT(v.x, v.y, uacc));
    r1.y = dotPacked4x8AccSatEXT(int(v.x), v.y, acc);
    // vectors of 8-bit integers into 32-bit results
    r1.z = dotEXT(ivec4(a8), ivec4(unpack8(int(v.y))));
    r1.w = dotAccSatEXT(ivec4(a8), ivec4(unpack8(int(v.y))), acc);
    // vectors of 32-bit integers (products and sums wrap; the AccSat sum saturates)
    r2.x = dotEXT(ivec3(v.xyz), ivec3(v.yzw));
    r2.y = int(dotEXT(uvec2(v.xy), uvec2(v.zw)));
    r2.z = dotEXT(ivec2(a8.xy), uvec2(b8.zw));
    r2.w = int(dotAccSatEXT(uvec2(b8.xy), uvec2(b8.zw), uacc));
    r3.x = dotAccSatEXT(ivec2(a8.zw), uvec2(b8.xy), acc);
    r3.y = dotAccSatEXT(ivec2(v.x & 0xFFFu, v.y & 0xFFFu), ivec2(3, -5), acc);
    r3.z = dotEXT(ivec4(v), ivec4(-1));
    r3.w = 0;
    res.r[4 * i] = r0;
    res.r[4 * i + 1] = r1;
    res.r[4 * i + 2] = r2;
    res.r[4 * i + 3] = r3;
}
