"""scripts/translator_spirv.py: the SPIR-V that Dawn (Tint) and wgpu (naga) hand to Mesa's lavapipe
for one of our random programs, captured through MESA_SPIRV_DUMP_PATH. What the compiler model's
translator layer claims (emu/isa/compiler.py) is checked on it: Tint writes smoothstep as
arithmetic and min/max/clamp as NMin/NMax/NClamp, naga keeps SmoothStep; Tint's module is the
golden one kept in tests/data/tint. Skipped without the packages or a lavapipe adapter."""
import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

from emu.hw import randprog

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("translator_spirv", ROOT / "scripts" / "translator_spirv.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    ts = _script()
    dump = tmp_path_factory.mktemp("mesa")
    old = {k: os.environ.get(k) for k in ("MESA_SPIRV_DUMP_PATH", "EMU_HW_ADAPTER")}
    os.environ["MESA_SPIRV_DUMP_PATH"] = str(dump)
    os.environ.setdefault("EMU_HW_ADAPTER", "llvmpipe")
    try:
        out = {}
        for tr in ("tint", "naga"):
            why = ts.unavailable(tr)
            if why:
                pytest.skip(f"{tr}: {why}")
            try:
                out[tr] = ts.capture(randprog.generate(753).wgsl, tr, dump)
            except RuntimeError as e:
                pytest.skip(str(e))
        return out
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _dis(spv: bytes, tmp_path) -> str:
    from emu.frontend.spirv import tool
    f = tmp_path / "m.spv"
    f.write_bytes(spv)
    try:
        return subprocess.run([tool("spirv-dis"), str(f)], capture_output=True, text=True, check=True).stdout
    except Exception as e:                   # no spirv-dis: the module's words still say enough
        pytest.skip(f"spirv-dis: {e}")


def test_tint_writes_smoothstep_as_arithmetic(captured, tmp_path):
    text = _dis(captured["tint"], tmp_path)
    assert "Google Tint Compiler" in text
    assert "SmoothStep" not in text and "NClamp" in text and "OpFDiv %half" in text
    golden = (ROOT / "tests" / "data" / "tint" / "randprog_753.spvasm").read_text()
    assert text == golden


def test_naga_keeps_smoothstep(captured, tmp_path):
    text = _dis(captured["naga"], tmp_path)
    assert "SmoothStep" in text and "NClamp" not in text
