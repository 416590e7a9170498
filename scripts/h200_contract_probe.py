"""Session 9 through Vulkan: which plain f32 `k - x * y` the H200's driver fuses.

    python scripts/h200_contract_probe.py --prepare BUNDLE   # here: each variant of
        tests/shaders/spirv/scalar_contract_probe.comp compiled as emu compiles GLSL (glslang -g),
        variants 0 and 1 also without -g (no OpLine: Tint emits none)
    python scripts/h200_contract_probe.py BUNDLE OUT         # there (the Vulkan setup of
        scripts/h200_vulkan.sh): every variant on 2 input sets, the raw R of each run in
        OUT/scalar_contract_runs.npz (keys s{set}/X, C, Z; s{set}/v{variant})

The probe records raw outputs only; tests/profiles/test_h200_scalar_contract.py compares them
with emu and with the fused and rounded-first formulas.
"""
from __future__ import annotations

import struct
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PROBE = ROOT / "tests" / "shaders" / "spirv" / "scalar_contract_probe.comp"
VARIANTS = [str(v) for v in range(18)] + ["0nog", "1nog"]
LOOPS = {"13", "14", "15"}          # 4 groups of 32 invocations; the others 4 of 256
K = 0.7


def variant_source(v: str) -> str:
    src = PROBE.read_text()
    out = src.replace("#define V 0\n", f"#define V {int(v.rstrip('nog'))}\n", 1)
    assert out != src or v.startswith("0")
    return out


def inputs(seed: int):
    rng = np.random.default_rng(seed)
    x = (rng.uniform(-4, 4, 1024) * 2.0 ** rng.integers(-3, 3, 1024)).astype(np.float32)
    c = (rng.uniform(0.5, 2, 1024) * rng.choice([-1, 1], 1024)).astype(np.float32)
    z = (rng.uniform(-2, 2, 1024) * 2.0 ** rng.integers(-2, 2, 1024)).astype(np.float32)
    return x, c, z


def prepare(bundle: Path):
    import tempfile
    from emu.frontend.spirv import _run, compile_glsl, tool
    bundle.mkdir(parents=True, exist_ok=True)
    for v in VARIANTS:
        if v.endswith("nog"):
            with tempfile.TemporaryDirectory() as d:
                p = Path(d) / "probe.comp"
                p.write_text(variant_source(v))
                r = _run([tool("glslang"), "-V", "--target-env", "vulkan1.3", "-o", str(bundle / f"v{v}.spv"), str(p)],
                         "glslang")
                assert r.returncode == 0, r.stdout + r.stderr
        else:
            (bundle / f"v{v}.spv").write_bytes(compile_glsl(variant_source(v), "scalar_contract_probe.comp"))
    print(sorted(p.name for p in bundle.iterdir()))


def main(argv) -> int:
    if argv[0] == "--prepare":
        prepare(Path(argv[1]))
        return 0
    from emu.hw import vulkan
    bundle, out = Path(argv[0]), Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    print(vulkan.available()[1], flush=True)
    runs = {}
    for s in range(2):
        x, c, z = inputs(100 + s)
        runs[f"s{s}/X"], runs[f"s{s}/C"], runs[f"s{s}/Z"] = x, c, z
        for v in VARIANTS:
            t0 = time.time()
            groups = (4, 1, 1)
            got = vulkan.run_spirv((bundle / f"v{v}.spv").read_bytes(), entry="main", dispatch=groups,
                                   buffers={(0, 0): x.tobytes(), (0, 1): c.tobytes(), (0, 2): z.tobytes(),
                                            (0, 3): bytes(2048 * 4)},
                                   kinds={(0, k): "storage" for k in range(4)}, outputs=[(0, 3)],
                                   spec=[(0, struct.pack("<f", K))], push=struct.pack("<f", K))
            r = np.frombuffer(got[(0, 3)], np.float32).copy()
            runs[f"s{s}/v{v}"] = r
            print(f"set {s} variant {v}: {time.time() - t0:.2f}s", flush=True)
    np.savez_compressed(out / "scalar_contract_runs.npz", **runs)
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
