"""A drop-in wgpu-py adapter: unchanged wgpu-py / wgpudawn host programs run on emu's virtual GPU.

    python -m emu.wgpu program.py ARGS          # any unmodified program, nothing to install
    EMU_WGPU=1 python program.py                # after `python -m emu.wgpu --install-hook`
    EMU_PROFILE=nvidia-h200 ...                 # the device profile the adapter emulates
    import emu.wgpu; emu.wgpu.install()         # from Python, before or after `import wgpu`
    import emu.wgpu as wgpu                     # or use emu.wgpu itself as the wgpu module

See emu/wgpu/README.md. This package imports lazily: ``install()`` costs nothing until the
program imports ``wgpu`` or ``wgpudawn``, and the API (``emu.wgpu.gpu``, ``emu.wgpu.BufferUsage``,
``emu.wgpu.GPUValidationError``, ...) is loaded on first use.
"""
from . import _install, _standin
from ._install import installed

__all__ = ["install", "uninstall", "installed", "install_from_env"]   # and, on first use, emu.wgpu._api's


def install(profile=None) -> None:
    """Make ``wgpu`` and ``wgpudawn`` (imported already or later) hand out emu adapters; where
    one is not installed, ``import`` gives emu's stand-in for it (emu/wgpu/_standin.py).
    ``profile``: a profile name or path (default: ``EMU_PROFILE`` when an adapter is requested,
    else 'reference'). Calling it again changes the profile."""
    _install.install(profile)
    _standin.register()


def uninstall() -> None:
    """Undo ``install()``: the real ``gpu`` objects and extras functions come back."""
    _standin.unregister()
    _install.uninstall()


def install_from_env() -> bool:
    """``install()`` when EMU_WGPU is set to 1/true/yes/on (what the start-up hooks call)."""
    if _install.env_wants_emu():
        install()
        return True
    return False


def __getattr__(name):
    if name.startswith("_"):
        raise AttributeError(f"module 'emu.wgpu' has no attribute {name!r}")
    import importlib
    _api = importlib.import_module("emu.wgpu._api")
    try:
        value = getattr(_api, name)
    except AttributeError:
        raise AttributeError(f"module 'emu.wgpu' has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__():
    import importlib
    _api = importlib.import_module("emu.wgpu._api")
    return sorted(set(globals()) | {n for n in dir(_api) if not n.startswith("_")})
