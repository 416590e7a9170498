"""Cooperative matrices through WGSL on every profile: load -> store round trips for every config,
role, layout and stride (against addressing computed here independently), and multiply-adds that
must equal the profile's numeric model applied to the whole matrices."""
import numpy as np
import pytest

import emu
from emu.numerics.dtypes import NP
from emu.numerics.mma import mma
from emu.profiles import list_profiles, load_profile

STORAGE = {"f16": "f16", "f32": "f32", "u32": "u32", "i32": "i32", "u8": "u32", "i8": "i32", "bf16": None}


def dawn_type(role, t, rows, cols):
    kind = {"A": "left", "B": "right", "C": "result"}[role]
    return f"subgroup_matrix_{kind}<{t}, {cols}, {rows}>"


def sizes(p):
    return [s for s in p.subgroup_sizes if s in (8, 16, 32, 64)][:2] if p.name == "reference" else p.subgroup_sizes[:2]


def roles(cfg):
    return [("A", cfg.a_type, cfg.m, cfg.k), ("B", cfg.b_type, cfg.k, cfg.n), ("C", cfg.c_type, cfg.m, cfg.n)]


def cases():
    out, seen = [], set()
    for name in list_profiles():
        p = load_profile(name)
        for sg in sizes(p):
            for cfg in p.configs:
                for role, t, rows, cols in roles(cfg):
                    if STORAGE.get(t) is None:
                        continue            # bf16 has no WGSL spelling in these dialects
                    key = (name, sg, role, t, rows, cols)
                    if key not in seen:
                        seen.add(key)
                        out.append(pytest.param(name, sg, role, t, rows, cols, id="-".join(map(str, key))))
    return out


@pytest.mark.parametrize("profile,sg,role,t,rows,cols", cases())
def test_load_store_round_trip(profile, sg, role, t, rows, cols):
    p = load_profile(profile)
    st = STORAGE[t]
    esize = np.dtype(NP[t]).itemsize
    word = 4 if esize == 1 else esize
    mtype = dawn_type(role, t, rows, cols)
    src = f"""
enable chromium_experimental_subgroup_matrix;
{"enable f16;" if t == "f16" else ""}
override OFF: u32; override STRIDE: u32;
@group(0) @binding(0) var<storage, read> a: array<{st}>;
@group(0) @binding(1) var<storage, read_write> b: array<{st}>;
@group(0) @binding(2) var<storage, read_write> c: array<{st}>;
@compute @workgroup_size({sg})
fn main() {{
  let m = subgroupMatrixLoad<{mtype}, row_major>(&a, OFF, STRIDE);
  subgroupMatrixStore<row_major>(&b, OFF, m, STRIDE);
  let n = subgroupMatrixLoad<{mtype}, col_major>(&a, OFF, STRIDE);
  subgroupMatrixStore<col_major>(&c, OFF, n, STRIDE);
}}
"""
    unit_bytes = esize if (p.stride_unit_8bit == "matrix_element" and esize == 1) else word
    rng = np.random.default_rng(1)
    dev = emu.Device(p, sg)
    pipe_mod = dev.create_shader_module(src, "roundtrip.wgsl")
    for extra in (0, 3 * 16 // unit_bytes):
        # stride in its unit; the matrix's leading dimension (cols for row-major, rows for
        # col-major) plus some slack so rows of the matrix do not touch. Offset and slack keep
        # the start and the stride multiples of 16 bytes (Vulkan's alignment rule; a misaligned
        # access is an error, tests/reliability)
        lead = max(rows, cols)
        stride = -(-lead * esize // unit_bytes) + extra
        off = 16
        nbytes = off * word + stride * unit_bytes * lead + 64
        nbytes = -(-nbytes // 4) * 4
        data = rng.integers(0, 256, nbytes, dtype=np.uint8)
        if t in ("f16", "f32"):
            # keep NaN payloads out: what a device does with them is not a lane-map question
            vals = data.view(NP[t]).copy()
            vals[~np.isfinite(vals)] = 1
            data = vals.view(np.uint8)
        pipe = dev.create_compute_pipeline(pipe_mod, constants={"OFF": off, "STRIDE": stride})
        bufs = {(0, 0): dev.create_buffer(data), (0, 1): dev.create_buffer(size=nbytes),
                (0, 2): dev.create_buffer(size=nbytes)}
        dev.dispatch(pipe, bufs, (1, 1, 1))
        for layout, key in (("row_major", (0, 1)), ("col_major", (0, 2))):
            want = np.zeros(nbytes, np.uint8)
            for r in range(rows):
                for c in range(cols):
                    major, minor = (r, c) if layout == "row_major" else (c, r)
                    at = off * word + major * stride * unit_bytes + minor * esize
                    want[at:at + esize] = data[at:at + esize]
            got = bufs[key].read(np.uint8)
            assert np.array_equal(got, want), f"{layout} stride {stride}: round trip moved bytes"


def mma_cases():
    out = []
    for name in list_profiles():
        p = load_profile(name)
        sg = sizes(p)[0]
        for cfg in p.configs:
            if STORAGE.get(cfg.a_type) is None or cfg.c_type != cfg.result_type:
                continue
            out.append(pytest.param(name, sg, cfg, id=f"{name}-{sg}-{cfg.a_type}-{cfg.c_type}-{cfg.m}x{cfg.n}x{cfg.k}"))
    return out


@pytest.mark.parametrize("profile,sg,cfg", mma_cases())
def test_multiply_add_equals_model(profile, sg, cfg):
    p = load_profile(profile)
    M, N, K = cfg.m, cfg.n, cfg.k
    ta, tc = cfg.a_type, cfg.c_type
    sa, sc = STORAGE[ta], STORAGE[tc]
    packed = np.dtype(NP[ta]).itemsize == 1
    # 8-bit matrices: dense rows of K (or N) bytes, addressed in the profile's stride unit
    div = 4 if packed and p.stride_unit_8bit == "array_element" else 1
    packed_c = np.dtype(NP[tc]).itemsize == 1          # an 8-bit accumulator (the reference's i8/u8)
    div_c = 4 if packed_c and p.stride_unit_8bit == "array_element" else 1
    src = f"""
enable chromium_experimental_subgroup_matrix;
{"enable f16;" if "f16" in (ta, tc) else ""}
@group(0) @binding(0) var<storage, read> a: array<{sa}>;
@group(0) @binding(1) var<storage, read> b: array<{sa}>;
@group(0) @binding(2) var<storage, read> c: array<{sc}>;
@group(0) @binding(3) var<storage, read_write> d: array<{sc}>;
@compute @workgroup_size({sg})
fn main(@builtin(workgroup_id) wg: vec3<u32>) {{
  let t = wg.x;
  let l = subgroupMatrixLoad<{dawn_type("A", ta, M, K)}, row_major>(&a, t * {M * K // (4 if packed else 1)}u, {K // div}u);
  let r = subgroupMatrixLoad<{dawn_type("B", ta, K, N)}, row_major>(&b, t * {K * N // (4 if packed else 1)}u, {N // div}u);
  let acc = subgroupMatrixLoad<{dawn_type("C", tc, M, N)}, row_major>(&c, t * {M * N // (4 if packed_c else 1)}u, {N // div_c}u);
  subgroupMatrixStore<row_major>(&d, t * {M * N // (4 if packed_c else 1)}u, subgroupMatrixMultiplyAccumulate(l, r, acc), {N // div_c}u);
}}
"""
    rng = np.random.default_rng(3)
    trials = 8

    def gen(t, shape):
        if t in ("f16", "f32"):
            return (rng.standard_normal(shape) * 4).astype(NP[t])
        info = np.iinfo(NP[t])
        return rng.integers(max(info.min, -1000), min(info.max, 1000), shape, dtype=NP[t])

    A, B, C = gen(ta, (trials, M, K)), gen(ta, (trials, K, N)), gen(tc, (trials, M, N))
    dev = emu.Device(p, sg)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "mma.wgsl"))
    bufs = {(0, i): dev.create_buffer(x) for i, x in enumerate((A, B, C))}
    bufs[(0, 3)] = dev.create_buffer(size=C.nbytes)
    dev.dispatch(pipe, bufs, (trials, 1, 1))
    got = bufs[(0, 3)].read(NP[tc]).reshape(C.shape)
    want = mma(p.model_for(cfg), A, B, C, tc)
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
