"""`x / y + z` in f32 on the H200 is one fused multiply-add of x and RCP(y): measured through
Vulkan (scripts/h200_vulkan.py --nv2's probe, the first 4096 of 65,536 results in
tests/data/hw/h200/div_add.npz; fma(x, RCP(y), z) gave all 65,536, emu before this rule 46,506).
The nvidia-h200 profile's contraction now fuses a division used only by an add; a `precise`
division stays rounded on its own."""
from pathlib import Path

import numpy as np

import emu

DATA = Path(__file__).resolve().parents[1] / "data" / "hw" / "h200" / "div_add.npz"
KERNEL = (Path(__file__).resolve().parents[1] / "shaders" / "spirv" / "div_add.comp").read_text()


def _run(precise: bool):
    d = np.load(DATA)
    src = KERNEL.replace("r[i] = x[i] / y[i] + z[i];", "precise vec4 q = x[i] / y[i]; r[i] = q + z[i];") \
        if precise else KERNEL
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "div_add.comp"))
    bufs = {(0, k): dev.create_buffer(d[n]) for k, n in enumerate("xyz")}
    bufs[(0, 3)] = dev.create_buffer(size=d["r"].nbytes)
    dev.dispatch(pipe, bufs, (d["r"].size // 256, 1, 1))
    return bufs[(0, 3)].read(np.float32), d["r"]


def test_a_division_feeding_an_add_is_fused_as_the_h200_does():
    got, gpu = _run(False)
    assert np.array_equal(got.view(np.uint32), gpu.view(np.uint32))


def test_a_precise_division_is_rounded_first():
    from emu.numerics import nvidia
    got, gpu = _run(True)
    d = np.load(DATA)
    want = nvidia.binary("add", "f32", nvidia.binary("div", "f32", d["x"], d["y"]), d["z"])
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    assert not np.array_equal(got.view(np.uint32), gpu.view(np.uint32))
