"""Command-line arguments shared by `emu` and its plug-in commands (emu.trace.cli, emu.hw.cli):
the shader and dispatch flags, --buffer and --override parsing, reading the shader file. Below
the CLI, so that the plug-ins need not import the CLI that loads them."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from .errors import HostError, UsageError
from .examples import kernel


def _binding(text: str, flag: str) -> tuple[tuple[int, int], str]:
    try:
        gb, path = text.split("=", 1)
        g, b = gb.split(":")
        return (int(g), int(b)), path
    except ValueError:
        raise UsageError(f"{flag} {text!r}: expected G:B=FILE.npy, e.g. {flag} 0:1=out.npy")


def _dispatch(text: str) -> tuple[int, int, int]:
    try:
        parts = [int(x) for x in text.split(",")]
    except ValueError:
        parts = []
    if not 1 <= len(parts) <= 3 or any(p < 0 for p in parts):
        raise UsageError(f"--dispatch {text!r}: expected X[,Y[,Z]] workgroup counts, e.g. --dispatch 64,1,1")
    return tuple(parts + [1] * (3 - len(parts)))


def parse_overrides(items) -> dict:
    """--override NAME=VALUE arguments as {name: text}."""
    overrides = {}
    for o in items:
        if "=" not in o:
            raise UsageError(f"--override {o!r}: expected NAME=VALUE")
        k, v = o.split("=", 1)
        overrides[k] = v
    return overrides


def load_arrays(bindings) -> dict:
    """(key, path) pairs of --buffer arguments as {key: the .npy array}."""
    arrays = {}
    for key, path in bindings:
        try:
            arrays[key] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise HostError(f"--buffer {key[0]}:{key[1]}: cannot load '{path}' as a .npy array ({e})",
                            hint="save the input with numpy.save")
    return arrays


STDIN = "<stdin>"          # what `-` in place of a shader file becomes (the name in messages)


def _read_source(path: str) -> str:
    """The shader text: a file, `-` for standard input, or `@NAME` for a bundled kernel."""
    if path == STDIN:
        return sys.stdin.read()
    if path.startswith("@"):
        return kernel(path[1:]).read_text()
    try:
        return Path(path).read_text()
    except OSError as e:
        raise HostError(f"cannot read shader '{path}': {e.strerror}",
                        hint="check the path (`-` reads standard input, `@gemm_dawn` a bundled kernel)")


def _device_args(p: argparse.ArgumentParser):
    p.add_argument("--profile", default="reference", help="device profile name or profile file (see `emu profiles`)")
    p.add_argument("--subgroup-size", type=int, default=None, help="subgroup size: a power of two 4..128")
    p.add_argument("--robust", action="store_true", help="clamp out-of-bounds indices like WebGPU instead of failing")
    p.add_argument("--max-steps", type=int, default=None, help="instructions per batch before a kernel counts as hung")
    p.add_argument("--strict", action="store_true", help="warn where naga and Tint disagree about the shader")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="threads for the compiled kernels (default: all cores); results never depend on it")


def shader_args(p: argparse.ArgumentParser, buffer_help: str):
    """What every command that dispatches a shader takes: the shader, grid, entry, buffers, overrides."""
    p.add_argument("shader", help="WGSL file, - for standard input, @NAME for a bundled kernel (emu examples)")
    p.add_argument("--dispatch", required=True, help="workgroup counts X[,Y[,Z]]")
    p.add_argument("--entry", default=None, help="entry point (needed when the shader has several)")
    p.add_argument("--buffer", action="append", default=[], metavar="G:B=FILE.npy", help=buffer_help)
    p.add_argument("--override", action="append", default=[], metavar="NAME=VALUE")
