"""Helpers for the drop-in wgpu adapter tests (tests/wgpu/): run a host program from
emu/examples/wgpu_host/ in a fresh interpreter, on emu's adapter or on the real one, and load what it
saved. (A module of its own, not conftest.py: test folders each have a conftest.)"""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
HOST = ROOT / "emu" / "examples" / "wgpu_host"
SKIP_CODE = 77          # what a host program returns when its adapter lacks a feature it needs


def clean_env(**extra) -> dict:
    """This environment without EMU_* settings and without emu's start-up hook, the repository
    first on PYTHONPATH (other entries, e.g. carried packages, stay)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EMU_")}
    keep = [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
            if p and not p.rstrip("/").endswith(os.path.join("emu", "wgpu", "_boot"))]
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + keep)
    env.update({k: v for k, v in extra.items() if v is not None})
    return env


# Prefix of a `python -c` program: wgpu and wgpudawn are not found on sys.path, as if neither
# were installed (the path finder is wrapped).
WITHOUT_BINDINGS = """
import sys, importlib.machinery as _m
class _Hide:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.split('.')[0] in ('wgpu', 'wgpudawn'):
            return None
        return _m.PathFinder.find_spec(name, path, target)
    invalidate_caches = _m.PathFinder.invalidate_caches
sys.meta_path[sys.meta_path.index(_m.PathFinder)] = _Hide
"""


class Run:
    def __init__(self, proc, out: Path):
        self.rc, self.stdout, self.stderr = proc.returncode, proc.stdout, proc.stderr
        self._out = out

    @property
    def text(self) -> str:
        return f"exit {self.rc}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr[-4000:]}"

    def arrays(self) -> dict:
        with np.load(self._out) as f:
            return {k: f[k] for k in f.files}


def run_program(name: str, tmp_path: Path, how: str, timeout=120, **env) -> Run:
    """Run emu/examples/wgpu_host/<name> unchanged. how: 'real' (plain python), 'launcher'
    (python -m emu.wgpu), 'standin' (the launcher where neither wgpu nor wgpudawn is installed),
    'env' (EMU_WGPU=1 with the sitecustomize start-up hook on PYTHONPATH)."""
    out = tmp_path / f"{Path(name).stem}-{how}.npz"
    e = clean_env(**env)
    if how == "real":
        cmd = [sys.executable, str(HOST / name), str(out)]
    elif how == "launcher":
        cmd = [sys.executable, "-m", "emu.wgpu", str(HOST / name), str(out)]
    elif how == "standin":
        cmd = [sys.executable, "-c", WITHOUT_BINDINGS + "import runpy; runpy.run_module('emu.wgpu', run_name='__main__')",
               str(HOST / name), str(out)]
    elif how == "env":
        e["EMU_WGPU"] = "1"
        e["PYTHONPATH"] = os.pathsep.join([str(ROOT / "emu" / "wgpu" / "_boot"), e["PYTHONPATH"]])
        cmd = [sys.executable, str(HOST / name), str(out)]
    else:
        raise ValueError(how)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e, cwd=tmp_path)
    return Run(proc, out)
