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


def parse_overrides(items, spec_constants=()) -> dict:
    """--override NAME=VALUE and --spec-constant ID=VALUE arguments as {name or id: text}."""
    overrides = {}
    for o in items:
        if "=" not in o:
            raise UsageError(f"--override {o!r}: expected NAME=VALUE")
        k, v = o.split("=", 1)
        overrides[k] = v
    for o in spec_constants:
        k, _, v = o.partition("=")
        if not k.strip().isdigit() or not v:
            raise UsageError(f"--spec-constant {o!r}: expected ID=VALUE, e.g. --spec-constant 0=64")
        overrides[k.strip()] = v
    return overrides


def push_constants(path: str | None) -> dict:
    """--push-constants FILE as {the push-constant binding: bytes} (a .npy array's raw bytes)."""
    if path is None:
        return {}
    from .frontend.spirv.module import PUSH_CONSTANTS
    try:
        data = np.load(path, allow_pickle=False).tobytes() if path.endswith(".npy") else Path(path).read_bytes()
    except (OSError, ValueError) as e:
        raise HostError(f"--push-constants: cannot read '{path}' ({e})",
                        hint="give the block's bytes in a file, or a .npy array (numpy.save)")
    return {PUSH_CONSTANTS: data}


def load_arrays(bindings, module=None) -> dict:
    """(key, path) pairs of --buffer arguments as {key: the .npy array}; warnings (on stderr) for
    layouts and element types whose bytes would be reinterpreted."""
    from .memory.npy import load_npy, type_mismatch
    arrays = {}
    by_key = {(g.group, g.binding): g for g in module.globals if g.group is not None} if module else {}
    for key, path in bindings:
        what = f"--buffer {key[0]}:{key[1]}"
        if path.startswith("zeros:"):
            arrays[key], warnings = zeros_spec(path, what), []
        else:
            arrays[key], warnings = load_npy(path, what)
        g = by_key.get(key)
        if g is not None:
            elem = _elem_scalar(g.type)
            w = type_mismatch(arrays[key], elem and elem.name, what, g.name)
            warnings += [w] if w else []
        for w in warnings:
            print(w.format(), file=sys.stderr)
    return arrays


def zeros_spec(text: str, what: str) -> np.ndarray:
    """`zeros:SHAPE:DTYPE` (e.g. zeros:64x64:f32): an array of zeros, so that an output buffer
    needs no file. DTYPE is a WGSL scalar name (f32 f16 i32 u32 ...) or a numpy one (float32)."""
    from .numerics.dtypes import NP
    _, shape_text, dtype_text = (text.split(":") + ["", ""])[:3]
    try:
        shape = tuple(int(n) for n in shape_text.split("x"))
        if any(n < 0 for n in shape) or text.count(":") != 2:
            raise ValueError
        dtype = NP.get(dtype_text) or np.dtype(dtype_text)
        if dtype.hasobject or dtype.kind not in "biuf":
            raise TypeError
    except (ValueError, TypeError):
        raise UsageError(f"{what}={text}: expected zeros:SHAPE:DTYPE with SHAPE like 64x64 and DTYPE one of "
                         f"f32 f16 i32 u32 (or a numpy name such as float32), e.g. zeros:64x64:f32") from None
    return np.zeros(shape, dtype)


def _elem_scalar(t):
    """The scalar a binding's numbers are made of (array<vec4<f32>> -> f32), or None for structs."""
    from .isa.types import ArrayType, AtomicType, ScalarType, VectorType
    while isinstance(t, ArrayType):
        t = t.elem
    if isinstance(t, (VectorType, AtomicType)):
        t = t.elem
    return t if isinstance(t, ScalarType) and t.name != "bool" else None


STDIN = "<stdin>"          # what `-` in place of a shader file becomes (the name in messages)


def _read_source(path: str) -> str:
    """The shader text: a file, `-` for standard input, or `@NAME` for a bundled kernel."""
    if path.startswith("@"):
        return kernel(path[1:]).read_text()
    if path == STDIN and not hasattr(sys.stdin, "buffer"):
        return sys.stdin.read()             # already text (a test's or an embedding's stream)
    try:
        raw = sys.stdin.buffer.read() if path == STDIN else Path(path).read_bytes()
    except OSError as e:
        raise HostError(f"cannot read shader '{path}': {e.strerror}",
                        hint="check the path (`-` reads standard input, `@gemm_dawn` a bundled kernel)")
    if path.lower().endswith(".spv"):
        # a SPIR-V binary passes through as undecoded bytes; the front end takes them back
        return raw.decode("utf-8", "surrogateescape")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        head = raw[: e.start].decode("utf-8", "replace")
        line = head.count("\n") + 1
        col = len(head) - (head.rfind("\n") + 1) + 1
        raise HostError(f"shader '{path}' is not UTF-8 text: byte 0x{raw[e.start]:02x} at {path}:{line}:{col} "
                        f"cannot start or continue a character",
                        hint="WGSL source is UTF-8: convert the file (e.g. iconv -t UTF-8)") from None


BOUNDS_HELP = ("out-of-bounds accesses (legal WGSL). webgpu (the default): run them as a WebGPU "
               "implementation does (indices clamped; cooperative matrices as the profile measured, "
               "else as Dawn does) and warn once per site with file:line:col, the binding, the first "
               "workgroup/lane and the count; strict: stop with an error at the first one")


def _device_args(p: argparse.ArgumentParser):
    p.add_argument("--profile", default="reference", help="device profile name or profile file (see `emu profiles`)")
    p.add_argument("--subgroup-size", type=int, default=None, help="subgroup size: a power of two 4..128")
    p.add_argument("--bounds", choices=("webgpu", "strict"), default="webgpu", help=BOUNDS_HELP)
    p.add_argument("--max-steps", type=int, default=None,
                   help="loop steps one invocation may take before it counts as hung (default 1000000)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="stop a dispatch that runs longer than this (wall time)")
    p.add_argument("--no-race-check", dest="race_check", action="store_false",
                   help="do not report data races on workgroup memory and overlapping cooperative "
                        "stores (run them as if barriers were there)")
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
    p.add_argument("--spec-constant", action="append", default=[], metavar="ID=VALUE",
                   help="SPIR-V/GLSL specialization constant (constant_id) ID")
    p.add_argument("--push-constants", default=None, metavar="FILE",
                   help="SPIR-V/GLSL push-constant block contents: raw bytes, or a .npy array")
