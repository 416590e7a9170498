"""`emu run` and `emu ir` on the shaders of tests/shaders (in process, exit status and files)."""
from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np

from emu.cli import main

SHADERS = Path(__file__).resolve().parents[1] / "shaders"


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


def test_run_vecadd(tmp_path):
    a = np.arange(100, dtype=np.float32)
    b = np.full(100, 0.5, np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    np.save(tmp_path / "c.npy", np.zeros(100, np.float32))
    rc, out, err = cli("run", SHADERS / "vecadd.wgsl", "--dispatch", "2", "--buffer", f"0:0={tmp_path}/a.npy",
                       "--buffer", f"0:1={tmp_path}/b.npy", "--buffer", f"0:2={tmp_path}/c.npy",
                       "--output", f"0:2={tmp_path}/out.npy")
    assert (rc, out) == (0, "") and err.startswith("emu: ran 'main' on reference, dispatch 2x1x1 (2 workgroups) in ")
    assert err.endswith(f"; wrote {tmp_path}/out.npy (100,) float32\n") and err.count("\n") == 1
    got = np.load(tmp_path / "out.npy")
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, a + b)


def test_run_with_overrides_and_subgroup_size(tmp_path):
    np.save(tmp_path / "z.npy", np.zeros(32, np.uint32))
    rc, _, err = cli("run", SHADERS / "consts_overrides.wgsl", "--dispatch", "1", "--override", "COUNT=2",
                     "--override", "7=5", "--override", "SCALE=0.25", "--subgroup-size", "8",
                     "--buffer", f"0:0={tmp_path}/z.npy", "--output", f"0:0={tmp_path}/o.npy")
    assert rc == 0, err
    got = np.load(tmp_path / "o.npy").reshape(2, 16)
    assert got.dtype == np.uint32
    assert got[:, 3].tolist() == [4, 4]                      # NEG_MOD + OFFSET (set by @id 7)
    assert got[:, 8].tolist() == [2, 2] and got[:, 9].tolist() == [4, 4]
    assert got[1, 7] == 0xFFFFFFFF - 1
    assert got[0, 2] == np.array(np.float32(3.5) * np.float32(0.25)).view(np.uint32)


def test_run_subgroups_cli(tmp_path):
    v = np.arange(256, dtype=np.int32) - 128
    np.save(tmp_path / "v.npy", v)
    np.save(tmp_path / "o.npy", np.zeros(256 * 32, np.uint32))
    rc, _, err = cli("run", SHADERS / "subgroups.wgsl", "--dispatch", "2", "--subgroup-size", "16",
                     "--buffer", f"0:0={tmp_path}/v.npy", "--buffer", f"0:1={tmp_path}/o.npy",
                     "--output", f"0:1={tmp_path}/out.npy")
    assert rc == 0, err
    got = np.load(tmp_path / "out.npy").reshape(256, 32)
    assert (got[:, 24] == 16).all()                                    # subgroup_size
    np.testing.assert_array_equal(got[:, 23], np.arange(256) % 16)      # subgroup_invocation_id
    sums = v.reshape(-1, 16).sum(axis=1).astype(np.int64) & 0xFFFFFFFF
    np.testing.assert_array_equal(got[:, 0], np.repeat(sums, 16))


def test_ir_prints_the_module():
    rc, out, err = cli("ir", SHADERS / "vecadd.wgsl", "--no-locs")
    assert rc == 0 and err == ""
    assert out.startswith("module ") and "array_length" in out and "; " not in out


def test_ir_of_an_override_without_a_value(tmp_path):
    # naga's overrides input: an override with no default that a private initializer and another
    # override's default use; WGSL leaves it to the pipeline, emu ir prints a placeholder and says so
    (tmp_path / "o.wgsl").write_text("""override gain: f32;
override twice = 2 * gain;
var<private> g: f32 = gain * 10.0;
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(1)
fn main() {
  o[0] = g + twice;
}
""")
    rc, out, err = cli("ir", tmp_path / "o.wgsl", "--no-locs")
    assert rc == 0 and out.startswith("module ")
    assert "override @gain : f32\n" in out and "override @twice : f32 = 0x1.0000000000000p+1\n" in out
    assert err.splitlines()[0] == (
        f"{tmp_path / 'o.wgsl'}:1:1: warning: override 'gain' has no value (a module-scope initializer or "
        "another override's default uses it, so the module is lowered with its overrides' values): this IR "
        "holds 1 in its place")
    assert "hint: give it one with --override gain=VALUE" in err
    rc, out, err = cli("ir", tmp_path / "o.wgsl", "--no-locs", "--override", "gain=3")
    assert rc == 0 and err == "" and "override @twice : f32 = 0x1.8000000000000p+2\n" in out


def test_strict_warns_on_stderr_but_succeeds(tmp_path):
    src = (SHADERS / "subgroups.wgsl").read_text().replace("enable subgroups;", "")
    (tmp_path / "s.wgsl").write_text(src)
    rc, out, err = cli("ir", tmp_path / "s.wgsl", "--strict")
    assert rc == 0 and out.startswith("module ")
    assert "warning:" in err and "enable subgroups" in err and "Traceback" not in err


def test_run_says_one_line_on_success_and_reshapes_a_runtime_sized_output(tmp_path, monkeypatch, naive_gemm):
    """Was: nothing on success, and a runtime-sized output came back (4096,). A new kernel (an
    empty cache) of 16 workgroups runs interpreted (emu/jit/tier.py), and the line says so."""
    monkeypatch.setenv("EMU_JIT_CACHE", str(tmp_path / "jit"))
    monkeypatch.delenv("EMU_JIT", raising=False)
    rc, out, err = cli(*naive_gemm(64, 3), "--output", f"0:2={tmp_path}/c.npy:64x64", "--output",
                       f"0:0={tmp_path}/flat.npy")
    assert rc == 0 and out == ""
    head, tail = err.split(" in ")
    assert head == "emu: ran 'main' on reference, dispatch 4x4x1 (16 workgroups)"
    seconds, rest = tail.split(" s, ", 1)
    assert float(seconds) > 0
    assert rest == (f"interpreted; wrote {tmp_path}/c.npy (64, 64) float32, {tmp_path}/flat.npy (4096,) float32\n")
    c = np.load(tmp_path / "c.npy")
    a, b = np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy")
    assert c.shape == (64, 64) and np.allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    assert np.array_equal(np.load(tmp_path / "flat.npy"), a.reshape(-1))
    rc, out, err = cli(*naive_gemm(64, 3), "-q", "--output", f"0:2={tmp_path}/q.npy:4x1024")
    assert (rc, out, err) == (0, "", "")
    assert np.load(tmp_path / "q.npy").shape == (4, 1024)
    rc, out, err = cli(*naive_gemm(64, 3), "--quiet")
    assert (rc, out, err) == (0, "", "")
    rc, out, err = cli(*naive_gemm(64, 3))
    assert err.endswith(" s, interpreted; no --output\n")


def test_an_output_shape_that_does_not_hold_the_binding_is_refused_before_the_run(tmp_path, naive_gemm):
    rc, out, err = cli(*naive_gemm(64, 3), "--output", f"0:2={tmp_path}/c.npy:64x32")
    assert rc == 1 and out == ""
    assert err == (f"emu: error: --output 0:2={tmp_path}/c.npy:64x32: the binding holds 4096 float32 elements "
                   f"(shape 4096), not the 2048 of 64x32\n"
                   f"   hint: give a shape of 4096 elements, e.g. :4096, or bind a buffer of 2048 elements "
                   f"with --buffer\n")
    assert not (tmp_path / "c.npy").exists()
