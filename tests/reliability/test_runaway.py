"""A kernel stuck in a loop ends with a message naming the loop and the invocations still in it;
the step limit is per invocation (so it does not grow with the dispatch) and counts the same in
the JIT; --timeout bounds the wall time; long runs print a progress note."""
from __future__ import annotations

import contextlib
import io
import time

import numpy as np
import pytest

import emu
from emu.cli import main
from emu.errors import EmuError

# invocation i loops i % 8 times; one iteration of this loop costs 10 steps
DIVERGENT = """@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  var k = 0u;
  loop {
    if (k == g.x % 8u) { break; }
    k = k + 1u;
  }
  o[g.x] = k;
}
"""
HUNG = """@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  var x = 0u;
  loop {
    if (o[g.x] == 7u) { break; }
    x += 1u;
  }
  o[g.x] = x;
}
"""


def dispatch(src, groups, jit, monkeypatch, **kw):
    monkeypatch.setenv("EMU_JIT", "1" if jit else "0")
    dev = emu.Device("reference", **kw)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "k.wgsl"))
    buf = dev.create_buffer(size=4 * 64 * groups)
    dev.dispatch(pipe, {(0, 0): buf}, (groups, 1, 1))
    return buf.read(np.uint32)


def cost():
    from emu.frontend.wgsl import compile_source
    from emu.scheduler.handlers import loop_cost
    m, _ = compile_source(DIVERGENT, "k.wgsl")
    return loop_cost(next(i for i in m.functions[0].walk() if i.op == "loop"))


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("groups", [1, 40])
def test_limit_is_per_invocation(monkeypatch, jit, groups):
    c = cost()
    # the longest invocation makes 8 iterations (7 and the one that breaks): 8 * cost steps
    out = dispatch(DIVERGENT, groups, jit, monkeypatch, max_steps=8 * c)
    assert out.tolist() == [i % 8 for i in range(64 * groups)]
    with pytest.raises(EmuError) as e:
        dispatch(DIVERGENT, groups, jit, monkeypatch, max_steps=8 * c - 1)
    msg = str(e.value)
    assert msg.startswith(f"k.wgsl:5:3: error: the step limit ({8 * c - 1} steps per invocation) was "
                          f"reached in this loop by {8 * groups} invocations")
    # the invocations still looping: those with g.x % 8 == 7, the first of them lane 7
    assert f"{8 * groups} invocations are still in it: workgroup (0, 0, 0), subgroup 0, lane 7" in msg


def test_hung_loop_ends_with_the_loop_and_lanes(monkeypatch):
    t0 = time.monotonic()
    with pytest.raises(EmuError) as e:
        dispatch(HUNG, 2, False, monkeypatch, max_steps=20_000)
    assert time.monotonic() - t0 < 30
    assert str(e.value).startswith("k.wgsl:5:3: error: the step limit (20000 steps per invocation) was "
                                   "reached in this loop by 128 invocations: probably a loop that never ends")
    assert "Device(..., max_steps=N)" in e.value.hint       # the Python API's words for --max-steps


def test_default_limit():
    assert emu.Device("reference").options.max_steps == 1_000_000


def test_timeout_stops_the_run(monkeypatch):
    t0 = time.monotonic()
    with pytest.raises(EmuError) as e:
        dispatch(HUNG, 1, False, monkeypatch, timeout=0.5)
    assert time.monotonic() - t0 < 20
    assert str(e.value).startswith("k.wgsl:5:3: error: the dispatch ran longer than --timeout 0.5 seconds "
                                   "(stopped in this loop); 64 invocations are still in it")


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("flag,value,message", [
    ("--max-steps", "-5", "--max-steps -5: must be a positive number of steps"),
    ("--max-steps", "0", "--max-steps 0: must be a positive number of steps"),
    ("--timeout", "-1", "--timeout -1.0: must be a positive number of seconds"),
])
def test_bad_limits_refused(tmp_path, flag, value, message):
    (tmp_path / "k.wgsl").write_text(HUNG)
    np.save(tmp_path / "o.npy", np.zeros(64, np.uint32))
    rc, _, err = cli("run", tmp_path / "k.wgsl", "--dispatch", "1", "--buffer", f"0:0={tmp_path}/o.npy",
                     flag, value)
    assert rc == 1 and err.splitlines()[0] == f"emu: error: {message}"


def test_progress_note(tmp_path, monkeypatch):
    from emu.scheduler import executor
    monkeypatch.setattr(executor.Clock, "FIRST", 0.0)
    monkeypatch.setattr(executor.Clock, "EVERY", 0.0)
    monkeypatch.setenv("EMU_PROGRESS", "1")
    monkeypatch.setenv("EMU_JIT", "0")
    (tmp_path / "k.wgsl").write_text(HUNG)
    np.save(tmp_path / "o.npy", np.zeros(64, np.uint32))
    rc, _, err = cli("run", tmp_path / "k.wgsl", "--dispatch", "1", "--buffer", f"0:0={tmp_path}/o.npy",
                     "--max-steps", "20000")
    assert rc == 1
    notes = err.splitlines()
    assert notes[0] == "emu: running for 0 s: workgroups 0..0 of 1"
    assert notes[1] == f"emu: running for 0 s: workgroups 0..0 of 1, in the loop at {tmp_path}/k.wgsl:5:3"
    assert "error: the step limit" in err
