"""Record an NVIDIA GPU's special function unit directly, through CUDA (CuPy), beside the WGSL
recording: the PTX approximations (ex2/lg2/rcp/rsqrt/sqrt/sin/cos/tanh.approx) over dense bands
of consecutive inputs (a band: the first input's bits and a count) and random bit patterns, and
candidate instruction sequences for WGSL builtins compared on the GPU with what Dawn returned
for the same inputs. Needs CuPy and a CUDA driver; `record_sfu` says why when there is none.

Outputs are stored as in builtins_record (differences from a float64 reference, CRC-checked).
"""
from __future__ import annotations

import zlib

import numpy as np

from .builtins_record import _ordered, decode, encode

PRIMS = {   # name: PTX (f32 in %1, f32 out %0)
    "ex2": "ex2.approx.ftz.f32", "ex2_noftz": "ex2.approx.f32",
    "lg2": "lg2.approx.ftz.f32", "lg2_noftz": "lg2.approx.f32",
    "rcp": "rcp.approx.ftz.f32", "rcp_noftz": "rcp.approx.f32",
    "rsq": "rsqrt.approx.ftz.f32", "rsq_noftz": "rsqrt.approx.f32",
    "sqrt": "sqrt.approx.ftz.f32", "sin": "sin.approx.ftz.f32", "cos": "cos.approx.ftz.f32",
    "sin_noftz": "sin.approx.f32", "tanh": "tanh.approx.f32",
}
REF = {"ex2": np.exp2, "lg2": np.log2, "rcp": lambda x: 1 / x, "rsq": lambda x: 1 / np.sqrt(x),
       "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tanh": np.tanh}
M = 1 << 20
BANDS = {   # name: [(first bits, count)]
    "ex2": [(0x3F800000, 8 * M), (0x3F000000, M), (0x3E800000, M), (0xBF000000, M), (0xBE800000, M),
            (0x35800000, M // 4), (0x42800000, M), (0xC2F00000, M)],
    "rcp": [(0x3F800000, 8 * M)], "rsq": [(0x3F800000, 16 * M)],
    "sqrt": [(0x3F800000, M), (0x40000000, M)],
    "lg2": [(0x3F800000, 8 * M), (0x3F000000, 2 * M)],
    "sin": [(0x3F800000, 8 * M), (0x3F000000, M), (0x40000000, M), (0x40800000, M), (0x3C000000, M // 4)],
    "cos": [(0x3F800000, 8 * M), (0x3F000000, M), (0x40000000, M), (0x40800000, M), (0x3C000000, M // 4)],
    "tanh": [(0x3F800000, 4 * M), (0x3F000000, M), (0x3E000000, M // 4)],
}
F16_PRIMS = {"ex2_f16": "ex2.approx.f16", "tanh_f16": "tanh.approx.f16"}

_HELPERS = r"""
#include <cuda_fp16.h>
""" + "".join(
    f'__device__ __forceinline__ float p_{k}(float x) {{ float y; asm("{v} %0, %1;" : "=f"(y) : "f"(x)); return y; }}\n'
    for k, v in PRIMS.items()) + r"""
__device__ __forceinline__ float divapprox(float a, float b) { float y; asm("div.approx.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)); return y; }
__device__ __forceinline__ float divapproxftz(float a, float b) { float y; asm("div.approx.ftz.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)); return y; }
__device__ __forceinline__ float divfull(float a, float b) { float y; asm("div.full.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)); return y; }
__device__ __forceinline__ float divfullftz(float a, float b) { float y; asm("div.full.ftz.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)); return y; }
#define L2E 1.4426950408889634f
#define LN2 0.6931471805599453f
"""

# candidate sequences for WGSL builtins (CUDA C over a, b; f32)
CANDIDATES = {
    "exp2": {"ex2": "p_ex2(a)", "ex2_noftz": "p_ex2_noftz(a)"},
    "exp": {"ex2(a*L2E)": "p_ex2(__fmul_rn(a, L2E))", "ex2(a*L2E rz)": "p_ex2(__fmul_rz(a, L2E))",
            "ex2_noftz(a*L2E)": "p_ex2_noftz(__fmul_rn(a, L2E))", "expf": "expf(a)", "__expf": "__expf(a)"},
    "log2": {"lg2": "p_lg2(a)", "lg2_noftz": "p_lg2_noftz(a)"},
    "log": {"lg2*LN2": "__fmul_rn(p_lg2(a), LN2)", "lg2_noftz*LN2": "__fmul_rn(p_lg2_noftz(a), LN2)",
            "__logf": "__logf(a)"},
    "inverseSqrt": {"rsq": "p_rsq(a)", "rsq_noftz": "p_rsq_noftz(a)"},
    "sqrt": {"sqrt.approx": "p_sqrt(a)", "sqrt.rn": "__fsqrt_rn(a)", "a*rsq": "__fmul_rn(a, p_rsq(a))",
             "rcp(rsq)": "p_rcp(p_rsq(a))"},
    "recip": {"rcp": "p_rcp(a)", "rcp_noftz": "p_rcp_noftz(a)", "rcp.rn": "__frcp_rn(a)",
              "div.approx": "divapprox(1.0f, a)", "div.full": "divfull(1.0f, a)", "div.full.ftz": "divfullftz(1.0f, a)"},
    "sin": {"sin": "p_sin(a)", "sin_noftz": "p_sin_noftz(a)", "__sinf": "__sinf(a)"},
    "cos": {"cos": "p_cos(a)", "__cosf": "__cosf(a)"},
    "tan": {"sin*rcp(cos)": "__fmul_rn(p_sin(a), p_rcp(p_cos(a)))", "div.approx(sin,cos)": "divapprox(p_sin(a), p_cos(a))",
            "div.full(sin,cos)": "divfull(p_sin(a), p_cos(a))", "__tanf": "__tanf(a)"},
    "tanh": {"tanh.approx": "p_tanh(a)", "tanhf": "tanhf(a)"},
    "div": {"div.approx": "divapprox(a, b)", "div.approx.ftz": "divapproxftz(a, b)", "div.full": "divfull(a, b)",
            "div.full.ftz": "divfullftz(a, b)", "a*rcp(b)": "__fmul_rn(a, p_rcp(b))", "div.rn": "__fdiv_rn(a, b)"},
    "pow": {"ex2(b*lg2(a))": "p_ex2(__fmul_rn(b, p_lg2(a)))", "ex2(b*lg2|a|)": "p_ex2(__fmul_rn(b, p_lg2(fabsf(a))))",
            "__powf": "__powf(a, b)"},
    "exp_h": {}, 
}


def _kernel_src(exprs):
    body = "\n".join(f"  if (k == {j}) y = {e};" for j, e in enumerate(exprs))
    return _HELPERS + f"""
extern "C" __global__ void run(const float* x, const float* x1, float* out, long long n, int k) {{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i]; float b = x1[i]; float y = 0.0f;
{body}
  out[i] = y;
}}
"""


def _f16_src():
    return """#include <cuda_fp16.h>
extern "C" __global__ void run16(const unsigned short* x, unsigned short* out, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned short a = x[i], y;
""" + "\n".join(f'  if (k == {j}) asm("{v} %0, %1;" : "=h"(y) : "h"(a));' for j, v in enumerate(F16_PRIMS.values())) + """
  out[i] = y;
}
"""


def band_inputs(name, seed):
    parts = [np.arange(b, b + n, dtype=np.uint64).astype(np.uint32) for b, n in BANDS.get(name.split("_")[0], [])]
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    parts.append(rng.integers(0, 1 << 32, M, dtype=np.uint64).astype(np.uint32))
    parts.append(np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32).view(np.uint32))
    return np.concatenate(parts).view(np.float32)


def prim_inputs(name, seed):
    """Dense bands only for the ftz primitives; the others get the random and f16 parts."""
    if name.endswith("_noftz"):
        rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
        return np.concatenate([rng.integers(0, 1 << 32, M, dtype=np.uint64).astype(np.uint32),
                               np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
                               .astype(np.float32).view(np.uint32)]).view(np.float32)
    return band_inputs(name, seed)


def ref_bits(name, x):
    with np.errstate(all="ignore"):
        r = REF[name.split("_")[0]](x.astype(np.float64)).astype(np.float32)
    b = r.view(np.uint32).copy()
    b[np.isnan(r)] = 0x7FFFFFFF
    return b


def record_sfu(seed=1, dawn=None, log=print):
    """({name/part: array} to save, summary, {prim: (inputs, bits)}). dawn: {case key: (inputs, [bits])} of the WGSL run,
    compared with the candidate sequences."""
    try:
        import cupy as cp
    except Exception as e:
        return {}, {"error": f"no CuPy: {e}"}, {}
    saved, summary, raw = {}, {"prims": {}, "candidates": {}}, {}
    names = list(PRIMS)
    cands = [(w, c, e) for w, d in CANDIDATES.items() for c, e in d.items()]
    exprs = [f"p_{k}(a)" for k in names] + [e for _, _, e in cands]
    kernels, errors = {}, {}

    def kernel(k):         # one module per expression: one that does not compile costs only itself
        if k not in kernels:
            try:
                kernels[k] = cp.RawModule(code=_kernel_src(["0.0f"] * k + [exprs[k]])).get_function("run")
            except Exception as e:
                kernels[k] = None
                errors[exprs[k]] = str(e)[-800:]
                log(f"  CUDA compile of {exprs[k]}: {str(e)[-300:]}")
        return kernels[k]

    try:
        run16 = cp.RawModule(code=_f16_src()).get_function("run16")
    except Exception as e:
        run16 = None
        errors["f16"] = str(e)[-800:]
    summary["compile_errors"] = errors

    def go(k, a, b=None):
        run = kernel(k)
        if run is None:
            return None
        x = cp.asarray(a)
        x1 = cp.asarray(b if b is not None else a)
        out = cp.empty_like(x)
        n = x.size
        run(((n + 255) // 256,), (256,), (x, x1, out, np.int64(n), np.int32(k)))
        return cp.asnumpy(out).view(np.uint32)

    for k, name in enumerate(names):
        x = prim_inputs(name, seed)
        bits = go(k, x)
        if bits is None:
            continue
        enc = encode(bits, ref_bits(name, x), True)
        for f, v in enc.items():
            saved[f"{name}/{f}"] = v
        raw[name] = (x, bits)
        summary["prims"][name] = {"n": int(x.size), "equal_ref": round(float(np.mean(bits == ref_bits(name, x))), 4)}
        log(f"  sfu {name}: {summary['prims'][name]}")
    h = cp.asarray(np.arange(1 << 16, dtype=np.uint32).astype(np.uint16))
    for k, name in enumerate(F16_PRIMS if run16 is not None else ()):
        out = cp.empty_like(h)
        run16((256,), (256,), (h, out, np.int32(1 << 16), np.int32(k)))
        saved[f"{name}/bits"] = cp.asnumpy(out)
    # candidate sequences against Dawn's results on the same inputs
    for j, (w, c, e) in enumerate(cands):
        key = f"f32/{w}"
        if not dawn or key not in dawn:
            continue
        arrays, res = dawn[key]
        a = arrays[0]
        b = arrays[1] if len(arrays) > 1 else None
        bits = go(len(names) + j, a, b)
        if bits is None:
            continue
        got = res[0]
        nan_g = (got & 0x7FFFFFFF) > 0x7F800000
        nan_c = (bits & 0x7FFFFFFF) > 0x7F800000
        eq = (bits == got)
        eqn = eq | (nan_g & nan_c)
        d = np.abs(_ordered(bits, True) - _ordered(got, True))
        summary["candidates"].setdefault(w, {})[c] = {
            "n": int(a.size), "equal": int(eq.sum()), "equal_nan_any": int(eqn.sum()),
            "max_ulp": int(d[~(nan_g | nan_c)].max()) if (~(nan_g | nan_c)).any() else 0}
        log(f"  candidate {w} = {c}: {summary['candidates'][w][c]}")
    return saved, summary, raw


def load_sfu(z, seed):
    """{prim name: (inputs, bits, bad)} from a saved sfu npz (dict-like)."""
    out = {}
    for name in PRIMS:
        if f"{name}/d" not in z:
            continue
        x = prim_inputs(name, seed)
        bits, bad = decode({k: z[f"{name}/{k}"] for k in ("d", "xi", "xv", "crc")}, ref_bits(name, x), True)
        out[name] = (x, bits, bad)
    for name in F16_PRIMS:
        if f"{name}/bits" in z:
            out[name] = (None, z[f"{name}/bits"], None)
    return out


# ------------------------------------------------------------------ the second session: whole tables

TABLE_BANDS = {   # the reduced arguments not covered above, whole
    "sqrt": [(0x3F800000, 16 * M)],
    "lg2": [(0x3F000000, 8 * M), (0x40000000, 8 * M), (0x3E800000, 8 * M), (0x40800000, 8 * M),
            (0x5F800000, 8 * M), (0x1F800000, 8 * M)],
}
SIN_SCALE = np.float32(0.15915493667125701904)     # FMUL.RZ before MUFU.SIN/COS


def rz_mul_scale(x):
    """RZ(x * 0.15915494f) in f32, as the driver's FMUL.RZ computes it."""
    p = x.astype(np.float64) * np.float64(SIN_SCALE)
    r = p.astype(np.float32)
    over = np.abs(r.astype(np.float64)) > np.abs(p)
    return np.where(over, np.nextafter(r, np.float32(0)), r).astype(np.float32)


def _cells(x):
    return np.floor(np.mod(rz_mul_scale(x).astype(np.float64), 1.0) * 2 ** 25).astype(np.int64)


def sin_inputs():
    """(x, q): one f32 x per reachable cell q of MUFU.SIN's 2^-25 revolution grid, q in [0, 2^25):
    from x < 2 pi, then the cells only a revolution later reaches (r in [1, 2): q a multiple of 4)."""
    xa, qa = _sin_pass(0)
    have = np.zeros(1 << 25, bool)
    have[qa] = True
    xb, qb = _sin_pass(1)
    new = ~have[qb]
    return np.concatenate([xa, xb[new]]), np.concatenate([qa, qb[new]])


def _sin_pass(turn):
    q = np.arange(1 << 25, dtype=np.int64)
    if turn:
        q = q[q % 4 == 0]
    x = (((q + 0.5) * 2.0 ** -25 + turn) / np.float64(SIN_SCALE)).astype(np.float32)
    got = _cells(x)
    for step in (1, -1, 2, -2):
        miss = got != q
        if not miss.any():
            break
        y = x[miss].view(np.uint32).astype(np.int64) + step
        xs = y.astype(np.uint32).view(np.float32)
        g2 = _cells(xs)
        fix = g2 == q[miss]
        idx = np.flatnonzero(miss)[fix]
        x[idx], got[idx] = xs[fix], g2[fix]
    ok = got == q
    return x[ok], q[ok]


def record_tables(seed=1, log=print):
    """({name: encoded}, summary) for sqrt, lg2 (whole bands) and sin/cos (every reachable cell)."""
    import cupy as cp
    saved, summary = {}, {}
    for name, ptx in (("sqrt", PRIMS["sqrt"]), ("lg2", PRIMS["lg2"]), ("sin", PRIMS["sin"]), ("cos", PRIMS["cos"])):
        src = _HELPERS + f"""
extern "C" __global__ void run(const float* x, float* out, long long n) {{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {{ float y; asm("{ptx} %0, %1;" : "=f"(y) : "f"(x[i])); out[i] = y; }}
}}
"""
        k = cp.RawModule(code=src).get_function("run")
        if name in TABLE_BANDS:
            x = np.concatenate([np.arange(b, b + n, dtype=np.uint64).astype(np.uint32) for b, n in TABLE_BANDS[name]]).view(np.float32)
        else:
            x, q = sin_inputs()
            summary[f"{name}_cells"] = int(x.size)
        d = cp.asarray(x)
        o = cp.empty_like(d)
        k(((x.size + 255) // 256,), (256,), (d, o, np.int64(x.size)))
        bits = cp.asnumpy(o).view(np.uint32)
        enc = encode(bits, ref_bits(name, x), True)
        for f, v in enc.items():
            saved[f"T{name}/{f}"] = v
        summary[name] = {"n": int(x.size), "exceptions": int(enc["xi"].size)}
        log(f"  table {name}: {summary[name]}")
    return saved, summary


def table_inputs(name):
    if name in TABLE_BANDS:
        return np.concatenate([np.arange(b, b + n, dtype=np.uint64).astype(np.uint32) for b, n in TABLE_BANDS[name]]).view(np.float32)
    return sin_inputs()[0]


def load_tables(z):
    out = {}
    for name in ("sqrt", "lg2", "sin", "cos"):
        if f"T{name}/d" in z:
            x = table_inputs(name)
            bits, bad = decode({k: z[f"T{name}/{k}"] for k in ("d", "xi", "xv", "crc")}, ref_bits(name, x), True)
            out[name] = (x, bits, bad)
    return out
