"""Selecting emu's adapter for programs that ``import wgpu`` or ``import wgpudawn``.

``install()`` patches, in this process:

* ``wgpu.gpu`` and ``wgpudawn.gpu``: replaced by emu's ``GPU`` (so ``request_adapter_sync``,
  ``request_adapter_async`` and ``enumerate_adapters_*`` give emu adapters, and so does
  ``wgpu.utils.get_default_device()``);
* ``<package>.backends._register_backend``: a later ``import wgpu.backends.wgpu_native`` (which
  older programs do) loads the real backend but leaves emu's ``gpu`` in place instead of failing
  with "WGPU backend can only be set once";
* the native ``extras`` modules: functions that take an adapter or device recognise emu's
  (``get_adapter_properties`` returns the profile's ``subgroup_matrix_configs``,
  ``request_device_sync`` requests an emu device, Dawn toggles are ignored) and say clearly
  that the others are not emulated; functions on the real instance (``set_instance_extras``)
  run as they are.

A module not yet imported is patched right after it is, by a finder on ``sys.meta_path`` that
wraps its loader (nothing is imported early: a program that calls
``wgpudawn.install_as_wgpu()`` keeps working). ``uninstall()`` puts everything back.

This module imports nothing heavy, so that the start-up hooks (``emu_wgpu.pth``,
``_boot/sitecustomize.py``) cost nothing until wgpu is used.
"""
from __future__ import annotations

import functools
import importlib.abc
import inspect
import os
import sys

_TRUE = ("1", "true", "yes", "on")

_state = {"installed": False, "profile": None}
_gpus: dict = {}                  # flavor -> GPU
_originals: list = []             # (object, attribute, original value) to restore
_finder = None

_ROOTS = {"wgpu": "wgpu", "wgpudawn": "dawn"}
_EXTRAS = ("wgpu.backends.wgpu_native.extras", "wgpudawn.backends.dawn.extras")


def flavor_gpu(flavor: str):
    """The GPU object of a flavor ('wgpu', 'dawn', 'emu'), made once."""
    g = _gpus.get(flavor)
    if g is None:
        from ._adapter import GPU
        g = _gpus[flavor] = GPU(profile=_state["profile"], flavor=flavor)
    return g


def installed() -> bool:
    """Whether emu's adapter is installed in this process."""
    return _state["installed"]


def install(profile=None) -> None:
    """Make ``wgpu`` and ``wgpudawn`` (imported already or later) hand out emu adapters.

    ``profile``: a profile name or path (default: ``EMU_PROFILE`` when an adapter is requested,
    else 'reference'). Calling it again changes the profile."""
    global _finder
    _state["profile"] = profile
    for g in _gpus.values():
        g._profile = profile
    if _state["installed"]:
        return
    _state["installed"] = True
    _finder = _PostImportFinder({**{name: _patch_root for name in _ROOTS},
                                 **{name: _patch_extras for name in _EXTRAS}})
    sys.meta_path.insert(0, _finder)
    for name in list(_ROOTS) + list(_EXTRAS):
        mod = sys.modules.get(name)
        if mod is not None and name in _ROOTS and _is_alias(name, mod):
            continue
        if mod is not None:
            _finder.hooks[name](mod)


def env_wants_emu() -> bool:
    """Whether EMU_WGPU is set to 1/true/yes/on (see emu.wgpu.install_from_env)."""
    return os.environ.get("EMU_WGPU", "").strip().lower() in _TRUE


def uninstall() -> None:
    """Undo ``install()``: the real ``gpu`` objects and extras functions come back."""
    global _finder
    if _finder is not None and _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    _finder = None
    while _originals:
        obj, attr, value = _originals.pop()
        setattr(obj, attr, value)
    _state["installed"] = False
    _state["profile"] = None
    for g in _gpus.values():
        g._profile = None


def _is_alias(name, mod) -> bool:
    """wgpudawn.install_as_wgpu() makes ``wgpu`` a proxy of wgpudawn: patch wgpudawn, not it."""
    return name == "wgpu" and type(mod).__name__ == "_WgpuProxy"


def _set(obj, attr, value):
    _originals.append((obj, attr, getattr(obj, attr)))
    setattr(obj, attr, value)


def _patch_root(mod) -> None:
    name = mod.__name__
    if _is_alias(name, mod) or name not in _ROOTS:
        return
    from ._adapter import GPU
    if isinstance(mod.__dict__.get("gpu"), GPU):
        return
    _set(mod, "gpu", flavor_gpu(_ROOTS[name]))
    backends = getattr(mod, "backends", None) or sys.modules.get(name + ".backends")
    register = getattr(backends, "_register_backend", None)
    if register is not None:
        @functools.wraps(register)
        def _register_backend(gpu, _name=name, _register=register):
            if isinstance(sys.modules[_name].__dict__.get("gpu"), GPU):
                return gpu          # emu's adapter is installed: the real backend loads, unused
            return _register(gpu)
        _set(backends, "_register_backend", _register_backend)


# ---------------------------------------------------------------------------------------------
# the native extras

def is_emu_adapter(obj) -> bool:
    from ._adapter import GPUAdapter
    return isinstance(obj, GPUAdapter)


def _is_emu_object(obj) -> bool:
    from ._adapter import GPUAdapter
    from ._common import GPUObjectBase
    return isinstance(obj, (GPUAdapter, GPUObjectBase))


def adapter_properties(adapter) -> dict:
    """What ``wgpudawn.backends.dawn.extras.get_adapter_properties`` says for an emu adapter:
    ``subgroup_matrix_configs`` (Dawn's keys: component_type, result_component_type, m, n, k,
    min_subgroup_size, max_subgroup_size) from the profile, when it has any, and ``emu``."""
    p = adapter._profile
    out = {"emu": {"profile": p.name, "subgroup_size": adapter.info["emu_subgroup_size"]}}
    configs = p.props_dawn()
    if configs and "chromium-experimental-subgroup-matrix" in adapter.features:
        sg = adapter.info["emu_subgroup_size"]      # the size emu runs (see GPUAdapter.info)
        out["subgroup_matrix_configs"] = [dict(c, min_subgroup_size=sg, max_subgroup_size=sg) for c in configs]
    return out


def _request_device(adapter, *args, label="", required_features=(), required_limits=None,
                    default_queue=None, **ignored):
    """extras.request_device_sync for an emu adapter: trace paths and Dawn toggles are ignored."""
    return adapter.request_device_sync(label=label, required_features=required_features,
                                       required_limits=required_limits, default_queue=default_queue)


_EXTRAS_FOR_EMU = {
    "get_adapter_properties": lambda adapter, *a, **k: adapter_properties(adapter),
    "request_device_sync": _request_device,
    "request_device": _request_device,
    "get_toggles": lambda obj, *a, **k: [],
    "wait_for_commands_to_be_scheduled": lambda *a, **k: None,
    "perform_idle_tasks": lambda *a, **k: None,
    "reduce_memory_usage": lambda *a, **k: None,
}


def _wrap_extra(name, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        objs = list(args[:1]) + [kwargs[k] for k in ("adapter", "device", "adapter_or_device") if k in kwargs]
        if any(_is_emu_object(o) for o in objs):
            handler = _EXTRAS_FOR_EMU.get(name)
            if handler is None:
                from ._common import NotSupportedError
                raise NotSupportedError(
                    f"{fn.__module__}.{name}() is a native extra of the real binding; emu's virtual GPU "
                    f"does not emulate it (unset EMU_WGPU to run on a real adapter)")
            return handler(*args, **kwargs)
        return fn(*args, **kwargs)
    wrapper._emu_wrapped = True
    return wrapper


def _patch_extras(mod) -> None:
    names = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
    for name in names:
        fn = getattr(mod, name, None)
        if not inspect.isfunction(fn) or getattr(fn, "_emu_wrapped", False):
            continue
        _set(mod, name, _wrap_extra(name, fn))


# ---------------------------------------------------------------------------------------------
# post-import hooks

class _PatchingLoader:
    """A module's own loader, followed by a patch of the executed module."""

    def __init__(self, loader, hook):
        self._emu_loader, self._emu_hook = loader, hook

    def create_module(self, spec):
        create = getattr(self._emu_loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module):
        self._emu_loader.exec_module(module)
        if _state["installed"]:
            self._emu_hook(module)

    def __getattr__(self, name):
        return getattr(self._emu_loader, name)


class _PostImportFinder(importlib.abc.MetaPathFinder):
    def __init__(self, hooks: dict):
        self.hooks = hooks

    def find_spec(self, fullname, path=None, target=None):
        hook = self.hooks.get(fullname)
        if hook is None:
            return None
        for finder in sys.meta_path:
            if finder is self or isinstance(finder, _PostImportFinder):
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _PatchingLoader(spec.loader, hook)
        return spec
