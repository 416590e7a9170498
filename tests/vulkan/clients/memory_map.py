"""Mapped pointers through the vulkan package (run by tests/vulkan/test_commands.py with emu's ICD as
the device): allocations of many sizes, each mapped from offset 0 and one from an offset; prints the
reported minMemoryMapAlignment and each pointer's remainder modulo it."""
import vulkan as vk
from vkdevice import open_device
inst, pd, dev, queue = open_device()
align = vk.vkGetPhysicalDeviceProperties(pd).limits.minMemoryMapAlignment
print("minMemoryMapAlignment:", align)
rems, mems = [], []
for size in (1, 3, 16, 17, 100, 4096, 65537, 1 << 20):
    mem = vk.vkAllocateMemory(dev, vk.VkMemoryAllocateInfo(allocationSize=size, memoryTypeIndex=0), None)
    mems.append(mem)
    ptr = vk.vkMapMemory(dev, mem, 0, size, 0)
    rems.append(int(vk.ffi.cast("uintptr_t", vk.ffi.from_buffer(ptr))) % align)
print("remainders:", rems)
vk.vkUnmapMemory(dev, mems[-1])
ptr = vk.vkMapMemory(dev, mems[-1], 100, (1 << 20) - 100, 0)
print("offset 100:", int(vk.ffi.cast("uintptr_t", vk.ffi.from_buffer(ptr))) % align)
for mem in mems:
    vk.vkFreeMemory(dev, mem, None)
vk.vkDestroyDevice(dev, None)
vk.vkDestroyInstance(inst, None)
print("done")
