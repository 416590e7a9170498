"""The suite on a machine without Vulkan: tests that need a real device skip, each saying what is
missing, instead of failing (the README's test command passes there), and fail under
EMU_REQUIRE_HW=1 (a CI with a broken driver cannot pass by skipping).

A selection of hardware tests (each way they find a device: the emu_hardware marker, the
`backend` and `hw_backend` fixtures, wgpu's real-adapter fixture) runs in a pytest of its own with
the Vulkan loader given no driver (VK_DRIVER_FILES / VK_ICD_FILENAMES naming a file that does not
exist, as on a machine with libvulkan1 and no mesa-vulkan-drivers) and, where this test may make
a mount namespace (root), with libvulkan.so.1 itself hidden (as on a machine without libvulkan1:
"Couldn't load Vulkan")."""
from __future__ import annotations

import ctypes.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SELECTION = [
    "tests/hw/test_vulkan_lavapipe.py::test_the_device_is_reported",                 # emu_hardware("vulkan")
    "tests/cluster/test_campaign_kinds.py::test_diff_campaign",                      # emu_hardware("dawn")
    "tests/hw/test_emit_backends.py::test_vecadd_on_every_backend",                  # backend fixture
    "tests/hw/test_runner.py::test_vector_add_f32",                                  # hw_backend fixture
    "tests/wgpu/test_host_programs.py::test_dawn_gemm_on_real_adapter",              # real_dawn_adapter fixture
]
NO_DRIVER = {"VK_DRIVER_FILES": "/nonexistent/no-driver.json", "VK_ICD_FILENAMES": "/nonexistent/no-driver.json"}


def run_selection(env: dict, wrap: list[str] | None = None) -> tuple[int, str]:
    env = {**{k: v for k, v in os.environ.items() if k not in ("EMU_REQUIRE_HW", "VK_ADD_DRIVER_FILES",
                                                                "PYTEST_ADDOPTS")}, **env}
    selection = [s for s in SELECTION if (ROOT / s.split("::")[0]).exists()]
    cmd = [sys.executable, "-m", "pytest", "-q", "-rsf", "-p", "no:cacheprovider", *selection]
    proc = subprocess.run((wrap or []) + cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


def skips(out: str) -> list[str]:
    return re.findall(r"^SKIPPED \[\d+\] \S+: (.*)$", out, re.M)


def assert_skipped_with_reasons(rc: int, out: str):
    assert rc == 0, out
    assert not re.search(r"\b\d+ (failed|errors?)\b", out), out
    reasons = skips(out)
    assert reasons, out
    # every skip names the kind and what is missing
    assert all(re.match(r"no (wgpu|dawn|vulkan) (device|package): ", r) for r in reasons), reasons
    return reasons


def test_without_a_vulkan_driver_hardware_tests_skip_saying_why():
    rc, out = run_selection(NO_DRIVER)
    reasons = assert_skipped_with_reasons(rc, out)
    assert any(r.startswith("no vulkan device: vulkan: no Vulkan device") or r.startswith("no vulkan device")
               for r in reasons), reasons


def test_with_emu_require_hw_they_fail_instead():
    rc, out = run_selection({**NO_DRIVER, "EMU_REQUIRE_HW": "1"})
    assert rc == 1, out
    assert "EMU_REQUIRE_HW is set and the vulkan package is installed but finds no device" in out \
        or "EMU_REQUIRE_HW is set and the dawn package is installed but finds no device" in out, out


def _can_hide_libvulkan() -> str | None:
    """None if libvulkan.so.1 can be hidden in a mount namespace here, else why not."""
    if shutil.which("unshare") is None:
        return "no unshare command"
    if os.geteuid() != 0:
        return "hiding libvulkan.so.1 needs a mount namespace (root)"
    if ctypes.util.find_library("vulkan") is None:
        return "no libvulkan here to hide (this machine is already without it)"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"unshare -m is not permitted here ({probe.stderr.strip()})"
    return None


def _libvulkan_paths() -> list[str]:
    out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
    paths = sorted({os.path.realpath(p) for p in re.findall(r"libvulkan\.so\.1 \(.*\) => (\S+)", out)})
    return [p for p in paths if os.path.exists(p)]


def test_without_libvulkan_hardware_tests_skip_saying_why():
    why = _can_hide_libvulkan()
    if why:
        pytest.skip(why)
    binds = " && ".join(f"mount --bind /dev/null {p}" for p in _libvulkan_paths())
    inner = f"{binds} && exec \"$@\""
    rc, out = run_selection({}, wrap=["unshare", "-m", "sh", "-c", inner, "sh"])
    reasons = assert_skipped_with_reasons(rc, out)
    assert any("cannot load the Vulkan API" in r or "Couldn't load Vulkan" in r or "libvulkan" in r
               for r in reasons), reasons
