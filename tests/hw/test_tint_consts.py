"""Const-expressions against Dawn itself: Tint folds them on the host, so any Dawn adapter (lavapipe
here) shows what Dawn on the H200 gives; nvidia-h200 (`const_eval: "tint"`) must match every bit,
for f16 and f32, literals, operators, conversions and builtins."""
import numpy as np
import pytest

import emu
from emu.hw.runner import run_on_adapter


def _forms(rng, sfx, vec):
    lit = lambda v: f"{float(v)!r}{sfx}"     # noqa: E731
    out = []
    for _ in range(12):
        a, b = rng.uniform(-50, 50, 2)
        p, q = rng.uniform(0.01, 20, 2)
        out += [lit(a), f"{lit(a)} * {lit(b)}", f"{lit(a)} + {lit(b)}", f"{lit(a)} / {lit(p)}", f"{lit(a)} % {lit(p)}",
                f"sin({lit(a)})", f"cos({lit(b)})", f"exp({lit(a / 10)})", f"log({lit(p)})", f"sqrt({lit(p)})",
                f"inverseSqrt({lit(p)})", f"tanh({lit(a / 20)})", f"atan({lit(a)})", f"pow({lit(p / 10)}, {lit(q / 10)})",
                f"atan2({lit(a)}, {lit(b)})", f"exp2({lit(a / 10)})", f"log2({lit(p)})", f"fma({lit(a)}, {lit(b)}, {lit(p)})",
                f"mix({lit(a)}, {lit(b)}, {lit(q / 20)})", f"smoothstep({lit(0)}, {lit(1)}, {lit(p / 20)})",
                f"degrees({lit(a)})", f"radians({lit(a)})", f"length({vec}({lit(a)}, {lit(b)}))",
                f"distance({vec}({lit(a)}, {lit(b)}), {vec}({lit(p)}, {lit(q)}))",
                f"dot({vec}({lit(a)}, {lit(b)}), {vec}({lit(p)}, {lit(q)}))",
                f"normalize({vec}({lit(a)}, {lit(b)})).x", f"sinh({lit(a / 20)})", f"asin({lit(a / 60)})"]
    return out


@pytest.mark.parametrize("ty", ["f16", "f32"])
def test_const_expressions_fold_as_dawn(hw_backend, ty):
    if hw_backend != "dawn":
        pytest.skip("Tint's folding is Dawn's (naga folds its own way)")
    rng = np.random.default_rng(11)
    dt = np.float16 if ty == "f16" else np.float32
    forms = _forms(rng, "h" if ty == "f16" else "f", "vec2h" if ty == "f16" else "vec2f")
    lines = (["enable f16;"] if ty == "f16" else []) + [
        f"@group(0) @binding(0) var<storage, read_write> o: array<{ty}>;", "@compute @workgroup_size(1) fn main() {"]
    lines += [f"  {{ const c = {e}; o[{k}] = c; }}" for k, e in enumerate(forms)]
    src = "\n".join(lines + ["}"])
    try:
        out = run_on_adapter(src, backend="dawn", buffers={(0, 0): np.zeros(len(forms), dt)})
    except emu.errors.HwError as e:
        if ty == "f16" and "f16" in str(e):
            pytest.skip(f"this Dawn adapter has no f16: {str(e).splitlines()[0]}")
        raise
    dawn = np.frombuffer(out[(0, 0)], dt)
    got = {}
    for prof in ("nvidia-h200", "reference"):
        dev = emu.Device(prof)
        buf = dev.create_buffer(np.zeros(len(forms), dt))
        dev.dispatch(dev.create_compute_pipeline(dev.create_shader_module(src, "c.wgsl")), {(0, 0): buf}, (1, 1, 1))
        got[prof] = buf.read(dt)
    bits = np.uint16 if ty == "f16" else np.uint32
    bad = [forms[k] for k in np.flatnonzero(got["nvidia-h200"].view(bits) != dawn.view(bits))]
    assert not bad, bad[:5]
    assert (got["reference"].view(bits) != dawn.view(bits)).sum() > len(forms) // 20     # WGSL's rules differ


def _vector_forms(rng, sfx, ty):
    """(expression, width) of cross, reflect, refract, faceForward and determinant constants."""
    lit = lambda v: f"{float(v)!r}{sfx}"     # noqa: E731
    vec = lambda n: f"vec{n}<{ty}>({', '.join(lit(v) for v in rng.uniform(-8, 8, n))})"  # noqa: E731
    out = []
    for _ in range(24):
        n = int(rng.integers(2, 5))
        mat = f"mat{n}x{n}<{ty}>({', '.join(lit(v) for v in rng.uniform(-6, 6, n * n))})"
        out += [(f"cross({vec(3)}, {vec(3)})", 3), (f"reflect({vec(n)}, normalize({vec(n)}))", n),
                (f"refract(normalize({vec(n)}), normalize({vec(n)}), {lit(rng.uniform(0.3, 1.6))})", n),
                (f"faceForward({vec(n)}, {vec(n)}, {vec(n)})", n), (f"determinant({mat})", 1)]
    return out


@pytest.mark.parametrize("ty", ["f16", "f32"])
def test_vector_builtins_fold_as_dawn(hw_backend, ty):
    """cross, reflect, refract, faceForward and determinant of constants: Tint folds them step by
    step (each product, sum, dot product and sqrt rounded; f16: quantized), in its own order."""
    if hw_backend != "dawn":
        pytest.skip("Tint's folding is Dawn's (naga folds its own way)")
    rng = np.random.default_rng(12)
    dt = np.float16 if ty == "f16" else np.float32
    forms = _vector_forms(rng, "h" if ty == "f16" else "f", ty)
    pad = {1: ", 0, 0, 0", 2: ", 0, 0", 3: ", 0", 4: ""}
    lines = (["enable f16;"] if ty == "f16" else []) + [
        f"@group(0) @binding(0) var<storage, read_write> o: array<vec4<{ty}>>;", "@compute @workgroup_size(1) fn main() {"]
    lines += [f"  {{ const c = {e}; o[{k}] = vec4<{ty}>(c{pad[n]}); }}" for k, (e, n) in enumerate(forms)]
    src = "\n".join(lines + ["}"])
    try:
        out = run_on_adapter(src, backend="dawn", buffers={(0, 0): np.zeros(4 * len(forms), dt)})
    except emu.errors.HwError as e:
        if ty == "f16" and "f16" in str(e):
            pytest.skip(f"this Dawn adapter has no f16: {str(e).splitlines()[0]}")
        raise
    bits = np.uint16 if ty == "f16" else np.uint32
    dawn = np.frombuffer(out[(0, 0)], dt).view(bits).reshape(-1, 4)
    dev = emu.Device("nvidia-h200")
    buf = dev.create_buffer(np.zeros(4 * len(forms), dt))
    dev.dispatch(dev.create_compute_pipeline(dev.create_shader_module(src, "v.wgsl")), {(0, 0): buf}, (1, 1, 1))
    got = buf.read(dt).view(bits).reshape(-1, 4)
    bad = [forms[k][0] for k in np.flatnonzero((got != dawn).any(axis=1))]
    assert not bad, (len(bad), bad[:4])
