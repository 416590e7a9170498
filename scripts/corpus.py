#!/usr/bin/env python3
"""Run emu's front end (what `emu ir` does) over a folder of WGSL files and tally the outcome.

Usage: python scripts/corpus.py FOLDER [--tint] [--jsonl OUT.jsonl] [--timeout 20] [--jobs 2]
                                [--top 30] [--only SUBSTRING]
       python scripts/corpus.py FOLDER --uniformity [--tint-unit .../resolver/uniformity_test.cc]

Each file is compiled in-process in a worker (a per-file time limit, a memory cap) and classed:
  ok        the IR was built and printed
  rejected  a clean EmuError (one message with file:line:col); bucketed by its message
  crash     any other exception (a traceback: a bug in emu)
  timeout   ran past --timeout seconds
The corpus is not part of this repository: point FOLDER at a snapshot extracted elsewhere, e.g.
  git -C /path/to/dawn archive HEAD test/tint | tar -x -C /tmp/dawn   -> /tmp/dawn/test/tint
  naga's inputs: naga/tests/in (of gfx-rs/wgpu)
Without --tint every *.wgsl file counts. With --tint (Tint's test corpus) each input is scoped by
Tint's own verdict and by what it uses:
  tint-invalid   every expectation file beside it (NAME.wgsl.expected.*) says "SKIP: FAILED":
                 no backend accepted it, so it is not valid WGSL (or is a Tint-only error test)
  no-compute     Tint takes it, but it has no @compute entry point (graphics only)
  textures       uses textures or samplers (emu runs compute over buffers)
  experimental   uses Chromium-only experimental types: texel_buffer, buffer<...>, binding_array,
                 acceleration_structure/ray queries, var<immediate>, print(...) (the
                 chromium_print language feature), other chromium_experimental_* or
                 chromium_internal_* extensions
  in-scope       everything else (mixed-stage files as they are): the pass rate counts these.
Crashes and timeouts are counted over every file, in scope or not.

With --uniformity (Tint's corpus only), emu's uniformity analysis (what `emu check` reports) is
compared with Tint's verdicts in the expectation files instead: of the files Tint rejects for
uniformity, how many emu reports as errors (and at Tint's line:col with Tint's message); of the
files Tint accepts, how many emu wrongly reports; and the same for Tint's uniformity warnings
(derivative_uniformity / subgroup_uniformity set to warning). A file that calls no builtin that
can require uniformity (nor a subgroup matrix) is counted without parsing (emu's analysis does not
run on it).
--tint-unit adds Tint's own uniformity unit tests (src/tint/lang/wgsl/resolver/uniformity_test.cc
of the same snapshot: each TEST_F whose shader is one raw string, with Tint's pass/fail and, where
the test has them, its exact diagnostics): how many emu rejects and how many of emu's error and
notes are identical to Tint's (line:col, severity, words). A Tint test's override values
('// flags: --overrides a=1,b=2') are passed as `emu ir --override` would.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import pathlib
import re
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

MEMORY_CAP = 6 << 30          # a worker allocating more than this fails (counted as a crash)

# the classification, the scopes and the table are emu's (`emu campaign corpus` runs the same jobs on a
# Dask cluster, resumable); this script is their one-machine pool
from emu.cluster.jobs import bucket, compile_one, overrides_of, summary, tint_scope  # noqa: E402,F401


def _worker(tasks, results, timeout, job):
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    sys.setrecursionlimit(20000)
    while True:
        item = tasks.get()
        if item is None:
            return
        i, path = item
        results.put((i, os.getpid(), "start", None))
        results.put((i, os.getpid(), "done", job(path, timeout)))


def run_all(paths: list[str], jobs: int, timeout: float, progress: bool, job=compile_one):
    """Compile every path (`job(path, timeout)`, the corpus job by default) in `jobs` worker
    processes; a worker stuck past the limit (in C code, where the alarm cannot reach) is killed
    and replaced."""
    ctx = mp.get_context("fork")
    tasks, results = ctx.Queue(), ctx.Queue()
    for item in enumerate(paths):
        tasks.put(item)
    workers = {}

    def spawn():
        p = ctx.Process(target=_worker, args=(tasks, results, timeout, job), daemon=True)
        p.start()
        workers[p.pid] = [p, None, 0.0]

    for _ in range(jobs):
        spawn()
    out, done = [None] * len(paths), 0
    while done < len(paths):
        try:
            i, pid, what, r = results.get(timeout=1.0)
        except Exception:        # queue.Empty: check the workers
            i = None
        if i is not None and pid in workers:
            if what == "start":
                workers[pid][1], workers[pid][2] = i, time.monotonic()
            else:
                workers[pid][1] = None
                out[i] = r
                done += 1
                if progress and done % 500 == 0:
                    print(f"  {done}/{len(paths)}", file=sys.stderr, flush=True)
        for pid, (p, cur, since) in list(workers.items()):
            stuck = cur is not None and time.monotonic() - since > timeout + 10
            if stuck or not p.is_alive():
                if cur is not None and out[cur] is None:
                    out[cur] = {"class": "timeout" if stuck else "crash",
                                "message": None if stuck else f"worker died (exit {p.exitcode})",
                                "bucket": None if stuck else "worker died", "seconds": None}
                    done += 1
                p.kill()
                p.join()
                del workers[pid]
                if done < len(paths):
                    spawn()
    for _ in workers:
        tasks.put(None)
    for p, _, _ in workers.values():
        p.join(timeout=5)
        if p.is_alive():
            p.kill()
    return out


_TINT_UNIFORMITY = re.compile(r":(\d+):(\d+) (error|warning|info): (.*(?:uniform control flow|to be uniform|"
                              r"have uniform contents|cannot be declared in non-uniform control flow).*)$", re.M)


def tint_uniformity(path: pathlib.Path) -> tuple[bool, set, set]:
    """(Tint accepts the file, its uniformity errors, its uniformity warnings), each diagnostic as
    (line, col, message), from the expectation files beside it."""
    errors, warnings, accepted = set(), set(), False
    for e in sorted(path.parent.glob(path.name + ".expected.*")):
        text = e.read_text(errors="replace")
        diagnostics = [(int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)) for m in _TINT_UNIFORMITY.finditer(text)]
        if text.lstrip().startswith("["):           # '// flags: --diagnostics-format=json'
            try:
                diagnostics = [(d["range"]["start"]["line"], d["range"]["start"]["column"], d["severity"], d["message"])
                               for d in json.loads(text) if _TINT_UNIFORMITY.search(f":0:0 {d['severity']}: {d['message']}")]
            except (ValueError, KeyError, TypeError):
                pass
            else:
                accepted |= not any(d["severity"] == "error" for d in json.loads(text))
                text = "SKIP: FAILED"
        accepted |= not text.startswith("SKIP: FAILED")
        for line, col, severity, message in diagnostics:
            (errors if severity == "error" else warnings).add((line, col, message))
    return accepted, errors, warnings


def uniformity_table(files: list[pathlib.Path], root: pathlib.Path) -> tuple[str, list[dict]]:
    """Tint's uniformity verdicts against emu's over a Tint corpus (see --uniformity)."""
    from emu.frontend.wgsl import uniformity
    from emu.frontend.wgsl.errors import WgslError
    from emu.frontend.wgsl.parser import parse
    sys.setrecursionlimit(20000)
    names = re.compile(r"\b(" + "|".join(sorted(uniformity.REQUIRING)) + r"|subgroupMatrix\w*|subgroup_matrix_\w+)\b")
    rows, t0 = [], time.monotonic()
    for p in files:
        accepted, t_err, t_warn = tint_uniformity(p)
        text = p.read_text(errors="replace")
        found, parsed, analysed = [], True, bool(names.search(text))
        if analysed:
            try:
                found = uniformity.analyze(parse(text, str(p)))
            except WgslError:
                parsed = False
            except RecursionError:
                parsed = False
        e_err = {(f.span.line, f.span.col, f.message) for f in found if f.severity == "error"}
        e_warn = {(f.span.line, f.span.col, f.message) for f in found if f.severity != "error"}
        rows.append({"file": str(p.relative_to(root)), "tint_accepts": accepted, "parsed": parsed, "analysed": analysed,
                     "tint_errors": sorted(t_err), "tint_warnings": sorted(t_warn),
                     "emu_errors": sorted(e_err), "emu_warnings": sorted(e_warn)})
    wall = time.monotonic() - t0
    rejected = [r for r in rows if r["tint_errors"]]
    accepted = [r for r in rows if r["tint_accepts"] and not r["tint_errors"]]
    warned = [r for r in rows if r["tint_warnings"]]
    unwarned = [r for r in accepted if not r["tint_warnings"]]
    lines = [f"uniformity over {len(rows)} files under {root} ({wall:.0f} s); analysed (they name a builtin "
             f"that can require uniformity): {sum(r['analysed'] for r in rows)}",
             f"  Tint rejects for uniformity: {len(rejected):5d}   emu reports {sum(bool(r['emu_errors']) for r in rejected)}"
             f" (same line:col and message: {sum(set(map(tuple, r['tint_errors'])) <= set(map(tuple, r['emu_errors'])) for r in rejected)})",
             f"  Tint accepts:                {len(accepted):5d}   emu wrongly rejects {sum(bool(r['emu_errors']) for r in accepted)}",
             f"  Tint warns (uniformity):     {len(warned):5d}   emu warns {sum(bool(r['emu_warnings']) for r in warned)}"
             f" (same line:col and message: {sum(set(map(tuple, r['tint_warnings'])) <= set(map(tuple, r['emu_warnings'])) for r in warned)})",
             f"  Tint accepts without warning:{len(unwarned):5d}   emu warns on {sum(bool(r['emu_warnings']) for r in unwarned)}",
             f"  emu could not parse:         {sum(not r['parsed'] for r in rows):5d} (not analysed)"]
    wrong = [r for r in rows if bool(r["emu_errors"]) != bool(r["tint_errors"]) and (r["tint_accepts"] or r["tint_errors"])
             or bool(r["emu_warnings"]) != bool(r["tint_warnings"]) and r["tint_accepts"]]
    for r in wrong[:40]:
        lines.append(f"  differs: {r['file']}: Tint {r['tint_errors'] or r['tint_warnings'] or 'ok'}; "
                     f"emu {r['emu_errors'] or r['emu_warnings'] or 'ok'}")
    return "\n".join(lines), rows


_UNIT_TEST = re.compile(r"^TEST_F\((\w+), (\w+)\) \{\n(.*?)(?=^TEST_|^INSTANTIATE_|^class |\Z)", re.S | re.M)
_UNIT_SRC = re.compile(r'std::string src = R"\((.*?)\)";\n', re.S)
_UNIT_RUN = re.compile(r"RunTest\(src, (true|false)\);")
_UNIT_ERR = re.compile(r'EXPECT_EQ\(error_,\s*R"\((.*?)\)"\);', re.S)
_DIAG_LINE = re.compile(r"^test:(\d+):(\d+) (error|warning|info|note): (.*)$", re.M)


def unit_cases(path: pathlib.Path) -> list[dict]:
    """Tint's uniformity unit tests (src/tint/lang/wgsl/resolver/uniformity_test.cc): each TEST_F
    whose shader is one raw string, with whether Tint passes it and the diagnostics it expects."""
    out = []
    for m in _UNIT_TEST.finditer(path.read_text()):
        body = m.group(3)
        src, run = _UNIT_SRC.findall(body), _UNIT_RUN.findall(body)
        if len(src) != 1 or len(run) != 1:
            continue
        err = _UNIT_ERR.search(body)
        expected = [(int(a), int(b), c, d) for a, b, c, d in _DIAG_LINE.findall(err.group(1))] if err else None
        out.append({"name": m.group(2), "src": src[0], "passes": run[0] == "true", "expected": expected})
    return out


def _ir_matrix_findings(src: str) -> list[str]:
    """What `emu check` says of a subgroup-matrix shader beyond the syntax-tree analysis: the IR's
    cooperative-matrix check (its own words; entry points only), where the shader lowers."""
    from emu.errors import EmuError
    from emu.frontend.wgsl import compile_source
    try:
        _, warnings = compile_source(src, "test")
    except EmuError:
        return []
    return [w.message for w in warnings if "rejects this shader" in w.message]


def unit_table(path: pathlib.Path) -> tuple[str, list[dict]]:
    """emu's uniformity analysis on Tint's uniformity unit tests (see --tint-unit)."""
    from emu.frontend.wgsl import uniformity
    from emu.frontend.wgsl.errors import WgslError
    from emu.frontend.wgsl.parser import parse
    sys.setrecursionlimit(20000)
    rows, t0 = [], time.monotonic()
    for case in unit_cases(path):
        row = {"name": case["name"], "tint_passes": case["passes"], "parsed": True}
        try:
            found = uniformity.analyze(parse(case["src"], "test"))
        except WgslError as e:
            row.update(parsed=False, error=e.message)
            rows.append(row)
            continue
        diags = []
        for f in found:
            # Tint prints an info as a note
            diags.append((f.span.line, f.span.col, "note" if f.severity == "info" else f.severity, f.message))
            diags.extend((s.line, s.col, "note", text) for s, text in f.notes)
        row["emu_rejects"] = any(f.severity == "error" for f in found)
        row["emu"] = diags
        if not row["emu_rejects"] and re.search(r"subgroup_?[mM]atrix", case["src"]):
            row["emu_ir"] = _ir_matrix_findings(case["src"])
            row["emu_rejects"] = bool(row["emu_ir"])
        if case["expected"] is not None:
            row["tint"] = case["expected"]
            row["same_diagnostics"] = diags == case["expected"]
        rows.append(row)
    wall = time.monotonic() - t0
    parsed = [r for r in rows if r["parsed"]]
    fail = [r for r in parsed if not r["tint_passes"]]
    ok = [r for r in parsed if r["tint_passes"]]
    texts = [r for r in parsed if "tint" in r]
    lines = [f"Tint's uniformity unit tests: {len(rows)} single-shader cases in {path.name} ({wall:.1f} s); "
             f"emu parses {len(parsed)}",
             f"  Tint rejects: {len(fail):4d}   emu rejects {sum(r['emu_rejects'] for r in fail)}"
             f" (of them by the IR's cooperative-matrix check: {sum(bool(r.get('emu_ir')) for r in fail)})",
             f"  Tint passes:  {len(ok):4d}   emu wrongly rejects {sum(r['emu_rejects'] for r in ok)}",
             f"  with Tint's expected diagnostics: {len(texts)}; emu's error and notes identical "
             f"(line:col, severity, words) in {sum(r['same_diagnostics'] for r in texts)}"]
    for r in parsed:
        if r["emu_rejects"] == r["tint_passes"] or not r.get("same_diagnostics", True):
            lines.append(f"  differs: {r['name']}: Tint {'passes' if r['tint_passes'] else 'rejects'}"
                         + (f"; Tint {r['tint']}" if "tint" in r else "") + f"; emu {r['emu'] or r.get('emu_ir', [])}")
    for r in rows:
        if not r["parsed"]:
            lines.append(f"  not parsed: {r['name']}: {r['error']}")
    return "\n".join(lines), rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--tint", action="store_true", help="scope files by Tint's expectation files (see above)")
    ap.add_argument("--scope", action="store_true",
                    help="scope by what files use (no-compute, textures, experimental) without Tint's verdict")
    ap.add_argument("--jsonl", help="write one JSON line per file here")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per file (default 20)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--top", type=int, default=30, help="rejection buckets to print (default 30)")
    ap.add_argument("--only", help="only files whose path contains this")
    ap.add_argument("--uniformity", action="store_true",
                    help="compare emu's uniformity findings with Tint's verdicts (Tint's corpus; see above)")
    ap.add_argument("--tint-unit", metavar="UNIFORMITY_TEST_CC",
                    help="also run Tint's uniformity unit tests from this uniformity_test.cc (with --uniformity)")
    args = ap.parse_args(argv)
    if args.tint_unit:
        table, _ = unit_table(pathlib.Path(args.tint_unit))
        print(table)
    root = pathlib.Path(args.folder)
    if not root.is_dir():
        print(f"corpus.py: {root} is not a folder (no snapshot given): nothing to run", file=sys.stderr)
        return 2
    files = sorted(p for p in root.rglob("*.wgsl") if ".expected." not in p.name)
    if args.only:
        files = [p for p in files if args.only in str(p)]
    if args.uniformity:
        table, rows = uniformity_table(files, root)
        if args.jsonl:
            with open(args.jsonl, "w") as f:
                for r in rows:
                    f.write(json.dumps(r) + "\n")
        print(table)
        return 0
    scopes = {}
    for p in files:
        scopes[p] = tint_scope(p, p.read_text(errors="replace"), args.tint) if args.tint or args.scope else "in-scope"
    t0 = time.monotonic()
    results = run_all([str(p) for p in files], args.jobs, args.timeout, progress=True)
    wall = time.monotonic() - t0

    records = [{"job": str(p.relative_to(root)), "scope": scopes[p], **r} for p, r in zip(files, results)]
    if args.jsonl:
        with open(args.jsonl, "w") as f:
            for r in records:
                f.write(json.dumps({"file": r["job"], **{k: v for k, v in r.items() if k != "job"}}) + "\n")
    print(summary("corpus", records, f"{len(files)} files under {root} in {wall:.0f} s", args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
