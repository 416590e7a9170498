"""Texel formats: what a texel of each WebGPU format holds and how its bytes become the numbers a
shader sees (and back), bit exact.

A format is its channels (in memory order), the kind of each channel's number and its width. The
shader always sees four components (vec4 of f32, i32 or u32; missing channels read as 0, alpha as
1); the rules are WebGPU's (and Vulkan's, which it follows):
- unorm: x / (2^n - 1) on reading; on writing, clamp to [0, 1], scale by 2^n - 1 and round to
  nearest, ties to even (Vulkan's "round to nearest" for unorm conversions);
- snorm: max(x / (2^(n-1) - 1), -1) on reading (both -2^(n-1) and -2^(n-1)+1 give -1); writing
  clamps to [-1, 1] and rounds as unorm does;
- uint/sint: the integer, on writing truncated to the channel's width (WebGPU leaves values out of
  range to the implementation: the low bits are what Vulkan drivers store);
- float: f32 as is; f16 by round to nearest even (f32 -> f16);
- ufloat (rg11b10ufloat): unsigned 11- and 10-bit floats (5-bit exponent, no sign);
- srgb: the sRGB transfer function on the colour channels, then unorm.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TexelFormat:
    name: str
    channels: str            # memory order, e.g. "rgba", "bgra", "rg"
    kind: str                # unorm snorm uint sint float ufloat
    bits: tuple[int, ...]    # per channel, in memory order
    srgb: bool = False
    depth: bool = False

    @property
    def bytes(self) -> int:
        return sum(self.bits) // 8

    @property
    def sampled(self) -> str:
        """The shader's component type: f32, i32 or u32."""
        return {"uint": "u32", "sint": "i32"}.get(self.kind, "f32")

    @property
    def filterable(self) -> bool:
        return self.kind in ("unorm", "snorm", "ufloat") or (self.kind == "float" and max(self.bits) <= 16)


def _fmt(name, channels, kind, bits, **kw):
    return TexelFormat(name, channels, kind, (bits,) * len(channels) if isinstance(bits, int) else bits, **kw)


_ALL = [
    _fmt("r8unorm", "r", "unorm", 8), _fmt("r8snorm", "r", "snorm", 8),
    _fmt("r8uint", "r", "uint", 8), _fmt("r8sint", "r", "sint", 8),
    _fmt("rg8unorm", "rg", "unorm", 8), _fmt("rg8snorm", "rg", "snorm", 8),
    _fmt("rg8uint", "rg", "uint", 8), _fmt("rg8sint", "rg", "sint", 8),
    _fmt("rgba8unorm", "rgba", "unorm", 8), _fmt("rgba8unorm-srgb", "rgba", "unorm", 8, srgb=True),
    _fmt("rgba8snorm", "rgba", "snorm", 8), _fmt("rgba8uint", "rgba", "uint", 8),
    _fmt("rgba8sint", "rgba", "sint", 8),
    _fmt("bgra8unorm", "bgra", "unorm", 8), _fmt("bgra8unorm-srgb", "bgra", "unorm", 8, srgb=True),
    _fmt("r16unorm", "r", "unorm", 16), _fmt("r16snorm", "r", "snorm", 16),
    _fmt("r16uint", "r", "uint", 16), _fmt("r16sint", "r", "sint", 16), _fmt("r16float", "r", "float", 16),
    _fmt("rg16unorm", "rg", "unorm", 16), _fmt("rg16snorm", "rg", "snorm", 16),
    _fmt("rg16uint", "rg", "uint", 16), _fmt("rg16sint", "rg", "sint", 16),
    _fmt("rg16float", "rg", "float", 16),
    _fmt("rgba16unorm", "rgba", "unorm", 16), _fmt("rgba16snorm", "rgba", "snorm", 16),
    _fmt("rgba16uint", "rgba", "uint", 16), _fmt("rgba16sint", "rgba", "sint", 16),
    _fmt("rgba16float", "rgba", "float", 16),
    _fmt("r32uint", "r", "uint", 32), _fmt("r32sint", "r", "sint", 32), _fmt("r32float", "r", "float", 32),
    _fmt("rg32uint", "rg", "uint", 32), _fmt("rg32sint", "rg", "sint", 32),
    _fmt("rg32float", "rg", "float", 32),
    _fmt("rgba32uint", "rgba", "uint", 32), _fmt("rgba32sint", "rgba", "sint", 32),
    _fmt("rgba32float", "rgba", "float", 32),
    _fmt("rgb10a2uint", "rgba", "uint", (10, 10, 10, 2)), _fmt("rgb10a2unorm", "rgba", "unorm", (10, 10, 10, 2)),
    _fmt("rg11b10ufloat", "rgb", "ufloat", (11, 11, 10)),
    _fmt("depth32float", "r", "float", 32, depth=True), _fmt("depth16unorm", "r", "unorm", 16, depth=True),
]
FORMATS: dict[str, TexelFormat] = {f.name: f for f in _ALL}

F32 = np.float32
NORMALIZED_DECODE = ("exact", "mul-reciprocal")
MIP_NEAREST = ("half-down", "half-up", "half-even")
HALF_STORE = ("nearest-even", "toward-zero")
HALF_FILTER = ("f32", "aligned-15")
SRGB_FILTER = ("float", "aligned-8")
FILTER_WEIGHTS = ("product", "split8")
UNORM8_FILTER = ("float", "fixed8", "fixed8-aos", "unorm16")
SNORM8_FILTER = ("float", "snorm16")
FLOAT_FILTER = ("exact", "fma-lerp")
CUBE_CORNERS = ("mean", "subgroup-weights", "thirds")
CUBE_COORDS = ("divide", "half-reciprocal")
WRAP_COORDS = ("texel", "normalized", "normalized-npot")
MIXED_FILTERS = ("select", "snapped-weights")
LOD_GRADIENTS = ("exact", "llvmpipe", "h200-quad")
NORM8_STORE = ("nearest-even", "truncated-half-down")
FIXED_ROUNDING = ("floor", "half-up")


@dataclass(frozen=True)
class TextureModel:
    """What a device's texture unit does where WebGPU leaves room (a profile's `textures` field):
    how unorm/snorm texels become f32 (correctly rounded, or c * f32(1/(2^n - 1))), how many
    fractional bits of a texel coordinate form the linear weights and of the level of detail
    blend two mip levels (None: f32's), how a nearest mip rounds a level exactly half way, and how
    a store to an f16 channel rounds (Vulkan allows to nearest even or toward zero), whether
    linear filtering of 8-bit unorm texels runs in f32, in 8-bit fixed point, or to a 16-bit unorm
    result, how the fixed-point fractions round (floor, or to nearest with halves up), and how a
    store to an 8-bit unorm/snorm channel rounds (to nearest even, or through a truncated value
    with 4 more bits, halves down), and what an sRGB colour channel decodes to (the exact curve,
    or a device's own 256 values: texture units decode sRGB by a table, each its own, measured),
    and how texels that are filtered as floats combine (the weighted sum rounded once to f32, or
    f32 lerps fma(a, t1 - t0, t0) axis by axis, x first, then between the two mip levels), and how
    linear cube filtering at a corner of the cube (where a footprint's fourth texel is on no face)
    goes: the missing texel is the mean of the other three (Vulkan's rule), or, as llvmpipe does,
    a whole subgroup with such a lane sums f32 weights with the corner's shared out, or, as the H200
    does, the corner's integer weight is shared out by thirds (sampling.corner_thirds); and whether
    the linear weights are products of the fractions or the H200's integer split of 256 units
    (sampling.split_weights), and how f16 and sRGB texels are summed (as floats, or aligned to the
    footprint's largest texel and truncated to 15 / 8 significant bits: sampling.aligned_sum)."""
    normalized_decode: str = "exact"
    subtexel_bits: int | None = None
    lod_bits: int | None = None
    mip_nearest: str = "half-down"
    half_store: str = "nearest-even"
    unorm8_filter: str = "float"
    subtexel_rounding: str = "half-up"      # how a coordinate's fraction becomes subtexel_bits bits
    lod_rounding: str = "floor"             # and the level of detail's, lod_bits bits
    half_filter: str = "f32"                # filtered f16 texels: summed as floats, or aligned to 15 bits
    norm8_store: str = "nearest-even"       # f32 -> unorm8/snorm8 on textureStore
    srgb_decode: tuple | None = None        # sRGB colour channel c -> f32: the exact curve, or the device's 256 values
    float_filter: str = "exact"             # weighted sum rounded once, or fma lerps axis by axis
    cube_corners: str = "mean"              # a cube corner's missing texel: the mean of three, or llvmpipe's weights
    srgb_filter: str = "float"              # filtered sRGB colour channels: as floats, or aligned to 8 bits
    filter_weights: str = "product"         # linear weights: products of the fractions, or an integer split
    coordinate_bits: int | None = None      # a normalised coordinate's fractional bits before it meets the size
    snorm8_filter: str = "float"            # linear filtering of 8-bit snorm texels: in f32, or to a snorm16 result
    cube_coords: str = "divide"             # a cube face's s: 0.5 * (sc / ma + 1), or llvmpipe's sc * f32(0.5 / ma) + 0.5
    wrap_coords: str = "texel"              # repeat/mirror-repeat on texel indices, or on the normalised f32 coordinate
    mixed_filters: str = "select"           # min != mag filter: a nearest lane's texel, or llvmpipe's linear with 0/1 weights
    lod_gradients: str = "exact"            # textureSampleGrad's level of detail: log2 of the exact length, llvmpipe's f32 steps, or the H200's (sampling.h200_lod)
    lod_log2: tuple | None = None           # h200-quad: the level of detail's 8-bit fraction for each 8-bit mantissa of the length

    def describe(self) -> str:
        sub = "f32" if self.subtexel_bits is None else f"{self.subtexel_bits} fractional bits"
        lod = "f32" if self.lod_bits is None else f"{self.lod_bits} fractional bits"
        return (f"normalized texels {self.normalized_decode}, linear weights from {sub}, level of detail "
                f"{lod}, nearest mip rounds {self.mip_nearest}, f16 stores round {self.half_store}, 8-bit unorm "
                f"filtering in {self.unorm8_filter}, 8-bit normalized stores {self.norm8_store}, sRGB decoded "
                f"{'by the exact curve' if self.srgb_decode is None else 'by the device table'}, float texels filtered "
                f"{'as one rounded sum' if self.float_filter == 'exact' else 'by fma lerps'}, cube corners "
                f"{self.cube_corners}, weights {self.filter_weights}, f16 texels filtered {self.half_filter}, sRGB "
                f"filtered {self.srgb_filter}")


REFERENCE = TextureModel()

# The formats WGSL's texture_storage_* may name (WGSL's texel formats: the core set, bgra8unorm
# with the bgra8unorm-storage feature, the rest with texture-formats-tier1).
STORAGE_FORMATS = tuple(n for n, f in FORMATS.items() if not f.srgb and not f.depth)


# -- bytes <-> the numbers a shader sees -------------------------------------------------------

def _channel_ints(fmt: TexelFormat, raw: np.ndarray) -> list[np.ndarray]:
    """Each channel's bits as uint64, in memory order, from raw (..., fmt.bytes) uint8."""
    if len(set(fmt.bits)) == 1 and fmt.bits[0] in (8, 16, 32):
        word = np.dtype(f"<u{fmt.bits[0] // 8}")
        v = np.ascontiguousarray(raw).view(word)
        return [v[..., k].astype(np.uint64) for k in range(len(fmt.channels))]
    packed = np.ascontiguousarray(raw).view("<u4")[..., 0].astype(np.uint64)     # rgb10a2, rg11b10
    out, shift = [], 0
    for b in fmt.bits:
        out.append((packed >> np.uint64(shift)) & np.uint64((1 << b) - 1))
        shift += b
    return out


def _pack(fmt: TexelFormat, chans: list[np.ndarray]) -> np.ndarray:
    """Channel bits (uint64, memory order) -> raw (..., fmt.bytes) uint8."""
    if len(set(fmt.bits)) == 1 and fmt.bits[0] in (8, 16, 32):
        word = np.dtype(f"<u{fmt.bits[0] // 8}")
        v = np.stack([c.astype(word) for c in chans], axis=-1)
        return np.ascontiguousarray(v).view(np.uint8)
    packed, shift = np.zeros(chans[0].shape, np.uint64), 0
    for c, b in zip(chans, fmt.bits):
        packed |= (c & np.uint64((1 << b) - 1)) << np.uint64(shift)
        shift += b
    return packed.astype("<u4")[..., None].view(np.uint8)


def _ufloat_decode(bits: np.ndarray, mant: int) -> np.ndarray:
    """Unsigned small floats (5-bit exponent, bias 15, `mant` mantissa bits, no sign) -> f64."""
    e = (bits >> np.uint64(mant)).astype(np.int64)
    f = (bits & np.uint64((1 << mant) - 1)).astype(np.float64)
    normal = np.ldexp(1.0 + f / (1 << mant), e - 15)
    sub = np.ldexp(f / (1 << mant), -14)
    special = np.where(f == 0, np.inf, np.nan)
    return np.where(e == 31, special, np.where(e == 0, sub, normal))


def _ufloat_encode(x: np.ndarray, mant: int) -> np.ndarray:
    """f32 -> unsigned small float bits, rounding to nearest even; negative values and -0 are 0,
    values past the largest finite become infinity, NaN stays NaN."""
    x = x.astype(np.float64)
    out = np.zeros(x.shape, np.uint64)
    pos = x > 0
    m, e = np.frexp(np.where(pos & np.isfinite(x), x, 1.0))     # x = m * 2^e, m in [0.5, 1)
    exp = e - 1 + 15                                            # biased exponent of 1.m form
    # normal: scale the significand to mant bits; subnormal (exp <= 0): fixed step 2^(-14-mant)
    q = np.where(exp > 0, np.rint(np.ldexp(m * 2.0, mant)), np.rint(np.ldexp(np.where(pos, x, 0.0), 14 + mant)))
    normal_bits = np.where(q >= (2 << mant), ((exp + 1) << mant).astype(np.int64),
                           (exp.astype(np.int64) << mant) + (q.astype(np.int64) - (1 << mant)))
    sub_bits = q.astype(np.int64)                               # reaching 2^mant gives the first normal
    bits = np.where(exp > 0, normal_bits, sub_bits)
    bits = np.where(bits >= (31 << mant), 31 << mant, bits)     # overflow: infinity
    out = np.where(pos & np.isfinite(x), bits, 0).astype(np.uint64)
    out = np.where(np.isposinf(x), np.uint64(31 << mant), out)
    out = np.where(np.isnan(x), np.uint64((31 << mant) | 1), out)
    return out.astype(np.uint64)


def _srgb_to_linear(u: np.ndarray) -> np.ndarray:
    return np.where(u <= 0.04045, u / 12.92, ((u + 0.055) / 1.055) ** 2.4)


def decode(fmt: TexelFormat, raw: np.ndarray, model: "TextureModel | None" = None) -> np.ndarray:
    with np.errstate(all="ignore"):         # NaN and infinite texels convert as they are
        return _decode(fmt, raw, model or REFERENCE)


def encode(fmt: TexelFormat, values: np.ndarray, model: "TextureModel | None" = None) -> np.ndarray:
    with np.errstate(all="ignore"):
        return _encode(fmt, values, model or REFERENCE)


def _to_half(x: np.ndarray, rounding: str) -> np.ndarray:
    """f32 -> f16 bits: to nearest even, toward zero (finite values past 65504 give 65504), or
    to nearest with ties away from zero."""
    h = x.astype(np.float16)
    if rounding == "toward-zero":
        away = np.isfinite(x) & (np.abs(h.astype(np.float32)) > np.abs(x))
        h = np.where(away, np.nextafter(h, np.float16(0)), h)
    elif rounding == "nearest-away":
        lo = np.where(np.abs(h.astype(np.float32)) > np.abs(x), np.nextafter(h, np.float16(0)), h)
        hi = np.nextafter(lo, np.copysign(np.float16(np.inf), lo))
        tie = np.isfinite(x) & (x.astype(np.float64) - lo == hi.astype(np.float64) - x) & (lo != x)
        h = np.where(tie, hi, h)
    return h.view(np.uint16)


def filtered_half(x: np.ndarray) -> np.ndarray:
    """A filtered value (f64 or f32) rounded once to f16, to nearest with ties away from zero, as
    f32: how the H200's texture unit returns filtered f16 and sRGB texels."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        step = np.ldexp(1.0, np.maximum(np.frexp(x)[1] - 11, -24))     # f16's spacing at x (subnormals: 2^-24)
        r = np.copysign(np.floor(np.abs(x) / step + 0.5) * step, x)
        return np.where(np.isfinite(x), r, x).astype(np.float16).astype(np.float32)   # past 65504: infinity


def normalized(c: np.ndarray, m: int, model: "TextureModel") -> np.ndarray:
    """c / m as f32: correctly rounded ("exact"), or c * f32(1/m) as some drivers compute it."""
    if model.normalized_decode == "mul-reciprocal":
        return c.astype(np.float32) * F32(1 / m)
    return (c.astype(np.float64) / m).astype(np.float32)   # one rounding: c/m in f64 is within 2^-53


def norm8_truncated(f: np.ndarray, magnitude_bits: int) -> np.ndarray:
    """A clamped value f (in [0, 1], or [-1, 1] for snorm) -> the channel's integer as a texture
    unit computes it that first truncates |f| to a fixed-point number with 4 more fractional bits
    than the channel's magnitude has (12 for unorm8, 11 for snorm8's 7 magnitude bits), then
    rounds that to the channel's scale with halves down: (q * m + 2^(k-1) - 1) >> k, sign
    applied after (measured on the H200: every one of its 512 stored bytes)."""
    k = magnitude_bits + 4
    m = (1 << magnitude_bits) - 1
    q = np.floor(np.abs(f.astype(np.float64)) * (1 << k)).astype(np.int64)       # exact: f32 * 2^k
    c = (q * m + (1 << (k - 1)) - 1) >> k
    return np.where(f < 0, -c, c)


def _decode(fmt: TexelFormat, raw: np.ndarray, model: "TextureModel") -> np.ndarray:
    """Texels as raw (..., fmt.bytes) uint8 -> (..., 4) of f32, i32 or u32 in rgba order, as a
    shader reads them (textureLoad, and the texels filtering starts from)."""
    chans = _channel_ints(fmt, raw)
    vals = []
    for c, b, name in zip(chans, fmt.bits, fmt.channels):
        if fmt.kind == "unorm":
            v = normalized(c.astype(np.int64), (1 << b) - 1, model)
            if fmt.srgb and name != "a":
                v = _srgb_to_linear(c.astype(np.float64) / ((1 << b) - 1)) if model.srgb_decode is None \
                    else np.asarray(model.srgb_decode, F32)[c.astype(np.int64)]
        elif fmt.kind == "snorm":
            s = c.astype(np.int64) - ((c >> np.uint64(b - 1)).astype(np.int64) << b)
            v = np.maximum(normalized(s, (1 << (b - 1)) - 1, model), F32(-1))
        elif fmt.kind == "sint":
            v = c.astype(np.int64) - ((c >> np.uint64(b - 1)).astype(np.int64) << b)
        elif fmt.kind == "uint":
            v = c
        elif fmt.kind == "float":
            # f16 widens exactly (NaN payloads kept, as the hardware's conversion does)
            v = c.astype(np.uint16).view(np.float16).astype(np.float32) if b == 16 else c.astype(np.uint32).view(np.float32)
        else:       # ufloat
            v = _ufloat_decode(c, b - 5)
        vals.append(v)
    by_name = dict(zip(fmt.channels, vals))
    dtype = np.dtype({"f32": np.float32, "i32": np.int32, "u32": np.uint32}[fmt.sampled])
    shape = raw.shape[:-1]
    out = np.zeros(shape + (4,), dtype)
    out[..., 3] = 1
    for k, name in enumerate("rgba"):
        if name in by_name:
            v = by_name[name]
            out[..., k] = v if v.dtype == dtype else v.astype(np.float64).astype(dtype) if dtype.kind == "f" \
                else v.astype(dtype)
    return out


def _encode(fmt: TexelFormat, values: np.ndarray, model: "TextureModel") -> np.ndarray:
    """(..., 4) f32/i32/u32 in rgba order -> raw (..., fmt.bytes) uint8, as textureStore writes:
    normalized formats clamp (NaN -> 0) and round to nearest even (8-bit ones as the model says),
    integers keep their low bits, f16 rounds as the model says (to nearest even by default)."""
    chans = []
    for name, b in zip(fmt.channels, fmt.bits):
        x = values[..., "rgba".index(name)]
        if fmt.kind == "unorm":         # the product in f32 (Vulkan's f * (2^b - 1)), then to nearest even
            f = np.nan_to_num(np.clip(x.astype(np.float32), F32(0), F32(1)), nan=0.0)
            if b == 8 and model.norm8_store == "truncated-half-down":
                c = norm8_truncated(f, 8).astype(np.uint64)
            else:
                c = np.rint(f * F32((1 << b) - 1)).astype(np.uint64)
        elif fmt.kind == "snorm":
            f = np.nan_to_num(np.clip(x.astype(np.float32), F32(-1), F32(1)), nan=0.0)
            s = norm8_truncated(f, 7) if b == 8 and model.norm8_store == "truncated-half-down" \
                else np.rint(f * F32((1 << (b - 1)) - 1)).astype(np.int64)
            c = (s & ((1 << b) - 1)).astype(np.uint64)
        elif fmt.kind in ("sint", "uint"):
            c = (x.astype(np.int64) & ((1 << b) - 1)).astype(np.uint64)
        elif fmt.kind == "float":
            c = (_to_half(x.astype(np.float32), model.half_store) if b == 16
                 else x.astype(np.float32).view(np.uint32)).astype(np.uint64)
        else:
            c = _ufloat_encode(x.astype(np.float32), b - 5)
        chans.append(c)
    return _pack(fmt, chans)
