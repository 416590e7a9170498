"""Dispatches through the vulkan package (run by tests/vulkan/test_commands.py with emu's ICD):
scale_add.spv (argv[1]) run by vkCmdDispatchIndirect from a buffer, then by vkCmdDispatch with
the output bound as a dynamic storage buffer at a dynamic offset; prints what the output holds."""
import sys

import numpy as np
import vulkan as vk
from vkdevice import open_device

code = open(sys.argv[1], "rb").read()
inst, pd, dev, queue = open_device()
N, SIZE = 100, 4096
mem = vk.vkAllocateMemory(dev, vk.VkMemoryAllocateInfo(allocationSize=3 * SIZE, memoryTypeIndex=0), None)
usage = vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | vk.VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT
bufs = []
for k in range(3):
    b = vk.vkCreateBuffer(dev, vk.VkBufferCreateInfo(size=SIZE, usage=usage), None)
    vk.vkBindBufferMemory(dev, b, mem, k * SIZE)
    bufs.append(b)
host = np.frombuffer(vk.vkMapMemory(dev, mem, 0, 3 * SIZE, 0), np.uint32)
host[:N] = np.arange(N)
host[2 * SIZE // 4: 2 * SIZE // 4 + 3] = [2, 1, 1]          # the indirect dispatch's (x, y, z)

module = vk.vkCreateShaderModule(dev, vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code), None)
kinds = [vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC]
layout = vk.vkCreateDescriptorSetLayout(dev, vk.VkDescriptorSetLayoutCreateInfo(bindingCount=2, pBindings=[
    vk.VkDescriptorSetLayoutBinding(binding=i, descriptorType=kinds[i], descriptorCount=1,
                                    stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT) for i in range(2)]), None)
pl = vk.vkCreatePipelineLayout(dev, vk.VkPipelineLayoutCreateInfo(setLayoutCount=1, pSetLayouts=[layout],
    pushConstantRangeCount=1, pPushConstantRanges=[vk.VkPushConstantRange(
        stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT, offset=0, size=8)]), None)
spec = vk.VkSpecializationInfo(mapEntryCount=1, pMapEntries=[vk.VkSpecializationMapEntry(constantID=0, offset=0, size=4)],
                               dataSize=4, pData=vk.ffi.new("uint32_t[1]", [11]))
stage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=module, pName="main",
                                           pSpecializationInfo=spec)
pipe = vk.vkCreateComputePipelines(dev, None, 1, [vk.VkComputePipelineCreateInfo(stage=stage, layout=pl)], None)[0]
pool = vk.vkCreateDescriptorPool(dev, vk.VkDescriptorPoolCreateInfo(maxSets=1, poolSizeCount=2, pPoolSizes=[
    vk.VkDescriptorPoolSize(type=t, descriptorCount=1) for t in kinds]), None)
dset = vk.vkAllocateDescriptorSets(dev, vk.VkDescriptorSetAllocateInfo(descriptorPool=pool, descriptorSetCount=1,
                                                                       pSetLayouts=[layout]))[0]
vk.vkUpdateDescriptorSets(dev, 2, [
    vk.VkWriteDescriptorSet(dstSet=dset, dstBinding=0, descriptorCount=1, descriptorType=kinds[0],
                            pBufferInfo=[vk.VkDescriptorBufferInfo(buffer=bufs[0], offset=0, range=N * 4)]),
    vk.VkWriteDescriptorSet(dstSet=dset, dstBinding=1, descriptorCount=1, descriptorType=kinds[1],
                            pBufferInfo=[vk.VkDescriptorBufferInfo(buffer=bufs[1], offset=0, range=N * 4)])], 0, None)
cpool = vk.vkCreateCommandPool(dev, vk.VkCommandPoolCreateInfo(queueFamilyIndex=0), None)
cb = vk.vkAllocateCommandBuffers(dev, vk.VkCommandBufferAllocateInfo(commandPool=cpool, level=0, commandBufferCount=1))[0]


def run(record):
    vk.vkBeginCommandBuffer(cb, vk.VkCommandBufferBeginInfo())
    vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipe)
    record()
    vk.vkEndCommandBuffer(cb)
    vk.vkQueueSubmit(queue, 1, [vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[cb])], None)
    vk.vkQueueWaitIdle(queue)


def indirect():
    vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, [dset], 1, [0])
    vk.vkCmdPushConstants(cb, pl, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, 8, vk.ffi.new("uint32_t[2]", [2, N]))
    vk.vkCmdDispatchIndirect(cb, bufs[2], 0)


def dynamic():
    vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, [dset], 1, [1024])
    vk.vkCmdPushConstants(cb, pl, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, 8, vk.ffi.new("uint32_t[2]", [5, N]))
    vk.vkCmdDispatch(cb, 2, 1, 1)


out = host[SIZE // 4: 2 * SIZE // 4]
run(indirect)
print("indirect:", out[:3].tolist(), out[N - 1], bool((out[:N] == np.arange(N) * 2 + 11).all()))
run(dynamic)
print("dynamic:", out[256:259].tolist(), bool((out[256:256 + N] == np.arange(N) * 5 + 11).all()),
      bool((out[:N] == np.arange(N) * 2 + 11).all()))
vk.vkDestroyDevice(dev, None)
vk.vkDestroyInstance(inst, None)
