"""Run llama.cpp's Vulkan matrix multiplies (ggml/src/ggml-vulkan/vulkan-shaders/mul_mm.comp and
mul_mm_cm2.comp) on the virtual device, built the way llama.cpp's build does it: vulkan-shaders-gen's
defines for `matmul_f16` (f16 A and B, f32 D), the KHR cooperative-matrix variant of mul_mm.comp
(COOPMAT, f32 accumulators), its scalar fp16 one, and mul_mm_cm2.comp (VK_NV_cooperative_matrix2:
workgroup-scope matrices of flexible dimensions, tensor-layout loads and stores); the
specialization constants ggml-vulkan sets on an NVIDIA GPU with 16x16x16 cooperative matrices and
32-lane subgroups (mul_mm's s/m/l warptiles: BLOCK_SIZE, BM, BN, BK, WM, WN, WMITER, TM, TN, TK,
WARP; the coopmat2 ones: BLOCK_SIZE, BM, BN, BK, enable_smaller_matrices), the push-constant block
ggml_vk_matmul fills, its dispatch of ceil(M/BM) x ceil(N/BN) workgroups. A is M x K row-major, B
is N x K row-major, D = A B^T is written column by column (D[n * stride_d + m]).

Each case runs on emu (`--profile`, default nvidia-h200) and is compared with a float64 numpy
product (the f32 accumulation's own bound); with --backend vulkan it also runs through Vulkan on
the device (`emu diff --backend vulkan`: the same SPIR-V, inputs, spec and push constants) and
reports IDENTICAL or the differences. The shaders are read from a folder you fetched; nothing of
them is kept here. Without a folder it says so and exits 0.

    python scripts/llama_vulkan.py /tmp/llama/vulkan-shaders [--backend vulkan] [--out DIR]

The folder needs mul_mm.comp and mul_mm_funcs.glsl (and mul_mm_cm2.comp for its cases). types.glsl
is used where present; without it the f16 definitions the shaders take from it (QUANT_K, QUANT_R,
A_TYPE) are written here; a missing mul_mm_id_funcs.glsl or utils.glsl (their helpers serve
MUL_MAT_ID only) and dequant_funcs_cm2.glsl (quantized A only) are left empty; the script says
which it did. mul_mm_cm2.comp needs a glslang that compiles GL_NV_cooperative_matrix2 (EMU_GLSLANG:
scripts/glslang_nv2.sh installs one); without one its cases are skipped, saying so.
"""
from __future__ import annotations

import argparse
import json
import re
import struct
import sys
from pathlib import Path

import numpy as np

import emu
from emu.frontend.spirv.module import PUSH_CONSTANTS

# vulkan-shaders-gen's matmul_shaders(fp16=true, coopmat, f16acc=false) for "matmul_f16"
DEFINES = {"FLOAT_TYPE_VEC2": "f16vec2", "FLOAT16": "1", "ACC_TYPE": "float", "FLOAT_TYPE": "float16_t",
           "DATA_A_F16": "1", "B_TYPE": "float16_t", "D_TYPE": "float"}
# the scalar path's vector types, which this version of vulkan-shaders-gen leaves to the shader
SCALAR_DEFINES = {"ACC_TYPE_VEC2": "vec2", "FLOAT_TYPE_VEC4": "f16vec4"}
# what types.glsl defines for DATA_A_F16 with LOAD_VEC_A 1 (used only without a types.glsl)
TYPES_F16 = "#define QUANT_K 1\n#define QUANT_R 1\n#define A_TYPE float16_t\n"
# ggml-vulkan's warptiles on a device with 16x16x16 cooperative matrices and subgroup size 32
# (subgroup_size_8/16/32 = 32): spec constants 0..10
WARPTILES = {"s": [32, 32, 32, 16, 32, 32, 2, 16, 16, 16, 32],
             "m": [128, 64, 64, 16, 32, 32, 2, 16, 16, 16, 32],
             "l": [128, 128, 128, 16, 64, 64, 2, 16, 16, 16, 32]}
# and without cooperative matrices (tm/tn/tk 4/4/1, 4/2/1, 2/2/1)
WARPTILES_SCALAR = {"s": [32, 32, 32, 16, 32, 32, 2, 2, 2, 1, 32],
                    "m": [128, 64, 64, 16, 32, 32, 2, 4, 2, 1, 32]}
# and with VK_NV_cooperative_matrix2 (device->coopmat2): BLOCK_SIZE, BM, BN, BK, enable_smaller_matrices
WARPTILES_CM2 = {"s": [128, 64, 64, 64, 0], "m": [256, 128, 128, 64, 0], "l": [256, 128, 256, 64, 1]}
# (name, variant, warptile, M, N, K): ragged sizes run the guarded loads and the staged store,
# multiples of the tile and stride_d % 4 == 0 the direct coopMatStore; for cm2, whole tiles with K a
# multiple of 256 run the unclamped fast path, the rest the clamped loop, and the l tile with a
# narrow N the smaller matrices (BN/4, BN/2)
CASES = [("coopmat_s_64x64x64", "coopmat", "s", 64, 64, 64),
         ("coopmat_m_128x128x96", "coopmat", "m", 128, 128, 96),
         ("coopmat_m_ragged_90x70x50", "coopmat", "m", 90, 70, 50),
         ("coopmat_l_128x128x64", "coopmat", "l", 128, 128, 64),
         ("scalar_s_40x36x72", "scalar", "s", 40, 36, 72),
         ("scalar_m_ragged_70x66x40", "scalar", "m", 70, 66, 40),
         ("cm2_s_64x64x256", "cm2", "s", 64, 64, 256),
         ("cm2_s_ragged_90x70x50", "cm2", "s", 90, 70, 50),
         ("cm2_m_128x128x96", "cm2", "m", 128, 128, 96),
         ("cm2_l_narrow_128x64x256", "cm2", "l", 128, 64, 256),
         ("cm2_l_ragged_130x200x72", "cm2", "l", 130, 200, 72)]
SOURCES = {"coopmat": "mul_mm.comp", "scalar": "mul_mm.comp", "cm2": "mul_mm_cm2.comp"}
SPV_NAMES = {"coopmat": "mul_mm_coopmat.spv", "scalar": "mul_mm_scalar.spv", "cm2": "mul_mm_cm2.spv"}


def build(folder: Path, variant: str, notes: list) -> str:
    """The variant's shader with its includes expanded and the defines after #version."""
    def expand(text: str) -> str:
        def include(m):
            name = m.group(1)
            p = folder / name
            if p.is_file():
                return expand(p.read_text())
            if name == "types.glsl":
                notes.append("types.glsl not in the folder: its f16 definitions written by the script")
                return TYPES_F16
            if name in ("mul_mm_id_funcs.glsl", "utils.glsl"):
                notes.append(f"{name} not in the folder: left empty (MUL_MAT_ID only)")
                return ""
            if name == "dequant_funcs_cm2.glsl":
                notes.append(f"{name} not in the folder: left empty (quantized A only)")
                return ""
            raise SystemExit(f"llama_vulkan: {name} (included by {SOURCES[variant]}) is not in {folder}")
        return re.sub(r'^[ \t]*#include "([^"]+)"[ \t]*$', include, text, flags=re.M)
    text = expand((folder / SOURCES[variant]).read_text())
    head, rest = text.split("\n", 1)
    defs = dict(DEFINES, **({"COOPMAT": "1"} if variant == "coopmat" else SCALAR_DEFINES if variant == "scalar"
                            else {}))
    return head + "\n" + "".join(f"#define {k} {v}\n" for k, v in defs.items()) + "#line 2\n" + rest


def case_inputs(M, N, K, seed):
    rng = np.random.default_rng(seed)
    # f16 values of both signs over several binades: every sum rounds (the accumulator's rounding
    # and order are what the device comparison sees)
    a = (rng.standard_normal((M, K)) * 2.0 ** rng.integers(-3, 3, (M, K))).astype(np.float16)
    b = (rng.standard_normal((N, K)) * 2.0 ** rng.integers(-3, 3, (N, K))).astype(np.float16)
    return a, b


def push_block(M, N, K, stride_d, cm2=False):
    # M N K stride_a stride_b stride_d batch_stride_a/b/d k_split ne02 ne12 broadcast2 broadcast3
    # (mul_mm_cm2.comp: and padded_N, the B rows bounds-checked)
    words = [M, N, K, K, K, stride_d, M * K, N * K, N * stride_d, K, 1, 1, 1, 1] + ([N] if cm2 else [])
    return struct.pack(f"<{len(words)}I", *words)


def run_case(src, file, name, variant, tile, M, N, K, profile, backend, seed=1):
    spec = {"coopmat": WARPTILES, "scalar": WARPTILES_SCALAR, "cm2": WARPTILES_CM2}[variant][tile]
    # ggml sets all 11; a Vulkan driver ignores ids the shader lacks (BK is a #define for f16 A
    # in some versions of mul_mm.comp), emu's API refuses them: pass the module's own
    from emu.api import compile_wgsl
    ids = {o.id for o in compile_wgsl(src, file)[0].overrides}
    consts = {str(k): v for k, v in enumerate(spec) if k in ids}
    bm, bn = spec[1], spec[2]
    stride_d = M
    a, b = case_inputs(M, N, K, seed)
    d = np.zeros(N * stride_d, np.float32)
    pc = push_block(M, N, K, stride_d, variant == "cm2")
    groups = (-(-M // bm), -(-N // bn), 1)
    dev = emu.Device(profile)
    mod = dev.create_shader_module(src, file)
    pipe = dev.create_compute_pipeline(mod, "main", constants=consts)
    bufs = {(0, 0): dev.create_buffer(a.ravel()), (0, 1): dev.create_buffer(b.ravel()),
            (0, 2): dev.create_buffer(d), PUSH_CONSTANTS: dev.create_buffer(pc)}
    dev.dispatch(pipe, bufs, groups)
    out = bufs[(0, 2)].read(np.float32)[: N * stride_d].reshape(N, stride_d)[:, :M]
    ref = b.astype(np.float64) @ a.astype(np.float64).T          # D[n][m]
    bound = np.abs(b.astype(np.float64)) @ np.abs(a.astype(np.float64)).T * (K * 2.0 ** -22) + 1e-30
    err = np.abs(out - ref)
    row = {"case": name, "variant": variant, "warptile": tile, "spec_constants": spec,
           "M": M, "N": N, "K": K, "workgroups": list(groups), "profile": profile,
           "max_abs_error": float(err.max()), "within_f32_bound": bool((err <= bound).all()),
           "exact_elements": int((err == 0).sum()), "elements": int(out.size)}
    if backend == "vulkan":
        from emu.hw.diff import diff_shader
        rep = diff_shader(src, file, dispatch=groups, profile=profile, backend="vulkan",
                          overrides=consts, buffers={(0, 0): a.ravel(), (0, 1): b.ravel(), (0, 2): d,
                                                     PUSH_CONSTANTS: pc})
        row["vulkan"] = {"error": rep.error, "identical": rep.error is None and rep.identical,
                         "device": (rep.adapter or {}).get("device"), "text": rep.text()[-1500:]}
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", nargs="?", default="/tmp/llama/vulkan-shaders")
    ap.add_argument("--profile", default="nvidia-h200")
    ap.add_argument("--backend", choices=["emu", "vulkan"], default="emu")
    ap.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    ap.add_argument("--out", help="write the results (JSON) here")
    ap.add_argument("--spv-dir", help="write the SPIR-V modules here (mul_mm_coopmat.spv, mul_mm_scalar.spv, "
                                      "mul_mm_cm2.spv); without the folder, run the ones found here (a machine "
                                      "without glslang)")
    args = ap.parse_args(argv)
    folder = Path(args.folder)
    spv = Path(args.spv_dir) if args.spv_dir else None
    notes: list = []
    srcs, files = {}, {}
    if (folder / "mul_mm.comp").is_file():
        from emu.frontend.spirv import compile_glsl
        for variant, source in SOURCES.items():
            if not (folder / source).is_file():
                notes.append(f"no {source} in {folder}: its cases skipped")
                continue
            text = build(folder, variant, notes)
            try:
                data = compile_glsl(text, source)
            except emu.EmuError as e:
                # the wheel's glslang refuses GL_NV_cooperative_matrix2
                notes.append(f"{source} not compiled ({e.message}): its cases skipped; "
                             f"EMU_GLSLANG=$(bash scripts/glslang_nv2.sh) gives a glslang that compiles it")
                continue
            srcs[variant], files[variant] = text, source
            if spv is not None:
                spv.mkdir(parents=True, exist_ok=True)
                (spv / SPV_NAMES[variant]).write_bytes(data)
    elif spv is not None and any((spv / n).is_file() for n in SPV_NAMES.values()):
        for variant, n in SPV_NAMES.items():
            if (spv / n).is_file():
                srcs[variant], files[variant] = (spv / n).read_bytes().decode("utf-8", "surrogateescape"), n
            else:
                notes.append(f"no {n} in {spv}: its cases skipped")
        notes.append(f"compiled elsewhere: {', '.join(files.values())} from {spv}")
    else:
        print(f"llama_vulkan: no mul_mm.comp in {folder} (fetch llama.cpp's "
              f"ggml/src/ggml-vulkan/vulkan-shaders there); skipped")
        return 0
    for n in dict.fromkeys(notes):
        print("note:", n)
    want = set(filter(None, args.cases.split(",")))
    rows, ok = [], True
    for name, cm, tile, M, N, K in CASES:
        if (want and name not in want) or cm not in srcs:
            continue
        try:
            row = run_case(srcs[cm], files[cm], name, cm, tile, M, N, K, args.profile, args.backend)
        except emu.EmuError as e:
            row = {"case": name, "error": e.format({files[cm]: srcs[cm]})}
        rows.append(row)
        if "error" in row:
            ok = False
            print(f"{name}: ERROR {row['error']}")
            continue
        ok &= row["within_f32_bound"]
        line = (f"{name}: {row['elements']} elements on {args.profile}, max |D - A B^T| "
                f"{row['max_abs_error']:.3g}, within f32 bound: {row['within_f32_bound']}")
        if "vulkan" in row:
            v = row["vulkan"]
            line += f"; vulkan ({v['device']}): " + ("IDENTICAL" if v["identical"] else
                                                     (v["error"] or "DIFFERENT"))
            ok &= v["identical"]
            if not v["identical"]:
                print(v["text"])
        print(line)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "llama_vulkan.json").write_text(json.dumps({"notes": list(dict.fromkeys(notes)), "cases": rows},
                                                          indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
