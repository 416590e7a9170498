"""Our f64 test shader and its numpy float64 reference, shared by the emulator's tests
(tests/frontend/test_f64.py) and the run on lavapipe (tests/hw/test_f64_lavapipe.py).

ARITH: every invocation i takes x = a[i], y = b[i] and writes one result per operation at
o[op * N + i]; `reference(x, y)` gives the same rows from numpy float64 (IEEE binary64, one
rounding per operation)."""
from __future__ import annotations

from fractions import Fraction

import numpy as np

N = 64
OPS = ["x + y", "x - y", "x * y", "x / y", "x % y", "-x", "abs(x)", "min(x, y)", "max(x, y)",
       "clamp(x, -1.5lf, 2.5lf)", "sign(x)", "floor(x)", "ceil(x)", "round(x)", "trunc(x)", "fract(x)",
       "sqrt(abs(x))", "fma(x, y, 0.375lf)", "select(y, x, x < y)", "f64(f32(x))", "f64(i32(clamp(x, -1e9lf, 1e9lf)))",
       "f64(u32(abs(y) * 4096.0lf))", "f64(i64(x)) + 0.5lf", "bitcast<f64>(bitcast<u64>(x) ^ 1lu)",
       "bitcast<f64>(bitcast<u64>(y) >> 1u)", "ldexp(x, -3)", "frexp(x).fract", "f64(frexp(x).exp)",
       "modf(x).fract", "modf(x).whole", "step(x, y)", "saturate(y)"]

ARITH = ("@group(0) @binding(0) var<storage, read> a: array<f64>;\n"
         "@group(0) @binding(1) var<storage, read> b: array<f64>;\n"
         "@group(0) @binding(2) var<storage, read_write> o: array<f64>;\n"
         f"@compute @workgroup_size({N})\n"
         "fn main(@builtin(global_invocation_id) g: vec3u) {\n"
         "  let i = g.x;\n  let x = a[i];\n  let y = b[i];\n"
         + "".join(f"  o[{k * N}u + i] = {e};\n" for k, e in enumerate(OPS))
         + "}\n")


def inputs() -> tuple[np.ndarray, np.ndarray]:
    """N pairs: special values (zeros, tiny subnormals, halves for round, huge values), then random
    ones of mixed magnitude."""
    rng = np.random.default_rng(64)
    special = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1.0, -1.0, 3.0000000000000004, 0.1, 1e300, -1e300,
               5e-324, -3e-310, 2.0 ** 53, 2.0 ** 53 + 2, 1e-300, 7.0, 123456.789]
    x = np.array(special + list(rng.standard_normal(N - len(special)) * 10.0 ** rng.integers(-5, 6, N - len(special))))
    y = np.array(list(rng.standard_normal(len(special)) * 3) + list(rng.standard_normal(N - len(special))
                                                                     * 10.0 ** rng.integers(-5, 6, N - len(special))))
    y[3], y[9], y[13] = 0.1, 2.0, 1e-10
    return x, y


def _fma(x, y, z) -> float:
    # one rounding of the exact value (Python's int / int rounds correctly)
    return float(Fraction(x) * Fraction(y) + Fraction(z))


def _wgsl_to_i32(v: float) -> float:
    # WGSL's float -> int: truncate, then clamp to the nearest value representable in the source
    return float(max(-2 ** 31, min(2 ** 31 - 1, int(np.trunc(v)))))


def reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The rows of ARITH's output, from numpy float64 (WGSL's rules where numpy has none)."""
    with np.errstate(all="ignore"):
        f32 = x.astype(np.float32).astype(np.float64)
        m, e = np.frexp(x)
        rows = [x + y, x - y, x * y, x / y, np.fmod(x, y), -x, np.abs(x), np.fmin(x, y), np.fmax(x, y),
                np.fmin(np.fmax(x, -1.5), 2.5), np.where(x > 0, 1.0, np.where(x < 0, -1.0, x)), np.floor(x),
                np.ceil(x), np.rint(x), np.trunc(x), x - np.floor(x), np.sqrt(np.abs(x)),
                np.array([_fma(p, q, 0.375) for p, q in zip(x, y)]), np.where(x < y, x, y), f32,
                np.array([_wgsl_to_i32(v) for v in np.clip(x, -1e9, 1e9)]),
                np.trunc(np.abs(y) * 4096.0).clip(0, 2.0 ** 32 - 1),
                np.trunc(x).clip(-2.0 ** 63, 2.0 ** 63 - 1024) + 0.5,
                (x.view(np.uint64) ^ np.uint64(1)).view(np.float64),
                (y.view(np.uint64) >> np.uint64(1)).view(np.float64),
                np.ldexp(x, -3), m, e.astype(np.float64), x - np.trunc(x), np.trunc(x),
                np.where(x <= y, 1.0, 0.0), np.fmin(np.fmax(y, 0.0), 1.0)]
    # min/max/clamp of two zeros: -0 < +0 (IEEE minimumNumber/maximumNumber)
    both0 = (x == 0) & (y == 0)
    rows[7] = np.where(both0, np.where(np.signbit(x) | np.signbit(y), -0.0, 0.0), rows[7])
    rows[8] = np.where(both0, np.where(np.signbit(x) & np.signbit(y), -0.0, 0.0), rows[8])
    return np.stack(rows)
