"""vkCmdDispatchBase and vkCmdDispatchBaseKHR through the vulkan package (run by
tests/vulkan/test_commands.py with emu's ICD): dispatch_base.spv (argv[1]) writes each
invocation's WorkgroupId, GlobalInvocationId and NumWorkgroups at its global position; the host
computes what every position must hold (a sentinel where no invocation ran) and prints whether
the device's bytes are exactly that; then a pipeline made without VK_PIPELINE_CREATE_DISPATCH_BASE_BIT
is given a nonzero base (one message, the submission goes on without it)."""
import sys

import numpy as np
import vulkan as vk

code = open(sys.argv[1], "rb").read()
inst = vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=vk.VkApplicationInfo(
    apiVersion=vk.VK_MAKE_VERSION(1, 3, 0))), None)
pd = vk.vkEnumeratePhysicalDevices(inst)[0]
exts = [e.extensionName for e in vk.vkEnumerateDeviceExtensionProperties(pd, None)]
print("VK_KHR_device_group:", "VK_KHR_device_group" in exts)
dev = vk.vkCreateDevice(pd, vk.VkDeviceCreateInfo(
    queueCreateInfoCount=1, pQueueCreateInfos=[vk.VkDeviceQueueCreateInfo(queueFamilyIndex=0, queueCount=1,
                                                                          pQueuePriorities=[1.0])],
    enabledExtensionCount=1, ppEnabledExtensionNames=["VK_KHR_device_group"]), None)
queue = vk.vkGetDeviceQueue(dev, 0, 0)

DISPATCH_BASE_BIT = 0x10      # VK_PIPELINE_CREATE_DISPATCH_BASE_BIT (the vulkan package has it as None)
LOCAL = (4, 2, 1)
W, H, D = 6 * 4, 4 * 2, 3                        # the invocations of 6 x 4 x 3 workgroups
SIZE = W * H * D * 16
mem = vk.vkAllocateMemory(dev, vk.VkMemoryAllocateInfo(allocationSize=SIZE, memoryTypeIndex=0), None)
buf = vk.vkCreateBuffer(dev, vk.VkBufferCreateInfo(size=SIZE, usage=vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT), None)
vk.vkBindBufferMemory(dev, buf, mem, 0)
host = np.frombuffer(vk.vkMapMemory(dev, mem, 0, SIZE, 0), np.uint32).reshape(D, H, W, 4)

module = vk.vkCreateShaderModule(dev, vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code), None)
kind = vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
layout = vk.vkCreateDescriptorSetLayout(dev, vk.VkDescriptorSetLayoutCreateInfo(bindingCount=1, pBindings=[
    vk.VkDescriptorSetLayoutBinding(binding=0, descriptorType=kind, descriptorCount=1,
                                    stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT)]), None)
pl = vk.vkCreatePipelineLayout(dev, vk.VkPipelineLayoutCreateInfo(setLayoutCount=1, pSetLayouts=[layout],
    pushConstantRangeCount=1, pPushConstantRanges=[vk.VkPushConstantRange(
        stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT, offset=0, size=8)]), None)
stage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=module, pName="main")
with_base, without = vk.vkCreateComputePipelines(dev, None, 2, [
    vk.VkComputePipelineCreateInfo(flags=DISPATCH_BASE_BIT, stage=stage, layout=pl),
    vk.VkComputePipelineCreateInfo(stage=stage, layout=pl)], None)
pool = vk.vkCreateDescriptorPool(dev, vk.VkDescriptorPoolCreateInfo(maxSets=1, poolSizeCount=1, pPoolSizes=[
    vk.VkDescriptorPoolSize(type=kind, descriptorCount=1)]), None)
dset = vk.vkAllocateDescriptorSets(dev, vk.VkDescriptorSetAllocateInfo(descriptorPool=pool, descriptorSetCount=1,
                                                                       pSetLayouts=[layout]))[0]
vk.vkUpdateDescriptorSets(dev, 1, [vk.VkWriteDescriptorSet(
    dstSet=dset, dstBinding=0, descriptorCount=1, descriptorType=kind,
    pBufferInfo=[vk.VkDescriptorBufferInfo(buffer=buf, offset=0, range=SIZE)])], 0, None)
cpool = vk.vkCreateCommandPool(dev, vk.VkCommandPoolCreateInfo(queueFamilyIndex=0), None)
cb = vk.vkAllocateCommandBuffers(dev, vk.VkCommandBufferAllocateInfo(commandPool=cpool, level=0, commandBufferCount=1))[0]


def run(pipe, dispatch, base, count):
    host[...] = 0xFFFFFFFF
    vk.vkBeginCommandBuffer(cb, vk.VkCommandBufferBeginInfo())
    vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipe)
    vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, [dset], 0, None)
    vk.vkCmdPushConstants(cb, pl, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, 8, vk.ffi.new("uint32_t[2]", [W, H]))
    dispatch(cb, *base, *count)
    vk.vkEndCommandBuffer(cb)
    vk.vkQueueSubmit(queue, 1, [vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[cb])], None)
    vk.vkQueueWaitIdle(queue)


def expected(base, count):
    want = np.full((D, H, W, 4), 0xFFFFFFFF, np.uint32)
    pack = lambda v: v[0] | (v[1] << 8) | (v[2] << 16)
    for wz in range(base[2], base[2] + count[2]):
        for wy in range(base[1], base[1] + count[1]):
            for wx in range(base[0], base[0] + count[0]):
                for lz in range(LOCAL[2]):
                    for ly in range(LOCAL[1]):
                        for lx in range(LOCAL[0]):
                            g = (wx * LOCAL[0] + lx, wy * LOCAL[1] + ly, wz * LOCAL[2] + lz)
                            want[g[2], g[1], g[0]] = (pack((wx, wy, wz)), pack(g), pack(count),
                                                      lx + LOCAL[0] * (ly + LOCAL[1] * lz))
    return want


khr = vk.vkGetDeviceProcAddr(dev, "vkCmdDispatchBaseKHR")
for name, fn, base, count in (("vkCmdDispatchBase", vk.vkCmdDispatchBase, (2, 1, 1), (3, 2, 2)),
                              ("vkCmdDispatchBaseKHR", khr, (5, 3, 2), (1, 1, 1)),
                              ("vkCmdDispatchBase zero base", vk.vkCmdDispatchBase, (0, 0, 0), (6, 4, 3))):
    run(with_base, fn, base, count)
    ran = int((host[..., 3] != 0xFFFFFFFF).sum())
    print(f"{name} {base} {count}: {ran} invocations, exact: {bool((host == expected(base, count)).all())}")
run(without, vk.vkCmdDispatchBase, (1, 0, 0), (1, 1, 1))      # a void command: one message, not recorded
print("without the flag:", int((host[..., 3] != 0xFFFFFFFF).sum()), "invocations")
vk.vkDestroyDevice(dev, None)
vk.vkDestroyInstance(inst, None)
print("done")
