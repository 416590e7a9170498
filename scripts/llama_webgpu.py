"""Run llama.cpp's WebGPU kernels (ggml/src/ggml-webgpu/wgsl-shaders/) on the virtual device,
instantiated the way llama.cpp does it: the *.wgsl kernels through ggml-webgpu's pre_wgsl
preprocessor with the defines its shader library passes, the *.tmpl.wgsl templates (soft_max,
rope) through the variants that wgsl-shaders/embed_wgsl.py generates at build time; their params
structs, bindings and dispatches as ggml-webgpu.cpp fills them. The version is pinned: the
llama.cpp that PyPI's llama-cpp-python 0.3.19 bundles (vendor/llama.cpp), which
scripts/fetch_llama_wgsl.sh fetches with pip (sha256 checked) and extracts; nothing of it is
kept here. Each result is compared with a float64 numpy reference of the op. Without a folder it
says so and exits 0.

    python scripts/llama_webgpu.py "$(bash scripts/fetch_llama_wgsl.sh)" [--profile nvidia-h200] [--hw wgpu] [-k NAME]

--hw also runs every kernel without subgroup matrices on the machine's WebGPU adapter (lavapipe
here) through emu's hw backend, with the same bindings, checked against the same reference.
On a GPU machine `--hw dawn --record gpu.npz` runs every kernel there (subgroup matrices too)
and keeps each launch's inputs and output; `--against gpu.npz` then runs them on the profile and
counts, per launch, the outputs identical bit for bit to that GPU's (the H200's: traces/hw/).

Kernels: mul_mat_subgroup_matrix and mul_mat_reg_tile (f16 weights x f32 activations, f16
accumulators, VEC and SCALAR, ragged M/N/K so the select()-guarded loads run past the tile
edges), flash_attn (f16 or f32 K/V, f16 K/V read directly by the matrix loads (KV_DIRECT) where
ggml does, mask with ALiBi slopes, sinks, grouped-query heads, logit softcap), soft_max (plain,
f32/f16 mask with ALiBi, sink, in place), rope (norm and neox, f32 and f16, frequency factors,
YaRN), get_rows (f32, f16, i32), rms_norm (row_norm.wgsl), binary (add/sub/mul/div, f32 and f16,
broadcast by repetition), unary (abs, neg, relu, sqr, sqrt, exp, tanh, sigmoid, silu, gelu; f32
and f16). Each is held to a bound derived from its own arithmetic (said at each kernel). Two
kernels raise a negative base to a power, which WGSL leaves undefined: rms_norm's pow(x, 2.0)
gets |x|; gelu's pow(x, 3.0) is held to either outcome adapters give (see _gelu).
When emu reports a data race in a kernel (undefined behaviour in WGSL), the table says so and
checks the kernel's numbers once more with the race check off (emu*); a real adapter's wrong
result for such a kernel is shown, not counted as emu's failure.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

import emu
from emu.memory.bounds import tally

# -- the two ways llama.cpp instantiates a kernel ----------------------------------------------------
# Most kernels (*.wgsl with #include/#define/#ifdef) go through ggml-webgpu's pre_wgsl
# preprocessor at pipeline creation; soft_max and rope (*.tmpl.wgsl) are expanded at build time
# by wgsl-shaders/embed_wgsl.py into one shader per variant. Both are reimplemented here from
# their behaviour in the pinned version.

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _expand(text: str, macros: dict, visiting=()) -> str:
    def one(m):
        name = m.group(0)
        if name not in macros or name in visiting:
            return name
        return _expand(macros[name], macros, (*visiting, name))
    return _IDENT.sub(one, text)


def _truth(expr: str, macros: dict) -> bool:
    """#if/#elif: C integer arithmetic over macros (an undefined name is 0, an empty one 1)."""
    expr = re.sub(r"defined\s*\(?\s*(\w+)\s*\)?", lambda m: "1" if m.group(1) in macros else "0", expr)

    def value(m):
        name = m.group(0)
        if name not in macros:
            return "0"
        return "1" if macros[name] == "" else f"({_expand(macros[name], macros)})"
    expr = _IDENT.sub(value, expr)
    expr = re.sub(r"(\d+)[uU]\b", r"\1", expr)
    expr = expr.replace("&&", " and ").replace("||", " or ").replace("/", "//")
    expr = re.sub(r"!(?!=)", " not ", expr)
    try:
        return bool(eval(expr, {"__builtins__": {}}, {}))  # only numbers and operators remain
    except SyntaxError:
        raise ValueError(f"#if/#elif {expr.strip()!r} is not an expression pre_wgsl evaluates") from None


def preprocess(path: Path, defines: dict, folder: Path, macros: dict | None = None) -> str:
    """pre_wgsl: the defines given are fixed (a #define or #undef of one of them in the file
    does nothing, which is how the files' "default values" work); #include is relative to the
    shader folder; every other line has its macros expanded."""
    if macros is None:
        macros = dict(defines)
    out, stack = [], []                       # stack of (parent active, active, taken)
    for line in path.read_text().splitlines():
        s = line.strip()
        active = not stack or stack[-1][1]
        word = s[1:].split(None, 1)[0] if s.startswith("#") and len(s) > 1 else ""
        rest = s[1 + len(word):].strip() if word else ""
        if word in ("ifdef", "ifndef"):
            v = (rest.split()[0] in macros) == (word == "ifdef")
            stack.append((active, active and v, active and v))
        elif word == "if":
            v = active and _truth(rest, macros)
            stack.append((active, v, v))
        elif word == "elif":
            parent, _, taken = stack.pop()
            v = parent and not taken and _truth(rest, macros)
            stack.append((parent, v, taken or v))
        elif word == "else":
            parent, _, taken = stack.pop()
            stack.append((parent, parent and not taken, True))
        elif word == "endif":
            stack.pop()
        elif not active:
            continue
        elif word == "include":
            out.append(preprocess(folder / rest.strip('"'), defines, folder, macros))
        elif word == "define":
            name, _, value = rest.partition(" ")
            if name not in defines:
                macros[name] = value.strip()
        elif word == "undef":
            if rest not in defines:
                macros.pop(rest, None)
        elif word:
            raise ValueError(f"{path.name}: unknown directive #{word}")
        else:
            out.append(_expand(line, macros))
    return "\n".join(out)


def defines_of(items) -> dict:
    d = {}
    for item in items:
        k, _, v = item.partition("=")
        d[k] = v
    return d


def _block(text: str, name: str) -> str | None:
    m = re.search(rf"#define\({name}\)\s*(.*?)#end\({name}\)", text, re.S)
    return m.group(1).strip() if m else None


def _decls(text: str) -> dict:
    return {k.strip(): v.strip() for k, v in re.findall(r"#decl\((.*?)\)\s*(.*?)#enddecl\(\1\)", text, re.S)}


def template_variants(path: Path, folder: Path) -> dict:
    """embed_wgsl.py: a file with a VARIANTS block (a Python literal list) gives one shader per
    variant: the SHADER block with DECLS replaced by the variant's declarations (from the file's
    DECLS block and common_decls.tmpl), {{KEY}} placeholders by its REPLS, #include expanded.
    Named as the build names them (SHADER_NAME, base_SHADER_SUFFIX, base_SRC0_SRC1, base_TYPE)."""
    import ast
    text = path.read_text()
    base = path.name.split(".")[0]
    listed = _block(text, "VARIANTS")
    if listed is None:
        return {base: text}
    decls = _decls(_block(text, "DECLS") or "")
    common = folder / "common_decls.tmpl"
    if common.exists():
        decls.update(_decls(common.read_text()))
    shader = _block(text, "SHADER")
    out = {}
    for v in ast.literal_eval(listed):
        body = re.sub(r"\bDECLS\b", lambda _: "".join(decls[k] + "\n\n" for k in v.get("DECLS", [])), shader)
        repls = v.get("REPLS", {})
        for key, val in repls.items():
            body = re.sub(r"{{\s*" + re.escape(key) + r"\s*}}", str(val), body)
        body = re.sub(r'(?m)^\s*#include\s+"([^"]+)"\s*$', lambda m: (folder / m.group(1)).read_text(), body)
        if "SHADER_NAME" in v:
            name = v["SHADER_NAME"]
        elif "SHADER_SUFFIX" in v:
            name = f"{base}_{v['SHADER_SUFFIX']}"
        elif "SRC0_TYPE" in repls and "SRC1_TYPE" in repls:
            name = f"{base}_{repls['SRC0_TYPE']}_{repls['SRC1_TYPE']}"
        elif "TYPE" in repls:
            name = f"{base}_{repls['TYPE']}"
        else:
            name = base
        out[name] = body
    return out


# -- running a kernel: on the virtual device, and on a real WebGPU adapter when asked -------------

class Runner:
    """One kernel launch with the same WGSL, bindings, overrides and workgroups on emu and (for
    kernels without subgroup matrices, with --hw) on the machine's WebGPU adapter through emu's
    hw backend (lavapipe here). Returns {backend: (output array, note)}."""

    def __init__(self, dev, hw: str | None, record: bool = False, against: dict | None = None):
        self.dev, self.hw = dev, hw
        self.record, self.against = record, against     # --record: keep launches; --against: compare
        self.recorded, self.identical, self.launches = {}, [], 0

    def __call__(self, text, file, inputs: dict, groups, out_key, dtype, constants=None, matrices=False):
        key = f"{self.launches}:{file}"
        self.launches += 1
        bufs = {k: (self.dev.create_buffer(size=v) if isinstance(v, int) else self.dev.create_buffer(v))
                for k, v in inputs.items()}
        pipe = self.dev.create_compute_pipeline(self.dev.create_shader_module(text, file), constants=constants)
        warnings = self.dev.dispatch(pipe, bufs, groups)
        res = {"emu": (bufs[out_key].read(dtype), tally(warnings))}
        if self.against is not None:
            self._compare(key, inputs, res["emu"][0])
        if self.hw and (self.record or not matrices):
            from emu.hw.runner import HwError, run_on_adapter
            try:
                got = run_on_adapter(text, dispatch=groups, buffers=inputs, outputs=[out_key],
                                     overrides=constants, backend=self.hw)
                res[self.hw] = (np.frombuffer(got[out_key], dtype).copy(), "")
                if self.record:
                    self.recorded.update({f"{key}/in/{g}_{b}": np.asarray(v) for (g, b), v in inputs.items()
                                          if not isinstance(v, int)})
                    self.recorded[f"{key}/out"] = res[self.hw][0]
            except HwError as e:
                res[self.hw] = (None, str(e).splitlines()[0])
        return res

    def _compare(self, key, inputs, got):
        if f"{key}/out" not in self.against:
            return
        for (g, b), v in inputs.items():
            if isinstance(v, int):              # an output's size
                continue
            if not np.array_equal(np.asarray(v).view(np.uint8).ravel(), self.against[f"{key}/in/{g}_{b}"].view(np.uint8).ravel()):
                raise SystemExit(f"{key}: input {g}:{b} is not the recording's (another seed or version of this script)")
        gpu = self.against[f"{key}/out"]
        bits = {2: np.uint16, 4: np.uint32}[gpu.dtype.itemsize]
        same = int(np.sum(got.reshape(-1).view(bits)[: gpu.size] == gpu.view(bits)))
        if not any(k == key for k, _, _ in self.identical):
            self.identical.append((key, int(gpu.size), same))


# -- the kernels: each returns (results, float64 reference, bound per element) ------------------

VERSION = "0.3.19"        # llama-cpp-python's, whose vendor/llama.cpp this script instantiates

# ggml-webgpu-shader-lib.hpp's and ggml-webgpu.cpp's constants in that version
TILE_M, TILE_N, TILE_K, REG_WG_M, REG_WG_N = 8, 8, 32, 8, 8                # WEBGPU_MUL_MAT_*
SUBGROUP_M, SUBGROUP_N, SUBGROUP_MATRIX_M, SUBGROUP_MATRIX_N = 2, 2, 4, 2
FA_KV_SG_TILES, FA_WG_SIZE, KV_SEQ_PAD = 8, 128, 256                      # GGML_WEBGPU_FLASH_ATTN_*
MAX_WG_SIZE, ROW_SPLIT_WG_SIZE, ROW_NORM_WG_SIZE = 288, 64, 128            # WEBGPU_MAX_WG_SIZE, ...
U16, U32 = 2.0 ** -11, 2.0 ** -24            # unit roundoff of f16 and f32


def _max_invocations(dev) -> int:
    """ggml-webgpu requests the adapter's limits: maxComputeInvocationsPerWorkgroup."""
    return dev.profile.limits.get("max-compute-invocations-per-workgroup", 256)


def _matrix_config(dev):
    """The first f16 x f16 -> f16 configuration, as ggml-webgpu picks it from the adapter."""
    return next(c for c in dev.profile.configs if c.a_type == "f16" and c.c_type == "f16")


def _mul_mat_params(m, n, k):
    # MulMatParams: offsets, m, n, k, strides (elements), batch sizes and broadcasts
    return np.array([0, 0, 0, m, n, k, k, k, m * k, n * k, m * k, n * k, 1, 1, 1, 1], np.uint32)


def _mul_mat_ref(w, x):
    """ggml: dst[n][m] = sum_k src0[m][k] * src1[n][k]; both kernels round src1 to f16 in shared
    memory and accumulate in f16: at most one f16 rounding per product and per addition."""
    x16 = x.astype(np.float16).astype(np.float64)
    ref = x16 @ w.astype(np.float64).T
    scale = np.abs(x16) @ np.abs(w.astype(np.float64)).T
    return ref, 2 * w.shape[1] * U16 * scale


def mul_mat_subgroup_matrix(folder: Path, run: Runner, m: int, n: int, k: int, vec: bool, rng):
    cfg = _matrix_config(run.dev)
    defs = defines_of(["SRC0_INNER_TYPE=f16", "SRC1_INNER_TYPE=f32", "FLOAT", "MUL_ACC_FLOAT",
                       "INIT_SRC0_SHMEM_FLOAT", "INIT_SRC1_SHMEM_FLOAT", "VEC" if vec else "SCALAR",
                       f"TILE_M={TILE_M}u", f"TILE_N={TILE_N}u",
                       f"TILE_K={TILE_K}u", f"MAX_SUBGROUP_SIZE={run.dev.subgroup_size}u",
                       f"SUBGROUP_M={SUBGROUP_M}u", f"SUBGROUP_N={SUBGROUP_N}u",
                       f"SUBGROUP_MATRIX_M={SUBGROUP_MATRIX_M}u", f"SUBGROUP_MATRIX_N={SUBGROUP_MATRIX_N}u",
                       f"SUBGROUP_MATRIX_M_SIZE={cfg.m}u", f"SUBGROUP_MATRIX_N_SIZE={cfg.n}u",
                       f"SUBGROUP_MATRIX_K_SIZE={cfg.k}u"])
    src = preprocess(folder / "mul_mat_subgroup_matrix.wgsl", defs, folder)
    w = rng.standard_normal((m, k)).astype(np.float16)            # src0: M rows of K (weights)
    x = rng.standard_normal((n, k)).astype(np.float32)            # src1: N rows of K (activations)
    wg_m = -(-m // (SUBGROUP_M * SUBGROUP_MATRIX_M * cfg.m))
    wg_n = -(-n // (SUBGROUP_N * SUBGROUP_MATRIX_N * cfg.n))
    res = run(src, "mul_mat_subgroup_matrix.wgsl", {(0, 0): w, (0, 1): x, (0, 2): 4 * m * n,
                                                    (0, 3): _mul_mat_params(m, n, k)},
              (wg_m * wg_n, 1, 1), (0, 2), np.float32, matrices=True)
    return (res, *_mul_mat_ref(w, x))


def mul_mat_reg_tile(folder: Path, run: Runner, m: int, n: int, k: int, vec: bool, rng):
    """The register-tiled matmul (no subgroup matrices): f16 shared memory, each invocation a
    TILE_M x TILE_N block of f16 sums; one workgroup per WORKGROUP_SIZE_M*TILE_M x
    WORKGROUP_SIZE_N*TILE_N output block."""
    defs = defines_of(["SRC0_INNER_TYPE=f16", "SRC1_INNER_TYPE=f32", "FLOAT", "MUL_ACC_FLOAT",
                       "INIT_SRC0_SHMEM_FLOAT", "INIT_SRC1_SHMEM_FLOAT", "VEC" if vec else "SCALAR",
                       f"TILE_M={TILE_M}u", f"TILE_N={TILE_N}u", f"TILE_K={TILE_K}u", f"WORKGROUP_SIZE_M={REG_WG_M}u",
                       f"WORKGROUP_SIZE_N={REG_WG_N}u"])
    src = preprocess(folder / "mul_mat_reg_tile.wgsl", defs, folder)
    w = rng.standard_normal((m, k)).astype(np.float16)
    x = rng.standard_normal((n, k)).astype(np.float32)
    groups = -(-m // (REG_WG_M * TILE_M)) * -(-n // (REG_WG_N * TILE_N))
    res = run(src, "mul_mat_reg_tile.wgsl", {(0, 0): w, (0, 1): x, (0, 2): 4 * m * n,
                                             (0, 3): _mul_mat_params(m, n, k)},
              (groups, 1, 1), (0, 2), np.float32)
    return (res, *_mul_mat_ref(w, x))


def _alibi(n_head: int, max_bias: float):
    """ggml's ALiBi constants and per-head slopes (1 for every head when max_bias is 0)."""
    n_head_log2 = 2.0 ** np.floor(np.log2(n_head))
    m0, m1 = 2.0 ** (-max_bias / n_head_log2), 2.0 ** (-(max_bias / 2.0) / n_head_log2)
    h = np.arange(n_head, dtype=np.float64)
    slopes = np.where(h < n_head_log2, m0 ** (h + 1), m1 ** (2 * (h - n_head_log2) + 1)) if max_bias > 0 \
        else np.ones(n_head)
    return n_head_log2, m0, m1, slopes


def flash_attn(folder: Path, run: Runner, n_heads: int, seq_q: int, seq_kv: int, rng, *, kv="f16",
               mask=False, sinks=False, softcap=0.0, max_bias=0.0, head_dim=64, kv_heads=None):
    """flash_attn.wgsl as ggml-webgpu instantiates it: Q_TILE = the matrix M, KV_TILE the largest
    multiple of N (at most 8 of them) that fits the workgroup memory, WG_SIZE = max(subgroup
    size, 128); one workgroup per Q_TILE rows of a head. With f16 K/V, a head size that is a
    multiple of the matrix K and a KV length that is a multiple of N, KV_DIRECT: K and V are
    read by the matrix loads straight from their buffers, KV_TILE a divisor of the KV cache's
    padding (256), which the buffers hold as a KV cache does (zero rows past the length).
    Q f32, K/V f16 or f32 (rounded to f16 in shared memory), mask f16, output
    [head_dim, n_heads, seq_q] f32. ggml divides the op's scale by the softcap before it fills
    Params: `scale` here is that divided scale."""
    cfg = _matrix_config(run.dev)
    kv_heads = kv_heads or n_heads
    kv_direct = kv == "f16" and head_dim % cfg.k == 0 and seq_kv % cfg.n == 0
    limit = run.dev.profile.limits.get("max-compute-workgroup-storage-size", 16384)
    base = 2 * head_dim * cfg.m * 2 + 2 * cfg.m * 4
    per_kv = 2 * ((0 if kv_direct else head_dim) + (cfg.m if mask else 0) + cfg.m)
    kv_tile = min((limit - base) // per_kv // cfg.n * cfg.n, cfg.n * FA_KV_SG_TILES)
    while kv_direct and KV_SEQ_PAD % kv_tile:
        kv_tile -= cfg.n
    wg = max(run.dev.subgroup_size, FA_WG_SIZE)
    defs = [f"KV_{kv.upper()}", f"HEAD_DIM_QK={head_dim}", f"HEAD_DIM_V={head_dim}", f"SG_MAT_M={cfg.m}",
            f"SG_MAT_N={cfg.n}", f"SG_MAT_K={cfg.k}", f"Q_TILE={cfg.m}", f"KV_TILE={kv_tile}", f"WG_SIZE={wg}"]
    defs += ["MASK"] * mask + ["SINKS"] * sinks + ["LOGIT_SOFTCAP"] * bool(softcap) + ["KV_DIRECT"] * kv_direct
    src = preprocess(folder / "flash_attn.wgsl", defines_of(defs), folder)
    kdt = np.float16 if kv == "f16" else np.float32
    q = rng.standard_normal((n_heads, seq_q, head_dim)).astype(np.float32)
    kk = rng.standard_normal((kv_heads, seq_kv, head_dim)).astype(kdt)
    vv = rng.standard_normal((kv_heads, seq_kv, head_dim)).astype(kdt)
    mk = np.where(rng.random((seq_q, seq_kv)) < 0.2, -np.inf, rng.standard_normal((seq_q, seq_kv))).astype(np.float16)
    mk[:, 0] = 0                                   # every row keeps one key
    sk = rng.standard_normal(n_heads).astype(np.float32)
    scale = 1 / np.sqrt(head_dim)
    n_head_log2, m0, m1, slopes = _alibi(n_heads, max_bias)
    rows = -(-seq_kv // KV_SEQ_PAD) * KV_SEQ_PAD if kv_direct else seq_kv      # the cache's rows
    u = [0] * 6 + [n_heads, seq_q, seq_kv, head_dim, seq_q * head_dim, n_heads * seq_q * head_dim,
                   head_dim, rows * head_dim, kv_heads * rows * head_dim,
                   head_dim, rows * head_dim, kv_heads * rows * head_dim, seq_q * seq_kv, n_heads // kv_heads]
    f = [scale, max_bias, softcap, n_head_log2, m0, m1]
    params = np.concatenate([np.array(u, np.uint32).view(np.uint8), np.array(f, np.float32).view(np.uint8)])
    pad = ((0, 0), (0, rows - seq_kv), (0, 0))
    inputs = {(0, 0): q, (0, 1): np.pad(kk, pad), (0, 2): np.pad(vv, pad)}
    extra = [mk] * mask + [sk] * sinks
    for i, arr in enumerate(extra):
        inputs[(0, 3 + i)] = arr
    out_key = (0, 3 + len(extra))
    inputs[out_key] = 4 * head_dim * n_heads * seq_q
    inputs[(0, 4 + len(extra))] = params
    groups = n_heads * -(-seq_q // cfg.m)
    res = run(src, "flash_attn.wgsl", inputs, (groups, 1, 1), out_key, np.float32, matrices=True)
    # reference: the operands as the kernel holds them (f16), the rest in float64
    q16 = q.astype(np.float16).astype(np.float64)
    k16 = kk.astype(np.float16).astype(np.float64).repeat(n_heads // kv_heads, axis=0)
    v16 = vv.astype(np.float16).astype(np.float64).repeat(n_heads // kv_heads, axis=0)
    s = np.einsum("hqd,hkd->hqk", q16, k16) * scale
    s_err = head_dim * U16 * np.einsum("hqd,hkd->hqk", np.abs(q16), np.abs(k16)) * scale  # f16 sums
    if softcap:
        s = softcap * np.tanh(s)
    if mask:
        s = s + slopes[:, None, None] * mk.astype(np.float64)[None]
    mx = s.max(axis=-1, keepdims=True)
    if sinks:
        mx = np.maximum(mx, sk.astype(np.float64)[:, None, None])
    p = np.exp(s - mx)
    den = p.sum(-1, keepdims=True) + (np.exp(sk.astype(np.float64)[:, None, None] - mx) if sinks else 0)
    o = np.einsum("hqk,hkd->hqd", p, v16) / den
    # f16 products and sums over the keys, P and O rounded to f16 once per KV tile, the logits'
    # own error carried through exp (twice: numerator and denominator)
    tiles = -(-seq_kv // kv_tile)
    mag = np.einsum("hqk,hkd->hqd", p, np.abs(v16)) / den
    finite = np.where(np.isfinite(s), s_err, 0).max(axis=-1, keepdims=True)
    bound = ((seq_kv + 2 * tiles + 4) * U16 + 2 * finite * (softcap and 1 or 1)) * mag + 1e-6
    return res, o.transpose(1, 0, 2), bound.transpose(1, 0, 2)


def soft_max(folder: Path, run: Runner, ne0: int, ne1: int, ne2: int, rng, *, mask=None, sink=False,
             inplace=False, max_bias=0.0, scale=0.7):
    """soft_max.tmpl.wgsl's variant for the case, one workgroup per row, `override wg_size` =
    WEBGPU_ROW_SPLIT_WG_SIZE;
    mask (f32 or f16) broadcast over the heads (ne2), ALiBi slopes when max_bias > 0."""
    name = "soft_max_f32" + (f"_mask_{mask}" if mask else "") + ("_sink" if sink else "") + \
           ("_inplace" if inplace else "")
    text = template_variants(folder / "soft_max.tmpl.wgsl", folder)[name]
    x = (rng.standard_normal((ne2, ne1, ne0)) * 3).astype(np.float32)
    mdt = np.float16 if mask == "f16" else np.float32
    mk = np.where(rng.random((ne1, ne0)) < 0.2, -np.inf, rng.standard_normal((ne1, ne0))).astype(mdt)
    mk[:, 0] = 0
    sk = rng.standard_normal(ne2).astype(np.float32)
    n_head_log2, m0, m1, slopes = _alibi(ne2, max_bias)
    rows = ne1 * ne2
    u = [0, 0, 0, 0, ne0, ne0 * ne1, rows * ne0, ne0, ne0 * ne1, ne0 * ne1, ne0, ne0 * ne1, rows * ne0,
         rows * ne0, ne0, ne1, ne2, 1, 1]
    params = np.concatenate([np.array(u, np.uint32).view(np.uint8),
                             np.array([scale, max_bias, n_head_log2, m0, m1], np.float32).view(np.uint8)])
    inputs, b = {(0, 0): x}, 1
    for arr in [mk] * bool(mask) + [sk] * sink:
        inputs[(0, b)], b = arr, b + 1
    out_key = (0, 0) if inplace else (0, b)
    if not inplace:
        inputs[out_key], b = x.nbytes, b + 1
    inputs[(0, b)] = params
    res = run(text, name + ".wgsl", inputs, (rows, 1, 1), out_key, np.float32, constants={"wg_size": ROW_SPLIT_WG_SIZE})
    v = x.astype(np.float64) * scale + (slopes[:, None, None] * mk.astype(np.float64)[None] if mask else 0)
    mx = v.max(-1, keepdims=True)
    if sink:
        mx = np.maximum(mx, sk.astype(np.float64)[:, None, None])
    e = np.exp(v - mx)
    den = e.sum(-1, keepdims=True) + (np.exp(sk.astype(np.float64)[:, None, None] - mx) if sink else 0)
    ref = e / den
    # f32: the logit (a product and a multiply-add, pow's slope), exp (3 + 2|x| ulps, WGSL's
    # bound), the sum of ne0 terms, the reciprocal and the final product
    spread = np.where(np.isfinite(v), np.abs(v - mx), 0).max(-1, keepdims=True)
    logit = 4 * U32 * np.where(np.isfinite(v), np.abs(v) + 8 * np.abs(v - x * scale), 0).max(-1, keepdims=True)
    rel = 2 * logit + 2 * (3 + 2 * spread) * 2 * U32 + (ne0 + 6) * U32
    return res, ref, rel * ref + 1e-30


def rope(folder: Path, run: Runner, dtype: str, mode: int, ne0: int, n_dims: int, ne1: int, ne2: int, rng, *,
         ff=False, ext_factor=0.0, freq_scale=1.0):
    """rope.tmpl.wgsl: ggml's rotary embedding, mode 0 (adjacent pairs) or 2 (neox: i and
    i + n_dims/2), positions src1[i2] (i32) per ne2 index, optional frequency factors (src2),
    YaRN's ramp when ext_factor != 0; one invocation per pair, `override wg_size` =
    WEBGPU_MAX_WG_SIZE and one workgroup per wg_size elements (half of them idle), as
    ggml-webgpu dispatches it. Params: offsets, strides, n_threads, shape, n_dims, mode, the
    six floats and the four M-RoPE sections (0: neither mode uses them)."""
    name = f"rope_{dtype}" + ("_ff" if ff else "")
    text = template_variants(folder / "rope.tmpl.wgsl", folder)[name]
    dt = np.float32 if dtype == "f32" else np.float16
    x = rng.standard_normal((ne2, ne1, ne0)).astype(dt)
    pos = rng.integers(0, 4, ne2).astype(np.int32)
    freqs = (1 + rng.random(n_dims // 2)).astype(np.float32)
    theta_scale, attn_factor, corr0, corr1 = 10000.0 ** (-2.0 / n_dims), 1.0, 2.0, 12.0
    n_threads = x.size // 2
    u = [0, 0, 0, 0, ne0, ne0 * ne1, x.size, ne0, ne0 * ne1, x.size, n_threads, ne0, ne1, ne2, n_dims, mode]
    f = [theta_scale, attn_factor, freq_scale, ext_factor, corr0, corr1]
    params = np.concatenate([np.array(u, np.uint32).view(np.uint8), np.array(f, np.float32).view(np.uint8),
                             np.zeros(4, np.uint32).view(np.uint8)])
    inputs = {(0, 0): x, (0, 1): pos}
    if ff:
        inputs[(0, 2)] = freqs
    out_key = (0, 2 + ff)
    inputs[out_key] = x.nbytes
    inputs[(0, 3 + ff)] = params
    res = run(text, name + ".wgsl", inputs, (-(-x.size // MAX_WG_SIZE), 1, 1), out_key, dt,
              constants={"wg_size": MAX_WG_SIZE})
    # reference (float64): ggml_rope_yarn on each pair
    x64 = x.astype(np.float64)
    ref, bound = x64.copy(), np.zeros_like(x64)
    i0 = np.arange(0, n_dims, 2)
    extrap = pos.astype(np.float64)[:, None] * theta_scale ** (i0 / 2.0)[None] / (freqs[i0 // 2] if ff else 1.0)
    theta, mscale = freq_scale * extrap, attn_factor
    if ext_factor:
        y = ((i0 // 2) - corr0) / max(0.001, corr1 - corr0)
        mix = (1 - np.clip(y, 0, 1)) * ext_factor
        theta = theta * (1 - mix) + extrap * mix
        mscale *= 1 + 0.1 * np.log(1 / freq_scale)
    c, s_ = np.cos(theta) * mscale, np.sin(theta) * mscale
    a_idx, b_idx = (i0, i0 + 1) if mode == 0 else (i0 // 2, i0 // 2 + n_dims // 2)
    xa, xb = x64[..., a_idx], x64[..., b_idx]
    ref[..., a_idx] = xa * c[:, None] - xb * s_[:, None]
    ref[..., b_idx] = xa * s_[:, None] + xb * c[:, None]
    # f32: the angle (pow, products, a division: 8 ulps of it) and WGSL's 2^-11 absolute
    # error for sin and cos on [-pi, pi]; then the rotation's products and sum; f16 storage
    dth = 8 * U32 * np.abs(theta) * 2 + 2.0 ** -11
    e = (np.abs(xa) + np.abs(xb)) * (dth * mscale)[:, None] + 4 * U32 * (np.abs(xa) + np.abs(xb)) * mscale
    bound[..., a_idx] = e
    bound[..., b_idx] = e
    if dtype == "f16":
        bound += U16 * np.abs(ref) + 6e-8
    return res, ref, bound


GET_ROWS = {   # src type: (ggml-webgpu's defines for it, dst numpy type)
    "f32": (["F32", "SRC_TYPE=f32", "DST_TYPE=f32"], np.float32),
    "f32_vec": (["F32_VEC", "SRC_TYPE=vec4<f32>", "DST_TYPE=vec4<f32>"], np.float32),
    "f16": (["F16", "SRC_TYPE=f16", "DST_TYPE=f32"], np.float32),
    "i32": (["I32", "SRC_TYPE=i32", "DST_TYPE=i32"], np.int32),
}


def get_rows(folder: Path, run: Runner, dtype: str, ne0: int, n_src_rows: int, n_rows: int, ne2: int, rng):
    """get_rows.wgsl (the float-parallel variants): dst row r of batch i2 = src row idx[r, i2],
    one invocation per element (per vec4 for f32 rows of a multiple of 4: F32_VEC), WG_SIZE =
    WEBGPU_MAX_WG_SIZE; exact."""
    vec = dtype == "f32" and ne0 % 4 == 0
    defs, out_dt = GET_ROWS[dtype + "_vec" * vec]
    block = 4 if vec else 1
    text = preprocess(folder / "get_rows.wgsl",
                      defines_of(["FLOAT_PARALLEL", *defs, f"BLOCK_SIZE={block}u", f"WG_SIZE={MAX_WG_SIZE}"]), folder)
    src = (rng.standard_normal((ne2, n_src_rows, ne0)) * 100).astype({"f32": np.float32, "f16": np.float16,
                                                                       "i32": np.int32}[dtype])
    idx = rng.integers(0, n_src_rows, (ne2, n_rows)).astype(np.int32)
    u = [0, 0, 0, ne0, ne0 * n_src_rows, src.size, 1, n_rows, n_rows * ne2, ne0, ne0 * n_rows,
         ne0 * n_rows * ne2, ne0, n_rows, ne2, 1, ne2, 1]
    threads = ne0 // block * n_rows * ne2
    res = run(text, f"get_rows_{dtype}.wgsl",
              {(0, 0): src, (0, 1): idx, (0, 2): 4 * ne0 * n_rows * ne2, (0, 3): np.array(u, np.uint32)},
              (-(-threads // MAX_WG_SIZE), 1, 1), (0, 2), out_dt)
    ref = np.stack([src[b][idx[b]] for b in range(ne2)]).astype(np.float64)
    return res, ref, np.zeros_like(ref)


def rms_norm(folder: Path, run: Runner, ne0: int, ne1: int, ne2: int, rng):
    """row_norm.wgsl with RMS_NORM and WG_SIZE = min(adapter's invocations, 128): one workgroup
    per row, a strided sum of pow(x, 2.0) per invocation, then a tree over workgroup memory;
    the Params struct of offsets, strides and shape in elements plus eps."""
    wg = min(_max_invocations(run.dev), ROW_NORM_WG_SIZE)
    src_text = preprocess(folder / "row_norm.wgsl", defines_of(["RMS_NORM", f"WG_SIZE={wg}"]), folder)
    # |x|: the kernel squares with pow(x, 2.0), which WGSL defines as exp2(2 * log2(x)): NaN for
    # x < 0 on the profile (as the H200's pow, EX2(y * LG2(x)), measured: traces/hw/README.md)
    x = np.abs(rng.standard_normal((ne2, ne1, ne0))).astype(np.float32)
    eps = 1e-6
    u = np.array([0, 0, ne0, ne0 * ne1, ne0 * ne1 * ne2, ne0, ne0 * ne1, ne0 * ne1 * ne2, ne0, ne1, ne2, 1],
                 np.uint32)
    params = np.concatenate([u.view(np.uint8), np.array([eps], np.float32).view(np.uint8)])
    res = run(src_text, "row_norm.wgsl", {(0, 0): x, (0, 1): x.nbytes, (0, 2): params},
              (ne1 * ne2, 1, 1), (0, 1), np.float32)
    x64 = x.astype(np.float64)
    ref = x64 / np.sqrt((x64 * x64).mean(axis=-1, keepdims=True) + eps)
    # f32: the squares (pow: WGSL's exp2(2 * log2|x|) bound, a few ulps), a sum of ne0 terms,
    # sqrt, the reciprocal and the product
    return res, ref, (ne0 + 12) * U32 * np.abs(ref) + 1e-30


def binary(folder: Path, run: Runner, op: str, dtype: str, shape_a, shape_b, rng):
    """binary.wgsl with OP_<op>, TYPE_<T>, WG_SIZE = the adapter's invocations per workgroup:
    dst = a (op) b with b broadcast by repetition (ggml's modulo indexing), contiguous tensors,
    ne[0] first, one invocation per element."""
    wg_size = _max_invocations(run.dev)
    defs = defines_of([f"OP_{op.upper()}", f"TYPE_{dtype.upper()}", f"WG_SIZE={wg_size}"])
    text = preprocess(folder / "binary.wgsl", defs, folder)
    dt = np.float32 if dtype == "f32" else np.float16
    a = rng.standard_normal(shape_a[::-1]).astype(dt)           # numpy order: ne3, ne2, ne1, ne0
    b = (rng.standard_normal(shape_b[::-1]) + (3 if op == "div" else 0)).astype(dt)
    sa = [1, shape_a[0], shape_a[0] * shape_a[1], shape_a[0] * shape_a[1] * shape_a[2]]
    sb = [1, shape_b[0], shape_b[0] * shape_b[1], shape_b[0] * shape_b[1] * shape_b[2]]
    params = np.array([a.size, 0, 0, 0, 0, 0, *sa, *sb, *shape_a[:3], *shape_b], np.uint32)
    res = run(text, "binary.wgsl", {(0, 0): a, (0, 1): b, (0, 2): a.nbytes, (0, 3): params},
              (-(-a.size // wg_size), 1, 1), (0, 2), dt)
    bb = np.tile(b, [x // y for x, y in zip(a.shape, b.shape)])
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op]
    ref = fn(a.astype(np.float64), bb.astype(np.float64))
    # add, sub, mul: one rounding (half an ulp of the type). Division: WGSL's accuracy, 2.5 ULP of
    # the result (the nvidia-h200 profile divides as the hardware's reciprocal path does, not
    # correctly rounded: up to 1.9 ULP in f32 and 2.3 in f16 on 262,144 such quotients), with
    # the ULP of a subnormal result the subnormal spacing
    if op == "div":
        return res, ref, 2.5 * wgsl_ulp(ref, dtype)
    u = U32 if dtype == "f32" else U16
    return res, ref, np.abs(ref) * u + (1e-45 if dtype == "f32" else 6e-8)


def wgsl_ulp(x, dtype: str):
    """WGSL's ULP(x) for the type: the gap between the two floats closest around x (the smaller
    one at a power of two; the subnormal spacing below the normal range)."""
    mant, least = (23, 2.0 ** -149) if dtype == "f32" else (10, 2.0 ** -24)
    with np.errstate(divide="ignore"):
        e = np.ceil(np.log2(np.abs(x))) - 1
    return np.maximum(np.exp2(e - mant), least)


UNARY = {   # op: (float64 reference, input range)
    "abs": (np.abs, 4), "neg": (np.negative, 4), "relu": (lambda x: np.maximum(x, 0), 4),
    "sqr": (np.square, 4), "sqrt": (np.sqrt, None), "exp": (np.exp, 4), "tanh": (np.tanh, 4),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), 6), "silu": (lambda x: x / (1 + np.exp(-x)), 6),
    "gelu": (lambda x: (_gelu(x, cube=True), _gelu(x, cube=False)), 4),
}


def _gelu(x, cube: bool):
    """unary.wgsl's GELU: 0.5 x (1 + tanh(clamp(sqrt(2 / pi) * (x + 0.044715 * pow(x, 3.0)),
    -9.010913, 9.010913))). pow of a negative base is undefined in WGSL (exp2(3 * log2(x))), and
    adapters differ: lavapipe gives x^3 (cube), the nvidia-h200 profile NaN, which clamp (max,
    then min, each returning the number: IEEE maxNum/minNum) turns into its lower edge, so
    0.5 x (1 + tanh(-9.010913)), about -0, for x < 0. Both outcomes are references."""
    with np.errstate(invalid="ignore"):
        inner = np.sqrt(2 / 3.14159265) * (x + 0.044715 * (x if cube else np.where(x < 0, np.nan, x)) ** 3)
    return 0.5 * x * (1 + np.tanh(np.where(np.isnan(inner), -9.010913, np.clip(inner, -9.010913, 9.010913))))


def unary(folder: Path, run: Runner, op: str, dtype: str, shape, rng):
    """unary.wgsl with the op's define, TYPE_<T> and WG_SIZE = the adapter's invocations per
    workgroup, contiguous, one invocation per element. Held to 8 ulps of the type at the scale of the larger of input and
    result (the profile's exp/tanh/sqrt and the kernel's own formula each round a few times;
    gelu's 1 + tanh(...) cancels for negative inputs, so its error is the input's scale), and
    no less than 8 ulps of 1 for tanh, whose WGSL accuracy is inherited from exp: an absolute
    error (lavapipe's tanh near 0 is off by about 1e-7)."""
    wg_size = _max_invocations(run.dev)
    defs = defines_of([op.upper(), f"TYPE_{dtype.upper()}", f"WG_SIZE={wg_size}"])
    text = preprocess(folder / "unary.wgsl", defs, folder)
    dt = np.float32 if dtype == "f32" else np.float16
    fn, span = UNARY[op]
    x = (rng.random(shape[::-1]) * 9 if span is None else (rng.random(shape[::-1]) * 2 - 1) * span).astype(dt)
    st = [1, shape[0], shape[0] * shape[1], shape[0] * shape[1] * shape[2]]
    params = np.array([x.size, 0, 0, *st, *shape[:3]], np.uint32)
    res = run(text, "unary.wgsl", {(0, 0): x, (0, 1): x.nbytes, (0, 2): params},
              (-(-x.size // wg_size), 1, 1), (0, 1), dt)
    ref = fn(x.astype(np.float64))               # a tuple when the op's result is one of several
    eps = 2.0 ** -23 if dtype == "f32" else 2.0 ** -10
    big = np.max(np.abs(ref), axis=0) if isinstance(ref, tuple) else np.abs(ref)
    scale = np.maximum(np.maximum(big, np.abs(x.astype(np.float64))), 1.0 if op == "tanh" else 2.0 ** -6)
    return res, ref, 8 * eps * scale


def cases(folder: Path, run: Runner, rng):
    """(name, thunk) for every kernel run, in the table's order."""
    f = folder
    yield "mul_mat_subgroup_matrix (VEC, M=160 N=136 K=96)", lambda: mul_mat_subgroup_matrix(f, run, 160, 136, 96, True, rng)
    yield "mul_mat_subgroup_matrix (SCALAR, M=72 N=40 K=50)", lambda: mul_mat_subgroup_matrix(f, run, 72, 40, 50, False, rng)
    yield "mul_mat_reg_tile (VEC, M=136 N=72 K=80)", lambda: mul_mat_reg_tile(f, run, 136, 72, 80, True, rng)
    yield "mul_mat_reg_tile (SCALAR, M=70 N=33 K=45)", lambda: mul_mat_reg_tile(f, run, 70, 33, 45, False, rng)
    yield "flash_attn (f16 KV, 2 heads, q 20, kv 150)", lambda: flash_attn(f, run, 2, 20, 150, rng)
    yield "flash_attn (f32 KV, mask, ALiBi, q 16, kv 70)", lambda: flash_attn(f, run, 4, 16, 70, rng, kv="f32", mask=True, max_bias=8.0)
    yield "flash_attn (f16, mask+sinks, GQA 4:2, q 9, kv 40)", lambda: flash_attn(f, run, 4, 9, 40, rng, mask=True, sinks=True, kv_heads=2)
    yield "flash_attn (f16, logit softcap 20, q 16, kv 64)", lambda: flash_attn(f, run, 1, 16, 64, rng, softcap=20.0)
    yield "soft_max (ne0=100, 7x3 rows)", lambda: soft_max(f, run, 100, 7, 3, rng)
    yield "soft_max (mask f32, ALiBi, ne0=40, 5x4)", lambda: soft_max(f, run, 40, 5, 4, rng, mask="f32", max_bias=8.0)
    yield "soft_max (mask f16 + sink, ne0=70, 3x2)", lambda: soft_max(f, run, 70, 3, 2, rng, mask="f16", sink=True)
    yield "soft_max (inplace, ne0=13, 4x2)", lambda: soft_max(f, run, 13, 4, 2, rng, inplace=True)
    yield "rope (f32, norm, ne0=64 n_dims=64, 5x3)", lambda: rope(f, run, "f32", 0, 64, 64, 5, 3, rng)
    yield "rope (f32, neox, n_dims 32 of 48, freq factors)", lambda: rope(f, run, "f32", 2, 48, 32, 4, 3, rng, ff=True)
    yield "rope (f16, neox, YaRN ext 1 scale 0.5)", lambda: rope(f, run, "f16", 2, 64, 64, 3, 2, rng, ext_factor=1.0, freq_scale=0.5)
    for t in ("f32", "f16", "i32"):
        yield f"get_rows {t} (ne0=37, 9 of 12 rows, 3 batches)", (lambda t=t: get_rows(f, run, t, 37, 12, 9, 3, rng))
    yield "rms_norm (ne0=512, 3 x 50 rows)", lambda: rms_norm(f, run, 512, 50, 3, rng)
    for op in ("add", "sub", "mul", "div"):
        for t in ("f32", "f16"):
            yield f"binary {op} {t} (a 96x7x3, b 96x1x3 broadcast)", (lambda op=op, t=t: binary(f, run, op, t, (96, 7, 3, 1), (96, 1, 3, 1), rng))
    for op in UNARY:
        for t in ("f32", "f16"):
            yield f"unary {op} {t} (64x5x2)", (lambda op=op, t=t: unary(f, run, op, t, (64, 5, 2, 1), rng))
    # added after the first H200 recording (kept last, so that its launches keep their inputs)
    yield "flash_attn (f16, mask, ALiBi, logit softcap 30, q 24, kv 96)", lambda: flash_attn(f, run, 2, 24, 96, rng, mask=True, softcap=30.0, max_bias=8.0)


NEEDS = {"mul_mat_subgroup_matrix": "mul_mat_subgroup_matrix.wgsl", "mul_mat_reg_tile": "mul_mat_reg_tile.wgsl",
         "flash_attn": "flash_attn.wgsl", "soft_max": "soft_max.tmpl.wgsl", "rope": "rope.tmpl.wgsl",
         "get_rows": "get_rows.wgsl", "rms_norm": "row_norm.wgsl", "binary": "binary.wgsl",
         "unary": "unary.wgsl"}


def judge(got, ref, bound):
    """Max error and in bound, for one reference or a tuple of them (the defined outcomes of an
    operation WGSL leaves undefined): each element is held to the nearest."""
    if got is None:
        return "-", "-"
    refs = ref if isinstance(ref, tuple) else (ref,)
    got = got.reshape(-1)[: refs[0].size].reshape(refs[0].shape).astype(np.float64)
    err = np.minimum.reduce([np.where(np.isinf(r) & (got == r), 0.0, np.abs(got - r)) for r in refs])
    ok = bool((err <= bound).all())
    return f"{float(np.nanmax(err)) if err.size else 0.0:.3e}", "yes" if ok else "NO"


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", nargs="?", help="llama.cpp's ggml/src/ggml-webgpu/wgsl-shaders, fetched")
    ap.add_argument("--profile", default="nvidia-h200")
    ap.add_argument("--hw", choices=("wgpu", "dawn"), help="also run the kernels without subgroup matrices "
                    "on this machine's WebGPU adapter (lavapipe here) through emu's hw backend")
    ap.add_argument("-k", dest="only", help="run only the kernels whose name contains this")
    ap.add_argument("--record", metavar="NPZ", help="with --hw: keep every launch's inputs and the adapter's output")
    ap.add_argument("--against", metavar="NPZ", help="count emu's outputs identical to a --record file's")
    ap.add_argument("--seed", type=int, default=0, help="of the inputs (a recording holds its seed's)")
    args = ap.parse_args(argv)
    if not args.folder or not Path(args.folder).is_dir():
        print(f"llama_webgpu: {'no folder given' if not args.folder else args.folder + ' is not a folder'}; "
              f"skipping (bash scripts/fetch_llama_wgsl.sh fetches llama-cpp-python {VERSION}'s wgsl-shaders "
              "and prints their folder: pass it)")
        return 0
    folder = Path(args.folder)
    dev = emu.Device(args.profile)
    quiet = emu.Device(args.profile, race_check=False)
    against = None
    if args.against:
        with np.load(args.against) as z:
            against = {k: z[k] for k in z.files}
    run = Runner(dev, args.hw, record=bool(args.record), against=against)
    rng = np.random.default_rng(args.seed)
    rows, failed = [], False
    for name, thunk in cases(folder, run, rng):
        if args.only and args.only not in name:
            continue
        need = NEEDS[name.split()[0]]
        if not (folder / need).exists():
            rows.append((name, "emu", "skip", "-", "-", f"{need} is not in the folder (llama-cpp-python {VERSION}'s has it)"))
            continue
        try:
            res, ref, bound = thunk()
        except (ValueError, KeyError) as e:      # the folder's text is not what this version has
            rows.append((name, "emu", "no", "-", "-", f"{e}: is {folder} llama-cpp-python {VERSION}'s "
                         "wgsl-shaders? (bash scripts/fetch_llama_wgsl.sh fetches it)"))
            failed = True
            continue
        except emu.EmuError as e:
            first = e.format().splitlines()[0]
            if "data race" not in first:
                rows.append((name, "emu", "no", "-", "-", first))
                failed = True
                continue
            # the kernel's own undefined behaviour, found: say so, and check its numbers as a
            # GPU that happens to order the accesses would run it (emu's --no-race-check)
            rows.append((name, "emu", "race", "-", "-", first))
            run.dev = quiet
            try:
                res, ref, bound = thunk()
            finally:
                run.dev = dev
            res = {f"{k}*" if k == "emu" else k: v for k, v in res.items()}
        raced = rows and rows[-1][0] == name and rows[-1][2] == "race"
        for backend, (got, note) in res.items():
            err, ok = judge(got, ref, bound)
            if ok == "NO" and raced and backend != "emu*":
                note = note or "wrong, as the race emu reported lets it be"
            else:
                failed |= ok != "yes"
            rows.append((name, backend, "yes" if got is not None else "no", err, ok, note))
    print(f"{'kernel':<52} {'on':<5} {'ran':<4} {'max |err|':<10} {'in bound':<9} notes")
    print(f"{'':<52} (emu*: run again without the race check, after emu reported the kernel's data race)")
    for r in rows:
        print(f"{r[0]:<52} {r[1]:<5} {r[2]:<4} {r[3]:<10} {r[4]:<9} {r[5]}")
    if args.record:
        np.savez_compressed(args.record, **run.recorded)
    if against is not None:
        print(f"\n{'launch':<40} {'outputs':>8} {'identical':>10}  share")
        for key, n, same in run.identical:
            print(f"{key:<40} {n:>8} {same:>10}  {same / n:.4f}")
        n, same = sum(r[1] for r in run.identical), sum(r[2] for r in run.identical)
        print(f"{'all':<40} {n:>8} {same:>10}  {same / max(n, 1):.4f}  "
              f"({sum(r[1] == r[2] for r in run.identical)} of {len(run.identical)} launches identical)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
