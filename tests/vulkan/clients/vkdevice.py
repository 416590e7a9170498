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


def compute_pipeline(dev, code: bytes, kinds, immutable=None):
    """(set layout, pipeline layout, pipeline) of a shader's `main` whose set 0 has one descriptor
    of each of `kinds` at bindings 0, 1, ...; `immutable`: {binding: sampler} fixed in the layout."""
    # the sampler arrays are kept here: the vulkan package would free one made from a list once
    # its binding is copied into pBindings
    fixed = {i: vk.ffi.new("VkSampler[1]", [s]) for i, s in (immutable or {}).items()}
    module = vk.vkCreateShaderModule(dev, vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code), None)
    layout = vk.vkCreateDescriptorSetLayout(dev, vk.VkDescriptorSetLayoutCreateInfo(
        bindingCount=len(kinds), pBindings=[vk.VkDescriptorSetLayoutBinding(
            binding=i, descriptorType=t, descriptorCount=1, stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT,
            pImmutableSamplers=fixed.get(i, vk.ffi.NULL))
            for i, t in enumerate(kinds)]), None)
    pl = vk.vkCreatePipelineLayout(dev, vk.VkPipelineLayoutCreateInfo(setLayoutCount=1, pSetLayouts=[layout]), None)
    stage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=module, pName="main")
    pipe = vk.vkCreateComputePipelines(dev, None, 1, [vk.VkComputePipelineCreateInfo(stage=stage, layout=pl)], None)[0]
    return layout, pl, pipe
