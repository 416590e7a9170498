"""Unchanged wgpu-py / wgpudawn host programs (emu/examples/wgpu_host/) on emu's adapter and on the
real one: each checks itself against numpy, and the two runs must agree bit for bit."""
import numpy as np
import pytest

from wgpuhost import SKIP_CODE, run_program

PLAIN = ["storage_uniform.py", "bind_groups.py", "indirect.py", "immediates.py"]


def assert_same_bits(a: dict, b: dict, what: str):
    assert sorted(a) == sorted(b), f"{what}: saved arrays differ: {sorted(a)} vs {sorted(b)}"
    for k in a:
        x, y = np.ascontiguousarray(a[k]), np.ascontiguousarray(b[k])
        assert x.dtype == y.dtype and x.shape == y.shape, f"{what}: '{k}' {x.dtype}{x.shape} vs {y.dtype}{y.shape}"
        diff = np.flatnonzero(x.view(np.uint8) != y.view(np.uint8))
        assert diff.size == 0, f"{what}: '{k}' differs in {diff.size} bytes, first at byte {diff[0]}"


@pytest.mark.parametrize("name", PLAIN)
def test_plain_program_on_emu_and_real(name, tmp_path, real_adapter):
    emu = run_program(name, tmp_path, "launcher")
    assert emu.rc == 0, emu.text
    assert "via emu" in emu.stdout and "OK" in emu.stdout, emu.text
    real = run_program(name, tmp_path, "real")
    assert real.rc == 0, real.text
    assert "via emu" not in real.stdout, real.text
    assert_same_bits(emu.arrays(), real.arrays(), f"{name}: emu vs {real_adapter.get('device')}")


@pytest.mark.parametrize("name", PLAIN)
def test_plain_program_on_emu(name, tmp_path):
    """The emu half alone, so that it runs where no real adapter exists."""
    r = run_program(name, tmp_path, "env", EMU_PROFILE="nvidia-h200")
    assert r.rc == 0, r.text
    assert "emulating 'nvidia-h200'" in r.stdout, r.text


def test_dawn_gemm_on_emu_h200(tmp_path):
    """Dawn-dialect cooperative GEMM through wgpudawn, emu adapter for the H200 profile."""
    r = run_program("gemm_dawn.py", tmp_path, "env", EMU_PROFILE="nvidia-h200")
    assert r.rc == 0, r.text
    assert "config: 16x16x16 f16 -> f32 on subgroups of 32" in r.stdout, r.text
    out = r.arrays()
    # each tile is a chain of K/16 hardware MMAs; emu's H200 model must give what its MMA gives
    from emu.numerics.mma import mma as emu_mma
    from emu.profiles import load_profile
    p = load_profile("nvidia-h200")
    cfg = p.find_config(16, 16, 16, "f16", "f32")
    A, B, C = out["A"], out["B"], out["C"]
    ref = np.zeros_like(C)
    for i in range(0, A.shape[0], 16):
        for j in range(0, B.shape[1], 16):
            acc = np.zeros((1, 16, 16), np.float32)
            for k in range(0, A.shape[1], 16):
                acc = emu_mma(p.model_for(cfg), A[None, i:i + 16, k:k + 16], B[None, k:k + 16, j:j + 16], acc,
                              result_type="f32")
            ref[i:i + 16, j:j + 16] = acc[0]
    assert np.array_equal(ref.view(np.uint32), C.view(np.uint32))


def test_dawn_gemm_on_real_adapter(tmp_path, real_dawn_adapter):
    """The same program on the real Dawn adapter: bit-equal to emu where a profile claims that
    adapter; skipped where the adapter has no subgroup matrices (lavapipe)."""
    real = run_program("gemm_dawn.py", tmp_path, "real")
    if real.rc == SKIP_CODE:
        pytest.skip(f"GPU-only: {real_dawn_adapter.get('device')} has no subgroup matrices "
                    f"({real.stdout.strip().splitlines()[-1]})")
    assert real.rc == 0, real.text
    from emu.profiles import profile_for_adapter
    prof = profile_for_adapter(real_dawn_adapter.get("vendor_id"), real_dawn_adapter.get("device"), "vulkan")
    if prof is None:
        pytest.skip(f"no emu profile claims {real_dawn_adapter.get('device')}: nothing to compare bits with")
    emu = run_program("gemm_dawn.py", tmp_path, "launcher", EMU_PROFILE=prof.name)
    assert emu.rc == 0, emu.text
    assert_same_bits(emu.arrays(), real.arrays(), f"gemm_dawn.py: emu '{prof.name}' vs {real_dawn_adapter.get('device')}")


@pytest.mark.parametrize("name", PLAIN + ["gemm_dawn.py"])
def test_program_without_any_binding_installed(name, tmp_path):
    """python -m emu.wgpu where neither wgpu nor wgpudawn is installed: emu's stand-in modules
    run the program unchanged, and give the bits the launcher gives with the real bindings."""
    alone = run_program(name, tmp_path, "standin", EMU_PROFILE="nvidia-h200")
    assert alone.rc == 0, alone.text
    assert "via emu" in alone.stdout and "OK" in alone.stdout, alone.text
    with_bindings = run_program(name, tmp_path, "launcher", EMU_PROFILE="nvidia-h200")
    assert with_bindings.rc == 0, with_bindings.text
    assert_same_bits(alone.arrays(), with_bindings.arrays(), f"{name}: stand-in vs real bindings")
