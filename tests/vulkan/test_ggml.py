"""llama.cpp's test-backend-ops (Debian's ggml Vulkan backend, unpacked by scripts/ggml_vulkan.sh)
with emu's ICD as the only Vulkan device: a quick op of every case passing against ggml's CPU
backend. Skipped, saying why, where the packages are not unpacked."""
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _ggml():
    for p in (os.environ.get("EMU_GGML"), ROOT / ".hwtmp/ggml", Path("/work/main/.hwtmp/ggml")):
        if p and (Path(p) / "test-backend-ops").is_file():
            return Path(p) / "test-backend-ops"
    return None


@pytest.mark.parametrize("op, cases", [("SCALE", 4)])
def test_backend_ops_pass_on_emu(manifest, op, cases):
    tbo = _ggml()
    if tbo is None:
        pytest.skip("llama.cpp's test-backend-ops is not unpacked (bash scripts/ggml_vulkan.sh)")
    env = dict(os.environ, VK_DRIVER_FILES=manifest, GGML_VK_VISIBLE_DEVICES="0", VK_LOADER_LAYERS_DISABLE="*")
    r = subprocess.run([str(tbo), "test", "-b", "Vulkan0", "-o", op], env=env, capture_output=True, text=True,
                       timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert "ggml_vulkan: 0 = emu 0.1.0 (nvidia-h200: NVIDIA H200) (emu)" in out
    assert re.search(rf"{cases}/{cases} tests passed", out), out[-3000:]
    assert "emu vulkan:" not in out
