"""coop_ops.comp's f32 result on the H200: `d = (d - mc) / mc; for (i < d.length()) d[i] = d[i] + i`
is, element by element, fma(d - mc, RCP(mc), i): the driver unrolls the loop over the fragment
and fuses each element's x * RCP(y) with its add, as it does for scalars (test_h200_div_add.py).

tests/data/hw/h200/vulkan_coop_ops.npz holds session 1's inputs (scripts/h200_vulkan.py,
default_rng(7)) and the H200's R, H and IR through Vulkan (session.log.gz, diffs.json.gz): the
diff reported 739 of 768 values equal to emu then (commit 97cf5a8's values are those 739) and
all 29 others with the GPU's bits, which are put in their places here."""
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.isa.types import F32, CoopMatrixType
from emu.numerics import nvidia, sfu
from emu.numerics.dtypes import FORMAT
from emu.numerics.mma import mma
from emu.numerics.rounding import round_fraction

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "hw" / "h200" / "vulkan_coop_ops.npz"
KERNEL = (ROOT / "shaders" / "spirv" / "coop_ops.comp").read_text()


def _run(src, d):
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "coop_ops.comp"))
    bufs = {(0, 0): d["A"], (0, 1): d["B"], (0, 2): d["C"], (0, 3): np.zeros(256, np.float32),
            (0, 4): np.zeros(256, np.float16), (0, 5): d["XA"], (0, 6): d["XB"], (0, 7): np.zeros(256, np.int32)}
    bufs = {k: dev.create_buffer(v) for k, v in bufs.items()}
    dev.dispatch(pipe, bufs, (1, 1, 1))
    return (bufs[(0, 3)].read(np.float32), bufs[(0, 4)].read(np.float16), bufs[(0, 7)].read(np.int32))


def test_coop_ops_gives_the_h200s_768_values():
    d = np.load(DATA)
    r, h, ir = _run(KERNEL, d)
    assert np.array_equal(r.view(np.uint32), d["R"].view(np.uint32))      # 29 differed before
    assert np.array_equal(h.view(np.uint16), d["H"].view(np.uint16))
    assert np.array_equal(ir, d["IR"])


def _fma(a, b, c):
    """f32 fma, elementwise: the exact a * b + c, rounded once to nearest-even."""
    out = np.empty(a.shape, np.float32)
    for k in np.ndindex(a.shape):
        exact = Fraction(float(a[k])) * Fraction(float(b[k])) + Fraction(float(c[k]))
        out[k] = float(round_fraction(exact, FORMAT["f32"]))
    return out


def test_the_recording_separates_fused_from_rounded_division():
    """The model on its own: fma(x, RCP(y), i) gives all 256 recorded f32 results; x * RCP(y)
    rounded, then + i (emu before) 227; IEEE x / y, then + i, 213."""
    d = np.load(DATA)
    x, rcp, i = _model(d)
    c = d["C"].reshape(16, 16)
    gpu = d["R"].reshape(16, 16).view(np.uint32)
    same = lambda v: int((v.view(np.uint32) == gpu).sum())      # noqa: E731
    assert same(_fma(x, rcp, i)) == 256
    assert same((nvidia.binary("div", "f32", x, c) + i).astype(np.float32)) == 227
    assert same((x / c + i).astype(np.float32)) == 213


def _model(d):
    """(x, RCP(C), i): the division's operands and each element's fragment index."""
    prof = emu.Device("nvidia-h200").profile
    a = d["A"].reshape(16, 16).T            # column-major in the buffer
    dm = mma(prof.model_for(prof.find_config(16, 16, 16, "f16", "f32")), a[None], d["B"].reshape(1, 16, 16),
             d["C"].reshape(1, 16, 16), "f32")[0]
    c = d["C"].reshape(16, 16)
    i = np.zeros((16, 16), np.float32)
    lm = prof.matrix_lane_map(CoopMatrixType(16, 16, F32, "C"), 32)
    for lane in range(lm.rows_idx.shape[0]):
        for k in range(lm.rows_idx.shape[1]):
            i[lm.rows_idx[lane, k], lm.cols_idx[lane, k]] = k
    return (dm * np.float32(0.5) - c).astype(np.float32), sfu.rcp(c), i


@pytest.mark.parametrize("update,fused", [("d[i] = d[i] - float(i);", True), ("d[i] = float(i) - d[i];", False)])
def test_a_subtracting_update(update, fused):
    """d[i] - c fuses (fma(x, RCP(y), -c)); c - d[i] after a division is rounded first (both
    measured: test_the_probes_replay_on_the_h200s_runs)."""
    d = np.load(DATA)
    src = KERNEL.replace("d[i] = d[i] + float(i);", update)
    assert src != KERNEL
    r, _, _ = _run(src, d)
    x, rcp, i = _model(d)
    want = _fma(x, rcp, -i) if fused else (i - (x * rcp).astype(np.float32)).astype(np.float32)
    assert np.array_equal(r.reshape(16, 16).view(np.uint32), want.view(np.uint32))


PROBES = ROOT / "data" / "hw" / "h200" / "vulkan_coop_elem_probe_runs.npz"


@pytest.mark.parametrize("probe,blocks", [("coop_elem_probe", range(6)), ("coop_elem_probe2", range(5))])
def test_the_probes_replay_on_the_h200s_runs(probe, blocks):
    """4 raw runs of each probe through Vulkan on the H200 (scripts/h200_vulkan.py --int8, --probe2):
    emu gives every element of these blocks (see the kernels' heads for what each block does)."""
    runs = np.load(PROBES)
    src = (ROOT / "shaders" / "spirv" / f"{probe}.comp").read_text()
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, f"{probe}.comp"))
    key = "probe1" if probe == "coop_elem_probe" else "probe2"
    for t in range(4):
        gpu = runs[f"{key}/t{t}/R"]
        bufs = {(0, 0): dev.create_buffer(runs[f"{key}/t{t}/X"]), (0, 1): dev.create_buffer(runs[f"{key}/t{t}/C"]),
                (0, 2): dev.create_buffer(size=gpu.nbytes)}
        dev.dispatch(pipe, bufs, (1, 1, 1))
        got = bufs[(0, 2)].read(np.float32).reshape(gpu.shape)
        for blk in blocks:
            assert np.array_equal(got[blk].view(np.uint32), gpu[blk].view(np.uint32)), (t, blk)


def test_the_h200_rounds_a_scalar_constant_minus_product_first_here():
    """coop_elem_probe2.comp's block 4, `0.7 - x[j] * c[j]` after `0.7 - x[j] / c[j]` in plain
    GLSL: the H200 rounded the product first in all 1,024 results (fused: 690), as emu now does
    (emu/isa/compiler.py, decision rounded-after-division: a product after the division of the same loads; session 9's probe,
    tests/profiles/test_h200_scalar_contract.py: alone it fuses). emu's block 4 is
    test_the_probes_replay_on_the_h200s_runs's."""
    runs = np.load(PROBES)
    for t in range(4):
        x, c, gpu = (runs[f"probe2/t{t}/{k}"] for k in "XCR")
        rounded = (np.float32(0.7) - (x * c).astype(np.float32)).astype(np.float32)
        assert np.array_equal(gpu[4].ravel().view(np.uint32), rounded.view(np.uint32))


def test_a_precise_matrix_or_an_element_updated_twice_is_not_fused():
    """`precise` (NoContraction) on d keeps the division rounded; so does a loop that reads an
    element after updating it (its second add no longer has the product as operand: emu fuses
    only a loop whose one access to d is one update of d[i])."""
    d = np.load(DATA)
    precise = KERNEL.replace("coopmat<float, S, 16, 16, gl_MatrixUseAccumulator> d =",
                             "precise coopmat<float, S, 16, 16, gl_MatrixUseAccumulator> d =")
    twice = KERNEL.replace("d[i] = d[i] + float(i);", "d[i] = d[i] + float(i); d[i] = d[i] + 0.0;")
    for src in (precise, twice):
        assert src != KERNEL
        r, _, _ = _run(src, d)
        assert int((r.view(np.uint32) != d["R"].view(np.uint32)).sum()) == 29
