"""Lane maps: the H200 measurement, vendor tables, validation and data motion."""

import json
from pathlib import Path

import numpy as np
import pytest

from emu.profiles import LaneMap, LaneMapError, family_map, from_formula, from_table, load_profile
from emu.profiles.lanemap import (amd_cdna3, amd_rdna3, amd_rdna4, apple_simdgroup, intel_xmx, lavapipe,
                                  nvidia_driver, ptx, reference)

H200 = Path(__file__).resolve().parents[1] / "data" / "hw" / "h200" / "lanemaps.json"
BITS = {"f16": 16, "bf16": 16, "u8": 8, "i8": 8, "f32": 32, "i32": 32, "u32": 32}


@pytest.fixture(scope="module")
def measured():
    return json.loads(H200.read_text())


# ------------------------------------------------------------ H200: measured
def test_driver_formula_reproduces_every_measured_map(measured):
    assert len(measured["matrices"]) == 21
    for key, m in measured["matrices"].items():
        typ, use, _ = key.split("_")
        got = nvidia_driver(use, m["rows"], m["cols"], BITS[typ])
        assert np.array_equal(got.coords, np.array(m["map"])), key


def test_h200_profile_maps_equal_measurement_for_every_config_and_role(measured):
    p = load_profile("nvidia-h200")
    seen = 0
    for entry in measured["configs"]:
        m, n, k = map(int, entry["MxNxK"].split("x"))
        cfg = p.find_config(m, n, k, entry["AType"], entry["CType"],
                            b_type=entry["BType"], result_type=entry["ResultType"])
        assert cfg is not None, entry
        for role, info in entry["roles"].items():
            want = np.array(measured["matrices"][info["matrix"]]["map"])
            got = p.lane_map(cfg, "C" if role == "Result" else role, 32)
            assert np.array_equal(got.coords, want), (entry["MxNxK"], role)
            seen += 1
    assert seen == 11 * 4
    # and the profile lists exactly the driver's configs
    assert len(p.configs) == len(measured["cooperative_matrix_properties_khr"])


def test_driver_maps_own_the_ptx_fragment_elements(measured):
    """The driver reorders registers but each lane owns what PTX says it owns."""
    for key, m in measured["matrices"].items():
        typ, use, _ = key.split("_")
        drv = nvidia_driver(use, m["rows"], m["cols"], BITS[typ])
        pt = ptx(use, m["rows"], m["cols"], BITS[typ])
        for lane in range(32):
            assert sorted(map(tuple, drv.coords[lane].tolist())) == sorted(map(tuple, pt.coords[lane].tolist()))
        # where the measurement's own analysis says 'PTX order', it is exactly ours
        if any("(PTX order)" in c for c in m["ptx_candidate_formulas_matching"]):
            assert drv.same_as(pt), key


# ------------------------------------------------------------ PTX ISA tables
# (lane, i) -> (row, col) worked out by hand from PTX ISA 9.7.14.5 formulas,
# groupID = lane >> 2, threadID_in_group = lane % 4.
PTX_CASES = [
    # m16n8k16 .f16 A: row g for a0,a1,a4,a5 else g+8; col 2t+(i&1) (+8 for i>=4)
    (("A", 16, 16, 16), [(5, 0, 1, 2), (5, 1, 1, 3), (5, 2, 9, 2), (5, 4, 1, 10), (5, 7, 9, 11)]),
    # m16n8k8 .f16 A: row g for a0,a1 else g+8; col 2t+(i&1)
    (("A", 16, 8, 16), [(30, 0, 7, 4), (30, 1, 7, 5), (30, 2, 15, 4), (30, 3, 15, 5)]),
    # m16n8k16 .f16 B: row 2t+(i&1) (+8 for i>=2), col g
    (("B", 16, 8, 16), [(6, 0, 4, 1), (6, 1, 5, 1), (6, 2, 12, 1), (6, 3, 13, 1)]),
    # m16n8k8 .f16 B: row 2t+i, col g
    (("B", 8, 8, 16), [(31, 0, 6, 7), (31, 1, 7, 7)]),
    # accumulator m16n8: row g (c0,c1) or g+8 (c2,c3); col 2t+(i&1)
    (("C", 16, 8, 32), [(6, 0, 1, 4), (6, 1, 1, 5), (6, 2, 9, 4), (6, 3, 9, 5)]),
    # m16n8k16 .s8 A: row g for i<4 else g+8; col 4t+(i&3)
    (("A", 16, 16, 8), [(7, 0, 1, 12), (7, 3, 1, 15), (7, 4, 9, 12)]),
    # m16n8k16 .s8 B: row 4t+i, col g
    (("B", 16, 8, 8), [(7, 0, 12, 1), (7, 3, 15, 1)]),
    # m16n8k32 .s8 A: row g for 0<=i<4 || 8<=i<12 else g+8; col 4t+(i&3) (+16 for i>=8)
    (("A", 16, 32, 8), [(5, 0, 1, 4), (5, 4, 9, 4), (5, 8, 1, 20), (5, 12, 9, 20), (5, 15, 9, 23)]),
    # m16n8k32 .s8 B: row 4t+(i&3) (+16 for i>=4), col g
    (("B", 32, 8, 8), [(9, 0, 4, 2), (9, 3, 7, 2), (9, 4, 20, 2)]),
]


@pytest.mark.parametrize("shape, cases", PTX_CASES)
def test_ptx_layouts_match_isa_tables(shape, cases):
    role, rows, cols, bits = shape
    lm = ptx(role, rows, cols, bits)
    for lane, i, r, c in cases:
        assert tuple(lm.coords[lane, i]) == (r, c), (shape, lane, i)


def test_ptx_n16_is_two_n8_fragments_side_by_side():
    lm = ptx("C", 16, 16, 32)
    assert lm.elements_per_lane == 8
    assert np.array_equal(lm.coords[:, :4], ptx("C", 16, 8, 32).coords)
    assert np.array_equal(lm.coords[:, 4:, 1], ptx("C", 16, 8, 32).coords[:, :, 1] + 8)


# ------------------------------------------------------------ other vendors
def test_rdna3_replicates_a_and_b_and_interleaves_c():
    for sg in (32, 64):
        a, b, c = (amd_rdna3(r, 16, 16, 16, sg) for r in "ABC")
        assert a.duplicated and a.has_duplicates and a.elements_per_lane == 16
        assert (a.owner_count == sg // 16).all() and (b.owner_count == sg // 16).all()
        assert np.array_equal(a.coords[0], a.coords[16]) and tuple(a.coords[3, 5]) == (3, 5)
        assert tuple(b.coords[3, 5]) == (5, 3)
        assert not c.has_duplicates and c.elements_per_lane == 256 // sg
        assert (a.lane_idx < 16).all()      # gathers read lanes 0..15
    c32 = amd_rdna3("C", 16, 16, 16, 32)
    assert tuple(c32.coords[17, 0]) == (1, 1) and tuple(c32.coords[0, 7]) == (14, 0)
    c64 = amd_rdna3("C", 16, 16, 16, 64)
    assert tuple(c64.coords[48, 1]) == (7, 0)


def test_rdna4_has_no_replication():
    c = amd_rdna4("C", 16, 16, 16, 32)
    assert tuple(c.coords[16, 0]) == (8, 0) and tuple(c.coords[1, 7]) == (7, 1)
    c64 = amd_rdna4("C", 16, 16, 16, 64)
    assert [int(c64.coords[l, 0, 0]) for l in (0, 16, 32, 48)] == [0, 8, 4, 12]
    a = amd_rdna4("A", 16, 16, 16, 32)
    assert tuple(a.coords[16, 2]) == (0, 10) and not a.has_duplicates


def test_cdna3_mfma_layouts():
    a = amd_cdna3("A", 16, 16, 16, 64)
    assert a.elements_per_lane == 4 and tuple(a.coords[17, 2]) == (1, 6)
    b = amd_cdna3("B", 16, 16, 16, 64)
    assert tuple(b.coords[17, 2]) == (6, 1)
    c = amd_cdna3("C", 16, 16, 32, 64)
    assert tuple(c.coords[33, 3]) == (11, 1)
    a32 = amd_cdna3("A", 32, 8, 16, 64)
    assert tuple(a32.coords[33, 1]) == (1, 5)
    c32 = amd_cdna3("C", 32, 32, 32, 64)
    assert c32.elements_per_lane == 16
    assert tuple(c32.coords[0, 4]) == (8, 0) and tuple(c32.coords[32, 0]) == (4, 0)
    assert tuple(c32.coords[63, 15]) == (31, 31)


def test_apple_simdgroup_8x8():
    m = apple_simdgroup("C", 8, 8, 32, 32)
    assert m.elements_per_lane == 2
    assert [tuple(m.coords[l, 0]) for l in (0, 1, 2, 8, 16, 31)] == [(0, 0), (0, 2), (1, 0), (0, 4), (4, 0), (7, 6)]


def test_intel_xmx_layouts():
    a = intel_xmx("A", 8, 16, 16, 16)            # Xe2: f16 A, 2 per dword
    assert a.elements_per_lane == 8 and tuple(a.coords[9, 0]) == (1, 2) and tuple(a.coords[9, 3]) == (3, 3)
    b = intel_xmx("B", 16, 16, 16, 16)           # packed along K
    assert b.elements_per_lane == 16 and tuple(b.coords[5, 3]) == (3, 5)
    c = intel_xmx("C", 8, 16, 32, 16)
    assert tuple(c.coords[7, 5]) == (5, 7)
    a8 = intel_xmx("A", 8, 32, 8, 16)             # u8 A, 4 per dword
    assert tuple(a8.coords[9, 6]) == (3, 6)
    dg2 = intel_xmx("A", 8, 16, 16, 8)            # DG2 subgroup 8
    assert tuple(dg2.coords[3, 5]) == (2, 7)
    with pytest.raises(LaneMapError, match="must divide the subgroup of 8"):
        intel_xmx("C", 8, 16, 32, 8)              # 16 columns cannot sit on 8 lanes this way


def test_lavapipe_lane_is_column():
    a, b, c = (lavapipe(r, 8, 8, 16, 8) for r in "ABC")
    assert tuple(a.coords[3, 5]) == (5, 3) and tuple(c.coords[3, 5]) == (5, 3)
    assert tuple(b.coords[3, 5]) == (3, 5)


def test_reference_map_any_shape_with_padding():
    m = reference("A", 8, 8, 0, 128)
    assert m.elements_per_lane == 1 and m.has_padding and int(m.valid.sum()) == 64
    assert tuple(m.coords[100, 0]) == (-1, -1) and tuple(m.coords[9, 0]) == (1, 1)
    r = reference("C", 3, 5, 0, 4)                # 15 elements on 4 lanes: one padded slot
    assert r.elements_per_lane == 4 and int((~r.valid).sum()) == 1
    mats = np.arange(2 * 15).reshape(2, 3, 5)
    frags = r.to_fragments(mats, fill=-7)
    assert frags[0, 3, 3] == -7                   # slot e = 3*4+3 = 15 is past the end
    assert np.array_equal(r.to_matrix(frags), mats)


def test_family_map_names_unknown_family():
    with pytest.raises(LaneMapError, match="unknown lane-map family 'nvidia'"):
        family_map("nvidia", "A", 16, 16, 16, 32)


# ------------------------------------------------------------ validation
def test_uncovered_element_is_reported():
    coords = reference("A", 4, 4, 0, 4).coords.copy()
    coords[2, 1] = coords[2, 0]                   # lane 2 drops an element, holds another twice
    with pytest.raises(LaneMapError, match=r"element \(1, 2\) of the 4x4 matrix is held by no lane"):
        LaneMap(4, 4, 4, coords, name="bad")


def test_duplicate_needs_declaration():
    coords = np.zeros((4, 5, 2), int)
    coords[:, :4] = reference("A", 4, 4, 0, 4).coords
    coords[:, 4] = coords[:, 0]                   # every lane repeats its first element
    with pytest.raises(LaneMapError, match=r"element \(0, 0\) is held by 2 slots .*\(0, 0\), \(0, 4\).*duplicated=True"):
        LaneMap(4, 4, 4, coords)
    ok = LaneMap(4, 4, 4, coords, duplicated=True)
    assert ok.has_duplicates and ok.owners(0, 0) == [(0, 0), (0, 4)]


def test_out_of_range_and_shape_errors():
    coords = reference("A", 4, 4, 0, 4).coords.copy()
    coords[1, 1] = (4, 0)
    with pytest.raises(LaneMapError, match=r"lane 1 element 1 is \(4, 0\), outside the 4x4"):
        LaneMap(4, 4, 4, coords)
    with pytest.raises(LaneMapError, match="shape"):
        LaneMap(4, 4, 8, reference("A", 4, 4, 0, 4).coords)
    lm = reference("A", 4, 4, 0, 4)
    with pytest.raises(LaneMapError, match="fragments must end in"):
        lm.to_matrix(np.zeros((2, 4, 3)))
    with pytest.raises(LaneMapError, match="matrices must end in"):
        lm.to_fragments(np.zeros((2, 4, 5)))


def test_maps_are_frozen():
    lm = reference("A", 4, 4, 0, 4)
    with pytest.raises(Exception):
        lm.rows = 5
    with pytest.raises(ValueError):
        lm.lane_idx[0, 0] = 3


def test_formula_and_table_builders():
    f = from_formula("lane % 16", "i", 16, 16, 32, 16, duplicated=True)
    assert f.same_as(amd_rdna3("A", 16, 16, 16, 32))
    t = from_table(f.as_table(), 16, 16, 32, duplicated=True)
    assert t.same_as(f)
    with pytest.raises(LaneMapError, match="held by 2 slots"):
        from_formula("lane % 16", "i", 16, 16, 32, 16)
    with pytest.raises(LaneMapError, match="one list per lane"):
        from_table([[[0, 0]]], 1, 1, 2)
    with pytest.raises(LaneMapError, match="unknown name"):
        from_formula("lane + os", "i", 4, 4, 4)


def test_gather_scatter_and_replicas():
    lm = amd_rdna3("A", 16, 16, 16, 32)
    rng = np.random.default_rng(0)
    mats = rng.integers(0, 1000, size=(3, 16, 16))
    frags = lm.to_fragments(mats)
    assert frags.shape == (3, 32, 16)
    assert np.array_equal(lm.to_matrix(frags), mats)
    assert lm.replicas_agree(frags).all()
    frags[1, 20, 4] += 1                          # lane 20 disagrees with lane 4's copy
    assert lm.replicas_agree(frags).tolist() == [True, False, True]
    assert np.array_equal(lm.to_matrix(frags), mats)   # gathers read lane 4 (the lowest owner)
    flat = frags.reshape(3, -1)[:, lm.flat_idx]
    assert np.array_equal(flat, mats)
