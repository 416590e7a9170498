"""The device every client of this folder opens through the vulkan package: a Vulkan 1.3 instance,
the first physical device (emu's ICD, as the tests set VK_DRIVER_FILES), one queue of family 0.
`features`: a VkDeviceCreateInfo pNext chain (e.g. VkPhysicalDeviceVulkan13Features)."""
import vulkan as vk


def open_device(features=None):
    inst = vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=vk.VkApplicationInfo(
        apiVersion=vk.VK_MAKE_VERSION(1, 3, 0))), None)
    pd = vk.vkEnumeratePhysicalDevices(inst)[0]
    q = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=0, queueCount=1, pQueuePriorities=[1.0])
    info = vk.VkDeviceCreateInfo(queueCreateInfoCount=1, pQueueCreateInfos=[q]) if features is None else \
        vk.VkDeviceCreateInfo(pNext=features, queueCreateInfoCount=1, pQueueCreateInfos=[q])
    dev = vk.vkCreateDevice(pd, info, None)
    return inst, pd, dev, vk.vkGetDeviceQueue(dev, 0, 0)
