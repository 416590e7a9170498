"""emu as a Vulkan device: an ICD the standard Vulkan loader loads (VK_DRIVER_FILES=$(emu vulkan-icd)).

build.py builds the C shim (cffi's embedding mode) and the manifest; gen.py generates vk_types.h
and vk_registry.py from the Vulkan registry; icd.py holds the loader's entry points, handles and
the error rule; physical.py the instance and the physical device (from the profile, EMU_PROFILE,
default nvidia-h200); objects.py and commands.py the device's objects and command buffers, over
emu's API. Nothing below this package imports it."""
