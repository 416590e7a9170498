"""Our image kernels, each as one dispatch with its inputs, run the same way on the emulator and
on a real adapter (emu.hw.runner): a separable blur with textureSampleLevel (both passes, linear
filtering at half-texel offsets, from an rgba16float and from an rgba8unorm image), a
storage-texture write of every format, a gather with an offset and a repeating sampler, a
comparison sampler (textureSampleCompareLevel and textureGatherCompare), a cube lookup over
directions on every face, and a mip-level blend. scripts/h200_textures.py runs the same cases on
the H200 and records the outputs (tests/data/hw/h200/textures.npz)."""
from __future__ import annotations

import numpy as np

from emu.hw.runner import HwTexture, to_emu

BLUR = """
@group(0) @binding(0) var src: texture_2d<f32>;
@group(0) @binding(1) var smp: sampler;
@group(0) @binding(2) var dst: texture_storage_2d<rgba16float, write>;
override VERTICAL: bool = false;
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3u) {
  let size = textureDimensions(src);
  if (any(id.xy >= size)) { return; }
  let texel = 1.0 / vec2f(size);
  let uv = (vec2f(id.xy) + 0.5) * texel;
  let dir = select(vec2f(texel.x, 0.0), vec2f(0.0, texel.y), VERTICAL);
  // 5 taps folded into 3 linear fetches: weights 6/16 at the centre, 5/16 at +-1.2 texels
  var acc = textureSampleLevel(src, smp, uv, 0.0) * 0.375;
  acc += textureSampleLevel(src, smp, uv + 1.2 * dir, 0.0) * 0.3125;
  acc += textureSampleLevel(src, smp, uv - 1.2 * dir, 0.0) * 0.3125;
  textureStore(dst, id.xy, acc);
}
"""

STORE = """
@group(0) @binding(0) var<storage, read> vals: array<VEC>;
@group(0) @binding(1) var img: texture_storage_2d<FORMAT, write>;
@compute @workgroup_size(8, 8)
fn main(@builtin(local_invocation_id) id: vec3u) {
  textureStore(img, id.xy, vals[id.y * 8u + id.x]);
}
"""

GATHER = """
@group(0) @binding(0) var t: texture_2d<u32>;
@group(0) @binding(1) var f: texture_2d<f32>;
@group(0) @binding(2) var s: sampler;
@group(0) @binding(3) var<storage, read> uv: array<vec2f>;
@group(0) @binding(4) var<storage, read_write> out: array<vec4u>;
@group(0) @binding(5) var<storage, read_write> outf: array<vec4f>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
  out[id.x] = textureGather(1, t, s, uv[id.x], vec2i(-1, 2));
  outf[id.x] = textureGather(3, f, s, uv[id.x]);
}
"""

COMPARE = """
@group(0) @binding(0) var d: texture_depth_2d;
@group(0) @binding(1) var s: sampler_comparison;
@group(0) @binding(2) var<storage, read> uvref: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4f>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
  let p = uvref[id.x];
  let g = textureGatherCompare(d, s, p.xy, p.z);
  out[2u * id.x] = g;
  out[2u * id.x + 1u] = vec4f(textureSampleCompareLevel(d, s, p.xy, p.z), 0.0, 0.0, 0.0);
}
"""

CUBE = """
@group(0) @binding(0) var c: texture_cube<f32>;
@group(0) @binding(1) var s: sampler;
@group(0) @binding(2) var<storage, read> dir: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4f>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
  out[id.x] = textureSampleLevel(c, s, dir[id.x].xyz, 0.0);
}
"""

MIPS = """
@group(0) @binding(0) var t: texture_2d<f32>;
@group(0) @binding(1) var s: sampler;
@group(0) @binding(2) var<storage, read> uvl: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4f>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
  let p = uvl[id.x];
  out[id.x] = textureSampleLevel(t, s, p.xy, p.z);
}
"""

SRGB = """
@group(0) @binding(0) var t: texture_2d<f32>;
@group(0) @binding(1) var s: sampler;
@group(0) @binding(2) var<storage, read> uv: array<vec2f>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4f>;
@compute @workgroup_size(16, 16)
fn main(@builtin(local_invocation_id) id: vec3u) {
  let i = id.y * 16u + id.x;
  out[2u * i] = textureLoad(t, id.xy, 0);
  out[2u * i + 1u] = textureSampleLevel(t, s, uv[i], 0.0);
}
"""

LINEAR = dict(mag_filter="linear", min_filter="linear")
# The storage formats every WebGPU device writes (the core set; the r8/rg8/r16/rg16/rgb10a2/
# rg11b10 formats need texture-formats-tier1, bgra8unorm needs bgra8unorm-storage)
CORE_STORAGE = ("rgba8unorm", "rgba8snorm", "rgba8uint", "rgba8sint", "rgba16uint", "rgba16sint",
                "rgba16float", "r32uint", "r32sint", "r32float", "rg32uint", "rg32sint", "rg32float",
                "rgba32uint", "rgba32sint", "rgba32float")


def _image(rng, h, w, dtype):
    if dtype == np.uint8:
        return rng.integers(0, 256, (h, w, 4), dtype=np.uint8)
    return rng.uniform(-2, 2, (h, w, 4)).astype(dtype)


def _store_values(fmt: str, rng) -> np.ndarray:
    """64 texels of values for `fmt`: in range, with the half-way cases of normalized formats."""
    from emu.numerics.texels import FORMATS
    f = FORMATS[fmt]
    if f.kind in ("uint", "sint"):
        hi = 1 << min(f.bits[0], 31)
        lo = -(hi // 2) if f.kind == "sint" else 0
        hi = hi // 2 if f.kind == "sint" else hi
        v = rng.integers(lo, hi, (64, 4), dtype=np.int64)
        return v.astype(np.int32 if f.kind == "sint" else np.uint32)
    lo = -1.0 if f.kind == "snorm" else 0.0 if f.kind == "unorm" else -70000.0
    hi = 1.0 if f.kind in ("unorm", "snorm") else 70000.0
    v = rng.uniform(lo - 0.1 * (hi - lo), hi + 0.1 * (hi - lo), (64, 4)).astype(np.float32)
    if f.kind in ("unorm", "snorm"):
        m = 255 if f.kind == "unorm" else 127
        ties = ((rng.integers(0, m, 16) + 0.5) / m).astype(np.float32)      # k + 0.5 after x * m in f32
        v[:16, 0] = ties
        v[16:32, 1] = np.array([0.5, 1 / 3, 2 / 3, 0.25, 0.75, 0.1, 0.9, 0.999, 0.001, 0, 1, -0.0, 0.6, 0.4, 0.2, 0.8],
                               np.float32)
    return v


def cases():
    """[(name, dict of run_on_adapter's arguments, profile knobs)], deterministic."""
    rng = np.random.default_rng(20261201)
    out = []
    for name, dtype, fmt in (("blur_f16", np.float16, "rgba16float"), ("blur_unorm8", np.uint8, "rgba8unorm")):
        img = _image(rng, 16, 32, dtype)      # power-of-two sizes: 1 / size is exact everywhere
        for vertical in (False, True):
            out.append((f"{name}_{'v' if vertical else 'h'}", dict(
                source=BLUR, dispatch=(4, 2, 1), overrides={"VERTICAL": vertical},
                textures={(0, 0): HwTexture(fmt, (32, 16, 1), (img.tobytes(),)),
                          (0, 2): HwTexture("rgba16float", (32, 16, 1), (bytes(32 * 16 * 8),))},
                samplers={(0, 1): LINEAR})))
    for fmt in CORE_STORAGE:
        v = _store_values(fmt, rng)
        from emu.numerics.texels import FORMATS
        f = FORMATS[fmt]
        vec = {"f32": "vec4f", "i32": "vec4i", "u32": "vec4u"}[f.sampled]
        out.append((f"store_{fmt}", dict(
            source=STORE.replace("VEC", vec).replace("FORMAT", fmt), dispatch=(1, 1, 1),
            buffers={(0, 0): v},
            textures={(0, 1): HwTexture(fmt, (8, 8, 1), (bytes(64 * f.bytes),))})))
    n = 256
    uv = rng.uniform(-1.5, 2.5, (n, 2)).astype(np.float32)
    uv[:64] = (np.floor(uv[:64] * 8) / 8 + 1 / 16).astype(np.float32)      # texel centres: exact footprints
    texu = rng.integers(0, 1 << 32, (8, 8, 4), dtype=np.uint64).astype(np.uint32)
    texf = rng.uniform(-1, 1, (8, 8, 4)).astype(np.float32)
    out.append(("gather", dict(
        source=GATHER, dispatch=(n // 64, 1, 1),
        buffers={(0, 3): uv, (0, 4): np.zeros((n, 4), np.uint32), (0, 5): np.zeros((n, 4), np.float32)},
        textures={(0, 0): HwTexture("rgba32uint", (8, 8, 1), (texu.tobytes(),)),
                  (0, 1): HwTexture("rgba32float", (8, 8, 1), (texf.tobytes(),))},
        samplers={(0, 2): dict(address_mode_u="repeat", address_mode_v="mirror-repeat")})))
    depth = rng.integers(0, 1 << 16, (8, 8), dtype=np.uint16)
    uvref = np.zeros((n, 4), np.float32)
    # texel centres and half-texel points (weights 0, 1/2), references on and between the texels
    uvref[:, :2] = ((rng.integers(0, 16, (n, 2)) + 0.5) / 16).astype(np.float32)
    uvref[:, 2] = np.where(rng.random(n) < 0.5, depth.reshape(-1)[rng.integers(0, 64, n)] / 65535.0,
                           rng.random(n)).astype(np.float32)
    out.append(("compare", dict(
        source=COMPARE, dispatch=(n // 64, 1, 1),
        buffers={(0, 2): uvref, (0, 3): np.zeros((2 * n, 4), np.float32)},
        textures={(0, 0): HwTexture("depth16unorm", (8, 8, 1), (depth.tobytes(),))},
        samplers={(0, 1): dict(compare="less-equal", **LINEAR)})))
    faces = rng.uniform(-1, 1, (6, 4, 4, 4)).astype(np.float32)
    d = rng.normal(size=(n, 4)).astype(np.float32)
    out.append(("cube", dict(
        source=CUBE, dispatch=(n // 64, 1, 1),
        buffers={(0, 2): d, (0, 3): np.zeros((n, 4), np.float32)},
        textures={(0, 0): HwTexture("rgba32float", (4, 4, 6), (faces.tobytes(),), view="cube")},
        samplers={(0, 1): {}})))
    levels = [rng.uniform(0, 1, (max(1, 16 >> k), max(1, 16 >> k), 4)).astype(np.float16) for k in range(5)]
    uvl = np.zeros((n, 4), np.float32)
    uvl[:, :2] = ((rng.integers(0, 16, (n, 2)) + 0.5) / 16).astype(np.float32)
    uvl[:, 2] = (rng.integers(0, 5 * 16, n) / 16).astype(np.float32)           # lods on a 1/16 grid
    for mip in ("nearest", "linear"):
        out.append((f"mips_{mip}", dict(
            source=MIPS, dispatch=(n // 64, 1, 1),
            buffers={(0, 2): uvl, (0, 3): np.zeros((n, 4), np.float32)},
            textures={(0, 0): HwTexture("rgba16float", (16, 16, 1), tuple(x.tobytes() for x in levels))},
            samplers={(0, 1): dict(mipmap_filter=mip)})))
    return out


STORE_MANY = """
@group(0) @binding(0) var<storage, read> v: array<vec4f>;
@group(0) @binding(1) var img: texture_storage_2d<FORMAT, write>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
  textureStore(img, vec2u(id.x % 64u, id.x / 64u), v[id.x]);
}"""


def _steps(kind: str) -> np.ndarray:
    """Every multiple of 2^-12 in [0, 1] (unorm) or of 2^-11 in [-1, 1] (snorm), each also half and
    0.999 of a step higher, as (n, 4) f32 (n a multiple of 64)."""
    k, top = (12, 4096) if kind == "unorm" else (11, 2048)
    q = np.arange(top + 1, dtype=np.float64)
    x = np.concatenate([q, q + 0.5, q + 0.999]) / (1 << k)
    if kind == "snorm":
        x = np.concatenate([x, -x])
    x = np.clip(x, -1, 1).astype(np.float32)
    return np.resize(x, -(-x.size // 256) * 256).reshape(-1, 4)


def _face_directions(face, sc, tc):
    """Directions (n, 4) that hit cube face `face` at face coordinates (sc, tc) in [-1, 1]."""
    one = np.ones(len(face))
    axes = {0: (one, -tc, -sc), 1: (-one, -tc, sc), 2: (sc, one, tc), 3: (sc, -one, -tc), 4: (sc, -tc, one),
            5: (-sc, -tc, -one)}
    return np.stack([np.choose(face, [axes[f][k] for f in range(6)]) for k in range(3)] + [np.zeros(len(face))], 1)


def new_cases():
    """Cases not yet recorded on the H200 (lavapipe runs them in CI): linear cube filtering across
    face edges and corners; 8-bit normalized stores of every 12-bit step; 8-bit unorm filtering in
    2-D and between mip levels; f16 filtering in 1-D and 2-D; an sRGB texture holding every value in each channel, read by
    textureLoad and filtered between texels."""
    rng = np.random.default_rng(20261202)
    c = np.arange(256)
    img = np.stack([c, 255 - c, (c * 7) % 256, c], axis=1).astype(np.uint8).reshape(16, 16, 4)
    uv = rng.uniform(0, 1, (256, 2)).astype(np.float32)
    # cube directions near the face edges and corners (face coordinates within 1/4 of a texel..2 texels
    # of an edge), filtered linearly across the edges; faces 4x4, every texel its own value
    n = 256
    d = _near_cube_edges(rng, n, 0.5, 0.7, 0.2)
    faces = rng.uniform(-1, 1, (6, 4, 4, 4)).astype(np.float16)
    cube = ("cube_edges", dict(
        source=CUBE, dispatch=(n // 64, 1, 1),
        buffers={(0, 2): d.astype(np.float32), (0, 3): np.zeros((n, 4), np.float32)},
        textures={(0, 0): HwTexture("rgba16float", (4, 4, 6), (faces.tobytes(),), view="cube")},
        samplers={(0, 1): LINEAR}))
    out = [cube]
    # 8-bit normalized stores over every 12-bit (unorm) / sign and 11-bit (snorm) step, each also half
    # and almost a whole step higher; 8-bit unorm filtering in 2-D and across two mip levels
    for fmt, kind in (("rgba8unorm", "unorm"), ("rgba8snorm", "snorm")):
        v = _steps(kind)
        h = v.shape[0] // 64
        out.append((f"store_steps_{fmt}", dict(
            source=STORE_MANY.replace("FORMAT", fmt), dispatch=(h, 1, 1), buffers={(0, 0): v},
            textures={(0, 1): HwTexture(fmt, (64, h, 1), (bytes(64 * h * 4),))})))
    uvl = np.zeros((4096, 4), np.float32)
    uvl[:, :2] = rng.uniform(0.2, 0.8, (4096, 2)).astype(np.float32)
    four = rng.integers(0, 256, (2, 2, 4), dtype=np.uint8)
    out.append(("unorm8_2d", dict(
        source=MIPS, dispatch=(64, 1, 1), buffers={(0, 2): uvl.copy(), (0, 3): np.zeros((4096, 4), np.float32)},
        textures={(0, 0): HwTexture("rgba8unorm", (2, 2, 1), (four.tobytes(),))}, samplers={(0, 1): LINEAR})))
    uvl[:, 2] = rng.uniform(0, 1, 4096).astype(np.float32)
    lv = [rng.integers(0, 256, (2, 2, 4), dtype=np.uint8), rng.integers(0, 256, (1, 1, 4), dtype=np.uint8)]
    out.append(("unorm8_mips", dict(
        source=MIPS, dispatch=(64, 1, 1), buffers={(0, 2): uvl, (0, 3): np.zeros((4096, 4), np.float32)},
        textures={(0, 0): HwTexture("rgba8unorm", (2, 2, 1), tuple(x.tobytes() for x in lv))},
        samplers={(0, 1): dict(mipmap_filter="linear", **LINEAR)})))
    # f16 texels filtered linearly along one axis (u random, v at a row's centre) and in 2-D
    for name, h in (("f16_filter_1d", 1), ("f16_filter_2d", 4)):
        img16 = rng.uniform(-2, 2, (h, 64, 4)).astype(np.float16)
        uvf = np.zeros((4096, 4), np.float32)
        uvf[:, 0] = rng.uniform(0, 1, 4096).astype(np.float32)
        uvf[:, 1] = rng.uniform(0, 1, 4096).astype(np.float32) if h > 1 else 0.5
        out.append((name, dict(
            source=MIPS, dispatch=(64, 1, 1), buffers={(0, 2): uvf, (0, 3): np.zeros((4096, 4), np.float32)},
            textures={(0, 0): HwTexture("rgba16float", (64, h, 1), (img16.tobytes(),))}, samplers={(0, 1): LINEAR})))
    return out + [("srgb", dict(
        source=SRGB, dispatch=(1, 1, 1),
        buffers={(0, 2): uv, (0, 3): np.zeros((512, 4), np.float32)},
        textures={(0, 0): HwTexture("rgba8unorm-srgb", (16, 16, 1), (img.tobytes(),))},
        samplers={(0, 1): LINEAR}))]


VOLUME = MIPS.replace("texture_2d<f32>", "texture_3d<f32>").replace("p.xy, p.z", "p.xyz, 0.0")   # at (u, v, w)


def _near_cube_edges(rng, n, near_from, sc_below, tc_below):
    """n directions (n, 4) whose face coordinates lie within near_from..1 of an edge: sc for a share
    sc_below of them, tc for tc_below of those and for the rest (those near a corner too)."""
    face = rng.integers(0, 6, n)
    sc, tc = rng.uniform(-1, 1, (2, n))
    near = rng.uniform(near_from, 1, (2, n))
    kind = rng.random(n)
    sc = np.where(kind < sc_below, np.sign(sc) * near[0], sc)
    tc = np.where((kind < tc_below) | (kind > sc_below), np.sign(tc) * near[1], tc)
    return _face_directions(face, sc, tc)


def _srgb_grid(uv, codes):
    """The SRGB kernel over a 16x16 sRGB texture of `codes`: every texel loaded, and sampled at `uv`."""
    return dict(source=SRGB, dispatch=(1, 1, 1),
                buffers={(0, 2): uv.astype(np.float32), (0, 3): np.zeros((512, 4), np.float32)},
                textures={(0, 0): HwTexture("rgba8unorm-srgb", (16, 16, 1), (codes.tobytes(),))}, samplers={(0, 1): LINEAR})


def _sample(fmt, levels, size, uvl, sampler, source=MIPS, dimension="2d"):
    return dict(source=source, dispatch=(len(uvl) // 64, 1, 1),
                buffers={(0, 2): uvl.astype(np.float32), (0, 3): np.zeros((len(uvl), 4), np.float32)},
                textures={(0, 0): HwTexture(fmt, size, tuple(x.tobytes() for x in levels), dimension)},
                samplers={(0, 1): sampler})


def held_out_cases():
    """The rules fitted on new_cases() (integer weights, the coordinate clamp at edges, aligned f16 and
    sRGB sums, cube corners by thirds) checked on other inputs: other seeds, sizes (not powers of
    two), coordinates past the edges, three mip levels, cube faces of 8 texels and of rgba8unorm,
    random sRGB codes and every code along a row, f16 texels over 12 binades; and what no case
    measured yet: f16 between two mip levels, repeat and mirror-repeat with the integer weights,
    rgba8snorm filtering, a 3-D texture."""
    rng = np.random.default_rng(20261203)
    out = []
    n = 512
    for name, fmt, dtype in (("cube_edges_8", "rgba16float", np.float16), ("cube_edges_unorm8", "rgba8unorm", np.uint8)):
        side = 8 if dtype == np.float16 else 3
        faces = rng.uniform(-1, 1, (6, side, side, 4)).astype(dtype) if dtype == np.float16 else \
            rng.integers(0, 256, (6, side, side, 4), dtype=np.uint8)
        out.append((name, dict(
            source=CUBE, dispatch=(n // 64, 1, 1),
            buffers={(0, 2): (_near_cube_edges(rng, n, 0.6, 0.66, 0.33)
                              * rng.uniform(0.5, 3, (n, 1))).astype(np.float32),
                     (0, 3): np.zeros((n, 4), np.float32)},
            textures={(0, 0): HwTexture(fmt, (side, side, 6), (faces.tobytes(),), view="cube")},
            samplers={(0, 1): LINEAR})))
    m = 4096
    uvl = np.zeros((m, 4), np.float32)
    uvl[:, :2] = rng.uniform(-0.2, 1.2, (m, 2))
    out.append(("unorm8_2d_5x3", _sample("rgba8unorm", [rng.integers(0, 256, (3, 5, 4), dtype=np.uint8)], (5, 3, 1),
                                         uvl, LINEAR)))
    uvl = np.zeros((m, 4), np.float32)
    uvl[:, :2] = rng.uniform(-0.1, 1.1, (m, 2))
    uvl[:, 2] = rng.uniform(-0.5, 2.5, m)
    lv = [rng.integers(0, 256, (4 >> k, 4 >> k, 4), dtype=np.uint8) for k in range(3)]
    out.append(("unorm8_mips_3", _sample("rgba8unorm", lv, (4, 4, 1), uvl, dict(mipmap_filter="linear", **LINEAR))))
    lv16 = [(rng.uniform(-2, 2, (4 >> k, 4 >> k, 4)) * 2.0 ** rng.integers(-6, 4, (4 >> k, 4 >> k, 4))).astype(np.float16)
            for k in range(3)]
    out.append(("f16_mips_3", _sample("rgba16float", lv16, (4, 4, 1), uvl, dict(mipmap_filter="linear", **LINEAR))))
    uvf = np.zeros((m, 4), np.float32)
    uvf[:, 0] = rng.uniform(-0.05, 1.05, m)
    uvf[:, 1] = 0.5
    row = (rng.uniform(-2, 2, (1, 37, 4)) * 2.0 ** rng.integers(-8, 6, (1, 37, 4))).astype(np.float16)
    out.append(("f16_filter_1d_37", _sample("rgba16float", [row], (37, 1, 1), uvf, LINEAR)))
    uvf = np.zeros((m, 4), np.float32)
    uvf[:, :2] = rng.uniform(-0.05, 1.05, (m, 2))
    img = (rng.uniform(-2, 2, (7, 13, 4)) * 2.0 ** rng.integers(-8, 4, (7, 13, 4))).astype(np.float16)
    out.append(("f16_filter_2d_13x7", _sample("rgba16float", [img], (13, 7, 1), uvf, LINEAR)))
    codes = rng.integers(0, 256, (16, 16, 4), dtype=np.uint8)
    out.append(("srgb_random", _srgb_grid(rng.uniform(-0.1, 1.1, (256, 2)), codes)))
    c = np.arange(256)
    line = np.stack([c, (c * 37) % 256, 255 - c, c], 1).astype(np.uint8).reshape(1, 256, 4)
    uvl = np.zeros((m, 4), np.float32)
    uvl[:, 0], uvl[:, 1] = rng.uniform(0, 1, m), 0.5
    out.append(("srgb_1d", _sample("rgba8unorm-srgb", [line], (256, 1, 1), uvl, LINEAR)))
    uvl = np.zeros((m, 4), np.float32)
    uvl[:, :2] = rng.uniform(-1.5, 2.5, (m, 2))
    wrap = dict(address_mode_u="repeat", address_mode_v="mirror-repeat", **LINEAR)
    out.append(("unorm8_repeat_3x3", _sample("rgba8unorm", [rng.integers(0, 256, (3, 3, 4), dtype=np.uint8)], (3, 3, 1),
                                             uvl, wrap)))
    uvl = np.zeros((m, 4), np.float32)
    uvl[:, :2] = rng.uniform(-0.1, 1.1, (m, 2))
    out.append(("snorm8_2d", _sample("rgba8snorm", [rng.integers(0, 256, (4, 4, 4), dtype=np.uint8)], (4, 4, 1),
                                     uvl, LINEAR)))
    uvw = np.zeros((m, 4), np.float32)
    uvw[:, :3] = rng.uniform(-0.1, 1.1, (m, 3))
    vol = rng.integers(0, 256, (3, 3, 3, 4), dtype=np.uint8)
    out.append(("unorm8_3d", _sample("rgba8unorm", [vol], (3, 3, 3), uvw, LINEAR, VOLUME, "3d")))
    return out


def confirm_cases():
    """A second held-out set, recorded after the rules were fitted on held_out_cases() too: a new
    seed, other non-power-of-two sizes (cube faces of 6, a 4-level mip chain from 8x6), coordinates
    and levels of detail past the ends; and two probes for what is left: sRGB and rgba8snorm pairs
    of random codes filtered at 16 weights each."""
    rng = np.random.default_rng(20261204)
    out, m, n = [], 4096, 512
    faces = (rng.uniform(-2, 2, (6, 6, 6, 4)) * 2.0 ** rng.integers(-6, 3, (6, 6, 6, 4))).astype(np.float16)
    out.append(("cube_edges_6", dict(
        source=CUBE, dispatch=(n // 64, 1, 1),
        buffers={(0, 2): (_near_cube_edges(rng, n, 0.7, 0.6, 0.3)
                          * rng.uniform(0.2, 5, (n, 1))).astype(np.float32), (0, 3): np.zeros((n, 4), np.float32)},
        textures={(0, 0): HwTexture("rgba16float", (6, 6, 6), (faces.tobytes(),), view="cube")},
        samplers={(0, 1): LINEAR})))
    uvl = np.zeros((m, 4), np.float32)
    uvl[:, :2] = rng.uniform(-0.3, 1.3, (m, 2))
    out.append(("unorm8_2d_7x5", _sample("rgba8unorm", [rng.integers(0, 256, (5, 7, 4), dtype=np.uint8)], (7, 5, 1),
                                         uvl, LINEAR)))
    chain = [(8, 6), (4, 3), (2, 1), (1, 1)]
    uvl = np.zeros((m, 4), np.float32)
    uvl[:, :2] = rng.uniform(-0.1, 1.1, (m, 2))
    uvl[:, 2] = rng.uniform(-1, 3.5, m)
    lv = [rng.integers(0, 256, (h, w, 4), dtype=np.uint8) for w, h in chain]
    out.append(("unorm8_mips_8x6", _sample("rgba8unorm", lv, (8, 6, 1), uvl, dict(mipmap_filter="linear", **LINEAR))))
    lv16 = [(rng.uniform(-2, 2, (h, w, 4)) * 2.0 ** rng.integers(-7, 5, (h, w, 4))).astype(np.float16) for w, h in chain]
    out.append(("f16_mips_8x6", _sample("rgba16float", lv16, (8, 6, 1), uvl, dict(mipmap_filter="linear", **LINEAR))))
    uvf = np.zeros((m, 4), np.float32)
    uvf[:, 0], uvf[:, 1] = rng.uniform(-0.1, 1.1, m), 0.5
    row = (rng.uniform(-2, 2, (1, 53, 4)) * 2.0 ** rng.integers(-9, 5, (1, 53, 4))).astype(np.float16)
    out.append(("f16_filter_1d_53", _sample("rgba16float", [row], (53, 1, 1), uvf, LINEAR)))
    uvf = np.zeros((m, 4), np.float32)
    uvf[:, :2] = rng.uniform(-0.1, 1.1, (m, 2))
    img = (rng.uniform(-2, 2, (11, 19, 4)) * 2.0 ** rng.integers(-9, 5, (11, 19, 4))).astype(np.float16)
    out.append(("f16_filter_2d_19x11", _sample("rgba16float", [img], (19, 11, 1), uvf, LINEAR)))
    out.append(("srgb_random_2", _srgb_grid(rng.uniform(-0.2, 1.2, (256, 2)), rng.integers(0, 256, (16, 16, 4), dtype=np.uint8))))
    uvw = np.zeros((m, 4), np.float32)
    uvw[:, :3] = rng.uniform(-0.2, 1.2, (m, 3))
    out.append(("unorm8_3d_5x4x3", _sample("rgba8unorm", [rng.integers(0, 256, (3, 4, 5, 4), dtype=np.uint8)], (5, 4, 3),
                                           uvw, LINEAR, VOLUME, "3d")))
    uvl = np.zeros((m, 4), np.float32)
    uvl[:, :2] = rng.uniform(-2, 3, (m, 2))
    mirror = dict(address_mode_u="mirror-repeat", address_mode_v="repeat", **LINEAR)
    out.append(("unorm8_mirror_5x5", _sample("rgba8unorm", [rng.integers(0, 256, (5, 5, 4), dtype=np.uint8)], (5, 5, 1),
                                             uvl, mirror)))
    # pairs: texels 2k and 2k + 1 of a 512-texel row of random codes, each pair at 16 weights
    k = np.repeat(np.arange(256), 16)
    uvl = np.zeros((m, 4), np.float32)
    uvl[:, 0], uvl[:, 1] = (2 * k + 0.5 + rng.integers(1, 256, m) / 256 + 1 / 1024) / 512, 0.5
    for name, fmt in (("srgb_pairs", "rgba8unorm-srgb"), ("snorm8_pairs", "rgba8snorm")):
        codes = rng.integers(0, 256, (1, 512, 4), dtype=np.uint8)
        out.append((name, _sample(fmt, [codes], (512, 1, 1), uvl, LINEAR)))
    return out


def final_cases():
    """The last held-out set, for the rules fitted on confirm_cases()'s probes: the sRGB exponents and
    the snorm16 result, on a new seed: random sRGB codes in 2-D and across three mip levels, new sRGB
    code pairs, an rgba8snorm texture of 6x5 past its edges."""
    rng = np.random.default_rng(20261205)
    out, m = [], 4096
    out.append(("srgb_random_3", _srgb_grid(rng.uniform(-0.2, 1.2, (256, 2)), rng.integers(0, 256, (16, 16, 4), dtype=np.uint8))))
    uvl = np.zeros((m, 4), np.float32)
    uvl[:, :2] = rng.uniform(-0.1, 1.1, (m, 2))
    uvl[:, 2] = rng.uniform(-0.5, 2.5, m)
    lv = [rng.integers(0, 256, (8 >> k, 8 >> k, 4), dtype=np.uint8) for k in range(3)]
    out.append(("srgb_mips_3", _sample("rgba8unorm-srgb", lv, (8, 8, 1), uvl, dict(mipmap_filter="linear", **LINEAR))))
    k = np.repeat(np.arange(256), 16)
    uvl = np.zeros((m, 4), np.float32)
    uvl[:, 0], uvl[:, 1] = (2 * k + 0.5 + rng.integers(1, 256, m) / 256 + 1 / 1024) / 512, 0.5
    out.append(("srgb_pairs_2", _sample("rgba8unorm-srgb", [rng.integers(0, 256, (1, 512, 4), dtype=np.uint8)], (512, 1, 1),
                                        uvl, LINEAR)))
    uvl = np.zeros((m, 4), np.float32)
    uvl[:, :2] = rng.uniform(-0.2, 1.2, (m, 2))
    out.append(("snorm8_2d_6x5", _sample("rgba8snorm", [rng.integers(0, 256, (5, 6, 4), dtype=np.uint8)], (6, 5, 1),
                                         uvl, LINEAR)))
    return out


GRAD_2D = """
@group(0) @binding(0) var t: texture_2d<f32>;
@group(0) @binding(1) var s: sampler;
@group(0) @binding(2) var<storage, read> q: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4f>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
  let p = q[2u * id.x];
  let g = q[2u * id.x + 1u];
  out[id.x] = textureSampleGrad(t, s, p.xy, g.xy, g.zw);
}
"""
GRAD_3D = """
@group(0) @binding(0) var t: texture_3d<f32>;
@group(0) @binding(1) var s: sampler;
@group(0) @binding(2) var<storage, read> q: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4f>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
  let p = q[3u * id.x];
  out[id.x] = textureSampleGrad(t, s, p.xyz, q[3u * id.x + 1u].xyz, q[3u * id.x + 2u].xyz);
}
"""
GRAD_CUBE = GRAD_3D.replace("texture_3d", "texture_cube")
VOLUME_LEVEL = MIPS.replace("texture_2d<f32>", "texture_3d<f32>").replace("p.xy, p.z", "p.xyz, p.w")   # (u, v, w, level)
LAYERS = """
@group(0) @binding(0) var t: texture_2d_array<f32>;
@group(0) @binding(1) var s: sampler;
@group(0) @binding(2) var<storage, read> uvl: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4f>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
  let p = uvl[id.x];
  out[id.x] = textureSampleLevel(t, s, p.xy, i32(p.z), p.w);
}
"""
CUBE_GATHER = """
@group(0) @binding(0) var c: texture_cube<f32>;
@group(0) @binding(1) var s: sampler;
@group(0) @binding(2) var<storage, read> dir: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4f>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
  out[id.x] = textureGather(1, c, s, dir[id.x].xyz);
}
"""
CUBE_LEVEL = CUBE.replace("dir[id.x].xyz, 0.0", "dir[id.x].xyz, dir[id.x].w")


SHORT = {"rgba8unorm": "unorm8", "rgba16float": "f16", "rgba8snorm": "snorm8", "rgba8unorm-srgb": "srgb"}


def _chain(w, h, d=1):
    """A full mip chain's sizes from (w, h, d)."""
    out = [(w, h, d)]
    while out[-1] != (1, 1, 1):
        w, h, d = max(1, w // 2), max(1, h // 2), max(1, d // 2)
        out.append((w, h, d))
    return out


def _texels(rng, fmt, shape):
    """Random texels of `shape` (+ 4 channels): 8-bit codes, or f16 over 10 binades."""
    if fmt == "rgba16float":
        return (rng.uniform(-2, 2, shape + (4,)) * 2.0 ** rng.integers(-6, 4, shape + (4,))).astype(np.float16)
    return rng.integers(0, 256, shape + (4,), dtype=np.uint8)


def _grads(rng, m, n, lo=-7, hi=0):
    """m pairs of random gradients of n components, each pair scaled by 2^uniform(lo, hi)."""
    return [rng.uniform(-1, 1, (m, n)) * 2.0 ** rng.uniform(lo, hi, (m, 1)) for _ in range(2)]


def _volume_and_grad_cases(rng, formats, m=4096):
    """3-D textures with mip chains (linear and nearest mips, levels of detail past both ends) and
    textureSampleGrad in 2-D, 3-D and on cubes, per format."""
    out = []
    for fmt in formats:
        t = SHORT[fmt]
        for (w, h, d), mip in (((8, 8, 8), "linear"), ((6, 5, 3), "linear"), ((8, 4, 2), "nearest")):
            lv = [_texels(rng, fmt, (dd, hh, ww)) for ww, hh, dd in _chain(w, h, d)]
            q = np.zeros((m, 4), np.float32)
            q[:, :3], q[:, 3] = rng.uniform(-0.1, 1.1, (m, 3)), rng.uniform(-0.5, 4, m)
            out.append((f"{t}_3d_mips_{w}x{h}x{d}_{mip}", _sample(fmt, lv, (w, h, d), q, dict(mipmap_filter=mip, **LINEAR),
                                                                 VOLUME_LEVEL, "3d")))
        lv = [_texels(rng, fmt, (hh, ww)) for ww, hh, _ in _chain(16, 8)]
        q = np.zeros((2 * m, 4), np.float32)
        q[0::2, :2] = rng.uniform(-0.1, 1.1, (m, 2))
        q[1::2, :2], q[1::2, 2:] = _grads(rng, m, 2)
        c = _sample(fmt, lv, (16, 8, 1), q, dict(mipmap_filter="linear", **LINEAR), GRAD_2D)
        c.update(dispatch=(m // 64, 1, 1)), c["buffers"].update({(0, 3): np.zeros((m, 4), np.float32)})
        out.append((f"{t}_grad_2d", c))
        lv = [_texels(rng, fmt, (dd, hh, ww)) for ww, hh, dd in _chain(8, 8, 4)]
        q = np.zeros((3 * m, 4), np.float32)
        q[0::3, :3] = rng.uniform(-0.1, 1.1, (m, 3))
        q[1::3, :3], q[2::3, :3] = _grads(rng, m, 3, -6)
        c = _sample(fmt, lv, (8, 8, 4), q, dict(mipmap_filter="linear", **LINEAR), GRAD_3D, "3d")
        c.update(dispatch=(m // 64, 1, 1)), c["buffers"].update({(0, 3): np.zeros((m, 4), np.float32)})
        out.append((f"{t}_grad_3d", c))
        n = 512
        lv = [_texels(rng, fmt, (6, k, k)) for k in (8, 4, 2, 1)]
        q = np.zeros((3 * n, 4), np.float32)
        q[0::3, :3] = rng.normal(size=(n, 3))
        q[1::3, :3], q[2::3, :3] = _grads(rng, n, 3, -6)
        out.append((f"{t}_grad_cube", dict(
            source=GRAD_CUBE, dispatch=(n // 64, 1, 1), buffers={(0, 2): q, (0, 3): np.zeros((n, 4), np.float32)},
            textures={(0, 0): HwTexture(fmt, (8, 8, 6), tuple(x.tobytes() for x in lv), view="cube")},
            samplers={(0, 1): dict(mipmap_filter="linear", **LINEAR)})))
    return out


def lavapipe_cases():
    """Case kinds that found where the lavapipe profile missed llvmpipe (counts in
    test_textures_hw.py): repeat and mirror-repeat at power-of-two and other sizes, min and mag
    filters that differ, array layers, linear and gathered cubes at faces of 3, 4 and 8 texels and
    across mip levels, rgba8snorm and sRGB filtering with every address mode, 3-D textures with
    mips and textureSampleGrad; for rgba8unorm (llvmpipe's fixed-point path where it applies) and
    rgba16float."""
    rng = np.random.default_rng(20261206)
    m, n, out = 4096, 512, []

    def coords(lo, hi, k=2):
        q = np.zeros((m, 4), np.float32)
        q[:, :k] = rng.uniform(lo, hi, (m, k))
        return q
    for fmt in ("rgba8unorm", "rgba16float"):
        t = SHORT[fmt]
        for mode, (w, h) in (("repeat", (5, 3)), ("repeat", (4, 4)), ("mirror-repeat", (5, 3)), ("mirror-repeat", (4, 8))):
            smp = dict(address_mode_u=mode, address_mode_v=mode, **LINEAR)
            out.append((f"{t}_{mode}_{w}x{h}", _sample(fmt, [_texels(rng, fmt, (h, w))], (w, h, 1), coords(-2.5, 3.5), smp)))
        smp = dict(address_mode_u="repeat", address_mode_v="clamp-to-edge", **LINEAR)
        out.append((f"{t}_repeat_clamp_7x5", _sample(fmt, [_texels(rng, fmt, (5, 7))], (7, 5, 1), coords(-2.5, 3.5), smp)))
        lv = [_texels(rng, fmt, (hh, ww)) for ww, hh, _ in _chain(8, 8)]
        for mag, mn in (("nearest", "linear"), ("linear", "nearest")):
            q = coords(-0.1, 1.1)
            q[:, 2] = rng.uniform(-1, 4, m)
            out.append((f"{t}_mag_{mag}_min_{mn}", _sample(fmt, lv, (8, 8, 1), q,
                                                           dict(mag_filter=mag, min_filter=mn, mipmap_filter="linear"))))
        q = coords(-0.2, 1.2)
        q[:, 2], q[:, 3] = rng.integers(-1, 7, m), rng.uniform(-0.5, 4, m)
        c = _sample(fmt, [_texels(rng, fmt, (5, hh, ww)) for ww, hh, _ in _chain(8, 8)], (8, 8, 5), q,
                    dict(mipmap_filter="linear", **LINEAR), LAYERS)
        c["textures"][(0, 0)] = HwTexture(fmt, (8, 8, 5), c["textures"][(0, 0)].levels, view="2d-array")
        out.append((f"{t}_layers_5", c))
        for side in (3, 4, 8):
            faces = _texels(rng, fmt, (6, side, side))
            d = (_near_cube_edges(rng, n, 0.6, 0.66, 0.33) * rng.uniform(0.5, 3, (n, 1))).astype(np.float32)
            for name, src in (("cube", CUBE), ("cube_gather", CUBE_GATHER)):
                out.append((f"{t}_{name}_{side}", dict(
                    source=src, dispatch=(n // 64, 1, 1), buffers={(0, 2): d, (0, 3): np.zeros((n, 4), np.float32)},
                    textures={(0, 0): HwTexture(fmt, (side, side, 6), (faces.tobytes(),), view="cube")},
                    samplers={(0, 1): LINEAR})))
        lv = [_texels(rng, fmt, (6, k, k)) for k in (8, 4, 2, 1)]
        d = rng.normal(size=(n, 4)).astype(np.float32)
        d[:, 3] = rng.uniform(-0.5, 3.5, n)
        out.append((f"{t}_cube_mips", dict(
            source=CUBE_LEVEL, dispatch=(n // 64, 1, 1), buffers={(0, 2): d, (0, 3): np.zeros((n, 4), np.float32)},
            textures={(0, 0): HwTexture(fmt, (8, 8, 6), tuple(x.tobytes() for x in lv), view="cube")},
            samplers={(0, 1): dict(mipmap_filter="linear", **LINEAR)})))
    for fmt in ("rgba8snorm", "rgba8unorm-srgb"):
        t = SHORT[fmt]
        for mode in ("clamp-to-edge", "repeat", "mirror-repeat"):
            smp = dict(address_mode_u=mode, address_mode_v=mode, **LINEAR)
            out.append((f"{t}_{mode}_5x3", _sample(fmt, [_texels(rng, fmt, (3, 5))], (5, 3, 1), coords(-1.5, 2.5), smp)))
        q = coords(-0.1, 1.1)
        q[:, 2] = rng.uniform(-0.5, 3.5, m)
        out.append((f"{t}_mips_8x6", _sample(fmt, [_texels(rng, fmt, (hh, ww)) for ww, hh, _ in _chain(8, 6)], (8, 6, 1),
                                             q, dict(mipmap_filter="linear", **LINEAR))))
    return out + _volume_and_grad_cases(rng, ("rgba8unorm", "rgba16float"))


def volume_grad_cases():
    """For the H200 (recorded after the lavapipe fits; predicted by emu first): 3-D textures with mip
    chains and textureSampleGrad in 2-D, 3-D and on cubes (never measured there), probes that return
    the level of detail itself (levels of 0s, 1s and 2s sampled with gradients: the result is the
    level plus its 8-bit fraction), and two probes that separate hypotheses for the differences
    left: f16 between two mip levels (each lane a level-0 pair of equal texels a and one level-1
    texel b, sampled where both levels' footprints hold only those, at a random 8-bit fraction:
    a * (1 - f) + b * f, a and b often of opposite signs and close magnitudes) and rgba8snorm
    filtering (every pair of codes (c0, c1), 4 channels a lane, at three weights: 1/2, 85/256, 1/256)."""
    rng = np.random.default_rng(20261207)
    out = _volume_and_grad_cases(rng, ("rgba8unorm", "rgba16float"))
    m = 4096
    for name, (w, h, d), src, dim, k in (("lod_grad_2d", (16, 8, 1), GRAD_2D, "2d", 2), ("lod_grad_3d", (8, 8, 8), GRAD_3D, "3d", 3)):
        lv = [np.full((dd, hh, ww, 4) if dim == "3d" else (hh, ww, 4), k2, np.float16)
              for k2, (ww, hh, dd) in enumerate(_chain(w, h, d)[:3])]
        rows = 3 if dim == "3d" else 2
        q = np.zeros((rows * m, 4), np.float32)
        q[0::rows, :k] = rng.uniform(0, 1, (m, k))
        gx, gy = _grads(rng, m, k, -4.5, -1)
        if dim == "3d":
            q[1::3, :3], q[2::3, :3] = gx, gy
        else:
            q[1::2, :2], q[1::2, 2:] = gx, gy
        c = _sample("rgba16float", lv, (w, h, d), q, dict(mipmap_filter="linear", **LINEAR), src, dim)
        c.update(dispatch=(m // 64, 1, 1)), c["buffers"].update({(0, 3): np.zeros((m, 4), np.float32)})
        out.append((name, c))
    n = 512
    lv = [np.full((6, s, s, 4), k2, np.float16) for k2, s in enumerate((8, 4, 2))]
    q = np.zeros((3 * n, 4), np.float32)
    q[0::3, :3] = rng.normal(size=(n, 3))
    q[1::3, :3], q[2::3, :3] = _grads(rng, n, 3, -4, -1)
    out.append(("lod_grad_cube", dict(
        source=GRAD_CUBE, dispatch=(n // 64, 1, 1), buffers={(0, 2): q, (0, 3): np.zeros((n, 4), np.float32)},
        textures={(0, 0): HwTexture("rgba16float", (8, 8, 6), tuple(x.tobytes() for x in lv), view="cube")},
        samplers={(0, 1): dict(mipmap_filter="linear", **LINEAR)})))
    # f16 between two levels: level 0 is 2N x 1 (texels 2i and 2i + 1 both a_i), level 1 N x 1 (b_i);
    # lane i samples u = (2i + 1) / 2N: level 0 between its two equal texels, level 1 at texel i's centre
    N = 4096
    a = (rng.uniform(0.5, 1, (N, 4)) * 2.0 ** rng.integers(-8, 3, (N, 4)) * rng.choice([-1, 1], (N, 4)))
    b = np.where(rng.random((N, 4)) < 0.7, -a * rng.uniform(0.5, 2, (N, 4)), rng.uniform(-2, 2, (N, 4)))
    a, b = a.astype(np.float16), b.astype(np.float16)
    q = np.zeros((N, 4), np.float32)
    q[:, 0], q[:, 1] = (2 * np.arange(N) + 1) / (2 * N), 0.5
    q[:, 2] = (rng.integers(1, 256, N) + rng.uniform(0.05, 0.95, N)) / 256      # the fraction's 8 bits, off the steps
    out.append(("f16_mip_pairs", _sample("rgba16float", [np.repeat(a, 2, axis=0)[None], b[None]], (2 * N, 1, 1), q,
                                         dict(mipmap_filter="linear", **LINEAR))))
    # rgba8snorm: texels 2k and 2k + 1 of a 512 x 128 texture hold every code pair (4 channels a pair)
    c0, c1 = np.meshgrid(np.arange(256), np.arange(256), indexing="ij")
    pairs = np.stack([c0.ravel(), c1.ravel()], 1).astype(np.uint8).reshape(16384, 4, 2)    # lane, channel, texel
    img = pairs.transpose(0, 2, 1).reshape(64, 512, 4)                  # row r: lanes 256r .. 256r + 255
    for wname, wt in (("half", 128), ("85", 85), ("1", 1)):
        k = np.arange(16384)
        q = np.zeros((16384, 4), np.float32)
        q[:, 0] = (2 * (k % 256) + 0.5 + wt / 256 + 1 / 2048) / 512     # off the 8-bit step, below the next
        q[:, 1] = (k // 256 + 0.5) / 64
        out.append((f"snorm8_all_pairs_{wname}", _sample("rgba8snorm", [img], (512, 64, 1), q, LINEAR)))
    return out


def run_on_emu(case: dict, profile: str = "reference") -> dict:
    """The case on the emulator: {(group, binding): bytes} of its outputs (what run_on_adapter returns)."""
    import emu
    from emu.frontend.wgsl import compile_source
    dev = emu.Device(profile)
    mod, _ = compile_source(case["source"], "case.wgsl")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(case["source"], "case.wgsl"), None,
                                       case.get("overrides") or {})
    bound = {k: dev.create_buffer(np.ascontiguousarray(v)) for k, v in case.get("buffers", {}).items()}
    for k, t in case.get("textures", {}).items():
        bound[k] = to_emu(dev, t)
    for k, desc in case.get("samplers", {}).items():
        bound[k] = dev.create_sampler(**desc)
    dev.dispatch(pipe, bound, case["dispatch"])
    out = {}
    for g in mod.globals:
        k = (g.group, g.binding)
        if g.space == "storage" and g.access == "read_write" and k in bound:
            out[k] = bound[k].read(np.uint8).tobytes()
        elif g.space == "handle" and "storage" in str(g.type) and k in bound:
            tex = bound[k] if hasattr(bound[k], "levels") else bound[k].texture
            out[k] = np.ascontiguousarray(tex.levels[0]).tobytes()
    return out


def _lod_probe(p, gx, gy, size, dim):
    """textureSampleGrad at p (L, k) with gradients gx, gy (L, k, normalised) on levels of 0s, 1s and
    2s of an rgba16float texture of `size`: each lane returns its level of detail clamped to [0, 2],
    on the 1/256 grid."""
    w, h, d = size
    lv = [np.full((dd, hh, ww, 4) if dim == "3d" else (hh, ww, 4), k, np.float16)
          for k, (ww, hh, dd) in enumerate(_chain(w, h, d)[:3])]
    m, k = p.shape
    rows = 3 if dim == "3d" else 2
    q = np.zeros((rows * m, 4), np.float32)
    q[0::rows, :k] = p
    if dim == "3d":
        q[1::3, :3], q[2::3, :3] = gx, gy
        src = GRAD_3D
    else:
        q[1::2, :2], q[1::2, 2:] = gx, gy
        src = GRAD_2D
    c = _sample("rgba16float", lv, size, q, dict(mipmap_filter="linear", **LINEAR), src, dim)
    c.update(dispatch=(m // 64, 1, 1)), c["buffers"].update({(0, 3): np.zeros((m, 4), np.float32)})
    return c


def lod_probe_cases():
    """For the H200's level of detail from explicit gradients (fitted on volume_grad_cases' lod
    probes: the quad's differences dx, dy and the diagonals dx +- dy, each by an octagon-like
    length): probes that separate what is left (about 30% of the probes' levels one 1/256 step
    off): one gradient component swept over 1..4 texels at a fixed position and at random ones,
    the same gradients at four positions, a narrow sweep (256 samples a step), the second
    component's weight (t = minor / major swept 0..1), the diagonal's factor (dy = r * dx), the
    recorded probe inputs again with lanes permuted, a 3-D sweep, cube directions whose gradient
    crosses a face edge; and, predicted before recording, new random probes in 2-D, 3-D and on
    cubes with anisotropy up to 16, and f16/unorm8 textureSampleGrad cases."""
    rng = np.random.default_rng(20261208)
    out, m = [], 4096
    S2 = np.array([16.0, 8.0])
    k = np.arange(m)
    a = 2.0 ** (2 * k / m)                              # 1 .. 4 texels: levels of detail 0 .. 2
    zero = np.zeros((m, 2))
    fixed = np.tile([0.53125, 0.5625], (m, 1))
    one_u = np.stack([a / 16, np.zeros(m)], 1)
    out.append(("lodp_u_fixed", _lod_probe(fixed, one_u, zero, (16, 8, 1), "2d")))
    out.append(("lodp_u_random_pos", _lod_probe(rng.uniform(0, 1, (m, 2)), one_u, zero, (16, 8, 1), "2d")))
    out.append(("lodp_v_fixed_dy", _lod_probe(fixed, zero, np.stack([np.zeros(m), a / 8], 1), (16, 8, 1), "2d")))
    g = rng.uniform(1, 4, m // 4) * rng.choice([-1, 1], m // 4)
    g4 = np.repeat(np.stack([g / 16, np.zeros(m // 4)], 1), 4, axis=0)
    out.append(("lodp_u_four_pos", _lod_probe(rng.uniform(0, 1, (m, 2)), g4, zero, (16, 8, 1), "2d")))
    narrow = 1.5 * 2.0 ** (16 * k / m / 256)            # 16 steps of 1/256, 256 samples each
    out.append(("lodp_u_narrow", _lod_probe(fixed, np.stack([narrow / 16, np.zeros(m)], 1), zero, (16, 8, 1), "2d")))
    t = k / m
    out.append(("lodp_minor_t", _lod_probe(fixed, np.stack([np.full(m, 1.5 / 16), 1.5 * t / 8], 1), zero, (16, 8, 1), "2d")))
    big = rng.uniform(1, 2.5, m)
    tt = rng.uniform(0, 1, m)
    out.append(("lodp_minor_random", _lod_probe(fixed, np.stack([big / 16, big * tt / 8], 1), zero, (16, 8, 1), "2d")))
    r = k / m
    out.append(("lodp_diag_r", _lod_probe(fixed, np.stack([np.full(m, 1.25 / 16), np.zeros(m)], 1),
                                          np.stack([1.25 * r / 16, np.zeros(m)], 1), (16, 8, 1), "2d")))
    # the recorded probe inputs, lanes permuted
    rec = dict(volume_grad_cases())["lod_grad_2d"]["buffers"][(0, 2)]
    perm = rng.permutation(m)
    p0, g0 = rec[0::2, :2][perm], rec[1::2][perm]
    out.append(("lodp_replay_2d_permuted", _lod_probe(p0, g0[:, :2], g0[:, 2:], (16, 8, 1), "2d")))
    out.append(("lodp_replay_2d_moved", _lod_probe(rng.uniform(0, 1, (m, 2)), g0[:, :2], g0[:, 2:], (16, 8, 1), "2d")))
    z3 = np.zeros((m, 3))
    out.append(("lodp_w_3d", _lod_probe(np.tile([0.53125, 0.5625, 0.4375], (m, 1)), np.stack([np.zeros(m), np.zeros(m), a / 8], 1),
                                        z3, (8, 8, 8), "3d")))
    # new random probes, anisotropy up to 16 (minor / major from 1/16 to 1)
    for dim, size, kk in (("2d", (16, 8, 1), 2), ("3d", (8, 8, 8), 3)):
        gx, gy = _aniso_grads(rng, m, size[:kk])
        out.append((f"lodp_new_{dim}", _lod_probe(rng.uniform(0, 1, (m, kk)), gx, gy, size, dim)))
    # random texels (f16 and unorm8) sampled with those gradients, 2-D and 3-D
    for fmt in ("rgba16float", "rgba8unorm"):
        t = SHORT[fmt]
        lv = [_texels(rng, fmt, (hh, ww)) for ww, hh, _ in _chain(16, 8)]
        gx, gy = _aniso_grads(rng, m, (16, 8))
        q = np.zeros((2 * m, 4), np.float32)
        q[0::2, :2], q[1::2, :2], q[1::2, 2:] = rng.uniform(-0.1, 1.1, (m, 2)), gx, gy
        c = _sample(fmt, lv, (16, 8, 1), q, dict(mipmap_filter="linear", **LINEAR), GRAD_2D)
        c.update(dispatch=(m // 64, 1, 1)), c["buffers"].update({(0, 3): np.zeros((m, 4), np.float32)})
        out.append((f"lodp_{t}_aniso_2d", c))
        lv = [_texels(rng, fmt, (dd, hh, ww)) for ww, hh, dd in _chain(8, 8, 4)]
        gx, gy = _aniso_grads(rng, m, (8, 8, 4))
        q = np.zeros((3 * m, 4), np.float32)
        q[0::3, :3], q[1::3, :3], q[2::3, :3] = rng.uniform(-0.1, 1.1, (m, 3)), gx, gy
        c = _sample(fmt, lv, (8, 8, 4), q, dict(mipmap_filter="linear", **LINEAR), GRAD_3D, "3d")
        c.update(dispatch=(m // 64, 1, 1)), c["buffers"].update({(0, 3): np.zeros((m, 4), np.float32)})
        out.append((f"lodp_{t}_aniso_3d", c))
    # cubes: a gradient that crosses from +X to +Y (y0 + dy > 1) swept, alone and with a second one;
    # the recorded cube probes permuted; new random cube probes
    n = 1024
    d = np.linspace(0, 0.6, n)
    c = np.tile([1.0, 0.8, 0.1], (n, 1))
    zc = np.zeros((n, 3))
    out.append(("lodp_cube_cross", _lod_cube(c, np.stack([np.zeros(n), d, np.zeros(n)], 1), zc)))
    out.append(("lodp_cube_cross_2", _lod_cube(c, np.stack([np.zeros(n), d, np.zeros(n)], 1),
                                               np.tile([0.0, 0.0, 0.15], (n, 1)))))
    out.append(("lodp_cube_cross_x", _lod_cube(np.tile([1.0, 0.3, 0.9], (n, 1)), np.stack([np.zeros(n), np.zeros(n), d], 1), zc)))
    rec = dict(volume_grad_cases())["lod_grad_cube"]["buffers"][(0, 2)]
    perm = rng.permutation(len(rec) // 3)
    out.append(("lodp_cube_replay_permuted", _lod_cube(rec[0::3, :3][perm], rec[1::3, :3][perm], rec[2::3, :3][perm])))
    gx, gy = _grads(rng, n, 3, -4, -1)
    out.append(("lodp_cube_new", _lod_cube(rng.normal(size=(n, 3)), gx, gy)))
    return out


def _aniso_grads(rng, m, size):
    """m gradient pairs (normalised) whose texel-space ellipse has a random major axis of 2^-0.3 ..
    2^2.3 texels, anisotropy 1 .. 16, at a random rotation between the two screen axes."""
    kk = len(size)
    major = rng.normal(size=(m, kk))
    major /= np.linalg.norm(major, axis=1, keepdims=True)
    minor = rng.normal(size=(m, kk))
    minor -= (minor * major).sum(1, keepdims=True) * major
    minor /= np.linalg.norm(minor, axis=1, keepdims=True)
    L = 2.0 ** rng.uniform(-0.3, 2.3, (m, 1))
    ratio = 2.0 ** -rng.uniform(0, 4, (m, 1))
    th = rng.uniform(0, 2 * np.pi, (m, 1))
    sz = np.array(size, np.float64)
    return ((np.cos(th) * major * L + np.sin(th) * minor * L * ratio) / sz,
            (-np.sin(th) * major * L + np.cos(th) * minor * L * ratio) / sz)


def _lod_cube(c, gx, gy):
    """textureSampleGrad on a cube of 8x8 faces whose levels hold 0s, 1s and 2s (the level of detail)."""
    n = len(c)
    lv = [np.full((6, s, s, 4), k, np.float16) for k, s in enumerate((8, 4, 2))]
    q = np.zeros((3 * n, 4), np.float32)
    q[0::3, :3], q[1::3, :3], q[2::3, :3] = c, gx, gy
    return dict(source=GRAD_CUBE, dispatch=(n // 64, 1, 1), buffers={(0, 2): q, (0, 3): np.zeros((n, 4), np.float32)},
                textures={(0, 0): HwTexture("rgba16float", (8, 8, 6), tuple(x.tobytes() for x in lv), view="cube")},
                samplers={(0, 1): dict(mipmap_filter="linear", **LINEAR)})


def lod_confirm_cases():
    """Predicted by emu's nvidia-h200 (lod_gradients h200-quad, fitted on lod_probe_cases) before
    their recording: new random level-of-detail probes in 2-D, 3-D and on cubes (anisotropy up to
    16), random f16/unorm8 textures sampled with such gradients (2-D, 3-D, cube); and, for what is
    left, 3-D vectors of three components (the octagon's third weight: dx = (1.5, 1.5 t1, 1.5 t2))
    and 3-D diagonals (dx = (1.25, 0, 0), dy = (1.25 r, 1.25 r2, 0))."""
    rng = np.random.default_rng(20261209)
    out, m, n = [], 4096, 1024
    for dim, size, kk in (("2d", (16, 8, 1), 2), ("3d", (8, 8, 8), 3)):
        gx, gy = _aniso_grads(rng, m, size[:kk])
        out.append((f"lodc_{dim}", _lod_probe(rng.uniform(0, 1, (m, kk)), gx, gy, size, dim)))
    gx, gy = _grads(rng, n, 3, -4, -1)
    out.append(("lodc_cube", _lod_cube(rng.normal(size=(n, 3)), gx, gy)))
    for fmt, dim in (("rgba16float", "2d"), ("rgba8unorm", "3d")):
        t = SHORT[fmt]
        if dim == "2d":
            lv = [_texels(rng, fmt, (hh, ww)) for ww, hh, _ in _chain(16, 8)]
            gx, gy = _aniso_grads(rng, m, (16, 8))
            q = np.zeros((2 * m, 4), np.float32)
            q[0::2, :2], q[1::2, :2], q[1::2, 2:] = rng.uniform(-0.1, 1.1, (m, 2)), gx, gy
            c = _sample(fmt, lv, (16, 8, 1), q, dict(mipmap_filter="linear", **LINEAR), GRAD_2D)
        else:
            lv = [_texels(rng, fmt, (dd, hh, ww)) for ww, hh, dd in _chain(8, 8, 4)]
            gx, gy = _aniso_grads(rng, m, (8, 8, 4))
            q = np.zeros((3 * m, 4), np.float32)
            q[0::3, :3], q[1::3, :3], q[2::3, :3] = rng.uniform(-0.1, 1.1, (m, 3)), gx, gy
            c = _sample(fmt, lv, (8, 8, 4), q, dict(mipmap_filter="linear", **LINEAR), GRAD_3D, "3d")
        c.update(dispatch=(m // 64, 1, 1)), c["buffers"].update({(0, 3): np.zeros((m, 4), np.float32)})
        out.append((f"lodc_{t}_aniso_{dim}", c))
    lv = [_texels(rng, "rgba16float", (6, k, k)) for k in (8, 4, 2, 1)]
    gx, gy = _grads(rng, n, 3, -6)
    q = np.zeros((3 * n, 4), np.float32)
    q[0::3, :3], q[1::3, :3], q[2::3, :3] = rng.normal(size=(n, 3)), gx, gy
    out.append(("lodc_f16_cube", dict(
        source=GRAD_CUBE, dispatch=(n // 64, 1, 1), buffers={(0, 2): q, (0, 3): np.zeros((n, 4), np.float32)},
        textures={(0, 0): HwTexture("rgba16float", (8, 8, 6), tuple(x.tobytes() for x in lv), view="cube")},
        samplers={(0, 1): dict(mipmap_filter="linear", **LINEAR)})))
    p3 = np.tile([0.53125, 0.5625, 0.4375], (m, 1))
    t1, t2 = rng.uniform(0, 1, m), rng.uniform(0, 1, m)
    t1, t2 = np.maximum(t1, t2), np.minimum(t1, t2)
    out.append(("lodp3_three", _lod_probe(p3, np.stack([np.full(m, 1.5), 1.5 * t1, 1.5 * t2], 1) / 8, np.zeros((m, 3)), (8, 8, 8), "3d")))
    r, r2 = rng.uniform(0.4, 1, m), rng.uniform(0, 1, m)
    out.append(("lodp3_diag", _lod_probe(p3, np.tile([1.25 / 8, 0, 0], (m, 1)),
                                         np.stack([1.25 * r, 1.25 * r * r2, np.zeros(m)], 1) / 8, (8, 8, 8), "3d")))
    return out
