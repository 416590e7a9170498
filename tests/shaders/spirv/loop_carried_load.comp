#version 450
// llama.cpp's mul_mat_vec loop shape: an outer loop whose condition loads `i`, an inner (unrolled)
// loop whose body loads `i` before it stores `i + 1`. The inner load reads the previous inner
// iteration's store, so it is not the value the outer condition loaded (a load before a loop that
// writes the variable is never the value of a load inside it).
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer O { uint o[]; };
layout(push_constant) uniform P { uint n; uint go; } p;
void main() {
    uint i = 0u;
    while (i < p.n && p.go != 0u) {
        [[unroll]] for (uint k = 0u; k < 2u; k++) {
            o[i] += i * 4u + 1u;
            i++;
        }
    }
}
