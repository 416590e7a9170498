"""Each .spvasm twin of a tests/shaders/spirv .comp (the SPIR-V that the tests read where the
wheel's glslang 13.1.1 refuses the GLSL) is what the newer glslang makes of its .comp today: the
twin, assembled, is word for word the .comp compiled by EMU_GLSLANG (glslang 16.6 from
scripts/glslang_nv2.sh) and put through that glslang's spirv-dis and spirv-as (so that both sides
number their ids from the same names). Skipped without EMU_GLSLANG."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from emu.frontend.spirv import assemble

SHADERS = Path(__file__).resolve().parents[3] / "tests" / "shaders" / "spirv"
TWINS = sorted(p.name for p in SHADERS.glob("*.comp") if p.with_suffix(".spvasm").is_file())
GLSLANG = Path(os.environ.get("EMU_GLSLANG", "/nonexistent"))


def test_the_twins_are_found():
    assert {"int_dot.comp", "nv2_decode.comp", "nv2_tensor.comp", "ext_maint1.comp"} <= set(TWINS)


@pytest.mark.skipif(not all((GLSLANG.parent / t).is_file() for t in ("spirv-as", "spirv-dis")) or not GLSLANG.is_file(),
                    reason="no EMU_GLSLANG with its spirv-as and spirv-dis beside it")
@pytest.mark.parametrize("name", TWINS)
def test_a_twin_is_its_comp_compiled(name, tmp_path):
    def tool(exe, *args):
        r = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
    tool(GLSLANG, "-V", "--target-env", "vulkan1.3", "-o", tmp_path / "a.spv", SHADERS / name)
    tool(GLSLANG.parent / "spirv-dis", "-o", tmp_path / "a.spvasm", tmp_path / "a.spv")
    tool(GLSLANG.parent / "spirv-as", "--target-env", "spv1.6", "-o", tmp_path / "b.spv", tmp_path / "a.spvasm")
    twin = SHADERS / name.replace(".comp", ".spvasm")
    assert assemble(twin.read_text(), twin.name) == (tmp_path / "b.spv").read_bytes(), \
        f"{twin.name} is not {name} compiled: remake it (its header says how)"
