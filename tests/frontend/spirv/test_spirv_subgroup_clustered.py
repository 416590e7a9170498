"""Clustered subgroup reductions (GroupNonUniformClustered) and the ballot queries
(OpGroupNonUniformBallotBitCount and its scans, FindLSB/MSB, BitExtract, InverseBallot) of
tests/shaders/spirv/subgroup_clustered_ballot.comp, bit for bit against the rule written here in
numpy, at subgroup sizes 8 (lavapipe's; tests/hw/test_vulkan_breadth_lavapipe.py runs it there)
and 32 (a cluster of 16 inside the subgroup)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import emu

FILE = "tests/shaders/spirv/subgroup_clustered_ballot.comp"
SRC = (Path(__file__).resolve().parents[3] / FILE).read_text()


def _clustered(x, size, fn, active=None):
    x = np.asarray(x)
    active = np.ones(len(x), bool) if active is None else active
    out = np.zeros_like(x)
    for start in range(0, len(x), size):
        sel = slice(start, start + size)
        vals = x[sel][active[sel]]
        out[sel] = fn.reduce(vals) if len(vals) else 0
    return out


def _popcount(b):
    return np.array([bin(int(v)).count("1") for v in b])


def reference(x: np.ndarray, sg: int) -> np.ndarray:
    n = len(x)
    c = lambda size: min(size, sg)      # noqa: E731  (a cluster wider than the subgroup is the subgroup)
    r = np.zeros((n, 8), np.uint64)
    r[:, 0] = _clustered(x & 0xFFFF, c(4), np.add)
    r[:, 1] = _clustered(x, c(2), np.maximum) ^ _clustered(x.view(np.int32), c(8), np.minimum).view(np.uint32)
    r[:, 2] = (_clustered(x, c(16), np.bitwise_xor) + _clustered(x >> 7, c(4), np.bitwise_or) * 3) & 0xFFFFFFFF
    f = _clustered((x & 0xFF).astype(np.float32) * np.float32(0.25), c(4), np.add) + \
        _clustered((x & 3).astype(np.float32), c(2), np.multiply)
    r[:, 3] = f.astype(np.float32).view(np.uint32)
    act = x % 3 != 0
    r[:, 4] = np.where(act, (_clustered(x & 0xFFFF, c(4), np.add, act) + _clustered(x, c(2), np.bitwise_and, act))
                       & 0xFFFFFFFF, 0)
    odd = (x & 1) == 1
    for s in range(0, n, sg):
        bits = odd[s:s + sg]
        idx = np.flatnonzero(bits)
        for k in range(sg):
            count = bits.sum() | bits[:k + 1].sum() << 8 | bits[:k].sum() << 16
            r[s + k, 5] = count
            r[s + k, 6] = (idx[0] | idx[-1] << 8) if odd[s + k] else 0xFFFF
            e = (x[s + k] >> 8) & 7
            inverse = (0x55555555 >> k & 1) if k < 32 else (0xF0F0F0F0 >> (k - 32) & 1)
            r[s + k, 7] = (1 if e < sg and bits[e] else 0) | (2 if bits[k] else 0) | (4 if inverse else 0)
    return r.astype(np.uint32)


@pytest.mark.parametrize("profile,sg", [("lavapipe", 8), ("reference", 32)])
def test_clustered_reductions_and_ballot_queries_are_bit_exact(profile, sg):
    dev = emu.Device(profile, subgroup_size=sg)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SRC, FILE))
    x = np.random.default_rng(sg).integers(0, 1 << 32, 128, dtype=np.uint64).astype(np.uint32)
    out = dev.create_buffer(size=128 * 32)
    dev.dispatch(pipe, {(0, 0): dev.create_buffer(x), (0, 1): out}, (2, 1, 1))
    got = out.read(np.uint32).reshape(128, 8)
    want = reference(x, sg)
    assert np.array_equal(got, want), [(int(a), int(b), got[a, b], want[a, b]) for a, b in np.argwhere(got != want)[:6]]


def test_a_clustered_reduction_has_no_wgsl_spelling():
    from emu.errors import EmuError
    from emu.hw.emit import emit
    module, _ = emu.api.compile_wgsl(SRC, FILE)
    with pytest.raises(EmuError) as e:
        emit(module, "dawn")
    assert "WGSL has no clustered subgroup operations" in e.value.message
