"""What the `emu` command itself does at its start and its end, apart from what it runs: kept
below everything so that emu/__init__.py can call it before numpy is loaded."""
from __future__ import annotations

import os
import sys

_FILES: list = []
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")   # what OpenBLAS reads


def files_stamp(fresh: bool = False) -> str:
    """A hash of every file of the emu package (relative path, size, mtime) and Python's version:
    any change to a file of emu gives a new one (as Python's bytecode cache checks its sources)."""
    if fresh or not _FILES:
        import hashlib
        root = os.path.dirname(os.path.abspath(__file__))
        h = hashlib.sha256(sys.version.encode())
        for folder, subs, files in os.walk(root):
            subs[:] = sorted(s for s in subs if s != "__pycache__")
            for f in sorted(files):
                st = os.stat(os.path.join(folder, f))
                h.update(f"{os.path.relpath(folder, root)}/{f} {st.st_size} {st.st_mtime_ns}\n".encode())
        if fresh:
            return h.hexdigest()[:16]
        _FILES.append(h.hexdigest()[:16])
    return _FILES[0]


def is_command() -> bool:
    """Whether this process is the `emu` command (the installed script, or `python -m emu`),
    not a program that imports emu."""
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "emu":
        return True
    if argv0 not in ("-m", os.path.join(os.path.dirname(os.path.abspath(__file__)), "__main__.py")):
        return False
    orig = list(getattr(sys, "orig_argv", ()))       # -m's argument: `python -m emu.wgpu` is not it
    return "-m" in orig and orig[orig.index("-m") + 1:orig.index("-m") + 2] == ["emu"]


ICD_SHIM = "_emu_vk_icd"       # emu/vulkan/build.py MODULE (this module imports nothing of emu's)


def is_driver() -> bool:
    """Whether this interpreter was started by emu's Vulkan driver for a program that is not
    Python (the shim, emu/vulkan/build.py's MODULE, is loaded and found no Python running): the
    process is the program's, and emu is all the Python in it."""
    shim = sys.modules.get(ICD_SHIM)
    return shim is not None and not getattr(shim.lib, "emu_host_had_python", 1)


def one_blas_thread() -> bool:
    """Before the `emu` command, or emu's Vulkan driver in a program that is not Python, loads
    numpy: OpenBLAS starts a thread per core as numpy loads, ~0.15 s of CPU (~40 ms of wall) at
    every start of the command on a 2-core machine (~0.02 s of the driver's), and no command of
    emu's computes through BLAS (the demo's check is one small float64 matmul). Only where the
    user set none of OpenBLAS's variables. True where it set one: restore() takes it out again
    once numpy is loaded, so the processes emu starts (and the program, for the driver) see the
    user's environment."""
    if "numpy" in sys.modules or any(k in os.environ for k in BLAS_THREADS) or not (is_command() or is_driver()):
        return False
    os.environ[BLAS_THREADS[0]] = "1"
    return True


def restore(was_set: bool) -> None:
    if was_set:
        os.environ.pop(BLAS_THREADS[0], None)


def exit_now(code: int) -> None:
    """End the `emu` command at once with `code`, skipping the interpreter's teardown (freeing
    every module and object: ~30 ms of each `emu run`). Only when nothing is left that the
    teardown would do for the user: no atexit handler registered (numba, Dask, multiprocessing,
    logging register theirs), no thread other than daemons, stdout and stderr flushed; the caller
    has closed every file it wrote. Otherwise it returns, and the process ends as usual."""
    import atexit
    import threading
    count = getattr(atexit, "_ncallbacks", None)
    if count is None or count() or any(not t.daemon for t in threading.enumerate()
                                       if t is not threading.main_thread()):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:       # a closed or broken stream: the usual ending reports it as before
        return
    os._exit(code)
