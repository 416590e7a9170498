"""Command-line side of the hardware backend (`emu emit`, `emu diff`, `emu record`, `emu fit`).

    emu emit SHADER.wgsl --dialect dawn|wgpu [-o OUT.wgsl]
    emu diff SHADER.wgsl --dispatch X[,Y,Z] [--entry E] [--buffer G:B=FILE.npy]...
             [--random-inputs SEED] [--profile auto|NAME] [--backend dawn|wgpu] [--ulp N]
             [--report FILE.json] [--override N=V]...
    emu record [--out DIR] [--builtins [--scale X] [--only KEY]]
    emu fit VECTORS... [--profile NAME] [--out PROFILE.json] [--report FILE.json]
    emu fit --builtins RECORDINGS... [--profile P1,P2] [--limit N]

Exit status: 0 success (diff: identical, or within --ulp; fit: a model reproduces every vector);
1 differences, a shader/host/hardware error, or vectors no model explains; 2 bad usage.
"""
from __future__ import annotations

import json
import os
import sys

from ..cliargs import binding_spec, dispatch_size, load_arrays, parse_overrides, read_source, shader_args, texture_args


def register(sub, device_args) -> None:
    """Add the hardware commands to the `emu` command line."""
    e = sub.add_parser("emit", help="write the shader's IR back as WGSL in a dialect (for real GPUs)")
    e.add_argument("shader")
    e.add_argument("--dialect", choices=("dawn", "wgpu"), default=None,
                   help="cooperative-matrix dialect: dawn (subgroupMatrix*) or wgpu (coop*); default: the shader's own")
    e.add_argument("-o", "--output", default=None, help="write to this file instead of stdout")
    e.add_argument("--no-header", action="store_true", help="leave out the '// emitted by emu' line")
    e.add_argument("--exact", action="store_true",
                   help="add no directive the source lacks (no 'enable subgroups;'/diagnostic for Tint)")
    e.set_defaults(func=cmd_emit)

    d = sub.add_parser("diff", help="run a shader on the emulator and on a real adapter; compare every output bit")
    shader_args(d, "initial contents of @group(G) @binding(B): the raw bytes of a .npy array, or zeros:SHAPE:DTYPE")
    texture_args(d)
    d.add_argument("--random-inputs", type=int, default=None, metavar="SEED",
                   help="random contents (of the declared types) for every binding not given with --buffer")
    d.add_argument("--elements", type=int, default=None,
                   help="elements of each runtime-sized array that is not given (default 32 per invocation, >= 1024)")
    d.add_argument("--backend", choices=("dawn", "wgpu", "vulkan"), default=None,
                   help="dawn (wgpudawn, Tint) or wgpu (wgpu-py, naga) for WGSL; vulkan (the Vulkan API, "
                        "the shader's own SPIR-V) for SPIR-V and GLSL; default: by the shader's kind")
    d.add_argument("--ulp", type=float, default=0, help="accept float differences up to N units in the last place")
    d.add_argument("--report", default=None, metavar="FILE.json", help="write the full report as JSON")
    d.add_argument("--first", type=int, default=16, help="differences listed per binding (default 16)")
    device_args(d)
    d.set_defaults(profile="auto", func=cmd_diff)

    r = sub.add_parser("record", help="record MMA test vectors on a real adapter with subgroup matrices")
    r.add_argument("--out", default="hw-vectors", help="output folder (default hw-vectors)")
    r.add_argument("--seed", type=int, default=1234)
    r.add_argument("--trials", type=int, default=256, help="trials (workgroups) per float key")
    r.add_argument("--int-trials", type=int, default=512, help="trials per integer key")
    r.add_argument("--only", default="", help="only configs whose A type contains this (f16, u8, ...); "
                   "with --builtins: only cases whose key contains this (f32/exp, f16/, ...)")
    r.add_argument("--builtins", action="store_true",
                   help="record every WGSL numeric builtin and operator instead (emu/hw/builtins_record.py)")
    r.add_argument("--scale", type=float, default=1.0, help="with --builtins: inputs per f32 case, times 2^20")
    r.set_defaults(func=cmd_record)

    f = sub.add_parser("fit", help="check a profile against recorded MMA vectors, or fit one that reproduces them")
    f.add_argument("vectors", nargs="+", help="folders of mma_*.npz (what `emu record` wrote) or .npz files")
    f.add_argument("--profile", default=None, help="profile to check (and to start the new one from)")
    f.add_argument("--out", default=None, metavar="PROFILE.json", help="write a profile that reproduces the vectors")
    f.add_argument("--report", default=None, metavar="FILE.json", help="write the full result as JSON")
    f.add_argument("--subsample", type=int, default=12, help="trials per key used by the search (default 12)")
    f.add_argument("--builtins", action="store_true",
                   help="the vectors are builtin recordings (emu record --builtins): report per builtin which "
                        "scalar model (the profiles in --profile, comma separated; default reference,nvidia-h200) "
                        "reproduces them")
    f.add_argument("--limit", type=int, default=65536, help="with --builtins: results replayed per case")
    f.add_argument("--no-pin-check", action="store_true",
                   help="skip listing the parameters the vectors do not pin down")
    f.set_defaults(func=cmd_fit)


# ---------------------------------------------------------------------------------------- emit

def cmd_emit(args, sources) -> int:
    from ..frontend.wgsl import compile_source
    from .emit import dialect_of, emit
    src = sources[args.shader] = read_source(args.shader)
    module, warnings = compile_source(src, args.shader)
    for w in warnings:
        print(w.format(sources), file=sys.stderr)
    text = emit(module, args.dialect or dialect_of(module), complete_enables=not args.exact,
                header=not args.no_header)
    if args.output:
        with open(args.output, "w") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


# ---------------------------------------------------------------------------------------- diff

def cmd_diff(args, sources) -> int:
    from .diff import diff_shader
    grid = dispatch_size(args.dispatch)
    from ..cliargs import push_constants
    from ..frontend.spirv import is_spirv_file
    overrides = parse_overrides(args.override, args.spec_constant)
    bufs = load_arrays(binding_spec(text, "--buffer") for text in args.buffer)
    bufs.update(push_constants(args.push_constants))
    backend = args.backend or ("vulkan" if is_spirv_file(args.shader) else "dawn")
    src = sources[args.shader] = read_source(args.shader)
    textures, samplers = _handles(args, src)
    rep = diff_shader(src, args.shader, dispatch=grid, entry=args.entry, buffers=bufs,
                      seed=args.random_inputs, profile=args.profile, backend=backend, ulp=args.ulp,
                      overrides=overrides, subgroup_size=args.subgroup_size, bounds=args.bounds,
                      elements=args.elements, max_steps=args.max_steps, first=args.first,
                      textures=textures, samplers=samplers)
    print(rep.text())
    if args.report:
        with open(args.report, "w") as fh:
            json.dump(rep.to_json(), fh, indent=1, default=str)
    return rep.exit_code


def _handles(args, src) -> tuple[dict, dict]:
    """--texture and --sampler of `emu diff`: the textures made as `emu run` makes them, for both sides."""
    if not args.texture and not args.sampler:
        return {}, {}
    from ..api import Device, compile_wgsl
    from ..cliargs import load_textures, sampler_spec
    from .runner import from_emu
    module, _ = compile_wgsl(src, args.shader)
    made = load_textures(Device(), [binding_spec(t, "--texture") for t in args.texture], module)
    dims = {(g.group, g.binding): g.type.dim.replace("_", "-") for g in module.globals if g.group is not None
            and hasattr(g.type, "dim")}
    textures = {k: from_emu(t, dims.get(k)) for k, t in made.items()}
    samplers = {k: sampler_spec(spec, f"--sampler {k[0]}:{k[1]}")
                for k, spec in (binding_spec(s, "--sampler") for s in args.sampler)}
    return textures, samplers


# ---------------------------------------------------------------------------------------- record

def cmd_record(args, sources) -> int:
    from .record import record_vectors
    from .runner import HwError
    if args.builtins:
        from .builtins_record import record_builtins
        try:
            summary = record_builtins(args.out, seed=args.seed, scale=args.scale, only=args.only)
        except HwError as e:
            print(f"emu: error: {e}", file=sys.stderr)
            return 1
        errors = [k for k, v in summary["runs"].items() if "error" in v]
        for k in errors:
            print(f"  {k}: {summary['runs'][k]['error'][:300]}", file=sys.stderr)
        print(f"wrote {sum(map(len, summary['files'].values()))} files and builtins.json to {args.out} "
              f"({len(summary['runs']) - len(errors)} cases recorded, {len(errors)} failed)")
        return 1 if errors else 0
    try:
        summary = record_vectors(args.out, seed=args.seed, trials=args.trials, int_trials=args.int_trials,
                                 only=args.only)
    except HwError as e:
        print(f"emu: error: {e}", file=sys.stderr)
        return 1
    errors = [k for k, v in summary["runs"].items() if "error" in v]
    print(f"wrote {', '.join(summary['files'].values()) or 'nothing'} and record.json to {args.out} "
          f"({len(summary['runs']) - len(errors)} keys recorded, {len(errors)} failed)")
    return 1 if errors or not summary["files"] else 0


# ---------------------------------------------------------------------------------------- fit

def cmd_fit_builtins(args) -> int:
    """Per builtin case: which scalar model reproduces the recorded results."""
    from .builtins_eval import compare
    from .builtins_record import load_compact, load_recording
    rec = {}
    for v in args.vectors:
        if os.path.isdir(v):
            rec.update({k: (a, r, b) for k, (a, r, b) in load_recording(v)[1].items() if a is not None})
        else:
            rec.update({k: (a, r, None) for k, (a, r) in load_compact(v).items()})
    names = (args.profile or "reference,nvidia-h200").split(",")
    rows = {p: compare(rec, p, limit=args.limit) for p in names}
    print(f"{len(rec)} builtin cases from {', '.join(args.vectors)}; equal results per profile "
          f"(first {args.limit} of each case)")
    print(f"  {'case':<24}" + "".join(f"{p:>22}" for p in names) + "   reproduced by")
    allok = True
    for k in rec:
        cells, who = [], []
        for p in names:
            r = rows[p].get(k, {"n": 0, "equal": 0})
            cells.append(f"{r['equal']:>10}/{r['n']:<11}")
            if r["n"] and r["equal"] == r["n"]:
                who.append(p)
        allok &= bool(who)
        print(f"  {k:<24}" + "".join(cells) + "   " + (", ".join(who) or "no model"))
    if args.report:
        with open(args.report, "w") as fh:
            json.dump(rows, fh, indent=1, default=str)
    return 0 if allok else 1


def cmd_fit(args, sources) -> int:
    if args.builtins:
        return cmd_fit_builtins(args)
    from ..profiles import load_profile
    from .fit import check_profile, fit_vectors, load_vectors, profile_doc
    vecs = load_vectors(args.vectors)
    report: dict = {"vectors": args.vectors, "keys": len(vecs)}
    info = None
    for v in args.vectors:
        rj = os.path.join(v, "record.json") if os.path.isdir(v) else None
        if rj and os.path.exists(rj):
            with open(rj) as fh:
                info = json.load(fh).get("adapter")
    print(f"{len(vecs)} vector keys from {', '.join(args.vectors)}")
    ok_profile = False
    if args.profile:
        prof = load_profile(args.profile)
        chk = check_profile(prof, vecs)
        report["profile_check"] = {"profile": prof.name, "keys": chk}
        total = sum(c.get("elements", 0) for c in chk.values())
        good = sum(c.get("bit_exact", 0) for c in chk.values())
        print(f"profile {prof.name}: {good}/{total} elements bit-exact")
        for k, c in chk.items():
            if "error" in c:
                print(f"  {k}: {c['error']}")
            else:
                mark = "ok" if c["bit_exact"] == c["elements"] else "DIFFERENT"
                extra = f"  first mismatch {c['first_mismatch']}" if "first_mismatch" in c else ""
                print(f"  {k}: {c['bit_exact']}/{c['elements']} [{c['model']}] {mark}{extra}")
        ok_profile = total > 0 and good == total and not any("error" in c for c in chk.values())
        report["profile_reproduces_all"] = ok_profile
    res = None
    if not ok_profile or args.out:
        if ok_profile:
            print("searching the fused model family anyway, to write --out")
        res = fit_vectors(vecs, subsample=args.subsample, pin_check=not args.no_pin_check, log=print)
        report["fit"] = res.to_json()
        if res.integer:
            print(f"integer: {res.integer.get('model') or 'no model reproduces every vector'}")
        if res.preset:
            print(f"preset '{res.preset}' reproduces every float vector")
        un = res.unexplained()
        if un:
            print(f"vectors no fitted model explains ({len(un)} keys):")
            for k, v in un.items():
                print(f"  {k}: {v['mismatching']}/{v['elements']} elements differ"
                      + (f", first {v['first']}" if "first" in v else ""))
        else:
            print("every vector is reproduced bit for bit")
        if args.out:
            doc, notes = profile_doc(res, base=args.profile, vecs=vecs, info=info, data=", ".join(args.vectors))
            with open(args.out, "w") as fh:
                json.dump(doc, fh, indent=1)
            for n in notes:
                print(f"note: {n}")
            print(f"wrote {args.out}")
            report["profile_written"] = args.out
    if args.report:
        with open(args.report, "w") as fh:
            json.dump(report, fh, indent=1, default=str)
    if ok_profile:
        return 0
    return 0 if res is not None and res.exact else 1
