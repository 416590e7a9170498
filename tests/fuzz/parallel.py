"""The long fuzz run on many cores: --jobs processes of tests/fuzz/run.py over disjoint ranges of
mutants (together the same mutants as one run of --mutants), their sums added up, their findings
and logs in one folder.

    python -m tests.fuzz.parallel --jobs 16 --mutants 1000000 [--seed 1] [--tint DIR] [--run-ir]
                                  [--deadline S] --out DIR
    python -m tests.fuzz.parallel --copy-tint /tmp/tint/test/tint DEST     # the Tint files it takes

--out gets summary.json (the sums), summary.txt (what is printed) and findings.tar.gz (each job's
log, summary and finding inputs): three files, for a machine that hands back only a few.
--deadline stops the jobs (each sums up after its current input) that many seconds after the
start, so a run on a lent machine ends inside its time, saying how many mutants ran."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from .run import ROOT, tint_files


def copy_tint(src: str, dest: str) -> int:
    """Copy the Tint files the fuzzer takes from `src`, with their paths inside it."""
    files = tint_files(src)
    for f in files:
        to = Path(dest) / f.relative_to(src)
        to.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, to)
    size = sum(f.stat().st_size for f in files)
    print(f"fuzz: copied {len(files)} Tint files ({size / 2**20:.1f} MiB) from {src} to {dest}")
    return 0


def ranges(start: int, mutants: int, jobs: int) -> list[tuple[int, int]]:
    """(first, count) of each job: consecutive, disjoint, together start..start+mutants-1."""
    out, first = [], start
    for j in range(jobs):
        count = mutants // jobs + (j < mutants % jobs)
        if count:
            out.append((first, count))
        first += count
    return out


def add_up(parts: list[dict]) -> dict:
    total = {"jobs": len(parts), "mutants": 0, "hangs": 0, "counts": {}, "findings": {},
             "slowest": [0.0, None], "seconds": 0.0, "ranges": []}
    for p in parts:
        total["mutants"] += p["mutants"]
        total["hangs"] += p["hangs"]
        total["seconds"] = max(total["seconds"], p["seconds"])
        total["ranges"].append([p["first"], p["last"]])
        for k in ("seed", "inputs", "timeout", "run_ir"):
            total[k] = p[k]
        for kind, c in p["counts"].items():
            t = total["counts"].setdefault(kind, {"ok": 0, "error": 0})
            for outcome, v in c.items():
                t[outcome] += v
        for key, f in p["findings"].items():
            if key not in total["findings"] or f["first"] < total["findings"][key]["first"]:
                total["findings"][key] = f
        if p["slowest"][0] > total["slowest"][0]:
            total["slowest"] = p["slowest"]
    return total


def describe(t: dict, wall: float, wanted: int) -> str:
    lines = [f"fuzz: {t['mutants']} of {wanted} mutants in {t['jobs']} jobs, {wall:.0f} s wall "
             f"({t['mutants'] / max(wall, 1e-9):.1f}/s), seed {t.get('seed')}, "
             f"IR mutants {'run' if t.get('run_ir') else 'parsed, verified and printed'}",
             "fuzz:   inputs " + ", ".join(f"{k} {v}" for k, v in t.get("inputs", {}).items())]
    lines += [f"fuzz:   {k}: {c['ok']} ran, {c['error']} rejected with a message" for k, c in t["counts"].items()]
    lines.append(f"fuzz:   slowest input {t['slowest'][0]:.2f} s ({t['slowest'][1]}); "
                 f"hangs over {t.get('timeout', 0):g} s: {t['hangs']}")
    lines.append(f"fuzz:   findings (tracebacks and hangs, by site): {len(t['findings'])}")
    lines += [f"fuzz:     {k} (first #{f['first']}): {f['message']}" for k, f in sorted(t["findings"].items())]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz.parallel", description=__doc__.splitlines()[0])
    ap.add_argument("--copy-tint", nargs=2, metavar=("SRC", "DEST"), help="copy the Tint files the fuzzer takes")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--mutants", type=int, default=10_000)
    ap.add_argument("--start", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tint", default=None, metavar="DIR")
    ap.add_argument("--run-ir", action="store_true")
    ap.add_argument("--targets", default=None)
    ap.add_argument("--deadline", type=float, default=None, metavar="S",
                    help="stop the jobs after S seconds of wall time and sum up what ran")
    ap.add_argument("--out", metavar="DIR")
    args = ap.parse_args(argv)
    if args.copy_tint:
        return copy_tint(*args.copy_tint)
    if not args.out or args.jobs < 1 or args.mutants < 1 or args.start < 1:
        ap.error("--out is needed; --jobs, --mutants and --start must be positive")
    out = Path(args.out)
    work = out / "jobs"
    work.mkdir(parents=True, exist_ok=True)
    procs = []
    t0 = time.time()
    for j, (first, count) in enumerate(ranges(args.start, args.mutants, args.jobs)):
        cmd = [sys.executable, "-m", "tests.fuzz.run", "--seed", str(args.seed), "--start", str(first),
               "--mutants", str(count), "--out", str(work / f"{j:02d}"), "--summary", str(work / f"{j:02d}.json")]
        cmd += ["--tint", args.tint] if args.tint else []
        cmd += ["--run-ir"] if args.run_ir else []
        cmd += ["--targets", args.targets] if args.targets else []
        log = open(work / f"{j:02d}.log", "w")
        procs.append((subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT), log))
    print(f"fuzz: {len(procs)} jobs started: mutants #{args.start}..#{args.start + args.mutants - 1}", flush=True)
    stopped = False
    while any(p.poll() is None for p, _ in procs):
        if args.deadline and not stopped and time.time() - t0 > args.deadline:
            for p, _ in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGTERM)
            stopped = True
            print(f"fuzz: deadline of {args.deadline:g} s: jobs told to stop", flush=True)
        time.sleep(1)
    wall = time.time() - t0
    parts, lost = [], []
    for j, (p, log) in enumerate(procs):
        log.close()
        summary = work / f"{j:02d}.json"
        if summary.is_file():
            parts.append(json.loads(summary.read_text()))
        else:
            lost.append(f"job {j} (exit {p.returncode}): no summary, see jobs/{j:02d}.log")
    total = add_up(parts) if parts else {"mutants": 0, "findings": {}}
    total["wall_seconds"] = round(wall, 1)
    total["lost_jobs"] = lost
    text = describe(total, wall, args.mutants) if parts else "fuzz: no job summed up"
    text += "".join(f"\nfuzz:   LOST {x}" for x in lost)
    (out / "summary.json").write_text(json.dumps(total, indent=1) + "\n")
    (out / "summary.txt").write_text(text + "\n")
    with tarfile.open(out / "findings.tar.gz", "w:gz") as tar:
        tar.add(work, arcname="jobs")
    shutil.rmtree(work)
    print(text)
    return 1 if total["findings"] or lost else 0


if __name__ == "__main__":
    sys.exit(main())
