"""Every MMA recorded on a real NVIDIA H200 (tests/data/hw/h200, see its README), replayed through
a WGSL shader on the emulator with the `nvidia-h200` profile: D must match bit for bit.

The shader is the recording's own (one trial per workgroup, Dawn's subgroup-matrix dialect), so
this checks the whole path: front end, lane maps, load/store addressing (including the H200's
stride unit for 8-bit matrices and its out-of-bounds behaviour) and the numeric model."""
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.hw.record import shader   # the shader the recordings were made with

DATA = Path(__file__).resolve().parents[1] / "data" / "hw" / "h200"


def cases():
    out = []
    for f in ("mma_f16.npz", "mma_f32.npz", "mma_int.npz", "mma_special.npz"):
        with np.load(DATA / f) as z:
            for key in sorted({k.rsplit("/", 1)[0] for k in z.files}):
                out.append(pytest.param(f, key, id=key))
    return out


def bits(x):
    return x.view({2: np.uint16, 4: np.uint32}[x.dtype.itemsize])


def run(src, bufs, trials, bounds="strict"):
    dev = emu.Device("nvidia-h200", bounds=bounds)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "replay.wgsl"))
    handles = {(0, i): dev.create_buffer(x) for i, x in enumerate(bufs)}
    handles[(0, 3)] = dev.create_buffer(size=bufs[2].nbytes)
    dev.dispatch(pipe, handles, (trials, 1, 1))
    return handles[(0, 3)].read(bufs[2].dtype)


@pytest.mark.parametrize("file,key", cases())
def test_h200_vectors_bit_exact(file, key):
    T, R, shape = key.split("_")[:3]
    M, N, K = (int(x) for x in shape.split("x"))
    with np.load(DATA / file) as z:
        if key.endswith("_oob"):
            A0, B0, C, D, trial = (z[f"{key}/{n}"] for n in ("A0", "B0", "C", "D", "trial"))
            # The recording dispatched 4096 trials over buffers of 4096 matrices, passing offsets
            # and strides meant as bytes that the GPU counted in 4-byte words: trials >= 1024
            # started past the end. Rebuild those buffers and that dispatch.
            rng = np.random.default_rng(7)
            abuf = rng.integers(0, 256, 4096 * M * K, dtype=np.uint8)
            bbuf = rng.integers(0, 256, 4096 * K * N, dtype=np.uint8)
            abuf[: M * K] = A0.view(np.uint8).reshape(-1)
            bbuf[: K * N] = B0.view(np.uint8).reshape(-1)
            cbuf = np.zeros((4096, M, N), C.dtype)
            cbuf[trial] = C
            src = shader(T, R, M, N, K, 32, unit="matrix_element")   # byte-meant offsets, as recorded
            got = run(src, [abuf, bbuf, cbuf], 4096, bounds="webgpu").reshape(4096, M, N)[trial]
            np.testing.assert_array_equal(bits(got), bits(D))
            return
        A, B, C, D = (z[f"{key}/{n}"] for n in "ABCD")
    trials = A.shape[0]
    # The files hold the matrices the GPU read, laid out densely here and, for 8-bit types,
    # addressed the H200 way: offset and stride in 4-byte words of the u32/i32 array.
    src = shader(T, R, M, N, K, 32)
    got = run(src, [A, B, C], trials).reshape(D.shape)
    mismatch = bits(got) != bits(D)
    assert not mismatch.any(), (
        f"{int(mismatch.sum())} of {D.size} results differ; first at {np.argwhere(mismatch)[0].tolist()}: "
        f"got {got[mismatch][0]!r} want {D[mismatch][0]!r}")
