"""Generated traces validate against the documented schema; Perfetto output is trace-event JSON."""
import copy
import json
from pathlib import Path

import pytest

from emu.trace import schema
from emu.trace.schema import SCHEMA_VERSION, validate, validate_perfetto, validate_records

from .conftest import run_reduce, traced

DOC = Path(schema.__file__).resolve().parents[1] / "docs" / "trace-schema.md"


def test_doc_names_the_version_and_every_field():
    text = DOC.read_text()
    assert SCHEMA_VERSION in text
    missing = sorted(p for p in schema.all_properties() if f"`{p}`" not in text)
    assert missing == [], f"emu/docs/trace-schema.md does not describe: {missing}"


@pytest.mark.parametrize("ops", ["coop,barrier", "all", "coop_mma,coop_store"])
def test_generated_traces_validate(ops):
    _, recs = traced("gemm_dawn", "amd-rdna3", ops=ops)
    assert validate_records(recs) == []
    assert recs[0]["selection"]["ops"]
    assert recs[-1] == {"record": "summary", "events": len(recs) - 2,
                        "instructions": recs[-1]["instructions"], "complete": True}


def test_validator_catches_broken_records():
    _, recs = traced("gemm_wgpu", "nvidia-h200")
    ev = next(r for r in recs if r.get("op") == "coop_mma")
    bad = copy.deepcopy(ev)
    bad["fragments"][0]["elements"][0]["value"] = float("nan")     # would not be JSON
    bad["mask"] = "ffff"
    del bad["loc"]
    errs = validate(bad, schema.EVENT)
    assert any("value" in e for e in errs) and any("mask" in e for e in errs)
    assert any("missing 'loc'" in e for e in errs)
    bad2 = copy.deepcopy(ev)
    bad2["operands"]["A"] = {"id": 1, "matrix": ev["matrix"]}       # neither ref nor fragments
    assert any("exactly one" in e for e in validate_records([recs[0], bad2]))
    assert validate_records(list(reversed(recs)))


def test_perfetto_output_loads_and_matches_trace_event_format(tmp_path, cli):
    from emu.trace.tracer import Tracer
    path = tmp_path / "t.json"
    with Tracer(path, format="perfetto") as tr:
        run_reduce(tr)
    doc = json.loads(path.read_text())
    assert validate_perfetto(doc) == []
    evs = doc["traceEvents"]
    slices = [e for e in evs if e["ph"] == "X"]
    assert slices and all(e["dur"] == 1 and "args" in e for e in slices)
    names = {(e["pid"], e["args"]["name"]) for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    assert (1, "workgroup-wide") in names
    assert doc["otherData"]["schema"] == SCHEMA_VERSION
    # cooperative ops: one track per subgroup
    path2 = tmp_path / "g.json"
    with Tracer(path2, format="perfetto") as tr:
        from .conftest import run_gemm
        run_gemm("gemm_dawn", "nvidia-h200", tr)
    doc2 = json.loads(path2.read_text())
    assert validate_perfetto(doc2) == []
    tracks = {e["args"]["name"] for e in doc2["traceEvents"] if e.get("name") == "thread_name"}
    assert tracks == {"subgroup 0", "subgroup 1", "subgroup 2", "subgroup 3"}
    mma = [e for e in doc2["traceEvents"] if e["name"].startswith("coop_mma")]
    assert len(mma) == 8 and all(e["args"]["model"] == "nvidia-hopper" for e in mma)
