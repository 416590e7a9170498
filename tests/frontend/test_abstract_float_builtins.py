"""Builtins of abstract-float constants fold in binary64, as WGSL's AbstractFloat is (they folded
in f32 before, and refused arguments beyond f32's range such as sin(1e300)); the result rounds
once to f32 where it is used. A result that is infinite or NaN is a shader-creation error."""
from fractions import Fraction

import numpy as np
import pytest

import emu
from emu.errors import EmuError

F64 = [   # (expression, its value in float64 before the one rounding to f32)
    ("sin(1e300)", np.sin(1e300)),
    ("cos(-1e300)", np.cos(-1e300)),
    ("(sqrt(2.0) - 1.4142135623730951) * 1e20", 0.0),       # in f32 it would be about -2.4e12
    ("(sin(0.5) - 0.479425538604203) * 1e20", (np.sin(0.5) - 0.479425538604203) * 1e20),
    ("exp(200.0) / exp(199.0)", np.exp(200.0) / np.exp(199.0)),
    ("pow(10.0, 300.0) / pow(10.0, 299.0)", np.power(10.0, 300.0) / np.power(10.0, 299.0)),
    ("ldexp(1.0, 1000) * ldexp(3.0, -1000)", 3.0),
    ("length(vec2(3e200, 4e200)) / 1e200", 5.0),              # the squares are beyond f64: scaled
    ("normalize(vec2(3e200, 4e200)).y", 0.8),
    ("distance(vec3(1e300, 0.0, 0.0), vec3(0.0, 1e300, 0.0)) / 1e300", np.sqrt(2.0)),
    ("fma(0.1, 10.0, -1.0) * 1e20", float(Fraction(0.1) * 10 - 1) * 1e20),   # one rounding, not 0
    ("clamp(1e300, 0.0, 2.0)", 2.0),
    ("abs(-1e300) / 1e300", 1.0),
    ("sign(-1e300)", -1.0),
    ("fract(1e300)", 0.0),
    ("degrees(1e300) / 1e300", 1e300 * (180.0 / np.pi) / 1e300),
]


def test_values_bit_for_bit():
    dev = emu.Device("reference")
    body = "".join(f"  o[{i}] = {e};\n" for i, (e, _) in enumerate(F64))
    src = (f"@group(0) @binding(0) var<storage, read_write> o: array<f32, {len(F64)}>;\n"
           f"@compute @workgroup_size(1) fn main() {{\n{body}}}\n")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "k.wgsl"))
    o = dev.create_buffer(size=4 * len(F64))
    dev.dispatch(pipe, {(0, 0): o}, (1, 1, 1))
    want = np.array([v for _, v in F64], np.float64).astype(np.float32)
    assert o.read(np.float32).view(np.uint32).tolist() == want.view(np.uint32).tolist()


@pytest.mark.parametrize("expr", ["exp(1000.0)", "sqrt(-1.0)", "dot(vec2(1e200, 1.0), vec2(1e200, 1.0))",
                                  "normalize(vec2(0.0, 0.0))", "exp(100.0f)"])
def test_infinite_or_nan_results_are_refused(expr):
    with pytest.raises(EmuError, match="infinity or NaN") as e:
        emu.Device("reference").create_shader_module(
            f"@compute @workgroup_size(1) fn main() {{ var r = {expr}; }}\n", "k.wgsl")
    assert (e.value.loc.line, e.value.loc.col) == (1, 49)
