"""The jobs of a campaign, each a plain function of its parameters (a dict) returning a result
(a dict with a "class", the outcome). They run in a sandbox process (campaign.py), never in a
Dask worker's own threads: a job's time limit is a signal, and a job that crashes the interpreter
takes only the sandbox down. Nothing here needs Dask: scripts/corpus.py uses the corpus job and
the summary table in its own process pool.

corpus: emu's front end (what `emu ir` does) on one WGSL file (or SPIR-V binary, *.spv), classed as
  ok        the IR was built and printed
  rejected  a clean EmuError (one message with file:line:col); bucketed by its message
  crash     any other exception (a traceback: a bug in emu)
  timeout   ran past the time limit
and scoped by what the file uses (with Tint's corpus, also by Tint's own verdict):
  tint-invalid   every expectation file beside it (NAME.wgsl.expected.*) says "SKIP: FAILED"
  no-compute     no @compute entry point (graphics only)
  textures       uses textures or samplers (emu runs compute over buffers)
  experimental   Chromium-only experimental types and extensions (texel_buffer, buffer<...>,
                 binding_array, ray queries, var<immediate>, print(...), chromium_experimental_*
                 other than subgroup matrices, chromium_internal_*)
  in-scope       everything else: the pass rate counts these.
diff: one shader, seed and profile on the emulator and a real adapter (emu.hw.diff).
fuzz: a range of the fuzzer's mutants (tests/fuzz of a source checkout).
"""
from __future__ import annotations

import pathlib
import re
import signal
import sys
import time
from collections import Counter, defaultdict

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_TEXTURE = re.compile(r"\btexture_\w+|\bsampler(_comparison)?\b|\bexternal_texture\b")
_EXPERIMENTAL = re.compile(
    r"\btexel_buffer\b|\bbuffer\s*[<;,>)]|\bbinding_array\b|\bacceleration_structure\b|\bray_query\b"
    r"|var\s*<\s*immediate\b|\bprint\s*\(|\bchromium_internal_\w+|\bchromium_experimental_(?!subgroup_matrix\b)\w+")
_COMPUTE = re.compile(r"@\s*compute\b")
_FLAGS = re.compile(r"^//\s*flags:(.*)$", re.M)


def overrides_of(text: str) -> dict | None:
    """The override values a Tint test runs with: its '// flags: --overrides a=1,b=2' line."""
    for m in _FLAGS.finditer(text):
        args = m.group(1).split()
        if "--overrides" in args[:-1]:
            pairs = args[args.index("--overrides") + 1].split(",")
            return dict(p.split("=", 1) for p in pairs if "=" in p)
    return None


def tint_scope(path: pathlib.Path, text: str, tint: bool = True) -> str:
    code = _COMMENT.sub(" ", text)
    expected = sorted(path.parent.glob(path.name + ".expected.*")) if tint else []
    if expected and all(_first_line(e) == "SKIP: FAILED" for e in expected):
        return "tint-invalid"
    if _EXPERIMENTAL.search(code):
        return "experimental"
    if _TEXTURE.search(code):
        return "textures"
    if not _COMPUTE.search(code):
        return "no-compute"
    return "in-scope"


def _first_line(p: pathlib.Path) -> str:
    with open(p, errors="replace") as f:
        return f.readline().strip()


def bucket(message: str) -> str:
    """A rejection message with its particulars (numbers, type arguments; names unless the message
    says what is unknown) blanked out."""
    m = message if message.startswith("unknown") else re.sub(r"'[^']*'", "'_'", message)
    m = re.sub(r"\b\d+\b", "N", m)
    while re.search(r"<[^<>]*>", m):
        m = re.sub(r"<[^<>]*>", "\0", m)
    return m.replace("\0", "<..>")[:110]


class Timeout(BaseException):
    """Raised by the job's alarm: not an Exception, so no `except Exception` in emu swallows it."""


def _alarm(signum, frame):
    raise Timeout()


def compile_one(path: str, timeout: float, profile: str | None = None) -> dict:
    """The corpus job: compile one file, class the outcome (the time limit by SIGALRM: call it in
    a process's main thread). With a `profile`, the file must also make a compute pipeline on
    that device (its default override values), as a program's first dispatch needs."""
    from ..api import compile_for_ir
    from ..errors import EmuError, InternalError
    from ..isa.printer import print_module
    t0 = time.monotonic()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        if path.lower().endswith(".spv"):
            # a SPIR-V binary passes as undecoded bytes, as `emu ir` reads it (emu/cliargs.py)
            src = pathlib.Path(path).read_bytes().decode("utf-8", "surrogateescape")
            constants = None
        else:
            src = open(path, encoding="utf-8", errors="replace").read()
            constants = overrides_of(src)
        module, _ = compile_for_ir(src, path, constants=constants)
        print_module(module)
        if profile is not None:
            from ..api import Device
            dev = Device(profile)
            dev.create_compute_pipeline(dev.create_shader_module(src, path), constants=constants)
        outcome = None
    except Timeout:
        outcome = "timeout"
    except BaseException as e:       # noqa: BLE001 - the runner's job is to catch what emu did not
        outcome = e
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    if outcome is None:
        r = {"class": "ok"}
    elif outcome == "timeout":
        r = {"class": "timeout"}
    elif isinstance(outcome, EmuError) and not isinstance(outcome, InternalError):
        loc = outcome.loc
        r = {"class": "rejected", "message": outcome.message, "bucket": bucket(outcome.message),
             "where": f"{loc.line}:{loc.col}" if loc is not None else None}
    else:
        import traceback
        tb = traceback.extract_tb(outcome.__traceback__)[-1]
        r = {"class": "crash", "message": f"{type(outcome).__name__}: {outcome}"[:300],
             "bucket": f"{type(outcome).__name__} at {pathlib.Path(tb.filename).name}:{tb.lineno}"}
    r["seconds"] = round(time.monotonic() - t0, 3)
    return r


def corpus_job(p: dict) -> dict:
    return compile_one(p["path"], p["timeout"])


def diff_job(p: dict) -> dict:
    """One differential run; class: identical / within_ulp / different / error."""
    from ..hw.diff import diff_shader
    t0 = time.monotonic()
    src = open(p["path"], encoding="utf-8").read()
    rep = diff_shader(src, p["path"], dispatch=tuple(p["dispatch"]), entry=p.get("entry"), seed=p["seed"],
                      profile=p["profile"], backend=p["backend"], ulp=p.get("ulp", 0),
                      overrides=p.get("overrides") or None)
    r = {"class": rep.result, "seconds": round(time.monotonic() - t0, 3)}
    if rep.error:
        r.update(message=rep.error.splitlines()[0][:300], bucket=f"{rep.error_stage}: {bucket(rep.error.splitlines()[0])}")
    elif rep.result == "different":
        r["bucket"] = "bindings " + ", ".join(f"{b.name}" for b in rep.bindings if b.different)
    return r


_FUZZ: dict = {}


def fuzz_job(p: dict) -> dict:
    """Mutants first..end-1 of the fuzzer's seed (tests/fuzz/run.py, the same mutants as
    `python -m tests.fuzz.run --seed S`); class: "clean" or "findings", with each finding's site."""
    root = p["root"]
    if root not in sys.path:
        sys.path.insert(0, root)
    from tests.fuzz import run as fz
    key = (root, p.get("tint"))
    if key not in _FUZZ:
        _FUZZ[key] = fz.corpus(p.get("tint"))
    seeds = _FUZZ[key]
    t0 = time.monotonic()
    counts, findings = Counter(), {}
    for n, kind, data in fz.numbered(seeds, p["targets"], p["seed"], p["first"], p["end"]):
        outcome, _ = fz.run_one(kind, data, p["timeout"], kind != "ir")
        if outcome in ("ok", "error"):
            counts[f"{kind} {outcome}"] += 1
            continue
        findings.setdefault(fz.finding(kind, outcome, p["timeout"]), {"first": n, "message": str(outcome)[:200]})
    return {"class": "findings" if findings else "clean", "counts": dict(counts), "findings": findings,
            "seconds": round(time.monotonic() - t0, 3)}


JOBS = {"corpus": corpus_job, "diff": diff_job, "fuzz": fuzz_job}

CLASSES = {"corpus": ("ok", "rejected", "crash", "timeout"),
           "diff": ("identical", "within_ulp", "different", "error", "crash", "timeout"),
           "fuzz": ("clean", "findings", "crash", "timeout")}
ORDER = ("in-scope", "no-compute", "textures", "experimental", "tint-invalid")


def summary(kind: str, records: list[dict], title: str, top: int = 30) -> str:
    """The corpus runner's table (rows: scope, or the group a campaign gives; columns: outcome
    classes; the pass rate), the top rejection buckets in scope, then every crash, timeout and
    finding. `records` in job order (the table does not depend on the order jobs finished in)."""
    classes = CLASSES[kind]
    width = {c: max(10, len(c) + 2) for c in classes}
    table, buckets, examples, bad = defaultdict(Counter), Counter(), {}, []
    for r in records:
        s = r.get("scope", "in-scope")
        table[s][r["class"]] += 1
        if s == "in-scope" and r["class"] in ("rejected", "different", "error") and r.get("bucket"):
            buckets[r["bucket"]] += 1
            examples.setdefault(r["bucket"], f"{r['job']}:{r.get('where')}")
        if r["class"] in ("crash", "timeout", "findings"):
            bad.append(r)
    lines = [title, f"{'scope':<14}" + "".join(f"{c:>{width[c]}}" for c in classes) + f"{'total':>10}{'pass':>8}"]
    for s in sorted(table, key=lambda s: (ORDER.index(s) if s in ORDER else 99, s)):
        n = sum(table[s].values())
        lines.append(f"{s:<14}" + "".join(f"{table[s][c]:>{width[c]}}" for c in classes) + f"{n:>10}"
                     + f"{100 * table[s][classes[0]] / n:>7.1f}%")
    tot = Counter()
    for c in table.values():
        tot.update(c)
    lines.append(f"{'all files':<14}" + "".join(f"{tot[c]:>{width[c]}}" for c in classes) + f"{len(records):>10}")
    if buckets:
        lines.append(f"\ntop rejection buckets (in scope), of {sum(buckets.values())}:")
        for b, n in buckets.most_common(top):
            lines.append(f"{n:>6}  {b}\n        e.g. {examples[b]}")
    for r in bad:
        if r["class"] == "findings":
            for site, f in sorted(r["findings"].items()):
                lines.append(f"FINDING: {r['job']}: {site} (first #{f['first']}): {f['message']}")
        else:
            lines.append(f"{r['class'].upper()}: {r['job']}: {r.get('message')} ({r.get('bucket')})")
    return "\n".join(lines)
