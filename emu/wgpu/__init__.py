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
from ._install import install, uninstall, installed

__all__ = ["install", "uninstall", "installed"]   # and, loaded on first use, those of emu.wgpu._api


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
