"""The fuzzer, by hand: mutants of the project's shaders, IR files, .npy files and traces (and of
the Tint corpus when a snapshot is given) through emu's readers; every exception that is not an
EmuError, and every input that runs over --timeout seconds, is a finding.

    python -m tests.fuzz.run --mutants 1000000 [--seed 1] [--tint /tmp/tint/test/tint] [--out DIR]

Findings are written to --out (one input per distinct crash site) and summed up at the end; the
short, fixed-seed run of the test suite is tests/fuzz/test_fuzz.py."""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import random
import signal
import sys
import time
import traceback
from pathlib import Path

import numpy as np

from . import targets
from .mutate import mutate, mutate_bytes

ROOT = Path(__file__).resolve().parents[2]


class Hang(BaseException):
    """Raised by the alarm: not an Exception, so no `except Exception` in emu swallows it."""


def project_shaders() -> list[str]:
    files = sorted({*ROOT.glob("tests/**/*.wgsl"), *ROOT.glob("emu/examples/*.wgsl"), *ROOT.glob("bench/**/*.wgsl"),
                    *ROOT.glob("examples/**/*.wgsl")})
    return [f.read_text() for f in files]


def tint_files(folder: str, limit: int = 4000) -> list[Path]:
    """The `limit` WGSL files of a Tint folder that the fuzzer takes, in its order: by a hash of
    the path inside the folder, so that a copy of just these files (tests/fuzz/parallel.py
    --copy-tint) is the same corpus, in the same order, as the whole folder."""
    files = list(Path(folder).rglob("*.wgsl"))
    files.sort(key=lambda f: hashlib.sha256(f.relative_to(folder).as_posix().encode()).hexdigest())
    return files[:limit]


def tint_shaders(folder: str | None, limit: int = 4000) -> list[str]:
    """WGSL files of a Tint snapshot (test/tint), if one was extracted: `git -C .../google+dawn/repo
    archive HEAD test/tint | tar -x -C /tmp/tint`. None given or none there: say so, use none."""
    if not folder:
        return []
    files = tint_files(folder, limit)
    if not files:
        print(f"fuzz: no .wgsl files under {folder}: running without the Tint corpus", file=sys.stderr)
        return []
    out = []
    for f in files:
        try:
            out.append(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            pass
    return out


def ir_texts(shaders: list[str]) -> list[str]:
    from emu.errors import EmuError
    from emu.frontend.wgsl import compile_source
    from emu.isa.printer import print_module
    out = [f.read_text() for f in sorted(ROOT.glob("tests/**/*.ir"))]
    for s in shaders:
        try:
            out.append(print_module(compile_source(s, "seed.wgsl")[0]))
        except EmuError:
            pass
    return out


def npy_files() -> list[bytes]:
    arrays = [np.arange(16, dtype=np.float32), np.zeros((4, 4), np.uint32), np.array(7, np.int32),
              np.zeros(0, np.float16), np.asfortranarray(np.arange(12, dtype=np.int16).reshape(3, 4)),
              np.zeros(3, dtype=[("a", "<f4"), ("b", "<u2")]), np.arange(5, dtype=">i8"),
              np.ones((2, 3, 4), np.float64), np.array([True, False])]
    out = []
    for a in arrays:
        b = io.BytesIO()
        np.save(b, a)
        out.append(b.getvalue())
    return out


def full_trace() -> str:
    """A trace of every lane of the 16x16 wgpu GEMM on the reference device: one that `emu
    explain` can explain in full (the golden traces hold a few lanes only)."""
    import json
    from importlib import resources

    import emu
    from emu.trace.select import Selection
    from emu.trace.tracer import MemorySink, Tracer
    tr = Tracer(sink=MemorySink(), selection=Selection.parse())
    dev = emu.Device("reference", tracer=tr)
    src = resources.files("emu.examples").joinpath("gemm_wgpu.wgsl").read_text()
    mod = dev.create_shader_module(src, "emu/examples/gemm_wgpu.wgsl")
    pipe = dev.create_compute_pipeline(mod, constants={"M": 16, "N": 16, "K": 16})
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (16, 16)).astype(np.float16) for _ in range(2))
    bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): dev.create_buffer(size=1024)}
    tr.begin(dev, mod, pipe, (1, 1, 1))
    dev.dispatch(pipe, bufs, (1, 1, 1))
    tr.end()
    return "\n".join(json.dumps(r) for r in tr.records) + "\n"


def decision_trace() -> str:
    """A trace of tests/trace/shaders/contract.wgsl's scalar arithmetic on nvidia-h200: events
    with compiler decisions and their operands (what `emu explain --op SEQ` reads)."""
    import json

    import emu
    from emu.trace.select import Selection
    from emu.trace.tracer import MemorySink, Tracer
    tr = Tracer(sink=MemorySink(), selection=Selection.parse(ops="other"))
    dev = emu.Device("nvidia-h200", tracer=tr)
    mod = dev.create_shader_module((ROOT / "tests" / "trace" / "shaders" / "contract.wgsl").read_text(),
                                   "contract.wgsl")
    x, y, z = (np.array(v, np.float32) for v in ([1.5, -2.0, 3.0, 0.1], [7.0, 0.5, 11.0, 3.0], [0.25, 1.0, -1.0, 2.0]))
    bufs = {(0, 0): dev.create_buffer(x), (0, 1): dev.create_buffer(y), (0, 2): dev.create_buffer(z),
            (0, 3): dev.create_buffer(size=64)}
    dev.dispatch(dev.create_compute_pipeline(mod), bufs, (1, 1, 1))
    tr.end()
    return "\n".join(json.dumps(r) for r in tr.records) + "\n"


def traces() -> list[str]:
    return [full_trace(), decision_trace()] + [f.read_text() for f in sorted(ROOT.glob("traces/*.jsonl"))]


def corpus(tint: str | None) -> dict[str, list]:
    shaders = project_shaders()
    return {"wgsl": shaders + tint_shaders(tint), "ir": ir_texts(shaders), "npy": npy_files(),
            "trace": traces()}


# the share of mutants each target gets
WEIGHTS = (("wgsl", 8), ("ir", 4), ("npy", 2), ("trace", 1))


def mutant(kind: str, seeds: list, rng: random.Random):
    seed = rng.choice(seeds)
    if kind == "npy":
        return mutate_bytes(seed, rng)
    return mutate(seed, rng, seeds)


def numbered(seeds: dict[str, list], chosen: list[str], seed: int, first: int, end: int):
    """(n, kind, data) of mutants first..end-1 of a seed: mutant n depends on (seed, n) alone, so
    disjoint ranges run anywhere (tests/fuzz/parallel.py, `emu campaign fuzz`) add up to one run."""
    wheel = [k for k, w in WEIGHTS if k in chosen for _ in range(w)]
    for n in range(first, end):
        rng = random.Random(f"{seed}:{n}")
        kind = wheel[n % len(wheel)]
        yield n, kind, mutant(kind, seeds[kind], rng)


def finding(kind: str, outcome, timeout: float) -> str:
    """The site a hang or an exception is counted under (one finding per site)."""
    return f"{kind}: hang over {timeout:g} s" if outcome == "hang" else f"{kind}: {site(outcome)}"


def run_one(kind: str, data, timeout: float = 10.0, run: bool = True):
    """(outcome, wall seconds): outcome "ok" / "error" / "hang" (over `timeout` CPU seconds) or
    the exception raised."""
    def alarm(signum, frame):
        raise Hang()
    # CPU time, not wall time: on a loaded machine a quick input can wait seconds for a core
    old = signal.signal(signal.SIGPROF, alarm)
    signal.setitimer(signal.ITIMER_PROF, timeout)
    t0 = time.perf_counter()
    try:
        fn = targets.TARGETS[kind]
        outcome = fn(data, run) if kind in ("wgsl", "ir") else fn(data)
    except Hang:
        outcome = "hang"
    except Exception as e:
        outcome = e
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
    return outcome, time.perf_counter() - t0


def site(e: BaseException) -> str:
    """Where a crash happened: the innermost frame inside emu (or the last one)."""
    frames = traceback.extract_tb(e.__traceback__)
    inner = [f for f in frames if "/emu/" in f.filename] or frames
    f = inner[-1] if inner else None
    where = f"{Path(f.filename).name}:{f.lineno}" if f else "?"
    return f"{type(e).__name__} at {where}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz.run", description=__doc__.splitlines()[0])
    ap.add_argument("--mutants", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=1, metavar="N",
                    help="number of the first mutant: a long run in chunks (--start 1, 100001, ...) is the same "
                         "run as one of their total length")
    ap.add_argument("--tint", default=None, metavar="DIR", help="a Tint corpus folder (test/tint)")
    ap.add_argument("--timeout", type=float, default=10.0, help="CPU seconds before an input counts as a hang")
    ap.add_argument("--targets", default="wgsl,ir,npy,trace")
    ap.add_argument("--no-run", action="store_true", help="compile only: do not dispatch the shaders")
    ap.add_argument("--run-ir", action="store_true",
                    help="also dispatch the IR mutants that pass the verifier (by default IR mutants are "
                         "parsed, verified and printed again)")
    ap.add_argument("--out", default=None, metavar="DIR", help="write one input per finding here")
    ap.add_argument("--report-every", type=float, default=60.0, metavar="S")
    ap.add_argument("--summary", default=None, metavar="FILE",
                    help="also write the sums as JSON (what tests/fuzz/parallel.py adds up)")
    args = ap.parse_args(argv)
    if args.mutants < 0 or args.timeout <= 0 or args.start < 1:
        ap.error("--mutants, --start and --timeout must be positive")

    stopping = []

    def stop(signum, frame):            # kill -TERM (a background job ignores Ctrl-C): sum up after this input
        stopping.append(signum)
    signal.signal(signal.SIGTERM, stop)
    seeds = corpus(args.tint)
    chosen = [k for k in args.targets.split(",") if k]
    for k in chosen:
        if k not in targets.TARGETS:
            ap.error(f"unknown target {k!r} (targets: {', '.join(targets.TARGETS)})")
    print("fuzz: inputs " + ", ".join(f"{k} {len(seeds[k])}" for k in chosen), flush=True)
    out = Path(args.out) if args.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
    findings: dict[str, tuple[str, int]] = {}
    counts = {k: {"ok": 0, "error": 0} for k in chosen}
    hangs, slowest = 0, (0.0, None)
    t0 = last = time.time()
    n = args.start - 1
    for n, kind, data in numbered(seeds, chosen, args.seed, args.start, args.start + args.mutants):
        if stopping:
            n -= 1
            break
        try:
            outcome, dt = run_one(kind, data, args.timeout,
                                  (not args.no_run) and (kind != "ir" or args.run_ir))
        except KeyboardInterrupt:           # Ctrl-C (or kill -INT): stop, and sum up what ran
            n -= 1
            break
        if dt > slowest[0]:
            slowest = (dt, f"{kind} #{n}")
        if time.time() - last > args.report_every:
            last = time.time()
            done = n - args.start + 1
            print(f"fuzz: #{n}, {done} mutants, {done / (last - t0):.1f}/s, {len(findings)} findings", flush=True)
        if outcome in ("ok", "error"):
            counts[kind][outcome] += 1
            continue
        key = finding(kind, outcome, args.timeout)
        hangs += outcome == "hang"
        if key not in findings:
            findings[key] = (str(outcome)[:200], n)
            print(f"fuzz: #{n} new finding {key}: {str(outcome)[:200]}", flush=True)
            if out:
                ext = {"wgsl": "wgsl", "ir": "ir", "npy": "npy", "trace": "jsonl"}[kind]
                p = out / f"{kind}-{n}.{ext}"
                p.write_bytes(data) if isinstance(data, bytes) else p.write_text(data, errors="surrogatepass")
    elapsed = time.time() - t0
    done = n - args.start + 1
    print(f"fuzz: done: {done} mutants (#{args.start}..#{n}) in {elapsed:.0f} s ({done / max(elapsed, 1e-9):.1f}/s), "
          f"seed {args.seed}")
    for k in chosen:
        print(f"fuzz:   {k}: {counts[k]['ok']} ran, {counts[k]['error']} rejected with a message")
    print(f"fuzz:   slowest input {slowest[0]:.2f} s ({slowest[1]}); hangs over {args.timeout:g} s: {hangs}")
    print(f"fuzz:   findings (tracebacks and hangs, by site): {len(findings)}")
    for key, (msg, first) in sorted(findings.items()):
        print(f"fuzz:     {key} (first #{first}): {msg}")
    if args.summary:
        Path(args.summary).write_text(json.dumps({
            "seed": args.seed, "first": args.start, "last": n, "mutants": done, "seconds": round(elapsed, 1),
            "inputs": {k: len(seeds[k]) for k in chosen}, "counts": counts, "hangs": hangs,
            "slowest": [round(slowest[0], 3), slowest[1]], "timeout": args.timeout, "run_ir": args.run_ir,
            "findings": {k: {"message": m, "first": f} for k, (m, f) in findings.items()}}, indent=1) + "\n")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
