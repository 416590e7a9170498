"""Fixtures of the drop-in wgpu adapter tests: the real adapters to compare with."""
import pytest

@pytest.fixture(scope="session")
def real_adapter():
    """The real wgpu-py adapter's info (lavapipe here), or skip saying why there is none."""
    from emu.pytest_plugin import need_hardware
    return need_hardware("wgpu")


@pytest.fixture(scope="session")
def real_dawn_adapter():
    from emu.pytest_plugin import need_hardware
    return need_hardware("dawn")
