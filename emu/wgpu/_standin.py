"""emu's own ``wgpu`` and ``wgpudawn`` modules, for programs run on emu's adapter where the real
binding is not installed (``python -m emu.wgpu prog.py`` with nothing else installed).

``emu.wgpu.install()`` puts a finder at the end of ``sys.meta_path`` (``register()``): an installed binding is always found
first; only a name no other finder knows is answered here. The stand-ins are emu.wgpu's API under
the binding's name, with the binding's adapter flavour (feature names), ``utils.get_default_device``,
``utils.compute.compute_with_buffers``,
the native ``extras`` module (the functions emu answers for its adapters; ``set_instance_extras``
does nothing, there being no native instance) and wgpudawn's ``install_as_wgpu``. Each module
says ``__emu_standin__ = True``, so emu never takes it for a real binding (emu/wgpu/_compat.py)."""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types

FLAVORS = {"wgpu": "wgpu", "wgpudawn": "dawn"}
EXTRAS = {"wgpu": "wgpu.backends.wgpu_native", "wgpudawn": "wgpudawn.backends.dawn"}


def _packages(root: str) -> list[str]:
    backend = EXTRAS[root]
    return [root, f"{root}.utils", f"{root}.utils.compute", f"{root}.backends", backend, f"{backend}.extras"]


MODULES = {name: root for root in FLAVORS for name in _packages(root)}


def _fill(mod: types.ModuleType, name: str) -> None:
    from . import _api, _install
    root = MODULES[name]
    if name == root:
        for k in _api.__all__:
            if k not in ("install", "uninstall", "installed"):      # emu's, not the binding's
                setattr(mod, k, getattr(_api, k))
        mod.__version__ = _api.__version__
        mod.gpu = _install.flavor_gpu(FLAVORS[root])
        if root == "wgpudawn":
            def install_as_wgpu():
                """As wgpudawn's: ``import wgpu`` then gives this module."""
                sys.modules["wgpu"] = mod
            mod.install_as_wgpu = install_as_wgpu
    elif name.endswith(".utils.compute"):
        from ._utils_compute import compute_with_buffers

        def _compute_with_buffers(input_arrays, output_arrays, shader, constants=None, n=None):
            return compute_with_buffers(sys.modules[root], input_arrays, output_arrays, shader, constants, n)
        _compute_with_buffers.__doc__ = compute_with_buffers.__doc__
        mod.compute_with_buffers = _compute_with_buffers
    elif name.endswith(".utils"):
        def get_default_device():
            """A device of emu's adapter, made once (as wgpu.utils.get_default_device)."""
            if getattr(mod, "_device", None) is None:
                mod._device = sys.modules[root].gpu.request_adapter_sync().request_device_sync()
            return mod._device
        mod.get_default_device = get_default_device
    elif name.endswith(".extras"):
        for k, fn in _install._EXTRAS_FOR_EMU.items():
            setattr(mod, k, fn)
        mod.set_instance_extras = lambda *args, **kwargs: None

        def __getattr__(attr, _name=name):
            if attr.startswith("_"):
                raise AttributeError(attr)
            from ._common import NotSupportedError
            raise NotSupportedError(f"{_name}.{attr}() is a native extra of the real binding; emu's "
                                    f"virtual GPU does not emulate it")
        mod.__getattr__ = __getattr__


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        mod = types.ModuleType(spec.name, f"emu's stand-in for {spec.name} (emu/wgpu/_standin.py)")
        mod.__emu_standin__ = True
        return mod

    def exec_module(self, module):
        _fill(module, module.__name__)


class StandInFinder(importlib.abc.MetaPathFinder):
    """Answers for wgpu / wgpudawn (and their utils, backends, extras) when nothing else does."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MODULES:
            return None
        parent = fullname.rpartition(".")[0]
        if parent and not getattr(sys.modules.get(parent), "__emu_standin__", False):
            return None          # a submodule of a real binding is the binding's business
        return importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=True)


FINDER = StandInFinder()


def register() -> None:
    if FINDER not in sys.meta_path:
        sys.meta_path.append(FINDER)


def unregister() -> None:
    if FINDER in sys.meta_path:
        sys.meta_path.remove(FINDER)
