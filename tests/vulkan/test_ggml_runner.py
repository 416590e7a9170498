"""bench/vulkan_icd_sample.py's chunked run: an op's cases smallest first, a few to a process, within
a time budget (test-backend-ops itself is not started here: run_op is replaced by a recorder)."""
import io
import json

from bench import vulkan_icd_sample as sample

CASES = ["type=f32,ne=[1024,64,64,1]", "type=f16,ne=[2,3,5,7]", "type=f16,ne=[10,10,10,1]"]


def test_chunks_run_smallest_first(monkeypatch):
    calls = []
    monkeypatch.setattr(sample, "run_op", lambda tbo, env, op, cs, fam, t, out: calls.append((op, cs, fam, t)))
    sample.run_chunked(None, {}, "CONT", CASES, "khr", 150, io.StringIO(), 2, 1000)
    assert calls == [("CONT", ["type=f16,ne=[2,3,5,7]", "type=f16,ne=[10,10,10,1]"], "khr", 150),
                     ("CONT", ["type=f32,ne=[1024,64,64,1]"], "khr", 150)]


def test_cases_past_the_budget_are_not_reached(monkeypatch):
    monkeypatch.setattr(sample, "run_op", lambda *a: (_ for _ in ()).throw(AssertionError("ran")))
    out = io.StringIO()
    sample.run_chunked(None, {}, "CONT", CASES, "nv2", 150, out, 2, 10)
    assert [json.loads(ln) for ln in out.getvalue().splitlines()] == [
        dict(op="CONT", family="nv2", case=c, result="not reached")
        for c in ("type=f16,ne=[2,3,5,7]", "type=f16,ne=[10,10,10,1]", "type=f32,ne=[1024,64,64,1]")]
