"""llama.cpp's test-backend-ops (Debian's ggml Vulkan backend, unpacked by scripts/ggml_vulkan.sh)
with emu's ICD as the only Vulkan device: a few minutes' subset whose every case passes against
ggml's CPU backend, in each of ggml's three shader families (NV cooperative matrix 2, which ggml
picks on this device as on the real H200; KHR cooperative matrix; scalar): two matrix products
that take ggml's tiled matrix-multiply shaders (f16 and q4_0 weights, n=9 > ggml's matrix-vector
cut) and an element-wise op. Skipped, saying why, where the packages are not unpacked."""
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = {"nv2": ({}, "NV_coopmat2"), "khr": ({"GGML_VK_DISABLE_COOPMAT2": "1"}, "KHR_coopmat"),
            "scalar": ({"GGML_VK_DISABLE_COOPMAT2": "1", "GGML_VK_DISABLE_COOPMAT": "1"}, "none")}
MATMUL = ("MUL_MAT", "^type_a=(f16|q4_0),type_b=f32,m=16,n=9,k=256,", 2)


def _ggml():
    for p in (os.environ.get("EMU_GGML"), ROOT / ".hwtmp/ggml", Path("/work/main/.hwtmp/ggml")):
        if p and (Path(p) / "test-backend-ops").is_file():
            return Path(p) / "test-backend-ops"
    return None


@pytest.mark.parametrize("family, op, params, cases",
                         [(f, *MATMUL) for f in FAMILIES] + [("nv2", "SCALE", None, 4)])
def test_backend_ops_pass_on_emu(manifest, family, op, params, cases):
    tbo = _ggml()
    if tbo is None:
        pytest.skip("llama.cpp's test-backend-ops is not unpacked (bash scripts/ggml_vulkan.sh)")
    extra, cores = FAMILIES[family]
    env = dict(os.environ, VK_DRIVER_FILES=manifest, GGML_VK_VISIBLE_DEVICES="0", VK_LOADER_LAYERS_DISABLE="*",
               **extra)
    for k in ("GGML_VK_DISABLE_COOPMAT2", "GGML_VK_DISABLE_COOPMAT"):
        if k not in extra:
            env.pop(k, None)
    args = [str(tbo), "test", "-b", "Vulkan0", "-o", op] + (["-p", params] if params else [])
    r = subprocess.run(args, env=env, capture_output=True, text=True, errors="replace", timeout=900)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert re.search(r"ggml_vulkan: 0 = emu 0\.1\.0 \(nvidia-h200: NVIDIA H200\) \(emu\) .*"
                     rf"\| matrix cores: {cores}\n", out), out[:3000]
    assert re.search(rf"{cases}/{cases} tests passed", out), out[-3000:]
    assert "emu vulkan:" not in out
