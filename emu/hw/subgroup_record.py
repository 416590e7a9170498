"""Record a GPU's subgroup float reductions and scans (the order it combines lanes in), and
compare emu's with them.

    rec = record_subgroups(run_on_adapter, seed=1)       # {case key: output bits}, plus "lanes"
    rows = compare(rec, profile="nvidia-h200")           # per case: equal / n

Every case is one shader: invocation i reads x[i] and, where bit (its subgroup invocation id)
of its subgroup's word of `m` is set, writes `subgroupOP(x[i])` to o[i] (the other lanes stay
out of the operation: they test the order over a partial set of lanes). Key
``{type}/{op}/{lanes}/{values}``: lanes `all`, `prefix` (the first k, k random), `random`
(random nonzero masks); values `spread` (random signs, exponents over a wide range, so that
every order of additions rounds differently; near 1 for products) or `special` (NaN,
infinities, signed zeros and subnormals among them). Inputs come from the seed; a recording
carries only the outputs and ``lanes``, the subgroup invocation id and subgroup of every
invocation as the device numbered them (o2[i] = sid + 65536 * subgroup_size).
"""
from __future__ import annotations

import numpy as np

OPS = ("add", "mul", "min", "max", "inclusive_add", "exclusive_add", "inclusive_mul", "exclusive_mul")
WGSL = {"add": "subgroupAdd", "mul": "subgroupMul", "min": "subgroupMin", "max": "subgroupMax",
        "inclusive_add": "subgroupInclusiveAdd", "exclusive_add": "subgroupExclusiveAdd",
        "inclusive_mul": "subgroupInclusiveMul", "exclusive_mul": "subgroupExclusiveMul"}
LANES = ("all", "prefix", "random")
VALUES = ("spread", "special")
N = 32768                   # invocations per case
WG = 128
_NP = {"f32": np.float32, "f16": np.float16}
_BITS = {"f32": np.uint32, "f16": np.uint16}


def cases():
    return [f"{ty}/{op}/{lanes}/{vals}" for ty in ("f32", "f16") for op in OPS for lanes in LANES
            for vals in VALUES if not (vals == "special" and lanes == "prefix")]


def shader(ty: str, op: str) -> str:
    return "\n".join((["enable f16;"] if ty == "f16" else []) + [
        "enable subgroups;",
        "diagnostic(off, subgroup_uniformity);",
        f"@group(0) @binding(0) var<storage, read> x: array<{ty}>;",
        "@group(0) @binding(1) var<storage, read> m: array<u32>;",
        f"@group(0) @binding(2) var<storage, read_write> o: array<{ty}>;",
        "@group(0) @binding(3) var<storage, read_write> o2: array<u32>;",
        f"@compute @workgroup_size({WG})",
        "fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_index) li: u32,",
        "        @builtin(subgroup_invocation_id) sid: u32, @builtin(subgroup_size) size: u32) {",
        "  let i = g.x;",
        "  o2[i] = sid + 65536u * size;",
        f"  if (((m[(i - li) / size + li / size] >> sid) & 1u) == 1u) {{",
        f"    o[i] = {WGSL[op]}(x[i]);",
        "  }",
        "}"])


def inputs(key: str, seed: int, size: int):
    """(x, masks) of a case; masks: one u32 per subgroup of `size` lanes."""
    ty, op, lanes, vals = key.split("/")
    rng = np.random.default_rng([seed, cases().index(key)])
    n = N
    sign = rng.choice([-1.0, 1.0], n)
    mant = 1 + rng.random(n)
    if "mul" in op:
        e = rng.uniform(-1, 1, n) if ty == "f32" else rng.uniform(-0.5, 0.5, n)
        x = sign * mant * 2.0 ** np.floor(e)
    else:
        lo, hi = (-20, 20) if ty == "f32" else (-8, 8)
        x = sign * mant * 2.0 ** rng.integers(lo, hi + 1, n)
    x = x.astype(_NP[ty])
    if vals == "special":
        tiny = np.finfo(_NP[ty]).tiny
        sp = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, tiny / 4, -tiny / 2, tiny * 0.75], _NP[ty])
        pick = rng.random(n) < 0.125
        x[pick] = sp[rng.integers(0, sp.size, int(pick.sum()))]
    groups = n // size
    if lanes == "all":
        m = np.full(groups, (1 << size) - 1, np.uint64)
    elif lanes == "prefix":
        m = (np.uint64(1) << rng.integers(1, size, groups).astype(np.uint64)) - np.uint64(1)
    else:
        m = rng.integers(1, 1 << size, groups, dtype=np.uint64)
    return x, m.astype(np.uint32)


def record_subgroups(run, seed: int = 1, log=print) -> dict:
    """Run every case on the adapter behind `run` (emu.hw.runner.run_on_adapter's signature)."""
    out, size = {}, None
    for key in cases():
        ty, op = key.split("/")[:2]
        if size is None:
            probe = run(shader(ty, op), dispatch=(N // WG, 1, 1), backend="dawn",
                        buffers={(0, 0): np.zeros(N, _NP[ty]), (0, 1): np.zeros(N, np.uint32),
                                 (0, 2): np.zeros(N, _NP[ty]), (0, 3): np.zeros(N, np.uint32)})
            lanes = np.frombuffer(probe[(0, 3)], np.uint32).copy()
            size = int(lanes[0] >> 16)
            out["lanes"] = lanes
        x, m = inputs(key, seed, size)
        sentinel = np.full(N, 0x7E01 if ty == "f16" else 0x7FC00001, _BITS[ty]).view(_NP[ty])
        try:
            got = run(shader(ty, op), dispatch=(N // WG, 1, 1), backend="dawn",
                      buffers={(0, 0): x, (0, 1): np.resize(m, N), (0, 2): sentinel, (0, 3): np.zeros(N, np.uint32)})
            out[key] = np.frombuffer(got[(0, 2)], _BITS[ty]).copy()
        except Exception as e:      # noqa: BLE001
            out[f"{key}/error"] = np.array(f"{type(e).__name__}: {e}"[:1000])
            log(f"  {key}: {out[f'{key}/error']}")
    out["size"] = np.int64(size)
    out["seed"] = np.int64(seed)
    return out


def emulate(key: str, seed: int, size: int, profile: str = "nvidia-h200"):
    """emu's output bits of a case (the recording's lane numbering: consecutive invocations)."""
    from ..api import Device
    ty, op = key.split("/")[:2]
    x, m = inputs(key, seed, size)
    dev = Device(profile, subgroup_size=size)
    sentinel = np.full(N, 0x7E01 if ty == "f16" else 0x7FC00001, _BITS[ty]).view(_NP[ty])
    bufs = {(0, 0): dev.create_buffer(x), (0, 1): dev.create_buffer(np.resize(m, N)),
            (0, 2): dev.create_buffer(sentinel), (0, 3): dev.create_buffer(np.zeros(N, np.uint32))}
    dev.dispatch(dev.create_compute_pipeline(dev.create_shader_module(shader(ty, op), f"{op}.wgsl")), bufs,
                 (N // WG, 1, 1))
    return bufs[(0, 2)].read(_NP[ty]).view(_BITS[ty])


def compare(rec: dict, profile: str = "nvidia-h200") -> dict:
    """{case key: {"n": active results, "equal": bit-identical ones}} of emu against a recording."""
    seed, size = int(rec["seed"]), int(rec["size"])
    rows = {}
    for key in cases():
        if key not in rec:
            continue
        x, m = inputs(key, seed, size)
        active = ((np.repeat(m, size)[:N] >> (np.arange(N) % size).astype(np.uint32)) & 1).astype(bool)
        gpu = rec[key]                              # a compact copy keeps the first invocations
        got = emulate(key, seed, size, profile)[: gpu.size]
        active = active[: gpu.size]
        ty = key.split("/")[0]
        nan = (lambda b: (b & 0x7FFF) > 0x7C00) if ty == "f16" else (lambda b: (b & 0x7FFFFFFF) > 0x7F800000)
        same = (got == gpu)[active]
        rows[key] = {"n": int(active.sum()), "equal": int(same.sum()),
                     "equal_nan_any": int(((got == gpu) | (nan(got) & nan(gpu)))[active].sum())}
    return rows
