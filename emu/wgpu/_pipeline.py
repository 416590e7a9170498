"""Compute pipelines and the checks of a pipeline against the device's limits and its layout."""
from __future__ import annotations

import numpy as np

from ._compat import binding_bases
from ._bindings import GPUBindGroupLayout, GPUPipelineLayout, _LayoutEntry
from ._common import GPUObjectBase, _SS, _validation


def _check_constants(module, constants: dict, sources):
    overrides = {o.name: o for o in module._emu.ir.overrides}
    by_id = {str(o.id): o for o in module._emu.ir.overrides if o.id is not None}
    for key, value in constants.items():
        o = overrides.get(str(key)) or by_id.get(str(key))
        if o is None:
            continue                    # emu's pipeline creation names the unknown override
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise _validation(f"pipeline constant '{key}': expected a number, got {type(value).__name__} "
                              f"{value!r}", o.loc, sources=sources,
                              hint="WebGPU's constants are numbers (doubles); for a bool override give 0 or 1")
        t = getattr(o.type, "name", "")
        if t in ("i32", "u32") and float(value) != int(value):
            raise _validation(f"pipeline constant '{key}' = {value!r} is not a whole number, but the "
                              f"override has type {t}", o.loc, sources=sources)
        if t == "bool":
            constants[key] = bool(value)


def _check_pipeline_limits(dev, pipe, used, wg_bytes, sources):
    L = dev._limits
    entry = pipe.pipeline.entry
    x, y, z = pipe.pipeline.layout.wg_size
    for n, lim in ((x, "max-compute-workgroup-size-x"), (y, "max-compute-workgroup-size-y"),
                   (z, "max-compute-workgroup-size-z")):
        if n > L[lim]:
            raise _validation(f"@workgroup_size({x}, {y}, {z}) of '{entry.name}' exceeds the device limit "
                              f"{lim} ({L[lim]})", entry.loc, sources=sources)
    if x * y * z > L["max-compute-invocations-per-workgroup"]:
        raise _validation(f"@workgroup_size({x}, {y}, {z}) of '{entry.name}' has {x * y * z} invocations; the "
                          f"device limit max-compute-invocations-per-workgroup is "
                          f"{L['max-compute-invocations-per-workgroup']}", entry.loc, sources=sources)
    if wg_bytes > L["max-compute-workgroup-storage-size"]:
        raise _validation(f"entry '{entry.name}' uses {wg_bytes} bytes of var<workgroup> memory; the device "
                          f"limit max-compute-workgroup-storage-size is {L['max-compute-workgroup-storage-size']}",
                          entry.loc, sources=sources)
    n_storage = sum(1 for g in used if g.space == "storage")
    n_uniform = sum(1 for g in used if g.space == "uniform")
    if n_storage > L["max-storage-buffers-per-shader-stage"]:
        raise _validation(f"entry '{entry.name}' uses {n_storage} storage buffers; the device limit "
                          f"max-storage-buffers-per-shader-stage is {L['max-storage-buffers-per-shader-stage']}",
                          entry.loc, sources=sources)
    if n_uniform > L["max-uniform-buffers-per-shader-stage"]:
        raise _validation(f"entry '{entry.name}' uses {n_uniform} uniform buffers; the device limit "
                          f"max-uniform-buffers-per-shader-stage is {L['max-uniform-buffers-per-shader-stage']}",
                          entry.loc, sources=sources)
    for g in used:
        if g.group >= L["max-bind-groups"]:
            raise _validation(f"'{g.name}' is at @group({g.group}); the device limit max-bind-groups is "
                              f"{L['max-bind-groups']}", g.loc, sources=sources)


def _binding_type(g) -> str:
    """The layout entry type a variable needs (buffers: wgpu's buffer type; textures and samplers:
    the string _device._handle_layout makes)."""
    if g.space == "handle":
        return _handle_type(g.type)
    if g.space == "uniform":
        return "uniform"
    return "storage" if g.access == "read_write" else "read-only-storage"


def _handle_type(t) -> str:
    from ..isa.types import TextureType
    if not isinstance(t, TextureType):
        return f"sampler:{'comparison' if t.comparison else 'filtering'}"
    view = t.dim.replace("_", "-")
    if t.kind == "storage":
        access = {"write": "write-only", "read": "read-only", "read_write": "read-write"}[t.access]
        return f"storage_texture:{access}:{t.format}:{view}"
    sample = "depth" if t.depth else {"f32": "float", "i32": "sint", "u32": "uint"}[t.sampled.name]
    if t.multisampled:          # WebGPU's default layout: a multisampled float texture is unfilterable
        return f"texture:{'unfilterable-float' if sample == 'float' else sample}:{view}:multisampled"
    return f"texture:{sample}:{view}"


def _entry_text_of(t: str) -> str:
    """A layout type string as the bind group layout entry's text."""
    p = t.split(":")
    if p[0] == "texture":
        ms = ", 'multisampled': True" if p[3:] == ["multisampled"] else ""
        return f"'texture': {{'sample_type': '{p[1]}', 'view_dimension': '{p[2]}'{ms}}}"
    if p[0] == "storage_texture":
        return f"'storage_texture': {{'access': '{p[1]}', 'format': '{p[2]}', 'view_dimension': '{p[3]}'}}"
    if p[0] == "sampler":
        return f"'sampler': {{'type': '{p[1]}'}}"
    return f"'buffer': {{'type': '{t}'}}"


def _entry_text(g) -> str:
    return _entry_text_of(_binding_type(g))


def _handle_ok(have: str, want: str) -> bool:
    """A layout entry that the shader's variable may use: the same, or a float texture declared
    unfilterable, or a depth texture as a float one, or a filtering sampler declared non-filtering."""
    if have == want:
        return True
    h, w = have.split(":"), want.split(":")
    if h[0] == w[0] == "texture":
        return h[2:] == w[2:] and (h[1], w[1]) in (("unfilterable-float", "float"), ("float", "depth"),
                                                   ("unfilterable-float", "depth"))
    return h[0] == w[0] == "sampler" and (h[1], w[1]) == ("non-filtering", "filtering")


def _min_size(g) -> int:
    if g.space == "handle":
        return 0
    from ..api import min_binding_size
    return min_binding_size(g.type)


def _check_layout_matches(layout: "GPUPipelineLayout", used, sources):
    for g in used:
        where = f"'{g.name}' (@group({g.group}) @binding({g.binding}), var<{g.space}{', ' + g.access if g.space == 'storage' else ''}>)"
        if g.group >= len(layout._bind_group_layouts):
            raise _validation(f"the pipeline layout has {len(layout._bind_group_layouts)} bind group layouts, "
                              f"but the shader uses {where}", g.loc, sources=sources,
                              hint=f"add a bind group layout for group {g.group}")
        bgl = layout._bind_group_layouts[g.group]
        e = bgl._entries.get(g.binding)
        if e is None:
            raise _validation(f"the bind group layout for group {g.group} has no binding {g.binding}, but the "
                              f"shader uses {where}", g.loc, sources=sources,
                              hint=f"add {{'binding': {g.binding}, 'visibility': wgpu.ShaderStage.COMPUTE, "
                                   f"{_entry_text(g)}}}")
        if not e.visibility & _SS.COMPUTE:
            raise _validation(f"the layout entry for {where} is not visible to the compute stage",
                              g.loc, sources=sources, hint="add wgpu.ShaderStage.COMPUTE to its visibility")
        want = _binding_type(g)
        ok = e.type == want or (want == "read-only-storage" and e.type == "storage") or \
            (g.space == "handle" and _handle_ok(e.type, want))
        if not ok and g.space == "handle":
            raise _validation(f"the layout entry for {where} is {_entry_text_of(e.type)}, but the shader "
                              f"declares a {g.type}", g.loc, sources=sources,
                              hint=f"use {_entry_text(g)} in the bind group layout entry")
        if not ok:
            raise _validation(f"the layout entry for {where} has buffer type '{e.type}', but the shader "
                              f"declares a {want} binding", g.loc, sources=sources,
                              hint=f"use 'type': '{want}' in the bind group layout entry")
        need = _min_size(g)
        if e.min_binding_size and e.min_binding_size < need:
            raise _validation(f"the layout entry for {where} has min_binding_size {e.min_binding_size}; its "
                              f"type {g.type} needs at least {need}", g.loc, sources=sources)


def _check_immediate_size(g, size: int, sources, what: str = "the pipeline layout's immediate_size"):
    """The var<immediate> of the entry point must fit in the immediate bytes the layout provides."""
    if g is not None and _min_size(g) > size:
        raise _validation(f"'{g.name}' (var<immediate>, {g.type}) needs {_min_size(g)} bytes of immediate data; "
                          f"{what} is {size}", g.loc, sources=sources,
                          hint=f"create the pipeline layout with immediate_size={_min_size(g)} (and request the "
                               f"device with required_limits={{'max-immediate-size': {_min_size(g)}}} if needed)")


def _auto_layout(dev, pipeline: "GPUComputePipeline", used, immediate=None) -> "GPUPipelineLayout":
    n = max([g.group for g in used] + [-1]) + 1
    groups = [dict() for _ in range(n)]
    for g in used:
        groups[g.group][g.binding] = _LayoutEntry(g.binding, _SS.COMPUTE, _binding_type(g), False, _min_size(g))
    layouts = [GPUBindGroupLayout("", dev, entries, exclusive=pipeline) for entries in groups]
    return GPUPipelineLayout("", dev, layouts, _min_size(immediate) if immediate is not None else 0)


class GPUComputePipeline(GPUObjectBase, *binding_bases("GPUComputePipeline")):
    def __init__(self, label, device, module, pipe, used):
        super().__init__(label, device)
        self._module = module
        self._emu = pipe
        self._used = used
        self._immediate = None              # the entry point's var<immediate>, if it has one
        self._layout: GPUPipelineLayout | None = None
        self._auto = False

    def get_bind_group_layout(self, index: int) -> GPUBindGroupLayout:
        index = int(index)
        layouts = self._layout._bind_group_layouts
        if index < len(layouts):
            return layouts[index]
        if index < self._device._limits["max-bind-groups"]:
            return GPUBindGroupLayout("", self._device, {}, exclusive=self if self._auto else None)
        raise _validation(f"get_bind_group_layout({index}): the index is not below max-bind-groups "
                          f"({self._device._limits['max-bind-groups']})")

    @property
    def workgroup_size(self) -> tuple:
        """(x, y, z) after overrides (emu extension)."""
        return self._emu.workgroup_size
