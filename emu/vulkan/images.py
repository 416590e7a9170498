"""Images, image views and samplers, over emu's texture machinery (emu/memory/textures.py); their
copies and clears; the formats the device reports.

An image is an emu Texture whose levels are views of the device memory it is bound to, laid out
as emu keeps a texture: level after level, each (layers or depth slices, rows, texels, bytes), rows
tightly packed. Linear and optimal tiling are both that layout (vkGetImageSubresourceLayout
describes it), so what the host writes through a mapped linear image is what the shaders read. A
view is an emu TextureView, a sampler an emu Sampler: a dispatch binds them as `emu run` binds
--texture and --sampler, and the shader runs on the same executor and texture numerics (the
profile's filtering model).

Declined, each with one message and an error code: what emu's textures do not model (multisampled,
sparse, 1-D array or mipmapped 1-D images, views of another format or with a swizzle, border
colours, mirror-clamp-to-edge, unnormalized coordinates, anisotropy, a LOD bias, cubic filters,
min/max reductions), texel buffers (the SPIR-V front end refuses Dim Buffer), blits and resolves
(no format reports the BLIT features)."""
from __future__ import annotations

import numpy as np

from .commands import _cb
from .icd import VK, VkError, command, destroyer, ffi, get, new_handle
from .objects import (Buffer, DeclinedSampler, ImageView, Memory, SamplerObject, _dev, bind_commands,
                      requirement_commands)
from .physical import PhysicalDevice, heap_size, image_limits

# emu's texel formats (emu/numerics/texels.py) as VkFormat
_KIND = {"unorm": "UNORM", "snorm": "SNORM", "uint": "UINT", "sint": "SINT", "float": "SFLOAT"}
_SPECIAL = {"rgba8unorm-srgb": "R8G8B8A8_SRGB", "bgra8unorm": "B8G8R8A8_UNORM", "bgra8unorm-srgb": "B8G8R8A8_SRGB",
            "rgb10a2uint": "A2B10G10R10_UINT_PACK32", "rgb10a2unorm": "A2B10G10R10_UNORM_PACK32",
            "rg11b10ufloat": "B10G11R11_UFLOAT_PACK32", "depth32float": "D32_SFLOAT", "depth16unorm": "D16_UNORM"}


def _vk_format_names() -> dict:
    from ..numerics.texels import FORMATS
    out = {}
    for name, f in FORMATS.items():
        vk = _SPECIAL.get(name) or "".join(f"{c.upper()}{b}" for c, b in zip(f.channels, f.bits)) + "_" + _KIND[f.kind]
        out[VK[f"VK_FORMAT_{vk}"]] = name
    return out


FORMATS = _vk_format_names()             # VkFormat -> emu's texel format name
IMAGE_TYPES = {VK["VK_IMAGE_TYPE_1D"]: "1d", VK["VK_IMAGE_TYPE_2D"]: "2d", VK["VK_IMAGE_TYPE_3D"]: "3d"}
VIEW_TYPES = {VK["VK_IMAGE_VIEW_TYPE_1D"]: "1d", VK["VK_IMAGE_VIEW_TYPE_2D"]: "2d", VK["VK_IMAGE_VIEW_TYPE_3D"]: "3d",
              VK["VK_IMAGE_VIEW_TYPE_CUBE"]: "cube", VK["VK_IMAGE_VIEW_TYPE_2D_ARRAY"]: "2d-array",
              VK["VK_IMAGE_VIEW_TYPE_CUBE_ARRAY"]: "cube-array"}
USAGE_FEATURE = {"VK_IMAGE_USAGE_SAMPLED_BIT": "SAMPLED_IMAGE", "VK_IMAGE_USAGE_STORAGE_BIT": "STORAGE_IMAGE",
                 "VK_IMAGE_USAGE_TRANSFER_SRC_BIT": "TRANSFER_SRC", "VK_IMAGE_USAGE_TRANSFER_DST_BIT": "TRANSFER_DST"}
CREATE_FLAGS = VK["VK_IMAGE_CREATE_CUBE_COMPATIBLE_BIT"]       # the only image create flag emu models
REMAINING = 0xFFFFFFFF                                          # VK_REMAINING_MIP_LEVELS / _ARRAY_LAYERS


def texel_format(vk_format: int, call: str, what: str):
    name = FORMATS.get(int(vk_format))
    if name is None:
        raise VkError(f"{what}: format {_format_name(vk_format)} is not one emu's textures hold (formats with "
                      f"features: vkGetPhysicalDeviceFormatProperties)", "VK_ERROR_FORMAT_NOT_SUPPORTED",
                      f"VUID-{call}-format-parameter")
    from ..numerics.texels import FORMATS as TEXELS
    return TEXELS[name]


def _format_name(vk_format: int) -> str:
    return next((n for n, v in VK.items() if n.startswith("VK_FORMAT_") and v == vk_format and not n.endswith("KHR")),
                str(vk_format))


# ------------------------------------------------------------------ formats
def format_features(profile, vk_format: int, linear: bool) -> set:
    """The VkFormatFeatureFlagBits2 names (less VK_FORMAT_FEATURE_2_ and _BIT) the device reports
    for an image of `vk_format` and tiling: what emu runs, and of that only what the profile's GPU
    reports where its formats are recorded (profile.vulkan.formats). 32-bit float formats are not
    linearly filtered (emu's texture model follows WebGPU's core rule there)."""
    name = FORMATS.get(int(vk_format))
    if name is None:
        return set()
    from ..numerics.texels import FORMATS as TEXELS, STORAGE_FORMATS
    f = TEXELS[name]
    out = {"SAMPLED_IMAGE", "TRANSFER_SRC", "TRANSFER_DST"}
    if f.filterable and not f.depth:
        out.add("SAMPLED_IMAGE_FILTER_LINEAR")
    if f.depth:
        out.add("SAMPLED_IMAGE_DEPTH_COMPARISON")
    if name in STORAGE_FORMATS:
        out |= {"STORAGE_IMAGE", "STORAGE_READ_WITHOUT_FORMAT", "STORAGE_WRITE_WITHOUT_FORMAT"}
    recorded = profile.vulkan.get("formats")
    if recorded is not None:
        out &= set(recorded.get(_format_name(vk_format)[len("VK_FORMAT_"):], {}).get("linear" if linear else "optimal", ()))
    return out


def _flags(names: set, two: bool) -> int:
    prefix = "VK_FORMAT_FEATURE_2_" if two else "VK_FORMAT_FEATURE_"
    return sum(VK[f"{prefix}{n}_BIT"] for n in names if f"{prefix}{n}_BIT" in VK)


def _pd(physical, call) -> PhysicalDevice:
    return get(physical, PhysicalDevice, call, "physicalDevice")


def _format_properties(f, profile, fmt, two: bool) -> None:
    f.optimalTilingFeatures = _flags(format_features(profile, fmt, False), two)
    f.linearTilingFeatures = _flags(format_features(profile, fmt, True), two)
    f.bufferFeatures = 0                      # texel buffers: not run (module docstring)


@command
def vkGetPhysicalDeviceFormatProperties(physical, fmt, p_props):
    _format_properties(p_props, _pd(physical, "vkGetPhysicalDeviceFormatProperties").profile, fmt, False)


@command
def vkGetPhysicalDeviceFormatProperties2(physical, fmt, p_props):
    profile = _pd(physical, "vkGetPhysicalDeviceFormatProperties2").profile
    _format_properties(p_props.formatProperties, profile, fmt, False)
    from . import icd
    f3 = icd.find(p_props.pNext, "VkFormatProperties3")
    if f3 is not None:
        _format_properties(f3, profile, fmt, True)


def _image_support(profile, fmt, typ, tiling, usage, flags) -> str | None:
    """Why emu cannot make such an image (None: it can)."""
    if int(fmt) not in FORMATS:
        return f"format {_format_name(fmt)} is not one emu's textures hold"
    if int(typ) not in IMAGE_TYPES:
        return f"image type {typ}"
    if tiling not in (VK["VK_IMAGE_TILING_OPTIMAL"], VK["VK_IMAGE_TILING_LINEAR"]):
        return "tiling other than optimal or linear (DRM format modifiers)"
    feats = format_features(profile, fmt, tiling == VK["VK_IMAGE_TILING_LINEAR"])
    for bit, feature in USAGE_FEATURE.items():
        usage &= ~VK[bit] if feature in feats else ~0
    if usage:
        return f"usage 0x{usage:x}: emu's images are sampled, storage and transfer images only"
    if flags & ~CREATE_FLAGS:
        return f"create flags 0x{flags & ~CREATE_FLAGS:x}: emu's images take VK_IMAGE_CREATE_CUBE_COMPATIBLE_BIT only"
    if flags & CREATE_FLAGS and typ != VK["VK_IMAGE_TYPE_2D"]:
        return "a cube-compatible image is 2-D"
    return None


def _image_format_properties(pd, fmt, typ, tiling, usage, flags, p):
    if _image_support(pd.profile, fmt, typ, tiling, usage, flags) is not None:
        return VK["VK_ERROR_FORMAT_NOT_SUPPORTED"]
    lim = image_limits(pd.profile)
    dim = {"1d": (lim["maxImageDimension1D"], 1, 1), "2d": (lim["maxImageDimension2D"],) * 2 + (1,),
           "3d": (lim["maxImageDimension3D"],) * 3}[IMAGE_TYPES[int(typ)]]
    p.maxExtent.width, p.maxExtent.height, p.maxExtent.depth = dim
    one_d = IMAGE_TYPES[int(typ)] == "1d"          # emu has no 1-D arrays and no 1-D mip levels
    p.maxMipLevels = 1 if one_d else int(np.log2(max(dim))) + 1
    p.maxArrayLayers = 1 if one_d or IMAGE_TYPES[int(typ)] == "3d" else lim["maxImageArrayLayers"]
    p.sampleCounts = VK["VK_SAMPLE_COUNT_1_BIT"]
    p.maxResourceSize = heap_size()
    return None


@command
def vkGetPhysicalDeviceImageFormatProperties(physical, fmt, typ, tiling, usage, flags, p_props):
    pd = _pd(physical, "vkGetPhysicalDeviceImageFormatProperties")
    return _image_format_properties(pd, fmt, typ, tiling, usage, flags, p_props)


@command
def vkGetPhysicalDeviceImageFormatProperties2(physical, p_info, p_props):
    pd = _pd(physical, "vkGetPhysicalDeviceImageFormatProperties2")
    i = p_info[0]
    return _image_format_properties(pd, i.format, i.type, i.tiling, i.usage, i.flags,
                                    ffi.addressof(p_props.imageFormatProperties))


# ------------------------------------------------------------------ images
class Image:
    BIND_VUIDS = ("07460", "01048", "01049")      # bound twice, offset unaligned, past the end

    def __init__(self, profile, info):
        why = _image_support(profile, info.format, info.imageType, info.tiling, info.usage, info.flags)
        if why is None and info.samples != VK["VK_SAMPLE_COUNT_1_BIT"]:
            why = f"samples {info.samples}: emu's images have one sample"
        if why is not None:
            raise VkError(f"pCreateInfo: {why} (vkGetPhysicalDeviceImageFormatProperties lists what emu makes)",
                          "VK_ERROR_FORMAT_NOT_SUPPORTED", "VUID-VkImageCreateInfo-imageCreateMaxMipLevels-02251")
        from ..errors import HostError
        from ..memory.textures import Texture
        self.dimension = IMAGE_TYPES[int(info.imageType)]
        e = info.extent
        self.layers = int(info.arrayLayers)
        size = (e.width, e.height, e.depth if self.dimension == "3d" else self.layers)
        if self.dimension == "3d" and self.layers != 1:
            raise VkError(f"a 3-D image has one array layer, not {self.layers}",
                          vuid="VUID-VkImageCreateInfo-imageType-00961")
        lim = image_limits(profile)
        most = {"1d": lim["maxImageDimension1D"], "2d": lim["maxImageDimension2D"], "3d": lim["maxImageDimension3D"]}
        if max(size[:3] if self.dimension == "3d" else size[:2]) > most[self.dimension] or \
                self.layers > lim["maxImageArrayLayers"]:
            raise VkError(f"extent {size[:2] + ((e.depth,) if self.dimension == '3d' else ())} with {self.layers} "
                          f"layer(s) passes the device's {self.dimension} limits ({most[self.dimension]} texels a "
                          f"side, {lim['maxImageArrayLayers']} layers)", "VK_ERROR_FORMAT_NOT_SUPPORTED",
                          "VUID-VkImageCreateInfo-extent-02252")
        if info.flags & CREATE_FLAGS and (self.layers < 6 or e.width != e.height):
            raise VkError(f"a cube-compatible image has square layers and at least 6 of them, not "
                          f"{e.width}x{e.height} with {self.layers}", vuid="VUID-VkImageCreateInfo-flags-08866")
        try:
            self.texture = Texture(FORMATS[int(info.format)], size, self.dimension, int(info.mipLevels))
        except HostError as err:      # emu's textures' own rules (1-D: one level, one layer; mip counts)
            raise VkError(f"pCreateInfo: {err.message.split(': ', 1)[-1]}", "VK_ERROR_FORMAT_NOT_SUPPORTED",
                          "VUID-VkImageCreateInfo-extent-02252") from None
        self.format, self.usage, self.flags = int(info.format), int(info.usage), int(info.flags)
        self.linear = info.tiling == VK["VK_IMAGE_TILING_LINEAR"]
        self.level_offsets, n = [], 0
        for lv in self.texture.levels:
            self.level_offsets.append(n)
            n += lv.nbytes
        self.size = n
        self.memory: Memory | None = None

    def bind(self, mem: Memory, offset: int) -> None:
        """The texture's levels become the memory's bytes."""
        t = self.texture
        t.levels = [mem.data[offset + o:offset + o + lv.nbytes].reshape(lv.shape)
                    for o, lv in zip(self.level_offsets, t.levels)]
        self.memory = mem

    def level(self, k: int, call: str) -> np.ndarray:
        if self.memory is None:
            raise VkError("the image has no memory bound", vuid=f"VUID-{call}-dstImage-07966")
        return self.texture.levels[k]


@command
def vkCreateImage(device, p_info, p_alloc, p_image):
    dev = _dev(device, "vkCreateImage")
    p_image[0] = new_handle(Image(dev.profile, p_info[0]))


requirement_commands("Image", Image, lambda dev, info: Image(dev.profile, info).size)


@command
def vkGetImageSparseMemoryRequirements(device, image, p_count, p_reqs):
    p_count[0] = 0                  # no sparse images


@command
def vkGetImageSparseMemoryRequirements2(device, p_info, p_count, p_reqs):
    p_count[0] = 0


@command
def vkGetDeviceImageSparseMemoryRequirements(device, p_info, p_count, p_reqs):
    p_count[0] = 0


bind_commands("Image", Image)


@command
def vkGetImageSubresourceLayout(device, image, p_sub, p_layout):
    img = get(image, Image, "vkGetImageSubresourceLayout", "image")
    _subresource_layout(img, p_sub[0], p_layout, "vkGetImageSubresourceLayout")


def _subresource_layout(img: Image, sub, out, call: str) -> None:
    """Where a level's layer lies in the image's memory: emu's own layout (module docstring)."""
    if not img.linear:
        raise VkError("the image's tiling is optimal; its layout is the implementation's (use linear tiling)",
                      vuid=f"VUID-{call}-image-07790")
    if sub.mipLevel >= len(img.texture.levels) or sub.arrayLayer >= img.layers:
        raise VkError(f"mipLevel {sub.mipLevel} / arrayLayer {sub.arrayLayer}: the image has "
                      f"{len(img.texture.levels)} level(s) of {img.layers} layer(s)", vuid=f"VUID-{call}-mipLevel-01716")
    lv = img.texture.levels[sub.mipLevel]
    slices, h, w, b = lv.shape
    out.rowPitch = w * b
    out.arrayPitch = out.depthPitch = h * w * b
    three_d = img.dimension == "3d"
    out.offset = img.level_offsets[sub.mipLevel] + (0 if three_d else sub.arrayLayer * h * w * b)
    out.size = lv.nbytes if three_d else h * w * b


@command
def vkCreateImageView(device, p_info, p_alloc, p_view):
    call = "vkCreateImageView"
    i = p_info[0]
    img = get(i.image, Image, call, "pCreateInfo->image")
    if img.memory is None:
        raise VkError("the image has no memory bound (vkBindImageMemory first)",
                      vuid="VUID-VkImageViewCreateInfo-image-01020")
    if i.format != img.format:
        raise VkError(f"format {_format_name(i.format)} differs from the image's {_format_name(img.format)}: emu's "
                      f"views read the image's own format", "VK_ERROR_FORMAT_NOT_SUPPORTED",
                      "VUID-VkImageViewCreateInfo-image-01762")
    c = i.components
    for k, (comp, ident) in enumerate(zip((c.r, c.g, c.b, c.a), ("R", "G", "B", "A"))):
        if comp not in (VK["VK_COMPONENT_SWIZZLE_IDENTITY"], VK[f"VK_COMPONENT_SWIZZLE_{ident}"]):
            raise VkError(f"components.{'rgba'[k]} swizzles: emu's views are identity views",
                          "VK_ERROR_FORMAT_NOT_SUPPORTED", "VUID-VkImageViewCreateInfo-components-parameter")
    dimension = VIEW_TYPES.get(int(i.viewType))
    if dimension is None:
        raise VkError("a 1-D array view: emu's textures have no 1-D arrays", "VK_ERROR_FORMAT_NOT_SUPPORTED",
                      "VUID-VkImageViewCreateInfo-viewType-parameter")
    if dimension.startswith("cube") and not img.flags & VK["VK_IMAGE_CREATE_CUBE_COMPATIBLE_BIT"]:
        raise VkError("a cube view of an image made without VK_IMAGE_CREATE_CUBE_COMPATIBLE_BIT",
                      vuid="VUID-VkImageViewCreateInfo-image-01003")
    r = i.subresourceRange
    levels = len(img.texture.levels) - r.baseMipLevel if r.levelCount == REMAINING else int(r.levelCount)
    layers = img.layers - r.baseArrayLayer if r.layerCount == REMAINING else int(r.layerCount)
    from ..errors import HostError
    from ..memory.textures import create_view
    try:
        view = create_view(img.texture, dimension, int(r.baseMipLevel), levels, int(r.baseArrayLayer), layers)
    except HostError as err:
        raise VkError(f"pCreateInfo->subresourceRange: {err.message.split(': ', 1)[-1]}",
                      vuid="VUID-VkImageViewCreateInfo-subresourceRange-01718") from None
    p_view[0] = new_handle(ImageView(img, view))


# ------------------------------------------------------------------ samplers
ADDRESS = {VK["VK_SAMPLER_ADDRESS_MODE_REPEAT"]: "repeat", VK["VK_SAMPLER_ADDRESS_MODE_MIRRORED_REPEAT"]: "mirror-repeat",
           VK["VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE"]: "clamp-to-edge"}
FILTER = {VK["VK_FILTER_NEAREST"]: "nearest", VK["VK_FILTER_LINEAR"]: "linear"}
MIPMAP = {VK["VK_SAMPLER_MIPMAP_MODE_NEAREST"]: "nearest", VK["VK_SAMPLER_MIPMAP_MODE_LINEAR"]: "linear"}
COMPARE = {VK[f"VK_COMPARE_OP_{k}"]: v for k, v in (
    ("NEVER", "never"), ("LESS", "less"), ("EQUAL", "equal"), ("LESS_OR_EQUAL", "less-equal"), ("GREATER", "greater"),
    ("NOT_EQUAL", "not-equal"), ("GREATER_OR_EQUAL", "greater-equal"), ("ALWAYS", "always"))}


def _sampler(i):
    """emu's Sampler of a VkSamplerCreateInfo, or VkError saying what emu does not model."""
    def decline(what, vuid):
        raise VkError(f"pCreateInfo->{what}: emu's samplers filter nearest or linear and address by repeat, "
                      f"mirrored repeat or clamp to edge (with or without a compare op)", "VK_ERROR_FEATURE_NOT_PRESENT",
                      vuid)
    if i.magFilter not in FILTER or i.minFilter not in FILTER:
        decline(f"magFilter {i.magFilter} / minFilter {i.minFilter} (cubic)", "VUID-VkSamplerCreateInfo-magFilter-01081")
    declined = []           # valid, not modelled: the sampler is made, a dispatch sampling through it refused
    for axis in "UVW":
        mode = getattr(i, f"addressMode{axis}")
        if mode == VK["VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_BORDER"]:
            declined.append(f"addressMode{axis} clamp to border")
        elif mode not in ADDRESS:
            decline(f"addressMode{axis} mirror clamp to edge (samplerMirrorClampToEdge is not reported)",
                    "VUID-VkSamplerCreateInfo-addressModeU-01079")
    if i.anisotropyEnable:
        decline("anisotropyEnable (the samplerAnisotropy feature is not reported)",
                "VUID-VkSamplerCreateInfo-anisotropyEnable-01070")
    if i.mipLodBias != 0:
        decline(f"mipLodBias {i.mipLodBias} (maxSamplerLodBias is 0)", "VUID-VkSamplerCreateInfo-mipLodBias-01069")
    if i.unnormalizedCoordinates:
        declined.append("unnormalizedCoordinates")
    from . import icd
    if icd.find(i.pNext, "VkSamplerReductionModeCreateInfo") is not None or \
            icd.find(i.pNext, "VkSamplerYcbcrConversionInfo") is not None:
        decline("pNext (min/max reduction or Y'CbCr conversion)", "VUID-VkSamplerCreateInfo-pNext-pNext")
    if not 0 <= i.minLod <= i.maxLod:
        raise VkError(f"minLod {i.minLod} and maxLod {i.maxLod}: 0 <= minLod <= maxLod",
                      vuid="VUID-VkSamplerCreateInfo-maxLod-01973")
    if declined:
        return DeclinedSampler(f"{', '.join(declined)}: emu's samplers take normalized coordinates and address by "
                               f"repeat, mirrored repeat or clamp to edge", "VUID-vkCmdDispatch-None-08600")
    from ..memory.textures import Sampler
    return Sampler(address_mode_u=ADDRESS[i.addressModeU], address_mode_v=ADDRESS[i.addressModeV],
                   address_mode_w=ADDRESS[i.addressModeW], mag_filter=FILTER[i.magFilter],
                   min_filter=FILTER[i.minFilter], mipmap_filter=MIPMAP.get(i.mipmapMode, "nearest"),
                   lod_min_clamp=float(i.minLod), lod_max_clamp=float(i.maxLod),
                   compare=COMPARE[i.compareOp] if i.compareEnable else None)


@command
def vkCreateSampler(device, p_info, p_alloc, p_sampler):
    _dev(device, "vkCreateSampler")
    p_sampler[0] = new_handle(SamplerObject(_sampler(p_info[0])))


# ------------------------------------------------------------------ transfers
def _subresource(img: Image, sub, call: str, what: str) -> tuple[int, int, int]:
    """(level, first layer, layers) of a VkImageSubresourceLayers, checked."""
    aspect = VK["VK_IMAGE_ASPECT_DEPTH_BIT" if img.texture.format.depth else "VK_IMAGE_ASPECT_COLOR_BIT"]
    if sub.aspectMask != aspect:
        raise VkError(f"{what}.aspectMask 0x{sub.aspectMask:x}: the image's format has aspect 0x{aspect:x}",
                      vuid=f"VUID-{call}-aspectMask-00211")
    count = img.layers - sub.baseArrayLayer if sub.layerCount == REMAINING else int(sub.layerCount)
    if sub.mipLevel >= len(img.texture.levels) or sub.baseArrayLayer + count > img.layers or count < 1:
        raise VkError(f"{what}: level {sub.mipLevel}, layers {sub.baseArrayLayer}..{sub.baseArrayLayer + count - 1} "
                      f"of an image of {len(img.texture.levels)} level(s) and {img.layers} layer(s)",
                      vuid=f"VUID-{call}-imageSubresource-07968")
    return int(sub.mipLevel), int(sub.baseArrayLayer), count


def _block(img: Image, sub, offset, extent, call: str, what: str):
    """A function giving, at submit, the texels of a region: (slices, rows, texels, bytes)."""
    level, first, count = _subresource(img, sub, call, what)
    ext = img.texture.extent(level)
    o, e = (offset.x, offset.y, offset.z), (extent.width, extent.height, extent.depth)
    if img.dimension != "3d" and (o[2], e[2]) != (0, 1) or img.dimension == "1d" and (o[1], e[1]) != (0, 1):
        raise VkError(f"{what}: offset {o} and extent {e} for a {img.dimension} image (z 0 and depth 1; 1-D: y 0 and "
                      f"height 1)", vuid=f"VUID-{call}-srcImage-00201")
    if any(a < 0 or a + b > n for a, b, n in zip(o, e, ext if img.dimension == "3d" else ext[:2] + (1,))):
        raise VkError(f"{what}: offset {o} + extent {e} passes level {level}'s {ext[:2] + ((ext[2],) if img.dimension == '3d' else (1,))}",
                      vuid=f"VUID-{call}-pRegions-06218")
    z0, nz = (o[2], e[2]) if img.dimension == "3d" else (first, count)

    def texels():
        return img.level(level, call)[z0:z0 + nz, o[1]:o[1] + e[1], o[0]:o[0] + e[0]]
    return texels, (nz, e[1], e[0])


def _buffer_block(buf: Buffer, r, shape, texel: int, call: str, k: int):
    """A function giving, at submit, the buffer's bytes of a region as (slices, rows, texels, bytes)."""
    slices, h, w = shape
    row = r.bufferRowLength or w
    height = r.bufferImageHeight or h
    if row < w or height < h:
        raise VkError(f"pRegions[{k}]: bufferRowLength {r.bufferRowLength} / bufferImageHeight {r.bufferImageHeight} "
                      f"below the extent", vuid=f"VUID-{call}-bufferRowLength-09101")
    if r.bufferOffset % texel:
        raise VkError(f"pRegions[{k}]: bufferOffset {r.bufferOffset} is not a multiple of the texel's {texel} bytes",
                      vuid=f"VUID-{call}-dstImage-07975")
    need = ((slices - 1) * height * row + (h - 1) * row + w) * texel
    if r.bufferOffset + need > buf.size:
        raise VkError(f"pRegions[{k}]: {need} bytes from bufferOffset {r.bufferOffset} pass the buffer's {buf.size}",
                      vuid=f"VUID-{call}-pRegions-00171")
    start = int(r.bufferOffset)

    def data():
        b = buf.bytes(call, "the buffer")[start:]
        return np.lib.stride_tricks.as_strided(b, (slices, h, w, texel), (height * row * texel, row * texel, texel, 1))
    return data


def _copy_buffer_image(cb, call, buffer, image, regions, to_image: bool):
    c = _cb(cb, call)
    buf = get(buffer, Buffer, call, "srcBuffer" if to_image else "dstBuffer")
    img = get(image, Image, call, "dstImage" if to_image else "srcImage")
    pairs = []
    for k, r in enumerate(regions):
        texels, shape = _block(img, r.imageSubresource, r.imageOffset, r.imageExtent, call, f"pRegions[{k}]")
        pairs.append((texels, _buffer_block(buf, r, shape, img.texture.format.bytes, call, k)))

    def run():
        for texels, data in pairs:
            if to_image:
                texels()[...] = data()
            else:
                data()[...] = texels()
    c.record(call, run)


@command
def vkCmdCopyBufferToImage(cb, src, dst, layout, count, p_regions):
    _copy_buffer_image(cb, "vkCmdCopyBufferToImage", src, dst, [p_regions[k] for k in range(count)], True)


@command
def vkCmdCopyImageToBuffer(cb, src, layout, dst, count, p_regions):
    _copy_buffer_image(cb, "vkCmdCopyImageToBuffer", dst, src, [p_regions[k] for k in range(count)], False)


@command
def vkCmdCopyBufferToImage2(cb, p_info):
    i = p_info[0]
    _copy_buffer_image(cb, "vkCmdCopyBufferToImage2", i.srcBuffer, i.dstImage,
                       [i.pRegions[k] for k in range(i.regionCount)], True)


@command
def vkCmdCopyImageToBuffer2(cb, p_info):
    i = p_info[0]
    _copy_buffer_image(cb, "vkCmdCopyImageToBuffer2", i.dstBuffer, i.srcImage,
                       [i.pRegions[k] for k in range(i.regionCount)], False)


def _copy_image(cb, call, src, dst, regions):
    c = _cb(cb, call)
    s = get(src, Image, call, "srcImage")
    d = get(dst, Image, call, "dstImage")
    if s.texture.format.bytes != d.texture.format.bytes:
        raise VkError(f"the images' texels have {s.texture.format.bytes} and {d.texture.format.bytes} bytes: a copy "
                      f"needs formats of one size", vuid=f"VUID-{call}-srcImage-01548")
    pairs = []
    for k, r in enumerate(regions):
        a, shape_a = _block(s, r.srcSubresource, r.srcOffset, r.extent, call, f"pRegions[{k}].src")
        b, shape_b = _block(d, r.dstSubresource, r.dstOffset, r.extent, call, f"pRegions[{k}].dst")
        if shape_a != shape_b:
            raise VkError(f"pRegions[{k}]: {shape_a[0]} source and {shape_b[0]} destination layers or slices",
                          vuid=f"VUID-{call}-srcImage-08793")
        pairs.append((a, b))

    def run():
        for a, b in pairs:
            b()[...] = a().copy()          # (one image may be both)
    c.record(call, run)


@command
def vkCmdCopyImage(cb, src, src_layout, dst, dst_layout, count, p_regions):
    _copy_image(cb, "vkCmdCopyImage", src, dst, [p_regions[k] for k in range(count)])


@command
def vkCmdCopyImage2(cb, p_info):
    i = p_info[0]
    _copy_image(cb, "vkCmdCopyImage2", i.srcImage, i.dstImage, [i.pRegions[k] for k in range(i.regionCount)])


@command
def vkCmdClearColorImage(cb, image, layout, p_color, count, p_ranges):
    call = "vkCmdClearColorImage"
    img = get(image, Image, call, "image")
    f = img.texture.format
    if f.depth:
        raise VkError("the image has a depth format (vkCmdClearDepthStencilImage clears it)",
                      vuid="VUID-vkCmdClearColorImage-image-00007")
    kind = {"u32": ("uint32", np.uint32), "i32": ("int32", np.int32)}.get(f.sampled, ("float32", np.float32))
    _clear(cb, call, img, np.array(list(getattr(p_color, kind[0])), kind[1]), count, p_ranges)


@command
def vkCmdClearDepthStencilImage(cb, image, layout, p_value, count, p_ranges):
    call = "vkCmdClearDepthStencilImage"
    img = get(image, Image, call, "image")
    if not img.texture.format.depth:
        raise VkError("the image has a colour format (vkCmdClearColorImage clears it)",
                      vuid="VUID-vkCmdClearDepthStencilImage-image-00014")
    _clear(cb, call, img, np.array([p_value.depth, 0, 0, 1], np.float32), count, p_ranges)


def _clear(cb, call, img: Image, value: np.ndarray, count, p_ranges):
    """Record filling the ranges with `value` (rgba, the format's shader type), converted as a
    shader's store converts it (Vulkan's rules: normalized values clamped and rounded to
    nearest, integers' low bits)."""
    from ..numerics.texels import encode
    c = _cb(cb, call)
    texel = encode(img.texture.format, value.reshape(1, 4))[0]
    blocks = []
    for k in range(count):
        r = p_ranges[k]
        levels = len(img.texture.levels) - r.baseMipLevel if r.levelCount == REMAINING else int(r.levelCount)
        layers = img.layers - r.baseArrayLayer if r.layerCount == REMAINING else int(r.layerCount)
        if r.baseMipLevel + levels > len(img.texture.levels) or r.baseArrayLayer + layers > img.layers:
            raise VkError(f"pRanges[{k}] passes the image's {len(img.texture.levels)} level(s) and {img.layers} "
                          f"layer(s)", vuid=f"VUID-{call}-baseMipLevel-01470")
        every = img.dimension == "3d"
        blocks += [(lv, slice(None) if every else slice(r.baseArrayLayer, r.baseArrayLayer + layers))
                   for lv in range(r.baseMipLevel, r.baseMipLevel + levels)]

    def run():
        for lv, layers in blocks:
            img.level(lv, call)[layers] = texel
    c.record(call, run)


def _no_blit(call):
    def refuse(cb, *args):
        raise VkError("no format of emu's device reports VK_FORMAT_FEATURE_BLIT_SRC_BIT / _DST_BIT or resolves "
                      "(copy with vkCmdCopyImage, or filter in a compute shader)", vuid=f"VUID-{call}-srcImage-01999")
    refuse.__name__ = call
    command(refuse)


for _call in ("vkCmdBlitImage", "vkCmdBlitImage2", "vkCmdResolveImage", "vkCmdResolveImage2"):
    _no_blit(_call)

destroyer("vkDestroyImage", Image, "image")
destroyer("vkDestroyImageView", ImageView, "imageView")
destroyer("vkDestroySampler", SamplerObject, "sampler")
