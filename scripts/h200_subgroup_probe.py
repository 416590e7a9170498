"""Subgroup votes and quads on the GPU: tests/shaders/spirv/subgroup_allequal_special.comp
(subgroupAllEqual where float and bit equality part: signed zeros, NaNs) and
subgroup_quad_allequal.comp, through Vulkan directly.

    python scripts/h200_subgroup_probe.py --prepare DIR      # here: glslang's SPIR-V and the inputs
    python scripts/h200_subgroup_probe.py DIR OUT.npz        # on the device machine (no glslang there)

OUT.npz holds, per probe, its input `NAME.x` and the words it wrote, `NAME.y`.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QNAN, INF, ONE, NEG_ZERO = 0x7FC00000, 0x7F800000, 0x3F800000, 0x80000000


def allequal_inputs() -> np.ndarray:
    """Eight subgroups of 32 (one workgroup each), one case each."""
    cases = [[QNAN] * 32,                                   # one NaN everywhere
             [NEG_ZERO, 0] * 16,                            # -0.0 and +0.0
             [QNAN + k for k in range(32)],                 # NaNs of 32 payloads
             [QNAN] + [ONE] * 31,                           # a NaN first
             [ONE] * 31 + [QNAN],                           # a NaN last
             [QNAN] * 31 + [ONE],                           # numbers but one
             [INF] * 32,                                    # +inf everywhere
             [ONE] * 32]                                    # 1.0 everywhere
    return np.array(cases, np.uint32).reshape(-1)


def quad_inputs() -> np.ndarray:
    x = np.random.default_rng(7).integers(0, 1 << 32, 128, dtype=np.uint64).astype(np.uint32)
    x[32:40] = 77
    return x


PROBES = {"allequal": ("subgroup_allequal_special.comp", allequal_inputs, (8, 1, 1), 256 * 4, None),
          "quad": ("subgroup_quad_allequal.comp", quad_inputs, (2, 1, 1), 256 * 16, 3)}


def prepare(out: Path) -> None:
    from emu.frontend.spirv import spirv_binary
    out.mkdir(parents=True, exist_ok=True)
    for name, (file, _, _, _, _) in PROBES.items():
        src = (ROOT / "tests/shaders/spirv" / file).read_text()
        (out / f"{name}.spv").write_bytes(spirv_binary(src, f"tests/shaders/spirv/{file}"))
    print("prepared", ", ".join(PROBES), "in", out)


def record(bundle: Path, out: Path) -> int:
    from emu.hw.vulkan import device_info, run_spirv
    print("device:", device_info())
    got = {}
    for name, (file, inputs, dispatch, size, push) in PROBES.items():
        x = inputs()
        res = run_spirv((bundle / f"{name}.spv").read_bytes(), entry="main", dispatch=dispatch,
                        buffers={(0, 0): x.tobytes(), (0, 1): bytes(size)},
                        kinds={(0, 0): "storage", (0, 1): "storage"}, outputs=[(0, 1)],
                        push=None if push is None else np.array([push], np.uint32).tobytes())
        got[f"{name}.x"], got[f"{name}.y"] = x, np.frombuffer(res[(0, 1)], np.uint32)
        print(name, "recorded", got[f"{name}.y"].size, "words")
    np.savez(out, **got)
    return 0


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[:1] == ["--prepare"]:
        prepare(Path(a[1]))
    else:
        sys.exit(record(Path(a[0]), Path(a[1])))
