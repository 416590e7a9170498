"""Invalid use of images and samplers through the vulkan package (run by tests/vulkan/test_images.py
with emu's ICD): each is one message from the ICD and an error code (or, from a command that
returns nothing, the message alone), and the program goes on. images.spv is argv[1]."""
import sys

import vulkan as vk
from vkdevice import compute_pipeline, open_device

code = open(sys.argv[1], "rb").read()
inst, pd, dev, queue = open_device()
RGBA8, COLOR = vk.VK_FORMAT_R8G8B8A8_UNORM, vk.VK_IMAGE_ASPECT_COLOR_BIT
mem = vk.vkAllocateMemory(dev, vk.VkMemoryAllocateInfo(allocationSize=1 << 16, memoryTypeIndex=0), None)


def attempt(what, fn):
    try:
        out = fn()
        print(f"{what}: ok")
        return out
    except vk.VkError as e:
        print(f"{what}: {type(e).__name__}")


def image_info(usage, samples=vk.VK_SAMPLE_COUNT_1_BIT, width=16):
    return vk.VkImageCreateInfo(imageType=vk.VK_IMAGE_TYPE_2D, format=RGBA8, extent=vk.VkExtent3D(width, 16, 1),
                                mipLevels=1, arrayLayers=1, samples=samples, tiling=vk.VK_IMAGE_TILING_OPTIMAL,
                                usage=usage, initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED)


def view_of(img):
    return vk.vkCreateImageView(dev, vk.VkImageViewCreateInfo(
        image=img, viewType=vk.VK_IMAGE_VIEW_TYPE_2D, format=RGBA8,
        subresourceRange=vk.VkImageSubresourceRange(aspectMask=COLOR, levelCount=1, layerCount=1)), None)


SAMPLED, STORAGE = vk.VK_IMAGE_USAGE_SAMPLED_BIT, vk.VK_IMAGE_USAGE_STORAGE_BIT
unbound = vk.vkCreateImage(dev, image_info(SAMPLED), None)
attempt("view of an unbound image", lambda: view_of(unbound))
attempt("multisampled image", lambda: vk.vkCreateImage(dev, image_info(SAMPLED, vk.VK_SAMPLE_COUNT_4_BIT), None))
attempt("image past the limits", lambda: vk.vkCreateImage(dev, image_info(SAMPLED, width=40000), None))
attempt("mirror-clamp-to-edge sampler", lambda: vk.vkCreateSampler(dev, vk.VkSamplerCreateInfo(
    addressModeU=4), None))        # VK_SAMPLER_ADDRESS_MODE_MIRROR_CLAMP_TO_EDGE; its feature is not reported
# valid samplers emu does not model are made (ncnn makes one when its device starts); a dispatch
# sampling through one is refused
for label, info in (("unnormalized", dict(unnormalizedCoordinates=1)),
                    ("clamp-to-border", dict(addressModeU=vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_BORDER))):
    vk.vkDestroySampler(dev, vk.vkCreateSampler(dev, vk.VkSamplerCreateInfo(**info), None), None)
    print(f"{label} sampler: made")
attempt("texel buffer binding", lambda: vk.vkCreateDescriptorSetLayout(dev, vk.VkDescriptorSetLayoutCreateInfo(
    bindingCount=1, pBindings=[vk.VkDescriptorSetLayoutBinding(
        binding=0, descriptorType=vk.VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, descriptorCount=1,
        stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT)]), None))

views = []
for k, usage in enumerate((SAMPLED | STORAGE, SAMPLED)):          # the second cannot be a storage image
    img = vk.vkCreateImage(dev, image_info(usage), None)
    vk.vkBindImageMemory(dev, img, mem, k * 4096)
    views.append(view_of(img))
smp = vk.vkCreateSampler(dev, vk.VkSamplerCreateInfo(magFilter=vk.VK_FILTER_LINEAR, minFilter=vk.VK_FILTER_LINEAR), None)
CIS, SI, S, STI = (vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, vk.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE,
                   vk.VK_DESCRIPTOR_TYPE_SAMPLER, vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE)
pool = vk.vkCreateDescriptorPool(dev, vk.VkDescriptorPoolCreateInfo(maxSets=2, poolSizeCount=4, pPoolSizes=[
    vk.VkDescriptorPoolSize(type=t, descriptorCount=4) for t in (CIS, SI, S, STI)]), None)
cpool = vk.vkCreateCommandPool(dev, vk.VkCommandPoolCreateInfo(queueFamilyIndex=0), None)
cb = vk.vkAllocateCommandBuffers(dev, vk.VkCommandBufferAllocateInfo(commandPool=cpool, level=0, commandBufferCount=1))[0]


def run_with(kinds, writes):
    """A set of layout `kinds`, `writes` (binding, type, view, sampler) into it, one dispatch."""
    layout, pl, pipe = compute_pipeline(dev, code, kinds)
    dset = vk.vkAllocateDescriptorSets(dev, vk.VkDescriptorSetAllocateInfo(descriptorPool=pool, descriptorSetCount=1,
                                                                           pSetLayouts=[layout]))[0]
    for binding, kind, view, sampler in writes:
        vk.vkUpdateDescriptorSets(dev, 1, [vk.VkWriteDescriptorSet(
            dstSet=dset, dstBinding=binding, descriptorCount=1, descriptorType=kind, pImageInfo=[
                vk.VkDescriptorImageInfo(sampler=sampler, imageView=view, imageLayout=vk.VK_IMAGE_LAYOUT_GENERAL)])],
            0, None)
    vk.vkBeginCommandBuffer(cb, vk.VkCommandBufferBeginInfo())
    vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipe)
    vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, [dset], 0, None)
    vk.vkCmdDispatch(cb, 2, 2, 1)
    vk.vkEndCommandBuffer(cb)
    attempt("submit", lambda: vk.vkQueueSubmit(queue, 1, [vk.VkSubmitInfo(commandBufferCount=1,
                                                                            pCommandBuffers=[cb])], None))


good = [(0, CIS, views[0], smp), (1, SI, views[0], None), (2, S, None, smp)]
# a sampled-image write into a storage-image binding; a storage view of an image without STORAGE usage
run_with((CIS, SI, S, STI, STI), good + [(3, SI, views[0], None), (4, STI, views[1], None)])
# binding 3 of the layout is a sampled image where the shader has a storage image
run_with((CIS, SI, S, SI, STI), good + [(3, SI, views[0], None), (4, STI, views[0], None)])
vk.vkDestroyDevice(dev, None)
vk.vkDestroyInstance(inst, None)
print("done")
