"""The ICD's C declarations and command table are generated from vk.xml: regenerating them from
the same registry gives the committed files byte for byte."""
import re

import pytest

from emu.vulkan import gen, vk_registry


def _registry():
    path = gen.find_vk_xml()
    if path is None:
        pytest.skip("no vk.xml new enough (bash scripts/vk_xml.sh fetches Debian sid's)")
    have = vk_registry.HEADER_VERSION
    text = path.read_text(errors="replace")
    m = re.search(r"VK_HEADER_VERSION</name> (\d+)", text)
    if m and int(m[1]) != have:
        pytest.skip(f"the vk.xml found ({path}) is header version {m[1]}; the committed files are from {have}")
    return path


def test_regenerating_reproduces_the_committed_files():
    out = gen.generate(_registry())
    for name, text in out.items():
        assert (gen.HERE / name).read_text() == text, f"{name} differs: run python -m emu.vulkan.gen"


def test_selection_holds_what_the_device_uses():
    # the commands and structures the ICD implements and fills are all in the generated table
    for cmd in ("vkCreateInstance", "vkCmdDispatchBase", "vkQueueSubmit2", "vkGetSemaphoreCounterValue",
                "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR",
                "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV"):
        assert cmd in vk_registry.COMMANDS
    assert vk_registry.ALIASES["vkGetPhysicalDeviceFeatures2KHR"] == "vkGetPhysicalDeviceFeatures2"
    assert vk_registry.STYPES["VkPhysicalDeviceCooperativeMatrix2FeaturesNV"] == \
        "VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV"
    values = dict(vk_registry.ENUMS["VkStructureType"])
    assert values["VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV"] == 1000593000
    assert vk_registry.CONSTANTS["VK_WHOLE_SIZE"] == (1 << 64) - 1
    assert "VkInstance" in vk_registry.DISPATCHABLE and "VkBuffer" not in vk_registry.DISPATCHABLE
    ret, params = vk_registry.COMMANDS["vkCmdDispatch"]
    assert ret == "void" and [p[1] for p in params] == ["commandBuffer", "groupCountX", "groupCountY", "groupCountZ"]
