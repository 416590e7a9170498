"""Threads for the compiled kernels (--jobs): chunks of independent work handed to a shared
pool, each running a nogil numba function. Unlike numba's own parallel loops (an OpenMP team that
spins at its barrier), a thread here just blocks when its core is taken by another process, so a
busy machine slows a run down gracefully instead of stalling it."""
from __future__ import annotations

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


def run_chunks(fn, n: int, jobs: int, *args, grain: int = 1):
    """fn(*args, start, stop) over [0, n) in up to 2 * jobs contiguous chunks, on jobs threads
    (the calling thread takes the first chunk). Chunks must be independent. With fewer than
    `grain` items per thread the hand-over costs more than it saves: one thread does it all."""
    jobs = max(1, min(int(jobs), CPUS, n // max(1, grain)))
    if jobs <= 1:
        fn(*args, 0, n)
        return
    chunks = min(n, 2 * jobs)
    bounds = [(c * n // chunks, (c + 1) * n // chunks) for c in range(chunks)]
    futs = [pool().submit(fn, *args, a, b) for a, b in bounds[1:]]
    fn(*args, *bounds[0])
    for f in futs:
        f.result()
