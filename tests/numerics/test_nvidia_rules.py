"""Pieces of emu.numerics.nvidia checked against exact arithmetic (the recorded-vector replay in
tests/profiles/test_h200_builtins.py checks the whole builtins)."""
from fractions import Fraction

import numpy as np

from emu.numerics import nvidia


def _rz(q: Fraction) -> np.float32:
    """The f32 nearest q toward zero (normal range), by exact rational comparison."""
    r = np.float32(float(q))
    while abs(Fraction(float(r))) > abs(q):
        r = np.nextafter(r, np.float32(0))
    return r


def test_rz_add_is_exact_for_far_apart_operands():
    rng = np.random.default_rng(5)
    a = (rng.standard_normal(400) * 2.0 ** rng.integers(-20, 20, 400)).astype(np.float32)
    b = (rng.standard_normal(400) * 2.0 ** rng.integers(-60, 20, 400)).astype(np.float32)
    b[:50] = -a[:50] * np.float32(1 + 2 ** -23)          # near cancellation
    b[50:100] = np.float32(2.0 ** -40) * np.sign(-a[50:100])  # far below a's last bit
    got = nvidia._rz_add(a, b)
    want = [_rz(Fraction(float(x)) + Fraction(float(y))) for x, y in zip(a, b)]
    assert got.view(np.uint32).tolist() == np.array(want, np.float32).view(np.uint32).tolist()


def test_remainder_signs():
    # zero remainders (and f32 NaN ones) take the dividend's sign when it is a nonzero number
    nan = np.uint32(0xFFC00000).view(np.float32)
    r = nvidia.binary("rem", "f32", np.float32([-1.5, 1.5, -4e11, nan]), np.float32([0.0, 0.0, -1.0, 1.0]))
    assert r.view(np.uint32).tolist() == [0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x7FFFFFFF]
    h = nvidia.binary("rem", "f16", np.float16([-3.0, 3.0, -0.0]), np.float16([1.5, 1.5, 3.0]))
    assert h.view(np.uint16).tolist() == [0x8000, 0x0000, 0x0000]


def test_quantize_to_f16_overflows_beyond_f16_max():
    # measured: 65515.457 -> inf (f16 rounding would give 65504); to_f16 of it keeps rounding
    x = np.float32([65504.0, 65515.457, -65528.51, 65533.797, 1e-8, -7e-6])
    got = nvidia.call("quantizeToF16", "f32", x)
    assert got.view(np.uint32).tolist() == [0x477FE000, 0x7F800000, 0xFF800000, 0x7F800000, 0, 0x80000000]


def test_face_forward_uses_the_drivers_dot():
    # dot(n, i) = -0.0641 - 0.0014 + 0.0655: its sign depends on the order of the f16 fma chain
    n = np.uint16([[0x2DB8, 0x4544, 0x3CE0]]).view(np.float16)
    i = np.uint16([[0xB9BE, 0x8C53, 0x2AE2]]).view(np.float16)
    e = np.uint16([[0xDA5F, 0x3AAC, 0x24EE]]).view(np.float16)
    assert nvidia.call("faceForward", "f16", e, n, i).view(np.uint16)[0, 0] == 0xDA5F     # as the H200
