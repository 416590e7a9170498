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


def test_warmup_runs_the_mixed_sign_configs(monkeypatch):
    """amd-rdna3 lists i8 x u8 configs (was: 'a and b must share a dtype', exit 1; then skipped);
    warmup now runs them on the integer kernel like the others. The GEMMs and kernels are recorded
    here, not compiled."""
    calls = []
    monkeypatch.setattr(demo, "run_demo", lambda profile, size, out: calls.append(size) or 0)
    for name in ("mma", "matrix_mma"):
        monkeypatch.setattr(demo, name, lambda model, a, b, c, rt, saturate=False:
                            calls.append((str(a.dtype), str(b.dtype), str(c.dtype), rt, saturate)))
    from emu.numerics import mma_call
    monkeypatch.setattr(mma_call, "address", lambda *bits: None)
    out = io.StringIO()
    assert demo.warmup("amd-rdna3", out=out) == 0
    assert out.getvalue().startswith("warmup: kernels for 'amd-rdna3' ready (15 operand type combinations)")
    assert calls[:2] == [32, 128]
    assert ("int8", "uint8", "int32", "i32", False) in calls and ("uint8", "int8", "int32", "i32", True) in calls
    assert ("int8", "int8", "int32", "i32", True) in calls and ("uint8", "uint8", "uint32", "u32", False) in calls


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


def test_a_run_without_bf16_does_not_import_ml_dtypes():
    """ml_dtypes (bfloat16) takes ~0.5 s to import and jsonschema ~0.1 s: a run through the command
    line's parser that uses no bf16 and checks no trace leaves both unloaded, and bf16 still works
    once asked for."""
    import subprocess
    import sys
    code = """
import sys
import numpy as np
import emu
import emu.cli
from emu.numerics import dtypes, mma
emu.cli.build_parser()
dev = emu.Device("nvidia-h200")
src = "@group(0) @binding(0) var<storage, read_write> x: array<f32>; @compute @workgroup_size(4) fn main(@builtin(global_invocation_id) i: vec3<u32>) { x[i.x] = x[i.x] * 2.0; }"
p = dev.create_compute_pipeline(dev.create_shader_module(src, "t.wgsl"))
b = dev.create_buffer(np.arange(4, dtype=np.float32))
dev.dispatch(p, {(0, 0): b}, (1, 1, 1))
assert b.read(np.float32).tolist() == [0.0, 2.0, 4.0, 6.0]
assert "ml_dtypes" not in sys.modules and "jsonschema" not in sys.modules
assert "bf16" in dtypes.NP and dtypes.NP.get("bf16").name == "bfloat16" and "ml_dtypes" in sys.modules
assert mma.FLOAT_DTYPES[dtypes.NP["bf16"]] == "bf16" and np.dtype(np.int8) not in mma.FLOAT_DTYPES
assert {**dtypes.NP}["bf16"] == dtypes.NP["bf16"] and len(dtypes.NP) == len(dtypes.NAMES) == len(list(dtypes.NP))
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.strip() == "ok", r.stderr
