"""`emu diff --backend vulkan` with emu's ICD as the only Vulkan device: emu against itself
through the real loader and the `vulkan` package (emu/hw/vulkan.py), IDENTICAL for the Vulkan
test shaders, cooperative-matrix kernels included."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPIRV = ROOT / "tests" / "shaders" / "spirv"
SHADERS = ["matmul_naive.comp", "reduce_shared.comp", "div_add.comp", "gemm_coopmat.comp", "mma_f16_pairs.comp",
           "f64.comp", "int64.comp"]


@pytest.fixture(autouse=True)
def _vulkan_package():
    pytest.importorskip("vulkan")


@pytest.mark.parametrize("shader", SHADERS)
def test_diff_against_emus_icd_is_identical(manifest, shader):
    env = dict(os.environ, VK_DRIVER_FILES=manifest, VK_LOADER_LAYERS_DISABLE="*")
    r = subprocess.run([sys.executable, "-m", "emu", "diff", str(SPIRV / shader), "--backend", "vulkan",
                        "--profile", "nvidia-h200", "--dispatch", "1", "--random-inputs", "1"],
                       env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "on vulkan: emu 0.1.0 (nvidia-h200: NVIDIA H200)" in r.stdout
    assert "result: IDENTICAL (exit 0)" in r.stdout
