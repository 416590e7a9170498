"""Compiled fast paths of the executor (numba), plugged in through emu/scheduler/fastpaths.py when
this package is imported (emu.api does): cooperative loads and stores in bounds, the multiply-add
straight on fragments, and the fusion JIT that turns an entry point's plain scalar IR into one
lane loop. Every path here must give the same bits and errors as the reference executor in
emu.scheduler; tests/perf checks each against it."""
from __future__ import annotations

import os

from ..scheduler import fastpaths
from . import notice  # noqa: F401  (the line printed while compiling)


def forget_once() -> None:
    """Forget what a process says only once (the compile notice, an unusable cache folder's
    warning): `emu serve` calls it before each run, which then says what a new process would."""
    from . import fuse
    notice._NOTICE.said = set()
    fuse._CACHE.clear()


# coop_fast is imported on first use (its kernels' machine code loads without numba where it was saved)
def _load_fast(ex, inst, *operands):
    from .coop_fast import load
    return load(ex, inst, *operands)


def _store_fast(ex, inst, *operands):
    from .coop_fast import store
    return store(ex, inst, *operands)


def _mma_fast(ex, inst, *operands):
    from .coop_fast import mma
    return mma(ex, inst, *operands)


def _coop(pipe):
    from .kernelcache import cached

    def make(pipe):
        from .coop_kernel import compile_pipeline
        return compile_pipeline(pipe)
    return cached(pipe, "cooperative", make)


def _fuse(pipe):
    from .kernelcache import cached

    def make(pipe):
        from .fuse import compile_pipeline
        return compile_pipeline(pipe)
    return cached(pipe, "fusion", make)


fastpaths.register("coop_load", "coop_fast.load", _load_fast,
                   doc="in-bounds aligned loads: one compiled gather")
fastpaths.register("coop_store", "coop_fast.store", _store_fast,
                   doc="in-bounds aligned stores: one compiled scatter")
fastpaths.register("coop_mma", "mma_fast.frag_mma", _mma_fast,
                   applies=lambda ex, inst: not inst.attrs.get("saturate"), traced=True,
                   doc="fused and exact float models straight on fragments; values only, so it also "
                       "runs under a tracer")
fastpaths.register(fastpaths.PIPELINE, "fuse.compile_pipeline", _fuse,
                   applies=lambda pipe: os.environ.get("EMU_JIT", "1") != "0",
                   doc="plain scalar entry points as one compiled lane loop")
fastpaths.register(fastpaths.PIPELINE, "coop_kernel.compile_pipeline", _coop,
                   applies=lambda pipe: os.environ.get("EMU_JIT", "1") != "0",
                   doc="subgroup-uniform cooperative entry points (loads, K loop, multiply-adds, "
                       "stores) as one compiled subgroup loop")
