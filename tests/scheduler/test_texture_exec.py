"""Textures on the emulator: textureLoad/Store of every storage format, the size queries, WebGPU's
out-of-bounds rules, and sampling (nearest/linear, mip levels, address modes, cube faces, gather,
comparison), each against values worked out by hand from WebGPU's rules."""
import numpy as np
import pytest

import emu
from emu.errors import EmuError
from emu.numerics.texels import FORMATS, STORAGE_FORMATS, decode, encode


def _run(src, bindings, groups=(1, 1, 1), **dev):
    d = emu.Device(**dev)
    pipe = d.create_compute_pipeline(d.create_shader_module(src, "t.wgsl"), "main")
    return d, d.dispatch(pipe, bindings, groups)


@pytest.mark.parametrize("fmt", STORAGE_FORMATS)
def test_store_then_load_every_storage_format(fmt):
    f = FORMATS[fmt]
    vec = {"f32": "vec4f", "i32": "vec4i", "u32": "vec4u"}[f.sampled]
    rng = np.random.default_rng(3)
    raw = rng.integers(0, 256, (4 * 4, f.bytes), dtype=np.uint8)
    values = decode(f, raw)                      # numbers every channel of the format can hold
    if f.kind == "float":
        values = np.nan_to_num(values, nan=0.5, posinf=2.0, neginf=-2.0).astype(np.float32)
    src = f"""
@group(0) @binding(0) var<storage, read> vals: array<{vec}>;
@group(0) @binding(1) var img: texture_storage_2d<{fmt}, read_write>;
@group(0) @binding(2) var<storage, read_write> back: array<{vec}>;
@compute @workgroup_size(4, 4) fn main(@builtin(local_invocation_id) id: vec3u) {{
  let i = id.y * 4u + id.x;
  textureStore(img, id.xy, vals[i]);
  textureBarrier();
  back[i] = textureLoad(img, vec2i(id.xy));
}}"""
    d = emu.Device()
    tex = d.create_texture((4, 4), fmt)
    back = np.zeros((16, 4), values.dtype)
    _run(src, {(0, 0): values, (0, 1): tex, (0, 2): back})
    want = encode(f, values)
    got = np.ascontiguousarray(tex.levels[0]).reshape(16, f.bytes)
    assert (got == want).all(), fmt
    again = decode(f, want)
    assert np.array_equal(back.view(np.uint32), again.view(np.uint32)), fmt


SIZES = """
@group(0) @binding(0) var t: texture_2d_array<f32>;
@group(0) @binding(1) var v: texture_3d<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32, 12>;
@compute @workgroup_size(1) fn main() {
  let a = textureDimensions(t);
  let b = textureDimensions(t, 2);
  let c = textureDimensions(v, 1u);
  out[0] = a.x; out[1] = a.y; out[2] = b.x; out[3] = b.y;
  out[4] = c.x; out[5] = c.y; out[6] = c.z;
  out[7] = textureNumLayers(t); out[8] = textureNumLevels(t); out[9] = textureNumLevels(v);
  out[10] = textureLoad(v, vec3(1, 0, 1), 1).x;
  out[11] = textureLoad(v, vec3(7, 7, 7), 0).y;
}"""


def test_sizes_levels_layers():
    d = emu.Device()
    arr = d.create_texture((16, 8, 3), "rgba8unorm", mip_level_count=4)
    vol = d.create_texture((8, 8, 4), "rg32uint", dimension="3d", mip_level_count=3)
    lvl1 = np.arange(4 * 4 * 2 * 2, dtype=np.uint32).reshape(2, 4, 4, 2)
    d.write_texture(vol, lvl1, level=1)
    d.write_texture(vol, np.array([5, 77], np.uint32), origin=(7, 7, 3), size=(1, 1, 1))
    out = np.zeros(12, np.uint32)
    view = arr.create_view(base_array_layer=1, array_layer_count=2)
    _, warned = _run(SIZES, {(0, 0): view, (0, 1): vol, (0, 2): out})
    assert out.tolist() == [16, 8, 4, 2, 4, 4, 2, 2, 4, 3, int(lvl1[1, 0, 1, 0]), 77]
    # (7, 7, 7) is beyond the depth (4): clamped to the last slice (texel (7, 7, 3)), as Dawn does, and reported
    assert len(warned) == 1 and "texel access" in warned[0].message and "clamped" in warned[0].message
    out[:] = 0
    with pytest.raises(EmuError, match="out of bounds"):
        _run(SIZES, {(0, 0): view, (0, 1): vol, (0, 2): out}, bounds="strict")


def test_out_of_bounds_stores_are_dropped():
    src = """
@group(0) @binding(0) var img: texture_storage_2d<r32uint, write>;
@compute @workgroup_size(4) fn main(@builtin(local_invocation_id) id: vec3u) {
  textureStore(img, vec2i(i32(id.x) * 2 - 2, 0), vec4u(id.x + 1u));
}"""
    d = emu.Device()
    tex = d.create_texture((4, 1), "r32uint")
    _, warned = _run(src, {(0, 0): tex})
    assert tex.read().tolist() == [[2, 0, 3, 0]]       # x = -2 and 4 dropped
    assert "2 accesses out of bounds" in warned[0].message and "dropped" in warned[0].message


SAMPLE = """
@group(0) @binding(0) var t: texture_2d<f32>;
@group(0) @binding(1) var s: sampler;
@group(0) @binding(2) var<storage, read> uv: array<vec2f>;
@group(0) @binding(3) var<storage, read> lod: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<vec4f>;
@compute @workgroup_size(1) fn main(@builtin(workgroup_id) w: vec3u) {
  out[w.x] = textureSampleLevel(t, s, uv[w.x], lod[w.x]);
}"""


def _sample(tex, sampler, uvs, lods=None):
    n = len(uvs)
    out = np.zeros((n, 4), np.float32)
    lods = np.zeros(n, np.float32) if lods is None else np.asarray(lods, np.float32)
    _run(SAMPLE, {(0, 0): tex, (0, 1): sampler, (0, 2): np.asarray(uvs, np.float32), (0, 3): lods,
                  (0, 4): out}, (n, 1, 1))
    return out


def _ramp_texture(d, w=4, h=4, levels=1):
    tex = d.create_texture((w, h), "rgba32float", mip_level_count=levels)
    for lv in range(levels):
        lw, lh = max(1, w >> lv), max(1, h >> lv)
        x, y = np.meshgrid(np.arange(lw), np.arange(lh))
        data = np.stack([x, y, np.full_like(x, lv), np.ones_like(x)], -1).astype(np.float32)
        d.write_texture(tex, data, level=lv)
    return tex


def test_nearest_and_linear_filtering_with_address_modes():
    d = emu.Device()
    tex = _ramp_texture(d)
    near = d.create_sampler()
    got = _sample(tex, near, [(0.125, 0.125), (0.9, 0.4), (-0.1, 1.2)])
    assert got[:, :2].tolist() == [[0, 0], [3, 1], [0, 3]]                  # clamp-to-edge
    rep = d.create_sampler(address_mode_u="repeat", address_mode_v="mirror-repeat")
    got = _sample(tex, rep, [(-0.1, 1.2), (1.3, -0.2)])
    # u -0.1 -> texel -1 -> 3 (repeat); v 1.2 -> texel 4 -> mirrored 3; u 1.3 -> 5 -> 1; v -0.2 -> -1 -> 0
    assert got[:, :2].tolist() == [[3, 3], [1, 0]]
    lin = d.create_sampler(mag_filter="linear", min_filter="linear")
    got = _sample(tex, lin, [(0.25, 0.125), (0.3, 0.5), (0.0, 0.0)])
    # u*4 - 0.5: 0.5 -> half way between texels 0 and 1; 0.7 -> 0.7 of the way from 0 to 1 ...
    assert got[0, :2].tolist() == [0.5, 0.0]
    assert got[1, 0] == np.float32(np.float32(0.3) * 4 - 0.5) and got[1, 1] == 1.5
    assert got[2, :2].tolist() == [0.0, 0.0]                                # clamped footprint


def test_mip_levels_nearest_and_linear():
    d = emu.Device()
    tex = _ramp_texture(d, 8, 8, levels=4)
    s = d.create_sampler(mipmap_filter="nearest")
    got = _sample(tex, s, [(0.5, 0.5)] * 5, [0.0, 0.5, 0.75, 2.2, 9.0])
    assert got[:, 2].tolist() == [0, 0, 1, 2, 3]       # 0.5 rounds down (Vulkan's ceil(d + 0.5) - 1)
    s = d.create_sampler(mipmap_filter="linear", lod_max_clamp=2.5)
    got = _sample(tex, s, [(0.5, 0.5)] * 3, [0.25, 1.5, 3.0])
    assert got[:, 2].tolist() == [0.25, 1.5, 2.5]


def test_cube_faces_gather_and_compare():
    d = emu.Device()
    cube = d.create_texture((2, 2, 6), "r32float")
    d.write_texture(cube, (np.arange(6 * 4, dtype=np.float32)).reshape(6, 2, 2))
    src = """
@group(0) @binding(0) var c: texture_cube<f32>;
@group(0) @binding(1) var s: sampler;
@group(0) @binding(2) var<storage, read> dir: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(1) fn main(@builtin(workgroup_id) w: vec3u) {
  out[w.x] = textureSampleLevel(c, s, dir[w.x].xyz, 0.0).x;
}"""
    dirs = np.array([[1, 0.2, 0.6, 0], [-1, 0.2, 0.6, 0], [0.3, 1, -0.4, 0], [0.3, -1, 0.4, 0],
                     [0.3, 0.2, 1, 0], [0.3, -0.2, -1, 0], [1, 1, 1, 0]], np.float32)
    out = np.zeros(7, np.float32)
    _run(src, {(0, 0): cube.create_view(dimension="cube"), (0, 1): d.create_sampler(),
               (0, 2): dirs, (0, 3): out}, (7, 1, 1))
    # +X: sc=-z -> s=0.2 (texel 0), tc=-y -> t=0.4 (row 0): face 0 texel 0 = 0; -X: sc=+z -> 0.8 (1)
    # -Y: sc=x -> s=0.65, tc=-z -> t=0.3; +Z: sc=x, tc=-y; -Z: sc=-x -> 0.35, tc=-y -> 0.6 (row 1);
    # (1, 1, 1): a tie, the z axis wins (+Z), s=1 clamps to the last column
    assert out.tolist() == [0, 5, 8 + 1, 12 + 1, 16 + 1, 20 + 2, 16 + 1]

    depth = d.create_texture((2, 2), "depth16unorm")
    d.write_texture(depth, np.array([[0, 16384], [32768, 65535]], np.uint16))
    src = """
@group(0) @binding(0) var t: texture_depth_2d;
@group(0) @binding(1) var s: sampler_comparison;
@group(0) @binding(2) var<storage, read_write> out: array<vec4f, 3>;
@compute @workgroup_size(1) fn main() {
  out[0] = textureGatherCompare(t, s, vec2f(0.5), 0.3);
  out[1] = vec4f(textureSampleCompareLevel(t, s, vec2f(0.25), 0.3), textureSampleCompareLevel(t, s, vec2f(0.5), 0.3), 0, 0);
  out[2] = textureGather(t, s2, vec2f(0.5));
}
@group(0) @binding(3) var s2: sampler;"""
    out = np.zeros((3, 4), np.float32)
    _run(src, {(0, 0): depth, (0, 1): d.create_sampler(compare="less", mag_filter="linear"),
               (0, 3): d.create_sampler(), (0, 2): out})
    # texels 0, 0.25, 0.5, 1; 0.3 < texel: only 0.5 (x: umin,vmax) and 1 (y: umax,vmax)
    assert out[0].tolist() == [1, 1, 0, 0]
    assert out[1, :2].tolist() == [0, 0.5]           # linear over the four compare results
    assert out[2].tolist() == [np.float32(32768 / 65535), 1, np.float32(16384 / 65535), 0]


def test_cube_filtering_is_seamless_across_edges_and_corners():
    from emu.numerics.sampling import cube_texel
    n = np.array([4])
    # +X's column -1 is +Z's last column (same row), its row -1 +Y's last row (last column)
    assert [int(v[0]) for v in cube_texel(np.array([0]), np.array([-1]), np.array([1]), n)] == [4, 3, 1, 0]
    assert [int(v[0]) for v in cube_texel(np.array([0]), np.array([0]), np.array([-1]), n)] == [2, 3, 3, 0]
    assert [int(v[0]) for v in cube_texel(np.array([0]), np.array([-1]), np.array([-1]), n)] == [0, 0, 0, 1]
    assert [int(v[0]) for v in cube_texel(np.array([3]), np.array([2]), np.array([1]), n)] == [3, 2, 1, 0]
    d = emu.Device()
    faces = np.zeros((6, 4, 4), np.float32)
    faces[0, 1, 0], faces[4, 1, 3] = 2, 4          # +X (row 1, column 0) and its neighbour on +Z
    faces[0, 0, 0], faces[4, 0, 3], faces[2, 3, 3] = 3, 6, 9     # the three texels at +X's corner
    cube = d.create_texture((4, 4, 6), "r32float")
    d.write_texture(cube, faces)
    src = """
@group(0) @binding(0) var c: texture_cube<f32>;
@group(0) @binding(1) var s: sampler;
@group(0) @binding(2) var<storage, read> dir: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(1) fn main(@builtin(workgroup_id) w: vec3u) {
  out[w.x] = textureSampleLevel(c, s, dir[w.x].xyz, 0.0).x;
}"""
    # on the edge of +X and +Z (x = z: +Z's face, s = 1), t at row 1's centre: half of +Z's column 3 and
    # half of +X's column 0; (1, 1, 1), the cube's corner (+Z, s = 1, t = 0): a quarter of each of the
    # three texels there and of the missing fourth, their mean: (3 + 6 + 9) / 3
    dirs = np.array([[1, 0.25, 1, 0], [1, 1, 1, 0]], np.float32)
    out = np.zeros(2, np.float32)
    _run(src, {(0, 0): cube.create_view(dimension="cube"), (0, 1): d.create_sampler(mag_filter="linear"),
               (0, 2): dirs, (0, 3): out}, (2, 1, 1))
    assert out.tolist() == [(2 + 4) / 2, 6.0]


def test_multisampled_textures_load_each_sample():
    d = emu.Device()
    ms = d.create_texture((3, 2), "rgba8uint", sample_count=4)
    data = np.arange(4 * 2 * 3 * 4, dtype=np.uint8).reshape(4, 2, 3, 4)      # (sample, y, x, channel)
    d.write_texture(ms, data)
    assert np.array_equal(d.read_texture(ms), data)
    depth = d.create_texture((3, 2), "depth32float", sample_count=4)
    d.write_texture(depth, np.linspace(0, 1, 24, dtype=np.float32).reshape(4, 2, 3))
    src = """
@group(0) @binding(0) var t: texture_multisampled_2d<u32>;
@group(0) @binding(1) var z: texture_depth_multisampled_2d;
@group(0) @binding(2) var<storage, read_write> out: array<vec4u, 6>;
@group(0) @binding(3) var<storage, read_write> dz: array<f32, 3>;
@compute @workgroup_size(1) fn main() {
  out[0] = textureLoad(t, vec2i(2, 1), 3);
  out[1] = textureLoad(t, vec2u(0, 0), 1u);
  out[2] = vec4u(textureNumSamples(t), textureNumSamples(z), textureDimensions(t));
  out[3] = textureLoad(t, vec2i(1, 0), 7);          // sample 7 of 4: clamped to 3, reported
  dz[0] = textureLoad(z, vec2i(1, 1), 2);
}"""
    out, dz = np.zeros((6, 4), np.uint32), np.zeros(3, np.float32)
    pipe = d.create_compute_pipeline(d.create_shader_module(src, "ms.wgsl"), "main")
    warned = d.dispatch(pipe, {(0, 0): ms, (0, 1): depth, (0, 2): out, (0, 3): dz}, (1, 1, 1))
    assert out[:4].tolist() == [data[3, 1, 2].tolist(), data[1, 0, 0].tolist(), [4, 4, 3, 2], data[3, 0, 1].tolist()]
    assert dz[0] == np.linspace(0, 1, 24, dtype=np.float32)[2 * 6 + 1 * 3 + 1]
    assert len(warned) == 1 and str(warned[0]).startswith("ms.wgsl:10:12: warning: out-of-bounds texel access "
                                                          "into a rgba8uint texture of (3, 2, 1) ('t'): 1 access")
    with pytest.raises(EmuError, match="(?s)sample_count 1.*create it with sample_count=4"):
        d.dispatch(pipe, {(0, 0): d.create_texture((3, 2), "rgba8uint"), (0, 1): depth, (0, 2): out, (0, 3): dz},
                   (1, 1, 1))
    with pytest.raises(EmuError, match="multisampled texture is 2d with one layer and one mip level"):
        d.create_texture((4, 4, 2), "rgba8uint", sample_count=4)
    with pytest.raises(EmuError, match="sample_count 2: WebGPU has 1 and 4"):
        d.create_texture((4, 4), "rgba8uint", sample_count=2)


def test_the_profile_s_filter_model_quantizes_linear_weights_and_levels():
    import dataclasses
    from emu.numerics.texels import TextureModel
    from emu.profiles import load_profile
    d = emu.Device()
    tex = _ramp_texture(d, 8, 8, levels=2)
    lin = d.create_sampler(mag_filter="linear", min_filter="linear", mipmap_filter="linear")
    uv, lods = [(0.3, 0.5), (0.5, 0.5)], [0.0, 0.3]
    exact = _sample(tex, lin, uv, lods)
    assert exact[0, 0] == np.float32(np.float32(0.3) * 8 - 0.5) and exact[1, 2] == np.float32(0.3)
    prof = dataclasses.replace(load_profile("reference"), textures=TextureModel("exact", 8, 4, "half-up"))
    dev = emu.Device(profile=prof)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SAMPLE, "t.wgsl"), "main")
    out = np.zeros((2, 4), np.float32)
    dev.dispatch(pipe, {(0, 0): tex, (0, 1): lin, (0, 2): np.asarray(uv, np.float32),
                        (0, 3): np.asarray(lods, np.float32), (0, 4): out}, (2, 1, 1))
    # u - 0.5 = 1.9000001 keeps 8 fractional bits: 1 + 230/256; the lod 0.3 keeps 4: 4/16
    assert out[0, 0] == np.float32(1 + 230 / 256) and out[1, 2] == np.float32(0.25)


def test_sample_grad_levels_of_detail_on_2d_and_cube():
    d = emu.Device()
    src = """
@group(0) @binding(0) var c: texture_cube<f32>;
@group(0) @binding(1) var t: texture_2d<f32>;
@group(0) @binding(2) var s: sampler;
@group(0) @binding(3) var<storage, read> g: array<vec4f>;
@group(0) @binding(4) var<storage, read_write> out: array<vec2f>;
@compute @workgroup_size(1) fn main(@builtin(workgroup_id) w: vec3u) {
  let k = g[w.x].x;
  let a = textureSampleGrad(c, s, vec3f(1.0, 0.0, 0.0), vec3f(0.0, 0.0, k), vec3f(0.0)).x;
  let b = textureSampleGrad(t, s, vec2f(0.5), vec2f(k / 2.0, 0.0), vec2f(0.0, k / 4.0)).x;
  out[w.x] = vec2f(a, b);
}"""
    cube = d.create_texture((8, 8, 6), "rgba16float", mip_level_count=4)
    flat = d.create_texture((8, 8), "rgba16float", mip_level_count=4)
    for lv in range(4):
        n = 8 >> lv
        for tex, layers in ((cube, 6), (flat, 1)):
            d.write_texture(tex, np.full((layers, n, n, 4), lv, np.float16), level=lv)
    ks = np.array([[0.25, 0, 0, 0], [0.5, 0, 0, 0], [1, 0, 0, 0], [8, 0, 0, 0]], np.float32)
    out = np.zeros((4, 2), np.float32)
    _run(src, {(0, 0): cube.create_view(dimension="cube"), (0, 1): flat, (0, 2): d.create_sampler(),
               (0, 3): ks, (0, 4): out}, (4, 1, 1))
    # +X face: s = (-z / |x| + 1) / 2, so ds = -dz / 2 and lambda = log2(8 * k / 2): k = 0.5 -> 1
    # 2d: lambda = log2(max(8 * k / 2, 8 * k / 4)) = log2(4k); levels 0..3 (nearest, half down)
    assert out[:, 0].tolist() == [0, 1, 2, 3] and out[:, 1].tolist() == [0, 1, 2, 3]


def test_one_dimensional_sampling_and_nan_coordinates():
    d = emu.Device()
    src = """
@group(0) @binding(0) var t: texture_1d<f32>;
@group(0) @binding(1) var s: sampler;
@group(0) @binding(2) var<storage, read> u: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(4) fn main(@builtin(local_invocation_index) i: u32) {
  out[i] = textureSampleLevel(t, s, u[i], 0.0).x;
}"""
    tex = d.create_texture((4,), "r32float", dimension="1d")
    d.write_texture(tex, np.array([10, 20, 30, 40], np.float32))
    out = np.zeros(4, np.float32)
    u = np.array([0.3, 0.99, -5.0, np.nan], np.float32)
    _run(src, {(0, 0): tex, (0, 1): d.create_sampler(), (0, 2): u, (0, 3): out})
    assert out.tolist() == [20, 40, 10, 10]          # a NaN coordinate reads texel 0 (WebGPU: any texel)
