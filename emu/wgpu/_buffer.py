"""Buffers: device memory, mapping, and the emulator's view of the bytes."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidArgument
from ._compat import binding_bases
from ._common import GPUObjectBase, _BU, _MM, _flag_value, _round_up, _usage_names, _validation
from ._promise import GPUPromise


def padded_row(data) -> np.ndarray:
    """A copy of the bytes as one row padded with zeros to a multiple of 16 (at least 16): the
    shape the executor reads a binding in."""
    data = np.frombuffer(data, np.uint8) if isinstance(data, (bytes, bytearray)) else data
    row = np.zeros((1, max(16, _round_up(data.size, 16))), np.uint8)
    row[0, :data.size] = data
    return row


class GPUBuffer(GPUObjectBase, *binding_bases("GPUBuffer")):
    """Device memory: ``size`` bytes (kept in a numpy byte array, padded to 16)."""

    def __init__(self, label, device, size: int, usage: int, mapped_at_creation: bool):
        super().__init__(label, device)
        self._size = size
        self._usage = usage
        self._data = np.zeros(max(16, _round_up(size, 16)), np.uint8)
        self._destroyed = False
        self._mapped_views: list = []
        if mapped_at_creation:
            self._map_state = "mapped"
            self._mapped = (0, size, _MM.WRITE)
        else:
            self._map_state = "unmapped"
            self._mapped = (0, 0, 0)

    size = property(lambda self: self._size, doc="The size in bytes.")
    usage = property(lambda self: self._usage, doc="The usage flags (an int).")
    map_state = property(lambda self: self._map_state, doc="'unmapped', 'pending' or 'mapped'.")

    def _check_range(self, offset, size):
        mapped = self._mapped[2] != 0
        if offset is None:
            offset = self._mapped[0] if mapped else 0
        else:
            offset = int(offset)
        if size is None:
            size = (self._mapped[1] if mapped else self._size) - offset
        else:
            size = int(size)
        if offset < 0:
            raise InvalidArgument("Mapped offset must not be smaller than zero.")
        if offset % 8:
            raise InvalidArgument("Mapped offset must be a multiple of 8.")
        if size < 1:
            raise InvalidArgument("Mapped size must be larger than zero.")
        if size % 4:
            raise InvalidArgument("Mapped size must be a multiple of 4.")
        if offset + size > self._size:
            raise InvalidArgument("Mapped range must not extend beyond total buffer size.")
        return offset, size

    def map_sync(self, mode, offset: int = 0, size: int | None = None) -> None:
        """Sync version of `map_async()`."""
        return self.map_async(mode, offset, size).sync_wait()

    def map_async(self, mode, offset: int = 0, size: int | None = None) -> GPUPromise:
        """Map a range for reading (MapMode.READ) or writing (MapMode.WRITE); done at once."""
        if isinstance(mode, str):
            mode = "READ" if mode == "READ_NOSYNC" else mode
        mode = _flag_value(_MM, mode, "MapMode")
        offset, size = self._check_range(offset, size)
        if self._map_state != "unmapped":
            return GPUPromise("buffer.map", error=RuntimeError(
                f"Can only map a buffer if its currently unmapped, not {self._map_state!r}"))
        what = f"{self._describe()}.map_async({'READ' if mode == _MM.READ else 'WRITE' if mode == _MM.WRITE else mode})"
        if mode not in (_MM.READ, _MM.WRITE):
            raise _validation(f"{what}: the mode must be exactly one of MapMode.READ and MapMode.WRITE")
        need = _BU.MAP_READ if mode == _MM.READ else _BU.MAP_WRITE
        if not self._usage & need:
            raise _validation(f"{what}: the buffer's usage {_usage_names(self._usage)} does not include "
                              f"{_usage_names(need)}",
                              hint="copy into a MAP_READ|COPY_DST staging buffer first, or use "
                                   "device.queue.read_buffer(buffer)" if mode == _MM.READ else
                                   "use device.queue.write_buffer(), or a MAP_WRITE|COPY_SRC staging buffer")
        if self._destroyed:
            raise _validation(f"{what}: the buffer is destroyed")
        self._map_state = "mapped"
        self._mapped = (offset, offset + size, mode)
        self._mapped_views = []
        return GPUPromise("buffer.map", None)

    def unmap(self) -> None:
        if self._map_state != "mapped":
            raise RuntimeError("Can only unmap a buffer if its currently mapped.")
        self._map_state = "unmapped"
        self._mapped = (0, 0, 0)
        for m in self._mapped_views:
            try:
                m.release()
            except Exception:
                pass
        self._mapped_views = []

    def _mapped_range(self, offset, size, mode_name, what):
        if self._map_state != "mapped":
            raise RuntimeError(f"Can only {what} a buffer if its mapped.")
        offset, size = self._check_range(offset, size)
        if offset < self._mapped[0] or offset + size > self._mapped[1]:
            raise InvalidArgument(f"The range for buffer {what}ing is not contained in the currently mapped range.")
        return offset, size

    def read_mapped(self, buffer_offset: int | None = None, size: int | None = None, *, copy: bool = True):
        """The mapped bytes as a memoryview (a copy unless ``copy=False``)."""
        if self._map_state != "mapped":
            raise RuntimeError("Can only read from a buffer if its mapped.")
        if not self._mapped[2] & _MM.READ:
            raise RuntimeError("Can only read from a buffer if its mapped in read mode.")
        offset, size = self._check_range(buffer_offset, size)
        if offset < self._mapped[0] or offset + size > self._mapped[1]:
            raise InvalidArgument("The range for buffer reading is not contained in the currently mapped range.")
        if copy:
            return memoryview(bytearray(self._data[offset:offset + size].tobytes())).cast("B")
        view = memoryview(self._data[offset:offset + size]).toreadonly()
        self._mapped_views.append(view)
        return view

    def write_mapped(self, data, buffer_offset: int | None = None) -> None:
        """Write ``data`` (buffer protocol) into the mapped range."""
        if self._map_state != "mapped":
            raise RuntimeError("Can only write to a buffer if its mapped.")
        if not self._mapped[2] & _MM.WRITE:
            raise RuntimeError("Can only write from a buffer if its mapped in write mode.")
        m = memoryview(data).cast("B")
        size = (m.nbytes + 3) & ~3
        offset, size = self._check_range(buffer_offset, size)
        if offset < self._mapped[0] or offset + size > self._mapped[1]:
            raise InvalidArgument("The range for buffer writing is not contained in the currently mapped range.")
        self._data[offset:offset + m.nbytes] = np.frombuffer(m, np.uint8)

    def _experimental_get_mapped_range(self, buffer_offset=None, size=None):
        """A writable memoryview on the mapped bytes (as wgpu-py's experimental method); it
        becomes unusable at unmap."""
        if self._map_state != "mapped":
            raise RuntimeError("Can only write to a buffer if its mapped.")
        offset, size = self._check_range(buffer_offset, size)
        if offset < self._mapped[0] or offset + size > self._mapped[1]:
            raise InvalidArgument("The range for buffer writing is not contained in the currently mapped range.")
        view = memoryview(self._data[offset:offset + size])
        self._mapped_views.append(view)
        return view

    def destroy(self) -> None:
        if self._map_state == "mapped":
            self.unmap()
        self._destroyed = True

    # the emulator's access
    def _view(self, offset: int, size: int, writable: bool):
        """The bytes [offset, offset+size) as a row the executor can use in place (padded to 16
        bytes), and a write-back function (None when the row is a view into this buffer)."""
        padded = max(16, _round_up(size, 16))
        if offset % 16 == 0 and offset + padded <= self._data.size:
            return self._data[offset:offset + padded].reshape(1, -1), None
        row = padded_row(self._data[offset:offset + size])

        def write_back():
            self._data[offset:offset + size] = row[0, :size]
        return row, (write_back if writable else None)

    @property
    def emu_bytes(self) -> np.ndarray:
        """The buffer's bytes (a numpy uint8 view; emu extension, for debugging)."""
        return self._data[:self._size]


# wgpu-py's deprecated name for map_sync
GPUBuffer.map = GPUBuffer.map_sync
