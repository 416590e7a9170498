"""Done-when test of issue 13: the built wheel, installed into a fresh venv where neither wgpu
nor wgpudawn is installed, works on its own in an empty folder: every command of the README's
"Running shaders" and "Seeing the lane maps" blocks and its Python example, run as written (the
kernels from `emu examples --copy .`), `python -m emu.wgpu` on each bundled wgpu host program,
and a small user test suite through the pytest plugin.

The venv gets emu from the wheel (--no-deps, no index) and its dependencies (numpy, numba,
ml_dtypes, pytest, ...) by a .pth file naming a folder of links to this environment's packages,
less wgpu, wgpudawn and emu itself: nothing is downloaded, and the test takes tens of seconds."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HIDDEN = ("wgpu", "wgpudawn", "emu", "emu_gpu", "__editable__", "_emu")


def _sh(cmd, cwd, env, timeout=600) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                       shell=isinstance(cmd, str), executable="/bin/bash" if isinstance(cmd, str) else None)
    assert r.returncode == 0, f"{cmd}\nexit {r.returncode}\n--- stdout\n{r.stdout[-3000:]}\n--- stderr\n{r.stderr[-3000:]}"
    return r


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    src.mkdir()
    shutil.copytree(ROOT / "emu", src / "emu", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for f in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / f, src / f)
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    # the build backend (setuptools, as pyproject.toml asks) comes from pip's cache after the first run
    _sh([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(base / "dist"), str(src)], base, env)
    env["PIP_NO_INDEX"] = "1"
    wheel, = (base / "dist").glob("emu_gpu-*.whl")
    _sh([sys.executable, "-m", "venv", "--without-pip", str(base / "venv")], base, env)
    py = base / "venv" / "bin" / "python"
    _sh([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", str(wheel)], base, env)
    # the dependencies: links to this environment's packages, less the bindings and emu
    deps = base / "deps"
    deps.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.lower().startswith(HIDDEN) and not entry.name.endswith(".pth"):
            (deps / entry.name).symlink_to(entry)
    site = Path(_sh([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], base, env).stdout.strip())
    (site / "zz_emu_test_deps.pth").write_text(str(deps) + "\n")
    venv_env = {k: v for k, v in env.items() if not k.startswith(("EMU_", "VIRTUAL_ENV", "PYTHON"))}
    venv_env["PATH"] = f"{base / 'venv' / 'bin'}{os.pathsep}{env['PATH']}"
    user = base / "user"
    user.mkdir()
    return py, venv_env, user


def readme_commands() -> list[str]:
    """The indented command lines of the README's 'Running shaders' and 'Seeing the lane maps'
    blocks (continuation lines joined)."""
    text = (ROOT / "README.md").read_text()
    out = []
    for title in ("## Running shaders", "## Seeing the lane maps"):
        section = text.split(title, 1)[1].split("\n## ", 1)[0]
        block = section.split("\n\n", 2)[1]
        joined = block.replace("\\\n", " ")
        out += [line.strip() for line in joined.splitlines() if line.startswith("    ")]
    return out


def readme_python() -> str:
    text = (ROOT / "README.md").read_text()
    return re.search(r"```python\n(.*?)```", text.split("## Seeing the lane maps", 1)[1], re.S).group(1)


def test_wheel_in_an_empty_folder(venv):
    py, env, user = venv
    r = _sh([str(py), "-c", "import importlib.util as u; print(u.find_spec('wgpu'), u.find_spec('wgpudawn'))"], user, env)
    assert r.stdout.split() == ["None", "None"]               # neither binding: emu stands on its own
    commands = readme_commands()
    assert commands[0].startswith("emu examples --copy .")
    assert len(commands) >= 14 and any(c.startswith("emu explain") for c in commands)
    for cmd in commands:
        _sh(cmd, user, env)
    assert (user / "docs" / "trace-schema.md").exists() and (user / "c.npy").exists() and (user / "b.svg").exists()
    assert (user / "wgpu_host" / "README.md").read_text().startswith("# emu.wgpu")     # the guide README points to
    assert "## Profile files" in (user / "docs" / "profiles.md").read_text()           # the format a hint points to
    r = _sh([str(py), "-c", readme_python()], user, env)
    err, same = r.stdout.split()
    assert float(err) < 1e-4 and same == "True"
    # every bundled wgpu host program, unchanged, without wgpu installed
    for prog in sorted((user / "wgpu_host").glob("*.py")):
        r = _sh([str(py), "-m", "emu.wgpu", str(prog), str(user / f"{prog.stem}.npz")], user,
                dict(env, EMU_PROFILE="nvidia-h200"))
        assert "via emu" in r.stdout and "OK" in r.stdout, r.stdout
    # a user's own test suite through the pytest plugin
    (user / "saxpy.wgsl").write_text(textwrap.dedent("""\
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(1) var<storage, read_write> y: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) { y[g.x] = 2.0 * x[g.x] + y[g.x]; }
        """))
    (user / "test_mine.py").write_text(textwrap.dedent("""\
        import numpy as np
        import pytest

        def test_saxpy(emu_device, assert_bits_equal):
            pipe = emu_device.create_compute_pipeline(emu_device.create_shader_module(open("saxpy.wgsl").read(), "saxpy.wgsl"))
            x, y = np.arange(64, dtype=np.float32), np.ones(64, np.float32)
            emu_device.dispatch(pipe, {(0, 0): x, (0, 1): y}, 1)
            assert_bits_equal(y, 2 * np.arange(64, dtype=np.float32) + 1)

        @pytest.mark.emu_configs("f16xf16->f32:16x16x16")
        def test_gemm(emu_device, assert_bits_equal):
            mod = emu_device.create_shader_module(open("gemm_dawn.wgsl").read(), "gemm_dawn.wgsl")
            pipe = emu_device.create_compute_pipeline(mod, constants={"M": 32, "N": 32, "K": 32})
            a = np.eye(32, dtype=np.float16); b = np.arange(1024, dtype=np.float16).reshape(32, 32) / 8
            c = np.zeros((32, 32), np.float32)
            emu_device.dispatch(pipe, {(0, 0): a, (0, 1): b, (0, 2): c}, (1, 1))
            assert_bits_equal(c, b.astype(np.float32))

        def test_gpu(gpu_device):
            pass
        """))
    r = subprocess.run([str(py), "-m", "pytest", "-p", "no:cacheprovider", "-rs", "--emu-profile",
                        "nvidia-h200,amd-rdna3,intel-xe-hpg", "test_mine.py"],
                       cwd=user, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "5 passed, 2 skipped" in r.stdout, r.stdout            # gemm: not on intel-xe-hpg; no real GPU
    assert "no real WebGPU adapter" in r.stdout and "has no config f16xf16->f32:16x16x16" in r.stdout
