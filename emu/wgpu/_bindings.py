"""Bind group layouts, pipeline layouts and bind groups (buffers only)."""
from __future__ import annotations

from ._compat import binding_bases
from ._common import GPUObjectBase


class _LayoutEntry:
    __slots__ = ("binding", "visibility", "type", "dynamic", "min_binding_size")

    def __init__(self, binding, visibility, type, dynamic, min_binding_size):
        self.binding, self.visibility, self.type = binding, visibility, type
        self.dynamic, self.min_binding_size = dynamic, min_binding_size

    def key(self):
        return (self.binding, self.visibility, self.type, self.dynamic, self.min_binding_size)


class GPUBindGroupLayout(GPUObjectBase, *binding_bases("GPUBindGroupLayout")):
    """The types of the buffers of one bind group (compute buffers only)."""

    def __init__(self, label, device, entries: dict, exclusive=None):
        super().__init__(label, device)
        self._entries = dict(sorted(entries.items()))
        self._exclusive = exclusive          # the pipeline of an auto layout, else None

    def _key(self):
        return tuple(e.key() for e in self._entries.values())

    def _compatible(self, other: "GPUBindGroupLayout") -> bool:
        return self is other or (self._key() == other._key() and self._exclusive is other._exclusive)


class GPUPipelineLayout(GPUObjectBase, *binding_bases("GPUPipelineLayout")):
    def __init__(self, label, device, layouts, immediate_size: int = 0):
        super().__init__(label, device)
        self._bind_group_layouts = list(layouts)
        self._immediate_size = immediate_size       # bytes of immediate data (pass.set_immediates)


class GPUBindGroup(GPUObjectBase, *binding_bases("GPUBindGroup")):
    def __init__(self, label, device, layout, bound: dict):
        super().__init__(label, device)
        self._layout = layout
        self._bound = bound                  # binding -> (buffer, offset, size)
