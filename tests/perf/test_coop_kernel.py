"""Cooperative kernels compiled whole (emu/jit/coop_kernel.py, emu/numerics/mma_tile.py) against the
interpreter: every cooperative test shader runs twice on the same inputs, once with EMU_JIT=0 (the
lockstep interpreter, the reference) and once with the compiled paths; every output bit, every
warning and every error must be the same. Each case also says which way the compiled run went:
'compiled' (the whole dispatch ran compiled, every multiply-add on the fast paths), 'special' (ran
compiled, some multiply-adds through emu/numerics/mma_call.py's kernel for what the fast paths
leave: zeros, subnormals, infinities, NaNs), 'handed back' (the kernel met something it leaves to
the interpreter, restored what it wrote and handed the dispatch over) or 'declined' (not compiled)."""
import struct
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.errors import EmuError
from emu.jit import coop_kernel, fuse

ROOT = Path(__file__).resolve().parents[2]


def dawn_gemm(t_in, t_acc, m, n, k, *, layout="row_major", wg=None, c_in=False):
    """One tile of C per subgroup, any tile shape and types, Dawn's dialect; workgroups of `wg`
    invocations (several subgroups, the tile from workgroup_id and subgroup_id). c_in: the
    accumulator starts from binding 3 (else from zero)."""
    f16 = "enable f16;" if "f16" in (t_in, t_acc) else ""
    a_at = "row * K + kk" if layout == "row_major" else "kk * M + row"
    b_at = "kk * N + col" if layout == "row_major" else "col * K + kk"
    c_at = "row * N + col" if layout == "row_major" else "col * M + row"
    lda, ldb, ldc = ("K", "N", "N") if layout == "row_major" else ("M", "K", "M")
    acc0 = (f"subgroupMatrixLoad<subgroup_matrix_result<{t_acc}, {n}, {m}>, {layout}>(&c0, {c_at}, {ldc})"
            if c_in else f"subgroup_matrix_result<{t_acc}, {n}, {m}>()")
    c0 = f"@group(0) @binding(3) var<storage, read> c0: array<{t_acc}>;" if c_in else ""
    return f"""
{f16}
enable subgroups;
enable chromium_experimental_subgroup_matrix;
override M: u32 = 64; override N: u32 = 64; override K: u32 = 64;
@group(0) @binding(0) var<storage, read> a: array<{t_in}>;
@group(0) @binding(1) var<storage, read> b: array<{t_in}>;
@group(0) @binding(2) var<storage, read_write> c: array<{t_acc}>;
{c0}
@compute @workgroup_size({wg})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(subgroup_id) sg: u32,
        @builtin(num_subgroups) nsg: u32) {{
  let tile = wg.x * nsg + sg;
  let row = (tile / (N / {n}u)) * {m}u;
  let col = (tile % (N / {n}u)) * {n}u;
  var acc = {acc0};
  for (var kk = 0u; kk < K; kk += {k}u) {{
    let l = subgroupMatrixLoad<subgroup_matrix_left<{t_in}, {k}, {m}>, {layout}>(&a, {a_at}, {lda});
    let r = subgroupMatrixLoad<subgroup_matrix_right<{t_in}, {n}, {k}>, {layout}>(&b, {b_at}, {ldb});
    acc = subgroupMatrixMultiplyAccumulate(l, r, acc);
  }}
  subgroupMatrixStore<{layout}>(&c, {c_at}, acc, {ldc});
}}
"""


OVERLAP = """
enable f16;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<f16>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(32)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
  let l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, wg.x * 256u, 16u);
  let r = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, row_major>(&b, 0u, 16u);
  let acc = subgroupMatrixMultiplyAccumulate(l, r, subgroup_matrix_result<f32, 16, 16>());
  subgroupMatrixStore<row_major>(&c, 8u * wg.x, acc, 32u);
}
"""

# OVERLAP's stores in a bigger buffer: the check of an output of 2^18 elements is split into
# element ranges, one a thread (coop_kernel.Kernel._run), here two (jobs 2)
def store_at(off, col, stride):
    return OVERLAP.replace("8u * wg.x, acc, 32u", f"{off}u + {col}u * wg.x, acc, {stride}u")

HUNG = """
enable f16;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read_write> c: array<f16>;
@compute @workgroup_size(32)
fn main() {
  var m = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, 0u, 16u);
  for (var i = 0u; i < 5000u; i++) {
    m = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, (i % 2u) * 256u, 16u);
  }
  subgroupMatrixStore<row_major>(&c, 0u, m, 16u);
}
"""

INT8 = """
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read> a: array<i32>;
@group(0) @binding(1) var<storage, read> b: array<i32>;
@group(0) @binding(2) var<storage, read_write> c: array<i32>;
@compute @workgroup_size(32)
fn main() {
  let l = subgroupMatrixLoad<subgroup_matrix_left<i8, 32, 16>, row_major>(&a, 0u, 32u);
  let r = subgroupMatrixLoad<subgroup_matrix_right<i8, 16, 32>, row_major>(&b, 0u, 16u);
  let acc = subgroupMatrixMultiplyAccumulate(l, r, subgroup_matrix_result<i32, 16, 16>());
  subgroupMatrixStore<row_major>(&c, 0u, acc, 16u);
}
"""


def _f(rng, n, dtype, special=False):
    x = rng.uniform(-2, 2, n).astype(dtype)
    if special:
        x[rng.random(n) < 0.01] = np.inf
        x[rng.random(n) < 0.01] = np.nan
        x[rng.random(n) < 0.05] = 0
        x[rng.random(n) < 0.05] = -0.0
    return x


def awkward(rng, m, n, k, t_in, t_acc, kind, layout):
    """Bindings of an (8 m) x (16 k) x (4 n) dawn_gemm(..., c_in=True) whose multiply-adds leave
    mma_tile's common case, subgroup by subgroup, in one way each: 'subnormal' (subnormal operands,
    and C of subnormal values times operand rows of zeros: subnormal results), 'cancel' (pairs of
    terms that cancel exactly: zero results of nonzero products, both signs of zero in C),
    'special' (infinities and NaNs in A, B and C)."""
    dt = np.float16 if t_in == "f16" else np.float32
    ct = np.float16 if t_acc == "f16" else np.float32
    M, N, K = 2 * m, 4 * n, 4 * k
    a = rng.uniform(-2, 2, (M, K)).astype(dt)
    b = rng.uniform(-2, 2, (K, N)).astype(dt)
    c = rng.uniform(-2, 2, (M, N)).astype(ct)
    tiny = np.finfo(ct).smallest_subnormal
    if kind == "subnormal":
        small = np.finfo(dt).smallest_subnormal * rng.integers(1, 1000, (M, K))
        a[rng.random((M, K)) < 0.2] = 0
        a = np.where(rng.random((M, K)) < 0.3, small.astype(dt), a)
        b = np.where(rng.random((K, N)) < 0.3, (np.finfo(dt).smallest_subnormal * 7).astype(dt), b)
        a[: M // 2: 3] = 0
        c = np.where(rng.random((M, N)) < 0.5, (tiny * rng.integers(-99, 99, (M, N))).astype(ct), c)
    elif kind == "cancel":
        a[:, 1::2] = -a[:, 0::2]
        b[1::2] = b[0::2]
        a[M // 2:, 5] = 3
        a[0] = -0.0                             # C and every product -0 in B's column 0: -0
        b[:, 0] = np.abs(b[:, 0])
        c = np.where(rng.random((M, N)) < 0.5, ct(0), ct(-0.0)).astype(ct)
    else:
        for x, p in ((a, 0.01), (b, 0.01), (c, 0.02)):
            x[rng.random(x.shape) < p] = np.inf
            x[rng.random(x.shape) < p] = -np.inf
            x[rng.random(x.shape) < p] = np.nan
    a, b, c = (x.T if layout == "col_major" else x for x in (a, b, c))
    return {(0, 0): a.reshape(-1), (0, 1): b.reshape(-1), (0, 2): M * N * np.dtype(ct).itemsize,
            (0, 3): c.reshape(-1)}


def gemm_case(t_in, t_acc, size, *, special=False, zeros=False, short=0):
    """Bindings of a size^3 GEMM: A and B random (short: B that many elements too small)."""
    def make(rng):
        dt = np.float16 if t_in == "f16" else np.float32
        a, b = _f(rng, size * size, dt, special), _f(rng, size * size - short, dt)
        if zeros:
            a[: size * size // 2] = 0
        return {(0, 0): a, (0, 1): b, (0, 2): size * size * (2 if t_acc == "f16" else 4)}
    return make


def file_src(p):
    return (ROOT / p).read_text()


def tiled_case(m, n, k, *, special=False, short=0):
    """Bindings of an m x n x k GEMM for the tiled shaders (f16 A, B; f32 C): B `short` elements
    too small."""
    def make(rng):
        return {(0, 0): _f(rng, m * k, np.float16, special), (0, 1): _f(rng, k * n - short, np.float16),
                (0, 2): 4 * m * n}
    return make


TILED = file_src("bench/shaders/gemm_tiled_dawn.wgsl")
# the staging loop as production WGSL often writes it (each invocation from its own index on, a
# loop whose exit differs between invocations: Tint's uniformity analysis would refuse the matrix
# ops after it, hence the filter); the matrix ops after it run in uniform control flow again
TILED_LANE_LOOP = "diagnostic(off, chromium.subgroup_matrix_uniformity);\n" + TILED.replace(
    "    for (var i = 0u; i < BM * BK / 128u; i++) {\n      let e = t + i * 128u;",
    "    for (var e = t; e < BM * BK; e += 128u) {")
# no barrier after the multiply-adds: the next K step's staging writes race the loads before it
TILED_RACE = TILED.replace("    }\n    workgroupBarrier();\n  }", "    }\n  }")
# C staged back through workgroup memory (a matrix store there, a barrier, then every invocation
# copying elements out with scalar stores), as kernels with ragged edges do
TILED_STAGED_STORE = TILED.replace("var<workgroup> tb", "var<workgroup> tc: array<f32, BM * BN>;\nvar<workgroup> tb").replace(
    "  subgroupMatrixStore(&c, (row0 + sr) * N + col0 + sc, acc, false, N);",
    "  subgroupMatrixStore(&tc, sr * BN + sc, acc, false, BN);\n  workgroupBarrier();\n"
    "  for (var e = t; e < BM * BN; e += 128u) {\n"
    "    c[(row0 + e / BN) * N + col0 + e % BN] = tc[e];\n  }")
# two accumulators per subgroup in an array (a 32 x 64 tile per workgroup, each subgroup 16 x 32),
# indexed by a loop counter
TILED_ARRAY = TILED.replace("const BN = 32u;", "const BN = 64u;").replace(
    "let sc = (sg % 2u) * 16u;", "let sc = (sg % 2u) * 32u;").replace(
    "var acc = subgroup_matrix_result<f32, 16, 16>();", "var acc: array<subgroup_matrix_result<f32, 16, 16>, 2>;").replace(
    "      tb[e] = b[(k0 + e / BN) * N + col0 + e % BN];\n    }",
    "    }\n    for (var i = 0u; i < BK * BN / 128u; i++) {\n      let e = t + i * 128u;\n"
    "      tb[e] = b[(k0 + e / BN) * N + col0 + e % BN];\n    }").replace(
    "      let r = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>>(&tb, kk * BN + sc, false, BN);\n"
    "      acc = subgroupMatrixMultiplyAccumulate(l, r, acc);",
    "      for (var j = 0u; j < 2u; j++) {\n"
    "        let r = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>>(&tb, kk * BN + sc + j * 16u, false, BN);\n"
    "        acc[j] = subgroupMatrixMultiplyAccumulate(l, r, acc[j]);\n      }").replace(
    "  subgroupMatrixStore(&c, (row0 + sr) * N + col0 + sc, acc, false, N);",
    "  for (var j = 0u; j < 2u; j++) {\n"
    "    subgroupMatrixStore(&c, (row0 + sr) * N + col0 + sc + j * 16u, acc[j], false, N);\n  }")
# the matrix ops under a branch on the invocation index (whole subgroups take it, but only the
# interpreter can see that)
TILED_BRANCH = "diagnostic(off, chromium.subgroup_matrix_uniformity);\n" + TILED.replace(
    "      acc = subgroupMatrixMultiplyAccumulate(l, r, acc);",
    "      if (t < 64u) {\n        acc = subgroupMatrixMultiplyAccumulate(l, r, acc);\n      }")


# (id, profile, subgroup size or None, source, constants, bindings, grid, expected way)
CASES = [
    ("gemm_simple-h200", "nvidia-h200", None, file_src("bench/shaders/gemm_simple.wgsl"),
     {"M": 64, "N": 64, "K": 64}, gemm_case("f16", "f32", 64), (4, 4, 1), "compiled"),
    ("gemm_dawn-h200", "nvidia-h200", None, file_src("emu/examples/gemm_dawn.wgsl"),
     {"M": 96, "N": 64, "K": 48}, lambda rng: gemm_case("f16", "f32", 96)(rng), (2, 3, 1), "compiled"),
    ("gemm_wgpu-h200", "nvidia-h200", None, file_src("emu/examples/gemm_wgpu.wgsl"),
     {"M": 64, "N": 64, "K": 64}, gemm_case("f16", "f32", 64), (4, 4, 1), "compiled"),
    ("gemm_dawn-reference-sg64", "reference", 64, file_src("emu/examples/gemm_dawn.wgsl"),
     {"M": 64, "N": 64, "K": 64}, gemm_case("f16", "f32", 64), (2, 2, 1), "compiled"),
    ("gemm_dawn-ampere", "nvidia-ampere", None, file_src("emu/examples/gemm_dawn.wgsl"),
     {"M": 64, "N": 64, "K": 64}, gemm_case("f16", "f32", 64), (2, 2, 1), "compiled"),
    ("specials-h200", "nvidia-h200", None, file_src("bench/shaders/gemm_simple.wgsl"),
     {"M": 64, "N": 64, "K": 64}, gemm_case("f16", "f32", 64, special=True), (4, 4, 1), "special"),
    ("zeros-h200", "nvidia-h200", None, file_src("bench/shaders/gemm_simple.wgsl"),
     {"M": 64, "N": 64, "K": 64}, gemm_case("f16", "f32", 64, zeros=True), (4, 4, 1), "compiled"),
    ("out-of-bounds-h200", "nvidia-h200", None, file_src("bench/shaders/gemm_simple.wgsl"),
     {"M": 64, "N": 64, "K": 64}, gemm_case("f16", "f32", 64, short=100), (4, 4, 1), "handed back"),
    ("overlapping-stores", "nvidia-h200", None, OVERLAP, {},
     lambda rng: {(0, 0): _f(rng, 1024, np.float16), (0, 1): _f(rng, 256, np.float16), (0, 2): 4 * 16 * 32},
     (2, 1, 1), "handed back"),
    # the two subgroups store the same tile (caught per cell of the tiles' grid)
    ("same-tile-stores", "nvidia-h200", None, store_at(64, 0, 32), {},
     lambda rng: {(0, 0): _f(rng, 1024, np.float16), (0, 1): _f(rng, 256, np.float16), (0, 2): 4 * 16 * 32},
     (2, 1, 1), "handed back"),
    # the two subgroups' tiles meet in the second range of elements
    ("overlapping-stores-far", "nvidia-h200", None, store_at(200000, 8, 32), {},
     lambda rng: {(0, 0): _f(rng, 1024, np.float16), (0, 1): _f(rng, 256, np.float16), (0, 2): 4 << 18},
     (2, 1, 1), "handed back"),
    # tiles of rows 1024 apart, each across the two ranges, side by side: disjoint
    ("stores-across-ranges", "nvidia-h200", None, store_at(130000, 16, 1024), {},
     lambda rng: {(0, 0): _f(rng, 1024, np.float16), (0, 1): _f(rng, 256, np.float16), (0, 2): 4 << 18},
     (2, 1, 1), "compiled"),
    ("step-limit", "nvidia-h200", None, HUNG, {},
     lambda rng: {(0, 0): _f(rng, 512, np.float16), (0, 1): 512}, (1, 1, 1), "handed back"),
    ("int8-declined", "nvidia-h200", None, INT8, {},
     lambda rng: {(0, 0): rng.integers(-2**31, 2**31, 128, dtype=np.int64).astype(np.int32),
                  (0, 1): rng.integers(-2**31, 2**31, 128, dtype=np.int64).astype(np.int32), (0, 2): 1024},
     (1, 1, 1), "declined"),
    ("staged_f16_gemm-declined", "nvidia-h200", None, file_src("tests/shaders/staged_f16_gemm.wgsl"),
     {}, None, None, "declined"),
    # tiles of A and B staged through workgroup memory between barriers (workgroup mode)
    ("gemm_tiled_dawn-h200", "nvidia-h200", None, TILED, {"M": 64, "N": 96, "K": 96},
     tiled_case(64, 96, 96), (3, 2, 1), "compiled"),
    ("gemm_tiled_dawn-reference", "reference", 32, TILED, {"M": 64, "N": 64, "K": 64},
     tiled_case(64, 64, 64), (2, 2, 1), "compiled"),
    # 64-lane subgroups (two a workgroup) and RDNA3's lane map with duplicated elements; Ampere's
    ("gemm_tiled_dawn-rdna3-sg64", "amd-rdna3", 64, TILED, {"M": 64, "N": 64, "K": 64},
     tiled_case(64, 64, 64), (2, 2, 1), "compiled"),
    ("gemm_tiled_dawn-ampere", "nvidia-ampere", None, TILED, {"M": 64, "N": 64, "K": 64},
     tiled_case(64, 64, 64), (2, 2, 1), "compiled"),
    ("gemm_tiled_dawn-specials", "nvidia-h200", None, TILED, {"M": 64, "N": 64, "K": 64},
     tiled_case(64, 64, 64, special=True), (2, 2, 1), "special"),
    ("gemm_tiled_dawn-out-of-bounds", "nvidia-h200", None, TILED, {"M": 64, "N": 64, "K": 64},
     tiled_case(64, 64, 64, short=100), (2, 2, 1), "handed back"),
    ("gemm_tiled_wgpu-h200", "nvidia-h200", None, file_src("bench/shaders/gemm_tiled_wgpu.wgsl"),
     {"M": 96, "N": 64, "K": 64}, tiled_case(96, 64, 64), (2, 3, 1), "compiled"),
    ("gemm_tiled-lane-loop", "nvidia-h200", None, TILED_LANE_LOOP, {"M": 64, "N": 64, "K": 64},
     tiled_case(64, 64, 64), (2, 2, 1), "compiled"),
    ("gemm_tiled-staged-store", "nvidia-h200", None, TILED_STAGED_STORE, {"M": 64, "N": 64, "K": 64},
     tiled_case(64, 64, 64), (2, 2, 1), "compiled"),
    ("gemm_tiled-accumulator-array", "nvidia-h200", None, TILED_ARRAY, {"M": 64, "N": 128, "K": 64},
     tiled_case(64, 128, 64), (2, 2, 1), "compiled"),
    ("gemm_tiled-race", "nvidia-h200", None, TILED_RACE, {"M": 64, "N": 64, "K": 64},
     tiled_case(64, 64, 64), (2, 2, 1), "handed back"),
    ("gemm_tiled-branch-declined", "nvidia-h200", None, TILED_BRANCH, {"M": 64, "N": 64, "K": 64},
     tiled_case(64, 64, 64), (2, 2, 1), "declined"),
]
# tiles of every shape the profiles have; the multiply-add models mma_fast does not cover (the
# chained IEEE ones, CDNA3's) leave the kernel to the interpreter
for prof, sg, t_in, t_acc, m, n, k, way in [
        ("nvidia-h200", 32, "f16", "f16", 16, 16, 16, "compiled"),
        ("amd-rdna3", 32, "f16", "f32", 16, 16, 16, "compiled"),
        ("amd-rdna3", 64, "f16", "f16", 16, 16, 16, "compiled"),
        ("intel-xe2", 16, "f16", "f32", 8, 16, 16, "compiled"),
        ("reference", 16, "f16", "f32", 8, 8, 8, "compiled"),
        ("apple-m1", 32, "f32", "f32", 8, 8, 8, "declined"),
        ("amd-cdna3", 64, "f16", "f32", 32, 32, 8, "declined"),
        ("lavapipe", 8, "f16", "f32", 8, 8, 8, "declined")]:
    for layout in ("row_major", "col_major"):
        CASES.append((f"tile-{prof}-sg{sg}-{t_in}-{t_acc}-{m}x{n}x{k}-{layout}", prof, sg,
                      dawn_gemm(t_in, t_acc, m, n, k, layout=layout, wg=2 * sg),
                      {"M": 2 * m, "N": 4 * n, "K": 4 * k},
                      (lambda m, n, k, t_in, t_acc: lambda rng: {
                          (0, 0): _f(rng, 8 * m * k, np.float16 if t_in == "f16" else np.float32),
                          (0, 1): _f(rng, 16 * k * n, np.float16 if t_in == "f16" else np.float32),
                          (0, 2): 8 * m * n * (2 if t_acc == "f16" else 4)})(m, n, k, t_in, t_acc),
                      (4, 1, 1), way))


# multiply-adds outside the common case: both matrix paths of the H200 (tile16 for f32
# accumulators, which answers zeros and leaves subnormal results, infinities and NaNs to mma_call's
# kernel; mma_fast's for f16, which leaves it only infinities and NaNs) and Intel's exact model
# (mma_fast's, which also leaves it exact sums wider than 64 bits: C's f32 subnormals beside
# products near 1)
for prof, sg, t_in, t_acc, m, n, k in [("nvidia-h200", 32, "f16", "f32", 16, 16, 16),
                                       ("nvidia-h200", 32, "f16", "f16", 16, 16, 16),
                                       ("intel-xe2", 16, "f16", "f32", 8, 16, 16)]:
    for kind in ("subnormal", "cancel", "special"):
        for layout in ("row_major", "col_major"):
            CASES.append((f"{kind}-{prof}-{t_in}-{t_acc}-{m}x{n}x{k}-{layout}", prof, sg,
                          dawn_gemm(t_in, t_acc, m, n, k, layout=layout, wg=2 * sg, c_in=True),
                          {"M": 2 * m, "N": 4 * n, "K": 4 * k},
                          (lambda m, n, k, t_in, t_acc, kind, layout: lambda rng: awkward(
                              rng, m, n, k, t_in, t_acc, kind, layout))(m, n, k, t_in, t_acc, kind, layout),
                          (4, 1, 1), "special" if kind == "special" or (kind, t_acc) == ("subnormal", "f32")
                          else "compiled"))


@pytest.fixture(autouse=True)
def small_dispatches_compiled(monkeypatch):
    """These cases are small: compile them anyway (normally the interpreter runs dispatches of
    fewer than MIN_SUBGROUPS subgroups)."""
    monkeypatch.setattr(coop_kernel, "MIN_SUBGROUPS", 1)


def run(monkeypatch, jit, profile, sg, src, consts, make, grid, file="case.wgsl"):
    monkeypatch.setenv("EMU_JIT", jit)
    # the step limit low enough for the 'step-limit' case to reach it
    dev = emu.Device(profile, subgroup_size=sg, jobs=2, max_steps=20000)
    mod = dev.create_shader_module(src, file)
    pipe = dev.create_compute_pipeline(mod, constants=consts)
    made, addressed = make(np.random.default_rng(7)), {}
    if callable(made):      # buffers reached by device address: the case makes them on this device
        made, addressed = made(dev)
    bufs = {key: dev.create_buffer(v) if isinstance(v, np.ndarray) else dev.create_buffer(size=v)
            for key, v in made.items()}
    try:
        warned = [str(w) for w in dev.dispatch(pipe, bufs, grid)]
    except EmuError as e:
        warned = ["error: " + str(e)]
    return pipe.pipeline, warned, {k: b.read(np.uint8).copy() for k, b in (bufs | addressed).items()}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_compiled_equals_interpreter(monkeypatch, case):
    name, profile, sg, src, consts, make, grid, way = case
    if make is None:        # only whether it is compiled
        dev = emu.Device(profile)
        pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "case.wgsl"), constants=consts)
        assert coop_kernel.compile_pipeline(pipe.pipeline) is None
        return
    _, want_w, want = run(monkeypatch, "0", profile, sg, src, consts, make, grid)
    p, got_w, got = run(monkeypatch, "1", profile, sg, src, consts, make, grid)
    assert got_w == want_w
    for key in want:
        assert np.array_equal(got[key], want[key]), f"binding {key} differs"
    k = getattr(p, "_jit", None)
    if way == "declined":
        assert not isinstance(k, coop_kernel.Kernel)
    else:
        assert isinstance(k, coop_kernel.Kernel), "not compiled"
        assert (k.handed_back == 0) == (way != "handed back"), f"expected {way}"
        if way != "handed back":      # whether some subgroup needed mma_call's kernel
            assert bool(k.spa.any()) == (way == "special"), f"expected {way}"
        # the machine code saved by that run (or an earlier one), loaded without numba's
        # dispatcher (emu/jit/native.py): the same bits again
        p, got_w, got = run(monkeypatch, "1", profile, sg, src, consts, make, grid)
        assert p._jit.mod.run.native is not None and p._jit.mod.run.numba is None, "not loaded natively"
        assert got_w == want_w
        for key in want:
            assert np.array_equal(got[key], want[key]), f"binding {key} differs (native)"


def test_jobs_do_not_change_bits(monkeypatch):
    """Chunks of workgroups on threads: the same bits as one thread."""
    monkeypatch.setenv("EMU_JIT", "1")      # (tests/fuzz sets it to 0 for the rest of a run)
    src = file_src("emu/examples/gemm_dawn.wgsl")
    outs = []
    for jobs in (1, 3):
        dev = emu.Device("nvidia-h200", jobs=jobs)
        pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "g.wgsl"),
                                           constants={"M": 128, "N": 128, "K": 64})
        rng = np.random.default_rng(1)
        bufs = {(0, 0): dev.create_buffer(_f(rng, 128 * 64, np.float16)),
                (0, 1): dev.create_buffer(_f(rng, 64 * 128, np.float16)), (0, 2): dev.create_buffer(size=4 * 128 * 128)}
        dev.dispatch(pipe, bufs, (4, 4, 1))
        assert pipe.pipeline._jit.handed_back == 0
        outs.append(bufs[(0, 2)].read(np.uint32))
    assert np.array_equal(outs[0], outs[1])


def test_disjoint_in_ranges_or_cells_agrees_with_the_whole():
    """The check that no element was stored by two subgroups, split into element ranges (one a
    thread), or per cell where the stores are tiles of one grid, says what it says over all
    elements: random logs of row- and column-major tiles, some overlapping, some across the
    ranges' ends, some on a grid (half the trials: one shape, offsets at the grid's cells)."""
    from emu.jit import coop_tiles
    rng = np.random.default_rng(5)
    seen, cells = set(), set()
    E = 256         # elements: past the last one any log here stores (< 210)
    for trial in range(600):
        n = int(rng.integers(1, 12))
        log = np.zeros((n, coop_kernel.LOG_COLS), np.int64)
        grid = trial % 2 == 0
        R, C, col = int(rng.integers(1, 5)), int(rng.integers(1, 5)), int(rng.integers(0, 2))
        st = (R if col else C) * int(rng.integers(1, 4)) + int(rng.integers(0, 2))
        for t in range(n):
            if not grid:
                R, C, col = int(rng.integers(1, 5)), int(rng.integers(1, 5)), int(rng.integers(0, 2))
                st = (R if col else C) + int(rng.integers(0, 6))
            nl, ln = (C, R) if col else (R, C)
            off = (int(rng.integers(0, 4)) * nl * st + int(rng.integers(0, st // ln)) * ln if grid
                   else int(rng.integers(0, 60)))
            log[t] = [0 if grid else int(rng.integers(0, 2)) * 100, t // int(rng.integers(1, 3)), off,
                      st, R, C, col]
        assert max(b + o + s * ((C if c else R) - 1) + (R if c else C) for b, _, o, s, R, C, c in log) <= E
        whole = coop_tiles._disjoint(log, n, np.full(E, -1, np.int64))
        seen.add(whole)
        on_grid = coop_tiles._disjoint_grid(log, n)
        assert on_grid in (-1, int(whole)), trial
        cells.add(on_grid)
        if grid:
            assert on_grid != -1, trial
        for parts in (1, 2, 3, 7):
            got = all(coop_tiles._disjoint_part(log, n, np.full(E * (p + 1) // parts - E * p // parts, -1,
                                                                   np.int64), E * p // parts)
                      for p in range(parts))
            assert got == whole, (trial, parts)
    assert seen == {True, False} and cells == {-1, 0, 1}


def test_guided_chunks_cover_the_range_and_shrink():
    from emu.numerics import pool
    for n, jobs, smallest in ((4096, 16, 4), (1024, 16, 1), (7, 3, 1), (100, 2, 30), (1, 4, 1)):
        b = pool.guided(n, jobs, smallest)
        assert b[0][0] == 0 and b[-1][1] == n and all(x[1] == y[0] for x, y in zip(b, b[1:]))
        sizes = [z - a for a, z in b]
        assert all(x >= y for x, y in zip(sizes, sizes[1:-1])) and min(sizes[:-1] or [smallest]) >= min(smallest, n)
    assert len(pool.guided(4096, 16, 4)) < 4096 // 16
    a = np.random.default_rng(0).integers(0, 255, (1, 5 << 20), dtype=np.uint8)
    c = pool.copy(a, 4)
    assert c is not a and np.array_equal(c, a)


def test_special_kernel_unavailable_hands_back(monkeypatch):
    """Where mma_call's kernel cannot be built, a dispatch that needs it goes to the interpreter
    (said once, in a warning) with the interpreter's bits, and later ones go there without trying
    again."""
    from emu.numerics import mma_call
    src = dawn_gemm("f16", "f32", 16, 16, 16, wg=64, c_in=True)
    make = lambda rng: awkward(rng, 16, 16, 16, "f16", "f32", "special", "row_major")  # noqa: E731
    consts = {"M": 32, "N": 64, "K": 64}
    _, _, want = run(monkeypatch, "0", "nvidia-h200", 32, src, consts, make, (4, 1, 1))
    calls = []

    def broken(ab, cd):
        calls.append((ab, cd))
        raise RuntimeError("no compiler here")
    monkeypatch.setattr(mma_call, "address", broken)
    monkeypatch.setenv("EMU_JIT", "1")
    dev = emu.Device("nvidia-h200", jobs=2)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "case.wgsl"), constants=consts)
    for attempt in range(2):
        bufs = {key: dev.create_buffer(v) if isinstance(v, np.ndarray) else dev.create_buffer(size=v)
                for key, v in make(np.random.default_rng(7)).items()}
        with pytest.warns(RuntimeWarning, match="outside the common case") if attempt == 0 else nullcontext():
            dev.dispatch(pipe, bufs, (4, 1, 1))
        for key in want:
            assert np.array_equal(bufs[key].read(np.uint8), want[key]), f"binding {key} differs"
    k = pipe.pipeline._jit
    assert k.handed_back == 2 and len(calls) == 1 and not k.spa.any()


def test_stamp_covers_what_generated_kernels_call():
    """fuse._CALLED (hashed into every generated kernel's source, since numba's cache does not see
    a callee change) names every emu module a generated kernel imports, and what those import
    from emu in turn."""
    import ast
    import importlib
    from emu.jit import fuse
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(file_src("bench/shaders/gemm_simple.wgsl"), "g.wgsl"))
    src = coop_kernel._CoopGen(pipe.pipeline).build()
    vec = dev.create_compute_pipeline(dev.create_shader_module(file_src("tests/shaders/vecadd.wgsl"), "v.wgsl"))
    src += "\n" + fuse.compile_pipeline(vec.pipeline).source
    root = ROOT / "emu"

    def imported(tree, pkg):
        """The emu modules a module's top-level from-imports name (a module, or the one holding a
        name); in-function imports are Python-side helpers, not compiled callees."""
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and (node.level == 1 or (node.module or "").startswith("emu")):
                base = f"{pkg}.{node.module}" if node.level == 1 and node.module else (pkg if node.level else node.module)
                for a in node.names:
                    try:
                        yield importlib.import_module(f"{base}.{a.name}")
                    except ModuleNotFoundError:
                        yield importlib.import_module(base)
    todo = list(imported(ast.parse(src), ""))
    seen = set()
    while todo:
        mod = todo.pop()
        path = Path(mod.__file__).resolve().relative_to(root).as_posix()
        if path in seen:
            continue
        seen.add(path)
        if path.startswith("numerics/"):     # (emu.jit.coop_kernel: the generator, for two functions)
            todo += imported(ast.parse(Path(mod.__file__).read_text()), mod.__name__.rsplit(".", 1)[0])
    assert seen and seen <= set(fuse._CALLED), sorted(seen - set(fuse._CALLED))


# -- every SPIR-V test shader (tests/shaders/spirv: GLSL through glslang, SPIR-V assembly), compiled
# against interpreted as the WGSL cases above; 'fused': taken by the fusion JIT (emu/jit/fuse.py).
# The JIT sees only the IR, so a SPIR-V kernel goes the way its WGSL twin would: Block-decorated
# structs are buffers whose members it indexes; workgroup memory around cooperative ops goes to its
# workgroup mode; vectors, structs and arrays in registers and private memory, calls (inlined) and
# 8/16/64-bit integers compile; subgroup operations leave a kernel to the interpreter whatever its
# front end.
SPIRV = ROOT / "tests" / "shaders" / "spirv"


def _h(rng, *shape):
    return rng.uniform(-2, 2, shape).astype(np.float16)


def _pairs(rng, n):
    """n 16-bit floats packed two to a u32 word (low half first), as the pair kernels read them."""
    return _h(rng, n).view(np.uint32)


def _control(rng):
    import struct
    from emu.isa.ir import PUSH_CONSTANTS
    x = rng.integers(-40, 40, 64).astype(np.int32)
    return {(0, 0): x, (0, 1): 64 * 8 * 4, (1, 0): 4, PUSH_CONSTANTS: np.frombuffer(struct.pack("<iI", 3, 20), np.uint8)}


def _sizes(*words, extra=None):
    """Bindings with a push-constant block of u32 `words` (emu.isa.ir.PUSH_CONSTANTS)."""
    from emu.isa.ir import PUSH_CONSTANTS
    return {PUSH_CONSTANTS: np.array(words, np.uint32), **(extra or {})}


def _push(raw: bytes, extra: dict) -> dict:
    from emu.isa.ir import PUSH_CONSTANTS
    return {PUSH_CONSTANTS: np.frombuffer(raw, np.uint8), **extra}


def _i64(rng, n):
    return rng.integers(-2 ** 63, 2 ** 63 - 1, n, dtype=np.int64)


def _addressed(rng):
    """buffer_address.comp's scenario (tests/frontend/spirv/test_spirv_buffer_address.py): the
    buffers it reaches by the addresses in its push constants, made on the run's device and
    compared by name; six list nodes, the last one's next address 0."""
    def on(dev):
        bufs = {n: dev.create_buffer(size=s) for n, s in {"src": 64 * 16, "dst": 64 * 16, "nodes": 8 * 16,
                                                          "counter": 8}.items()}
        addr = {n: dev.buffer_device_address(b) for n, b in bufs.items()}
        bufs["src"].write(rng.normal(0, 1, (64, 4)).astype(np.float32).tobytes())
        bufs["nodes"].write(b"".join(struct.pack("<IIQ", 10 + k, 0, addr["nodes"] + 16 * (k + 1) if k < 5 else 0)
                                     for k in range(8)))
        push = struct.pack("<4Q", addr["src"], addr["dst"], addr["nodes"], addr["counter"])
        return _push(push, {(0, 0): 64 * 16}), bufs
    return on


def _int_dot(rng):
    """64 uvec4 words, some accumulators next to the saturation bounds (as test_spirv_int_dot.py)."""
    w = rng.integers(0, 1 << 32, (64, 4), dtype=np.uint64).astype(np.uint32)
    w[:16, 2] = 0x7FFFFFFF - rng.integers(0, 40000, 16)
    w[16:32, 2] = 0x80000000 + rng.integers(0, 40000, 16)
    w[:32, 3] = 0xFFFFFFFF - rng.integers(0, 80000, 32)
    return {(0, 0): w, (0, 1): 64 * 16 * 4}


def _q8_blocks(rng):
    """12 rows of 8 blocks: four int8 quants and an f16 scale in 8 bytes (as test_spirv_nv2_decode.py)."""
    raw = np.zeros((96, 8), np.uint8)
    raw[:, :4] = rng.integers(-128, 128, (96, 4)).astype(np.int8).view(np.uint8)
    raw[:, 4:6] = rng.uniform(-2, 2, 96).astype(np.float16).view(np.uint8).reshape(96, 2)
    return {(0, 0): raw, (0, 1): 16 * 32 * 2}


def _specials(rng, n):
    """n f32: zeros, subnormals, infinities, NaNs, 1, -1 and values from 1e-30 to 1e30 of both signs."""
    special = np.array([0, 0x80000000, 1, 0x80000001, 0x007FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000,
                        0xFFC00001, 0x3F800000, 0xBF800000, 0x42B17218, 0xC2B17218, 0x40490FDB], np.uint32)
    v = (rng.standard_normal(n) * 10.0 ** rng.integers(-30, 31, n)).astype(np.float32)
    v = np.where(rng.random(n) < 0.5, rng.uniform(-8, 8, n).astype(np.float32), v).astype(np.float32)
    v[:special.size] = special.view(np.float32)
    return v


def _blocks(rng):
    """private_calls_blocks.comp's inputs: 64 blocks (an f16 scale, six int8 quants), 64 vec2."""
    raw = np.zeros((64, 8), np.uint8)
    raw[:, :2] = rng.uniform(-2, 2, 64).astype(np.float16).view(np.uint8).reshape(64, 2)
    raw[:, 2:] = rng.integers(-128, 128, (64, 6)).astype(np.int8).view(np.uint8)
    return _push(struct.pack("<If2iH2x", 64, 0.75, -3, 1234, 0xF0F3), {
        (0, 0): raw, (0, 1): rng.standard_normal(128).astype(np.float32), (0, 2): 64 * 16, (0, 3): 64 * 2})


# (file, profile, subgroup size, constants, bindings, grid, expected way)
def _subgroup_inputs(rng):
    """subgroup_ops.comp's: f32 with zeros of both signs, infinities, a NaN and subnormals; ints."""
    x = rng.standard_normal(192).astype(np.float32) * 4
    x[[5, 40, 77, 100, 130, 150, 170, 190]] = [-0.0, 0.0, np.inf, 1e-40, -1e-39, -np.inf, 3e38, -2e-45]
    x[140] = np.nan                     # the third workgroup's partial subgroup only
    y = rng.integers(-1000, 1000, 192).astype(np.int32)
    return _sizes(45, 3, extra={(0, 0): x, (0, 1): y, (0, 2): 192 * 16 * 4, (0, 3): 192 * 16 * 4, (0, 4): 24 * 4})


def _f16_arith(rng):
    """f16_arith.comp's inputs, 256 rows: f16 pairs of every kind (random bits, which hold
    subnormals, infinities and NaNs, with zeros of both signs, +-65504, equal pairs mixed in),
    integers around f16's range (65519 / 65520 rounding apart) and over i32's, int8s, and f32s
    around the 8- and 16-bit ranges with infinities and a NaN."""
    n = 256
    a = rng.integers(0, 1 << 16, n).astype(np.uint16)
    b = rng.integers(0, 1 << 16, n).astype(np.uint16)
    a[:12] = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7BFF, 0xFBFF, 0x0001, 0x8001, 0x3C00, 0x0400, 0x7D01]
    b[:12] = [0x8000, 0x0000, 0x7C00, 0x7C00, 0x3C00, 0x7BFF, 0x0001, 0x0001, 0x3800, 0x0000, 0x0001, 0x3C00]
    b[100:140] = a[100:140]                             # equal pairs
    mid = rng.uniform(-300, 300, n).astype(np.float16)  # ordinary values, for the products
    a[140:200], b[140:200] = mid[140:200].view(np.uint16), mid[80:140].view(np.uint16)
    ints = rng.integers(-2 ** 31, 2 ** 31, n, dtype=np.int64).astype(np.int32)
    ints[:16] = [65504, 65519, 65520, -65519, -65520, 65535, 32767, -32768, 2 ** 24 + 1, -(2 ** 31), 2 ** 31 - 1,
                 2049, 4097, -2049, 0, 1]
    ints[16:120] = rng.integers(-70000, 70000, 104)
    f = rng.uniform(-40000, 40000, n).astype(np.float32)
    f[:10] = [np.inf, -np.inf, np.nan, 127.9, -128.9, 255.5, -0.5, 32767.9, -32768.9, 1e-40]
    f[10:100] = rng.uniform(-300, 300, 90)
    return {(0, 0): a.view(np.float16), (0, 1): b.view(np.float16), (0, 2): ints,
            (0, 3): rng.integers(-128, 128, n).astype(np.int8), (0, 4): f, (0, 5): n * 24 * 2, (0, 6): n * 8 * 4}


SPIRV_CASES = [
    # f16 arithmetic, integer <-> f16 and float -> 8/16-bit integer conversions (the fusion JIT's
    # rules beside the interpreter's), on both scalar models
    ("f16_arith.comp", "nvidia-h200", None, {}, _f16_arith, (4, 1, 1), "fused"),
    ("f16_arith.comp#reference", "reference", None, {}, _f16_arith, (4, 1, 1), "fused"),
    # subgroupBarrier() ordering shared memory within each subgroup: scalars (the fusion JIT) and
    # a cooperative tile staged per subgroup, copied out with bounds (mul_mm's partial tiles)
    ("subgroup_barrier_stage.comp", "nvidia-h200", None, {}, lambda rng: _sizes(0, extra={(0, 0): 2 * 128 * 4}),
     (2, 1, 1), "fused"),
    ("gemm_stage_subgroup.comp", "nvidia-h200", None, {"0": 40, "1": 56, "2": 48}, lambda rng: {
        (0, 0): _h(rng, 48 * 48), (0, 1): _h(rng, 48 * 64), (0, 2): 4 * 40 * 56}, (1, 3, 1), "compiled"),
    ("workgroup_structs.comp", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): rng.integers(-2 ** 31, 2 ** 31, 128, dtype=np.int64).astype(np.int32), (0, 1): _h(rng, 256),
        (0, 2): 128 * 6 * 4}, (2, 1, 1), "fused"),
    ("int_bits.comp", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): np.concatenate([np.array([0, -1, 1, -2 ** 31, 2 ** 31 - 1, 8, -8, 96], np.int32),
                                rng.integers(-2 ** 31, 2 ** 31, 120, dtype=np.int64).astype(np.int32)]),
        (0, 1): 128 * 6 * 4}, (2, 1, 1), "fused"),
    ("matrix_buffers.comp", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): _h(rng, 64 * 8), (0, 1): rng.standard_normal(64 * 8).astype(np.float32), (0, 2): 64 * 4 * 16},
     (2, 1, 1), "fused"),
    # vectors and rows of workgroup arrays loaded and stored whole through a pointer to them
    ("workgroup_vectors.comp", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): rng.standard_normal(4 * 96).astype(np.float32), (0, 1): 3 * 96 * 16}, (3, 1, 1), "fused"),
    ("control.comp", "reference", 32, {"0": 32}, _control, (2, 1, 1), "declined"),
    ("coop_ops.comp", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): _h(rng, 256), (0, 1): _h(rng, 256), (0, 2): rng.uniform(0.5, 2, 256).astype(np.float32),
        (0, 3): 1024, (0, 4): 512, (0, 5): rng.integers(-128, 128, 512).astype(np.int8),
        (0, 6): rng.integers(-128, 128, 512).astype(np.int8), (0, 7): 1024}, (1, 1, 1), "declined"),
    ("coop_elem_probe.comp", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): rng.uniform(-4, 4, 256).astype(np.float32), (0, 1): rng.uniform(0.5, 2, 256).astype(np.float32),
        (0, 2): 6 * 1024}, (1, 1, 1), "declined"),
    ("coop_elem_probe2.comp", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): rng.uniform(-4, 4, 256).astype(np.float32), (0, 1): rng.uniform(0.5, 2, 256).astype(np.float32),
        (0, 2): 5 * 1024}, (1, 1, 1), "declined"),
    ("scalar_contract_probe.comp", "nvidia-h200", None, {}, lambda rng: {
        (0, k): rng.uniform(-4, 4, 1024).astype(np.float32) for k in range(3)} | {(0, 3): 4 * 2048},
     (4, 1, 1), "fused"),
    ("div_add.comp", "nvidia-h200", None, {}, lambda rng: {
        (0, k): rng.standard_normal(4 * 256).astype(np.float32) for k in range(3)} | {(0, 3): 4 * 4 * 256},
     (4, 1, 1), "fused"),
    ("ext_maint1.spvasm", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): _h(rng, 256), (0, 1): _h(rng, 256), (0, 2): np.full(7 * 256, -7, np.float32), (0, 3): 32 * 8 * 8},
     (1, 1, 1), "declined"),
    ("ext_maint1_nv2.spvasm", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): _h(rng, 256), (0, 1): _h(rng, 256), (0, 2): np.full(7 * 256, -7, np.float32), (0, 3): 32 * 8 * 8},
     (1, 1, 1), "declined"),
    ("f64.comp", "nvidia-h200", None, {"0": 0.1}, lambda rng: _push(struct.pack("<I4xdq", 7, 0.8125, -3), {
        (0, 0): rng.standard_normal(64), (0, 1): rng.standard_normal(64), (0, 2): 43 * 64 * 8}), (1, 1, 1), "declined"),
    ("int64.comp", "nvidia-h200", None, {"0": -7, "1": 2 ** 64 - 5}, lambda rng: _push(
        struct.pack("<I4xqQQ", 9, -5, 2 ** 64 - 256, 2 ** 32 - 1), {
            (0, 0): _i64(rng, 64), (0, 1): _i64(rng, 64), (0, 2): 38 * 64 * 8, (0, 3): 71 * 8}), (1, 1, 1), "declined"),
    ("layout64.comp", "nvidia-h200", None, {}, lambda rng: _push(struct.pack("<f12xqqd8x", 2.0, 3, -11, 0.25), {
        (0, 0): rng.standard_normal(4 * 16), (0, 1): 16 + 4 * 72}), (1, 1, 1), "declined"),
    ("switch64.spvasm", "reference", None, {}, lambda rng: {(0, 0): np.array([5000000000, -3, 705032704, 4], np.int64)},
     (1, 1, 1), "declined"),
    ("int16.comp", "lavapipe", None, {"0": -1213}, lambda rng: _push(struct.pack("<IhH", 9, -30000, 0xF0F0), {
        (0, 0): rng.integers(-2 ** 15, 2 ** 15, 64).astype(np.int16), (0, 1): rng.integers(0, 2 ** 16, 128).astype(np.uint16),
        (0, 2): 42 * 64 * 2, (0, 3): 12 * 64 * 4,
        (0, 4): np.frombuffer(struct.pack("<Hhhh8x", 40503, 3, -1234, 32767), np.uint8)}),
     (1, 1, 1), "declined"),
    ("mul_extended.comp", "nvidia-h200", None, {}, lambda rng: _push(struct.pack("<III", 7, 2454267027, 3), {
        (0, 0): rng.integers(0, 2 ** 32, 64).astype(np.uint32), (0, 1): rng.integers(0, 2 ** 32, 64).astype(np.uint32),
        (0, 2): 10 * 64 * 4}), (1, 1, 1), "fused"),
    ("mixed_dot.comp", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): _h(rng, 128), (0, 1): _h(rng, 128), (0, 2): rng.standard_normal(64).astype(np.float32),
        (0, 3): 3 * 64 * 4, (0, 4): 2 * 64 * 2}, (1, 1, 1), "fused"),           # f16 arithmetic (jitf16)
    ("aliased_bindings.comp", "lavapipe", None, {}, lambda rng: {
        (0, 0): rng.integers(0, 2 ** 32, 64, dtype=np.uint64).astype(np.uint32), (0, 1): 2 * 64 * 4}, (1, 1, 1), "fused"),
    ("alias_binding.comp", "lavapipe", None, {}, lambda rng: {
        (0, 0): rng.integers(0, 2 ** 32, 64, dtype=np.uint64).astype(np.uint32), (0, 1): 4 * 16 * 4}, (1, 1, 1), "fused"),
    ("ncnn_idioms.comp", "nvidia-h200", None, {"0": 4}, lambda rng: {
        (0, 0): np.concatenate([rng.uniform(-2, 2, 16).astype(np.float16).view(np.uint8),
                                rng.integers(-4, 5, 32).astype(np.float32).view(np.uint8)]),
        (0, 1): 16 * 16 * 2 + 32 * 16 + 32 * 4}, (1, 1, 1), "compiled"),       # f16 conversions (jitf16)
    ("minifloat.spvasm", "lavapipe", None, {}, lambda rng: {
        (0, 0): rng.integers(0, 2 ** 32, 64, dtype=np.uint64).astype(np.uint32), (0, 1): 6 * 64 * 16}, (1, 1, 1), "declined"),
    ("mul_extended_widths.spvasm", "reference", None, {}, lambda rng: {
        (0, 0): rng.integers(0, 2 ** 64, 64, dtype=np.uint64), (0, 1): rng.integers(0, 2 ** 64, 64, dtype=np.uint64),
        (0, 2): 9 * 64 * 8}, (1, 1, 1), "fused"),
    # A and B staged through shared memory between barrier()s (workgroup mode)
    ("gemm_tiled_khr.comp", "nvidia-h200", None, {"0": 64, "1": 96, "2": 64}, lambda rng: {
        (0, 0): _h(rng, 64 * 64), (0, 1): _h(rng, 64 * 96), (0, 2): 4 * 64 * 96}, (3, 2, 1), "compiled"),
    ("gemm_coopmat.comp", "nvidia-h200", None, {"0": 64, "1": 48, "2": 80}, lambda rng: {
        (0, 0): _h(rng, 64 * 80), (0, 1): _h(rng, 80 * 48), (0, 2): 4 * 64 * 48}, (3, 4, 1), "compiled"),
    ("gemm_flexible.comp", "nvidia-h200", None, {"0": 64, "1": 64, "2": 96}, lambda rng: {
        (0, 0): _h(rng, 64 * 96), (0, 1): _h(rng, 96 * 64), (0, 2): 4 * 64 * 64}, (2, 2, 1), "compiled"),
    # infinities, NaNs, zeros and subnormals: some 16x16 steps of the 32x32 tiles leave the fast
    # paths for mma_call's kernel
    ("gemm_flexible.comp#special", "nvidia-h200", None, {"0": 64, "1": 64, "2": 96}, lambda rng: {
        (0, 0): _f(rng, 64 * 96, np.float16, special=True),
        (0, 1): np.where(rng.random(96 * 64) < 0.1, np.float16(3e-6), _h(rng, 96 * 64)).astype(np.float16),
        (0, 2): 4 * 64 * 64}, (2, 2, 1), "special"),
    ("gemm_spec_tiles.comp", "nvidia-h200", None, {"0": 64, "1": 16, "2": 16, "3": 16, "4": 32}, lambda rng: _sizes(
        40, 56, 48, extra={(0, 0): _h(rng, 40 * 48), (0, 1): _h(rng, 56 * 48), (0, 2): 4 * 40 * 56}),
     (2, 2, 1), "declined"),
    ("matmul_naive.comp", "nvidia-h200", None, {}, lambda rng: _sizes(
        40, 36, 24, extra={(0, 0): rng.standard_normal(40 * 24).astype(np.float32),
                           (0, 1): rng.standard_normal(24 * 36).astype(np.float32), (0, 2): 4 * 40 * 36,
                           (0, 3): np.array([0.75, 0], np.float32).view(np.uint32) | np.array([0, 3], np.uint32)}),
     (3, 3, 1), "fused"),
    ("mma_bf16.spvasm", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): rng.integers(0, 2**32, 4 * 128, dtype=np.uint64).astype(np.uint32) & np.uint32(0xBFFFBFFF),
        (0, 1): rng.integers(0, 2**32, 4 * 128, dtype=np.uint64).astype(np.uint32) & np.uint32(0xBFFFBFFF),
        (0, 2): rng.standard_normal(4 * 256).astype(np.float32), (0, 3): 4 * 4 * 256}, (4, 1, 1), "declined"),
    ("mma_fp8.spvasm", "nvidia-rtx4090", None, {}, lambda rng: {
        **{(0, k): rng.integers(0, 256, 1024).astype(np.uint8) for k in (0, 1, 3, 4)},
        (0, 2): rng.standard_normal(256).astype(np.float32), (0, 5): rng.standard_normal(256).astype(np.float16),
        (0, 7): (rng.standard_normal(32) * 300).astype(np.float32), **{(0, k): 32 for k in (8, 9, 10, 11)}},
     (1, 1, 1), "declined"),
    ("mma_f16_pairs.comp", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): _pairs(rng, 4 * 256), (0, 1): _pairs(rng, 4 * 256), (0, 2): rng.standard_normal(4 * 256).astype(np.float32),
        (0, 3): 4 * 4 * 256}, (4, 1, 1), "declined"),
    ("mma_int8.comp", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): rng.integers(-128, 128, 1024).astype(np.int8), (0, 1): rng.integers(-128, 128, 1024).astype(np.int8),
        (0, 2): rng.integers(-2 ** 31, 2 ** 31, 256, dtype=np.int64).astype(np.int32), (0, 3): 1536,
        (0, 4): rng.integers(0, 256, 1024).astype(np.uint8), (0, 5): rng.integers(0, 256, 1024).astype(np.uint8),
        (0, 6): rng.integers(0, 2 ** 32, 256, dtype=np.uint64).astype(np.uint32), (0, 7): 1536}, (1, 1, 1), "declined"),
    ("mma_mixed_sign.comp", "amd-rdna3", None, {}, lambda rng: {
        (0, 0): rng.integers(-128, 128, 256).astype(np.int8), (0, 1): rng.integers(0, 256, 256).astype(np.uint8),
        (0, 2): 1024}, (1, 1, 1), "declined"),
    ("nv2_2x2.spvasm", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): _h(rng, 1024), (0, 1): _h(rng, 1024), (0, 2): 1280 * 4}, (1, 1, 1), "declined"),
    ("nv2_element_write.spvasm", "nvidia-h200", None, {"0": 0}, lambda rng: {(0, 0): 64 * 32 * 4}, (1, 1, 1), "declined"),
    ("nv2_elementwise.spvasm", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): _h(rng, 64 * 32), (0, 1): _h(rng, 32 * 32), (0, 2): rng.standard_normal(64 * 32).astype(np.float32),
        (0, 3): 6 * 2048 * 4, (0, 4): 4 * 768 * 4}, (1, 1, 1), "declined"),
    ("nv2_lanes_probe.spvasm", "nvidia-h200", None, {"0": 64, "1": 64, "2": 128}, lambda rng: {
        (0, 0): 16 * 128, (0, 1): 4 * 128 * 256 * 8}, (1, 1, 1), "declined"),
    ("nv2_reduce.spvasm", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): _h(rng, 256), (0, 1): _h(rng, 256), (0, 2): rng.integers(-8, 9, 256).astype(np.float32),
        (0, 3): 4 * 5 * 256, (0, 4): 2 * 256}, (1, 1, 1), "declined"),
    ("nv2_tensor.spvasm", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): _h(rng, 50 * 32), (0, 1): _h(rng, 32 * 32), (0, 2): np.full(64 * 32, -7, np.float32),
        (0, 3): np.full(32 * 72, -7, np.float32)}, (1, 1, 1), "declined"),
    # a ragged B (too short): the fused kernel meets the out-of-bounds index and hands over
    ("matmul_naive.comp#short-b", "nvidia-h200", None, {}, lambda rng: _sizes(
        40, 36, 24, extra={(0, 0): rng.standard_normal(40 * 24).astype(np.float32),
                           (0, 1): rng.standard_normal(24 * 36 - 50).astype(np.float32), (0, 2): 4 * 40 * 36,
                           (0, 3): np.array([0.75, 0], np.float32).view(np.uint32) | np.array([0, 3], np.uint32)}),
     (3, 3, 1), "fused"),
    ("buffer_address.comp", "reference", None, {}, _addressed, (1, 1, 1), "declined"),
    ("coop_element_ptr.comp", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): rng.uniform(-4, 4, 512).astype(np.float32), (0, 1): 256 * 4}, (1, 1, 1), "declined"),
    ("int_dot.spvasm", "reference", None, {}, _int_dot, (1, 1, 1), "declined"),
    ("nv2_decode.spvasm", "nvidia-h200", None, {}, _q8_blocks, (1, 1, 1), "declined"),
    # ClampToEdge (2) for the rows outside the tensor
    ("nv2_decode.spvasm#clamp-to-edge", "nvidia-h200", None, {"0": 2}, _q8_blocks, (1, 1, 1), "declined"),
    ("spec_id_twins.comp", "reference", None, {"0": 8, "1": 3}, lambda rng: {(0, 0): 4 * 4 * 64}, (2, 1, 1), "fused"),
    ("subgroup_clustered_ballot.comp", "lavapipe", 8, {}, lambda rng: {
        (0, 0): rng.integers(0, 1 << 32, 128, dtype=np.uint64).astype(np.uint32), (0, 1): 128 * 32}, (2, 1, 1), "declined"),
    ("subgroup_allequal_special.comp", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): rng.choice(np.array([0x7FC00000, 0x80000000, 0, 0x3F800000], np.uint32), 256), (0, 1): 256 * 4},
     (8, 1, 1), "fused"),
    ("subgroup_quad_allequal.comp", "nvidia-h200", None, {}, lambda rng: _sizes(2, extra={
        (0, 0): rng.integers(0, 1 << 32, 128, dtype=np.uint64).astype(np.uint32), (0, 1): 256 * 16}), (2, 1, 1),
     "fused"),
    ("workgroup_alias.comp", "reference", None, {}, lambda rng: {
        (0, 0): rng.normal(0, 1, 192).astype(np.float32), (0, 1): 192 * 16}, (3, 1, 1), "declined"),
    ("pointer_after_loop.spvasm", "reference", None, {}, lambda rng: {(0, 0): 32}, (1, 1, 1), "fused"),
    # private arrays and structs, inlined calls, vectors, arrays of block structs, 8/16-bit integers
    ("private_calls_blocks.comp", "nvidia-h200", None, {}, _blocks, (2, 1, 1), "fused"),
    ("private_calls_blocks.comp#reference", "reference", None, {}, _blocks, (2, 1, 1), "fused"),
    ("transcendental.comp", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): _specials(rng, 512), (0, 1): _specials(rng, 512), (0, 2): 13 * 512 * 4}, (8, 1, 1), "fused"),
    ("transpose_shared.comp", "reference", None, {}, lambda rng: {
        (0, 0): rng.integers(0, 1 << 20, 4 * 64).astype(np.uint32), (0, 1): 4 * 64 * 4}, (4, 1, 1), "fused"),
    # a default-only switch around barriers, a private array, -inf: one empty row, one short
    ("softmax_switch.comp", "nvidia-h200", None, {}, lambda rng: {
        (0, 0): rng.standard_normal(4 * 128).astype(np.float32), (0, 1): np.array([128, 0, 77, 128], np.uint32),
        (0, 2): 4 * 128 * 4}, (4, 1, 1), "fused"),
    # value numbering across a loop that writes the variable; a specialization-shortened array with
    # a constant index past its end in a branch that never runs; a subgroup barrier in a branch
    ("loop_carried_load.comp", "nvidia-h200", None, {}, lambda rng: _sizes(6, 1, extra={(0, 0): 8 * 4}),
     (1, 1, 1), "declined"),
    ("spec_short_array.comp", "reference", None, {"0": 2}, lambda rng: {(0, 0): 4}, (1, 1, 1), "fused"),
    ("spec_short_array.comp#n8", "reference", None, {"0": 8}, lambda rng: {(0, 0): 4}, (1, 1, 1), "fused"),
    # (compiled; the branch that only one subgroup takes hands the dispatch to the interpreter)
    ("subgroup_barrier_branch.comp", "nvidia-h200", None, {}, lambda rng: _sizes(1, extra={(0, 0): 64 * 4}),
     (1, 1, 1), "fused"),
    # subgroup operations run for the whole workgroup at once (ggml's matrix-vector reduction),
    # on full subgroups and, after some invocations returned, partial ones (the H200's rank order)
    ("subgroup_ops.comp", "nvidia-h200", None, {}, _subgroup_inputs, (3, 1, 1), "fused"),
    ("subgroup_ops.comp#sg16", "reference", 16, {}, _subgroup_inputs, (3, 1, 1), "fused"),
    ("reduce_shared.comp", "reference", None, {}, lambda rng: {
        (0, 0): np.concatenate([np.array([8 * 256 - 100, 0, 0, 0], np.uint32),
                                rng.standard_normal(8 * 256).astype(np.float32).view(np.uint32)]),
        (0, 1): 4 * 8, (0, 2): 4 * 8}, (8, 1, 1), "fused"),
]


def test_subgroup_barrier_race_across_subgroups_same_error(monkeypatch):
    """subgroup_barrier_stage.comp with `cross` 1 reads another subgroup's element after only a
    subgroupBarrier(): the compiled kernel hands the dispatch over and the interpreter reports the
    race, the same error as without the JIT."""
    file = "tests/shaders/spirv/subgroup_barrier_stage.comp"
    src = (ROOT / file).read_text()
    make = lambda rng: _sizes(1, extra={(0, 0): 2 * 128 * 4})       # noqa: E731
    _, want_w, _ = run(monkeypatch, "0", "nvidia-h200", None, src, {}, make, (2, 1, 1), file)
    p, got_w, _ = run(monkeypatch, "1", "nvidia-h200", None, src, {}, make, (2, 1, 1), file)
    assert any("data race" in w for w in want_w), want_w
    assert got_w == want_w
    assert isinstance(p._jit, fuse.Kernel)


def _twin(comp: Path) -> Path | None:
    """The SPIR-V assembly made from a GLSL file that the wheel's glslang refuses (its first line
    names the .comp), which the cases run in its place."""
    for asm in sorted(SPIRV.glob("*.spvasm")):
        if asm.read_text().split("\n", 1)[0].startswith(f"; tests/shaders/spirv/{comp.name} "):
            return asm
    return None


def test_every_spirv_shader_has_a_case():
    named = {c[0].split("#")[0] for c in SPIRV_CASES}
    for f in sorted(SPIRV.glob("*.comp")) + sorted(SPIRV.glob("*.spvasm")):
        twin = _twin(f) if f.suffix == ".comp" else None
        assert f.name in named or (twin is not None and twin.name in named), f"{f.name}: no case in SPIRV_CASES"


@pytest.mark.parametrize("case", SPIRV_CASES, ids=[c[0] for c in SPIRV_CASES])
def test_spirv_compiled_equals_interpreter(monkeypatch, case):
    from emu.frontend.spirv import grammar
    from emu.jit import fuse
    name, profile, sg, consts, make, grid, way = case
    if name == "ext_maint1.spvasm" and "OpCooperativeMatrixGetCoordinateEXT" not in grammar.load("core").by_name:
        pytest.skip(f"the SPIR-V grammar read ({grammar.grammar_dir()}) predates maintenance1: set "
                    f"EMU_SPIRV_GRAMMAR (bash scripts/glslang_nv2.sh fetches Debian's spirv-headers)")
    file = f"tests/shaders/spirv/{name.split('#')[0]}"
    src = (ROOT / file).read_text()
    _, want_w, want = run(monkeypatch, "0", profile, sg, src, consts, make, grid, file)
    assert not any(w.startswith("error: ") for w in want_w), want_w        # the inputs run
    p, got_w, got = run(monkeypatch, "1", profile, sg, src, consts, make, grid, file)
    assert got_w == want_w
    for key in want:
        assert np.array_equal(got[key], want[key]), f"binding {key} differs"
    k = getattr(p, "_jit", None)
    kind = {coop_kernel.Kernel: "compiled", fuse.Kernel: "fused"}.get(type(k), "declined")
    if kind == "compiled":          # whether some subgroup needed mma_call's kernel
        assert k.handed_back == 0
        kind = "special" if k.spa.any() else kind
    assert kind == way, f"expected {way}, went {kind}"
