"""Run a SPIR-V compute shader on a real Vulkan device (the `vulkan` package: the Khronos API
through cffi; no WebGPU layer in the way), for `emu diff --backend vulkan`.

The device is the first discrete GPU, else the first device (lavapipe on a machine without a
GPU); EMU_VULKAN_DEVICE=TEXT picks the first whose name contains TEXT. Every feature the device
offers in VkPhysicalDeviceVulkan11/12/13Features (and cooperative matrices where
VK_KHR_cooperative_matrix is present) is enabled, so the shader's capabilities find them.
"""
from __future__ import annotations

import os
import threading

from .runner import HwError

_lock = threading.RLock()
_state: dict = {}


class VulkanUnavailable(HwError):
    pass


def _vk():
    try:
        import vulkan as vk
    except (ImportError, OSError) as e:
        raise VulkanUnavailable(f"vulkan: cannot load the Vulkan API ({type(e).__name__}: {e}); "
                                "pip install 'emu-gpu[vulkan]' and a Vulkan loader (libvulkan1), "
                                "plus a driver (mesa-vulkan-drivers gives lavapipe)") from None
    return vk


def _instance():
    with _lock:
        if "instance" in _state:
            return _state["instance"]
        vk = _vk()
        app = vk.VkApplicationInfo(sType=vk.VK_STRUCTURE_TYPE_APPLICATION_INFO, pApplicationName="emu",
                                   apiVersion=vk.VK_MAKE_VERSION(1, 3, 0))
        try:
            inst = vk.vkCreateInstance(vk.VkInstanceCreateInfo(
                sType=vk.VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, pApplicationInfo=app), None)
            devices = vk.vkEnumeratePhysicalDevices(inst)
        except Exception as e:
            raise VulkanUnavailable(f"vulkan: no Vulkan instance ({type(e).__name__}: {e})") from None
        if not devices:
            raise VulkanUnavailable("vulkan: no Vulkan device (install a driver; mesa-vulkan-drivers gives lavapipe)")
        want = os.environ.get("EMU_VULKAN_DEVICE", "")
        props = [vk.vkGetPhysicalDeviceProperties(d) for d in devices]
        names = [vk.ffi.string(p.deviceName).decode() if not isinstance(p.deviceName, str) else p.deviceName
                 for p in props]
        order = sorted(range(len(devices)),
                       key=lambda k: (want not in names[k], props[k].deviceType != vk.VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU))
        k = order[0]
        if want and want not in names[k]:
            raise VulkanUnavailable(f"vulkan: no device whose name contains {want!r} (there are: {', '.join(names)})")
        _state["instance"] = (inst, devices[k], props[k], names[k])
        return _state["instance"]


def device_info() -> dict:
    """The device as `emu diff` reports it (the keys the WebGPU adapters' reports use)."""
    vk = _vk()
    _, pd, p, name = _instance()
    sub = vk.VkPhysicalDeviceSubgroupProperties(sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES)
    p2 = vk.VkPhysicalDeviceProperties2(sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, pNext=sub)
    vk.vkGetPhysicalDeviceProperties2(pd, p2)
    drv = vk.VkPhysicalDeviceDriverProperties(sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES)
    vk.vkGetPhysicalDeviceProperties2(pd, vk.VkPhysicalDeviceProperties2(
        sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, pNext=drv))
    api = p.apiVersion
    kinds = {vk.VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: "DiscreteGPU", vk.VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
             "IntegratedGPU", vk.VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: "VirtualGPU",
             vk.VK_PHYSICAL_DEVICE_TYPE_CPU: "CPU"}
    return {"device": name, "vendor_id": p.vendorID, "device_id": p.deviceID, "backend_type": "Vulkan",
            "adapter_type": kinds.get(p.deviceType, "Other"),
            "vendor": vk.ffi.string(drv.driverName).decode(),
            "description": vk.ffi.string(drv.driverInfo).decode(),
            "api_version": f"{api >> 22}.{(api >> 12) & 0x3FF}.{api & 0xFFF}",
            "subgroup_min_size": sub.subgroupSize, "subgroup_max_size": sub.subgroupSize,
            "binding": "vulkan", "binding_version": getattr(vk, "__version__", "?"), "quirks": [],
            "extensions": sorted(_extensions())}


def _extensions() -> set:
    vk = _vk()
    _, pd, _, _ = _instance()
    return {vk.ffi.string(e.extensionName).decode() if not isinstance(e.extensionName, str) else e.extensionName
            for e in vk.vkEnumerateDeviceExtensionProperties(pd, None)}


# (extension, sType, number of VkBool32 flags) of the feature structures enabled where offered:
# VkPhysicalDeviceShaderBfloat16FeaturesKHR (bf16 type, dot product, cooperative matrices) and
# VkPhysicalDeviceCooperativeMatrix2FeaturesNV (workgroup scope, flexible dimensions, reductions,
# conversions, per-element operations, tensor addressing, block loads)
# and VkPhysicalDeviceCooperativeMatrixMaintenance1FeaturesEXT (properties2, reductions, conversions,
# per-element operations, coordinates)
RAW_FEATURES = (("VK_KHR_shader_bfloat16", 1000141000, 3), ("VK_NV_cooperative_matrix2", 1000593000, 7),
                ("VK_EXT_cooperative_matrix_maintenance1", 1000659000, 5))
# VkComponentTypeKHR -> the IR's scalar names (VK_COMPONENT_TYPE_BFLOAT16_KHR is 1000141000)
COMPONENTS = {0: "f16", 1: "f32", 2: "f64", 3: "i8", 4: "i16", 5: "i32", 6: "i64", 7: "u8", 8: "u16",
              9: "u32", 10: "u64", 1000141000: "bf16"}
SCOPES = {1: "device", 2: "workgroup", 3: "subgroup", 5: "queue_family"}


def matrix_configs() -> list[dict]:
    """The device's VK_KHR_cooperative_matrix configurations (vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)."""
    vk = _vk()
    inst, pd, _, _ = _instance()
    if "VK_KHR_cooperative_matrix" not in _extensions():
        return []
    name = b"vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"
    raw = vk.lib.vkGetInstanceProcAddr(inst, name)
    if raw == vk.ffi.NULL:
        return []
    fn = vk.ffi.cast("PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR", raw)
    count = vk.ffi.new("uint32_t*")
    fn(pd, count, vk.ffi.NULL)
    props = vk.ffi.new("VkCooperativeMatrixPropertiesKHR[]", count[0])
    for k in range(count[0]):
        props[k].sType = vk.VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR
    fn(pd, count, props)
    comp = lambda t: COMPONENTS.get(t, str(t))  # noqa: E731
    return [{"M": p.MSize, "N": p.NSize, "K": p.KSize, "A": comp(p.AType), "B": comp(p.BType), "C": comp(p.CType),
             "result": comp(p.ResultType), "saturating": bool(p.saturatingAccumulation),
             "scope": SCOPES.get(p.scope, str(p.scope))} for p in props[0:count[0]]]


def matrix_properties2(scope: int, invocations: int, subgroup_size: int, flags: int = 0) -> list[dict] | None:
    """vkGetPhysicalDeviceCooperativeMatrixProperties2EXT (VK_EXT_cooperative_matrix_maintenance1)
    for one VkPhysicalDeviceCooperativeMatrixInfo2EXT; None where the device lacks the extension.
    Its structures are newer than the vulkan package's headers: laid out here as words."""
    vk = _vk()
    inst, pd, _, _ = _instance()
    if "VK_EXT_cooperative_matrix_maintenance1" not in _extensions():
        return None
    raw = vk.lib.vkGetInstanceProcAddr(inst, b"vkGetPhysicalDeviceCooperativeMatrixProperties2EXT")
    if raw == vk.ffi.NULL:
        return None
    fn = vk.ffi.cast("VkResult (*)(VkPhysicalDevice, void *, uint32_t *, void *)", raw)
    info = vk.ffi.new("uint32_t[8]", [1000659001, 0, 0, 0, scope, invocations, subgroup_size, flags])
    count = vk.ffi.new("uint32_t*")
    fn(pd, info, count, vk.ffi.NULL)
    n = count[0]
    props = vk.ffi.new("uint32_t[]", 12 * max(n, 1))        # sType, (pad), pNext, 3 sizes, 4 types, (pad)
    for k in range(n):
        props[12 * k] = 1000659002
    fn(pd, info, count, props)
    comp = lambda t: COMPONENTS.get(t, str(t))  # noqa: E731
    return [{"M": props[12 * k + 4], "N": props[12 * k + 5], "K": props[12 * k + 6], "A": comp(props[12 * k + 7]),
             "B": comp(props[12 * k + 8]), "C": comp(props[12 * k + 9]), "result": comp(props[12 * k + 10])}
            for k in range(count[0])]


def available() -> tuple[dict | None, str]:
    try:
        info = device_info()
    except HwError as e:
        return None, str(e)
    except Exception as e:   # a loader or driver failing in a way not foreseen
        return None, f"vulkan: {type(e).__name__}: {e}"
    return info, f"vulkan: {info['device']} ({info['vendor']}, Vulkan {info['api_version']})"


def _device():
    with _lock:
        if "device" in _state:
            return _state["device"]
        vk = _vk()
        _, pd, _, _ = _instance()
        families = vk.vkGetPhysicalDeviceQueueFamilyProperties(pd)
        qf = next((k for k, f in enumerate(families) if f.queueFlags & vk.VK_QUEUE_COMPUTE_BIT), None)
        if qf is None:
            raise VulkanUnavailable("vulkan: the device has no compute queue")
        # every feature the device has, queried and handed back
        f13 = vk.VkPhysicalDeviceVulkan13Features(sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES)
        f12 = vk.VkPhysicalDeviceVulkan12Features(sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                                  pNext=f13)
        f11 = vk.VkPhysicalDeviceVulkan11Features(sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                                  pNext=f12)
        exts, tail = [], f13
        if "VK_KHR_cooperative_matrix" in _extensions():
            cm = vk.ffi.new("VkPhysicalDeviceCooperativeMatrixFeaturesKHR*")
            cm.sType = vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR
            tail.pNext, tail = cm, cm
            exts.append("VK_KHR_cooperative_matrix")
        raw = []         # feature structures newer than the vulkan package's headers, as words
        for ext, stype, flags in RAW_FEATURES:
            if ext in _extensions():
                words = vk.ffi.new("uint32_t[]", 4 + flags)     # sType, (pad), pNext, VkBool32 flags
                words[0] = stype
                if raw:
                    vk.ffi.cast("void **", vk.ffi.cast("char *", raw[-1]) + 8)[0] = vk.ffi.cast("void *", words)
                else:
                    tail.pNext = vk.ffi.cast("void *", words)
                raw.append(words)
                exts.append(ext)
        feats = vk.VkPhysicalDeviceFeatures2(sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, pNext=f11)
        vk.vkGetPhysicalDeviceFeatures2(pd, feats)
        queue = vk.VkDeviceQueueCreateInfo(sType=vk.VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                           queueFamilyIndex=qf, queueCount=1, pQueuePriorities=[1.0])
        dev = vk.vkCreateDevice(pd, vk.VkDeviceCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, pNext=feats, queueCreateInfoCount=1,
            pQueueCreateInfos=[queue], enabledExtensionCount=len(exts), ppEnabledExtensionNames=exts or None), None)
        q = vk.vkGetDeviceQueue(dev, qf, 0)
        _state["device"] = (dev, q, qf, (f11, f12, f13, feats, raw))
        return _state["device"]


def run_spirv(spirv: bytes, *, entry: str, dispatch, buffers: dict, kinds: dict, outputs,
              spec: list[tuple[int, bytes]] = (), push=None, images: dict | None = None,
              addressed: dict | None = None) -> dict:
    """Dispatch `spirv` once. `buffers` maps (set, binding) to initial bytes and `kinds` to
    'storage' or 'uniform'; `spec` lists (SpecId, value bytes); `images` maps (set, binding) to
    (kind, runner.HwTexture or None, sampler keywords or None) (vulkan_images.py); returns
    {key: final bytes} of `outputs` and of each storage image (level 0). `addressed` maps names
    to the sizes of buffers the shader reaches by device address; then `push` is a function of
    {name: address} giving (push-constant bytes, {name: initial bytes}), and each addressed
    buffer's final bytes come back under its name. Raises HwError."""
    vk = _vk()
    _check_capabilities(spirv)
    try:
        return _run(vk, spirv, entry, dispatch, buffers, kinds, outputs, spec, push, images or {}, addressed or {})
    except HwError:
        raise
    except Exception as e:
        raise HwError(f"vulkan: {type(e).__name__}: {e}") from None


# SPIR-V capabilities a device offers only with a device extension (a driver without it may
# compile the module anyway and crash: Mesa 25's lavapipe does so for cooperative matrices); NV2's
# reductions and per-element operations are maintenance1's too (one capability, renamed)
NV2, MAINT1 = "VK_NV_cooperative_matrix2", "VK_EXT_cooperative_matrix_maintenance1"
NEEDS_EXTENSION = {"CooperativeMatrixKHR": ("VK_KHR_cooperative_matrix",),
                   "BFloat16TypeKHR": ("VK_KHR_shader_bfloat16",),
                   "BFloat16CooperativeMatrixKHR": ("VK_KHR_shader_bfloat16",),
                   "CooperativeMatrixReductionsNV": (NV2, MAINT1),
                   "CooperativeMatrixConversionsNV": (NV2,),
                   "CooperativeMatrixPerElementOperationsNV": (NV2, MAINT1),
                   "CooperativeMatrixTensorAddressingNV": (NV2,),
                   "TensorAddressingNV": (NV2,),
                   "CooperativeMatrixConversionsEXT": (MAINT1,),
                   "CooperativeMatrixGetCoordinateEXT": (MAINT1,)}


def _check_capabilities(spirv: bytes):
    from ..frontend.spirv.grammar import decode, enum_names
    try:
        insts, _ = decode(spirv, "<module>")
    except Exception:
        return                      # the driver judges a module emu cannot read
    have = _extensions()
    _, _, _, name = _instance()
    for i in insts:
        if i.opname != "OpCapability":
            continue
        need = next((NEEDS_EXTENSION[n] for n in sorted(enum_names("Capability", i.ops[0])) if n in NEEDS_EXTENSION), ())
        if need and not set(need) & have:
            raise HwError(f"vulkan: {name} does not offer {' or '.join(need)}, which the shader's "
                          f"capability {i.ops[0]} needs")


def _run(vk, spirv, entry, dispatch, buffers, kinds, outputs, spec, push, images, addressed):
    from .vulkan_images import Images, buffer_address, host_buffer, read_host, write_host
    dev, queue, qf, _ = _device()
    pd = _instance()[1]
    made = []          # (destroy function, handle), destroyed in reverse order

    def keep(fn, h):
        made.append((fn, h))
        return h
    try:
        mems = {}
        for key, data in buffers.items():
            size = max(4, len(data) + (-len(data)) % 4)
            usage = vk.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT if kinds[key] == "uniform" \
                else vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
            buf, mem = host_buffer(vk, dev, pd, keep, size, usage, data)
            mems[key] = (buf, mem, size)
        by_address = {}
        for name, size in addressed.items():
            size = max(4, size + (-size) % 4)
            buf, mem = host_buffer(vk, dev, pd, keep, size, vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, addressed=True)
            by_address[name] = (buf, mem, size)
        if addressed:
            push, contents = push({n: buffer_address(vk, dev, b) for n, (b, _, _) in by_address.items()})
            for name, data in contents.items():
                write_host(vk, dev, by_address[name][1], data)
        imgs = Images(vk, dev, pd, keep, images)
        imgs.create()
        sets = sorted({k[0] for k in buffers} | {k[0] for k in images})
        layouts, pools = [], []
        for s in range(max(sets) + 1 if sets else 0):
            binds = [vk.VkDescriptorSetLayoutBinding(
                binding=b, descriptorType=_dtype(vk, kinds[(s, b)]), descriptorCount=1,
                stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT) for (ss, b) in sorted(buffers) if ss == s]
            binds += imgs.layout_bindings(s)
            layouts.append(keep(vk.vkDestroyDescriptorSetLayout, vk.vkCreateDescriptorSetLayout(
                dev, vk.VkDescriptorSetLayoutCreateInfo(
                    sType=vk.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                    bindingCount=len(binds), pBindings=binds or None), None)))
        ranges = [vk.VkPushConstantRange(stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT, offset=0,
                                         size=len(push))] if push else []
        playout = keep(vk.vkDestroyPipelineLayout, vk.vkCreatePipelineLayout(dev, vk.VkPipelineLayoutCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, setLayoutCount=len(layouts),
            pSetLayouts=layouts or None, pushConstantRangeCount=len(ranges), pPushConstantRanges=ranges or None), None))
        shader = keep(vk.vkDestroyShaderModule, vk.vkCreateShaderModule(dev, vk.VkShaderModuleCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, codeSize=len(spirv), pCode=spirv), None))
        spec_info = None
        if spec:
            entries, blob = [], b""
            for sid, raw in spec:
                entries.append(vk.VkSpecializationMapEntry(constantID=sid, offset=len(blob), size=len(raw)))
                blob += raw
            spec_info = vk.VkSpecializationInfo(mapEntryCount=len(entries), pMapEntries=entries,
                                                dataSize=len(blob), pData=vk.ffi.from_buffer(blob))
        stage = vk.VkPipelineShaderStageCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, stage=vk.VK_SHADER_STAGE_COMPUTE_BIT,
            module=shader, pName=entry, pSpecializationInfo=spec_info)
        pipe = vk.vkCreateComputePipelines(dev, None, 1, [vk.VkComputePipelineCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, stage=stage, layout=playout)], None)[0]
        keep(vk.vkDestroyPipeline, pipe)
        sizes = []
        for kind in ("storage", "uniform"):
            n = sum(1 for k in buffers if kinds[k] == kind)
            if n:
                sizes.append(vk.VkDescriptorPoolSize(type=_dtype(vk, kind), descriptorCount=n))
        sizes += imgs.pool_sizes()
        pool = keep(vk.vkDestroyDescriptorPool, vk.vkCreateDescriptorPool(dev, vk.VkDescriptorPoolCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, maxSets=max(1, len(layouts)),
            poolSizeCount=len(sizes), pPoolSizes=sizes or None), None)) if layouts else None
        pools.append(pool)
        dsets = vk.vkAllocateDescriptorSets(dev, vk.VkDescriptorSetAllocateInfo(
            sType=vk.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, descriptorPool=pool,
            descriptorSetCount=len(layouts), pSetLayouts=layouts)) if layouts else []
        writes = []
        for (s, b), (buf, _, size) in mems.items():
            writes.append(vk.VkWriteDescriptorSet(
                sType=vk.VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, dstSet=dsets[s], dstBinding=b, descriptorCount=1,
                descriptorType=_dtype(vk, kinds[(s, b)]),
                pBufferInfo=[vk.VkDescriptorBufferInfo(buffer=buf, offset=0, range=size)]))
        writes += imgs.writes(dsets)
        if writes:
            vk.vkUpdateDescriptorSets(dev, len(writes), writes, 0, None)
        cpool = keep(vk.vkDestroyCommandPool, vk.vkCreateCommandPool(dev, vk.VkCommandPoolCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, queueFamilyIndex=qf), None))
        cmd = vk.vkAllocateCommandBuffers(dev, vk.VkCommandBufferAllocateInfo(
            sType=vk.VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, commandPool=cpool,
            level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY, commandBufferCount=1))[0]
        vk.vkBeginCommandBuffer(cmd, vk.VkCommandBufferBeginInfo(
            sType=vk.VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
            flags=vk.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT))
        imgs.record_upload(cmd)
        vk.vkCmdBindPipeline(cmd, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipe)
        if dsets:
            vk.vkCmdBindDescriptorSets(cmd, vk.VK_PIPELINE_BIND_POINT_COMPUTE, playout, 0, len(dsets), dsets, 0, None)
        if push:
            vk.vkCmdPushConstants(cmd, playout, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, len(push),
                                  vk.ffi.from_buffer(push))
        vk.vkCmdDispatch(cmd, *dispatch)
        imgs.record_readback(cmd)
        vk.vkEndCommandBuffer(cmd)
        fence = keep(vk.vkDestroyFence, vk.vkCreateFence(dev, vk.VkFenceCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_FENCE_CREATE_INFO), None))
        vk.vkQueueSubmit(queue, 1, [vk.VkSubmitInfo(sType=vk.VK_STRUCTURE_TYPE_SUBMIT_INFO,
                                                    commandBufferCount=1, pCommandBuffers=[cmd])], fence)
        vk.vkWaitForFences(dev, 1, [fence], vk.VK_TRUE, 120 * 10 ** 9)
        out = {}
        for key in outputs:
            _, mem, size = mems[key]
            out[key] = read_host(vk, dev, mem, size, len(buffers[key]))
        for name, (_, mem, size) in by_address.items():
            out[name] = read_host(vk, dev, mem, size, addressed[name])
        out.update(imgs.read())
        return out
    finally:
        vk.vkDeviceWaitIdle(dev)
        for fn, h in reversed(made):
            fn(dev, h, None)


def _dtype(vk, kind: str):
    return vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER if kind == "uniform" else vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
