"""Command encoders, compute passes and the commands they record."""
from __future__ import annotations

import sys

from typing import Sequence

from ..errors import EmuError, HostError, InvalidArgument
from ..isa.ir import PUSH_CONSTANTS
from ._compat import binding_bases
from ._bindings import GPUBindGroup
from ._buffer import GPUBuffer, padded_row
from ._common import GPUObjectBase, _BU, _from_emu, _get, _internal, _unsupported, _usage_names, _validation
from . import _textures
from ._pipeline import GPUComputePipeline, _binding_type, _min_size


class GPUCommandBuffer(GPUObjectBase, *binding_bases("GPUCommandBuffer")):
    def __init__(self, label, device, commands: list):
        super().__init__(label, device)
        self._commands = commands
        self._submitted = False


class _Cmd:
    def buffers(self):
        return ()

    def describe(self) -> str:
        return type(self).__name__


class _Copy(_Cmd):
    def __init__(self, src, so, dst, do, size):
        self.src, self.so, self.dst, self.do, self.size = src, so, dst, do, size

    def buffers(self):
        return (self.src, self.dst)

    def describe(self):
        return "copy_buffer_to_buffer"

    def run(self, device):
        if self.size:
            self.dst._data[self.do:self.do + self.size] = self.src._data[self.so:self.so + self.size]


class _Clear(_Cmd):
    def __init__(self, buf, offset, size):
        self.buf, self.offset, self.size = buf, offset, size

    def buffers(self):
        return (self.buf,)

    def describe(self):
        return "clear_buffer"

    def run(self, device):
        self.buf._data[self.offset:self.offset + self.size] = 0


class _Dispatch(_Cmd):
    def __init__(self, pipeline: GPUComputePipeline, bindings: dict, grid=None, indirect=None):
        self.pipeline, self.bindings, self.grid, self.indirect = pipeline, bindings, grid, indirect

    def buffers(self):
        out = [b for b, _, _ in self.bindings.values() if isinstance(b, GPUBuffer)]
        if self.indirect is not None:
            out.append(self.indirect[0])
        return out

    def describe(self):
        return ("dispatch_workgroups_indirect" if self.indirect is not None else "dispatch_workgroups") + \
            f" of pipeline '{self.pipeline.label}'" * bool(self.pipeline.label)

    def run(self, device):
        from ..memory.memory import Region
        grid = self.grid
        if self.indirect is not None:
            buf, off = self.indirect
            grid = tuple(int(v) for v in buf._data[off:off + 12].view("<u4"))
            limit = device._limits["max-compute-workgroups-per-dimension"]
            if any(v > limit for v in grid):
                return       # WebGPU: an indirect dispatch beyond the limit does nothing
        if 0 in grid:
            return
        p = self.pipeline
        regions, write_backs = {}, []
        for g in p._used + ([p._immediate] if p._immediate is not None else []):
            key = (g.group, g.binding)
            buf, off, size = self.bindings[key]
            if g.space == "handle":          # a texture (view) or sampler: emu's own, checked against the type
                regions[key] = _textures.bind_handle(g, buf)
                continue
            if key == PUSH_CONSTANTS:        # the pass's immediate data, as set when it was recorded
                regions[key] = Region(g.name, "buffer", 1, len(buf), data=padded_row(buf), binding=key,
                                      access=g.access, space=g.space)
                continue
            row, wb = buf._view(off, size, writable=g.space == "storage" and g.access != "read")
            regions[key] = Region(g.name, "buffer", 1, size, data=row, binding=key, access=g.access, space=g.space)
            if wb is not None:
                write_backs.append(wb)
        try:
            for w in p._emu.pipeline.dispatch(grid, regions):     # out-of-bounds sites, once each
                print(w.format({p._module._file: p._module._code}), file=sys.stderr)
        except EmuError as e:
            kind = "GPUValidationError" if isinstance(e, HostError) else "GPUInternalError"
            raise _from_emu(e, {p._module._file: p._module._code}, kind) from None
        except Exception as e:
            raise _internal(e, {p._module._file: p._module._code}) from e
        finally:
            for wb in write_backs:
                wb()


class _TexelCopy(_Cmd):
    """copy_buffer_to_texture / copy_texture_to_buffer, run at submit."""

    def __init__(self, what, buf, layout, tex, level, origin, size, to_texture):
        self.what, self.buf, self.layout, self.tex = what, buf, layout, tex
        self.level, self.origin, self.size, self.to_texture = level, origin, size, to_texture

    def buffers(self):
        return [self.buf]

    def describe(self):
        return self.what

    def run(self, device):
        if self.to_texture:
            _textures.write(self.tex, self.level, self.origin, self.size, self.buf._data, self.layout,
                            self.what, aligned=True)
        else:
            _textures.read(self.tex, self.level, self.origin, self.size, self.layout, self.what,
                           aligned=True, out=self.buf._data)


class _TextureCopy(_Cmd):
    """copy_texture_to_texture, run at submit."""

    def __init__(self, *region):
        self.region = region

    def describe(self):
        return "copy_texture_to_texture"

    def run(self, device):
        _textures.copy_texels(*self.region)


class _DebugCommands:
    """WebGPU's GPUDebugCommandsMixin, shared by the command and compute pass encoders: debug
    groups and markers only label captures in a GPU debugger, which emu has none of."""

    def push_debug_group(self, group_label: str) -> None:
        pass

    def pop_debug_group(self) -> None:
        pass

    def insert_debug_marker(self, marker_label: str) -> None:
        pass


class GPUCommandEncoder(GPUObjectBase, _DebugCommands, *binding_bases("GPUCommandEncoder")):
    """Records copies, clears and compute passes into a GPUCommandBuffer."""

    def __init__(self, label, device):
        super().__init__(label, device)
        self._commands: list = []
        self._error: Exception | None = None
        self._state = "open"                 # 'open', 'locked' (a pass is recording), 'finished'

    def _fail(self, message, **kw):
        if self._error is None:
            self._error = _validation(f"{self._describe()}: {message}", **kw)

    def _check_open(self, what: str) -> bool:
        if self._state == "locked":
            self._fail(f"{what} while a compute pass is recording",
                       hint="call pass.end() before recording more commands on the encoder")
            return False
        if self._state == "finished":
            self._fail(f"{what} after finish()")
            return False
        return True

    def begin_compute_pass(self, *, label: str = "", timestamp_writes=None) -> "GPUComputePassEncoder":
        if timestamp_writes is not None:
            _unsupported("begin_compute_pass(timestamp_writes=...)", "timestamp queries")
        self._check_open("begin_compute_pass")
        p = GPUComputePassEncoder(label, self._device, self)
        if self._state == "open":
            self._state = "locked"
        return p

    def begin_render_pass(self, **kwargs):
        _unsupported("encoder.begin_render_pass()", "render passes")

    def clear_buffer(self, buffer: GPUBuffer, offset: int = 0, size: int | None = None) -> None:
        offset = int(offset)
        if offset % 4 != 0:
            raise InvalidArgument("offset must be a multiple of 4")
        if size is not None:
            size = int(size)
            if size <= 0:
                raise InvalidArgument("size must be > 0")
            if size % 4 != 0:
                raise InvalidArgument("size must be a multiple of 4")
            if offset + size > buffer.size:
                raise InvalidArgument("buffer size out of range")
        else:
            if offset > buffer.size:
                raise InvalidArgument("offset is too large")
            size = buffer.size - offset
        if not self._check_open("clear_buffer"):
            return
        if not buffer.usage & _BU.COPY_DST:
            self._fail(f"clear_buffer({buffer._describe()}): the buffer's usage {_usage_names(buffer.usage)} "
                       f"does not include COPY_DST")
            return
        self._commands.append(_Clear(buffer, offset, size))

    def copy_buffer_to_buffer(self, source: GPUBuffer, source_offset: int, destination: GPUBuffer,
                              destination_offset: int, size: int | None = None) -> None:
        if source_offset % 4 != 0:
            raise InvalidArgument("source_offset must be a multiple of 4")
        if destination_offset % 4 != 0:
            raise InvalidArgument("destination_offset must be a multiple of 4")
        if size is not None and size % 4 != 0:
            raise InvalidArgument("size must be a multiple of 4")
        if not isinstance(source, GPUBuffer):
            raise TypeError("copy_buffer_to_buffer() source must be a GPUBuffer.")
        if not isinstance(destination, GPUBuffer):
            raise TypeError("copy_buffer_to_buffer() destination must be a GPUBuffer.")
        so, do = int(source_offset), int(destination_offset)
        n = source.size - so if size is None else int(size)
        if not self._check_open("copy_buffer_to_buffer"):
            return
        what = f"copy_buffer_to_buffer({source._describe()}, {so}, {destination._describe()}, {do}, {n})"
        if not source.usage & _BU.COPY_SRC:
            self._fail(f"{what}: the source's usage {_usage_names(source.usage)} does not include COPY_SRC")
        elif not destination.usage & _BU.COPY_DST:
            self._fail(f"{what}: the destination's usage {_usage_names(destination.usage)} does not include COPY_DST")
        elif so < 0 or n < 0 or so + n > source.size:
            self._fail(f"{what}: the copy range does not fit in the source ({source.size} bytes)")
        elif do < 0 or do + n > destination.size:
            self._fail(f"{what}: the copy range does not fit in the destination ({destination.size} bytes)")
        elif source is destination:
            self._fail(f"{what}: the source and the destination are the same buffer")
        else:
            self._commands.append(_Copy(source, so, destination, do, n))

    def copy_buffer_to_texture(self, source, destination, copy_size) -> None:
        self._texel_copy("copy_buffer_to_texture", source, destination, copy_size, to_texture=True)

    def copy_texture_to_buffer(self, source, destination, copy_size) -> None:
        self._texel_copy("copy_texture_to_buffer", destination, source, copy_size, to_texture=False)

    def _texel_copy(self, what, buffer_info, texture_info, copy_size, to_texture: bool):
        if not self._check_open(what):
            return
        buf = _get(buffer_info, "buffer")
        if not isinstance(buf, GPUBuffer):
            raise TypeError(f"{what}: 'buffer' must be an emu GPUBuffer, got {type(buf).__name__}")
        tex, level, origin, size = _textures._copy_region(texture_info, copy_size, what)
        need_b, need_t = (_BU.COPY_SRC, _textures._TU.COPY_DST) if to_texture else (_BU.COPY_DST, _textures._TU.COPY_SRC)
        if not buf.usage & need_b:
            self._fail(f"{what}: {buf._describe()} needs usage {_usage_names(need_b)}")
            return
        if not tex.usage & need_t:
            self._fail(f"{what}: {tex._describe()} needs usage {'COPY_DST' if to_texture else 'COPY_SRC'}")
            return
        self._commands.append(_TexelCopy(what, buf, buffer_info, tex, level, origin, size, to_texture))

    def copy_texture_to_texture(self, source, destination, copy_size) -> None:
        what = "copy_texture_to_texture"
        if not self._check_open(what):
            return
        src, sl, so, size = _textures._copy_region(source, copy_size, what, multisampled_ok=True)
        dst, dl, do, _ = _textures._copy_region(destination, copy_size, what, multisampled_ok=True)
        why = _textures.check_texture_copy(src, sl, so, dst, dl, do, size, what)
        if why is not None:
            self._fail(why)
            return
        self._commands.append(_TextureCopy(src, sl, so, dst, dl, do, size))

    def resolve_query_set(self, *args, **kwargs):
        _unsupported("encoder.resolve_query_set()", "query sets")

    def finish(self, *, label: str = "") -> GPUCommandBuffer:
        if self._state == "locked":
            self._fail("finish() while a compute pass is still recording", hint="call pass.end() first")
        elif self._state == "finished":
            self._fail("finish() was called before")
        self._state = "finished"
        if self._error is not None:
            err, self._error = self._error, None
            raise err
        return GPUCommandBuffer(label, self._device, self._commands)


class GPUComputePassEncoder(GPUObjectBase, _DebugCommands, *binding_bases("GPUComputePassEncoder")):
    """Records dispatches (bind groups and pipeline as set when each dispatch is recorded)."""

    def __init__(self, label, device, encoder: GPUCommandEncoder):
        super().__init__(label, device)
        self._encoder = encoder
        self._pipeline: GPUComputePipeline | None = None
        self._groups: dict[int, tuple] = {}          # index -> (bind group, dynamic offsets)
        self._immediates = bytearray(device._limits["max-immediate-size"])
        self._immediates_set = bytearray(len(self._immediates) // 4)      # 1 per 4-byte word set
        self._ended = False

    def _fail(self, message, **kw):
        self._encoder._fail(f"compute pass{' ' + repr(self._label) if self._label else ''}: {message}", **kw)

    def _recording(self, what) -> bool:
        if self._ended:
            self._fail(f"{what} after end()")
            return False
        return True

    def set_pipeline(self, pipeline: GPUComputePipeline) -> None:
        if not isinstance(pipeline, GPUComputePipeline):
            raise TypeError(f"set_pipeline() needs an emu GPUComputePipeline, got {type(pipeline).__name__}")
        if self._recording("set_pipeline"):
            self._pipeline = pipeline

    def set_bind_group(self, index: int, bind_group: GPUBindGroup, dynamic_offsets_data: Sequence[int] = (),
                       dynamic_offsets_data_start: int | None = None,
                       dynamic_offsets_data_length: int | None = None) -> None:
        if dynamic_offsets_data_start is not None or dynamic_offsets_data_length is not None:
            if dynamic_offsets_data_start is None or dynamic_offsets_data_length is None:
                raise InvalidArgument("Dynamic offsets start and length must be both set or both None.")
            if dynamic_offsets_data_start < 0:
                raise InvalidArgument("Dynamic offsets start must be non-negative.")
            if dynamic_offsets_data_length < 0:
                raise InvalidArgument("Dynamic offsets length must be non-negative.")
            dynamic_offsets_data = dynamic_offsets_data[
                dynamic_offsets_data_start:dynamic_offsets_data_start + dynamic_offsets_data_length]
        offsets = [int(o) for o in dynamic_offsets_data]
        if not self._recording("set_bind_group"):
            return
        index = int(index)
        if index >= self._device._limits["max-bind-groups"]:
            self._fail(f"set_bind_group({index}): the index is not below max-bind-groups "
                       f"({self._device._limits['max-bind-groups']})")
            return
        if bind_group is None:
            self._groups.pop(index, None)
            return
        if not isinstance(bind_group, GPUBindGroup):
            raise TypeError(f"set_bind_group() needs an emu GPUBindGroup, got {type(bind_group).__name__}")
        dyn = [e for e in bind_group._layout._entries.values() if e.dynamic]
        if len(offsets) != len(dyn):
            self._fail(f"set_bind_group({index}): {len(offsets)} dynamic offsets given, the bind group's layout "
                       f"has {len(dyn)} bindings with has_dynamic_offset")
            return
        for e, o in zip(dyn, offsets):
            align = self._device._limits["min-uniform-buffer-offset-alignment" if e.type == "uniform"
                                         else "min-storage-buffer-offset-alignment"]
            buf, off, size = bind_group._bound[e.binding]
            if o % align:
                self._fail(f"set_bind_group({index}): dynamic offset {o} of binding {e.binding} is not a "
                           f"multiple of {align}")
                return
            if off + o + size > buf.size:
                self._fail(f"set_bind_group({index}): binding {e.binding} with dynamic offset {o} reaches past "
                           f"the end of {buf._describe()} ({off} + {o} + {size} > {buf.size})")
                return
        self._groups[index] = (bind_group, dict(zip((e.binding for e in dyn), offsets)))

    def _state(self, what):
        p = self._pipeline
        if p is None:
            self._fail(f"{what}: no pipeline is set", hint="call pass.set_pipeline(pipeline) first")
            return None
        sources = {p._module._file: p._module._code}
        layouts = p._layout._bind_group_layouts
        for i, bgl in enumerate(layouts):
            if i not in self._groups:
                users = sorted((g for g in p._used if g.group == i), key=lambda g: g.binding)
                self._fail(f"{what}: no bind group is set at index {i}, which the pipeline's layout has"
                           + (f" (the shader uses '{users[0].name}' there)" if users else ""),
                           loc=users[0].loc if users else None, sources=sources,
                           hint=f"call pass.set_bind_group({i}, bind_group) with a bind group made from "
                                f"pipeline.get_bind_group_layout({i})")
                return None
            bg = self._groups[i][0]
            if not bg._layout._compatible(bgl):
                why = (" (it was made from another pipeline's layout='auto' layout; such layouts are "
                       "only compatible with their own pipeline)" if bg._layout._exclusive is not bgl._exclusive
                       else "")
                self._fail(f"{what}: the bind group at index {i} ({bg._describe()}) does not match the "
                           f"pipeline's bind group layout {i}{why}",
                           hint=f"create it with layout=pipeline.get_bind_group_layout({i})")
                return None
        bindings = {}
        for g in p._used:
            bg, dyn = self._groups[g.group]
            buf, off, size = bg._bound[g.binding]
            if g.space == "handle":
                bindings[(g.group, g.binding)] = (buf, None, None)
                continue
            off += dyn.get(g.binding, 0)
            need = _min_size(g)
            if size < need:
                self._fail(f"{what}: '{g.name}' (@group({g.group}) @binding({g.binding})) is bound to {size} bytes "
                           f"of {buf._describe()}; its type {g.type} needs at least {need}",
                           loc=g.loc, sources=sources, hint="bind a larger range (or buffer)")
                return None
            bindings[(g.group, g.binding)] = (buf, off, size)
        if p._immediate is not None:
            g, need = p._immediate, _min_size(p._immediate)
            unset = [4 * i for i in range(need // 4) if not self._immediates_set[i]]
            if unset:
                self._fail(f"{what}: '{g.name}' (var<immediate>, {g.type}) reads {need} bytes of immediate data; "
                           f"bytes from {unset[0]} were not set in this pass", loc=g.loc, sources=sources,
                           hint=f"call pass.set_immediates(0, data) with its {need} bytes before dispatching")
                return None
            bindings[PUSH_CONSTANTS] = (bytes(self._immediates[:need]), None, None)
        # usage scope: a buffer written as storage must not be used read-only in the same dispatch
        usages: dict[int, list] = {}
        for i in range(len(layouts)):
            bg, _ = self._groups[i]
            for b, (buf, _, _) in bg._bound.items():
                if not isinstance(buf, GPUBuffer):
                    continue
                usages.setdefault(id(buf), []).append((bg._layout._entries[b].type, f"@group({i}) @binding({b})", buf))
        for uses in usages.values():
            kinds = {u[0] for u in uses}
            if "storage" in kinds and len(kinds) > 1:
                w = next(u for u in uses if u[0] == "storage")
                r = next(u for u in uses if u[0] != "storage")
                self._fail(f"{what}: {w[2]._describe()} is bound as a writable storage buffer ({w[1]}) and as "
                           f"'{r[0]}' ({r[1]}) in the same dispatch; WebGPU forbids mixing writable and "
                           f"read-only usages of one buffer in a dispatch",
                           hint="use separate buffers, or bind both as read_write storage")
                return None
        return p, bindings

    def dispatch_workgroups(self, workgroup_count_x: int, workgroup_count_y: int = 1,
                            workgroup_count_z: int = 1) -> None:
        grid = (int(workgroup_count_x), int(workgroup_count_y), int(workgroup_count_z))
        what = f"dispatch_workgroups{grid}"
        if not self._recording(what):
            return
        st = self._state(what)
        if st is None:
            return
        limit = self._device._limits["max-compute-workgroups-per-dimension"]
        if any(v < 0 for v in grid) or any(v > limit for v in grid):
            self._fail(f"{what}: each workgroup count must be from 0 to max-compute-workgroups-per-dimension ({limit})")
            return
        self._encoder._commands.append(_Dispatch(st[0], st[1], grid=grid))

    def dispatch_workgroups_indirect(self, indirect_buffer: GPUBuffer, indirect_offset: int) -> None:
        off = int(indirect_offset)
        what = f"dispatch_workgroups_indirect({indirect_buffer._describe()}, {off})"
        if not self._recording(what):
            return
        st = self._state(what)
        if st is None:
            return
        if not indirect_buffer.usage & _BU.INDIRECT:
            self._fail(f"{what}: the buffer's usage {_usage_names(indirect_buffer.usage)} does not include INDIRECT",
                       hint="create it with usage including wgpu.BufferUsage.INDIRECT")
            return
        if off % 4 or off < 0 or off + 12 > indirect_buffer.size:
            self._fail(f"{what}: the offset must be a multiple of 4 and offset + 12 must fit in the buffer "
                       f"({indirect_buffer.size} bytes)")
            return
        for g in st[0]._used:
            buf, _, _ = st[1][(g.group, g.binding)]
            if buf is indirect_buffer and _binding_type(g) == "storage":
                self._fail(f"{what}: the indirect buffer is also bound as writable storage ('{g.name}') in the "
                           f"same dispatch", loc=g.loc, sources={st[0]._module._file: st[0]._module._code})
                return
        self._encoder._commands.append(_Dispatch(st[0], st[1], indirect=(indirect_buffer, off)))

    def end(self) -> None:
        if self._ended:
            self._fail("end() was called before")
            return
        self._ended = True
        if self._encoder._state == "locked":
            self._encoder._state = "open"

    def set_immediates(self, range_offset: int, data, data_offset: int = 0, data_size: int | None = None) -> None:
        """Bytes data[data_offset:data_offset + data_size] into the pass's immediate data at
        range_offset (wgpu-py's byte offsets); dispatches read them as the shader's var<immediate>."""
        view = memoryview(data).cast("B")
        data_offset = int(data_offset)
        size = view.nbytes - data_offset if data_size is None else int(data_size)
        if not (0 <= data_offset <= view.nbytes and 0 <= size <= view.nbytes - data_offset):
            raise ValueError(f"set_immediates: data_offset {data_offset} and data_size {size} do not lie within "
                             f"the data's {view.nbytes} bytes")
        offset, limit = int(range_offset), len(self._immediates)
        what = f"set_immediates({offset}, <{size} bytes>)"
        if not self._recording(what):
            return
        if offset % 4 or size % 4 or offset < 0 or offset + size > limit:
            self._fail(f"{what}: the offset and size must be multiples of 4 and offset + size at most the "
                       f"device limit max-immediate-size ({limit})")
            return
        self._immediates[offset:offset + size] = view[data_offset:data_offset + size]
        self._immediates_set[offset // 4:(offset + size) // 4] = b"\x01" * (size // 4)

    def write_timestamp(self, *args, **kwargs):
        _unsupported("pass.write_timestamp()", "timestamp queries")


# wgpu-py's deprecated names for *_sync methods
