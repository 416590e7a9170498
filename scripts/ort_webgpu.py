"""Run ONNX Runtime's WebGPU kernels on the virtual device: the WGSL that ONNX Runtime's WebGPU
execution provider generates (its ShaderHelper's prelude, uniforms struct, bindings and indices
helpers around each program's body), as dumped from a running session, read from a folder you
collected; nothing of them is kept here. Without a folder it says so and exits 0.

    python scripts/ort_webgpu.py /tmp/ort [--profile nvidia-h200] [--hw wgpu]

Every *.wgsl in the folder is compiled (counted: ok / rejected with emu's message / crashed).
The programs recognised by their code are also run, with uniforms packed by the WGSL layout of
the program's own Uniforms struct, and compared with a float64 numpy reference:
Transpose (its perm() read from the code), the naive vec4 MatMul (4x4 outputs an invocation),
the tiled MatMul (32x32 workgroup tiles, 4x4 per invocation), MatMulNBits (4-bit weights with
per-block scales and packed zero points) and the DP4A input quantizer (subgroupMax of a 32-lane
block, pack4x8snorm). *.wgsl.template files (ORT's wgsl-gen templates, which need the C++
program that fills them) are counted, not run. --hw runs the recognised programs on the
machine's WebGPU adapter too.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

import emu

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llama_webgpu import U16, U32, Runner, judge  # noqa: E402  (one runner for both scripts)


def pack_uniforms(text: str, file: str, values: dict) -> np.ndarray:
    """The bytes of the program's `var<uniform> uniforms` struct, each member from `values`
    (a number or a sequence for a vector), at the offsets WGSL's layout gives it."""
    module, _ = emu.compile_wgsl(text, file)
    t = next(g.type for g in module.globals if g.space == "uniform")
    raw = np.zeros(-(-t.size // 16) * 16, np.uint8)
    for m, off in zip(t.members, t.offsets):
        v = np.atleast_1d(np.asarray(values.get(m.name, 0)))
        scalar = getattr(m.type, "elem", m.type).name
        v = v.astype({"u32": np.uint32, "i32": np.int32, "f32": np.float32}[scalar])
        raw[off:off + v.nbytes] = v.view(np.uint8)
    return raw


def _strides(shape):
    return [int(np.prod(shape[i + 1:])) for i in range(len(shape) - 1)]


def transpose(text, file, run, rng):
    perm = {int(d): int(s) for d, s in re.findall(r"\ba\[(\d)\] = i\[(\d)\];", text)}
    a = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    # output index i maps to a[perm]: a[d] = i[perm[d]]; output dim perm[d] has a's extent d
    out_shape = [0] * 4
    for d, s in perm.items():
        out_shape[s] = a.shape[d]
    u = pack_uniforms(text, file, {"a_shape": a.shape, "a_stride": _strides(a.shape), "output_shape": out_shape,
                                   "output_stride": _strides(out_shape), "output_size": a.size})
    res = run(text, file, {(0, 0): a, (0, 1): a.nbytes, (0, 2): u}, (-(-a.size // 64), 1, 1), (0, 1), np.float32)
    ref = np.transpose(a, [next(d for d, s in perm.items() if s == k) for k in range(4)]).astype(np.float64)
    return res, ref, np.zeros_like(ref)


def _matmul_ref(a, b):
    ref = a.astype(np.float64) @ b.astype(np.float64)
    return ref, a.shape[1] * 2 * U32 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))


def matmul_naive_vec4(text, file, run, rng, m=12, n=20, k=16):
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    size = m * n // 16
    u = pack_uniforms(text, file, {"a_shape": (m, k // 4), "a_stride": k // 4, "b_shape": (k, n // 4),
                                   "b_stride": n // 4, "output_shape": (1, m, n // 4),
                                   "output_stride": (m * n // 4, n // 4), "output_size": size,
                                   "M": m, "N": n, "K": k})
    res = run(text, file, {(0, 0): a, (0, 1): b, (0, 2): 4 * m * n, (0, 3): u}, (-(-size // 64), 1, 1),
              (0, 2), np.float32)
    return (res, *_matmul_ref(a, b))


def matmul_tiled(text, file, run, rng, m=45, n=70, k=37):
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    gx, gy = -(-n // 32), -(-m // 32)
    u = pack_uniforms(text, file, {"a_shape": (m, k), "a_stride": k, "b_shape": (k, n), "b_stride": n,
                                   "output_shape": (1, m, n), "output_stride": (m * n, n), "dim_a_outer": m,
                                   "dim_b_outer": n, "dim_inner": k, "logical_dispatch_x": gx,
                                   "logical_dispatch_y": gy, "logical_dispatch_z": 1})
    res = run(text, file, {(0, 0): a, (0, 1): b, (0, 2): 4 * m * n, (0, 3): u}, (gx, gy, 1), (0, 2), np.float32)
    return (res, *_matmul_ref(a, b))


def matmul_nbits(text, file, run, rng, m=3, n=21, k=96):
    """A [M, K] f32 times W^T, W [N, K] 4-bit: byte j of a block's 16 holds elements 2j (low
    nibble) and 2j + 1 (high); a scale per 32-element block; zero points 4-bit, 8 to a u32."""
    blocks = k // 32
    a = rng.standard_normal((m, k)).astype(np.float32)
    q = rng.integers(0, 16, (n, k))
    zero = rng.integers(0, 16, (n, blocks))
    scale = (rng.random((n, blocks)) + 0.5).astype(np.float32)
    packed = (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8).reshape(n, k // 2).view(np.uint32)
    zflat = np.zeros(-(-n * blocks // 8) * 8, np.int64)
    zflat[: n * blocks] = zero.reshape(-1)
    zp = (zflat.reshape(-1, 8) << (4 * np.arange(8))).sum(axis=1).astype(np.uint32)
    ntile = -(-n // 8)
    u = pack_uniforms(text, file, {"M": m, "N": n, "K": k, "K_of_a": k // 4, "K_of_b": blocks, "block_size": 32,
                                   "blocks_per_col": blocks, "zero_blocks_per_col": blocks, "num_N_tile": ntile,
                                   "batch_count": 1, "weight_idx": 0, "dispatch_M": m})
    res = run(text, file, {(0, 0): a, (0, 1): packed, (0, 2): scale, (0, 3): zp, (0, 4): 4 * m * n, (0, 5): u},
              (m * ntile, 1, 1), (0, 4), np.float32)
    w = (q - zero.repeat(32, axis=1)) * scale.astype(np.float64).repeat(32, axis=1)
    ref = a.astype(np.float64) @ w.T
    return res, ref, k * 4 * U32 * (np.abs(a.astype(np.float64)) @ np.abs(w.T))


def quantize_dp4a(text, file, run, rng, blocks=6):
    """Per 128 values (32 lanes of vec4<f16>): scale = max |a|, q = pack4x8snorm(a / scale)
    (round(clamp(x, -1, 1) * 127)), scales[] = scale / 127; q may differ by one where the f16
    quotient lands next to a rounding tie."""
    a = rng.standard_normal(blocks * 128).astype(np.float16)
    u = pack_uniforms(text, file, {"output_size": blocks * 32})
    res = run(text, file, {(0, 0): a, (0, 1): 4 * blocks * 32, (0, 2): 2 * blocks, (0, 3): u},
              (-(-blocks // 2), 1, 1), (0, 1), np.uint32)
    mx = np.abs(a.astype(np.float64)).reshape(blocks, 128).max(axis=1).repeat(128)
    ref = np.round(np.clip((a.astype(np.float16) / mx.astype(np.float16)).astype(np.float64), -1, 1) * 127)
    res = {k: (None if g is None else g.view(np.int8).astype(np.float64), note) for k, (g, note) in res.items()}
    return res, ref, np.ones_like(ref)


PROGRAMS = (   # (name, what the code contains, runner)
    ("Transpose", ("fn perm(", "o2i_output"), transpose),
    ("MatMul (naive, vec4)", ("values[0] = fma(b_value_t(a_data[0])",), matmul_naive_vec4),
    ("MatMul (tiled 32x32)", ("mm_Asub", "logical_dispatch_x", "fn mm_readA"), matmul_tiled),
    ("MatMulNBits (4-bit)", ("mm_read_zero", "unpack4xU8", "tile_A"), matmul_nbits),
    ("DP4A quantize (f16 -> i8)", ("pack4x8snorm", "subgroupMax", "scales["), quantize_dp4a),
)


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", nargs="?", help="a folder of ONNX Runtime's generated WGSL (and templates)")
    ap.add_argument("--profile", default="nvidia-h200")
    ap.add_argument("--hw", choices=("wgpu", "dawn"))
    args = ap.parse_args(argv)
    if not args.folder or not Path(args.folder).is_dir():
        print("ort_webgpu: no folder given; skipping (collect ONNX Runtime WebGPU shaders and pass the folder)")
        return 0
    folder = Path(args.folder)
    run = Runner(emu.Device(args.profile), args.hw)
    rng = np.random.default_rng(0)
    counts = {"ok": 0, "rejected": 0, "crash": 0}
    rows, failed = [], False
    templates = sorted(folder.rglob("*.wgsl.template"))
    for path in sorted(folder.rglob("*.wgsl")):
        text = path.read_text()
        try:
            emu.compile_wgsl(text, path.name)
            counts["ok"] += 1
        except emu.EmuError as e:
            counts["rejected"] += 1
            rows.append((path.name, "emu", "no", "-", "-", e.format().splitlines()[0]))
            continue
        except Exception as e:                  # a bug of emu's: count it, show it
            counts["crash"] += 1
            failed = True
            rows.append((path.name, "emu", "crash", "-", "-", f"{type(e).__name__}: {e}"))
            continue
        for name, marks, runner in PROGRAMS:
            if all(mk in text for mk in marks):
                label = f"{name} [{path.name}]"
                try:
                    res, ref, bound = runner(text, path.name, run, rng)
                except emu.EmuError as e:
                    rows.append((label, "emu", "no", "-", "-", e.format().splitlines()[0]))
                    failed = True
                    continue
                for backend, (got, note) in res.items():
                    err, ok = judge(got, ref, bound)
                    failed |= ok != "yes"
                    rows.append((label, backend, "yes" if got is not None else "no", err, ok, note))
    print(f"compiled: {counts['ok']} ok, {counts['rejected']} rejected, {counts['crash']} crashed "
          f"(of {sum(counts.values())} .wgsl); {len(templates)} .wgsl.template counted, not run")
    print(f"{'program':<52} {'on':<5} {'ran':<5} {'max |err|':<10} {'in bound':<9} notes")
    for r in rows:
        print(f"{r[0]:<52} {r[1]:<5} {r[2]:<5} {r[3]:<10} {r[4]:<9} {r[5]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
