"""Which real WebGPU binding lends emu.wgpu its enums, flags, structs and error classes.

wgpu-py (``wgpu``) is preferred so that ``emu.wgpu.BufferUsage is wgpu.BufferUsage``; when only
``wgpudawn`` is already imported (a Dawn program: importing wgpu-py then would break
``wgpudawn.install_as_wgpu()``) its objects are used; with neither installed, emu's stand-ins.
Flags are plain ints and enum members plain strings in every case, so values mix freely.

Errors: the exception emu raises for, say, a validation error is an instance of an emu class that
derives from ``GPUValidationError`` of every binding imported in the process (wgpu-py's and
wgpudawn's), so ``except wgpu.GPUValidationError`` and ``except wgpudawn.GPUValidationError``
both catch it. The emu error behind it, when there is one, is its ``emu_error`` attribute.
"""
from __future__ import annotations

import importlib
import sys

from . import _fallback


def _real(name: str):
    mod = sys.modules.get(name)
    if mod is not None and not getattr(mod, "__emu_standin__", False) and hasattr(mod, "GPUValidationError"):
        return mod
    return None


def _pick_base():
    for name in ("wgpu", "wgpudawn"):
        mod = _real(name)
        if mod is not None:
            return mod
    if "wgpudawn" in sys.modules:          # being imported right now: do not pull in wgpu-py
        return None
    for name in ("wgpu", "wgpudawn"):
        try:
            mod = importlib.import_module(name)
        except Exception:                  # not installed, or a native library that fails to load
            continue
        if not getattr(mod, "__emu_standin__", False):     # emu's own stand-in (emu/wgpu/_standin.py)
            return mod
    return None


base = _pick_base()
if base is not None:
    flags, enums, structs = base.flags, base.enums, base.structs
    BASE_NAME = base.__name__
else:
    flags, enums, structs = _fallback.flags, _fallback.enums, _fallback.structs
    BASE_NAME = None




def binding_bases(name: str) -> tuple:
    """The class ``name`` ('GPUAdapter', 'GPUPromise', ...) of each real binding imported now:
    emu's class of that name derives from them, so that ``isinstance(adapter, wgpu.GPUAdapter)``
    holds for programs that check types. Empty with no binding."""
    out = []
    for mod in (base, _real("wgpu"), _real("wgpudawn")):
        cls = getattr(mod, name, None) if mod is not None else None
        if isinstance(cls, type) and cls not in out:
            out.append(cls)
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Error classes

class _FallbackGPUError(Exception):
    """A generic GPU error (stand-in for wgpu.GPUError)."""

    def __init__(self, message):
        super().__init__(message)

    @property
    def message(self) -> str:
        return self.args[0]


class _FallbackValidationError(_FallbackGPUError):
    pass


class _FallbackOutOfMemoryError(_FallbackGPUError, MemoryError):
    pass


class _FallbackInternalError(_FallbackGPUError):
    pass


_FALLBACK = {"GPUError": _FallbackGPUError, "GPUValidationError": _FallbackValidationError,
             "GPUOutOfMemoryError": _FallbackOutOfMemoryError,
             "GPUInternalError": _FallbackInternalError}

GPUError = getattr(base, "GPUError", _FallbackGPUError)
GPUValidationError = getattr(base, "GPUValidationError", _FallbackValidationError)
GPUOutOfMemoryError = getattr(base, "GPUOutOfMemoryError", _FallbackOutOfMemoryError)
GPUInternalError = getattr(base, "GPUInternalError", _FallbackInternalError)
GPUPipelineError = getattr(base, "GPUPipelineError", None)

_combined: dict[tuple, type] = {}


def error_class(kind: str) -> type:
    """The class emu raises for ``kind`` ('GPUValidationError', 'GPUInternalError', ...): derived
    from that class of every binding imported now (or the stand-in)."""
    bases = []
    for name in ("wgpu", "wgpudawn"):
        mod = _real(name)
        if mod is not None:
            cls = getattr(mod, kind)
            if cls not in bases:
                bases.append(cls)
    if not bases:
        bases.append(globals()[kind] if globals()[kind] is not None else _FALLBACK[kind])
    key = (kind, tuple(bases))
    cls = _combined.get(key)
    if cls is None:
        cls = type(kind, tuple(bases), {"__module__": "emu.wgpu", "emu_error": None,
                                         "__doc__": f"emu's {kind}: see emu.wgpu._compat"})
        _combined[key] = cls
    return cls


def make_error(kind: str, message: str, emu_error=None) -> Exception:
    err = error_class(kind)(message)
    err.emu_error = emu_error
    return err
