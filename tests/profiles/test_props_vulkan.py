"""`emu props` in Vulkan's structures: the nvidia-h200 profile's VkCooperativeMatrixPropertiesKHR
list equals what the H200's driver returned through vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR
(tests/data/hw/h200/vulkan/diffs.json.gz), and its VK_NV_cooperative_matrix2 flexible-dimension list is the
driver's 25 (tests/data/hw/h200/lanemaps.json)."""
import gzip
import json
from pathlib import Path

import pytest

from emu.cli import main as cli
from emu.profiles import load_profile
from emu.profiles.profile import ProfileError

ROOT = Path(__file__).resolve().parents[2]
SHORT = {"VK_COMPONENT_TYPE_FLOAT16_KHR": "f16", "VK_COMPONENT_TYPE_FLOAT32_KHR": "f32",
         "VK_COMPONENT_TYPE_BFLOAT16_KHR": "bf16", "VK_COMPONENT_TYPE_SINT8_KHR": "i8",
         "VK_COMPONENT_TYPE_UINT8_KHR": "u8", "VK_COMPONENT_TYPE_SINT32_KHR": "i32",
         "VK_COMPONENT_TYPE_UINT32_KHR": "u32"}


def test_the_khr_list_is_the_drivers():
    measured = json.loads(gzip.decompress((ROOT / "tests/data/hw/h200/vulkan/diffs.json.gz").read_bytes()))["khr_configs"]
    props = load_profile("nvidia-h200").props_vulkan()["VkCooperativeMatrixPropertiesKHR"]
    ours = [{"M": p["MSize"], "N": p["NSize"], "K": p["KSize"], "A": SHORT[p["AType"]], "B": SHORT[p["BType"]],
             "C": SHORT[p["CType"]], "result": SHORT[p["ResultType"]], "saturating": p["saturatingAccumulation"],
             "scope": "subgroup"} for p in props]
    key = lambda d: json.dumps(d, sort_keys=True)  # noqa: E731
    assert sorted(map(key, ours)) == sorted(map(key, measured)) and len(ours) == 11


def test_the_nv2_flexible_dimensions_are_the_drivers_25():
    lm = json.loads((ROOT / "tests/data/hw/h200/lanemaps.json").read_text())["cooperative_matrix_flexible_dimensions_nv"]
    flex = load_profile("nvidia-h200").props_vulkan()["VkCooperativeMatrixFlexibleDimensionsPropertiesNV"]
    assert len(flex) == len(lm) == 25
    for f, m in zip(flex, lm):
        assert (f["MGranularity"], f["NGranularity"], f["KGranularity"], SHORT[f["AType"]], SHORT[f["ResultType"]],
                f["workgroupInvocations"]) == (m["MGranularity"], m["NGranularity"], m["KGranularity"], m["AType"],
                                               m["ResultType"], m["workgroupInvocations"])
        assert f["scope"] == ("VK_SCOPE_WORKGROUP_KHR" if m["scope"] == "workgroup" else "VK_SCOPE_SUBGROUP_KHR")
    assert sorted({f["workgroupInvocations"] for f in flex if f["scope"] == "VK_SCOPE_WORKGROUP_KHR"}) == [32, 64, 128, 256]


def test_emu_props_prints_the_vulkan_view(capsys):
    assert cli(["props", "nvidia-h200"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["vulkan"]["per_subgroup_size"]["32"][-1] == "16x16x16 bf16 x bf16 + f32 -> f32"
    assert len(out["vulkan"]["VkCooperativeMatrixFlexibleDimensionsPropertiesNV"]) == 25


def test_a_bad_flexible_entry_is_one_message(tmp_path):
    doc = json.loads((ROOT / "emu/profiles/data/nvidia-h200.json").read_text())
    del doc["flexible_dimensions_nv"][7]["workgroup_invocations"]
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(ProfileError) as e:
        load_profile(str(p))
    assert "flexible_dimensions_nv[7].workgroup_invocations" in str(e.value)
