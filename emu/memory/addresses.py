"""Device addresses of buffers (Vulkan's bufferDeviceAddress, SPIR-V's PhysicalStorageBuffer
pointers): one 64-bit address space per device.

`AddressSpace.address(buffer)` gives a buffer its address the first time it is asked for (what
vkGetBufferDeviceAddress returns: emu's Vulkan device calls it through
`emu.api.Device.buffer_device_address`); the address never changes while the buffer lives and is
never given to another buffer after it, so a pointer kept past its buffer's life is a bad address,
not another buffer's bytes. Addresses start at 4 GiB (an address cut to 32 bits is no address),
each aligned to 256 bytes with at least 64 KiB of unmapped addresses after each buffer (running off
a buffer's end faults instead of reading the next one).

For a dispatch, `AddressTable` lays the live addressed buffers out in one region (their bytes
copied in, and back after the dispatch), and turns each invocation's address into an offset in
it, checking that the bytes accessed lie in one buffer: an address outside every buffer, an
access running past a buffer's end or a misaligned one is one clear error (`AddressFault`).
"""
from __future__ import annotations

import weakref

import numpy as np

from .memory import ROW_ALIGN, Region

DEVICE_MEMORY = ("device", "memory")     # the AddressTable's key among a dispatch's regions
BASE = 1 << 32          # the first buffer's address
ALIGN = 256             # every buffer's address is a multiple of this
GUARD = 1 << 16         # unmapped addresses after each buffer, at least


def _round_up(n: int, to: int) -> int:
    return -(-n // to) * to


class AddressSpace:
    """The device addresses of one device's buffers (any object with `size` and a uint8 `data`)."""

    def __init__(self):
        self._next = BASE
        self._of: dict[int, tuple[int, weakref.ref]] = {}     # id(buffer) -> (address, buffer)

    def address(self, buffer) -> int:
        """The buffer's device address: fixed on the first call, never reused."""
        held = self._of.get(id(buffer))
        if held is not None and held[1]() is buffer:
            return held[0]
        addr = self._next
        self._next = _round_up(addr + max(int(buffer.size), 1) + GUARD, ALIGN)
        self._of[id(buffer)] = (addr, weakref.ref(buffer, lambda _r, k=id(buffer): self._of.pop(k, None)))
        return addr

    def live(self) -> list[tuple[int, object]]:
        """(address, buffer) of every buffer that has an address and still lives, by address."""
        out = [(a, ref()) for a, ref in self._of.values()]
        return sorted(((a, b) for a, b in out if b is not None), key=lambda x: x[0])

    def has_addresses(self) -> bool:
        return any(ref() is not None for _, ref in self._of.values())


class AddressFault(Exception):
    """An invocation's access at a device address that no buffer holds (whole)."""

    def __init__(self, message: str, lanes: np.ndarray, hint: str):
        super().__init__(message)
        self.message, self.lanes, self.hint = message, lanes, hint


class AddressTable:
    """The live addressed buffers of a dispatch, laid out in one region of kind 'buffer'."""

    def __init__(self, entries: list[tuple[int, object]]):
        self.buffers = [b for _, b in entries]
        self.starts = np.array([a for a, _ in entries], np.uint64)
        self.sizes = np.array([int(b.size) for b in self.buffers], np.uint64)
        places, at = [], 0
        for b in self.buffers:                       # each at a row-aligned offset of the region
            places.append(at)
            at = _round_up(at + int(b.size), ROW_ALIGN)
        self.places = np.array(places, np.int64)
        data = np.zeros((1, max(at, ROW_ALIGN)), np.uint8)
        for b, p in zip(self.buffers, places):
            data[0, p:p + b.size] = b.data[: b.size]
        self.region = Region("<device memory>", "buffer", 1, data.shape[1], data=data, space="storage")
        self.bound: dict = {}      # (group, binding) -> the device address of the buffer bound there

    def view(self, buffer) -> np.ndarray | None:
        """The buffer's bytes in the region (row form, for its binding to share), or None."""
        for b, p in zip(self.buffers, self.places):
            if b is buffer and buffer is not None:
                n = _round_up(max(int(b.size), 1), ROW_ALIGN)
                return self.region.data[:, p:p + n]
        return None

    def address_of(self, buffer) -> int | None:
        for b, a in zip(self.buffers, self.starts):
            if b is buffer:
                return int(a)
        return None

    def write_back(self):
        for b, p in zip(self.buffers, self.places):
            b.data[: b.size] = self.region.data[0, p:p + b.size]

    def offsets(self, addr: np.ndarray, nbytes: int, mask: np.ndarray, align: int = 1) -> np.ndarray:
        """Each active lane's offset in the region of the `nbytes` at `addr`; raises AddressFault
        naming the first lane whose bytes no single buffer holds, or whose address is not a
        multiple of `align`."""
        addr = np.broadcast_to(np.asarray(addr, np.uint64), mask.shape)
        k = np.searchsorted(self.starts, addr, side="right").astype(np.int64) - 1
        kk = np.clip(k, 0, max(len(self.starts) - 1, 0))
        inside = (k >= 0) & (len(self.starts) > 0)
        if len(self.starts):
            rel = addr - self.starts[kk]
            inside &= (addr >= self.starts[kk]) & (rel + np.uint64(nbytes) <= self.sizes[kk])
        else:
            rel = np.zeros(mask.shape, np.uint64)
        if align > 1:              # the promise first: a misaligned address may also run past the end
            off = mask & (addr % np.uint64(align) != 0)
            if off.any():
                lane = int(np.flatnonzero(off)[0])
                raise AddressFault(f"device address {int(addr[lane]):#x} is not a multiple of {align}, the "
                                   f"alignment the shader promises (Aligned {align})", off,
                                   "align the address as the shader's Aligned memory operand says")
        bad = mask & ~inside
        if bad.any():
            lane = int(np.flatnonzero(bad)[0])
            raise AddressFault(self._why(int(addr[lane]), nbytes), bad,
                               "pass a buffer's device address (Device.buffer_device_address / "
                               "vkGetBufferDeviceAddress) plus an offset inside it")
        return np.where(mask, self.places[kk] + rel.astype(np.int64), 0)

    def _why(self, addr: int, nbytes: int) -> str:
        what = f"{nbytes} byte{'s' * (nbytes != 1)} at device address {addr:#x}"
        if not len(self.starts):
            return f"{what}: no buffer of the device has a device address"
        k = int(np.searchsorted(self.starts, np.uint64(addr), side="right")) - 1
        if k >= 0 and addr < int(self.starts[k]) + int(self.sizes[k]) + GUARD:     # in it, or just after
            end = int(self.starts[k]) + int(self.sizes[k])
            return (f"{what} run past the end of the buffer at {int(self.starts[k]):#x} "
                    f"({int(self.sizes[k])} bytes, ending at {end:#x})")
        return f"{what}: no buffer holds that address (the device's buffers: {self._ranges()})"

    def _ranges(self) -> str:
        parts = [f"{int(a):#x}..{int(a) + int(s):#x}" for a, s in zip(self.starts[:4], self.sizes[:4])]
        return ", ".join(parts) + (f" and {len(self.starts) - 4} more" if len(self.starts) > 4 else "")
