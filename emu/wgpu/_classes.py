"""The compute subset of wgpu-py 0.32's API, on emu's virtual GPU.

Same class names, method names and argument names as wgpu-py (keyword-only where wgpu-py has
them). Objects are plain Python: a buffer is a numpy byte array, a command buffer a list of
recorded commands, and ``queue.submit`` runs them, in order, before it returns (so every promise
is already resolved). Validation follows WebGPU: errors in creating an object raise at the call;
errors in recording commands are kept by the encoder and raised by ``finish()``; errors that
need the state at execution (a buffer still mapped) raise at ``submit``. The messages are emu's,
with the WGSL file:line:col where a shader declaration is involved.
"""
from __future__ import annotations

import os
import re
from typing import Sequence

import numpy as np

from ..errors import EmuError, HostError
from ._compat import flags, make_error
from ._promise import GPUPromise

__all__ = [
    "GPU", "GPUAdapter", "GPUAdapterInfo", "GPUDevice", "GPUQueue", "GPUBuffer", "GPUShaderModule",
    "GPUCompilationInfo", "GPUCompilationMessage", "GPUBindGroupLayout", "GPUPipelineLayout",
    "GPUBindGroup", "GPUComputePipeline", "GPUCommandEncoder", "GPUComputePassEncoder",
    "GPUCommandBuffer", "GPUPromise", "NotSupportedError", "DEFAULT_LIMITS",
]

_BU = flags.BufferUsage
_MM = flags.MapMode
_SS = flags.ShaderStage

WHOLE_SIZE = None

# Limits of emu's adapter (and of its devices unless required_limits lowers them). Compute limits
# are those of a desktop GPU through Dawn; the offset alignments are WebGPU's defaults (256), which
# every real adapter accepts, so a program that runs on emu does not fail for alignment elsewhere.
DEFAULT_LIMITS = {
    "max-texture-dimension-1d": 8192, "max-texture-dimension-2d": 8192,
    "max-texture-dimension-3d": 2048, "max-texture-array-layers": 256,
    "max-bind-groups": 4, "max-bind-groups-plus-vertex-buffers": 24,
    "max-bindings-per-bind-group": 1000,
    "max-dynamic-uniform-buffers-per-pipeline-layout": 8,
    "max-dynamic-storage-buffers-per-pipeline-layout": 4,
    "max-sampled-textures-per-shader-stage": 16, "max-samplers-per-shader-stage": 16,
    "max-storage-buffers-per-shader-stage": 10, "max-storage-textures-per-shader-stage": 4,
    "max-uniform-buffers-per-shader-stage": 12,
    "max-uniform-buffer-binding-size": 65536, "max-storage-buffer-binding-size": 1 << 30,
    "min-uniform-buffer-offset-alignment": 256, "min-storage-buffer-offset-alignment": 256,
    "max-vertex-buffers": 8, "max-buffer-size": 1 << 30, "max-vertex-attributes": 16,
    "max-vertex-buffer-array-stride": 2048, "max-inter-stage-shader-variables": 16,
    "max-color-attachments": 8, "max-color-attachment-bytes-per-sample": 32,
    "max-compute-workgroup-storage-size": 32768, "max-compute-invocations-per-workgroup": 1024,
    "max-compute-workgroup-size-x": 1024, "max-compute-workgroup-size-y": 1024,
    "max-compute-workgroup-size-z": 64, "max-compute-workgroups-per-dimension": 65535,
    "max-immediate-size": 0,
}

# WGSL `enable` extension -> the device features it needs (any one of the names)
_ENABLE_FEATURES = {
    "f16": ("shader-f16",),
    "subgroups": ("subgroups", "subgroup"),
    "subgroups_f16": ("subgroups", "subgroup"),
    "chromium_experimental_subgroup_matrix": ("chromium-experimental-subgroup-matrix",),
    "wgpu_cooperative_matrix": ("cooperative-matrix",),
}
# names of one feature as different bindings spell it
_FEATURE_ALIASES = {"subgroup": "subgroups", "subgroups": "subgroup"}


class NotSupportedError(NotImplementedError):
    """Something outside the compute subset that emu emulates (rendering, textures, ...)."""


def _unsupported(api: str, what: str):
    raise NotSupportedError(
        f"emu's virtual GPU runs compute work only: {api} ({what}) is not supported. "
        f"It emulates buffers, compute pipelines, copies, clears and dispatches (also indirect); "
        f"render pipelines, render passes, textures, samplers, query sets and canvases are not "
        f"emulated: run those parts on a real adapter (unset EMU_WGPU).")


# ---------------------------------------------------------------------------------------------
# errors

def _fmt(message: str, loc=None, hint: str | None = None, sources: dict | None = None,
         where: str | None = None) -> tuple[str, EmuError]:
    err = HostError(message, loc, hint=hint, where=where)
    return err.format(sources), err


def _validation(message: str, loc=None, hint=None, sources=None) -> Exception:
    text, err = _fmt(message, loc, hint, sources)
    return make_error("GPUValidationError", text, err)


_HINT_REWRITES = (
    (re.compile(r"choose one with --entry NAME"), "give compute={'entry_point': NAME}"),
    (re.compile(r"pass one of those names to --entry"), "give one of those names as compute['entry_point']"),
    (re.compile(r"check the name in --override NAME=VALUE"), "check the names in compute['constants']"),
    (re.compile(r"set it with --override (\w+)=VALUE"), r"give compute={'constants': {'\1': VALUE}}"),
    (re.compile(r"run with --robust"), "set EMU_ROBUST=1"),
    (re.compile(r"--robust"), "EMU_ROBUST=1"),
    (re.compile(r"--max-steps N"), "EMU_MAX_STEPS=N"),
)


def _from_emu(e: EmuError, sources: dict | None, kind: str = "GPUValidationError") -> Exception:
    """emu's error as the wgpu exception ``kind``, its hints speaking of the wgpu API (not of
    the emu command line)."""
    hint = e.hint
    for pattern, repl in _HINT_REWRITES:
        if hint:
            hint = pattern.sub(repl, hint)
    text = EmuError(e.message, e.loc, hint=hint, where=e.where, severity=e.severity).format(sources)
    return make_error(kind, text, e)


def _flag_value(cls, value, what: str) -> int:
    if isinstance(value, str):
        total = 0
        parts = [p.strip() for p in value.split("|") if p.strip()]
        if not parts:
            raise ValueError(f"Invalid flag value: {value}")
        for p in parts:
            v = getattr(cls, p.upper(), None)
            if not isinstance(v, int) or p.startswith("_"):
                raise ValueError(f"Invalid flag value for {what}: '{p}'")
            total |= v
        return total
    return int(value)


def _usage_names(usage: int) -> str:
    names = [n for n in ("MAP_READ", "MAP_WRITE", "COPY_SRC", "COPY_DST", "INDEX", "VERTEX",
                         "UNIFORM", "STORAGE", "INDIRECT", "QUERY_RESOLVE")
             if usage & getattr(_BU, n)]
    return "|".join(names) or "0"


def _get(d, key, default=None):
    """A field of a descriptor given as a dict or a wgpu-py struct (None means the default)."""
    try:
        v = d[key]
    except (KeyError, TypeError):
        v = getattr(d, key, None) if not isinstance(d, dict) else None
    return default if v is None else v


def _kebab(name: str) -> str:
    """'shader_f16' / 'ShaderF16' -> 'shader-f16'; 'maxTextureDimension1D' -> 'max-texture-dimension-1d'."""
    if name != name.lower():
        name = re.sub(r"([a-z])([A-Z0-9])", r"\1-\2", name)
    return name.lower().replace("_", "-")


def _canonical_feature(name) -> str:
    if not isinstance(name, str):
        raise TypeError("Features must be given as str.")
    return _kebab(name)


def _canonical_limit(name: str) -> str:
    return name if name in DEFAULT_LIMITS else _kebab(name)


def _memoryview(data) -> memoryview:
    m = memoryview(data)
    if not m.contiguous:
        raise ValueError("The given data is not contiguous")
    return m.cast("B") if m.format != "B" or m.ndim != 1 else m


def _round_up(n: int, m: int) -> int:
    return (n + m - 1) // m * m


# ---------------------------------------------------------------------------------------------
# GPU and adapter

class GPU:
    """The entry point (``wgpu.gpu``): hands out emu adapters.

    ``flavor`` says which binding's names the adapter uses for its features: "wgpu" (wgpu-py on
    wgpu-native: 'subgroup', 'cooperative-matrix'), "dawn" (wgpudawn: 'subgroups',
    'chromium-experimental-subgroup-matrix') or "emu" (all of them: either dialect compiles).
    ``profile`` is a profile name or path; None reads ``EMU_PROFILE`` (default 'reference')
    when an adapter is requested.
    """

    def __init__(self, profile=None, flavor: str = "emu"):
        self._profile = profile
        self._flavor = flavor

    def _load_profile(self):
        from ..profiles import load_profile, Profile
        p = self._profile if self._profile is not None else os.environ.get("EMU_PROFILE", "reference")
        return p if isinstance(p, Profile) else load_profile(p)

    def request_adapter_sync(self, *, feature_level: str = "core", power_preference=None,
                             force_fallback_adapter: bool = False, canvas=None) -> "GPUAdapter":
        """Sync version of `request_adapter_async()`."""
        return self.request_adapter_async(feature_level=feature_level,
                                          power_preference=power_preference,
                                          force_fallback_adapter=force_fallback_adapter,
                                          canvas=canvas).sync_wait()

    def request_adapter_async(self, *, feature_level: str = "core", power_preference=None,
                              force_fallback_adapter: bool = False, canvas=None) -> GPUPromise:
        """An adapter for emu's virtual GPU, emulating the profile named by EMU_PROFILE."""
        def make():
            if canvas is not None:
                _unsupported("request_adapter(canvas=...)", "presenting to a canvas")
            if feature_level not in ("core", "compatibility"):
                raise ValueError(f"feature_level must be 'core' or 'compatibility', not {feature_level!r}")
            return GPUAdapter(self._load_profile(), self._flavor)
        return GPUPromise.run("request_adapter", make)

    def enumerate_adapters_sync(self) -> list:
        """Sync version of `enumerate_adapters_async()`: one emu adapter."""
        return self.enumerate_adapters_async().sync_wait()

    def enumerate_adapters_async(self) -> GPUPromise:
        return GPUPromise.run("enumerate_adapters", lambda: [GPUAdapter(self._load_profile(), self._flavor)])

    @property
    def wgsl_language_features(self) -> set:
        return set()

    def get_preferred_canvas_format(self):
        raise RuntimeError("Use canvas.get_preferred_format() instead.")

    def get_canvas_context(self, present_info: dict):
        _unsupported("gpu.get_canvas_context()", "presenting to a window")

    # wgpu-py's deprecated names for the sync methods
    def request_adapter(self, **kwargs):
        return self.request_adapter_sync(**kwargs)

    def enumerate_adapters(self):
        return self.enumerate_adapters_sync()

    def __repr__(self):
        return f"<emu.wgpu.GPU flavor={self._flavor!r} profile={self._profile or os.environ.get('EMU_PROFILE', 'reference')!r}>"


class GPUAdapterInfo(dict):
    """Information about an adapter (a dict, with wgpu-py's properties)."""

    def __repr__(self):
        return f"<GPUAdapterInfo dict with {', '.join(f'{k}={v!r}' for k, v in self.items())}>"

    vendor = property(lambda self: self["vendor"])
    architecture = property(lambda self: self["architecture"])
    device = property(lambda self: self["device"])
    description = property(lambda self: self["description"])
    subgroup_min_size = property(lambda self: self.get("subgroup_min_size"))
    subgroup_max_size = property(lambda self: self.get("subgroup_max_size"))
    is_fallback_adapter = property(lambda self: self.get("adapter_type", "").lower() in ("software", "cpu"))


def _profile_features(profile, flavor: str) -> set:
    feats = {"core-features-and-limits", "shader-f16"}
    if flavor in ("wgpu", "emu"):
        feats.add("subgroup")
        if profile.props_wgpu():
            feats.add("cooperative-matrix")
    if flavor in ("dawn", "emu"):
        feats.add("subgroups")
        if profile.props_dawn():
            feats.add("chromium-experimental-subgroup-matrix")
    if flavor == "wgpu":
        feats.add("subgroups")        # wgpu-py maps the spec name to wgpu-native's 'subgroup'
    return feats


class GPUAdapter:
    """emu's virtual GPU, emulating one device profile (see ``info``)."""

    def __init__(self, profile, flavor: str = "emu"):
        from .. import __version__
        self._profile = profile
        self._flavor = flavor
        self._features = _profile_features(profile, flavor)
        self._limits = dict(DEFAULT_LIMITS)
        sg = _subgroup_size(profile)
        self._adapter_info = GPUAdapterInfo(
            vendor="emu", architecture=profile.name,
            device=f"emu virtual GPU emulating '{profile.name}'",
            description=f"emu {__version__} (CPU emulator of WGSL compute): {profile.description}",
            vendor_id=0, device_id=0, adapter_type="CPU", backend_type="emu",
            # the size emu runs (the profile's default or EMU_SUBGROUP_SIZE), not every size the
            # profile allows: a program that sizes workgroups by it gets what it planned for
            subgroup_min_size=sg, subgroup_max_size=sg,
            emu=True, emu_profile=profile.name, emu_subgroup_size=sg,
            emu_profile_subgroup_sizes=tuple(profile.subgroup_sizes),
        )

    @property
    def features(self) -> set:
        """Feature names: 'shader-f16', 'subgroups' (and wgpu-native's 'subgroup'), and the
        cooperative-matrix feature of the binding where the profile has configs for it."""
        return self._features

    @property
    def limits(self) -> dict:
        return self._limits

    @property
    def info(self) -> GPUAdapterInfo:
        return self._adapter_info

    @property
    def summary(self) -> str:
        d = self._adapter_info
        return f"{d['device']} ({d['adapter_type']}) via {d['backend_type']}"

    @property
    def profile(self):
        """The emu profile this adapter emulates (emu extension)."""
        return self._profile

    def request_device_sync(self, *, label: str = "", required_features: Sequence = (),
                            required_limits: dict | None = None, default_queue=None) -> "GPUDevice":
        """Sync version of `request_device_async()`."""
        return self.request_device_async(label=label, required_features=required_features,
                                         required_limits=required_limits,
                                         default_queue=default_queue).sync_wait()

    def request_device_async(self, *, label: str = "", required_features: Sequence = (),
                             required_limits: dict | None = None, default_queue=None) -> GPUPromise:
        """A device of the virtual GPU with the features asked for (and the adapter's limits,
        lowered or raised by ``required_limits`` within the adapter's)."""
        return GPUPromise.run("request_device", self._make_device, label, required_features,
                              required_limits)

    def _make_device(self, label, required_features, required_limits):
        feats = set()
        if isinstance(required_features, str):
            raise TypeError("required_features must be a sequence of feature names")
        for f in required_features:
            name = _canonical_feature(f)
            if name not in self._features and _FEATURE_ALIASES.get(name) not in self._features:
                raise RuntimeError(
                    f"Request device failed: the feature '{name}' is not supported by emu's adapter "
                    f"for profile '{self._profile.name}' (supported: {', '.join(sorted(self._features))})")
            feats.add(name)
            if _FEATURE_ALIASES.get(name) in self._features:
                feats.add(_FEATURE_ALIASES[name])
        feats.add("core-features-and-limits")
        limits = dict(self._limits)
        for key, value in (required_limits or {}).items():
            name = _canonical_limit(key)
            if name not in limits:
                raise KeyError(f"Unknown limit name '{key}'")
            if value is None:
                continue
            value = int(value)
            better_is_lower = name.startswith("min-")
            if (value < self._limits[name]) if better_is_lower else (value > self._limits[name]):
                raise RuntimeError(f"Request device failed: required limit {name}={value} is beyond "
                                   f"emu's adapter limit {self._limits[name]}")
            limits[name] = value
        return GPUDevice(label, self, feats, limits)

    def request_device(self, **kwargs):
        return self.request_device_sync(**kwargs)

    def __repr__(self):
        return f"<emu.wgpu.GPUAdapter emulating {self._profile.name!r}>"


def _subgroup_size(profile) -> int:
    """The subgroup size emu runs: EMU_SUBGROUP_SIZE if set (one the profile allows), else the
    profile's default."""
    env = os.environ.get("EMU_SUBGROUP_SIZE", "").strip()
    if not env:
        return profile.default_subgroup_size
    try:
        n = int(env)
    except ValueError:
        n = -1
    if n not in profile.subgroup_sizes:
        raise ValueError(f"EMU_SUBGROUP_SIZE={env!r}: profile '{profile.name}' runs subgroups of "
                         f"{', '.join(map(str, profile.subgroup_sizes))}")
    return n


# ---------------------------------------------------------------------------------------------
# objects of a device

_uids = iter(range(1, 1 << 62))


class GPUObjectBase:
    def __init__(self, label: str, device):
        self._label = label or ""
        self._device = device
        self._uid = next(_uids)

    @property
    def label(self) -> str:
        return self._label

    @property
    def uid(self) -> int:
        """A number unique to this object in the process (as wgpu-py's)."""
        return self._uid

    def __repr__(self):
        return f"<emu.wgpu.{type(self).__name__} '{self._label}' at {hex(id(self))}>"

    def _describe(self) -> str:
        return f"{type(self).__name__} '{self._label}'" if self._label else f"{type(self).__name__} (unlabeled)"


class GPUDevice(GPUObjectBase):
    """A device of emu's virtual GPU: creates buffers, shader modules, pipelines and encoders."""

    def __init__(self, label, adapter: GPUAdapter, features: set, limits: dict):
        super().__init__(label, self)
        from ..api import Device
        self._adapter = adapter
        self._features = features
        self._limits = limits
        robust = os.environ.get("EMU_ROBUST", "").strip().lower() not in ("", "0", "false", "no")
        steps = os.environ.get("EMU_MAX_STEPS", "").strip()
        self._emu = Device(adapter._profile, _subgroup_size(adapter._profile), robust=robust,
                           max_steps=int(steps) if steps else None)
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
        for ext in mod.ir.enables:
            need = _ENABLE_FEATURES.get(ext)
            if need and not any(n in self._features for n in need):
                raise _validation(
                    f"the shader enables '{ext}', which needs the device feature '{need[0]}', "
                    f"and the device was requested without it",
                    hint=f"adapter.request_device_sync(required_features=['{need[0]}']) "
                         f"(the adapter {'has' if need[0] in self._adapter.features else 'lacks'} it)",
                    sources=sources, loc=_enable_loc(code, ext, file))
        return GPUShaderModule(label, self, mod, code, file)

    def create_bind_group_layout(self, *, label: str = "", entries: Sequence) -> "GPUBindGroupLayout":
        norm = {}
        for i, entry in enumerate(entries):
            binding = int(_get(entry, "binding"))
            visibility = _flag_value(_SS, _get(entry, "visibility", 0), "ShaderStage")
            for kind, what in (("sampler", "samplers"), ("texture", "textures"),
                               ("storage_texture", "storage textures"),
                               ("external_texture", "external textures")):
                if _get(entry, kind) is not None:
                    _unsupported(f"create_bind_group_layout(entries[{i}].{kind})", what)
            buf = _get(entry, "buffer")
            if buf is None:
                raise ValueError("Bind group layout entry did not contain field 'buffer', 'sampler', "
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
        if immediate_size:
            _unsupported("create_pipeline_layout(immediate_size=...)", "immediate data")
        return GPUPipelineLayout(label, self, layouts)

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
            if isinstance(res, GPUBuffer):
                buf, offset, size = res, 0, None
            elif res is None or not hasattr(res, "__getitem__"):
                if type(res).__name__ in ("GPUSampler", "GPUTextureView", "GPUTexture"):
                    _unsupported(f"create_bind_group(entries[{i}].resource={type(res).__name__})", "textures and samplers")
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
        from ..api import used_globals
        used = [g for g in used_globals(module._emu.ir, pipe.pipeline.entry) if g.space in ("storage", "uniform")]
        wg_bytes = sum(_round_up(g.type.size, 16) for g in used_globals(module._emu.ir, pipe.pipeline.entry)
                       if g.space == "workgroup" and hasattr(g.type, "size"))
        _check_pipeline_limits(self, pipe, used, wg_bytes, sources)
        if isinstance(layout, GPUPipelineLayout):
            _check_layout_matches(layout, used, sources)
            pl, auto = layout, False
        elif layout == "auto":
            pl, auto = None, True
        else:
            raise TypeError("create_compute_pipeline() 'layout' arg must be a GPUPipelineLayout or 'auto'")
        p = GPUComputePipeline(label, self, module, pipe, used)
        p._layout = _auto_layout(self, p, used) if auto else pl
        p._auto = auto
        return p

    def create_compute_pipeline_async(self, *, label: str = "", layout, compute) -> GPUPromise:
        return GPUPromise.run("create_compute_pipeline", lambda: self.create_compute_pipeline(
            label=label, layout=layout, compute=compute))

    def create_command_encoder(self, *, label: str = "") -> "GPUCommandEncoder":
        return GPUCommandEncoder(label, self)

    # -- not emulated -------------------------------------------------------------------------
    def create_texture(self, **kwargs):
        _unsupported("device.create_texture()", "textures")

    def create_sampler(self, **kwargs):
        _unsupported("device.create_sampler()", "samplers")

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


def _enable_loc(code: str, ext: str, file: str):
    from ..isa.ir import Loc
    for i, line in enumerate(code.splitlines(), 1):
        m = re.search(rf"\benable\b[^;]*\b{re.escape(ext)}\b", line)
        if m:
            return Loc(file, i, line.index(ext, m.start()) + 1)
    return None


def _check_constants(module: "GPUShaderModule", constants: dict, sources):
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


def _check_pipeline_limits(dev: GPUDevice, pipe, used, wg_bytes, sources):
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
    if g.space == "uniform":
        return "uniform"
    return "storage" if g.access == "read_write" else "read-only-storage"


def _min_size(g) -> int:
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
                                   f"'buffer': {{'type': '{_binding_type(g)}'}}}}")
        if not e.visibility & _SS.COMPUTE:
            raise _validation(f"the layout entry for {where} is not visible to the compute stage",
                              g.loc, sources=sources, hint="add wgpu.ShaderStage.COMPUTE to its visibility")
        want = _binding_type(g)
        ok = e.type == want or (want == "read-only-storage" and e.type == "storage")
        if not ok:
            raise _validation(f"the layout entry for {where} has buffer type '{e.type}', but the shader "
                              f"declares a {want} binding", g.loc, sources=sources,
                              hint=f"use 'type': '{want}' in the bind group layout entry")
        need = _min_size(g)
        if e.min_binding_size and e.min_binding_size < need:
            raise _validation(f"the layout entry for {where} has min_binding_size {e.min_binding_size}; its "
                              f"type {g.type} needs at least {need}", g.loc, sources=sources)


def _auto_layout(dev: GPUDevice, pipeline: "GPUComputePipeline", used) -> "GPUPipelineLayout":
    n = max([g.group for g in used] + [-1]) + 1
    groups = [dict() for _ in range(n)]
    for g in used:
        groups[g.group][g.binding] = _LayoutEntry(g.binding, _SS.COMPUTE, _binding_type(g), False, _min_size(g))
    layouts = [GPUBindGroupLayout("", dev, entries, exclusive=pipeline) for entries in groups]
    return GPUPipelineLayout("", dev, layouts)


class _LayoutEntry:
    __slots__ = ("binding", "visibility", "type", "dynamic", "min_binding_size")

    def __init__(self, binding, visibility, type, dynamic, min_binding_size):
        self.binding, self.visibility, self.type = binding, visibility, type
        self.dynamic, self.min_binding_size = dynamic, min_binding_size

    def key(self):
        return (self.binding, self.visibility, self.type, self.dynamic, self.min_binding_size)


class GPUBindGroupLayout(GPUObjectBase):
    """The types of the buffers of one bind group (compute buffers only)."""

    def __init__(self, label, device, entries: dict, exclusive=None):
        super().__init__(label, device)
        self._entries = dict(sorted(entries.items()))
        self._exclusive = exclusive          # the pipeline of an auto layout, else None

    def _key(self):
        return tuple(e.key() for e in self._entries.values())

    def _compatible(self, other: "GPUBindGroupLayout") -> bool:
        return self is other or (self._key() == other._key() and self._exclusive is other._exclusive)


class GPUPipelineLayout(GPUObjectBase):
    def __init__(self, label, device, layouts):
        super().__init__(label, device)
        self._bind_group_layouts = list(layouts)


class GPUBindGroup(GPUObjectBase):
    def __init__(self, label, device, layout, bound: dict):
        super().__init__(label, device)
        self._layout = layout
        self._bound = bound                  # binding -> (buffer, offset, size)


class GPUCompilationMessage:
    def __init__(self, message, type, line_num, line_pos, offset=0, length=0):
        self._m = (message, type, line_num, line_pos, offset, length)

    message = property(lambda self: self._m[0])
    type = property(lambda self: self._m[1])
    line_num = property(lambda self: self._m[2])
    line_pos = property(lambda self: self._m[3])
    offset = property(lambda self: self._m[4])
    length = property(lambda self: self._m[5])

    def __repr__(self):
        return f"<GPUCompilationMessage {self.type} {self.line_num}:{self.line_pos} {self.message!r}>"


class GPUCompilationInfo:
    def __init__(self, messages):
        self._messages = list(messages)

    @property
    def messages(self) -> list:
        return self._messages


class GPUShaderModule(GPUObjectBase):
    """A WGSL module compiled by emu's front end (either cooperative-matrix dialect)."""

    def __init__(self, label, device, emu_module, code: str, file: str):
        super().__init__(label, device)
        self._emu, self._code, self._file = emu_module, code, file

    def get_compilation_info_sync(self) -> GPUCompilationInfo:
        msgs = []
        for w in self._emu.warnings:
            loc = w.loc
            line = getattr(loc, "line", 0) or 0
            col = getattr(loc, "col", 0) or 0
            msgs.append(GPUCompilationMessage(w.message, "warning", line, col))
        return GPUCompilationInfo(msgs)

    def get_compilation_info_async(self) -> GPUPromise:
        return GPUPromise.run("get_compilation_info", self.get_compilation_info_sync)

    @property
    def emu_module(self):
        """The emu ShaderModule (its ``ir`` is the cooperative IR; emu extension)."""
        return self._emu


class GPUComputePipeline(GPUObjectBase):
    def __init__(self, label, device, module, pipe, used):
        super().__init__(label, device)
        self._module = module
        self._emu = pipe
        self._used = used
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


# ---------------------------------------------------------------------------------------------
# buffers

class GPUBuffer(GPUObjectBase):
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
            raise ValueError("Mapped offset must not be smaller than zero.")
        if offset % 8:
            raise ValueError("Mapped offset must be a multiple of 8.")
        if size < 1:
            raise ValueError("Mapped size must be larger than zero.")
        if size % 4:
            raise ValueError("Mapped size must be a multiple of 4.")
        if offset + size > self._size:
            raise ValueError("Mapped range must not extend beyond total buffer size.")
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
            raise ValueError(f"The range for buffer {what}ing is not contained in the currently mapped range.")
        return offset, size

    def read_mapped(self, buffer_offset: int | None = None, size: int | None = None, *, copy: bool = True):
        """The mapped bytes as a memoryview (a copy unless ``copy=False``)."""
        if self._map_state != "mapped":
            raise RuntimeError("Can only read from a buffer if its mapped.")
        if not self._mapped[2] & _MM.READ:
            raise RuntimeError("Can only read from a buffer if its mapped in read mode.")
        offset, size = self._check_range(buffer_offset, size)
        if offset < self._mapped[0] or offset + size > self._mapped[1]:
            raise ValueError("The range for buffer reading is not contained in the currently mapped range.")
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
            raise ValueError("The range for buffer writing is not contained in the currently mapped range.")
        self._data[offset:offset + m.nbytes] = np.frombuffer(m, np.uint8)

    def _experimental_get_mapped_range(self, buffer_offset=None, size=None):
        """A writable memoryview on the mapped bytes (as wgpu-py's experimental method); it
        becomes unusable at unmap."""
        if self._map_state != "mapped":
            raise RuntimeError("Can only write to a buffer if its mapped.")
        offset, size = self._check_range(buffer_offset, size)
        if offset < self._mapped[0] or offset + size > self._mapped[1]:
            raise ValueError("The range for buffer writing is not contained in the currently mapped range.")
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
        row = np.zeros((1, padded), np.uint8)
        row[0, :size] = self._data[offset:offset + size]

        def write_back():
            self._data[offset:offset + size] = row[0, :size]
        return row, (write_back if writable else None)

    @property
    def emu_bytes(self) -> np.ndarray:
        """The buffer's bytes (a numpy uint8 view; emu extension, for debugging)."""
        return self._data[:self._size]


# ---------------------------------------------------------------------------------------------
# queue and commands

class GPUCommandBuffer(GPUObjectBase):
    def __init__(self, label, device, commands: list):
        super().__init__(label, device)
        self._commands = commands
        self._submitted = False


class GPUQueue(GPUObjectBase):
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
            raise ValueError("Invalid buffer_offset")
        if not 0 <= data_offset < nbytes:
            raise ValueError("Invalid data_offset")
        if not 0 <= length <= nbytes - data_offset:
            raise ValueError("Invalid data_length")
        if not length <= buffer.size - buffer_offset:
            raise ValueError("Invalid data_length")
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
            raise ValueError("Invalid buffer_offset")
        if not length <= buffer.size - buffer_offset:
            raise ValueError("Invalid data_length")
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

    def write_texture(self, *args, **kwargs):
        _unsupported("queue.write_texture()", "textures")

    def read_texture(self, *args, **kwargs):
        _unsupported("queue.read_texture()", "textures")

    def copy_external_image_to_texture(self, *args, **kwargs):
        _unsupported("queue.copy_external_image_to_texture()", "textures")


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
        out = [b for b, _, _ in self.bindings.values()]
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
        for g in p._used:
            key = (g.group, g.binding)
            buf, off, size = self.bindings[key]
            row, wb = buf._view(off, size, writable=g.space == "storage" and g.access != "read")
            regions[key] = Region(g.name, "buffer", 1, size, data=row, binding=key, access=g.access, space=g.space)
            if wb is not None:
                write_backs.append(wb)
        try:
            p._emu.pipeline.dispatch(grid, regions)
        except EmuError as e:
            kind = "GPUValidationError" if isinstance(e, HostError) else "GPUInternalError"
            raise _from_emu(e, {p._module._file: p._module._code}, kind) from None
        finally:
            for wb in write_backs:
                wb()


class GPUCommandEncoder(GPUObjectBase):
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
            raise ValueError("offset must be a multiple of 4")
        if size is not None:
            size = int(size)
            if size <= 0:
                raise ValueError("size must be > 0")
            if size % 4 != 0:
                raise ValueError("size must be a multiple of 4")
            if offset + size > buffer.size:
                raise ValueError("buffer size out of range")
        else:
            if offset > buffer.size:
                raise ValueError("offset is too large")
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
            raise ValueError("source_offset must be a multiple of 4")
        if destination_offset % 4 != 0:
            raise ValueError("destination_offset must be a multiple of 4")
        if size is not None and size % 4 != 0:
            raise ValueError("size must be a multiple of 4")
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

    def copy_buffer_to_texture(self, *args, **kwargs):
        _unsupported("encoder.copy_buffer_to_texture()", "textures")

    def copy_texture_to_buffer(self, *args, **kwargs):
        _unsupported("encoder.copy_texture_to_buffer()", "textures")

    def copy_texture_to_texture(self, *args, **kwargs):
        _unsupported("encoder.copy_texture_to_texture()", "textures")

    def resolve_query_set(self, *args, **kwargs):
        _unsupported("encoder.resolve_query_set()", "query sets")

    def push_debug_group(self, group_label: str) -> None:
        pass

    def pop_debug_group(self) -> None:
        pass

    def insert_debug_marker(self, marker_label: str) -> None:
        pass

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


class GPUComputePassEncoder(GPUObjectBase):
    """Records dispatches (bind groups and pipeline as set when each dispatch is recorded)."""

    def __init__(self, label, device, encoder: GPUCommandEncoder):
        super().__init__(label, device)
        self._encoder = encoder
        self._pipeline: GPUComputePipeline | None = None
        self._groups: dict[int, tuple] = {}          # index -> (bind group, dynamic offsets)
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
                raise ValueError("Dynamic offsets start and length must be both set or both None.")
            if dynamic_offsets_data_start < 0:
                raise ValueError("Dynamic offsets start must be non-negative.")
            if dynamic_offsets_data_length < 0:
                raise ValueError("Dynamic offsets length must be non-negative.")
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
            off += dyn.get(g.binding, 0)
            need = _min_size(g)
            if size < need:
                self._fail(f"{what}: '{g.name}' (@group({g.group}) @binding({g.binding})) is bound to {size} bytes "
                           f"of {buf._describe()}; its type {g.type} needs at least {need}",
                           loc=g.loc, sources=sources, hint="bind a larger range (or buffer)")
                return None
            bindings[(g.group, g.binding)] = (buf, off, size)
        # usage scope: a buffer written as storage must not be used read-only in the same dispatch
        usages: dict[int, list] = {}
        for i in range(len(layouts)):
            bg, _ = self._groups[i]
            for b, (buf, _, _) in bg._bound.items():
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

    def push_debug_group(self, group_label: str) -> None:
        pass

    def pop_debug_group(self) -> None:
        pass

    def insert_debug_marker(self, marker_label: str) -> None:
        pass

    def set_immediates(self, *args, **kwargs):
        _unsupported("pass.set_immediates()", "immediate data")

    def write_timestamp(self, *args, **kwargs):
        _unsupported("pass.write_timestamp()", "timestamp queries")


# wgpu-py's deprecated names for *_sync methods
GPUBuffer.map = GPUBuffer.map_sync
GPUShaderModule.get_compilation_info = GPUShaderModule.get_compilation_info_sync
