"""The queue: runs command buffers, writes and reads buffers."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import InvalidArgument
from ._compat import binding_bases
from ._buffer import GPUBuffer
from ._commands import GPUCommandBuffer
from ._common import GPUObjectBase, _BU, _MM, _memoryview, _unsupported, _usage_names, _validation
from ._promise import GPUPromise
from . import _textures


class GPUQueue(GPUObjectBase, *binding_bases("GPUQueue")):
    """Runs command buffers on emu's virtual GPU, synchronously, in order."""

    def submit(self, command_buffers: Sequence) -> None:
        cbs = list(command_buffers)
        for i, cb in enumerate(cbs):
            if not isinstance(cb, GPUCommandBuffer):
                raise TypeError(f"command_buffers[{i}] is not an emu GPUCommandBuffer (got {type(cb).__name__})")
            if cb._submitted:
                raise _validation(f"queue.submit: command_buffers[{i}] ({cb._describe()}) was submitted "
                                  f"before; a command buffer can be submitted once",
                                  hint="encode the commands again (create_command_encoder ... finish) for each submit")
            for cmd in cb._commands:
                for buf in cmd.buffers():
                    if buf._map_state != "unmapped":
                        raise _validation(f"queue.submit: {buf._describe()} is used by {cmd.describe()} while it "
                                          f"is mapped", hint="call buffer.unmap() before submitting work that uses it")
                    if buf._destroyed:
                        raise _validation(f"queue.submit: {buf._describe()} is used by {cmd.describe()} but it "
                                          f"was destroyed")
        for cb in cbs:
            cb._submitted = True
            for cmd in cb._commands:
                cmd.run(self._device)

    def write_buffer(self, buffer: GPUBuffer, buffer_offset: int, data, data_offset: int = 0,
                     size: int | None = None) -> None:
        """Copy ``data`` into ``buffer`` at ``buffer_offset`` (before any later submit)."""
        m = _memoryview(data)
        nbytes = m.nbytes
        buffer_offset, data_offset = int(buffer_offset), int(data_offset)
        length = nbytes - data_offset if not size else int(size)
        if not 0 <= buffer_offset < buffer.size:
            raise InvalidArgument("Invalid buffer_offset")
        if not 0 <= data_offset < nbytes:
            raise InvalidArgument("Invalid data_offset")
        if not 0 <= length <= nbytes - data_offset:
            raise InvalidArgument("Invalid data_length")
        if not length <= buffer.size - buffer_offset:
            raise InvalidArgument("Invalid data_length")
        what = f"queue.write_buffer({buffer._describe()}, {buffer_offset}, data ({length} bytes))"
        if not buffer.usage & _BU.COPY_DST:
            raise _validation(f"{what}: the buffer's usage {_usage_names(buffer.usage)} does not include COPY_DST",
                              hint="create the buffer with usage including wgpu.BufferUsage.COPY_DST")
        if buffer_offset % 4 or length % 4:
            raise _validation(f"{what}: the offset and the size must be multiples of 4")
        if buffer._map_state != "unmapped":
            raise _validation(f"{what}: the buffer is mapped", hint="unmap it first")
        if buffer._destroyed:
            raise _validation(f"{what}: the buffer is destroyed")
        buffer._data[buffer_offset:buffer_offset + length] = np.frombuffer(m, np.uint8)[data_offset:data_offset + length]

    def read_buffer(self, buffer: GPUBuffer, buffer_offset: int = 0, size: int | None = None):
        """The buffer's bytes (a memoryview of a copy); the buffer needs COPY_SRC usage."""
        buffer_offset = int(buffer_offset)
        length = buffer.size - buffer_offset if not size else int(size)
        if not 0 <= buffer_offset < buffer.size:
            raise InvalidArgument("Invalid buffer_offset")
        if not length <= buffer.size - buffer_offset:
            raise InvalidArgument("Invalid data_length")
        enc = self._device.create_command_encoder()
        tmp = self._device.create_buffer(size=length, usage=_BU.COPY_DST | _BU.MAP_READ)
        enc.copy_buffer_to_buffer(buffer, buffer_offset, tmp, 0, length)
        self.submit([enc.finish()])
        tmp.map_sync(_MM.READ)
        data = tmp.read_mapped()
        tmp.destroy()
        return data

    def on_submitted_work_done_sync(self) -> None:
        """Returns at once: submitted work is done when submit returns."""
        return None

    def on_submitted_work_done_async(self) -> GPUPromise:
        return GPUPromise("on_submitted_work_done", None)

    def on_submitted_work_done(self):
        return self.on_submitted_work_done_sync()

    def write_texture(self, destination, data, data_layout, size) -> None:
        """Copy texels from ``data`` (laid out as ``data_layout`` says) into a texture region."""
        tex, level, origin, size = _textures._copy_region(destination, size, "queue.write_texture")
        if not tex.usage & _textures._TU.COPY_DST:
            raise _validation(f"queue.write_texture: {tex._describe()} needs usage COPY_DST")
        raw = np.frombuffer(_memoryview(data).cast("B"), np.uint8)
        _textures.write(tex, level, origin, size, raw, data_layout, "queue.write_texture", aligned=False)

    def read_texture(self, source, data_layout, size):
        """The texels of a texture region, laid out as ``data_layout`` says (emu: at once)."""
        tex, level, origin, size = _textures._copy_region(source, size, "queue.read_texture")
        if not tex.usage & _textures._TU.COPY_SRC:
            raise _validation(f"queue.read_texture: {tex._describe()} needs usage COPY_SRC")
        return memoryview(_textures.read(tex, level, origin, size, data_layout, "queue.read_texture",
                                         aligned=False)).cast("B")

    def copy_external_image_to_texture(self, *args, **kwargs):
        _unsupported("queue.copy_external_image_to_texture()", "textures")
