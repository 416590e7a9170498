"""The tracer keeps fragments as arrays (emu.trace.tracer.Fragments) until a sink reads or writes
them: the lists they expand to and the JSON text the file sink writes for them must be exactly
what the schema's lists give, for every element type, padded lanes, missing offsets and values
JSON has no number for."""
import copy
import types

import numpy as np
import pytest

from emu.numerics.dtypes import BITS, NP
from emu.trace.tracer import Fragments, MemorySink, _Layout, dumps, dumps_record, expand


def _lane_map(sg, e, rng):
    coords = rng.integers(0, 16, (sg, e, 2))
    valid = rng.random((sg, e)) < 0.8
    valid[0] = True                                   # one lane without padding
    valid[1] = False                                  # one lane with no element at all
    coords[~valid] = -1
    return types.SimpleNamespace(coords=coords, valid=valid)


@pytest.mark.parametrize("tname", ["f16", "bf16", "f32", "i32", "u32", "i8", "u8"])
def test_lists_and_json_text_agree(tname):
    rng = np.random.default_rng(7)
    sg, e = 8, 6
    lay = _Layout(_lane_map(sg, e, rng))
    raw = rng.integers(0, 1 << (8 * BITS[tname].itemsize), (sg, e), dtype=np.uint64).astype(BITS[tname])
    if tname in ("f16", "bf16", "f32"):
        specials = {"f16": [0x7C00, 0xFC00, 0x7E00, 0x8000], "bf16": [0x7F80, 0xFF80, 0x7FC0, 0x8000],
                    "f32": [0x7F800000, 0xFF800000, 0x7FC00000, 0x80000000]}[tname]
        raw[0, :4] = specials                         # inf, -inf, nan, -0
    vals = raw.view(NP[tname])
    offsets = rng.integers(-1, 1000, (sg, e))
    for lanes, offs in ((list(range(sg)), offsets), ([0, 1, 5], None), (range(sg), offsets)):
        frag = Fragments(lay, vals.copy(), tname, lanes, offs)
        rec = {"record": "event", "seq": 3, "fragments": frag,
               "operands": {"A": {"id": 1, "fragments": Fragments(lay, vals.copy(), tname, lanes, None)},
                            "B": {"id": 2, "ref": 0}}}
        text = dumps_record(rec)                     # does not change rec
        plain = expand(copy.copy(rec) | {"operands": {k: dict(o) for k, o in rec["operands"].items()}})
        assert text == dumps(plain)
        for entry in plain["fragments"]:
            l = entry["lane"]
            keep = np.flatnonzero(lay.lm.valid[l])
            assert [(x["row"], x["col"]) for x in entry["elements"]] == [tuple(c) for c in lay.lm.coords[l][keep]]
            assert [int(x["bits"], 16) for x in entry["elements"]] == raw[l][keep].tolist()
            if offs is not None:
                assert entry["offsets"] == [o if o >= 0 else None for o in offs[l][keep].tolist()]
            else:
                assert "offsets" not in entry


def test_memory_sink_gives_plain_lists():
    rng = np.random.default_rng(1)
    lay = _Layout(_lane_map(4, 2, rng))
    vals = rng.standard_normal((4, 2)).astype(np.float16)
    sink = MemorySink()
    sink.write({"record": "event", "fragments": Fragments(lay, vals, "f16", range(4), None)})
    first = sink.records[0]["fragments"]
    assert type(first) is list and first[0]["elements"][0]["value"] == float(vals[0, 0])
    sink.write({"record": "event", "fragments": Fragments(lay, vals, "f16", [2], None)})
    assert [type(r["fragments"]) for r in sink.records] == [list, list]
    assert sink.records[0]["fragments"] is first
