"""The H200's results for our GELU-tanh kernel (traces/hw/kernels/llama_gelu_silu.wgsl), at the
inputs where emu first differed (traces/hw/h200/builtins/verify.json.gz, 2026-12-01): the driver
fuses ``0.044715 * v * v + 1`` as fma(0.044715, v * v, 1), in f32 and in f16."""
import pathlib

import numpy as np

import emu

KERNEL = pathlib.Path(__file__).resolve().parents[2] / "traces" / "hw" / "kernels" / "llama_gelu_silu.wgsl"
# (input bits, the H200's gelu bits), f32 then f16
GELU = [(0xbffe7376, 0xbd3e449c), (0x3fd8c25e, 0x3fcef276), (0xc0180a2c, 0xbca7536a), (0xbfaa0803, 0xbdfad6bb),
        (0xbfe3ccf7, 0xbd89135e), (0xbf400983, 0xbe2e1edc), (0xbfb5af72, 0xbde2e4b4), (0x3fc76b94, 0x3fbb814e)]
GELU_H = [(0x4009432d, 0x4038), (0xc005432f, 0xa8f2), (0xc0147c22, 0xa617), (0x3fdcff6c, 0x3e9d),
          (0xbfd238f9, 0xad50), (0x400949c0, 0x4038), (0xc009367b, 0xa86c), (0xbf5af5d5, 0xb160)]


def test_gelu_tanh_as_the_h200_computes_it():
    x = np.zeros(256, np.float32)
    x[:8] = np.array([a for a, _ in GELU], np.uint32).view(np.float32)
    x[8:16] = np.array([a for a, _ in GELU_H], np.uint32).view(np.float32)
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(KERNEL.read_text(), str(KERNEL)))
    bufs = {(0, 0): dev.create_buffer(x)}
    for j, dt in ((1, np.float32), (2, np.float32), (3, np.float16), (4, np.float16)):
        bufs[(0, j)] = dev.create_buffer(np.zeros(256, dt))
    dev.dispatch(pipe, bufs, (1, 1, 1))
    assert bufs[(0, 1)].read(np.uint32)[:8].tolist() == [g for _, g in GELU]
    assert bufs[(0, 3)].read(np.uint16)[8:16].tolist() == [g for _, g in GELU_H]
