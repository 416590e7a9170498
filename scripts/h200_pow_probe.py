"""pow(x, c) with a constant exponent, over negative and positive x, f32 and f16, through Dawn.

    python scripts/h200_pow_probe.py OUT.npz [--backend dawn] [--more]   # on the GPU machine: records
    python scripts/h200_pow_probe.py --against OUT.npz              # here: emu's bits against it

WGSL leaves pow(x, y) undefined for x < 0 (it is exp2(y * log2(x))), but llama.cpp's kernels
write pow(x, 2.0) and pow(x, 3.0) of signed values (row_norm's sum of squares, unary's GELU), so
what a driver does with a constant exponent decides their results. Each exponent is one kernel
over the same 4,096 inputs (spread over many binades, both signs, zeros, subnormals, infinities).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

EXPONENTS = ("2.0", "3.0", "4.0", "0.5", "1.0", "-1.0", "-2.0", "1.5")
MORE = ("0.0", "5.0", "6.0", "7.0", "8.0", "16.0", "-3.0", "-0.5", "2.5", "32.0")    # --more
N = 4096


def inputs() -> np.ndarray:
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(N) * np.exp2(rng.integers(-20, 20, N))).astype(np.float32)
    x[:12] = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, np.inf, -np.inf, 1e-40, -1e-40, 0.5, -0.5]
    return x


def kernel(exp: str, ty: str) -> str:
    head = "enable f16;\n" if ty == "f16" else ""
    return head + f"""@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> r: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
    let x = {ty}(a[g.x]);
    r[g.x] = f32(pow(x, {ty}({exp})));
}}
"""


def cases(exponents=EXPONENTS):
    for ty in ("f32", "f16"):
        for e in exponents:
            yield f"{ty} pow(x, {e})", kernel(e, ty)


def record(out: Path, backend: str, exponents=EXPONENTS) -> int:
    from emu.hw.runner import run_on_adapter
    x = inputs()
    got = {"x": x}
    for name, src in cases(exponents):
        r = run_on_adapter(src, dispatch=(N // 64,), buffers={(0, 0): x, (0, 1): 4 * N}, outputs=[(0, 1)],
                           backend=backend)
        got[name] = np.frombuffer(r[(0, 1)], np.float32).copy()
        print(name, "recorded")
    np.savez(out, **got)
    return 0


def against(path: Path, profile: str = "nvidia-h200") -> int:
    import emu
    rec = np.load(path)
    x = rec["x"]
    dev = emu.Device(profile)
    for name, src in cases(tuple(k.split(", ")[1][:-1] for k in rec.files if k.startswith("f32 "))):
        a, r = dev.create_buffer(x), dev.create_buffer(size=4 * N)
        dev.dispatch(dev.create_compute_pipeline(dev.create_shader_module(src, "pow.wgsl")), {(0, 0): a, (0, 1): r},
                     (N // 64, 1, 1))
        mine, hw = r.read(np.float32).view(np.uint32), rec[name].view(np.uint32)
        same = mine == hw
        neg = x < 0
        print(f"{name:22s} identical {same.sum():5d}/{N}  (x < 0: {same[neg].sum()}/{neg.sum()})", end="")
        bad = np.flatnonzero(~same)[:2]
        print("".join(f"  x={x[k]:.4g} hw={rec[name][k]:.6g} emu={mine.view(np.float32)[k]:.6g}" for k in bad))
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "--against":
        sys.exit(against(Path(args[1])))
    be = args[args.index("--backend") + 1] if "--backend" in args else "dawn"
    sys.exit(record(Path(args[0]), be, EXPONENTS + MORE if "--more" in args else EXPONENTS))
