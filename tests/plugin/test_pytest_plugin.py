"""emu's pytest plugin (emu/pytest_plugin.py, entry point pytest11) as a user's suite meets it:
a small project with its own tests, run by pytest in a folder of its own."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import emu
from emu.pytest_plugin import assert_bits_equal

SAXPY = """@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) { y[g.x] = 2.0 * x[g.x] + y[g.x]; }
"""

USER_TESTS = '''
import numpy as np
import pytest

SAXPY = open("saxpy.wgsl").read()


def test_saxpy(emu_device, assert_bits_equal):
    pipe = emu_device.create_compute_pipeline(emu_device.create_shader_module(SAXPY, "saxpy.wgsl"))
    x, y = np.arange(64, dtype=np.float32), np.ones(64, np.float32)
    emu_device.dispatch(pipe, {(0, 0): x, (0, 1): y}, 1)
    assert_bits_equal(y, 2 * np.arange(64, dtype=np.float32) + 1)


@pytest.mark.emu_configs("f16xf16->f32:16x16x16")
def test_needs_a_matrix_config(emu_device):
    print("RAN", emu_device.profile.name)


def test_wrong_answer(emu_device, assert_bits_equal):
    pipe = emu_device.create_compute_pipeline(emu_device.create_shader_module(SAXPY, "saxpy.wgsl"))
    y = np.zeros(64, np.float32)
    emu_device.dispatch(pipe, {(0, 0): np.ones(64, np.float32), (0, 1): y}, 1)
    want = np.full(64, 2.0, np.float32)
    want[37] = 2.5
    assert_bits_equal(y, want)
'''


def run_user_suite(tmp_path, *args):
    (tmp_path / "saxpy.wgsl").write_text(SAXPY)
    (tmp_path / "test_user.py").write_text(textwrap.dedent(USER_TESTS))
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", "-s", *args,
                           "test_user.py"], capture_output=True, text=True, cwd=tmp_path, timeout=300)


def test_user_suite_on_two_profiles(tmp_path):
    r = run_user_suite(tmp_path, "--emu-profile", "nvidia-h200,intel-xe-hpg", "-v")
    out = r.stdout
    assert "test_user.py::test_saxpy[nvidia-h200] PASSED" in out, out
    assert "test_user.py::test_saxpy[intel-xe-hpg] PASSED" in out, out
    assert "RAN nvidia-h200" in out and "RAN intel-xe-hpg" not in out
    assert "SKIPPED" in out and "profile 'intel-xe-hpg' has no config f16xf16->f32:16x16x16" in out
    # the failing test names the element, values, bits and the lane (subgroup sizes 32 and 8)
    assert "1 of 64 elements differ in their bits; the first 1:" in out
    assert ("[37]: np.float32(2.0) (0x40000000) != expected np.float32(2.5) (0x40200000)  "
            "(if invocation i wrote element i: subgroup 1, lane 5)") in out      # 32 lanes
    assert "(if invocation i wrote element i: subgroup 4, lane 5)" in out       # intel-xe-hpg: 8 lanes
    assert r.returncode == 1 and "2 failed, 3 passed, 1 skipped" in out, out


def test_a_wrong_profile_name_is_one_line(tmp_path):
    """(was: a collection error with pluggy's traceback)"""
    from emu.profiles import list_profiles
    r = run_user_suite(tmp_path, "--emu-profile", "nvidia-h200,nvidia-h20")
    assert r.returncode == 4 and "Traceback" not in r.stdout + r.stderr
    assert r.stderr.splitlines()[0] == ("ERROR: --emu-profile nvidia-h20: no profile named 'nvidia-h20' and no such "
                                        "file (did you mean 'nvidia-h200'? shipped profiles: "
                                        f"{', '.join(list_profiles())}; or give the path of a profile JSON file (its format: "
                                        "docs/profiles.md of `emu examples --copy DIR`))"), r.stderr


def test_default_profiles_are_those_with_the_configs(tmp_path):
    r = run_user_suite(tmp_path, "-v", "-k", "needs_a_matrix_config")
    from emu.profiles import list_profiles, load_profile
    from emu.pytest_plugin import _has_configs
    having = [n for n in list_profiles() if _has_configs(load_profile(n), ["f16xf16->f32:16x16x16"]) is None]
    assert "nvidia-h200" in having and "intel-xe-hpg" not in having
    ran = sorted(word for line in r.stdout.splitlines() if "RAN " in line for word in [line.split("RAN ")[1].split()[0]])
    assert ran == sorted(having) and r.returncode == 0, r.stdout


def test_assert_bits_equal_names_matrix_lanes():
    dev = emu.Device("nvidia-h200")
    got = np.zeros((32, 32), np.float32)
    want = got.copy()
    want[17, 3] = -0.0                   # only the sign of zero differs
    with pytest.raises(AssertionError) as ei:
        assert_bits_equal(got, want, device=dev, config="f16xf16->f32:16x16x16")
    cfg = dev.profile.find_config(16, 16, 16, "f16", "f32")
    owners = dev.profile.lane_map(cfg, "C", 32).owners(1, 3)
    assert str(ei.value).splitlines()[1] == (
        f"  [17, 3]: np.float32(0.0) (0x00000000) != expected np.float32(-0.0) (0x80000000)  tile (1, 0) element "
        f"(1, 3), held by " + ", ".join(f"lane {lane} [{i}]" for lane, i in owners))
    assert len(owners) == 1
    with pytest.raises(AssertionError) as ei:
        assert_bits_equal(got, want.astype(np.float16))
    assert "actual is float32[32, 32], expected float16[32, 32]" in str(ei.value)
    assert_bits_equal(np.array([np.nan], np.float32), np.array([np.nan], np.float32))


def test_gpu_device_is_real_or_skips_with_the_reason(tmp_path):
    (tmp_path / "test_gpu.py").write_text(
        "def test_gpu(gpu_device):\n    print('ADAPTER', gpu_device.adapter.info['vendor'] != 'emu')\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", "-s", "test_gpu.py"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout
    assert "ADAPTER True" in r.stdout or "SKIPPED" in r.stdout and "no real WebGPU adapter: wgpu:" in r.stdout, r.stdout


CLI_TESTS = '''
import numpy as np


def test_cli_runs(emu_cli, tmp_path):
    print("before")                       # not part of the command's output
    code, out, err = emu_cli("run", "saxpy.wgsl", "--dispatch", "1", "--buffer", "0:0=zeros:64:f32",
                             "--buffer", "0:1=zeros:64:f32", "--output", f"0:1={tmp_path}/y.npy")
    assert (code, out) == (0, ""), err
    assert np.load(tmp_path / "y.npy").tolist() == [0.0] * 64


def test_cli_error(emu_cli):
    code, out, err = emu_cli("run", "bad.wgsl", "--dispatch", "1")
    print("CLI", code, err.splitlines()[0])


def test_backend(gpu_backend):
    print("BACKEND", gpu_backend)
'''


def test_emu_cli_and_gpu_backend_fixtures(tmp_path):
    (tmp_path / "saxpy.wgsl").write_text(SAXPY)
    (tmp_path / "bad.wgsl").write_text("@compute @workgroup_size(1) fn main() { let x: u32 = 1.5; }\n")
    (tmp_path / "test_cli.py").write_text(CLI_TESTS)
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", "-s", "-v", "test_cli.py"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    out = r.stdout
    assert r.returncode == 0, out
    assert "test_cli.py::test_cli_runs PASSED" in out
    assert "CLI 1 bad.wgsl:1:" in out
    from emu.hw import adapters
    import re
    for backend in adapters.BACKENDS:           # each binding: run, or skipped saying why
        assert re.search(rf"test_backend\[{backend}\] (BACKEND {backend}\s+PASSED|SKIPPED)", out), out
    assert "BACKEND" in out or "no WebGPU" in out, out
