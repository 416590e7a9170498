"""`emu diff` of the plain-WGSL test shaders (tests/shaders/*.wgsl without cooperative matrices)
against the real adapter of each installed binding (lavapipe on CI): the emulator and the device
must agree bit for bit, except where WGSL leaves the result to the implementation or the
adapter is known to deviate -- each such case is listed below with the reason, and any other
difference fails.

--profile auto picks the lavapipe profile for lavapipe, so the emulator runs subgroups of 8 like
the device does. Through wgpu-py, lavapipe does not zero var<workgroup> memory (adapter quirk
'workgroup-memory-not-zeroed'): differences in what a shader reads from it before writing are
expected there."""
import json
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from backends import shader_run  # noqa: E402

from emu.cli import main as cli  # noqa: E402
from emu.hw.diff import diff_shader  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
PLAIN = [p for p in sorted((ROOT / "tests" / "shaders").glob("*.wgsl"))
         if "cooperative_matrix" not in p.read_text() and "subgroup_matrix" not in p.read_text()]

# Where the device may differ, and why. A shader -> {backend ('*' for both): rule}; a rule is
# ("rejected", why) for a shader the adapter's compiler refuses, or a function of one difference
# (the report's record: label, index, ulp) returning the reason it is allowed, or None.
FMA_UNFUSED = "fma(a, b, c) may be computed as a*b + c: WGSL's accuracy is inherited from that"
F16_IN_F32 = ("lavapipe computes f16 arithmetic in f32 without rounding each result to f16 "
              "(WGSL rounds every f16 operation): an adapter deviation")
TRANSCENDENTAL = "sin/cos/exp/log/pow/atan2/tanh/inverseSqrt: accuracy is implementation-defined"
DOT_ORDER = ("matrix products and dot: WGSL leaves the order of the sum and fusing to the "
             "implementation")
SHUFFLE_OOB = "subgroupShuffleUp/Down past the subgroup's edge: indeterminate value"
WG_NOT_ZEROED = "adapter quirk: var<workgroup> memory not zeroed (wgpu-py on lavapipe)"


def _float_rule(d):
    slot = d["index"] % 24
    if d["label"].startswith("exact"):
        return {3: FMA_UNFUSED, 11: F16_IN_F32}.get(slot)
    if d["label"].startswith("approx"):
        return TRANSCENDENTAL


def _subgroups_rule(d):
    inv, slot = divmod(d["index"], 32)
    sid = inv % 8
    if (slot == 15 and sid < 1) or (slot == 16 and sid >= 6):
        return SHUFFLE_OOB


def _ulp_rule(limit, why):
    def rule(d):
        u = d.get("ulp")
        return why if isinstance(u, float) and u <= limit else None
    return rule


EXPECT = {
    "float.wgsl": {"dawn": _float_rule,
                   "wgpu": ("rejected", "naga: bitcast<u32>(vec2<f16>) is refused (automatic conversions "
                                        "cannot convert vec2<u16-like> to u32): a naga bug")},
    "functions.wgsl": {"wgpu": ("rejected", "naga: ptr<storage> function parameters are not supported "
                                            "(WGSL's unrestricted_pointer_parameters)")},
    "subgroups.wgsl": {"dawn": _subgroups_rule,
                       "wgpu": ("rejected", "naga 27: no subgroupElect")},
    "matrices.wgsl": {"*": _ulp_rule(2, DOT_ORDER)},
    "uniforms.wgsl": {"*": _ulp_rule(64, DOT_ORDER + " (the products then cancel)")},
    "workgroup.wgsl": {"wgpu": lambda d: WG_NOT_ZEROED if d["label"].startswith("flags") else None},
    "atomics.wgsl": {"wgpu": lambda d: WG_NOT_ZEROED if d["label"].startswith("wg_totals") else None},
}


@pytest.mark.parametrize("path", PLAIN, ids=[p.name for p in PLAIN])
def test_diff_plain_shader_against_the_adapter(path, hw_backend):
    run = shader_run(path.name)
    rule = EXPECT.get(path.name, {}).get(hw_backend) or EXPECT.get(path.name, {}).get("*")
    rep = diff_shader(path.read_text(), str(path), dispatch=run["dispatch"], seed=1, backend=hw_backend,
                      overrides=run["overrides"], buffers=run["buffers"], first=1 << 20)
    if rep.error_stage == "emulator" and path.name not in EXPECT and path.name not in (
            "vecadd.wgsl", "control_flow.wgsl"):
        pytest.skip(f"{path.name} does not run on random inputs (add it to SHADER_RUNS): {rep.error[:200]}")
    assert rep.profile == "lavapipe" or "llvmpipe" not in rep.adapter.get("device", ""), rep.profile
    if isinstance(rule, tuple):
        assert rep.error_stage == "adapter" and "rejected the shader" in rep.error, rep.text()
        return
    assert rep.error is None, rep.text()
    unexplained = []
    for b in rep.bindings:
        for d in b.differences:
            if rule is None or rule(d) is None:
                unexplained.append((b.name, d))
    assert not unexplained, f"{len(unexplained)} unexplained differences:\n" + rep.text()
    if rule is None:
        assert rep.identical, rep.text()


def test_every_plain_test_shader_is_diffed():
    assert len(PLAIN) >= 6
    assert all(p.name in {x.name for x in PLAIN} for p in [ROOT / "tests/shaders/vecadd.wgsl"])


def test_cli_diff_identical_and_report(hw_backend, tmp_path, capsys):
    report = tmp_path / "r.json"
    rc = cli(["diff", str(ROOT / "tests/shaders/control_flow.wgsl"), "--dispatch", "2", "--random-inputs", "7",
              "--backend", hw_backend, "--report", str(report)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "IDENTICAL" in out and "profile lavapipe" in out or "llvmpipe" not in out
    js = json.loads(report.read_text())
    assert js["result"] == "identical" and js["exit_code"] == 0
    assert js["bindings"][0]["different"] == 0 and js["bindings"][0]["equal"] == js["bindings"][0]["elements"] > 0
    assert "fn main(" in js["emitted_wgsl"]


def test_cli_diff_subgroup_shader_runs_at_the_adapters_subgroup_size(tmp_path, capsys):
    """Dawn reports lavapipe's subgroup size (8): the emulator runs at 8 too, and subgroup
    builtins agree."""
    from emu.pytest_plugin import need_hardware
    info = need_hardware("dawn")
    v = tmp_path / "v.npy"
    import numpy as np
    np.save(v, np.random.default_rng(3).integers(-100, 101, 256).astype(np.int32))
    rc = cli(["diff", str(ROOT / "tests/shaders/subgroups.wgsl"), "--dispatch", "2", "--buffer", f"0:0={v}",
              "--random-inputs", "1", "--backend", "dawn", "--report", str(tmp_path / "r.json")])
    js = json.loads((tmp_path / "r.json").read_text())
    assert js["subgroup_size"] == info.get("subgroup_max_size", 8)
    diffs = js["bindings"][0]["first_differences"]
    assert all(_subgroups_rule(d) for d in diffs), diffs
    assert rc == (1 if diffs else 0)


def test_cli_diff_ulp_tolerance(hw_backend, tmp_path, capsys):
    """matrices.wgsl differs by 1 ulp where the device fuses or reorders dot products: exit 1
    bit for bit, exit 0 with --ulp 2."""
    args = ["diff", str(ROOT / "tests/shaders/matrices.wgsl"), "--dispatch", "2", "--random-inputs", "1",
            "--backend", hw_backend]
    rc0 = cli(args)
    out0 = capsys.readouterr().out
    rc2 = cli(args + ["--ulp", "2"])
    out2 = capsys.readouterr().out
    assert rc2 == 0, out2
    if "DIFFERENT" in out0:
        assert rc0 == 1 and "WITHIN 2 ULP" in out2 and "ulp" in out0
    else:
        assert rc0 == 0
