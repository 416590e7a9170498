"""Run llama.cpp's Vulkan matrix multiply (ggml/src/ggml-vulkan/vulkan-shaders/mul_mm.comp) on the
virtual device, built the way llama.cpp's build does it: vulkan-shaders-gen's defines for
`matmul_f16` (f16 A and B, f32 D), the KHR cooperative-matrix variant (COOPMAT, f32 accumulators)
and the scalar fp16 one, and the specialization constants ggml-vulkan sets on an NVIDIA GPU with
16x16x16 cooperative matrices and 32-lane subgroups (its s/m/l warptiles: BLOCK_SIZE, BM, BN, BK,
WM, WN, WMITER, TM, TN, TK, WARP), the push-constant block ggml_vk_matmul fills, its dispatch of
ceil(M/BM) x ceil(N/BN) workgroups. A is M x K row-major, B is N x K row-major, D = A B^T is
written column by column (D[n * stride_d + m]).

Each case runs on emu (`--profile`, default nvidia-h200) and is compared with a float64 numpy
product (the f32 accumulation's own bound); with --backend vulkan it also runs through Vulkan on
the device (`emu diff --backend vulkan`: the same SPIR-V, inputs, spec and push constants) and
reports IDENTICAL or the differences. The shaders are read from a folder you fetched; nothing of
them is kept here. Without a folder it says so and exits 0.

    python scripts/llama_vulkan.py /tmp/llama/vulkan-shaders [--backend vulkan] [--out DIR]

The folder needs mul_mm.comp and mul_mm_funcs.glsl. types.glsl is used where present; without it
the f16 definitions mul_mm.comp takes from it (QUANT_K, QUANT_R, A_TYPE) are written here, and a
missing mul_mm_id_funcs.glsl (MUL_MAT_ID only) is left empty; the script says which it did.
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
# (name, coopmat, warptile, M, N, K): ragged sizes run the guarded loads and the staged store,
# multiples of the tile and stride_d % 4 == 0 the direct coopMatStore
CASES = [("coopmat_s_64x64x64", True, "s", 64, 64, 64),
         ("coopmat_m_128x128x96", True, "m", 128, 128, 96),
         ("coopmat_m_ragged_90x70x50", True, "m", 90, 70, 50),
         ("coopmat_l_128x128x64", True, "l", 128, 128, 64),
         ("scalar_s_40x36x72", False, "s", 40, 36, 72),
         ("scalar_m_ragged_70x66x40", False, "m", 70, 66, 40)]


def build(folder: Path, coopmat: bool, notes: list) -> str:
    """mul_mm.comp with its includes expanded and the defines after #version."""
    def expand(text: str) -> str:
        def include(m):
            name = m.group(1)
            p = folder / name
            if p.is_file():
                return expand(p.read_text())
            if name == "types.glsl":
                notes.append("types.glsl not in the folder: its f16 definitions written by the script")
                return TYPES_F16
            if name == "mul_mm_id_funcs.glsl":
                notes.append("mul_mm_id_funcs.glsl not in the folder: left empty (MUL_MAT_ID only)")
                return ""
            raise SystemExit(f"llama_vulkan: {name} (included by mul_mm.comp) is not in {folder}")
        return re.sub(r'^[ \t]*#include "([^"]+)"[ \t]*$', include, text, flags=re.M)
    text = expand((folder / "mul_mm.comp").read_text())
    head, rest = text.split("\n", 1)
    defs = dict(DEFINES, **({"COOPMAT": "1"} if coopmat else SCALAR_DEFINES))
    return head + "\n" + "".join(f"#define {k} {v}\n" for k, v in defs.items()) + "#line 2\n" + rest


def case_inputs(M, N, K, seed):
    rng = np.random.default_rng(seed)
    # f16 values of both signs over several binades: every sum rounds (the accumulator's rounding
    # and order are what the device comparison sees)
    a = (rng.standard_normal((M, K)) * 2.0 ** rng.integers(-3, 3, (M, K))).astype(np.float16)
    b = (rng.standard_normal((N, K)) * 2.0 ** rng.integers(-3, 3, (N, K))).astype(np.float16)
    return a, b


def push_block(M, N, K, stride_d):
    # M N K stride_a stride_b stride_d batch_stride_a/b/d k_split ne02 ne12 broadcast2 broadcast3
    return struct.pack("<14I", M, N, K, K, K, stride_d, M * K, N * K, N * stride_d, K, 1, 1, 1, 1)


def run_case(src, file, name, coopmat, tile, M, N, K, profile, backend, seed=1):
    spec = (WARPTILES if coopmat else WARPTILES_SCALAR)[tile]
    # ggml sets all 11; a Vulkan driver ignores ids the shader lacks (BK is a #define for f16 A
    # in some versions of mul_mm.comp), emu's API refuses them: pass the module's own
    from emu.api import compile_wgsl
    ids = {o.id for o in compile_wgsl(src, file)[0].overrides}
    consts = {str(k): v for k, v in enumerate(spec) if k in ids}
    bm, bn = spec[1], spec[2]
    stride_d = M
    a, b = case_inputs(M, N, K, seed)
    d = np.zeros(N * stride_d, np.float32)
    pc = push_block(M, N, K, stride_d)
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
    row = {"case": name, "coopmat": coopmat, "warptile": tile, "spec_constants": spec,
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
    ap.add_argument("--spv-dir", help="write the two SPIR-V modules here (mul_mm_coopmat.spv, mul_mm_scalar.spv); "
                                      "without the folder, run the ones found here (a machine without glslang)")
    args = ap.parse_args(argv)
    folder = Path(args.folder)
    spv = Path(args.spv_dir) if args.spv_dir else None
    names = {True: "mul_mm_coopmat.spv", False: "mul_mm_scalar.spv"}
    notes: list = []
    if (folder / "mul_mm.comp").is_file():
        srcs = {cm: build(folder, cm, notes) for cm in (True, False)}
        files = {cm: "mul_mm.comp" for cm in srcs}
        if spv is not None:
            from emu.frontend.spirv import compile_glsl
            spv.mkdir(parents=True, exist_ok=True)
            for cm, text in srcs.items():
                (spv / names[cm]).write_bytes(compile_glsl(text, "mul_mm.comp"))
    elif spv is not None and all((spv / n).is_file() for n in names.values()):
        srcs = {cm: (spv / n).read_bytes().decode("utf-8", "surrogateescape") for cm, n in names.items()}
        files = dict(names)
        notes.append(f"compiled elsewhere: {', '.join(names.values())} from {spv}")
    else:
        print(f"llama_vulkan: no mul_mm.comp in {folder} (fetch llama.cpp's "
              f"ggml/src/ggml-vulkan/vulkan-shaders there); skipped")
        return 0
    for n in dict.fromkeys(notes):
        print("note:", n)
    want = set(filter(None, args.cases.split(",")))
    rows, ok = [], True
    for name, cm, tile, M, N, K in CASES:
        if want and name not in want:
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
