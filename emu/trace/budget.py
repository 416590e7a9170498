"""How large a trace will be, before it is written, and the limit it is held to.

A traced run writes every selected instruction of every selected workgroup with every lane's
fragments: `--trace-ops all` on a 256^3 naive GEMM is ~14 GB. Before the dispatch, `estimate`
runs the first and the last selected workgroup alone, traced into a sink that only counts bytes,
on copies of the buffers (nothing the real run sees changes), and multiplies the mean by the
number of selected workgroups. A run whose estimate passes the limit (`--trace-limit`, default
1 GB) stops before writing anything, with a message naming the options that narrow the trace;
while writing, the file is held to the limit too (workgroups differ: loops that run longer in
some), and a run that passes it stops and removes the partial file.
"""
from __future__ import annotations

import copy
import re

from ..errors import HostError, UsageError
from .tracer import NARROW, human  # noqa: F401  (human: for emu run's line)

DEFAULT_LIMIT = 10**9           # bytes: 1 GB
_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
          "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_size(text: str) -> int | None:
    """Bytes of '500M', '2GB', '1.5g', '4GiB', '123456'; None for 'none' or '0' (no limit)."""
    t = text.strip().lower()
    if t in ("none", "0", "off"):
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([a-z]*)", t)
    if m is None or m.group(2) not in _UNITS:
        raise UsageError(f"--trace-limit {text!r}: expected a size such as 500M, 2G or 4GiB "
                         f"(or none for no limit)")
    return int(float(m.group(1)) * _UNITS[m.group(2)])


class _Count:
    """A file that keeps only the number of characters written (the traces are ASCII JSON)."""

    def __init__(self):
        self.n = 0

    def write(self, s: str):
        self.n += len(s)

    def close(self):
        pass


def selected_workgroups(sel, grid) -> list[int]:
    """Flat indices (x fastest) of the workgroups the selection traces."""
    gx, gy, gz = grid
    if sel.text.get("workgroups", "*") == "*":
        return list(range(gx * gy * gz))
    return [i for i in range(gx * gy * gz) if sel.wants_workgroup((i % gx, (i // gx) % gy, i // (gx * gy)))]


def _clone(region):
    """What a probe may write without the real run seeing it: a copy of a writable buffer (a
    read-only one is shared), of a texture or sampler."""
    from ..memory.memory import Region
    if isinstance(region, Region) and region.access == "read":
        return region
    if isinstance(region, Region):
        c = copy.copy(region)
        c.data, c._views = region.data.copy(), {}
        return c
    return copy.deepcopy(region)


def estimate(pipeline, regions: dict, grid, tracer) -> tuple[int, int, int] | None:
    """(estimated bytes, selected workgroups, workgroups probed) of tracing this dispatch with
    `tracer`'s selection and format; None where a probed workgroup stops with an error (the run
    itself then reports the error it meets first)."""
    from ..errors import EmuError
    from .tracer import JsonlSink, PerfettoSink, Tracer
    wanted = selected_workgroups(tracer.sel, grid)
    probes = sorted({wanted[0], wanted[-1]}) if wanted else []
    sizes = []
    old = pipeline.opts
    for w in probes:
        count = _Count()
        sink = JsonlSink(count) if tracer.format == "jsonl" else PerfettoSink(count)
        probe = Tracer(sink=sink, selection=tracer.sel)
        pipeline.opts = copy.copy(old)
        pipeline.opts.tracer, pipeline.opts.progress = probe, None
        try:
            probe._open(pipeline, tuple(grid))
            head = count.n
            pipeline.dispatch(tuple(grid), {k: _clone(r) for k, r in regions.items()}, (w, w + 1))
        except EmuError:
            return None
        finally:
            pipeline.opts = old
        sizes.append(count.n - head)
        header = head
    if not sizes:
        return 0, 0, 0
    return int(header + sum(sizes) / len(sizes) * len(wanted)), len(wanted), len(probes)


def check(pipeline, regions: dict, grid, tracer, limit: int | None, note=None) -> int:
    """Estimate the trace; stop with one message (nothing written) where it passes `limit`.
    Returns the estimate (None: not known, a probed workgroup stopped with an error)."""
    got = estimate(pipeline, regions, grid, tracer)
    if got is None:
        return None
    est, n, _ = got
    if limit is not None and est > limit:
        sel = tracer.sel.describe()
        if tracer.sel.everything:
            sel["ops"] = "all"
        now = ", ".join(f"--trace-{k} {v if isinstance(v, str) else ','.join(v)}" for k, v in sel.items())
        raise HostError(f"the trace would be about {human(est)} ({n} workgroup{'s' * (n != 1)} traced, "
                        f"~{human(est / max(1, n))} each; {now}), over --trace-limit {human(limit)}; "
                        f"nothing was written", hint=NARROW)
    if note is not None and est >= 10**8:
        note(f"emu: tracing about {human(est)} ({n} workgroups) to {tracer.path}")
    return est
