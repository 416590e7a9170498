"""Images and samplers for emu/hw/vulkan.py's dispatch: VkImage + VkImageView per texture
(runner.HwTexture: every level uploaded through a staging buffer and vkCmdCopyBufferToImage, then
held in VK_IMAGE_LAYOUT_GENERAL), VkSampler per sampler (create_sampler's keywords), the
descriptors (combined image sampler, sampled image, sampler, storage image) and, after the
dispatch, level 0 of each storage image copied back through a buffer."""
from __future__ import annotations

from ..numerics.texels import FORMATS
from .runner import HwError

# the texel formats' Vulkan names
SPECIAL = {"rgba8unorm-srgb": "R8G8B8A8_SRGB", "bgra8unorm": "B8G8R8A8_UNORM", "bgra8unorm-srgb": "B8G8R8A8_SRGB",
           "rgb10a2unorm": "A2B10G10R10_UNORM_PACK32", "rgb10a2uint": "A2B10G10R10_UINT_PACK32",
           "rg11b10ufloat": "B10G11R11_UFLOAT_PACK32", "depth32float": "D32_SFLOAT", "depth16unorm": "D16_UNORM"}
KINDS = {"unorm": "UNORM", "snorm": "SNORM", "uint": "UINT", "sint": "SINT", "float": "SFLOAT"}


def vk_format(vk, name: str) -> int:
    if name in SPECIAL:
        return getattr(vk, "VK_FORMAT_" + SPECIAL[name])
    f = FORMATS[name]
    comps = "".join(f"{c.upper()}{b}" for c, b in zip("rgba"[:len(f.channels)], f.bits))
    return getattr(vk, f"VK_FORMAT_{comps}_{KINDS[f.kind]}")


VIEWS = {"1d": "1D", "2d": "2D", "2d-array": "2D_ARRAY", "cube": "CUBE", "cube-array": "CUBE_ARRAY", "3d": "3D"}
ADDRESS = {"clamp-to-edge": "CLAMP_TO_EDGE", "repeat": "REPEAT", "mirror-repeat": "MIRRORED_REPEAT"}
COMPARE = {"never": "NEVER", "less": "LESS", "equal": "EQUAL", "less-equal": "LESS_OR_EQUAL",
           "greater": "GREATER", "not-equal": "NOT_EQUAL", "greater-equal": "GREATER_OR_EQUAL", "always": "ALWAYS"}
DESCRIPTORS = {"combined": "COMBINED_IMAGE_SAMPLER", "sampled": "SAMPLED_IMAGE", "sampler": "SAMPLER",
               "storage": "STORAGE_IMAGE"}


def descriptor_type(vk, kind: str) -> int:
    return getattr(vk, "VK_DESCRIPTOR_TYPE_" + DESCRIPTORS[kind])


def _memory_type(vk, pd, bits: int, host: bool) -> int:
    mem = vk.vkGetPhysicalDeviceMemoryProperties(pd)
    want = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT if host else 0
    for k in range(mem.memoryTypeCount):
        if bits >> k & 1 and mem.memoryTypes[k].propertyFlags & want == want:
            return k
    raise HwError(f"vulkan: no {'host-visible ' if host else ''}memory type for a buffer or image")


# Vulkan 1.2's buffer-device-address bits (the vulkan package's aliases of them are None)
SHADER_DEVICE_ADDRESS_BIT = 0x00020000      # VkBufferUsageFlagBits
MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT = 0x2    # VkMemoryAllocateFlagBits


def host_buffer(vk, dev, pd, keep, size: int, usage: int, data: bytes | None = None, addressed: bool = False):
    """(buffer, memory): a buffer of `size` bytes in host-visible coherent memory, holding `data`
    (zero-padded) when given: the dispatch's storage and uniform buffers, the images' staging and
    readback buffers. `keep(destroy, handle)` frees them after the dispatch. `addressed`: a buffer
    a shader reaches by its device address (its usage and memory say so)."""
    buf = keep(vk.vkDestroyBuffer, vk.vkCreateBuffer(dev, vk.VkBufferCreateInfo(
        sType=vk.VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, size=size,
        usage=usage | (SHADER_DEVICE_ADDRESS_BIT if addressed else 0),
        sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE), None))
    req = vk.vkGetBufferMemoryRequirements(dev, buf)
    flags = vk.VkMemoryAllocateFlagsInfo(sType=vk.VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
                                         flags=MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT) if addressed else None
    mem = keep(vk.vkFreeMemory, vk.vkAllocateMemory(dev, vk.VkMemoryAllocateInfo(
        sType=vk.VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, pNext=flags, allocationSize=req.size,
        memoryTypeIndex=_memory_type(vk, pd, req.memoryTypeBits, True)), None))
    vk.vkBindBufferMemory(dev, buf, mem, 0)
    if data is not None:
        mapped = vk.vkMapMemory(dev, mem, 0, size, 0)      # a cffi buffer over the memory
        mapped[:] = bytes(data) + bytes(size - len(data))
        vk.vkUnmapMemory(dev, mem)
    return buf, mem


def write_host(vk, dev, mem, data: bytes):
    mapped = vk.vkMapMemory(dev, mem, 0, len(data), 0)
    mapped[:] = bytes(data)
    vk.vkUnmapMemory(dev, mem)


def buffer_address(vk, dev, buf) -> int:
    """vkGetBufferDeviceAddress (core in Vulkan 1.2; the vulkan package has no wrapper for it)."""
    fn = vk.ffi.cast("PFN_vkGetBufferDeviceAddress", vk.lib.vkGetDeviceProcAddr(dev, b"vkGetBufferDeviceAddress"))
    info = vk.ffi.new("VkBufferDeviceAddressInfo*")
    info.sType, info.buffer = vk.VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, buf
    return int(fn(dev, info))


def read_host(vk, dev, mem, size: int, n: int) -> bytes:
    """The first `n` bytes of a host_buffer's memory of `size` bytes."""
    out = bytes(vk.vkMapMemory(dev, mem, 0, size, 0))[:n]
    vk.vkUnmapMemory(dev, mem)
    return out


class Images:
    """The images and samplers of one dispatch. `bindings` maps (set, binding) to (kind, HwTexture
    or None, sampler keywords or None); kind is combined, sampled, sampler or storage."""

    def __init__(self, vk, dev, pd, keep, bindings: dict):
        self.vk, self.dev, self.pd, self.keep = vk, dev, pd, keep
        self.bindings = bindings
        self.made: dict = {}        # key -> (image, view, sampler, HwTexture)
        self.staging = []           # (buffer, regions, image, aspect, levels, layers)
        self.readback: dict = {}    # key -> (buffer, memory, size)

    def _buffer(self, size: int, usage: int, data: bytes | None = None):
        return host_buffer(self.vk, self.dev, self.pd, self.keep, size, usage, data)

    def create(self):
        vk = self.vk
        for key, (kind, tex, smp) in self.bindings.items():
            image = view = sampler = None
            if tex is not None:
                image, view = self._image(key, kind, tex)
            if smp is not None:
                sampler = self._sampler(smp)
            self.made[key] = (image, view, sampler, tex)
        return vk

    def _image(self, key, kind, t):
        vk, dev = self.vk, self.dev
        f = FORMATS[t.format]
        w, h, d = t.size
        view_dim = t.view or ("2d-array" if t.dimension == "2d" and d > 1 else t.dimension)
        layers = d if t.dimension == "2d" else 1
        depth = d if t.dimension == "3d" else 1
        aspect = vk.VK_IMAGE_ASPECT_DEPTH_BIT if f.depth else vk.VK_IMAGE_ASPECT_COLOR_BIT
        usage = vk.VK_IMAGE_USAGE_SAMPLED_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT
        if kind == "storage":
            usage |= vk.VK_IMAGE_USAGE_STORAGE_BIT
        image = self.keep(vk.vkDestroyImage, vk.vkCreateImage(dev, vk.VkImageCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
            flags=vk.VK_IMAGE_CREATE_CUBE_COMPATIBLE_BIT if view_dim.startswith("cube") else 0,
            imageType=getattr(vk, "VK_IMAGE_TYPE_" + t.dimension.upper()), format=vk_format(vk, t.format),
            extent=vk.VkExtent3D(width=w, height=h, depth=depth), mipLevels=len(t.levels), arrayLayers=layers,
            samples=vk.VK_SAMPLE_COUNT_1_BIT, tiling=vk.VK_IMAGE_TILING_OPTIMAL, usage=usage,
            sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE, initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED), None))
        req = vk.vkGetImageMemoryRequirements(dev, image)
        mem = self.keep(vk.vkFreeMemory, vk.vkAllocateMemory(dev, vk.VkMemoryAllocateInfo(
            sType=vk.VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, allocationSize=req.size,
            memoryTypeIndex=_memory_type(vk, self.pd, req.memoryTypeBits, False)), None))
        vk.vkBindImageMemory(dev, image, mem, 0)
        rng = vk.VkImageSubresourceRange(aspectMask=aspect, baseMipLevel=0, levelCount=len(t.levels),
                                         baseArrayLayer=0, layerCount=layers)
        view = self.keep(vk.vkDestroyImageView, vk.vkCreateImageView(dev, vk.VkImageViewCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO, image=image,
            viewType=getattr(vk, "VK_IMAGE_VIEW_TYPE_" + VIEWS[view_dim]), format=vk_format(vk, t.format),
            subresourceRange=rng), None))
        blob, regions = b"", []
        for lv, data in enumerate(t.levels):
            lw, lh, ld = max(1, w >> lv), max(1, h >> lv), max(1, depth >> lv)
            if len(data) != lw * lh * ld * layers * f.bytes:
                raise HwError(f"vulkan: texture level {lv}: {len(data)} bytes for {lw}x{lh}x{ld * layers} {t.format}")
            regions.append(vk.VkBufferImageCopy(
                bufferOffset=len(blob), bufferRowLength=0, bufferImageHeight=0,
                imageSubresource=vk.VkImageSubresourceLayers(aspectMask=aspect, mipLevel=lv, baseArrayLayer=0,
                                                             layerCount=layers),
                imageOffset=vk.VkOffset3D(x=0, y=0, z=0), imageExtent=vk.VkExtent3D(width=lw, height=lh, depth=ld)))
            blob += bytes(data) + bytes((-len(data)) % 16)
        buf, _ = self._buffer(max(16, len(blob)), vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT, blob)
        self.staging.append((buf, regions, image, rng))
        if kind == "storage":
            size = w * h * depth * layers * f.bytes
            rb, rmem = self._buffer(max(16, size), vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT)
            self.readback[key] = (rb, rmem, size, image, aspect, (w, h, depth), layers)
        return image, view

    def _sampler(self, d: dict):
        vk = self.vk
        filt = lambda k: vk.VK_FILTER_LINEAR if d.get(k, "nearest") == "linear" else vk.VK_FILTER_NEAREST  # noqa: E731
        addr = lambda k: getattr(vk, "VK_SAMPLER_ADDRESS_MODE_" + ADDRESS[d.get(k, "clamp-to-edge")])  # noqa: E731
        compare = d.get("compare")
        return self.keep(vk.vkDestroySampler, vk.vkCreateSampler(self.dev, vk.VkSamplerCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO, magFilter=filt("mag_filter"), minFilter=filt("min_filter"),
            mipmapMode=vk.VK_SAMPLER_MIPMAP_MODE_LINEAR if d.get("mipmap_filter") == "linear"
            else vk.VK_SAMPLER_MIPMAP_MODE_NEAREST,
            addressModeU=addr("address_mode_u"), addressModeV=addr("address_mode_v"), addressModeW=addr("address_mode_w"),
            mipLodBias=0.0, anisotropyEnable=vk.VK_FALSE, maxAnisotropy=1.0,
            compareEnable=vk.VK_TRUE if compare else vk.VK_FALSE,
            compareOp=getattr(vk, "VK_COMPARE_OP_" + COMPARE[compare or "never"]),
            minLod=float(d.get("lod_min_clamp", 0.0)), maxLod=float(d.get("lod_max_clamp", 32.0)),
            borderColor=vk.VK_BORDER_COLOR_FLOAT_TRANSPARENT_BLACK, unnormalizedCoordinates=vk.VK_FALSE), None))

    def layout_bindings(self, s: int) -> list:
        vk = self.vk
        return [vk.VkDescriptorSetLayoutBinding(binding=b, descriptorType=descriptor_type(vk, kind), descriptorCount=1,
                                                stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT)
                for (ss, b), (kind, _, _) in sorted(self.bindings.items()) if ss == s]

    def pool_sizes(self) -> list:
        vk = self.vk
        kinds = [k for k, _, _ in self.bindings.values()]
        return [vk.VkDescriptorPoolSize(type=descriptor_type(vk, k), descriptorCount=kinds.count(k))
                for k in sorted(set(kinds))]

    def writes(self, dsets) -> list:
        vk = self.vk
        out = []
        for (s, b), (kind, _, _) in self.bindings.items():
            image, view, sampler, _ = self.made[(s, b)]
            info = vk.VkDescriptorImageInfo(sampler=sampler, imageView=view,
                                            imageLayout=vk.VK_IMAGE_LAYOUT_GENERAL if view is not None
                                            else vk.VK_IMAGE_LAYOUT_UNDEFINED)
            out.append(vk.VkWriteDescriptorSet(
                sType=vk.VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, dstSet=dsets[s], dstBinding=b, descriptorCount=1,
                descriptorType=descriptor_type(vk, kind), pImageInfo=[info]))
        return out

    def _barrier(self, cmd, image, rng, old, new, src_access, dst_access, src_stage, dst_stage):
        vk = self.vk
        vk.vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 0, None, 0, None, 1, [vk.VkImageMemoryBarrier(
            sType=vk.VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER, srcAccessMask=src_access, dstAccessMask=dst_access,
            oldLayout=old, newLayout=new, srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
            dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED, image=image, subresourceRange=rng)])

    def record_upload(self, cmd):
        vk = self.vk
        for buf, regions, image, rng in self.staging:
            self._barrier(cmd, image, rng, vk.VK_IMAGE_LAYOUT_UNDEFINED, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                          0, vk.VK_ACCESS_TRANSFER_WRITE_BIT, vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                          vk.VK_PIPELINE_STAGE_TRANSFER_BIT)
            vk.vkCmdCopyBufferToImage(cmd, buf, image, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, len(regions), regions)
            self._barrier(cmd, image, rng, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, vk.VK_IMAGE_LAYOUT_GENERAL,
                          vk.VK_ACCESS_TRANSFER_WRITE_BIT, vk.VK_ACCESS_SHADER_READ_BIT | vk.VK_ACCESS_SHADER_WRITE_BIT,
                          vk.VK_PIPELINE_STAGE_TRANSFER_BIT, vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT)

    def record_readback(self, cmd):
        vk = self.vk
        for key, (rb, _, _, image, aspect, (w, h, d), layers) in self.readback.items():
            rng = vk.VkImageSubresourceRange(aspectMask=aspect, baseMipLevel=0, levelCount=1, baseArrayLayer=0,
                                             layerCount=layers)
            self._barrier(cmd, image, rng, vk.VK_IMAGE_LAYOUT_GENERAL, vk.VK_IMAGE_LAYOUT_GENERAL,
                          vk.VK_ACCESS_SHADER_WRITE_BIT, vk.VK_ACCESS_TRANSFER_READ_BIT,
                          vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, vk.VK_PIPELINE_STAGE_TRANSFER_BIT)
            vk.vkCmdCopyImageToBuffer(cmd, image, vk.VK_IMAGE_LAYOUT_GENERAL, rb, 1, [vk.VkBufferImageCopy(
                bufferOffset=0, bufferRowLength=0, bufferImageHeight=0,
                imageSubresource=vk.VkImageSubresourceLayers(aspectMask=aspect, mipLevel=0, baseArrayLayer=0,
                                                             layerCount=layers),
                imageOffset=vk.VkOffset3D(x=0, y=0, z=0), imageExtent=vk.VkExtent3D(width=w, height=h, depth=d))])

    def read(self) -> dict:
        vk, out = self.vk, {}
        for key, (_, mem, size, *_rest) in self.readback.items():
            out[key] = read_host(vk, self.dev, mem, size, size)
        return out
