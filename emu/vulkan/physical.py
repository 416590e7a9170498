"""The instance and the physical device: what a profile's GPU reports, limited to what emu runs.

A feature is reported only where emu's SPIR-V front end accepts the capability that uses it
(FEATURE_CAPABILITIES) and the profile's device has it; a device extension only where the profile's
device reports it (profile.vulkan.extensions, measured) or, for a profile without that record,
where emu runs it; the properties come from the profile (vendor and device ID, subgroup sizes,
cooperative-matrix configurations, compute limits)."""
from __future__ import annotations

import os

from .icd import VK, Dispatchable, VkError, chain, command, ffi, fill_array, get, put_string  # noqa: F401
from . import icd
from . import vk_registry as reg
from ..version import __version__

API_VERSION = (1 << 22) | (3 << 12) | reg.HEADER_VERSION     # 1.3, the registry's header version as the patch
DEFAULT_PROFILE = "nvidia-h200"

# VkPhysicalDevice*Features member -> the SPIR-V capability that uses it (emu runs the feature
# iff its front end accepts the capability)
FEATURE_CAPABILITIES = {
    "shaderInt16": "Int16", "shaderInt64": "Int64", "shaderFloat64": "Float64", "shaderFloat16": "Float16",
    "shaderInt8": "Int8", "storageBuffer16BitAccess": "StorageBuffer16BitAccess",
    "uniformAndStorageBuffer16BitAccess": "UniformAndStorageBuffer16BitAccess",
    "storagePushConstant16": "StoragePushConstant16", "storageBuffer8BitAccess": "StorageBuffer8BitAccess",
    "uniformAndStorageBuffer8BitAccess": "UniformAndStorageBuffer8BitAccess",
    "storagePushConstant8": "StoragePushConstant8", "vulkanMemoryModel": "VulkanMemoryModel",
    "vulkanMemoryModelDeviceScope": "VulkanMemoryModelDeviceScope", "shaderBufferInt64Atomics": "Int64Atomics",
    "cooperativeMatrix": "CooperativeMatrixKHR", "shaderBFloat16Type": "BFloat16TypeKHR",
    "shaderBFloat16CooperativeMatrix": "BFloat16CooperativeMatrixKHR", "shaderBFloat16DotProduct": "BFloat16DotProductKHR",
    "cooperativeMatrixReductions": "CooperativeMatrixReductionsNV",
    "cooperativeMatrixConversions": "CooperativeMatrixConversionsNV",
    "cooperativeMatrixPerElementOperations": "CooperativeMatrixPerElementOperationsNV",
    "cooperativeMatrixTensorAddressing": "CooperativeMatrixTensorAddressingNV",
    "cooperativeMatrixBlockLoads": "CooperativeMatrixBlockLoadsNV",
    "bufferDeviceAddress": "PhysicalStorageBufferAddresses", "shaderIntegerDotProduct": "DotProduct",
    "shaderFloat8": "Float8EXT", "shaderFloat8CooperativeMatrix": "Float8CooperativeMatrixEXT",
    "shaderSubgroupRotate": "GroupNonUniformRotateKHR", "shaderSubgroupRotateClustered": "GroupNonUniformRotateKHR",
    "shaderFloatControls2": "FloatControls2", "shaderExpectAssume": "ExpectAssumeKHR",
    "shaderStorageImageExtendedFormats": "StorageImageExtendedFormats", "imageCubeArray": "ImageCubeArray",
    "shaderStorageImageReadWithoutFormat": "StorageImageReadWithoutFormat",
    "shaderStorageImageWriteWithoutFormat": "StorageImageWriteWithoutFormat",
    "shaderImageGatherExtended": "ImageGatherExtended",
}
# features emu has without a capability of their own (API behaviour, not shader code)
API_FEATURES = {"robustBufferAccess", "timelineSemaphore", "synchronization2", "maintenance4", "maintenance5",
                "subgroupSizeControl", "computeFullSubgroups", "hostQueryReset", "uniformBufferStandardLayout",
                "shaderSubgroupExtendedTypes", "pipelineRobustness", "pipelineCreationCacheControl",
                "subgroupBroadcastDynamicId", "scalarBlockLayout", "shaderStorageBufferArrayDynamicIndexing",
                "shaderUniformBufferArrayDynamicIndexing", "shaderSubgroupUniformControlFlow",
                "cooperativeMatrixWorkgroupScope", "cooperativeMatrixFlexibleDimensions",
                "robustImageAccess"}       # out-of-bounds image loads give the zero texel, stores are dropped
# device extension -> the feature that makes it worth reporting (None: nothing beyond the API)
EXTENSION_FEATURE = {
    "VK_KHR_cooperative_matrix": "cooperativeMatrix", "VK_NV_cooperative_matrix2": "cooperativeMatrixFlexibleDimensions",
    "VK_KHR_shader_bfloat16": "shaderBFloat16Type", "VK_EXT_shader_float8": "shaderFloat8",
    "VK_EXT_pipeline_robustness": "pipelineRobustness", "VK_KHR_shader_subgroup_rotate": "shaderSubgroupRotate",
    "VK_KHR_shader_float_controls2": "shaderFloatControls2", "VK_KHR_maintenance5": "maintenance5",
    "VK_KHR_shader_expect_assume": "shaderExpectAssume", "VK_KHR_shader_integer_dot_product": "shaderIntegerDotProduct",
    "VK_EXT_subgroup_size_control": "subgroupSizeControl", "VK_KHR_shader_subgroup_extended_types": None,
    "VK_KHR_16bit_storage": "storageBuffer16BitAccess", "VK_KHR_8bit_storage": "storageBuffer8BitAccess",
    "VK_KHR_shader_float16_int8": "shaderFloat16", "VK_KHR_vulkan_memory_model": "vulkanMemoryModel",
    "VK_KHR_timeline_semaphore": "timelineSemaphore", "VK_KHR_buffer_device_address": "bufferDeviceAddress",
    "VK_KHR_maintenance4": "maintenance4", "VK_KHR_synchronization2": "synchronization2",
    "VK_KHR_storage_buffer_storage_class": None, "VK_KHR_driver_properties": None, "VK_EXT_host_query_reset": None,
    "VK_KHR_uniform_buffer_standard_layout": None, "VK_KHR_shader_subgroup_uniform_control_flow": None,
    "VK_EXT_memory_budget": None, "VK_KHR_device_group": None,
}
# VkSubgroupFeatureFlagBits -> the capability of those operations
SUBGROUP_OPERATIONS = {
    "VK_SUBGROUP_FEATURE_BASIC_BIT": "GroupNonUniform", "VK_SUBGROUP_FEATURE_VOTE_BIT": "GroupNonUniformVote",
    "VK_SUBGROUP_FEATURE_ARITHMETIC_BIT": "GroupNonUniformArithmetic",
    "VK_SUBGROUP_FEATURE_BALLOT_BIT": "GroupNonUniformBallot", "VK_SUBGROUP_FEATURE_SHUFFLE_BIT": "GroupNonUniformShuffle",
    "VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT": "GroupNonUniformShuffleRelative",
    "VK_SUBGROUP_FEATURE_CLUSTERED_BIT": "GroupNonUniformClustered", "VK_SUBGROUP_FEATURE_QUAD_BIT": "GroupNonUniformQuad",
    "VK_SUBGROUP_FEATURE_ROTATE_BIT": "GroupNonUniformRotateKHR",
}
COMPONENT = {"f16": "VK_COMPONENT_TYPE_FLOAT16_KHR", "f32": "VK_COMPONENT_TYPE_FLOAT32_KHR",
             "f64": "VK_COMPONENT_TYPE_FLOAT64_KHR", "i8": "VK_COMPONENT_TYPE_SINT8_KHR", "i16": "VK_COMPONENT_TYPE_SINT16_KHR",
             "i32": "VK_COMPONENT_TYPE_SINT32_KHR", "i64": "VK_COMPONENT_TYPE_SINT64_KHR", "u8": "VK_COMPONENT_TYPE_UINT8_KHR",
             "u16": "VK_COMPONENT_TYPE_UINT16_KHR", "u32": "VK_COMPONENT_TYPE_UINT32_KHR",
             "u64": "VK_COMPONENT_TYPE_UINT64_KHR", "bf16": "VK_COMPONENT_TYPE_BFLOAT16_KHR",
             "e4m3": "VK_COMPONENT_TYPE_FLOAT8_E4M3_EXT", "e5m2": "VK_COMPONENT_TYPE_FLOAT8_E5M2_EXT"}
MEMORY_FLAGS = ("VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT", "VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT",
                "VK_MEMORY_PROPERTY_HOST_COHERENT_BIT", "VK_MEMORY_PROPERTY_HOST_CACHED_BIT")


class Instance(Dispatchable):
    c_type = "VkInstance"

    def __init__(self, api_version):
        self.api_version = api_version
        self._make_handle()
        self.physical = PhysicalDevice(self)


class PhysicalDevice(Dispatchable):
    c_type = "VkPhysicalDevice"

    def __init__(self, instance):
        from ..profiles import load_profile
        self.instance = instance
        self.profile_name = os.environ.get("EMU_PROFILE") or DEFAULT_PROFILE
        self.profile = vulkan_profile(load_profile(self.profile_name))
        self.features = device_features(self.profile)
        self.extensions = device_extensions(self.profile, self.features)
        self._make_handle()


# VkPhysicalDeviceLimits member recorded on the real device -> the limit emu's executor checks
# (WebGPU's name): the GPU's Vulkan driver allows more than the profile's WebGPU limits (48 KiB of
# workgroup memory on Hopper, not 32), and a shader the device accepts must run
EXECUTOR_LIMITS = {"maxComputeSharedMemorySize": "max-compute-workgroup-storage-size",
                   "maxComputeWorkGroupInvocations": "max-compute-invocations-per-workgroup"}
# recorded limits reported as they are (emu honours any value of them)
REPORTED_LIMITS = ("maxPushConstantsSize", "minStorageBufferOffsetAlignment", "minUniformBufferOffsetAlignment")
# what the device reports and what vkAllocateMemory gives every allocation's first byte (the H100's
# driver reports 64 too): programs count on it, e.g. ggml wraps a mapped pointer as a CPU buffer and
# asserts that it is 32-byte aligned
MIN_MEMORY_MAP_ALIGNMENT = 64


def vulkan_profile(profile):
    """The profile with its Vulkan device's recorded compute limits (profile.vulkan.limits) as the
    limits the executor checks, so that what the ICD reports is what it runs."""
    import dataclasses
    from types import MappingProxyType
    rec = profile.vulkan.get("limits", {})
    lim = dict(profile.limits)
    for vk_name, name in EXECUTOR_LIMITS.items():
        if vk_name in rec:
            lim[name] = rec[vk_name]
    for axis, n in zip("xyz", rec.get("maxComputeWorkGroupSize", ())):
        lim[f"max-compute-workgroup-size-{axis}"] = n
    if lim == dict(profile.limits):
        return profile
    return dataclasses.replace(profile, limits=MappingProxyType(lim), _cache={})


def _capabilities() -> set:
    from ..frontend.capabilities import SPIRV_CAPABILITIES, SPIRV_IMAGE_CAPABILITIES
    # the image instructions' (texel buffers are accepted as capabilities but refused at their type)
    return set(SPIRV_CAPABILITIES) | (SPIRV_IMAGE_CAPABILITIES - {"SampledBuffer", "ImageBuffer"})


def device_features(profile) -> set:
    caps = _capabilities()
    on = {f for f, cap in FEATURE_CAPABILITIES.items() if cap in caps} | set(API_FEATURES)
    if not profile.shader_float64:
        on.discard("shaderFloat64")
    if not profile.buffer_int64_atomics:
        on.discard("shaderBufferInt64Atomics")
    if not profile.configs:
        on -= {"cooperativeMatrix", "shaderBFloat16CooperativeMatrix"}
    if not any(c.a_type == "bf16" for c in profile.configs):
        on.discard("shaderBFloat16CooperativeMatrix")
    if not profile.flexible_nv:
        on -= {f for f in on if f.startswith("cooperativeMatrix") and f != "cooperativeMatrix"}
    elif not any(f["scope"] == "workgroup" for f in profile.flexible_nv):
        on.discard("cooperativeMatrixWorkgroupScope")
    return on


def device_extensions(profile, features: set) -> dict:
    """{name: spec version} of the device extensions reported."""
    recorded = dict(profile.vulkan.get("extensions", {}))
    out = {}
    for name, feature in EXTENSION_FEATURE.items():
        if feature is not None and feature not in features:
            continue
        version, kind = reg.EXTENSIONS[name]
        if recorded and name not in recorded and not _promoted(name):
            continue            # the profile's GPU does not report it
        out[name] = version if name not in recorded else min(version, recorded[name])
    return out


def _promoted(name: str) -> bool:
    """Extensions promoted to Vulkan 1.1-1.3: a 1.3 driver reports them all (their features are core)."""
    return name in {"VK_KHR_16bit_storage", "VK_KHR_8bit_storage", "VK_KHR_shader_float16_int8",
                    "VK_KHR_vulkan_memory_model", "VK_KHR_timeline_semaphore", "VK_KHR_buffer_device_address",
                    "VK_KHR_maintenance4", "VK_KHR_synchronization2", "VK_KHR_storage_buffer_storage_class",
                    "VK_KHR_driver_properties", "VK_EXT_host_query_reset", "VK_KHR_uniform_buffer_standard_layout",
                    "VK_EXT_subgroup_size_control", "VK_KHR_shader_integer_dot_product",
                    "VK_KHR_shader_subgroup_extended_types", "VK_EXT_memory_budget", "VK_KHR_device_group"}


# ------------------------------------------------------------------ instance
@command
def vkEnumerateInstanceVersion(p_version):
    p_version[0] = API_VERSION


INSTANCE_EXTENSIONS = {"VK_KHR_get_physical_device_properties2": 2, "VK_KHR_portability_enumeration": 1}


def _write_extension(out, item):
    put_string(out.extensionName, item[0])
    out.specVersion = item[1]


@command
def vkEnumerateInstanceExtensionProperties(p_layer, p_count, p_props):
    if p_layer != ffi.NULL:
        raise VkError(f"emu has no layer {ffi.string(p_layer).decode()!r}", "VK_ERROR_LAYER_NOT_PRESENT")
    return fill_array(p_count, p_props, sorted(INSTANCE_EXTENSIONS.items()), _write_extension)


@command
def vkCreateInstance(p_info, p_alloc, p_instance):
    info = p_info[0]
    for i in range(info.enabledExtensionCount):
        name = ffi.string(info.ppEnabledExtensionNames[i]).decode()
        if name not in INSTANCE_EXTENSIONS:
            raise VkError(f"instance extension {name!r} is not supported (emu has "
                          f"{', '.join(INSTANCE_EXTENSIONS)})", "VK_ERROR_EXTENSION_NOT_PRESENT",
                          "VUID-vkCreateInstance-ppEnabledExtensionNames-01388")
    app = info.pApplicationInfo
    api = app.apiVersion if app != ffi.NULL and app.apiVersion else (1 << 22)
    inst = Instance(api)
    p_instance[0] = inst.handle


@command
def vkDestroyInstance(instance, p_alloc):
    if instance == ffi.NULL:
        return
    inst = get(instance, Instance, "vkDestroyInstance", "instance")
    inst.physical.forget()
    inst.forget()
    for fn in icd.ON_DESTROY_INSTANCE:
        fn()


@command
def vkEnumeratePhysicalDevices(instance, p_count, p_devices):
    inst = get(instance, Instance, "vkEnumeratePhysicalDevices", "instance")
    return fill_array(p_count, p_devices, [inst.physical], lambda _o, _d: None) if p_devices == ffi.NULL else \
        _fill_handles(p_count, p_devices, [inst.physical])


def _fill_handles(p_count, p_out, objs):
    n = min(p_count[0], len(objs))
    for i in range(n):
        p_out[i] = objs[i].handle
    p_count[0] = n
    return VK["VK_INCOMPLETE"] if n < len(objs) else None


def _pd(physical, call):
    return get(physical, PhysicalDevice, call, "physicalDevice")


@command
def vkEnumerateDeviceExtensionProperties(physical, p_layer, p_count, p_props):
    pd = _pd(physical, "vkEnumerateDeviceExtensionProperties")
    if p_layer != ffi.NULL:
        raise VkError(f"emu has no layer {ffi.string(p_layer).decode()!r}", "VK_ERROR_LAYER_NOT_PRESENT")
    return fill_array(p_count, p_props, sorted(pd.extensions.items()), _write_extension)


@command
def vkGetPhysicalDeviceToolProperties(physical, p_count, p_tools):
    _pd(physical, "vkGetPhysicalDeviceToolProperties")
    p_count[0] = 0


# ------------------------------------------------------------------ features
def _set_features(struct, name: str, on: set) -> None:
    for field, _ in ffi.typeof(struct).item.fields:
        if field in ("sType", "pNext"):
            continue
        setattr(struct, field, 1 if field in on else 0)


@command
def vkGetPhysicalDeviceFeatures(physical, p_features):
    pd = _pd(physical, "vkGetPhysicalDeviceFeatures")
    _set_features(p_features, "VkPhysicalDeviceFeatures", pd.features)


@command
def vkGetPhysicalDeviceFeatures2(physical, p_features):
    pd = _pd(physical, "vkGetPhysicalDeviceFeatures2")
    _set_features(ffi.addressof(p_features.features), "VkPhysicalDeviceFeatures", pd.features)
    for name, s in chain(p_features.pNext):
        if name.endswith("Features") or name.endswith("FeaturesKHR") or name.endswith("FeaturesNV") \
                or name.endswith("FeaturesEXT"):
            _set_features(s, name, pd.features)


# ------------------------------------------------------------------ properties
def _version_number(text: str) -> int:
    major, minor, patch = (int(x) for x in (text.split(".") + ["0", "0"])[:3])
    return (major << 22) | (minor << 12) | patch


def device_name(pd) -> str:
    gpu = pd.profile.vulkan.get("device_name")
    return f"emu {__version__} ({pd.profile.name}" + (f": {gpu}" if gpu else "") + ")"


def _subgroup_ops() -> int:
    caps = _capabilities()
    return sum(VK[bit] for bit, cap in SUBGROUP_OPERATIONS.items() if cap in caps)


def _uuid(text: str) -> bytes:
    import hashlib
    return hashlib.sha256(text.encode()).digest()[:16]


def _fill_properties(pd, p) -> None:
    """VkPhysicalDeviceProperties, made once per physical device (every field, the ones emu does
    not set zero) and copied at each query (ggml asks 66 times at its start: ~5 ms made anew)."""
    made = getattr(pd, "_properties", None)
    if made is None:
        fresh = ffi.new("VkPhysicalDeviceProperties *")
        _write_properties(pd, fresh)
        made = pd._properties = bytes(ffi.buffer(fresh))
    ffi.memmove(p, made, len(made))


def _write_properties(pd, p) -> None:
    prof = pd.profile
    p.apiVersion = API_VERSION
    p.driverVersion = _version_number(__version__)
    p.vendorID = prof.adapter.vendor_id or 0            # a profile of no real GPU (reference): no vendor
    p.deviceID = prof.vulkan.get("device_id", 0)
    p.deviceType = VK["VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU"]
    put_string(p.deviceName, device_name(pd))
    ffi.memmove(p.pipelineCacheUUID, _uuid(f"emu {__version__} {prof.name} cache"), 16)
    L, lim = p.limits, prof.limits
    wg = lim["max-compute-workgroups-per-dimension"]
    values = dict(
        maxTexelBufferElements=0, maxUniformBufferRange=65536,
        maxStorageBufferRange=0xFFFFFFFF, maxPushConstantsSize=256, maxMemoryAllocationCount=4096,
        maxSamplerAllocationCount=4000, bufferImageGranularity=1024, sparseAddressSpaceSize=0,
        maxBoundDescriptorSets=32, maxPerStageDescriptorSamplers=1048576, maxPerStageDescriptorUniformBuffers=200,
        maxPerStageDescriptorStorageBuffers=1048576, maxPerStageDescriptorSampledImages=1048576,
        maxPerStageDescriptorStorageImages=1048576, maxPerStageDescriptorInputAttachments=0, maxPerStageResources=1048576,
        maxDescriptorSetSamplers=1048576, maxDescriptorSetUniformBuffers=200, maxDescriptorSetUniformBuffersDynamic=15,
        maxDescriptorSetStorageBuffers=1048576, maxDescriptorSetStorageBuffersDynamic=16,
        maxDescriptorSetSampledImages=1048576, maxDescriptorSetStorageImages=1048576, maxDescriptorSetInputAttachments=0,
        maxComputeSharedMemorySize=lim["max-compute-workgroup-storage-size"],
        maxComputeWorkGroupInvocations=lim["max-compute-invocations-per-workgroup"],
        subPixelPrecisionBits=0, subTexelPrecisionBits=prof.textures.subtexel_bits or 8,
        mipmapPrecisionBits=8,
        maxDrawIndexedIndexValue=0, maxDrawIndirectCount=1 << 30,
        maxSamplerLodBias=0, maxSamplerAnisotropy=1.0, minMemoryMapAlignment=MIN_MEMORY_MAP_ALIGNMENT,
        minTexelBufferOffsetAlignment=16, minUniformBufferOffsetAlignment=64, minStorageBufferOffsetAlignment=16,
        timestampComputeAndGraphics=1, timestampPeriod=1.0, maxClipDistances=0, maxCullDistances=0,
        discreteQueuePriorities=2, strictLines=0, standardSampleLocations=0,
        optimalBufferCopyOffsetAlignment=1, optimalBufferCopyRowPitchAlignment=1, nonCoherentAtomSize=64)
    recorded = prof.vulkan.get("limits", {})
    values.update({k: recorded[k] for k in REPORTED_LIMITS if k in recorded})
    values.update(image_limits(prof))
    for k, v in values.items():
        setattr(L, k, v)
    L.maxComputeWorkGroupCount = [wg, wg, wg]
    L.maxComputeWorkGroupSize = [lim["max-compute-workgroup-size-x"], lim["max-compute-workgroup-size-y"],
                                 lim["max-compute-workgroup-size-z"]]


@command
def vkGetPhysicalDeviceProperties(physical, p_props):
    _fill_properties(_pd(physical, "vkGetPhysicalDeviceProperties"), p_props)


def _coopmat_props(prof):
    return [c for c in prof.configs if c.scope == "subgroup"]


@command
def vkGetPhysicalDeviceProperties2(physical, p_props):
    pd = _pd(physical, "vkGetPhysicalDeviceProperties2")
    prof = pd.profile
    _fill_properties(pd, ffi.addressof(p_props.properties))
    sizes = prof.subgroup_sizes
    ops = _subgroup_ops()
    compute = VK["VK_SHADER_STAGE_COMPUTE_BIT"]
    for name, s in chain(p_props.pNext):
        if name == "VkPhysicalDeviceVulkan11Properties":
            ffi.memmove(s.deviceUUID, _uuid(f"emu device {prof.name}"), 16)
            ffi.memmove(s.driverUUID, _uuid(f"emu {__version__}"), 16)
            s.deviceLUIDValid = 0
            s.subgroupSize = prof.default_subgroup_size
            s.subgroupSupportedStages = compute
            s.subgroupSupportedOperations = ops
            s.subgroupQuadOperationsInAllStages = 0
            s.pointClippingBehavior = VK["VK_POINT_CLIPPING_BEHAVIOR_ALL_CLIP_PLANES"]
            s.maxMultiviewViewCount = 0
            s.maxMultiviewInstanceIndex = 0
            s.protectedNoFault = 0
            s.maxPerSetDescriptors = 1048576
            s.maxMemoryAllocationSize = MAX_ALLOCATION
        elif name == "VkPhysicalDeviceSubgroupProperties":
            s.subgroupSize = prof.default_subgroup_size
            s.supportedStages = compute
            s.supportedOperations = ops
            s.quadOperationsInAllStages = 0
        elif name in ("VkPhysicalDeviceVulkan12Properties", "VkPhysicalDeviceDriverProperties"):
            s.driverID = 0                  # no VkDriverId names emu
            put_string(s.driverName, "emu")
            put_string(s.driverInfo, f"emu {__version__}, a virtual GPU modelling {prof.name} (Python)")
            s.conformanceVersion.major = s.conformanceVersion.minor = 0
            s.conformanceVersion.subminor = s.conformanceVersion.patch = 0
            if name == "VkPhysicalDeviceVulkan12Properties":
                _fill_vulkan12(s)
        elif name in ("VkPhysicalDeviceVulkan13Properties", "VkPhysicalDeviceSubgroupSizeControlProperties"):
            s.minSubgroupSize, s.maxSubgroupSize = min(sizes), max(sizes)
            s.maxComputeWorkgroupSubgroups = prof.limits["max-compute-invocations-per-workgroup"] // min(sizes)
            s.requiredSubgroupSizeStages = compute
            if name == "VkPhysicalDeviceVulkan13Properties":
                s.maxBufferSize = MAX_ALLOCATION
                s.storageTexelBufferOffsetAlignmentBytes = 16
                s.uniformTexelBufferOffsetAlignmentBytes = 16
                s.maxInlineUniformBlockSize = 0
        if name in ("VkPhysicalDeviceVulkan13Properties", "VkPhysicalDeviceShaderIntegerDotProductProperties"):
            _fill_integer_dot(pd, s)
        if name == "VkPhysicalDeviceMaintenance4Properties":
            s.maxBufferSize = MAX_ALLOCATION
        elif name == "VkPhysicalDeviceMaintenance3Properties":
            s.maxPerSetDescriptors = 1048576
            s.maxMemoryAllocationSize = MAX_ALLOCATION
        elif name == "VkPhysicalDeviceTimelineSemaphoreProperties":
            s.maxTimelineSemaphoreValueDifference = (1 << 63) - 1
        elif name == "VkPhysicalDeviceCooperativeMatrixPropertiesKHR":
            s.cooperativeMatrixSupportedStages = compute
        elif name == "VkPhysicalDeviceCooperativeMatrix2PropertiesNV":
            wgs = [f for f in prof.flexible_nv if f["scope"] == "workgroup"]
            s.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize = max((f["workgroup_invocations"] for f in wgs), default=0)
            s.cooperativeMatrixFlexibleDimensionsMaxDimension = 256 if prof.flexible_nv else 0
            s.cooperativeMatrixWorkgroupScopeReservedSharedMemory = 0
        elif name == "VkPhysicalDevicePipelineRobustnessProperties":
            rb = VK["VK_PIPELINE_ROBUSTNESS_BUFFER_BEHAVIOR_ROBUST_BUFFER_ACCESS"]
            s.defaultRobustnessStorageBuffers = rb
            s.defaultRobustnessUniformBuffers = rb
            s.defaultRobustnessVertexInputs = VK["VK_PIPELINE_ROBUSTNESS_BUFFER_BEHAVIOR_DEVICE_DEFAULT"]
            s.defaultRobustnessImages = VK["VK_PIPELINE_ROBUSTNESS_IMAGE_BEHAVIOR_DEVICE_DEFAULT"]
        elif name == "VkPhysicalDeviceFloatControlsProperties":
            _fill_float_controls(s)
        elif name == "VkPhysicalDeviceIDProperties":
            ffi.memmove(s.deviceUUID, _uuid(f"emu device {prof.name}"), 16)
            ffi.memmove(s.driverUUID, _uuid(f"emu {__version__}"), 16)
            s.deviceLUIDValid = 0


def _fill_integer_dot(pd, s) -> None:
    """Which integer dot products the device runs fast: the recorded *Accelerated properties
    (profile.vulkan.integer_dot_product; llama.cpp picks its integer-dot shaders on them), where
    emu runs the dot-product instructions at all."""
    fast = set(pd.profile.vulkan.get("integer_dot_product", ())) \
        if "shaderIntegerDotProduct" in pd.features else set()
    for field, _ in ffi.typeof(s).item.fields:
        if field.startswith("integerDotProduct"):
            setattr(s, field, 1 if field in fast else 0)


def _fill_vulkan12(s) -> None:
    _fill_float_controls(s)
    for field in ("maxUpdateAfterBindDescriptorsInAllPools", "maxPerStageDescriptorUpdateAfterBindStorageBuffers",
                  "maxDescriptorSetUpdateAfterBindStorageBuffers", "maxPerStageUpdateAfterBindResources"):
        setattr(s, field, 0)
    s.maxTimelineSemaphoreValueDifference = (1 << 63) - 1
    s.framebufferIntegerColorSampleCounts = 0


def _fill_float_controls(s) -> None:
    # emu keeps denormals and rounds to nearest even everywhere, whatever the shader asks
    s.denormBehaviorIndependence = VK["VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_ALL"]
    s.roundingModeIndependence = VK["VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_ALL"]
    for w in ("16", "32", "64"):
        setattr(s, f"shaderSignedZeroInfNanPreserveFloat{w}", 1)
        setattr(s, f"shaderDenormPreserveFloat{w}", 0)
        setattr(s, f"shaderDenormFlushToZeroFloat{w}", 0)
        setattr(s, f"shaderRoundingModeRTEFloat{w}", 0)
        setattr(s, f"shaderRoundingModeRTZFloat{w}", 0)


MAX_ALLOCATION = 1 << 32
ALLOCATED = [0]                 # bytes of device memory allocated (vkAllocateMemory, vkFreeMemory)


@command
def vkGetPhysicalDeviceQueueFamilyProperties(physical, p_count, p_props):
    _pd(physical, "vkGetPhysicalDeviceQueueFamilyProperties")
    return fill_array(p_count, p_props, [None], lambda out, _: _queue_family(out))


@command
def vkGetPhysicalDeviceQueueFamilyProperties2(physical, p_count, p_props):
    _pd(physical, "vkGetPhysicalDeviceQueueFamilyProperties2")
    return fill_array(p_count, p_props, [None], lambda out, _: _queue_family(out.queueFamilyProperties))


def _queue_family(q) -> None:
    q.queueFlags = VK["VK_QUEUE_COMPUTE_BIT"] | VK["VK_QUEUE_TRANSFER_BIT"]
    q.queueCount = 1
    q.timestampValidBits = 64
    q.minImageTransferGranularity.width = q.minImageTransferGranularity.height = 1
    q.minImageTransferGranularity.depth = 1


def image_limits(profile) -> dict:
    """The image limits reported (VkPhysicalDeviceLimits), the recorded GPU's where the profile
    has them; emu's textures hold any size the host's memory does."""
    out = {"maxImageDimension1D": 16384, "maxImageDimension2D": 16384, "maxImageDimension3D": 2048,
           "maxImageDimensionCube": 16384, "maxImageArrayLayers": 2048}
    rec = profile.vulkan.get("limits", {})
    out.update({k: rec[k] for k in out if k in rec})
    return out


def heap_size() -> int:
    """The one heap: half the host's memory (the device's memory is the host's)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError):
        return 1 << 33


def _memory_properties(m) -> None:
    m.memoryTypeCount = 1
    m.memoryTypes[0].propertyFlags = sum(VK[f] for f in MEMORY_FLAGS)
    m.memoryTypes[0].heapIndex = 0
    m.memoryHeapCount = 1
    m.memoryHeaps[0].size = heap_size()
    m.memoryHeaps[0].flags = VK["VK_MEMORY_HEAP_DEVICE_LOCAL_BIT"]


@command
def vkGetPhysicalDeviceMemoryProperties(physical, p_props):
    _pd(physical, "vkGetPhysicalDeviceMemoryProperties")
    _memory_properties(p_props)


@command
def vkGetPhysicalDeviceMemoryProperties2(physical, p_props):
    _pd(physical, "vkGetPhysicalDeviceMemoryProperties2")
    _memory_properties(ffi.addressof(p_props.memoryProperties))
    budget = icd.find(p_props.pNext, "VkPhysicalDeviceMemoryBudgetPropertiesEXT")
    if budget is not None:
        budget.heapBudget[0] = heap_size()
        budget.heapUsage[0] = ALLOCATED[0]


# (the format and image format properties: images.py)


@command
def vkGetPhysicalDeviceSparseImageFormatProperties(physical, fmt, typ, samples, usage, tiling, p_count, p_props):
    p_count[0] = 0


@command
def vkGetPhysicalDeviceSparseImageFormatProperties2(physical, p_info, p_count, p_props):
    p_count[0] = 0


@command
def vkGetPhysicalDeviceExternalBufferProperties(physical, p_info, p_props):
    e = p_props.externalMemoryProperties
    e.externalMemoryFeatures = e.exportFromImportedHandleTypes = e.compatibleHandleTypes = 0


@command
def vkGetPhysicalDeviceExternalFenceProperties(physical, p_info, p_props):
    p_props.exportFromImportedHandleTypes = p_props.compatibleHandleTypes = p_props.externalFenceFeatures = 0


@command
def vkGetPhysicalDeviceExternalSemaphoreProperties(physical, p_info, p_props):
    p_props.exportFromImportedHandleTypes = p_props.compatibleHandleTypes = 0
    p_props.externalSemaphoreFeatures = 0


# ------------------------------------------------------------------ cooperative matrices
@command
def vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(physical, p_count, p_props):
    pd = _pd(physical, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR")
    if "cooperativeMatrix" not in pd.features:
        p_count[0] = 0
        return None

    def write(out, c):
        out.MSize, out.NSize, out.KSize = c.m, c.n, c.k
        out.AType, out.BType = VK[COMPONENT[c.a_type]], VK[COMPONENT[c.b_type]]
        out.CType, out.ResultType = VK[COMPONENT[c.c_type]], VK[COMPONENT[c.result_type]]
        out.saturatingAccumulation = int(c.saturating_accumulation)
        out.scope = VK["VK_SCOPE_SUBGROUP_KHR"]
    return fill_array(p_count, p_props, _coopmat_props(pd.profile), write)


@command
def vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV(physical, p_count, p_props):
    pd = _pd(physical, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV")
    if "cooperativeMatrixFlexibleDimensions" not in pd.features:
        p_count[0] = 0
        return None

    def write(out, f):
        out.MGranularity, out.NGranularity, out.KGranularity = f["m_granularity"], f["n_granularity"], f["k_granularity"]
        out.AType, out.BType = VK[COMPONENT[f["a_type"]]], VK[COMPONENT[f["b_type"]]]
        out.CType, out.ResultType = VK[COMPONENT[f["c_type"]]], VK[COMPONENT[f["result_type"]]]
        out.saturatingAccumulation = int(f["saturating_accumulation"])
        out.scope = VK["VK_SCOPE_WORKGROUP_KHR" if f["scope"] == "workgroup" else "VK_SCOPE_SUBGROUP_KHR"]
        out.workgroupInvocations = f["workgroup_invocations"]
    return fill_array(p_count, p_props, list(pd.profile.flexible_nv), write)
