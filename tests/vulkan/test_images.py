"""Images and samplers through emu's ICD and the real Vulkan loader: a compute shader samples an
rgba8unorm image (nearest and linear filtering; clamp to edge, repeat, mirrored repeat) through a
combined image sampler and through a sampled image with a separate sampler, and stores to rgba32f
and rgba8 storage images (tests/vulkan/clients/images.py). The device's bytes are compared, bit for
bit, with emu's own execution of the same SPIR-V through its Python API (emu against itself
through the loader), and the nearest cases with the texels a nearest sample must return."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
CASES = [("nearest", "clamp"), ("nearest", "repeat"), ("linear", "clamp"), ("linear", "repeat"), ("linear", "mirror")]


@pytest.fixture(autouse=True)
def _vulkan_package():
    pytest.importorskip("vulkan")


def _glslang(name: str, out: Path) -> Path:
    g = os.environ.get("EMU_GLSLANG") or "/work/main/.hwtmp/glslang/glslang"
    if not Path(g).exists():
        pytest.skip("no glslang to compile the GLSL shader (EMU_GLSLANG)")
    spv = out / (Path(name).stem + ".spv")
    subprocess.run([g, "-V", str(HERE / "data" / name), "-o", str(spv)], check=True, capture_output=True)
    return spv


def _client(manifest, name, *args):
    env = dict(os.environ, VK_DRIVER_FILES=manifest, VK_LOADER_LAYERS_DISABLE="*")
    return subprocess.run([sys.executable, str(HERE / "clients" / name), *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=300, cwd=HERE / "clients")


def _emu_run(spv: Path, data: np.ndarray, filt: str, mode: str):
    """The same shader on emu's Python API, with the same texels and sampler: (rgba32f, rgba8) bytes."""
    from emu.api import Device
    dev = Device("nvidia-h200")
    mod = dev.create_shader_module(spv.read_bytes().decode("utf-8", "surrogateescape"), file=spv.name)
    pipe = dev.create_compute_pipeline(mod, entry_point="main")
    src = dev.create_texture((16, 16), "rgba8unorm")
    dev.write_texture(src, data)
    address = {"clamp": "clamp-to-edge", "repeat": "repeat", "mirror": "mirror-repeat"}[mode]
    smp = dev.create_sampler(mag_filter=filt, min_filter=filt, address_mode_u=address, address_mode_v=address,
                             address_mode_w=address, lod_max_clamp=0.0)
    f32, u8 = dev.create_texture((16, 16), "rgba32float"), dev.create_texture((16, 16), "rgba8unorm")
    dev.dispatch(pipe, {(0, 0): (src, smp), (0, 1): src, (0, 2): smp, (0, 3): f32, (0, 4): u8}, (2, 2, 1))
    return f32.levels[0][0].view(np.float32), u8.levels[0][0]


def test_sampled_and_storage_images_match_emu_itself(manifest, tmp_path):
    spv = _glslang("images.comp", tmp_path)
    r = _client(manifest, "images.py", spv, tmp_path / "out.npz")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    lines = r.stdout.splitlines()
    assert lines[:10] == [
        "rgba8 optimal features: sampled True linear filter True storage True texel buffer 0",
        # what emu runs, as the recorded GPU (an H100's vulkaninfo) reports it: no storage sRGB or
        # depth images, no linear filtering of 32-bit floats (emu's texture model, WebGPU's rule)
        "R32_SFLOAT optimal: ['sampled', 'storage', 'transfer src', 'transfer dst'] "
        "linear: ['sampled', 'storage', 'transfer src', 'transfer dst']",
        "R8G8B8A8_SRGB optimal: ['sampled', 'linear filter', 'transfer src', 'transfer dst'] "
        "linear: ['sampled', 'linear filter', 'transfer src', 'transfer dst']",
        "D32_SFLOAT optimal: ['sampled', 'transfer src', 'transfer dst'] linear: ['sampled', 'transfer src', "
        "'transfer dst']",
        "rgba8 2d storage: maxExtent 32768 maxMipLevels 16 maxArrayLayers 2048 sampleCounts 1",
        "rgba8 colour attachment: VkErrorFormatNotSupported",
        "linear layout: offset 0 rowPitch 64 size 1024",          # emu's layout: rows tightly packed
        "upload: exact True", "copy image: exact True rest zero True",
        "clear: [128, 64, 255, 0]"]                               # 0.5 * 255 and 0.25 * 255 to nearest even
    # a copied set (pDescriptorCopies) and one whose layout fixes the samplers (pImmutableSamplers)
    assert lines[-3:] == ["copied set: as nearest clamp True", "immutable samplers: as nearest clamp True", "done"]
    got = np.load(tmp_path / "out.npz")
    data = got["data"]
    # a nearest sample is the texel under the coordinate (uv * 16 is never within a rounding of an edge here)
    uv = ((np.arange(16, dtype=np.float32) + np.float32(0.5)) / np.float32(12) - np.float32(0.25)) * 16
    for filt, mode in CASES:
        f32, u8 = _emu_run(spv, data, filt, mode)
        assert got[f"{filt}_{mode}_f32"].tobytes() == f32.tobytes(), (filt, mode)
        assert got[f"{filt}_{mode}_u8"].tobytes() == u8.tobytes(), (filt, mode)
        if filt == "nearest":
            i = np.floor(uv).astype(int)
            i = np.clip(i, 0, 15) if mode == "clamp" else i % 16
            want = data[i][:, i]
            assert (got[f"{filt}_{mode}_u8"] == want).all()
            assert (got[f"{filt}_{mode}_f32"] == want.astype(np.float32) / np.float32(255)).all()
    # the filtered cases differ from each other where the coordinates leave the image
    assert got["linear_clamp_f32"].tobytes() != got["linear_repeat_f32"].tobytes()
    assert got["linear_repeat_f32"].tobytes() != got["linear_mirror_f32"].tobytes()


def test_invalid_use_of_images_is_one_message_then_the_code(manifest, tmp_path):
    """A view of an image with no memory, a multisampled image, an image past the device's limits,
    a mirror-clamp-to-edge sampler (unnormalized and clamp-to-border ones are made), a texel buffer binding, a descriptor write of the wrong type, a
    storage view of an image without STORAGE usage, a layout whose descriptor type is not the
    shader's: one line each naming the call and the VUID (then the code where the command returns
    one); the program goes on."""
    spv = _glslang("images.comp", tmp_path)
    r = _client(manifest, "images_invalid.py", spv)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "view of an unbound image: VkErrorUnknown", "multisampled image: VkErrorFormatNotSupported",
        "image past the limits: VkErrorFormatNotSupported",
        "mirror-clamp-to-edge sampler: VkErrorFeatureNotPresent", "unnormalized sampler: made",
        "clamp-to-border sampler: made", "texel buffer binding: VkErrorFeatureNotPresent",
        "submit: VkErrorUnknown", "submit: VkErrorUnknown", "done"]
    assert r.stderr.splitlines() == [
        "emu vulkan: vkCreateImageView [VUID-VkImageViewCreateInfo-image-01020]: the image has no memory bound "
        "(vkBindImageMemory first) -> VK_ERROR_UNKNOWN",
        "emu vulkan: vkCreateImage [VUID-VkImageCreateInfo-imageCreateMaxMipLevels-02251]: pCreateInfo: samples 4: "
        "emu's images have one sample (vkGetPhysicalDeviceImageFormatProperties lists what emu makes) -> "
        "VK_ERROR_FORMAT_NOT_SUPPORTED",
        "emu vulkan: vkCreateImage [VUID-VkImageCreateInfo-extent-02252]: extent (40000, 16) with 1 layer(s) passes "
        "the device's 2d limits (32768 texels a side, 2048 layers) -> VK_ERROR_FORMAT_NOT_SUPPORTED",
        "emu vulkan: vkCreateSampler [VUID-VkSamplerCreateInfo-addressModeU-01079]: pCreateInfo->addressModeU mirror "
        "clamp to edge (samplerMirrorClampToEdge is not reported): emu's samplers filter nearest or linear and address "
        "by repeat, mirrored repeat or clamp to edge (with or without a compare op) -> VK_ERROR_FEATURE_NOT_PRESENT",
        "emu vulkan: vkCreateDescriptorSetLayout [VUID-VkDescriptorSetLayoutBinding-descriptorType-parameter]: "
        "pBindings[0] (binding 0) has descriptor type UNIFORM_TEXEL_BUFFER: emu's device runs storage and uniform "
        "buffers, storage and sampled images, samplers and combined image samplers (not texel buffers, input "
        "attachments or inline uniform blocks) -> VK_ERROR_FEATURE_NOT_PRESENT",
        "emu vulkan: vkUpdateDescriptorSets [VUID-VkWriteDescriptorSet-descriptorType-00319]: pDescriptorWrites[0]: "
        "descriptorType SAMPLED_IMAGE but binding 3 of the set's layout is STORAGE_IMAGE",
        "emu vulkan: vkUpdateDescriptorSets [VUID-VkWriteDescriptorSet-descriptorType-00339]: "
        "pDescriptorWrites[0].pImageInfo[0].imageView: a STORAGE_IMAGE descriptor needs an image made with "
        "VK_IMAGE_USAGE_STORAGE_BIT",
        "emu vulkan: vkQueueSubmit [VUID-vkCmdDispatch-None-08114]: vkCmdDispatch: set 0 binding 3 ('out_f32') was "
        "never written (vkUpdateDescriptorSets) -> VK_ERROR_UNKNOWN",
        "emu vulkan: vkQueueSubmit [VUID-VkComputePipelineCreateInfo-layout-07990]: vkCmdDispatch: set 0 binding 3 "
        "('out_f32', texture_storage_2d<rgba32float, write>) is a SAMPLED_IMAGE descriptor; the shader's variable "
        "needs STORAGE_IMAGE -> VK_ERROR_UNKNOWN"]


def test_the_image_kernels_of_tests_hw_through_the_icd(manifest):
    """tests/hw/test_vulkan_images_lavapipe.py (45 GLSL image kernels: sampled, storage, combined
    image samplers, mip levels, arrays, cubes and cube arrays, 3-D, depth compares, gathers, queries,
    every storage format, out-of-bounds loads) with emu's ICD as the only Vulkan device, modelling
    lavapipe: emu/hw/vulkan_images.py's VkImages, views, samplers and copies run on the ICD and give
    emu's own results, bit for bit."""
    env = dict(os.environ, VK_DRIVER_FILES=manifest, VK_LOADER_LAYERS_DISABLE="*", EMU_PROFILE="lavapipe")
    test = "tests/hw/test_vulkan_images_lavapipe.py"
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", test], env=env,
                       capture_output=True, text=True, timeout=900, cwd=HERE.parents[1])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    passed = [line for line in r.stdout.splitlines() if line.startswith(f"PASSED {test}::")]
    assert len(passed) == 47 and "SKIPPED" not in r.stdout, r.stdout[-3000:]


def test_emu_diff_of_an_image_kernel_against_the_icd(manifest, tmp_path):
    """`emu diff --backend vulkan` of a combined-image-sampler blur with emu's ICD (nvidia-h200) as
    the device: IDENTICAL."""
    sys.path.insert(0, str(HERE.parents[0] / "hw"))
    import vulkan_image_cases as V
    (tmp_path / "blur.comp").write_text(V.COMBINED_BLUR)
    np.save(tmp_path / "img.npy", np.random.default_rng(5).integers(0, 256, (16, 32, 4), dtype=np.uint8))
    env = dict(os.environ, VK_DRIVER_FILES=manifest, VK_LOADER_LAYERS_DISABLE="*")
    r = subprocess.run([sys.executable, "-m", "emu", "diff", str(tmp_path / "blur.comp"), "--dispatch", "4,2",
                        "--profile", "nvidia-h200", "--backend", "vulkan",
                        "--texture", f"0:0={tmp_path / 'img.npy'}:rgba8unorm", "--sampler", "0:0=linear,clamp",
                        "--texture", "0:2=zeros:32x16"], env=env, capture_output=True, text=True, timeout=300,
                       cwd=HERE.parents[1])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "on vulkan: emu 0.1.0 (nvidia-h200: NVIDIA H200)" in r.stdout
    assert "0:2 dst: array<f16>: 2048 elements, 2048 equal, 0 different" in r.stdout
    assert "result: IDENTICAL (exit 0)" in r.stdout
