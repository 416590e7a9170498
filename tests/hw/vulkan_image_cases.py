"""Our image kernels in GLSL for Vulkan (compiled with glslang): the twins of texture_cases.py's
WGSL kernels, run with the same inputs at the same bindings (so the two front ends must give the
same bits), plus GLSL-only cases: combined image samplers (sampler2D), texelFetch of array and 3D
images with levels, the size and level queries, a store to an image of format Unknown (the host's
texture gives it), and every format of the brief's imageStore list."""
from __future__ import annotations

import numpy as np

import texture_cases as W
from emu.hw.runner import HwTexture, to_emu

BLUR = """#version 450
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform texture2D src;
layout(set = 0, binding = 1) uniform sampler smp;
layout(set = 0, binding = 2, rgba16f) uniform writeonly image2D dst;
layout(constant_id = 0) const bool VERTICAL = false;
void main() {
    uvec2 id = gl_GlobalInvocationID.xy;
    uvec2 size = uvec2(textureSize(sampler2D(src, smp), 0));
    if (any(greaterThanEqual(id, size))) { return; }
    vec2 texel = 1.0 / vec2(size);
    vec2 uv = (vec2(id) + 0.5) * texel;
    vec2 dir = VERTICAL ? vec2(0.0, texel.y) : vec2(texel.x, 0.0);
    precise vec4 acc = textureLod(sampler2D(src, smp), uv, 0.0) * 0.375;
    acc += textureLod(sampler2D(src, smp), uv + 1.2 * dir, 0.0) * 0.3125;
    acc += textureLod(sampler2D(src, smp), uv - 1.2 * dir, 0.0) * 0.3125;
    imageStore(dst, ivec2(id), acc);
}
"""
STORE = """#version 450
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) readonly buffer V { VEC vals[]; };
layout(set = 0, binding = 1, FORMAT) uniform writeonly PREFIXimage2D img;
void main() {
    uvec2 id = gl_LocalInvocationID.xy;
    imageStore(img, ivec2(id), vals[id.y * 8u + id.x]);
}
"""
STORE_MANY = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer V { vec4 v[]; };
layout(set = 0, binding = 1, FORMAT) uniform writeonly image2D img;
void main() {
    uint i = gl_GlobalInvocationID.x;
    imageStore(img, ivec2(i % 64u, i / 64u), v[i]);
}
"""
GATHER = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform utexture2D t;
layout(set = 0, binding = 1) uniform texture2D f;
layout(set = 0, binding = 2) uniform sampler s;
layout(set = 0, binding = 3) readonly buffer UV { vec2 uv[]; };
layout(set = 0, binding = 4) buffer O { uvec4 outu[]; };
layout(set = 0, binding = 5) buffer OF { vec4 outf[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    outu[i] = textureGatherOffset(usampler2D(t, s), uv[i], ivec2(-1, 2), 1);
    outf[i] = textureGather(sampler2D(f, s), uv[i], 3);
}
"""
COMPARE = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform texture2D d;
layout(set = 0, binding = 1) uniform samplerShadow s;
layout(set = 0, binding = 2) readonly buffer P { vec4 uvref[]; };
layout(set = 0, binding = 3) buffer O { vec4 o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    vec4 p = uvref[i];
    o[2u * i] = textureGather(sampler2DShadow(d, s), p.xy, p.z);
    o[2u * i + 1u] = vec4(textureLod(sampler2DShadow(d, s), p.xyz, 0.0), 0.0, 0.0, 0.0);
}
"""
CUBE = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform textureCube c;
layout(set = 0, binding = 1) uniform sampler s;
layout(set = 0, binding = 2) readonly buffer D { vec4 dir[]; };
layout(set = 0, binding = 3) buffer O { vec4 o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    o[i] = textureLod(samplerCube(c, s), dir[i].xyz, 0.0);
}
"""
MIPS = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform texture2D t;
layout(set = 0, binding = 1) uniform sampler s;
layout(set = 0, binding = 2) readonly buffer P { vec4 uvl[]; };
layout(set = 0, binding = 3) buffer O { vec4 o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    vec4 p = uvl[i];
    o[i] = textureLod(sampler2D(t, s), p.xy, p.z);
}
"""
SRGB = """#version 450
layout(local_size_x = 16, local_size_y = 16) in;
layout(set = 0, binding = 0) uniform texture2D t;
layout(set = 0, binding = 1) uniform sampler s;
layout(set = 0, binding = 2) readonly buffer UV { vec2 uv[]; };
layout(set = 0, binding = 3) buffer O { vec4 o[]; };
void main() {
    uvec2 id = gl_LocalInvocationID.xy;
    uint i = id.y * 16u + id.x;
    o[2u * i] = texelFetch(sampler2D(t, s), ivec2(id), 0);
    o[2u * i + 1u] = textureLod(sampler2D(t, s), uv[i], 0.0);
}
"""
TWINS = {W.BLUR: BLUR, W.GATHER: GATHER, W.COMPARE: COMPARE, W.CUBE: CUBE, W.MIPS: MIPS, W.SRGB: SRGB}
GLSL_FORMATS = {"rgba8unorm": "rgba8", "rgba8snorm": "rgba8_snorm", "rgba8uint": "rgba8ui", "rgba8sint": "rgba8i",
                "rgba16uint": "rgba16ui", "rgba16sint": "rgba16i", "rgba16float": "rgba16f", "r32uint": "r32ui",
                "r32sint": "r32i", "r32float": "r32f", "rg32uint": "rg32ui", "rg32sint": "rg32i", "rg32float": "rg32f",
                "rgba32uint": "rgba32ui", "rgba32sint": "rgba32i", "rgba32float": "rgba32f"}

# combined image samplers: a separable blur reading a sampler2D, texelFetch of a 2D array image
# (level 1) and of a 3D image, a gather and the queries
COMBINED_BLUR = """#version 450
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform sampler2D src;
layout(set = 0, binding = 2, rgba16f) uniform writeonly image2D dst;
layout(constant_id = 0) const bool VERTICAL = false;
void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    vec2 texel = 1.0 / vec2(textureSize(src, 0));
    vec2 uv = (vec2(p) + 0.5) * texel;
    vec2 dir = VERTICAL ? vec2(0.0, texel.y) : vec2(texel.x, 0.0);
    precise vec4 acc = textureLod(src, uv, 0.0) * 0.375;
    acc += textureLod(src, uv + 1.2 * dir, 0.0) * 0.3125;
    acc += textureLod(src, uv - 1.2 * dir, 0.0) * 0.3125;
    imageStore(dst, p, acc);
}
"""
FETCH = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform sampler2DArray arr;
layout(set = 0, binding = 1) uniform usampler3D vol;
layout(set = 0, binding = 2) readonly buffer C { ivec4 c[]; };
layout(set = 0, binding = 3) buffer O { vec4 o[]; };
layout(set = 0, binding = 4) buffer U { uvec4 u[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    ivec4 q = c[i];
    o[i] = texelFetch(arr, q.xyz, q.w) + texelFetchOffset(arr, ivec3(q.xy & 1, q.z), 1, ivec2(1, 0));
    u[i] = texelFetch(vol, q.xyz & ivec3(3, 3, 1), 0);
}
"""
QUERIES = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform sampler2DArray arr;
layout(set = 0, binding = 1) uniform usampler3D vol;
layout(set = 0, binding = 2) uniform samplerCube cube;
layout(set = 0, binding = 3, r32f) uniform readonly image2D ro;
layout(set = 0, binding = 4) buffer O { ivec4 o[]; };
void main() {
    o[0] = ivec4(textureSize(arr, 0), textureQueryLevels(arr));
    o[1] = ivec4(textureSize(arr, 1), textureQueryLevels(vol));
    o[2] = ivec4(textureSize(vol, 0), textureQueryLevels(cube));
    o[3] = ivec4(textureSize(cube, 0), imageSize(ro));
}
"""
# writeonly without a format qualifier: Image Format Unknown (StorageImageWriteWithoutFormat)
UNKNOWN = """#version 450
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) readonly buffer V { vec4 vals[]; };
layout(set = 0, binding = 1) uniform writeonly image2D img;
void main() {
    uvec2 id = gl_LocalInvocationID.xy;
    imageStore(img, ivec2(id), vals[id.y * 8u + id.x]);
}
"""

# imageLoad and imageStore of images without a format (GL_EXT_shader_image_load_formatted:
# StorageImageReadWithoutFormat and ...WriteWithoutFormat), the formats the host's textures'
FORMATLESS = """#version 450
#extension GL_EXT_shader_image_load_formatted : require
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform readonly image2D src;
layout(set = 0, binding = 1) uniform writeonly image2D dst;
void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    imageStore(dst, p, imageLoad(src, ivec2(7) - p) * 0.75);
}
"""
# a cube array sampled linearly at directions on every face and layers (rounded to nearest even),
# with its size query (cubes, not faces)
CUBE_ARRAY = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform samplerCubeArray c;
layout(set = 0, binding = 1) readonly buffer D { vec4 dir[]; };
layout(set = 0, binding = 2) buffer O { vec4 o[]; };
layout(set = 0, binding = 3) buffer S { ivec4 size; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    o[i] = textureLod(c, dir[i], 0.0);
    if (i == 0u) { size = ivec4(textureSize(c, 0), 0); }
}
"""

# depth compares between mip levels (OpImageSampleDrefExplicitLod with a Lod: WGSL has none)
SHADOW_MIPS = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform sampler2DShadow d;
layout(set = 0, binding = 1) readonly buffer P { vec4 p[]; };
layout(set = 0, binding = 2) buffer O { float o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    o[i] = textureLod(d, p[i].xyz, p[i].w);
}
"""


def twin_cases() -> list:
    """[(name, case)] of texture_cases' kernels with the GLSL source in place of the WGSL."""
    out = []
    for name, case in W.cases() + W.new_cases():
        src = case["source"]
        glsl = TWINS.get(src)
        if name.startswith(("store_steps_", "store_")):
            fmt = name.removeprefix("store_steps_").removeprefix("store_")
            from emu.numerics.texels import FORMATS
            f = FORMATS[fmt]
            if name.startswith("store_steps_"):
                glsl = STORE_MANY.replace("FORMAT", GLSL_FORMATS[fmt])
            else:
                vec = {"f32": "vec4", "i32": "ivec4", "u32": "uvec4"}[f.sampled]
                prefix = {"f32": "", "i32": "i", "u32": "u"}[f.sampled]
                glsl = STORE.replace("VEC", vec).replace("FORMAT", GLSL_FORMATS[fmt]).replace("PREFIX", prefix)
        if glsl is None:
            raise AssertionError(f"no GLSL twin for {name}")
        out.append((name, dict(case, source=glsl, wgsl=src)))
    return out


def glsl_cases() -> list:
    """[(name, case)] of the GLSL-only kernels (no WGSL twin: combined samplers and the rest)."""
    rng = np.random.default_rng(20261203)
    out = []
    img = rng.integers(0, 256, (16, 32, 4), dtype=np.uint8)
    for vertical in (False, True):
        out.append((f"combined_blur_{'v' if vertical else 'h'}", dict(
            source=COMBINED_BLUR, dispatch=(4, 2, 1), overrides={"VERTICAL": vertical},
            textures={(0, 0): HwTexture("rgba8unorm", (32, 16, 1), (img.tobytes(),)),
                      (0, 2): HwTexture("rgba16float", (32, 16, 1), (bytes(32 * 16 * 8),))},
            samplers={(0, 0): W.LINEAR})))
    levels = [rng.uniform(-4, 4, (3, 8 >> k, 8 >> k, 4)).astype(np.float32) for k in range(3)]
    vol = rng.integers(0, 1 << 32, (2, 4, 4, 4), dtype=np.uint64).astype(np.uint32)
    n = 64                          # in bounds (Vulkan leaves out-of-bounds fetches undefined)
    c = np.stack([rng.integers(0, 4, n), rng.integers(0, 4, n), rng.integers(0, 3, n), rng.integers(0, 2, n)], 1)
    arr = HwTexture("rgba32float", (8, 8, 3), tuple(x.tobytes() for x in levels), view="2d-array")
    volume = HwTexture("rgba32uint", (4, 4, 2), (vol.tobytes(),), dimension="3d")
    out.append(("fetch", dict(
        source=FETCH, dispatch=(1, 1, 1),
        buffers={(0, 2): c.astype(np.int32), (0, 3): np.zeros((n, 4), np.float32), (0, 4): np.zeros((n, 4), np.uint32)},
        textures={(0, 0): arr, (0, 1): volume}, samplers={(0, 0): {}, (0, 1): {}})))
    cube = HwTexture("rgba16float", (4, 4, 6), (rng.uniform(-1, 1, (6, 4, 4, 4)).astype(np.float16).tobytes(),),
                     view="cube")
    ro = HwTexture("r32float", (5, 3, 1), (bytes(5 * 3 * 4),))
    out.append(("queries", dict(
        source=QUERIES, dispatch=(1, 1, 1), buffers={(0, 4): np.zeros((4, 4), np.int32)},
        textures={(0, 0): arr, (0, 1): volume, (0, 2): cube, (0, 3): ro},
        samplers={(0, 0): {}, (0, 1): {}, (0, 2): {}})))
    for fmt in ("rgba8unorm", "rgba16float", "r32float", "rgba32float"):
        vals = W._store_values(fmt, rng)
        from emu.numerics.texels import FORMATS
        out.append((f"unknown_format_{fmt}", dict(
            source=UNKNOWN, dispatch=(1, 1, 1), buffers={(0, 0): vals},
            textures={(0, 1): HwTexture(fmt, (8, 8, 1), (bytes(64 * FORMATS[fmt].bytes),))})))
    src = rng.uniform(-1, 2, (8, 8, 4)).astype(np.float16)
    out.append(("formatless", dict(
        source=FORMATLESS, dispatch=(1, 1, 1),
        textures={(0, 0): HwTexture("rgba16float", (8, 8, 1), (src.tobytes(),)),
                  (0, 1): HwTexture("rgba8unorm", (8, 8, 1), (bytes(256),))})))
    faces = rng.uniform(-1, 1, (12, 4, 4, 4)).astype(np.float32)
    d = rng.normal(size=(128, 4)).astype(np.float32)
    d[:, 3] = rng.uniform(-0.6, 2.6, 128).astype(np.float32)      # layers -1..3 (clamped), halves even
    d[:8, 3] = [0.5, 1.5, -0.5, 2.5, 0.49, 1.51, 0.0, 1.0]
    out.append(("cube_array", dict(
        source=CUBE_ARRAY, dispatch=(2, 1, 1),
        buffers={(0, 1): d, (0, 2): np.zeros((128, 4), np.float32), (0, 3): np.zeros(4, np.int32)},
        textures={(0, 0): HwTexture("rgba32float", (4, 4, 12), (faces.tobytes(),), view="cube-array")},
        samplers={(0, 0): W.LINEAR})))
    levels = [rng.uniform(0, 1, (8 >> k, 8 >> k)).astype(np.float32) for k in range(3)]
    p = np.zeros((256, 4), np.float32)
    p[:, :2] = ((rng.integers(0, 16, (256, 2)) + 0.5) / 16).astype(np.float32)
    p[:, 2] = rng.uniform(0, 1, 256).astype(np.float32)
    p[:, 3] = (rng.integers(-8, 3 * 16, 256) / 16).astype(np.float32)           # lods on a 1/16 grid
    for mip in ("nearest", "linear"):
        out.append((f"shadow_mips_{mip}", dict(
            source=SHADOW_MIPS, dispatch=(4, 1, 1), buffers={(0, 1): p, (0, 2): np.zeros(256, np.float32)},
            textures={(0, 0): HwTexture("depth32float", (8, 8, 1), tuple(x.tobytes() for x in levels))},
            samplers={(0, 0): dict(compare="less", mipmap_filter=mip, **W.LINEAR)})))
    return out


def run_on_emu(case: dict, profile: str = "reference", file: str = "case.comp") -> dict:
    """The case on the emulator: {(group, binding): bytes} of its outputs, the GLSL (file .comp)
    or the WGSL (file .wgsl) source; a texture and a sampler at one key bind a sampler2D."""
    import emu
    from emu.memory.textures import combine
    dev = emu.Device(profile)
    src = case["source"] if file.endswith(".comp") else case["wgsl"]
    mod = dev.create_shader_module(src, file)
    pipe = dev.create_compute_pipeline(mod, None, case.get("overrides") or {})
    bound = {k: dev.create_buffer(np.ascontiguousarray(v)) for k, v in case.get("buffers", {}).items()}
    for k, t in case.get("textures", {}).items():
        bound[k] = to_emu(dev, t)
    for k, desc in case.get("samplers", {}).items():
        bound[k] = combine(bound.get(k), dev.create_sampler(**desc))
    dev.dispatch(pipe, bound, case["dispatch"])
    out = {}
    for g in pipe.pipeline.module.globals:
        k = (g.group, g.binding)
        if g.space == "storage" and g.access == "read_write" and k in bound:
            out[k] = bound[k].read(np.uint8).tobytes()
        elif g.space == "handle" and getattr(g.type, "kind", "") == "storage" and k in bound:
            tex = bound[k] if hasattr(bound[k], "levels") else bound[k].texture
            out[k] = np.ascontiguousarray(tex.levels[0]).tobytes()
    return out


# out-of-bounds loads and stores: coordinates -2..5 of 4x4 images, a level past the last, an array
# layer past the last; Vulkan's robustImageAccess2 (lavapipe's): the zero texel (alpha 1 where the
# format has no alpha), stores dropped
OOB = """#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) uniform sampler2D a;
layout(set = 0, binding = 1) uniform sampler2DArray b;
layout(set = 0, binding = 2) uniform usampler2D c;
layout(set = 0, binding = 3, r32f) uniform readonly image2D d;
layout(set = 0, binding = 4, rgba8) uniform image2D e;
layout(set = 0, binding = 5) buffer O { vec4 o[]; };
layout(set = 0, binding = 6) buffer U { uvec4 u[]; };
void main() {
    int i = int(gl_GlobalInvocationID.x);
    ivec2 p = ivec2(i - 2, 1);
    ivec2 q = ivec2(i & 3, 2);
    o[5 * i] = texelFetch(a, p, 0);
    o[5 * i + 1] = texelFetch(a, q, i == 7 ? 3 : 0);
    o[5 * i + 2] = texelFetch(b, ivec3(q, i - 4), 0);
    o[5 * i + 3] = imageLoad(d, p);
    o[5 * i + 4] = imageLoad(e, p);
    u[i] = texelFetch(c, p, 0);
    imageStore(e, ivec2(i, 5 - i), vec4(0.5, 0.25, 1.0, 0.75));
}
"""


def oob_case() -> dict:
    rng = np.random.default_rng(20261204)
    t = lambda fmt, b, layers=1, view=None: HwTexture(  # noqa: E731
        fmt, (4, 4, layers), (rng.integers(1, 255, 16 * b * layers, dtype=np.uint8).tobytes(),), view=view)
    return dict(source=OOB, dispatch=(1, 1, 1),
                buffers={(0, 5): np.zeros((40, 4), np.float32), (0, 6): np.zeros((8, 4), np.uint32)},
                textures={(0, 0): t("rgba8unorm", 4), (0, 1): t("r32float", 4, 2, "2d-array"),
                          (0, 2): t("rgba32uint", 16), (0, 3): t("r32float", 4), (0, 4): t("rgba8unorm", 4)},
                samplers={(0, 0): {}, (0, 1): {}, (0, 2): {}})
