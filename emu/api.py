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

import re
import warnings
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from .errors import ArgumentError, DtypeWarning, EmuError, HostError, rewrite_hint  # noqa: F401 (DtypeWarning: API name)
from . import jit  # noqa: F401  (plugs the compiled fast paths into the executor)
from .isa.ir import Function, Module, used_globals  # noqa: F401 (used_globals: part of the API)
from .isa.types import ArrayType, AtomicType, MatrixType, ScalarType, StructType, TextureType, Type, VectorType
from .memory.memory import Region
from .memory.textures import CombinedImageSampler, Sampler, Texture, TextureView, bind_handle, combine
from .isa.ir import PUSH_CONSTANTS
from .scheduler.executor import Options, Pipeline


def element_layout(t: Type):
    """(scalar type name, shape, padded row width) of a WGSL type that is an n-dimensional array
    of one scalar type: array<f32, 8> -> ('f32', (8,), None), array<array<f16, 4>, 2> -> ('f16',
    (2, 4), None), array<vec4<u32>> -> ('u32', (-1, 4), None), array<vec3<f32>> -> ('f32', (-1, 3),
    4) (each vec3 sits in 4 lanes). None for structs, bools and anything else."""
    if isinstance(t, AtomicType):
        t = t.elem
    if isinstance(t, ScalarType):
        return None if t.name == "bool" else (t.name, (), None)
    if isinstance(t, VectorType):
        return None if t.elem.name == "bool" else (t.elem.name, (t.n,), None)
    if isinstance(t, MatrixType):
        return None if t.rows == 3 else (t.elem.name, (t.cols, t.rows), None)
    if isinstance(t, ArrayType):
        inner = element_layout(t.elem)
        if inner is None or inner[2] is not None:
            return None
        name, shape, _ = inner
        count = -1 if t.count is None else t.count
        if isinstance(t.elem, VectorType) and t.elem.n == 3 and t.stride == 4 * t.elem.elem.size:
            return name, (count, 3), 4
        if t.stride != t.elem.size:
            return None
        return name, (count,) + shape, None
    return None


class Buffer:
    """Device memory: bytes, readable as any dtype. A buffer made from a numpy array remembers
    its dtype and shape; one bound to a WGSL variable remembers that type (see ``read``)."""

    def __init__(self, nbytes: int, data: bytes | np.ndarray | None = None, label: str = ""):
        self.label = label
        self.size = int(nbytes)
        self._region: Region | None = None
        self.data = np.zeros(self.size, np.uint8)
        self._array = (data.dtype, data.shape) if isinstance(data, np.ndarray) else None
        self._wgsl: Type | None = None             # the type of the variable it was last bound to
        if data is not None:
            raw = np.frombuffer(np.ascontiguousarray(data).tobytes() if isinstance(data, np.ndarray)
                                else bytes(data), np.uint8)
            self.data[: raw.size] = raw

    def read(self, dtype=None, shape=None) -> np.ndarray:
        """The contents as ``dtype``, flat, or shaped as ``shape`` (one entry may be -1).
        ``read()`` alone: the WGSL element type of the variable the buffer was last bound to,
        shaped as that type is (array<array<f32, 64>, 64> -> (64, 64), array<vec4<f32>> -> (n, 4));
        for a runtime-sized array, or a buffer never bound, the dtype and shape of the numpy array
        it was made from; else bytes."""
        from .numerics.dtypes import NP
        layout = element_layout(self._wgsl) if self._wgsl is not None else None
        natural_shape = dtype is None
        if dtype is None:
            dtype = NP[layout[0]] if layout else (self._array[0] if self._array else np.uint8)
        try:
            dtype = np.dtype(dtype)
        except TypeError:
            raise ArgumentError(f"Buffer.read: {dtype!r} is not a numpy dtype",
                                  hint="give e.g. numpy.float32") from None
        flat = self.data[: self.size // dtype.itemsize * dtype.itemsize].view(dtype).copy()
        if shape is None and not natural_shape:
            return flat                             # read(dtype): flat, as asked
        natural = None
        if layout and NP[layout[0]] == dtype:
            if layout[2]:                          # vec3 elements: drop the padding lane
                flat = flat[: flat.size // layout[2] * layout[2]].reshape(-1, layout[2])[:, :3].reshape(-1)
            natural = layout[1]
        elif self._array and self._array[0] == dtype and int(np.prod(self._array[1])) <= flat.size:
            natural = self._array[1]
        want = shape if shape is not None else natural
        if want is None or want == ():
            return flat if want is None or flat.size != 1 else flat.reshape(())
        return _shaped(flat, tuple(want), self, dtype, explicit=shape is not None)

    def write(self, data, offset: int = 0):
        raw = np.frombuffer(np.ascontiguousarray(data).tobytes(), np.uint8)
        if offset + raw.size > self.size:
            raise HostError(f"writing {raw.size} bytes at offset {offset} overflows the {self.size}-byte buffer")
        self.data[offset: offset + raw.size] = raw


def _shaped(flat: np.ndarray, shape: tuple, buf: Buffer, dtype, explicit: bool) -> np.ndarray:
    try:
        shape = tuple(int(n) for n in shape)
    except (TypeError, ValueError):
        raise ArgumentError(f"Buffer.read: shape {shape!r} is not a tuple of whole numbers") from None
    known = int(np.prod([n for n in shape if n != -1]))
    if shape.count(-1) > 1 or any(n < -1 for n in shape):
        raise ArgumentError(f"Buffer.read: shape {shape} may have one -1 and no other negative size")
    if -1 in shape:
        if known == 0:
            return flat[:0].reshape(tuple(0 if n == -1 else n for n in shape))
        shape = tuple(flat.size // known if n == -1 else n for n in shape)
    count = int(np.prod(shape))
    if count > flat.size:
        raise ArgumentError(f"Buffer.read: shape {shape} needs {count} elements of {dtype}, but the "
                              f"{buf.size}-byte buffer{' ' + repr(buf.label) if buf.label else ''} holds {flat.size}",
                              hint="give a shape that fits, or read another dtype")
    if not explicit and count != flat.size and -1 not in shape:
        return flat
    return flat[:count].reshape(shape)


class ShaderModule:
    def __init__(self, module: Module | None, source: str, file: str, warnings: list | None, cache: bool = False,
                 about=None, load=None):
        self._ir, self.source, self.file, self._warnings = module, source, file, warnings
        self.cache = cache          # its pipelines' IR, where lowered again, kept too
        # from emu's IR cache: what its overrides are (ircache.SUMMARY_FIELDS), and load() giving
        # (IR, warnings) when first asked for: its pipelines may each lower it again anyway
        self._about, self._load = about, load

    @property
    def ir(self) -> Module:
        if self._ir is None:
            self._ir, self._warnings = self._load()
        return self._ir

    @property
    def warnings(self) -> list:
        if self._warnings is None:
            self._ir, self._warnings = self._load()
        return self._warnings

    def about(self, field: str):
        """One of the module's fields ircache.SUMMARY_FIELDS names, without loading it."""
        return getattr(self._about if self._ir is None and self._about is not None else self.ir, field)


@dataclass
class ComputePipeline:
    module: ShaderModule
    pipeline: Pipeline

    @property
    def workgroup_size(self):
        return self.pipeline.layout.wg_size


def compile_wgsl(source: str, file: str = "<input>", *, strict: bool = False, constants: dict | None = None,
                 defer_unset: bool = False, const_eval: str = "wgsl", cache: bool = False, stack=None):
    """WGSL text (or, for a file named *.ir, the IR's text form; SPIR-V or GLSL by the file's
    suffix) -> IR module and warnings.
    `const_eval`: how WGSL const-expressions fold (a profile's field: "wgsl" or Dawn's "tint").
    `stack`: the compiler passes of a device (emu/isa/compiler.py's stack_for) run over the module.
    `cache`: keep the IR between processes (emu/jit/ircache.py; what `emu run` and the ICD do).
    Raises EmuError with file:line:col."""
    args = dict(strict=strict, constants=constants, defer_unset=defer_unset, const_eval=const_eval, stack=stack)
    if cache:
        from .jit.ircache import compile_cached
        return compile_cached(_lower, source, file, **args)
    return _lower(source, file, **args)


def _lower(source: str, file: str, *, stack, **args):
    from .frontend import is_spirv_file
    if file.endswith(".ir"):
        # IR text straight in: for front ends of other languages and for ops WGSL cannot spell
        from .isa.textparser import parse_ir
        module, warnings = parse_ir(source, file), []
    elif is_spirv_file(file):
        # SPIR-V binary or assembly, or GLSL through glslang: the same IR
        from .frontend import spirv
        module, warnings = spirv.compile_source(source, file, constants=args["constants"],
                                                defer_unset=args["defer_unset"])
    else:
        from .frontend.wgsl import compile_source
        module, warnings = compile_source(source, file, **args)
    if stack is not None:
        from .isa.compiler import compile_for
        compile_for(module, stack)
    return module, warnings


def compile_for_ir(source: str, file: str = "<input>", *, strict: bool = False, constants: dict | None = None):
    """What `emu ir` prints: compile_wgsl as a shader module is made (an override without a value
    allowed), except that one sizing a type stays an error (the IR's shapes depend on it); each
    one a module-scope initializer or another override's default needs gets a warning, since the
    IR holds a placeholder for it."""
    module, warnings = compile_wgsl(source, file, strict=strict, constants=constants, defer_unset=True)
    if module.unset_sizes:
        compile_wgsl(source, file, strict=strict, constants=constants)     # raises, naming it
    for name in module.unset_overrides:
        o = next(o for o in module.overrides if o.name == name)
        warnings.append(EmuError(f"override '{name}' has no value (a module-scope initializer or another "
                                 f"override's default uses it, so the module is lowered with its overrides' "
                                 f"values): this IR holds 1 in its place", o.loc,
                                 hint=f"give it one with --override {name}=VALUE", severity="warning"))
    return module, warnings


# The hints of emu's errors name command-line flags; Python callers get the API's names.
_PYTHON_HINTS = (
    (re.compile(r"choose one with --entry NAME"), "give create_compute_pipeline(..., entry_point=NAME)"),
    (re.compile(r"pass one of those names to --entry"), "give one of those names as entry_point"),
    (re.compile(r"check the name in --override NAME=VALUE"), "check the names in constants={...}"),
    (re.compile(r"--override (\w+)=VALUE"), r"constants={'\1': VALUE}"),
    (re.compile(r"--bounds strict \(Python: bounds=\"strict\"\)"), 'Device(..., bounds="strict")'),
    (re.compile(r"--bounds strict"), 'Device(..., bounds="strict")'),
    (re.compile(r"--max-steps N"), "Device(..., max_steps=N)"),
    (re.compile(r"raise --timeout"), "raise Device(..., timeout=SECONDS)"),
    (re.compile(r"--subgroup-size"), "Device(..., subgroup_size=N)"),
    (re.compile(r"--buffer (\d+):(\d+)=FILE\.npy"), r"bindings={(\1, \2): buffer}"),
    (re.compile(r"--push-constants FILE \(raw bytes or a \.npy array\)"), "bindings={PUSH_CONSTANTS: buffer}"),
)


def python_hint(hint: str | None) -> str | None:
    return rewrite_hint(hint, _PYTHON_HINTS)


class Device:
    """A virtual GPU of one profile. ``hints``: 'python' (errors' hints name this API) or 'cli'
    (they name emu's command-line flags; what the `emu` command uses)."""

    def __init__(self, profile: str = "reference", subgroup_size: int | None = None, *,
                 bounds: str = "webgpu", max_steps: int | None = None, jobs: int | None = None, tracer=None,
                 timeout: float | None = None, progress=None, race_check: bool = True, hints: str = "python"):
        """`bounds`: "webgpu" (default) runs out-of-bounds accesses as a WebGPU implementation does
        and reports each site once (the warnings `dispatch` returns); "strict" stops at the first
        with an error. `race_check`: report data races on workgroup memory and overlapping
        cooperative stores (default) or run them as lockstep does."""
        from .profiles import load_profile
        self.hints = hints
        with self._errors({}):
            self.profile = load_profile(profile) if isinstance(profile, str) else profile
            sg = subgroup_size or self.profile.default_subgroup_size
            if not isinstance(sg, int) or sg < 4 or sg > 128 or sg & (sg - 1):
                raise HostError(f"subgroup size {sg!r} is not a power of two from 4 to 128",
                                hint="use --subgroup-size 4, 8, 16, 32, 64 or 128")
            if not self.profile.supports_subgroup_size(sg):
                raise HostError(f"profile '{self.profile.name}' does not run subgroups of {sg} invocations "
                                f"(it supports {', '.join(map(str, self.profile.subgroup_sizes))})",
                                hint="drop --subgroup-size or pick a size the profile supports")
        from .memory.bounds import check_bounds_option
        with self._errors({}):
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
        if jobs is not None and not int(jobs) >= 1:
            raise HostError(f"--jobs {jobs}: must be a positive number of threads",
                            hint="leave it out to use every core")
        self.jobs = self.options.jobs = int(jobs) if jobs is not None else (os.cpu_count() or 1)
        from .memory.addresses import AddressSpace
        self._addresses = AddressSpace()

    @contextmanager
    def _errors(self, sources: dict):
        """emu's errors leave with their source (str() shows the line and a caret, as the CLI
        prints them) and, for Python callers, hints in Python terms."""
        try:
            yield
        except EmuError as e:
            if e.sources is None:
                e.sources = sources
            if self.hints == "python":
                e.hint = python_hint(e.hint)
            raise

    @property
    def subgroup_size(self) -> int:
        return self.options.subgroup_size

    def create_shader_module(self, code: str, file: str | None = None, strict: bool = False, *,
                             label: str | None = None, compilation_hints=(), cache: bool = False) -> ShaderModule:
        """WGSL text -> a module for this device. ``file`` (or wgpu's ``label``) names it in messages.
        ``cache``: keep its lowered IR in emu's private cache folder for the next process (what
        `emu run` does: a hit need not import the WGSL front end; EMU_IR_CACHE=0 turns it off)."""
        file = file or label or "<input>"
        if isinstance(code, (bytes, bytearray)) and file.lower().endswith(".spv"):
            code = bytes(code).decode("utf-8", "surrogateescape")     # a SPIR-V binary, as the CLI passes it
        if not isinstance(code, str):
            raise ArgumentError(f"create_shader_module: code must be WGSL text (a str), not {type(code).__name__}",
                                  hint="read the file first: create_shader_module(open(path).read(), path)")
        from .frontend import is_spirv_file
        with self._errors({file: code}):
            if cache:
                from .jit import ircache
                args = dict(const_eval=self.profile.const_eval, stack=self._stack(file), strict=strict,
                            defer_unset=True, constants=None)
                hit = ircache.summary(_lower, code, file, **args)
                if hit is not None:
                    about, entry, load = hit
                    # checked per pipeline (below), or checked for this device by an earlier process
                    key = self._check_key()
                    if (about.needs_constants and is_spirv_file(file)) or (key and ircache.checked(entry, key)):
                        return ShaderModule(None, code, file, None, cache, about, load)
            module, warnings = self._lower(code, file, cache, strict=strict, defer_unset=True)
            # SPIR-V whose spec constants size its types (matrix shapes, arrays) is checked per
            # pipeline, with the pipeline's values (the defaults may name no config of the device)
            self._check(module, check=not (module.needs_constants and is_spirv_file(file)))
        return ShaderModule(module, code, file, warnings, cache)

    def _lower(self, source: str, file: str, cache: bool, **args):
        """The source lowered to IR and made what this device runs (what its compilers do to the
        arithmetic: fused multiply-adds, RCP, RSQ): (module, warnings). ``cache``: kept between
        processes under the source, the arguments and the compiler stack (emu/jit/ircache.py), so
        a program that makes the same pipelines each run (a Vulkan program through the ICD) lowers
        each shader once per machine, as a driver's shader cache does."""
        return compile_wgsl(source, file, const_eval=self.profile.const_eval, stack=self._stack(file),
                            cache=cache, **args)

    def _stack(self, file: str):
        from .frontend import is_spirv_file
        from .isa.compiler import stack_for
        return stack_for(self.profile, is_spirv_file(file))

    def _for_device(self, module, check: bool = True) -> None:
        """Make an IR module made elsewhere (parsed from IR text) what this device runs, and check it."""
        from .isa.compiler import compile_for
        compile_for(module, self._stack(module.file))
        self._check(module, check)

    def _check(self, module, check: bool = True, entry=None) -> None:
        """Check that the device can run the module (made what it runs by _lower), for `entry`
        (emu.isa.verify's rules); a module from emu's IR cache that passed once for this device
        passes again, so it is not walked again."""
        if not check:
            return
        from .jit import ircache
        key = self._check_key(entry)
        if key is not None and ircache.checked(module, key):
            return
        from .isa.verify import verify
        verify(module, self.profile, self.subgroup_size, entry)
        if key is not None:
            ircache.mark_checked(module, key)

    def _check_key(self, entry=None) -> str | None:
        """What a check depends on besides the module: the profile's every field (a user's profile
        file may change under its name), the subgroup size and the entry point; None where the
        profile's text is not its content (an object without a repr of its own): checked every time."""
        key = self.__dict__.get("_profile_text")
        if key is None:
            from .jit.ircache import content_text
            key = self._profile_text = content_text(self.profile) or ""
        if not key:
            return None
        return f"verify {key} subgroup {self.subgroup_size} entry {entry.name if entry else '-'}"

    def create_compute_pipeline(self, module: ShaderModule | None = None, entry_point: str | None = None,
                                constants: dict | None = None, *, compute: dict | None = None,
                                layout="auto", label: str = "") -> ComputePipeline:
        """A pipeline of ``module``'s entry point with override ``constants``; wgpu's spelling,
        ``compute={'module': m, 'entry_point': ..., 'constants': {...}}``, works too."""
        if compute is not None:
            module = compute.get("module", module)
            entry_point = compute.get("entry_point", entry_point)
            constants = compute.get("constants", constants)
        if not isinstance(module, ShaderModule):
            raise ArgumentError(f"create_compute_pipeline: expected a module from create_shader_module, "
                                  f"got {type(module).__name__}")
        if layout != "auto":
            raise ArgumentError("create_compute_pipeline: emu's Python API lays out bindings itself "
                                  "(layout='auto'); explicit layouts are emu.wgpu's")
        constants = dict(constants or {})
        with self._errors({module.file: module.source}):
            if module.about("needs_constants") and (constants or module.about("unset_overrides")):
                # overrides size types here: lower the shader again with this pipeline's values
                ir, _ = self._lower(module.source, module.file, module.cache, constants=constants)
                self._check(ir)
                constants = {}
            else:
                ir = module.ir
            pipeline = Pipeline(ir, entry_point, constants, self.profile, self.options)
            self._check(ir, entry=pipeline.entry)       # the device's rules for this entry point
            return ComputePipeline(module, pipeline)

    def create_buffer(self, data=None, *, size: int | None = None, label: str = "", usage=None) -> Buffer:
        """A buffer holding ``data`` (a numpy array or bytes), or ``size`` zero bytes, or ``data``
        followed by zeros up to ``size``. (``usage`` is accepted as wgpu's and not needed.)"""
        if data is not None and not isinstance(data, (bytes, bytearray, memoryview, np.ndarray)):
            raise ArgumentError(f"create_buffer: data must be a numpy array or bytes, not {type(data).__name__}",
                                  hint="convert it with numpy.asarray(data, dtype=...)")
        have = None if data is None else (data.nbytes if isinstance(data, np.ndarray) else memoryview(data).nbytes)
        if size is None and have is None:
            raise ArgumentError("create_buffer: give data or size", hint="e.g. create_buffer(size=4096)")
        if size is not None:
            if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
                raise ArgumentError(f"create_buffer: size {size!r} must be a whole number of bytes, 0 or more")
            if have is not None and size < have:
                raise ArgumentError(f"create_buffer: size {size} is smaller than the data ({have} bytes)",
                                      hint="leave size out to take the data's size")
        return Buffer(int(size) if size is not None else have, data, label)

    def buffer_device_address(self, buffer: Buffer) -> int:
        """The buffer's 64-bit device address (Vulkan's vkGetBufferDeviceAddress): fixed the first
        time it is asked for and never given to another buffer; a shader reaches the buffer's
        bytes through it (SPIR-V's PhysicalStorageBuffer pointers, GLSL's buffer_reference), bounds
        checked. emu.memory.addresses says how addresses are chosen."""
        _is(buffer, Buffer, "buffer_device_address", "a buffer from create_buffer")
        return self._addresses.address(buffer)

    def create_texture(self, size, format: str = "rgba8unorm", *, dimension: str = "2d",
                       mip_level_count: int = 1, sample_count: int = 1, label: str = "", usage=None) -> Texture:
        """A texture of ``size`` = (width, height, depth or array layers), zero-filled. (``usage``
        is accepted as wgpu's and not needed.)"""
        return Texture(format, size, dimension, mip_level_count, sample_count, label)

    def write_texture(self, texture: Texture, data, *, level: int = 0, origin=(0, 0, 0), size=None):
        """Write ``data``'s bytes (texels of the texture's format, rows tightly packed) into a level."""
        _is(texture, Texture, "write_texture", "a texture from create_texture")
        texture.write(data, level, origin, size)

    def read_texture(self, texture: Texture, *, level: int = 0) -> np.ndarray:
        """A level's texels as numbers of the format's channel width (Texture.read)."""
        _is(texture, Texture, "read_texture", "a texture from create_texture")
        return texture.read(level)

    def create_sampler(self, **descriptor) -> Sampler:
        """A sampler: address_mode_u/v/w, mag_filter, min_filter, mipmap_filter, lod_min_clamp,
        lod_max_clamp, compare (WebGPU's GPUSamplerDescriptor, with underscores)."""
        return Sampler(**descriptor)

    def dispatch(self, pipeline: ComputePipeline, bindings: dict, groups, *, cluster=None) -> list:
        """Run ``groups`` = (x, y, z) workgroups (or x alone) with ``bindings`` {(group, binding):
        Buffer or numpy array}; an array bound to a writable variable receives the results.
        Returns the run's warnings (each out-of-bounds site once, as EmuError with severity
        "warning"; empty when there were none). ``cluster``: an emu.cluster.Cluster to split the
        workgroups over (the same results; a note first where it ran in one process, and why)."""
        if cluster is not None:
            return cluster.dispatch(self, pipeline, bindings, groups)
        pipe, groups, sources = dispatch_args(pipeline, groups)
        with self._errors(sources):
            buffers, arrays = as_buffers(pipe.module, bindings)
            if 0 in groups:
                return []
            regions = bind(pipe.module, pipe.entry, buffers, pipe.used_globals)
            table = self._device_memory(pipe, buffers, regions)
            try:
                with jit.notice.for_profile(self.profile.name):
                    warned = pipe.dispatch(groups, regions)
            finally:
                if table is not None:
                    table.write_back()
            for key, arr in arrays.items():
                arr.reshape(-1).view(np.uint8)[:] = buffers[key].data[: arr.nbytes]
            for w in warned:                   # their hints already name both spellings
                w.sources = w.sources or sources
            return warned

    def _device_memory(self, pipe, buffers: dict, regions: dict):
        """For a shader that uses device addresses: the addressed buffers laid out for the dispatch
        (an AddressTable under DEVICE_MEMORY; a bound one shares its bytes there), else None."""
        from .isa.ops import OP
        from .memory.addresses import DEVICE_MEMORY, AddressTable
        ops = getattr(pipe, "_address_ops", None)
        if ops is None:                 # (once per pipeline: walking the IR costs ~1 ms a dispatch)
            ops = pipe._address_ops = {i.op: i for f in pipe.module.functions for i in f.walk()
                                       if i.op == OP.address_ptr or (i.op == OP.coop_load_tensor
                                                                     and "decode" in i.attrs)}
        if OP.coop_load_tensor in ops:
            # block loads hand their decode function the device addresses of the blocks: the
            # storage buffers bound get theirs
            for key, region in regions.items():
                if getattr(region, "space", None) == "storage" and buffers.get(key) is not None:
                    self._addresses.address(buffers[key])
        if not ops or not self._addresses.has_addresses():
            return None
        table = regions[DEVICE_MEMORY] = AddressTable(self._addresses.live())
        for key, region in list(regions.items()):
            shared = table.view(buffers.get(key)) if getattr(region, "kind", None) == "buffer" else None
            if shared is not None:
                table.bound[key] = table.address_of(buffers[key])
                regions[key] = Region(region.name, "buffer", 1, region.nbytes, data=shared, binding=region.binding,
                                      access=region.access, space=region.space)
        return table


def _is(x, cls, what: str, want: str):
    if not isinstance(x, cls):
        raise ArgumentError(f"{what}: expected {want}, got {type(x).__name__}")


def dispatch_args(pipeline, groups):
    """(the executor's pipeline, (x, y, z), {file: source}) of a dispatch's arguments, checked."""
    if not isinstance(pipeline, ComputePipeline):
        raise ArgumentError(f"dispatch: expected a pipeline from create_compute_pipeline, got "
                            f"{type(pipeline).__name__}")
    return pipeline.pipeline, dispatch_size(groups), {pipeline.module.file: pipeline.module.source}


def dispatch_size(groups) -> tuple[int, int, int]:
    """(x, y, z) from an int or a sequence of one to three whole numbers, or an error saying why."""
    shown = repr(groups)
    if isinstance(groups, (int, np.integer)) and not isinstance(groups, bool):
        groups = (groups,)
    if isinstance(groups, (str, bytes)) or not hasattr(groups, "__len__"):
        raise ArgumentError(f"dispatch size {shown}: expected workgroup counts (x, y, z), e.g. (4, 1, 1)",
                              hint="give a tuple of whole numbers" + (", not a string" if isinstance(groups, str) else ""))
    groups = tuple(groups)
    if not 1 <= len(groups) <= 3:
        raise ArgumentError(f"dispatch size {shown}: {len(groups)} numbers; a dispatch has one to three (x, y, z)")
    for g in groups:
        if isinstance(g, bool) or not (isinstance(g, (int, np.integer)) or (isinstance(g, float) and g.is_integer())):
            raise ArgumentError(f"dispatch size {shown}: {g!r} is not a whole number of workgroups")
    groups = tuple(int(g) for g in groups) + (1,) * (3 - len(groups))
    if any(g < 0 for g in groups):
        raise ArgumentError(f"dispatch size {groups} must not be negative")
    return groups              # the device's limit per dimension: Pipeline.dispatch checks it


def as_buffers(module: Module, bindings) -> tuple[dict, dict]:
    """Check the bindings against the module's declarations: ({key: Buffer}, {key: array bound
    to a writable variable, to receive the result})."""
    if not isinstance(bindings, dict):
        raise ArgumentError(f"bindings must be a dict {{(group, binding): buffer}}, not {type(bindings).__name__}")
    declared = {(g.group, g.binding): g for g in module.globals if g.group is not None}
    names = ", ".join(f"({k[0]}, {k[1]}) '{g.name}'" for k, g in sorted(declared.items())) or "none"
    buffers, arrays = {}, {}
    for key, value in bindings.items():
        if (not isinstance(key, tuple) or len(key) != 2
                or not all(isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in key)):
            raise ArgumentError(f"binding key {key!r}: expected (group, binding), two whole numbers",
                                  hint=f"the shader declares {names}")
        key = (int(key[0]), int(key[1]))
        g = declared.get(key)
        if g is None:
            raise ArgumentError(f"binding key {key}: the shader declares no @group({key[0]}) @binding({key[1]})",
                                  hint=f"the shader declares {names}")
        if g.space == "handle":         # a texture or sampler variable
            if isinstance(value, tuple) and len(value) == 2:     # (texture, sampler) of a sampler2D
                value = combine(*value)
            if not isinstance(value, (Texture, TextureView, Sampler, CombinedImageSampler)):
                want = "a texture or texture view (device.create_texture)" if isinstance(g.type, TextureType) \
                    else "a sampler (device.create_sampler)"
                raise ArgumentError(f"binding {key} ('{g.name}', {g.type}): expected {want}, got {type(value).__name__}")
            buffers[key] = value
            continue
        if isinstance(value, np.ndarray):
            buf = Buffer(value.nbytes, value)
            if g.space == "storage" and g.access != "read":
                if not (value.flags.c_contiguous and value.flags.writeable):
                    raise ArgumentError(f"binding {key} ('{g.name}', written by the shader): the numpy array must "
                                          f"be contiguous and writable to receive the results",
                                          hint="pass numpy.ascontiguousarray(a), or an emu Buffer")
                arrays[key] = value
        elif isinstance(value, Buffer):
            buf = value
        else:
            raise ArgumentError(f"binding {key} ('{g.name}'): expected an emu Buffer or a numpy array, got "
                                  f"{type(value).__name__}", hint="make one with device.create_buffer(data)")
        _check_dtype(g, buf, key)
        buf._wgsl = g.type
        buffers[key] = buf
    return buffers, arrays


def _check_dtype(g, buf: Buffer, key) -> None:
    from .memory.npy import reinterpreted
    from .numerics.dtypes import NP
    layout = element_layout(g.type)
    if layout is None or buf._array is None or not reinterpreted(buf._array[0], layout[0]):
        return
    have, want = buf._array[0], NP[layout[0]]
    warnings.warn(DtypeWarning(
        f"binding {key}: {have} data is bound to '{g.name}' ({g.type}), whose elements are "
        f"{layout[0]}: the bytes are taken as they are (convert with .astype(numpy.{want.name}))"),
        stacklevel=4)


def min_binding_size(t: Type) -> int:
    if isinstance(t, ArrayType) and t.count is None:
        return t.stride
    if isinstance(t, StructType) and t.runtime_array is not None:
        return t.offsets[-1] + t.runtime_array.stride
    return t.size


def push_constant_size(module: Module, t: Type) -> tuple[int, str]:
    """(bytes a push-constant block needs from the host, why). Vulkan: the pipeline layout's range
    must contain the block (VUID-VkComputePipelineCreateInfo-layout-10069), i.e. its members up to
    the end of the last one, without std430's trailing padding; WGSL: its type's size."""
    from .frontend import is_spirv_file
    if is_spirv_file(module.file):
        n = _extent(t)
        return n, f"its members end at byte {n}: Vulkan's push constant range must contain the block"
    return min_binding_size(t), "its type's size"


def _extent(t: Type) -> int:
    """Bytes from a value's first byte to the end of its last member, element or column."""
    if isinstance(t, StructType) and t.members:
        return max(off + _extent(m.type) for off, m in zip(t.offsets, t.members))
    if isinstance(t, ArrayType) and t.count:
        return t.stride * (t.count - 1) + _extent(t.elem)
    if isinstance(t, MatrixType):
        return t.size // t.cols * (t.cols - 1) + t.column.size
    return t.size


def bind(module: Module, entry: Function, bindings: dict, used: list | None = None) -> dict:
    """{(group, binding): Region} of `bindings` for the globals `entry` uses (`used`: those,
    where the caller has them: the executor's pipeline keeps them, walking the IR per dispatch
    costs ~1 ms)."""
    regions = {}
    for g in (used if used is not None else used_globals(module, entry)):
        if g.space == "handle":
            # a combined image sampler's texture and sampler variables share the binding
            regions[(g.group, g.binding)] = combine(regions.get((g.group, g.binding)),
                                                    bind_handle(g, bindings.get((g.group, g.binding))))
            continue
        if g.space not in ("storage", "uniform"):
            continue
        key = (g.group, g.binding)
        buf = bindings.get(key)
        if key == PUSH_CONSTANTS:
            need, why = push_constant_size(module, g.type)
            loc = g.loc or next((i.loc for i in entry.walk() if i.op == "global" and i.attrs.get("name") == g.name
                                 and i.loc is not None), None)
            if buf is None:
                raise HostError(f"the shader reads a push-constant block ({g.type}, {need} bytes) but none "
                                f"was given", loc,
                                hint="pass its bytes with --push-constants FILE (raw bytes or a .npy array)")
            if buf.size < need:
                raise HostError(f"the push constants given have {buf.size} bytes; the shader's block {g.type} "
                                f"needs {need} ({why})", loc,
                                hint=f"pass at least {need} bytes with --push-constants FILE (raw bytes or a .npy "
                                     f"array)")
        if buf is None:
            raise HostError(f"the shader uses '{g.name}' at @group({g.group}) @binding({g.binding}) "
                            f"({g.space}, {g.type}) but no buffer is bound there",
                            g.loc, hint=f"bind one, e.g. --buffer {g.group}:{g.binding}=FILE.npy")
        need = min_binding_size(g.type)
        if buf.size < need and key != PUSH_CONSTANTS:
            raise HostError(f"the buffer bound to '{g.name}' (@group({g.group}) @binding({g.binding})) "
                            f"has {buf.size} bytes; its type {g.type} needs at least {need}",
                            g.loc, hint="bind a larger buffer")
        if key in regions:          # another view of the same buffer (SPIR-V's aliased descriptors)
            if regions[key].access != g.access:
                regions[key].access = "read_write"
            continue
        regions[key] = Region(g.name, "buffer", 1, buf.size, data=_as_row(buf),
                              binding=key, access=g.access, space=g.space)
    return regions


def _as_row(buf: Buffer) -> np.ndarray:
    """The buffer's bytes as one padded row; the device works on it in place."""
    from .memory.memory import ROW_ALIGN
    pad = (-buf.size) % ROW_ALIGN or (ROW_ALIGN if buf.size == 0 else 0)
    if buf.data.size < buf.size + pad:          # padded once; a later dispatch reuses the row
        grown = np.zeros(buf.size + pad, np.uint8)
        grown[: buf.size] = buf.data[: buf.size]
        buf.data = grown
    return buf.data[: buf.size + pad].reshape(1, -1)
