#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_scalar_block_layout : require
// 64-bit members at the offsets SPIR-V's Offset and ArrayStride decorations give them: std430
// read (dvec3 aligned to 32 bytes, a struct of 128), scalar layout written (dvec3 at byte 16 taking
// 24, u64vec2 at 56, a struct of 72 bytes where std430's is 80), and a push-constant block with a
// 64-bit vector after a 32-bit member.
layout(local_size_x = 4) in;
struct P { uint a; double b; dvec3 c; int64_t d; float e; u64vec2 f; dvec2 g; };
struct Q { uint a; double b; dvec3 c; int64_t d; float e; u64vec2 f; };
layout(std430, set = 0, binding = 0) readonly buffer In { P p[]; } inp;
layout(scalar, set = 0, binding = 1) buffer Out { uint n; double total; Q q[4]; } outp;
layout(push_constant) uniform PC { float k; i64vec2 shift; double scale; } pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    P p = inp.p[i];
    precise double b = p.b * pc.scale + p.g.y;
    outp.q[i].a = p.a + 1u;
    outp.q[i].b = b;
    outp.q[i].c = p.c.zxy - dvec3(p.g.x);
    outp.q[i].d = (p.d << pc.shift.x) + pc.shift.y;
    outp.q[i].e = p.e * pc.k;
    outp.q[i].f = p.f.yx ^ u64vec2(p.a);
    if (i == 0u) {
        outp.n = 4u;
        outp.total = inp.p[1].c.y + inp.p[2].g.x;
    }
}
