"""Command-line side of tracing (`emu run --trace ...`, `emu lanes`, `emu explain`)."""
from __future__ import annotations


def add_run_args(parser) -> None:
    """Flags that `emu run` takes for tracing."""


def make_tracer(args):
    """The tracer `emu run` should attach to the device, or None when tracing is off."""
    return None


def register(sub, device_args) -> None:
    """Add the tracing commands to the `emu` command line."""
