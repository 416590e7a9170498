"""`emu explain` reproduces the emulated bits of the element it explains, from the trace alone."""
import json

import numpy as np
import pytest

from emu.trace.explain import Trace, explain_event, render_text

from .conftest import gemm_inputs, traced


@pytest.mark.parametrize("kernel,profile,sg", [("gemm_wgpu", "nvidia-h200", None),
                                               ("gemm_dawn", "amd-rdna3", None),
                                               ("gemm_dawn", "amd-rdna3", 64),
                                               ("gemm_dawn", "amd-cdna3", None),
                                               ("gemm_wgpu", "reference", None),
                                               ("gemm_wgpu", "nvidia-ampere", None)])
def test_explain_reproduces_emulated_bits(kernel, profile, sg):
    out, recs = traced(kernel, profile, subgroup_size=sg)
    t = Trace(recs)
    rng = np.random.default_rng(5)
    for ev in t.mma_events()[::3]:
        for row, col in rng.integers(0, 16, (6, 2)).tolist():
            x = explain_event(t, ev, row, col)
            assert x["reproduces"], (ev["seq"], row, col)
            d = next(e for f in ev["fragments"] for e in f["elements"] if (e["row"], e["col"]) == (row, col))
            assert x["emulated"]["bits"] == d["bits"] == x["model_steps"]["result"]["bits"]
            assert len(x["terms"]) == 16 and all(term["a"]["lanes"] and term["b"]["lanes"] for term in x["terms"])
    # subgroup 0 of workgroup (0,0,0) computes the tile C[0:16, 0:16] first: its last K step
    # (size 32: two steps of 16) produced that tile of the output
    first_tile = [e for e in t.mma_events() if e["workgroup"] == [0, 0, 0] and e["subgroup"] == 0][:2]
    x = explain_event(t, first_tile[-1], 2, 3)
    assert int(x["emulated"]["bits"], 16) == int(out[2, 3].view(np.uint32))
    json.dumps(x)


def test_explain_text_names_lanes_products_and_rounding():
    a, b = gemm_inputs()
    _, recs = traced("gemm_wgpu", "nvidia-h200", a=a, b=b)
    t = Trace(recs)
    ev = t.mma_events()[0]
    x = explain_event(t, ev, 0, 1)
    text = render_text(x)
    assert "coop_mma" in text and "nvidia-hopper" in text and "reproduced" in text
    assert "correctly rounded" in text and "exact product" in text
    # A[0, k] is held by the lane the measured map gives it, and the exact product is shown
    assert x["terms"][0]["a"]["lanes"] == ["0.0"] and x["terms"][1]["a"]["lanes"] == ["0.1"]
    assert x["terms"][0]["a"]["value"] == float(a[0, 0]) and x["terms"][0]["b"]["value"] == float(b[0, 1])
    assert float.fromhex(x["terms"][0]["product"]) == float(a[0, 0]) * float(b[0, 1])
    assert x["model_steps"]["exact"]["correctly_rounded_bits"].startswith("0x")


def test_explain_with_specials_and_lane_filtered_traces():
    from emu.errors import HostError
    a, b = gemm_inputs(specials=True)
    _, recs = traced("gemm_wgpu", "reference", a=a, b=b)
    t = Trace(recs)
    x = explain_event(t, t.mma_events()[0], 0, 1)
    assert x["reproduces"] and x["model_steps"]["result"]["value"] in ("nan", "inf", "-inf")
    _, part = traced("gemm_wgpu", "reference", lanes="0-3")
    tp = Trace(part)
    with pytest.raises(HostError, match="drop --trace-lanes"):
        explain_event(tp, tp.mma_events()[0], 15, 15)


def test_explain_integer_multiply_add():
    import emu
    from emu.trace.schema import validate_records
    from emu.trace.tracer import MemorySink, Tracer
    from .conftest import HERE
    tr = Tracer(sink=MemorySink())
    dev = emu.Device("reference", 32, tracer=tr)
    mod = dev.create_shader_module((HERE / "shaders" / "gemm_i8.wgsl").read_text(), "gemm_i8.wgsl")
    pipe = dev.create_compute_pipeline(mod)
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (16, 16)).astype(np.int8)
    b = rng.integers(-128, 128, (16, 16)).astype(np.int8)
    bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): dev.create_buffer(size=1024)}
    dev.dispatch(pipe, bufs, (1, 1, 1))
    tr.end()
    c = bufs[(0, 2)].read(np.int32).reshape(16, 16)
    assert (c == a.astype(np.int64) @ b.astype(np.int64) + 5).all()
    assert validate_records(tr.records) == []
    t = Trace(tr.records)
    load_a = next(e for e in tr.records if e.get("op") == "coop_load" and e["matrix"]["role"] == "A")
    assert load_a["matrix"]["type"] == "i8" and load_a["size"] == 1
    el = load_a["fragments"][1]["elements"][0]
    assert el["value"] == int(a[el["row"], el["col"]]) and len(el["bits"]) == 4
    for row, col in ((0, 0), (2, 3), (15, 7)):
        x = explain_event(t, t.mma_events()[-1], row, col)
        assert x["reproduces"] and x["model_steps"]["result"]["value"] == int(c[row, col])
        assert [int(term["product"]) for term in x["terms"]] == [int(a[row, k]) * int(b[k, col]) for k in range(16)]
    assert "wrapping" in render_text(x)
