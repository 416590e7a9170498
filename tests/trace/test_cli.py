"""The tracing commands from the command line: run --trace/--explain, lanes, explain, errors."""
import json

import numpy as np
import pytest

from emu.trace.schema import validate_trace_file

from .conftest import example, gemm_inputs


@pytest.fixture
def gemm_files(tmp_path):
    a, b = gemm_inputs()
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    np.save(tmp_path / "c.npy", np.zeros((32, 32), np.float32))
    shader = tmp_path / "gemm_dawn.wgsl"
    shader.write_text(example("gemm_dawn"))
    return ["run", shader, "--dispatch", "1,1", "--override", "M=32", "--override", "N=32",
            "--override", "K=32", "--buffer", f"0:0={tmp_path / 'a.npy'}", "--buffer",
            f"0:1={tmp_path / 'b.npy'}", "--buffer", f"0:2={tmp_path / 'c.npy'}",
            "--output", f"0:2={tmp_path / 'out.npy'}", "--profile", "nvidia-h200"]


def test_run_trace_then_explain(cli, gemm_files, tmp_path):
    trace = tmp_path / "t.jsonl"
    code, out, err = cli(*gemm_files, "--trace", trace, "--explain", "2,3")
    assert code == 0, err
    assert "D[2,3]" in out and "(same bits: reproduced)" in out
    assert validate_trace_file(trace) == []
    head = json.loads(trace.read_text().splitlines()[0])
    assert head["profile"] == "nvidia-h200" and head["dispatch"] == [1, 1, 1]
    c = np.load(tmp_path / "out.npy").reshape(32, 32)
    code, out2, err = cli("explain", trace, "--element", "2,3")
    assert code == 0, err
    assert "subgroup 3" in out2 and "reproduced" in out2          # the last mma in the trace
    mma0 = next(json.loads(l) for l in trace.read_text().splitlines()[1:]
                if '"op":"coop_mma"' in l and '"subgroup":0' in l)
    code, out3, err = cli("explain", trace, "--op", mma0["seq"], "--element", "2,3", "--format", "json")
    x = json.loads(out3)
    assert x["reproduces"] and x["event"]["seq"] == mma0["seq"]
    # --explain shows subgroup 0's last step, which wrote c[2, 3]
    assert f"0x{int(c[2, 3].view(np.uint32)):08x}" in out
    code, out4, err = cli(*gemm_files, "--explain", "2,3")        # without a trace file: no event seq
    assert code == 0 and out4.splitlines()[0].endswith("(workgroup (0, 0, 0), subgroup 0)"), out4


def test_run_perfetto(cli, gemm_files, tmp_path):
    p = tmp_path / "t.json"
    code, _, err = cli(*gemm_files, "--trace", p, "--trace-format", "perfetto", "--trace-ops", "all")
    assert code == 0, err
    from emu.trace.schema import validate_perfetto
    assert validate_perfetto(json.loads(p.read_text())) == []


def test_lanes_command(cli, tmp_path):
    code, out, err = cli("lanes", "--profile", "amd-rdna3", "--config", "f16xf16->f32:16x16x16", "--role", "a",
                         "--format", "json")
    assert code == 0, err
    d = json.loads(out)
    assert d["profile"] == "amd-rdna3" and d["role"] == "A" and d["duplicated"] is True
    svg = tmp_path / "m.svg"
    code, out, err = cli("lanes", "--diff", "amd-rdna3", "amd-rdna4", "--config", "f16xf16-f32:16x16x16",
                         "--role", "C", "--format", "svg", "-o", svg)
    assert code == 0 and out == "" and svg.read_text().startswith("<?xml")
    code, out, err = cli("lanes", "--config", "f16xf16->f32:16x16x16", "--role", "B")
    assert code == 0 and out.startswith("reference ")


@pytest.mark.parametrize("argv,codes,text", [
    (["lanes", "--profile", "nvidia-h200", "--config", "f16xf16->f32", "--role", "A"], (2,), "--config"),
    (["lanes", "--profile", "nvidia-h200", "--config", "f16xf16->f32:8x8x8", "--role", "A"], (1,),
     "has no config"),
    (["lanes", "--profile", "no-such-gpu", "--config", "f16xf16->f32:16x16x16", "--role", "A"], (1,),
     "no profile named"),
    (["lanes", "--profile", "nvidia-h200", "--config", "f16xf16->f32:16x16x16", "--role", "Q"], (2,), "--role"),
    (["lanes", "--profile", "nvidia-h200", "--config", "f16xf16->f32:16x16x16", "--role", "A",
      "--subgroup-size", "64"], (1,), "subgroups of 64"),
    (["explain", "/no/such/trace.jsonl", "--element", "1,2"], (1,), "cannot read the trace"),
    (["explain", "/no/such/trace.jsonl", "--element", "1"], (2,), "--element"),
])
def test_cli_errors_are_one_message(cli, argv, codes, text):
    code, out, err = cli(*argv)
    assert code in codes
    assert text in err and "Traceback" not in err
    assert err.count("error:") == 1


def test_run_trace_flag_errors(cli, gemm_files, tmp_path):
    for extra, code_, text in [(["--trace-ops", "coop"], 2, "needs --trace FILE"),
                               (["--trace", tmp_path / "x.jsonl", "--trace-ops", "bogus"], 2, "bogus"),
                               (["--trace", tmp_path / "x.jsonl", "--trace-workgroups", "0,0,0,0"], 2, "3 coordinates"),
                               (["--trace", tmp_path / "x.jsonl", "--trace-lanes", "5-2"], 2, "not a valid range"),
                               (["--trace", tmp_path / "no" / "x.jsonl"], 1, "cannot write the trace"),
                               (["--explain", "2"], 2, "ROW,COL"),
                               (["--explain", "99,0"], 1, "outside the 16x16 result")]:
        code, out, err = cli(*gemm_files, *extra)
        assert code == code_, (extra, err)
        assert text in err and "Traceback" not in err, (extra, err)


def test_explain_on_a_trace_without_mma(cli, tmp_path):
    from .conftest import run_reduce
    from emu.trace.tracer import Tracer
    p = tmp_path / "r.jsonl"
    with Tracer(p) as tr:
        run_reduce(tr)
    code, out, err = cli("explain", p, "--element", "0,0")
    assert code == 1 and "holds no multiply-add" in err
    code, out, err = cli("explain", p, "--op", 0, "--element", "0,0")
    assert code == 1 and "not a multiply-add" in err


def test_explain_an_output_element_by_its_output_coordinates(cli, tmp_path):
    """--element names a tile's element (of one multiply-add); --output names the output's: the
    store that wrote it and the multiply-add that made those bits are found in the trace."""
    a, b = gemm_inputs(64)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    shader = tmp_path / "gemm_wgpu.wgsl"
    shader.write_text(example("gemm_wgpu"))
    trace = tmp_path / "t.jsonl"
    code, out, err = cli("run", shader, "--dispatch", "4,4", "--override", "M=64", "--override", "N=64",
                         "--override", "K=64", "--buffer", f"0:0={tmp_path}/a.npy", "--buffer",
                         f"0:1={tmp_path}/b.npy", "--buffer", "0:2=zeros:4096:f32", "--output",
                         f"0:2={tmp_path}/c.npy:64x64", "--trace", trace, "-q", "--profile", "nvidia-h200")
    assert code == 0, err
    c = np.load(tmp_path / "c.npy")
    code, out, err = cli("explain", trace, "--output", "37,21")
    assert code == 0, err
    lines = out.splitlines()
    store = json.loads(next(l for l in trace.read_text().splitlines()
                            if '"op":"coop_store"' in l and '"workgroup":[1,2,0]' in l))
    assert lines[0] == (f"output c[37,21] (binding 0:2) was stored by event {store['seq']} at {shader}:27:3 as tile "
                        f"element D[5,5] of:")
    assert lines[1].startswith(f"coop_mma %29 at {shader}:25:11 (event ") and lines[1].endswith(
        ", workgroup (1, 2, 0), subgroup 0)")
    assert lines[3].startswith("D[5,5] (tile element) = sum over k of A[5,k] * B[k,5] + C[5,5]")
    emulated = next(l for l in lines if l.startswith("  emulated D[5,5]"))
    assert emulated.split()[2] == f"0x{int(c[37, 21].view(np.uint32)):08x}" and "(same bits: reproduced)" in emulated
    code, out, js = cli("explain", trace, "--output", "37,21", "--format", "json")
    x = json.loads(out)
    assert x["output"] == {"element": [37, 21], "binding": [0, 2], "name": "c", "store_event": store["seq"],
                           "store_loc": f"{shader}:27:3", "tile_element": [5, 5]}
    code, out, err = cli("explain", trace, "--output", "64,0")
    assert code == 1 and "no cooperative store in the trace wrote output element (64, 0) of binding 0:2" in err
    code, out, err = cli("explain", trace, "--output", "1,1", "--op", "3")
    assert code == 2 and "--op picks a multiply-add for --element" in err
