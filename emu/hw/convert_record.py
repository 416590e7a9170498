"""Record a GPU's conversions of cooperative-matrix elements (and of scalars, the same SPIR-V
conversions) and compare emu's with them.

    rec = record_conversions(run, seed=1)        # {case: output bits}, plus "seed"
    rows = compare(rec, profile="nvidia-h200")   # per case: equal / n (scalar=True: scalar kernels)

Every case is one GLSL compute shader (:func:`glsl`): each subgroup loads a 16x16 accumulator
of the source type from x, converts it to the destination type with a constructor (SPIR-V
OpFConvert / OpConvertFToS / OpConvertFToU / OpConvertSToF / OpConvertUToF on a KHR cooperative
matrix) and stores it to o at the same place, so o[i] is the conversion of x[i]; its scalar
form (``glsl(case, scalar=True)``) converts x[i] itself, one invocation each. Neither WGSL
dialect converts a matrix's elements, so this goes through Vulkan (``run(spirv, n_tiles, x,
out_dtype) -> output array``). A recording is kept as each output's bits XOR those of emu's
IEEE conversion (:func:`save` / :func:`load`, CRC-checked), mostly zeros. Inputs come from the seed (:func:`inputs`): every f16 bit
pattern, and for f32 the specials, subnormals, f16's overflow and underflow edges and the exact
halfway points between neighbouring f16 values, integral values and halves, and random bits.
"""
from __future__ import annotations

import zlib

import numpy as np

# case: (source GLSL type, destination GLSL type)
CASES = {"f32_f16": ("float", "float16_t"), "f16_f32": ("float16_t", "float"),
         "f32_i32": ("float", "int"), "f32_u32": ("float", "uint"),
         "i32_f32": ("int", "float"), "u32_f32": ("uint", "float"),
         "f16_i32": ("float16_t", "int"), "i32_f16": ("int", "float16_t")}
NP = {"float": np.float32, "float16_t": np.float16, "int": np.int32, "uint": np.uint32}
IR = {"float": "f32", "float16_t": "f16", "int": "i32", "uint": "u32"}
TILE = 256


def glsl(case: str, scalar: bool = False) -> str:
    src, dst = CASES[case]
    if scalar:
        return "\n".join([
            "#version 450", "#extension GL_EXT_shader_explicit_arithmetic_types : require",
            "#extension GL_EXT_shader_16bit_storage : require", "layout(local_size_x = 64) in;",
            f"layout(set = 0, binding = 0) readonly buffer X {{ {src} x[]; }};",
            f"layout(set = 0, binding = 1) writeonly buffer O {{ {dst} o[]; }};",
            "void main() {", "    uint i = gl_GlobalInvocationID.x;", f"    o[i] = {dst}(x[i]);", "}", ""])
    mat = "coopmat<{}, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>"
    return "\n".join([
        "#version 450",
        "#extension GL_KHR_cooperative_matrix : require",
        "#extension GL_KHR_memory_scope_semantics : require",
        "#extension GL_EXT_shader_explicit_arithmetic_types : require",
        "#extension GL_EXT_shader_16bit_storage : require",
        "layout(local_size_x = 32) in;",
        f"layout(set = 0, binding = 0) readonly buffer X {{ {src} x[]; }};",
        f"layout(set = 0, binding = 1) writeonly buffer O {{ {dst} o[]; }};",
        "void main() {",
        "    uint t = gl_WorkGroupID.x * 256u;",
        f"    {mat.format(src)} m;",
        "    coopMatLoad(m, x, t, 16, gl_CooperativeMatrixLayoutRowMajor);",
        f"    {mat.format(dst)} r = {mat.format(dst)}(m);",
        "    coopMatStore(r, o, t, 16, gl_CooperativeMatrixLayoutRowMajor);",
        "}", ""])


def _f32_inputs(rng) -> np.ndarray:
    u = lambda a: np.asarray(a, np.uint32)      # noqa: E731
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    finite = h[(h & 0x7C00) != 0x7C00].view(np.float16).astype(np.float32)
    with np.errstate(over="ignore"):
        nxt = np.nextafter(finite.astype(np.float16), np.float16(np.inf)).astype(np.float32)
    mids = ((finite.astype(np.float64) + nxt.astype(np.float64)) / 2).astype(np.float32)   # exact
    mids = mids[np.isfinite(mids)]
    near = np.concatenate([np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, -np.float32(np.inf))])
    special = u([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF,
                 0xFFFFFFFF, 0x7FA00000, 1, 0x807FFFFF, 0x00800000, 0x477FE000, 0x477FEFFF, 0x477FF000,
                 0x477FF001, 0x47800000, 0x33000000, 0x33000001, 0x32FFFFFF, 0x33800000, 0x4F000000,
                 0x4EFFFFFF, 0xCF000000, 0xCF000001, 0x4F800000, 0x4F7FFFFF, 0xBF800000, 0xBF7FFFFF])
    sub = rng.integers(0, 1 << 23, 4096, dtype=np.uint32) | (rng.integers(0, 2, 4096, dtype=np.uint32) << 31)
    ints = np.arange(-4096, 4096, 0.5, dtype=np.float32)
    bits = rng.integers(0, 1 << 32, 1 << 17, dtype=np.uint64).astype(np.uint32)
    x = np.concatenate([special.view(np.float32), sub.view(np.float32), finite, mids, near, ints,
                        bits.view(np.float32)]).astype(np.float32)
    return x


def inputs(case: str, seed: int) -> np.ndarray:
    """The source values of a case (a whole number of 16x16 tiles)."""
    src = CASES[case][0]
    rng = np.random.default_rng([seed, list(CASES).index(case)])
    if src == "float16_t":
        x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    elif src == "float":
        x = _f32_inputs(rng)
    else:
        edges = np.array([0, 1, -1, 2 ** 24, 2 ** 24 + 1, 2 ** 24 + 3, 2 ** 31 - 1, -2 ** 31, 65504, 65519,
                          65520, 65535, -65520, 2047, 2049, 4097], np.int64)
        small = np.arange(-70000, 70000, dtype=np.int64)
        rand = rng.integers(0, 1 << 32, 1 << 17, dtype=np.uint64).astype(np.int64)
        x = np.concatenate([edges, small, rand]) & 0xFFFFFFFF
        x = x.astype(np.uint32).view(np.int32) if src == "int" else x.astype(np.uint32)
    pad = (-x.size) % TILE
    return np.concatenate([x, np.zeros(pad, x.dtype)]).astype(NP[src])


def record_conversions(run, seed: int = 1, log=print) -> dict:
    """{case: output array} of every case through `run(case, x) -> output array`; a case the
    device refuses records its message under "case/error"."""
    rec = {"seed": np.int64(seed)}
    for case in CASES:
        x = inputs(case, seed)
        try:
            rec[case] = np.asarray(run(case, x))
            log(f"conversions {case}: {x.size} values")
        except Exception as e:          # noqa: BLE001 -- recorded, the other cases still run
            rec[f"{case}/error"] = np.array(f"{type(e).__name__}: {e}"[:2000])
            log(f"conversions {case}: {type(e).__name__}: {str(e)[:300]}")
    return rec


def emulate(case: str, x, profile: str = "nvidia-h200", scalar: bool = False) -> np.ndarray:
    """emu's run of the case's shader on x (GLSL through the SPIR-V front end; needs glslang)."""
    from ..api import Device
    x = np.asarray(x)
    dst = NP[CASES[case][1]]
    dev = Device(profile)
    bufs = {(0, 0): dev.create_buffer(x), (0, 1): dev.create_buffer(np.zeros(x.size, dst))}
    pipe = dev.create_compute_pipeline(dev.create_shader_module(glsl(case, scalar), f"convert_{case}.comp"))
    dev.dispatch(pipe, bufs, (x.size // (64 if scalar else TILE), 1, 1))
    return bufs[(0, 1)].read(dst)


def compare(rec: dict, profile: str = "nvidia-h200", scalar: bool = False) -> dict:
    """{case: {"n", "equal"}} of emu against a recording (bits compared, NaN bits too)."""
    seed = int(rec["seed"])
    rows = {}
    for case in CASES:
        if case not in rec:
            continue
        x = inputs(case, seed)
        gpu = np.asarray(rec[case])
        got = emulate(case, x, profile, scalar).astype(gpu.dtype)
        bits = {2: np.uint16, 4: np.uint32}[gpu.dtype.itemsize]
        rows[case] = {"n": int(gpu.size), "equal": int((got.view(bits) == gpu.view(bits)).sum())}
    return rows


def _ieee_bits(case: str, x) -> np.ndarray:
    from ..numerics import scalar
    src, dst = (IR[t] for t in CASES[case])
    with np.errstate(all="ignore"):
        r = np.asarray(scalar.convert(np.asarray(x), src, dst)).astype(NP[CASES[case][1]])
    return r.view({2: np.uint16, 4: np.uint32}[r.dtype.itemsize])


def save(rec: dict, path: str):
    """A recording as XOR against the IEEE conversion (compresses to almost nothing)."""
    seed = int(rec["seed"])
    out = {"seed": np.int64(seed)}
    for case in CASES:
        if case in rec:
            bits = _ieee_bits(case, inputs(case, seed))
            gpu = np.asarray(rec[case]).view(bits.dtype)
            out[f"{case}/xor"] = gpu ^ bits
            out[f"{case}/crc"] = np.uint32(zlib.crc32(gpu.tobytes()))
        elif f"{case}/error" in rec:
            out[f"{case}/error"] = rec[f"{case}/error"]
    np.savez_compressed(path, **out)


def load(path: str) -> dict:
    """The recording :func:`save` wrote: {"seed", case: output array}."""
    with np.load(path) as z:
        seed = int(z["seed"])
        rec = {"seed": np.int64(seed)}
        for case in CASES:
            if f"{case}/xor" not in z:
                continue
            gpu = z[f"{case}/xor"] ^ _ieee_bits(case, inputs(case, seed))
            if zlib.crc32(gpu.tobytes()) != int(z[f"{case}/crc"]):
                raise ValueError(f"{path}: {case} does not rebuild to the recorded bits (CRC)")
            rec[case] = gpu.view(NP[CASES[case][1]])
    return rec
