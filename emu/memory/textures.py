"""Textures: their own kind of device memory, with mip levels and array layers (or depth slices),
each texel held as the bytes of its format; views select levels and layers as WebGPU's
GPUTextureView does; samplers are the filtering state a sampling builtin reads.

A level is a uint8 array (layers or depth, height, width, bytes per texel); a 1-D texture has one
row, a 2-D texture one layer per array layer (a cube: six, in WebGPU's face order +X -X +Y -Y +Z -Z).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import HostError
from ..numerics.texels import FORMATS, TexelFormat

DIMENSIONS = ("1d", "2d", "3d")
ADDRESS_MODES = ("clamp-to-edge", "repeat", "mirror-repeat")
FILTERS = ("nearest", "linear")
COMPARE = ("never", "less", "equal", "less-equal", "greater", "not-equal", "greater-equal", "always")
# view dimension -> texture dimension it views
VIEW_DIMENSIONS = {"1d": "1d", "2d": "2d", "2d-array": "2d", "cube": "2d", "cube-array": "2d", "3d": "3d"}


def texel_format(name: str, what: str = "texture") -> TexelFormat:
    if name not in FORMATS:
        raise HostError(f"{what}: '{name}' is not a texture format emu knows",
                        hint="one of " + ", ".join(FORMATS))
    return FORMATS[name]


class Texture:
    """A WebGPU texture: format, size (width, height, depth or array layers), dimension, mip levels."""

    def __init__(self, format: str, size, dimension: str = "2d", mip_level_count: int = 1,
                 sample_count: int = 1, label: str = ""):
        self.format = texel_format(format, "create_texture")
        size = tuple(int(s) for s in (size if hasattr(size, "__len__") else (size,)))
        if not 1 <= len(size) <= 3 or any(s < 1 for s in size):
            raise HostError(f"create_texture: size {size} must be one to three positive whole numbers "
                            f"(width, height, depth or array layers)")
        self.size = size + (1,) * (3 - len(size))
        if dimension not in DIMENSIONS:
            raise HostError(f"create_texture: dimension '{dimension}' is not one of {', '.join(DIMENSIONS)}")
        if dimension == "1d" and self.size[1:] != (1, 1):
            raise HostError(f"create_texture: a 1d texture has height and depth 1, not {self.size}")
        self.dimension, self.label = dimension, label
        full = 1 + int(np.log2(max(self.size[:2] if dimension != "3d" else self.size)))
        if not 1 <= mip_level_count <= full or dimension == "1d" and mip_level_count != 1:
            raise HostError(f"create_texture: mip_level_count {mip_level_count} must be 1..{full if dimension != '1d' else 1} "
                            f"for a {dimension} texture of size {self.size}")
        if sample_count not in (1, 4):
            raise HostError(f"create_texture: sample_count {sample_count}: WebGPU has 1 and 4",
                            hint="use sample_count=4 for a multisampled texture")
        if sample_count == 4 and (dimension != "2d" or self.size[2] != 1 or mip_level_count != 1):
            raise HostError(f"create_texture: a multisampled texture is 2d with one layer and one mip level, not "
                            f"{dimension} {self.size} with {mip_level_count} levels")
        self.mip_level_count, self.sample_count = int(mip_level_count), int(sample_count)
        # a multisampled texture keeps its samples where layers go: (samples, height, width, bytes)
        self.levels = [np.zeros((self.stored_layers(lv),) + self.extent(lv)[1::-1] + (self.format.bytes,), np.uint8)
                       for lv in range(self.mip_level_count)]

    def create_view(self, **descriptor) -> "TextureView":
        """WebGPU's texture.createView: dimension, base_mip_level, mip_level_count,
        base_array_layer, array_layer_count."""
        return create_view(self, **descriptor)

    def extent(self, level: int) -> tuple[int, int, int]:
        """(width, height, depth or layers) of a mip level: layers do not shrink, 3-D depth does."""
        w, h, d = self.size
        return (max(1, w >> level), max(1, h >> level), max(1, d >> level) if self.dimension == "3d" else d)

    def stored_layers(self, level: int) -> int:
        """Layers (or depth slices) a level holds; a multisampled texture's: its samples."""
        return self.sample_count if self.sample_count > 1 else self.extent(level)[2]

    def describe(self) -> str:
        return f"texture '{self.label}'" if self.label else f"a {self.format.name} texture of {self.size}"

    def write(self, data, level: int = 0, origin=(0, 0, 0), size=None):
        """Write raw texel bytes (any dtype: its bytes are taken, as WebGPU's writeTexture does)
        into `level` at `origin`, a block of `size` texels (default: the rest of the level). A
        multisampled texture takes its samples as layers (samples, height, width): WebGPU fills one
        only by rendering, which compute shaders do not have, so emu's host writes them."""
        lv = self._level(level, "write_texture")
        ox, oy, oz = (tuple(origin) + (0, 0, 0))[:3]
        ext = self.extent(level)[:2] + (self.stored_layers(level),)
        w, h, d = size if size is not None else (ext[0] - ox, ext[1] - oy, ext[2] - oz)
        if min(ox, oy, oz) < 0 or ox + w > ext[0] or oy + h > ext[1] or oz + d > ext[2]:
            raise HostError(f"write_texture: origin {tuple(origin)} and size {(w, h, d)} go beyond level "
                            f"{level} of {self.describe()} ({ext[0]}x{ext[1]}x{ext[2]})")
        raw = np.frombuffer(np.ascontiguousarray(data).tobytes(), np.uint8)
        need = w * h * d * self.format.bytes
        if raw.size != need:
            raise HostError(f"write_texture: {raw.size} bytes given for {w}x{h}x{d} texels of "
                            f"{self.format.name} ({self.format.bytes} bytes each, {need} in all)",
                            hint="give exactly one texel's bytes per texel, rows tightly packed")
        lv[oz:oz + d, oy:oy + h, ox:ox + w] = raw.reshape(d, h, w, self.format.bytes)

    def read(self, level: int = 0) -> np.ndarray:
        """A level's texels as numbers of the format's channel width: (depth or layers, height,
        width, channels) of uint8/int8/uint16/int16/float16/uint32/int32/float32 (packed formats as
        one uint32 a texel; a multisampled texture's samples in place of layers); a single channel
        drops its axis, a single layer too."""
        f = self.format
        raw = self._level(level, "read_texture")
        bits = f.bits[0]
        if len(set(f.bits)) != 1 or bits not in (8, 16, 32):
            out = raw.view("<u4")[..., 0]
        else:
            kind = {"float": "f", "sint": "i", "snorm": "i"}.get(f.kind, "u")
            out = raw.view(np.dtype(f"<{kind}{bits // 8}"))
        if out.shape[-1] == 1:
            out = out[..., 0]
        if out.shape[0] == 1:
            out = out[0]
        return out.copy()

    def _level(self, level, what):
        if not 0 <= level < self.mip_level_count:
            raise HostError(f"{what}: level {level} of {self.describe()}, which has {self.mip_level_count}")
        return self.levels[level]


@dataclass
class TextureView:
    """Levels base_mip_level.. and layers base_array_layer.. of a texture, seen as `dimension`."""
    texture: Texture
    dimension: str
    base_mip_level: int = 0
    mip_level_count: int = 1
    base_array_layer: int = 0
    array_layer_count: int = 1
    label: str = ""

    @property
    def arrayed(self) -> bool:
        return self.dimension.endswith("-array")

    @property
    def layers(self) -> int:
        """Array layers the shader sees (a cube array: cubes)."""
        return self.array_layer_count // 6 if self.dimension == "cube-array" else self.array_layer_count

    def describe(self) -> str:
        return self.texture.describe()


def create_view(texture: Texture, dimension: str | None = None, base_mip_level: int = 0,
                mip_level_count: int | None = None, base_array_layer: int = 0,
                array_layer_count: int | None = None, label: str = "") -> TextureView:
    t = texture
    if dimension is None:       # WebGPU's default: the texture's own (2d with layers: 2d-array)
        dimension = "2d-array" if t.dimension == "2d" and t.size[2] > 1 else t.dimension
    if dimension not in VIEW_DIMENSIONS or VIEW_DIMENSIONS[dimension] != t.dimension:
        raise HostError(f"create_view: a {dimension} view of a {t.dimension} texture",
                        hint=f"a {t.dimension} texture has views " +
                        ", ".join(d for d, td in VIEW_DIMENSIONS.items() if td == t.dimension))
    layers_total = t.size[2] if t.dimension == "2d" else 1
    if mip_level_count is None:
        mip_level_count = t.mip_level_count - base_mip_level
    if array_layer_count is None:
        array_layer_count = {"2d": 1, "cube": 6}.get(dimension, layers_total - base_array_layer)
    if not (0 <= base_mip_level and 1 <= mip_level_count and base_mip_level + mip_level_count <= t.mip_level_count):
        raise HostError(f"create_view: levels {base_mip_level}..{base_mip_level + mip_level_count - 1} of a "
                        f"texture with {t.mip_level_count}")
    if not (0 <= base_array_layer and 1 <= array_layer_count and base_array_layer + array_layer_count <= layers_total):
        raise HostError(f"create_view: layers {base_array_layer}..{base_array_layer + array_layer_count - 1} of a "
                        f"texture with {layers_total}")
    if dimension == "cube" and array_layer_count != 6 or dimension == "cube-array" and array_layer_count % 6:
        raise HostError(f"create_view: a {dimension} view takes {'6' if dimension == 'cube' else 'a multiple of 6'} "
                        f"layers, not {array_layer_count}")
    if dimension.startswith("cube") and t.size[0] != t.size[1]:
        raise HostError(f"create_view: a cube view needs square layers, not {t.size[0]}x{t.size[1]}")
    if dimension in ("2d", "1d", "3d") and array_layer_count != 1:
        raise HostError(f"create_view: a {dimension} view has one layer, not {array_layer_count}")
    return TextureView(t, dimension, base_mip_level, mip_level_count, base_array_layer, array_layer_count, label)


@dataclass(frozen=True)
class Sampler:
    """WebGPU's GPUSamplerDescriptor (anisotropy 1: sampling in compute is explicit-level)."""
    address_mode_u: str = "clamp-to-edge"
    address_mode_v: str = "clamp-to-edge"
    address_mode_w: str = "clamp-to-edge"
    mag_filter: str = "nearest"
    min_filter: str = "nearest"
    mipmap_filter: str = "nearest"
    lod_min_clamp: float = 0.0
    lod_max_clamp: float = 32.0
    compare: str | None = None
    label: str = ""

    def __post_init__(self):
        for k in ("address_mode_u", "address_mode_v", "address_mode_w"):
            if getattr(self, k) not in ADDRESS_MODES:
                raise HostError(f"create_sampler: {k}='{getattr(self, k)}' is not one of {', '.join(ADDRESS_MODES)}")
        for k in ("mag_filter", "min_filter", "mipmap_filter"):
            if getattr(self, k) not in FILTERS:
                raise HostError(f"create_sampler: {k}='{getattr(self, k)}' is not one of {', '.join(FILTERS)}")
        if self.compare is not None and self.compare not in COMPARE:
            raise HostError(f"create_sampler: compare='{self.compare}' is not one of {', '.join(COMPARE)}")
        if not 0 <= self.lod_min_clamp <= self.lod_max_clamp:
            raise HostError(f"create_sampler: lod_min_clamp {self.lod_min_clamp} and lod_max_clamp "
                            f"{self.lod_max_clamp} must satisfy 0 <= min <= max")


@dataclass(frozen=True)
class CombinedImageSampler:
    """Vulkan's combined image sampler (GLSL's sampler2D): one binding holding a texture (or a
    view) and a sampler. The SPIR-V front end declares it as a texture variable and a sampler
    variable of the same (group, binding); each takes its half."""
    texture: object
    sampler: Sampler

    def part(self, t):
        from ..isa.types import SamplerType
        return self.sampler if isinstance(t, SamplerType) else self.texture


def combine(bound, value):
    """What one binding holds when a texture and a sampler are both given for it (--texture and
    --sampler of one G:B): a combined image sampler; else `value`."""
    if isinstance(bound, Sampler) != isinstance(value, Sampler) and \
            isinstance(bound, (Texture, TextureView, Sampler)) and isinstance(value, (Texture, TextureView, Sampler)):
        return CombinedImageSampler(*((value, bound) if isinstance(bound, Sampler) else (bound, value)))
    return value


def part_of(bound, t):
    """The half of a combined image sampler a variable of type `t` takes (else `bound` itself)."""
    return bound.part(t) if isinstance(bound, CombinedImageSampler) else bound


def bind_handle(g, value):
    """What a texture or sampler variable binds: checked against its WGSL type (WebGPU's bind
    group layout rules for compute), a texture becoming its default view of the shader's shape."""
    from ..isa.types import TextureType
    t = g.type
    if isinstance(value, tuple) and len(value) == 2:       # (texture, sampler): a combined image sampler
        value = combine(value[0], value[1])
    value = part_of(value, t)
    where = f"'{g.name}' (@group({g.group}) @binding({g.binding}), {t})"
    if value is None:
        kind = "texture" if isinstance(t, TextureType) else "sampler"
        raise HostError(f"the shader uses {where} but no {kind} is bound there", g.loc,
                        hint=f"bind one, e.g. --{kind} {g.group}:{g.binding}=" +
                        ("FILE.npy:rgba8unorm" if kind == "texture" else "linear,clamp"))
    if isinstance(t, TextureType) and not isinstance(value, Sampler):
        tex = value.texture if isinstance(value, TextureView) else value
        if t.multisampled != (tex.sample_count > 1):
            raise HostError(f"{where} is bound a texture of sample_count {tex.sample_count}", g.loc,
                            hint="create it with sample_count=4" if t.multisampled else
                            "bind a single-sampled texture (sample_count=1)")
    if not isinstance(t, TextureType):
        if not isinstance(value, Sampler):
            raise HostError(f"{where} needs a sampler, not a {type(value).__name__}", g.loc)
        if (value.compare is not None) != t.comparison:
            raise HostError(f"{where} needs a sampler {'with' if t.comparison else 'without'} a compare function",
                            g.loc, hint="create_sampler(compare='less')" if t.comparison else "leave compare out")
        return value
    if isinstance(value, Sampler):
        raise HostError(f"{where} needs a texture, not a sampler", g.loc)
    want = t.dim.replace("_", "-")
    view = value if isinstance(value, TextureView) else create_view(value, want)
    if view.dimension != want:
        raise HostError(f"{where} is bound a {view.dimension} view", g.loc,
                        hint=f"create the view with dimension '{want}'")
    f = view.texture.format
    if t.kind == "storage":
        ok, need = f.name == t.format, f"a {t.format} texture"
        if t.format is None:        # SPIR-V's Unknown: any storage format of the component type
            from ..numerics.texels import STORAGE_FORMATS
            ok, need = f.name in STORAGE_FORMATS and f.sampled == t.sampled.name, \
                f"a storage format whose texels are {t.sampled}"
        if view.mip_level_count != 1:
            raise HostError(f"{where}: a storage texture view has one mip level, not {view.mip_level_count}", g.loc)
    elif t.depth:
        ok, need = f.depth, "a depth format (depth16unorm, depth32float)"
    else:
        ok, need = f.sampled == t.sampled.name, f"a format whose texels are {t.sampled}"
    if not ok:
        raise HostError(f"{where} is bound a {f.name} texture; it needs {need}", g.loc)
    return view
