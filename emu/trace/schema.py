"""The trace format, as data, and a small validator for it (a subset of JSON Schema: type, enum,
pattern, minimum, required, properties, additionalProperties, items, minItems, maxItems, anyOf).

emu/docs/trace-schema.md describes the same thing for people; tests/trace check that every property
named here is documented there and that generated traces validate.

    errors = validate_trace_file("run.jsonl")       # [] when the file is a valid trace
    errors = validate_perfetto(json.load(open("run.json")))
"""
from __future__ import annotations

import json
import re

SCHEMA_VERSION = "emu-trace/1"

_INT = {"type": "integer"}
_NAT = {"type": "integer", "minimum": 0}
_HEX = {"type": "string", "pattern": r"^0x[0-9a-f]+$"}
_NUMBER_OR_SPECIAL = {"anyOf": [{"type": "number"}, {"type": "boolean"},
                                {"type": "string", "enum": ["nan", "inf", "-inf"]}]}
_XYZ = {"type": "array", "items": _NAT, "minItems": 3, "maxItems": 3}
_TYPES = ["f16", "bf16", "f32", "i8", "u8", "i32", "u32"]

MATRIX = {
    "type": "object",
    "required": ["role", "rows", "cols", "type"],
    "properties": {
        "role": {"type": "string", "enum": ["A", "B", "C"]},
        "rows": {"type": "integer", "minimum": 1},
        "cols": {"type": "integer", "minimum": 1},
        "type": {"type": "string", "enum": _TYPES},
        "map": {"type": "string"},
    },
    "additionalProperties": False,
}

ELEMENT = {
    "type": "object",
    "required": ["row", "col", "bits", "value"],
    "properties": {"row": _NAT, "col": _NAT, "bits": _HEX, "value": _NUMBER_OR_SPECIAL},
    "additionalProperties": False,
}

FRAGMENTS = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["lane", "elements"],
        "properties": {
            "lane": _NAT,
            "elements": {"type": "array", "items": ELEMENT},
            "offsets": {"type": "array", "items": {"anyOf": [_NAT, {"type": "null"}]}},
        },
        "additionalProperties": False,
    },
}

OPERAND = {
    "type": "object",
    "required": ["id", "matrix"],
    "properties": {"id": _NAT, "matrix": MATRIX, "ref": _NAT, "fragments": FRAGMENTS},
    "additionalProperties": False,
}

BUFFER = {
    "type": "object",
    "required": ["name", "space"],
    "properties": {
        "name": {"type": "string"},
        "space": {"type": "string"},
        "group": {"anyOf": [_NAT, {"type": "null"}]},
        "binding": {"anyOf": [_NAT, {"type": "null"}]},
    },
    "additionalProperties": False,
}

HEADER = {
    "type": "object",
    "required": ["record", "schema", "emu_version", "profile", "subgroup_size", "dispatch",
                 "workgroup_size", "entry", "shader", "overrides", "selection"],
    "properties": {
        "record": {"type": "string", "enum": ["header"]},
        "schema": {"type": "string", "enum": [SCHEMA_VERSION]},
        "emu_version": {"type": "string"},
        "profile": {"type": "string"},
        "subgroup_size": {"type": "integer", "minimum": 1},
        "dispatch": _XYZ,
        "workgroup_size": _XYZ,
        "entry": {"type": "string"},
        "shader": {
            "type": "object", "required": ["file", "sha256"],
            "properties": {"file": {"type": "string"},
                           "sha256": {"anyOf": [{"type": "string", "pattern": r"^[0-9a-f]{64}$"},
                                                {"type": "null"}]}},
            "additionalProperties": False,
        },
        "overrides": {"type": "object"},
        "selection": {
            "type": "object", "required": ["ops", "workgroups", "subgroups", "lanes"],
            "properties": {"ops": {"type": "array", "items": {"type": "string"}},
                           "workgroups": {"type": "string"}, "subgroups": {"type": "string"},
                           "lanes": {"type": "string"}},
            "additionalProperties": False,
        },
    },
    "additionalProperties": False,
}

EVENT = {
    "type": "object",
    "required": ["record", "seq", "clock", "op", "id", "loc", "scope", "workgroup", "mask"],
    "properties": {
        "record": {"type": "string", "enum": ["event"]},
        "seq": _NAT,
        "clock": _NAT,
        "op": {"type": "string"},
        "id": {"anyOf": [_NAT, {"type": "null"}]},
        "loc": {"anyOf": [{"type": "string", "pattern": r"^.+:\d+:\d+$"}, {"type": "null"}]},
        "scope": {"type": "string", "enum": ["subgroup", "workgroup"]},
        "workgroup": _XYZ,
        "subgroup": _NAT,
        "mask": _HEX,
        # cooperative values
        "matrix": MATRIX,
        "fragments": FRAGMENTS,
        "operands": {"type": "object", "properties": {"A": OPERAND, "B": OPERAND, "C": OPERAND},
                     "additionalProperties": False},
        "config": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "model": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "saturate": {"type": "boolean"},
        "attrs": {"type": "object"},
        "value": _INT,
        # memory
        "buffer": BUFFER,
        "layout": {"anyOf": [{"type": "string", "enum": ["row_major", "col_major"]}, {"type": "null"}]},
        "offset": _INT,
        "stride": _INT,
        "size": _NAT,
        "type": {"type": "string"},
        "lanes": {
            "type": "array",
            "items": {"type": "object", "required": ["lane"],
                      "properties": {"lane": _NAT, "offsets": {"type": "array", "items": _INT},
                                     "value": {"anyOf": [_NUMBER_OR_SPECIAL, {"type": "array"}]}},
                      "additionalProperties": False},
        },
        "kind": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
    "additionalProperties": False,
}

SUMMARY = {
    "type": "object",
    "required": ["record", "events", "instructions", "complete"],
    "properties": {"record": {"type": "string", "enum": ["summary"]}, "events": _NAT,
                   "instructions": _NAT, "complete": {"type": "boolean"}},
    "additionalProperties": False,
}

RECORDS = {"header": HEADER, "event": EVENT, "summary": SUMMARY}

# Chrome trace-event format (the JSON object form that ui.perfetto.dev and chrome://tracing open).
PERFETTO_EVENT = {
    "type": "object",
    "required": ["name", "ph", "pid", "tid"],
    "properties": {
        "name": {"type": "string"},
        "cat": {"type": "string"},
        "ph": {"type": "string", "enum": ["X", "M", "i", "B", "E"]},
        "ts": {"type": "number", "minimum": 0},
        "dur": {"type": "number", "minimum": 0},
        "pid": _NAT,
        "tid": _NAT,
        "args": {"type": "object"},
    },
    "additionalProperties": False,
}

PERFETTO = {
    "type": "object",
    "required": ["traceEvents"],
    "properties": {
        "traceEvents": {"type": "array", "items": PERFETTO_EVENT},
        "displayTimeUnit": {"type": "string", "enum": ["ms", "ns"]},
        "otherData": {"type": "object"},
    },
    "additionalProperties": False,
}


# ------------------------------------------------------------------------------- validator

def _type_ok(v, t: str) -> bool:
    if t == "object":
        return isinstance(v, dict)
    if t == "array":
        return isinstance(v, list)
    if t == "string":
        return isinstance(v, str)
    if t == "integer":
        return isinstance(v, int) and not isinstance(v, bool)
    if t == "number":     # JSON has no NaN or infinity
        return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) != float("inf")
    if t == "boolean":
        return isinstance(v, bool)
    if t == "null":
        return v is None
    raise ValueError(f"unknown schema type {t!r}")


def validate(value, schema: dict, path: str = "$") -> list[str]:
    """Every way `value` breaks `schema`, as 'path: what' strings ([] when it conforms)."""
    errs: list[str] = []
    if "anyOf" in schema:
        if not any(not validate(value, s, path) for s in schema["anyOf"]):
            errs.append(f"{path}: {json.dumps(value)[:60]} matches none of the allowed forms")
        return errs
    t = schema.get("type")
    if t is not None and not _type_ok(value, t):
        return [f"{path}: expected {t}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        errs.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if "pattern" in schema and isinstance(value, str) and not re.search(schema["pattern"], value):
        errs.append(f"{path}: {value!r} does not match {schema['pattern']}")
    if "minimum" in schema and isinstance(value, (int, float)) and value < schema["minimum"]:
        errs.append(f"{path}: {value} is below {schema['minimum']}")
    if isinstance(value, dict):
        for k in schema.get("required", ()):
            if k not in value:
                errs.append(f"{path}: missing {k!r}")
        props = schema.get("properties", {})
        for k, v in value.items():
            if k in props:
                errs.extend(validate(v, props[k], f"{path}.{k}"))
            elif schema.get("additionalProperties", True) is False:
                errs.append(f"{path}: unexpected property {k!r}")
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            errs.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errs.append(f"{path}: more than {schema['maxItems']} items")
        if "items" in schema:
            for i, v in enumerate(value):
                errs.extend(validate(v, schema["items"], f"{path}[{i}]"))
    return errs


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
        found = validate(rec, schema)
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
    """Every property name the schemas mention (the docs must describe each)."""
    names: set[str] = set()

    def walk(s):
        if isinstance(s, dict):
            names.update(s.get("properties", {}).keys())
            for v in s.values():
                walk(v)
        elif isinstance(s, list):
            for v in s:
                walk(v)
    walk(list(RECORDS.values()))
    return names
