"""SPIR-V's 16-bit integers on a real device: our GLSL kernel (tests/frontend/spirv/int16_cases.py,
tests/shaders/spirv/int16.comp; Int16, 16-bit storage in storage buffers, a uniform block and push
constants, a 16-bit specialization constant) through the Vulkan API on lavapipe against the
emulator's lavapipe profile, bit for bit. Where they differ the result is listed with lavapipe's
own rule, checked value by value; any other difference fails. Skipped where no Vulkan device exists.

Measured on lavapipe (Mesa 25.0.7): 2,688 16-bit and 768 32-bit results; all identical but three
of lavapipe's own 16-bit miscompilations (the emulator's values are Python's, tests/frontend/spirv/
test_spirv_int16.py): OpSMod of int16_t computed as OpSRem (the dividend's sign, 32 values), and
findLSB / findMSB of uint16_t (37 and 55 values wrong). Its LLVM backend also crashes on findMSB of
an int16_t and on bitCount + findLSB + findMSB of 16-bit values in one expression, so the kernel has
them apart."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from emu.hw import vulkan

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "frontend" / "spirv"))
import int16_cases as C  # noqa: E402

INFO, WHY = vulkan.available()
pytestmark = pytest.mark.skipif(INFO is None, reason=f"no Vulkan device: {WHY}")
MESA = "Mesa 25.0.7" in (INFO or {}).get("description", "")


def _srem(a, d):
    return np.fmod(a.astype(np.int64), d.astype(np.int64))


def _wrong(hw, em):
    return hw != em                         # lavapipe's value is none the reference gives


# O's results where lavapipe computes otherwise: when it may (a, d, its value, emu's) -> bool, and
# how many of the 64 values differ on Mesa 25.0.7
LAVAPIPE = {
    "a % d": (lambda a, d, hw, em: hw == _srem(a, d), 32),
    "int16_t(findLSB(ub))": (lambda a, d, hw, em: _wrong(hw, em), 37),
    "int16_t(findMSB(ub))": (lambda a, d, hw, em: _wrong(hw, em), 55),
}


def test_16_bit_integers_match_lavapipe_bit_for_bit():
    hw, em = C.results(C.run_vulkan()), C.results(C.run_emu("lavapipe"))
    a, b = C.inputs()
    bx = b[:, 0].view(np.int16)
    d = np.where((bx == 0) | (bx == -1), 7, bx)
    assert hw[0].size == 42 * C.N and hw[1].size == 12 * C.N
    assert np.array_equal(hw[1], em[1])                    # every 32-bit result
    counts, unexplained = {}, []
    for k, op in C.ops("o"):
        diff = hw[0][k] != em[0][k]
        if not diff.any():
            continue
        counts[op] = int(diff.sum())
        allowed = LAVAPIPE[op][0](a, d, hw[0][k], em[0][k]) if op in LAVAPIPE else np.zeros(C.N, bool)
        unexplained += [f"{op} at i={j} (a={a[j]}, B={b[j].tolist()}): lavapipe {hw[0][k, j]}, emu {em[0][k, j]}"
                        for j in np.flatnonzero(diff & ~allowed)]
    assert unexplained == [], "\n".join(unexplained)
    if MESA:
        assert counts == {op: n for op, (_, n) in LAVAPIPE.items()}
        assert hw[0].size - sum(counts.values()) == 2564
