"""naga's 64-bit floats (wgpu's SHADER_F64 feature, 'shader-f64'): the f64 type and its vectors,
matrices and structs, the 'lf' literal suffix, IEEE binary64 arithmetic (exact bits against numpy
float64), conversions, bitcasts, the builtins a device has for doubles, 8-byte layout, float64
.npy in and out, the profile field shader_float64, and one clear refusal for each thing no device
runs: f64 in a Dawn shader, 'enable f64;', f64 transcendentals at run time. Our own shaders; the
first reproduces each construct of naga's f64 input (its snapshot test)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parent))
from f64_cases import ARITH, N, OPS, inputs, reference  # noqa: E402

# naga's f64.wgsl constructs: a private var with an 'lf' initializer, a const, a function taking
# and returning f64, exponent literals with the suffix, f64(abstract int), a negated literal in a
# var, a phony assignment of the private var
NAGA_LIKE = """var<private> seed: f64 = 3lf;
const two: f64 = 2.0lf;
@group(0) @binding(0) var<storage, read_write> out: array<f64, 4>;

fn g(p: f64) -> f64 {
  _ = seed;
  let q: f64 = 2e1lf + 5.0e1lf;
  var r = q + f64(7);
  var s = -0.25lf;
  return p + q + two + 1.0lf + r * s;
}

@compute @workgroup_size(1)
fn main() {
  out[0] = g(4.0lf);
  out[1] = seed * 0x1.8p-1lf + 0lf;
  out[2] = f64(0.1f) / 3.0lf;
  out[3] = 0.1lf;
}
"""


def _run(src, bindings, profile="reference", dispatch=(1, 1, 1)):
    dev = emu.Device(profile)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "f64.wgsl"))
    bufs = {k: dev.create_buffer(v) if isinstance(v, np.ndarray) else dev.create_buffer(size=v)
            for k, v in bindings.items()}
    dev.dispatch(pipe, bufs, dispatch)
    return bufs


@pytest.mark.parametrize("profile", ["reference", "nvidia-h200"])     # (its const_eval is Tint's: f32/f16 only)
def test_the_constructs_of_nagas_f64_input(profile):
    out = _run(NAGA_LIKE, {(0, 0): 32}, profile)[(0, 0)].read(np.float64)
    want = [4.0 + 70.0 + 2.0 + 1.0 + 77.0 * -0.25, 3.0 * 0.75, float(np.float32(0.1)) / 3.0, 0.1]
    assert out.view(np.uint64).tolist() == np.array(want).view(np.uint64).tolist()


@pytest.mark.parametrize("profile", ["reference", "nvidia-h200"])
def test_arithmetic_conversions_and_builtins_match_numpy_float64_bit_for_bit(profile):
    # nvidia-h200's f32 rules (flushing, MUFU.RCP division) are not f64's: its doubles are IEEE
    x, y = inputs()
    o = _run(ARITH, {(0, 0): x, (0, 1): y, (0, 2): len(OPS) * N * 8}, profile)[(0, 2)]
    got = o.read(np.float64).reshape(len(OPS), N)
    ref = reference(x, y)
    for k, e in enumerate(OPS):
        assert got[k].view(np.uint64).tolist() == ref[k].view(np.uint64).tolist(), e


def test_vectors_matrices_and_the_composite_builtins():
    src = """@group(0) @binding(0) var<storage, read_write> o: array<f64, 16>;
@compute @workgroup_size(1)
fn main() {
  let u = vec3<f64>(0.1lf, -2.5lf, 3.0lf);
  let v = vec3(1.0lf, 0.2lf, -0.7lf);
  o[0] = dot(u, v);
  o[1] = length(u);
  o[2] = distance(u, v);
  let c = cross(u, v);
  o[3] = c.x; o[4] = c.y; o[5] = c.z;
  o[6] = normalize(u).y;
  let m = mat2x2<f64>(1.5lf, 0.1lf, -2.0lf, 3.0lf) * mat2x2<f64>(0.3lf, 1.0lf, 2.0lf, -0.5lf);
  o[7] = m[0].x; o[8] = m[1].y;
  o[9] = (m * vec2(1.0lf, 0.1lf)).x;
  o[10] = determinant(mat2x2<f64>(1.5lf, 0.1lf, -2.0lf, 3.0lf));
  o[11] = transpose(m)[0].y;
  o[12] = mix(0.1lf, 0.7lf, 0.3lf);
  o[13] = smoothstep(0.0lf, 2.0lf, 0.3lf);
  o[14] = inverseSqrt(2.0lf);
  o[15] = reflect(u, normalize(v)).z;
}
"""
    got = _run(src, {(0, 0): 128})[(0, 0)].read(np.float64)
    u, v = np.array([0.1, -2.5, 3.0]), np.array([1.0, 0.2, -0.7])
    a, b = np.array([[1.5, 0.1], [-2.0, 3.0]]), np.array([[0.3, 1.0], [2.0, -0.5]])   # columns
    m = (a.T @ b.T).T          # column j of a*b: a's columns weighted by b's column j
    m00 = 1.5 * 0.3 + -2.0 * 1.0
    m11 = 0.1 * 2.0 + 3.0 * -0.5
    n = v / np.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    d = n[0] * u[0] + n[1] * u[1] + n[2] * u[2]
    want = [(0.1 * 1.0 + -2.5 * 0.2) + 3.0 * -0.7, np.sqrt((0.01 + 6.25) + 9.0),
            np.sqrt((0.1 - 1.0) ** 2 + (-2.5 - 0.2) ** 2 + (3.0 + 0.7) ** 2),
            -2.5 * -0.7 - 3.0 * 0.2, 3.0 * 1.0 - 0.1 * -0.7, 0.1 * 0.2 - -2.5 * 1.0,
            -2.5 / np.sqrt((0.01 + 6.25) + 9.0), m00, m11, m00 * 1.0 + m[1][0] * 0.1,
            1.5 * 3.0 - 0.1 * -2.0, m[1][0], 0.1 * (1 - 0.3) + 0.7 * 0.3, 0.15 * 0.15 * (3 - 2 * 0.15),
            1.0 / np.sqrt(2.0), u[2] - 2.0 * d * n[2]]
    assert got.view(np.uint64).tolist() == np.array(want).view(np.uint64).tolist()


def test_layout_is_eight_byte_aligned():
    # WGSL's layout rules at 8 bytes: f64 align 8, vec2 16, vec3/vec4 32, mat2x2 16 (columns)
    src = """struct S { a: f32, b: f64, c: vec3<f64>, d: mat2x2<f64>, e: array<f64, 2>, f: f32 }
@group(0) @binding(0) var<storage, read_write> s: S;
@group(0) @binding(1) var<uniform> u: vec4<f64>;
@compute @workgroup_size(1)
fn main() {
  s.a = 1.0f; s.b = u.w; s.c = u.xyz; s.d = mat2x2<f64>(u.xy, u.zw); s.e = array(u.y, u.x); s.f = 2.0f;
}
"""
    uv = np.array([1.25, -3.5, 1e300, 0.1])
    raw = _run(src, {(0, 0): 128, (0, 1): uv})[(0, 0)].read(np.uint8)
    f8 = lambda off, n=1: raw[off:off + 8 * n].view(np.float64).tolist()   # noqa: E731
    assert raw[0:4].view(np.float32).tolist() == [1.0] and raw[112:116].view(np.float32).tolist() == [2.0]
    assert f8(8) == [0.1] and f8(32, 3) == [1.25, -3.5, 1e300] and f8(64, 4) == uv.tolist()
    assert f8(96, 2) == [-3.5, 1.25]
    m = emu.Device().create_shader_module(src, "s.wgsl").ir
    st = m.global_("s").type if hasattr(m, "global_") else next(g.type for g in m.globals if g.name == "s")
    assert st.offsets == (0, 8, 32, 64, 96, 112) and st.size == 128 and st.align == 32


def test_literals():
    src = """@group(0) @binding(0) var<storage, read_write> o: array<f64, 6>;
@compute @workgroup_size(1)
fn main() { o[0] = 1lf; o[1] = 0lf; o[2] = 1e300lf; o[3] = 0x1.8p1lf; o[4] = .5lf; o[5] = 123456789012345678901234567890.0lf; }
"""
    got = _run(src, {(0, 0): 48})[(0, 0)].read(np.float64)
    assert got.tolist() == [1.0, 0.0, 1e300, 3.0, 0.5, 123456789012345678901234567890.0]


@pytest.mark.parametrize("src", [
    "@compute @workgroup_size(1) fn main() { var y = 2.5lf; }",
    "@compute @workgroup_size(1) fn main() { var y = 3lf; }",
    "@compute @workgroup_size(1) fn main() { var x: f64; }",
])
def test_what_was_refused_before_now_lowers_to_f64(src):
    # (until this change: "the f64 literal '2.5lf' (naga's 64-bit floats, ...) is not supported by emu")
    m = emu.compile_wgsl(src, "f.wgsl")[0]
    assert "f64" in {str(getattr(i.type, "pointee", i.type)) for f in m.functions for i in f.walk() if i.result}


@pytest.mark.parametrize("expr,message", [
    ("1e309lf", "float literal '1e309lf' is out of range"),
    ("1.0l", "invalid numeric literal '1.0l'"),
])
def test_bad_literals(expr, message):
    src = f"@compute @workgroup_size(1) fn main() {{ let x = {expr}; }}\n"
    with pytest.raises(emu.EmuError) as e:
        emu.Device().create_shader_module(src, "bad.wgsl")
    assert message in e.value.message and (e.value.loc.line, e.value.loc.col) == (1, 49)


def test_frexp_of_f64_has_an_i64_exponent_as_in_naga():
    src = """@group(0) @binding(0) var<storage, read_write> o: array<i64, 2>;
@compute @workgroup_size(1)
fn main() { let x = 1e300lf; let r = frexp(x); o[0] = r.exp; o[1] = frexp(-3e-310lf).exp; }
"""
    assert _run(src, {(0, 0): 16})[(0, 0)].read(np.int64).tolist() == [997, int(np.frexp(-3e-310)[1])]


def test_transcendentals_fold_from_constants_and_are_refused_at_run_time():
    src = """@group(0) @binding(0) var<storage, read_write> o: array<f64, 2>;
@compute @workgroup_size(1)
fn main() { const c = sin(1.0lf); o[0] = c; var x = 0.5lf; o[1] = exp(x); }
"""
    with pytest.raises(emu.EmuError) as e:
        emu.Device().create_shader_module(src, "t.wgsl")
    assert (e.value.loc.line, e.value.loc.col) == (3, 67)
    assert e.value.message == ("exp of f64 runs on no device: naga writes it as GLSL.std.450 Exp, which takes "
                               "only 16- and 32-bit floats (so the driver rejects the SPIR-V), and HLSL and "
                               "Metal have no f64 exp either")
    got = _run(src.replace("o[1] = exp(x);", "o[1] = f64(exp(f32(x)));"), {(0, 0): 16})[(0, 0)].read(np.float64)
    assert got.tolist() == [float(np.sin(1.0)), float(np.float32(np.exp(np.float64(np.float32(0.5)))))]


def test_refusals_name_the_place_and_the_fix(tmp_path, capsys):
    dawn = "enable chromium_experimental_subgroup_matrix;\n@compute @workgroup_size(1) fn main() { var y = 2.0lf; }\n"
    with pytest.raises(emu.EmuError) as e:
        emu.Device().create_shader_module(dawn, "d.wgsl")
    assert (e.value.loc.line, e.value.loc.col) == (2, 49)
    assert e.value.message == ("the literal 2.0lf: f64 is naga's (wgpu's SHADER_F64 feature) and Tint (Dawn, "
                               "Chrome) has none, but this module enables 'chromium_experimental_subgroup_matrix' "
                               "(line 1), which only Tint knows: no WebGPU implementation runs it")
    with pytest.raises(emu.EmuError) as e:
        emu.Device().create_shader_module("enable subgroups;\nfn f(x: f64) {}\n", "d.wgsl")
    assert (e.value.loc.line, e.value.loc.col) == (2, 9) and "enables 'subgroups'" in e.value.message
    with pytest.raises(emu.EmuError) as e:
        emu.Device().create_shader_module("enable f64;\n@compute @workgroup_size(1) fn main() {}\n", "e.wgsl")
    assert (e.value.loc.line, e.value.loc.col) == (1, 1)
    assert e.value.message.startswith("there is no 'f64' extension to enable: naga's f64 needs no directive")
    path = tmp_path / "naga.wgsl"
    path.write_text(NAGA_LIKE)
    for prof in ("apple-m1", "intel-xe-hpg"):
        assert main(["run", str(path), "--profile", prof, "--dispatch", "1"]) == 1
        err = capsys.readouterr().err
        assert f"{path}:6:7: error: profile '{prof}' has no 64-bit floats (Vulkan's shaderFloat64, wgpu's " \
               f"feature 'shader-f64'), which this f64 value needs" in err
        assert "hint: run it on a profile whose device has them" in err and "Traceback" not in err


def test_the_profiles_say_which_devices_have_doubles():
    from emu.profiles import load_profile as get_profile
    has = {n: get_profile(n).shader_float64 for n in ("reference", "nvidia-h200", "nvidia-ampere", "amd-rdna3",
                                                    "amd-rdna4", "amd-cdna3", "lavapipe", "intel-xe2",
                                                    "apple-m1", "intel-xe-hpg")}
    assert has == {**{n: True for n in has}, "apple-m1": False, "intel-xe-hpg": False}
    assert get_profile("nvidia-h200").evidence["shader_float64"].level == "measured"


def test_cli_reads_and_writes_float64_npy(tmp_path):
    src = tmp_path / "k.wgsl"
    src.write_text("""@group(0) @binding(0) var<storage, read> a: array<f64>;
@group(0) @binding(1) var<storage, read_write> o: array<array<f64, 3>, 2>;
@compute @workgroup_size(6)
fn main(@builtin(local_invocation_index) i: u32) { o[i / 3u][i % 3u] = a[i] * 0.1lf; }
""")
    a = np.arange(6, dtype=np.float64) + 0.5
    np.save(tmp_path / "a.npy", a)
    assert main(["run", str(src), "--dispatch", "1", "--buffer", f"0:0={tmp_path / 'a.npy'}",
                 "--output", f"0:1={tmp_path / 'o.npy'}"]) == 0
    o = np.load(tmp_path / "o.npy")
    assert o.dtype == np.float64 and o.shape == (2, 3)
    assert o.reshape(-1).view(np.uint64).tolist() == (a * 0.1).view(np.uint64).tolist()


def test_the_fusion_jit_leaves_f64_to_the_interpreter():
    from emu.jit.fuse import compile_pipeline
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(ARITH, "f64.wgsl"))
    assert compile_pipeline(pipe.pipeline) is None


def test_strict_says_tint_has_no_f64():
    warned = emu.Device().create_shader_module(NAGA_LIKE, "f64.wgsl", strict=True).warnings
    assert [(w.message, w.loc.line) for w in warned] == [
        ("the type f64: 64-bit floats are naga's (wgpu's SHADER_F64 feature); Tint (Dawn, Chrome) has none", 1)]


def test_wgpu_adapter_offers_shader_f64_where_the_device_has_it():
    import emu.wgpu as ew
    ref = ew.GPU(profile="reference", flavor="wgpu").request_adapter_sync()
    assert "shader-f64" in ref.features
    assert "shader-f64" not in ew.GPU(profile="apple-m1", flavor="wgpu").request_adapter_sync().features
    assert "shader-f64" not in ew.GPU(profile="nvidia-h200", flavor="dawn").request_adapter_sync().features
    ref.request_device_sync(required_features=["shader-f64"]).create_shader_module(code=NAGA_LIKE)
    dawn = ew.GPU(profile="nvidia-h200", flavor="dawn").request_adapter_sync().request_device_sync()
    for dev in (ref.request_device_sync(), dawn):
        with pytest.raises(Exception) as e:
            dev.create_shader_module(code=NAGA_LIKE)
        assert "shader.wgsl:1:1: error: the shader uses f64 (naga's 64-bit floats), which needs the device " \
               "feature 'shader-f64'" in str(e.value)


def test_emit_writes_f64_for_wgpu_and_refuses_it_for_dawn():
    from emu.hw.emit import EmitError, emit
    m = emu.Device().create_shader_module(NAGA_LIKE, "f64.wgsl").ir
    text = emit(m, "wgpu")
    assert "var<private> seed: f64 = 3.0lf;" in text and "0.1lf" in text
    again = _run(text, {(0, 0): 32})[(0, 0)].read(np.float64)
    assert again.tolist() == _run(NAGA_LIKE, {(0, 0): 32})[(0, 0)].read(np.float64).tolist()
    with pytest.raises(EmitError) as e:
        emit(m, "dawn")
    assert e.value.message == "f64 is naga's (wgpu's SHADER_F64 feature): Tint (Dawn) has no 64-bit floats"


def test_abstract_frexp_modf_determinant_transpose_fold_in_binary64():
    # WGSL's AbstractFloat is binary64: these fold there (were: through f32, so frexp(1e300) was
    # "1e+300 is out of range of f32"); an f64 output holds the folded value exactly
    src = """@group(0) @binding(0) var<storage, read_write> o: array<f64, 8>;
@compute @workgroup_size(1)
fn main() {
  const f = frexp(1e300);
  o[0] = f.fract; o[1] = f64(f.exp);
  o[2] = modf(-1e300).whole; o[3] = modf(2.0000000000000004).fract;
  o[4] = determinant(mat2x2(1e200, 1.0, 3.0, 1e100));
  o[5] = transpose(mat2x2(1e300, 1.0, 0.1, 4.0))[0][1];
  let r = frexp(0.1);          // concretized: __frexp_result_f32
  o[6] = f64(r.fract);
  o[7] = f64(modf(vec2(2.5, -0.3)).whole.y);
}
"""
    got = _run(src, {(0, 0): 64})[(0, 0)].read(np.float64)
    m, e = np.frexp(1e300)
    want = [m, float(e), -1e300, 2.0000000000000004 - 2.0, 1e200 * 1e100 - 3.0, 0.1,
            float(np.frexp(np.float32(0.1))[0]), -0.0]
    assert got.view(np.uint64).tolist() == np.array(want).view(np.uint64).tolist()
    with pytest.raises(emu.EmuError) as e:
        emu.Device().create_shader_module("const d = determinant(mat2x2(1e200, 1.0, 3.0, 1e200));\n", "d.wgsl")
    assert "infinity or NaN" in e.value.message and (e.value.loc.line, e.value.loc.col) == (1, 11)


def test_the_hardware_runner_asks_for_naga_s_64_bit_features():
    # naga's f64 and i64 have no enable directive: `emu diff` asks the adapter for the features
    from emu.hw.adapters import features_for_source
    assert features_for_source(NAGA_LIKE) == {"shader-f64"}
    assert features_for_source(ARITH) == {"shader-f64", "shader-int64"}
    assert features_for_source("// f64 in a comment only\nfn f() -> f32 { return 1.0f; }\n") == set()


def test_64_bit_conversions_round_once_and_do_not_wrap():
    from emu.numerics import scalar as ns
    # u64 above 2^63 (was: through int64, so negative); i64 -> f32 rounds the integer once (through
    # f64 first, 2^62 + 2^38 + 1 would land on a tie and round to even, 2^62)
    assert ns.convert(np.array([2 ** 64 - 1, 2 ** 63 + 4096], np.uint64), "u64", "f64").tolist() == \
        [float(2 ** 64), float(2 ** 63 + 4096)]
    assert ns.convert(np.array([2 ** 62 + 2 ** 38 + 1], np.int64), "i64", "f32").tolist() == [float(2 ** 62 + 2 ** 39)]
    assert ns.convert(np.array([2 ** 64 - 1], np.uint64), "u64", "f16").tolist() == [float("inf")]
    # float -> u64 above 2^63 (was: through int64, wrapped); WGSL's clamp to the largest f64 below 2^64
    assert ns.convert(np.array([1.7e19, -5.0, 1e300]), "f64", "u64").tolist() == [17 * 10 ** 18, 0, 2 ** 64 - 2048]
    assert ns.convert(np.array([1.7e19], np.float32), "f32", "u64").tolist() == [int(np.float32(1.7e19))]


def test_ir_text_round_trip_keeps_every_f64_bit():
    from emu.isa.printer import print_module
    from emu.isa.textparser import parse_ir
    m = emu.compile_wgsl(NAGA_LIKE, "f64.wgsl")[0]
    assert print_module(parse_ir(print_module(m), "f64.wgsl")) == print_module(m)
    assert "0x1.999999999999ap-4" in print_module(m)           # 0.1lf, all 52 fraction bits


def test_f64_fma_rounds_once_on_hard_cases():
    # the vectorised emulation (and its Fraction fallback for tiny or huge products) against the
    # exact value rounded once: cancellations, near-ties, subnormal and overflowing results
    from fractions import Fraction
    from emu.numerics import builtins as nb
    rng = np.random.default_rng(5)
    n = 5000
    x = rng.standard_normal(n) * 2.0 ** rng.integers(-560, 560, n)
    y = rng.standard_normal(n) * 2.0 ** rng.integers(-500, 500, n)
    with np.errstate(over="ignore"):
        y = np.where(np.isfinite(x * y), y, 1.0)               # finite operands (products near 2^1024)
    p, kind = x * y, rng.integers(0, 5, n)
    z = np.select([kind == 0, kind == 1, kind == 2, kind == 3],
                  [-p, np.nextafter(-p, np.inf), rng.standard_normal(n) * 2.0 ** rng.integers(-1070, 1000, n),
                   p * 2.0 ** -54], -p * (1 + 2.0 ** -52))
    got = nb.call("fma", "f64", x, y, z)

    def once(a, b, c):
        q = Fraction(a) * Fraction(b) + Fraction(c)
        if q == 0:
            return a * b + c
        try:
            return float(q)
        except OverflowError:
            return float("inf") if q > 0 else float("-inf")
    with np.errstate(all="ignore"):
        want = np.array([once(a, b, c) for a, b, c in zip(x, y, z)])
    assert got.view(np.uint64).tolist() == want.view(np.uint64).tolist()
