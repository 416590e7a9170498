"""Shipped profiles validate and behave; user profiles load, and bad ones say what to fix."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from emu.profiles import (EVIDENCE_LEVELS, KNOWN_MODELS, CoopConfig, LaneMap, Profile, ProfileError,
                          list_profiles, load_profile, profile_for_adapter)

SHIPPED = ["amd-cdna3", "amd-rdna3", "amd-rdna4", "apple-m1", "intel-xe-hpg", "intel-xe2", "lavapipe",
           "nvidia-ampere", "nvidia-b200", "nvidia-h200", "nvidia-rtx4090", "nvidia-rtx5090", "reference"]


def test_list_profiles():
    assert list_profiles() == SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_profile_is_complete_and_consistent(name):
    p = load_profile(name)
    assert isinstance(p, Profile) and p.name == name and p.configs
    assert p.supports_subgroup_size(p.default_subgroup_size)
    for field in ("configs", "subgroup_sizes", "lane_maps", "numerics", "stride_unit_8bit", "oob_behavior"):
        ev = p.evidence_for(field)
        assert ev.level in EVIDENCE_LEVELS and ev.text.strip(), (name, field)
    for cfg in p.configs:
        assert p.model_for(cfg) in KNOWN_MODELS
        assert p.find_config(cfg.m, cfg.n, cfg.k, cfg.a_type, cfg.c_type, b_type=cfg.b_type,
                             result_type=cfg.result_type, saturating=cfg.saturating_accumulation) == cfg


@pytest.mark.parametrize("name", SHIPPED)
def test_every_map_covers_and_round_trips(name):
    p = load_profile(name)
    rng = np.random.default_rng(1)
    for cfg in p.configs:
        for role in "ABC":
            for sg in p.subgroup_sizes:
                lm = p.lane_map(cfg, role, sg)
                assert isinstance(lm, LaneMap) and lm.shape == cfg.shape(role) and lm.subgroup_size == sg
                assert (lm.owner_count >= 1).all()
                assert lm.duplicated or not lm.has_duplicates
                if lm.has_duplicates:   # only RDNA3's A and B replicate
                    assert name == "amd-rdna3" and role in "AB"
                mats = rng.integers(-1000, 1000, size=(2, *lm.shape))
                frags = lm.to_fragments(mats)
                assert frags.shape == (2, sg, lm.elements_per_lane)
                assert np.array_equal(lm.to_matrix(frags), mats)
                assert np.array_equal(lm.to_fragments(lm.to_matrix(frags)), frags)
                assert p.lane_map(cfg, role, sg) is lm          # built once


def test_h200_facts():
    p = load_profile("nvidia-h200")
    assert p.subgroup_sizes == (32,) and p.stride_unit_8bit == "array_element" and p.oob_behavior == "h200-rebase"
    f32 = p.find_config(16, 16, 16, "f16", "f32")
    assert p.model_for(f32) == "nvidia-hopper" and p.model_for(p.find_config(16, 8, 32, "i8", "i32")) == "exact"
    assert p.evidence_for("lane_maps").level == "measured"
    bf = p.find_config(16, 16, 16, "bf16", "f32")
    assert p.evidence_for("numerics", bf).level == "published"
    # Dawn reports exactly the 10 configs of tests/data/hw/README.md (no bf16)
    dawn = {(d["component_type"], d["result_component_type"], d["m"], d["n"], d["k"]) for d in p.props_dawn()}
    want = {(a, r, 16, n, k) for a, r in (("f16", "f16"), ("f16", "f32")) for n, k in ((16, 16), (8, 16), (8, 8))}
    want |= {(a, r, 16, n, 32) for a, r in (("u8", "u32"), ("i8", "i32")) for n in (16, 8)}
    assert dawn == want and len(p.props_dawn()) == 10
    wgpu = p.props_wgpu()
    assert {tuple(sorted(d)) for d in wgpu} == {("ab_type", "cr_type", "k_size", "m_size", "n_size",
                                                 "saturating_accumulation")}
    assert all(d["ab_type"] == "f16" for d in wgpu) and len(wgpu) == 6
    text = p.describe_configs()
    assert "M=16 N=8  K=32  i8 x i8 + i32 -> i32" in text and "subgroup size 32" in text


@pytest.mark.parametrize("name,model", [("nvidia-rtx4090", "nvidia-ada"), ("nvidia-rtx5090", "nvidia-rtx-blackwell"),
                                        ("nvidia-b200", "nvidia-blackwell")])
def test_fp8_profiles(name, model):
    """Ada and Blackwell profiles: FP8 (e4m3, e5m2) at 16x16x32 and 16x8x32 into f16 and f32 under
    MMA-Sim's model of the architecture, in Vulkan's names (VK_EXT_shader_float8), absent from the
    WebGPU shapes (neither wgpu nor Dawn has an 8-bit float); each field's evidence said."""
    p = load_profile(name)
    for t in ("e4m3", "e5m2"):
        for c in ("f16", "f32"):
            for n in (16, 8):
                cfg = p.find_config(16, n, 32, t, c)
                assert cfg is not None and p.model_for(cfg) == model
    f16 = p.find_config(16, 16, 16, "f16", "f32")
    assert p.model_for(f16) == model
    khr = p.props_vulkan()["VkCooperativeMatrixPropertiesKHR"]
    text = json.dumps(p.props_vulkan())
    assert "VK_COMPONENT_TYPE_FLOAT8_E4M3_EXT" in text and "VK_COMPONENT_TYPE_FLOAT8_E5M2_EXT" in text
    assert len(khr) == len(p.configs) == 19
    assert not any("e4m3" in json.dumps(d) or "e5m2" in json.dumps(d) for d in p.props_wgpu() + p.props_dawn())
    assert p.evidence_for("numerics").level == "published" and "MMA-Sim" in p.evidence_for("numerics").text
    assert p.evidence_for("configs").level == "assumption" and "e4m3" in p.evidence_for("configs").text
    assert "16x16x32 e4m3 x e4m3 + f32 -> f32" in json.dumps(p.props_vulkan())
    assert load_profile("nvidia-h200").find_config(16, 16, 32, "e4m3", "f32") is None  # its driver has no FP8


def test_rdna3_and_lavapipe_props():
    r = load_profile("amd-rdna3")
    bf = r.find_config(16, 16, 16, "bf16", "f32")
    assert r.evidence_for("config", bf).level == "assumption"
    assert r.evidence_for("config", r.configs[0]).level == "published"   # falls back to 'configs'
    with pytest.raises(ProfileError, match="no evidence for 'colour'"):
        r.evidence_for("colour")
    assert r.supports_subgroup_size(64) and not r.supports_subgroup_size(16)
    assert r.find_config(16, 16, 16, "i8", "i32") == CoopConfig(16, 16, 16, "i8", "i8", "i32", "i32")
    assert r.find_config(16, 16, 16, "i8", "i32", saturating=True).saturating_accumulation
    assert not any(d for d in r.props_dawn() if d["component_type"] == "bf16")
    lvp = load_profile("lavapipe")
    assert [(d["m_size"], d["ab_type"], d["cr_type"]) for d in lvp.props_wgpu()] == [(8, "f16", "f16"), (8, "f16", "f32")]
    assert {p["component_type"] for p in lvp.props_dawn()} == {"f16", "u8", "i8"}
    assert lvp.model_for(lvp.configs[0]) == "lavapipe-chain"


def test_reference_covers_every_other_profile():
    ref = load_profile("reference")
    assert ref.subgroup_sizes == (4, 8, 16, 32, 64, 128)
    own = set(ref.configs)
    for name in SHIPPED:
        if name != "reference":
            assert set(load_profile(name).configs) <= own, name
    assert {ref.model_for(c) for c in ref.configs} == {"exact"}


def test_lane_map_errors_are_clear():
    p = load_profile("nvidia-h200")
    cfg = p.configs[0]
    with pytest.raises(ProfileError, match="subgroup size 64 is not supported; supported: 32"):
        p.lane_map(cfg, "A", 64)
    with pytest.raises(ProfileError, match="unknown role 'Z'"):
        p.lane_map(cfg, "Z")
    alien = CoopConfig(8, 8, 8, "f16", "f16", "f16", "f16")
    with pytest.raises(ProfileError, match=r"(?s)no config 8x8x8 .*\n   hint: .*supports these"):
        p.lane_map(alien, "A")
    assert p.lane_map(cfg, "result") is p.lane_map(cfg, "C")
    assert p.find_config(8, 8, 8, "f16", "f16") is None


def test_adapter_matching():
    assert profile_for_adapter(0x10DE, "NVIDIA H200", "vulkan").name == "nvidia-h200"
    assert profile_for_adapter("0x10005", "llvmpipe (LLVM 15.0.7, 256 bits)").name == "lavapipe"
    assert profile_for_adapter(0x10DE, "NVIDIA GeForce RTX 3090").name == "nvidia-ampere"
    assert profile_for_adapter(0x1234, "Unknown GPU") is None
    assert not load_profile("reference").matches_adapter(0x10DE, "NVIDIA H200")


# ===================================================================== user files
def base_doc(**over):
    doc = {
        "schema": "emu-profile/1",
        "name": "my-gpu",
        "description": "a test device",
        "subgroup_sizes": [16],
        "numerics": "exact",
        "lane_maps": {"A": {"formula": {"row": "lane % 4", "col": "i * 4 + lane // 4"}},
                      "B": "reference",
                      "C": {"table": [[[l % 4, l // 4]] for l in range(16)]}},
        "stride_unit_8bit": "matrix_element",
        "oob_behavior": "zero",
        "configs": [{"m": 4, "n": 4, "k": 4, "a_type": "f16", "c_type": "f32"}],
        "evidence": {f: {"level": "assumption", "reason": "test"} for f in
                     ("configs", "subgroup_sizes", "lane_maps", "numerics", "stride_unit_8bit", "oob_behavior")},
    }
    doc.update(over)
    return doc


def write(tmp_path, doc, text=None):
    path = tmp_path / "my.json"
    path.write_text(text if text is not None else json.dumps(doc))
    return path


def test_user_profile_with_formula_and_table(tmp_path):
    p = load_profile(write(tmp_path, base_doc()))
    cfg = p.find_config(4, 4, 4, "f16", "f32")
    a = p.lane_map(cfg, "A")
    assert tuple(a.coords[5, 0]) == (1, 1) and a.elements_per_lane == 1
    assert tuple(p.lane_map(cfg, "C").coords[6, 0]) == (2, 1)
    assert p.oob_behavior == "zero" and p.model_for(cfg) == "exact"


def test_user_profile_by_subgroup_size(tmp_path):
    doc = base_doc(subgroup_sizes=[16, 4],
                   lane_maps={"by_subgroup_size": {"16": "reference",
                                                   "4": {"formula": {"row": "lane", "col": "i"}}}})
    p = load_profile(write(tmp_path, doc))
    assert tuple(p.lane_map(p.configs[0], "B", 4).coords[2, 3]) == (2, 3)


BAD = [
    # (change to the document, text expected in the message)
    (dict(numerics="nvidia-hoper"), r"numerics.float: 'nvidia-hoper' is not one of .*hint: use 'nvidia-hopper'"),
    (dict(oob_behavior="wrap"), r"oob_behavior: 'wrap' is not one of error, h200-rebase, zero, clamp"),
    (dict(subgroup_sizes=[24]), r"subgroup_sizes\[0\]: 24 is not a power of two"),
    (dict(default_subgroup_size=32), r"default_subgroup_size: 32 is not in subgroup_sizes"),
    (dict(schema="v2"), r"schema: 'v2' is not a profile schema.*hint: write \"schema\": \"emu-profile/1\""),
    (dict(configs=[{"m": 4, "n": 4, "k": 4, "a_type": "f16", "c_type": "f32", "sat": True}]),
     r"configs\[0\]\.sat: unknown field.*hint: use 'saturating_accumulation'"),
    (dict(configs=[{"m": 4, "n": 4, "k": 4, "a_type": "half", "c_type": "f32"}]), r"configs\[0\]\.a_type: 'half' is not one of"),
    (dict(configs=[{"m": 4, "n": 4, "k": 4, "a_type": "f16", "c_type": "i32"}]), r"configs\[0\]: mixes integer and floating-point"),
    (dict(configs=[{"m": 0, "n": 4, "k": 4, "a_type": "f16", "c_type": "f32"}]), r"configs\[0\]\.m: expected a positive integer"),
    (dict(configs=[{"m": 4, "n": 4, "k": 4, "a_type": "i32", "c_type": "i32", "saturating_accumulation": True}]),
     r"configs\[0\]\.saturating_accumulation: saturation is modelled for 8-bit inputs into a 32-bit result "
     r"only, not i32 x i32 -> i32.*hint: remove it"),
    (dict(configs=[{"m": 4, "n": 4, "k": 4, "a_type": "i8", "c_type": "i8", "saturating_accumulation": True}]),
     r"configs\[0\]\.saturating_accumulation: saturation is modelled .* not i8 x i8 -> i8"),
    (dict(lane_maps="nvidia"), r"lane_maps: 'nvidia' is not one of .*reference"),
    (dict(lane_maps={"formula": {"row": "__import__('os')", "col": "i"}}),
     r"lane_maps\.formula\.row: a function call at column 1 of \"__import__\('os'\)\" is not allowed in a formula"),
    (dict(lane_maps={"formula": {"row": "lane % 4", "col": "0"}}),
     r"configs\[0\] lane map A at subgroup size 16: .*element \(0, 1\) of the 4x4 matrix is held by no lane.*hint:"),
    (dict(lane_maps={"A": "reference", "B": "reference", "C": {"table": [[[0, 0]]] * 16}}),
     r"lane map C at subgroup size 16: .*element \(0, 1\) .* held by no lane"),
    (dict(lane_maps="amd-rdna3"), r"lane map A at subgroup size 16: amd-rdna3 lane map: needs wave32 or wave64"),
    (dict(evidence={"configs": {"level": "measured"}}), r"evidence\.configs: measured evidence needs 'data'"),
    (dict(evidence={"configs": {"level": "assumption", "reason": "x"}}), r"evidence: no evidence for 'subgroup_sizes'"),
    (dict(configs=[]), r"configs: the profile lists no configs"),
    (dict(include_configs_from=["nvidia-h201"]), r"include_configs_from\[0\]: no shipped profile 'nvidia-h201'"),
]


@pytest.mark.parametrize("change, message", BAD)
def test_malformed_user_profile_gives_clear_error(tmp_path, change, message):
    path = write(tmp_path, base_doc(**change))
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    err = info.value
    assert err.message.startswith(str(path) + ": "), err.message      # the file, then the field
    assert err.hint, "every profile error carries the fix as its hint"
    text = str(err)                                                   # what the CLI prints
    assert text.startswith("emu: error: ") and "\n   hint: " in text
    assert re.search(message, text, re.S), text


def test_bad_json_and_missing_things(tmp_path):
    path = write(tmp_path, None, text='{"schema": "emu-profile/1",\n "name": "x",,}')
    with pytest.raises(ProfileError, match=r"my\.json: line 2, column 14: not valid JSON"):
        load_profile(path)
    path = write(tmp_path, None, text='{"name": "a", "name": "b"}')
    with pytest.raises(ProfileError, match="duplicate key 'name'"):
        load_profile(path)
    doc = base_doc()
    del doc["evidence"]
    with pytest.raises(ProfileError, match=r"top level: missing required field 'evidence'\n   hint: add 'evidence'"):
        load_profile(write(tmp_path, doc))
    with pytest.raises(ProfileError, match=r"(?s)no profile named 'nvidia-h20'.*did you mean 'nvidia-h200'"):
        load_profile("nvidia-h20")
    for part, full in (("h200", "nvidia-h200"), ("RDNA3", "amd-rdna3")):     # a part of the name
        with pytest.raises(ProfileError, match=rf"(?s)no profile named '{part}'.*did you mean '{full}'"):
            load_profile(part)


def test_numerics_presets_in_sync_with_numerics_module():
    mma = pytest.importorskip("emu.numerics.mma")
    if not hasattr(mma, "MODELS"):
        pytest.skip("emu.numerics.mma exposes no MODELS table yet")
    assert set(KNOWN_MODELS) <= set(mma.MODELS)
    used = {load_profile(n).model_for(c) for n in SHIPPED for c in load_profile(n).configs}
    assert used <= set(mma.MODELS)


# a repository path cited in a profile's text: evidence data, notes, sources
CITED = re.compile(r"(?<![\w/.])((?:tests|traces|emu|scripts|bench|docs)/[\w./+-]*\w)")


@pytest.mark.parametrize("name", list_profiles())
def test_every_path_a_profile_cites_exists(name):
    root = Path(__file__).resolve().parents[2]
    text = (root / "emu" / "profiles" / "data" / f"{name}.json").read_text()
    cited = sorted(set(CITED.findall(text)))
    missing = [p for p in cited if not (root / p).exists()]
    assert missing == [], f"{name}.json cites paths that are not in the repository: {missing}"
    if name == "nvidia-h200":
        assert "tests/hw/test_tint_consts.py" in cited and "tests/data/hw/h200/lanemaps.json" in cited
