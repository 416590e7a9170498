"""Invalid use through the vulkan package (run by tests/vulkan/test_commands.py with emu's ICD):
memory bound past its end, a descriptor range past its buffer's end, a dispatch whose shader reads
a descriptor never written; prints what each call returned. scale_add.spv is argv[1]."""
import sys

import vulkan as vk
from vkdevice import open_device

code = open(sys.argv[1], "rb").read()
inst, pd, dev, queue = open_device()


def attempt(what, fn, *args):
    try:
        fn(*args)
        print(what, "ok")
    except vk.VkError as e:
        print(what, type(e).__name__)


mem = vk.vkAllocateMemory(dev, vk.VkMemoryAllocateInfo(allocationSize=1024, memoryTypeIndex=0), None)
usage = vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
a = vk.vkCreateBuffer(dev, vk.VkBufferCreateInfo(size=512, usage=usage), None)
b = vk.vkCreateBuffer(dev, vk.VkBufferCreateInfo(size=256, usage=usage), None)
attempt("bind past the end:", vk.vkBindBufferMemory, dev, a, mem, 640)
attempt("bind:", vk.vkBindBufferMemory, dev, a, mem, 0)
attempt("bind:", vk.vkBindBufferMemory, dev, b, mem, 512)

module = vk.vkCreateShaderModule(dev, vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code), None)
kind = vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
layout = vk.vkCreateDescriptorSetLayout(dev, vk.VkDescriptorSetLayoutCreateInfo(bindingCount=2, pBindings=[
    vk.VkDescriptorSetLayoutBinding(binding=i, descriptorType=kind, descriptorCount=1,
                                    stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT) for i in range(2)]), None)
pl = vk.vkCreatePipelineLayout(dev, vk.VkPipelineLayoutCreateInfo(setLayoutCount=1, pSetLayouts=[layout],
    pushConstantRangeCount=1, pPushConstantRanges=[vk.VkPushConstantRange(
        stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT, offset=0, size=8)]), None)
stage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=module, pName="main")
pipe = vk.vkCreateComputePipelines(dev, None, 1, [vk.VkComputePipelineCreateInfo(stage=stage, layout=pl)], None)[0]
pool = vk.vkCreateDescriptorPool(dev, vk.VkDescriptorPoolCreateInfo(maxSets=1, poolSizeCount=1, pPoolSizes=[
    vk.VkDescriptorPoolSize(type=kind, descriptorCount=2)]), None)
dset = vk.vkAllocateDescriptorSets(dev, vk.VkDescriptorSetAllocateInfo(descriptorPool=pool, descriptorSetCount=1,
                                                                       pSetLayouts=[layout]))[0]
write = lambda binding, buf, off, rng: vk.VkWriteDescriptorSet(  # noqa: E731
    dstSet=dset, dstBinding=binding, descriptorCount=1, descriptorType=kind,
    pBufferInfo=[vk.VkDescriptorBufferInfo(buffer=buf, offset=off, range=rng)])
vk.vkUpdateDescriptorSets(dev, 1, [write(0, a, 256, 512)], 0, None)      # 256 + 512 > 512: refused
vk.vkUpdateDescriptorSets(dev, 1, [write(0, a, 0, 512)], 0, None)        # binding 1 stays unwritten
cpool = vk.vkCreateCommandPool(dev, vk.VkCommandPoolCreateInfo(queueFamilyIndex=0), None)
cb = vk.vkAllocateCommandBuffers(dev, vk.VkCommandBufferAllocateInfo(commandPool=cpool, level=0, commandBufferCount=1))[0]
vk.vkBeginCommandBuffer(cb, vk.VkCommandBufferBeginInfo())
vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipe)
vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, [dset], 0, None)
vk.vkCmdPushConstants(cb, pl, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, 8, vk.ffi.new("uint32_t[2]", [2, 64]))
vk.vkCmdDispatch(cb, 1, 1, 1)
vk.vkEndCommandBuffer(cb)
attempt("submit:", vk.vkQueueSubmit, queue, 1, [vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[cb])], None)
vk.vkDestroyDevice(dev, None)
vk.vkDestroyInstance(inst, None)
print("done")
