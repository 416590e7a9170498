"""A campaign: many independent jobs (jobs.py) on a cluster, results streamed to a JSONL file.

- Each result is one JSON line, written as soon as its job finishes; a campaign started again with
  the same file skips the jobs it already holds (resumable).
- A job runs in a sandbox process forked by the worker: its time limit kills the sandbox (a job
  stuck in C code too) and is reported as a timeout, once, never retried; a job that brings its
  process down is a crash. A worker that dies loses nothing: Dask runs its tasks again elsewhere,
  and a job's result depends only on its parameters.
- The scheduler going away ends the campaign with one message; the results finished by then stay
  in the file, and the same command resumes.
- A progress line on stderr counts the jobs by outcome; the summary table (jobs.summary) ends it.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
import uuid
from collections import Counter
from multiprocessing import Pipe
from pathlib import Path

from ..errors import HostError
from . import jobs as J

GRACE = 5.0          # seconds past a job's own limit before its sandbox is killed


# -- on a worker ----------------------------------------------------------------------------------

class Sandbox:
    """A child process forked from the worker that runs jobs one at a time (os.fork: Dask's worker
    processes are daemons, which multiprocessing does not let have children)."""

    def __init__(self):
        self.pid, self.conn = None, None

    def _start(self):
        parent, child = Pipe()
        pid = os.fork()
        if pid == 0:                                # the child: serve until the pipe closes
            parent.close()
            code = 0
            try:
                _serve(child)
            except BaseException:                   # noqa: BLE001 - the parent reports a dead sandbox
                code = 1
            os._exit(code)
        child.close()
        self.pid, self.conn = pid, parent

    def run(self, kind: str, params: dict, limit: float) -> dict:
        if self.pid is None:
            self._start()
        t0 = time.monotonic()
        self.conn.send((kind, params))
        if self.conn.poll(limit):
            try:
                return self.conn.recv()
            except (EOFError, OSError):
                pass
            code = self._stop()
            return {"class": "crash", "message": f"the job's process died ({code})", "bucket": "process died",
                    "seconds": round(time.monotonic() - t0, 3)}
        self._stop()
        return {"class": "timeout", "message": f"stopped after {limit:g} s", "seconds": round(time.monotonic() - t0, 3)}

    def _stop(self) -> str:
        import signal
        pid, self.pid = self.pid, None
        self.conn.close()
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            return f"signal {os.WTERMSIG(status)}"
        return f"exit {os.WEXITSTATUS(status)}"


def _serve(conn):
    import gc
    import resource
    # the worker's garbage-collector hooks (Dask's GC timing) are no use here, and a job's alarm
    # raised inside one would be swallowed
    gc.callbacks.clear()
    cap = 6 << 30                                  # a job allocating more than this fails (a crash)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except (ValueError, OSError):
        pass
    sys.setrecursionlimit(20000)
    while True:
        try:
            kind, params = conn.recv()
        except EOFError:
            return
        try:
            r = J.JOBS[kind](params)
        except BaseException as e:                  # noqa: BLE001 - a bug in a job is its result
            r = {"class": "crash", "message": f"{type(e).__name__}: {e}"[:300], "bucket": type(e).__name__}
        conn.send(r)


_LOCAL = threading.local()


def run_jobs(kind: str, chunk: list, limit: float) -> list[dict]:
    """Jobs [(job id, parameters)] one after another in this worker thread's sandbox (one Dask
    task: a task per job would cost more in scheduling than a corpus file takes to compile)."""
    sb = getattr(_LOCAL, "sandbox", None)
    if sb is None:
        sb = _LOCAL.sandbox = Sandbox()
    return [{"job": job, **sb.run(kind, params, limit)} for job, params in chunk]


# -- on the client --------------------------------------------------------------------------------

def read_results(path: Path) -> dict:
    """{job: record} of a results file (a line cut short by a crash is dropped)."""
    done = {}
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(r, dict) and "job" in r:
                done[r["job"]] = r
    return done


class Progress:
    """'campaign corpus: 120/500 done (ok 100, rejected 15, ...), 12 s' on stderr: rewritten in
    place on a terminal, a line every 10 s elsewhere, and once at the end."""

    def __init__(self, kind: str, total: int, counts: Counter, stream=None):
        self.kind, self.total, self.counts = kind, total, counts
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.t0 = self.last = time.monotonic()

    def line(self) -> str:
        n = sum(self.counts.values())
        by = ", ".join(f"{c} {self.counts[c]}" for c in J.CLASSES[self.kind] if self.counts[c]) or "none yet"
        return f"campaign {self.kind}: {n}/{self.total} done ({by}), {time.monotonic() - self.t0:.0f} s"

    def tick(self, final: bool = False) -> None:
        now = time.monotonic()
        if self.tty and (final or now - self.last > 0.2):
            self.stream.write("\r" + self.line() + ("\n" if final else ""))
        elif not self.tty and (final or now - self.last > 10):
            self.stream.write(self.line() + "\n")
        else:
            return
        self.last = now
        self.stream.flush()


def run(cluster, kind: str, jobs: list[tuple[str, dict, dict]], out: Path, limit: float,
        stream=None, on_result=None, chunk: int | None = None) -> list[dict]:
    """Run `jobs` = [(job id, parameters, fields added to its record)] on `cluster`; returns the
    records of every job in the order given (those already in `out` and those run now).
    `on_result(record, finished so far)` is called as each one is written; `chunk`: jobs per
    task at most (default 64; fewer where the jobs are few)."""
    done = read_results(out)
    todo = [(j, p, extra) for j, p, extra in jobs if j not in done]
    counts = Counter(done[j]["class"] for j, _, _ in jobs if j in done)
    progress = Progress(kind, len(jobs), counts, stream)
    if done and todo:
        progress.stream.write(f"campaign {kind}: {len(jobs) - len(todo)} of {len(jobs)} jobs already in {out}: "
                              f"running the other {len(todo)}\n")
    client = cluster.client
    extras = {j: extra for j, _, extra in todo}
    out.parent.mkdir(parents=True, exist_ok=True)
    # chunks of jobs: a few per worker thread at least, so that the load stays even
    size = max(1, min(chunk or 64, len(todo) // (4 * cluster.threads()) or 1))
    chunks = [[(j, p) for j, p, _ in todo[i:i + size]] for i in range(0, len(todo), size)]
    from distributed import as_completed
    from .engine import gone
    with open(out, "a") as fh:
        if fh.tell() and not out.read_bytes().endswith(b"\n"):
            fh.write("\n")                        # a line cut short: the next record starts afresh
        try:
            tag = uuid.uuid4().hex[:12]             # keys unique to this run: Dask keeps results by key
            futures = [client.submit(run_jobs, kind, c, limit, pure=False, key=f"emu-{kind}-{tag}-{i}")
                       for i, c in enumerate(chunks)]
            for batch in as_completed(futures).batches():
                for f in batch:
                    if f.status == "cancelled":     # the connection to the scheduler was lost
                        raise _Lost("the connection to it was lost")
                    if f.status == "error":
                        exc = f.exception()
                        if gone(exc):
                            raise exc
                        rs = [{"job": j, "class": "crash", "message": f"{type(exc).__name__}: {exc}"[:300],
                               "bucket": f"task failed: {type(exc).__name__}"} for j, _ in chunks[int(f.key.rsplit("-", 1)[1])]]
                    else:
                        rs = f.result()
                    for r in rs:
                        r.update(extras.get(r["job"], {}))
                        done[r["job"]] = r
                        counts[r["class"]] += 1
                        fh.write(json.dumps(r, default=str) + "\n")
                        if on_result is not None:
                            fh.flush()
                            on_result(r, len(done))
                    fh.flush()
                    progress.tick()
        except Exception as e:
            if not gone(e):
                raise
            progress.tick(final=True)
            why = str(e) if isinstance(e, _Lost) else type(e).__name__
            raise HostError(f"the cluster's scheduler ({cluster.spec}) went away ({why}): "
                            f"{len(done)} of {len(jobs)} jobs finished, their results kept in {out}",
                            hint="start the scheduler again and run the same command: it skips the "
                                 "finished jobs") from None
    progress.tick(final=True)
    return [done[j] for j, _, _ in jobs]


class _Lost(OSError):
    """A task cancelled because the client lost its scheduler."""


def exit_code(records: list[dict]) -> int:
    """1 when a job crashed, timed out, found something or differed; else 0."""
    bad = {"crash", "timeout", "findings", "different", "error"}
    return 1 if any(r["class"] in bad for r in records) else 0
