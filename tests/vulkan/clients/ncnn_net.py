"""A small network built in code, run by ncnn (its PyPI wheel, which has Vulkan compute) on the
Vulkan device the loader gives it and on ncnn's CPU path; prints both outputs' largest difference.

    python ncnn_net.py WORKDIR [fp32|fp16]

The network (ncnn's .param text and .bin weights, written to WORKDIR): a 3x3 convolution 3 -> 8
channels with bias and ReLU, 2x2 max pooling, a fully connected layer 512 -> 10, softmax. fp32
turns ncnn's half-precision storage and arithmetic off on the GPU (the outputs then differ from the
CPU's only by summation order); fp16 keeps ncnn's defaults (16-bit storage and arithmetic)."""
import struct
import sys
from pathlib import Path

import numpy as np
import ncnn

PARAM = """7767517
5 5
Input        data  0 1 data 0=16 1=16 2=3
Convolution  conv  1 1 data c1 0=8 1=3 4=1 5=1 6=216 9=1
Pooling      pool  1 1 c1 p1 0=0 1=2 2=2
InnerProduct fc    1 1 p1 fc 0=10 1=1 2=5120
Softmax      prob  1 1 fc prob 0=0
"""


def write_model(work: Path, rng) -> tuple[Path, Path]:
    """The .param text and the .bin: each layer's weights after a 4-byte tag 0 (raw float32), its
    bias raw."""
    blobs = [rng.standard_normal(216) * 0.3, rng.standard_normal(8) * 0.1,
             rng.standard_normal(5120) * 0.05, rng.standard_normal(10) * 0.1]
    data = b"".join((struct.pack("<I", 0) if k % 2 == 0 else b"") + b.astype("<f4").tobytes()
                    for k, b in enumerate(blobs))
    (work / "net.param").write_text(PARAM)
    (work / "net.bin").write_bytes(data)
    return work / "net.param", work / "net.bin"


def run(param: Path, weights: Path, x: np.ndarray, gpu: bool, fp16: bool) -> np.ndarray:
    net = ncnn.Net()
    net.opt.use_vulkan_compute = gpu
    if gpu and not fp16:
        net.opt.use_fp16_packed = net.opt.use_fp16_storage = net.opt.use_fp16_arithmetic = False
    net.load_param(str(param))
    net.load_model(str(weights))
    ex = net.create_extractor()
    ex.input("data", ncnn.Mat(x))
    rc, out = ex.extract("prob")
    assert rc == 0, f"extract returned {rc}"
    return np.array(out).copy()


def main() -> None:
    work, mode = Path(sys.argv[1]), (sys.argv[2] if len(sys.argv) > 2 else "fp32")
    rng = np.random.default_rng(7)
    param, weights = write_model(work, rng)
    x = rng.standard_normal((3, 16, 16)).astype(np.float32)
    print("gpus", ncnn.get_gpu_count(), ncnn.get_gpu_info(0).device_name() if ncnn.get_gpu_count() else "-")
    cpu = run(param, weights, x, False, False)
    gpu = run(param, weights, x, True, mode == "fp16")
    print("cpu", " ".join(f"{v:.9g}" for v in cpu.ravel()))
    print("gpu", " ".join(f"{v:.9g}" for v in gpu.ravel()))
    print("max_abs_diff", float(np.abs(cpu - gpu).max()), "sum", float(gpu.sum()))
    ncnn.destroy_gpu_instance()


if __name__ == "__main__":
    main()
