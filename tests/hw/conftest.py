"""The ``hw_backend`` fixture: emu's pytest plugin's ``gpu_backend`` (each WebGPU binding, wgpu-py on
wgpu-native and wgpudawn on Dawn, that has an adapter on this machine, skipped with the reason
where it has none; with ``EMU_REQUIRE_HW=1``, which ``.ci/run`` sets, a binding whose package is
installed but finds no adapter fails instead of skipping, so that a CI without a working Vulkan
driver cannot pass by skipping every hardware test).
"""
import pytest

from emu.hw.runner import available_adapter


@pytest.fixture
def hw_backend(gpu_backend) -> str:
    return gpu_backend


@pytest.fixture
def hw_info(hw_backend) -> dict:
    return available_adapter(hw_backend)[0]
