"""Errors for people: each bad shader, bad host input or undefined behaviour ends in one EmuError
with the exact file:line:col and the key words; through the CLI, exit status 1 and one message on
stderr without a Python traceback (exit 2 for bad command-line use)."""
from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]

VEC = """@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> c: array<f32>;

@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    c[gid.x] = a[gid.x + 3u];
}
"""


def compile_error(src: str, file: str = "bad.wgsl") -> emu.EmuError:
    with pytest.raises(emu.EmuError) as ei:
        emu.Device().create_shader_module(src, file)
    return ei.value


def where(e: emu.EmuError) -> tuple:
    return (e.loc.file, e.loc.line, e.loc.col)


# -- shader errors (line, column, key words) -------------------------------------------------------

MAIN = "@compute @workgroup_size(1)\nfn main() {\n"

COMPILE_ERRORS = [
    ("syntax", "fn main( {", (1, 10), ["expected", "'{'"]),
    ("unknown name", MAIN + "    let x = y + 1;\n}", (3, 13), ["unknown name 'y'"]),
    ("type mismatch", MAIN + "    let x = 1u + 2i;\n}", (3, 13), ["no operator '+'", "u32", "i32"]),
    ("wrong arg count (user fn)", "fn f(a: i32) -> i32 { return a; }\n" + MAIN + "    let x = f(1, 2);\n}",
     (4, 13), ["'f' takes 1 arguments, not 2"]),
    ("wrong arg count (builtin)", MAIN + "    let x = abs(1.0, 2.0);\n}", (3, 13), ["abs takes 1 argument, not 2"]),
    ("assignment to let", MAIN + "    let x = 1;\n    x = 2;\n}", (4, 5), ["cannot assign to 'x'", "let"]),
    ("read-only storage write", "@group(0) @binding(0) var<storage, read> a: array<f32>;\n" + MAIN +
     "    a[0] = 1.0;\n}", (4, 5), ["read-only", "storage"]),
    ("read-only through a pointer", "@group(0) @binding(0) var<storage, read> a: array<i32>;\n"
     "fn w(p: ptr<storage, i32, read_write>) { *p = 1; }\n" + MAIN + "    w(&a[0]);\n}", (5, 7),
     ["ptr<storage, i32, read_write>", "ptr<storage, i32, read>"]),
    ("missing @binding", "@group(0) var<storage, read> a: array<f32>;\n" + MAIN + "    _ = a[0];\n}", (1, 1),
     ["'a' needs @group and @binding"]),
    ("external texture", "@group(0) @binding(0) var t: texture_external;\n" + MAIN + "}", (1, 30), ["not supported"]),
    ("override without a value sizing an array", "override N: u32;\nvar<private> a: array<f32, N>;\n" + MAIN
     + "    a[0] = 1.0;\n}", (2, 28), ["override 'N' has no default and was not set"]),
    ("recursion", "fn f(x: i32) -> i32 { return f(x); }\n" + MAIN + "    _ = f(1);\n}", (1, 30), ["itself"]),
    ("constant index out of bounds", MAIN + "    var a: array<i32, 4>;\n    a[4] = 1;\n}", (4, 7), ["index 4", "out of bounds"]),
    ("shift too far in a constant", MAIN + "    let x = 1u << 32u;\n}", (3, 13), ["shift", "32"]),
    ("constant overflow", MAIN + "    let x = 2147483647i + 1i;\n}", (3, 13), ["overflow"]),
    ("missing return", "fn f(x: i32) -> i32 {\n    if (x > 0) { return 1; }\n}\n" + MAIN + "    _ = f(1);\n}", (1, 1),
     ["must return"]),
    ("break outside loop", MAIN + "    break;\n}", (3, 5), ["break outside"]),
    ("mixed shifts", MAIN + "    let x = 1 << 2 >> 1;\n}", (3, 20), ["'<<' and '>>'"]),
]


@pytest.mark.parametrize("what,src,pos,words", COMPILE_ERRORS, ids=[c[0] for c in COMPILE_ERRORS])
def test_compile_error(what, src, pos, words):
    e = compile_error(src)
    assert where(e) == ("bad.wgsl", *pos), e.format()
    for w in words:
        assert w in e.message, (w, e.message)


# -- run-time errors --------------------------------------------------------------------------------

def _dispatch(src, bindings, groups=(1, 1, 1), **dev_args):
    dev = emu.Device(**dev_args)
    p = dev.create_compute_pipeline(dev.create_shader_module(src, "rt.wgsl"))
    bufs = {k: dev.create_buffer(v) if isinstance(v, np.ndarray) else dev.create_buffer(size=v)
            for k, v in bindings.items()}
    dev.dispatch(p, bufs, groups)
    return bufs


def test_out_of_bounds_names_buffer_index_lane_and_place():
    a = np.arange(8, dtype=np.float32)
    with pytest.raises(emu.EmuError) as ei:
        _dispatch(VEC, {(0, 0): a, (0, 1): 32}, (2, 1, 1), bounds="strict")
    e = ei.value
    assert where(e) == ("rt.wgsl", 6, 16)
    assert "index 8" in e.message and "8 elements" in e.message and "buffer 'a'" in e.message
    assert "workgroup (1, 0, 0)" in e.where and "lane 1" in e.where
    assert 'Device(..., bounds="strict")' in e.hint and "--" not in e.hint   # the Python API's hint; the CLI's names --bounds


def test_out_of_bounds_robust_clamps():
    a = np.arange(8, dtype=np.float32)
    out = _dispatch(VEC, {(0, 0): a, (0, 1): 32}, (2, 1, 1), bounds="webgpu")[(0, 1)]
    np.testing.assert_array_equal(out.read(np.float32), [3, 4, 5, 6, 7, 7, 7, 7])


@pytest.mark.parametrize("body,pos,what", [
    ("var loc = array<u32, 3>(1u, 2u, 3u);\n    tile[li] = loc[li * 2u];", (7, 16), "function variable 'loc'"),
    ("let loc = array<u32, 3>(1u, 2u, 3u);\n    tile[li] = loc[li * 2u];", (7, 16), "'loc'"),
    ("tile[li * 2u] = 1u;", (6, 5), "var<workgroup> 'tile'"),
    ("pv[li] = 1u;", (6, 5), "var<private> 'pv'"),
])
def test_out_of_bounds_in_local_memory(body, pos, what):
    src = ("@group(0) @binding(0) var<storage, read_write> c: array<u32>;\n"
           "var<workgroup> tile: array<u32, 4>;\nvar<private> pv: array<u32, 3>;\n"
           "@compute @workgroup_size(4)\nfn main(@builtin(local_invocation_index) li: u32) {\n"
           f"    {body}\n    c[li] = tile[li];\n}}\n")
    with pytest.raises(emu.EmuError) as ei:
        _dispatch(src, {(0, 0): 64}, bounds="strict")
    assert where(ei.value) == ("rt.wgsl", *pos) and what in ei.value.message, ei.value.format()


BARRIER = """@group(0) @binding(0) var<storage, read_write> c: array<u32>;

@compute @workgroup_size(8)
fn main(@builtin(local_invocation_index) li: u32) {
    if (li < 3u) {
        workgroupBarrier();
    }
    c[li] = li;
}
"""


def test_non_uniform_barrier():
    with pytest.raises(emu.EmuError) as ei:
        _dispatch(BARRIER, {(0, 0): 32})
    e = ei.value
    assert where(e) == ("rt.wgsl", 6, 9)
    assert "workgroupBarrier" in e.message and "non-uniform" in e.message
    assert "lane 3" in e.where


HANG = """@group(0) @binding(0) var<storage, read_write> c: array<u32>;

@compute @workgroup_size(1)
fn main() {
    var i = 0u;
    loop {
        i += c[0];
    }
}
"""


def test_runaway_loop_hits_max_steps():
    with pytest.raises(emu.EmuError) as ei:
        _dispatch(HANG, {(0, 0): 8}, max_steps=1000)
    assert ei.value.loc.file == "rt.wgsl" and ei.value.loc.line in (6, 7)
    assert "step limit (1000" in ei.value.message and "Device(..., max_steps=N)" in ei.value.hint


def test_missing_buffer_binding():
    with pytest.raises(emu.EmuError) as ei:
        _dispatch(VEC, {(0, 1): 32})
    e = ei.value
    assert where(e) == ("rt.wgsl", 1, 1)
    assert "'a'" in e.message and "@group(0) @binding(0)" in e.message and "no buffer" in e.message


def test_too_small_buffer():
    src = ("@group(0) @binding(0) var<storage, read_write> c: array<u32, 4>;\n"
           "@compute @workgroup_size(1)\nfn main() { c[0] = 1u; }\n")
    with pytest.raises(emu.EmuError) as ei:
        _dispatch(src, {(0, 0): 8})
    assert where(ei.value) == ("rt.wgsl", 1, 1)
    assert "8 bytes" in ei.value.message and "at least 16" in ei.value.message


OVR = """override N: u32;
@group(0) @binding(0) var<storage, read_write> c: array<u32, 4>;
@compute @workgroup_size(1)
fn main() { c[0] = N; }
"""


@pytest.mark.parametrize("constants,words", [
    ({"M": 1, "N": 1}, ["no override named 'M'", "it has: N"]),
    ({"N": "abc"}, ["override 'N'", "'abc'", "u32"]),
    ({"N": -1}, ["-1 does not fit in u32"]),
    ({}, ["override 'N' has no default"]),
])
def test_bad_override(constants, words):
    dev = emu.Device()
    m = dev.create_shader_module(OVR, "o.wgsl")
    with pytest.raises(emu.EmuError) as ei:
        dev.create_compute_pipeline(m, constants=constants)
    for w in words:
        assert w in ei.value.message
    if not constants:
        assert where(ei.value) == ("o.wgsl", 1, 1)


# -- the command line -------------------------------------------------------------------------------

def cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli_main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path):
    (tmp_path / "vec.wgsl").write_text(VEC)
    (tmp_path / "barrier.wgsl").write_text(BARRIER)
    (tmp_path / "hang.wgsl").write_text(HANG)
    (tmp_path / "ovr.wgsl").write_text(OVR)
    (tmp_path / "syntax.wgsl").write_text("fn main( {")
    np.save(tmp_path / "a.npy", np.arange(8, dtype=np.float32))
    np.save(tmp_path / "c.npy", np.zeros(8, np.float32))
    np.save(tmp_path / "small.npy", np.zeros(2, np.uint32))
    return tmp_path


def _one_error(err: str, loc: str | None, *words):
    assert "Traceback" not in err
    first = err.splitlines()[0]
    assert first.count("error:") == 1 and err.count("error:") == 1, err
    if loc is not None:
        assert first.startswith(f"{loc}: error: "), err
    for w in words:
        assert w in err, (w, err)


def test_cli_errors(files):
    t = files
    vec = t / "vec.wgsl"
    rc, _, err = cli(["run", t / "syntax.wgsl", "--dispatch", 1])
    assert rc == 1
    _one_error(err, f"{t}/syntax.wgsl:1:10", "expected")
    rc, _, err = cli(["run", vec, "--dispatch", 2, "--buffer", f"0:0={t}/a.npy", "--buffer", f"0:1={t}/c.npy",
                      "--bounds", "strict"])
    assert rc == 1
    _one_error(err, f"{vec}:6:16", "index 8", "buffer 'a'", "workgroup (1, 0, 0)", "lane 1")
    # by default the run goes on as WebGPU's (clamped) and the site is reported once
    rc, _, err = cli(["run", vec, "--dispatch", 2, "--buffer", f"0:0={t}/a.npy", "--buffer", f"0:1={t}/c.npy",
                      "--output", f"0:1={t}/o.npy"])
    assert rc == 0 and err.count("warning:") == 1 and "Traceback" not in err
    assert f"{vec}:6:16: warning: out-of-bounds index into buffer 'a' (@group(0) @binding(0)) (8 elements): " \
           f"3 accesses out of bounds" in err
    assert "first in workgroup (1, 0, 0), subgroup 0, lane 1" in err
    np.testing.assert_array_equal(np.load(t / "o.npy"), [3, 4, 5, 6, 7, 7, 7, 7])
    rc, _, err = cli(["run", t / "barrier.wgsl", "--dispatch", 1, "--buffer", f"0:0={t}/small.npy",
                      "--output", f"0:0={t}/o.npy"])
    assert rc == 1
    # the static check (Tint's reason) comes first, then the run's error
    static, run = err.split(f"\n{t}/barrier.wgsl:6:9: error: ")
    assert static.startswith(f"{t}/barrier.wgsl:6:9: warning: 'workgroupBarrier' must only be called from "
                             f"uniform control flow: Tint (Dawn, Chrome) rejects this shader"), err
    assert f"note: {t}/barrier.wgsl:5:9: builtin 'li' of 'main' may be non-uniform" in static
    _one_error(f"{t}/barrier.wgsl:6:9: error: " + run, f"{t}/barrier.wgsl:6:9", "non-uniform")
    rc, _, err = cli(["run", t / "hang.wgsl", "--dispatch", 1, "--buffer", f"0:0={t}/small.npy", "--max-steps", 500])
    assert rc == 1
    _one_error(err, None, "step limit (500")
    rc, _, err = cli(["run", vec, "--dispatch", 1, "--buffer", f"0:1={t}/c.npy", "--output", f"0:1={t}/o.npy"])
    assert rc == 1
    _one_error(err, f"{vec}:1:1", "no buffer is bound")
    rc, _, err = cli(["run", t / "ovr.wgsl", "--dispatch", 1, "--buffer", f"0:0={t}/small.npy", "--override", "N=3"])
    assert rc == 1
    _one_error(err, f"{t}/ovr.wgsl:2:1", "8 bytes")
    for bad, word in [("M=1", "no override named 'M'"), ("N=abc", "cannot read 'abc'"), ("N=-1", "does not fit")]:
        rc, _, err = cli(["run", t / "ovr.wgsl", "--dispatch", 1, "--override", bad])
        assert rc == 1
        _one_error(err, None, word)
    rc, _, err = cli(["run", t / "ovr.wgsl", "--dispatch", 1, "--output", f"0:0={t}/o.npy"])
    assert rc == 1
    _one_error(err, f"{t}/ovr.wgsl:1:1", "no default")


@pytest.mark.parametrize("argv", [
    ["run", "x.wgsl"],                                   # --dispatch missing
    ["run", "x.wgsl", "--dispatch", "x"],
    ["run", "x.wgsl", "--dispatch", "1", "--override", "N1"],
    ["run", "x.wgsl", "--dispatch", "1", "--buffer", "00=a.npy"],
    ["frobnicate"],
])
def test_cli_usage_errors_exit_2(argv):
    rc, _, err = cli(argv)
    assert rc == 2 and "Traceback" not in err and "error" in err


def test_cli_real_process_no_traceback(files):
    """The installed entry point: exit 1, one message, nothing from Python itself."""
    t = files
    r = subprocess.run([sys.executable, "-m", "emu", "run", str(t / "vec.wgsl"), "--dispatch", "2",
                        "--buffer", f"0:0={t}/a.npy", "--buffer", f"0:1={t}/c.npy", "--bounds", "strict"],
                       capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 1 and r.stdout == ""
    _one_error(r.stderr, f"{t}/vec.wgsl:6:16", "out of bounds")
    r = subprocess.run([sys.executable, "-m", "emu", "run", str(t / "vec.wgsl")], capture_output=True,
                       text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr
