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

    records = [{"job": str(p.relative_to(root)), "scope": scopes[p], **r} for p, r in zip(files, results)]
    if args.jsonl:
        with open(args.jsonl, "w") as f:
            for r in records:
                f.write(json.dumps({"file": r["job"], **{k: v for k, v in r.items() if k != "job"}}) + "\n")
    print(summary("corpus", records, f"{len(files)} files under {root} in {wall:.0f} s", args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
