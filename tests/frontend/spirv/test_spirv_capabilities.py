"""The SPIR-V capabilities of llama.cpp's Vulkan shaders that emu does not model yet end in one
message naming the feature (module.NOT_YET), at the OpCapability line."""
from __future__ import annotations

import pytest

from emu.errors import EmuError

from .asm import compute_module


@pytest.mark.parametrize("cap,words", [("Float8EXT", "8-bit floats (SPV_EXT_float8: E4M3 and E5M2) are not supported"),
                                       ("Float4EXT", "4-bit floats (SPV_EXT_float4: E2M1) are not supported"),
                                       ("DotProductFloat8AccFloat32VALVE", "dot products of 8-bit floats")])
def test_a_capability_not_modelled_yet_is_named(cap, words):
    """The capabilities of llama.cpp's shaders that emu lacks: one message saying what they are."""
    from emu.frontend.spirv import compile_source
    from emu.frontend.spirv.grammar import load
    value = load("core").enum_values["Capability"][cap]
    asm = compute_module(f"OpUnknown(17, 2) {value}\n")
    with pytest.raises(EmuError) as e:
        compile_source(asm, "caps.spvasm")
    assert words in e.value.message and f"(capability {cap})" in e.value.message
    assert e.value.loc is not None and e.value.loc.line == 2 and e.value.hint
