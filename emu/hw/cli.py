"""Command-line side of the hardware backend (`emu emit`, `emu diff`, `emu record`, `emu fit`)."""
from __future__ import annotations


def register(sub, device_args) -> None:
    """Add the hardware commands to the `emu` command line."""
