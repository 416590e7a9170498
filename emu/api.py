"""The Python API, shaped like WebGPU: a device, shader modules, compute pipelines with overrides,
buffers bound by (group, binding), and dispatch. numpy in, numpy out.

    dev = emu.Device(profile="nvidia-h200")
    mod = dev.create_shader_module(code=open("k.wgsl").read(), file="k.wgsl")
    pipe = dev.create_compute_pipeline(mod, entry_point="main", constants={"N": 64})
    a = dev.create_buffer(np.arange(64, dtype=np.float32))
    out = dev.create_buffer(size=256)
    dev.dispatch(pipe, {(0, 0): a, (0, 1): out}, (1, 1, 1))
    out.read(np.float32)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import HostError
from . import jit  # noqa: F401  (plugs the compiled fast paths into the executor)
from .isa.ir import Function, Module, used_globals  # noqa: F401 (used_globals: part of the API)
from .isa.types import ArrayType, StructType, Type
from .memory.memory import Region
from .frontend.spirv.module import PUSH_CONSTANTS
from .scheduler.executor import Options, Pipeline


class Buffer:
    """Device memory: bytes, readable as any dtype."""

    def __init__(self, nbytes: int, data: bytes | np.ndarray | None = None, label: str = ""):
        self.label = label
        self.size = int(nbytes)
        self._region: Region | None = None
        self.data = np.zeros(self.size, np.uint8)
        if data is not None:
            raw = np.frombuffer(np.ascontiguousarray(data).tobytes() if isinstance(data, np.ndarray)
                                else bytes(data), np.uint8)
            self.data[: raw.size] = raw

    def read(self, dtype=np.uint8) -> np.ndarray:
        n = self.size // np.dtype(dtype).itemsize * np.dtype(dtype).itemsize
        return self.data[:n].view(dtype).copy()

    def write(self, data, offset: int = 0):
        raw = np.frombuffer(np.ascontiguousarray(data).tobytes(), np.uint8)
        if offset + raw.size > self.size:
            raise HostError(f"writing {raw.size} bytes at offset {offset} overflows the {self.size}-byte buffer")
        self.data[offset: offset + raw.size] = raw


class ShaderModule:
    def __init__(self, module: Module, source: str, file: str, warnings: list):
        self.ir, self.source, self.file, self.warnings = module, source, file, warnings


@dataclass
class ComputePipeline:
    module: ShaderModule
    pipeline: Pipeline

    @property
    def workgroup_size(self):
        return self.pipeline.layout.wg_size


def compile_wgsl(source: str, file: str = "<input>", *, strict: bool = False, constants: dict | None = None,
                 defer_unset: bool = False):
    """WGSL text (or, for a file named *.ir, the IR's text form) -> IR module and warnings.
    Raises EmuError with file:line:col."""
    if file.endswith(".ir"):
        # IR text straight in: for front ends of other languages and for ops WGSL cannot spell
        from .isa.textparser import parse_ir
        return parse_ir(source, file), []
    from .frontend import spirv
    if spirv.is_spirv_file(file):
        # SPIR-V binary or assembly, or GLSL through glslang: the same IR
        return spirv.compile_source(source, file, constants=constants)
    from .frontend.wgsl import compile_source
    return compile_source(source, file, strict=strict, constants=constants, defer_unset=defer_unset)


class Device:
    def __init__(self, profile: str = "reference", subgroup_size: int | None = None, *,
                 bounds: str = "webgpu", max_steps: int | None = None, jobs: int | None = None, tracer=None,
                 timeout: float | None = None, progress=None, race_check: bool = True):
        """`bounds`: "webgpu" (default) runs out-of-bounds accesses as a WebGPU implementation does
        and reports each site once (the warnings `dispatch` returns); "strict" stops at the first
        with an error. `race_check`: report data races on workgroup memory and overlapping
        cooperative stores (default) or run them as lockstep does."""
        from .profiles import load_profile
        self.profile = load_profile(profile) if isinstance(profile, str) else profile
        sg = subgroup_size or self.profile.default_subgroup_size
        if sg < 4 or sg > 128 or sg & (sg - 1):
            raise HostError(f"subgroup size {sg} is not a power of two from 4 to 128",
                            hint="use --subgroup-size 4, 8, 16, 32, 64 or 128")
        if not self.profile.supports_subgroup_size(sg):
            raise HostError(f"profile '{self.profile.name}' does not run subgroups of {sg} invocations "
                            f"(it supports {', '.join(map(str, self.profile.subgroup_sizes))})",
                            hint="drop --subgroup-size or pick a size the profile supports")
        from .memory.bounds import check_bounds_option
        self.options = Options(subgroup_size=sg, bounds=check_bounds_option(bounds), tracer=tracer)
        if max_steps is not None:
            if int(max_steps) < 1:
                raise HostError(f"--max-steps {max_steps}: must be a positive number of steps",
                                hint="give the steps one invocation may take, e.g. --max-steps 5000000")
            self.options.max_steps = int(max_steps)
        if timeout is not None:
            if not timeout > 0:
                raise HostError(f"--timeout {timeout}: must be a positive number of seconds")
            self.options.timeout = float(timeout)
        self.options.progress = progress
        self.options.race_check = bool(race_check)
        # --jobs: threads for the compiled kernels; None = every core. Results never depend on it.
        import os
        self.jobs = self.options.jobs = max(1, int(jobs) if jobs else (os.cpu_count() or 1))

    @property
    def subgroup_size(self) -> int:
        return self.options.subgroup_size

    def create_shader_module(self, code: str, file: str = "<input>", strict: bool = False) -> ShaderModule:
        module, warnings = compile_wgsl(code, file, strict=strict, defer_unset=True)
        self._for_device(module)
        return ShaderModule(module, code, file, warnings)

    def _for_device(self, module) -> None:
        """Make the IR what this device runs, and check the device can run it."""
        if self.profile.fp_contract == "mul-add":
            # the device's compiler fuses a multiply feeding an add: round once, as it does
            from .isa.contract import contract_fma
            contract_fma(module)
        from .isa.verify import verify
        verify(module, self.profile, self.subgroup_size)

    def create_compute_pipeline(self, module: ShaderModule, entry_point: str | None = None,
                                constants: dict | None = None) -> ComputePipeline:
        ir, constants = module.ir, dict(constants or {})
        if ir.needs_constants and (constants or ir.unset_overrides):
            # overrides size types here: lower the shader again with this pipeline's values
            ir, _ = compile_wgsl(module.source, module.file, constants=constants)
            self._for_device(ir)
            constants = {}
        return ComputePipeline(module, Pipeline(ir, entry_point, constants, self.profile, self.options))

    def create_buffer(self, data=None, *, size: int | None = None, label: str = "") -> Buffer:
        if data is not None and not isinstance(data, (bytes, bytearray, memoryview, np.ndarray)):
            raise HostError(f"buffer data must be a numpy array or bytes, not {type(data).__name__}")
        nbytes = size if size is not None else (np.asarray(data).nbytes if isinstance(data, np.ndarray) else len(data))
        return Buffer(nbytes, data, label)

    def dispatch(self, pipeline: ComputePipeline, bindings: dict, groups) -> list:
        """Run the grid; returns the run's warnings (each out-of-bounds site once, as EmuError
        with severity "warning"; empty when there were none)."""
        try:
            groups = tuple(int(g) for g in (tuple(groups) + (1, 1, 1))[:3])
        except (TypeError, ValueError):
            raise HostError(f"dispatch size {groups!r} must be up to three whole numbers") from None
        if any(g < 0 for g in groups):
            raise HostError(f"dispatch size {groups} must not be negative")
        if 0 in groups:
            return []
        pipe = pipeline.pipeline
        regions = bind(pipe.module, pipe.entry, bindings)
        with jit.notice.for_profile(self.profile.name):
            return pipe.dispatch(groups, regions)


def min_binding_size(t: Type) -> int:
    if isinstance(t, ArrayType) and t.count is None:
        return t.stride
    if isinstance(t, StructType) and t.runtime_array is not None:
        return t.offsets[-1] + t.runtime_array.stride
    return t.size


def bind(module: Module, entry: Function, bindings: dict) -> dict:
    regions = {}
    for g in used_globals(module, entry):
        if g.space not in ("storage", "uniform"):
            continue
        key = (g.group, g.binding)
        buf = bindings.get(key)
        if buf is None and key == PUSH_CONSTANTS:
            raise HostError(f"the shader reads a push-constant block ({g.type}, {min_binding_size(g.type)} "
                            f"bytes) but none was given", g.loc,
                            hint="pass its bytes with --push-constants FILE (raw bytes or a .npy array)")
        if buf is None:
            raise HostError(f"the shader uses '{g.name}' at @group({g.group}) @binding({g.binding}) "
                            f"({g.space}, {g.type}) but no buffer is bound there",
                            g.loc, hint=f"bind one, e.g. --buffer {g.group}:{g.binding}=FILE.npy")
        need = min_binding_size(g.type)
        if buf.size < need:
            raise HostError(f"the buffer bound to '{g.name}' (@group({g.group}) @binding({g.binding})) "
                            f"has {buf.size} bytes; its type {g.type} needs at least {need}",
                            g.loc, hint="bind a larger buffer")
        regions[key] = Region(g.name, "buffer", 1, buf.size, data=_as_row(buf),
                              binding=key, access=g.access, space=g.space)
    return regions


def _as_row(buf: Buffer) -> np.ndarray:
    """The buffer's bytes as one padded row; the device works on it in place."""
    from .memory.memory import ROW_ALIGN
    pad = (-buf.size) % ROW_ALIGN or (ROW_ALIGN if buf.size == 0 else 0)
    if pad:
        grown = np.zeros(buf.size + pad, np.uint8)
        grown[: buf.size] = buf.data
        buf.data = grown
    return buf.data.reshape(1, -1)
