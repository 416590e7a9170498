"""The start of emu's Vulkan driver in a process: the shim's start-up code calls install()."""
from __future__ import annotations


def install(ffi, lib) -> None:
    from . import icd
    icd.connect(ffi, lib)
    from . import physical, objects, commands  # noqa: F401  (each registers its commands)
    icd.attach()
