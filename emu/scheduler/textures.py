"""Executor handler of the `texture` op: textureLoad/Store and the size queries read and write
the bound texture's levels (memory/textures.py); sampling and gathering go through
numerics/sampling.py with the bound sampler and the profile's filtering model.

Out of bounds (WebGPU): a load returns a texel of the texture (Dawn's robustness clamps the
level, the array index and the coordinates, and so does emu), a store is dropped; each site is
reported once after the dispatch, or stops the run with bounds="strict". A load marked
out_of_bounds="zero_texel" (the SPIR-V front end's: Vulkan leaves such loads undefined without
robustness; with robustImageAccess2 they give the zero texel, which lavapipe does) decodes the
all-zero texel instead: (0, 0, 0, 0), or 1 in the components the format lacks (alpha 1 for r32float)."""
from __future__ import annotations

import numpy as np

from ..isa.types import TextureType
from ..numerics import texels
from .registry import handler


def _operands(inst, frame) -> dict:
    return dict(zip(inst.attrs["operands"], (frame.vals[a.id] for a in inst.args)))


def _lanes(v, lanes: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(v).astype(np.int64), (lanes,) + np.shape(v)[1:])


class _Site:
    """Clamping of one instruction's indices, with its out-of-bounds report."""

    def __init__(self, ex, inst, view, mask):
        self.ex, self.inst, self.view, self.mask = ex, inst, view, mask
        self.bad = np.zeros(ex.lanes, np.bool_)

    def clamp(self, v: np.ndarray, n) -> np.ndarray:
        self.bad |= ((v < 0) | (v >= n)) & self.mask
        return np.clip(v, 0, np.maximum(np.asarray(n) - 1, 0))

    def report(self, store: bool, zero: bool = False) -> np.ndarray:
        bad = self.bad
        if bad.any():
            what = f"{self.view.describe()} ({_binding(self.ex, self.inst, self.view)})"
            if self.ex.opts.bounds == "strict":
                self.ex.fail(self.inst, f"texel coordinate, level or layer out of bounds in {what}", bad,
                             hint="guard the access with textureDimensions/NumLevels/NumLayers (GLSL: textureSize, "
                                  "imageSize, textureQueryLevels); without --bounds strict emu runs it as WebGPU "
                                  "(or, for SPIR-V, Vulkan's robustImageAccess2) does and reports the site")
            done = "the stores were dropped, as WebGPU requires (and Vulkan's robustImageAccess)" if store else \
                "read as the zero texel, as Vulkan's robustImageAccess2 does (undefined without robustness)" if zero else \
                "clamped into the texture, as Dawn's robustness does (WebGPU allows any texel of it, or 0)"
            self.ex.pipe.bounds_log.note(self.ex, self.inst, what, "texel access", done, bad, bad.sum())
        return bad


def _binding(ex, inst, view) -> str:
    """The texture variable's name: the global the batch bound this view to."""
    for name, bound in ex.globals.items():
        if bound is view:
            return f"'{name}'"
    v = inst.args[inst.attrs["operands"].index("texture")]
    return f"'{v.name}'" if v.name else "the texture"


def _texel_indices(ex, inst, ops, view, mask, t: TextureType):
    """(level, layer, y, x) per lane, clamped, and the site that watched them."""
    L = ex.lanes
    site = _Site(ex, inst, view, mask)
    tex = view.texture
    lv = _lanes(ops.get("level", 0), L)
    lv = site.clamp(lv, view.mip_level_count) + view.base_mip_level
    if t.multisampled:      # one layer; its samples are stored where layers go (memory/textures.py)
        sample = site.clamp(_lanes(ops["sample_index"], L), tex.sample_count)
    c = _lanes(ops["coords"], L).reshape(L, -1)
    ext = np.array([tex.extent(int(k)) for k in range(tex.mip_level_count)], np.int64)[lv]    # (L, 3)
    x = site.clamp(c[:, 0], ext[:, 0])
    y = site.clamp(c[:, 1], ext[:, 1]) if c.shape[1] > 1 else np.zeros(L, np.int64)
    if t.dim == "3d":
        layer = site.clamp(c[:, 2], ext[:, 2])
    else:
        layer = site.clamp(_lanes(ops.get("array_index", 0), L), view.layers) + view.base_array_layer
    if t.multisampled:
        layer = sample
    return lv, layer, y, x, site


def _gather_raw(tex, lv, layer, y, x) -> np.ndarray:
    out = np.empty((lv.size, tex.format.bytes), np.uint8)
    for k in np.unique(lv):
        sel = lv == k
        out[sel] = tex.levels[int(k)][layer[sel], y[sel], x[sel]]
    return out


@handler("texture")
def h_texture(ex, inst, mask, frame):
    ops = _operands(inst, frame)
    view = ops["texture"]
    t: TextureType = inst.args[inst.attrs["operands"].index("texture")].type
    fn = inst.attrs["fn"]
    L = ex.lanes
    tex = view.texture
    if fn == "load":
        lv, layer, y, x, site = _texel_indices(ex, inst, ops, view, mask, t)
        zero = inst.attrs.get("out_of_bounds") == "zero_texel"
        bad = site.report(store=False, zero=zero)
        raw = _gather_raw(tex, lv, layer, y, x)
        if zero:
            raw[bad] = 0
        vals = texels.decode(tex.format, raw, ex.pipe.profile.textures)
        return vals[:, 0].copy() if t.depth else vals
    if fn == "store":
        lv, layer, y, x, site = _texel_indices(ex, inst, ops, view, mask, t)
        keep = mask & ~site.report(store=True)
        raw = texels.encode(tex.format, np.asarray(ops["value"])[keep], ex.pipe.profile.textures)
        for k in np.unique(lv[keep]):
            sel = lv[keep] == k
            tex.levels[int(k)][layer[keep][sel], y[keep][sel], x[keep][sel]] = raw[sel]
        return None
    if fn == "dimensions":
        site = _Site(ex, inst, view, mask)
        lv = site.clamp(_lanes(ops.get("level", 0), L), view.mip_level_count) + view.base_mip_level
        site.report(store=False)
        ext = np.array([tex.extent(int(k)) for k in range(tex.mip_level_count)], np.uint32)[lv]
        n = t.size_components
        return ext[:, 0].copy() if n == 1 else np.ascontiguousarray(ext[:, :n])
    if fn == "num_layers":
        return np.full(L, view.layers, np.uint32)
    if fn == "num_levels":
        return np.full(L, view.mip_level_count, np.uint32)
    if fn == "num_samples":
        return np.full(L, tex.sample_count, np.uint32)
    return _sample(ex, inst, ops, view, t, mask)


# -- sampling ----------------------------------------------------------------------------------

def _vec(v, lanes: int, n: int) -> np.ndarray:
    """A float scalar or vector operand as (lanes, n) f32."""
    a = np.asarray(v, np.float32)
    return np.broadcast_to(a[:, None] if a.ndim == 1 else a, (lanes, n))


def _aos_path(t: TextureType, smp, modes) -> bool:
    """Whether llvmpipe's fixed-point (AoS) sampler takes an 8-bit unorm lookup (Mesa
    lp_build_sample_soa_code's use_aos): every address mode repeat or clamp-to-edge, the min and mag
    filters alike (a per-lane level of detail), and no seamless linear cube; otherwise it filters
    in f32 like float texels."""
    if t.cube:
        return smp.mag_filter == smp.min_filter == "nearest"
    return smp.mag_filter == smp.min_filter and all(m in ("repeat", "clamp-to-edge") for m in modes)


def _sample(ex, inst, ops, view, t: TextureType, mask):
    """textureSampleLevel/Grad/CompareLevel/BaseClampToEdge, textureGather(Compare): the texels of
    each lane's footprint on one or two levels, weighted (numerics/sampling.py)."""
    from ..numerics import sampling as S
    fn, smp, tex = inst.attrs["fn"], ops["sampler"], view.texture
    model, L = ex.pipe.profile.textures, ex.lanes
    coords = _vec(ops["coords"], L, t.coords)
    if t.cube:
        face, s, tt = S.cube_face(coords, model.cube_coords)
        norm, modes = [s, tt], ["cube"] * 2       # seamless: linear footprints cross into the next faces
        cube = np.clip(_lanes(ops.get("array_index", 0), L), 0, view.layers - 1)
        layer = view.base_array_layer + 6 * cube + face
    else:
        norm = [coords[:, k] for k in range(coords.shape[1])]
        modes = [smp.address_mode_u, smp.address_mode_v, smp.address_mode_w][:len(norm)]
        layer = view.base_array_layer + np.clip(_lanes(ops.get("array_index", 0), L), 0, view.layers - 1)
    offset = _lanes(ops["offset"], L).reshape(L, -1) if "offset" in ops else np.zeros((L, len(norm)), np.int64)
    base = np.array(tex.extent(view.base_mip_level)[:len(norm)], np.float64)
    gather = fn in ("gather", "gather_compare")
    if fn == "sample_base_clamp_to_edge":
        norm = [np.clip(n, np.float32(0.5 / e), np.float32(1 - 0.5 / e)) for n, e in zip(norm, base)]
    # a compare with a level: SPIR-V's OpImageSampleDrefExplicitLod (WGSL's compares take level 0)
    leveled = fn == "sample_level" or fn == "sample_compare_level" and "level" in ops
    if leveled:
        lod = np.broadcast_to(np.asarray(ops["level"], np.float32), (L,))
    elif fn == "sample_grad":
        ddx, ddy = _vec(ops["ddx"], L, t.coords), _vec(ops["ddy"], L, t.coords)
        if model.lod_gradients == "h200-quad":      # the quad's lanes c, c + ddx, c + ddy, differenced
            if t.cube:
                ddx, ddy = S.cube_quad_differences(coords, ddx, face), S.cube_quad_differences(coords, ddy, face)
            lod = S.h200_lod(ddx.astype(np.float64) * base, ddy.astype(np.float64) * base, model.lod_log2)
        else:
            if t.cube:              # derivatives of the direction -> of the face's (s, t)
                ddx, ddy = S.cube_gradient(coords, ddx, face), S.cube_gradient(coords, ddy, face)
            lod = S.lod_from_gradients(ddx, ddy, base[None, :], model.lod_gradients)
    else:
        lod = np.zeros(L, np.float32)       # level 0: compare, gather, base-clamp-to-edge
    if leveled or fn == "sample_grad":
        magnify, d0, d1, delta = S.mip_levels(lod, view.mip_level_count, smp.mipmap_filter,
                                              smp.lod_min_clamp, smp.lod_max_clamp, model)
    else:
        magnify, d0, d1, delta = np.ones(L, bool), np.zeros(L, np.int64), np.zeros(L, np.int64), np.zeros(L, np.float32)
    linear = np.ones(L, bool) if gather else \
        np.where(magnify, smp.mag_filter == "linear", smp.min_filter == "linear")
    ref = None
    if "depth_ref" in ops:
        ref = np.broadcast_to(np.asarray(ops["depth_ref"], np.float32), (L,))
        if tex.format.kind == "unorm":          # a fixed-point depth format compares in [0, 1]
            ref = np.clip(ref, np.float32(0), np.float32(1))
    taps, ws, fixed, lerped, by_level = [], [], [], [], []
    mips = [(d0, 1 - delta.astype(np.float64))] + ([(d1, delta.astype(np.float64))] if smp.mipmap_filter == "linear" and not gather else [])
    # a texture unit that filters 8-bit unorm texels in 8-bit fixed point (the profile says)
    unorm8 = tex.format.kind == "unorm" and set(tex.format.bits) == {8} and not tex.format.srgb \
        and ref is None and not gather
    fixed8 = unorm8 and (model.unorm8_filter == "fixed8" or model.unorm8_filter == "fixed8-aos"
                         and _aos_path(t, smp, modes))
    wide16 = unorm8 and model.unorm8_filter == "unorm16"
    snorm16 = tex.format.kind == "snorm" and set(tex.format.bits) == {8} and model.snorm8_filter == "snorm16" \
        and ref is None and not gather
    by_lerp = model.float_filter == "fma-lerp" and not gather and not fixed8 and not wide16
    srgb_aligned = tex.format.srgb and model.srgb_filter == "aligned-8" and ref is None and not gather
    # min and mag filters that differ, on a texture unit (llvmpipe's) that filters a whole SIMD vector (a
    # subgroup) linearly where any of its lanes is linear: the nearest lanes snap the linear weights
    snap = None
    if model.mixed_filters == "snapped-weights" and smp.min_filter != smp.mag_filter and not gather:
        sg = np.arange(L) // ex.opts.subgroup_size
        snap = ~linear & (np.bincount(sg, weights=linear & np.asarray(mask, bool)) > 0)[sg]
    for d, wmip in mips:
        lv = view.base_mip_level + d
        ext = np.array([tex.extent(int(k)) for k in range(tex.mip_level_count)], np.int64)[lv]
        axes = []
        for k, (n, mode) in enumerate(zip(norm, modes)):
            lin = S.footprint(n, ext[:, k], True, mode, offset[:, k], model, gather)
            # a cube's nearest texel clamps to its face (Vulkan: address modes ignored for cubes)
            near = S.footprint(n, ext[:, k], False, "clamp-to-edge" if t.cube else mode, offset[:, k], model)
            if snap is not None:    # the linear footprint, weight 1 to the second texel where its fraction > 0.5
                near = tuple(np.where(snap, a, b) for a, b in zip(
                    (lin[0], lin[1], (lin[2] > np.float32(0.5)).astype(np.float32)), near))
            axes.append(tuple(np.where(linear, a, b) for a, b in zip(lin, near)))
        corners, outside, codes = {}, {}, {}
        for bits, _ in S.weights([a[2] for a in axes]):
            idx = [axes[k][bit] for k, bit in enumerate(bits)]
            x = idx[0]
            y = idx[1] if len(idx) > 1 else np.zeros(L, np.int64)
            z = idx[2] if t.dim == "3d" else layer
            if t.cube:
                f2, x, y, outside[bits] = S.cube_texel(face, x, y, ext[:, 0])
                z = layer - face + f2
            raw = _gather_raw(tex, lv, z, y, x)
            texel = texels.decode(tex.format, raw, model)
            if srgb_aligned:        # the codes, for the exponents the H200 aligns sRGB texels by
                codes[bits] = np.rint(texels.decode(texels.FORMATS[tex.format.name.replace("-srgb", "")], raw) * 255)
            if fixed8 or wide16:        # the channel's integer, filtered as such below
                texel = np.rint(texel.astype(np.float64) * 255)
            if snorm16:                 # the signed integers, -128 too (it reads as -1)
                sint = texels.decode(texels.FORMATS[tex.format.name.replace("snorm", "sint")], raw)
                texel = np.where(texel == -1, sint, np.rint(texel.astype(np.float64) * 127)).astype(np.float64)
            if ref is not None:
                texel = np.repeat(S.compare(ref, texel[:, 0], smp.compare or "always")[:, None], 4, axis=1)
            corners[bits] = texel
        fetched = dict(corners)
        split8 = model.filter_weights == "split8"      # integer weights (the H200's)
        thirds = split8 and model.cube_corners == "thirds"
        for bits, out in outside.items():      # a cube corner no face holds: the other three's mean
            if out.any() and not thirds:
                if model.cube_corners == "subgroup-weights":        # llvmpipe's (a gather's) f32 third
                    mean = S.corner_third_sum(corners, bits)
                else:
                    mean = S.corner_mean([corners[b] for b in corners if b != bits])
                corners[bits] = np.where(out[:, None], mean, corners[bits])
        # a texture unit whose SIMD vector (a subgroup) filters by weights when any lane meets a corner
        by_vector = None
        if outside and model.cube_corners == "subgroup-weights" and len(axes) == 2:
            hit = np.zeros(L, bool)
            for out in outside.values():
                hit |= out & np.asarray(mask, bool)
            sg = np.arange(L) // ex.opts.subgroup_size
            by_vector = (np.bincount(sg, weights=hit) > 0)[sg]
        if fixed8:
            fixed.append(S.fixed8_filter({b: c.astype(np.int64) for b, c in corners.items()}, [a[2] for a in axes]))
            continue
        alphas = [a[2] for a in axes]
        split = None
        if split8:
            split = S.split_weights(np.rint(wmip * 256), alphas)
            split = S.corner_thirds(split, outside) if thirds else split
        # this level's texels, weights, and the exponents they align by: the H200 aligns a 3-D footprint
        # per z slice, as two 2-D ones (f16_3d_mips_8x4x2_nearest 79 lanes of 4,096 differed aligned as one)
        groups = {}
        for bits, w in S.weights(alphas):
            taps.append((bits, corners[bits]))
            ws.append(w * wmip if split is None else split[bits] / 256)
            level = groups.setdefault(bits[2] if len(bits) == 3 else 0, ([], [], []))
            for part, v in zip(level, (corners[bits], ws[-1], S.srgb_exponents(codes[bits], model.srgb_decode)
                                                             if srgb_aligned else None)):
                part.append(v)
        by_level.extend(groups.values())
        if by_lerp:
            lerped.append(S.reduce_axes(corners, [a[2] for a in axes], S.fma_lerp))
            if by_vector is not None and by_vector.any():
                lerped[-1] = np.where(by_vector[:, None], S.cube_corner_sum(fetched, outside, [a[2] for a in axes]),
                                      lerped[-1])
    if gather:
        comp = int(np.asarray(ops.get("component", 0)).reshape(-1)[0])
        corner = dict(taps)
        # WGSL's order: (umin, vmax), (umax, vmax), (umax, vmin), (umin, vmin)
        return np.stack([corner[b][:, comp] for b in ((0, 1), (1, 1), (1, 0), (0, 0))], axis=1)
    if fixed8:
        c = fixed[0] if len(fixed) == 1 else S.fixed8_lerp(fixed[0], fixed[1], delta, floor=True)
        return texels.normalized(c, 255, model)
    values = [tx for _, tx in taps]
    if wide16:
        return S.unorm16_filter(values, ws)
    if snorm16:
        return S.snorm16_filter(values, ws)
    half = tex.format.kind == "float" and tex.format.bits[0] == 16
    if by_lerp:
        out = lerped[0] if len(lerped) == 1 else S.fma_lerp(lerped[0], lerped[1], delta)
    elif half and model.half_filter == "aligned-15" and ref is None:       # each level aligned on its own
        out = texels.filtered_half(sum(S.aligned_sum(v, w, 15, e) for v, w, e in by_level))
    elif srgb_aligned:       # colour channels aligned as the H200's decode table says; alpha:
        out = texels.filtered_half(sum(S.aligned_sum(v, w, 8, e) for v, w, e in by_level))
        out[:, 3] = S.unorm16_filter([np.rint(v.astype(np.float64) * 255) for v in values], ws)[:, 3]
    else:
        out = S.blend(values, ws)
    return out[:, 0].copy() if t.depth or fn == "sample_compare_level" else out
