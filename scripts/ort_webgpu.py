"""Run ONNX Runtime's WebGPU kernels on the virtual device: the WGSL that ONNX Runtime's WebGPU
execution provider generates (its ShaderHelper's prelude, uniforms struct, bindings and indices
helpers around each program's body), as dumped from a running session, read from a folder you
collected; nothing of them is kept here. Without a folder it says so and exits 0.

    python scripts/ort_webgpu.py /tmp/ort [--profile nvidia-h200] [--hw wgpu]

Every *.wgsl in the folder is compiled (counted: ok / rejected with emu's message / crashed).
The programs recognised by their code are also run, with uniforms packed by the WGSL layout of
the program's own Uniforms struct, and compared with a float64 numpy reference:
Transpose (its perm() read from the code), the naive vec4 MatMul (4x4 outputs an invocation),
the tiled MatMul (32x32 workgroup tiles, 4x4 per invocation), MatMulNBits (4-bit weights with
per-block scales and packed zero points) and the DP4A input quantizer (subgroupMax of a 32-lane
block, pack4x8snorm). --hw runs the recognised programs on the machine's WebGPU adapter too.

ORT's *.wgsl.template files found in the folder (fetched from onnxruntime/core/providers/webgpu/,
kept under their paths there: math/..., nn/..., tensor/..., quantization/..., vendor/intel/...)
are instantiated as their C++ programs do (scripts/ort_wgsl_template.py: the wgsl-template
syntax and ShaderHelper's prelude; params, variables, uniforms, workgroup size and dispatch as
each program's .cc sets them) and run: SubgroupMatrixMatMul and Gemm (8x16x16 f16, split-K,
transposed operands) and its odd-N B padding, the Intel MatMul and oneDNN layout transform,
SubgroupMatrixConv and Im2ColMatMul (implicit-GEMM Conv2D), the OIHW -> OHWI weight transpose,
ConvTranspose3D (rank 5: array indices, shapes packed in array<vec4<u32>, 2>), the GEMV and
tiled-subgroup MatMuls, LayerNorm, QuantizeLinear and Pad. The 8x16x16
programs are written for 32-lane subgroups (ORT selects that config only at 32): they run on
--matrix-profile (reference) at 32 lanes. --dump DIR keeps each instantiated program's WGSL.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

import emu

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llama_webgpu import U16, U32, Runner, judge  # noqa: E402  (one runner for both scripts)
from ort_wgsl_template import (ELEMENT_ALIAS, SHAPE_AND_STRIDE, UNIFORM, VALUE_ALIAS, Program, Var,  # noqa: E402
                               apply_template)


def pack_uniforms(text: str, file: str, values: dict) -> np.ndarray:
    """The bytes of the program's `var<uniform> uniforms` struct, each member from `values`
    (a number or a sequence for a vector), at the offsets WGSL's layout gives it."""
    module, _ = emu.compile_wgsl(text, file)
    t = next(g.type for g in module.globals if g.space == "uniform")
    raw = np.zeros(-(-t.size // 16) * 16, np.uint8)
    for m, off in zip(t.members, t.offsets):
        v = np.atleast_1d(np.asarray(values.get(m.name, 0)))
        scalar = m.type
        while hasattr(scalar, "elem"):          # a vector, or an array of them (a shape of rank > 4)
            scalar = scalar.elem
        scalar = scalar.name
        v = v.astype({"u32": np.uint32, "i32": np.int32, "f32": np.float32}[scalar])
        raw[off:off + v.nbytes] = v.view(np.uint8)
    return raw


def _strides(shape):
    return [int(np.prod(shape[i + 1:])) for i in range(len(shape) - 1)]


def transpose(text, file, run, rng):
    perm = {int(d): int(s) for d, s in re.findall(r"\ba\[(\d)\] = i\[(\d)\];", text)}
    a = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    # output index i maps to a[perm]: a[d] = i[perm[d]]; output dim perm[d] has a's extent d
    out_shape = [0] * 4
    for d, s in perm.items():
        out_shape[s] = a.shape[d]
    u = pack_uniforms(text, file, {"a_shape": a.shape, "a_stride": _strides(a.shape), "output_shape": out_shape,
                                   "output_stride": _strides(out_shape), "output_size": a.size})
    res = run(text, file, {(0, 0): a, (0, 1): a.nbytes, (0, 2): u}, (-(-a.size // 64), 1, 1), (0, 1), np.float32)
    ref = np.transpose(a, [next(d for d, s in perm.items() if s == k) for k in range(4)]).astype(np.float64)
    return res, ref, np.zeros_like(ref)


def _matmul_ref(a, b):
    ref = a.astype(np.float64) @ b.astype(np.float64)
    return ref, a.shape[1] * 2 * U32 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))


def matmul_naive_vec4(text, file, run, rng, m=12, n=20, k=16):
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    size = m * n // 16
    u = pack_uniforms(text, file, {"a_shape": (m, k // 4), "a_stride": k // 4, "b_shape": (k, n // 4),
                                   "b_stride": n // 4, "output_shape": (1, m, n // 4),
                                   "output_stride": (m * n // 4, n // 4), "output_size": size,
                                   "M": m, "N": n, "K": k})
    res = run(text, file, {(0, 0): a, (0, 1): b, (0, 2): 4 * m * n, (0, 3): u}, (-(-size // 64), 1, 1),
              (0, 2), np.float32)
    return (res, *_matmul_ref(a, b))


def matmul_tiled(text, file, run, rng, m=45, n=70, k=37):
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    gx, gy = -(-n // 32), -(-m // 32)
    u = pack_uniforms(text, file, {"a_shape": (m, k), "a_stride": k, "b_shape": (k, n), "b_stride": n,
                                   "output_shape": (1, m, n), "output_stride": (m * n, n), "dim_a_outer": m,
                                   "dim_b_outer": n, "dim_inner": k, "logical_dispatch_x": gx,
                                   "logical_dispatch_y": gy, "logical_dispatch_z": 1})
    res = run(text, file, {(0, 0): a, (0, 1): b, (0, 2): 4 * m * n, (0, 3): u}, (gx, gy, 1), (0, 2), np.float32)
    return (res, *_matmul_ref(a, b))


def matmul_nbits(text, file, run, rng, m=3, n=21, k=96):
    """A [M, K] f32 times W^T, W [N, K] 4-bit: byte j of a block's 16 holds elements 2j (low
    nibble) and 2j + 1 (high); a scale per 32-element block; zero points 4-bit, 8 to a u32."""
    blocks = k // 32
    a = rng.standard_normal((m, k)).astype(np.float32)
    q = rng.integers(0, 16, (n, k))
    zero = rng.integers(0, 16, (n, blocks))
    scale = (rng.random((n, blocks)) + 0.5).astype(np.float32)
    packed = (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8).reshape(n, k // 2).view(np.uint32)
    zflat = np.zeros(-(-n * blocks // 8) * 8, np.int64)
    zflat[: n * blocks] = zero.reshape(-1)
    zp = (zflat.reshape(-1, 8) << (4 * np.arange(8))).sum(axis=1).astype(np.uint32)
    ntile = -(-n // 8)
    u = pack_uniforms(text, file, {"M": m, "N": n, "K": k, "K_of_a": k // 4, "K_of_b": blocks, "block_size": 32,
                                   "blocks_per_col": blocks, "zero_blocks_per_col": blocks, "num_N_tile": ntile,
                                   "batch_count": 1, "weight_idx": 0, "dispatch_M": m})
    res = run(text, file, {(0, 0): a, (0, 1): packed, (0, 2): scale, (0, 3): zp, (0, 4): 4 * m * n, (0, 5): u},
              (m * ntile, 1, 1), (0, 4), np.float32)
    w = (q - zero.repeat(32, axis=1)) * scale.astype(np.float64).repeat(32, axis=1)
    ref = a.astype(np.float64) @ w.T
    return res, ref, k * 4 * U32 * (np.abs(a.astype(np.float64)) @ np.abs(w.T))


def quantize_dp4a(text, file, run, rng, blocks=6):
    """Per 128 values (32 lanes of vec4<f16>): scale = max |a|, q = pack4x8snorm(a / scale)
    (round(clamp(x, -1, 1) * 127)), scales[] = scale / 127; q may differ by one where the f16
    quotient lands next to a rounding tie."""
    a = rng.standard_normal(blocks * 128).astype(np.float16)
    u = pack_uniforms(text, file, {"output_size": blocks * 32})
    res = run(text, file, {(0, 0): a, (0, 1): 4 * blocks * 32, (0, 2): 2 * blocks, (0, 3): u},
              (-(-blocks // 2), 1, 1), (0, 1), np.uint32)
    mx = np.abs(a.astype(np.float64)).reshape(blocks, 128).max(axis=1).repeat(128)
    ref = np.round(np.clip((a.astype(np.float16) / mx.astype(np.float16)).astype(np.float64), -1, 1) * 127)
    res = {k: (None if g is None else g.view(np.int8).astype(np.float64), note) for k, (g, note) in res.items()}
    return res, ref, np.ones_like(ref)


PROGRAMS = (   # (name, what the code contains, runner)
    ("Transpose", ("fn perm(", "o2i_output"), transpose),
    ("MatMul (naive, vec4)", ("values[0] = fma(b_value_t(a_data[0])",), matmul_naive_vec4),
    ("MatMul (tiled 32x32)", ("mm_Asub", "logical_dispatch_x", "fn mm_readA"), matmul_tiled),
    ("MatMulNBits (4-bit)", ("mm_read_zero", "unpack4xU8", "tile_A"), matmul_nbits),
    ("DP4A quantize (f16 -> i8)", ("pack4x8snorm", "subgroupMax", "scales["), quantize_dp4a),
)


# -- the *.wgsl.template kernels, instantiated as their C++ programs do ---------------------------
# Each gives (template path, params, Program with its variables, uniforms, workgroup and dispatch),
# the uniform values and the buffers; the runners check the output against float64.

def _ceil(a, b):
    return -(-a // b)


def subgroup_matrix_matmul(tpl, run, rng, m, n, k, batch=1, count_m=4, count_n=2, split_k=1, bias=False):
    """SubgroupMatrixMatMul (8x16x16 f16, 32 lanes a subgroup, split_k subgroups a workgroup):
    A [batch, M, K] x B [batch, K, N] (a 2-D B is one batch of batch * M rows) (+ bias [N]) -> f16 [batch, M, N]; a tile of 8*count_m x
    16*count_n a workgroup, dispatched (N tiles, M tiles, batch). Each 16-deep K block is one
    rounding of the f16 accumulator, the split-K sum one more each."""
    tm, tn = 8 * count_m, 16 * count_n
    a = (rng.standard_normal((batch, m, k)) / 4).astype(np.float16)
    b = (rng.standard_normal((k, n) if batch == 1 else (batch, k, n)) / 4).astype(np.float16)   # batched A: batched B
    c = (rng.standard_normal(n) / 4).astype(np.float16)
    ins = [Var("input_a", "f16", UNIFORM, a.shape), Var("input_b", "f16", UNIFORM, b.shape)]
    if bias:
        ins.append(Var("bias", "f16", UNIFORM, c.shape))
    out = Var("output", "f16", UNIFORM | VALUE_ALIAS | ELEMENT_ALIAS, (batch, m, n))
    groups = (_ceil(n, tn), _ceil(m, tm), batch)
    prog = Program(ins, [out], [("M", "u32", 1), ("N", "u32", 1), ("K", "u32", 1), ("num_n_tile", "u32", 1)],
                   workgroup=(32 * split_k, 1, 1), dispatch=groups, features=("subgroups", "subgroup_matrix"))
    apply_template(prog, tpl, dict(has_bias=bias, sg_mat_k=16, sg_mat_m=8, sg_mat_n=16, sg_mat_count_m=count_m,
                                   sg_mat_count_n=count_n, split_k=split_k), {v.name: v for v in ins + [out]})
    text = prog.source()
    u = pack_uniforms(text, "subgroup_matrix_matmul.wgsl", {"M": m, "N": n, "K": k, "num_n_tile": groups[0]})
    bufs = {(0, 0): a, (0, 1): b, **({(0, 2): c} if bias else {})}
    bufs[(0, len(ins))] = 2 * batch * m * n
    bufs[(0, len(ins) + 1)] = u
    res = run(text, "subgroup_matrix_matmul.wgsl", bufs, groups, (0, len(ins)), np.float16, matrices=True)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = a64 @ b64 + (c.astype(np.float64) if bias else 0)
    mag = np.abs(a64) @ np.abs(b64) + (np.abs(c.astype(np.float64)) if bias else 0)
    return res, ref, (k // 16 + split_k + 2) * U16 * mag, text


def subgroup_matrix_gemm(tpl, run, rng, m, n, k, trans_a=0, trans_b=0, c_shape=None, count_m=4, count_n=2,
                         split_k=1, alpha=0.5, beta=2.0):
    """Gemm on 8x16x16 subgroup matrices: alpha * op(A) @ op(B) + beta * C, op(X) = X or X^T
    (the transposed operands loaded column-major), C broadcast to [M, N] through element
    strides (0 on a broadcast axis). One 2-D tile grid, workgroup_idx = m_tile * N tiles + n_tile."""
    tm, tn = 8 * count_m, 16 * count_n
    a = (rng.standard_normal((k, m) if trans_a else (m, k)) / 4).astype(np.float16)
    b = (rng.standard_normal((n, k) if trans_b else (k, n)) / 4).astype(np.float16)
    ins = [Var("input_a", "f16", UNIFORM, a.shape), Var("input_b", "f16", UNIFORM, b.shape)]
    if c_shape is not None:
        c = (rng.standard_normal(c_shape) / 4).astype(np.float16)
        ins.append(Var("input_c", "f16", UNIFORM, c.shape))
        full = np.broadcast_to(c, (m, n))
        c_strides = [0 if full.strides[i] == 0 else s_ // 2 for i, s_ in enumerate(full.strides)]
    out = Var("output", "f16", UNIFORM | VALUE_ALIAS | ELEMENT_ALIAS, (m, n))
    groups = (_ceil(n, tn), _ceil(m, tm), 1)
    names = [("M", "u32", 1), ("N", "u32", 1), ("K", "u32", 1), ("alpha", "f32", 1), ("beta", "f32", 1),
             ("c_stride_m", "u32", 1), ("c_stride_n", "u32", 1)]
    prog = Program(ins, [out], names, workgroup=(32 * split_k, 1, 1), dispatch=groups,
                   features=("subgroups", "subgroup_matrix"))
    apply_template(prog, tpl, dict(has_c=c_shape is not None, trans_a=trans_a, trans_b=trans_b, sg_mat_k=16, sg_mat_m=8,
                                   sg_mat_n=16, sg_mat_count_m=count_m, sg_mat_count_n=count_n, split_k=split_k),
                   {v.name: v for v in ins + [out]})
    text = prog.source()
    vals = {"M": m, "N": n, "K": k, "alpha": alpha, "beta": beta}
    if c_shape is not None:
        vals.update(c_stride_m=c_strides[0], c_stride_n=c_strides[1])
    u = pack_uniforms(text, "subgroup_matrix_gemm.wgsl", vals)
    bufs = {(0, i): x for i, x in enumerate([a, b] + ([c] if c_shape is not None else []))}
    bufs[(0, len(ins))] = 2 * m * n
    bufs[(0, len(ins) + 1)] = u
    res = run(text, "subgroup_matrix_gemm.wgsl", bufs, groups, (0, len(ins)), np.float16, matrices=True)
    a64 = a.astype(np.float64).T if trans_a else a.astype(np.float64)
    b64 = b.astype(np.float64).T if trans_b else b.astype(np.float64)
    cc = beta * np.broadcast_to(c, (m, n)).astype(np.float64) if c_shape is not None else 0
    ref = alpha * (a64 @ b64) + cc
    mag = abs(alpha) * (np.abs(a64) @ np.abs(b64)) + np.abs(cc)
    return res, ref, (k // 16 + split_k + 4) * U16 * mag, text


def matmul_gemv(tpl, run, rng, n, k, dtype="f32", wg=(16, 8)):
    """MatMul's GEMV (M = 1): a [K] times b [K, N] as vec4 columns; workgroup_size_y lanes
    share a column's K (fma in f32), then a tree sum over y; f16 output rounds once more."""
    npt = np.float32 if dtype == "f32" else np.float16
    a = rng.standard_normal(k).astype(npt)
    b = rng.standard_normal((k, n)).astype(npt)
    vec = f"vec4<{dtype}>"
    va, vb = Var("a", dtype, UNIFORM | VALUE_ALIAS, (k,)), Var("b", vec, UNIFORM | VALUE_ALIAS, (k, n // 4))
    vo = Var("output", vec, UNIFORM | VALUE_ALIAS, (n // 4,))
    groups = (_ceil(n // 4, wg[0]), 1, 1)
    prog = Program([va, vb], [vo], [("N", "u32", 1), ("K", "u32", 1)], workgroup=(*wg, 1), dispatch=groups)
    apply_template(prog, tpl, {}, {"a": va, "b": vb, "output": vo})
    text = prog.source()
    u = pack_uniforms(text, "matmul_gemv.wgsl", {"N": n, "K": k})
    res = run(text, "matmul_gemv.wgsl", {(0, 0): a, (0, 1): b, (0, 2): n * a.itemsize, (0, 3): u}, groups, (0, 2), npt)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref, mag = a64 @ b64, np.abs(a64) @ np.abs(b64)
    bound = (k + 4) * U32 * mag + (U16 * np.abs(ref) if dtype == "f16" else 0)
    return res, ref, bound, text


def matmul_tiled_subgroup(tpl, run, rng, m, n, k, batch=1, tile_n=32, use_subgroup=1, dtype="f32"):
    """MatMul's 64 x tile_n subgroup tile (64 lanes, one output row each): vec4 A and B, B
    transposed through workgroup memory and (use_subgroup, subgroup_size >= tile_n) shared by
    subgroupShuffle; dot() of vec4s accumulated in the output's element type."""
    npt = np.float32 if dtype == "f32" else np.float16
    a = rng.standard_normal((batch, m, k)).astype(npt)
    b = rng.standard_normal((batch, k, n)).astype(npt)
    vec = f"vec4<{dtype}>"
    va = Var("a", vec, UNIFORM | VALUE_ALIAS, (batch, m, k // 4))
    vb = Var("b", vec, UNIFORM | VALUE_ALIAS, (batch, k, n // 4))
    vo = Var("output", vec, UNIFORM | VALUE_ALIAS | ELEMENT_ALIAS, (batch, m, n // 4))
    mt, nt, kt = _ceil(m, 64), _ceil(n, tile_n), _ceil(k, 16)
    groups = (batch * mt * nt, 1, 1)
    names = ("Batch", "M", "K", "k_of_a", "n_div_4", "M_tiles", "N_tiles", "K_tiles")
    prog = Program([va, vb], [vo], [(x, "u32", 1) for x in names], workgroup=(64, 1, 1), dispatch=groups)
    apply_template(prog, tpl, dict(tile_n=tile_n, use_subgroup=use_subgroup), {"a": va, "b": vb, "output": vo})
    text = prog.source()
    u = pack_uniforms(text, "matmul_tiled_subgroup.wgsl", dict(zip(names, (batch, m, k, k // 4, n // 4, mt, nt, kt))))
    res = run(text, "matmul_tiled_subgroup.wgsl", {(0, 0): a, (0, 1): b, (0, 2): a.itemsize * batch * m * n, (0, 3): u},
              groups, (0, 2), npt)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref, mag = a64 @ b64, np.abs(a64) @ np.abs(b64)
    return res, ref, (k + 4) * (U32 if dtype == "f32" else U16) * mag, text


def layer_norm(tpl, run, rng, rows, size, dtype="f32", bias=True, simplified=False, stats=True):
    """LayerNormalization / SimplifiedLayerNormalization over the last `size` values of each
    of `rows` rows: sums of x and x*x in f32 (vec4/vec2 lanes where size allows), a tree over the
    workgroup, inverseSqrt; y in x's type. Split over workgroups when size % 512 == 0 and rows == 1."""
    npt = np.float32 if dtype == "f32" else np.float16
    comps = 4 if size % 4 == 0 else (2 if size % 2 == 0 else 1)
    split = size % 512 == 0 and rows == 1
    x = (rng.standard_normal((rows, size)) + 0.5).astype(npt)
    scale = (rng.random(size) + 0.5).astype(npt)
    shift = rng.standard_normal(size).astype(npt)
    t = dtype if comps == 1 else f"vec{comps}<{dtype}>"
    vx = Var("x", t, UNIFORM | VALUE_ALIAS | ELEMENT_ALIAS, (rows * size // comps,))
    ins = [vx, Var("scale", t, UNIFORM, (size // comps,))] + ([Var("bias", t, UNIFORM, (size // comps,))] if bias else [])
    outs = [Var("y", t, UNIFORM, (rows * size // comps,))]
    if stats:
        outs += [Var("mean_output", "f32", 0, (rows,)), Var("inv_std_dev_output", "f32", 0, (rows,))]
    wg = 128 if split else 64
    groups = (size // (wg * comps), 1, 1) if split else (rows, 1, 1)
    names = ("components", "norm_count", "norm_size", "norm_size_vectorized")
    prog = Program(ins, outs, [(x_, "u32", 1) for x_ in names] + [("epsilon", "f32", 1)], workgroup=(wg, 1, 1),
                   dispatch=groups)
    apply_template(prog, tpl, dict(has_bias=bias, simplified=simplified, has_mean_output=stats,
                                   has_inv_std_dev_output=stats, split_norm_dim=split, components=comps),
                   {v.name: v for v in ins + outs})
    text = prog.source()
    eps = 1e-5
    u = pack_uniforms(text, "layer_norm.wgsl", {"components": comps, "norm_count": rows, "norm_size": size,
                                                "norm_size_vectorized": size // comps, "epsilon": eps})
    bufs = {(0, i): v for i, v in enumerate([x, scale] + ([shift] if bias else []))}
    bufs[(0, len(ins))] = x.nbytes
    if stats:
        bufs[(0, len(ins) + 1)], bufs[(0, len(ins) + 2)] = 4 * rows, 4 * rows
    bufs[(0, len(ins) + len(outs))] = u
    res = run(text, "layer_norm.wgsl", bufs, groups, (0, len(ins)), npt)
    x64 = x.astype(np.float64)
    mean = np.zeros((rows, 1)) if simplified else x64.mean(axis=1, keepdims=True)
    var = (x64 * x64).mean(axis=1, keepdims=True) - (0 if simplified else mean * mean)
    inv = 1 / np.sqrt(var + np.float64(np.float32(eps)))
    ref = (x64 - mean) * inv * scale.astype(np.float64) + (shift.astype(np.float64) if bias else 0)
    ms = (x64 * x64).mean(axis=1, keepdims=True)
    # f32 sums of `size` terms (relative n*u, through E[x^2] - mean^2 into inv), then the
    # elementwise ops in x's type
    rel = 2 * (size + 8) * U32 * ms / var
    uy = U32 if dtype == "f32" else U16
    mag = (np.abs(x64) + np.abs(mean)) * inv * np.abs(scale.astype(np.float64))
    bound = mag * (rel + 6 * uy) + np.abs(mean) * inv * (size + 8) * U32 + uy * np.abs(ref) + 2 * uy * np.abs(shift if bias else 0)
    return res, ref, bound, text


def quantize_linear(tpl, run, rng, size, scale=0.05, zero_point=128):
    """QuantizeLinear to uint8, per tensor: clamp(round(x / scale) + zero_point, 0, 255), four
    to a u32 through workgroup memory. A quotient within a few ULP of a rounding tie may round
    either way on a device whose f32 division is not correctly rounded: one step allowed there."""
    x = (rng.standard_normal(size) * 4).astype(np.float32)
    vx = Var("x", "f32", UNIFORM, (size,))
    vs = Var("y_scale", "f32", UNIFORM | VALUE_ALIAS, (1,))
    vz = Var("y_zero_point", "u8x4", UNIFORM, (1,))
    vy = Var("y", "u8x4", UNIFORM, (_ceil(size, 4),))
    groups = (_ceil(size, 64), 1, 1)
    prog = Program([vx, vs, vz], [vy], [("data_size", "u32", 1)], workgroup=(64, 1, 1), dispatch=groups)
    apply_template(prog, tpl, dict(HAS_ZERO_POINT=1, QUANTIZATION_TYPE=0, WORKGROUP_SIZE=64, Y_IS_SIGNED=0,
                                   Y_PACKING_MODE=1), {v.name: v for v in (vx, vs, vz, vy)})
    text = prog.source()
    u = pack_uniforms(text, "quantize_linear.wgsl", {"data_size": size})
    bufs = {(0, 0): x, (0, 1): np.array([scale], np.float32), (0, 2): np.array([zero_point], np.uint32),
            (0, 3): 4 * _ceil(size, 4), (0, 4): u}
    res = run(text, "quantize_linear.wgsl", bufs, groups, (0, 3), np.uint32)
    res = {k_: (None if g is None else g.view(np.uint8)[:size].astype(np.float64), note) for k_, (g, note) in res.items()}
    q = x.astype(np.float64) / np.float64(np.float32(scale))
    ref = np.clip(np.round(q) + zero_point, 0, 255)
    near_tie = np.abs(np.abs(q - np.floor(q)) - 0.5) <= 4 * U32 * np.abs(q)
    return res, ref, near_tie.astype(np.float64), text


def pad(tpl, run, rng, shape, pads, mode, dtype="f32", value=1.5):
    """Pad (ONNX modes constant, reflect, edge, wrap) of a tensor of rank len(shape); pads are
    (lower, upper) per axis. Output indices from its uniform shape and strides; a copy, exact."""
    npt = np.float32 if dtype == "f32" else np.float16
    data = rng.standard_normal(shape).astype(npt)
    mode_id = {"constant": 0, "reflect": 1, "edge": 2, "wrap": 3}[mode]
    ref = np.pad(data, pads, mode=mode, **({"constant_values": value} if mode == "constant" else {}))
    r = len(shape)
    vd = Var("data", dtype, UNIFORM, shape)
    vo = Var("output", dtype, UNIFORM | VALUE_ALIAS | 1, ref.shape)
    groups = (_ceil(ref.size, 64), 1, 1)
    prog = Program([vd], [vo], [("constant_value", "u32", 1), ("lower_pads", "i32", r), ("data_shape", "u32", r),
                                ("data_stride", "u32", r - 1), ("output_size", "u32", 1)], dispatch=groups)
    apply_template(prog, tpl, dict(dim_value_zero=0, is_float16=dtype == "f16", pad_mode=mode_id),
                   {"data": vd, "output": vo})
    text = prog.source()
    bits = (np.array([value, 0], np.float16).view(np.uint32) if dtype == "f16" else np.array([value], np.float32).view(np.uint32))[0]
    u = pack_uniforms(text, "pad.wgsl", {"constant_value": int(bits), "lower_pads": [p_[0] for p_ in pads],
                                         "data_shape": shape, "data_stride": _strides(shape), "output_size": ref.size,
                                         "output_shape": ref.shape, "output_stride": _strides(ref.shape)})
    res = run(text, "pad.wgsl", {(0, 0): data, (0, 1): ref.size * data.itemsize, (0, 2): u}, groups, (0, 1), npt)
    return res, ref.astype(np.float64), np.zeros(ref.shape), text


def _conv_size(h, w, kh, kw, stride, dilation, pads):
    return tuple((n + 2 * p_ - d * (k - 1) - 1) // s_ + 1
                 for n, k, s_, d, p_ in ((h, kh, stride[0], dilation[0], pads[0]), (w, kw, stride[1], dilation[1], pads[1])))


def _conv_ref(x, wt, b, stride, dilation, pads, activation):
    """Conv2D of NHWC x with an [Co, Kh, Kw, Ci] weight in float64 (+ b, then Relu for
    activation 1), and the same sum of magnitudes for the error bound."""
    batch, h, w, _ = x.shape
    co, kh, kw, _ = wt.shape
    ho, wo = _conv_size(h, w, kh, kw, stride, dilation, pads)
    xp = np.pad(x.astype(np.float64), ((0, 0), (pads[0], pads[0]), (pads[1], pads[1]), (0, 0)))
    ref = np.zeros((batch, ho, wo, co))
    mag = np.zeros_like(ref)
    w64 = wt.astype(np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, i * dilation[0]: i * dilation[0] + stride[0] * (ho - 1) + 1: stride[0],
                       j * dilation[1]: j * dilation[1] + stride[1] * (wo - 1) + 1: stride[1], :]
            ref += patch @ w64[:, i, j, :].T
            mag += np.abs(patch) @ np.abs(w64[:, i, j, :]).T
    if b is not None:
        ref += b.astype(np.float64)
        mag += np.abs(b.astype(np.float64))
    return (np.maximum(ref, 0) if activation == 1 else ref), mag


def im2col_matmul(tpl, run, rng, batch, h, w, ci, co, kh, kw, stride=(1, 1), dilation=(1, 1), pads=(0, 0),
                  tile_m=32, use_subgroup=1, vec_size=4, bias=True, activation=0, dtype="f32"):
    """Conv2D (NHWC, weight [Co, Kh, Kw, Ci]) as an implicit-im2col GEMM: 64 lanes, one output
    channel each, tile_m output pixels a workgroup; K in 16-scalar tiles through workgroup
    memory, the im2col rows shared by subgroupShuffle (use_subgroup: needs tile_m <= subgroup
    size); bias, then activation 0 (none) or 1 (Relu). Products summed in the output type."""
    npt = np.float32 if dtype == "f32" else np.float16
    ho, wo = _conv_size(h, w, kh, kw, stride, dilation, pads)
    x = rng.standard_normal((batch, h, w, ci)).astype(npt)
    wt = (rng.standard_normal((co, kh, kw, ci)) / np.sqrt(kh * kw * ci)).astype(npt)
    b = rng.standard_normal(co).astype(npt)
    t = dtype if vec_size == 1 else f"vec{vec_size}<{dtype}>"
    vs = Var("src", t, UNIFORM | VALUE_ALIAS, (x.size // vec_size,))
    vw = Var("weight", t, UNIFORM | VALUE_ALIAS, (wt.size // vec_size,))
    ins = [vs, vw] + ([Var("bias", dtype, UNIFORM, (co,))] if bias else [])
    vo = Var("output", dtype, UNIFORM | VALUE_ALIAS | ELEMENT_ALIAS, (batch * ho * wo * co,))
    m_, n_, k_ = ho * wo, co, kh * kw * ci
    mt, nt, kt = _ceil(m_, tile_m), _ceil(n_, 64), _ceil(k_, 16)
    groups = (batch * mt * nt, 1, 1)
    names = [(x_, "u32", 1) for x_ in ("batch", "im2col_m", "im2col_n", "im2col_k", "channel_i", "output_w",
                                       "kernel_w", "src_h", "src_w", "M_tiles", "N_tiles", "K_tiles")]
    names += [("strides", "u32", 2), ("dilations", "u32", 2), ("pads", "u32", 2),
              ("activation_param_0", "f32", 1), ("activation_param_1", "f32", 1)]
    prog = Program(ins, [vo], names, workgroup=(64, 1, 1), dispatch=groups)
    apply_template(prog, tpl, dict(has_bias=bias, tile_m=tile_m, tile_n=64, use_subgroup=use_subgroup,
                                   vec_size=vec_size, activation_kind=activation, quick_gelu_unit_alpha=0),
                   {v.name: v for v in ins + [vo]})
    text = prog.source()
    u = pack_uniforms(text, "im2col_matmul.wgsl", dict(
        batch=batch, im2col_m=m_, im2col_n=n_, im2col_k=k_, channel_i=ci, output_w=wo, kernel_w=kw, src_h=h, src_w=w,
        M_tiles=mt, N_tiles=nt, K_tiles=kt, strides=stride, dilations=dilation, pads=pads))
    bufs = {(0, i): v for i, v in enumerate([x, wt] + ([b] if bias else []))}
    bufs[(0, len(ins))] = batch * m_ * n_ * x.itemsize
    bufs[(0, len(ins) + 1)] = u
    res = run(text, "im2col_matmul.wgsl", bufs, groups, (0, len(ins)), npt)
    ref, mag = _conv_ref(x, wt, b if bias else None, stride, dilation, pads, activation)
    return res, ref, (k_ + 4) * (U32 if dtype == "f32" else U16) * mag, text


def subgroup_matrix_conv(tpl, run, rng, batch, h, w, ci, co, kh, kw, stride=(1, 1), dilation=(1, 1), pads=(0, 0),
                         count_m=4, count_n=2, split_k=1, vec_size=4, bias=True, activation=0):
    """Conv2D (NHWC, OHWI weight) as an implicit GEMM on 8x16x16 subgroup matrices: each K block
    of the im2col rows gathered (vec_size channels a lane) into workgroup memory and loaded from
    there, the weight loaded column-major with stride K; bias, then activation 0 or 1 (Relu)."""
    ho, wo = _conv_size(h, w, kh, kw, stride, dilation, pads)
    x = (rng.standard_normal((batch, h, w, ci)) / 2).astype(np.float16)
    wt = (rng.standard_normal((co, kh, kw, ci)) / np.sqrt(kh * kw * ci)).astype(np.float16)
    b = (rng.standard_normal(co) / 4).astype(np.float16)
    t = "f16" if vec_size == 1 else f"vec{vec_size}<f16>"
    m_, n_, k_ = ho * wo, co, kh * kw * ci
    ins = [Var("input_src", t, UNIFORM | VALUE_ALIAS, (x.size // vec_size,)), Var("input_b", "f16", UNIFORM, (n_, k_))]
    if bias:
        ins.append(Var("bias", "f16", UNIFORM, (co,)))
    vo = Var("output", "f16", UNIFORM | VALUE_ALIAS | ELEMENT_ALIAS, (batch, m_, n_))
    groups = (_ceil(n_, 16 * count_n), _ceil(m_, 8 * count_m), batch)
    names = [(x_, "u32", 1) for x_ in ("M", "N", "K", "num_n_tile", "channel_i", "output_w", "kernel_w", "src_h", "src_w")]
    names += [("strides", "u32", 2), ("dilations", "u32", 2), ("pads", "u32", 2), ("act_alpha", "f32", 1),
              ("act_beta", "f32", 1)]
    prog = Program(ins, [vo], names, workgroup=(32 * split_k, 1, 1), dispatch=groups,
                   features=("subgroups", "subgroup_matrix"))
    apply_template(prog, tpl, dict(has_bias=bias, sg_mat_k=16, sg_mat_m=8, sg_mat_n=16, sg_mat_count_m=count_m,
                                   sg_mat_count_n=count_n, split_k=split_k, vec_size=vec_size, activation_kind=activation),
                   {v.name: v for v in ins + [vo]})
    text = prog.source()
    u = pack_uniforms(text, "subgroup_matrix_conv.wgsl", dict(
        M=m_, N=n_, K=k_, num_n_tile=groups[0], channel_i=ci, output_w=wo, kernel_w=kw, src_h=h, src_w=w,
        strides=stride, dilations=dilation, pads=pads))
    bufs = {(0, i): v for i, v in enumerate([x, wt.reshape(co, k_)] + ([b] if bias else []))}
    bufs[(0, len(ins))] = 2 * batch * m_ * n_
    bufs[(0, len(ins) + 1)] = u
    res = run(text, "subgroup_matrix_conv.wgsl", bufs, groups, (0, len(ins)), np.float16, matrices=True)
    ref, mag = _conv_ref(x, wt, b if bias else None, stride, dilation, pads, activation)
    return res, ref.reshape(batch, m_, n_), (k_ // 16 + split_k + 3) * U16 * mag.reshape(batch, m_, n_), text


def pad_b(tpl, run, rng, k, n):
    """SubgroupMatrixMatMulPadB: B [K, N] f16 copied into [K, N + 1] with a zero column (the
    even row stride ORT gives the matrix loads for odd N); exact."""
    b = rng.standard_normal((k, n)).astype(np.float16)
    vb = Var("input_b", "f16", VALUE_ALIAS, (k, n))
    vo = Var("output", "f16", VALUE_ALIAS, (k, n + 1))
    groups = (_ceil(k * (n + 1), 64), 1, 1)
    prog = Program([vb], [vo], [("output_size", "u32", 1), ("N", "u32", 1), ("N_b", "u32", 1)], dispatch=groups)
    apply_template(prog, tpl, {}, {"input_b": vb, "output": vo})
    text = prog.source()
    u = pack_uniforms(text, "pad_b.wgsl", {"output_size": k * (n + 1), "N": n, "N_b": n + 1})
    res = run(text, "pad_b.wgsl", {(0, 0): b, (0, 1): 2 * k * (n + 1), (0, 2): u}, groups, (0, 1), np.float16)
    return res, np.pad(b.astype(np.float64), ((0, 0), (0, 1))), np.zeros((k, n + 1)), text


def oihw_to_ohwi(tpl, run, rng, o, i, h, w):
    """A Conv weight OIHW -> OHWI through a 4 x 64 workgroup tile (64 input channels a
    workgroup, 4 kernel positions a step); exact."""
    src = rng.standard_normal((o, i, h, w)).astype(np.float32)
    vs = Var("src", "f32", UNIFORM | ELEMENT_ALIAS, (src.size,))
    vo = Var("output", "f32", UNIFORM | ELEMENT_ALIAS, (src.size,))
    ci_tiles, hw_tiles = _ceil(i, 64), _ceil(h * w, 4)
    groups = (o * ci_tiles, 1, 1)
    names = [(x_, "u32", 1) for x_ in ("O", "I", "H", "W", "Ci_tiles", "H_W_tiles")]
    prog = Program([vs], [vo], names, dispatch=groups)
    apply_template(prog, tpl, {}, {"src": vs, "output": vo})
    text = prog.source()
    u = pack_uniforms(text, "oihw_to_ohwi.wgsl", dict(O=o, I=i, H=h, W=w, Ci_tiles=ci_tiles, H_W_tiles=hw_tiles))
    res = run(text, "oihw_to_ohwi.wgsl", {(0, 0): src, (0, 1): src.nbytes, (0, 2): u}, groups, (0, 1), np.float32)
    ref = src.transpose(0, 2, 3, 1).astype(np.float64)
    return res, ref, np.zeros(ref.shape), text


def conv_transpose3d(tpl, run, rng, batch, ci, co, size, kernel, stride, pads, dilation, group=1, channels_last=0,
                     bias=True):
    """ConvTranspose 3-D, rank-5 tensors (shapes and strides in the uniforms: 5 values packed
    as array<vec4<u32>, 2>, indices as array<u32, 5>): each output gathers the input positions
    whose stride aligns, in f32. Weight [Ci, Co / group, kD, kH, kW]."""
    x = rng.standard_normal((batch, ci, *size)).astype(np.float32)
    wt = (rng.standard_normal((ci, co // group, *kernel)) / 4).astype(np.float32)
    b = rng.standard_normal(co).astype(np.float32)
    osz = tuple((n - 1) * s_ - 2 * p_ + d * (k - 1) + 1 for n, k, s_, p_, d in zip(size, kernel, stride, pads, dilation))
    ref = np.zeros((batch, co, *(n + 2 * p_ for n, p_ in zip(osz, pads))))
    mag = np.zeros_like(ref)
    opg, ipg = co // group, ci // group
    for kd in range(kernel[0]):
        for kh in range(kernel[1]):
            for kw in range(kernel[2]):
                sl = tuple(slice(k_ * d, k_ * d + s_ * (n - 1) + 1, s_)
                           for k_, d, s_, n in zip((kd, kh, kw), dilation, stride, size))
                for g in range(group):
                    xs = x[:, g * ipg:(g + 1) * ipg].astype(np.float64)
                    wk = wt[g * ipg:(g + 1) * ipg, :, kd, kh, kw].astype(np.float64)
                    ref[(slice(None), slice(g * opg, (g + 1) * opg)) + sl] += np.einsum("bidhw,io->bodhw", xs, wk)
                    mag[(slice(None), slice(g * opg, (g + 1) * opg)) + sl] += np.einsum("bidhw,io->bodhw", np.abs(xs),
                                                                                        np.abs(wk))
    crop = (slice(None), slice(None)) + tuple(slice(p_, p_ + n) for p_, n in zip(pads, osz))
    ref, mag = ref[crop], mag[crop]
    if bias:
        ref = ref + b.astype(np.float64)[None, :, None, None, None]
        mag = mag + np.abs(b.astype(np.float64))[None, :, None, None, None]
    if channels_last:
        x, ref, mag = x.transpose(0, 2, 3, 4, 1).copy(), ref.transpose(0, 2, 3, 4, 1), mag.transpose(0, 2, 3, 4, 1)
    vx, vw = Var("x", "f32", shape=x.shape), Var("w", "f32", shape=wt.shape)
    ins = [vx, vw] + ([Var("bias", "f32", shape=(co,))] if bias else [])
    vo = Var("output", "f32", shape=ref.shape)
    groups = (_ceil(ref.size, 64), 1, 1)
    names = [("output_size", "u32", 1), ("strides", "u32", 3), ("pads", "u32", 3), ("dilations", "u32", 3),
             ("input_channels_per_group", "u32", 1)]
    prog = Program(ins, [vo], names, dispatch=groups)
    apply_template(prog, tpl, dict(has_bias=bias, is_channels_last=channels_last, is_prepacked=0, components=1),
                   {v.name: v for v in ins + [vo]})
    text = prog.source()
    vals = dict(output_size=ref.size, strides=stride, pads=pads, dilations=dilation, input_channels_per_group=ipg)
    for v in (vx, vw, vo):
        vals[v.name + "_shape"], vals[v.name + "_stride"] = v.shape, _strides(v.shape)
    u = pack_uniforms(text, "conv_transpose3d.wgsl", vals)
    bufs = {(0, i_): a for i_, a in enumerate([x, wt] + ([b] if bias else []))}
    bufs[(0, len(ins))], bufs[(0, len(ins) + 1)] = 4 * ref.size, u
    res = run(text, "conv_transpose3d.wgsl", bufs, groups, (0, len(ins)), np.float32)
    k_ = ipg * int(np.prod(kernel))
    return res, ref, (k_ + 2) * U32 * mag, text


def _blocked(x, layout):
    """NCHW x in a oneDNN blocked layout (channels to a multiple of 4, and for ABcd16a4b the
    batch to a multiple of 16, zero-padded), as a flat array."""
    n, c, h, w = x.shape
    nb, cb = (-(-n // 16) * 16 if layout == 2 else n), -(-c // 4) * 4
    xp = np.zeros((nb, cb, h, w), x.dtype)
    xp[:n, :c] = x
    if layout == 1:
        return xp.reshape(nb, cb // 4, 4, h, w).transpose(0, 1, 3, 4, 2).reshape(-1)
    return xp.reshape(nb // 16, 16, cb // 4, 4, h, w).transpose(0, 2, 4, 5, 1, 3).reshape(-1)


def format_transform(tpl, run, rng, shape, src_format, dst_format):
    """Intel's oneDNN layout transform between plain NCHW (0), nChw4c (1) and ABcd16a4b (2); the
    output shape is the padded logical one when the destination is blocked; exact."""
    x = rng.standard_normal(shape).astype(np.float32)
    data = x.reshape(-1) if src_format == 0 else _blocked(x, src_format)
    n, c, h, w = shape
    out_shape = shape if dst_format == 0 else ((-(-n // 16) * 16 if dst_format == 2 else n), -(-c // 4) * 4, h, w)
    ref = (x.reshape(-1) if dst_format == 0 else _blocked(x, dst_format)).astype(np.float64)
    usage = UNIFORM | VALUE_ALIAS | SHAPE_AND_STRIDE
    vi, vo = Var("input", "f32", usage, shape), Var("output", "f32", usage, out_shape)
    size = int(np.prod(out_shape))
    groups = (_ceil(size, 64), 1, 1)
    prog = Program([vi], [vo], [("output_size", "u32", 1)], dispatch=groups)
    apply_template(prog, tpl, dict(src_format=src_format, dst_format=dst_format), {"input": vi, "output": vo})
    text = prog.source()
    u = pack_uniforms(text, "format_transform.wgsl", {"input_shape": shape, "input_stride": _strides(shape),
                                                      "output_shape": out_shape, "output_stride": _strides(out_shape),
                                                      "output_size": size})
    res = run(text, "format_transform.wgsl", {(0, 0): data, (0, 1): 4 * ref.size, (0, 2): u}, groups, (0, 1), np.float32)
    return res, ref, np.zeros(ref.shape), text


TEMPLATE_KERNELS = (   # (label, template path under the folder, runner, keyword arguments)
    # ragged M and N in whole 8-row / 16-column blocks: every load that feeds a kept output lies
    # inside its buffer
    ("SubgroupMatrixMatMul 8x16x16 tile 32x32", "math/subgroup_matrix_matmul_8x16x16.wgsl.template",
     subgroup_matrix_matmul, dict(m=40, n=80, k=64)),
    ("SubgroupMatrixMatMul 8x16x16 64x64 bias batch 2", "math/subgroup_matrix_matmul_8x16x16.wgsl.template",
     subgroup_matrix_matmul, dict(m=72, n=112, k=48, batch=2, count_m=8, count_n=4, bias=True)),
    ("SubgroupMatrixMatMul 8x16x16 16x48 split_k 4", "math/subgroup_matrix_matmul_8x16x16.wgsl.template",
     subgroup_matrix_matmul, dict(m=24, n=64, k=160, count_m=2, count_n=3, split_k=4)),
    ("SubgroupMatrixMatMul 8x16x16 8x16 split_k 8", "math/subgroup_matrix_matmul_8x16x16.wgsl.template",
     subgroup_matrix_matmul, dict(m=24, n=32, k=256, count_m=1, count_n=1, split_k=8)),
    # N = 40: the last tile's B block (columns 32..47) runs past the end of B in the last K rows.
    # The template counts on such loads reading zeros element by element; Dawn's robustness
    # transform (Tint's robustness.cc) instead moves a matrix that does not fit to offset 0, so
    # kept outputs of that tile come out wrong under Dawn, as emu runs it (the later C++ side
    # shifts a trailing tile back inside the buffer)
    ("SubgroupMatrixMatMul 8x16x16 N=40 (B block past the end)", "math/subgroup_matrix_matmul_8x16x16.wgsl.template",
     subgroup_matrix_matmul, dict(m=32, n=40, k=16, expect="wrong")),
    # ORT pads B only to an even row (4-byte rows); Vulkan's OpCooperativeMatrixLoadKHR (Dawn's
    # path on the Vulkan profiles) needs 16-byte strides
    ("SubgroupMatrixMatMul 8x16x16 N=70 (B stride 140 bytes)", "math/subgroup_matrix_matmul_8x16x16.wgsl.template",
     subgroup_matrix_matmul, dict(m=45, n=70, k=64, expect="misaligned cooperative matrix load")),
    ("SubgroupMatrixGemm 8x16x16 A B, C [N]", "math/subgroup_matrix_gemm_8x16x16.wgsl.template",
     subgroup_matrix_gemm, dict(m=40, n=48, k=32, c_shape=(48,))),
    ("SubgroupMatrixGemm 8x16x16 A^T B^T, C [M,1], split_k 2", "math/subgroup_matrix_gemm_8x16x16.wgsl.template",
     subgroup_matrix_gemm, dict(m=48, n=64, k=64, trans_a=1, trans_b=1, c_shape=(48, 1), count_m=2, count_n=4,
                                split_k=2)),
    ("SubgroupMatrixGemm 8x16x16 A^T B, no C, 64x16", "math/subgroup_matrix_gemm_8x16x16.wgsl.template",
     subgroup_matrix_gemm, dict(m=64, n=32, k=48, trans_a=1, count_m=8, count_n=1)),
    ("Intel SubgroupMatrixMatMul 8x16x16 32x32", "vendor/intel/math/subgroup_matrix_matmul.wgsl.template",
     subgroup_matrix_matmul, dict(m=40, n=80, k=64)),
    ("Intel SubgroupMatrixMatMul 8x16x16 16x64 bias split_k 2", "vendor/intel/math/subgroup_matrix_matmul.wgsl.template",
     subgroup_matrix_matmul, dict(m=48, n=64, k=96, count_m=2, count_n=4, split_k=2, bias=True)),
    ("SubgroupMatrixMatMulPadB (odd N -> even stride)", "math/subgroup_matrix_matmul_pad_b.wgsl.template", pad_b,
     dict(k=32, n=45)),
    ("MatMul GEMV f32", "math/matmul_gemv.wgsl.template", matmul_gemv, dict(n=200, k=77)),
    ("MatMul GEMV f16", "math/matmul_gemv.wgsl.template", matmul_gemv, dict(n=96, k=50, dtype="f16", wg=(8, 32))),
    ("MatMul tiled subgroup 64x32 shuffle", "math/matmul_tiled_subgroup.wgsl.template", matmul_tiled_subgroup,
     dict(m=70, n=72, k=36, batch=2)),
    ("MatMul tiled subgroup 64x16 no shuffle f16", "math/matmul_tiled_subgroup.wgsl.template", matmul_tiled_subgroup,
     dict(m=64, n=40, k=20, tile_n=16, use_subgroup=0, dtype="f16")),
    ("QuantizeLinear f32 -> u8 per tensor", "quantization/quantize_linear.wgsl.template", quantize_linear,
     dict(size=1001)),
    ("Pad constant rank 3", "tensor/pad.wgsl.template", pad, dict(shape=(3, 4, 5), pads=((1, 0), (2, 1), (0, 3)),
                                                                   mode="constant")),
    ("Pad reflect rank 2", "tensor/pad.wgsl.template", pad, dict(shape=(5, 6), pads=((2, 3), (4, 1)), mode="reflect")),
    ("Pad edge rank 4 f16", "tensor/pad.wgsl.template", pad, dict(shape=(2, 3, 2, 3), pads=((0, 1), (1, 1), (2, 0), (0, 2)),
                                                                  mode="edge", dtype="f16")),
    ("Pad wrap rank 1, pads past the size", "tensor/pad.wgsl.template", pad, dict(shape=(4,), pads=((6, 9),), mode="wrap")),
    ("Pad constant f16 rank 2", "tensor/pad.wgsl.template", pad, dict(shape=(3, 3), pads=((1, 1), (0, 2)),
                                                                      mode="constant", dtype="f16")),
    ("SubgroupMatrixConv 8x16x16 3x3 pad 1, vec4, Relu, batch 2", "nn/subgroup_matrix_conv_8x16x16.wgsl.template",
     subgroup_matrix_conv, dict(batch=2, h=6, w=7, ci=16, co=48, kh=3, kw=3, pads=(1, 1), activation=1)),
    ("SubgroupMatrixConv 8x16x16 1x1 stride 2, vec2, split_k 4", "nn/subgroup_matrix_conv_8x16x16.wgsl.template",
     subgroup_matrix_conv, dict(batch=1, h=9, w=9, ci=64, co=32, kh=1, kw=1, stride=(2, 2), vec_size=2, count_m=2,
                                split_k=4, bias=False)),
    ("SubgroupMatrixConv 8x16x16 2x2 dilation 2, scalar, 64x16", "nn/subgroup_matrix_conv_8x16x16.wgsl.template",
     subgroup_matrix_conv, dict(batch=1, h=12, w=10, ci=4, co=16, kh=2, kw=2, dilation=(2, 2), vec_size=1, count_m=8,
                                count_n=1)),
    ("Im2ColMatMul conv 3x3 pad 1, vec4, shuffle, Relu", "nn/im2col_matmul.wgsl.template", im2col_matmul,
     dict(batch=2, h=7, w=6, ci=8, co=70, kh=3, kw=3, pads=(1, 1), activation=1)),
    ("Im2ColMatMul conv 2x2 stride 2 dilation 1, scalar, no shuffle", "nn/im2col_matmul.wgsl.template", im2col_matmul,
     dict(batch=1, h=9, w=8, ci=3, co=20, kh=2, kw=2, stride=(2, 2), tile_m=16, use_subgroup=0, vec_size=1)),
    ("Im2ColMatMul conv 3x3 dilation 2 f16, no bias", "nn/im2col_matmul.wgsl.template", im2col_matmul,
     dict(batch=1, h=8, w=8, ci=4, co=16, kh=3, kw=3, dilation=(2, 2), bias=False, dtype="f16")),
    ("Conv weight OIHW -> OHWI", "nn/oihw_to_ohwi.wgsl.template", oihw_to_ohwi, dict(o=3, i=70, h=3, w=3)),
    ("ConvTranspose3D NCDHW, groups 2, stride 2, pads 1", "nn/conv_transpose3d.wgsl.template", conv_transpose3d,
     dict(batch=2, ci=4, co=6, size=(3, 4, 2), kernel=(3, 2, 2), stride=(2, 2, 1), pads=(1, 0, 1), dilation=(1, 1, 2),
          group=2)),
    ("ConvTranspose3D NDHWC, no bias", "nn/conv_transpose3d.wgsl.template", conv_transpose3d,
     dict(batch=1, ci=3, co=2, size=(2, 3, 3), kernel=(2, 2, 3), stride=(1, 2, 2), pads=(0, 1, 1), dilation=(1, 1, 1),
          channels_last=1, bias=False)),
    ("Intel FormatTransform NCHW -> nChw4c", "vendor/intel/contrib/format_transform.wgsl.template", format_transform,
     dict(shape=(2, 6, 3, 5), src_format=0, dst_format=1)),
    ("Intel FormatTransform NCHW -> ABcd16a4b", "vendor/intel/contrib/format_transform.wgsl.template",
     format_transform, dict(shape=(3, 6, 2, 3), src_format=0, dst_format=2)),
    ("Intel FormatTransform nChw4c -> NCHW", "vendor/intel/contrib/format_transform.wgsl.template", format_transform,
     dict(shape=(2, 7, 2, 2), src_format=1, dst_format=0)),
    ("LayerNorm f32 vec4, bias, stats", "nn/layer_norm.wgsl.template", layer_norm, dict(rows=5, size=96)),
    ("SimplifiedLayerNorm f32 vec2", "nn/layer_norm.wgsl.template", layer_norm,
     dict(rows=3, size=30, simplified=True, bias=False, stats=False)),
    ("LayerNorm f16 scalar", "nn/layer_norm.wgsl.template", layer_norm, dict(rows=4, size=33, dtype="f16", stats=False)),
    ("LayerNorm f32 split over workgroups", "nn/layer_norm.wgsl.template", layer_norm, dict(rows=1, size=1024)),
)


TEMPLATE_LABELS = {k[0] for k in TEMPLATE_KERNELS}


def run_templates(folder: Path, args, rows) -> bool:
    """Instantiate and run every template kernel whose file is in the folder; matrix kernels on
    --matrix-profile at 32 lanes (ONNX Runtime's 8x16x16 programs are written for a subgroup of 32)."""
    failed = False
    plain = Runner(emu.Device(args.profile), args.hw)
    matrix = Runner(emu.Device(args.matrix_profile, 32), None)
    for label, rel, runner, kw in TEMPLATE_KERNELS:
        path = next((p for p in sorted(folder.rglob(Path(rel).name)) if p.as_posix().endswith(rel)), None)
        if path is None:
            continue
        run = matrix if runner in (subgroup_matrix_matmul, subgroup_matrix_gemm, subgroup_matrix_conv) else plain
        on = args.matrix_profile if run is matrix else args.profile
        rng = np.random.default_rng(0)
        kw = dict(kw)
        expect = kw.pop("expect", None)
        try:
            res, ref, bound, text = runner(path, run, rng, **kw)
        except emu.EmuError as e:
            first = e.format().splitlines()[0]
            ok = expect is not None and expect in first
            rows.append((f"{label} [{on}]", "emu", "no", "-", "refused" if ok else "-", first))
            failed |= not ok
            continue
        if expect is not None and expect != "wrong":
            rows.append((f"{label} [{on}]", "emu", "yes", "-", "NO", f"ran; expected: {expect}"))
            failed = True
            continue
        if args.dump:
            Path(args.dump).mkdir(parents=True, exist_ok=True)
            (Path(args.dump) / (re.sub(r"\W+", "_", label) + ".wgsl")).write_text(text)
        for backend, (got, note) in res.items():
            err, ok = judge(got, ref, bound)
            if expect == "wrong":
                ok = "wrong, as under Dawn" if ok == "NO" and "out-of-bounds" in note else "NO"
                failed |= ok == "NO"
            else:
                failed |= ok != "yes"
            rows.append((f"{label} [{on}]", backend, "yes" if got is not None else "no", err, ok, note))
    return failed


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", nargs="?", help="a folder of ONNX Runtime's generated WGSL (and templates)")
    ap.add_argument("--profile", default="nvidia-h200")
    ap.add_argument("--hw", choices=("wgpu", "dawn"))
    ap.add_argument("--matrix-profile", default="reference",
                    help="profile for the 8x16x16 subgroup-matrix templates (run at 32 lanes)")
    ap.add_argument("--dump", metavar="DIR", help="write each instantiated template's WGSL there")
    args = ap.parse_args(argv)
    if not args.folder or not Path(args.folder).is_dir():
        print("ort_webgpu: no folder given; skipping (collect ONNX Runtime WebGPU shaders and pass the folder)")
        return 0
    folder = Path(args.folder)
    run = Runner(emu.Device(args.profile), args.hw)
    rng = np.random.default_rng(0)
    counts = {"ok": 0, "rejected": 0, "crash": 0}
    rows, failed = [], False
    templates = sorted(folder.rglob("*.wgsl.template"))
    failed |= run_templates(folder, args, rows)
    for path in sorted(folder.rglob("*.wgsl")):
        text = path.read_text()
        try:
            emu.compile_wgsl(text, path.name)
            counts["ok"] += 1
        except emu.EmuError as e:
            counts["rejected"] += 1
            rows.append((path.name, "emu", "no", "-", "-", e.format().splitlines()[0]))
            continue
        except Exception as e:                  # a bug of emu's: count it, show it
            counts["crash"] += 1
            failed = True
            rows.append((path.name, "emu", "crash", "-", "-", f"{type(e).__name__}: {e}"))
            continue
        for name, marks, runner in PROGRAMS:
            if all(mk in text for mk in marks):
                label = f"{name} [{path.name}]"
                try:
                    res, ref, bound = runner(text, path.name, run, rng)
                except emu.EmuError as e:
                    rows.append((label, "emu", "no", "-", "-", e.format().splitlines()[0]))
                    failed = True
                    continue
                for backend, (got, note) in res.items():
                    err, ok = judge(got, ref, bound)
                    failed |= ok != "yes"
                    rows.append((label, backend, "yes" if got is not None else "no", err, ok, note))
    print(f"compiled: {counts['ok']} ok, {counts['rejected']} rejected, {counts['crash']} crashed "
          f"(of {sum(counts.values())} .wgsl); {len(templates)} .wgsl.template found, "
          f"{sum(r[0].split(' [')[0] in TEMPLATE_LABELS for r in rows if r[1] == 'emu')} template kernel(s) run")
    print(f"{'program':<52} {'on':<5} {'ran':<5} {'max |err|':<10} {'in bound':<9} notes")
    for r in rows:
        print(f"{r[0]:<52} {r[1]:<5} {r[2]:<5} {r[3]:<10} {r[4]:<9} {r[5]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
