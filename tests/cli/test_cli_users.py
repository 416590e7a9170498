"""The command as a new user meets it: --version, bundled examples, stdin, @NAME kernels."""
from __future__ import annotations

import contextlib
import io
import json
import sys

import numpy as np
import pytest

import emu
from emu.cli import main


def cli(*argv, stdin: str | None = None):
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin
    if stdin is not None:
        sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main([str(a) for a in argv])
            except SystemExit as e:          # argparse's --version
                rc = e.code
    finally:
        sys.stdin = old
    return rc, out.getvalue(), err.getvalue()


def test_version():
    rc, out, _ = cli("--version")
    assert (rc, out) == (0, f"emu {emu.__version__}\n")


def test_examples_lists_kernels_host_programs_and_docs():
    rc, out, err = cli("examples")
    assert rc == 0 and err == ""
    names = [line.split()[0] for line in out.splitlines() if line and not line.startswith("run ")]
    assert names == ["gemm_dawn.wgsl", "gemm_wgpu.wgsl", "wgpu_host/bind_groups.py", "wgpu_host/gemm_dawn.py",
                     "wgpu_host/immediates.py", "wgpu_host/indirect.py", "wgpu_host/storage_uniform.py", "wgpu_host/README.md", "docs/trace-schema.md",
                     "docs/emu-trace.schema.json", "docs/profiles.md"]
    assert "Tiled GEMM on the matrix units, Dawn's dialect" in out


def test_examples_copy_then_clash(tmp_path):
    rc, out, _ = cli("examples", "--copy", tmp_path)
    assert rc == 0 and out.startswith(f"copied 11 files into {tmp_path}")
    assert (tmp_path / "gemm_dawn.wgsl").read_text().startswith("// Tiled GEMM")
    assert "emu-trace/1" in (tmp_path / "docs" / "trace-schema.md").read_text()
    assert json.loads((tmp_path / "docs" / "emu-trace.schema.json").read_text())["$defs"]["header"]
    assert cli("examples", "--copy", tmp_path)[0] == 0           # the same files again: fine
    (tmp_path / "gemm_wgpu.wgsl").write_text("// mine\n")
    rc, _, err = cli("examples", "--copy", tmp_path)
    assert rc == 1 and "1 file(s) there differ from the bundled ones (gemm_wgpu.wgsl)" in err
    assert "--force" in err and "Traceback" not in err
    assert (tmp_path / "gemm_wgpu.wgsl").read_text() == "// mine\n"
    assert cli("examples", "--copy", tmp_path, "--force")[0] == 0
    assert (tmp_path / "gemm_wgpu.wgsl").read_text().startswith("// Tiled GEMM")


def test_examples_copy_onto_a_file_is_one_message(tmp_path):
    """(was: an internal error, FileExistsError)"""
    (tmp_path / "k.wgsl").write_text("// mine\n")
    rc, out, err = cli("examples", "--copy", tmp_path / "k.wgsl")
    assert (rc, out) == (1, "") and err == (f"emu: error: {tmp_path / 'k.wgsl'}: not a folder\n"
                                             "   hint: give a folder to copy the examples into (made if missing)\n")
    (tmp_path / "d" / "gemm_dawn.wgsl").mkdir(parents=True)      # a folder where a kernel goes
    rc, _, err = cli("examples", "--copy", tmp_path / "d", "--force")
    assert rc == 1 and err.startswith(f"emu: error: cannot write {tmp_path / 'd' / 'gemm_dawn.wgsl'}: Is a directory")


def test_bundled_kernel_by_name_and_unknown_name():
    rc, out, _ = cli("ir", "@gemm_dawn")
    assert rc == 0 and out.startswith('module "@gemm_dawn"')
    rc, _, err = cli("ir", "@gemm")
    assert rc == 1 and err.splitlines() == [
        "emu: error: there is no bundled kernel '@gemm'",
        "   hint: the bundled kernels are @gemm_dawn, @gemm_wgpu (see `emu examples`)"]


def test_stdin_shader_and_its_errors():
    rc, out, _ = cli("ir", "-", stdin="@compute @workgroup_size(1) fn main() {}\n")
    assert rc == 0 and out.startswith('module "<stdin>"')
    rc, _, err = cli("ir", "-", stdin="enable f16;\nfn x")
    assert rc == 1 and err.splitlines() == [
        "<stdin>:2:5: error: expected '(' after the function name, found end of file", "   fn x", "       ^"]


def test_run_bundled_kernel_from_stdin_equals_by_name(tmp_path):
    from emu.examples import kernel
    r = np.random.default_rng(0)
    for name in ("a", "b"):
        np.save(tmp_path / f"{name}.npy", r.standard_normal((32, 32)).astype(np.float16))
    common = ["--dispatch", "1,1", "--override", "M=32", "--override", "N=32", "--override", "K=32",
              "--buffer", f"0:0={tmp_path}/a.npy", "--buffer", f"0:1={tmp_path}/b.npy"]
    np.save(tmp_path / "z.npy", np.zeros((32, 32), np.float32))
    rc1, _, e1 = cli("run", "@gemm_dawn", *common, "--buffer", f"0:2={tmp_path}/z.npy", "--output", f"0:2={tmp_path}/c1.npy")
    rc2, _, e2 = cli("run", "-", *common, "--buffer", f"0:2={tmp_path}/z.npy", "--output", f"0:2={tmp_path}/c2.npy",
                     stdin=kernel("gemm_dawn").read_text())
    assert (rc1, rc2) == (0, 0), e1 + e2
    c1, c2 = np.load(tmp_path / "c1.npy"), np.load(tmp_path / "c2.npy")
    a, b = np.load(tmp_path / "a.npy").astype(np.float32), np.load(tmp_path / "b.npy").astype(np.float32)
    assert np.array_equal(c1.view(np.uint32), c2.view(np.uint32))
    np.testing.assert_allclose(c1.reshape(32, 32), a @ b, rtol=1e-5, atol=1e-4)


def test_cli_hints_name_flags_python_hints_name_the_api(tmp_path):
    """The same mistake, two audiences: the CLI's hint names its flag, the Python API's its argument."""
    shader = tmp_path / "two.wgsl"
    shader.write_text("@compute @workgroup_size(1) fn a() { }\n@compute @workgroup_size(1) fn b() { }\n")
    rc, _, err = cli("run", shader, "--dispatch", "1")
    assert rc == 1 and "hint: choose one with --entry NAME" in err
    import pytest
    dev = emu.Device()
    with pytest.raises(emu.EmuError) as ei:
        dev.create_compute_pipeline(dev.create_shader_module(shader.read_text(), str(shader)))
    assert ei.value.hint == "give create_compute_pipeline(..., entry_point=NAME)"


ADD_ID = ("@group(0) @binding(0) var<storage, read_write> out: array<u32>;\n"
          "@compute @workgroup_size(4) fn main(@builtin(global_invocation_id) id: vec3u) "
          "{ out[id.x] = out[id.x] + id.x * 3u; }\n")


def test_buffer_zeros_spec(tmp_path):
    shader = tmp_path / "add.wgsl"
    shader.write_text(ADD_ID)
    for spec in ("zeros:8:u32", "zeros:2x4:uint32"):
        rc, _, err = cli("run", "-q", shader, "--dispatch", "2", "--buffer", f"0:0={spec}", "--output",
                         f"0:0={tmp_path}/o.npy")
        assert (rc, err) == (0, ""), err
        out = np.load(tmp_path / "o.npy")
        assert out.dtype == np.uint32 and out.tolist() == [0, 3, 6, 9, 12, 15, 18, 21]


def test_buffer_zeros_bad_spec_is_one_line(tmp_path):
    shader = tmp_path / "add.wgsl"
    shader.write_text(ADD_ID)
    want = ("emu: error: --buffer 0:0={}: expected zeros:SHAPE:DTYPE with SHAPE like 64x64 and DTYPE one of "
            "f32 f16 i32 u32 (or a numpy name such as float32), e.g. zeros:64x64:f32")
    for spec in ("zeros:64x:f32", "zeros:8", "zeros:8:q7", "zeros:-1:f32", "zeros:8:f32:x"):
        for cmd in ("run", "diff"):
            rc, out, err = cli(cmd, shader, "--dispatch", "1", "--buffer", f"0:0={spec}")
            assert (rc, out, err.splitlines()) == (2, "", [want.format(spec)]), (cmd, spec, err)


def test_output_has_the_wgsl_shape(tmp_path):
    """array<array<f32, 4>, 3> is written as (3, 4); a runtime-sized array stays 1-D (above)."""
    shader = tmp_path / "grid.wgsl"
    shader.write_text("@group(0) @binding(0) var<storage, read_write> g: array<array<f32, 4>, 3>;\n"
                      "@group(0) @binding(1) var<storage, read_write> v: array<vec2<i32>, 3>;\n"
                      "@compute @workgroup_size(4, 3) fn main(@builtin(local_invocation_id) l: vec3u) {\n"
                      "  g[l.y][l.x] = f32(l.y * 10u + l.x);\n"
                      "  if (l.x == 0u) { v[l.y] = vec2<i32>(i32(l.y), -i32(l.y)); }\n}\n")
    rc, _, err = cli("run", "-q", shader, "--dispatch", "1", "--output", f"0:0={tmp_path}/g.npy",
                     "--output", f"0:1={tmp_path}/v.npy")
    assert (rc, err) == (0, ""), err
    g, v = np.load(tmp_path / "g.npy"), np.load(tmp_path / "v.npy")
    assert g.dtype == np.float32 and g.tolist() == [[0, 1, 2, 3], [10, 11, 12, 13], [20, 21, 22, 23]]
    assert v.dtype == np.int32 and v.tolist() == [[0, 0], [1, -1], [2, -2]]


def test_run_summary_line_with_emu_progress(tmp_path, monkeypatch):
    import re
    shader = tmp_path / "add.wgsl"
    shader.write_text(ADD_ID)
    args = ("run", shader, "--dispatch", "2", "--buffer", "0:0=zeros:8:u32", "--output", f"0:0={tmp_path}/o.npy")
    for progress in ("0", "1"):                     # on a terminal or not: the same line (-q: none)
        monkeypatch.setenv("EMU_PROGRESS", progress)
        rc, out, err = cli(*args)
        assert rc == 0 and out == ""
        assert re.fullmatch(r"emu: ran 'main' on reference, dispatch 2x1x1 \(2 workgroups\) in \d+\.\d\d s, "
                            r"(interpreted|compiled); wrote " + re.escape(f"{tmp_path}/o.npy") + r" \(8,\) uint32\n",
                            err), err
        assert cli(*args, "-q")[1:] == ("", "")


def test_check_ok_bad_config_and_uniformity(tmp_path):
    from emu.examples import kernel
    dawn = kernel("gemm_dawn").read_text()
    assert cli("check", "@gemm_dawn", "--profile", "nvidia-h200") == (0, "@gemm_dawn: ok on nvidia-h200 (main)\n", "")
    assert cli("check", "@gemm_wgpu", "--profile", "nvidia-h200", "--entry", "main")[0] == 0
    big = tmp_path / "big.wgsl"
    big.write_text(dawn.replace("16, 16>", "32, 32>"))
    rc, out, err = cli("check", big, "--profile", "nvidia-h200")
    line = next(n for n, text in enumerate(dawn.splitlines(), 1) if "subgroup_matrix_result<f32, 16, 16>()" in text)
    assert (rc, out) == (1, "") and err.splitlines()[0] == (
        f"{big}:{line}:15: error: the device 'nvidia-h200' has no result (C) matrix of 32x32 f32")
    # tile positions from local_invocation_index / subgroup_size: emu runs it, Tint rejects it
    old = tmp_path / "old.wgsl"
    old.write_text(dawn.replace("@builtin(subgroup_id) sg: u32,", "@builtin(local_invocation_index) lidx: u32,")
                   .replace("  let subgroups = INVOCATIONS / sg_size;",
                            "  let sg = lidx / sg_size;\n  let subgroups = INVOCATIONS / sg_size;"))
    rc, out, err = cli("check", old, "--profile", "nvidia-h200")
    assert (rc, out) == (1, "")
    assert err.splitlines()[0] == (f"{old}:31:15: warning: the matrix constructor is in control flow that depends "
                                   "on local_invocation_index, which is not uniform: Tint (Dawn, Chrome) rejects "
                                   "this shader")
    assert err.count(": warning: ") == 5 and "Traceback" not in err


@pytest.mark.parametrize("argv, says", [
    # a typo'd flag is named before the required flag it leaves out (was: "required: --dispatch")
    (["run", "@gemm_dawn", "--dispach", "4,4"], "unrecognized argument --dispach: did you mean --dispatch?"),
    (["ir", "@gemm_dawn", "--overide", "M=64"], "unrecognized argument --overide: did you mean --override?"),
    (["campaign", "fuzz", "--mutans", "3"], "unrecognized argument --mutans: did you mean --mutants?"),
    (["runn", "k.wgsl"], "no command 'runn': did you mean 'run'? (`emu --help` lists the commands)"),
    (["campaign", "fuz"], "no command 'fuz': did you mean 'fuzz'? (`emu campaign --help` lists the commands)"),
    (["run", "@gemm_dawn", "--dispatch", "1", "--zzz"], "unrecognized argument --zzz"),
    # what argparse says already stays: a prefix is taken, a missing value named
    (["lanes", "--profil", "nvidia-h200"], "the following arguments are required: --config, --role"),
    (["run", "@gemm_dawn", "--dispatch", "1", "--bounds", "strikt"],
     "argument --bounds: invalid choice: 'strikt' (choose from 'webgpu', 'strict')"),
])
def test_command_line_mistakes_are_one_message(argv, says):
    rc, out, err = cli(*argv)
    assert rc == 2 and out == ""
    assert err.splitlines()[-1] == f"emu: error: {says}" and err.startswith("usage: emu")


def test_output_into_a_missing_folder_is_said_before_the_run(tmp_path):
    """(was: the run, then an internal error, FileNotFoundError from numpy.save)"""
    target = tmp_path / "no" / "c.npy"
    rc, out, err = cli("run", "@gemm_wgpu", "--dispatch", "1", "--override", "M=16", "--override", "N=16",
                       "--override", "K=16", "--output", f"0:2={target}")
    assert (rc, out) == (1, "") and err.splitlines() == [
        f"emu: error: --output 0:2: cannot write '{target}': no folder '{target.parent}'",
        "   hint: make the folder first, or write elsewhere"]


def test_a_file_the_command_names_that_cannot_be_written_is_one_message(tmp_path):
    """emit -o, --report, fit --out into a missing folder (was: internal error, FileNotFoundError)."""
    target = tmp_path / "no" / "k.wgsl"
    rc, out, err = cli("emit", "@gemm_dawn", "--dialect", "wgpu", "-o", target)
    assert (rc, out) == (1, "") and err.splitlines() == [
        f"emu: error: '{target}': No such file or directory",
        "   hint: check the path: its folder must exist, and be writable for an output"]


def test_demo_size_is_a_usage_error():
    rc, out, err = cli("demo", "--size", "33")
    assert (rc, out, err) == (2, "", "emu: error: --size 33: the example GEMMs need a positive multiple of 32\n")


def test_runtime_sized_output_hint_names_zeros():
    rc, _, err = cli("run", "@gemm_wgpu", "--dispatch", "1", "--output", "0:2=c.npy")
    assert rc == 1 and err.splitlines()[-1] == (
        "   hint: also pass --buffer 0:2=zeros:N:f32 (N elements) or --buffer 0:2=FILE.npy, of the size you want")


def test_a_shader_without_a_compute_entry_point():
    """(was: 'the shader has 0 compute entry points (none)', hint: choose one with --entry NAME)"""
    rc, _, err = cli("run", "-", "--dispatch", "1",
                     stdin="@vertex fn vs() -> @builtin(position) vec4f { return vec4f(); }\n")
    assert rc == 1 and err.splitlines() == [
        "emu: error: the shader has no compute entry point (only @vertex vs)",
        "   hint: emu runs compute shaders: declare one, e.g. @compute @workgroup_size(64) fn main() { ... }"]


@pytest.mark.parametrize("jobs", ["0", "-3"])
def test_jobs_below_one_is_refused(jobs):
    """(was: 0 taken as every core, -3 as one thread, silently)"""
    rc, _, err = cli("run", "@gemm_wgpu", "--dispatch", "1", "--jobs", jobs)
    assert rc == 1 and err.splitlines() == [f"emu: error: --jobs {jobs}: must be a positive number of threads",
                                            "   hint: leave it out to use every core"]
