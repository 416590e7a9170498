"""Texture filtering, as WebGPU specifies it (it follows Vulkan's "Texel Filtering" chapter):
cube face selection, level of detail, texel footprints and address modes, weights, comparison.

Everything works on per-lane numpy arrays; the executor fetches the texels. The per-vendor parts
are the profile's `TextureModel` (emu/numerics/texels.py): how many fractional bits the hardware
keeps of a texel coordinate before it forms the linear weights (sub-texel precision) and of the
level of detail before it blends two mip levels, and how a nearest mip level rounds a level of
detail that is exactly half way. The reference model keeps f32's bits and rounds half way down
(Vulkan's ceil(d + 0.5) - 1).
"""
from __future__ import annotations

import numpy as np

from .builtins import _fma
from .texels import F32, TextureModel


def _quantize(x: np.ndarray, bits: int | None, rounding: str) -> np.ndarray:
    """x to a multiple of 2^-bits, rounded down or to nearest with halves up (hardware keeps
    fixed-point coordinates)."""
    if bits is None:
        return x
    y = x.astype(np.float64) * (1 << bits)
    return ((np.floor(y) if rounding == "floor" else np.floor(y + 0.5)) / (1 << bits)).astype(F32)


# -- cube maps -------------------------------------------------------------------------------------

def cube_face(d: np.ndarray, coords: str = "divide"):
    """Direction (L, 3) -> (face, s, t): the face (WebGPU's layer order +X -X +Y -Y +Z -Z) of the
    major axis (ties go to z, then y, as Vulkan implementations choose) and the face coordinates
    in [0, 1] (Vulkan's table of sc, tc, ma): 0.5 * (sc / ma + 1) in f32, or (coords
    "half-reciprocal", llvmpipe's) sc * f32(0.5 / ma) + 0.5, each step rounded."""
    x, y, z = (d[:, k].astype(F32) for k in range(3))
    ax, ay, az = np.abs(x), np.abs(y), np.abs(z)
    use_z = (az >= ax) & (az >= ay)
    use_y = ~use_z & (ay >= ax)
    face = np.where(use_z, np.where(z >= 0, 4, 5), np.where(use_y, np.where(y >= 0, 2, 3), np.where(x >= 0, 0, 1)))
    sc = np.choose(face, [-z, z, x, x, x, -x])
    tc = np.choose(face, [-y, -y, z, -z, -y, -y])
    ma = np.choose(face, [ax, ax, ay, ay, az, az])
    with np.errstate(divide="ignore", invalid="ignore"):
        if coords == "half-reciprocal":
            half = (F32(0.5) / ma).astype(F32)
            s = ((sc * half).astype(F32) + F32(0.5)).astype(F32)
            t = ((tc * half).astype(F32) + F32(0.5)).astype(F32)
        else:
            s = (F32(0.5) * (sc / ma + F32(1))).astype(F32)
            t = (F32(0.5) * (tc / ma + F32(1))).astype(F32)
    return face.astype(np.int64), s, t


def cube_texel(face: np.ndarray, i: np.ndarray, j: np.ndarray, n: np.ndarray):
    """Texel (i, j) of a cube face of n x n texels, at most one step past an edge -> (face, i, j,
    corner): past one edge, the texel of the adjacent face that meets it there (Vulkan's cube map
    edge handling, as the texel centre's direction re-projected: integers, no rounding); past two
    (a corner, which no face holds) corner is True and the texel is the face's own corner."""
    corner = ((i < 0) | (i >= n)) & ((j < 0) | (j >= n))
    i, j = np.where(corner, np.clip(i, 0, n - 1), i), np.where(corner, np.clip(j, 0, n - 1), j)
    sc, tc, m = 2 * i + 1 - n, 2 * j + 1 - n, n                # face coordinates, in units of 1/n
    x = np.choose(face, [m, -m, sc, sc, sc, -sc])
    y = np.choose(face, [-tc, -tc, m, -m, -tc, -tc])
    z = np.choose(face, [-sc, sc, tc, -tc, m, -m])
    f2, _, _ = cube_face(np.stack([x, y, z], 1).astype(np.float64))
    sc2 = np.choose(f2, [-z, z, x, x, x, -x])
    tc2 = np.choose(f2, [-y, -y, z, -z, -y, -y])
    m2 = np.choose(f2, [np.abs(x)] * 2 + [np.abs(y)] * 2 + [np.abs(z)] * 2)
    i2 = np.clip((sc2 + m2) * n // (2 * m2), 0, n - 1)        # floor((sc / ma + 1) / 2 * n)
    j2 = np.clip((tc2 + m2) * n // (2 * m2), 0, n - 1)
    return f2, i2, j2, corner


def corner_mean(texels: list[np.ndarray]) -> np.ndarray:
    """The value of a cube corner's missing texel: the mean of the footprint's other three."""
    return (sum(t.astype(np.float64) for t in texels) / 3).astype(texels[0].dtype)


def corner_third_sum(corners: dict, missing) -> np.ndarray:
    """llvmpipe's value of a gathered cube corner's missing texel: the footprint's four texels, the
    missing one as 0, summed in f32 as (00 + 10) + (01 + 11) and times f32(1/3) (measured: every
    corner lane of a gather on 4x4 cube faces of rgba16float, 42, and rgba8unorm, 25)."""
    c = {k: np.where(k == missing, F32(0), v.astype(F32)) for k, v in corners.items()}
    pair0 = (c[(0, 0)] + c[(1, 0)]).astype(F32)
    pair1 = (c[(0, 1)] + c[(1, 1)]).astype(F32)
    return ((pair0 + pair1).astype(F32) * F32(1 / 3)).astype(F32)


def cube_corner_sum(corners: dict, outside: dict, alphas: list) -> np.ndarray:
    """llvmpipe's filter of a cube footprint in a SIMD vector (a subgroup) where some lane meets a
    cube corner: f32 weights (1-a)(1-b), a(1-b), (1-a)b, ab; a corner's weight, times f32(1/3), goes to
    each of the other three (its own becomes 0); the products summed in f32 in the order 00, 10,
    01, 11, unfused (measured on lavapipe: every lane of such subgroups, 197 of 197)."""
    a, b = (x.astype(F32)[:, None] for x in alphas)
    one = F32(1)
    w = {(0, 0): (one - a) * (one - b), (1, 0): a * (one - b), (0, 1): (one - a) * b, (1, 1): a * b}
    for k, out in outside.items():              # at most one corner per footprint
        share = (w[k] * F32(1 / 3)).astype(F32)
        for o in w:
            if o != k:
                w[o] = np.where(out[:, None], (w[o] + share).astype(F32), w[o])
        w[k] = np.where(out[:, None], F32(0), w[k])
    acc = None
    for k in ((0, 0), (1, 0), (0, 1), (1, 1)):
        p = (corners[k].astype(F32) * w[k]).astype(F32)
        acc = p if acc is None else (acc + p).astype(F32)
    return acc


def cube_gradient(d: np.ndarray, dd: np.ndarray, face: np.ndarray) -> np.ndarray:
    """A direction's derivative (L, 3) as the derivative of the face coordinates (s, t) (L, 2):
    Vulkan's d(s)/dx = (d(sc)/dx * |ma| - sc * d(|ma|)/dx) / (2 ma^2), the same for t."""
    d, dd = d.astype(np.float64), dd.astype(np.float64)
    x, y, z = (d[:, k] for k in range(3))
    dx, dy, dz = (dd[:, k] for k in range(3))
    sc = np.choose(face, [-z, z, x, x, x, -x])
    tc = np.choose(face, [-y, -y, z, -z, -y, -y])
    dsc = np.choose(face, [-dz, dz, dx, dx, dx, -dx])
    dtc = np.choose(face, [-dy, -dy, dz, -dz, -dy, -dy])
    m = np.choose(face, [x, x, y, y, z, z])
    dm = np.choose(face, [dx, dx, dy, dy, dz, dz]) * np.sign(m)
    ma = np.abs(m)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.stack([(dsc * ma - sc * dm) / (2 * ma * ma), (dtc * ma - tc * dm) / (2 * ma * ma)], axis=1)


# -- levels of detail ---------------------------------------------------------------------------

# Mesa gallivm's log2 (lp_build_log2): the exponent plus y * P(y^2), y = (m - 1) / (m + 1) of the
# mantissa m in [1, 2), P its degree-4 minimax polynomial (coefficients as f32), fused multiply-adds
LLVMPIPE_LOG2 = (2.88539009343309178325, 0.961791550404184197881, 0.577440339438736392009,
                 0.403343858251329912514, 0.406718052498846252698)


def llvmpipe_log2(x: np.ndarray) -> np.ndarray:
    """log2 of positive f32 x as llvmpipe computes it (LLVMPIPE_LOG2); P(z) even and odd terms
    apart, in z^2, as lp_build_polynomial does."""
    x = np.asarray(x, F32)
    bits = x.view(np.int32)
    exponent = (((bits & 0x7F800000) >> 23) - 127).astype(F32)
    m = ((bits & 0x007FFFFF) | 0x3F800000).view(F32)
    with np.errstate(all="ignore"):
        y = ((m - F32(1)).astype(F32) / (m + F32(1)).astype(F32)).astype(F32)
        z = (y * y).astype(F32)
        z2 = (z * z).astype(F32)
        c = [np.full(z.shape, F32(k)) for k in LLVMPIPE_LOG2]
        even = _fma("f32", z2, _fma("f32", z2, c[4], c[2]), c[0])
        odd = _fma("f32", z2, c[3], c[1])
        return _fma("f32", y, _fma("f32", odd, z, even), exponent)


def lod_from_gradients(ddx: np.ndarray, ddy: np.ndarray, size: np.ndarray, how: str = "exact") -> np.ndarray:
    """Vulkan's scale factor: lambda = log2(max(|ddx * size|, |ddy * size|)), the lengths
    Euclidean, from gradients of normalised coordinates (L, n) and the base level's size (L, n).
    how "llvmpipe": each step in f32 (the products, their squares summed x, y, z, the larger, its
    square root) and llvmpipe_log2 (measured on lavapipe: 4,096 of 4,096 levels of detail of 2-D
    gradients; the exact log2 of the f32 length differs at 2,139)."""
    if how == "llvmpipe":
        def length2(d):
            p = (d.astype(F32) * size.astype(F32)).astype(F32)
            acc = (p[:, 0] * p[:, 0]).astype(F32)
            for k in range(1, p.shape[1]):
                acc = (acc + (p[:, k] * p[:, k]).astype(F32)).astype(F32)
            return acc
        with np.errstate(all="ignore"):
            return llvmpipe_log2(np.sqrt(np.maximum(length2(ddx), length2(ddy))).astype(F32))
    gx = np.sqrt(np.sum((ddx.astype(np.float64) * size) ** 2, axis=1))
    gy = np.sqrt(np.sum((ddy.astype(np.float64) * size) ** 2, axis=1))
    with np.errstate(divide="ignore"):
        return np.log2(np.maximum(gx, gy)).astype(F32)


# -- the H200's level of detail from explicit gradients ----------------------------------------
# Measured (traces/hw/README.md, textures_lod_probe.npz): textureSampleGrad reaches the texture unit
# as a quad whose lanes are c, c + ddx, c + ddy; the unit takes the texel-space differences dx, dy,
# each component's magnitude truncated to 9 fraction bits (_t9), and the length of a vector as an
# octagon: the largest component + 11/32 of the middle one (rounded to 2 bits below its 9) + 1/4
# of the smallest; the ellipse's major axis as the largest of |dx|, |dy| and 11/16 |dx +- dy| (the
# sums of the truncated components, truncated again; 11/16 of the largest rounded to 10 bits then
# truncated to 9, 121/512 of the middle rounded to 3 bits below its 9, 11/64 of the smallest);
# the level of detail is the length's exponent plus a 256-entry table of its 8-bit mantissa.

def _exponent(x: np.ndarray) -> np.ndarray:
    return np.frexp(x)[1].astype(np.float64) - 1


def _grid(x: np.ndarray, ref: np.ndarray, bits: int, rounding: str) -> np.ndarray:
    """x (>= 0) to multiples of 2^(exponent(ref) - bits): truncated, or to nearest with halves up."""
    g = np.ldexp(1.0, (_exponent(np.where(ref > 0, ref, 1.0)) - bits).astype(np.int64))
    y = x / g
    return np.where(ref > 0, (np.floor(y) if rounding == "floor" else np.floor(y + 0.5)) * g, 0.0)


def _t9(x: np.ndarray) -> np.ndarray:
    a = np.abs(x)
    return _grid(a, a, 9, "floor")


def _h200_length(v: np.ndarray, diagonal: bool) -> np.ndarray:
    a = -np.sort(-_t9(v), axis=1)
    if diagonal:
        out = _t9(_grid(11 / 16 * a[:, 0], a[:, 0], 10, "half-up"))
        w, bits = (121 / 512, 11 / 64), (12, 12)
    else:
        out = a[:, 0].copy()
        w, bits = (11 / 32, 1 / 4), (11, None)
    for k in range(1, a.shape[1]):
        out = out + (w[k - 1] * a[:, k] if bits[k - 1] is None else _grid(w[k - 1] * a[:, k], a[:, k], bits[k - 1], "half-up"))
    return out


def h200_lod(dx: np.ndarray, dy: np.ndarray, table) -> np.ndarray:
    """The H200's level of detail (f32) from a quad's texel-space differences dx, dy (L, n)."""
    qx, qy = np.sign(dx) * _t9(dx), np.sign(dy) * _t9(dy)
    major = np.maximum(np.maximum(_h200_length(dx, False), _h200_length(dy, False)),
                       np.maximum(_h200_length(qx + qy, True), _h200_length(qx - qy, True)))
    m, e = np.frexp(np.where(major > 0, major, 1.0))
    j = np.clip(np.floor((2 * m - 1) * 256), 0, 255).astype(np.int64)
    lod = (e - 1) + np.asarray(table, np.float64)[j] / 256
    return np.where(major > 0, lod, -np.inf).astype(F32)


_CUBE_AXIS, _CUBE_SIGN = np.array([0, 0, 1, 1, 2, 2]), np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])


def cube_quad_differences(d: np.ndarray, dd: np.ndarray, face: np.ndarray) -> np.ndarray:
    """A cube's face coordinates (s, t) of the lane at d + dd (the shader's f32 add) less those at
    d, on d's face (L, 2): a direction on a neighbouring face is unfolded across the shared edge
    (its distance from the edge on its own face continues past d's edge), one on the opposite face
    projected as it is."""
    d = d.astype(F32)
    v = (d + dd.astype(F32)).astype(F32)
    own = cube_face(v)[0]
    n = np.arange(len(v))
    m0, s0, m1, s1 = _CUBE_AXIS[face], _CUBE_SIGN[face], _CUBE_AXIS[own], _CUBE_SIGN[own]
    v = v.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = v / np.abs(v[n, m1])[:, None]
    u = q.copy()
    u[n, m1] = s1 * (2 - s0 * q[n, m0])
    u[n, m0] = s0
    w = np.where(((own != face) & (m1 != m0))[:, None], u, v)

    def st(x):
        a, b, c = (x[:, k] for k in range(3))
        sc, tc = np.choose(face, [-c, c, a, a, a, -a]), np.choose(face, [-b, -b, c, -c, -b, -b])
        ma = np.abs(np.choose(face, [a, a, b, b, c, c]))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.stack([0.5 * (sc / ma + 1), 0.5 * (tc / ma + 1)], axis=1)
    return st(w) - st(d.astype(np.float64))


def mip_levels(lod: np.ndarray, levels: int, mipmap_filter: str, lod_min: float, lod_max: float,
               model: TextureModel):
    """(magnify, first level, second level, weight of the second) per lane for a level of detail."""
    lam = np.clip(lod.astype(F32), F32(lod_min), F32(lod_max))
    lam = np.where(np.isnan(lam), F32(lod_min), lam)
    magnify = lam <= 0
    q = levels - 1
    d = _quantize(np.clip(lam, F32(0), F32(q)), model.lod_bits, model.lod_rounding)
    if mipmap_filter == "nearest":
        near = np.ceil(d + F32(0.5)) - 1 if model.mip_nearest == "half-down" else \
            np.rint(d) if model.mip_nearest == "half-even" else np.floor(d + F32(0.5))
        lv = np.clip(near, 0, q).astype(np.int64)
        return magnify, lv, lv, np.zeros(lod.shape, F32)
    lo = np.floor(d).astype(np.int64)
    return magnify, lo, np.minimum(lo + 1, q), (d - np.floor(d)).astype(F32)


# -- texel footprints ----------------------------------------------------------------------------

def wrap(i: np.ndarray, size: np.ndarray, mode: str) -> np.ndarray:
    """Integer texel coordinate -> inside [0, size): WebGPU's address modes."""
    if mode == "repeat":
        return np.mod(i, size)
    if mode == "cube":                  # past a cube face's edge: cube_texel moves it to the next face
        return i
    if mode == "mirror-repeat":
        t = np.mod(i, 2 * size)
        return np.where(t >= size, 2 * size - 1 - t, t)
    return np.clip(i, 0, size - 1)


def wrap_normalized(s: np.ndarray, size: np.ndarray, linear: bool, mode: str, offset, model: TextureModel,
                    gather: bool = False):
    """llvmpipe's repeat and mirror-repeat (wrap_coords "normalized"; "normalized-npot": repeat only
    where the size is not a power of two) wrap the normalised coordinate in f32 before it meets the
    size: repeat by fract(s) (nearest: at most 1 - 2^-24), mirror-repeat by |2 (s/2 - rint(s/2))| (a
    gather keeps the sign: a negative one's texels are mirrored as integers, so the pair comes in the
    other order), an offset added first as f32(offset / size). Returns (s, offset) for footprint; the
    texel indices wrap as before (they stay within one step of [-size, size])."""
    if model.wrap_coords == "texel" or mode not in ("repeat", "mirror-repeat"):
        return s, offset
    pot = (size & (size - 1)) == 0
    if mode == "repeat" and model.wrap_coords == "normalized-npot" and pot.all():
        return s, offset
    with np.errstate(invalid="ignore", over="ignore"):
        w = s.astype(F32)
        if np.any(offset):
            w = (w + (np.asarray(offset, F32) / size.astype(F32)).astype(F32)).astype(F32)
        if mode == "repeat":
            w = (w - np.floor(w)).astype(F32)
            if not linear:
                w = np.minimum(w, F32(1 - 2.0 ** -24))
        else:
            h = (w * F32(0.5)).astype(F32)
            w = ((h - np.rint(h)).astype(F32) * F32(2)).astype(F32)
            w = w if gather else np.abs(w)
    if mode == "repeat" and model.wrap_coords == "normalized-npot":
        return np.where(pot, s, w), np.where(pot, offset, 0)
    return w, np.zeros_like(np.asarray(offset))


def footprint(s: np.ndarray, size: np.ndarray, linear: bool, mode: str, offset, model: TextureModel,
              gather: bool = False):
    """For normalised coordinates `s` over `size` texels: (i0, i1, alpha), the texels (wrapped)
    and the weight of i1; nearest: i0 == i1 and alpha 0."""
    s, offset = wrap_normalized(s, size, linear, mode, offset, model, gather)
    with np.errstate(invalid="ignore", over="ignore"):     # NaN or huge coordinates: kept in range below
        if model.coordinate_bits is None:                   # the f32 product
            u = (s.astype(F32) * size.astype(F32)).astype(F32)
        else:       # the coordinate in fixed point first (rounded down), then scaled exactly
            u = np.floor(s.astype(np.float64) * (1 << model.coordinate_bits)) / (1 << model.coordinate_bits) * size
        u = np.nan_to_num(u, nan=0.0, posinf=2.0 ** 30, neginf=-2.0 ** 30)
    if not linear:
        i = np.floor(u).astype(np.int64) + offset
        w = wrap(i, size, mode)
        return w, w, np.zeros(u.shape, F32)
    a = _quantize(u - u.dtype.type(0.5), model.subtexel_bits, model.subtexel_rounding)     # f64 if fixed point
    i0 = np.floor(a).astype(np.int64)
    alpha = (a - np.floor(a)).astype(F32)
    i0 = i0 + offset
    w0, w1 = wrap(i0, size, mode), wrap(i0 + 1, size, mode)
    if mode == "clamp-to-edge" and model.filter_weights == "split8":
        # past an edge both texels are the edge texel: the H200 gives it all the weight (as if the
        # coordinate were clamped to the texel's centre), which its integer split makes visible
        # (unorm8_mips: 149 lookups of 4096); a gather still returns both (the compare case)
        alpha = np.where(w0 == w1, F32(0), alpha)
    return w0, w1, alpha


def weights(alphas: list[np.ndarray]) -> list[tuple[tuple[int, ...], np.ndarray]]:
    """The 2^n corner weights of n linear axes: ((bit of each axis), product of weights), in f64."""
    out = [((), np.ones(alphas[0].shape, np.float64))] if alphas else [((), np.ones(1))]
    for a in alphas:
        a = a.astype(np.float64)
        out = [(k + (0,), w * (1 - a)) for k, w in out] + [(k + (1,), w * a) for k, w in out]
    return out


def split_weights(total: np.ndarray, alphas: list[np.ndarray]) -> dict:
    """The H200's integer linear weights, in units of 1/256: a level's share of the 256 (all of it,
    or 256 - L and L between two mip levels, L the level of detail's 8 fractional bits) split axis by
    axis, z first (3-D), then x, then y, by each axis's 8-bit fraction f: the upper texel gets
    total * f / 256 rounded, the lower one the rest; halves round up, except in the y split under the
    lower x texel, where they round down. In 2-D at one level: w11 = round(A * B / 256), w10 = A - w11,
    w01 = B - w11 (measured on the H200: every value of unorm8_2d, unorm8_mips, f16_filter_2d,
    unorm8_3d). Returns {(bit per axis): weights}."""
    n = len(alphas)
    parts = {(None,) * n: np.asarray(total, np.float64)}
    for k in ([2, 0, 1] if n == 3 else list(range(n))):
        f = np.rint(alphas[k].astype(np.float64) * 256) / 256
        split = {}
        for bits, t in parts.items():
            hi = np.ceil(t * f - 0.5) if k == 1 and bits[0] == 0 else np.floor(t * f + 0.5)
            split[bits[:k] + (0,) + bits[k + 1:]] = t - hi
            split[bits[:k] + (1,) + bits[k + 1:]] = hi
        parts = split
    return parts


def corner_thirds(ws: dict, outside: dict) -> dict:
    """A linear cube footprint's integer weights (split_weights) where a corner texel is on no face:
    its weight w goes to the other three, round(w / 3) (halves up) to each of the two beside it and
    the rest to the diagonal one, as the H200 does (measured: 32 of 32 corner lookups of cube_edges)."""
    ws = dict(ws)
    for k, out in outside.items():          # at most one corner per footprint
        w = np.where(out, ws[k], 0)
        beside = np.floor(w / 3 + 0.5)
        for o in ws:
            if o != k:
                diagonal = all(a != b for a, b in zip(o, k))
                ws[o] = ws[o] + (w - 2 * beside if diagonal else beside)
        ws[k] = ws[k] - w
    return ws


def aligned_sum(texels: list[np.ndarray], ws: list[np.ndarray], bits: int, exps: list | None = None) -> np.ndarray:
    """Weighted texels (L, 4) of one mip level summed as the H200's texture unit sums f16 (bits 15)
    and sRGB-decoded (bits 8) texels: per channel, each texel of nonzero weight truncated toward zero
    to a multiple of 2^(e - bits + 1), e the largest of their exponents (2^e <= |t| < 2^(e+1), or
    `exps`, frexp's e + 1, where the unit has its own: srgb_exponents): fixed point aligned to the
    footprint's largest texel; the products and their sum exact (f64). A 3-D footprint aligns per z
    slice (the caller passes each slice's four). Measured: every value of the f16 and sRGB cases
    (tests/hw/test_textures_hw.py) but 12 of f16 between two levels, and of 3-D f16 at one level."""
    exps = [np.where((w[:, None] != 0) & (t != 0), np.frexp(t.astype(np.float64))[1] if e is None else e, -1000)
            for t, w, e in zip(texels, ws, exps or [None] * len(texels))]
    step = np.ldexp(1.0, np.max(exps, axis=0) - bits)
    acc = np.zeros(texels[0].shape, np.float64)
    for t, w in zip(texels, ws):
        acc += np.trunc(t.astype(np.float64) / step) * step * w[:, None]
    return acc


def srgb_exponents(codes: np.ndarray, table) -> np.ndarray:
    """The exponent (frexp's) by which the H200 aligns a filtered sRGB texel: that of the last code of
    its 8-code segment of the decode table (codes 64..70 align as 71's, 0.0630 >= 2^-4, though they
    decode below 2^-4): its decode table keeps one exponent per 8 codes. Fitted on srgb_pairs (random
    code pairs), then every value of the sRGB cases."""
    return np.frexp(np.asarray(table, np.float32).astype(np.float64)[codes.astype(np.int64) | 7])[1]


def blend(texels: list[np.ndarray], ws: list[np.ndarray]) -> np.ndarray:
    """Sum of weighted texels (L, 4), accumulated exactly enough in f64 and rounded once to f32."""
    acc = np.zeros(texels[0].shape, np.float64)
    for t, w in zip(texels, ws):
        acc += t.astype(np.float64) * w[:, None]
    return acc.astype(F32)


def compare(ref: np.ndarray, texel: np.ndarray, fn: str) -> np.ndarray:
    """1.0 where `ref fn texel` holds (WebGPU's compare functions), else 0.0."""
    r, t = ref.astype(F32), texel.astype(F32)
    ok = {"never": np.zeros(r.shape, bool), "always": np.ones(r.shape, bool), "less": r < t,
          "less-equal": r <= t, "greater": r > t, "greater-equal": r >= t, "equal": r == t,
          "not-equal": r != t}[fn]
    return ok.astype(F32)


def fixed8_lerp(v0: np.ndarray, v1: np.ndarray, alpha: np.ndarray, floor: bool = False) -> np.ndarray:
    """8-bit fixed-point linear interpolation of channel integers (L, 4): weight round(a * 256)
    (between two mip levels: floor(a * 256)), (v0 * (256 - w) + v1 * w + 128) >> 8, as llvmpipe
    filters 8-bit unorm textures (measured: texels along an axis, and 4096 of 4096 mip blends)."""
    a = alpha.astype(np.float64) * 256
    w = (np.floor(a) if floor else np.rint(a)).astype(np.int64)[:, None]
    return (v0 * (256 - w) + v1 * w + 128) >> 8


def reduce_axes(corners: dict, alphas: list, lerp) -> np.ndarray:
    """The corners of a linear footprint ({(bit per axis): texels (L, 4)}) reduced axis by axis, x
    first, each pair by lerp(t0, t1, alpha of that axis)."""
    for k, a in enumerate(alphas):
        nxt = {}
        for bits, v in corners.items():
            if bits[k] == 0:
                hi = corners[bits[:k] + (1,) + bits[k + 1:]]
                nxt[bits[:k] + (0,) + bits[k + 1:]] = lerp(v, hi, a)
        corners = nxt
    return next(iter(corners.values()))


def fixed8_filter(corners: dict, alphas: list) -> np.ndarray:
    return reduce_axes(corners, alphas, fixed8_lerp)


def fma_lerp(t0: np.ndarray, t1: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """fma(alpha, t1 - t0, t0) in f32, the difference rounded first: how llvmpipe interpolates
    float texels (measured: every value of an sRGB texture filtered at 256 points, x first)."""
    d = (t1.astype(F32) - t0.astype(F32)).astype(F32)
    a = np.broadcast_to(alpha.astype(F32)[:, None], d.shape)
    with np.errstate(all="ignore"):
        return _fma("f32", a, d, t0.astype(F32))


def unorm16_filter(codes: list[np.ndarray], ws: list[np.ndarray]) -> np.ndarray:
    """8-bit unorm texels (their integers c, (L, 4)) filtered to a 16-bit unorm result: each widened
    to c * 257 (c / 255 on 65535's scale), weighted exactly, rounded to nearest with halves up, read
    as N / 65535 rounded once (the H200's texture unit: every value of a 4096-position probe)."""
    acc = np.zeros(codes[0].shape, np.float64)
    for c, w in zip(codes, ws):
        acc += c * 257 * w[:, None]         # exact: 16-bit codes times weights of a few fixed-point bits
    return (np.floor(acc + 0.5) / 65535).astype(F32)


def snorm16_filter(codes: list[np.ndarray], ws: list[np.ndarray]) -> np.ndarray:
    """8-bit snorm texels (their integers c, -128 included, (L, 4)) filtered to a 16-bit snorm
    result as the H200 does: N = round(sum(c * w) * 32767 / 127), halves up, read as N / 65535's
    signed twin N / 32767 (at least -1); -128 weighs as -128 / 127, not -1 (measured: snorm8_pairs;
    about 5% of values, near halves, come out one lower: not found)."""
    acc = np.zeros(codes[0].shape, np.float64)
    for c, w in zip(codes, ws):
        acc += c * w[:, None]
    return np.maximum(np.floor(acc * 32767 / 127 + 0.5) / 32767, -1).astype(F32)
