#version 450
// A row normalisation in the shape of llama.cpp's softmax (1 / (1 + max - x) in place of its
// exp): one workgroup per row, each invocation keeps its elements in a private array
// (dynamically indexed), the row maximum (from -infinity) and the sum reduced through shared
// memory between barrier()s, all inside a switch with only a default whose uniform `break` skips
// the rest for an empty row (glslang keeps it as OpSwitch; the fusion JIT runs it in its workgroup
// mode). Dispatch one workgroup per row.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer Len { uint lens[]; };
layout(set = 0, binding = 2) writeonly buffer Y { float y[]; };
shared float red[32];

void main() {
    uint t = gl_LocalInvocationID.x, row = gl_WorkGroupID.x, base = row * 128u;
    uint len = lens[row];
    float vals[4];
    switch (row & 0u) {
    default:
        if (len == 0u) { break; }
        float m = -1.0 / 0.0;
        for (uint k = 0u; k < 4u; k++) {
            uint c = t + 32u * k;
            vals[k] = c < len ? x[base + c] : -1.0 / 0.0;
            m = max(m, vals[k]);
        }
        red[t] = m;
        barrier();
        for (uint s = 16u; s > 0u; s >>= 1u) {
            if (t < s) { red[t] = max(red[t], red[t + s]); }
            barrier();
        }
        m = red[0];
        barrier();
        float sum = 0.0;
        for (uint k = 0u; k < 4u; k++) {
            vals[(k + t) & 3u] = (1.0 / (1.0 + (m - vals[(k + t) & 3u]))) * float(((k + t) & 3u) + 1u) * 0.25;
            sum += vals[(k + t) & 3u];
        }
        red[t] = sum;
        barrier();
        for (uint s = 16u; s > 0u; s >>= 1u) {
            if (t < s) { red[t] += red[t + s]; }
            barrier();
        }
        for (uint k = 0u; k < 4u; k++) {
            uint c = t + 32u * k;
            if (c < len) { y[base + c] = vals[k] / red[0]; }
        }
        break;
    }
}
