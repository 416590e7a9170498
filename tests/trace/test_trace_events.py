"""What a trace records: loaded fragments match memory lane by lane, the union of lanes covers
each matrix, selections narrow it, operand references resolve, and tracing changes no bit."""
import json

import numpy as np
import pytest

from emu.profiles import load_profile
from emu.trace.explain import Trace
from emu.trace.fmt import decode_bits
from emu.trace.schema import validate_records
from emu.trace.select import Selection
from emu.trace.tracer import MemorySink, Tracer, dumps

from .conftest import gemm_inputs, run_gemm, run_reduce, traced

CASES = [("gemm_wgpu", "nvidia-h200", None), ("gemm_dawn", "amd-rdna3", None),
         ("gemm_dawn", "amd-rdna3", 64), ("gemm_wgpu", "reference", None), ("gemm_dawn", "amd-rdna4", 64), ("gemm_dawn", "amd-cdna3", None)]


@pytest.mark.parametrize("kernel,profile,sg", CASES)
def test_loaded_elements_match_memory_once_per_owning_lane(kernel, profile, sg):
    a, b = gemm_inputs()
    _, recs = traced(kernel, profile, subgroup_size=sg, a=a, b=b)
    assert validate_records(recs) == []
    prof = load_profile(profile)
    cfg = prof.find_config(16, 16, 16, "f16", "f32")
    size = a.shape[0]
    src = {"a": a.reshape(-1), "b": b.reshape(-1)}
    loads = [r for r in recs if r.get("op") == "coop_load"]
    assert loads
    for ev in loads:
        m = ev["matrix"]
        lm = prof.lane_map(cfg, m["role"], recs[0]["subgroup_size"])
        assert len(ev["fragments"]) == lm.subgroup_size          # one entry per lane
        seen = np.zeros((m["rows"], m["cols"]), int)
        flat = src[ev["buffer"]["name"]]
        for entry in ev["fragments"]:
            lane = entry["lane"]
            cells = [(e["row"], e["col"]) for e in entry["elements"]]
            # exactly the elements the lane map gives this lane, each once, in fragment order
            want = [tuple(rc) for rc, ok in zip(lm.coords[lane].tolist(), lm.valid[lane]) if ok]
            assert cells == want
            assert len(set(cells)) == len(cells)
            for e, off in zip(entry["elements"], entry["offsets"]):
                r, c = e["row"], e["col"]
                seen[r, c] += 1
                index = ev["offset"] + r * ev["stride"] + c           # row-major tiles of a and b
                assert off == 2 * index
                x = flat[index]
                assert int(e["bits"], 16) == int(x.view(np.uint16))
                assert e["value"] == float(x)
        assert (seen >= 1).all()                                    # the lanes cover the matrix
        assert (seen == lm.owner_count).all()                       # duplicates only where mapped
        assert ev["stride"] == size


@pytest.mark.parametrize("kernel,profile", [("gemm_dawn", "nvidia-h200"), ("gemm_wgpu", "amd-rdna3"),
                                            ("gemm_wgpu", "reference")])
def test_outputs_identical_with_tracing_on_and_off(kernel, profile):
    off, _ = run_gemm(kernel, profile)
    on, recs = traced(kernel, profile, ops="all")
    assert recs and np.array_equal(off.view(np.uint32), on.view(np.uint32))
    explain_only = Tracer(explain=(1, 2))
    on2, _ = run_gemm(kernel, profile, explain_only)
    assert explain_only.captured is not None
    assert np.array_equal(off.view(np.uint32), on2.view(np.uint32))


def test_scalar_kernel_identical_and_memory_events_per_workgroup():
    off, x, _ = run_reduce()
    tr = Tracer(sink=MemorySink(), selection=Selection.parse(ops="memory,barrier,control"))
    on, _, recs = run_reduce(tr)
    assert np.array_equal(off.view(np.uint32), on.view(np.uint32))
    assert np.allclose(on, x.reshape(3, 64).sum(axis=1))
    assert validate_records(recs) == []
    evs = recs[1:-1]
    assert {e["scope"] for e in evs} == {"workgroup"}
    barriers = [e for e in evs if e["op"] == "barrier"]
    assert len(barriers) == 3 * 7                   # 1 + 6 loop iterations, per workgroup
    assert all(e["kind"] == "workgroup" and e["mask"] == "0x" + "f" * 16 for e in barriers)
    first_load = next(e for e in evs if e["op"] == "load" and e["buffer"]["name"] == "input")
    w = first_load["workgroup"][0]
    assert [l["offsets"] for l in first_load["lanes"]] == [[4 * (64 * w + i)] for i in range(64)]
    assert [l["value"] for l in first_load["lanes"]] == x[64 * w: 64 * w + 64].tolist()
    # the branch narrows the mask: the store inside `if (li < s)` on the first pass has 32 lanes
    inner = [e for e in evs if e["op"] == "store" and e["buffer"]["space"] == "workgroup"
             and len(e["lanes"]) == 32]
    assert inner and inner[0]["mask"] == "0x" + "0" * 8 + "f" * 8
    assert any(e["op"] == "loop" for e in evs) and any(e["op"] == "if" for e in evs)
    # loads of function variables (the loop counter) are not 'memory'
    assert not any(e["op"] == "load" and e["buffer"]["space"] == "function" for e in evs)


def test_selection_narrows_workgroups_subgroups_and_lanes():
    _, full = traced("gemm_dawn", "nvidia-h200", size=64)
    _, some = traced("gemm_dawn", "nvidia-h200", size=64, workgroups="1,*,0;0,0,0",
                     subgroups="1-2", lanes="0,5-6")
    assert validate_records(some) == []
    ev_full = [r for r in full if r["record"] == "event"]
    ev = [r for r in some if r["record"] == "event"]
    assert {tuple(e["workgroup"]) for e in ev_full} == {(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0)}
    assert {tuple(e["workgroup"]) for e in ev} == {(0, 0, 0), (1, 0, 0), (1, 1, 0)}
    assert {e["subgroup"] for e in ev} == {1, 2}
    assert all([f["lane"] for f in e["fragments"]] == [0, 5, 6] for e in ev if "fragments" in e)
    assert len(ev) == len(ev_full) * 3 // 4 // 2
    _, mma_only = traced("gemm_wgpu", "nvidia-h200", ops="coop_mma")
    assert {r["op"] for r in mma_only if r["record"] == "event"} == {"coop_mma"}
    # no earlier record holds A or B, so they are inline; C of a second step is the first's result
    assert all("fragments" in r["operands"][x] for r in mma_only[1:-1] for x in "AB")
    assert {mma_only[r["operands"]["C"]["ref"] + 1]["op"] for r in mma_only[1:-1]
            if "ref" in r["operands"]["C"]} == {"coop_mma"}


def test_mma_operand_references_resolve_to_the_operands():
    _, recs = traced("gemm_wgpu", "amd-rdna3", size=32)
    t = Trace(recs)
    mmas = t.mma_events()
    assert len(mmas) == 4 * 2
    for ev in mmas:
        ops = ev["operands"]
        assert t.by_seq[ops["A"]["ref"]]["op"] == "coop_load"
        assert t.by_seq[ops["B"]["ref"]]["op"] == "coop_load"
        for role in "AB":
            src = t.by_seq[ops[role]["ref"]]
            assert (src["workgroup"], src["subgroup"]) == (ev["workgroup"], ev["subgroup"])
            assert src["matrix"]["role"] == role
    # the second multiply-add of a subgroup takes the first one's result as C
    by_wg: dict = {}
    for ev in mmas:
        by_wg.setdefault(tuple(ev["workgroup"]), []).append(ev)
    for first, second in by_wg.values():
        assert "fragments" in first["operands"]["C"]            # the zero accumulator: inline
        assert second["operands"]["C"]["ref"] == first["seq"]


def test_header_and_nan_inf_values_are_json():
    a, b = gemm_inputs(specials=True)
    _, recs = traced("gemm_wgpu", "nvidia-h200", a=a, b=b)
    h = recs[0]
    assert h["schema"] == "emu-trace/1" and h["profile"] == "nvidia-h200" and h["subgroup_size"] == 32
    assert h["dispatch"] == [2, 2, 1] and len(h["shader"]["sha256"]) == 64
    text = "".join(dumps(r) + "\n" for r in recs)       # allow_nan=False: raises on a bare NaN
    back = [json.loads(line) for line in text.splitlines()]
    values = [e["value"] for r in back if "fragments" in r for f in r["fragments"] for e in f["elements"]]
    assert "nan" in values and "inf" in values and "-inf" in values
    nan = next(e for r in back if "fragments" in r for f in r["fragments"] for e in f["elements"]
               if e["value"] == "nan")
    assert np.isnan(decode_bits([nan["bits"]], "f16" if len(nan["bits"]) == 6 else "f32")[0])
    assert validate_records(back) == []


def test_trace_file_and_perfetto_from_the_api(tmp_path):
    path = tmp_path / "t.jsonl"
    with Tracer(path) as tr:
        run_gemm("gemm_wgpu", "reference", tr)
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["record"] == "header" and json.loads(lines[-1])["record"] == "summary"
    assert json.loads(lines[-1])["complete"] is True
