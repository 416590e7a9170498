"""emu.hw.diff without a GPU: the comparison, the report, profile choice and the owner of each
element a cooperative store wrote, against a stand-in adapter (the emitted WGSL run on the
emulator, with a chosen element changed)."""
import json
import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import emu  # noqa: E402
from emu.cli import main as cli  # noqa: E402
from emu.hw import adapters, diff as hwdiff, runner  # noqa: E402
from emu.isa.types import ArrayType, F32, U32, VectorType  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
H200_INFO = {"vendor": "nvidia", "vendor_id": 0x10DE, "device": "NVIDIA H200", "backend_type": "Vulkan",
             "adapter_type": "DiscreteGPU", "description": "stand-in", "subgroup_min_size": 32,
             "subgroup_max_size": 32, "quirks": [], "binding": "dawn"}


def test_ulp_distance():
    a = np.array([1.0, -0.0, 0.0, np.nan, 1.0, np.inf], np.float32)
    b = np.array([np.nextafter(np.float32(1), np.float32(2)), 0.0, 1e-45, np.nan, np.nan, np.float32(3.4028235e38)],
                 np.float32)
    d = hwdiff.ulp_distance(a.view(np.uint32), b.view(np.uint32), "f32")
    assert list(d) == [1, 0, 1, 0, np.inf, 1]


def test_random_inputs_are_typed_and_leave_padding_zero():
    t = ArrayType(VectorType(F32, 3), None)          # 16-byte stride, 4 bytes of padding each
    raw = np.frombuffer(hwdiff.random_inputs(t, 16 * 64, np.random.default_rng(0)), np.float32).reshape(64, 4)
    assert np.all(raw[:, 3] == 0) and np.all(np.isfinite(raw[:, :3])) and np.all(raw[:, :3] != 0)
    u = np.frombuffer(hwdiff.random_inputs(ArrayType(U32, None), 4096, np.random.default_rng(0)), np.uint32)
    assert (u < 256).mean() > 0.3 and (u > 1 << 20).mean() > 0.3


def test_compare_binding_counts_fields_and_ulps():
    t = ArrayType(VectorType(F32, 2), None)
    e = np.arange(8, dtype=np.float32)
    g = e.copy()
    g[3] = np.nextafter(g[3], np.float32(100))                  # element 1 .y: 1 ulp
    g[4] = 40.0                                                 # element 2 .x: many ulps
    bd = hwdiff.compare_binding((0, 1), "out", t, e.tobytes(), g.tobytes(), 1, None)
    assert (bd.elements, bd.equal, bd.different, bd.within_ulp) == (8, 6, 2, 1)
    assert bd.counts_by_field == {"out[].y": 1, "out[].x": 1}
    assert [d["label"] for d in bd.differences] == ["out[1].y", "out[2].x"]
    assert bd.differences[0]["ulp"] == 1.0 and bd.differences[0]["emu"].startswith("0x40400000")


@pytest.fixture
def stand_in_h200(monkeypatch):
    """An 'adapter' that claims to be an H200 and runs the WGSL it is given on the emulator with the
    nvidia-h200 profile; `flip` lists (binding, byte offset) whose bytes it changes."""
    flips = []

    def available(backend):
        return dict(H200_INFO, binding=backend), "dawn: NVIDIA H200 (stand-in)"

    def run_on_adapter(source, *, entry=None, dispatch=(1, 1, 1), buffers=None, outputs=None,
                       overrides=None, backend="dawn", features=()):
        assert "subgroupMatrixLoad<" in source or "coopLoad" not in source   # Dawn's dialect
        dev = emu.Device("nvidia-h200")
        pipe = dev.create_compute_pipeline(dev.create_shader_module(source, "emitted.wgsl"), entry,
                                           {k: str(int(v)) for k, v in (overrides or {}).items()})
        hs = {k: dev.create_buffer(np.frombuffer(bytes(v), np.uint8).copy()) for k, v in buffers.items()}
        dev.dispatch(pipe, hs, dispatch)
        out = {k: bytearray(hs[k].read(np.uint8).tobytes()[: len(buffers[k])]) for k in outputs}
        for key, off in flips:
            out[key][off] ^= 0x01
        return {k: bytes(v) for k, v in out.items()}
    monkeypatch.setattr(adapters, "available", available)
    monkeypatch.setattr(runner, "run_on_adapter", run_on_adapter)
    return flips


@pytest.mark.parametrize("example", ["gemm_dawn.wgsl", "gemm_wgpu.wgsl"])
def test_cooperative_gemm_through_the_dawn_dialect(stand_in_h200, example):
    """Both example GEMMs, emitted in Dawn's dialect (the wgpu one translated), agree bit for bit;
    --profile auto finds the H200 profile."""
    src = (ROOT / "emu" / "examples" / example).read_text()
    rep = hwdiff.diff_shader(src, example, dispatch=(2, 2, 1) if "wgpu" in example else (1, 1, 1), seed=3,
                             overrides={"M": "32", "N": "32", "K": "32"})
    assert rep.error is None, rep.text()
    assert rep.profile == "nvidia-h200" and rep.profile_how == "claims the adapter"
    assert rep.identical and rep.exit_code == 0, rep.text()
    assert "subgroupMatrixMultiplyAccumulate" in rep.emitted_wgsl


def test_difference_in_a_cooperative_store_names_row_col_and_lane(stand_in_h200):
    src = (ROOT / "emu" / "examples" / "gemm_dawn.wgsl").read_text()
    # C is 32 x 32 f32 at binding 2; change element (row 5, col 20): subgroup 1 of the workgroup
    # owns columns 16..31 of rows 0..15
    stand_in_h200.append(((0, 2), (5 * 32 + 20) * 4))
    rep = hwdiff.diff_shader(src, "gemm_dawn.wgsl", dispatch=(1, 1, 1), seed=3,
                             overrides={"M": "32", "N": "32", "K": "32"})
    assert rep.result == "different" and rep.exit_code == 1
    (b,) = rep.bindings
    assert b.different == 1 and b.max_ulp == 1.0
    d = b.differences[0]
    assert d["index"] == 5 * 32 + 20 and d["label"] == "c[180]"
    w = d["written_by"]
    assert (w["row"], w["col"], w["subgroup"], w["workgroup"]) == (5, 4, 1, [0, 0, 0])
    from emu.profiles import load_profile
    prof = load_profile("nvidia-h200")
    cfg = prof.find_config(16, 16, 16, "f16", "f32")
    lm = prof.lane_map(cfg, "C", 32)
    assert (lm.rows_idx[w["lane"], w["fragment_index"]], lm.cols_idx[w["lane"], w["fragment_index"]]) == (5, 4)
    assert "(row 5, col 4) from lane" in rep.text()


def test_profile_auto_generates_an_unverified_profile_for_an_unknown_adapter(monkeypatch, tmp_path):
    info = dict(H200_INFO, vendor_id=0x1234, device="Some GPU 9000", subgroup_min_size=16, subgroup_max_size=16)
    monkeypatch.setattr(hwdiff, "adapter_configs", lambda backend: [
        {"component_type": "f16", "result_component_type": "f32", "m": 8, "n": 8, "k": 8}])
    p, how = hwdiff.choose_profile("auto", "dawn", info)
    assert "UNVERIFIED" in how and p.name == "auto-some-gpu-9000"
    assert p.subgroup_sizes == (16,) and p.find_config(8, 8, 8, "f16", "f32") is not None
    assert p.model_for(p.configs[0]) == "exact"
    assert p.evidence_for("numerics").level == "assumption"


def test_diff_errors_are_reported_not_raised(stand_in_h200, tmp_path, capsys):
    bad = tmp_path / "oob.wgsl"
    bad.write_text("@group(0) @binding(0) var<storage, read_write> o: array<u32, 4>;\n"
                   "@compute @workgroup_size(8) fn main(@builtin(local_invocation_index) i: u32) { o[i] = i; }\n")
    rc = cli(["diff", str(bad), "--dispatch", "1", "--random-inputs", "1", "--report", str(tmp_path / "r.json"),
              "--bounds", "strict"])
    out = capsys.readouterr().out
    assert rc == 1 and "ERROR (emulator)" in out and "out of bounds" in out
    assert json.loads((tmp_path / "r.json").read_text())["result"] == "error"
    rc = cli(["diff", str(ROOT / "tests/shaders/vecadd.wgsl"), "--dispatch", "1"])
    out = capsys.readouterr().out
    assert rc == 1 and "--random-inputs" in out


def test_without_an_adapter_the_header_says_so(monkeypatch, capsys):
    """Was: 'on dawn: ? (?)'."""
    monkeypatch.setattr(adapters, "available", lambda backend: (None, f"{backend}: no adapter (none installed)"))
    src = (ROOT / "emu" / "examples" / "gemm_dawn.wgsl").read_text()
    rep = hwdiff.diff_shader(src, "gemm_dawn.wgsl", dispatch=(1, 1, 1), seed=3,
                             overrides={"M": "32", "N": "32", "K": "32"})
    assert rep.result == "error" and rep.error_stage == "adapter"
    assert rep.text().splitlines()[:2] == [
        "emu diff gemm_dawn.wgsl (entry main, dispatch 1,1,1) on dawn: no adapter found",
        "  ERROR (adapter): dawn: no adapter (none installed)"]
