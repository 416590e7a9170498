"""Builtins of abstract-integer constants are folded exactly, as WGSL's 64-bit abstract integers
(not through i32): abs, sign, min, max, clamp, dot and select give results beyond 32 bits; a
result beyond 64 bits, and clamp's low above its high, are shader-creation errors; the bit
functions take i32/u32 only, so their abstract arguments become i32 (and must fit)."""
import numpy as np
import pytest

import emu
from emu.errors import EmuError

EXACT = [   # (expression, its value as i32)
    ("clamp(4294967296, 1, 1)", 1),
    ("max(4294967296, 1) - 4294967290", 6),
    ("abs(-4294967296) / 4294967296", 1),
    ("abs(-9223372036854775807 - 1) / -4611686018427387904", 2),   # abs of the most negative is itself
    ("dot(vec2(3000000000, 1), vec2(3, 2)) - 8999999990", 12),
    ("sign(-9999999999)", -1),
    ("select(5, 4294967296, true) - 4294967290", 6),
    ("select(vec2(4294967296, 1), vec2(2, 8589934592), vec2(false, true)).x - 4294967290", 6),
    ("min(vec2(-5000000000, 7), vec2(1, 8)).x / 1000000000", -5),
    ("clamp(vec2(5000000000, -5000000000), vec2(0), vec2(4294967296)).x - 4294967290", 6),
    ("countOneBits(7)", 3),
    ("extractBits(0xF0, 4u, 4u)", -1),            # as i32: the field's sign bit extends
]


def test_exact_values():
    dev = emu.Device("reference")
    body = "".join(f"  o[{i}] = {e};\n" for i, (e, _) in enumerate(EXACT))
    src = (f"@group(0) @binding(0) var<storage, read_write> o: array<i32, {len(EXACT)}>;\n"
           f"@compute @workgroup_size(1) fn main() {{\n{body}}}\n")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "k.wgsl"))
    o = dev.create_buffer(size=4 * len(EXACT))
    dev.dispatch(pipe, {(0, 0): o}, (1, 1, 1))
    assert o.read(np.int32).tolist() == [v for _, v in EXACT]


@pytest.mark.parametrize("expr,message", [
    ("dot(vec2(9223372036854775807, 1), vec2(2, 1))",
     "dot(...) of abstract integers gives 18446744073709551614, which does not fit in 64 bits"),
    ("clamp(1, 5, 3)", "clamp's low (5) is greater than its high (3)"),
    ("countOneBits(4294967296)", "4294967296 does not fit in i32"),
])
def test_refused(expr, message):
    with pytest.raises(EmuError) as e:
        emu.Device("reference").create_shader_module(
            f"@compute @workgroup_size(1) fn main() {{ var r = {expr}; }}\n", "k.wgsl")
    assert message in e.value.message
    assert (e.value.loc.line, e.value.loc.col) == (1, 49)


def test_bit_functions_of_abstract_integers_are_i32():
    with pytest.raises(EmuError, match="u32"):
        emu.Device("reference").create_shader_module(
            "@compute @workgroup_size(1) fn main() { var r: u32 = countOneBits(7); }\n", "k.wgsl")
