"""Suite-wide: the cold-start line ("compiling kernels ... (first run only)...") is printed once per
process by whichever test first compiles for more than a second, so with an empty numba cache it
would land in the stderr of an arbitrary CLI test that asserts exact output. Silence it for the
suite; tests/perf/test_cold_start.py checks the line on notice objects of its own."""
from pathlib import Path

import numpy as np
import pytest

from emu.jit import notice

notice.quiet()

NAIVE_GEMM = Path(__file__).resolve().parents[1] / "bench" / "shaders" / "matmul_naive.wgsl"


@pytest.fixture
def naive_gemm(tmp_path):
    """naive_gemm(n, seed) -> `emu run` arguments (no outputs) for bench/shaders/matmul_naive.wgsl
    at n^3 (one invocation per element of C, M N K as overrides), f32 standard-normal inputs in
    tmp_path/a.npy and b.npy, C as zeros at binding 2."""
    def args(n: int, seed: int = 1) -> list:
        rng = np.random.default_rng(seed)
        for f in ("a", "b"):
            np.save(tmp_path / f"{f}.npy", rng.standard_normal((n, n)).astype(np.float32))
        return ["run", NAIVE_GEMM, "--dispatch", f"{n // 16},{n // 16}", "--override", f"M={n}",
                "--override", f"N={n}", "--override", f"K={n}", "--buffer", f"0:0={tmp_path}/a.npy",
                "--buffer", f"0:1={tmp_path}/b.npy", "--buffer", f"0:2=zeros:{n * n}:f32"]
    return args
