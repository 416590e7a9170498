"""What the fuzzer feeds: each target takes one input and returns how it ended, "ok" or "error"
(an EmuError: one message for a person). Anything else it raises is a finding (a traceback)."""
from __future__ import annotations

import os
import tempfile

import numpy as np

from emu.errors import EmuError

MAX_STEPS = 20_000          # a mutant that loops is stopped by the step limit, not by the fuzzer


def wgsl(text: str, run: bool = True) -> str:
    """Compile a WGSL mutant; if it compiles, print and re-parse its IR and run one workgroup."""
    from emu.frontend.wgsl import compile_source
    try:
        module, _ = compile_source(text, "fuzz.wgsl")
    except EmuError:
        return "error"
    _roundtrip(module)
    return _run(module) if run else "ok"


def ir(text: str, run: bool = True) -> str:
    """Parse, verify and print again an IR-text mutant (and run it, with `run`)."""
    from emu.isa.textparser import parse_ir
    try:
        module = parse_ir(text, "fuzz.ir")
        _device()._for_device(module)
    except EmuError:
        return "error"
    _roundtrip(module)
    return _run(module) if run else "ok"


def _roundtrip(module) -> None:
    """The printer writes only what the IR parser reads back, the same."""
    from emu.isa.printer import print_module
    from emu.isa.textparser import parse_ir
    text = print_module(module)
    again = print_module(parse_ir(text, "fuzz.ir"))
    if again != text:
        raise AssertionError("IR text round trip differs")


_DEVICE = None


def _device():
    global _DEVICE
    if _DEVICE is None:
        import emu
        _DEVICE = emu.Device("reference", max_steps=MAX_STEPS)
    return _DEVICE


def _run(module) -> str:
    """Verify the module for the device and dispatch one workgroup of its first entry point with
    zeroed buffers of each binding's minimum size."""
    from emu.api import ShaderModule, bind, min_binding_size, used_globals
    dev = _device()
    try:
        dev._for_device(module)
        eps = module.entry_points()
        if not eps:
            return "ok"
        pipe = dev.create_compute_pipeline(ShaderModule(module, "", "fuzz.wgsl", []), eps[0].name)
        bufs = {}
        for g in used_globals(module, pipe.pipeline.entry):
            if g.space in ("storage", "uniform"):
                size = min_binding_size(g.type)
                if size > 1 << 20:
                    return "ok"                  # not worth allocating for a mutant
                bufs[(g.group, g.binding)] = dev.create_buffer(size=max(size, 4) * 2)
        # The interpreter: a numba compile per mutant is too slow. Set for this dispatch only, so
        # tests that run after the fuzz targets in the same process keep the JIT.
        before = os.environ.get("EMU_JIT")
        os.environ["EMU_JIT"] = "0"
        try:
            dev.dispatch(pipe, bufs, (1, 1, 1))
        finally:
            if before is None:
                del os.environ["EMU_JIT"]
            else:
                os.environ["EMU_JIT"] = before
    except EmuError:
        return "error"
    return "ok"


def npy(data: bytes) -> str:
    """Load a .npy mutant the way --buffer does."""
    from emu.memory.npy import load_npy
    fd, path = tempfile.mkstemp(suffix=".npy", prefix="emu-fuzz-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        try:
            arr, _ = load_npy(path, "--buffer 0:0")
        except EmuError:
            return "error"
        np.ascontiguousarray(arr).tobytes()      # what binding it does
        return "ok"
    finally:
        os.unlink(path)


def trace(text: str) -> str:
    """Read a trace mutant the way `emu explain` does and explain element (0, 0) and (1, 2), or
    (a trace of scalar arithmetic) the compiler decisions of its first events that carry one."""
    from emu.trace import explain_scalar
    from emu.trace.explain import Trace, explain_event, pick_event, render
    fd, path = tempfile.mkstemp(suffix=".jsonl", prefix="emu-fuzz-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(text)
        try:
            t = Trace.load(path)
            decided = [e for e in t.events if "decision" in e][:3]
            for ev in decided:
                for lane in (None, 1):
                    x = explain_scalar.explain_scalar(t, ev, lane)
                    explain_scalar.render(x, "text")
                    explain_scalar.render(x, "json")
            if decided and not t.mma_events():
                return "ok"
            ev = pick_event(t, None)
            for row, col in ((0, 0), (1, 2)):
                render(explain_event(t, ev, row, col), "text")
                render(explain_event(t, ev, row, col), "json")
        except EmuError:
            return "error"
        return "ok"
    finally:
        os.unlink(path)


TARGETS = {"wgsl": wgsl, "ir": ir, "npy": npy, "trace": trace}
