"""Threads for the compiled kernels (--jobs): chunks of independent work handed to a shared
pool, each running a nogil numba function. Unlike numba's own parallel loops (an OpenMP team that
spins at its barrier), a thread here just blocks when its core is taken by another process, so a
busy machine slows a run down gracefully instead of stalling it."""
from __future__ import annotations

import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()
CPUS = max(1, os.cpu_count() or 1)


def pool() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=CPUS,
                                       thread_name_prefix="emu-jit")
        return _pool


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
    taken = itertools.count()           # next() on it is atomic: each chunk goes to one thread

    def work():
        for c in taken:
            if c >= chunks:
                return
            fn(*args, *bounds[c])
    futs = [pool().submit(work) for _ in range(jobs - 1)]
    work()
    for f in futs:
        f.result()
