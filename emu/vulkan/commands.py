"""Command pools and buffers, and the queue that runs them; fences, semaphores, events, queries.

A command buffer records Python closures; vkQueueSubmit runs them in order, at once, so every
submission has finished when the call returns (fences and semaphores are signalled then). A
dispatch binds each storage or uniform variable the pipeline uses to a row view of its buffer's
memory: the shader works on the very bytes the host mapped."""
from __future__ import annotations

import sys
import time

import numpy as np

from . import icd
from .icd import VK, Dispatchable, VkError, command, destroyer, drop_handle, ffi, get, new_handle
from .objects import Buffer, ComputePipeline, DescriptorSet, Device, PipelineLayout, Queue, DYNAMIC, Untraced, vulkan_hint


class CommandPool:
    def __init__(self):
        self.buffers: list = []


@command
def vkCreateCommandPool(device, p_info, p_alloc, p_pool):
    if p_info.queueFamilyIndex != 0:
        raise VkError(f"queueFamilyIndex {p_info.queueFamilyIndex}: the device has one queue family (0)",
                      vuid="VUID-vkCreateCommandPool-queueFamilyIndex-01937")
    p_pool[0] = new_handle(CommandPool())


@command
def vkDestroyCommandPool(device, pool, p_alloc):
    if pool:
        for cb in get(pool, CommandPool, "vkDestroyCommandPool", "commandPool").buffers:
            cb.forget()
        drop_handle(pool)


@command
def vkResetCommandPool(device, pool, flags):
    for cb in get(pool, CommandPool, "vkResetCommandPool", "commandPool").buffers:
        cb.reset()


@command
def vkTrimCommandPool(device, pool, flags):
    get(pool, CommandPool, "vkTrimCommandPool", "commandPool")


class CommandBuffer(Dispatchable):
    c_type = "VkCommandBuffer"

    def __init__(self, device: Device, pool: CommandPool):
        self.device, self.pool = device, pool
        self._make_handle()
        self.reset()

    def reset(self):
        self.commands: list = []
        self.state = "initial"
        self.pipeline: ComputePipeline | None = None
        self.sets: dict = {}                  # set index -> (DescriptorSet, dynamic offsets)
        self.push = bytearray(256)

    def record(self, call: str, fn) -> None:
        if self.state != "recording":
            raise VkError("the command buffer is not recording (call vkBeginCommandBuffer first)",
                          vuid=f"VUID-{call}-commandBuffer-recording")
        self.commands.append((call, fn))


def _cb(cb, call) -> CommandBuffer:
    return get(cb, CommandBuffer, call, "commandBuffer")


@command
def vkAllocateCommandBuffers(device, p_info, p_buffers):
    dev = get(device, Device, "vkAllocateCommandBuffers", "device")
    pool = get(p_info.commandPool, CommandPool, "vkAllocateCommandBuffers", "pAllocateInfo->commandPool")
    for k in range(p_info.commandBufferCount):
        cb = CommandBuffer(dev, pool)
        pool.buffers.append(cb)
        p_buffers[k] = cb.handle


@command
def vkFreeCommandBuffers(device, pool, count, p_buffers):
    p = get(pool, CommandPool, "vkFreeCommandBuffers", "commandPool")
    for k in range(count):
        if p_buffers[k] != ffi.NULL:
            cb = _cb(p_buffers[k], "vkFreeCommandBuffers")
            if cb in p.buffers:
                p.buffers.remove(cb)
            cb.forget()


@command
def vkBeginCommandBuffer(cb, p_info):
    c = _cb(cb, "vkBeginCommandBuffer")
    c.reset()
    c.state = "recording"


@command
def vkEndCommandBuffer(cb):
    c = _cb(cb, "vkEndCommandBuffer")
    if c.state != "recording":
        raise VkError("the command buffer is not recording", vuid="VUID-vkEndCommandBuffer-commandBuffer-00059")
    c.state = "executable"


@command
def vkResetCommandBuffer(cb, flags):
    _cb(cb, "vkResetCommandBuffer").reset()


# ------------------------------------------------------------------ binding state
@command
def vkCmdBindPipeline(cb, bind_point, pipeline):
    c = _cb(cb, "vkCmdBindPipeline")
    if bind_point != VK["VK_PIPELINE_BIND_POINT_COMPUTE"]:
        raise VkError("emu's device has compute pipelines only", vuid="VUID-vkCmdBindPipeline-pipelineBindPoint-00777")
    c.pipeline = get(pipeline, ComputePipeline, "vkCmdBindPipeline", "pipeline")


@command
def vkCmdBindDescriptorSets(cb, bind_point, layout, first, count, p_sets, n_dynamic, p_dynamic):
    c = _cb(cb, "vkCmdBindDescriptorSets")
    get(layout, PipelineLayout, "vkCmdBindDescriptorSets", "layout")
    dyn = [p_dynamic[k] for k in range(n_dynamic)]
    for k in range(count):
        s = get(p_sets[k], DescriptorSet, "vkCmdBindDescriptorSets", f"pDescriptorSets[{k}]")
        n = sum(cnt for t, cnt in s.layout.bindings.values() if t in DYNAMIC)
        c.sets[first + k] = (s, dyn[:n])
        dyn = dyn[n:]


@command
def vkCmdPushConstants(cb, layout, stages, offset, size, p_values):
    c = _cb(cb, "vkCmdPushConstants")
    pl = get(layout, PipelineLayout, "vkCmdPushConstants", "layout")
    if offset + size > pl.push_size:
        raise VkError(f"offset {offset} + size {size} passes the layout's push constant ranges ({pl.push_size} bytes)",
                      vuid="VUID-vkCmdPushConstants-offset-01795")
    c.push[offset:offset + size] = ffi.buffer(p_values, size)


# ------------------------------------------------------------------ dispatch
def _regions(c: CommandBuffer, pipe: ComputePipeline, call: str):
    """{(set, binding): Region} over the bound sets' memory, and the write-backs of copies."""
    from ..isa.ir import PUSH_CONSTANTS
    from ..memory.memory import Region
    regions, write_backs, in_memory = {}, [], {}
    for g in pipe.used:
        key = (g.group, g.binding)
        if key == PUSH_CONSTANTS:
            n = max(16, pipe.layout.push_size + (-pipe.layout.push_size) % 16)
            row = np.frombuffer(bytes(c.push[:n].ljust(n, b"\0")), np.uint8).copy().reshape(1, -1)
            regions[key] = Region(g.name, "buffer", 1, pipe.layout.push_size, data=row, binding=key,
                                  access=g.access, space=g.space)
            continue
        bound = c.sets.get(g.group)
        if bound is None:
            raise VkError(f"the pipeline's shader uses set {g.group} ('{g.name}', binding {g.binding}) but no "
                          f"descriptor set is bound there", vuid=f"VUID-{call}-None-08600")
        s, dyn = bound
        if g.space == "handle":              # an image or sampler (images.py)
            regions[key] = _handle(s, g, key, regions.get(key), call)
            continue
        entry = s.buffers.get((g.binding, 0))
        if entry is None:
            raise VkError(f"set {g.group} binding {g.binding} ('{g.name}') was never written "
                          f"(vkUpdateDescriptorSets)", vuid=f"VUID-{call}-None-08114")
        buf, off, rng = entry
        if s.layout.bindings[g.binding][0] in DYNAMIC:
            order = sorted(b for b, (t, _) in s.layout.bindings.items() if t in DYNAMIC)
            off += dyn[order.index(g.binding)] if order.index(g.binding) < len(dyn) else 0
        data = buf.bytes(call, f"the buffer of set {g.group} binding {g.binding}")
        mem, start = buf.memory, buf.offset + off
        padded = max(16, (rng + 15) // 16 * 16)
        writable = g.space == "storage" and g.access != "read"
        if start % 16 == 0 and start + padded <= mem.data.size:
            row = mem.data[start:start + padded].reshape(1, -1)          # the memory itself
            in_memory[key] = (mem, start, padded)
        else:
            row = np.zeros((1, padded), np.uint8)
            row[0, :rng] = data[off:off + rng]
            if writable:
                write_backs.append((mem.data, start, row, rng))
        regions[key] = Region(g.name, "buffer", 1, rng, data=row, binding=key, access=g.access, space=g.space)
    return regions, write_backs, in_memory


def _handle(s: DescriptorSet, g, key, bound, call: str):
    """The emu TextureView or Sampler a texture or sampler variable binds, checked against its
    type as `emu run` checks --texture and --sampler (a combined image sampler's two variables
    each take their half)."""
    from ..errors import HostError
    from ..memory.textures import bind_handle, combine
    value = s.handles.get((g.binding, 0))
    if value is None:
        raise VkError(f"set {g.group} binding {g.binding} ('{g.name}') was never written (vkUpdateDescriptorSets)",
                      vuid=f"VUID-{call}-None-08114")
    from .objects import DeclinedSampler
    if isinstance(value, DeclinedSampler):
        raise VkError(f"set {g.group} binding {g.binding} ('{g.name}'): its sampler has {value.message}",
                      "VK_ERROR_FEATURE_NOT_PRESENT", value.vuid)
    t = s.layout.bindings[g.binding][0]
    from ..isa.types import TextureType
    from .objects import DESCRIPTOR_NAMES
    need = ("STORAGE_IMAGE",) if isinstance(g.type, TextureType) and g.type.kind == "storage" else \
        ("SAMPLED_IMAGE", "COMBINED_IMAGE_SAMPLER") if isinstance(g.type, TextureType) else \
        ("SAMPLER", "COMBINED_IMAGE_SAMPLER")
    if DESCRIPTOR_NAMES.get(t) not in need:
        raise VkError(f"set {g.group} binding {g.binding} ('{g.name}', {g.type}) is a {DESCRIPTOR_NAMES.get(t)} "
                      f"descriptor; the shader's variable needs {' or '.join(need)}",
                      vuid="VUID-VkComputePipelineCreateInfo-layout-07990")
    try:
        return combine(bound, bind_handle(g, value))
    except HostError as e:
        raise VkError(f"set {g.group} binding {g.binding}: {e.message}" + (f" ({e.hint})" if e.hint else ""),
                      vuid=f"VUID-{call}-None-08600") from None


def _device_memory(dev: Device, pipe: ComputePipeline, regions: dict, in_memory: dict):
    """For a shader that reaches memory by device address: the addressed allocations laid out
    for the dispatch (emu.memory.addresses.AddressTable), each binding in one of them a view of
    the table's copy, so both ways reach the same bytes; None for other shaders."""
    ops = pipe.address_ops()
    if not ops:
        return None
    from ..isa.ops import OP
    from ..memory.addresses import DEVICE_MEMORY, AddressTable
    from ..memory.memory import Region
    if OP.coop_load_tensor in ops:
        for key, (mem, _, _) in in_memory.items():     # block loads decode at the bound buffers' addresses
            if regions[key].space == "storage":
                dev.addresses.address(mem)
    if not ops or not dev.addresses.has_addresses():
        return None
    table = AddressTable(dev.addresses.live())
    regions[DEVICE_MEMORY] = table
    for key, (mem, start, padded) in in_memory.items():
        whole = table.view(mem)
        if whole is not None and start + padded <= whole.shape[1]:
            r = regions[key]
            regions[key] = Region(r.name, "buffer", 1, r.nbytes, data=whole[:, start:start + padded],
                                  binding=r.binding, access=r.access, space=r.space)
    return table


def _run_dispatch(c: CommandBuffer, pipe: ComputePipeline, grid, call: str, base=(0, 0, 0)):
    if 0 in grid:
        return
    regions, write_backs, in_memory = _regions(c, pipe, call)
    table = _device_memory(c.device, pipe, regions, in_memory)
    p = pipe.emu.pipeline
    files = {pipe.emu.module.file: pipe.emu.module.source}
    from ..errors import EmuError
    from ..jit import notice
    tracer = _tracer(pipe, grid)
    try:
        with notice.for_profile(c.device.profile.name):
            for w in p.dispatch(tuple(int(v) for v in grid), regions, base=base):     # out-of-bounds sites, once each
                sys.stderr.write(vulkan_hint(w).format(files) + "\n")
    except EmuError as e:
        raise VkError(vulkan_hint(e).format(files), "VK_ERROR_DEVICE_LOST") from None
    finally:
        if tracer is not None:
            tracer.end()
            p.opts.tracer = Untraced()
        if table is not None:
            table.write_back()
        for mem, start, row, n in write_backs:
            mem[start:start + n] = row[0, :n]


_TRACED = [0]


def _tracer(pipe: ComputePipeline, grid):
    """EMU_VK_TRACE_DIR=DIR: emu's trace of each of the first EMU_VK_TRACE_LIMIT (default 16)
    dispatches, DIR/NNNN-SHADER.jsonl, in the format of `emu run --trace`; EMU_VK_TRACE_OPS,
    _WORKGROUPS, _SUBGROUPS, _LANES select as --trace-ops etc. do (default: coop,barrier)."""
    import os
    folder = os.environ.get("EMU_VK_TRACE_DIR")
    limit = os.environ.get("EMU_VK_TRACE_LIMIT", "16")
    if not folder or _TRACED[0] >= (int(limit) if limit.isdigit() else 16):
        return None
    from pathlib import Path
    from ..trace.select import Selection, SelectionError
    from ..trace.tracer import Tracer
    try:
        sel = Selection.parse(**{k: os.environ.get(f"EMU_VK_TRACE_{k.upper()}")
                                 for k in ("ops", "workgroups", "subgroups", "lanes")})
    except SelectionError as e:
        raise VkError(f"EMU_VK_TRACE_*: {e.message}" + (f" ({e.hint})" if e.hint else ""),
                      "VK_ERROR_INITIALIZATION_FAILED") from None
    Path(folder).mkdir(parents=True, exist_ok=True)
    _TRACED[0] += 1
    p = pipe.emu.pipeline
    t = Tracer(str(Path(folder) / f"{_TRACED[0]:04d}-{Path(pipe.module.label).stem}.jsonl"), selection=sel)
    p.opts.tracer = t
    t._open(p, tuple(int(v) for v in grid), file=pipe.module.label)
    return t


def _record_dispatch(cb, call, grid_of, base=(0, 0, 0)):
    c = _cb(cb, call)
    pipe = c.pipeline
    if pipe is None:
        raise VkError("no compute pipeline is bound", vuid=f"VUID-{call}-None-08606")
    snapshot = CommandBuffer.__new__(CommandBuffer)          # the binding state at this command
    snapshot.device, snapshot.sets, snapshot.push = c.device, dict(c.sets), bytes(c.push)
    c.record(call, lambda: _run_dispatch(snapshot, pipe, grid_of(), call, base))


@command
def vkCmdDispatch(cb, x, y, z):
    _record_dispatch(cb, "vkCmdDispatch", lambda: (x, y, z))


@command
def vkCmdDispatchBase(cb, bx, by, bz, x, y, z):
    base = (int(bx), int(by), int(bz))
    if any(base):
        c = _cb(cb, "vkCmdDispatchBase")
        pipe = c.pipeline
        if pipe is not None and not pipe.dispatch_base:
            raise VkError(f"base workgroup {base} is not (0, 0, 0) but the bound pipeline was not created with "
                          f"VK_PIPELINE_CREATE_DISPATCH_BASE_BIT", vuid="VUID-vkCmdDispatchBase-baseGroupX-00427")
        limit = c.device.profile.limits["max-compute-workgroups-per-dimension"]
        for axis, (b, n) in enumerate(zip(base, (x, y, z))):
            if b + n > limit:
                raise VkError(f"base {b} + groupCount {n} on axis {'XYZ'[axis]} passes "
                              f"maxComputeWorkGroupCount ({limit})",
                              vuid=f"VUID-vkCmdDispatchBase-groupCount{'XYZ'[axis]}-00424")
    _record_dispatch(cb, "vkCmdDispatchBase", lambda: (x, y, z), base)


@command
def vkCmdSetDeviceMask(cb, mask):
    _cb(cb, "vkCmdSetDeviceMask")
    if mask != 1:           # a device group of one device (VK_KHR_device_group, core in 1.1)
        raise VkError(f"deviceMask 0x{mask:x}: the device group has one device (mask 0x1)",
                      vuid="VUID-vkCmdSetDeviceMask-deviceMask-00108")


@command
def vkGetDeviceGroupPeerMemoryFeatures(device, heap, local, remote, p_features):
    raise VkError(f"devices {local} and {remote}: the device group has one device, with no peers",
                  vuid="VUID-vkGetDeviceGroupPeerMemoryFeatures-localDeviceIndex-00692")


@command
def vkCmdDispatchIndirect(cb, buffer, offset):
    buf = get(buffer, Buffer, "vkCmdDispatchIndirect", "buffer")
    if offset % 4 or offset + 12 > buf.size:
        raise VkError(f"offset {offset}: the 12 bytes of VkDispatchIndirectCommand must lie in the buffer's "
                      f"{buf.size} bytes at a multiple of 4", vuid="VUID-vkCmdDispatchIndirect-offset-00407")
    _record_dispatch(cb, "vkCmdDispatchIndirect",
                     lambda: tuple(buf.bytes("vkCmdDispatchIndirect", "buffer")[offset:offset + 12].view("<u4")))


# ------------------------------------------------------------------ transfers
@command
def vkCmdCopyBuffer(cb, src, dst, count, p_regions):
    c = _cb(cb, "vkCmdCopyBuffer")
    s = get(src, Buffer, "vkCmdCopyBuffer", "srcBuffer")
    d = get(dst, Buffer, "vkCmdCopyBuffer", "dstBuffer")
    regions = [(int(p_regions[k].srcOffset), int(p_regions[k].dstOffset), int(p_regions[k].size)) for k in range(count)]
    for k, (so, do, n) in enumerate(regions):
        if so + n > s.size or do + n > d.size:
            raise VkError(f"pRegions[{k}] ({n} bytes from {so} to {do}) passes the end of a buffer "
                          f"(src {s.size}, dst {d.size} bytes)", vuid="VUID-vkCmdCopyBuffer-size-00115")

    def run():
        sb, db = s.bytes("vkCmdCopyBuffer", "srcBuffer"), d.bytes("vkCmdCopyBuffer", "dstBuffer")
        for so, do, n in regions:
            src_bytes = sb[so:so + n]       # (a copy first only where the two ranges may overlap)
            db[do:do + n] = src_bytes.copy() if np.may_share_memory(src_bytes, db[do:do + n]) else src_bytes
    c.record("vkCmdCopyBuffer", run)


@command
def vkCmdCopyBuffer2(cb, p_info):
    i = p_info[0]
    regions = ffi.new("VkBufferCopy[]", i.regionCount)
    for k in range(i.regionCount):
        r = i.pRegions[k]
        regions[k].srcOffset, regions[k].dstOffset, regions[k].size = r.srcOffset, r.dstOffset, r.size
    vkCmdCopyBuffer(cb, i.srcBuffer, i.dstBuffer, i.regionCount, regions)


@command
def vkCmdFillBuffer(cb, buffer, offset, size, value):
    c = _cb(cb, "vkCmdFillBuffer")
    b = get(buffer, Buffer, "vkCmdFillBuffer", "dstBuffer")
    n = (b.size - offset) // 4 * 4 if size == VK["VK_WHOLE_SIZE"] else int(size)
    if offset % 4 or n % 4 or offset + n > b.size:
        raise VkError(f"dstOffset {offset} and size {n} must be multiples of 4 within the buffer's {b.size} bytes",
                      vuid="VUID-vkCmdFillBuffer-size-00027")
    word = np.array([value], "<u4").view(np.uint8)
    c.record("vkCmdFillBuffer",
             lambda: b.bytes("vkCmdFillBuffer", "dstBuffer")[offset:offset + n].reshape(-1, 4).__setitem__(
                 slice(None), word))


@command
def vkCmdUpdateBuffer(cb, buffer, offset, size, p_data):
    c = _cb(cb, "vkCmdUpdateBuffer")
    b = get(buffer, Buffer, "vkCmdUpdateBuffer", "dstBuffer")
    if offset + size > b.size or size > 65536 or size % 4:
        raise VkError(f"dataSize {size} at dstOffset {offset}: at most 65536 bytes, a multiple of 4, within the "
                      f"buffer's {b.size} bytes", vuid="VUID-vkCmdUpdateBuffer-dataSize-00037")
    data = np.frombuffer(bytes(ffi.buffer(p_data, size)), np.uint8)
    c.record("vkCmdUpdateBuffer", lambda: b.bytes("vkCmdUpdateBuffer", "dstBuffer")[offset:offset + size]
             .__setitem__(slice(None), data))


# ------------------------------------------------------------------ synchronisation commands
# Commands run one after another at submit, so a barrier has nothing to order.
@command
def vkCmdPipelineBarrier(cb, src, dst, flags, nm, pm, nb, pb, ni, pi):
    _cb(cb, "vkCmdPipelineBarrier")


@command
def vkCmdPipelineBarrier2(cb, p_info):
    _cb(cb, "vkCmdPipelineBarrier2")


class Event:
    def __init__(self):
        self.set = False


@command
def vkCreateEvent(device, p_info, p_alloc, p_event):
    p_event[0] = new_handle(Event())


@command
def vkGetEventStatus(device, event):
    e = get(event, Event, "vkGetEventStatus", "event")
    return VK["VK_EVENT_SET" if e.set else "VK_EVENT_RESET"]


@command
def vkSetEvent(device, event):
    get(event, Event, "vkSetEvent", "event").set = True


@command
def vkResetEvent(device, event):
    get(event, Event, "vkResetEvent", "event").set = False


def _record_event(cb, event, call, value):
    e = get(event, Event, call, "event")
    _cb(cb, call).record(call, lambda: setattr(e, "set", value))


@command
def vkCmdSetEvent(cb, event, stage):
    _record_event(cb, event, "vkCmdSetEvent", True)


@command
def vkCmdSetEvent2(cb, event, p_dep):
    _record_event(cb, event, "vkCmdSetEvent2", True)


@command
def vkCmdResetEvent(cb, event, stage):
    _record_event(cb, event, "vkCmdResetEvent", False)


@command
def vkCmdResetEvent2(cb, event, stage):
    _record_event(cb, event, "vkCmdResetEvent2", False)


@command
def vkCmdWaitEvents(cb, n, p_events, src, dst, nm, pm, nb, pb, ni, pi):
    _cb(cb, "vkCmdWaitEvents")


@command
def vkCmdWaitEvents2(cb, n, p_events, p_deps):
    _cb(cb, "vkCmdWaitEvents2")


# ------------------------------------------------------------------ queries
class QueryPool:
    def __init__(self, kind: int, count: int):
        self.kind, self.values = kind, [None] * count


@command
def vkCreateQueryPool(device, p_info, p_alloc, p_pool):
    if p_info.queryType != VK["VK_QUERY_TYPE_TIMESTAMP"]:
        raise VkError("emu's device has timestamp queries only", "VK_ERROR_FEATURE_NOT_PRESENT",
                      "VUID-VkQueryPoolCreateInfo-queryType-00791")
    p_pool[0] = new_handle(QueryPool(p_info.queryType, p_info.queryCount))


def _query(pool, first, count, call) -> QueryPool:
    q = get(pool, QueryPool, call, "queryPool")
    if first + count > len(q.values):
        raise VkError(f"queries {first}..{first + count - 1} pass the pool's {len(q.values)}",
                      vuid=f"VUID-{call}-firstQuery-09436")
    return q


@command
def vkResetQueryPool(device, pool, first, count):
    q = _query(pool, first, count, "vkResetQueryPool")
    q.values[first:first + count] = [None] * count


@command
def vkCmdResetQueryPool(cb, pool, first, count):
    q = _query(pool, first, count, "vkCmdResetQueryPool")
    _cb(cb, "vkCmdResetQueryPool").record("vkCmdResetQueryPool",
                                          lambda: q.values.__setitem__(slice(first, first + count), [None] * count))


def _timestamp(cb, pool, query, call):
    q = _query(pool, query, 1, call)
    _cb(cb, call).record(call, lambda: q.values.__setitem__(query, time.perf_counter_ns()))


@command
def vkCmdWriteTimestamp(cb, stage, pool, query):
    _timestamp(cb, pool, query, "vkCmdWriteTimestamp")


@command
def vkCmdWriteTimestamp2(cb, stage, pool, query):
    _timestamp(cb, pool, query, "vkCmdWriteTimestamp2")


@command
def vkGetQueryPoolResults(device, pool, first, count, size, p_data, stride, flags):
    q = _query(pool, first, count, "vkGetQueryPoolResults")
    wide = flags & VK["VK_QUERY_RESULT_64_BIT"]
    avail = flags & VK["VK_QUERY_RESULT_WITH_AVAILABILITY_BIT"]
    out = ffi.cast("uint8_t *", p_data)
    ready = True
    for k in range(count):
        v = q.values[first + k]
        ready &= v is not None
        words = ([v or 0] if v is not None or flags & VK["VK_QUERY_RESULT_PARTIAL_BIT"] else []) + \
            ([int(v is not None)] if avail else [])
        if v is None and not avail and not flags & VK["VK_QUERY_RESULT_PARTIAL_BIT"]:
            continue
        raw = np.array(words if v is not None else [0] + words[-1:] if avail else [0],
                       "<u8" if wide else "<u4").tobytes()
        ffi.memmove(out + k * stride, raw, len(raw))
    return None if ready else VK["VK_NOT_READY"]


# ------------------------------------------------------------------ fences and semaphores
class Fence:
    def __init__(self, signalled: bool):
        self.signalled = signalled


@command
def vkCreateFence(device, p_info, p_alloc, p_fence):
    p_fence[0] = new_handle(Fence(bool(p_info.flags & VK["VK_FENCE_CREATE_SIGNALED_BIT"])))


@command
def vkResetFences(device, count, p_fences):
    for k in range(count):
        get(p_fences[k], Fence, "vkResetFences", f"pFences[{k}]").signalled = False


@command
def vkGetFenceStatus(device, fence):
    return VK["VK_SUCCESS" if get(fence, Fence, "vkGetFenceStatus", "fence").signalled else "VK_NOT_READY"]


@command
def vkWaitForFences(device, count, p_fences, wait_all, timeout):
    states = [get(p_fences[k], Fence, "vkWaitForFences", f"pFences[{k}]").signalled for k in range(count)]
    done = all(states) if wait_all else any(states)
    return None if done else VK["VK_TIMEOUT"]      # nothing runs later: an unsignalled fence stays so


class Semaphore:
    def __init__(self, timeline: bool, value: int):
        self.timeline, self.value = timeline, value


@command
def vkCreateSemaphore(device, p_info, p_alloc, p_sem):
    t = icd.find(p_info.pNext, "VkSemaphoreTypeCreateInfo")
    timeline = t is not None and t.semaphoreType == VK["VK_SEMAPHORE_TYPE_TIMELINE"]
    p_sem[0] = new_handle(Semaphore(timeline, int(t.initialValue) if timeline else 0))


@command
def vkGetSemaphoreCounterValue(device, sem, p_value):
    p_value[0] = get(sem, Semaphore, "vkGetSemaphoreCounterValue", "semaphore").value


@command
def vkSignalSemaphore(device, p_info):
    s = get(p_info.semaphore, Semaphore, "vkSignalSemaphore", "pSignalInfo->semaphore")
    s.value = max(s.value, int(p_info.value))


@command
def vkWaitSemaphores(device, p_info, timeout):
    i = p_info[0]
    states = [get(i.pSemaphores[k], Semaphore, "vkWaitSemaphores", f"pWaitInfo->pSemaphores[{k}]").value
              >= i.pValues[k] for k in range(i.semaphoreCount)]
    done = any(states) if i.flags & VK["VK_SEMAPHORE_WAIT_ANY_BIT"] else all(states)
    return None if done else VK["VK_TIMEOUT"]


# ------------------------------------------------------------------ the queue
def _execute(q: Queue, cbs: list, call: str) -> None:
    for cb in cbs:
        if cb.state != "executable":
            raise VkError("a command buffer in the submission is not executable (recorded and ended)",
                          vuid=f"VUID-{call}-pCommandBuffers-00070")
        for name, fn in cb.commands:
            try:
                fn()
            except VkError as e:
                raise VkError(f"{name}: {e}", e.code, e.vuid) from None


def _signal(sems: list) -> None:
    for s, value in sems:
        s.value = value if s.timeline else 1


@command
def vkQueueSubmit(queue, count, p_submits, fence):
    q = get(queue, Queue, "vkQueueSubmit", "queue")
    f = get(fence, Fence, "vkQueueSubmit", "fence", null_ok=True)
    for k in range(count):
        s = p_submits[k]
        tl = icd.find(s.pNext, "VkTimelineSemaphoreSubmitInfo")
        cbs = [_cb(s.pCommandBuffers[j], "vkQueueSubmit") for j in range(s.commandBufferCount)]
        _execute(q, cbs, "vkQueueSubmit")
        sig = []
        for j in range(s.signalSemaphoreCount):
            sem = get(s.pSignalSemaphores[j], Semaphore, "vkQueueSubmit", f"pSubmits[{k}].pSignalSemaphores[{j}]")
            value = tl.pSignalSemaphoreValues[j] if tl is not None and j < tl.signalSemaphoreValueCount else 1
            sig.append((sem, int(value)))
        _signal(sig)
    if f is not None:
        f.signalled = True


@command
def vkQueueSubmit2(queue, count, p_submits, fence):
    q = get(queue, Queue, "vkQueueSubmit2", "queue")
    f = get(fence, Fence, "vkQueueSubmit2", "fence", null_ok=True)
    for k in range(count):
        s = p_submits[k]
        cbs = [_cb(s.pCommandBufferInfos[j].commandBuffer, "vkQueueSubmit2") for j in range(s.commandBufferInfoCount)]
        _execute(q, cbs, "vkQueueSubmit2")
        _signal([(get(s.pSignalSemaphoreInfos[j].semaphore, Semaphore, "vkQueueSubmit2",
                      f"pSubmits[{k}].pSignalSemaphoreInfos[{j}].semaphore"), int(s.pSignalSemaphoreInfos[j].value))
                 for j in range(s.signalSemaphoreInfoCount)])
    if f is not None:
        f.signalled = True


@command
def vkQueueWaitIdle(queue):
    get(queue, Queue, "vkQueueWaitIdle", "queue")


@command
def vkCmdExecuteCommands(cb, count, p_buffers):
    c = _cb(cb, "vkCmdExecuteCommands")
    secondaries = [_cb(p_buffers[k], "vkCmdExecuteCommands") for k in range(count)]
    for k, s in enumerate(secondaries):
        if s.state != "executable":
            raise VkError(f"pCommandBuffers[{k}] is not executable (recorded and ended)",
                          vuid="VUID-vkCmdExecuteCommands-pCommandBuffers-00089")

    def run():
        for s in secondaries:
            for name, fn in s.commands:
                fn()
    c.record("vkCmdExecuteCommands", run)


# the objects whose destruction only forgets them
destroyer("vkDestroyEvent", Event, "event")
destroyer("vkDestroyQueryPool", QueryPool, "queryPool")
destroyer("vkDestroyFence", Fence, "fence")
destroyer("vkDestroySemaphore", Semaphore, "semaphore")
