"""A profile file may carry a fused model's parameters itself (what `emu fit` writes for a GPU that
no preset reproduces), and a malformed one is a clear error."""
import json
from pathlib import Path

import pytest

from emu.numerics.mma import MODELS, FusedModel, fused_model_doc
from emu.profiles import load_profile
from emu.profiles.profile import ProfileError

H200 = Path(__file__).resolve().parents[2] / "emu" / "profiles" / "data" / "nvidia-h200.json"


def _doc(float_model):
    doc = json.loads(H200.read_text())
    doc["name"] = "custom"
    doc["numerics"] = {"float": float_model, "integer": "exact"}
    for c in doc.get("configs", []):
        c.pop("model", None)
    return doc


def test_written_out_fused_model_loads_as_that_model(tmp_path):
    h = MODELS["nvidia-hopper"]
    p = tmp_path / "custom.json"
    p.write_text(json.dumps(_doc(fused_model_doc(h.f16_result, h.f32_result, h.nan_f16, h.nan_f32, "test"))))
    prof = load_profile(str(p))
    m = prof.model_for(prof.find_config(16, 16, 16, "f16", "f32"))
    assert isinstance(m, FusedModel)
    assert (m.f16_result, m.f32_result, m.nan_f16, m.nan_f32) == (h.f16_result, h.f32_result, h.nan_f16, h.nan_f32)
    assert "f16 x f16 + f32 -> f32  [numerics custom (fitted)]" in prof.describe_configs()


@pytest.mark.parametrize("model,words", [
    ({"fused": {"f16_result": {"block": 16, "frac_bitz": 25}}}, "unexpected keyword argument 'frac_bitz'"),
    ({"fused": {}}, "give f16_result, f32_result or both"),
    ({"fused": {"f32_result": {"block": 16, "frac_bits": 25}, "nan_f32": "nan"}}, "nan_f32: expected the NaN's bits"),
    ({"tuned": {}}, 'expected {"fused"'),
])
def test_malformed_fused_model_is_a_clear_error(tmp_path, model, words):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(_doc(model)))
    with pytest.raises(ProfileError) as e:
        load_profile(str(p))
    assert "numerics.float" in str(e.value) and words in str(e.value)
