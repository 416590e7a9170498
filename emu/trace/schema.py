"""The trace format: a JSON Schema shipped in the package (emu/docs/emu-trace.schema.json, draft
2020-12, handed out by `emu examples`), checked with the jsonschema package (an event's per-lane
arrays first by plain loops that pass nothing it refuses, for speed), and the rules between records
that a schema of one record cannot say (a header first, seq increasing, the summary's count).

emu/docs/trace-schema.md describes the same thing for people; tests/trace check that every property
named in the schema is documented there and that generated traces validate.

    errors = validate_trace_file("run.jsonl")       # [] when the file is a valid trace
    errors = validate_perfetto(json.load(open("run.json")))
"""
from __future__ import annotations

import copy
import json
import math
import re
from importlib import resources

DOCUMENT = json.loads(resources.files("emu").joinpath("docs", "emu-trace.schema.json").read_text(encoding="utf-8"))
DEFS = DOCUMENT["$defs"]
SCHEMA_VERSION = DEFS["header"]["properties"]["schema"]["enum"][0]


def _schema(name: str) -> dict:
    """One definition of the document as a schema of its own, its references put in place (a
    validator then follows none: several times faster on a long trace)."""
    def inline(s):
        if isinstance(s, dict):
            if set(s) == {"$ref"}:
                return inline(DEFS[s["$ref"].removeprefix("#/$defs/")])
            return {k: inline(v) for k, v in s.items()}
        return [inline(v) for v in s] if isinstance(s, list) else s
    return inline(DEFS[name])


HEADER, EVENT, SUMMARY, PERFETTO = (_schema(n) for n in ("header", "event", "summary", "perfetto"))
RECORDS = {"header": HEADER, "event": EVENT, "summary": SUMMARY}


def _number(checker, v) -> bool:          # JSON has no NaN or infinity (Python's json reads them)
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) != float("inf")


def _integer(checker, v) -> bool:         # 1.0 is not an integer in a trace
    return isinstance(v, int) and not isinstance(v, bool)


_VALIDATORS: dict[int, tuple] = {}
_CLASS: list = []


def _validator(schema: dict):
    """One validator per schema object (the record schemas are made once, at import). jsonschema
    is imported here, when a trace is first checked: every emu command imports this module (the
    run command's tracing flags), and the import took ~0.1 s of each."""
    got = _VALIDATORS.get(id(schema))
    if got is None or got[0] is not schema:
        if not _CLASS:
            import jsonschema
            d = jsonschema.Draft202012Validator
            _CLASS.append(jsonschema.validators.extend(d, type_checker=d.TYPE_CHECKER.redefine_many(
                {"number": _number, "integer": _integer})))
        got = _VALIDATORS[id(schema)] = (schema, _CLASS[0](schema))
    return got[1]


def _where(e) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path)


def _say(e) -> list[str]:
    """jsonschema's error as this module has always said it: 'path: what', one thing each."""
    at, v, kw = _where(e), e.instance, e.validator
    if kw == "type":
        return [f"{at}: expected {e.validator_value}, got {type(v).__name__}"]
    if kw == "enum":
        return [f"{at}: {v!r} is not one of {e.validator_value}"]
    if kw == "pattern":
        return [f"{at}: {v!r} does not match {e.validator_value}"]
    if kw == "minimum":
        return [f"{at}: {v} is below {e.validator_value}"]
    if kw == "required":
        return [f"{at}: missing {k!r}" for k in e.validator_value if k not in v]
    if kw == "additionalProperties":
        return [f"{at}: unexpected property {k!r}" for k in v if k not in e.schema.get("properties", {})]
    if kw == "minItems":
        return [f"{at}: fewer than {e.validator_value} items"]
    if kw == "maxItems":
        return [f"{at}: more than {e.validator_value} items"]
    if kw == "anyOf":
        return [f"{at}: {json.dumps(v)[:60]} matches none of the allowed forms"]
    return [f"{at}: {e.message}"]


# ------------------------------------------------------- the per-lane arrays, checked in bulk
# 95% of a long trace's JSON values sit in its per-lane arrays (an event's `fragments`, its
# operands' `fragments`, a workgroup event's `lanes`), and jsonschema spends some 10 us on each
# (8 s for an 8 MB trace). So an event is first checked as an envelope (the schema with those
# arrays as plain arrays) by jsonschema and its per-lane arrays by the plain loops below, which
# accept nothing the schema refuses (exact Python types; tests/trace/test_schema.py holds them to
# the definitions they were written for). An event either check refuses is judged by jsonschema
# against the whole schema: its verdicts and messages are the only ones ever reported.

_NUMBER_WORDS = frozenset(DEFS["number_or_special"]["anyOf"][2]["enum"])
_HEX = re.compile(DEFS["hex"]["pattern"])
_ELEMENT_KEYS = frozenset(DEFS["element"]["required"])
_FRAGMENT_KEYS = frozenset(DEFS["fragments"]["items"]["properties"])
_LANE_KEYS = frozenset(DEFS["event"]["properties"]["lanes"]["items"]["properties"])


def _nat(v) -> bool:
    return type(v) is int and v >= 0


def _number_or_special(v) -> bool:
    t = type(v)
    return t is int or t is bool or (t is float and math.isfinite(v)) or (t is str and v in _NUMBER_WORDS)


def _plain_fragments(frags) -> bool:
    """True only where $defs/fragments holds: a list of {lane, elements[, offsets]}."""
    if type(frags) is not list:
        return False
    for f in frags:
        if type(f) is not dict or not f.keys() <= _FRAGMENT_KEYS or "elements" not in f \
                or not _nat(f.get("lane")) or type(f["elements"]) is not list:
            return False
        for e in f["elements"]:
            if type(e) is not dict or e.keys() != _ELEMENT_KEYS or not _nat(e["row"]) or not _nat(e["col"]) \
                    or type(e["bits"]) is not str or not _HEX.search(e["bits"]) \
                    or not _number_or_special(e["value"]):
                return False
        if "offsets" in f and (type(f["offsets"]) is not list
                               or not all(o is None or _nat(o) for o in f["offsets"])):
            return False
    return True


def _plain_lanes(lanes) -> bool:
    """True only where the event's `lanes` property holds: a list of {lane[, offsets][, value][, args]}."""
    if type(lanes) is not list:
        return False
    for entry in lanes:
        if type(entry) is not dict or not entry.keys() <= _LANE_KEYS or not _nat(entry.get("lane")):
            return False
        if "offsets" in entry and (type(entry["offsets"]) is not list
                                   or not all(type(o) is int for o in entry["offsets"])):
            return False
        if "value" in entry and not (type(entry["value"]) is list or _number_or_special(entry["value"])):
            return False
        if "args" in entry and not (type(entry["args"]) is list and
                                    all(type(v) is list or _number_or_special(v) for v in entry["args"])):
            return False
    return True


def _envelope(event: dict) -> dict:
    """The event schema with its per-lane arrays as plain arrays."""
    env = copy.deepcopy(event)
    props = env["properties"]
    props["fragments"] = props["lanes"] = {"type": "array"}
    for operand in props["operands"]["properties"].values():
        operand["properties"]["fragments"] = {"type": "array"}
    return env


EVENT_ENVELOPE = _envelope(EVENT)


def _plain_event(rec: dict) -> bool:
    """True only if `rec` conforms to the event schema; False may still conform (ask jsonschema)."""
    if "fragments" in rec and not _plain_fragments(rec["fragments"]):
        return False
    if "lanes" in rec and not _plain_lanes(rec["lanes"]):
        return False
    operands = rec.get("operands")
    if type(operands) is dict and not all(type(o) is not dict or "fragments" not in o
                                          or _plain_fragments(o["fragments"]) for o in operands.values()):
        return False
    return _validator(EVENT_ENVELOPE).is_valid(rec)


def validate(value, schema: dict) -> list[str]:
    """Every way `value` breaks `schema`, as 'path: what' strings ([] when it conforms)."""
    errors = list(_validator(schema).iter_errors(value))
    mistyped = {_where(e) for e in errors if e.validator == "type"}
    out: list[str] = []
    for e in errors:
        if e.validator != "type" and _where(e) in mistyped:
            continue                      # of a value of the wrong type, the type is what to say
        out += [m for m in _say(e) if m not in out]
    return out


def validate_records(records: list[dict]) -> list[str]:
    """A whole trace: a header first, events with increasing seq, a summary last."""
    errs: list[str] = []
    if not records:
        return ["the trace is empty"]
    if not all(isinstance(r, dict) for r in records):
        n = next(i for i, r in enumerate(records, 1) if not isinstance(r, dict))
        return [f"line {n}: a record must be a JSON object"]
    if records[0].get("record") != "header":
        errs.append("line 1: the first record must be the header")
    last = -1
    for n, rec in enumerate(records, 1):
        kind = rec.get("record")
        schema = RECORDS.get(kind) if isinstance(kind, str) else None
        if schema is None:
            errs.append(f"line {n}: unknown record kind {kind!r}")
            continue
        if kind == "header" and n != 1:
            errs.append(f"line {n}: a second header")
        if kind == "summary" and n != len(records):
            errs.append(f"line {n}: the summary must be the last record")
        found = [] if kind == "event" and _plain_event(rec) else validate(rec, schema)
        errs.extend(f"line {n}: {e}" for e in found)
        if kind == "event" and not found:       # the checks below assume the schema holds
            if rec.get("seq", -1) <= last:
                errs.append(f"line {n}: seq {rec.get('seq')} does not increase")
            last = rec.get("seq", last)
            if rec.get("scope") == "subgroup" and "subgroup" not in rec:
                errs.append(f"line {n}: a subgroup record needs 'subgroup'")
            for role, o in (rec.get("operands") or {}).items():
                if ("ref" in o) == ("fragments" in o):
                    errs.append(f"line {n}: operand {role} needs exactly one of 'ref' and 'fragments'")
                elif "ref" in o and o["ref"] >= rec.get("seq", 0):
                    errs.append(f"line {n}: operand {role} refers to a later event {o['ref']}")
    if records[-1].get("record") == "summary":
        nev = sum(1 for r in records if r.get("record") == "event")
        if records[-1].get("events") != nev:
            errs.append(f"summary says {records[-1].get('events')} events, the trace has {nev}")
    return errs


def read_jsonl(path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def validate_trace_file(path) -> list[str]:
    try:
        records = read_jsonl(path)
    except (OSError, ValueError) as e:
        return [f"{path}: not a JSON-lines trace ({e})"]
    return validate_records(records)


def validate_perfetto(doc) -> list[str]:
    errs = validate(doc, PERFETTO)
    for i, ev in enumerate(doc.get("traceEvents", []) if isinstance(doc, dict) else []):
        if isinstance(ev, dict) and ev.get("ph") == "X" and ("ts" not in ev or "dur" not in ev):
            errs.append(f"$.traceEvents[{i}]: a complete ('X') event needs ts and dur")
    return errs


def all_properties() -> set[str]:
    """Every property name the trace records mention (the docs must describe each)."""
    names: set[str] = set()

    def walk(s):
        if isinstance(s, dict):
            names.update(s.get("properties", {}).keys())
            for v in s.values():
                walk(v)
        elif isinstance(s, list):
            for v in s:
                walk(v)
    walk([DEFS[k] for k in DEFS if not k.startswith("perfetto")])
    return names
