"""The `emu` command's own start and end (emu/startup.py): one OpenBLAS thread while the command
loads numpy (the user's variables kept, none left for the processes it starts), and the teardown
skipped only where nothing is left for it to do."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
VEC = """@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  c[g.x] = a[g.x] * 2.0 + 1.0;
}
"""


def _py(code, **env):
    e = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                                                          "OMP_NUM_THREADS")}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env=dict(e, **env))


# the process taken for the command (its script's name is `emu`), then numpy's threads and the variable
PROBE = ("import sys; sys.argv[0] = '/bin/emu'\nimport os, emu\n"
         "print(len(os.listdir('/proc/self/task')), os.environ.get('OPENBLAS_NUM_THREADS'))")


def test_command_loads_numpy_with_one_blas_thread():
    r = _py(PROBE)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "None"]        # one thread (the main one); the variable taken out again


def test_user_blas_setting_kept():
    r = _py(PROBE, OPENBLAS_NUM_THREADS="2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[1] == "2"


def test_a_program_importing_emu_is_left_alone():
    assert not __import__("emu.startup").startup.is_command()
    r = _py("import os, emu; print(os.environ.get('OPENBLAS_NUM_THREADS'), emu.startup.is_command())")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["None", "False"]


# emu's Vulkan driver started by its shim in a program that is not Python (the shim module loaded,
# emu_host_had_python 0), then in a Python program (1): only the first is taken for the driver
DRIVER = ("import sys, types\nsys.modules['_emu_vk_icd'] = types.SimpleNamespace(lib=types.SimpleNamespace("
          "emu_host_had_python={host}))\nimport os, emu\n"
          "print(len(os.listdir('/proc/self/task')), os.environ.get('OPENBLAS_NUM_THREADS'), emu.startup.is_driver())")


def test_the_driver_in_a_program_not_python_loads_numpy_with_one_blas_thread():
    r = _py(DRIVER.format(host=0))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "None", "True"]


def test_the_driver_in_a_python_program_leaves_its_blas_alone():
    from emu.startup import ICD_SHIM
    from emu.vulkan.build import MODULE
    assert ICD_SHIM == MODULE
    r = _py(DRIVER.format(host=1))
    assert r.returncode == 0, r.stderr
    threads, var, driver = r.stdout.split()
    assert (var, driver) == ("None", "False")
    assert int(threads) > 1 or os.cpu_count() == 1        # OpenBLAS's own threads: its settings untouched


def test_exit_now_keeps_the_code_and_flushes():
    r = _py("import sys; from emu.startup import exit_now\nprint('out', end=''); "
            "sys.stderr.write('err'); exit_now(7)\nprint('not reached')")
    assert (r.returncode, r.stdout, r.stderr) == (7, "out", "err")


def test_exit_now_leaves_the_teardown_where_it_has_work():
    r = _py("import atexit; from emu.startup import exit_now\natexit.register(lambda: print('handler ran'))\n"
            "exit_now(7)\nprint('went on')")
    assert (r.returncode, r.stdout) == (0, "went on\nhandler ran\n")
    r = _py("import threading, time; from emu.startup import exit_now\n"
            "t = threading.Thread(target=lambda: (time.sleep(0.5), print('thread done'))); t.start()\n"
            "exit_now(7)\nprint('went on')")
    assert (r.returncode, r.stdout) == (0, "went on\nthread done\n")


def test_real_run_writes_its_output_and_exit_codes(tmp_path):
    """`python -m emu run` as a user starts it (the short ending taken): the output's bits, the
    exit statuses and messages of success, a shader error and a usage error."""
    (tmp_path / "vec.wgsl").write_text(VEC)
    a = np.arange(128, dtype=np.float32) / 7
    np.save(tmp_path / "a.npy", a)
    base = [sys.executable, "-m", "emu", "run", str(tmp_path / "vec.wgsl"), "--dispatch", "2",
            "--buffer", f"0:0={tmp_path}/a.npy", "--buffer", "0:1=zeros:128:f32"]
    r = subprocess.run(base + ["--output", f"0:1={tmp_path}/c.npy"], capture_output=True, text=True, cwd=ROOT,
                       timeout=120)
    assert (r.returncode, r.stdout) == (0, "") and r.stderr.startswith(
        "emu: ran 'main' on reference, dispatch 2x1x1 (2 workgroups) in ")
    assert r.stderr.endswith(f"; wrote {tmp_path}/c.npy (128,) float32\n") and r.stderr.count("\n") == 1
    assert np.array_equal(np.load(tmp_path / "c.npy").view(np.uint32), (a * np.float32(2) + np.float32(1)).view(np.uint32))
    r = subprocess.run(base + ["--dispatch", "3", "--bounds", "strict"], capture_output=True, text=True, cwd=ROOT,
                       timeout=120)
    assert r.returncode == 1 and r.stdout == "" and f"{tmp_path}/vec.wgsl:4:" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run(base + ["--output", "0:1"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 2 and "--output" in r.stderr and "Traceback" not in r.stderr
