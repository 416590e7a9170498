"""VK_NV_cooperative_matrix2 beyond subgroup scope: workgroup-scope matrices of flexible dimensions,
tensor-layout loads and stores (clamp modes, a transposing view, a clip), per-element functions and
reductions (tests/shaders/spirv/nv2_tensor.comp and nv2_elementwise.comp, run from their SPIR-V
assembly, which the wheel's spirv-as assembles; glslang 13.1.1 refuses the GLSL). Inputs are small
integers, so every sum is exact in any order and numpy's is the reference; the H200's bits are what
traces/hw/vulkan compares."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import emu
from emu.errors import EmuError

DIR = Path(__file__).resolve().parents[3] / "tests" / "shaders" / "spirv"
TENSOR = (DIR / "nv2_tensor.spvasm").read_text()
ELEMWISE = (DIR / "nv2_elementwise.spvasm").read_text()


def _tensor(src=TENSOR, profile="nvidia-h200"):
    rng = np.random.default_rng(3)
    a = rng.integers(-4, 5, (50, 32)).astype(np.float16)
    bt = rng.integers(-4, 5, (32, 32)).astype(np.float16)
    dev = emu.Device(profile)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "tests/shaders/spirv/nv2_tensor.spvasm"))
    bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(bt),
            (0, 2): dev.create_buffer(np.full(64 * 32, -7, np.float32)),
            (0, 3): dev.create_buffer(np.full(32 * 72, -7, np.float32))}
    dev.dispatch(pipe, bufs, (1, 1, 1))
    return a, bt, bufs[(0, 2)].read(np.float32).reshape(64, 32), bufs[(0, 3)].read(np.float32).reshape(32, 72)


def test_tensor_layout_loads_and_stores_at_workgroup_scope():
    a, bt, d, dt = _tensor()
    # rows 50..63 of A lie outside its layout: clamp mode Constant reads the clamp value 0x3C00 (1.0)
    full_a = np.vstack([a.astype(np.float64), np.ones((14, 32))])
    ref = full_a @ bt.astype(np.float64).T          # B was given transposed, loaded through the swap view
    assert np.array_equal(d[:56], ref[:56])
    assert (d[56:] == -7).all()                     # outside the 56-row store layout: dropped
    assert np.array_equal(dt[:, :40], ref[:40].T)   # the transposed store, clipped to rows 0..39 of D
    assert (dt[:, 40:] == -7).all()


def _elementwise(a, b, y, src=ELEMWISE, profile="nvidia-h200"):
    dev = emu.Device(profile)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "tests/shaders/spirv/nv2_elementwise.spvasm"))
    bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): dev.create_buffer(y),
            (0, 3): dev.create_buffer(size=6 * 2048 * 4), (0, 4): dev.create_buffer(size=4 * 768 * 4)}
    dev.dispatch(pipe, bufs, (1, 1, 1))
    return bufs[(0, 3)].read(np.float32).reshape(6, 64, 32), bufs[(0, 4)].read(np.float32).reshape(4, 3, 16, 16)


def test_per_element_functions_and_reductions():
    rng = np.random.default_rng(4)
    a = rng.integers(-4, 5, (64, 32)).astype(np.float16)
    b = rng.integers(-4, 5, (32, 32)).astype(np.float16)
    y = rng.integers(-4, 5, (64, 32)).astype(np.float32)
    r, s = _elementwise(a, b, y)
    d = a.astype(np.float64) @ b.astype(np.float64)
    i, j = np.indices(d.shape)
    assert np.array_equal(r[0], d)
    assert np.array_equal(r[1], d * 0.75 + y)                                   # (row, col, x, Y, 0.75)
    assert np.array_equal(r[2], np.where((j == i) | (j == i + 5), d, -d))       # the row and column seen
    assert np.array_equal(r[3], np.broadcast_to(d.sum(axis=1, keepdims=True), d.shape))
    assert np.array_equal(r[4], np.broadcast_to(d.sum(axis=0, keepdims=True), d.shape))
    assert np.array_equal(r[5], np.full(d.shape, d.sum()))
    i, j = np.indices((16, 16))
    for sg in range(4):
        t = a[16 * sg:16 * sg + 16, :16].astype(np.float64) @ b[:16, :16].astype(np.float64)
        assert np.array_equal(s[sg, 0], t)
        assert np.array_equal(s[sg, 1], np.broadcast_to(t.sum(axis=0, keepdims=True), t.shape))
        assert np.array_equal(s[sg, 2], np.where((j == i) | (j == i + 5), t, -t))


def test_a_flexible_multiply_is_k_steps_of_the_matrix_unit():
    """64x32x32 at workgroup scope: two K steps of 16, each the 16x16x16 configuration's model
    (the H200's rounding), the second accumulating onto the first: exact bits."""
    from emu.numerics import mma as nmma
    from emu.profiles import load_profile
    rng = np.random.default_rng(9)
    f16 = lambda s: (rng.standard_normal(s) * 2.0 ** rng.integers(-6, 6, s)).astype(np.float16)  # noqa: E731
    a, b = f16((64, 32)), f16((32, 32))
    r, _ = _elementwise(a, b, np.zeros((64, 32), np.float32))
    prof = load_profile("nvidia-h200")
    model = prof.model_for(prof.find_config(16, 16, 16, "f16", "f32"))
    step1 = nmma.mma(model, a[None, :, :16], b[None, :16], np.zeros((1, 64, 32), np.float32), "f32")
    want = nmma.mma(model, a[None, :, 16:], b[None, 16:], step1, "f32")[0]
    assert np.array_equal(r[0].view(np.uint32), want.view(np.uint32))
    one_step = a.astype(np.float32) @ b.astype(np.float32)
    assert not np.array_equal(r[0], one_step)          # the inputs make the order show


def test_undefined_clamp_mode_out_of_bounds_is_one_message():
    # the A layout with clamp mode Undefined (the B layout's type): rows 50..63 are undefined behaviour
    src = TENSOR.replace("%9 = OpTypeTensorLayoutNV %uint_2 %uint_1",
                         "%undefined = OpConstant %uint 0\n%9 = OpTypeTensorLayoutNV %uint_2 %undefined")
    assert src != TENSOR
    with pytest.raises(EmuError) as e:
        _tensor(src)
    assert "lies outside the layout's dimensions, and its clamp mode is Undefined" in e.value.message
    assert e.value.loc is not None and e.value.where is not None


def test_a_workgroup_size_without_a_flexible_configuration_is_one_message():
    src = TENSOR.replace("OpExecutionMode %main LocalSize 128 1 1", "OpExecutionMode %main LocalSize 96 1 1")
    with pytest.raises(EmuError) as e:
        _tensor(src)
    assert "no flexible-dimension configuration" in e.value.message and "96 invocations" in e.value.message
    assert "32, 64, 128, 256" in e.value.hint


def test_a_profile_without_flexible_dimensions_refuses_the_matrices():
    with pytest.raises(EmuError) as e:
        _tensor(profile="reference")
    assert "has no" in e.value.message and "64x32" in e.value.message
    assert "profiles that have" in e.value.hint and "nvidia-h200" in e.value.hint


def test_element_access_to_a_workgroup_matrix_without_the_driver_s_layout_is_one_message(tmp_path):
    # OpCooperativeMatrixLengthKHR of the workgroup accumulator's type, after the first per-element
    # call, on a copy of nvidia-h200 without flexible_layout_nv (nvidia-h200 itself has the H200's:
    # tests/frontend/spirv/test_spirv_nv2_lanes.py)
    import json
    from emu.profiles import profile as P
    doc = json.loads((Path(P.__file__).parent / "data" / "nvidia-h200.json").read_text())
    del doc["flexible_layout_nv"], doc["evidence"]["flexible_layout_nv"]
    doc["name"] = "h200-without-layout"
    (tmp_path / "p.json").write_text(json.dumps(doc))
    lines = ELEMWISE.splitlines()
    k = next(n for n, ln in enumerate(lines) if "OpCooperativeMatrixPerElementOpNV" in ln)
    typ = lines[k].split()[3]
    lines.insert(k + 1, f"%len_probe = OpCooperativeMatrixLengthKHR %uint {typ}")
    with pytest.raises(EmuError) as e:
        _elementwise(np.zeros((64, 32), np.float16), np.zeros((32, 32), np.float16), np.zeros((64, 32), np.float32),
                     "\n".join(lines), profile=str(tmp_path / "p.json"))
    assert "element access to coopmat<f32, 64x32, C, workgroup>" in e.value.message
    assert "coopMatPerElementNV" in e.value.hint and "gives no flexible_layout_nv" in e.value.hint


def test_the_ir_text_spells_the_scope_and_round_trips():
    from emu.api import compile_wgsl
    from emu.isa.printer import print_module
    from emu.isa.textparser import parse_ir
    for src, name in ((TENSOR, "nv2_tensor.spvasm"), (ELEMWISE, "nv2_elementwise.spvasm")):
        text = print_module(compile_wgsl(src, name)[0], locs=False)
        assert "coopmat<f16, 64x32, A, workgroup>" in text
        assert print_module(parse_ir(text, name + ".ir"), locs=False) == text


def test_glsl_with_nv2_names_the_compiler_to_use(monkeypatch):
    from emu.frontend.spirv import compile_glsl
    monkeypatch.delenv("EMU_GLSLANG", raising=False)
    with pytest.raises(EmuError) as e:
        compile_glsl((DIR / "nv2_tensor.comp").read_text(), "nv2_tensor.comp")
    assert "EMU_GLSLANG" in e.value.hint and "scripts/glslang_nv2.sh" in e.value.hint


def test_the_h200s_runs_replay():
    """8 runs of nv2_elementwise on the H200 (random f16 and f32 inputs; H200 session 3;
    tests/data/hw/h200/vulkan_nv2_elementwise_runs.npz): the workgroup-scope product, both
    per-element functions, the workgroup row and column sums, the whole-matrix sum (each subgroup's
    part of the driver's spread summed as a subgroup accumulator is, then the subgroups in order:
    fitted on these 8; session 4's held-out set that differed in it is identical now) and the
    subgroup tiles and column sums replay bit for bit."""
    runs = np.load(Path(__file__).resolve().parents[2] / "data" / "hw" / "h200" / "vulkan_nv2_elementwise_runs.npz")
    for t in range(8):
        r, s = _elementwise(runs[f"t{t}/A"], runs[f"t{t}/B"], runs[f"t{t}/Y"])
        want_r, want_s = runs[f"t{t}/R"], runs[f"t{t}/S"]
        for k in range(6):       # D, D * 0.75 + Y, signed by place, row, column and whole sums
            assert np.array_equal(r[k].view(np.uint32), want_r[k].view(np.uint32)), (t, k)
        assert np.array_equal(s.view(np.uint32), want_s.view(np.uint32)), t


def test_a_subgroup_gemm_of_flexible_dimensions_is_k_steps_of_the_matrix_unit():
    """gemm_flexible.comp (plain KHR GLSL: the wheel's glslang compiles it) multiplies 32x32 tiles
    at subgroup scope, shapes only the flexible-dimension configuration admits: each K step of 16
    is the 16x16x16 configuration's rounding, accumulated in order (H200 session 4: IDENTICAL)."""
    from emu.numerics import mma as nmma
    from emu.profiles import load_profile
    rng = np.random.default_rng(2)
    f16 = lambda s: (rng.standard_normal(s) * 2.0 ** rng.integers(-6, 6, s)).astype(np.float16)  # noqa: E731
    a, b = f16((64, 96)), f16((96, 64))
    dev = emu.Device("nvidia-h200")
    mod = dev.create_shader_module((DIR / "gemm_flexible.comp").read_text(), "tests/shaders/spirv/gemm_flexible.comp")
    pipe = dev.create_compute_pipeline(mod, constants={"0": 64, "1": 64, "2": 96})
    bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): dev.create_buffer(size=64 * 64 * 4)}
    dev.dispatch(pipe, bufs, (2, 2, 1))
    prof = load_profile("nvidia-h200")
    model = prof.model_for(prof.find_config(16, 16, 16, "f16", "f32"))
    want = np.zeros((1, 64, 64), np.float32)
    for k in range(0, 96, 16):
        want = nmma.mma(model, a[None, :, k:k + 16], b[None, k:k + 16], want, "f32")
    assert np.array_equal(bufs[(0, 2)].read(np.float32).reshape(64, 64).view(np.uint32), want[0].view(np.uint32))


def test_the_h200s_2x2_sums_replay():
    """8 runs of nv2_2x2 on the H200 (H200 session 4; tests/data/hw/h200/vulkan_nv2_2x2_runs.npz):
    a 32x32 subgroup accumulator and its 2x2 block sums (each row's pair, then the two rows)."""
    runs = np.load(Path(__file__).resolve().parents[2] / "data" / "hw" / "h200" / "vulkan_nv2_2x2_runs.npz")
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module((DIR / "nv2_2x2.spvasm").read_text(),
                                                                "tests/shaders/spirv/nv2_2x2.spvasm"))
    for t in range(8):
        bufs = {(0, 0): dev.create_buffer(runs[f"t{t}/A"]), (0, 1): dev.create_buffer(runs[f"t{t}/B"]),
                (0, 2): dev.create_buffer(size=1280 * 4)}
        dev.dispatch(pipe, bufs, (1, 1, 1))
        assert np.array_equal(bufs[(0, 2)].read(np.float32).view(np.uint32), runs[f"t{t}/R"].view(np.uint32)), t


def test_session_4_s_held_out_whole_sum():
    """Session 4's first nv2_elementwise diff set (regenerated from its seed, as
    scripts/h200_vulkan.py flex() drew it) differed from the H200 in the whole-matrix sum only
    (emu 0xc65b0272, the H200 0xc65b027a: tests/data/hw/h200/vulkan/diffs4_flex.json.gz); the
    second was identical. Both are the H200's now."""
    rng = np.random.default_rng(17)
    f16 = lambda *s: (rng.standard_normal(s) * 2.0 ** rng.integers(-6, 6, s)).astype(np.float16)  # noqa: E731
    for m, n, k in ((64, 64, 96), (96, 64, 64)):
        f16(m, k), f16(k, n)
    for _ in range(16):
        f16(32, 32)
    got = []
    for _ in range(2):
        y = (rng.standard_normal((64, 32)) * 2.0 ** rng.integers(-8, 8, (64, 32))).astype(np.float32)
        a, b = f16(64, 32), f16(32, 32)
        got.append(int(_elementwise(a, b, y)[0][5].view(np.uint32)[0, 0]))
    assert got == [0xC65B027A, 0xC7217604]
