"""The H200 session through Vulkan directly (scripts/h200_vulkan.sh sets up the machine):

1. the device, its extensions and its KHR cooperative-matrix configurations (props.json);
2. `emu diff --backend vulkan` against nvidia-h200 of our GLSL/SPIR-V kernels (tests/shaders/spirv:
   the KHR GEMM, the matrix operations, the spec-constant-shaped blocked GEMM in three shapes, bf16
   16x16x16, plain control flow) and of llama.cpp's mul_mm.comp (scripts/llama_vulkan.py, from the
   fetched copy in the bundle, when there is one);
3. `emu record` through Vulkan: D = A*B + C of bf16 x bf16 -> f32 16x16x16 (Vulkan-only on the
   H200) and, through the same kernel, f16 x f16 -> f32 16x16x16 (whose model Dawn's recording
   fixed: the check that this path records what the matrix unit does), in record.py's key format
   (vectors/mma_bf16.npz, vectors/mma_f16_vk.npz; A and B of bf16 keys as their uint16 bits).

    python scripts/h200_vulkan.py --prepare          # here: compile the kernels into the bundle
    python scripts/h200_vulkan.py OUTDIR [--quick]   # there
    python scripts/h200_vulkan.py OUTDIR --nv2       # there: the NV2 kernel and the x / y + z probe
    python scripts/h200_vulkan.py OUTDIR --cm2       # there: NV2 workgroup scope, mul_mm_cm2.comp
    python scripts/h200_vulkan.py OUTDIR --flex      # there: subgroup flexible dimensions, 2x2 sums
    python scripts/h200_vulkan.py OUTDIR --verify    # there: session 5's fits on held-out inputs
    python scripts/h200_vulkan.py OUTDIR --maint1    # there: maintenance1 (or its NV2 twin), the
                                                     # whole-matrix sums, the lanes of NV2 matrices
    python scripts/h200_vulkan.py OUTDIR --int8      # there: coop_ops.comp with the element-fma model,
                                                     # the element-update probe, mma_int8.comp
    python scripts/h200_vulkan.py OUTDIR --probe2    # there: the element-update probe's follow-up

Prints one line per step; everything goes to OUTDIR (diffs.json, props.json, llama_vulkan.json,
vectors/). On a device without cooperative matrices (lavapipe) the matrix kernels end in one
message each (the capability the device lacks) and the plain ones run.
"""
from __future__ import annotations

import json
import struct
import sys
import time
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHADERS = ROOT / "tests" / "shaders" / "spirv"
BUNDLE = ROOT / ".hwtmp" / "vk"
SPV = BUNDLE / "spv"            # the kernels compiled where glslang and spirv-as are (--prepare)


def kernel_source(name: str) -> tuple[str, str]:
    """(source, file) of a kernel: its SPIR-V from the bundle where there is one, else the file."""
    spv = SPV / (name.rsplit(".", 1)[0] + ".spv")
    if spv.is_file():
        return spv.read_bytes().decode("utf-8", "surrogateescape"), f"tests/shaders/spirv/{spv.name}"
    return (SHADERS / name).read_text(), f"tests/shaders/spirv/{name}"


def prepare():
    """Compile every kernel of the session into the bundle (run where the tools are)."""
    from emu.frontend.spirv import spirv_binary
    SPV.mkdir(parents=True, exist_ok=True)
    for name in sorted({k[0] for k in kernels(np.random.default_rng(0))} |
                       {"mma_bf16.spvasm", "mma_f16_pairs.comp", "nv2_reduce.spvasm", "div_add.comp",
                        "nv2_tensor.spvasm", "nv2_elementwise.spvasm", "nv2_2x2.spvasm", "gemm_flexible.comp",
                        "ext_maint1_nv2.spvasm", "nv2_element_write.spvasm", "mma_int8.comp",
                        "coop_elem_probe.comp", "coop_elem_probe2.comp"}):
        (SPV / (name.rsplit(".", 1)[0] + ".spv")).write_bytes(spirv_binary((SHADERS / name).read_text(), name))
    # glslang 16.6's own binaries (EMU_GLSLANG, scripts/glslang_nv2.sh) of the maintenance1 kernel and
    # the lane probe at both scopes
    import os
    import subprocess
    if os.environ.get("EMU_GLSLANG"):
        for out, extra, src in (("ext_maint1", [], "ext_maint1.comp"), ("nv2_lanes_wg", [], "nv2_lanes_probe.comp"),
                                ("nv2_lanes_sg", ["-DSCOPE=gl_ScopeSubgroup"], "nv2_lanes_probe.comp")):
            subprocess.run([os.environ["EMU_GLSLANG"], "-V", "--target-env", "vulkan1.3", *extra, "-o",
                            str(SPV / f"{out}.spv"), str((ROOT / "traces" / "hw" / "vulkan" if "probe" in src else SHADERS) / src)],
                           check=True, capture_output=True)
    sys.path.insert(0, str(ROOT / "scripts"))
    import llama_vulkan
    llama_vulkan.main(["/tmp/llama/vulkan-shaders", "--spv-dir", str(SPV), "--cases", "none"])
    print("\n".join(sorted(p.name for p in SPV.iterdir())))


def say(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def logged_diff(log: dict, name: str, groups, bufs, consts=None, label: str | None = None):
    """`emu diff --backend vulkan` of a bundled kernel against nvidia-h200, its report appended to
    log["diffs"] and a line said (a crash is logged, not raised)."""
    from emu.hw.diff import diff_shader
    t0 = time.time()
    what = f"{name} {label or consts or ''}".strip()
    try:
        rep = diff_shader(*kernel_source(name), dispatch=groups, profile="nvidia-h200", backend="vulkan",
                          overrides=consts or {}, buffers=bufs, first=32)
        js = rep.to_json()
        js["spec_constants"], js["inputs"], js["seconds"] = consts, label, round(time.time() - t0, 2)
        log["diffs"].append(js)
        say(f"diff {what}: {rep.result.upper()} {js.get('totals')} in {js['seconds']}s")
        if rep.result != "identical":
            print(rep.text()[-2500:], flush=True)
    except Exception:
        log["diffs"].append({"shader": name, "inputs": label, "result": "crash", "error": traceback.format_exc()[-3000:]})
        say(f"diff {what}: CRASH\n{traceback.format_exc()[-1500:]}")


def kernels(rng):
    """(file, dispatch, spec constants, buffers) of our kernels, with the inputs their tests use."""
    from emu.frontend.spirv.module import PUSH_CONSTANTS
    f16 = lambda *s: rng.uniform(-1, 1, s).astype(np.float16)  # noqa: E731
    out = [("gemm_coopmat.comp", (4, 4, 1), {"0": 64, "1": 64, "2": 64},
            {(0, 0): f16(64, 64), (0, 1): f16(64, 64), (0, 2): np.zeros(64 * 64, np.float32)}),
           ("coop_ops.comp", (1, 1, 1), {},
            {(0, 0): f16(16, 16), (0, 1): f16(16, 16), (0, 2): rng.uniform(0.5, 2, 256).astype(np.float32),
             (0, 3): np.zeros(256, np.float32), (0, 4): np.zeros(256, np.float16),
             (0, 5): rng.integers(-128, 128, 512).astype(np.int8), (0, 6): rng.integers(-128, 128, 512).astype(np.int8),
             (0, 7): np.zeros(256, np.int32)})]
    m, n, k = 40, 56, 48
    for wg, tm, tn, tk, tile in [(64, 16, 16, 16, 32), (128, 16, 8, 16, 16), (64, 16, 8, 8, 32)]:
        groups = (-(-m // (2 * tm)), -(-n // ((wg // 64) * tile)), 1)
        out.append(("gemm_spec_tiles.comp", groups, {"0": wg, "1": tm, "2": tn, "3": tk, "4": tile},
                    {(0, 0): f16(m, k), (0, 1): f16(n, k), (0, 2): np.zeros(m * n, np.float32),
                     PUSH_CONSTANTS: struct.pack("<3I", m, n, k)}))
    import ml_dtypes
    t = 8
    bf = (rng.standard_normal((2, t, 16, 16)) * 2.0 ** rng.integers(-4, 4, (2, t, 16, 16))).astype(ml_dtypes.bfloat16)
    out.append(("mma_bf16.spvasm", (t, 1, 1), {},
                {(0, 0): bf[0].view(np.uint16).view(np.uint32).ravel(), (0, 1): bf[1].view(np.uint16).view(np.uint32).ravel(),
                 (0, 2): rng.standard_normal(t * 256).astype(np.float32), (0, 3): np.zeros(t * 256, np.float32)}))
    out.append(("control.comp", (4, 1, 1), {"0": "32"}, None))
    return out


def nv2(out: Path) -> dict:
    """NV2 reductions and conversions: diffs with random floats (the order of the H200's sums
    shows), and 8 raw runs (inputs and outputs) to fit that order; the scalar x / y + z probe
    (tests/shaders/spirv/div_add.comp: does the driver fuse x * RCP(y) with the add?)."""
    from emu.hw import vulkan
    from emu.hw.diff import diff_shader
    log = {"diffs": []}
    src, file = kernel_source("nv2_reduce.spvasm")
    spv = src.encode("utf-8", "surrogateescape")
    rng = np.random.default_rng(11)
    runs = {}
    for t in range(8):
        a = (rng.standard_normal((16, 16)) * 2.0 ** rng.integers(-4, 4, (16, 16))).astype(np.float16)
        b = (rng.standard_normal((16, 16)) * 2.0 ** rng.integers(-4, 4, (16, 16))).astype(np.float16)
        c = (rng.standard_normal((16, 16)) * 2.0 ** rng.integers(-8, 8, (16, 16))).astype(np.float32)
        bufs = {(0, 0): a, (0, 1): b, (0, 2): c, (0, 3): np.zeros(5 * 256, np.float32), (0, 4): np.zeros(256, np.float16)}
        if t < 2:
            t0 = time.time()
            rep = diff_shader(src, file, dispatch=(1, 1, 1), profile="nvidia-h200", backend="vulkan", buffers=bufs, first=64)
            js = rep.to_json()
            js["seconds"] = round(time.time() - t0, 2)
            log["diffs"].append(js)
            say(f"diff nv2_reduce (inputs {t}): {rep.result.upper()} {js.get('totals')}")
            if rep.result != "identical":
                print(rep.text()[-2500:], flush=True)
        try:
            got = vulkan.run_spirv(spv, entry="main", dispatch=(1, 1, 1), buffers={k: v.tobytes() for k, v in bufs.items()},
                                   kinds={k: "storage" for k in bufs}, outputs=[(0, 3), (0, 4)])
        except Exception as e:
            log["raw_error"] = f"{type(e).__name__}: {e}"
            say(f"nv2 raw: {log['raw_error']}")
            break
        for k, v in (("A", a), ("B", b), ("C", c)):
            runs[f"t{t}/{k}"] = v
        runs[f"t{t}/R"] = np.frombuffer(got[(0, 3)], np.float32).reshape(5, 16, 16)
        runs[f"t{t}/H"] = np.frombuffer(got[(0, 4)], np.float16).reshape(16, 16)
    if runs:
        np.savez_compressed(out / "nv2_runs.npz", **runs)
    src, file = kernel_source("div_add.comp")
    n = 1 << 16
    x = rng.uniform(-4, 4, n).astype(np.float32)
    y = (rng.uniform(0.5, 2, n) * rng.choice([-1, 1], n)).astype(np.float32)
    z = rng.uniform(-4, 4, n).astype(np.float32)
    try:
        got = vulkan.run_spirv(src.encode("utf-8", "surrogateescape"), entry="main", dispatch=(n // 256, 1, 1),
                               buffers={(0, 0): x.tobytes(), (0, 1): y.tobytes(), (0, 2): z.tobytes(), (0, 3): bytes(4 * n)},
                               kinds={(0, k): "storage" for k in range(4)}, outputs=[(0, 3)])
        np.savez_compressed(out / "div_add.npz", x=x, y=y, z=z, r=np.frombuffer(got[(0, 3)], np.float32))
        say("div_add probe saved")
    except Exception as e:
        say(f"div_add: {type(e).__name__}: {e}")
    return log


def cm2(out: Path) -> dict:
    """VK_NV_cooperative_matrix2 at workgroup scope: our tensor-layout kernel (nv2_tensor.spvasm,
    random f16 inputs: the order of the workgroup multiply's sums shows) and llama.cpp's
    mul_mm_cm2.comp (its s/m/l coopmat2 warptiles, aligned, ragged and narrow shapes), diffed."""
    from emu.hw.diff import diff_shader
    log = {"diffs": []}
    rng = np.random.default_rng(13)
    for t in range(2):
        scale = lambda s: (rng.standard_normal(s) * 2.0 ** rng.integers(-4, 4, s)).astype(np.float16)  # noqa: E731
        bufs = {(0, 0): scale((50, 32)), (0, 1): scale((32, 32)), (0, 2): np.full(64 * 32, -7, np.float32),
                (0, 3): np.full(32 * 72, -7, np.float32)}
        t0 = time.time()
        try:
            rep = diff_shader(*kernel_source("nv2_tensor.spvasm"), dispatch=(1, 1, 1), profile="nvidia-h200",
                              backend="vulkan", buffers=bufs, first=32)
            js = rep.to_json()
            js["seconds"] = round(time.time() - t0, 2)
            log["diffs"].append(js)
            say(f"diff nv2_tensor (inputs {t}): {rep.result.upper()} {js.get('totals')} in {js['seconds']}s")
            if rep.result != "identical":
                print(rep.text()[-2500:], flush=True)
        except Exception:
            log["diffs"].append({"shader": "nv2_tensor", "result": "crash", "error": traceback.format_exc()[-3000:]})
            say(f"diff nv2_tensor: CRASH\n{traceback.format_exc()}")
    log["elementwise"] = nv2_elementwise(out, rng)
    if (SPV / "mul_mm_cm2.spv").is_file():
        sys.path.insert(0, str(ROOT / "scripts"))
        import llama_vulkan
        cases = ",".join(c[0] for c in llama_vulkan.CASES if c[1] == "cm2")
        try:
            log["llama_rc"] = llama_vulkan.main([str(BUNDLE / "no-sources"), "--spv-dir", str(SPV), "--cases", cases,
                                                 "--backend", "vulkan", "--out", str(out)])
        except Exception:
            say(f"llama cm2: CRASH\n{traceback.format_exc()}")
    else:
        say("no mul_mm_cm2.spv in the bundle (prepare with EMU_GLSLANG set): skipped")
    return log


def nv2_elementwise(out: Path, rng) -> list:
    """nv2_elementwise.spvasm (per-element functions, reductions at workgroup and subgroup scope):
    2 diffs and 8 raw runs (inputs and outputs, nv2_elementwise_runs.npz) to fit the orders."""
    from emu.hw import vulkan
    from emu.hw.diff import diff_shader
    src, file = kernel_source("nv2_elementwise.spvasm")
    diffs, runs = [], {}
    for t in range(8):
        f16 = lambda s: (rng.standard_normal(s) * 2.0 ** rng.integers(-4, 4, s)).astype(np.float16)  # noqa: E731
        a, b = f16((64, 32)), f16((32, 32))
        y = (rng.standard_normal((64, 32)) * 2.0 ** rng.integers(-8, 8, (64, 32))).astype(np.float32)
        bufs = {(0, 0): a, (0, 1): b, (0, 2): y, (0, 3): np.zeros(6 * 2048, np.float32),
                (0, 4): np.zeros(4 * 768, np.float32)}
        try:
            if t < 2:
                t0 = time.time()
                rep = diff_shader(src, file, dispatch=(1, 1, 1), profile="nvidia-h200", backend="vulkan",
                                  buffers=bufs, first=32)
                js = rep.to_json()
                js["seconds"] = round(time.time() - t0, 2)
                diffs.append(js)
                say(f"diff nv2_elementwise (inputs {t}): {rep.result.upper()} {js.get('totals')}")
                if rep.result != "identical":
                    print(rep.text()[-2500:], flush=True)
            got = vulkan.run_spirv(src.encode("utf-8", "surrogateescape"), entry="main", dispatch=(1, 1, 1),
                                   buffers={k: v.tobytes() for k, v in bufs.items()},
                                   kinds={k: "storage" for k in bufs}, outputs=[(0, 3), (0, 4)])
        except Exception:
            diffs.append({"shader": "nv2_elementwise", "result": "crash", "error": traceback.format_exc()[-3000:]})
            say(f"nv2_elementwise: CRASH\n{traceback.format_exc()}")
            break
        runs.update({f"t{t}/A": a, f"t{t}/B": b, f"t{t}/Y": y,
                     f"t{t}/R": np.frombuffer(got[(0, 3)], np.float32).reshape(6, 64, 32),
                     f"t{t}/S": np.frombuffer(got[(0, 4)], np.float32).reshape(4, 3, 16, 16)})
    if runs:
        np.savez_compressed(out / "nv2_elementwise_runs.npz", **runs)
    return diffs


def flex(out: Path) -> dict:
    """Session 4: subgroup-scope matrices of flexible dimensions (gemm_flexible.comp, 32x32 tiles),
    the 2x2 reduction (nv2_2x2.spvasm: 2 diffs and 8 raw runs, nv2_2x2_runs.npz), and
    nv2_elementwise on new inputs (the reduction orders fitted on session 3's runs)."""
    from emu.hw import vulkan
    rng = np.random.default_rng(17)
    f16 = lambda *s: (rng.standard_normal(s) * 2.0 ** rng.integers(-6, 6, s)).astype(np.float16)  # noqa: E731
    log = {"diffs": []}

    def diff(name, groups, consts, bufs):
        logged_diff(log, name, groups, bufs, consts)
    for m, n, k in ((64, 64, 96), (96, 64, 64)):
        diff("gemm_flexible.comp", (n // 32, m // 32, 1), {"0": m, "1": n, "2": k},
             {(0, 0): f16(m, k), (0, 1): f16(k, n), (0, 2): np.zeros(m * n, np.float32)})
    src, file = kernel_source("nv2_2x2.spvasm")
    runs = {}
    for t in range(8):
        a, b = f16(32, 32), f16(32, 32)
        bufs = {(0, 0): a, (0, 1): b, (0, 2): np.zeros(1280, np.float32)}
        if t < 2:
            diff("nv2_2x2.spvasm", (1, 1, 1), {}, bufs)
        try:
            got = vulkan.run_spirv(src.encode("utf-8", "surrogateescape"), entry="main", dispatch=(1, 1, 1),
                                   buffers={k: v.tobytes() for k, v in bufs.items()},
                                   kinds={k: "storage" for k in bufs}, outputs=[(0, 2)])
        except Exception as e:
            say(f"nv2_2x2 raw: {type(e).__name__}: {e}")
            break
        runs.update({f"t{t}/A": a, f"t{t}/B": b, f"t{t}/R": np.frombuffer(got[(0, 2)], np.float32)})
    if runs:
        np.savez_compressed(out / "nv2_2x2_runs.npz", **runs)
    for t in range(2):
        y = (rng.standard_normal((64, 32)) * 2.0 ** rng.integers(-8, 8, (64, 32))).astype(np.float32)
        diff("nv2_elementwise.spvasm", (1, 1, 1), {}, {(0, 0): f16(64, 32), (0, 1): f16(32, 32), (0, 2): y,
                                                      (0, 3): np.zeros(6 * 2048, np.float32),
                                                      (0, 4): np.zeros(4 * 768, np.float32)})
    return log


def record(out: Path, trials: int, seed: int = 2026) -> dict:
    """bf16 and f16 -> f32 16x16x16 through Vulkan: {key: stats}; vectors saved under out/vectors."""
    from emu.frontend.spirv import spirv_binary
    from emu.hw import vulkan
    from emu.hw.record import FLOAT_DISTS, gen_float
    rng = np.random.default_rng(seed)
    log = {}
    for T, kernel, part in (("bf16", "mma_bf16.spvasm", "bf16"), ("f16", "mma_f16_pairs.comp", "f16_vk")):
        spv = spirv_binary(*kernel_source(kernel))
        arrays = {}
        for dist in FLOAT_DISTS:
            key = f"{T}_f32_16x16x16_{dist}"
            A, B, C = gen_float(T, "f32", 16, 16, 16, trials, dist, rng)
            bits = lambda x: np.ascontiguousarray(x).view(np.uint16)  # noqa: E731
            t0 = time.time()
            try:
                got = vulkan.run_spirv(spv, entry="main", dispatch=(trials, 1, 1),
                                       buffers={(0, 0): bits(A).tobytes(), (0, 1): bits(B).tobytes(),
                                                (0, 2): C.tobytes(), (0, 3): bytes(C.nbytes)},
                                       kinds={(0, k): "storage" for k in range(4)}, outputs=[(0, 3)])
            except Exception as e:
                log[key] = {"error": f"{type(e).__name__}: {e}"}
                say(f"record {key}: {log[key]['error']}")
                continue
            D = np.frombuffer(got[(0, 3)], np.float32).reshape(trials, 16, 16)
            arrays[f"{key}/A"] = bits(A) if T == "bf16" else A
            arrays[f"{key}/B"] = bits(B) if T == "bf16" else B
            arrays[f"{key}/C"], arrays[f"{key}/D"] = C, D
            log[key] = {"trials": trials, "seconds": round(time.time() - t0, 2), "nan": int(np.isnan(D).sum()),
                        "neg_zero": int(((D == 0) & np.signbit(D)).sum())}
            say(f"record {key}: {log[key]}")
        (out / "vectors").mkdir(exist_ok=True)
        np.savez_compressed(out / "vectors" / f"mma_{part}.npz", **arrays)
    return log


# (scope, rows, columns, invocations) of the lane probe: workgroup-scope shapes of mul_mm_cm2 and
# flash_attn_cm2 (Br x Bc, Br x HSK, HSK x Bc) and subgroup-scope flexible ones
LANE_PROBES = [("wg", 32, 32, 128), ("wg", 64, 32, 128), ("wg", 32, 64, 128), ("wg", 64, 64, 128),
               ("wg", 64, 128, 128), ("wg", 128, 64, 128), ("wg", 16, 64, 128), ("wg", 64, 64, 256),
               ("wg", 128, 128, 256), ("wg", 128, 256, 256), ("wg", 32, 32, 32), ("wg", 64, 64, 64),
               ("sg", 32, 32, 32), ("sg", 64, 32, 32), ("sg", 32, 64, 32), ("sg", 16, 32, 32), ("sg", 64, 64, 32)]


def maint1(out: Path) -> dict:
    """VK_EXT_cooperative_matrix_maintenance1: where the driver offers it, its properties2 query
    against the profile's and ext_maint1 diffed; its NV2 twin (ext_maint1_nv2) diffed in any case
    (small integers: exact; random floats: the reduction orders show); 64 raw runs of the twin with
    B = I and A of f16 values over many binades (the whole-matrix sum's order shows in D's sum:
    maint1_runs.npz); the lane probe of NV2 matrices (nv2_lanes.npz: length and (row, column) of each
    element of each invocation, per LANE_PROBES entry and matrix)."""
    from emu.hw import vulkan
    from emu.profiles import load_profile
    log = {"diffs": []}
    have = "VK_EXT_cooperative_matrix_maintenance1" in vulkan._extensions()
    log["maintenance1"] = have
    say(f"VK_EXT_cooperative_matrix_maintenance1 offered: {have}; NV2: "
        f"{'VK_NV_cooperative_matrix2' in vulkan._extensions()}")
    if have:
        prof, scopes = load_profile("nvidia-h200"), {"subgroup": 3, "workgroup": 2}
        log["props2"] = []
        for sc, n, sg, fl in ([("subgroup", 0, sg, fl) for sg in (0, 32) for fl in (0, 1)]
                              + [("workgroup", n, 32, 0) for n in (32, 64, 128, 256, 512)]):
            try:
                got = vulkan.matrix_properties2(scopes[sc], n, sg, fl)
            except Exception as e:
                got = f"{type(e).__name__}: {e}"
            want = [dict(M=m, N=nn, K=k, A=a, B=b, C=c, result=r) for m, nn, k, a, b, c, r in prof.props2(sc, n, sg, fl)]
            same = isinstance(got, list) and sorted(map(str, got)) == sorted(map(str, want))
            log["props2"].append({"scope": sc, "invocations": n, "subgroupSize": sg, "flags": fl, "device": got,
                                  "profile": want, "same": same})
            say(f"props2 {sc} inv={n} sg={sg} flags={fl}: device {len(got) if isinstance(got, list) else got}, "
                f"profile {len(want)}: {'SAME' if same else 'DIFFERENT'}")
    rng = np.random.default_rng(21)
    small = lambda: rng.integers(-2, 3, (16, 16)).astype(np.float16)  # noqa: E731
    wide = lambda: (rng.standard_normal((16, 16)) * 2.0 ** rng.integers(-4, 4, (16, 16))).astype(np.float16)  # noqa: E731
    sets = [("small integers", small(), small()), ("random floats", wide(), wide()), ("random floats 2", wide(), wide())]
    for name in (["ext_maint1.spvasm"] if have else []) + ["ext_maint1_nv2.spvasm"]:
        for label, a, b in sets:
            logged_diff(log, name, (1, 1, 1), {(0, 0): a, (0, 1): b, (0, 2): np.full(7 * 256, -7, np.float32),
                                               (0, 3): np.zeros(512, np.uint32)}, label=label)
    src, _ = kernel_source("ext_maint1_nv2.spvasm")
    spv, runs = src.encode("utf-8", "surrogateescape"), {}
    eye = np.eye(16, dtype=np.float16)
    for t in range(64):
        a = (rng.choice([-1, 1], (16, 16)) * (1 + rng.integers(0, 1024, (16, 16)) / 1024)
             * 2.0 ** rng.integers(-14, 16, (16, 16))).astype(np.float16)
        b = eye if t < 48 else wide()
        try:
            got = vulkan.run_spirv(spv, entry="main", dispatch=(1, 1, 1),
                                   buffers={(0, 0): a.tobytes(), (0, 1): b.tobytes(), (0, 2): bytes(7 * 1024),
                                            (0, 3): bytes(2048)}, kinds={(0, k): "storage" for k in range(4)},
                                   outputs=[(0, 2)])
        except Exception as e:
            log["raw_error"] = f"{type(e).__name__}: {e}"
            say(f"raw runs: {log['raw_error']}")
            break
        runs[f"t{t}/A"], runs[f"t{t}/B"] = a, b
        runs[f"t{t}/R"] = np.frombuffer(got[(0, 2)], np.float32).reshape(7, 16, 16)
    if runs:
        np.savez_compressed(out / "maint1_runs.npz", **runs)
        say(f"raw runs saved: {len(runs) // 3}")
    lanes = {}
    for scope, rows, cols, inv in LANE_PROBES:
        key = f"{scope}_{rows}x{cols}_{inv}"
        spv = SPV / f"nv2_lanes_{scope}.spv"
        try:
            got = vulkan.run_spirv(spv.read_bytes(), entry="main", dispatch=(1, 1, 1),
                                   buffers={(0, 0): bytes(16 * inv), (0, 1): bytes(4 * inv * 256 * 8)},
                                   kinds={(0, 0): "storage", (0, 1): "storage"}, outputs=[(0, 0), (0, 1)],
                                   spec=[(0, struct.pack("<I", rows)), (1, struct.pack("<I", cols)),
                                         (2, struct.pack("<I", inv))])
        except Exception as e:
            lanes[f"{key}/error"] = np.array(f"{type(e).__name__}: {e}")
            say(f"lanes {key}: {type(e).__name__}: {e}")
            continue
        n = np.frombuffer(got[(0, 0)], np.uint32).reshape(inv, 4)
        lanes[f"{key}/length"] = n
        lanes[f"{key}/rc"] = np.frombuffer(got[(0, 1)], np.uint32).reshape(4, inv, 256, 2).astype(np.uint16)
        say(f"lanes {key}: lengths (f32 C, f16 C, A, B) {[sorted(set(n[:, m].tolist())) for m in range(4)]}")
    np.savez_compressed(out / "nv2_lanes.npz", **lanes)
    return log


def int8_inputs(rng):
    """mma_int8.comp's A, B, C of each signedness (as matrices): random values with whole rows and
    columns at the extremes and C near the limits, so some sums pass 2^31 (2^32) and wrap."""
    sa = rng.integers(-128, 128, (16, 64)).astype(np.int8)
    sb = rng.integers(-128, 128, (64, 16)).astype(np.int8)
    sa[0], sb[:, 0] = -128, -128                 # 64 * 16384 = 2^20 onto C near 2^31 - 1
    sa[1], sb[:, 1] = 127, 127
    sa[2], sb[:, 2] = -128, 127
    sc = rng.integers(-2 ** 31, 2 ** 31, (16, 16), dtype=np.int64).astype(np.int32)
    sc[0, 0], sc[1, 1], sc[2, 2] = 2 ** 31 - 1000, 2 ** 31 - 1, -2 ** 31 + 5
    ua = rng.integers(0, 256, (16, 64)).astype(np.uint8)
    ub = rng.integers(0, 256, (64, 16)).astype(np.uint8)
    ua[0], ub[:, 0] = 255, 255                   # 64 * 65025 onto C near 2^32 - 1
    ua[1], ub[:, 1] = 255, 0
    uc = rng.integers(0, 2 ** 32, (16, 16), dtype=np.uint64).astype(np.uint32)
    uc[0, 0], uc[1, 1] = 2 ** 32 - 256, 2 ** 32 - 1
    return sa, sb, sc, ua, ub, uc


def int8_buffers(sa, sb, sc, ua, ub, uc):
    """{(set, binding): array} in mma_int8.comp's layouts (the unsigned ones column-major)."""
    return {(0, 0): sa, (0, 1): sb, (0, 2): sc, (0, 3): np.zeros(384, np.int32),
            (0, 4): np.ascontiguousarray(ua.T), (0, 5): np.ascontiguousarray(ub.T),
            (0, 6): np.ascontiguousarray(uc.T), (0, 7): np.zeros(384, np.uint32)}


def int8(out: Path) -> dict:
    """coop_ops.comp again on session 1's inputs and a new set (emu's element-fma model:
    tests/profiles/test_h200_coop_element_fma.py); coop_elem_probe.comp (which element updates the
    driver fuses with a matrix product: times a scalar, element-wise, straight-line, subtracting,
    a product with a second user), diffed and its raw runs saved; mma_int8.comp (i8 and u8, 16x16x32
    and 16x8x32, wrapping sums) on 3 input sets."""
    log = {"diffs": []}
    for label, rng in (("session 1's inputs", np.random.default_rng(7)), ("new inputs", np.random.default_rng(41))):
        name, groups, consts, bufs = kernels(rng)[1]
        logged_diff(log, name, groups, bufs, label=label)
    probe(log, out, "coop_elem_probe.comp", 6, np.random.default_rng(43))
    for seed in (0, 1, 2):
        logged_diff(log, "mma_int8.comp", (1, 1, 1), int8_buffers(*int8_inputs(np.random.default_rng(seed))),
                    label=f"seed {seed}")
    return log


def probe2(out: Path) -> dict:
    """coop_elem_probe2.comp (--probe2): after the first probe, d[i] - c, c + d[i], c - d[i] of a
    matrix times a scalar, and the scalar c - x / y, c - x * y."""
    log = {"diffs": []}
    probe(log, out, "coop_elem_probe2.comp", 5, np.random.default_rng(47))
    return log


def probe(log, out, name, blocks, rng):
    """Diff a probe of R = blocks x 256 f32 from X, C on 2 input sets; save 4 raw runs."""
    from emu.hw import vulkan
    src, _ = kernel_source(name)
    runs = {}
    for t in range(4):
        x = (rng.uniform(-4, 4, 256) * 2.0 ** rng.integers(-3, 3, 256)).astype(np.float32)
        c = (rng.uniform(0.5, 2, 256) * rng.choice([-1, 1], 256)).astype(np.float32)
        bufs = {(0, 0): x, (0, 1): c, (0, 2): np.zeros(blocks * 256, np.float32)}
        if t < 2:
            logged_diff(log, name, (1, 1, 1), bufs, label=f"probe inputs {t}")
        try:
            got = vulkan.run_spirv(src.encode("utf-8", "surrogateescape"), entry="main", dispatch=(1, 1, 1),
                                   buffers={k: v.tobytes() for k, v in bufs.items()},
                                   kinds={k: "storage" for k in bufs}, outputs=[(0, 2)])
        except Exception as e:
            say(f"probe raw: {type(e).__name__}: {e}")
            break
        runs[f"t{t}/X"], runs[f"t{t}/C"] = x, c
        runs[f"t{t}/R"] = np.frombuffer(got[(0, 2)], np.float32).reshape(blocks, 16, 16)
    if runs:
        np.savez_compressed(out / (name.rsplit(".", 1)[0] + "_runs.npz"), **runs)
        say(f"{name}: {len(runs) // 3} raw runs saved")


HELD_OUT_PROBES = [("wg", 32, 128, 256), ("wg", 16, 128, 128), ("wg", 128, 32, 128), ("wg", 64, 32, 64),
                   ("wg", 32, 64, 256), ("sg", 16, 64, 32), ("sg", 48, 32, 32), ("wg", 96, 64, 128)]


def verify(out: Path) -> dict:
    """Session 6, held out from the fits of session 5: the element writes (nv2_element_write),
    nv2_elementwise and ext_maint1_nv2 on new random inputs (the whole-matrix sums' orders), and the
    lane probe at shapes not probed before, each compared with emu's answer (nvidia-h200)."""
    from emu.hw import vulkan
    from emu.isa.types import F16, F32, CoopMatrixType
    from emu.profiles import load_profile
    rng = np.random.default_rng(31)
    log = {"diffs": [], "lanes": {}}

    def diff(name, bufs):
        logged_diff(log, name, (1, 1, 1), bufs)
    diff("nv2_element_write.spvasm", {(0, 0): np.zeros(2048, np.float32)})
    wide = lambda *s: (rng.standard_normal(s) * 2.0 ** rng.integers(-6, 6, s)).astype(np.float16)  # noqa: E731
    for _ in range(4):
        y = (rng.standard_normal((64, 32)) * 2.0 ** rng.integers(-8, 8, (64, 32))).astype(np.float32)
        diff("nv2_elementwise.spvasm", {(0, 0): wide(64, 32), (0, 1): wide(32, 32), (0, 2): y,
                                        (0, 3): np.zeros(6 * 2048, np.float32), (0, 4): np.zeros(4 * 768, np.float32)})
    for _ in range(4):
        diff("ext_maint1_nv2.spvasm", {(0, 0): wide(16, 16), (0, 1): wide(16, 16),
                                       (0, 2): np.zeros(7 * 256, np.float32), (0, 3): np.zeros(512, np.uint32)})
    prof = load_profile("nvidia-h200")
    for scope, rows, cols, inv in HELD_OUT_PROBES:
        key = f"{scope}_{rows}x{cols}_{inv}"
        try:
            got = vulkan.run_spirv((SPV / f"nv2_lanes_{scope}.spv").read_bytes(), entry="main", dispatch=(1, 1, 1),
                                   buffers={(0, 0): bytes(16 * inv), (0, 1): bytes(4 * inv * 256 * 8)},
                                   kinds={(0, 0): "storage", (0, 1): "storage"}, outputs=[(0, 0), (0, 1)],
                                   spec=[(0, struct.pack("<I", rows)), (1, struct.pack("<I", cols)),
                                         (2, struct.pack("<I", inv))])
        except Exception as e:
            log["lanes"][key] = f"{type(e).__name__}: {e}"
            say(f"lanes {key}: {log['lanes'][key]}")
            continue
        n = np.frombuffer(got[(0, 0)], np.uint32).reshape(inv, 4)
        rc = np.frombuffer(got[(0, 1)], np.uint32).reshape(4, inv, 256, 2)
        res = []
        for m, (role, elem) in enumerate((("C", F32), ("C", F16), ("A", F16), ("B", F16))):
            t = CoopMatrixType(rows, cols, elem, role, "workgroup" if scope == "wg" else "subgroup")
            want = prof.flexible_elements(t, inv if scope == "wg" else 32, 32)
            length = int(n[0, m])
            k = min(length, 256)
            same = want is not None and want[0].shape == (inv, length) and (n[:, m] == length).all() \
                and np.array_equal(rc[m, :, :k, 0], want[0][:, :k]) and np.array_equal(rc[m, :, :k, 1], want[1][:, :k])
            res.append({"length": length, "same": bool(same)})
        log["lanes"][key] = res
        say(f"lanes {key}: {[(r['length'], 'SAME' if r['same'] else 'DIFFERENT') for r in res]}")
    return log


def main(argv) -> int:
    if argv[:1] == ["--prepare"]:
        prepare()
        return 0
    out = Path(argv[0] if argv else "h200-vulkan-out")
    quick = "--quick" in argv
    out.mkdir(parents=True, exist_ok=True)
    from emu.hw import vulkan
    from emu.hw.diff import diff_shader
    summary = {"started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "diffs": []}
    info, why = vulkan.available()
    say(why)
    summary["device"] = info
    try:
        summary["khr_configs"] = vulkan.matrix_configs()
        say(f"KHR cooperative matrix configurations: {len(summary['khr_configs'])}")
        for c in summary["khr_configs"]:
            print("  ", c)
    except Exception as e:
        summary["khr_configs"] = f"{type(e).__name__}: {e}"
        say(f"configs: {summary['khr_configs']}")
    (out / "props.json").write_text(json.dumps({k: summary[k] for k in ("device", "khr_configs")}, indent=1,
                                               default=str))
    if info is None:
        return 1
    modes = {"--probe2": probe2, "--int8": int8, "--verify": verify, "--maint1": maint1, "--flex": flex, "--cm2": cm2, "--nv2": nv2}
    mode = next((m for m in modes if m in argv), None)
    if mode is not None:                    # one session's own steps
        summary[mode[2:]] = modes[mode](out)
        (out / "diffs.json").write_text(json.dumps(summary, indent=1, default=str))
        say("done")
        return 0
    rng = np.random.default_rng(7)
    for name, groups, consts, bufs in kernels(rng):
        t0 = time.time()
        try:
            rep = diff_shader(*kernel_source(name), dispatch=groups,
                              profile="nvidia-h200", backend="vulkan", overrides=consts, buffers=bufs,
                              seed=1 if bufs is None else None, first=32)
            js = rep.to_json()
            js["spec_constants"], js["seconds"] = consts, round(time.time() - t0, 2)
            summary["diffs"].append(js)
            tot = js.get("totals", {})
            say(f"diff {name} {consts}: {rep.result.upper()} ({tot.get('equal')} equal, "
                f"{tot.get('different')} different of {tot.get('elements')}) in {js['seconds']}s")
            if rep.result != "identical":
                print(rep.text()[-3000:], flush=True)
        except Exception:
            summary["diffs"].append({"shader": name, "result": "crash", "error": traceback.format_exc()[-3000:]})
            say(f"diff {name}: CRASH\n{traceback.format_exc()}")
        (out / "diffs.json").write_text(json.dumps(summary, indent=1, default=str))
    summary["record"] = record(out, 32 if quick else 256)
    (out / "diffs.json").write_text(json.dumps(summary, indent=1, default=str))
    if (SPV / "mul_mm_coopmat.spv").is_file():
        say("llama.cpp mul_mm.comp (compiled by --prepare)")
        sys.path.insert(0, str(ROOT / "scripts"))
        import llama_vulkan
        try:
            summary["llama_rc"] = llama_vulkan.main([str(BUNDLE / "no-sources"), "--spv-dir", str(SPV),
                                                     "--backend", "vulkan", "--out", str(out)])
        except Exception:
            say(f"llama: CRASH\n{traceback.format_exc()}")
    else:
        say("no llama.cpp shaders in the bundle: skipped")
    (out / "diffs.json").write_text(json.dumps(summary, indent=1, default=str))
    say("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
