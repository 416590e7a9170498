"""The SPIR-V that a WebGPU translator (Tint in Dawn, naga in wgpu) hands to the Vulkan driver.

    python scripts/translator_spirv.py OUT FIRST COUNT [--translators tint,naga] [--glslang]

For each random program (emu.hw.randprog) of seeds FIRST..FIRST+COUNT-1 it creates the WGSL
pipeline on Mesa's lavapipe through Dawn (``wgpudawn``: Tint) and through wgpu-native (``wgpu``:
naga), and keeps the SPIR-V module the driver received, OUT/tint/SEED.spv and OUT/naga/SEED.spv
(--glslang also writes glslang's SPIR-V of the GLSL twin, OUT/glslang/SEED.spv, as emu compiles
it). The capture is Mesa's own: lavapipe writes every module it is given to MESA_SPIRV_DUMP_PATH;
of the modules written while one program's pipeline is made, the last is the program's (wgpu makes
internal modules of its own when its device starts).

The translators' code generation does not depend on the GPU except through Dawn's per-vendor
toggles, and none of those that touch arithmetic is on for NVIDIA (Dawn's toggles for NVIDIA are
workarounds for texture and subgroup bugs), so lavapipe's copy is what the H200's driver compiles.

Skips (exit 0, saying why) without the package of a translator, without a lavapipe adapter, or
where this Mesa build does not honour MESA_SPIRV_DUMP_PATH (a build with NDEBUG).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BACKEND = {"tint": "dawn", "naga": "wgpu"}


def _dumped(path: Path) -> list[Path]:
    return sorted(path.glob("*.spirv"), key=lambda p: (len(p.name), p.name))


def capture(wgsl: str, translator: str, dump: Path) -> bytes:
    """The SPIR-V module that ``translator`` writes for ``wgsl`` (its pipeline made and run once on
    lavapipe); raises RuntimeError where nothing was dumped."""
    from emu.hw.runner import run_on_adapter
    before = set(_dumped(dump))
    run_on_adapter(wgsl, entry="main", dispatch=(1, 1, 1),
                   buffers={(0, 0): 1 << 16, (0, 1): 1 << 16}, outputs=[(0, 1)], backend=BACKEND[translator])
    new = [p for p in _dumped(dump) if p not in before]
    if not new:
        raise RuntimeError("Mesa wrote no SPIR-V (MESA_SPIRV_DUMP_PATH not honoured by this build)")
    return new[-1].read_bytes()


def unavailable(translator: str) -> str:
    """Why ``translator`` cannot be captured here ('' if it can)."""
    from emu.hw.runner import available_adapter
    info, why = available_adapter(BACKEND[translator])
    if info is None:
        return why
    name = f"{info.get('device', '')} {info.get('description', '')}".lower()
    if "llvmpipe" not in name and "lavapipe" not in name:
        return f"the adapter is {info.get('device')!r}, not Mesa's lavapipe (set EMU_HW_ADAPTER=llvmpipe)"
    return ""


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("first", type=int)
    ap.add_argument("count", type=int)
    ap.add_argument("--translators", default="tint,naga")
    ap.add_argument("--glslang", action="store_true")
    a = ap.parse_args(argv)
    dump = Path(os.environ.get("MESA_SPIRV_DUMP_PATH") or tempfile.mkdtemp(prefix="mesa_spirv_"))
    dump.mkdir(parents=True, exist_ok=True)
    os.environ["MESA_SPIRV_DUMP_PATH"] = str(dump)        # read by Mesa when it compiles a module
    os.environ.setdefault("EMU_HW_ADAPTER", "llvmpipe")
    os.environ.setdefault("EMU_DAWN_TOGGLES", "vulkan_enable_f16_on_nvidia")   # as the recordings ran
    from emu.hw import randprog
    out = Path(a.out)
    seeds = range(a.first, a.first + a.count)
    for tr in a.translators.split(","):
        why = unavailable(tr)
        if why:
            print(f"translator_spirv: skipping {tr}: {why}")
            continue
        (out / tr).mkdir(parents=True, exist_ok=True)
        for seed in seeds:
            try:
                spv = capture(randprog.generate(seed).wgsl, tr, dump)
            except RuntimeError as e:
                print(f"translator_spirv: skipping {tr}: {e}")
                break
            except Exception as e:                          # the translator refused the program
                print(f"translator_spirv: {tr} seed {seed}: {type(e).__name__}: {str(e)[:300]}")
                continue
            (out / tr / f"{seed}.spv").write_bytes(spv)
        print(f"translator_spirv: {tr}: {len(list((out / tr).glob('*.spv')))} modules in {out / tr}")
    if a.glslang:
        from emu.frontend.spirv import compile_glsl
        (out / "glslang").mkdir(parents=True, exist_ok=True)
        for seed in seeds:
            text, file = randprog.source(randprog.generate(seed), "vulkan")
            (out / "glslang" / f"{seed}.spv").write_bytes(compile_glsl(text, file))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
