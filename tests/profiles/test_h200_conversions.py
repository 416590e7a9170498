"""Cooperative-matrix element conversions on nvidia-h200 against the H200 (tests/data/hw/h200/
conversions.npz, recorded through Vulkan by scripts/h200_convert.py: emu.hw.convert_record's
GLSL kernels, seed 1, which the rule was fitted to; conversions_seed2.npz: held-out inputs
recorded after the fit): every bit of every case, through emu's SPIR-V front end and interpreter. The
reference profile keeps IEEE/WGSL conversions, which differ (NaN bits, saturation, i32 -> f16)."""
import pathlib

import pytest

from emu.hw import convert_record as cr

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "hw" / "h200"


@pytest.fixture(scope="module")
def recording():
    return cr.load(str(DATA / "conversions.npz"))


@pytest.mark.parametrize("name", ["conversions.npz", "conversions_seed2.npz"])
def test_h200_matrix_conversions_bit_for_bit(name):
    rec = cr.load(str(DATA / name))
    rows = cr.compare(rec, "nvidia-h200")
    assert set(rows) == set(cr.CASES)
    assert {k: r["n"] - r["equal"] for k, r in rows.items() if r["equal"] != r["n"]} == {}
    assert sum(r["n"] for r in rows.values()) == 2_161_664


def test_reference_profile_converts_as_ieee(recording):
    rows = cr.compare({k: recording[k] for k in ("seed", "f32_f16", "f16_f32", "f32_i32", "i32_f16")}, "reference")
    assert {k: r["n"] - r["equal"] for k, r in rows.items()} == {"f32_f16": 509, "f16_f32": 2046, "f32_i32": 25181,
                                                              "i32_f16": 31}


def test_h200_scalar_spirv_conversions_bit_for_bit():
    """SPIR-V's scalar conversions (GLSL's int(x), float16_t(i)...) are the matrix elements' on the
    H200 (scalar_conversions.npz, seed 1: the same bits); WGSL's keep Tint's clamp
    (test_h200_builtins), so the SPIR-V front end marks its conversions `native`."""
    rec = cr.load(str(DATA / "scalar_conversions.npz"))
    rows = cr.compare(rec, "nvidia-h200", scalar=True)
    assert {k: r["n"] - r["equal"] for k, r in rows.items() if r["equal"] != r["n"]} == {}
    assert sum(r["n"] for r in rows.values()) == 2_161_664
