"""Cold start: the line printed while kernels compile, `emu warmup`, and the demo compiling one
MMA kernel (its check runs on the kernel the device uses, through mma_fast.matrix_mma)."""
import io
import time

import numpy as np
from numba.core import event

from emu import demo
from emu.jit import notice
from emu.numerics import mma as M
from emu.numerics import mma_fast as F


def test_notice_after_a_second_of_compiling(monkeypatch, capsys):
    n = notice._Notice()
    monkeypatch.setattr(notice, "DELAY_S", 0.05)
    n.profile = "nvidia-h200"
    n.on_start(None)            # a compile starts ...
    n.on_start(None)            # ... and compiles a callee
    n.on_end(None)
    time.sleep(0.5)
    n.on_end(None)
    n.on_start(None)            # once per process
    time.sleep(0.2)
    n.on_end(None)
    assert capsys.readouterr().err == "compiling kernels for nvidia-h200 (first run only)...\n"


def test_no_notice_for_a_short_compile(monkeypatch, capsys):
    n = notice._Notice()
    monkeypatch.setattr(notice, "DELAY_S", 0.3)
    n.on_start(None)
    n.on_end(None)
    time.sleep(0.5)
    assert capsys.readouterr().err == ""
    assert not n.said


def test_warmup_then_demo_compiles_nothing():
    out = io.StringIO()
    assert demo.warmup("nvidia-h200", out=out) == 0
    assert out.getvalue().startswith("warmup: kernels for 'nvidia-h200' ready (5 operand type combinations)")
    with event.install_recorder("numba:compile") as rec:
        text = io.StringIO()
        assert demo.run_demo("nvidia-h200", 64, out=text) == 0      # interpreted
        assert demo.run_demo("nvidia-h200", 256, out=text) == 0     # compiled whole
    assert text.getvalue().count("bits equal to the device's matrix-unit model: yes") == 4
    assert rec.buffer == []


def test_fast_mma_same_bits_as_reference_kernel():
    rng = np.random.default_rng(7)
    a = rng.uniform(-2, 2, (6, 16, 32)).astype(np.float16)
    b = rng.uniform(-2, 2, (6, 32, 16)).astype(np.float16)
    for ct in (np.float16, np.float32):
        c = rng.uniform(-2, 2, (6, 16, 16)).astype(ct)
        rt = "f16" if ct == np.float16 else "f32"
        want = M.mma("nvidia-hopper", a, b, c, rt)
        got = F.matrix_mma("nvidia-hopper", a, b, c, rt)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.view(np.uint16 if rt == "f16" else np.uint32),
                                      want.view(np.uint16 if rt == "f16" else np.uint32))
    assert F.matrix_mma("nvidia-hopper", a.astype(np.int8), b.astype(np.int8),
                        np.zeros((6, 16, 16), np.int32), "i32") is None
