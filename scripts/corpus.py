#!/usr/bin/env python3
"""Run emu's front end (what `emu ir` does) over a folder of WGSL files and tally the outcome.

Usage: python scripts/corpus.py FOLDER [--tint] [--jsonl OUT.jsonl] [--timeout 20] [--jobs 2]
                                [--top 30] [--only SUBSTRING]

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
Crashes and timeouts are counted over every file, in scope or not. A Tint test's override values
('// flags: --overrides a=1,b=2') are passed as `emu ir --override` would.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import pathlib
import re
import signal
import sys
import time
from collections import Counter, defaultdict

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

MEMORY_CAP = 6 << 30          # a worker allocating more than this fails (counted as a crash)

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


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def compile_one(path: str, timeout: float) -> dict:
    from emu.api import compile_wgsl
    from emu.errors import EmuError, InternalError
    from emu.isa.printer import print_module
    t0 = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        src = open(path, encoding="utf-8", errors="replace").read()
        module, _ = compile_wgsl(src, path, constants=overrides_of(src))
        print_module(module)
        outcome = None
    except _Timeout:
        outcome = "timeout"
    except BaseException as e:       # noqa: BLE001 - the runner's job is to catch what emu did not
        outcome = e
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
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


def _worker(tasks, results, timeout):
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    signal.signal(signal.SIGALRM, _alarm)
    sys.setrecursionlimit(20000)
    while True:
        item = tasks.get()
        if item is None:
            return
        i, path = item
        results.put((i, os.getpid(), "start", None))
        results.put((i, os.getpid(), "done", compile_one(path, timeout)))


def run_all(paths: list[str], jobs: int, timeout: float, progress: bool):
    """Compile every path in `jobs` worker processes; a worker stuck past the limit (in C code,
    where the alarm cannot reach) is killed and replaced."""
    ctx = mp.get_context("fork")
    tasks, results = ctx.Queue(), ctx.Queue()
    for item in enumerate(paths):
        tasks.put(item)
    workers = {}

    def spawn():
        p = ctx.Process(target=_worker, args=(tasks, results, timeout), daemon=True)
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
    args = ap.parse_args(argv)
    root = pathlib.Path(args.folder)
    if not root.is_dir():
        print(f"corpus.py: {root} is not a folder (no snapshot given): nothing to run", file=sys.stderr)
        return 2
    files = sorted(p for p in root.rglob("*.wgsl") if ".expected." not in p.name)
    if args.only:
        files = [p for p in files if args.only in str(p)]
    scopes = {}
    for p in files:
        scopes[p] = tint_scope(p, p.read_text(errors="replace"), args.tint) if args.tint or args.scope else "in-scope"
    t0 = time.monotonic()
    results = run_all([str(p) for p in files], args.jobs, args.timeout, progress=True)
    wall = time.monotonic() - t0

    table = defaultdict(Counter)
    buckets, crashes = Counter(), []
    examples = {}
    for p, r in zip(files, results):
        s = scopes[p]
        table[s][r["class"]] += 1
        if s == "in-scope" and r["class"] == "rejected":
            buckets[r["bucket"]] += 1
            examples.setdefault(r["bucket"], f"{p.relative_to(root)}:{r.get('where')}")
        if r["class"] in ("crash", "timeout"):
            crashes.append((p, r))
    if args.jsonl:
        with open(args.jsonl, "w") as f:
            for p, r in zip(files, results):
                f.write(json.dumps({"file": str(p.relative_to(root)), "scope": scopes[p], **r}) + "\n")

    classes = ("ok", "rejected", "crash", "timeout")
    print(f"{len(files)} files under {root} in {wall:.0f} s")
    print(f"{'scope':<14}" + "".join(f"{c:>10}" for c in classes) + f"{'total':>10}{'pass':>8}")
    order = ("in-scope", "no-compute", "textures", "experimental", "tint-invalid")
    for s in sorted(table, key=lambda s: order.index(s) if s in order else 99):
        n = sum(table[s].values())
        print(f"{s:<14}" + "".join(f"{table[s][c]:>10}" for c in classes) + f"{n:>10}"
              + f"{100 * table[s]['ok'] / n:>7.1f}%")
    tot = Counter()
    for c in table.values():
        tot.update(c)
    print(f"{'all files':<14}" + "".join(f"{tot[c]:>10}" for c in classes) + f"{len(files):>10}")
    if buckets:
        print(f"\ntop rejection buckets (in scope), of {sum(buckets.values())}:")
        for b, n in buckets.most_common(args.top):
            print(f"{n:>6}  {b}\n        e.g. {examples[b]}")
    for p, r in crashes:
        print(f"{r['class'].upper()}: {p.relative_to(root)}: {r.get('message')} ({r.get('bucket')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
