"""Our GLSL image kernels (vulkan_image_cases.py) on lavapipe's real Vulkan (emu/hw/vulkan.py with
vulkan_images.py: VkImage, VkSampler and image descriptors) against the emulator's lavapipe
profile, bit for bit: the twins of the WGSL texture kernels (which Dawn and wgpu on lavapipe
already match) and the GLSL-only ones (combined image samplers, texelFetch of array and 3D images,
the queries, stores to an image of format Unknown). Skipped where no Vulkan device exists."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from emu.cli import main as cli
from emu.hw import vulkan
from emu.hw.diff import diff_shader

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vulkan_image_cases as V  # noqa: E402

INFO, _ = vulkan.available()
pytestmark = pytest.mark.emu_hardware("vulkan")
CASES = V.twin_cases() + V.glsl_cases()


@pytest.mark.parametrize("name,case", CASES, ids=[n for n, _ in CASES])
def test_image_kernel_is_identical_on_lavapipe(name, case):
    ov = {k: str(v).lower() if isinstance(v, bool) else v for k, v in (case.get("overrides") or {}).items()}
    rep = diff_shader(case["source"], f"{name}.comp", dispatch=case["dispatch"], backend="vulkan", profile="lavapipe",
                      buffers=case.get("buffers"), textures=case.get("textures"), samplers=case.get("samplers"),
                      overrides=ov)
    assert rep.error is None, rep.error
    assert rep.identical, rep.text()
    # every output (buffers and written storage images) was compared, element by element
    assert rep.bindings and all(b.elements > 0 and b.equal == b.elements for b in rep.bindings)


def test_blur_through_the_cli_with_a_combined_sampler(tmp_path, capsys):
    (tmp_path / "blur.comp").write_text(V.COMBINED_BLUR)
    img = np.random.default_rng(5).integers(0, 256, (16, 32, 4), dtype=np.uint8)
    np.save(tmp_path / "img.npy", img)
    rc = cli(["diff", str(tmp_path / "blur.comp"), "--dispatch", "4,2", "--profile", "lavapipe",
              "--texture", f"0:0={tmp_path / 'img.npy'}:rgba8unorm", "--sampler", "0:0=linear,clamp",
              "--texture", "0:2=zeros:32x16"])
    out = capsys.readouterr().out
    assert rc == 0 and "result: IDENTICAL" in out and "on vulkan:" in out, out
    assert "0:2 dst: array<f16>: 2048 elements, 2048 equal" in out, out


def test_out_of_bounds_loads_give_the_zero_texel_as_lavapipe():
    case = V.oob_case()
    rep = diff_shader(case["source"], "oob.comp", dispatch=case["dispatch"], backend="vulkan", profile="lavapipe",
                      buffers=case["buffers"], textures=case["textures"], samplers=case["samplers"])
    assert rep.error is None, rep.error
    assert rep.identical, rep.text()
    assert [b.elements for b in rep.bindings] == [160, 32, 64]
