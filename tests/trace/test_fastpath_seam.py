"""Fast paths plug in through emu/scheduler/fastpaths.py: declared there, off while a tracer
observes (except those declared `traced`), and giving the reference's bits."""
import numpy as np

import emu  # noqa: F401  (emu.api plugs the fast paths in)
from emu.scheduler import fastpaths
from emu.trace.select import Selection
from emu.trace.tracer import MemorySink, Tracer

from .conftest import run_gemm


def test_declared_fast_paths():
    got = {(p.target, p.name, p.traced) for p in fastpaths.declared()}
    assert got == {("coop_load", "coop_fast.load", False), ("coop_store", "coop_fast.store", False),
                   ("coop_mma", "mma_fast.frag_mma", True),
                   (fastpaths.PIPELINE, "fuse.compile_pipeline", False),
                   (fastpaths.PIPELINE, "coop_kernel.compile_pipeline", False)}


def test_tracer_sees_the_reference_path():
    saved = {k: list(v) for k, v in fastpaths._PATHS.items()}
    calls = []
    for p in fastpaths.declared():
        def counted(*a, _p=p):
            calls.append(_p.name)
            return _p.run(*a)
        fastpaths.register(p.target, p.name, counted, applies=p.applies, traced=p.traced, doc=p.doc)
    try:
        fast, _ = run_gemm("gemm_dawn", "nvidia-h200")
        assert {"coop_fast.load", "coop_fast.store", "mma_fast.frag_mma"} <= set(calls)
        calls.clear()
        tr = Tracer(sink=MemorySink(), selection=Selection.parse())
        traced, _ = run_gemm("gemm_dawn", "nvidia-h200", tr)
        assert set(calls) == {"mma_fast.frag_mma"}          # the only one declared traced
        np.testing.assert_array_equal(fast.view(np.uint32), traced.view(np.uint32))
        fastpaths._PATHS.clear()                            # the reference executor alone
        ref, _ = run_gemm("gemm_dawn", "nvidia-h200")
        np.testing.assert_array_equal(fast.view(np.uint32), ref.view(np.uint32))
    finally:
        fastpaths._PATHS.clear()
        fastpaths._PATHS.update(saved)
