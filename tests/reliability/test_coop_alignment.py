"""A cooperative load or store whose start or stride is not a multiple of the smaller of 16 bytes
and one row's (column's) bytes is undefined where WebGPU implementations run it (Vulkan's
OpCooperativeMatrixLoadKHR/StoreKHR): one message with file:line:col, the lane and the fix, from
the interpreter and from the compiled path alike; aligned accesses run as before."""
from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

import emu
from emu.cli import main
from emu.errors import EmuError

WGPU = """enable f16;
enable wgpu_cooperative_matrix;
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read_write> o: array<f16>;
@compute @workgroup_size(32)
fn main() {
  let m = coopLoad<coop_mat16x16<f16, A>>(&a[START], STRIDE);
  coopStore(m, &o[0], 16u);
}
"""

DAWN = """enable f16;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read_write> o: array<f16>;
@compute @workgroup_size(32)
fn main() {
  let m = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>>(&a, 0u, false, 16u);
  subgroupMatrixStore(&o, START, m, true, STRIDE);
}
"""


def run(src, start, stride, jit, monkeypatch):
    monkeypatch.setenv("EMU_JIT", "1" if jit else "0")
    dev = emu.Device("nvidia-h200")
    src = src.replace("START", f"{start}u").replace("STRIDE", f"{stride}u")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "align.wgsl"))
    a = np.arange(2048).astype(np.float16)
    o = dev.create_buffer(size=2 * 2048)
    dev.dispatch(pipe, {(0, 0): dev.create_buffer(a), (0, 1): o}, (1, 1, 1))
    return a, o.read(np.float16)


@pytest.mark.parametrize("jit", [False, True])
def test_misaligned_start_of_a_load(monkeypatch, jit):
    with pytest.raises(EmuError) as e:
        run(WGPU, 4, 16, jit, monkeypatch)         # byte 8: not a multiple of 16
    lines = str(e.value).splitlines()
    assert lines[0] == ("align.wgsl:7:11: error: misaligned cooperative matrix load: coopmat<f16, 16x16, A> "
                        "(col_major) in buffer 'a' (@group(0) @binding(0)): its start, byte 8, is not a "
                        "multiple of 16 bytes (the smaller of 16 and the column's 32 bytes), as Vulkan's "
                        "OpCooperativeMatrixLoadKHR requires (Dawn and wgpu both use it)")
    assert "note: workgroup (0, 0, 0), subgroup 0, lane 0" in str(e.value)
    assert "hint: make the offset and the stride multiples of 8 array elements" in str(e.value)


@pytest.mark.parametrize("jit", [False, True])
def test_misaligned_stride_of_a_store(monkeypatch, jit):
    with pytest.raises(EmuError) as e:
        run(DAWN, 0, 20, jit, monkeypatch)          # 40 bytes between columns
    first = str(e.value).splitlines()[0]
    assert first.startswith("align.wgsl:8:3: error: misaligned cooperative matrix store: "
                            "coopmat<f16, 16x16, A> (col_major) in buffer 'o' (@group(0) @binding(1)): "
                            "its stride, 40 bytes, is not a multiple of 16 bytes (the smaller of 16 and "
                            "the column's 32 bytes), as Vulkan's OpCooperativeMatrixStoreKHR requires")


@pytest.mark.parametrize("jit", [False, True])
def test_aligned_start_and_stride_run(monkeypatch, jit):
    a, o = run(WGPU, 8, 24, jit, monkeypatch)      # byte 16, 48 bytes a column (coopLoad: column-major)
    want = np.stack([a[8 + 24 * r: 8 + 24 * r + 16] for r in range(16)])
    assert np.array_equal(o[:256].reshape(16, 16), want)


def test_the_smaller_rule_for_short_rows(monkeypatch):
    """An 8x8 f32 matrix's row is 32 bytes, an 8-column u8 row 8 bytes: the rule is min(16, row)."""
    src = """enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read_write> d: array<f32>;
@compute @workgroup_size(32)
fn main() {
  let m = subgroupMatrixLoad<subgroup_matrix_result<f32, 8, 8>>(&d, START, false, 8u);
  subgroupMatrixStore(&d, 64u, m, false, 8u);
}
"""
    dev = emu.Device("reference", 32)
    for start, ok in ((4, True), (2, False), (12, True)):
        pipe = dev.create_compute_pipeline(dev.create_shader_module(src.replace("START", f"{start}u"), "s.wgsl"))
        d = dev.create_buffer(np.arange(256, dtype=np.float32))
        if ok:
            dev.dispatch(pipe, {(0, 0): d}, (1, 1, 1))
            assert d.read(np.float32)[64:128].tolist() == list(range(start, start + 64))
        else:
            with pytest.raises(EmuError, match="its start, byte 8, is not a multiple of 16 bytes"):
                dev.dispatch(pipe, {(0, 0): d}, (1, 1, 1))


def test_cli_one_message(tmp_path):
    p = tmp_path / "align.wgsl"
    p.write_text(WGPU.replace("START", "4u").replace("STRIDE", "16u"))
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(["run", str(p), "--dispatch", "1", "--profile", "nvidia-h200",
                   "--buffer", "0:0=zeros:2048:f16", "--buffer", "0:1=zeros:2048:f16"])
    assert rc == 1
    assert err.getvalue().count("error:") == 1 and "Traceback" not in err.getvalue()
    assert f"{p}:7:11: error: misaligned cooperative matrix load" in err.getvalue()
