"""Replay the H200's recorded builtins and operators (tests/data/hw/h200/builtins.npz: f16 unary
cases over all 65,536 inputs, every other case's first 4096 of the session's inputs) on the
nvidia-h200 profile through emu.Device -- the interpreter and emu.numerics.nvidia -- bit for bit.

builtins_gaps.json names the cases whose rule is not found yet and how many of their results
differ now; every other case must be reproduced in full. A change that reproduces more updates
that file (it may only shrink)."""
import json
import pathlib
import zlib

import numpy as np
import pytest

from emu.hw.builtins_eval import compare
from emu.hw.builtins_record import load_compact

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "hw" / "h200"


@pytest.fixture(scope="module")
def replay():
    rec = {k: (a, r, None) for k, (a, r) in load_compact(str(DATA / "builtins.npz")).items()}
    return rec, compare(rec, "nvidia-h200", limit=None)


def test_every_recorded_case_is_replayed(replay):
    rec, rows = replay
    assert len(rec) == 163
    assert not [k for k, r in rows.items() if "error" in r]


def test_h200_builtins_bit_for_bit(replay):
    rec, rows = replay
    gaps = json.loads((DATA / "builtins_gaps.json").read_text())["different"]
    got = {k: r["n"] - r["equal"] for k, r in rows.items()}
    assert {k: v for k, v in got.items() if v} == gaps
    assert sum(r["n"] for r in rows.values()) > 3_000_000


def test_reference_profile_stays_ieee(replay):
    """The reference profile keeps correctly rounded IEEE results: it differs from the H200."""
    rec, _ = replay
    keys = ["f32/exp", "f32/sin", "f16/sqrt", "f32/div"]
    rows = compare({k: rec[k] for k in keys}, "reference", limit=None)
    assert all(rows[k]["equal"] < rows[k]["n"] for k in keys)
    from emu.numerics import builtins
    x = np.array([0.5, 1.0, 2.0], np.float32)
    assert builtins.call("exp", "f32", x).tolist() == np.exp(x.astype(np.float64)).astype(np.float32).tolist()



def _atan2_recordings():
    """(y, x, H200 bits) of the fitted f16 atan2 sweep and of the held-out one (seed 2, its bits
    stored as the difference from float64's atan2 rounded to f16)."""
    from emu.hw.builtins_record import atan2_f16_inputs
    with np.load(DATA / "atan2_f16_sweep.npz") as z:
        yield "fitted", z["y"], z["x"], z["out"]
    with np.load(DATA / "atan2_f16_heldout.npz") as z:
        y, x = atan2_f16_inputs(int(z["seed"]))
        with np.errstate(all="ignore"):
            ref = np.arctan2(y.astype(np.float64), x.astype(np.float64)).astype(np.float16).view(np.uint16)
        out = (ref.astype(np.int32) + z["d"]).astype(np.uint16)
        assert zlib.crc32(out.tobytes()) == int(z["crc"])
        yield "held out", y, x, out


def test_h200_f16_atan2_sweeps():
    """f16 atan2 with small results (tiny y over large x: subnormal results), recorded on the H200:
    every bit, on the sweep the rule was fitted to (344,064) and on a held-out one (524,288)."""
    from emu.numerics import nvidia
    sizes = {}
    for name, y, x, out in _atan2_recordings():
        assert (nvidia.call("atan2", "f16", y, x).view(np.uint16) == out).all(), name
        sizes[name] = out.size
    assert sizes == {"fitted": 344_064, "held out": 524_288}
