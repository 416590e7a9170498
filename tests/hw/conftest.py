"""The ``hw_backend`` fixture: each WebGPU binding (wgpu-py on wgpu-native, wgpudawn on Dawn)
that has an adapter on this machine, skipped with the reason where it has none.

With ``EMU_REQUIRE_HW=1`` (``.ci/run`` sets it) a binding whose package is installed but finds
no adapter fails instead of skipping, so that a CI without a working Vulkan driver cannot pass
by skipping every hardware test. A binding whose package is not installed still skips.
"""
import os

import pytest

from emu.hw import adapters
from emu.hw.runner import available_adapter


def _required() -> bool:
    return os.environ.get("EMU_REQUIRE_HW", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(params=adapters.BACKENDS)
def hw_backend(request) -> str:
    backend = request.param
    info, why = available_adapter(backend)
    if info is None:
        if not adapters.package_installed(backend):
            pytest.skip(f"no WebGPU binding: {why}")
        if _required():
            pytest.fail(f"EMU_REQUIRE_HW is set and the {backend} binding is installed but has "
                        f"no WebGPU adapter: {why}")
        pytest.skip(f"no WebGPU adapter: {why}")
    return backend


@pytest.fixture
def hw_info(hw_backend) -> dict:
    return available_adapter(hw_backend)[0]
