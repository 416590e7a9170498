"""OpUMulExtended / OpSMulExtended on the emulator: our kernels (mul_extended_cases.py) against Python's
integers value by value on three profiles: 32-bit scalars and vectors from GLSL, llama.cpp's fastdiv,
and the 8-, 16- and 64-bit forms from SPIR-V assembly; a result type that is no pair of the
operands' type is refused with the instruction's line. The same kernels run on lavapipe in tests/hw."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.errors import EmuError

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mul_extended_cases as C  # noqa: E402


@pytest.mark.parametrize("profile", ["lavapipe", "nvidia-h200", "apple-m1"])
@pytest.mark.parametrize("name", list(C.KERNELS))
def test_the_full_product_matches_python(profile, name):
    got, want = C.run_emu(profile, name), C.reference(name)
    wrong = [f"result {k} at i={i}: emu {got[k, i]:#x}, Python {want[k, i]:#x}"
             for k in range(want.shape[0]) for i in np.flatnonzero(got[k] != want[k])]
    assert wrong == [], "\n".join(wrong[:20])


def test_fastdiv_divides():
    a, _ = C.inputs("mul_extended.comp")
    small = a < 2 ** 31                                          # fastdiv's range
    assert np.array_equal(C.run_emu("lavapipe", "mul_extended.comp")[9][small], a[small] // C.DIVISOR)


def test_a_result_that_is_not_two_halves_is_refused():
    src = C.source("mul_extended_widths.spvasm").replace("%Ru16 = OpTypeStruct %u16 %u16", "%Ru16 = OpTypeStruct %u16 %u64")
    with pytest.raises(EmuError) as e:
        emu.Device().create_shader_module(src, "m.spvasm")
    line = next(n for n, s in enumerate(src.splitlines(), 1) if "%r2 = OpUMulExtended" in s)
    assert e.value.message == ("OpUMulExtended of u16 and u16 gives a struct of two integers of their width "
                               "(the low and high halves), not a struct of u16, u64")
    assert (e.value.loc.file, e.value.loc.line) == ("m.spvasm", line)
