"""Texture and sampler types and the compute-shader texture builtins: lowering to the `texture`
op, the verifier, the IR text and the WGSL emitter, and the refusals WGSL makes."""
import pytest

from emu.errors import EmuError
from emu.frontend.wgsl import compile_source
from emu.hw.emit import canonical_ir, emit
from emu.isa.printer import print_module
from emu.isa.textparser import parse_ir
from emu.isa.types import F32, I32, U32, SamplerType, TextureType, VectorType
from emu.isa.verify import VerifyError, verify

DECLS = """
@group(0) @binding(0) var src: texture_2d<f32>;
@group(0) @binding(1) var smp: sampler;
@group(0) @binding(2) var dst: texture_storage_2d<rgba8unorm, write>;
@group(0) @binding(3) var dep: texture_depth_2d_array;
@group(0) @binding(4) var cmp: sampler_comparison;
@group(0) @binding(5) var cube: texture_cube<f32>;
@group(0) @binding(6) var vol: texture_3d<u32>;
@group(0) @binding(7) var rw: texture_storage_2d_array<r32sint, read_write>;
@group(0) @binding(8) var ms: texture_multisampled_2d<i32>;
@group(0) @binding(9) var<storage, read_write> out: array<f32>;
"""
KERNEL = DECLS + """
fn load_at(t: texture_2d<f32>, p: vec2<i32>) -> vec4<f32> { return textureLoad(t, p, 0); }

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let uv = (vec2<f32>(id.xy) + 0.5) / vec2<f32>(textureDimensions(src, 0u));
  let a = textureSampleLevel(src, smp, uv, 1.5, vec2(1, -1));
  let g = textureGather(2, src, smp, uv);
  let c = textureGatherCompare(dep, cmp, uv, 3, 0.25);
  let d = textureSampleCompareLevel(dep, cmp, uv, 1u, 0.5);
  let e = textureSampleGrad(cube, smp, vec3(uv, 1.0), vec3(0.1), vec3(0.0));
  let v = textureLoad(vol, vec3(1, 2, 3), 0);
  let r = textureLoad(rw, id.xy, 2);
  textureStore(rw, id.xy, 2, r + vec4(1));
  let s = textureLoad(ms, vec2(0u), 3);
  textureStore(dst, id.xy, a + load_at(src, vec2<i32>(id.xy)) + g * c.x + vec4(d) + e);
  out[id.x] = f32(textureNumLevels(src) + textureNumLayers(dep) + textureNumSamples(ms) + v.x) + f32(s.y);
  textureBarrier();
}
"""


def _module(src=KERNEL):
    m, _ = compile_source(src, "k.wgsl")
    return m


def _texture_insts(m):
    return [(i.attrs["fn"], tuple(i.attrs["operands"]), str(i.type) if i.result is not None else None)
            for f in m.functions for i in f.walk() if i.op == "texture"]


def test_types_and_handle_globals():
    m = _module()
    g = {x.name: x for x in m.globals}
    assert g["src"].type == TextureType("sampled", "2d", F32) and g["src"].space == "handle"
    assert g["smp"].type == SamplerType(False) and g["cmp"].type == SamplerType(True)
    assert g["dst"].type == TextureType("storage", "2d", None, "rgba8unorm", "write")
    assert str(g["rw"].type) == "texture_storage_2d_array<r32sint, read_write>"
    assert g["rw"].type.texel == I32 and g["dst"].type.texel == F32 and g["vol"].type.texel == U32
    assert (g["dep"].group, g["dep"].binding, g["dep"].access) == (0, 3, "read")


def test_builtins_lower_to_the_texture_op_typed_per_overload():
    got = _texture_insts(_module())
    assert got == [
        ("load", ("texture", "coords", "level"), "vec4<f32>"),       # load_at, lowered when first called
        ("dimensions", ("texture", "level"), "vec2<u32>"),
        ("sample_level", ("texture", "sampler", "coords", "level", "offset"), "vec4<f32>"),
        ("gather", ("component", "texture", "sampler", "coords"), "vec4<f32>"),
        ("gather_compare", ("texture", "sampler", "coords", "array_index", "depth_ref"), "vec4<f32>"),
        ("sample_compare_level", ("texture", "sampler", "coords", "array_index", "depth_ref"), "f32"),
        ("sample_grad", ("texture", "sampler", "coords", "ddx", "ddy"), "vec4<f32>"),
        ("load", ("texture", "coords", "level"), "vec4<u32>"),
        ("load", ("texture", "coords", "array_index"), "vec4<i32>"),
        ("store", ("texture", "coords", "array_index", "value"), None),
        ("load", ("texture", "coords", "sample_index"), "vec4<i32>"),
        ("store", ("texture", "coords", "value"), None),
        ("num_levels", ("texture",), "u32"),
        ("num_layers", ("texture",), "u32"),
        ("num_samples", ("texture",), "u32"),
    ]


def test_verifier_text_round_trip_and_emitter():
    m = _module()
    verify(m)
    text = print_module(m)
    assert "global @dst : texture_storage_2d<rgba8unorm, write> handle group(0) binding(2)" in text
    assert print_module(parse_ir(text, "k.ir")) == text
    for dialect in ("dawn", "wgpu"):
        wgsl = emit(m, dialect)
        assert "textureGather(2i, src, smp," in wgsl and "vec2<i32>(1i, -1i))" in wgsl
        m2, _ = compile_source(wgsl, "k.wgsl")
        assert canonical_ir(m2) == canonical_ir(m)


def test_verifier_refuses_a_wrong_result_or_operand():
    m = _module()
    text = print_module(m, locs=False)
    bad = text.replace('{fn = "num_levels", operands = ["texture"]} : u32', '{fn = "num_levels", operands = ["texture"]} : i32')
    with pytest.raises(VerifyError, match="num_levels of a texture_2d<f32> gives u32, not i32"):
        verify(parse_ir(bad, "k.ir"))
    bad = text.replace('operands = ["texture", "coords", "sample_index"]', 'operands = ["texture", "coords", "array_index"]')
    with pytest.raises(VerifyError, match="load of a texture_multisampled_2d<i32> takes no array_index"):
        verify(parse_ir(bad, "k.ir"))
    bad = text.replace('{fn = "sample_level", operands = ["texture", "sampler", "coords", "level", "offset"]}',
                       '{fn = "sample_level", operands = ["texture", "sampler", "coords", "level", "value"]}')
    with pytest.raises(VerifyError, match="the value operand of a texture_2d<f32> cannot be vec2<i32>"):
        verify(parse_ir(bad, "k.ir"))


MAIN = "@compute @workgroup_size(1) fn main() {\n"


@pytest.mark.parametrize("src,where,words", [
    ("@group(0) @binding(0) var t: texture_external;\n" + MAIN + "}", (1, 30), ["texture_external", "not supported"]),
    (DECLS + MAIN + "  _ = textureSample(src, smp, vec2(0.5));\n}", (13, 7),
     ["textureSample needs implicit derivatives", "only fragment shaders", "textureSampleLevel(t, s, coords, 0.0)"]),
    (DECLS + MAIN + "  _ = textureSampleBias(src, smp, vec2(0.5), 1.0);\n}", (13, 7), ["implicit derivatives"]),
    (DECLS + MAIN + "  _ = textureSampleCompare(dep, cmp, vec2(0.5), 0, 0.5);\n}", (13, 7),
     ["textureSampleCompareLevel(t, s, coords, depth_ref)"]),
    ("@group(0) @binding(0) var t: texture_storage_2d<rgb9e5ufloat, write>;\n" + MAIN + "}", (1, 49),
     ["'rgb9e5ufloat' is not a storage texel format"]),
    ("@group(0) @binding(0) var t: texture_storage_2d<r32float, sometimes>;\n" + MAIN + "}", (1, 59),
     ["'sometimes' is not an access mode"]),
    ("@group(0) @binding(0) var t: texture_2d<bool>;\n" + MAIN + "}", (1, 41), ["sampled type is f32, i32 or u32"]),
    ("var<private> t: texture_2d<f32>;\n" + MAIN + "}", (1, 1), ["var<private> 't' cannot hold a texture_2d<f32>"]),
    ("var t: texture_2d<f32>;\n" + MAIN + "}", (1, 1), ["'t' needs @group and @binding"]),
    (DECLS + MAIN + "  _ = textureLoad(dst, vec2(0), 0);\n}", (13, 7), ["cannot read a write-only"]),
    (DECLS + MAIN + "  textureStore(src, vec2(0), vec4(0.0));\n}", (13, 3), ["needs a storage texture with access write"]),
    (DECLS + MAIN + "  _ = textureLoad(cube, vec3(0), 0);\n}", (13, 7), ["cannot load from a texture_cube<f32>"]),
    (DECLS + MAIN + "  _ = textureNumLayers(src);\n}", (13, 7), ["needs an arrayed texture"]),
    (DECLS + MAIN + "  _ = textureGather(4, src, smp, vec2(0.5));\n}", (13, 21), ["component must be 0, 1, 2 or 3"]),
    (DECLS + MAIN + "  _ = textureGather(src, smp, vec2(0.5));\n}", (13, 7), ["takes the component first"]),
    (DECLS + MAIN + "  _ = textureSampleLevel(src, smp, vec2(0.5), 0.0, vec2(8, 0));\n}", (13, 52),
     ["offset component must be an i32 from -8 to 7"]),
    (DECLS + MAIN + "  let o = vec2(1, 0);\n  _ = textureSampleLevel(src, smp, vec2(0.5), 0.0, o);\n}", (14, 52),
     ["offset must be a constant expression"]),
    (DECLS + MAIN + "  _ = textureSampleLevel(src, cmp, vec2(0.5), 0.0);\n}", (13, 31), ["needs a sampler, not sampler_comparison"]),
    (DECLS + MAIN + "  _ = textureSampleLevel(vol, smp, vec3(0.5), 0.0);\n}", (13, 7), ["cannot sample a texture_3d<u32>"]),
    (DECLS + MAIN + "  _ = textureLoad(src, vec2(0.5), 0);\n}", (13, 24), ["coords must be vec2<i32> or vec2<u32>"]),
    (DECLS + MAIN + "  _ = textureLoad(src, vec2(0));\n}", (13, 7), ["missing the level argument"]),
    (DECLS + MAIN + "  _ = textureDimensions(ms, 0);\n}", (13, 29), ["takes no level for a texture_multisampled_2d<i32>"]),
])
def test_refusals(src, where, words):
    with pytest.raises(EmuError) as e:
        compile_source(src, "k.wgsl")
    msg = str(e.value)
    assert (e.value.loc.line, e.value.loc.col) == where, msg
    for w in words:
        assert w in msg


def test_a_fragment_only_sample_is_not_lowered():
    """textureSample in a function only a fragment entry point calls: the compute entry still lowers."""
    src = DECLS + "fn shade() -> vec4f { return textureSample(src, smp, vec2(0.5)); }\n" \
        "@fragment fn fs() -> @location(0) vec4f { return shade(); }\n" + MAIN + "  out[0] = 1.0;\n}"
    m = _module(src)
    assert [f.name for f in m.functions] == ["main"]


def test_an_uncalled_sample_is_not_lowered_but_a_compute_call_is_refused():
    """A function no entry point calls that uses textureSample can only serve a fragment shader
    (Tint's bug/tint/1046 has one): the module lowers without it. Called from compute, it is refused
    at the call inside it."""
    helper = "fn shade() -> vec4f { return textureSample(src, smp, vec2(0.5)); }\n"
    m = _module(DECLS + helper + MAIN + "  out[0] = 1.0;\n}")
    assert [f.name for f in m.functions] == ["main"]
    with pytest.raises(EmuError) as e:
        compile_source(DECLS + helper + MAIN + "  out[0] = shade().x;\n}", "k.wgsl")
    assert (e.value.loc.line, e.value.loc.col) == (12, 30)
    assert "textureSample needs implicit derivatives" in str(e.value)
