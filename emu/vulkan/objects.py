"""The device's objects: the device and its queue, memory, buffers, descriptor sets, pipelines.

Device memory is a numpy byte array; vkMapMemory hands out its own address, so what the host
writes is what the shaders read (no copy at submit). Shader modules and compute pipelines are
emu's API objects (emu/api.py), made for the profile the physical device reports."""
from __future__ import annotations

import re

import numpy as np

from . import icd
from .icd import VK, Dispatchable, VkError, command, destroyer, drop_handle, ffi, get, new_handle
from .physical import ALLOCATED, MIN_MEMORY_MAP_ALIGNMENT, PhysicalDevice

ALIGN = 64                 # buffers' alignment in memory (>= minStorageBufferOffsetAlignment)


class Device(Dispatchable):
    c_type = "VkDevice"

    def __init__(self, physical: PhysicalDevice):
        self.physical = physical
        self.profile = physical.profile
        self._emu: dict = {}                 # subgroup size -> emu.api.Device
        from ..memory.addresses import AddressSpace
        # device addresses are the allocations': a buffer's is its memory's plus its offset, so
        # buffers of one allocation lie in one range, as on a GPU (guard gaps between allocations)
        self.addresses = AddressSpace()
        self._make_handle()
        self.queue = Queue(self)

    def emu(self, subgroup_size: int | None = None):
        """emu's API device for this profile and subgroup size (the profile's default if None)."""
        sg = subgroup_size or self.profile.default_subgroup_size
        d = self._emu.get(sg)
        if d is None:
            import os
            from ..api import Device as EmuDevice
            steps = os.environ.get("EMU_VK_MAX_STEPS")
            tracer = None
            if os.environ.get("EMU_VK_TRACE_DIR"):
                # a tracer attached from the start keeps the pipelines on the reference executor,
                # which the tracer observes; each traced dispatch gets its own (commands.py)
                tracer = Untraced()
            d = self._emu[sg] = EmuDevice(self.profile, subgroup_size=sg, hints="cli", tracer=tracer,
                                          bounds=os.environ.get("EMU_VK_BOUNDS", "webgpu"),
                                          max_steps=int(steps) if steps and steps.isdigit() else ICD_MAX_STEPS)
        return d


# A GPU runs a loop until it ends; a program has no --max-steps to give. The ICD stops an
# invocation after 10^9 steps (instructions of its loops' iterations), about half a second of one
# warp issuing at the H200's clock, far past any kernel of a real program (llama.cpp's scalar flash
# attention with 256-wide heads over 1,024 keys passes emu run's 10^6), while a loop that never
# ends still ends in one message. EMU_VK_MAX_STEPS sets another.
ICD_MAX_STEPS = 10 ** 9


class Untraced:
    """The tracer between traced dispatches (EMU_VK_TRACE_DIR): observes nothing, but, being
    attached, keeps the pipelines on the reference executor that a tracer observes."""

    def event(self, *args):
        pass

    def access(self, *args):
        pass


# emu's hints name its command-line flags; a Vulkan program's user sets environment variables
VK_HINTS = (
    (re.compile(r"--bounds strict \(Python: bounds=\"strict\"\)|--bounds strict"), "EMU_VK_BOUNDS=strict"),
    (re.compile(r"--max-steps N"), "EMU_VK_MAX_STEPS=N"),
)


def vulkan_hint(e):
    """An EmuError with its hint said in the ICD's terms."""
    from ..errors import rewrite_hint
    e.hint = rewrite_hint(e.hint, VK_HINTS)
    return e


class Queue(Dispatchable):
    c_type = "VkQueue"

    def __init__(self, device: Device):
        self.device = device
        self._make_handle()


def _dev(device, call) -> Device:
    return get(device, Device, call, "device")


@command
def vkCreateDevice(physical, p_info, p_alloc, p_device):
    pd = get(physical, PhysicalDevice, "vkCreateDevice", "physicalDevice")
    info = p_info[0]
    for i in range(info.enabledExtensionCount):
        name = ffi.string(info.ppEnabledExtensionNames[i]).decode()
        if name not in pd.extensions:
            raise VkError(f"device extension {name!r} is not supported by emu's {pd.profile.name} device",
                          "VK_ERROR_EXTENSION_NOT_PRESENT", "VUID-vkCreateDevice-ppEnabledExtensionNames-01387")
    for i in range(info.queueCreateInfoCount):
        q = info.pQueueCreateInfos[i]
        if q.queueFamilyIndex != 0 or q.queueCount != 1:
            raise VkError(f"pQueueCreateInfos[{i}] asks for {q.queueCount} queue(s) of family {q.queueFamilyIndex}; "
                          f"the device has one family (index 0) of one queue", "VK_ERROR_INITIALIZATION_FAILED",
                          "VUID-VkDeviceQueueCreateInfo-queueCount-00382")
    wanted = _requested_features(info)
    missing = sorted(wanted - pd.features)
    if missing:
        raise VkError(f"features not supported by emu's {pd.profile.name} device: {', '.join(missing)}",
                      "VK_ERROR_FEATURE_NOT_PRESENT", "VUID-VkDeviceCreateInfo-pNext-pNext")
    dev = Device(pd)
    p_device[0] = dev.handle


def _requested_features(info) -> set:
    out = set()

    def take(s):
        for field, _ in ffi.typeof(s).item.fields:
            if field not in ("sType", "pNext") and getattr(s, field):
                out.add(field)
    if info.pEnabledFeatures != ffi.NULL:
        take(info.pEnabledFeatures)
    for name, s in icd.chain(info.pNext):
        if name == "VkPhysicalDeviceFeatures2":
            take(ffi.addressof(s.features))
        elif "Features" in name:
            take(s)
    return out


@command
def vkDestroyDevice(device, p_alloc):
    if device == ffi.NULL:
        return
    dev = _dev(device, "vkDestroyDevice")
    dev.queue.forget()
    dev.forget()


@command
def vkGetDeviceQueue(device, family, index, p_queue):
    dev = _dev(device, "vkGetDeviceQueue")
    if family != 0 or index != 0:
        raise VkError(f"queue {index} of family {family}: the device has one queue of family 0",
                      vuid="VUID-vkGetDeviceQueue-queueFamilyIndex-00384")
    p_queue[0] = dev.queue.handle


@command
def vkGetDeviceQueue2(device, p_info, p_queue):
    vkGetDeviceQueue(device, p_info.queueFamilyIndex, p_info.queueIndex, p_queue)


@command
def vkDeviceWaitIdle(device):
    _dev(device, "vkDeviceWaitIdle")       # every submission has run when vkQueueSubmit returns


# ------------------------------------------------------------------ memory
class Memory:
    def __init__(self, size: int):
        self.size = size
        # one spare row at the end: a binding that ends there still sees whole 16-byte rows; the
        # first byte on the alignment the device reports as minMemoryMapAlignment (numpy gives 16)
        n, a = _round(size, 16) + 16, MIN_MEMORY_MAP_ALIGNMENT
        raw = np.zeros(n + a, np.uint8)
        skip = -raw.ctypes.data % a
        self.data = raw[skip:skip + n]
        self.address = self.data.ctypes.data
        self.mapped = None


def _round(n: int, a: int) -> int:
    return (n + a - 1) // a * a


@command
def vkAllocateMemory(device, p_info, p_alloc, p_memory):
    _dev(device, "vkAllocateMemory")
    info = p_info[0]
    if info.memoryTypeIndex != 0:
        raise VkError(f"memoryTypeIndex {info.memoryTypeIndex}: the device has one memory type (0)",
                      vuid="VUID-vkAllocateMemory-pAllocateInfo-01714")
    from .physical import heap_size
    if info.allocationSize > heap_size():
        raise VkError(f"{info.allocationSize} bytes is more than the heap ({heap_size()} bytes)",
                      "VK_ERROR_OUT_OF_DEVICE_MEMORY")
    try:
        mem = Memory(int(info.allocationSize))
    except MemoryError:
        raise VkError(f"the host cannot give {info.allocationSize} bytes", "VK_ERROR_OUT_OF_DEVICE_MEMORY") from None
    ALLOCATED[0] += mem.size
    p_memory[0] = new_handle(mem)


@command
def vkFreeMemory(device, memory, p_alloc):
    if memory == 0:
        return
    mem = get(memory, Memory, "vkFreeMemory", "memory")
    ALLOCATED[0] -= mem.size
    drop_handle(memory)


@command
def vkMapMemory(device, memory, offset, size, flags, pp_data):
    mem = get(memory, Memory, "vkMapMemory", "memory")
    if mem.mapped is not None:
        raise VkError("the memory is already mapped", "VK_ERROR_MEMORY_MAP_FAILED", "VUID-vkMapMemory-memory-00678")
    if offset >= mem.size:
        raise VkError(f"offset {offset} is not below the allocation's {mem.size} bytes",
                      "VK_ERROR_MEMORY_MAP_FAILED", "VUID-vkMapMemory-offset-00679")
    if size != VK["VK_WHOLE_SIZE"] and offset + size > mem.size:
        raise VkError(f"offset {offset} + size {size} passes the allocation's {mem.size} bytes",
                      "VK_ERROR_MEMORY_MAP_FAILED", "VUID-vkMapMemory-size-00681")
    mem.mapped = offset
    pp_data[0] = ffi.cast("void *", mem.address + offset)


@command
def vkUnmapMemory(device, memory):
    mem = get(memory, Memory, "vkUnmapMemory", "memory")
    if mem.mapped is None:
        raise VkError("the memory is not mapped", vuid="VUID-vkUnmapMemory-memory-00689")
    mem.mapped = None


@command
def vkFlushMappedMemoryRanges(device, count, p_ranges):
    for i in range(count):
        get(p_ranges[i].memory, Memory, "vkFlushMappedMemoryRanges", f"pMemoryRanges[{i}].memory")


@command
def vkInvalidateMappedMemoryRanges(device, count, p_ranges):
    for i in range(count):
        get(p_ranges[i].memory, Memory, "vkInvalidateMappedMemoryRanges", f"pMemoryRanges[{i}].memory")


@command
def vkGetDeviceMemoryCommitment(device, memory, p_bytes):
    p_bytes[0] = get(memory, Memory, "vkGetDeviceMemoryCommitment", "memory").size


# ------------------------------------------------------------------ buffers
class Buffer:
    BIND_VUIDS = ("07459", "01036", "01037")      # bound twice, offset unaligned, past the end

    def __init__(self, size: int, usage: int):
        self.size, self.usage = size, usage
        self.memory: Memory | None = None
        self.offset = 0

    def bind(self, mem: Memory, offset: int) -> None:
        self.memory, self.offset = mem, offset

    def bytes(self, call: str, what: str) -> np.ndarray:
        if self.memory is None:
            raise VkError(f"{what} has no memory bound", vuid=f"VUID-{call}-buffer-00000")
        return self.memory.data[self.offset:self.offset + self.size]


@command
def vkCreateBuffer(device, p_info, p_alloc, p_buffer):
    _dev(device, "vkCreateBuffer")
    info = p_info[0]
    if info.size == 0:
        raise VkError("size is 0", vuid="VUID-VkBufferCreateInfo-size-00912")
    p_buffer[0] = new_handle(Buffer(int(info.size), int(info.usage)))


def _requirements(r, size: int) -> None:
    r.size = _round(size, ALIGN)
    r.alignment = ALIGN
    r.memoryTypeBits = 1


def requirement_commands(kind: str, cls, size_of) -> None:
    """Register vkGet{kind}MemoryRequirements, ...2 and vkGetDevice{kind}MemoryRequirements for
    objects of `cls` (which have a .size); size_of(device, create info) is the size of one not made."""
    param = kind.lower()

    def one(device, handle, p_req):
        _requirements(p_req, get(handle, cls, f"vkGet{kind}MemoryRequirements", param).size)

    def two(device, p_info, p_req):
        requirements2(p_req, get(getattr(p_info, param), cls, f"vkGet{kind}MemoryRequirements2", f"pInfo->{param}").size)

    def of_info(device, p_info, p_req):
        call = f"vkGetDevice{kind}MemoryRequirements"
        requirements2(p_req, size_of(get(device, Device, call, "device"), p_info.pCreateInfo[0]))
    for fn, name in ((one, f"vkGet{kind}MemoryRequirements"), (two, f"vkGet{kind}MemoryRequirements2"),
                     (of_info, f"vkGetDevice{kind}MemoryRequirements")):
        fn.__name__ = name
        command(fn)


requirement_commands("Buffer", Buffer, lambda dev, info: int(info.size))


def requirements2(p_req, size: int) -> None:
    """VkMemoryRequirements2 (of a buffer or an image of `size` bytes): no dedicated allocation."""
    _requirements(ffi.addressof(p_req.memoryRequirements), size)
    d = icd.find(p_req.pNext, "VkMemoryDedicatedRequirements")
    if d is not None:
        d.prefersDedicatedAllocation = d.requiresDedicatedAllocation = 0


def bind_commands(kind: str, cls) -> None:
    """Register vkBind{kind}Memory and vkBind{kind}Memory2: a buffer or an image (`cls`, whose
    BIND_VUIDS name the checks) takes memory from an offset."""
    param = kind.lower()

    def bind(call, handle, memory, offset, where=""):
        obj = get(handle, cls, call, where + param)
        mem = get(memory, Memory, call, where + "memory")
        again, aligned, fits = cls.BIND_VUIDS
        if obj.memory is not None:
            raise VkError(f"the {param} already has memory bound", vuid=f"VUID-{call}-{param}-{again}")
        if offset % ALIGN:
            raise VkError(f"memoryOffset {offset} is not a multiple of the {param}'s alignment {ALIGN}",
                          vuid=f"VUID-{call}-memoryOffset-{aligned}")
        if offset + obj.size > mem.size:
            raise VkError(f"the {param}'s {obj.size} bytes at memoryOffset {offset} pass the allocation's "
                          f"{mem.size} bytes", vuid=f"VUID-{call}-size-{fits}")
        obj.bind(mem, int(offset))

    def one(device, handle, memory, offset):
        bind(f"vkBind{kind}Memory", handle, memory, offset)

    def two(device, count, p_infos):
        for i in range(count):
            b = p_infos[i]
            bind(f"vkBind{kind}Memory2", getattr(b, param), b.memory, b.memoryOffset, f"pBindInfos[{i}].")
    for fn, name in ((one, f"vkBind{kind}Memory"), (two, f"vkBind{kind}Memory2")):
        fn.__name__ = name
        command(fn)


bind_commands("Buffer", Buffer)


@command
def vkGetBufferDeviceAddress(device, p_info):
    dev = _dev(device, "vkGetBufferDeviceAddress")
    buf = get(p_info.buffer, Buffer, "vkGetBufferDeviceAddress", "pInfo->buffer")
    if buf.memory is None:
        raise VkError("the buffer has no memory bound", vuid="VUID-VkBufferDeviceAddressInfo-buffer-02600")
    return dev.addresses.address(buf.memory) + buf.offset


class BufferView:
    def __init__(self, buffer, fmt, offset, size):
        self.buffer, self.format, self.offset, self.range = buffer, fmt, offset, size


@command
def vkCreateBufferView(device, p_info, p_alloc, p_view):
    i = p_info[0]
    buf = get(i.buffer, Buffer, "vkCreateBufferView", "pCreateInfo->buffer")
    p_view[0] = new_handle(BufferView(buf, i.format, int(i.offset), int(i.range)))


# ------------------------------------------------------------------ descriptors
BUFFER_DESCRIPTORS = {VK[n] for n in ("VK_DESCRIPTOR_TYPE_STORAGE_BUFFER", "VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER",
                                      "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC",
                                      "VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC")}
DYNAMIC = {VK["VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC"], VK["VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC"]}
# images and samplers (images.py): the usage bit an image view needs for each
IMAGE_DESCRIPTORS = {VK["VK_DESCRIPTOR_TYPE_STORAGE_IMAGE"]: "VK_IMAGE_USAGE_STORAGE_BIT",
                     VK["VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE"]: "VK_IMAGE_USAGE_SAMPLED_BIT",
                     VK["VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER"]: "VK_IMAGE_USAGE_SAMPLED_BIT"}
SAMPLER_DESCRIPTORS = {VK["VK_DESCRIPTOR_TYPE_SAMPLER"], VK["VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER"]}
DESCRIPTOR_NAMES = {v: n[len("VK_DESCRIPTOR_TYPE_"):] for n, v in VK.items()
                    if n.startswith("VK_DESCRIPTOR_TYPE_") and not n.endswith(("_KHR", "_EXT", "_NV", "_VALVE"))}


def _runs(t: int) -> bool:
    """Whether emu's device runs descriptors of type `t`."""
    return t in BUFFER_DESCRIPTORS or t in IMAGE_DESCRIPTORS or t in SAMPLER_DESCRIPTORS


class ImageView:
    def __init__(self, image, view):
        self.image, self.view = image, view        # images.Image, emu's TextureView


class SamplerObject:
    def __init__(self, sampler):
        self.sampler = sampler                     # emu's Sampler, or a DeclinedSampler (images.py)


class DeclinedSampler:
    """A valid sampler emu does not model (unnormalized coordinates, a border colour): made, bound and
    written as the API allows (ncnn makes one when its device starts), refused by a dispatch whose
    shader samples through it."""

    def __init__(self, message: str, vuid: str):
        self.message, self.vuid = message, vuid


class SetLayout:
    def __init__(self, bindings: dict, immutable: dict):
        self.bindings = bindings            # binding -> (descriptor type, count)
        self.immutable = immutable          # binding -> [emu Sampler] (pImmutableSamplers)


@command
def vkCreateDescriptorSetLayout(device, p_info, p_alloc, p_layout):
    i = p_info[0]
    bindings, immutable = {}, {}
    for k in range(i.bindingCount):
        b = i.pBindings[k]
        t = b.descriptorType
        if not _runs(t):
            raise VkError(f"pBindings[{k}] (binding {b.binding}) has descriptor type "
                          f"{DESCRIPTOR_NAMES.get(t, t)}: emu's device runs storage and uniform buffers, storage "
                          f"and sampled images, samplers and combined image samplers (not texel buffers, input "
                          f"attachments or inline uniform blocks)", "VK_ERROR_FEATURE_NOT_PRESENT",
                          "VUID-VkDescriptorSetLayoutBinding-descriptorType-parameter")
        bindings[b.binding] = (t, b.descriptorCount)
        if t in SAMPLER_DESCRIPTORS and b.pImmutableSamplers != ffi.NULL:
            immutable[b.binding] = [get(b.pImmutableSamplers[j], SamplerObject, "vkCreateDescriptorSetLayout",
                                        f"pCreateInfo->pBindings[{k}].pImmutableSamplers[{j}]").sampler
                                    for j in range(b.descriptorCount)]
    p_layout[0] = new_handle(SetLayout(bindings, immutable))


@command
def vkGetDescriptorSetLayoutSupport(device, p_info, p_support):
    p_support.supported = int(all(_runs(p_info.pBindings[k].descriptorType) for k in range(p_info.bindingCount)))


class Pool:
    def __init__(self):
        self.sets: list = []


@command
def vkCreateDescriptorPool(device, p_info, p_alloc, p_pool):
    p_pool[0] = new_handle(Pool())


@command
def vkDestroyDescriptorPool(device, pool, p_alloc):
    if pool:
        for s in get(pool, Pool, "vkDestroyDescriptorPool", "descriptorPool").sets:
            drop_handle(s.handle_value)
        drop_handle(pool)


@command
def vkResetDescriptorPool(device, pool, flags):
    p = get(pool, Pool, "vkResetDescriptorPool", "descriptorPool")
    for s in p.sets:
        drop_handle(s.handle_value)
    p.sets = []


class DescriptorSet:
    def __init__(self, layout: SetLayout, pool: Pool):
        self.layout, self.pool = layout, pool
        self.buffers: dict = {}             # (binding, element) -> (Buffer, offset, range)
        self.handles: dict = {}             # (binding, element) -> emu TextureView, Sampler or both
        for binding, samplers in layout.immutable.items():
            for element, smp in enumerate(samplers):
                self.handles[(binding, element)] = smp


@command
def vkAllocateDescriptorSets(device, p_info, p_sets):
    i = p_info[0]
    for k in range(i.descriptorSetCount):
        p_sets[k] = 0                  # on failure every element is VK_NULL_HANDLE (the spec's rule)
    pool = get(i.descriptorPool, Pool, "vkAllocateDescriptorSets", "pAllocateInfo->descriptorPool")
    layouts = [get(i.pSetLayouts[k], SetLayout, "vkAllocateDescriptorSets", f"pAllocateInfo->pSetLayouts[{k}]")
               for k in range(i.descriptorSetCount)]
    for k, layout in enumerate(layouts):
        s = DescriptorSet(layout, pool)
        pool.sets.append(s)
        p_sets[k] = new_handle(s)


@command
def vkFreeDescriptorSets(device, pool, count, p_sets):
    p = get(pool, Pool, "vkFreeDescriptorSets", "descriptorPool")
    for k in range(count):
        if p_sets[k]:
            s = get(p_sets[k], DescriptorSet, "vkFreeDescriptorSets", f"pDescriptorSets[{k}]")
            if s.pool is not p:
                raise VkError(f"pDescriptorSets[{k}] was not allocated from descriptorPool",
                              vuid="VUID-vkFreeDescriptorSets-pDescriptorSets-parent")
            p.sets.remove(s)
            drop_handle(p_sets[k])


@command
def vkUpdateDescriptorSets(device, n_writes, p_writes, n_copies, p_copies):
    call = "vkUpdateDescriptorSets"
    for k in range(n_writes):
        w = p_writes[k]
        s = get(w.dstSet, DescriptorSet, call, f"pDescriptorWrites[{k}].dstSet")
        binding, element = w.dstBinding, w.dstArrayElement
        for j in range(w.descriptorCount):
            while binding in s.layout.bindings and element >= s.layout.bindings[binding][1]:
                binding, element = binding + 1, 0      # consecutive bindings take the overflow
            if binding not in s.layout.bindings:
                raise VkError(f"pDescriptorWrites[{k}]: the set's layout has no binding {binding}",
                              vuid="VUID-VkWriteDescriptorSet-dstBinding-00315")
            want = s.layout.bindings[binding][0]
            if w.descriptorType != want:
                raise VkError(f"pDescriptorWrites[{k}]: descriptorType {DESCRIPTOR_NAMES.get(w.descriptorType)} but "
                              f"binding {binding} of the set's layout is {DESCRIPTOR_NAMES.get(want)}",
                              vuid="VUID-VkWriteDescriptorSet-descriptorType-00319")
            if w.descriptorType not in BUFFER_DESCRIPTORS:
                s.handles[(binding, element)] = _image_descriptor(s, binding, element, w, k, j)
                element += 1
                continue
            info = w.pBufferInfo[j]
            buf = get(info.buffer, Buffer, call, f"pDescriptorWrites[{k}].pBufferInfo[{j}].buffer")
            rng = buf.size - info.offset if info.range == VK["VK_WHOLE_SIZE"] else int(info.range)
            if info.offset + rng > buf.size:
                raise VkError(f"pDescriptorWrites[{k}].pBufferInfo[{j}]: offset {info.offset} + range {rng} passes "
                              f"the buffer's {buf.size} bytes", vuid="VUID-VkDescriptorBufferInfo-range-00342")
            s.buffers[(binding, element)] = (buf, int(info.offset), rng)
            element += 1
    for k in range(n_copies):
        c = p_copies[k]
        src = get(c.srcSet, DescriptorSet, call, f"pDescriptorCopies[{k}].srcSet")
        dst = get(c.dstSet, DescriptorSet, call, f"pDescriptorCopies[{k}].dstSet")
        for j in range(c.descriptorCount):
            key, to = (c.srcBinding, c.srcArrayElement + j), (c.dstBinding, c.dstArrayElement + j)
            for table, into in ((src.buffers, dst.buffers), (src.handles, dst.handles)):
                if key in table:
                    into[to] = table[key]


def _image_descriptor(s: DescriptorSet, binding: int, element: int, w, k: int, j: int):
    """What an image or sampler descriptor holds: emu's TextureView, Sampler, or both (a combined
    image sampler), checked; a binding's immutable sampler stays."""
    from ..memory.textures import CombinedImageSampler
    call, t, info = "vkUpdateDescriptorSets", w.descriptorType, w.pImageInfo[j]
    where = f"pDescriptorWrites[{k}].pImageInfo[{j}]"
    sampler = None
    if t in SAMPLER_DESCRIPTORS:
        fixed = s.layout.immutable.get(binding)
        sampler = fixed[element] if fixed else get(info.sampler, SamplerObject, call, f"{where}.sampler").sampler
        if t == VK["VK_DESCRIPTOR_TYPE_SAMPLER"]:
            return sampler
    view = get(info.imageView, ImageView, call, f"{where}.imageView")
    usage = IMAGE_DESCRIPTORS[t]
    if not view.image.usage & VK[usage]:
        raise VkError(f"{where}.imageView: a {DESCRIPTOR_NAMES[t]} descriptor needs an image made with {usage}",
                      vuid="VUID-VkWriteDescriptorSet-descriptorType-00337" if "SAMPLED" in usage else
                      "VUID-VkWriteDescriptorSet-descriptorType-00339")
    if isinstance(sampler, DeclinedSampler):       # refused by a dispatch that samples through it
        return sampler
    return view.view if sampler is None else CombinedImageSampler(view.view, sampler)


# ------------------------------------------------------------------ pipelines
class PipelineLayout:
    def __init__(self, sets: list, push_size: int):
        self.sets, self.push_size = sets, push_size


@command
def vkCreatePipelineLayout(device, p_info, p_alloc, p_layout):
    i = p_info[0]
    sets = [get(i.pSetLayouts[k], SetLayout, "vkCreatePipelineLayout", f"pCreateInfo->pSetLayouts[{k}]")
            for k in range(i.setLayoutCount)]
    push = max([i.pPushConstantRanges[k].offset + i.pPushConstantRanges[k].size
                for k in range(i.pushConstantRangeCount)] or [0])
    p_layout[0] = new_handle(PipelineLayout(sets, push))


class ShaderModule:
    def __init__(self, code: bytes, label: str):
        self.code, self.label = code, label
        self.by_device: dict = {}


@command
def vkCreateShaderModule(device, p_info, p_alloc, p_module):
    i = p_info[0]
    if i.codeSize % 4 or i.codeSize == 0:
        raise VkError(f"codeSize {i.codeSize} is not a positive multiple of 4",
                      vuid="VUID-VkShaderModuleCreateInfo-codeSize-08735")
    code = bytes(ffi.buffer(i.pCode, i.codeSize))
    if int.from_bytes(code[:4], "little") != 0x07230203:
        raise VkError("pCode does not start with SPIR-V's magic number 0x07230203",
                      vuid="VUID-VkShaderModuleCreateInfo-pCode-08738")
    import hashlib
    import os
    # named by its content: messages and traces of one module carry one name from run to run
    label = f"shader-{hashlib.sha256(code).hexdigest()[:8]}.spv"
    dump = os.environ.get("EMU_VK_DUMP_DIR")
    if dump:             # the program's modules, to run one alone: emu run DIR/shader-....spv
        from pathlib import Path
        Path(dump).mkdir(parents=True, exist_ok=True)
        (Path(dump) / label).write_bytes(code)
    p_module[0] = new_handle(ShaderModule(code, label))


class PipelineCache:
    pass


@command
def vkCreatePipelineCache(device, p_info, p_alloc, p_cache):
    p_cache[0] = new_handle(PipelineCache())


@command
def vkGetPipelineCacheData(device, cache, p_size, p_data):
    p_size[0] = 0          # emu keeps its compiled IR in its own cache (emu/jit/ircache.py)


@command
def vkMergePipelineCaches(device, dst, count, p_src):
    pass


class ComputePipeline:
    def __init__(self, emu_pipeline, layout: PipelineLayout, module: ShaderModule, dispatch_base: bool = False):
        self.emu, self.layout, self.module = emu_pipeline, layout, module
        self.dispatch_base = dispatch_base        # VK_PIPELINE_CREATE_DISPATCH_BASE_BIT
        from ..isa.ir import used_globals
        self.used = [g for g in used_globals(emu_pipeline.pipeline.module, emu_pipeline.pipeline.entry)
                     if g.space in ("storage", "uniform", "handle")]
        self._address_ops = None

    def address_ops(self) -> set:
        """The ops of the module that reach memory by device address (address_ptr, and block loads
        through a decode function, coop_load_tensor): found once, not at each dispatch."""
        if self._address_ops is None:
            from ..isa.ops import OP
            self._address_ops = {i.op for f in self.emu.pipeline.module.functions for i in f.walk()
                                 if i.op == OP.address_ptr or (i.op == OP.coop_load_tensor and "decode" in i.attrs)}
        return self._address_ops


def _spec_constants(spec, overrides) -> dict:
    """VkSpecializationInfo as {SpecId: value}, each read as its constant's type (`overrides`:
    the module's)."""
    if spec == ffi.NULL:
        return {}
    from ..numerics.dtypes import NP
    types = {o.id: o.type for o in overrides if o.id is not None}
    data = bytes(ffi.buffer(spec.pData, spec.dataSize)) if spec.dataSize else b""
    out = {}
    for k in range(spec.mapEntryCount):
        e = spec.pMapEntries[k]
        raw = data[e.offset:e.offset + e.size]
        t = types.get(e.constantID)
        if t is None:
            continue               # Vulkan allows ids the shader does not declare
        if t.name == "bool":
            out[str(e.constantID)] = bool(int.from_bytes(raw, "little"))
        else:
            out[str(e.constantID)] = np.frombuffer(raw[:t.size] if hasattr(t, "size") else raw, NP[t.name])[0].item()
    return out


def _create_pipeline(dev: Device, k: int, c) -> ComputePipeline:
    stage = c.stage
    module = get(stage.module, ShaderModule, "vkCreateComputePipelines", f"pCreateInfos[{k}].stage.module")
    layout = get(c.layout, PipelineLayout, "vkCreateComputePipelines", f"pCreateInfos[{k}].layout")
    sg = None
    req = icd.find(stage.pNext, "VkPipelineShaderStageRequiredSubgroupSizeCreateInfo")
    if req is not None:
        sg = int(req.requiredSubgroupSize)
        if sg not in dev.profile.subgroup_sizes:
            raise VkError(f"requiredSubgroupSize {sg} is not a size the device runs "
                          f"({', '.join(map(str, dev.profile.subgroup_sizes))})",
                          vuid="VUID-VkPipelineShaderStageRequiredSubgroupSizeCreateInfo-requiredSubgroupSize-02760")
    emu = dev.emu(sg)
    mod = module.by_device.get(id(emu))
    if mod is None:
        mod = module.by_device[id(emu)] = emu.create_shader_module(
            module.code.decode("utf-8", "surrogateescape"), file=module.label, cache=True)
    entry = ffi.string(stage.pName).decode()
    constants = _spec_constants(stage.pSpecializationInfo, mod.about("overrides"))
    pipe = emu.create_compute_pipeline(mod, entry_point=entry, constants=constants)
    flags = int(c.flags)
    flags2 = icd.find(c.pNext, "VkPipelineCreateFlags2CreateInfo")    # maintenance5 takes its flags there
    if flags2 is not None:
        flags = int(flags2.flags)
    return ComputePipeline(pipe, layout, module, bool(flags & VK["VK_PIPELINE_CREATE_DISPATCH_BASE_BIT"]))


@command
def vkCreateComputePipelines(device, cache, count, p_infos, p_alloc, p_pipelines):
    dev = _dev(device, "vkCreateComputePipelines")
    for k in range(count):
        p_pipelines[k] = 0
    for k in range(count):
        try:
            p_pipelines[k] = new_handle(_create_pipeline(dev, k, p_infos[k]))
        except VkError:
            raise
        except Exception as e:
            from ..errors import EmuError
            if not isinstance(e, EmuError):
                raise
            icd.report("vkCreateComputePipelines", f"pCreateInfos[{k}]: " + vulkan_hint(e).format())
            return VK["VK_ERROR_UNKNOWN"]


# the objects whose destruction only forgets them
destroyer("vkDestroyBuffer", Buffer, "buffer")
destroyer("vkDestroyBufferView", BufferView, "bufferView")
destroyer("vkDestroyDescriptorSetLayout", SetLayout, "descriptorSetLayout")
destroyer("vkDestroyPipelineLayout", PipelineLayout, "pipelineLayout")
destroyer("vkDestroyShaderModule", ShaderModule, "shaderModule")
destroyer("vkDestroyPipelineCache", PipelineCache, "pipelineCache")
destroyer("vkDestroyPipeline", ComputePipeline, "pipeline")
