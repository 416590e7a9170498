"""Textures, texture views and samplers of wgpu-py's API on emu's textures (emu/memory/textures.py),
and the texel copies between textures and buffers (WebGPU's GPUTexelCopy* layouts)."""
from __future__ import annotations

import numpy as np

from ..errors import EmuError, HostError
from ..memory import textures as M
from ._compat import binding_bases, flags
from ._common import GPUObjectBase, _flag_value, _get, _validation

_TU = flags.TextureUsage


def _extent(size, what: str) -> tuple[int, int, int]:
    if isinstance(size, dict) or hasattr(size, "get"):
        size = (_get(size, "width"), _get(size, "height", 1), _get(size, "depth_or_array_layers", 1))
    size = tuple(int(s) for s in size) + (1,) * (3 - len(tuple(size)))
    if len(size) != 3 or any(s < 0 for s in size):
        raise _validation(f"{what}: size {size} must be (width, height, depth_or_array_layers)")
    return size


def _emu(fn, *args, **kw):
    """Call into emu's textures; their errors become wgpu's validation errors."""
    try:
        return fn(*args, **kw)
    except HostError as e:
        raise _validation(e.message, hint=e.hint) from None


class GPUTexture(GPUObjectBase, *binding_bases("GPUTexture")):
    def __init__(self, label, device, emu_texture: M.Texture, usage: int):
        super().__init__(label, device)
        self._emu, self._usage, self._destroyed = emu_texture, usage, False

    size = property(lambda self: self._emu.size)
    width = property(lambda self: self._emu.size[0])
    height = property(lambda self: self._emu.size[1])
    depth_or_array_layers = property(lambda self: self._emu.size[2])
    format = property(lambda self: self._emu.format.name)
    dimension = property(lambda self: self._emu.dimension)
    usage = property(lambda self: self._usage)
    mip_level_count = property(lambda self: self._emu.mip_level_count)
    sample_count = property(lambda self: self._emu.sample_count)

    def _describe(self) -> str:
        return f"texture '{self.label}'" if self.label else f"a {self.format} texture of {self.size}"

    def create_view(self, *, label: str = "", format=None, dimension=None, usage=0, aspect="all",
                    base_mip_level: int = 0, mip_level_count=None, base_array_layer: int = 0,
                    array_layer_count=None, swizzle: str = "rgba") -> "GPUTextureView":
        if format not in (None, self.format):
            raise _validation(f"create_view: a {format} view of {self._describe()}: emu views a texture "
                              f"in its own format", hint="leave format out")
        if swizzle != "rgba":
            raise _validation("create_view: swizzle other than 'rgba' is not emulated")
        view = _emu(M.create_view, self._emu, None if dimension is None else str(dimension), int(base_mip_level),
                    None if mip_level_count is None else int(mip_level_count), int(base_array_layer),
                    None if array_layer_count is None else int(array_layer_count), label)
        return GPUTextureView(label, self._device, self, view)

    def destroy(self) -> None:
        self._destroyed = True


class GPUTextureView(GPUObjectBase, *binding_bases("GPUTextureView")):
    def __init__(self, label, device, texture: GPUTexture, view: M.TextureView):
        super().__init__(label, device)
        self._texture, self._emu = texture, view

    texture = property(lambda self: self._texture)


class GPUSampler(GPUObjectBase, *binding_bases("GPUSampler")):
    def __init__(self, label, device, sampler: M.Sampler):
        super().__init__(label, device)
        self._emu = sampler


def create_texture(device, *, label="", size, mip_level_count=1, sample_count=1, dimension="2d", format,
                   usage, view_formats=(), texture_binding_view_dimension=None) -> GPUTexture:
    usage = _flag_value(_TU, usage, "TextureUsage")
    what = f"device.create_texture(label={label!r}, format={format!r})"
    if usage == 0:
        raise _validation(f"{what}: the usage must not be 0", hint="give e.g. wgpu.TextureUsage.TEXTURE_BINDING")
    tex = _emu(M.Texture, str(format), _extent(size, what), str(dimension), int(mip_level_count),
               int(sample_count), label)
    if usage & _TU.STORAGE_BINDING and (tex.format.srgb or tex.format.depth):
        raise _validation(f"{what}: {tex.format.name} cannot have usage STORAGE_BINDING")
    return GPUTexture(label, device, tex, usage)


def create_sampler(device, *, label="", max_anisotropy=1, **descriptor) -> GPUSampler:
    if int(max_anisotropy) != 1:
        raise _validation("create_sampler: max_anisotropy > 1 is not emulated (compute samples at explicit "
                          "levels, where WebGPU implementations ignore it)", hint="leave max_anisotropy at 1")
    desc = {k: (None if v is None else v if isinstance(v, (int, float)) else str(v)) for k, v in descriptor.items()}
    return GPUSampler(label, device, _emu(M.Sampler, label=label, **desc))


# -- texel copies -----------------------------------------------------------------------------

def _copy_region(info, size, what: str, multisampled_ok: bool = False):
    """(texture, level, origin, (w, h, d)) of a GPUTexelCopyTextureInfo and a copy size."""
    tex = _get(info, "texture")
    if not isinstance(tex, GPUTexture):
        raise TypeError(f"{what}: 'texture' must be an emu GPUTexture, got {type(tex).__name__}")
    if tex._destroyed:
        raise _validation(f"{what}: {tex._describe()} is destroyed")
    if tex.sample_count > 1 and not multisampled_ok:
        raise _validation(f"{what}: {tex._describe()} is multisampled (sample_count {tex.sample_count}); WebGPU "
                          f"copies those only to another texture", hint="emu's own Device.write_texture and "
                          "read_texture take every sample (emu.Device, not emu.wgpu)")
    origin = _get(info, "origin", (0, 0, 0))
    if isinstance(origin, dict) or hasattr(origin, "get"):
        origin = (_get(origin, "x", 0), _get(origin, "y", 0), _get(origin, "z", 0))
    origin = tuple(int(o) for o in origin) + (0,) * (3 - len(tuple(origin)))
    return tex, int(_get(info, "mip_level", 0)), origin, _extent(size, what)


def _layout(layout, w: int, h: int, d: int, bpp: int, what: str, aligned: bool):
    offset = int(_get(layout, "offset", 0))
    row = _get(layout, "bytes_per_row", None)
    rows = _get(layout, "rows_per_image", None)
    row = w * bpp if row is None else int(row)
    rows = h if rows is None else int(rows)
    if row < w * bpp or rows < h:
        raise _validation(f"{what}: bytes_per_row {row} / rows_per_image {rows} are smaller than a row "
                          f"({w * bpp} bytes) / the height ({h})")
    if aligned and row % 256 and h * d > 1:
        raise _validation(f"{what}: bytes_per_row {row} is not a multiple of 256 (WebGPU's rule for "
                          f"copies between buffers and textures in a command encoder)",
                          hint="pad each row to a multiple of 256 bytes (queue.write_texture has no such rule)")
    return offset, row, rows


def texels_in(data: np.ndarray, offset, row, rows, w, h, d, bpp) -> np.ndarray:
    """The (d, h, w, bpp) texel block a buffer layout describes, out of `data` (bytes)."""
    need = offset + (d - 1) * rows * row + (h - 1) * row + w * bpp if w and h and d else offset
    if need > data.size:
        raise _validation(f"the copy reads {need} bytes; the data has {data.size}")
    out = np.empty((d, h, w * bpp), np.uint8)
    for z in range(d):
        for y in range(h):
            start = offset + z * rows * row + y * row
            out[z, y] = data[start:start + w * bpp]
    return out.reshape(d, h, w, bpp)


def write(tex: GPUTexture, level, origin, size, data: np.ndarray, layout, what: str, aligned: bool):
    w, h, d = size
    bpp = tex._emu.format.bytes
    offset, row, rows = _layout(layout, w, h, d, bpp, what, aligned)
    block = texels_in(data, offset, row, rows, w, h, d, bpp)
    _emu(tex._emu.write, block, level, origin, size)


def read(tex: GPUTexture, level, origin, size, layout, what: str, aligned: bool, out: np.ndarray | None = None):
    """The texels of a region laid out as `layout` says, into `out` (bytes) or a new array."""
    w, h, d = size
    bpp = tex._emu.format.bytes
    offset, row, rows = _layout(layout, w, h, d, bpp, what, aligned)
    ox, oy, oz = origin
    try:
        lv = tex._emu.levels[level]
    except IndexError:
        raise _validation(f"{what}: level {level} of {tex._describe()}, which has {tex.mip_level_count}") from None
    if ox + w > lv.shape[2] or oy + h > lv.shape[1] or oz + d > lv.shape[0]:
        raise _validation(f"{what}: the region {origin} + {size} goes beyond level {level} of {tex._describe()}")
    need = offset + ((d - 1) * rows * row + (h - 1) * row + w * bpp if w and h and d else 0)
    if out is None:
        out = np.zeros(need, np.uint8)
    elif need > out.size:
        raise _validation(f"{what}: the copy writes {need} bytes; the buffer has {out.size}")
    block = lv[oz:oz + d, oy:oy + h, ox:ox + w].reshape(d, h, w * bpp)
    for z in range(d):
        for y in range(h):
            start = offset + z * rows * row + y * row
            out[start:start + w * bpp] = block[z, y]
    return out


def _copy_compatible(a: str, b: str) -> bool:
    """WebGPU's copy-compatible formats: the same, or differing only in being -srgb."""
    return a.removesuffix("-srgb") == b.removesuffix("-srgb")


def check_texture_copy(src, src_level, src_origin, dst, dst_level, dst_origin, size, what: str) -> str | None:
    """Why WebGPU refuses copy_texture_to_texture with these regions, or None."""
    if not src.usage & _TU.COPY_SRC:
        return f"{what}: the source {src._describe()} needs usage COPY_SRC"
    if not dst.usage & _TU.COPY_DST:
        return f"{what}: the destination {dst._describe()} needs usage COPY_DST"
    if src.sample_count != dst.sample_count:
        return f"{what}: the sample counts differ ({src.sample_count} and {dst.sample_count})"
    if not _copy_compatible(src.format, dst.format):
        return f"{what}: {src.format} and {dst.format} are not copy-compatible (the same format, or one's -srgb)"
    for tex, level, origin, role in ((src, src_level, src_origin, "source"), (dst, dst_level, dst_origin, "destination")):
        if not 0 <= level < tex.mip_level_count:
            return f"{what}: the {role}'s mip_level {level}: {tex._describe()} has {tex.mip_level_count}"
        ext = tex._emu.extent(level)
        if min(origin) < 0 or any(o + n > e for o, n, e in zip(origin, size, ext)):
            return f"{what}: the {role} region {origin} + {size} goes beyond level {level} of {tex._describe()} ({ext})"
        whole = tuple(origin[:2]) == (0, 0) and tuple(size[:2]) == ext[:2]
        if (tex._emu.format.depth or tex.sample_count > 1) and not whole:
            return f"{what}: a {'depth' if tex._emu.format.depth else 'multisampled'} texture is copied whole " \
                   f"(level {level}: {ext[0]}x{ext[1]})"
    if src is dst and src_level == dst_level and (src.dimension == "3d" or not (
            src_origin[2] + size[2] <= dst_origin[2] or dst_origin[2] + size[2] <= src_origin[2])):
        return f"{what}: the source and destination are the same subresources of {src._describe()}"
    return None


def copy_texels(src, src_level, src_origin, dst, dst_level, dst_origin, size) -> None:
    """The texel bytes of a region, from one texture to another (every sample of a multisampled one)."""
    (sx, sy, sz), (dx, dy, dz), (w, h, d) = src_origin, dst_origin, size
    a, b = src._emu.levels[src_level], dst._emu.levels[dst_level]
    if src.sample_count > 1:            # its samples are stored where layers go
        sz, dz, d = 0, 0, src.sample_count
    b[dz:dz + d, dy:dy + h, dx:dx + w] = a[sz:sz + d, sy:sy + h, sx:sx + w]


def bind_handle(g, resource):
    """What the pipeline's texture or sampler variable sees: emu's view (a texture: its default
    view) or sampler, checked against the WGSL type."""
    res = resource._emu if isinstance(resource, (GPUTextureView, GPUSampler)) else \
        resource._emu if isinstance(resource, GPUTexture) else resource
    try:
        return M.bind_handle(g, res)
    except EmuError as e:
        raise _validation(e.message, hint=e.hint, loc=g.loc) from None
