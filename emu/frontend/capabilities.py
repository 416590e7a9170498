"""The SPIR-V capabilities emu's front end runs, as data: the front end (emu/frontend/spirv)
accepts a module's OpCapability from these, and the Vulkan driver (emu/vulkan/physical.py)
reports the device features that need them from the same sets, without importing the front end
(~13 ms of every Vulkan program's start, and a warm run, whose shaders come from the IR cache,
needs it for nothing else)."""
from __future__ import annotations

SPIRV_CAPABILITIES = {"Shader", "Int8", "Float16", "StorageBuffer8BitAccess", "UniformAndStorageBuffer8BitAccess",
                      "StoragePushConstant8", "StorageBuffer16BitAccess", "UniformAndStorageBuffer16BitAccess",
                      "StoragePushConstant16", "GroupNonUniform", "GroupNonUniformVote",
                      "GroupNonUniformArithmetic", "GroupNonUniformBallot", "GroupNonUniformShuffle",
                      "GroupNonUniformShuffleRelative", "CooperativeMatrixKHR", "VulkanMemoryModel",
                      "VulkanMemoryModelDeviceScope", "BFloat16TypeKHR", "BFloat16CooperativeMatrixKHR",
                      "Int8", "ShaderNonUniform", "Matrix", "Linkage",
                      # VK_NV_cooperative_matrix2: reductions and conversions between uses (subgroup scope)
                      "CooperativeMatrixReductionsNV", "CooperativeMatrixConversionsNV",
                      # its tensor addressing, per-element operations and workgroup scope
                      "CooperativeMatrixTensorAddressingNV", "TensorAddressingNV",
                      "CooperativeMatrixPerElementOperationsNV",
                      # VK_EXT_cooperative_matrix_maintenance1 (its reductions and per-element operations
                      # are NV2's capabilities renamed): use conversions, element index -> (row, column)
                      "CooperativeMatrixConversionsEXT", "CooperativeMatrixGetCoordinateEXT",
                      # 64-bit scalars (the IR's i64, u64, f64; a profile without shaderFloat64 refuses
                      # f64 values where the verifier meets them) and 64-bit atomics on them
                      "Float64", "Int64", "Int64Atomics",
                      # 16-bit integers (the IR's i16, u16) in registers; their storage is above
                      "Int16"}

# the capabilities of llama.cpp's shaders beyond the core set above
SPIRV_CAPABILITIES |= {
    # SPV_KHR_integer_dot_product (intdot.py)
    "DotProduct", "DotProductInputAll", "DotProductInput4x8Bit", "DotProductInput4x8BitPacked",
    # clustered reductions and quad operations (subgroups.py)
    "GroupNonUniformClustered", "GroupNonUniformQuad",
    # aliased workgroup blocks (Global.aliased), their 8- and 16-bit members
    "WorkgroupMemoryExplicitLayoutKHR", "WorkgroupMemoryExplicitLayout8BitAccessKHR",
    "WorkgroupMemoryExplicitLayout16BitAccessKHR",
    # buffer device addresses: PhysicalStorageBuffer pointers (physical.py); block loads through
    # a decode function, which takes one (its vector form is optional: emu decodes each element)
    "PhysicalStorageBufferAddresses", "CooperativeMatrixBlockLoadsNV", "CooperativeMatrixDecodeVectorNV"}

# capabilities the image instructions need (module.py allows them beside its own)
SPIRV_IMAGE_CAPABILITIES = {"ImageQuery", "Sampled1D", "Image1D", "SampledCubeArray", "ImageCubeArray",
                            "StorageImageReadWithoutFormat", "StorageImageWriteWithoutFormat",
                            "StorageImageExtendedFormats", "ImageGatherExtended",
                            "SampledBuffer", "ImageBuffer"}      # (texel buffers: refused at their type, by name)
