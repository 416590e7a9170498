"""Run llama.cpp's WebGPU kernels (ggml/src/ggml-webgpu/wgsl-shaders/) on the virtual device,
instantiated the way ggml-webgpu's shader library does it (its #include/#define/#ifdef
preprocessor, the defines it passes, its params struct and dispatch), and compare each result
with a float64 numpy reference. The kernels are read from a folder you fetched; nothing of them
is kept here. Without a folder it says so and exits 0.

    python scripts/llama_webgpu.py /tmp/llama/wgsl-shaders [--profile nvidia-h200]

Kernels: mul_mat_subgroup_matrix (f16 weights x f32 activations, f16 subgroup-matrix
accumulators, the float VEC and SCALAR variants, ragged M/N/K so the select()-guarded loads run
past the tile edges), rms_norm (the one-invocation-per-row version with `override wg_size`),
binary (add/sub/mul/div, f32 and f16, with ggml's broadcast by repetition), unary (abs, neg,
relu, sqr, sqrt, exp, tanh, sigmoid, silu, gelu; f32 and f16).
The bound each is held to is its own arithmetic's: f16 accumulation for the matmul (one f16
rounding per multiply-add), f32 for the norm, one rounding for the binary ops,
8 ulps for the unary ones.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

import emu

# -- the preprocessor (what ggml-webgpu's pre_wgsl does for these files) -------------------------

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _expand(text: str, defines: dict, depth: int = 0) -> str:
    if depth > 20:
        return text
    out = _IDENT.sub(lambda m: defines.get(m.group(0), m.group(0)) if defines.get(m.group(0)) is not None else m.group(0), text)
    return out if out == text else _expand(out, defines, depth + 1)


def _truth(expr: str, defines: dict) -> bool:
    expr = re.sub(r"defined\s*\(\s*(\w+)\s*\)", lambda m: str(m.group(1) in defines), expr)
    expr = expr.replace("||", " or ").replace("&&", " and ").replace("!", " not ")
    expr = _IDENT.sub(lambda m: m.group(0) if m.group(0) in ("True", "False", "or", "and", "not")
                      else str(m.group(0) in defines), expr)
    return bool(eval(expr, {}, {}))           # only True/False/and/or/not remain


def preprocess(path: Path, defines: dict, folder: Path) -> str:
    out, stack = [], []                       # stack of (taking, taken_any)
    for line in path.read_text().splitlines():
        s = line.strip()
        active = all(t for t, _ in stack)
        if s.startswith("#ifdef") or s.startswith("#ifndef"):
            name = s.split()[1]
            take = (name in defines) == s.startswith("#ifdef")
            stack.append((active and take, take))
        elif s.startswith("#if "):
            take = _truth(s[4:], defines)
            stack.append((active and take, take))
        elif s.startswith("#elif"):
            _, done = stack.pop()
            outer = all(t for t, _ in stack)
            take = not done and _truth(s[5:], defines)
            stack.append((outer and take, done or take))
        elif s.startswith("#else"):
            _, done = stack.pop()
            stack.append((all(t for t, _ in stack) and not done, True))
        elif s.startswith("#endif"):
            stack.pop()
        elif not active:
            continue
        elif s.startswith("#include"):
            out.append(preprocess(folder / s.split('"')[1], defines, folder))
        elif s.startswith("#define"):
            parts = s.split(None, 2)
            defines[parts[1]] = parts[2] if len(parts) > 2 else ""
        elif s.startswith("#undef"):
            defines.pop(s.split()[1], None)
        else:
            out.append(_expand(line, defines))
    return "\n".join(out)


def defines_of(items) -> dict:
    d = {}
    for item in items:
        k, _, v = item.partition("=")
        d[k] = v
    return d


# -- mul_mat_subgroup_matrix -----------------------------------------------------------------------

# ggml-webgpu-shader-lib.hpp's constants for the subgroup-matrix matmul
SUBGROUP_M, SUBGROUP_N, SUBGROUP_MATRIX_M, SUBGROUP_MATRIX_N, TILE_K = 2, 4, 4, 2, 32


def mul_mat_subgroup_matrix(folder: Path, dev, m: int, n: int, k: int, vec: bool, rng):
    cfg = next(c for c in dev.profile.configs if c.a_type == "f16" and c.c_type == "f16")
    sg = dev.subgroup_size
    defs = defines_of(["SRC0_INNER_TYPE=f16", "SRC1_INNER_TYPE=f32", "INIT_SRC0_SHMEM_FLOAT",
                       "INIT_SRC1_SHMEM_FLOAT", "VEC" if vec else "SCALAR", "TILE_M=4u", "TILE_N=4u",
                       f"TILE_K={TILE_K}u", f"MAX_SUBGROUP_SIZE={sg}u", f"SUBGROUP_M={SUBGROUP_M}u",
                       f"SUBGROUP_N={SUBGROUP_N}u", f"SUBGROUP_MATRIX_M={SUBGROUP_MATRIX_M}u",
                       f"SUBGROUP_MATRIX_N={SUBGROUP_MATRIX_N}u", f"SUBGROUP_MATRIX_M_SIZE={cfg.m}u",
                       f"SUBGROUP_MATRIX_N_SIZE={cfg.n}u", f"SUBGROUP_MATRIX_K_SIZE={cfg.k}u"])
    src = preprocess(folder / "mul_mat_subgroup_matrix.wgsl", defs, folder)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "mul_mat_subgroup_matrix.wgsl"))
    w = rng.standard_normal((m, k)).astype(np.float16)            # src0: M rows of K (weights)
    x = rng.standard_normal((n, k)).astype(np.float32)            # src1: N rows of K (activations)
    # MulMatParams: offsets, m, n, k, strides (elements), batch sizes and broadcasts
    params = np.array([0, 0, 0, m, n, k, k, k, m * k, n * k, m * k, n * k, 1, 1, 1, 1], np.uint32)
    wg_m = -(-m // (SUBGROUP_M * SUBGROUP_MATRIX_M * cfg.m))
    wg_n = -(-n // (SUBGROUP_N * SUBGROUP_MATRIX_N * cfg.n))
    dst = dev.create_buffer(size=4 * m * n)
    warnings = dev.dispatch(pipe, {(0, 0): dev.create_buffer(w), (0, 1): dev.create_buffer(x), (0, 2): dst,
                                   (0, 3): dev.create_buffer(params)}, (wg_m * wg_n, 1, 1))
    got = dst.read(np.float32).reshape(n, m).astype(np.float64)
    # ggml: dst[n][m] = sum_k src0[m][k] * src1[n][k]; the kernel rounds src1 to f16 in shared
    # memory and accumulates in f16 subgroup matrices
    ref = x.astype(np.float16).astype(np.float64) @ w.astype(np.float64).T
    scale = np.abs(x.astype(np.float16).astype(np.float64)) @ np.abs(w.astype(np.float64)).T
    bound = k * 2.0 ** -11 * scale          # f16 accumulation: one rounding per multiply-add, at most
    err = np.abs(got - ref)
    return float(err.max()), bool((err <= bound).all()), warnings


def rms_norm(folder: Path, dev, ne0: int, ne1: int, ne2: int, rng, wg_size: int = 64):
    """rms_norm.wgsl (one invocation per row, `override wg_size`): the Params struct of offsets,
    strides and shape in elements plus eps, ceil(rows / wg_size) workgroups."""
    src_text = preprocess(folder / "rms_norm.wgsl", {}, folder)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src_text, "rms_norm.wgsl"),
                                       constants={"wg_size": wg_size})
    x = rng.standard_normal((ne2, ne1, ne0)).astype(np.float32)
    eps = 1e-6
    u = np.array([0, 0, ne0, ne0 * ne1, ne0 * ne1 * ne2, ne0, ne0 * ne1, ne0 * ne1 * ne2, ne0, ne1, ne2, 1],
                 np.uint32)
    params = np.concatenate([u.view(np.uint8), np.array([eps], np.float32).view(np.uint8)])
    dst = dev.create_buffer(size=x.nbytes)
    rows = ne1 * ne2
    warnings = dev.dispatch(pipe, {(0, 0): dev.create_buffer(x), (0, 1): dst, (0, 2): dev.create_buffer(params)},
                            (-(-rows // wg_size), 1, 1))
    got = dst.read(np.float32).reshape(x.shape).astype(np.float64)
    x64 = x.astype(np.float64)
    ref = x64 / np.sqrt((x64 * x64).mean(axis=-1, keepdims=True) + eps)
    err = np.abs(got - ref)
    bound = (ne0 + 4) * 2.0 ** -24 * np.abs(ref)        # f32 sum of ne0 squares, sqrt, divide, scale
    return float(err.max()), bool((err <= bound + 1e-30).all()), warnings


def binary(folder: Path, dev, op: str, dtype: str, shape_a, shape_b, rng, wg_size: int = 256):
    """binary.wgsl with TYPE_<T>, OP_<op>, WG_SIZE: dst = a (op) b with b broadcast by repetition
    (ggml's modulo indexing), contiguous tensors, ne[0] first, one invocation per element."""
    defs = defines_of([f"TYPE_{dtype.upper()}", f"OP_{op.upper()}", f"WG_SIZE={wg_size}u"])
    text = preprocess(folder / "binary.wgsl", defs, folder)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(text, "binary.wgsl"))
    dt = np.float32 if dtype == "f32" else np.float16
    a = rng.standard_normal(shape_a[::-1]).astype(dt)           # numpy order: ne3, ne2, ne1, ne0
    b = (rng.standard_normal(shape_b[::-1]) + (3 if op == "div" else 0)).astype(dt)
    sa = [1, shape_a[0], shape_a[0] * shape_a[1], shape_a[0] * shape_a[1] * shape_a[2]]
    sb = [1, shape_b[0], shape_b[0] * shape_b[1], shape_b[0] * shape_b[1] * shape_b[2]]
    params = np.array([a.size, 0, 0, 0, 0, 0, *sa, *sb, *shape_a[:3], *shape_b], np.uint32)
    dst = dev.create_buffer(size=a.nbytes)
    warnings = dev.dispatch(pipe, {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): dst,
                                   (0, 3): dev.create_buffer(params)}, (-(-a.size // wg_size), 1, 1))
    got = dst.read(dt).reshape(a.shape)
    reps = [x // y for x, y in zip(a.shape, b.shape)]
    bb = np.tile(b, reps)
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op]
    ref = fn(a.astype(np.float64), bb.astype(np.float64))
    err = np.abs(got.astype(np.float64) - ref)
    # one rounding of the exact result (IEEE): half an ulp of the type
    half_ulp = np.abs(ref) * (2.0 ** -24 if dtype == "f32" else 2.0 ** -11) + (1e-45 if dtype == "f32" else 6e-8)
    return float(err.max()), bool((err <= half_ulp).all()), warnings


UNARY = {   # op: (float64 reference, input range)
    "abs": (np.abs, 4), "neg": (np.negative, 4), "relu": (lambda x: np.maximum(x, 0), 4),
    "sqr": (np.square, 4), "sqrt": (np.sqrt, None), "exp": (np.exp, 4), "tanh": (np.tanh, 4),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), 6), "silu": (lambda x: x / (1 + np.exp(-x)), 6),
    "gelu": (lambda x: 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3))), 4),
}


def unary(folder: Path, dev, op: str, dtype: str, shape, rng, wg_size: int = 256):
    """unary.wgsl with TYPE_<T> (f32 when absent), the op's define and WG_SIZE, contiguous, one
    invocation per element. Held to 8 ulps of the type at the scale of the larger of input and
    result (the profile's exp/tanh/sqrt and the kernel's own formula each round a few times)."""
    defs = defines_of(([f"TYPE_{dtype.upper()}"] if dtype == "f16" else []) + [op.upper(), f"WG_SIZE={wg_size}u"])
    text = preprocess(folder / "unary.wgsl", defs, folder)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(text, "unary.wgsl"))
    dt = np.float32 if dtype == "f32" else np.float16
    fn, span = UNARY[op]
    x = (rng.random(shape[::-1]) * 9 if span is None else (rng.random(shape[::-1]) * 2 - 1) * span).astype(dt)
    st = [1, shape[0], shape[0] * shape[1], shape[0] * shape[1] * shape[2]]
    params = np.array([x.size, 0, 0, *st, *shape[:3]], np.uint32)
    dst = dev.create_buffer(size=x.nbytes)
    warnings = dev.dispatch(pipe, {(0, 0): dev.create_buffer(x), (0, 1): dst, (0, 2): dev.create_buffer(params)},
                            (-(-x.size // wg_size), 1, 1))
    got = dst.read(dt).reshape(x.shape).astype(np.float64)
    ref = fn(x.astype(np.float64))
    eps = 2.0 ** -23 if dtype == "f32" else 2.0 ** -10
    err = np.abs(got - ref)
    # relative to the larger of the result and the input: gelu's 1 + tanh(...) cancels for
    # negative inputs, so its error is the input's scale times a few ulps, not the result's
    scale = np.maximum(np.maximum(np.abs(ref), np.abs(x.astype(np.float64))), 2.0 ** -6)
    return float(err.max()), bool((err <= 8 * eps * scale).all()), warnings


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", nargs="?", help="llama.cpp's ggml/src/ggml-webgpu/wgsl-shaders, fetched")
    ap.add_argument("--profile", default="nvidia-h200")
    args = ap.parse_args(argv)
    if not args.folder:
        print("llama_webgpu: no folder given; skipping (fetch llama.cpp's ggml/src/ggml-webgpu/wgsl-shaders/ "
              "and pass its path)")
        return 0
    folder = Path(args.folder)
    dev = emu.Device(args.profile)
    rng = np.random.default_rng(0)
    rows = []
    for name, run in (
            ("mul_mat_subgroup_matrix (VEC, M=160 N=136 K=96)",
             lambda: mul_mat_subgroup_matrix(folder, dev, 160, 136, 96, True, rng)),
            ("mul_mat_subgroup_matrix (SCALAR, M=72 N=40 K=50)",
             lambda: mul_mat_subgroup_matrix(folder, dev, 72, 40, 50, False, rng)),
            ("rms_norm (ne0=512, 3 x 50 rows)", lambda: rms_norm(folder, dev, 512, 50, 3, rng)),
            *((f"binary {op} {t} (a 96x7x3, b 96x1x3 broadcast)",
               (lambda op=op, t=t: binary(folder, dev, op, t, (96, 7, 3, 1), (96, 1, 3, 1), rng)))
              for op in ("add", "sub", "mul", "div") for t in ("f32", "f16")),
            *((f"unary {op} {t} (64x5x2)", (lambda op=op, t=t: unary(folder, dev, op, t, (64, 5, 2, 1), rng)))
              for op in UNARY for t in ("f32", "f16"))):
        try:
            err, within, warnings = run()
            rows.append((name, "yes", f"{err:.3e}", "yes" if within else "NO",
                         f"{len(warnings)} out-of-bounds site(s)" if warnings else ""))
        except emu.EmuError as e:
            rows.append((name, "no", "-", "-", e.format().splitlines()[0]))
    print(f"{'kernel':<50} {'ran':<4} {'max |err|':<10} {'within bound':<17} notes")
    for r in rows:
        print(f"{r[0]:<50} {r[1]:<4} {r[2]:<10} {r[3]:<17} {r[4]}")
    return 0 if all(r[1] == "yes" and r[3] == "yes" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
