"""GLSL images and samplers (compiled with glslang) through the SPIR-V front end to the IR's
texture op: each twin of a WGSL texture kernel gives exactly the WGSL kernel's bits on the
reference and lavapipe profiles (same inputs, same bindings); the GLSL-only kernels give the
values numpy computes; what Vulkan compute shaders may not do, or emu does not model, ends in one
message naming the fix."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from emu.cli import main as cli
from emu.errors import EmuError
from emu.frontend.spirv import _run, compile_glsl, compile_source, tool

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "hw"))
import vulkan_image_cases as V  # noqa: E402

TWINS = V.twin_cases()
OTHERS = dict(V.glsl_cases())


@pytest.mark.parametrize("profile", ["reference", "lavapipe"])
@pytest.mark.parametrize("name,case", TWINS, ids=[n for n, _ in TWINS])
def test_glsl_twin_gives_the_wgsl_kernels_bits(name, case, profile):
    glsl, wgsl = V.run_on_emu(case, profile), V.run_on_emu(case, profile, "case.wgsl")
    assert set(glsl) == set(wgsl) and glsl
    for k in wgsl:
        assert glsl[k] == wgsl[k], (name, k)


def test_fetch_reads_the_texels_numpy_indexes():
    case = OTHERS["fetch"]
    out = V.run_on_emu(case)
    arr, vol = case["textures"][(0, 0)], case["textures"][(0, 1)]
    levels = [np.frombuffer(b, np.float32).reshape(3, 8 >> k, 8 >> k, 4) for k, b in enumerate(arr.levels)]
    volume = np.frombuffer(vol.levels[0], np.uint32).reshape(2, 4, 4, 4)
    c = case["buffers"][(0, 2)]
    want = np.stack([levels[w][z, y, x] + levels[1][z, y & 1, (x & 1) + 1] for x, y, z, w in c])
    assert np.array_equal(np.frombuffer(out[(0, 3)], np.float32).reshape(-1, 4), want.astype(np.float32))
    want_u = np.stack([volume[z & 1, y & 3, x & 3] for x, y, z, _ in c])
    assert np.array_equal(np.frombuffer(out[(0, 4)], np.uint32).reshape(-1, 4), want_u)


def test_size_and_level_queries():
    out = np.frombuffer(V.run_on_emu(OTHERS["queries"])[(0, 4)], np.int32).reshape(4, 4)
    # textureSize of an 8x8 array of 3 layers (3 levels) at levels 0 and 1, of a 4x4x2 volume,
    # of a 4x4 cube; imageSize of a 5x3 storage image
    assert out.tolist() == [[8, 8, 3, 3], [4, 4, 3, 1], [4, 4, 2, 1], [4, 4, 5, 3]]


@pytest.mark.parametrize("fmt", ["rgba8unorm", "rgba16float", "r32float", "rgba32float"])
def test_a_store_to_an_image_of_unknown_format_takes_the_bound_textures(fmt):
    import texture_cases as W
    case = OTHERS[f"unknown_format_{fmt}"]
    wgsl = dict(case, wgsl=W.STORE.replace("VEC", "vec4f").replace("FORMAT", fmt))
    for profile in ("reference", "lavapipe"):
        assert V.run_on_emu(case, profile) == V.run_on_emu(wgsl, profile, "case.wgsl")


def test_combined_sampler_through_emu_run(tmp_path):
    (tmp_path / "blur.comp").write_text(V.COMBINED_BLUR)
    case = OTHERS["combined_blur_h"]
    img = np.frombuffer(case["textures"][(0, 0)].levels[0], np.uint8).reshape(16, 32, 4)
    np.save(tmp_path / "img.npy", img)
    rc = cli(["run", str(tmp_path / "blur.comp"), "--dispatch", "4,2", "--texture", f"0:0={tmp_path / 'img.npy'}:rgba8unorm",
              "--sampler", "0:0=linear,clamp", "--texture", "0:2=zeros:32x16", "--output", f"0:2={tmp_path / 'o.npy'}"])
    assert rc == 0
    want = np.frombuffer(V.run_on_emu(case)[(0, 2)], np.float16).reshape(16, 32, 4)
    assert np.array_equal(np.load(tmp_path / "o.npy").view(np.uint16), want.view(np.uint16))


def test_the_ir_of_a_sampler2d_is_a_texture_and_a_sampler_at_one_binding():
    m, _ = compile_source(V.COMBINED_BLUR, "blur.comp")
    got = {g.name: (str(g.type), g.group, g.binding) for g in m.globals if g.space == "handle"}
    assert got == {"src": ("texture_2d<f32>", 0, 0), "src_sampler": ("sampler", 0, 0),
                   "dst": ("texture_storage_2d<rgba16float, write>", 0, 2)}
    assert m.combined_samplers == ["src_sampler"]


def _error(src: str, file="k.comp") -> EmuError:
    with pytest.raises(EmuError) as e:
        m, _ = compile_source(src, file)
    return e.value


HEAD = "#version 450\nlayout(local_size_x = 1) in;\nlayout(set = 0, binding = 1) buffer O { vec4 o[]; };\n"


def test_implicit_lod_is_refused_with_the_fix(tmp_path):
    # glslang refuses texture() in compute; the SPIR-V it would be (OpImageSampleImplicitLod) is
    # written by editing the disassembly of textureLod's
    spv = compile_glsl(HEAD + "layout(set = 0, binding = 0) uniform sampler2D s;\n"
                       "void main() { o[0] = textureLod(s, vec2(0.5), 0.0); }\n", "k.comp")
    (tmp_path / "k.spv").write_bytes(spv)
    asm = _run([tool("spirv-dis"), str(tmp_path / "k.spv")], "spirv-dis").stdout
    asm = re.sub(r"OpImageSampleExplicitLod (%\S+ %\S+ %\S+) Lod %\S+", r"OpImageSampleImplicitLod \1", asm)
    e = _error(asm, "k.spvasm")
    assert "OpImageSampleImplicitLod takes implicit derivatives" in e.message
    assert "DerivativeGroup" in e.hint and "textureLod(s, uv, 0.0)" in e.hint


@pytest.mark.parametrize("body,message", [
    ("layout(set = 0, binding = 0, r32ui) uniform uimage2D im;\n"
     "void main() { imageAtomicAdd(im, ivec2(0), 1u); }", "atomics on storage images"),
    ("layout(set = 0, binding = 0) uniform sampler2D t[2];\n"
     "void main() { o[0] = textureLod(t[1], vec2(0.5), 0.0); }", "arrays of images or samplers"),
    ("layout(set = 0, binding = 0) uniform sampler2D s;\n"
     "vec4 f(sampler2D x) { return textureLod(x, vec2(0.5), 0.0); }\nvoid main() { o[0] = f(s); }",
     "a function parameter holding an image or sampler"),
    ("layout(set = 0, binding = 0) uniform texture2D t;\nlayout(set = 0, binding = 2) uniform sampler s;\n"
     "void main() { o[0] = vec4(textureLod(sampler2DShadow(t, s), vec3(0.5), 0.0)) + textureLod(sampler2D(t, s), vec2(0.5), 0.0); }",
     "used both by depth comparisons (Dref) and by plain sampling"),
    ("layout(set = 0, binding = 0) uniform samplerBuffer b;\nvoid main() { o[0] = texelFetch(b, 0); }",
     "texel buffers"),
    ("layout(set = 0, binding = 0, rgba8) uniform imageCube c;\nvoid main() { imageStore(c, ivec3(0), vec4(0)); }",
     "cube storage images"),
    ("layout(set = 0, binding = 0) uniform isampler2D s;\nvoid main() { o[0] = vec4(textureLod(s, vec2(0.5), 0.0)); }",
     "of an integer image"),
])
def test_unsupported_image_uses_are_refused_clearly(body, message):
    e = _error(HEAD + body + "\n")
    assert message in e.message, e.message
    # the GLSL line where glslang gives one (not for types and module-scope variables: then the
    # instruction)
    assert e.loc is not None and e.loc.line > 3 or "[instruction" in e.message, e.message


def test_an_unnormalized_sampler_is_refused(tmp_path, capsys):
    (tmp_path / "k.comp").write_text(V.COMBINED_BLUR)
    rc = cli(["run", str(tmp_path / "k.comp"), "--dispatch", "1", "--texture", "0:0=zeros:4x4", "--sampler", "0:0=linear,unnormalized",
              "--texture", "0:2=zeros:4x4"])
    err = capsys.readouterr().err
    assert rc != 0 and "unnormalized coordinates" in err and "Traceback" not in err, err


def test_out_of_bounds_loads_give_the_zero_texel_and_stores_are_dropped():
    case = V.oob_case()
    out = V.run_on_emu(case)
    o = np.frombuffer(out[(0, 5)], np.float32).reshape(8, 5, 4)
    a = np.frombuffer(case["textures"][(0, 0)].levels[0], np.uint8).reshape(4, 4, 4)
    b = np.frombuffer(case["textures"][(0, 1)].levels[0], np.float32).reshape(2, 4, 4)
    d = np.frombuffer(case["textures"][(0, 3)].levels[0], np.float32).reshape(4, 4)
    zero4, zero1 = [0, 0, 0, 0], [0, 0, 0, 1]           # rgba8: alpha 0; r32float: the alpha it lacks, 1
    for i in range(8):
        x = i - 2
        inside = 0 <= x < 4
        assert o[i, 0].tolist() == ((a[1, x] / np.float32(255)).astype(np.float32).tolist() if inside else zero4)
        assert o[i, 1].tolist() == ((a[2, i & 3] / np.float32(255)).astype(np.float32).tolist() if i != 7 else zero4)
        layer = i - 4
        assert o[i, 2].tolist() == ([float(b[layer, 2, i & 3]), 0, 0, 1] if 0 <= layer < 2 else zero1)
        assert o[i, 3].tolist() == ([float(d[1, x]), 0, 0, 1] if inside else zero1)
    e = np.frombuffer(out[(0, 4)], np.uint8).reshape(4, 4, 4)
    e0 = np.frombuffer(case["textures"][(0, 4)].levels[0], np.uint8).reshape(4, 4, 4)
    written = {(5 - i, i) for i in range(8) if 0 <= i < 4 and 0 <= 5 - i < 4}      # (row, column)
    for y in range(4):
        for x in range(4):
            want = [128, 64, 255, 191] if (y, x) in written else e0[y, x].tolist()
            assert e[y, x].tolist() == want, (y, x)


def test_the_ir_of_image_kernels_reads_back_from_its_text():
    from emu.isa.printer import print_module
    from emu.isa.textparser import parse_ir
    for src in (V.UNKNOWN, V.OOB, V.COMPARE):
        m, _ = compile_source(src, "k.comp")
        text = print_module(m, locs=False)
        assert print_module(parse_ir(text, "k.ir"), locs=False) == text
    assert "texture_storage_2d<unknown_f32, write>" in print_module(compile_source(V.UNKNOWN, "k.comp")[0])


MS_GLSL = """#version 450
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) uniform texture2DMS t;
layout(set = 0, binding = 1) uniform sampler s;
layout(set = 0, binding = 2) buffer O { vec4 o[]; };
void main() {
    int i = int(gl_GlobalInvocationID.x);
    o[i] = texelFetch(sampler2DMS(t, s), ivec2(i & 3, i >> 2), i & 3) + float(textureSamples(sampler2DMS(t, s)));
}
"""
MS_WGSL = """
@group(0) @binding(0) var t: texture_multisampled_2d<f32>;
@group(0) @binding(2) var<storage, read_write> o: array<vec4f>;
@compute @workgroup_size(16) fn main(@builtin(global_invocation_id) id: vec3u) {
  let i = i32(id.x);
  o[i] = textureLoad(t, vec2i(i & 3, i >> 2), i & 3) + f32(textureNumSamples(t));
}
"""


def test_a_multisampled_image_reads_by_sample_as_wgsl():
    import emu
    samples = np.random.default_rng(9).integers(0, 256, (4, 4, 4, 4), dtype=np.uint8)
    got = []
    for src, file in ((MS_GLSL, "k.comp"), (MS_WGSL, "k.wgsl")):
        dev = emu.Device("reference")
        tex = dev.create_texture((4, 4), "rgba8unorm", sample_count=4)
        dev.write_texture(tex, samples)
        out = dev.create_buffer(np.zeros((16, 4), np.float32))
        bound = {(0, 0): tex, (0, 2): out}
        if file.endswith(".comp"):
            bound[(0, 1)] = dev.create_sampler()
        pipe = dev.create_compute_pipeline(dev.create_shader_module(src, file), None)
        dev.dispatch(pipe, bound, (1, 1, 1))
        got.append(out.read(np.float32).reshape(16, 4))
    assert np.array_equal(got[0], got[1])
    want = samples[np.arange(16) & 3, np.arange(16) >> 2, np.arange(16) & 3] / np.float32(255) + 4
    assert np.array_equal(got[0], want.astype(np.float32))


def test_a_depth_compare_at_a_level_reads_that_level():
    # nearest filtering and mip selection: a Lod of 2 reads level 2 (2x2), Lod -1 level 0 (8x8)
    case = dict(OTHERS["shadow_mips_nearest"], samplers={(0, 0): dict(compare="less")})
    p = case["buffers"][(0, 1)].copy()
    p[:128, 3], p[128:, 3] = 2.0, -1.0
    case["buffers"] = {**case["buffers"], (0, 1): p}
    out = np.frombuffer(V.run_on_emu(case)[(0, 2)], np.float32)
    levels = [np.frombuffer(b, np.float32).reshape(8 >> k, 8 >> k) for k, b in enumerate(case["textures"][(0, 0)].levels)]
    for i in range(256):
        lv = levels[2] if i < 128 else levels[0]
        n = lv.shape[0]
        texel = lv[int(p[i, 1] * n), int(p[i, 0] * n)]
        assert out[i] == (1.0 if p[i, 2] < texel else 0.0), i
    m, _ = compile_source(V.SHADOW_MIPS, "k.comp")
    from emu.isa.printer import print_module
    assert 'fn = "sample_compare_level", operands = ["texture", "sampler", "coords", "depth_ref", "level"]' \
        in print_module(m)
