"""Start-up hook for ``EMU_WGPU=1 PYTHONPATH=<this folder> python program.py``: installs emu's
wgpu adapter when EMU_WGPU is set, then runs the sitecustomize this one shadows, if any."""
import os
import sys


def _emu_wgpu_boot():
    if os.environ.get("EMU_WGPU", "").strip().lower() in ("1", "true", "yes", "on"):
        try:
            import emu.wgpu as m
            m.install_from_env()
        except Exception as e:  # never stop the program from starting
            print(f"emu.wgpu: EMU_WGPU is set but emu could not be installed: {e!r}", file=sys.stderr)
    here = os.path.dirname(os.path.abspath(__file__))
    import importlib.machinery
    import importlib.util
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)


_emu_wgpu_boot()
del _emu_wgpu_boot
