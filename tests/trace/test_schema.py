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


# ------------------------------------------- the bulk check of per-lane arrays (speed, same verdicts)

def _small(ev, lanes=2, elements=2):
    """An event cut to a few lanes and elements, so that jsonschema judges it in milliseconds."""
    ev = copy.deepcopy(ev)
    for holder in [ev] + list((ev.get("operands") or {}).values()):
        if "fragments" in holder:
            holder["fragments"] = [dict(f, elements=f["elements"][:elements]) for f in holder["fragments"][:lanes]]
    if "lanes" in ev:
        ev["lanes"] = ev["lanes"][:lanes]
    return ev


def _mutants(value, path=()):
    """Every path in `value` (all list items) set to each bad value in turn, or deleted."""
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    else:
        return
    for k, v in items:
        for bad in ("delete", "x", "0xAB", "0x1\n", -1, 10 ** 9, 1.0, 1.5, float("nan"), float("inf"),
                    None, True, [], {}, (1, 2)):
            out = copy.deepcopy(value)
            if bad == "delete":
                del out[k]
            else:
                out[k] = bad
            yield path + (k,), bad, out
        for sub, bad, inner in _mutants(v, path + (k,)):
            out = copy.deepcopy(value)
            out[k] = inner
            yield sub, bad, out


def test_bulk_check_agrees_with_jsonschema_on_every_mutant():
    """Where the plain loops say an event conforms, jsonschema says so too (else a broken trace
    would pass); where they refuse, jsonschema decides and words the message."""
    _, recs = traced("gemm_wgpu", "nvidia-h200", ops="all")
    picks = {}
    for r in recs:
        if r.get("record") == "event":
            shape = ("fragments" in r, "operands" in r, "lanes" in r, "offsets" in str(r.get("fragments", "")))
            picks.setdefault(shape, r)
    assert len(picks) >= 3                  # a multiply-add, a cooperative load, a workgroup memory op
    from .test_decisions import _run
    _, scalar = _run("contract.wgsl", "nvidia-h200")
    picks["decision"] = next(r for r in scalar if r.get("decision"))      # lanes with operand values
    n = 0
    for ev in picks.values():
        ev = _small(ev)
        assert schema._plain_event(ev) and validate(ev, schema.EVENT) == []
        for where, bad, m in _mutants(ev):
            plain, found = schema._plain_event(m), validate(m, schema.EVENT)
            assert not (plain and found), f"{where}={bad!r}: the bulk check passes what jsonschema refuses: {found}"
            assert plain or found, f"{where}={bad!r}: conforms, but the bulk check sends it the slow way"
            n += 1
    assert n > 3000


def test_bulk_check_is_written_for_these_definitions():
    """_plain_fragments and _plain_lanes restate these definitions: a change to any of them
    must change those loops too (then update the digest here)."""
    import hashlib
    used = {k: schema.DEFS[k] for k in ("fragments", "element", "hex", "number_or_special")}
    used["lanes"] = schema.DEFS["event"]["properties"]["lanes"]
    used["event.fragments"] = schema.DEFS["event"]["properties"]["fragments"]
    used["operand.fragments"] = schema.DEFS["operand"]["properties"]["fragments"]
    digest = hashlib.sha256(json.dumps(used, sort_keys=True).encode()).hexdigest()[:16]
    assert digest == "c75d06022e5541ab"


def test_generated_traces_take_the_bulk_path():
    """Every event emu writes passes the fast check (else long traces would be slow again)."""
    for kernel, profile in (("gemm_wgpu", "nvidia-h200"), ("gemm_dawn", "amd-rdna3")):
        _, recs = traced(kernel, profile, ops="all")
        events = [r for r in recs if r.get("record") == "event"]
        assert events and all(schema._plain_event(r) for r in events)
