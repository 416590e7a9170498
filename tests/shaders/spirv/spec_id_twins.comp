#version 450
// one SpecId declared as uint (the workgroup size) and as int (as llama.cpp's shaders do): one host
// value, each declaration reading its bytes as its own type, each keeping its own default where
// unset; a shared array sized through gl_WorkGroupSize (OpSpecConstantOp CompositeExtract)
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const int BLOCK = 1024;
layout(constant_id = 1) const uint PER = 2;
layout(set = 0, binding = 0) buffer Out { ivec4 y[]; } o;
shared uint tile[gl_WorkGroupSize.x * PER];
int part[BLOCK / 4];
void main() {
    uint l = gl_LocalInvocationID.x;
    for (uint k = 0; k < PER; k++) tile[l * PER + k] = l * 10 + k;
    barrier();
    uint n = gl_WorkGroupSize.x * PER;
    o.y[gl_GlobalInvocationID.x] = ivec4(BLOCK, part.length(), int(tile[(l * PER + 1) % n]), tile.length());
}
