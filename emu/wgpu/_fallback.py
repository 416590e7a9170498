"""Stand-ins for wgpu-py's ``enums``, ``flags`` and ``structs`` modules, used only when neither
the real ``wgpu`` nor ``wgpudawn`` package can be imported. Values are wgpu-py 0.32's: flags are
ints, enum members are strings, structs are dicts."""
from __future__ import annotations

import types


class _EnumType(type):
    """Enough of wgpu-py's EnumType: attribute access, iteration over values, ``in``, ``[]``."""

    def __new__(mcs, name, bases, dct):
        members = {k: (k if v is None else v) for k, v in dct.items() if not k.startswith("_")}
        dct.update(members)
        cls = super().__new__(mcs, name, bases, dct)
        cls.__fields__ = tuple(members)
        cls.__members__ = types.MappingProxyType(members)
        return cls

    def __iter__(cls):
        return iter(cls.__members__.values())

    def __contains__(cls, value):
        return value in cls.__members__.values()

    def __getitem__(cls, key):
        return cls.__members__[key]

    def __len__(cls):
        return len(cls.__members__)

    def __repr__(cls):
        return f"<{cls.__name__} {list(cls.__members__.values())!r}>"


def _make(name, members: dict):
    return _EnumType(name, (), dict(members))


def _enum(name, *values):
    return _make(name, {v.replace("-", "_"): v for v in values})


flags = types.ModuleType("emu.wgpu.flags", "wgpu-py's flags (stand-in).")
flags.BufferUsage = _make("BufferUsage", dict(
    MAP_READ=1, MAP_WRITE=2, COPY_SRC=4, COPY_DST=8, INDEX=16, VERTEX=32, UNIFORM=64, STORAGE=128,
    INDIRECT=256, QUERY_RESOLVE=512))
flags.MapMode = _make("MapMode", dict(READ=1, WRITE=2))
flags.TextureUsage = _make("TextureUsage", dict(
    COPY_SRC=1, COPY_DST=2, TEXTURE_BINDING=4, STORAGE_BINDING=8, RENDER_ATTACHMENT=16,
    TRANSIENT_ATTACHMENT=32))
flags.ShaderStage = _make("ShaderStage", dict(VERTEX=1, FRAGMENT=2, COMPUTE=4))
flags.ColorWrite = _make("ColorWrite", dict(RED=1, GREEN=2, BLUE=4, ALPHA=8, ALL=15))
flags.__all__ = ["BufferUsage", "MapMode", "TextureUsage", "ShaderStage", "ColorWrite"]

enums = types.ModuleType("emu.wgpu.enums", "wgpu-py's enums (stand-in, compute subset).")
enums.PowerPreference = _enum("PowerPreference", "low-power", "high-performance")
enums.FeatureName = _enum(
    "FeatureName", "core-features-and-limits", "depth-clip-control", "depth32float-stencil8",
    "texture-compression-bc", "texture-compression-bc-sliced-3d", "texture-compression-etc2",
    "texture-compression-astc", "texture-compression-astc-sliced-3d", "timestamp-query",
    "indirect-first-instance", "shader-f16", "rg11b10ufloat-renderable", "bgra8unorm-storage",
    "float32-filterable", "float32-blendable", "clip-distances", "dual-source-blending", "subgroups",
    "texture-formats-tier1", "texture-formats-tier2", "primitive-index", "texture-component-swizzle")
enums.BufferMapState = _enum("BufferMapState", "unmapped", "pending", "mapped")
enums.BufferBindingType = _enum("BufferBindingType", "uniform", "storage", "read-only-storage")
enums.AutoLayoutMode = _enum("AutoLayoutMode", "auto")
enums.CompilationMessageType = _enum("CompilationMessageType", "error", "warning", "info")
enums.PipelineErrorReason = _enum("PipelineErrorReason", "validation", "internal")
enums.ErrorFilter = _enum("ErrorFilter", "validation", "out-of-memory", "internal")
enums.DeviceLostReason = _enum("DeviceLostReason", "unknown", "destroyed")
enums.QueryType = _enum("QueryType", "occlusion", "timestamp")
enums.__all__ = [k for k in vars(enums) if not k.startswith("_")]

structs = types.ModuleType("emu.wgpu.structs", "wgpu-py's structs (stand-in: plain dicts).")


def _struct(name):
    def make(**fields):
        return dict(fields)
    make.__name__ = make.__qualname__ = name
    return make


for _n in ("BindGroupEntry", "BindGroupLayoutEntry", "BufferBinding", "BufferBindingLayout",
           "ProgrammableStage", "ComputePassDescriptor", "BufferDescriptor", "DeviceDescriptor",
           "BindGroupDescriptor", "BindGroupLayoutDescriptor", "PipelineLayoutDescriptor",
           "ComputePipelineDescriptor", "ShaderModuleDescriptor", "RequestAdapterOptions",
           "CommandEncoderDescriptor", "CommandBufferDescriptor", "QueueDescriptor"):
    setattr(structs, _n, _struct(_n))
structs.__all__ = [k for k in vars(structs) if not k.startswith("_")]
