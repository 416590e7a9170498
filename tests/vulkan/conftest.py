"""The ICD's manifest for the tests that load emu through the real Vulkan loader (built once per
session into the per-user cache), or a skip saying what is missing."""
import shutil
from pathlib import Path

import pytest

LOADER = "/usr/lib/x86_64-linux-gnu/libvulkan.so.1"


@pytest.fixture(scope="session")
def manifest():
    if not Path(LOADER).exists():
        pytest.skip(f"no Vulkan loader ({LOADER}; Debian: apt install libvulkan1)")
    if not shutil.which("gcc"):
        pytest.skip("no gcc to build the ICD's shim")
    from emu.vulkan.build import build
    return str(build())
