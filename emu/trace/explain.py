"""`emu explain`: how one output element of a traced multiply-add came to be.

From the trace alone (the mma record's operands, inline or by reference to earlier records):
A's row and B's column with the lanes that held each value, every exact product, the profile's
model step by step (emu.numerics.mma.explain_element: alignment, truncation, block sums,
roundings), the result bits beside the bits the emulator produced, and the correctly rounded
value of the exact sum.
"""
from __future__ import annotations

import json

import numpy as np

from ..errors import HostError
from ..numerics import mma_ref as _ref
from ..numerics.dtypes import INTS
from ..numerics.mma import explain_element
from . import fmt
from .schema import SCHEMA_VERSION, read_jsonl, validate_records

_MMA = ("coop_mma", "coop_mul")


class Trace:
    """A JSON-lines trace read back: header, events by seq, summary."""

    def __init__(self, records: list[dict], name: str = "<trace>"):
        self.name = name
        self.records = records
        self.header = records[0] if records and records[0].get("record") == "header" else {}
        self.events = [r for r in records if r.get("record") == "event"]
        self.by_seq = {e["seq"]: e for e in self.events}

    @classmethod
    def load(cls, path) -> "Trace":
        try:
            records = read_jsonl(path)
        except OSError as e:
            raise HostError(f"cannot read the trace '{path}': {e.strerror}", hint="check the path") from None
        except ValueError as e:
            raise HostError(f"'{path}' is not a JSON-lines trace ({e})",
                            hint="write one with `emu run ... --trace FILE.jsonl` (the perfetto format "
                                 "cannot be explained)") from None
        if not all(isinstance(r, dict) for r in records):
            raise HostError(f"'{path}' is not an emu trace: every line must be a JSON object",
                            hint="write one with `emu run ... --trace FILE.jsonl`")
        header = records[0] if records and records[0].get("record") == "header" else {}
        schema = header.get("schema")
        if schema != SCHEMA_VERSION:
            raise HostError(f"'{path}' is not an emu trace of schema {SCHEMA_VERSION} (found {schema!r})",
                            hint="regenerate it with this emu's `emu run --trace`")
        problems = validate_records(records)
        if problems:
            more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
            raise HostError(f"'{path}' is not a valid emu trace: {problems[0]}{more}",
                            hint="regenerate it with `emu run --trace`; a trace edited by hand must keep "
                                 "the schema (emu/docs)")
        return cls(records, str(path))

    def mma_events(self) -> list[dict]:
        return [e for e in self.events if e["op"] in _MMA]


def _collect(fragments, matrix, what: str):
    """(bits matrix as object array with None where no lane was traced, owners (r, c) -> ['l.i'])."""
    rows, cols = matrix["rows"], matrix["cols"]
    if rows * cols > 1 << 16:
        raise HostError(f"{what}: a {rows}x{cols} matrix is larger than any matrix unit's",
                        hint="the trace is damaged: regenerate it with `emu run --trace`")
    bits = np.full((rows, cols), None, dtype=object)
    owners: dict = {}
    width = 8 * np.dtype(fmt.BITS[matrix["type"]]).itemsize if matrix.get("type") in fmt.BITS else 64
    for entry in fragments:
        lane = entry["lane"]
        for i, el in enumerate(entry["elements"]):
            r, c = el["row"], el["col"]
            if not (0 <= r < rows and 0 <= c < cols):
                raise HostError(f"{what}: lane {lane} element {i} is at ({r}, {c}), outside the "
                                f"{rows}x{cols} matrix", hint="the trace is damaged: regenerate it")
            try:
                b = int(el["bits"], 16)
            except ValueError:
                raise HostError(f"{what}: lane {lane} element {i} has bits {el['bits'][:40]!r}, not hex "
                                f"digits", hint="the trace is damaged: regenerate it") from None
            if b < 0 or b >> width:
                raise HostError(f"{what}: lane {lane} element {i} has bits {el['bits'][:40]!r}, wider than "
                                f"{matrix.get('type')}'s {width} bits", hint="the trace is damaged: regenerate it")
            if bits[r, c] is not None and bits[r, c] != b:
                raise HostError(f"{what}: element ({r}, {c}) has two different values in the trace "
                                f"({owners[(r, c)][0]} and lane {lane})")
            bits[r, c] = b
            owners.setdefault((r, c), []).append(f"{lane}.{i}")
    return bits, owners


def _operand(trace: Trace | None, event: dict, role: str):
    op = event["operands"].get(role)
    if op is None:
        return None
    if "ref" in op:
        if trace is None or op["ref"] not in trace.by_seq:
            raise HostError(f"operand {role} of event {event['seq']} refers to event {op['ref']}, "
                            f"which is not in the trace")
        src = trace.by_seq[op["ref"]]
        _needs(src, ("matrix", "fragments"), f"event {op['ref']} (operand {role} of event {event['seq']})")
        return src["matrix"], src["fragments"], op["ref"]
    _needs(op, ("matrix", "fragments"), f"operand {role} of event {event['seq']}")
    return op["matrix"], op["fragments"], None


def _needs(record: dict, keys, what: str):
    """Fields the schema leaves optional (not every event holds matrices) but explaining needs."""
    for k in keys:
        if k not in record:
            raise HostError(f"{what} has no '{k}', so it cannot be explained",
                            hint="the trace is damaged or was written without matrix contents: "
                                 "regenerate it with `emu run --trace`")


def _need(bits, owners, cells, what, event):
    missing = [rc for rc in cells if bits[rc] is None]
    if missing:
        r, c = missing[0]
        raise HostError(f"the trace does not hold {what}[{r}, {c}] of event {event['seq']} "
                        f"({len(missing)} needed elements missing)",
                        hint="trace every lane (drop --trace-lanes) to explain an element")


def explain_event(trace: Trace | None, event: dict, row: int, col: int) -> dict:
    """Everything about output element (row, col) of a traced multiply-add, as JSON-able data."""
    if event["op"] not in _MMA:
        raise HostError(f"event {event['seq']} is a {event['op']}, not a multiply-add",
                        hint="pick a coop_mma or coop_mul event (see the trace's \"op\" fields)")
    _needs(event, ("matrix", "fragments", "operands"), f"event {event['seq']}")
    for role in ("A", "B"):
        if role not in event["operands"]:
            raise HostError(f"event {event['seq']} has no operand {role}",
                            hint="the trace is damaged: regenerate it with `emu run --trace`")
    d_mat = event["matrix"]
    M, N = d_mat["rows"], d_mat["cols"]
    if not (0 <= row < M and 0 <= col < N):
        raise HostError(f"element ({row}, {col}) is outside the {M}x{N} result",
                        hint=f"pick ROW in 0..{M - 1} and COL in 0..{N - 1}")
    a_mat, a_fr, a_ref = _operand(trace, event, "A")
    b_mat, b_fr, b_ref = _operand(trace, event, "B")
    K = a_mat["cols"]
    A, a_own = _collect(a_fr, a_mat, "A")
    B, b_own = _collect(b_fr, b_mat, "B")
    D, d_own = _collect(event["fragments"], d_mat, "the result")
    _need(A, a_own, [(row, k) for k in range(K)], "A", event)
    _need(B, b_own, [(k, col) for k in range(K)], "B", event)
    _need(D, d_own, [(row, col)], "D", event)
    ta, tb, td = a_mat["type"], b_mat["type"], d_mat["type"]
    c = _operand(trace, event, "C") if "C" in event["operands"] else None
    if c is not None:
        c_mat, c_fr, c_ref = c
        C, c_own = _collect(c_fr, c_mat, "C")
        _need(C, c_own, [(row, col)], "C", event)
        tc, c_bits, c_lanes = c_mat["type"], C[row, col], c_own[(row, col)]
    else:
        tc, c_bits, c_lanes, c_ref = td, 0, [], None
    a_row = fmt.decode_bits([A[row, k] for k in range(K)], ta)
    b_col = fmt.decode_bits([B[k, col] for k in range(K)], tb)
    c_val = fmt.decode_bits([c_bits], tc)[0]
    model = event.get("model")
    if model is None:
        raise HostError(f"event {event['seq']} names no numeric model (its config is not in the profile)")
    saturate = bool(event.get("saturate"))
    if ta != tb and ta in INTS:
        # mixed-signedness integer configs: exact products of the two signed values
        a_row, b_col = a_row.astype(np.int64), b_col.astype(np.int64)
        info = _int_explain(a_row, b_col, int(c_val), td, saturate)
    else:
        info = explain_element(model, a_row, b_col, c_val, td, saturate)
    terms = []
    for k in range(K):
        terms.append({"k": k,
                      "a": {"bits": fmt.bits_fmt(ta).format(A[row, k]), "value": fmt.json_value(a_row[k]),
                            "lanes": a_own[(row, k)]},
                      "b": {"bits": fmt.bits_fmt(tb).format(B[k, col]), "value": fmt.json_value(b_col[k]),
                            "lanes": b_own[(k, col)]},
                      "product": _product(a_row[k], b_col[k], ta)})
    emulated = fmt.bits_fmt(td).format(D[row, col])
    result_bits = info["result"]["bits"]
    return {
        "trace": trace.name if trace is not None else None,
        "event": {k: event.get(k) for k in ("seq", "op", "id", "loc", "workgroup", "subgroup",
                                             "config", "model", "saturate")},
        "element": [row, col],
        "operand_events": {"A": a_ref, "B": b_ref, "C": c_ref},
        "types": {"A": ta, "B": tb, "C": tc, "D": td},
        "terms": terms,
        "c": {"bits": fmt.bits_fmt(tc).format(c_bits), "value": fmt.json_value(c_val), "lanes": c_lanes},
        "model_steps": info,
        "emulated": {"bits": emulated, "value": fmt.json_value(fmt.decode_bits([D[row, col]], td)[0]),
                     "lanes": d_own[(row, col)]},
        "reproduces": int(result_bits, 16) == int(emulated, 16),
    }


def explain_output(trace: Trace, row: int, col: int, binding=None) -> dict:
    """explain_event for output element (row, col): the last cooperative store that wrote it (the
    output read as a matrix of the store's stride per row, per column for a column-major store),
    and the last multiply-add of that subgroup before it whose result holds the stored bits."""
    stores = [e for e in trace.events if e["op"] == "coop_store" and "buffer" in e and "stride" in e
              and (binding is None or (e["buffer"].get("group"), e["buffer"].get("binding")) == tuple(binding))]
    targets = sorted({(e["buffer"]["group"], e["buffer"]["binding"]) for e in stores})
    if not stores:
        raise HostError(f"the trace '{trace.name}' holds no cooperative store"
                        + (f" to binding {binding[0]}:{binding[1]}" if binding else ""),
                        hint="trace with the default --trace-ops (coop), or use --element ROW,COL of a "
                             "multiply-add's tile")
    if len(targets) > 1:
        raise HostError(f"cooperative stores went to {len(targets)} bindings ("
                        + ", ".join(f"{g}:{b}" for g, b in targets) + ")", hint="name one with --binding G:B")
    found = None
    for e in reversed(stores):
        m, stride, off = e["matrix"], int(e["stride"]), int(e["offset"])
        row_major = e.get("layout", "row_major") == "row_major"
        idx = (row * stride + col if row_major else col * stride + row) - off
        if stride <= 0 or idx < 0:
            continue
        major, minor = divmod(idx, stride)
        r, c = (major, minor) if row_major else (minor, major)
        if r < m["rows"] and c < m["cols"]:
            found = (e, r, c)
            break
    if found is None:
        raise HostError(f"no cooperative store in the trace wrote output element ({row}, {col}) of binding "
                        f"{targets[0][0]}:{targets[0][1]}",
                        hint="check ROW,COL against the output's shape (the traced workgroups' stores cover "
                             "only their tiles: --trace-workgroups)")
    store, r, c = found
    S, owners = _collect(store["fragments"], store["matrix"], f"event {store['seq']}")
    _need(S, owners, [(r, c)], "the stored tile", store)
    for ev in reversed(trace.mma_events()):
        if ev["seq"] < store["seq"] and ev["workgroup"] == store["workgroup"] and \
                ev.get("subgroup") == store.get("subgroup") and "fragments" in ev:
            D, _ = _collect(ev["fragments"], ev["matrix"], f"event {ev['seq']}")
            if D.shape == S.shape and D[r, c] == S[r, c]:
                x = explain_event(trace, ev, r, c)
                x["output"] = {"element": [row, col], "binding": list(targets[0]),
                               "name": store["buffer"].get("name"), "store_event": store["seq"],
                               "store_loc": store.get("loc"), "tile_element": [r, c]}
                return x
    raise HostError(f"output element ({row}, {col}) was stored by event {store['seq']} (tile element ({r}, {c})), "
                    f"but no traced multiply-add of that subgroup made those bits",
                    hint="trace the coop ops of that workgroup (--trace-ops coop)")


def _int_explain(a, b, c, rt, saturate):
    trace: dict = {}
    r = _ref.int_element([int(x) for x in a], [int(x) for x in b], c, rt, saturate, trace)
    return {"model": "integer", "result_type": rt,
            "rule": "integer: exact products and sum, then + C " + ("saturating" if saturate else "wrapping mod 2^32"),
            "steps": trace.get("steps", []), "result": {"value": r, "bits": f"0x{r & 0xFFFFFFFF:08x}"}}


def _product(a, b, tname) -> str:
    if tname in INTS:
        return str(int(a) * int(b))
    f = _ref.FORMATS[tname]
    x = _ref.decode(int(np.asarray(a).view(fmt.BITS_OF[tname])), f)
    y = _ref.decode(int(np.asarray(b).view(fmt.BITS_OF[tname])), f)
    sp = _ref.product_special(x, y)
    if sp is not None:
        return "nan" if sp == _ref.NAN else ("-inf" if sp[1] else "inf")
    if x.cls == _ref.ZERO or y.cls == _ref.ZERO:
        return "-0x0p+0" if x.neg != y.neg else "0x0p+0"
    return _ref.dyadic_hex(x.neg != y.neg, x.mant * y.mant, x.lsb + y.lsb)


def pick_event(trace: Trace, seq: int | None) -> dict:
    if seq is None:
        mm = trace.mma_events()
        if not mm:
            raise HostError(f"the trace '{trace.name}' holds no multiply-add",
                            hint="trace with the default --trace-ops (coop) or include coop_mma")
        return mm[-1]
    ev = trace.by_seq.get(seq)
    if ev is None:
        last = trace.events[-1]["seq"] if trace.events else None
        raise HostError(f"the trace '{trace.name}' has no event {seq}"
                        + (f" (events 0..{last})" if last is not None else " (it has no events)"),
                        hint="--op takes the \"seq\" of an event")
    return ev


# ------------------------------------------------------------------------------- rendering

def _val(v) -> str:
    return v if isinstance(v, str) else repr(v)


def render_text(x: dict) -> str:
    ev = x["event"]
    r, c = x["element"]
    t = x["types"]
    out = []
    wg = ", ".join(map(str, ev["workgroup"]))
    seq = f"event {ev['seq']}, " if ev.get("seq") is not None else ""     # none: --explain without --trace
    o = x.get("output")
    if o is not None:
        orow, ocol = o["element"]
        out.append(f"output {o['name']}[{orow},{ocol}] (binding {o['binding'][0]}:{o['binding'][1]}) was stored by "
                   f"event {o['store_event']} at {o['store_loc']} as tile element D[{r},{c}] of:")
    out.append(f"{ev['op']} %{ev['id']} at {ev['loc']} ({seq}workgroup ({wg}), subgroup {ev['subgroup']})")
    out.append(f"config {ev['config']}, numeric model '{ev['model']}'"
               + (", saturating" if ev.get("saturate") else ""))
    has_c = x["c"]["lanes"] != [] or x["operand_events"]["C"] is not None or ev["op"] == "coop_mma"
    out.append(f"D[{r},{c}] (tile element) = sum over k of A[{r},k] * B[k,{c}]" + (f" + C[{r},{c}]" if has_c else ""))
    refs = ", ".join(f"{k} from event {v}" for k, v in x["operand_events"].items() if v is not None)
    if refs:
        out.append(f"  (operands: {refs})")
    out.append("")
    w = max(len(_val(term["a"]["value"])) for term in x["terms"])
    wb = max(len(_val(term["b"]["value"])) for term in x["terms"])
    out.append(f"  {'k':>3}  {'A[' + str(r) + ',k]':<{w + 9}} {'held by':<12} "
               f"{'B[k,' + str(c) + ']':<{wb + 9}} {'held by':<12} exact product")
    for term in x["terms"]:
        a, b = term["a"], term["b"]
        out.append(f"  {term['k']:>3}  {a['bits']:<8} {_val(a['value']):<{w}} {_lanes(a['lanes']):<12} "
                   f"{b['bits']:<8} {_val(b['value']):<{wb}} {_lanes(b['lanes']):<12} {term['product']}")
    if has_c:
        out.append(f"  C[{r},{c}] = {x['c']['bits']} {_val(x['c']['value'])}  held by {_lanes(x['c']['lanes'])} "
                   f"({t['C']})")
    out.append("")
    info = x["model_steps"]
    out.extend(_steps(info))
    out.append("")
    res = info["result"]
    emu_ = x["emulated"]
    out.append(f"  model result     {res['bits']}  {_val(res['value'])}  ({t['D']})")
    out.append(f"  emulated D[{r},{c}]  {emu_['bits']}  {_val(emu_['value'])}  held by {_lanes(emu_['lanes'])}  "
               + ("(same bits: reproduced)" if x["reproduces"] else "(DIFFERENT bits: not reproduced)"))
    ex = info.get("exact")
    if ex:
        approx = f" ~ {ex['approx']}" if "approx" in ex else ""
        out.append(f"  exact sum        {ex['value']}{approx}")
        out.append(f"  correctly rounded {ex['correctly_rounded_bits']}  {ex['correctly_rounded_value']}  "
                   + ("(the model's result is correctly rounded)" if info.get("matches_correctly_rounded")
                      else "(the model's result differs from correct rounding)"))
    return "\n".join(out) + "\n"


def _lanes(lanes) -> str:
    if not lanes:
        return "-"
    return ",".join(lanes[:2]) + ("..." if len(lanes) > 2 else "")


def _steps(info: dict) -> list[str]:
    out = [f"model '{info['model']}': {info['rule']}"]
    p = info.get("params")
    if p:
        out.append("  " + ", ".join(f"{k}={v}" for k, v in p.items() if v not in (None, 0) or k == "frac_bits"))
    for blk in info.get("blocks", []):
        k0, k1 = blk["k"]
        line = f"  block k={k0}..{k1 - 1}: accumulator in {blk.get('accumulator_in')}"
        if "product_alignment_exponent" in blk:
            line += f", products aligned to 2^{blk['product_alignment_exponent']}"
        if "alignment_exponent" in blk:
            line += f", alignment exponent {blk['alignment_exponent']}, quantum 2^{blk.get('quantum_exponent')}"
        out.append(line)
        for tm in blk.get("terms", []):
            if "kept" not in tm:
                out.append(f"    k={tm['k']:<3} exact {tm['exact']:<22} {tm.get('note', '')}")
                continue
            lost = "  (bits lost)" if tm.get("bits_lost") else ""
            out.append(f"    k={tm['k']:<3} exact {tm['exact']:<22} kept {tm['kept']}{lost}")
        if "product_sum_requantized" in blk:
            out.append(f"    product sum requantized: {blk['product_sum_requantized']} quanta")
        rnd = blk.get("rounded")
        if isinstance(rnd, dict):
            out.append(f"    sum {blk.get('sum')} -> rounded {rnd.get('mode')}: {rnd.get('bits')} {rnd.get('value')}")
        else:
            out.append(f"    sum {blk.get('sum')}" + (f" -> {rnd}" if rnd is not None else ""))
        extra = {k: v for k, v in blk.items() if k not in ("k", "accumulator_in", "product_alignment_exponent",
                 "alignment_exponent", "quantum_exponent", "terms", "product_sum_requantized", "sum",
                 "sum_quanta", "rounded")}
        if extra:
            out.append("    " + ", ".join(f"{k}={v}" for k, v in extra.items()))
    for st in info.get("steps", []):
        out.append("  " + ", ".join(f"{k}={v}" for k, v in st.items()))
    return out


def render(x: dict, format: str = "text") -> str:
    if format == "json":
        return json.dumps(x, indent=1) + "\n"
    return render_text(x)
