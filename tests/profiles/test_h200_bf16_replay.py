"""bf16 x bf16 -> f32 16x16x16 on a real NVIDIA H200 (Vulkan only: Dawn offers no bf16), recorded
through the Vulkan API by scripts/h200_vulkan.py with tests/shaders/spirv/mma_bf16.spvasm
(tests/data/hw/h200/vulkan_bf16.npz, 4 distributions x 256 trials; A and B saved as their bits),
replayed through the same SPIR-V on the emulator with the `nvidia-h200` profile: D bit for bit.
The fused model that reproduces the f16 recordings (nvidia-hopper) reproduces these as well;
`emu fit` of them alone recovers the same parameters (tests/data/hw/h200/vulkan/README.md)."""
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.hw.fit import check_profile, load_vectors
from emu.profiles import load_profile

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "hw" / "h200" / "vulkan_bf16.npz"
KERNEL = ROOT / "tests" / "shaders" / "spirv" / "mma_bf16.spvasm"
KEYS = [f"bf16_f32_16x16x16_{d}" for d in ("narrow", "normal", "wide", "special")]


@pytest.fixture(scope="module")
def vectors():
    return load_vectors([str(DATA)])


@pytest.mark.parametrize("key", KEYS)
def test_the_recording_kernel_reproduces_the_h200(vectors, key):
    v = vectors[key]
    a, b = (np.ascontiguousarray(v[p]).view(np.uint16) for p in "AB")
    trials = a.shape[0]
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(KERNEL.read_text(), "mma_bf16.spvasm"))
    bufs = {(0, 0): dev.create_buffer(a.view(np.uint32).ravel()), (0, 1): dev.create_buffer(b.view(np.uint32).ravel()),
            (0, 2): dev.create_buffer(v["C"].ravel()), (0, 3): dev.create_buffer(size=v["D"].nbytes)}
    dev.dispatch(pipe, bufs, (trials, 1, 1))
    d = bufs[(0, 3)].read(np.float32).reshape(v["D"].shape)
    assert np.array_equal(d.view(np.uint32), v["D"].view(np.uint32))


def test_the_profile_model_reproduces_every_bf16_result(vectors):
    res = check_profile(load_profile("nvidia-h200"), vectors)
    assert sorted(res) == sorted(KEYS)
    for key, r in res.items():
        assert r["bit_exact"] == r["elements"] == 256 * 256, (key, r)


def test_the_recorder_makes_bf16_inputs_with_f32_exponent_ranges():
    import ml_dtypes
    from emu.hw.record import gen_float
    A, B, C = gen_float("bf16", "f32", 16, 16, 16, 12, "special", np.random.default_rng(1))
    assert A.dtype == B.dtype == ml_dtypes.bfloat16 and C.dtype == np.float32
    a = A.astype(np.float32)
    assert np.isnan(a[0]).any() or np.isinf(a[0]).any()                 # mode 0: specials
    tiny = np.abs(a[2][a[2] != 0])
    assert tiny.max() < 2.0 ** -120                                      # mode 2: f32-range tiny inputs
    assert (np.abs(a[3]) > 2.0 ** 99).all()                              # mode 3: near overflow
