"""The start of emu's Vulkan driver in a process: the shim's start-up code calls install().

EMU_VK_PROFILE=FILE profiles the driver's Python (cProfile) for the whole process and writes the
statistics to FILE at each vkDestroyInstance and when the process exits: read them with python -m pstats FILE."""
from __future__ import annotations

import os


def install(ffi, lib) -> None:
    from . import icd
    icd.connect(ffi, lib)
    from . import physical, objects, commands, images  # noqa: F401  (each registers its commands)
    icd.attach()
    from ..startup import is_driver
    if is_driver():
        # all the Python of the process is emu's, and what is loaded by now (numpy's and emu's
        # modules, classes, functions: ~100,000 objects) lives as long as it: kept out of the
        # collector's full passes, which would otherwise walk them again and again
        import gc
        gc.freeze()
    out = os.environ.get("EMU_VK_PROFILE")
    if out:
        _profile(out)


def _profile(path: str) -> None:
    import atexit
    import cProfile
    import threading
    prof = cProfile.Profile()
    prof.enable()
    threading.setprofile(lambda *a: None)

    def dump():
        prof.dump_stats(path)
    atexit.register(dump)
    from . import icd
    icd.ON_DESTROY_INSTANCE.append(dump)
    icd.AT_EXIT.append(dump)
