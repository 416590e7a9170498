"""`emu diff --backend vulkan`: our GLSL and SPIR-V kernels on a real Vulkan device through the
Vulkan API (lavapipe on CI; it has no cooperative matrices, so plain SPIR-V), compared bit for
bit with the emulator running the same module. Skipped where no Vulkan device exists.

Measured on lavapipe (Mesa 25.0.7): it contracts some f32 a*b + c of glslang's SPIR-V into fused
multiply-adds (an accumulation s += t * k in a loop differs by 1 ulp; `precise` removes it; the
lavapipe profile does not model that contraction), and computes GLSL's % of a negative int
(OpSMod) as a truncated remainder: the kernels here use `precise` and abs(), and the last test
shows the remainder difference being found."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from emu.cli import main as cli
from emu.hw import vulkan
from emu.hw.diff import diff_shader

ROOT = Path(__file__).resolve().parents[2]
SPIRV = ROOT / "tests" / "shaders" / "spirv"
INFO, _ = vulkan.available()
pytestmark = pytest.mark.emu_hardware("vulkan")

FLOATS = """#version 450
// float arithmetic and GLSL.std.450 with every multiply-add precise (not contracted)
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer In { vec4 x[]; } inp;
layout(set = 0, binding = 1) buffer Out { vec4 y[]; } o;
layout(push_constant) uniform PC { float scale; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    vec4 v = inp.x[i];
    precise vec4 w = clamp(v, -2.0, 2.0) * pc.scale;
    precise vec4 u = w + floor(v) - fract(v) + abs(v.wzyx) / max(vec4(1.0), v);
    o.y[i] = u + step(0.0, v) + min(v, w.yxwz) + sqrt(abs(v));
}
"""


def test_the_device_is_reported():
    assert INFO["backend_type"] == "Vulkan" and INFO["binding"] == "vulkan" and INFO["subgroup_min_size"] > 0


@pytest.mark.parametrize("seed", [1, 2])
def test_glsl_control_flow_kernel_is_identical(seed):
    rep = diff_shader((SPIRV / "control.comp").read_text(), "control.comp", dispatch=(4, 1, 1), seed=seed,
                      backend="vulkan", overrides={"0": "32"})
    assert rep.error is None, rep.error
    assert rep.identical, rep.text()
    # the random push-constant block and the two descriptor sets all took part
    assert {"-1:0", "0:0", "0:1", "1:0"} <= set(rep.inputs)
    assert [b.elements for b in rep.bindings] == [4096, 1]     # the whole output buffer and the counter


def test_optimized_spirv_with_phis_is_identical(tmp_path):
    from emu.frontend.spirv import _run, compile_glsl, tool
    src, out = tmp_path / "k.spv", tmp_path / "o.spv"
    src.write_bytes(compile_glsl((SPIRV / "control.comp").read_text(), "control.comp"))
    assert _run([tool("spirv-opt"), "-O", str(src), "-o", str(out)], "spirv-opt").returncode == 0
    rep = diff_shader(out.read_bytes().decode("utf-8", "surrogateescape"), "o.spv", dispatch=(2, 1, 1), seed=3,
                      backend="vulkan", overrides={"0": "32", "1": "-4"})
    assert rep.error is None, rep.error
    assert rep.identical, rep.text()


def test_floats_with_push_constants_through_the_cli(tmp_path, capsys):
    (tmp_path / "f.comp").write_text(FLOATS)
    rng = np.random.default_rng(7)
    np.save(tmp_path / "x.npy", rng.uniform(-8, 8, 256 * 4).astype(np.float32))
    (tmp_path / "pc.bin").write_bytes(struct.pack("<f", 0.375))
    rc = cli(["diff", str(tmp_path / "f.comp"), "--dispatch", "4", "--buffer", f"0:0={tmp_path / 'x.npy'}",
              "--push-constants", str(tmp_path / "pc.bin"), "--elements", "256", "--report", str(tmp_path / "r.json")])
    out = capsys.readouterr().out
    assert rc == 0 and "result: IDENTICAL" in out and "on vulkan:" in out, out
    import json
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["backend"] == "vulkan" and rep["bindings"][0]["equal"] == 1024


SMOD = """#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) buffer B { int x[]; } b;
void main() { uint i = gl_GlobalInvocationID.x; int v = b.x[i]; b.x[i] = (v % 3) * 1000 + v / 3; }
"""


def test_a_real_difference_is_found():
    """GLSL's % is OpSMod (the sign of the divisor); lavapipe returns the truncated remainder."""
    x = np.array([-7, -1, 5, 7, -3, -4, 4, 0], np.int32)
    rep = diff_shader(SMOD, "smod.comp", dispatch=(1, 1, 1), buffers={(0, 0): x}, backend="vulkan")
    assert rep.error is None, rep.error
    if INFO.get("vendor") != "llvmpipe":
        pytest.skip("the remainder measured here is lavapipe's")
    b = rep.bindings[0]
    assert not rep.identical and b.different == 3
    assert [d["index"] for d in b.differences] == [0, 1, 5]      # -7, -1, -4: not multiples of 3


def test_wgsl_is_refused_on_the_vulkan_backend():
    rep = diff_shader((ROOT / "tests" / "shaders" / "vecadd.wgsl").read_text(), "vecadd.wgsl",
                      dispatch=(1, 1, 1), seed=1, backend="vulkan")
    assert rep.error_stage == "host" and "--backend vulkan runs SPIR-V and GLSL" in rep.error


def test_a_matrix_kernel_on_a_device_without_cooperative_matrices_is_one_message():
    # lavapipe compiles such a module and then fails inside the driver; emu refuses it first
    if "VK_KHR_cooperative_matrix" in INFO["extensions"]:
        pytest.skip("the device has cooperative matrices")
    assert vulkan.matrix_configs() == []
    rep = diff_shader((SPIRV / "gemm_coopmat.comp").read_text(), "gemm_coopmat.comp", dispatch=(4, 4, 1), seed=1,
                      backend="vulkan", profile="nvidia-h200", overrides={"0": 64, "1": 64, "2": 64})
    assert rep.error_stage == "adapter"
    assert "does not offer VK_KHR_cooperative_matrix, which the shader's capability CooperativeMatrixKHR needs" \
        in rep.error
