"""Threads for the compiled kernels (--jobs): chunks of independent work handed to a shared
pool, each running a nogil numba function. Unlike numba's own parallel loops (an OpenMP team that
spins at its barrier), a thread here just blocks when its core is taken by another process, so a
busy machine slows a run down gracefully instead of stalling it."""
from __future__ import annotations

import itertools
import os
import queue
import threading

_jobs: queue.SimpleQueue = queue.SimpleQueue()
_threads: list = []
_lock = threading.Lock()
CPUS = max(1, os.cpu_count() or 1)


def _worker():
    while True:
        _jobs.get()()


class _Job:
    """fn() on a pool thread; result() waits for it and raises what it raised."""

    def __init__(self, fn):
        self.fn, self.error, self.done = fn, None, threading.Event()

    def __call__(self):
        try:
            self.fn()
        except BaseException as e:          # noqa: BLE001  (handed to the waiting thread)
            self.error = e
        finally:
            self.done.set()

    def result(self):
        self.done.wait()
        if self.error is not None:
            raise self.error


def submit(fn) -> _Job:
    """fn() on one of up to CPUS shared threads, started as needed. (A pool of plain threads:
    concurrent.futures would import logging, ~10 ms of every run's start.) The threads are
    daemons, but run_chunks waits for every job it hands out, so none runs once it returns."""
    with _lock:
        if len(_threads) < CPUS:
            t = threading.Thread(target=_worker, name=f"emu-jit_{len(_threads)}", daemon=True)
            t.start()
            _threads.append(t)
    job = _Job(fn)
    _jobs.put(job)
    return job


def run_chunks(fn, n: int, jobs: int, *args, grain: int = 1, per_thread: int = 2):
    """fn(*args, start, stop) over [0, n) in up to per_thread * jobs contiguous chunks, on jobs
    threads (the calling thread one of them), each taking the next chunk when it is done with
    one: a thread slowed down (a core shared with another process, a chunk of more work) takes
    fewer. Chunks must be independent. With fewer than `grain` items per thread the hand-over
    costs more than it saves: one thread does it all."""
    jobs = max(1, min(int(jobs), CPUS, n // max(1, grain)))
    if jobs <= 1:
        fn(*args, 0, n)
        return
    chunks = min(n, per_thread * jobs)
    bounds = [(c * n // chunks, (c + 1) * n // chunks) for c in range(chunks)]
    run_parts(lambda c: fn(*args, *bounds[c]), chunks, jobs)


def guided(n: int, jobs: int, smallest: int = 1) -> list:
    """Bounds that split [0, n) for run_parts on `jobs` threads into chunks that shrink, each
    1/(2 jobs) of what is left and at least `smallest`: few chunks (each a call, and a hand-over
    under the GIL), the first ones big, the last ones small, so that the threads end together
    even where one of them started late or runs on a core shared with another process."""
    out, a = [], 0
    while a < n:
        z = min(n, a + max(smallest, (n - a) // (2 * jobs)))
        out.append((a, z))
        a = z
    return out


def run_parts(fn, parts: int, jobs: int):
    """fn(i) for i in range(parts) on up to `jobs` threads (the calling thread one of them), each
    taking the next i when it is done with one. The parts must be independent."""
    jobs = max(1, min(int(jobs), CPUS, parts))
    taken = itertools.count()           # next() on it is atomic: each part goes to one thread

    def work():
        for c in taken:
            if c >= parts:
                return
            fn(c)
    if jobs <= 1:
        work()
        return
    futs = [submit(work) for _ in range(jobs - 1)]
    try:
        work()
    finally:
        for f in futs:              # every one, also when this thread's share raised
            f.done.wait()
    for f in futs:
        f.result()


def copy(a, jobs: int):
    """a.copy() made on up to `jobs` threads, slices of at least 1 MiB each (numpy's copies
    release the GIL): a 1024^2 f32 output is ~0.4 ms to copy on one core, serial work of every
    dispatch that --jobs 16 would otherwise wait on."""
    import numpy as np
    parts = max(1, min(int(jobs), a.nbytes >> 20))
    if parts == 1 or not a.flags.c_contiguous:
        return a.copy()
    out = np.empty_like(a)
    src, dst, n = a.reshape(-1), out.reshape(-1), a.size

    def part(p):
        lo, hi = n * p // parts, n * (p + 1) // parts
        dst[lo:hi] = src[lo:hi]
    run_parts(part, parts, jobs)
    return out
