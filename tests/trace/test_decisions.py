"""Traces and `emu explain` say which compiler decision rounded a scalar value (issue 29).

tests/trace/shaders/contract.wgsl and its GLSL twin contract.comp compute x * y + z, z / y + x,
1 / sqrt(y) and x / y; on nvidia-h200 the compiler model (emu/isa/compiler.py) makes them an fma,
fma(z, RCP(y), x), one RSQ and x * RCP(y); on the reference profile nothing contracts. Lane 0's
inputs are chosen so that each decision changes the bits: x = y = 1 + 2^-12, z = -(1 + 2^-11), so
x * y + z is 2^-24 fused and 0 rounded twice.

The golden files (tests/trace/golden/decisions.SHADER.PROFILE.txt) hold the trace's arithmetic
events, then `emu explain` of each for lanes 0 and 1. After an intended change, regenerate them:
    EMU_UPDATE_GOLDEN=1 python -m pytest tests/trace/test_decisions.py
"""
import json
import os
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.isa.compiler import DECISIONS
from emu.trace import explain_scalar
from emu.trace.explain import Trace
from emu.trace.schema import validate_records
from emu.trace.select import Selection
from emu.trace.tracer import MemorySink, Tracer, dumps

HERE = Path(__file__).parent
GOLDEN = HERE / "golden"
A = 1 + 2.0 ** -12
X = np.array([A, 1.5, 3.0, 0.1], np.float32)
Y = np.array([A, 7.0, 11.0, 3.0], np.float32)
Z = np.array([-(1 + 2.0 ** -11), 0.25, -1.0, 2.0], np.float32)
ARITH = ("add", "sub", "div", "fma", "inverseSqrt", "sqrt")


def _run(shader: str, profile: str):
    """(output, trace records) of the shader traced with --trace-ops other."""
    tr = Tracer(sink=MemorySink(), selection=Selection.parse(ops="other"))
    dev = emu.Device(profile, tracer=tr)
    mod = dev.create_shader_module((HERE / "shaders" / shader).read_text(), shader)
    bufs = {(0, 0): dev.create_buffer(X), (0, 1): dev.create_buffer(Y), (0, 2): dev.create_buffer(Z),
            (0, 3): dev.create_buffer(size=80)}
    dev.dispatch(dev.create_compute_pipeline(mod), bufs, (1, 1, 1))
    tr.end()
    return bufs[(0, 3)].read(np.float32), tr.records


def _arith(records):
    return [r for r in records if r.get("record") == "event" and r.get("type") == "f32"
            and (r.get("decision") or (r.get("attrs") or {}).get("fn") in ARITH)]


CASES = [(s, p) for s in ("contract.wgsl", "contract.comp") for p in ("nvidia-h200", "reference")] + \
    [("contract_more.wgsl", "nvidia-h200")]


@pytest.mark.parametrize("shader,profile", CASES)
def test_decisions_golden(shader, profile):
    _, recs = _run(shader, profile)
    assert validate_records(recs) == []
    trace = Trace(recs, shader)
    parts = [dumps(recs[0]["compiler"])]
    events = _arith(recs)
    parts += [dumps(e) for e in events]
    for e in events:
        for lane in (0, 1):
            parts.append(explain_scalar.render_text(explain_scalar.explain_scalar(trace, e, lane)).rstrip("\n"))
    text = "\n".join(parts) + "\n"
    path = GOLDEN / f"decisions.{shader}.{profile}.txt"
    if os.environ.get("EMU_UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert text == path.read_text(), f"{path.name} differs (EMU_UPDATE_GOLDEN=1 regenerates it)"


@pytest.mark.parametrize("shader", ["contract.wgsl", "contract.comp"])
def test_each_decision_is_explained_with_the_bits_the_run_wrote(shader):
    out, recs = _run(shader, "nvidia-h200")
    trace = Trace(recs, shader)
    decided = {e["decision"]: e for e in recs if e.get("decision")}
    assert sorted(decided) == ["fma", "fma-division", "rsqrt"]
    head = recs[0]
    assert head["scalar"] == "nvidia-sfu"
    assert head["compiler"] == {"translator": "tint" if shader.endswith(".wgsl") else None, "driver": "nvidia",
                                "fused_types": ["f32", "f16"], "divide_as_rcp": True}
    for name, first in ((n, k) for n, k in (("fma", 0), ("fma-division", 4), ("rsqrt", 8))):
        for lane in range(4):
            x = explain_scalar.explain_scalar(trace, decided[name], lane)
            assert x["decision"]["name"] == name and x["decision"]["evidence"] == DECISIONS[name]
            assert x["reproduces"]
            assert x["decided"]["bits"] == [f"0x{int(out[first + lane:first + lane + 1].view(np.uint32)[0]):08x}"]
    # lane 0: the fused multiply-add is 2^-24, rounded twice it would be 0
    x = explain_scalar.explain_scalar(trace, decided["fma"], 0)
    assert x["decided"]["value"] == [2.0 ** -24] and x["without"]["value"] == [0.0]
    assert x["exact"] == ["0x1p-24"]
    assert out[0] == np.float32(2.0 ** -24)
    text = explain_scalar.render_text(x)
    assert "decision fma: a * b + c rounded once" in text and "differs here" in text
    assert "Tint (Dawn), then the NVIDIA driver" in text if shader.endswith(".wgsl") else \
        "profile nvidia-h200: the NVIDIA driver" in text
    # the division lowered to RCP: the fma's middle operand is the SFU's reciprocal of y
    from emu.numerics import sfu
    x = explain_scalar.explain_scalar(trace, decided["fma-division"], 1)
    rcp = sfu.rcp(np.array([7.0], np.float32)).view(np.uint32)[0]
    assert x["operands"][1]["bits"] == [f"0x{int(rcp):08x}"]


def test_the_other_decisions_are_explained_and_reproduced():
    """factor, rounded-after-division and, of smoothstep as Tint writes it
    (t * (t * (3 - 2t))), square and fma (contract_more.wgsl through Dawn): each named with its
    evidence, its value redone from the trace's operands as the decision computes it."""
    out, recs = _run("contract_more.wgsl", "nvidia-h200")
    trace = Trace(recs, "contract_more.wgsl")
    decided = {e["decision"]: e for e in recs if e.get("decision")}
    # (0.044715 * x) * x + z is fma(x * x, 0.044715, z): square puts the constant outermost, then fma
    # (the bits fma-constant-factor gave)
    assert sorted(decided) == ["factor", "fma", "rounded-after-division", "square"]
    stored = {"factor": 4, "rounded-after-division": 16, "square": 0, "fma": None}
    for name, e in decided.items():
        for lane in range(4):
            x = explain_scalar.explain_scalar(trace, e, lane)
            assert x["decision"]["evidence"] == DECISIONS[name] and x["reproduces"], (name, lane)
            if stored[name] is None:            # 3 - 2t, not stored
                continue
            at = stored[name] + lane
            assert x["decided"]["bits"] == [f"0x{int(out[at:at + 1].view(np.uint32)[0]):08x}"], (name, lane)
    text = explain_scalar.render_text(explain_scalar.explain_scalar(trace, decided["factor"], 0))
    assert "decision factor: a * c + b * c as (a + b) * c" in text and "%" in text


def test_no_contraction_profile_has_no_decision():
    out, recs = _run("contract.wgsl", "reference")
    assert recs[0]["compiler"] is None and recs[0]["scalar"] == "ieee"
    assert not any("decision" in r for r in recs)
    assert out[0] == np.float32(0.0)                 # rounded twice
    trace = Trace(recs, "contract.wgsl")
    add = next(e for e in recs if (e.get("attrs") or {}).get("fn") == "add" and e.get("type") == "f32")
    text = explain_scalar.render_text(explain_scalar.explain_scalar(trace, add, 0))
    assert "no compiler decision: add as written, by the scalar model 'ieee'" in text
    assert "contract nothing" in text


def test_every_decision_has_an_explanation():
    """A decision the compiler model adds needs its rule in explain_scalar.RULES (else explain
    can only name it)."""
    assert set(DECISIONS) - {"inline", "promote", "number"} <= set(explain_scalar.RULES)


def test_explain_scalar_from_the_command_line(cli, tmp_path):
    for name, arr in (("x", X), ("y", Y), ("z", Z)):
        np.save(tmp_path / f"{name}.npy", arr)
    trace = tmp_path / "t.jsonl"
    code, out, err = cli("run", HERE / "shaders" / "contract.wgsl", "--profile", "nvidia-h200", "--dispatch", "1",
                         "--buffer", f"0:0={tmp_path / 'x.npy'}", "--buffer", f"0:1={tmp_path / 'y.npy'}",
                         "--buffer", f"0:2={tmp_path / 'z.npy'}", "--buffer", "0:3=zeros:16:f32",
                         "--trace", trace, "--trace-ops", "builtin", "-q")
    assert code == 0, err
    fma = next(json.loads(l) for l in trace.read_text().splitlines() if '"decision":"fma"' in l)
    code, out, err = cli("explain", trace, "--value", fma["id"], "--lane", "0")
    assert code == 0, err
    assert "decision fma: a * b + c rounded once" in out and "0x33800000 5.960464477539063e-08" in out
    code, out, err = cli("explain", trace, "--op", fma["seq"], "--format", "json")
    assert code == 0 and json.loads(out)["decision"]["name"] == "fma" and json.loads(out)["lane"] == 0
    for argv, text in ((["--value", 9999], "no event of value %9999"),
                       (["--op", fma["seq"], "--lane", 31], "no values of lane 31"),
                       (["--op", fma["seq"], "--value", fma["id"]], "not both"),
                       (["--lane", 0], "say what to explain")):
        code, out, err = cli("explain", trace, *argv)
        assert code in (1, 2) and text in err and "Traceback" not in err, (argv, err)
