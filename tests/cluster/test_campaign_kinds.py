"""`emu campaign diff` and `emu campaign fuzz` jobs through a campaign (LocalCluster of 2): the
same outcomes as the job run in this process, split into tasks as the campaign splits them. The
diff campaign needs Dawn's adapter (skipped, saying why, on a machine without Vulkan)."""
from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from emu.cluster import Cluster, campaign
from emu.cluster.jobs import fuzz_job, summary

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.emu_hardware("dawn")
def test_diff_campaign(tmp_path):
    vecadd = str(ROOT / "tests/shaders/vecadd.wgsl")
    diff = [(f"vecadd#auto#seed{s}", {"path": vecadd, "dispatch": [2, 1, 1], "seed": s, "profile": "auto",
                                      "backend": "dawn"}, {"scope": "auto"}) for s in (1, 2)]
    with Cluster("local:2") as cl:
        d = campaign.run(cl, "diff", diff, tmp_path / "d.jsonl", 120.0, stream=io.StringIO())
    assert [r["class"] for r in d] == ["identical", "identical"]
    table = summary("diff", d, "t").splitlines()
    assert table[2].split() == ["auto", "2", "0", "0", "0", "0", "0", "2", "100.0%"]


def test_fuzz_campaign(tmp_path):
    fuzz = {"root": str(ROOT), "tint": None, "seed": 3, "targets": ["npy", "trace", "ir"], "timeout": 10.0}
    chunks = [(f"seed3:{a}-{a + 9}", dict(fuzz, first=a, end=a + 10), {"scope": "all"}) for a in (1, 11, 21)]
    with Cluster("local:2") as cl:
        f = campaign.run(cl, "fuzz", chunks, tmp_path / "f.jsonl", 300.0, stream=io.StringIO(), chunk=1)
    sys.path.insert(0, str(ROOT))
    whole = fuzz_job(dict(fuzz, first=1, end=31))         # the same 30 mutants in one piece, here
    total = {}
    for r in f:
        for k, n in r["counts"].items():
            total[k] = total.get(k, 0) + n
    assert total == whole["counts"] and sum(total.values()) == 30
    assert [r["class"] for r in f] == ["clean"] * 3 and whole["class"] == "clean"
