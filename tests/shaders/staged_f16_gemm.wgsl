// The constructs of a production subgroup-matrix matmul (llama.cpp's WebGPU backend keeps its
// GEMM so), written here: a filter directive, sizes as constant expressions (max() for a shared
// buffer reused between two phases), vec4 loads guarded by select() that read past the edge of
// ragged tiles, vec4<f32> -> vec4<f16> conversion into workgroup memory, only the first
// SUBGROUPS subgroups doing matrix work, f16 accumulators in a nested array indexed by loop
// counters, the deprecated bool-layout load and store forms, and the result staged back through
// the same workgroup buffer.
diagnostic(off, chromium.subgroup_matrix_uniformity);
enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;

struct Params { m: u32, n: u32, k: u32 }
@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;      // M x K, row-major
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;      // N x K, row-major (B transposed)
@group(0) @binding(2) var<storage, read_write> c: array<f32>;      // N x M: c[j * M + i] = sum_k a[i][k] b[j][k]
@group(0) @binding(3) var<uniform> p: Params;

const S = 16u;                       // matrix size
const TM = 2u;                       // matrices per subgroup along M
const TK = 16u;
const SUBGROUPS = 1u;
const WG = 64u;                      // two subgroups of 32: the second does no matrix work
const A_SH = TM * S * TK;
const B_SH = S * TK;
const SHMEM = max(A_SH + B_SH, TM * S * S);
var<workgroup> sh: array<f16, SHMEM>;

fn stage(v: vec4<f32>, at: u32) {
    let h = vec4<f16>(v);
    sh[at] = h.x; sh[at + 1u] = h.y; sh[at + 2u] = h.z; sh[at + 3u] = h.w;
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) t: u32, @builtin(subgroup_id) sgid: u32) {
    var acc: array<array<subgroup_matrix_result<f16, S, S>, 1>, TM>;
    for (var k0 = 0u; k0 < p.k; k0 += TK) {
        for (var e = t * 4u; e < A_SH; e += WG * 4u) {
            let row = e / TK;
            let col = k0 + e % TK;
            stage(select(vec4<f32>(0.0), a[(row * p.k + col) / 4u], row < p.m && col < p.k), e);
        }
        for (var f = t * 4u; f < B_SH; f += WG * 4u) {
            let row = f / TK;
            let col = k0 + f % TK;
            stage(select(vec4<f32>(0.0), b[(row * p.k + col) / 4u], row < p.n && col < p.k), A_SH + f);
        }
        workgroupBarrier();
        if (sgid < SUBGROUPS) {
            let r = subgroupMatrixLoad<subgroup_matrix_right<f16, S, S>>(&sh, A_SH, true, TK);
            for (var i = 0u; i < TM; i++) {
                let l = subgroupMatrixLoad<subgroup_matrix_left<f16, S, S>>(&sh, i * S * TK, false, TK);
                acc[i][0] = subgroupMatrixMultiplyAccumulate(l, r, acc[i][0]);
            }
        }
        workgroupBarrier();
    }
    if (sgid < SUBGROUPS) {
        for (var i = 0u; i < TM; i++) {
            subgroupMatrixStore(&sh, i * S, acc[i][0], true, TM * S);
        }
    }
    workgroupBarrier();
    for (var g = t; g < TM * S * S; g += WG) {
        let i = g % (TM * S);
        let j = g / (TM * S);
        if (i < p.m && j < p.n) {
            c[j * p.m + i] = f32(sh[g]);
        }
    }
}
