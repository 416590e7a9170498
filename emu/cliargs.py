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


def binding_spec(text: str, flag: str) -> tuple[tuple[int, int], str]:
    try:
        gb, path = text.split("=", 1)
        g, b = gb.split(":")
        return (int(g), int(b)), path
    except ValueError:
        raise UsageError(f"{flag} {text!r}: expected G:B=FILE.npy, e.g. {flag} 0:1=out.npy")


def dispatch_size(text: str) -> tuple[int, int, int]:
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
    from .isa.ir import PUSH_CONSTANTS
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
    if isinstance(t, AtomicType):
        t = t.elem
    if isinstance(t, VectorType):
        t = t.elem
    return t if isinstance(t, ScalarType) and t.name != "bool" else None


STDIN = "<stdin>"          # what `-` in place of a shader file becomes (the name in messages)


def read_source(path: str) -> str:
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


def device_args(p: argparse.ArgumentParser):
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
                   help="push-constant block contents (SPIR-V/GLSL, WGSL var<push_constant> or "
                        "var<immediate>): raw bytes, or a .npy array")


# -- textures and samplers (--texture, --sampler) -------------------------------------------------

def texture_args(p: argparse.ArgumentParser):
    p.add_argument("--texture", action="append", default=[], metavar="G:B=FILE.npy[:FORMAT]",
                   help="bind a texture made from a .npy array ((height, width[, channels]), layers, depth or "
                        "a multisampled texture's 4 samples first; its bytes are the texels) to @group(G) "
                        "@binding(B); FORMAT (rgba8unorm, "
                        "r32float, ...) defaults to the storage texture's or to the array's dtype and channels; "
                        "zeros:WxH[xD][:FORMAT] makes an empty one")
    p.add_argument("--sampler", action="append", default=[], metavar="G:B=WORDS",
                   help="bind a sampler: comma-separated nearest|linear (filters, mip levels included), "
                        "clamp|repeat|mirror (address mode), a compare function (less, greater-equal, ...), "
                        "e.g. --sampler 0:1=linear,clamp")


# (dtype kind and size) -> format name stem per shader component type
_FORMAT_STEMS = {("f", 4): "32float", ("f", 2): "16float", ("u", 1): "8unorm", ("i", 1): "8snorm",
                 ("u", 2): "16unorm", ("i", 2): "16snorm"}
_INT_STEMS = {1: "8", 2: "16", 4: "32"}
_CHANNELS = {1: "r", 2: "rg", 4: "rgba"}


def _default_format(arr: np.ndarray, t, what: str) -> str:
    from .numerics.texels import FORMATS
    if t.kind == "storage":
        return t.format
    if t.depth:
        name = {"u2": "depth16unorm", "f4": "depth32float"}.get(f"{arr.dtype.kind}{arr.dtype.itemsize}")
    else:
        n = arr.shape[-1] if arr.ndim >= 2 and arr.shape[-1] in (2, 4) else 1
        key = (arr.dtype.kind, arr.dtype.itemsize)
        if t.sampled.name == "f32":
            stem = _FORMAT_STEMS.get(key)
        else:
            sign = "uint" if t.sampled.name == "u32" else "sint"
            stem = _INT_STEMS[arr.dtype.itemsize] + sign if arr.dtype.kind in "iu" else None
        name = _CHANNELS[n] + stem if stem else None
    if name not in FORMATS:
        raise UsageError(f"{what}: cannot tell the texel format of a {arr.dtype} array for a {t}",
                         hint=f"name it: {what}=FILE.npy:rgba8unorm (or another format)")
    return name


def load_textures(dev, specs, module) -> dict:
    """--texture (key, spec) pairs as {key: Texture} for the module's texture variables."""
    from .isa.types import TextureType
    from .numerics.texels import FORMATS
    by_key = {(g.group, g.binding): g for g in module.globals if g.group is not None}
    out = {}
    for key, spec in specs:
        what = f"--texture {key[0]}:{key[1]}"
        g = by_key.get(key)
        if g is None or not isinstance(g.type, TextureType):
            raise HostError(f"{what}: the shader declares no texture at @group({key[0]}) @binding({key[1]})"
                            + (f" ('{g.name}' is {g.type})" if g is not None else ""))
        t = g.type
        dim = {"1d": "1d", "3d": "3d"}.get(t.dim, "2d")
        head, _, fmt = spec.rpartition(":") if spec.rpartition(":")[2] in FORMATS else (spec, "", "")
        if head.startswith("zeros:"):
            try:
                size = tuple(int(n) for n in head[len("zeros:"):].split("x"))
            except ValueError:
                raise UsageError(f"{what}={spec}: expected zeros:WIDTHxHEIGHT[xDEPTH][:FORMAT]") from None
            fmt = fmt or (t.format if t.kind == "storage" else "depth32float" if t.depth else "rgba8unorm")
            out[key] = dev.create_texture(size, fmt, dimension=dim, label=g.name,
                                          sample_count=4 if t.multisampled else 1)
            continue
        from .memory.npy import load_npy
        arr, warnings = load_npy(head, what)
        for w in warnings:
            print(w.format(), file=sys.stderr)
        fmt = fmt or _default_format(arr, t, what)
        f = FORMATS[fmt]
        per = len(f.channels) if len(set(f.bits)) == 1 and f.bits[0] in (8, 16, 32) else 1
        texel_shape = arr.shape[:-1] if per > 1 else arr.shape
        axes = {"1d": 1, "2d": 2, "3d": 3}.get(t.dim, 3)        # arrays and cubes: layers first
        if t.multisampled:
            axes = 3                                            # samples first, 4 of them
        if per > 1 and (arr.ndim < 2 or arr.shape[-1] != per) or arr.dtype.itemsize * per != f.bytes \
                or len(texel_shape) != axes:
            shape = {1: "(width", 2: "(height, width", 3: "(layers or depth, height, width"}[axes]
            shape = "(4 samples, height, width" if t.multisampled else shape
            raise HostError(f"{what}: a {arr.dtype} array of shape {arr.shape} does not hold {fmt} texels "
                            f"({f.bytes} bytes each{f', {per} channels on the last axis' if per > 1 else ''}) "
                            f"for a {t}", hint=f"save a {shape}{', channels' if per > 1 else ''}) array of the "
                                               f"format's channel type, or name another format (FILE.npy:FORMAT)")
        size = tuple(reversed(texel_shape))
        if t.multisampled:
            if texel_shape[0] != 4:
                raise HostError(f"{what}: a {t} takes 4 samples on the first axis, not {texel_shape[0]}",
                                hint="save a (4, height, width[, channels]) array")
            size = size[:2]
        tex = dev.create_texture(size, fmt, dimension=dim, label=g.name, sample_count=4 if t.multisampled else 1)
        dev.write_texture(tex, arr)
        out[key] = tex
    return out


def sampler_spec(text: str, what: str) -> dict:
    """--sampler words -> create_sampler's descriptor."""
    from .memory.textures import COMPARE
    modes = {"clamp": "clamp-to-edge", "repeat": "repeat", "mirror": "mirror-repeat"}
    d = {}
    for w in text.split(","):
        w = w.strip()
        if w in ("nearest", "linear"):
            d.update(mag_filter=w, min_filter=w, mipmap_filter=w)
        elif w in modes:
            d.update(address_mode_u=modes[w], address_mode_v=modes[w], address_mode_w=modes[w])
        elif w in COMPARE:
            d["compare"] = w
        elif w in ("unnormalized", "unnormalized_coordinates"):
            raise UsageError(f"{what}={text}: unnormalized coordinates (Vulkan's unnormalizedCoordinates) are "
                             f"not supported by emu", hint="sample at (texel + 0.5) / size with a normalized sampler")
        else:
            raise UsageError(f"{what}={text}: '{w}' is not nearest, linear, clamp, repeat, mirror or a compare "
                             f"function ({', '.join(COMPARE)})", hint="e.g. --sampler 0:1=linear,clamp")
    return d
