"""The one seam through which fast paths plug into the reference executor.

The executor in this package is the specification: every op has a reference handler, and a
pipeline runs batch by batch through them. A fast path is an optimisation that registers here,
for one op or for whole pipelines, with a predicate saying when it applies; it must give the
reference's bits and errors, and each one is tested bit for bit against the reference path
(tests/perf). The scheduler imports no fast path: emu/jit registers them when it is imported
(emu.api imports it), so the reference executor runs on its own as well.

Tracing observes the reference path: while a tracer is attached the seam offers only the fast
paths declared `traced=True`, those that compute values the reference would compute and touch
nothing the tracer records (memory accesses, control flow). So outputs with and without tracing
are the same bits, and what the tracer shows is what the reference executor did.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

PIPELINE = "<pipeline>"      # the target of a fast path for whole pipelines


@dataclass(frozen=True)
class FastPath:
    target: str              # an op name (emu.isa.ops), or PIPELINE
    name: str
    run: Callable[..., Any]  # op: (ex, inst, *operands) -> result, or None to decline;
                             # pipeline: (pipeline) -> a compiled kernel, or None to decline
    applies: Callable[..., bool] = lambda *a: True   # cheap predicate on (ex, inst) / (pipeline)
    traced: bool = False     # may run while a tracer is attached (see the module doc)
    doc: str = ""


_PATHS: dict[str, list[FastPath]] = {}


def register(target: str, name: str, run, *, applies=None, traced: bool = False, doc: str = "") -> FastPath:
    """Plug a fast path in (later registrations with the same target and name replace it)."""
    fp = FastPath(target, name, run, applies or (lambda *a: True), traced, doc)
    paths = [p for p in _PATHS.get(target, []) if p.name != name]
    _PATHS[target] = paths + [fp]
    return fp


def declared() -> list[FastPath]:
    """Every fast path plugged in, op paths and pipeline paths."""
    return [p for paths in _PATHS.values() for p in paths]


def run_op(ex, inst, *operands):
    """The result of the first fast path for `inst.op` that applies and accepts, or None (the
    caller then runs the reference handler)."""
    paths = _PATHS.get(inst.op)
    if not paths:
        return None
    traced = ex.opts.tracer is not None
    for p in paths:
        if (p.traced or not traced) and p.applies(ex, inst):
            r = p.run(ex, inst, *operands)
            if r is not None:
                return r
    return None


def compile_pipeline(pipe):
    """A compiled kernel for the whole pipeline from the first pipeline fast path that applies and
    accepts it, or None (the executor then runs it batch by batch)."""
    traced = pipe.opts.tracer is not None
    for p in _PATHS.get(PIPELINE, []):
        if (p.traced or not traced) and p.applies(pipe):
            k = p.run(pipe)
            if k is not None:
                return k
    return None
