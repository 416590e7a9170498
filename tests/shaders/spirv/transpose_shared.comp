#version 450
// A tile transpose through shared memory declared as an array of arrays (llama.cpp's CPY
// transposes so, uint[32][33]): each invocation stores its element at [y][x] and reads [x][y]
// after the barrier; the padding column is written by the first column's invocations. Row-major
// flattening of the two indices in the fusion JIT's workgroup mode. 8x8 workgroups.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { uint y[]; };
shared uint tile[8][9];

void main() {
    uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
    uint base = 64u * gl_WorkGroupID.x;
    tile[ly][lx] = x[base + 8u * ly + lx];
    if (lx == 0u) { tile[ly][8] = ly * 1000u; }
    barrier();
    y[base + 8u * ly + lx] = tile[lx][ly] + tile[ly][8];
}
