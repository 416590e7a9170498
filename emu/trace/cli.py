"""Command-line side of tracing (`emu run --trace ...`, `emu lanes`, `emu explain`).

    emu run k.wgsl --dispatch 2,2 --trace run.jsonl [--trace-format perfetto]
            [--trace-ops coop,barrier,memory,control,all|OP,...] [--trace-workgroups "0,0,0;1-3,*,0"]
            [--trace-subgroups 0,2-3] [--trace-lanes 0-7] [--explain ROW,COL]
    emu lanes --profile P --config f16xf16->f32:16x16x16 --role A [--subgroup-size N] [--invocations N]
              [--format text|svg|html|json] [-o FILE]
    emu lanes --diff P1 P2 --config ... --role ...
    emu explain run.jsonl [--op SEQ] --element ROW,COL [--format text|json]
    emu explain run.jsonl --op SEQ|--value ID [--lane L]     (a scalar value: its compiler decision)
"""
from __future__ import annotations

import sys

from ..errors import HostError, UsageError


def _pair(text: str, flag: str) -> tuple[int, int]:
    try:
        r, c = (int(x) for x in text.split(","))
        if r < 0 or c < 0:
            raise ValueError
        return r, c
    except ValueError:
        raise UsageError(f"{flag} {text!r}: expected ROW,COL (two non-negative integers), e.g. {flag} 3,5") from None


def add_run_args(parser) -> None:
    """Flags that `emu run` takes for tracing."""
    g = parser.add_argument_group("tracing (the format: docs/trace-schema.md of `emu examples --copy DIR`)")
    g.add_argument("--trace", metavar="FILE", default=None,
                   help="write a trace of the run: a header, then one JSON record per traced instruction")
    g.add_argument("--trace-format", choices=("jsonl", "perfetto"), default="jsonl",
                   help="jsonl (default; what `emu explain` reads) or perfetto (Chrome trace-event JSON "
                        "for ui.perfetto.dev: a track per subgroup)")
    g.add_argument("--trace-ops", metavar="LIST", default=None,
                   help="what to trace: categories coop, barrier, memory, control, all, or IR op names "
                        "(default: coop,barrier)")
    g.add_argument("--trace-workgroups", metavar="SPEC", default=None,
                   help='workgroups to trace: X,Y,Z patterns separated by ";", each coordinate N, A-B or * '
                        '(default: all), e.g. "0,0,0;1-3,*,0"')
    g.add_argument("--trace-subgroups", metavar="LIST", default=None,
                   help="subgroups (within a workgroup) to trace, e.g. 0,2-3 (default: all)")
    g.add_argument("--trace-lanes", metavar="LIST", default=None,
                   help="lanes (subgroup invocation ids) whose fragments and accesses to record, e.g. 0-7 "
                        "(default: all; `emu explain` needs all)")
    g.add_argument("--trace-limit", metavar="SIZE", default="1G",
                   help="the most the trace file may take, e.g. 500M, 5G, none (default 1G): a run whose "
                        "trace would pass it stops before writing, naming the options that trace less")
    g.add_argument("--explain", metavar="ROW,COL", default=None,
                   help="after the run, explain element ROW,COL of the last multiply-add of subgroup 0 "
                        "of workgroup (0,0,0)")


def make_tracer(args):
    """The tracer `emu run` should attach to the device, or None when tracing is off (the
    tracer's modules are imported only then)."""
    path = getattr(args, "trace", None)
    explain = getattr(args, "explain", None)
    filters = {k: getattr(args, f"trace_{k}", None) for k in ("ops", "workgroups", "subgroups", "lanes")}
    if path is None:
        given = [f"--trace-{k}" for k, v in filters.items() if v is not None]
        if getattr(args, "trace_format", "jsonl") != "jsonl":
            given.append("--trace-format")
        if given:
            raise UsageError(f"{given[0]} needs --trace FILE")
        if explain is None:
            return None
    from .select import Selection, SelectionError
    try:
        sel = Selection.parse(**filters)
    except SelectionError as e:
        raise UsageError(e.message + (f" ({e.hint})" if e.hint else "")) from None
    at = _pair(explain, "--explain") if explain is not None else None
    from .tracer import Tracer

    class CliTracer(Tracer):
        """A tracer that, with --explain, prints the explanation once the run has finished."""

        def end(self):
            super().end()
            if self.explain_at is None or self.failed:
                return
            from .explain import explain_event, render_text
            if self.captured is None:
                raise HostError("--explain: subgroup 0 of workgroup (0, 0, 0) ran no multiply-add",
                                hint="explain needs a kernel whose first subgroup runs coop_mma / coop_mul")
            sys.stdout.write(render_text(explain_event(None, self.captured, *self.explain_at)))
    from .budget import parse_size
    limit = parse_size(getattr(args, "trace_limit", None) or "1G")
    return CliTracer(path, format=getattr(args, "trace_format", "jsonl"), selection=sel, explain=at,
                     limit=limit if path is not None else None)


# ------------------------------------------------------------------------------- commands

def register(sub, device_args) -> None:
    """Add the tracing commands to the `emu` command line."""
    lp = sub.add_parser("lanes", help="draw a profile's lane map (which lane holds which matrix element)")
    lp.add_argument("--profile", default=None, help="device profile name or file (default: reference)")
    lp.add_argument("--diff", nargs=2, metavar=("P1", "P2"), default=None,
                    help="compare two profiles side by side, marking the cells that differ")
    lp.add_argument("--config", required=True, metavar="CFG",
                    help="the config as A[xB]->C:MxNxK, e.g. f16xf16->f32:16x16x16 (':sat' for saturating)")
    lp.add_argument("--role", required=True, type=str.upper, choices=("A", "B", "C"),
                    help="which operand's map: A (M x K), B (K x N) or C (M x N, also the result)")
    lp.add_argument("--subgroup-size", type=int, default=None, help="default: the profile's default")
    lp.add_argument("--invocations", type=int, default=None, metavar="N",
                    help="a workgroup-scope matrix (VK_NV_cooperative_matrix2) spread over N invocations: "
                         "the driver's spread, where the profile knows it")
    lp.add_argument("--format", choices=("text", "svg", "html", "json", "png"), default="text",
                    help="png: an image of the grid (needs -o FILE)")
    lp.add_argument("-o", "--output", metavar="FILE", default=None, help="write here instead of stdout")
    lp.set_defaults(func=cmd_lanes)

    ep = sub.add_parser("explain", help="explain one output element of a traced multiply-add, or how the "
                                        "device's compilers rounded a traced scalar value")
    ep.add_argument("trace", help="a JSON-lines trace written by `emu run --trace`")
    ep.add_argument("--op", type=int, default=None, metavar="SEQ",
                    help="the event's seq (default: the last multiply-add in the trace); a scalar event "
                         "(traced with --trace-ops other) is explained without --element: the compiler "
                         "decision that rounded it (`emu ir --profile P` marks them `contracted = ...`)")
    ep.add_argument("--value", type=int, default=None, metavar="ID",
                    help="the first event of IR value %%ID (as `emu ir --profile P` numbers them) instead "
                         "of --op")
    ep.add_argument("--lane", type=int, default=None, metavar="L",
                    help="with a scalar event: the invocation (local_invocation_index) to explain "
                         "(default: the first traced one)")
    which = ep.add_mutually_exclusive_group()
    which.add_argument("--output", metavar="ROW,COL",
                       help="an element of the output: ROW,COL of the matrix a cooperative store wrote, as a "
                            "row-major matrix of the store's stride per row (column-major for a column-major "
                            "store); the multiply-add that made it is found in the trace")
    which.add_argument("--element", metavar="ROW,COL",
                       help="element ROW,COL of one multiply-add's result tile (--op SEQ, default the last)")
    ep.add_argument("--binding", metavar="G:B", default=None,
                    help="with --output: the buffer (needed where stores went to several)")
    ep.add_argument("--format", choices=("text", "json"), default="text")
    ep.set_defaults(func=cmd_explain)


def _write(text, path):
    """Text, or bytes (a PNG), to `path` or standard output."""
    if path is None:
        if isinstance(text, bytes):
            sys.stdout.flush()
            sys.stdout.buffer.write(text)
        else:
            sys.stdout.write(text)
        return
    try:
        with open(path, "wb" if isinstance(text, bytes) else "w", **({} if isinstance(text, bytes) else
                                                                      {"encoding": "utf-8"})) as f:
            f.write(text)
    except OSError as e:
        raise HostError(f"cannot write '{path}': {e.strerror}", hint="check the folder") from None


def cmd_lanes(args, sources) -> int:
    from . import lanes
    if args.diff and args.profile:
        raise UsageError("give either --profile P or --diff P1 P2, not both")
    if args.subgroup_size is not None and (args.subgroup_size < 1):
        raise UsageError(f"--subgroup-size {args.subgroup_size}: must be positive")
    try:
        lanes.parse_config(args.config)
    except lanes.ConfigSyntaxError as e:
        raise UsageError(e.message + (f" ({e.hint})" if e.hint else "")) from None
    if args.invocations is not None and args.invocations < 1:
        raise UsageError(f"--invocations {args.invocations}: must be positive")
    if args.format == "png" and args.output is None and sys.stdout.isatty():
        raise UsageError("--format png writes an image: give -o FILE.png (or redirect standard output)")
    if args.diff:
        v1 = lanes.view(args.diff[0], args.config, args.role, args.subgroup_size, args.invocations)
        v2 = lanes.view(args.diff[1], args.config, args.role, args.subgroup_size, args.invocations)
        _write(lanes.render_diff(v1, v2, args.format), args.output)
        return 0
    v = lanes.view(args.profile or "reference", args.config, args.role, args.subgroup_size, args.invocations)
    _write(lanes.render(v, args.format), args.output)
    return 0


def cmd_explain(args, sources) -> int:
    from .explain import Trace, explain_event, explain_output, pick_event, render
    if args.value is not None and args.op is not None:
        raise UsageError("give --op SEQ or --value ID, not both")
    if args.output is None and args.element is None or args.value is not None:
        return _explain_scalar(args)
    if args.lane is not None:
        raise UsageError("--lane goes with a scalar event (--op SEQ or --value ID without --element)")
    if args.output is not None:
        if args.op is not None:
            raise UsageError("--op picks a multiply-add for --element; --output finds the one that made "
                             "the output element")
        at = _pair(args.output, "--output")
        binding = None
        if args.binding is not None:
            from ..cliargs import binding_spec
            binding = binding_spec(args.binding + "=x", "--binding")[0]
        x = explain_output(Trace.load(args.trace), *at, binding)
    else:
        if args.binding is not None:
            raise UsageError("--binding goes with --output")
        at = _pair(args.element, "--element")
        trace = Trace.load(args.trace)
        x = explain_event(trace, pick_event(trace, args.op), *at)
    sys.stdout.write(render(x, args.format))
    return 0


def _explain_scalar(args) -> int:
    from . import explain_scalar
    from .explain import Trace, pick_event
    if args.output is not None or args.element is not None:
        raise UsageError("--value picks a scalar value: drop --output/--element (they pick a "
                         "multiply-add's element)")
    if args.op is None and args.value is None:
        raise UsageError("say what to explain: --element ROW,COL (a multiply-add's tile), --output ROW,COL, "
                         "or --op SEQ / --value ID (a scalar value)")
    trace = Trace.load(args.trace)
    if args.value is not None:
        event = next((e for e in trace.events if e.get("id") == args.value), None)
        if event is None:
            raise HostError(f"the trace '{trace.name}' has no event of value %{args.value}",
                            hint="trace it: --trace-ops other (scalar arithmetic) or its op name; "
                                 "`emu ir --profile P SHADER` numbers the values")
    else:
        event = pick_event(trace, args.op)
    sys.stdout.write(explain_scalar.render(explain_scalar.explain_scalar(trace, event, args.lane), args.format))
    return 0
