"""`emu campaign corpus|diff|fuzz`: independent jobs on a Dask cluster (campaign.py), results
streamed to a JSONL file, resumable, a progress line by outcome and the corpus runner's table."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from ..errors import HostError, UsageError


def register(sub, device_args) -> None:
    c = sub.add_parser("campaign", help="run many independent jobs (corpus, differential, fuzz) on a Dask "
                                        "cluster, results streamed to a JSONL file (needs emu-gpu[cluster])")
    kinds = c.add_subparsers(dest="campaign", required=True, parser_class=type(c))

    def common(p, limit, what):
        p.add_argument("--cluster", default=None, metavar="local:N|tcp://HOST:PORT",
                       help="where the jobs run (default: local:N with N the cores here)")
        p.add_argument("--out", default=None, metavar="FILE.jsonl",
                       help="results, one JSON line per job as it finishes; a campaign started again "
                            "with the same file skips the jobs it holds (default: campaign-KIND.jsonl)")
        p.add_argument("--timeout", type=float, default=limit, metavar="SECONDS", help=what)
        p.add_argument("--top", type=int, default=30, help="rejection buckets to print (default 30)")

    co = kinds.add_parser("corpus", help="emu's front end (emu ir) on every WGSL file under DIR, classed "
                                         "ok / rejected / crash / timeout (as scripts/corpus.py)")
    co.add_argument("folder")
    co.add_argument("--tint", action="store_true", help="scope files by Tint's expectation files")
    co.add_argument("--scope", action="store_true", help="scope by what files use, without Tint's verdict")
    co.add_argument("--only", default=None, help="only files whose path contains this")
    common(co, 20.0, "seconds per file (default 20)")
    co.set_defaults(func=cmd_corpus)

    d = kinds.add_parser("diff", help="emu against a real adapter (emu diff) for every shader x profile x seed")
    d.add_argument("shaders", nargs="+", help="WGSL files, or folders of them")
    d.add_argument("--dispatch", default="1", help="workgroup counts X[,Y[,Z]] (default 1)")
    d.add_argument("--profiles", default="auto", help="comma-separated profiles (default auto: the adapter's)")
    d.add_argument("--seeds", type=int, default=1, help="random inputs with seeds 1..N (default 1)")
    d.add_argument("--backend", choices=("dawn", "wgpu"), default="dawn")
    d.add_argument("--ulp", type=float, default=0)
    d.add_argument("--override", action="append", default=[], metavar="NAME=VALUE")
    common(d, 120.0, "seconds per job (default 120)")
    d.set_defaults(func=cmd_diff)

    f = kinds.add_parser("fuzz", help="the fuzzer (tests/fuzz of a source checkout) in ranges of mutants")
    f.add_argument("--mutants", type=int, default=10_000)
    f.add_argument("--seed", type=int, default=1)
    f.add_argument("--per-job", type=int, default=500, help="mutants per job (default 500)")
    f.add_argument("--tint", default=None, metavar="DIR", help="a Tint corpus folder (test/tint)")
    f.add_argument("--targets", default="wgsl,ir,npy,trace")
    f.add_argument("--mutant-timeout", type=float, default=10.0,
                   help="CPU seconds before one input counts as a hang (default 10)")
    common(f, 1800.0, "seconds per job of --per-job mutants (default 1800)")
    f.set_defaults(func=cmd_fuzz)


def _cluster(args):
    from . import Cluster
    return Cluster(args.cluster or f"local:{os.cpu_count() or 1}")


def _finish(args, kind, jobs, title) -> int:
    from . import campaign
    from .jobs import summary
    out = Path(args.out or f"campaign-{kind}.jsonl")
    t0 = time.monotonic()
    with _cluster(args) as cl:
        records = campaign.run(cl, kind, jobs, out, args.timeout + campaign.GRACE)
    print(summary(kind, records, title(time.monotonic() - t0), args.top))
    print(f"results: {out}", file=sys.stderr)
    return campaign.exit_code(records)


def cmd_corpus(args, sources) -> int:
    from .jobs import tint_scope
    root = Path(args.folder)
    if not root.is_dir():
        raise HostError(f"campaign corpus: {root} is not a folder", hint="extract a corpus first, e.g. "
                        "git -C DAWN archive HEAD test/tint | tar -x -C /tmp/dawn")
    files = sorted(p for p in root.rglob("*.wgsl") if ".expected." not in p.name)
    if args.only:
        files = [p for p in files if args.only in str(p)]
    jobs = []
    for p in files:
        scope = tint_scope(p, p.read_text(errors="replace"), args.tint) if args.tint or args.scope else "in-scope"
        jobs.append((str(p.relative_to(root)), {"path": str(p.resolve()), "timeout": args.timeout}, {"scope": scope}))
    return _finish(args, "corpus", jobs, lambda wall: f"{len(files)} files under {root} in {wall:.0f} s")


def cmd_diff(args, sources) -> int:
    from ..cliargs import dispatch_size, parse_overrides
    grid = dispatch_size(args.dispatch)
    overrides = parse_overrides(args.override)
    files = []
    for s in args.shaders:
        p = Path(s)
        if p.is_dir():
            files += sorted(p.rglob("*.wgsl"))
        elif p.is_file():
            files.append(p)
        else:
            raise HostError(f"campaign diff: no file or folder '{s}'")
    if args.seeds < 1:
        raise UsageError(f"--seeds {args.seeds}: give 1 or more")
    jobs = []
    for p in files:
        for prof in args.profiles.split(","):
            for seed in range(1, args.seeds + 1):
                jobs.append((f"{p}#{prof}#seed{seed}",
                             {"path": str(p.resolve()), "dispatch": list(grid), "seed": seed, "profile": prof,
                              "backend": args.backend, "ulp": args.ulp, "overrides": overrides},
                             {"scope": prof}))
    return _finish(args, "diff", jobs, lambda wall: f"{len(jobs)} runs ({len(files)} shaders) in {wall:.0f} s")


def cmd_fuzz(args, sources) -> int:
    root = Path(__file__).resolve().parents[2]
    if not (root / "tests" / "fuzz" / "run.py").is_file():
        raise HostError("campaign fuzz runs the fuzzer of a source checkout (tests/fuzz), and this emu is "
                        "installed without one", hint="run it from a clone of the repository (pip install -e .)")
    if args.mutants < 1 or args.per_job < 1:
        raise UsageError("--mutants and --per-job must be positive")
    targets = [t for t in args.targets.split(",") if t]
    jobs = []
    for a in range(1, args.mutants + 1, args.per_job):
        z = min(args.mutants + 1, a + args.per_job)
        jobs.append((f"seed{args.seed}:{a}-{z - 1}",
                     {"root": str(root), "tint": args.tint, "seed": args.seed, "first": a, "end": z,
                      "targets": targets, "timeout": args.mutant_timeout}, {"scope": "all"}))
    return _finish(args, "fuzz", jobs, lambda wall: f"{args.mutants} mutants of seed {args.seed} in {len(jobs)} "
                                                    f"jobs in {wall:.0f} s")
