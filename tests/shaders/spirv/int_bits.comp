#version 450
// The 32-bit integer bit builtins as llama.cpp's MUL_MAT_ID and top-k shaders call them
// (findLSB, findMSB, bitCount; int and uint, zero, negative and all-ones values), compiled by the
// fusion JIT with the interpreter's rules (emu/numerics/builtins.py).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { int a[]; };
layout(set = 0, binding = 1) writeonly buffer O { int o[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    int x = a[i];
    uint u = uint(x);
    o[i * 6] = findLSB(x);
    o[i * 6 + 1] = int(findLSB(u));
    o[i * 6 + 2] = findMSB(x);
    o[i * 6 + 3] = int(findMSB(u));
    o[i * 6 + 4] = bitCount(x);
    o[i * 6 + 5] = int(bitCount(u)) + findLSB(x >> 3) * 64;
}
