"""pow(x, n) with a constant exponent on the H200's driver: n = 0 is 1, n = 1..5 is x and
multiplies (x * x, (x * x) * x, (x * x) * (x * x), ((x * x) * (x * x)) * x), negative x included,
where WGSL's exp2(n * log2(x)) is NaN; other exponents (6, 7, 8, 16, 32, -1, -2, -3, 0.5, -0.5,
1.5, 2.5) keep the general sequence. Recorded through Dawn on an H100 with driver
580.159.04 (the H200's; scripts/h200_pow_probe.py, the first 1,024 of 4,096 inputs per exponent
in tests/data/hw/h100/pow_probe.npz). llama.cpp's row_norm (pow(x, 2.0)) and GELU (pow(x, 3.0))
depend on it: tests/data/hw/h100/llama_webgpu_0.3.19.npz, replayed below where the kernels are
fetched."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import emu

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "hw" / "h100"
sys.path.insert(0, str(ROOT / "scripts"))
from h200_pow_probe import EXPONENTS, MORE, kernel  # noqa: E402  (the kernels the recording ran)


def _pow(x: np.ndarray, exp: str, ty: str, lang: str) -> np.ndarray:
    if lang == "wgsl":
        src = kernel(exp, ty)
    else:
        t = "float16_t" if ty == "f16" else "float"
        src = f"""#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A {{ float a[]; }};
layout(set = 0, binding = 1) buffer R {{ float r[]; }};
void main() {{ uint i = gl_GlobalInvocationID.x; r[i] = float(pow({t}(a[i]), {t}({exp}))); }}"""
    dev = emu.Device("nvidia-h200")
    a, r = dev.create_buffer(x), dev.create_buffer(size=x.nbytes)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, f"pow.{'wgsl' if lang == 'wgsl' else 'comp'}"))
    dev.dispatch(pipe, {(0, 0): a, (0, 1): r}, (x.size // 64, 1, 1))
    return r.read(np.float32)


@pytest.mark.parametrize("ty", ["f32", "f16"])
@pytest.mark.parametrize("exp", EXPONENTS + MORE)
def test_pow_of_a_constant_exponent_is_the_h200s(exp, ty):
    d = np.load(DATA / "pow_probe.npz")
    got = _pow(d["x"], exp, ty, "wgsl")
    assert np.array_equal(got.view(np.uint32), d[f"{ty} pow(x, {exp})"].view(np.uint32))


def test_negative_bases_of_integer_exponents_are_products_through_vulkan_too():
    """The rule is the driver's, so GLSL straight to it gets it as WGSL through Tint does."""
    d = np.load(DATA / "pow_probe.npz")
    for exp in ("2.0", "3.0", "4.0", "1.0", "0.0", "5.0", "6.0"):
        got = _pow(d["x"], exp, "f32", "glsl")
        assert np.array_equal(got.view(np.uint32), d[f"f32 pow(x, {exp})"].view(np.uint32)), exp


def test_llama_cpp_webgpu_kernels_replay_the_gpu_bit_for_bit():
    folder = ROOT / ".hwtmp" / "llama-wgsl-0.3.19"
    if not folder.is_dir():
        pytest.skip(f"llama.cpp's wgsl-shaders are not fetched ({folder}): bash scripts/fetch_llama_wgsl.sh")
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "llama_webgpu.py"), str(folder), "--against",
                        str(DATA / "llama_webgpu_0.3.19.npz")], capture_output=True, text=True, timeout=900)
    last = r.stdout.strip().splitlines()[-1]
    assert "163867     163867" in last and "(48 of 48 launches identical)" in last, r.stdout[-3000:]
