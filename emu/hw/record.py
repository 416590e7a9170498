"""Record a real GPU's cooperative-matrix multiply-add results as test vectors (`emu record`).

    summary = record_vectors("out/", seed=1234)

For every subgroup-matrix configuration the adapter reports (Dawn's subgroupMatrixConfigs), runs
D = A*B + C through ``subgroupMatrixMultiplyAccumulate``, one independent trial per workgroup,
and saves A, B, C and the GPU's D in the key format of tests/data/hw/h200:
``{A type}_{result type}_{M}x{N}x{K}_{distribution}/{A,B,C,D}`` in ``mma_f16.npz`` (f16
results), ``mma_f32.npz`` (f32 results) and ``mma_int.npz`` (integer results); ``record.json``
beside them holds the adapter, its configs, the shader, how 8-bit matrices were addressed and
what each run did.

Distributions (float inputs): ``narrow`` (exponents -2..1), ``normal`` (-8..7), ``wide``
(-26..14: f16 subnormals and overflow of f16 results), and ``special``: trial t follows mode
t % 6 -- 0 NaN (quiet, signalling, negative) and infinities sprinkled into A, B and C; 1 signed
zeros (half the inputs +-0, C +-0); 2 subnormal inputs; 3 overflow (inputs near the type's largest
values, C near the accumulator's largest); 4 exact cancellation (products that sum to zero, C
+-0); 5 mixed magnitudes (huge and tiny addends together, where the alignment truncates).
Integer inputs: ``normal`` (uniform over the type) and ``extreme`` (the type's bounds, C near
+-2^31, where the accumulation wraps).

8-bit matrices live four to a word in ``array<u32>``/``array<i32>``; their offset and stride are
given in the unit the profile claiming the adapter names (``stride_unit_8bit``; array elements,
i.e. words, where no profile claims it), so that trial t reads the dense M x K bytes that start at
byte t*M*K; ``record.json`` says which unit was used.
"""
from __future__ import annotations

import json
import os
import time
import traceback

import numpy as np

__all__ = ["record_vectors", "shader", "gen_float", "gen_int", "FLOAT_DISTS", "INT_DISTS"]

FLOAT_DISTS = ("narrow", "normal", "wide", "special")
INT_DISTS = ("normal", "extreme")
_STORAGE = {"f16": "f16", "f32": "f32", "u32": "u32", "i32": "i32", "u8": "u32", "i8": "i32"}
_NP = {"f16": np.float16, "f32": np.float32, "u32": np.uint32, "i32": np.int32, "u8": np.uint8, "i8": np.int8,
       "bf16": __import__("ml_dtypes").bfloat16}
_RANGES = {"normal": (-8, 8), "narrow": (-2, 2), "wide": (-26, 15)}


def shader(T: str, R: str, M: int, N: int, K: int, sg: int, unit: str = "array_element") -> str:
    """The recording shader: trial t = workgroup_id.x reads its dense row-major A, B, C."""
    ta, tr = _STORAGE[T], _STORAGE[R]
    per_word = 4 if T in ("u8", "i8") and unit == "array_element" else 1
    a_off, a_stride = f"t * {M * K // per_word}u", f"{K // per_word}u"
    b_off, b_stride = f"t * {K * N // per_word}u", f"{N // per_word}u"
    f16 = "enable f16;\n" if "f16" in (T, R) else ""
    return f"""enable subgroups;
enable chromium_experimental_subgroup_matrix;
{f16}@group(0) @binding(0) var<storage, read> a : array<{ta}>;
@group(0) @binding(1) var<storage, read> b : array<{ta}>;
@group(0) @binding(2) var<storage, read> c : array<{tr}>;
@group(0) @binding(3) var<storage, read_write> d : array<{tr}>;
@compute @workgroup_size({sg})
fn main(@builtin(workgroup_id) wg : vec3<u32>) {{
  let t = wg.x;
  let ma = subgroupMatrixLoad<subgroup_matrix_left<{T}, {K}, {M}>, row_major>(&a, {a_off}, {a_stride});
  let mb = subgroupMatrixLoad<subgroup_matrix_right<{T}, {N}, {K}>, row_major>(&b, {b_off}, {b_stride});
  let mc = subgroupMatrixLoad<subgroup_matrix_result<{R}, {N}, {M}>, row_major>(&c, t * {M * N}u, {N}u);
  let md = subgroupMatrixMultiplyAccumulate(ma, mb, mc);
  subgroupMatrixStore<row_major>(&d, t * {M * N}u, md, {N}u);
}}
"""


# ---------------------------------------------------------------------------------- inputs

def _finite(t: str, shape, lo: int, hi: int, rng) -> np.ndarray:
    e = rng.integers(lo, hi, size=shape)
    v = np.ldexp(1 + rng.random(shape), e) * rng.choice([-1, 1], size=shape)
    with np.errstate(over="ignore"):
        return v.astype(_NP[t])


def _bits(x: np.ndarray) -> np.ndarray:
    return x.view(np.uint16 if x.dtype.itemsize == 2 else np.uint32)


def _specials(t: str):
    if t == "f16":
        return np.array([0x7C00, 0xFC00, 0x7E00, 0x7D00, 0xFE01], np.uint16).view(np.float16)
    if t == "bf16":      # f32's exponent range: its subnormal, overflow and NaN cases are f32's
        return np.array([0x7F80, 0xFF80, 0x7FC0, 0x7FA0, 0xFFC1], np.uint16).view(_NP["bf16"])
    return np.array([0x7F800000, 0xFF800000, 0x7FC00000, 0x7FA00000, 0xFFC00001], np.uint32).view(np.float32)


def gen_float(T: str, R: str, M: int, N: int, K: int, trials: int, dist: str, rng):
    """(A, B, C) for one float key."""
    sa, sb, sc = (trials, M, K), (trials, K, N), (trials, M, N)
    if dist in _RANGES:
        lo, hi = _RANGES[dist]
        return _finite(T, sa, lo, hi, rng), _finite(T, sb, lo, hi, rng), _finite(R, sc, lo, hi, rng)
    assert dist == "special", dist
    A, B, C = _finite(T, sa, -8, 8, rng), _finite(T, sb, -8, 8, rng), _finite(R, sc, -8, 8, rng)
    tiny_in = (-24, -13) if T == "f16" else (-149, -125)
    tiny_c = (-24, -13) if R == "f16" else (-149, -125)
    big_in = (12, 16) if T == "f16" else (100, 128)
    big_c = (12, 16) if R == "f16" else (100, 128)
    for t in range(trials):
        mode = t % 6
        if mode == 0:      # NaN and infinities, a few per trial
            sp_in, sp_c = _specials(T), _specials(R)
            for X, sp, n in ((A, sp_in, 2), (B, sp_in, 2), (C, sp_c, 1)):
                flat = X[t].reshape(-1)
                where = rng.choice(flat.size, size=n, replace=False)
                flat[where] = sp[rng.integers(0, sp.size, size=n)]
        elif mode == 1:    # signed zeros
            for X in (A[t], B[t]):
                z = rng.random(X.shape) < 0.5
                X[z] = np.where(rng.random(X.shape) < 0.5, 0.0, -0.0)[z].astype(X.dtype)
            C[t] = np.where(rng.random(C[t].shape) < 0.5, 0.0, -0.0).astype(C.dtype)
            zrow = rng.integers(0, M)
            A[t][zrow] = np.where(rng.random(K) < 0.5, 0.0, -0.0).astype(A.dtype)
        elif mode == 2:    # subnormal (and tiny) inputs
            A[t] = _finite(T, (M, K), *tiny_in, rng)
            B[t] = _finite(T, (K, N), -1, 2, rng)
            C[t] = _finite(R, (M, N), *tiny_c, rng)
            sub = rng.random((M, K)) < 0.5
            A[t][sub] = _finite(T, (M, K), tiny_in[0], tiny_in[0] + 3, rng)[sub]
        elif mode == 3:    # overflow of the accumulator / result type
            A[t] = _finite(T, (M, K), *big_in, rng)
            B[t] = _finite(T, (K, N), *big_in, rng) if R == "f16" else _finite(T, (K, N), -2, 2, rng)
            C[t] = _finite(R, (M, N), *big_c, rng)
            if R == "f32":
                C[t].reshape(-1)[: M] = np.float32(3.4e38) * rng.choice([-1, 1], size=M).astype(np.float32)
        elif mode == 4:    # products that cancel exactly, C = +-0
            x = _finite(T, (M, K), -4, 4, rng)
            y = _finite(T, (K, N), -4, 4, rng)
            half = K // 2
            x[:, half:2 * half] = x[:, :half]
            y[half:2 * half, :] = -y[:half, :]
            A[t], B[t] = x, y
            C[t] = np.where(rng.random((M, N)) < 0.5, 0.0, -0.0).astype(C.dtype)
        else:              # mixed magnitudes: huge and tiny addends in one sum
            hi_e = (8, 14) if T == "f16" else (20, 40)
            lo_e = (-14, -8) if T == "f16" else (-40, -20)
            big = rng.random((M, K)) < 0.25
            A[t] = np.where(big, _finite(T, (M, K), *hi_e, rng), _finite(T, (M, K), *lo_e, rng))
            B[t] = _finite(T, (K, N), -1, 1, rng)
            C[t] = _finite(R, (M, N), -2, 2, rng)
    return A, B, C


def gen_int(T: str, R: str, M: int, N: int, K: int, trials: int, dist: str, rng):
    sa, sb, sc = (trials, M, K), (trials, K, N), (trials, M, N)
    lo, hi = (0, 256) if T == "u8" else (-128, 128)
    if dist == "normal":
        A = rng.integers(lo, hi, size=sa).astype(_NP[T])
        B = rng.integers(lo, hi, size=sb).astype(_NP[T])
        C = (rng.integers(0, 1 << 20, size=sc) if R == "u32" else
             rng.integers(-(1 << 20), 1 << 20, size=sc)).astype(_NP[R])
        return A, B, C
    assert dist == "extreme", dist
    A = rng.choice([lo, hi - 1], size=sa).astype(_NP[T])
    B = rng.choice([lo, hi - 1], size=sb).astype(_NP[T])
    if R == "u32":
        C = (np.uint64(1 << 32) - rng.integers(0, 1 << 20, size=sc).astype(np.uint64)).astype(np.uint32)
    else:
        edge = rng.choice([-(1 << 31), (1 << 31) - (1 << 20)], size=sc)
        C = (edge + rng.integers(0, 1 << 20, size=sc)).astype(np.int64).astype(np.int32)
    return A, B, C


# ---------------------------------------------------------------------------------- running

def _stride_unit(info) -> str:
    from ..profiles import profile_for_adapter
    p = profile_for_adapter(info.get("vendor_id"), info.get("device"), info.get("backend_type"))
    return p.stride_unit_8bit if p is not None else "array_element"


def record_vectors(out_dir: str, *, seed: int = 1234, trials: int = 256, int_trials: int = 512,
                   only: str = "", dists=None, log=print) -> dict:
    """Record every reported config; returns the summary also written to record.json."""
    from . import adapters
    from .diff import adapter_configs
    from .runner import HwError, run_on_adapter
    if "vulkan_enable_f16_on_nvidia" not in os.environ.get("EMU_DAWN_TOGGLES", ""):
        extra = os.environ.get("EMU_DAWN_TOGGLES", "")
        os.environ["EMU_DAWN_TOGGLES"] = ",".join(t for t in (extra, "vulkan_enable_f16_on_nvidia") if t)
    info, why = adapters.available("dawn")
    if info is None:
        raise HwError(f"emu record needs Dawn (wgpudawn) with an adapter: {why}")
    configs = adapter_configs("dawn")
    if not configs:
        raise HwError(f"the adapter {info.get('device', '?')!r} reports no subgroup-matrix configurations "
                      f"(Dawn feature chromium-experimental-subgroup-matrix); nothing to record",
                      ) from None
    os.makedirs(out_dir, exist_ok=True)
    sg = int(info.get("subgroup_max_size") or 32)
    unit = _stride_unit(info)
    rng = np.random.default_rng(seed)
    saved: dict[str, dict] = {"f16": {}, "f32": {}, "int": {}}
    runs = {}
    log(f"recording on {info.get('device')} ({info.get('backend_type')}, {info.get('description')}), "
        f"subgroup size {sg}, 8-bit stride unit {unit}, {len(configs)} configs")
    for cfg in configs:
        T, R = str(cfg["component_type"]), str(cfg["result_component_type"])
        M, N, K = int(cfg["m"]), int(cfg["n"]), int(cfg["k"])
        if only and only not in T:
            continue
        is_int = T in ("u8", "i8", "u32", "i32")
        for dist in (dists or (INT_DISTS if is_int else FLOAT_DISTS)):
            key = f"{T}_{R}_{M}x{N}x{K}_{dist}"
            n = int_trials if is_int else trials
            t0 = time.time()
            try:
                A, B, C = (gen_int if is_int else gen_float)(T, R, M, N, K, n, dist, rng)
                src = shader(T, R, M, N, K, sg, unit)
                out = run_on_adapter(src, dispatch=(n, 1, 1), backend="dawn",
                                     buffers={(0, 0): A, (0, 1): B, (0, 2): C, (0, 3): np.zeros_like(C)})
                D = np.frombuffer(out[(0, 3)], C.dtype).reshape(C.shape).copy()
            except Exception as e:  # one config failing must not lose the others
                runs[key] = {"error": f"{type(e).__name__}: {e}"[:3000],
                             "traceback": traceback.format_exc()[-1500:]}
                log(f"  {key}: ERROR {runs[key]['error'][:300]}")
                continue
            part = "int" if is_int else R
            saved[part].update({f"{key}/A": A, f"{key}/B": B, f"{key}/C": C, f"{key}/D": D})
            stats = {"trials": n, "seconds": round(time.time() - t0, 3)}
            if not is_int:
                with np.errstate(all="ignore"):
                    ref = np.einsum("tmk,tkn->tmn", A.astype(np.float64), B.astype(np.float64)) + C.astype(np.float64)
                    stats["nan_results"] = int(np.isnan(D.astype(np.float64)).sum())
                    stats["inf_results"] = int(np.isinf(D.astype(np.float64)).sum())
                    stats["frac_equal_to_rne_of_exact"] = float(np.mean(_bits(D) == _bits(ref.astype(D.dtype))))
            runs[key] = stats
            log(f"  {key}: {json.dumps(stats)}")
    files = {}
    for part, arrays in saved.items():
        if arrays:
            path = os.path.join(out_dir, f"mma_{part}.npz")
            np.savez_compressed(path, **arrays)
            files[part] = os.path.basename(path)
    summary = {"adapter": {k: v for k, v in info.items() if k not in ("limits", "features")},
               "features": info.get("features"), "configs": configs, "subgroup_size": sg,
               "stride_unit_8bit": unit, "seed": seed, "files": files, "runs": runs,
               "shader_example": shader("f16", "f32", 16, 16, 16, sg, unit),
               "toggles": os.environ.get("EMU_DAWN_TOGGLES", "")}
    with open(os.path.join(out_dir, "record.json"), "w") as f:
        json.dump(summary, f, indent=1, default=str)
    return summary
