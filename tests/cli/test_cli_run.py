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
    assert (rc, out, err) == (0, "", "")
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
