"""Fixtures of the drop-in wgpu adapter tests: the real adapters to compare with."""
import pytest

@pytest.fixture(scope="session")
def real_adapter():
    """The real wgpu-py adapter's info (lavapipe here), or skip saying why there is none."""
    from emu.hw.runner import available_adapter
    info, why = available_adapter("wgpu")
    if info is None:
        pytest.skip(f"no real WebGPU adapter to compare with: {why}")
    return info


@pytest.fixture(scope="session")
def real_dawn_adapter():
    from emu.hw.runner import available_adapter
    info, why = available_adapter("dawn")
    if info is None:
        pytest.skip(f"no real Dawn adapter to compare with: {why}")
    return info
