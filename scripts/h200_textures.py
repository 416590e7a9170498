#!/usr/bin/env python3
"""The texture session on a real adapter (the H200 through Dawn; lavapipe here to try it): run our
image kernels (tests/hw/texture_cases.py) and the texture-unit probes, and write to OUT:
  textures.npz   each case's outputs ("CASE:G,B" -> bytes) and each probe's raw results
  textures.json  what the probes measured, as a profile's `textures` field, with the evidence

Usage: python3 scripts/h200_textures.py OUT [--backend dawn] [--sets volume_grad_cases,...]
(on the device: H200_SCRIPT=scripts/h200_textures.py bash scripts/h200_session.sh; --sets runs only
those texture_cases functions' cases, without the probes)

The probes: unorm8/snorm8/unorm16 -> f32 (every value through textureLoad: correctly rounded, or
c * f32(1/m)); f32 -> f16 stores (to nearest even or toward zero); the fractional bits of linear
weights (a two-texel rgba16float texture sampled at 4096 positions; floor or nearest to k bits);
8-bit unorm filtering (f32, or 8-bit fixed point as llvmpipe does); the fractional bits of the
level of detail (mipmap linear over 4096 levels of detail); a nearest mip at k + 0.5; sRGB decode.
The cases are texture_cases.cases(), new_cases() (these check the rules fitted from the first
recording on inputs chosen to break them: every 12-bit step of 8-bit stores, 2-D and two-level
unorm8 filtering; and seamless cube filtering, sRGB) and held_out_cases() (other inputs for the
rules fitted on new_cases, and filtering no case had measured).
"""
from __future__ import annotations

import json
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "hw"))

from emu.hw.runner import HwTexture, run_on_adapter  # noqa: E402

F32 = np.float32
LOAD = """
@group(0) @binding(0) var t: texture_2d<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4f>;
@compute @workgroup_size(16, 16) fn main(@builtin(global_invocation_id) id: vec3u) {
  let w = textureDimensions(t).x;
  out[id.y * w + id.x] = textureLoad(t, id.xy, 0);
}"""
STORE16 = """
@group(0) @binding(0) var<storage, read> v: array<vec4f>;
@group(0) @binding(1) var img: texture_storage_2d<rgba16float, write>;
@compute @workgroup_size(16, 16) fn main(@builtin(global_invocation_id) id: vec3u) {
  textureStore(img, id.xy, v[id.y * 64u + id.x]);
}"""

LINEAR = dict(mag_filter="linear", min_filter="linear")


def _fit_bits(x: np.ndarray, got: np.ndarray) -> tuple[str, int]:
    """The fixed-point quantization of x (floor or nearest to k fractional bits, or f32) that
    reproduces `got`, and how many values it misses."""
    fits = {"f32": int(np.sum(x != got))}
    for k in range(2, 24):
        for how, f in (("floor", np.floor), ("nearest", np.rint)):
            q = (f(x.astype(np.float64) * (1 << k)) / (1 << k)).astype(F32)
            fits[f"{how}{k}"] = int(np.sum(q != got))
    best = min(fits, key=lambda k: (fits[k], k != "f32"))
    return best, fits[best]


def probes(backend: str, raw: dict) -> dict:
    from texture_cases import MIPS as SAMPLE
    found = {}
    # normalized texels -> f32
    for fmt, m, dtype in (("rgba8unorm", 255, np.uint8), ("rgba8snorm", 127, np.uint8), ("rgba16unorm", 65535, np.uint16)):
        n = 256 if dtype == np.uint8 else 65536
        w = 16 if n == 256 else 256
        vals = np.arange(n, dtype=np.int64).astype(dtype)
        img = np.repeat(vals, 4).reshape(n // w, w, 4)
        try:
            out = run_on_adapter(LOAD, dispatch=(w // 16, n // w // 16, 1), backend=backend,
                                 buffers={(0, 1): np.zeros((n, 4), F32)},
                                 textures={(0, 0): HwTexture(fmt, (w, n // w, 1), (img.tobytes(),))},
                                 features=("unorm16-texture-formats",) if "16" in fmt else ())
        except Exception as e:
            found[f"decode_{fmt}"] = f"failed: {str(e)[:200]}"
            continue
        got = np.frombuffer(out[(0, 1)], F32).reshape(n, 4)[:, 0]
        raw[f"probe:decode_{fmt}"] = got
        c = vals.view(np.int8 if fmt == "rgba8snorm" else dtype).astype(np.int64)
        exact = np.maximum((c / m).astype(F32), F32(-1))
        recip = np.maximum(c.astype(F32) * F32(1 / m), F32(-1))
        found[f"decode_{fmt}"] = {"exact": int(np.sum(exact != got)), "mul-reciprocal": int(np.sum(recip != got))}
    # f32 -> f16 stores
    rng = np.random.default_rng(7)
    v = rng.uniform(-70000, 70000, (64 * 16, 4)).astype(F32)
    v[:256] = rng.uniform(-2, 2, (256, 4)).astype(F32)
    out = run_on_adapter(STORE16, dispatch=(4, 1, 1), backend=backend, buffers={(0, 0): v},
                         textures={(0, 1): HwTexture("rgba16float", (64, 16, 1), (bytes(64 * 16 * 8),))})
    got = np.frombuffer(out[(0, 1)], np.uint16).reshape(-1, 4)
    raw["probe:half_store"] = got
    from emu.numerics.texels import _to_half
    found["half_store"] = {r: int(np.sum(_to_half(v, r) != got)) for r in ("nearest-even", "toward-zero")}
    # linear weights: a two-texel float texture
    n = 4096
    u = (0.25 + np.arange(n) / n * 0.5).astype(F32)
    uvl = np.stack([u, np.full(n, 0.5, F32), np.zeros(n, F32), np.zeros(n, F32)], 1)
    a = (u * F32(2) - F32(0.5)).astype(F32)

    def sample(fmt, levels, size, uvl, sampler):
        out = run_on_adapter(SAMPLE, dispatch=(len(uvl) // 64, 1, 1), backend=backend,
                             buffers={(0, 2): uvl, (0, 3): np.zeros((len(uvl), 4), F32)},
                             textures={(0, 0): HwTexture(fmt, size, tuple(x.tobytes() for x in levels))},
                             samplers={(0, 1): sampler})
        return np.frombuffer(out[(0, 3)], F32).reshape(-1, 4)
    two = np.array([[[0, 0, 0, 0], [1, 1, 1, 1]]], np.float16)
    got = sample("rgba16float", [two], (2, 1, 1), uvl, LINEAR)[:, 0]
    raw["probe:weights_f16"] = got
    found["subtexel"] = dict(zip(("fit", "misses"), _fit_bits(a, got)))
    found["subtexel"]["distinct"] = int(np.unique(got).size)
    t8 = np.array([[[10, 200, 0, 255], [250, 3, 128, 0]]], np.uint8)
    got8 = sample("rgba8unorm", [t8], (2, 1, 1), uvl, LINEAR)
    raw["probe:weights_unorm8"] = got8
    w = np.rint(a.astype(np.float64) * 256).astype(np.int64)[:, None]
    fixed = (((t8[0, 0].astype(np.int64) * (256 - w) + t8[0, 1].astype(np.int64) * w + 128) >> 8).astype(F32)
             * F32(1 / 255))
    found["unorm8_filter"] = {"fixed8_misses": int(np.sum(fixed != got8))}
    # level of detail: mipmap linear between a level of 0s and one of 1s
    m = 4096
    lod = (np.arange(m) / m).astype(F32)
    uvl = np.stack([np.full(m, 0.5, F32)] * 2 + [lod, np.zeros(m, F32)], 1)
    lv = [np.zeros((2, 2, 4), np.float16), np.ones((1, 1, 4), np.float16)]
    got = sample("rgba16float", lv, (2, 2, 1), uvl, dict(mipmap_filter="linear"))[:, 0]
    raw["probe:lod_linear"] = got
    found["lod"] = dict(zip(("fit", "misses"), _fit_bits(lod, got)))
    found["lod"]["distinct"] = int(np.unique(got).size)
    levels = [np.full((max(1, 8 >> k), max(1, 8 >> k), 4), k, np.float16) for k in range(4)]
    lods = np.array([0.5, 1.5, 2.5, 0.49, 0.51, 2.51] + [0] * 58, F32)
    uvl = np.stack([np.full(64, 0.5, F32)] * 2 + [lods, np.zeros(64, F32)], 1)
    got = sample("rgba16float", levels, (8, 8, 1), uvl, dict(mipmap_filter="nearest"))[:6, 0]
    found["mip_nearest"] = {"levels_at_0.5_1.5_2.5_0.49_0.51_2.51": got.tolist()}
    # sRGB decode
    img = np.repeat(np.arange(256, dtype=np.uint8), 4).reshape(16, 16, 4)
    out = run_on_adapter(LOAD, dispatch=(1, 1, 1), backend=backend, buffers={(0, 1): np.zeros((256, 4), F32)},
                         textures={(0, 0): HwTexture("rgba8unorm-srgb", (16, 16, 1), (img.tobytes(),))})
    got = np.frombuffer(out[(0, 1)], F32).reshape(256, 4)
    raw["probe:srgb"] = got
    from emu.numerics.texels import FORMATS, decode
    want = decode(FORMATS["rgba8unorm-srgb"], img.reshape(256, 4))
    found["srgb"] = {"differ_from_exact": int(np.sum(want[:, 0] != got[:, 0])),
                     "max_ulp": int(np.max(np.abs(want[:, 0].view(np.int32).astype(np.int64)
                                                  - got[:, 0].view(np.int32).astype(np.int64))))}
    return found


def model(found: dict) -> dict:
    """The profile's `textures` field from what the probes found."""
    out = {}
    d = found.get("decode_rgba8unorm")
    if isinstance(d, dict):
        out["normalized_decode"] = min(d, key=d.get)
    hs = found["half_store"]
    out["half_store"] = min(hs, key=hs.get)
    fit = found["subtexel"]["fit"]
    if fit != "f32":
        out["subtexel_bits"] = int(fit.lstrip("floornearest"))
    fit = found["lod"]["fit"]
    if fit != "f32":
        out["lod_bits"] = int(fit.lstrip("floornearest"))
    lv = found["mip_nearest"]["levels_at_0.5_1.5_2.5_0.49_0.51_2.51"]
    out["mip_nearest"] = {(0, 1, 2): "half-down", (1, 2, 3): "half-up", (0, 2, 2): "half-even"}.get(tuple(lv[:3]), "unknown")
    out["unorm8_filter"] = "fixed8" if found["unorm8_filter"]["fixed8_misses"] == 0 else "float"
    return out


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    backend, sets = "dawn", None
    if "--backend" in args:
        i = args.index("--backend")
        backend = args[i + 1]
        del args[i:i + 2]
    if "--sets" in args:        # only these case sets (texture_cases functions), and no probes
        i = args.index("--sets")
        sets = args[i + 1].split(",")
        del args[i:i + 2]
    out = pathlib.Path(args[0] if args else "h200-out")
    out.mkdir(parents=True, exist_ok=True)
    import texture_cases as C
    from emu.hw.runner import available_adapter
    info, why = available_adapter(backend)
    print(f"adapter: {why}", flush=True)
    if info is None:
        return 1
    raw, report = {}, {"adapter": {k: info.get(k) for k in ("vendor", "device", "description", "backend_type")},
                       "cases": {}}
    t0 = time.monotonic()
    chosen = [getattr(C, f)() for f in sets] if sets else \
        [C.cases(), C.new_cases(), C.held_out_cases(), C.confirm_cases(), C.final_cases()]
    for name, case in [c for cs in chosen for c in cs]:
        try:
            res = run_on_adapter(**case, backend=backend)
        except Exception as e:
            report["cases"][name] = f"failed: {str(e)[:300]}"
            print(f"  {name}: FAILED {str(e)[:200]}", flush=True)
            continue
        for (g, b), data in res.items():
            raw[f"{name}:{g},{b}"] = np.frombuffer(data, np.uint8)
        report["cases"][name] = "ok"
        print(f"  {name}: ok ({time.monotonic() - t0:.1f} s)", flush=True)
    try:
        if not sets:
            report["probes"] = probes(backend, raw)
            report["textures"] = model(report["probes"])
    except Exception as e:
        import traceback
        report["probes"] = f"failed: {traceback.format_exc()[-1500:]}"
    np.savez_compressed(out / "textures.npz", **raw)
    (out / "textures.json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({k: report.get(k) for k in ("textures", "probes")}, indent=1))
    print(f"wrote {out / 'textures.npz'} ({len(raw)} arrays) and textures.json in {time.monotonic() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
