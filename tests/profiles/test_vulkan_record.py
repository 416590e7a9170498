"""A profile's `vulkan` block (what the real device reports through Vulkan; emu's ICD reports the
same) is the hardware record it cites, field by field."""
import json
from pathlib import Path

import pytest

from emu.profiles import load_profile
from emu.profiles.profile import ProfileError

ROOT = Path(__file__).resolve().parents[2]


def test_h200_vulkan_block_is_the_recorded_device():
    prof = load_profile("nvidia-h200")
    hw = json.loads((ROOT / "tests/data/hw/h200/lanemaps.json").read_text())
    dev = hw["device"]
    v = prof.vulkan
    assert v["device_id"] == int(dev["deviceID"], 16) == 0x2335
    assert (v["device_name"], v["driver_version"], v["api_version"]) == (dev["name"], dev["driverVersion"],
                                                                         dev["apiVersion"])
    assert dict(v["extensions"]) == hw["extensions_of_interest"]
    assert prof.evidence_for("vulkan").level == "measured"
    assert "VK_EXT_shader_float8" not in v["extensions"]        # the H200's driver does not report it


def test_a_bad_vulkan_block_is_one_message(tmp_path):
    text = (ROOT / "emu/profiles/data/nvidia-h200.json").read_text()
    bad = tmp_path / "bad.json"
    bad.write_text(text.replace('"device_id": "0x2335"', '"device_id": "H200"'))
    with pytest.raises(ProfileError, match=r"vulkan.device_id: 'H200' is not a number"):
        load_profile(str(bad))
