"""ncnn (its PyPI wheel, Vulkan compute on) runs a small network built in code
(tests/vulkan/clients/ncnn_net.py: convolution + ReLU, max pooling, a fully connected layer,
softmax) on emu's ICD, found through the real loader as the only Vulkan device, and its output
matches ncnn's own CPU result: in fp32 (ncnn's 16-bit storage and arithmetic off) and with ncnn's
defaults (fp16 storage and arithmetic, its KHR cooperative-matrix kernels on this device).
Skipped, saying why, where the wheel is not installed (bash scripts/ncnn_vulkan.sh)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENT = Path(__file__).parent / "clients" / "ncnn_net.py"


def _site():
    for p in (os.environ.get("EMU_NCNN"), ROOT / ".hwtmp/ncnn", Path("/work/main/.hwtmp/ncnn")):
        if p and (Path(p) / "site" / "ncnn").is_dir():
            return Path(p) / "site"
    return None


# the largest difference from ncnn's CPU result: fp32 differs by summation order and the
# device's exp; fp16 rounds each stored value to 11 bits (lavapipe: 2.1e-4 and 4.7e-4)
@pytest.mark.parametrize("mode, tolerance", [("fp32", 5e-4), ("fp16", 2e-3)])
def test_ncnn_network_matches_its_cpu_result(manifest, tmp_path, mode, tolerance):
    site = _site()
    if site is None:
        pytest.skip("ncnn's wheel is not installed (bash scripts/ncnn_vulkan.sh)")
    env = dict(os.environ, VK_DRIVER_FILES=manifest, PYTHONPATH=str(site), VK_LOADER_LAYERS_DISABLE="*")
    r = subprocess.run([sys.executable, str(CLIENT), str(tmp_path), mode], env=env, capture_output=True,
                       text=True, timeout=900)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert "gpus 1 emu " in out and "(nvidia-h200: NVIDIA H200)" in out
    assert "emu vulkan:" not in out, out[-3000:]
    diff = float(re.search(r"max_abs_diff (\S+)", out).group(1))
    assert diff < tolerance, out[-2000:]
