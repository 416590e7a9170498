"""The compute subset of wgpu-py 0.32's API, on emu's virtual GPU: what its objects share
(limits, feature names, descriptor and flag parsing, errors in wgpu's classes with hints in wgpu's
terms, the object base class). Each WebGPU object has its module: _adapter, _device, _buffer,
_shader, _pipeline, _bindings, _commands (encoder, pass, command buffer), _queue.

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

from ..errors import EmuError, HostError, InvalidArgument, rewrite_hint
from ._compat import binding_bases, flags, make_error

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
    "max-immediate-size": 256,      # var<immediate> bytes (Vulkan push constants: 256 on NVIDIA's drivers)
}

# WGSL `enable` extension -> the device features it needs (any one of the names)
_ENABLE_FEATURES = {
    "f16": ("shader-f16",),
    "subgroups": ("subgroups", "subgroup"),
    "subgroups_f16": ("subgroups", "subgroup"),
    "chromium_experimental_subgroup_matrix": ("chromium-experimental-subgroup-matrix",),
    "wgpu_cooperative_matrix": ("cooperative-matrix",),
    "atomic_vec2u_min_max": ("atomic-vec2u-min-max",),
}
# names of one feature as different bindings spell it
_FEATURE_ALIASES = {"subgroup": "subgroups", "subgroups": "subgroup", "wgpu-shader-f64": "shader-f64"}


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
    (re.compile(r"--bounds strict \(Python: bounds=\"strict\"\)"), "EMU_BOUNDS=strict"),
    (re.compile(r"--bounds strict"), "EMU_BOUNDS=strict"),
    (re.compile(r"--max-steps N"), "EMU_MAX_STEPS=N"),
)


def _internal(e: Exception, sources: dict | None) -> Exception:
    """A bug of emu's (any exception that is not an EmuError) as one GPUInternalError message."""
    from ..errors import internal_error
    err = internal_error(e)
    return make_error("GPUInternalError", err.format(sources), err)


def _from_emu(e: EmuError, sources: dict | None, kind: str = "GPUValidationError") -> Exception:
    """emu's error as the wgpu exception ``kind``, its hints speaking of the wgpu API (not of
    the emu command line)."""
    hint = rewrite_hint(e.hint, _HINT_REWRITES)
    text = EmuError(e.message, e.loc, hint=hint, where=e.where, severity=e.severity).format(sources)
    return make_error(kind, text, e)


def _flag_value(cls, value, what: str) -> int:
    if isinstance(value, str):
        total = 0
        parts = [p.strip() for p in value.split("|") if p.strip()]
        if not parts:
            raise InvalidArgument(f"Invalid flag value: {value}")
        for p in parts:
            v = getattr(cls, p.upper(), None)
            if not isinstance(v, int) or p.startswith("_"):
                raise InvalidArgument(f"Invalid flag value for {what}: '{p}'")
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
        raise InvalidArgument("The given data is not contiguous")
    return m.cast("B") if m.format != "B" or m.ndim != 1 else m


def _round_up(n: int, m: int) -> int:
    return (n + m - 1) // m * m


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
        raise InvalidArgument(f"EMU_SUBGROUP_SIZE={env!r}: profile '{profile.name}' runs subgroups of "
                         f"{', '.join(map(str, profile.subgroup_sizes))}")
    return n


# ---------------------------------------------------------------------------------------------
# objects of a device

_uids = iter(range(1, 1 << 62))


class GPUObjectBase(*binding_bases("GPUObjectBase")):
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

    # the binding's base class counts its native objects at creation and deletion: emu's are
    # not native, and they print as emu's
    def __del__(self):
        pass

    __str__ = object.__str__

    def _describe(self) -> str:
        return f"{type(self).__name__} '{self._label}'" if self._label else f"{type(self).__name__} (unlabeled)"
