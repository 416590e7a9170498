"""Transfers and synchronisation through the vulkan package (run by tests/vulkan/test_commands.py
with emu's ICD as the device): copy, update and fill (in a secondary command buffer), events,
timestamps, vkQueueSubmit2 signalling a timeline semaphore, a fence; prints what it sees."""
import struct, numpy as np, vulkan as vk
from vkdevice import open_device
f12 = vk.VkPhysicalDeviceVulkan12Features(timelineSemaphore=vk.VK_TRUE)
f13 = vk.VkPhysicalDeviceVulkan13Features(synchronization2=vk.VK_TRUE, pNext=f12)
inst, pd, dev, queue = open_device(f13)
N = 256
mem = vk.vkAllocateMemory(dev, vk.VkMemoryAllocateInfo(allocationSize=4 * 4096, memoryTypeIndex=0), None)
bufs = []
for k in range(3):
    b = vk.vkCreateBuffer(dev, vk.VkBufferCreateInfo(size=N * 4, usage=vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT | vk.VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT), None)
    vk.vkBindBufferMemory(dev, b, mem, k * 4096)
    bufs.append(b)
ptr = vk.vkMapMemory(dev, mem, 0, 4 * 4096, 0)
host = np.frombuffer(ptr, np.uint32)
host[:N] = np.arange(N)
pool = vk.vkCreateCommandPool(dev, vk.VkCommandPoolCreateInfo(queueFamilyIndex=0), None)
cb, sec = vk.vkAllocateCommandBuffers(dev, vk.VkCommandBufferAllocateInfo(commandPool=pool, level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY, commandBufferCount=2))
qp = vk.vkCreateQueryPool(dev, vk.VkQueryPoolCreateInfo(queryType=vk.VK_QUERY_TYPE_TIMESTAMP, queryCount=2), None)
ev = vk.vkCreateEvent(dev, vk.VkEventCreateInfo(), None)
# secondary: fill buffer 2 with 0xABCD
vk.vkBeginCommandBuffer(sec, vk.VkCommandBufferBeginInfo())
vk.vkCmdFillBuffer(sec, bufs[2], 16, 64, 0xABCD)
vk.vkEndCommandBuffer(sec)
vk.vkBeginCommandBuffer(cb, vk.VkCommandBufferBeginInfo())
vk.vkCmdResetQueryPool(cb, qp, 0, 2)
vk.vkCmdWriteTimestamp(cb, vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, 0)
vk.vkCmdCopyBuffer(cb, bufs[0], bufs[1], 1, [vk.VkBufferCopy(srcOffset=8, dstOffset=0, size=40)])
vk.vkCmdUpdateBuffer(cb, bufs[1], 64, 8, vk.ffi.new("uint32_t[2]", [7, 9]))
vk.vkCmdExecuteCommands(cb, 1, [sec])
vk.vkCmdSetEvent(cb, ev, vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT)
vk.vkCmdWriteTimestamp(cb, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 1)
vk.vkEndCommandBuffer(cb)
tl = vk.vkCreateSemaphore(dev, vk.VkSemaphoreCreateInfo(pNext=vk.VkSemaphoreTypeCreateInfo(semaphoreType=vk.VK_SEMAPHORE_TYPE_TIMELINE, initialValue=1)), None)
fence = vk.vkCreateFence(dev, vk.VkFenceCreateInfo(), None)
def status(fn, *a):
    try:
        return fn(*a)
    except Exception as e:
        return type(e).__name__
print("event before:", status(vk.vkGetEventStatus, dev, ev))
submit = vk.VkSubmitInfo2(commandBufferInfoCount=1, pCommandBufferInfos=[vk.VkCommandBufferSubmitInfo(commandBuffer=cb)],
                          signalSemaphoreInfoCount=1, pSignalSemaphoreInfos=[vk.VkSemaphoreSubmitInfo(semaphore=tl, value=5)])
vk.vkQueueSubmit2(queue, 1, [submit], fence)
vk.vkWaitForFences(dev, 1, [fence], vk.VK_TRUE, 10**9)
print("event after:", status(vk.vkGetEventStatus, dev, ev))
print("timeline:", vk.vkGetSemaphoreCounterValue(dev, tl))
b1 = host[1024:1024 + N]; b2 = host[2048:2048 + N]
print("copy:", b1[:10].tolist(), "update:", b1[16:18].tolist())
print("fill:", b2[3:5].tolist(), b2[4:20].tolist() == [0xABCD] * 16, b2[20])
ts = vk.ffi.new("uint64_t[4]")
r = vk.vkGetQueryPoolResults(dev, qp, 0, 2, 32, ts, 16, vk.VK_QUERY_RESULT_64_BIT | vk.VK_QUERY_RESULT_WITH_AVAILABILITY_BIT)
print("timestamps ordered:", ts[2] >= ts[0] > 0, "available:", ts[1], ts[3])
vk.vkDestroyDevice(dev, None)
vk.vkDestroyInstance(inst, None)
print("done")
