"""The `emu` command.

Exit status: 0 success; 1 shader, host-input or runtime error (one message on stderr); 2 bad
command-line use; 3 an internal error (a bug in emu: one message asking for a report).
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

from .cliargs import (STDIN, binding_spec, device_args, dispatch_size, load_arrays, load_textures,  # noqa: F401
                      parse_overrides, push_constants, read_source, sampler_spec, shader_args, texture_args)
from .errors import DtypeWarning, EmuError, HostError, UsageError, internal_error
from .startup import exit_now, is_command


class _Parser(argparse.ArgumentParser):
    """argparse, saying first the mistake a person made: a mistyped flag (argparse would first
    ask for a required flag, `--dispach 4` giving "required: --dispatch") or command, with the
    nearest right one."""

    def parse_known_args(self, args=None, namespace=None):
        self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message):
        if getattr(self, "reduced", False):
            raise _FullParser()         # say it as the whole parser does (its usage lists every command)
        message = self._typo("invalid choice" in message) or message
        self.print_usage(sys.stderr)
        print(f"emu: error: {message}", file=sys.stderr)
        raise SystemExit(2)

    def _typo(self, bad_command: bool) -> str | None:
        import difflib
        argv = getattr(self, "_argv", [])
        parser, flags = self, set(self._option_string_actions)
        for word in (a for a in argv if not a.startswith("-")):   # down the commands named
            commands = next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
            if not commands:
                break
            if word not in commands:
                if not bad_command:
                    break
                near = difflib.get_close_matches(word, list(commands), 1)
                return (f"no command '{word}'" + (f": did you mean '{near[0]}'?" if near else "")
                        + f" (`{parser.prog} --help` lists the commands)")
            parser = commands[word]
            flags |= set(parser._option_string_actions)
        for a in argv:
            if a == "--":
                break
            name = a.split("=", 1)[0]
            if not name.startswith("--") or len(name) < 3:
                continue          # values, -, negative numbers, short flags
            if name in flags or sum(f.startswith(name) for f in flags) == 1:
                continue          # argparse takes an unambiguous prefix
            near = difflib.get_close_matches(name, sorted(flags), 1, cutoff=0.75)
            return f"unrecognized argument {name}" + (f": did you mean {near[0]}?" if near else "")
        return None


class _FullParser(Exception):
    """A command line that build_parser("run")'s parser rejects: parse it with the whole one."""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The `emu` parser; with `only` ("run"), that command's alone (the others' parsers and the
    plug-ins' imports are ~15-30 ms of each `emu run`)."""
    from . import __version__
    ap = _Parser(prog="emu", description="A virtual GPU for WGSL compute shaders with cooperative matrices.")
    ap.add_argument("--version", action="version", version=f"emu {__version__}")
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    r = sub.add_parser("run", help="run a compute shader on the virtual device")
    shader_args(r, "bind the raw bytes of a .npy array to @group(G) @binding(B); "
                   "zeros:SHAPE:DTYPE (e.g. zeros:64x64:f32) binds zeros")
    texture_args(r)
    r.add_argument("--output", action="append", default=[], metavar="G:B=FILE.npy[:SHAPE]",
                   help="write that binding's final contents as .npy (a texture: level 0's texels); "
                        ":SHAPE (e.g. :64x64) reshapes it, as a runtime-sized array comes 1-D")
    r.add_argument("-q", "--quiet", action="store_true",
                   help="print nothing on success (by default one summary line on stderr)")
    device_args(r)
    r.add_argument("--cluster", default=None, metavar="local:N|tcp://HOST:PORT",
                   help="split the workgroups over a Dask cluster: N worker processes here, or a scheduler's "
                        "address (needs emu-gpu[cluster]); the results are the same bits")
    r.add_argument("--shards", type=int, default=None, metavar="N",
                   help="with --cluster: ranges of workgroups to split into (default: one per worker thread)")
    _plugin("emu.trace.cli").add_run_args(r)
    if only == "run":
        ap.reduced = r.reduced = True
        return ap

    i = sub.add_parser("ir", help="print the shader's IR",
                       epilog="Out-of-bounds accesses are legal WGSL and not visible in the IR: `emu run` "
                              "runs them as WebGPU does by default (indices clamped, each site reported "
                              "once as a warning); `emu run --bounds strict` stops at the first.")
    i.add_argument("shader", help="WGSL file, - for standard input, @NAME for a bundled kernel")
    i.add_argument("--no-locs", action="store_true", help="leave out source locations")
    i.add_argument("--profile", metavar="NAME", help="the IR as that device runs it, after its compiler model "
                   "(emu/isa/compiler.py): each fused multiply-add, RCP and RSQ names the decision that made it "
                   "(`contracted = ...`)")
    i.add_argument("--strict", action="store_true")
    i.add_argument("--override", action="append", default=[], metavar="NAME=VALUE",
                   help="set an override (the IR then has its value where WGSL needs it as a constant)")

    c = sub.add_parser("check", help="validate a shader for a device without running it: parse, the device's "
                                     "configurations and limits, uniformity as Tint and naga judge it",
                       epilog="Exit status 0: nothing to report; 1: an error, or warnings of what Tint or "
                              "naga would reject (each with file:line:col).")
    c.add_argument("shader", help="WGSL file, - for standard input, @NAME for a bundled kernel")
    c.add_argument("--profile", default="reference", help="device profile name or profile file (see `emu profiles`)")
    c.add_argument("--subgroup-size", type=int, default=None, help="subgroup size: a power of two 4..128")
    c.add_argument("--entry", default=None, help="the entry point to check (default: every compute entry point)")
    c.add_argument("--override", action="append", default=[], metavar="NAME=VALUE")

    sub.add_parser("profiles", help="list the device profiles")
    pr = sub.add_parser("props", help="a profile's cooperative-matrix configurations in both APIs' shapes")
    pr.add_argument("profile")

    d = sub.add_parser("demo", help="run the bundled example GEMMs on a virtual device and check them")
    d.add_argument("--profile", default="nvidia-h200", help="device profile (default: nvidia-h200)")
    d.add_argument("--size", type=int, default=128, help="M = N = K of the GEMM (a multiple of 32)")
    w = sub.add_parser("warmup", help="compile the kernels a profile's runs use, ahead of time")
    w.add_argument("--profile", default="nvidia-h200", help="device profile (default: nvidia-h200)")
    s = sub.add_parser("serve", help="keep emu loaded and run `emu run` commands for a while (each then skips "
                                     "Python's start and emu's imports, ~0.2 s)",
                       epilog="Runs in the foreground until IDLE seconds pass without a run, emu's files change, "
                              "or Ctrl-C. Only `emu run` of this emu and Python, with the same EMU_*, NUMBA_* "
                              "and PYTHON* environment, uses it (EMU_SERVE=0: never); outputs, messages and "
                              "exit status are those of a run in its own process.")
    s.add_argument("--idle", type=float, default=600.0, metavar="SECONDS",
                   help="end after this long without a run (default: 600)")
    e = sub.add_parser("examples", help="list the bundled example kernels, host programs and documents")
    e.add_argument("--copy", metavar="DIR", default=None, help="copy them all into DIR")
    e.add_argument("--force", action="store_true", help="with --copy: overwrite files that differ")
    for module in _PLUGINS:
        _plugin(module).register(sub, device_args)
    return ap


# Commands that live with their subsystem: each module has register(subparsers, device_args),
# adding parsers whose defaults set `func(args, sources) -> exit code`.
_PLUGINS = ("emu.trace.cli", "emu.hw.cli", "emu.cluster.cli", "emu.vulkan.cli")


def _plugin(name):
    import importlib
    return importlib.import_module(name)


def _parse(argv):
    if argv[:1] == ["run"]:
        try:
            return build_parser("run").parse_args(argv)
        except _FullParser:
            pass
    return build_parser().parse_args(argv)


def main(argv=None) -> int:
    code, args = _main(sys.argv[1:] if argv is None else argv)
    if argv is None and getattr(args, "cmd", None) == "run" and not (args.cluster or args.trace or args.explain) \
            and is_command():
        exit_now(code)          # a plain run has written and closed its files: skip the teardown
    return code


def _main(argv) -> tuple[int, argparse.Namespace | None]:
    try:
        args = _parse(argv)
    except SystemExit as e:
        return int(e.code or 0), None
    return _command(args, argv), args


def _command(args, argv) -> int:
    if getattr(args, "shader", None) == "-":
        args.shader = STDIN
    sources: dict[str, str] = {}
    try:
        func = getattr(args, "func", None) or COMMANDS[args.cmd]
        with warnings.catch_warnings():
            # --buffer files are checked when loaded (cliargs.load_arrays), with the flag named
            warnings.simplefilter("ignore", DtypeWarning)
            return func(args, sources)
    except UsageError as e:
        print(e.format(sources), file=sys.stderr)
        return 2
    except EmuError as e:
        print(e.format(sources), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("emu: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader (e.g. `| head`) went away: not an error of ours
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        if e.filename is not None and any(str(e.filename) in a for a in argv):
            # a file the command line names (emit -o, --report, --out, ...): the user's to mend
            err = HostError(f"'{e.filename}': {e.strerror or e}",
                            hint="check the path: its folder must exist, and be writable for an output")
            print(err.format(sources), file=sys.stderr)
            return 1
        print(internal_error(e).format(sources), file=sys.stderr)
        return 3
    except Exception as e:             # the one place where a bug of emu's becomes one message
        print(internal_error(e).format(sources), file=sys.stderr)
        return 3


def _progress():
    """A note on stderr every few seconds of a long run, where a person watches (a terminal, or
    EMU_PROGRESS=1); None otherwise, so that logs and tests see only the results."""
    import os
    if not (sys.stderr.isatty() or os.environ.get("EMU_PROGRESS") == "1"):
        return None
    return lambda text: print(text, file=sys.stderr, flush=True)


def cmd_run(args, sources) -> int:
    import time
    started = time.perf_counter()
    from .api import Device
    bufs = [binding_spec(b, "--buffer") for b in args.buffer]
    outs = [binding_spec(o, "--output") for o in args.output]
    shapes = {}                     # --output G:B=FILE.npy:64x64
    for i, (key, path) in enumerate(outs):
        path, shape = output_shape(path)
        outs[i] = (key, path)
        if shape is not None:
            shapes[key] = shape
    for key, path in outs:          # before the run, which may be long: where the result goes
        if not Path(path).resolve().parent.is_dir():
            raise HostError(f"--output {key[0]}:{key[1]}: cannot write '{path}': no folder "
                            f"'{Path(path).parent}'", hint="make the folder first, or write elsewhere")
    overrides = parse_overrides(args.override, args.spec_constant)
    grid = dispatch_size(args.dispatch)
    src = sources[args.shader] = read_source(args.shader)
    from .trace.cli import make_tracer
    tracer = make_tracer(args)
    note = _progress()
    dev = Device(args.profile, args.subgroup_size, bounds=args.bounds, max_steps=args.max_steps, hints="cli",
                 tracer=tracer, jobs=args.jobs, timeout=args.timeout, progress=note,
                 race_check=args.race_check)
    mod = dev.create_shader_module(src, args.shader, strict=args.strict, cache=True)
    for w in mod.warnings:
        print(w.format(sources), file=sys.stderr)
    pipe = dev.create_compute_pipeline(mod, args.entry, overrides)
    bound = {key: dev.create_buffer(arr) for key, arr in load_arrays(bufs, pipe.pipeline.module).items()}
    bound.update({key: dev.create_buffer(data) for key, data in push_constants(args.push_constants).items()})
    bound.update(load_textures(dev, [binding_spec(t, "--texture") for t in args.texture], pipe.pipeline.module))
    from .memory.textures import combine        # a texture and a sampler at one G:B: a sampler2D's
    for key, spec in (binding_spec(s, "--sampler") for s in args.sampler):
        bound[key] = combine(bound.get(key), dev.create_sampler(**sampler_spec(spec, f"--sampler {key[0]}:{key[1]}")))
    # the pipeline's IR (overrides may size its bindings); where variables of several entry points
    # share a binding, the entry point's own
    from .isa.ir import used_globals
    ir = pipe.pipeline.module
    globals_by_key = {(g.group, g.binding): g for g in ir.globals[::-1] + used_globals(ir, pipe.pipeline.entry)
                      if g.group is not None}
    for key, path in outs:
        g = globals_by_key.get(key)
        if g is None:
            raise HostError(f"--output {key[0]}:{key[1]}: the shader declares no binding there")
        if g.space == "handle":
            if key not in bound:
                raise HostError(f"--output {key[0]}:{key[1]}: give the texture '{g.name}' with --texture "
                                f"(zeros:WxH for an empty one)", g.loc)
            continue
        if key not in bound:
            from .isa.types import ArrayType, StructType
            if (isinstance(g.type, ArrayType) and g.type.count is None) or \
                    (isinstance(g.type, StructType) and g.type.runtime_array is not None):
                elem = str(g.type.elem) if isinstance(g.type, ArrayType) else ""
                zeros = f"zeros:N:{elem if elem in ('f32', 'f16', 'i32', 'u32') else 'u32'}"
                raise HostError(f"--output {key[0]}:{key[1]}: '{g.name}' is runtime-sized ({g.type}), "
                                f"so emu cannot tell how large to make it", g.loc,
                                hint=f"also pass --buffer {key[0]}:{key[1]}={zeros} (N elements) or "
                                     f"--buffer {key[0]}:{key[1]}=FILE.npy, of the size you want")
            bound[key] = dev.create_buffer(size=g.type.size)
        if key in shapes:           # checked before the run, which may be long
            _reshaped(_typed_output(bound[key], g.type), shapes[key], key, path)
    trace_bytes = None
    if tracer is not None and tracer.path is not None and args.cluster is None and 0 not in grid:
        from .api import as_buffers, bind        # how large the trace will be, before writing it
        from .trace import budget
        pl = pipe.pipeline
        trace_bytes = budget.check(pl, bind(pl.module, pl.entry, as_buffers(pl.module, bound)[0]), grid,
                                   tracer, tracer.limit, note)
    if tracer is not None:
        tracer.begin(dev, mod, pipe, grid, args)
    cluster = None
    if args.cluster:
        from .cluster import Cluster
        cluster = Cluster(args.cluster)
    try:
        if cluster is not None:
            warned = cluster.dispatch(dev, pipe, bound, grid, shards=args.shards)
        else:
            warned = dev.dispatch(pipe, bound, grid)
        for w in warned:
            print(w.format(sources), file=sys.stderr)
    finally:
        if tracer is not None:
            tracer.end()
        if cluster is not None:
            cluster.close()
    wrote = []
    for key, path in outs:
        g = globals_by_key[key]
        arr = bound[key].read() if g.space == "handle" else _typed_output(bound[key], g.type)
        if key in shapes:
            arr = _reshaped(arr, shapes[key], key, path)
        try:
            np.save(path, arr)
        except OSError as e:
            raise HostError(f"--output {key[0]}:{key[1]}: cannot write '{path}': {e.strerror or e}",
                            hint="check that the folder is writable") from None
        wrote.append(f"{path} {tuple(arr.shape)} {arr.dtype}")
    if not args.quiet:
        if trace_bytes is not None:
            from .trace.budget import human
            wrote.append(f"trace {args.trace} ({human(Path(args.trace).stat().st_size)}, "
                         f"estimated {human(trace_bytes)})")
        print(_summary(pipe.pipeline, args.profile, grid, time.perf_counter() - started, wrote, cluster),
              file=sys.stderr, flush=True)
    return 0


def _summary(pipeline, profile: str, grid, seconds: float, wrote: list, cluster) -> str:
    """`emu run`'s line on success: what ran where, how long, which way, and what it wrote."""
    groups = grid[0] * grid[1] * grid[2]
    ran = getattr(pipeline, "ran", None) or {}
    interp, comp = ran.get("interpreted", 0), ran.get("compiled", 0)
    how = ("on the cluster" if cluster is not None else "interpreted" if not comp else
           "compiled" if not interp else f"{interp} workgroups interpreted, {comp} compiled")
    outputs = "; wrote " + ", ".join(wrote) if wrote else "; no --output"
    return (f"emu: ran '{pipeline.entry.name}' on {profile}, dispatch {grid[0]}x{grid[1]}x{grid[2]} "
            f"({groups} workgroup{'s' * (groups != 1)}) in {seconds:.2f} s, {how}{outputs}")


def output_shape(path: str):
    """('c.npy', (64, 64)) for 'c.npy:64x64'; (path, None) where no :SHAPE ends it."""
    import re
    m = re.fullmatch(r"(.+):(\d+(?:x\d+)*)", path)
    if m is None:
        return path, None
    return m.group(1), tuple(int(x) for x in m.group(2).split("x"))


def _reshaped(arr, shape, key, path):
    import math
    if math.prod(shape) != arr.size:
        want = "x".join(map(str, shape))
        have = "x".join(map(str, arr.shape))
        raise HostError(f"--output {key[0]}:{key[1]}={path}:{want}: the binding holds {arr.size} "
                        f"{arr.dtype} elements (shape {have}), not the {math.prod(shape)} of {want}",
                        hint=f"give a shape of {arr.size} elements, e.g. :{arr.size}, or bind a buffer of "
                             f"{math.prod(shape)} elements with --buffer")
    return arr.reshape(shape)


def _typed_output(buf, t):
    """The buffer's contents with the element type and shape the WGSL declares (array<array<f32,
    64>, 64> -> (64, 64); a runtime-sized array stays 1-D; composites as bytes)."""
    from .api import element_layout
    if element_layout(t) is not None:
        buf._wgsl = t           # this entry point's variable, where several share the binding
        return buf.read()       # Buffer.read gives the WGSL type's shape
    from .isa.types import ArrayType, AtomicType, ScalarType, StructType, VectorType
    from .numerics.dtypes import NP
    if isinstance(t, StructType) and len(t.members) == 1 and isinstance(t.members[0].type, ArrayType):
        t = t.members[0].type       # a GLSL buffer block holding one array: that array's elements
    elem = t.elem if isinstance(t, ArrayType) else t
    if isinstance(elem, AtomicType):
        elem = elem.elem
    if isinstance(elem, ScalarType) and elem.name != "bool":
        return buf.read(NP[elem.name])
    if isinstance(elem, VectorType) and elem.elem.name != "bool" and elem.n != 3:
        return buf.read(NP[elem.elem.name]).reshape(-1, elem.n)
    if isinstance(elem, VectorType) and elem.n == 3 and isinstance(t, ArrayType):
        # vec3 elements sit 16 bytes apart: drop the padding lane.
        flat = buf.read(NP[elem.elem.name])
        per = t.stride // elem.elem.size
        return flat[: flat.size // per * per].reshape(-1, per)[:, :3]
    return buf.read(np.uint8)


def cmd_check(args, sources) -> int:
    """What `emu run` would refuse, and what Tint or naga would, without running: the module is
    lowered (with naga/Tint differences and uniformity findings as warnings) and each entry point's
    pipeline is made on the device, which verifies its matrix configurations and limits."""
    from .api import Device
    overrides = parse_overrides(args.override)
    src = sources[args.shader] = read_source(args.shader)
    dev = Device(args.profile, args.subgroup_size, hints="cli")
    mod = dev.create_shader_module(src, args.shader, strict=True)
    for w in mod.warnings:
        print(w.format(sources), file=sys.stderr)
    entries = [args.entry] if args.entry else [f.name for f in mod.ir.entry_points()]
    for entry in entries:
        dev.create_compute_pipeline(mod, entry, overrides)
    if mod.warnings:
        return 1
    print(f"{args.shader}: ok on {args.profile} ({', '.join(entries) or 'no entry points'})")
    return 0


def cmd_ir(args, sources) -> int:
    from .api import compile_for_ir
    from .isa.printer import print_module
    src = sources[args.shader] = read_source(args.shader)
    module, warnings = compile_for_ir(src, args.shader, strict=args.strict,
                                      constants=parse_overrides(args.override) or None)
    for w in warnings:
        print(w.format(sources), file=sys.stderr)
    if args.profile:
        from .frontend import is_spirv_file
        from .isa.compiler import compile_for, stack_for
        from .profiles import load_profile
        compile_for(module, stack_for(load_profile(args.profile), is_spirv_file(args.shader)))
    sys.stdout.write(print_module(module, locs=not args.no_locs))
    return 0


def cmd_profiles(args, sources) -> int:
    from .profiles import list_profiles, load_profile
    for name in list_profiles():
        p = load_profile(name)
        sizes = ",".join(map(str, p.subgroup_sizes))
        print(f"{name:<16} subgroup {sizes:<12} {len(p.configs):>3} configs  {p.description}")
    return 0


def cmd_props(args, sources) -> int:
    import json
    from .profiles import load_profile
    p = load_profile(args.profile)
    print(json.dumps({"profile": p.name,
                      "wgpu.cooperative_matrix_properties": p.props_wgpu(),
                      "dawn.subgroup_matrix_configs": p.props_dawn(),
                      "vulkan": p.props_vulkan()}, indent=2))
    return 0


def cmd_demo(args, sources) -> int:
    from .demo import run_demo
    return run_demo(args.profile, args.size)


def cmd_warmup(args, sources) -> int:
    from .demo import warmup
    return warmup(args.profile)


def cmd_examples(args, sources) -> int:
    from .examples import bundled, copy, summary
    if args.copy is not None:
        written = copy(Path(args.copy), force=args.force)
        print(f"copied {len(written)} files into {args.copy}: "
              f"{', '.join(sorted({str(w.relative_to(args.copy)).split('/')[0] for w in written}))}")
        return 0
    for name, f in bundled().items():
        print(f"{name:<28} {summary(f)}")
    print("\nrun a kernel by name: emu run @gemm_dawn ...; copy them all: emu examples --copy DIR")
    return 0


def cmd_serve(args, sources) -> int:
    from . import server
    if not server.available():
        raise HostError("emu serve needs Linux (an abstract Unix socket)", hint="run `emu run` as it is")
    if not args.idle > 0:
        raise UsageError(f"--idle {args.idle:g}: give a number of seconds above 0")
    from .jit import forget_once
    return server.serve(main, args.idle, fresh=forget_once)


COMMANDS = {"serve": cmd_serve, "examples": cmd_examples, "run": cmd_run, "ir": cmd_ir, "profiles": cmd_profiles, "props": cmd_props, "demo": cmd_demo,
            "warmup": cmd_warmup, "check": cmd_check}
