"""Images and samplers through the vulkan package (run by tests/vulkan/test_images.py with emu's
ICD): images.spv (argv[1]) samples a 16x16 rgba8unorm image, once through a combined image sampler
(an optimal image filled by vkCmdCopyBufferToImage from rows of 20 texels) and once as a sampled
image with a separate sampler (a linear image the host writes through its mapped memory at
vkGetImageSubresourceLayout's row pitch), and stores the samples to an rgba32f and an rgba8
storage image, read back with vkCmdCopyImageToBuffer; for each sampler case (filter, address mode).
Also a clear (vkCmdClearColorImage) and an image-to-image copy (vkCmdCopyImage), read back.
Writes everything it read to argv[2] (.npz) and prints a line per step."""
import sys

import numpy as np
import vulkan as vk
from vkdevice import compute_pipeline, open_device

code = open(sys.argv[1], "rb").read()
inst, pd, dev, queue = open_device()
N = 16
RGBA8, RGBA32F = vk.VK_FORMAT_R8G8B8A8_UNORM, vk.VK_FORMAT_R32G32B32A32_SFLOAT
COLOR = vk.VK_IMAGE_ASPECT_COLOR_BIT
props = vk.vkGetPhysicalDeviceFormatProperties(pd, RGBA8)
print("rgba8 optimal features: sampled", bool(props.optimalTilingFeatures & vk.VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT),
      "linear filter", bool(props.optimalTilingFeatures & vk.VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT),
      "storage", bool(props.optimalTilingFeatures & vk.VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT),
      "texel buffer", props.bufferFeatures)

FEATURES = {"sampled": vk.VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT, "storage": vk.VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT,
            "linear filter": vk.VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT,
            "transfer src": 0x4000, "transfer dst": 0x8000}   # (the vulkan package has these as None)
for name in ("R32_SFLOAT", "R8G8B8A8_SRGB", "D32_SFLOAT"):
    f = vk.vkGetPhysicalDeviceFormatProperties(pd, getattr(vk, f"VK_FORMAT_{name}"))
    print(name, "optimal:", [k for k, bit in FEATURES.items() if f.optimalTilingFeatures & bit],
          "linear:", [k for k, bit in FEATURES.items() if f.linearTilingFeatures & bit])
limits = vk.vkGetPhysicalDeviceImageFormatProperties(pd, RGBA8, vk.VK_IMAGE_TYPE_2D, vk.VK_IMAGE_TILING_OPTIMAL,
                                                     vk.VK_IMAGE_USAGE_STORAGE_BIT, 0)
print("rgba8 2d storage: maxExtent", limits.maxExtent.width, "maxMipLevels", limits.maxMipLevels, "maxArrayLayers",
      limits.maxArrayLayers, "sampleCounts", limits.sampleCounts)
try:
    vk.vkGetPhysicalDeviceImageFormatProperties(pd, RGBA8, vk.VK_IMAGE_TYPE_2D, vk.VK_IMAGE_TILING_OPTIMAL,
                                                vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT, 0)
except vk.VkError as e:
    print("rgba8 colour attachment:", type(e).__name__)

mem = vk.vkAllocateMemory(dev, vk.VkMemoryAllocateInfo(allocationSize=1 << 20, memoryTypeIndex=0), None)
host = np.frombuffer(vk.vkMapMemory(dev, mem, 0, 1 << 20, 0), np.uint8)
top = [0]


def place(req):
    at = -(-top[0] // req.alignment) * req.alignment
    top[0] = at + req.size
    return at


def image(fmt, usage, tiling=vk.VK_IMAGE_TILING_OPTIMAL):
    img = vk.vkCreateImage(dev, vk.VkImageCreateInfo(
        imageType=vk.VK_IMAGE_TYPE_2D, format=fmt, extent=vk.VkExtent3D(N, N, 1), mipLevels=1, arrayLayers=1,
        samples=vk.VK_SAMPLE_COUNT_1_BIT, tiling=tiling, usage=usage, initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED), None)
    at = place(vk.vkGetImageMemoryRequirements(dev, img))
    vk.vkBindImageMemory(dev, img, mem, at)
    view = vk.vkCreateImageView(dev, vk.VkImageViewCreateInfo(
        image=img, viewType=vk.VK_IMAGE_VIEW_TYPE_2D, format=fmt,
        subresourceRange=vk.VkImageSubresourceRange(aspectMask=COLOR, levelCount=1, layerCount=1)), None)
    return img, view, at


def buffer(size):
    b = vk.vkCreateBuffer(dev, vk.VkBufferCreateInfo(size=size, usage=vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                                     vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT), None)
    at = place(vk.vkGetBufferMemoryRequirements(dev, b))
    vk.vkBindBufferMemory(dev, b, mem, at)
    return b, at


data = np.random.default_rng(30).integers(0, 256, (N, N, 4), dtype=np.uint8)
T = vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT
src, src_view, _ = image(RGBA8, vk.VK_IMAGE_USAGE_SAMPLED_BIT | T)
lin, lin_view, lin_at = image(RGBA8, vk.VK_IMAGE_USAGE_SAMPLED_BIT, vk.VK_IMAGE_TILING_LINEAR)
out_f32, out_f32_view, _ = image(RGBA32F, vk.VK_IMAGE_USAGE_STORAGE_BIT | T)
out_u8, out_u8_view, _ = image(RGBA8, vk.VK_IMAGE_USAGE_STORAGE_BIT | T)
copy_dst, _, _ = image(RGBA8, T)
staging, staging_at = buffer(20 * N * 4)          # rows of 20 texels: bufferRowLength 20
readback, readback_at = buffer(N * N * 16)

rows = np.zeros((N, 20, 4), np.uint8)
rows[:, :N] = data
host[staging_at:staging_at + rows.nbytes] = rows.reshape(-1)
layout = vk.vkGetImageSubresourceLayout(dev, lin, vk.VkImageSubresource(aspectMask=COLOR, mipLevel=0, arrayLayer=0))
print("linear layout: offset", layout.offset, "rowPitch", layout.rowPitch, "size", layout.size)
for y in range(N):
    at = lin_at + layout.offset + y * layout.rowPitch
    host[at:at + N * 4] = data[y].reshape(-1)

cpool = vk.vkCreateCommandPool(dev, vk.VkCommandPoolCreateInfo(queueFamilyIndex=0), None)
cb = vk.vkAllocateCommandBuffers(dev, vk.VkCommandBufferAllocateInfo(commandPool=cpool, level=0, commandBufferCount=1))[0]


def submit(record):
    vk.vkBeginCommandBuffer(cb, vk.VkCommandBufferBeginInfo())
    record()
    vk.vkEndCommandBuffer(cb)
    vk.vkQueueSubmit(queue, 1, [vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[cb])], None)
    vk.vkQueueWaitIdle(queue)


def transition(img, old, new):
    vk.vkCmdPipelineBarrier(cb, vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0,
                            0, None, 0, None, 1, [vk.VkImageMemoryBarrier(
                                srcAccessMask=0, dstAccessMask=0, oldLayout=old, newLayout=new,
                                srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED, dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                                image=img, subresourceRange=vk.VkImageSubresourceRange(aspectMask=COLOR, levelCount=1,
                                                                                       layerCount=1))])


def region(row_length=0):
    return vk.VkBufferImageCopy(bufferOffset=0, bufferRowLength=row_length, bufferImageHeight=0,
                                imageSubresource=vk.VkImageSubresourceLayers(aspectMask=COLOR, mipLevel=0,
                                                                             baseArrayLayer=0, layerCount=1),
                                imageOffset=vk.VkOffset3D(0, 0, 0), imageExtent=vk.VkExtent3D(N, N, 1))


def read(img, texel_bytes, dtype):
    submit(lambda: vk.vkCmdCopyImageToBuffer(cb, img, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readback, 1, [region()]))
    return host[readback_at:readback_at + N * N * texel_bytes].copy().view(dtype).reshape(N, N, -1)


def upload():
    transition(src, vk.VK_IMAGE_LAYOUT_UNDEFINED, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL)
    vk.vkCmdCopyBufferToImage(cb, staging, src, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, [region(20)])
    transition(src, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL)


submit(upload)
print("upload: exact", bool((read(src, 4, np.uint8) == data).all()))
submit(lambda: vk.vkCmdCopyImage(cb, src, vk.VK_IMAGE_LAYOUT_GENERAL, copy_dst, vk.VK_IMAGE_LAYOUT_GENERAL, 1, [
    vk.VkImageCopy(srcSubresource=vk.VkImageSubresourceLayers(aspectMask=COLOR, layerCount=1),
                   srcOffset=vk.VkOffset3D(4, 2, 0),
                   dstSubresource=vk.VkImageSubresourceLayers(aspectMask=COLOR, layerCount=1),
                   dstOffset=vk.VkOffset3D(0, 0, 0), extent=vk.VkExtent3D(8, 8, 1))]))
copied = read(copy_dst, 4, np.uint8)
print("copy image: exact", bool((copied[:8, :8] == data[2:10, 4:12]).all()), "rest zero", int(copied.sum()) ==
      int(copied[:8, :8].sum()))
submit(lambda: vk.vkCmdClearColorImage(cb, out_u8, vk.VK_IMAGE_LAYOUT_GENERAL,
                                       vk.VkClearColorValue(float32=[0.5, 0.25, 1.0, 0.0]), 1,
                                       [vk.VkImageSubresourceRange(aspectMask=COLOR, levelCount=1, layerCount=1)]))
print("clear:", read(out_u8, 4, np.uint8)[3, 5].tolist())

kinds = [vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, vk.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE,
         vk.VK_DESCRIPTOR_TYPE_SAMPLER, vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE]
set_layout, pl, pipe = compute_pipeline(dev, code, kinds)
pool = vk.vkCreateDescriptorPool(dev, vk.VkDescriptorPoolCreateInfo(maxSets=1, poolSizeCount=4, pPoolSizes=[
    vk.VkDescriptorPoolSize(type=t, descriptorCount=2) for t in kinds[:4]]), None)
dset = vk.vkAllocateDescriptorSets(dev, vk.VkDescriptorSetAllocateInfo(descriptorPool=pool, descriptorSetCount=1,
                                                                       pSetLayouts=[set_layout]))[0]
GENERAL, READ = vk.VK_IMAGE_LAYOUT_GENERAL, vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL


def write(binding, view=None, sampler=None, layout=READ):
    info = vk.VkDescriptorImageInfo(sampler=sampler, imageView=view, imageLayout=layout)
    return vk.VkWriteDescriptorSet(dstSet=dset, dstBinding=binding, descriptorCount=1, descriptorType=kinds[binding],
                                   pImageInfo=[info])


MODES = {"clamp": vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE, "repeat": vk.VK_SAMPLER_ADDRESS_MODE_REPEAT,
         "mirror": vk.VK_SAMPLER_ADDRESS_MODE_MIRRORED_REPEAT}
FILTERS = {"nearest": vk.VK_FILTER_NEAREST, "linear": vk.VK_FILTER_LINEAR}
saved = {"data": data, "copied": copied}
for filt, mode in (("nearest", "clamp"), ("nearest", "repeat"), ("linear", "clamp"), ("linear", "repeat"),
                   ("linear", "mirror")):
    smp = vk.vkCreateSampler(dev, vk.VkSamplerCreateInfo(
        magFilter=FILTERS[filt], minFilter=FILTERS[filt], mipmapMode=vk.VK_SAMPLER_MIPMAP_MODE_NEAREST,
        addressModeU=MODES[mode], addressModeV=MODES[mode], addressModeW=MODES[mode], maxLod=0.0), None)
    vk.vkUpdateDescriptorSets(dev, 5, [write(0, src_view, smp), write(1, lin_view), write(2, sampler=smp),
                                       write(3, out_f32_view, layout=GENERAL), write(4, out_u8_view, layout=GENERAL)],
                              0, None)

    def dispatch():
        vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipe)
        vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, [dset], 0, None)
        vk.vkCmdDispatch(cb, 2, 2, 1)
    submit(dispatch)
    f32, u8 = read(out_f32, 16, np.float32), read(out_u8, 4, np.uint8)
    saved[f"{filt}_{mode}_f32"], saved[f"{filt}_{mode}_u8"] = f32, u8
    print(f"{filt} {mode}: f32 distinct {len(np.unique(f32))} u8 distinct {len(np.unique(u8))}")
    vk.vkDestroySampler(dev, smp, None)
# the same dispatch from a copy of the set (vkUpdateDescriptorSets' pDescriptorCopies), and from a
# set whose layout fixes the samplers (pImmutableSamplers: only the images are written)
nearest = vk.vkCreateSampler(dev, vk.VkSamplerCreateInfo(
    magFilter=vk.VK_FILTER_NEAREST, minFilter=vk.VK_FILTER_NEAREST, addressModeU=MODES["clamp"],
    addressModeV=MODES["clamp"], addressModeW=MODES["clamp"], maxLod=0.0), None)
vk.vkUpdateDescriptorSets(dev, 2, [write(0, src_view, nearest), write(2, sampler=nearest)], 0, None)
fixed_layout, fixed_pl, fixed_pipe = compute_pipeline(dev, code, kinds, immutable={0: nearest, 2: nearest})
pool2 = vk.vkCreateDescriptorPool(dev, vk.VkDescriptorPoolCreateInfo(maxSets=2, poolSizeCount=4, pPoolSizes=[
    vk.VkDescriptorPoolSize(type=t, descriptorCount=4) for t in kinds[:4]]), None)
copy_set, fixed_set = vk.vkAllocateDescriptorSets(dev, vk.VkDescriptorSetAllocateInfo(
    descriptorPool=pool2, descriptorSetCount=2, pSetLayouts=[set_layout, fixed_layout]))
vk.vkUpdateDescriptorSets(dev, 0, None, 5, [vk.VkCopyDescriptorSet(
    srcSet=dset, srcBinding=b, dstSet=copy_set, dstBinding=b, descriptorCount=1) for b in range(5)])
written = [write(0, src_view), write(1, lin_view), write(3, out_f32_view, layout=GENERAL),
           write(4, out_u8_view, layout=GENERAL)]
for w in written:
    w.dstSet = fixed_set
vk.vkUpdateDescriptorSets(dev, 4, written, 0, None)
for name, pipeline, layout, s in (("copied set", pipe, pl, copy_set), ("immutable samplers", fixed_pipe, fixed_pl,
                                                                        fixed_set)):
    def dispatch():
        vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipeline)
        vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, [s], 0, None)
        vk.vkCmdDispatch(cb, 2, 2, 1)
    submit(dispatch)
    same = (read(out_f32, 16, np.float32) == saved["nearest_clamp_f32"]).all() and \
        (read(out_u8, 4, np.uint8) == saved["nearest_clamp_u8"]).all()
    print(f"{name}: as nearest clamp {bool(same)}")
np.savez(sys.argv[2], **saved)
vk.vkDestroyDevice(dev, None)
vk.vkDestroyInstance(inst, None)
print("done")
