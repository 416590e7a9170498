"""Subgroup float reductions and scans on nvidia-h200 replay the H200's (recorded through Dawn,
emu/hw/subgroup_record.py; tests/data/hw/h200/subgroups.npz holds the first 8,192 invocations of
each of the 80 cases): whole subgroups reduce as a butterfly, partial ones as a scan over the
active lanes' ranks; the reference profile keeps its butterfly over all lanes."""
from pathlib import Path

import numpy as np

from emu.hw import subgroup_record as sr
from emu.numerics import reduce

DATA = Path(__file__).resolve().parents[1] / "data" / "hw" / "h200" / "subgroups.npz"


def _recording():
    with np.load(DATA) as z:
        return {k: z[k] for k in z.files}


def test_every_recorded_subgroup_result_is_reproduced():
    rows = sr.compare(_recording(), "nvidia-h200")
    assert len(rows) == len(sr.cases()) == 80
    bad = {k: r for k, r in rows.items() if r["equal"] != r["n"]}
    assert not bad, bad
    assert sum(r["n"] for r in rows.values()) > 400_000


def test_reference_profile_keeps_its_own_order():
    rec = _recording()
    rec = {k: v for k, v in rec.items() if k in ("f32/add/random/spread", "f32/add/all/spread", "seed", "size")}
    rows = sr.compare(rec, "reference")
    assert rows["f32/add/all/spread"]["equal"] == rows["f32/add/all/spread"]["n"]   # same butterfly
    assert rows["f32/add/random/spread"]["equal"] < 0.7 * rows["f32/add/random/spread"]["n"]


def test_partial_subgroup_is_a_scan_over_ranks():
    """Lanes 1, 2, 5 of 8 active, ranks 0, 1, 2: Hillis-Steele gives rank 2 (x5 + x2) + x1, which
    every active lane gets as the reduction; over all eight lanes the butterfly would give
    (x1 + x2) + x5 (the zero lanes change nothing)."""
    x = np.array([0, 1.0, 2.0 ** -24, 0, 0, 2.0 ** -24, 0, 0], np.float32)
    mask = np.zeros(8, bool)
    mask[[1, 2, 5]] = True
    red = reduce.subgroup("add", "f32", 8, mask, x, order="nvidia")
    inc = reduce.subgroup("inclusive_add", "f32", 8, mask, x, order="nvidia")
    exc = reduce.subgroup("exclusive_add", "f32", 8, mask, x, order="nvidia")
    big = np.float32(1 + 2.0 ** -23)
    assert red[mask].tolist() == [big] * 3
    assert reduce.subgroup("add", "f32", 8, mask, x)[mask].tolist() == [1.0] * 3      # butterfly: ties to 1
    assert inc[mask].tolist() == [1.0, 1.0, big]           # 1 + 2^-24 ties to even: 1
    assert exc[mask].tolist() == [0.0, 1.0, 1.0] and not np.signbit(exc[1])   # starts from +0
    full = np.ones(8, bool)
    assert reduce.subgroup("add", "f32", 8, full, x, order="nvidia").tolist() == [1.0] * 8   # whole: butterfly
