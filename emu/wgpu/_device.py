"""A device of emu's virtual GPU: the factory of every other object."""
from __future__ import annotations

import os
import re
from typing import Sequence

from ..errors import EmuError, InvalidArgument
from ._compat import binding_bases
from ._bindings import GPUBindGroup, GPUBindGroupLayout, GPUPipelineLayout, _LayoutEntry
from ._buffer import GPUBuffer
from ._commands import GPUCommandEncoder
from ._common import GPUObjectBase, _BU, _ENABLE_FEATURES, _SS, _flag_value, _from_emu, _get, _internal, _round_up, _subgroup_size, _unsupported, _usage_names, _validation
from ..isa.ir import PUSH_CONSTANTS
from ._pipeline import (GPUComputePipeline, _auto_layout, _check_constants, _check_immediate_size,
                        _check_layout_matches, _check_pipeline_limits, _min_size)
from ._promise import GPUPromise
from ._queue import GPUQueue
from ._shader import GPUShaderModule
from . import _textures


class GPUDevice(GPUObjectBase, *binding_bases("GPUDevice")):
    """A device of emu's virtual GPU: creates buffers, shader modules, pipelines and encoders."""

    def __init__(self, label, adapter, features: set, limits: dict):
        super().__init__(label, self)
        from ..api import Device
        self._adapter = adapter
        self._features = features
        self._limits = limits
        # EMU_BOUNDS=strict stops at the first out-of-bounds access (default: run it as WebGPU does)
        bounds = os.environ.get("EMU_BOUNDS", "").strip().lower() or "webgpu"
        steps = os.environ.get("EMU_MAX_STEPS", "").strip()
        self._emu = Device(adapter._profile, _subgroup_size(adapter._profile), bounds=bounds,
                           max_steps=int(steps) if steps else None, hints="cli")   # _from_emu rewrites them
        self._queue = GPUQueue("", self)
        self._destroyed = False

    features = property(lambda self: self._features, doc="The features enabled on this device.")
    limits = property(lambda self: self._limits, doc="The limits of this device.")
    queue = property(lambda self: self._queue, doc="The default GPUQueue.")
    adapter = property(lambda self: self._adapter)
    adapter_info = property(lambda self: self._adapter.info)

    @property
    def emu_device(self):
        """The underlying ``emu.Device`` (emu extension)."""
        return self._emu

    # -- buffers ------------------------------------------------------------------------------
    def create_buffer(self, *, label: str = "", size: int, usage, mapped_at_creation: bool = False) -> "GPUBuffer":
        usage = _flag_value(_BU, usage, "BufferUsage")
        size = int(size)
        where = f"device.create_buffer(label={label!r}, size={size}, usage={_usage_names(usage)})"
        if size < 0:
            raise _validation(f"{where}: the size must not be negative")
        if usage == 0:
            raise _validation(f"{where}: the usage must not be 0", hint="give e.g. wgpu.BufferUsage.STORAGE")
        if usage & ~0x3FF:
            raise _validation(f"{where}: unknown usage bits {usage & ~0x3FF:#x}")
        if usage & _BU.MAP_READ and usage & ~(_BU.MAP_READ | _BU.COPY_DST):
            raise _validation(f"{where}: a MAP_READ buffer can only be combined with COPY_DST",
                              hint="read results through a separate MAP_READ|COPY_DST staging buffer "
                                   "(copy_buffer_to_buffer), or use queue.read_buffer()")
        if usage & _BU.MAP_WRITE and usage & ~(_BU.MAP_WRITE | _BU.COPY_SRC):
            raise _validation(f"{where}: a MAP_WRITE buffer can only be combined with COPY_SRC",
                              hint="upload through a MAP_WRITE|COPY_SRC staging buffer, or use "
                                   "queue.write_buffer() / create_buffer_with_data()")
        if mapped_at_creation and size % 4:
            raise _validation(f"{where}: a buffer mapped at creation must have a size that is a multiple of 4")
        if size > self._limits["max-buffer-size"]:
            raise _validation(f"{where}: the size exceeds the device limit max-buffer-size "
                              f"({self._limits['max-buffer-size']})")
        return GPUBuffer(label, self, size, usage, bool(mapped_at_creation))

    def create_buffer_with_data(self, *, label: str = "", data, usage) -> "GPUBuffer":
        """A buffer holding ``data`` (anything with the buffer protocol), size rounded up to 4."""
        m = memoryview(data).cast("B")
        size = (m.nbytes + 3) & ~3
        buf = self.create_buffer(label=label, size=size, usage=usage, mapped_at_creation=True)
        buf.write_mapped(m)
        buf.unmap()
        return buf

    # -- shaders and pipelines --------------------------------------------------------------
    def create_shader_module(self, *, label: str = "", code, compilation_hints: Sequence = ()) -> "GPUShaderModule":
        if isinstance(code, (bytes, bytearray)):
            _unsupported("create_shader_module(code=bytes)", "SPIR-V shaders; give WGSL text")
        if not isinstance(code, str):
            raise TypeError("Shader code must be str for WGSL or GLSL, or bytes for SpirV.")
        if code.lstrip().startswith("#version ") and not any(s in code for s in ("@compute", "@vertex", "@fragment")):
            _unsupported("create_shader_module(code=GLSL)", "GLSL shaders; give WGSL text")
        file = label if label else "shader.wgsl"
        sources = {file: code}
        try:
            mod = self._emu.create_shader_module(code, file=file)
        except EmuError as e:
            raise _from_emu(e, sources) from None
        except Exception as e:
            raise _internal(e, sources) from e
        for ext in mod.ir.enables:
            need = _ENABLE_FEATURES.get(ext)
            if need and not any(n in self._features for n in need):
                raise _validation(
                    f"the shader enables '{ext}', which needs the device feature '{need[0]}', "
                    f"and the device was requested without it",
                    hint=f"adapter.request_device_sync(required_features=['{need[0]}']) "
                         f"(the adapter {'has' if need[0] in self._adapter.features else 'lacks'} it)",
                    sources=sources, loc=_enable_loc(code, ext, file))
        if "shader-f64" not in self._features:
            from ..isa.verify import f64_site
            loc = f64_site(mod.ir)
            if loc is not None:          # wgpu: the validator's missing capability FLOAT64
                raise _validation(
                    "the shader uses f64 (naga's 64-bit floats), which needs the device feature 'shader-f64', "
                    "and the device was requested without it",
                    hint="adapter.request_device_sync(required_features=['shader-f64']) "
                         f"(the adapter {'has' if 'shader-f64' in self._adapter.features else 'lacks'} it)",
                    sources=sources, loc=loc)
        return GPUShaderModule(label, self, mod, code, file)

    def create_bind_group_layout(self, *, label: str = "", entries: Sequence) -> "GPUBindGroupLayout":
        norm = {}
        for i, entry in enumerate(entries):
            binding = int(_get(entry, "binding"))
            visibility = _flag_value(_SS, _get(entry, "visibility", 0), "ShaderStage")
            if _get(entry, "external_texture") is not None:
                _unsupported(f"create_bind_group_layout(entries[{i}].external_texture)", "external textures")
            handle = _handle_layout(entry)
            if handle is not None:
                if binding in norm:
                    raise _validation(f"create_bind_group_layout: binding {binding} is given twice")
                norm[binding] = _LayoutEntry(binding, visibility, handle, False, 0)
                continue
            buf = _get(entry, "buffer")
            if buf is None:
                raise InvalidArgument("Bind group layout entry did not contain field 'buffer', 'sampler', "
                                 "'texture', nor 'storage_texture'")
            btype = _get(buf, "type", "uniform")
            if btype not in ("uniform", "storage", "read-only-storage"):
                raise _validation(f"create_bind_group_layout: entries[{i}].buffer.type {btype!r} is not "
                                  f"'uniform', 'storage' or 'read-only-storage'")
            if binding in norm:
                raise _validation(f"create_bind_group_layout: binding {binding} is given twice")
            if binding >= self._limits["max-bindings-per-bind-group"]:
                raise _validation(f"create_bind_group_layout: binding {binding} is not below the limit "
                                  f"max-bindings-per-bind-group ({self._limits['max-bindings-per-bind-group']})")
            norm[binding] = _LayoutEntry(binding, visibility, btype,
                                         bool(_get(buf, "has_dynamic_offset", False)),
                                         int(_get(buf, "min_binding_size", 0)))
        return GPUBindGroupLayout(label, self, norm)

    def create_pipeline_layout(self, *, label: str = "", bind_group_layouts: Sequence,
                               immediate_size: int = 0) -> "GPUPipelineLayout":
        layouts = list(bind_group_layouts)
        if len(layouts) > self._limits["max-bind-groups"]:
            raise _validation(f"create_pipeline_layout: {len(layouts)} bind group layouts; the device "
                              f"allows max-bind-groups = {self._limits['max-bind-groups']}")
        for i, bgl in enumerate(layouts):
            if bgl is None:
                layouts[i] = GPUBindGroupLayout("", self, {})
            elif not isinstance(bgl, GPUBindGroupLayout):
                raise TypeError(f"bind_group_layouts[{i}] is not an emu GPUBindGroupLayout "
                                f"(got {type(bgl).__name__}): objects of a real adapter do not mix with emu's")
        immediate_size = int(immediate_size)
        if self._adapter._flavor == "wgpu" and immediate_size and "immediates" not in self._features:
            raise _validation(f"create_pipeline_layout(immediate_size={immediate_size}): the device was "
                              f"created without the 'immediates' feature",
                              hint="request it: adapter.request_device_sync(required_features=['immediates'], "
                                   "required_limits={'max-immediate-size': N})")
        if immediate_size % 4 or not 0 <= immediate_size <= self._limits["max-immediate-size"]:
            raise _validation(f"create_pipeline_layout(immediate_size={immediate_size}): it must be a multiple "
                              f"of 4 from 0 to the device limit max-immediate-size "
                              f"({self._limits['max-immediate-size']})",
                              hint="raise the limit with required_limits={'max-immediate-size': N} when "
                                   "requesting the device" if immediate_size % 4 == 0 else None)
        return GPUPipelineLayout(label, self, layouts, immediate_size)

    def create_bind_group(self, *, label: str = "", layout: "GPUBindGroupLayout", entries: Sequence) -> "GPUBindGroup":
        if not isinstance(layout, GPUBindGroupLayout):
            raise TypeError(f"layout must be an emu GPUBindGroupLayout, got {type(layout).__name__}")
        what = f"create_bind_group(label={label!r})"
        entries = list(entries)
        if len(entries) != len(layout._entries):
            raise _validation(f"{what}: {len(entries)} entries, but the layout has {len(layout._entries)} "
                              f"(bindings {sorted(layout._entries)})",
                              hint="give one entry for each binding of the layout")
        bound = {}
        for i, entry in enumerate(entries):
            binding = int(_get(entry, "binding"))
            res = _get(entry, "resource")
            lay = layout._entries.get(binding)
            if lay is None:
                raise _validation(f"{what}: entries[{i}] has binding {binding}, which the layout does not "
                                  f"have (it has {sorted(layout._entries)})")
            if binding in bound:
                raise _validation(f"{what}: binding {binding} is given twice")
            if lay.type.startswith(("texture:", "storage_texture:", "sampler:")):
                kind = lay.type.split(":")[0]
                ok = isinstance(res, _textures.GPUSampler) if kind == "sampler" else \
                    isinstance(res, (_textures.GPUTextureView, _textures.GPUTexture))
                if not ok:
                    raise _validation(f"{what}: entries[{i}] (binding {binding}) is a {kind.replace('_', ' ')} "
                                      f"in the layout, not a {type(res).__name__}")
                if kind != "sampler":
                    tex = res if isinstance(res, _textures.GPUTexture) else res.texture
                    need = _textures._TU.TEXTURE_BINDING if kind == "texture" else _textures._TU.STORAGE_BINDING
                    if not tex.usage & need:
                        raise _validation(f"{what}: entries[{i}] binds {tex._describe()} as a {kind.replace('_', ' ')}, "
                                          f"which needs usage {'TEXTURE_BINDING' if kind == 'texture' else 'STORAGE_BINDING'}",
                                          hint="create the texture with that usage")
                    if lay.type.endswith(":multisampled") != (tex.sample_count > 1):
                        raise _validation(f"{what}: entries[{i}] binds {tex._describe()} of sample_count "
                                          f"{tex.sample_count} where the layout's multisampled is "
                                          f"{lay.type.endswith(':multisampled')}")
                bound[binding] = (res, None, None)
                continue
            if isinstance(res, GPUBuffer):
                buf, offset, size = res, 0, None
            elif res is None or not hasattr(res, "__getitem__"):
                raise TypeError(f"Unexpected resource type {type(res)}")
            else:
                buf = _get(res, "buffer")
                offset = int(_get(res, "offset", 0))
                size = _get(res, "size", None)
                if not isinstance(buf, GPUBuffer):
                    raise TypeError(f"entries[{i}].resource.buffer must be an emu GPUBuffer, got "
                                    f"{type(buf).__name__}")
            bname = buf._describe()
            if buf._destroyed:
                raise _validation(f"{what}: entries[{i}] ({bname}) is destroyed")
            need = _BU.UNIFORM if lay.type == "uniform" else _BU.STORAGE
            if not buf.usage & need:
                raise _validation(f"{what}: entries[{i}] binds {bname} (usage {_usage_names(buf.usage)}) as a "
                                  f"{lay.type} buffer, which needs usage {_usage_names(need)}",
                                  hint=f"create the buffer with usage including wgpu.BufferUsage.{_usage_names(need)}")
            size = buf.size - offset if size is None else int(size)
            align = self._limits["min-uniform-buffer-offset-alignment" if lay.type == "uniform"
                                 else "min-storage-buffer-offset-alignment"]
            if offset % align:
                raise _validation(f"{what}: entries[{i}]: offset {offset} is not a multiple of "
                                  f"{'min-uniform' if lay.type == 'uniform' else 'min-storage'}-buffer-offset-alignment ({align})")
            if offset < 0 or size <= 0 or offset + size > buf.size:
                raise _validation(f"{what}: entries[{i}]: the range (offset {offset}, size {size}) does not fit "
                                  f"in {bname} of {buf.size} bytes (and must not be empty)")
            if lay.type != "uniform" and size % 4:
                raise _validation(f"{what}: entries[{i}]: a storage binding's size ({size}) must be a multiple of 4")
            limit = self._limits["max-uniform-buffer-binding-size" if lay.type == "uniform"
                                 else "max-storage-buffer-binding-size"]
            if size > limit:
                raise _validation(f"{what}: entries[{i}]: binding size {size} exceeds the device limit {limit}")
            if size < lay.min_binding_size:
                raise _validation(f"{what}: entries[{i}]: binding size {size} is smaller than the layout's "
                                  f"min_binding_size ({lay.min_binding_size})"
                                  + (" (the shader's variable needs that many bytes)" if layout._exclusive else ""))
            bound[binding] = (buf, offset, size)
        return GPUBindGroup(label, self, layout, bound)

    def create_compute_pipeline(self, *, label: str = "", layout, compute) -> "GPUComputePipeline":
        module = _get(compute, "module")
        if not isinstance(module, GPUShaderModule):
            raise TypeError(f"compute['module'] must be an emu GPUShaderModule, got {type(module).__name__}")
        entry = _get(compute, "entry_point")
        constants = dict(_get(compute, "constants", {}) or {})
        sources = {module._file: module._code}
        _check_constants(module, constants, sources)
        try:
            pipe = self._emu.create_compute_pipeline(module._emu, entry, constants)
        except EmuError as e:
            raise _from_emu(e, sources) from None
        except Exception as e:
            raise _internal(e, sources) from e
        from ..api import used_globals
        used = [g for g in used_globals(module._emu.ir, pipe.pipeline.entry) if g.space in ("storage", "uniform", "handle")]
        # var<immediate> (var<push_constant>): set with pass.set_immediates(), not in a bind group
        immediate = next((g for g in used if (g.group, g.binding) == PUSH_CONSTANTS), None)
        used = [g for g in used if g is not immediate]
        wg_bytes = sum(_round_up(g.type.size, 16) for g in used_globals(module._emu.ir, pipe.pipeline.entry)
                       if g.space == "workgroup" and hasattr(g.type, "size"))
        _check_pipeline_limits(self, pipe, used, wg_bytes, sources)
        if immediate is not None and self._adapter._flavor == "wgpu":       # what wgpu-native refuses
            if "immediates" not in self._features:
                raise _validation(f"'{immediate.name}' is a var<immediate>, and the device was created without "
                                  f"the 'immediates' feature", immediate.loc, sources=sources,
                                  hint="request it: adapter.request_device_sync(required_features=['immediates'], "
                                       "required_limits={'max-immediate-size': N})")
            if layout == "auto":
                raise _validation(f"'{immediate.name}' is a var<immediate>, and wgpu-native's layout='auto' gives "
                                  f"a pipeline no immediate data (0 bytes)", immediate.loc, sources=sources,
                                  hint=f"create the layout yourself: device.create_pipeline_layout(bind_group_layouts="
                                       f"[...], immediate_size={_min_size(immediate)})")
        if isinstance(layout, GPUPipelineLayout):
            _check_layout_matches(layout, used, sources)
            _check_immediate_size(immediate, layout._immediate_size, sources)
            pl, auto = layout, False
        elif layout == "auto":
            pl, auto = None, True
        else:
            raise TypeError("create_compute_pipeline() 'layout' arg must be a GPUPipelineLayout or 'auto'")
        p = GPUComputePipeline(label, self, module, pipe, used)
        p._immediate = immediate
        p._layout = _auto_layout(self, p, used, immediate) if auto else pl
        if auto:
            _check_immediate_size(immediate, self._limits["max-immediate-size"], sources, "the device limit "
                                  "max-immediate-size")
        p._auto = auto
        return p

    def create_compute_pipeline_async(self, *, label: str = "", layout, compute) -> GPUPromise:
        return GPUPromise.run("create_compute_pipeline", lambda: self.create_compute_pipeline(
            label=label, layout=layout, compute=compute))

    def create_command_encoder(self, *, label: str = "") -> "GPUCommandEncoder":
        return GPUCommandEncoder(label, self)

    # -- not emulated -------------------------------------------------------------------------
    def create_texture(self, **kwargs) -> "GPUTexture":
        return _textures.create_texture(self, **kwargs)

    def create_sampler(self, **kwargs) -> "GPUSampler":
        return _textures.create_sampler(self, **kwargs)

    def create_render_pipeline(self, **kwargs):
        _unsupported("device.create_render_pipeline()", "render pipelines")

    def create_render_pipeline_async(self, **kwargs):
        _unsupported("device.create_render_pipeline_async()", "render pipelines")

    def create_render_bundle_encoder(self, **kwargs):
        _unsupported("device.create_render_bundle_encoder()", "render bundles")

    def create_query_set(self, **kwargs):
        _unsupported("device.create_query_set()", "query sets (timestamps, occlusion)")

    def import_external_texture(self, **kwargs):
        _unsupported("device.import_external_texture()", "external textures")

    def push_error_scope(self, filter):
        _unsupported("device.push_error_scope()", "error scopes: emu raises each error at the call, as wgpu-py does")

    def pop_error_scope_sync(self):
        _unsupported("device.pop_error_scope_sync()", "error scopes: emu raises each error at the call, as wgpu-py does")

    def pop_error_scope_async(self):
        _unsupported("device.pop_error_scope_async()", "error scopes: emu raises each error at the call, as wgpu-py does")

    @property
    def lost_sync(self):
        raise RuntimeError("emu's device is never lost while it is in use; lost_sync would wait forever")

    def destroy(self) -> None:
        self._destroyed = True


def _handle_layout(entry) -> str | None:
    """A texture, storage texture or sampler layout entry as the layout's type string
    ("texture:SAMPLE_TYPE:VIEW_DIM", "storage_texture:ACCESS:FORMAT:VIEW_DIM", "sampler:TYPE")."""
    t = _get(entry, "texture")
    if t is not None:
        ms = ":multisampled" if _get(t, "multisampled", False) else ""
        if ms and (_get(t, "sample_type", "float") == "float" or _get(t, "view_dimension", "2d") != "2d"):
            raise _validation("create_bind_group_layout: a multisampled texture entry has view_dimension '2d' "
                              "and a sample_type other than 'float'", hint="use sample_type 'unfilterable-float'")
        return f"texture:{_get(t, 'sample_type', 'float')}:{_get(t, 'view_dimension', '2d')}{ms}"
    t = _get(entry, "storage_texture")
    if t is not None:
        return f"storage_texture:{_get(t, 'access', 'write-only')}:{_get(t, 'format')}:{_get(t, 'view_dimension', '2d')}"
    t = _get(entry, "sampler")
    if t is not None:
        return f"sampler:{_get(t, 'type', 'filtering')}"
    return None


def _enable_loc(code: str, ext: str, file: str):
    from ..isa.ir import Loc
    for i, line in enumerate(code.splitlines(), 1):
        m = re.search(rf"\benable\b[^;]*\b{re.escape(ext)}\b", line)
        if m:
            return Loc(file, i, line.index(ext, m.start()) + 1)
    return None
