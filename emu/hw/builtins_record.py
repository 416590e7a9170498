"""Record a real GPU's scalar arithmetic and WGSL numeric builtins (`emu record --builtins`).

    summary = record_builtins("out/", seed=1, scale=1.0)

Every case is one small compute shader (one invocation per input, inputs and outputs in
storage buffers) run through Dawn. Inputs are generated from the seed by :func:`case_inputs`, so
a recording needs to carry only the outputs: ``record_builtins`` writes each output as its
difference, in units in the last place, from a plain float64 reference (:func:`reference`)
rounded to the type, which is small for a numeric builtin and compresses to a fraction of a byte
per result; :func:`decode` rebuilds the exact bits (CRC-checked per block of 4096 results).

Cases (key ``{type}/{name}``): every unary builtin over all 65,536 f16 inputs and, for f32,
random bit patterns plus values spread over the function's domain plus specials; binary and
ternary builtins and operators (``div``, ``mod``, ``pow``, ``atan2``, ``fma``, ``mix``,
``smoothstep``, ``a*b+c``...) over random pairs from both; vector builtins (length, distance,
normalize, dot, cross, reflect, refract, faceForward) on vec2/3/4; conversions, packing,
quantizeToF16, frexp/modf/ldexp; f16 expressions stored as f32 (are f16 steps rounded?);
const-expressions (folded by the compiler, not by the GPU).
"""
from __future__ import annotations

import json
import os
import time
import zlib
from dataclasses import dataclass

import numpy as np

__all__ = ["CASES", "Case", "case_inputs", "reference", "encode", "decode", "record_builtins",
           "load_recording", "shader"]

F32_PI = np.pi


@dataclass(frozen=True)
class Case:
    """One recorded expression. ``args``: the argument kinds ('f' the case's float type, 'i' i32,
    'u' u32, 'vN' a vecN of the float type); ``body``: WGSL statements over a, b, c writing
    o0, o1...; ``outs``: output element types; ``dom``: the sampler of float arguments."""
    ty: str
    name: str
    args: tuple
    body: str
    outs: tuple
    dom: str = "any"
    ref: object = None          # float64 reference on the (float64) arguments, or None: zeros
    n: int = 0                  # f32 inputs (0: the default); f16 unary: exhaustive

    @property
    def key(self):
        return f"{self.ty}/{self.name}"


def _pow64(x, y):
    x = np.where(x == 0, 0.0, x)
    return np.where(x < 0, np.nan, np.power(np.abs(x), y))


def _smooth(a, b, v):
    t = np.clip((v - a) / (b - a), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


_UNARY = {   # name: (wgsl expression of a, float64 reference, domain)
    "abs": ("abs(a)", np.abs, "any"), "neg": ("-a", np.negative, "any"),
    "sign": ("sign(a)", np.sign, "any"), "floor": ("floor(a)", np.floor, "wide"),
    "ceil": ("ceil(a)", np.ceil, "wide"), "round": ("round(a)", np.rint, "wide"),
    "trunc": ("trunc(a)", np.trunc, "wide"), "fract": ("fract(a)", lambda x: x - np.floor(x), "wide"),
    "saturate": ("saturate(a)", lambda x: np.clip(x, 0, 1), "wide"),
    "sqrt": ("sqrt(a)", np.sqrt, "pos"), "inverseSqrt": ("inverseSqrt(a)", lambda x: 1 / np.sqrt(x), "pos"),
    "recip": ("1.0 / a", lambda x: 1 / x, "any"),
    "exp": ("exp(a)", np.exp, "exp"), "exp2": ("exp2(a)", np.exp2, "exp2"),
    "log": ("log(a)", np.log, "pos"), "log2": ("log2(a)", np.log2, "pos"),
    "sin": ("sin(a)", np.sin, "trig"), "cos": ("cos(a)", np.cos, "trig"), "tan": ("tan(a)", np.tan, "trig"),
    "asin": ("asin(a)", np.arcsin, "unit"), "acos": ("acos(a)", np.arccos, "unit"),
    "atan": ("atan(a)", np.arctan, "mag"), "sinh": ("sinh(a)", np.sinh, "hyp"),
    "cosh": ("cosh(a)", np.cosh, "hyp"), "tanh": ("tanh(a)", np.tanh, "hyp"),
    "asinh": ("asinh(a)", np.arcsinh, "mag"), "acosh": ("acosh(a)", np.arccosh, "acosh"),
    "atanh": ("atanh(a)", np.arctanh, "unit"),
    "degrees": ("degrees(a)", np.degrees, "any"), "radians": ("radians(a)", np.radians, "any"),
    "square": ("a * a", np.square, "any"), "double": ("a + a", lambda x: x + x, "any"),
    "length": ("length(a)", np.abs, "any"),
}
_BINARY = {
    "add": ("a + b", np.add), "sub": ("a - b", np.subtract), "mul": ("a * b", np.multiply),
    "div": ("a / b", np.divide), "mod": ("a % b", np.fmod), "min": ("min(a, b)", np.fmin),
    "max": ("max(a, b)", np.fmax), "step": ("step(a, b)", lambda e, x: (e <= x).astype(np.float64)),
    "pow": ("pow(a, b)", _pow64), "atan2": ("atan2(a, b)", np.arctan2),
    "distance": ("distance(a, b)", lambda a, b: np.abs(a - b)),
}
_TERNARY = {
    "fma": ("fma(a, b, c)", lambda a, b, c: a * b + c), "mul_add": ("a * b + c", lambda a, b, c: a * b + c),
    "mul_sub": ("a * b - c", lambda a, b, c: a * b - c), "sub_mul": ("c - a * b", lambda a, b, c: c - a * b),
    "mul_add_a": ("a * b + a", lambda a, b, c: a * b + a),
    "mix": ("mix(a, b, c)", lambda a, b, t: a * (1 - t) + b * t),
    "clamp": ("clamp(a, b, c)", lambda e, lo, hi: np.fmin(np.fmax(e, lo), hi)),
    "smoothstep": ("smoothstep(a, b, c)", _smooth),
    "mul_mul": ("a * b * c", lambda a, b, c: a * b * c), "add_add": ("a + b + c", lambda a, b, c: a + b + c),
}



def _to_int(x):
    return np.trunc(np.nan_to_num(x, nan=0.0, posinf=2.0 ** 40, neginf=-2.0 ** 40))


def _cols(m):
    return tuple(m[:, k] for k in range(m.shape[1]))


def _refract(i, n, eta):
    n = n / np.sqrt(np.sum(n * n, -1, keepdims=True))
    d = np.sum(n * i, -1, keepdims=True)
    e = eta[:, None]
    k = 1.0 - e * e * (1.0 - d * d)
    r = np.where(k < 0, 0.0, e * i - (e * d + np.sqrt(np.maximum(k, 0))) * n)
    return r[:, 0], r[:, 2]


def _unpack_ref(nm):
    def f(u):
        u = u.astype(np.uint64)
        if nm == "unpack2x16float":
            h = np.stack([(u >> np.uint64(16 * k)) & np.uint64(0xFFFF) for k in range(2)], -1).astype(np.uint16)
            return _cols(h.view(np.float16).astype(np.float64))
        w, cnt = (8, 4) if "4x8" in nm else (16, 2)
        v = np.stack([(u >> np.uint64(w * k)) & np.uint64((1 << w) - 1) for k in range(cnt)], -1).astype(np.int64)
        if "snorm" in nm:
            v = (v ^ (1 << (w - 1))) - (1 << (w - 1))
            return _cols(np.maximum(v / float((1 << (w - 1)) - 1), -1.0))
        return _cols(v / float((1 << w) - 1))
    return f


def _cases():
    out = []
    for ty in ("f32", "f16"):
        for nm, (e, ref, dom) in _UNARY.items():
            out.append(Case(ty, nm, ("f",), f"o0[i] = {e};", (ty,), dom, ref))
        for nm, (e, ref) in _BINARY.items():
            out.append(Case(ty, nm, ("f", "f"), f"o0[i] = {e};", (ty,), "pair", ref))
        for nm, (e, ref) in _TERNARY.items():
            out.append(Case(ty, nm, ("f", "f", "f"), f"o0[i] = {e};", (ty,), "triple", ref))
        out.append(Case(ty, "ldexp", ("f", "i"), "o0[i] = ldexp(a, b);", (ty,), "wide",
                        lambda x, k: np.ldexp(x, np.clip(k, -400, 400).astype(np.int32))))
        out.append(Case(ty, "frexp", ("f",), "let r = frexp(a); o0[i] = r.fract; o1[i] = r.exp;",
                        (ty, "i32"), "any", lambda x: np.frexp(x)))
        out.append(Case(ty, "modf", ("f",), "let r = modf(a); o0[i] = r.fract; o1[i] = r.whole;",
                        (ty, ty), "wide", lambda x: (x - np.trunc(x), np.trunc(x))))
        # f16 steps kept in f32? the same expressions stored through f32
        if ty == "f16":
            out.append(Case(ty, "mul_add_to_f32", ("f", "f", "f"), "o0[i] = f32(a * b + c);", ("f32",),
                            "triple", lambda a, b, c: a * b + c))
            out.append(Case(ty, "mul_add_a_to_f32", ("f", "f", "f"), "o0[i] = f32(a * b + a);", ("f32",),
                            "triple", lambda a, b, c: a * b + a))
            out.append(Case(ty, "mul_to_f32", ("f", "f"), "o0[i] = f32(a * b);", ("f32",), "pair",
                            lambda a, b: a * b))
            out.append(Case(ty, "exp_to_f32", ("f",), "o0[i] = f32(exp(a));", ("f32",), "exp", np.exp))
            out.append(Case(ty, "to_f32", ("f",), "o0[i] = f32(a);", ("f32",), "any", lambda x: x))
            out.append(Case(ty, "to_i32", ("f",), "o0[i] = i32(a);", ("i32",), "any", _to_int))
            out.append(Case(ty, "to_u32", ("f",), "o0[i] = u32(a);", ("u32",), "any", _to_int))
        else:
            out.append(Case(ty, "to_f16", ("f",), "o0[i] = f16(a);", ("f16",), "any", lambda x: x))
            out.append(Case(ty, "quantizeToF16", ("f",), "o0[i] = quantizeToF16(a);", (ty,), "any", lambda x: x))
            out.append(Case(ty, "to_i32", ("f",), "o0[i] = i32(a);", ("i32",), "wide", _to_int))
            out.append(Case(ty, "to_u32", ("f",), "o0[i] = u32(a);", ("u32",), "wide", _to_int))
            out.append(Case(ty, "from_i32", ("i",), "o0[i] = f32(a);", (ty,), "int", lambda k: k))
            out.append(Case(ty, "from_u32", ("u",), "o0[i] = f32(a);", (ty,), "int",
                            lambda k: k.astype(np.uint32).astype(np.float64)))
            for nm, e in (("pack4x8snorm", "pack4x8snorm(a)"), ("pack4x8unorm", "pack4x8unorm(a)")):
                out.append(Case(ty, nm, ("v4",), f"o0[i] = {e};", ("u32",), "unit2", None, 1 << 16))
            for nm, e in (("pack2x16snorm", "pack2x16snorm(a)"), ("pack2x16unorm", "pack2x16unorm(a)"),
                          ("pack2x16float", "pack2x16float(a)")):
                out.append(Case(ty, nm, ("v2",), f"o0[i] = {e};", ("u32",), "unit2", None, 1 << 16))
            for nm, nout in (("unpack4x8snorm", 4), ("unpack4x8unorm", 4), ("unpack2x16snorm", 2),
                             ("unpack2x16unorm", 2), ("unpack2x16float", 2)):
                body = f"let r = {nm}(a); " + " ".join(f"o{j}[i] = r[{j}];" for j in range(nout))
                out.append(Case(ty, nm, ("u",), body, (ty,) * nout, "int", _unpack_ref(nm), 1 << 18))
        # vectors
        for n in (2, 3, 4):
            out.append(Case(ty, f"length{n}", (f"v{n}",), "o0[i] = length(a);", (ty,), "vec",
                            lambda v: np.sqrt(np.sum(v * v, -1))))
            out.append(Case(ty, f"dot{n}", (f"v{n}", f"v{n}"), "o0[i] = dot(a, b);", (ty,), "vec",
                            lambda a, b: np.sum(a * b, -1)))
        out.append(Case(ty, "distance3", ("v3", "v3"), "o0[i] = distance(a, b);", (ty,), "vec",
                        lambda a, b: np.sqrt(np.sum((a - b) ** 2, -1))))
        out.append(Case(ty, "normalize3", ("v3",), "let r = normalize(a); o0[i] = r.x; o1[i] = r.y; o2[i] = r.z;",
                        (ty,) * 3, "vec", lambda v: _cols(v / np.sqrt(np.sum(v * v, -1, keepdims=True)))))
        out.append(Case(ty, "normalize4", ("v4",), "let r = normalize(a); o0[i] = r.x; o1[i] = r.w;",
                        (ty,) * 2, "vec", lambda v: _cols(v / np.sqrt(np.sum(v * v, -1, keepdims=True)))[::3]))
        out.append(Case(ty, "cross", ("v3", "v3"), "let r = cross(a, b); o0[i] = r.x; o1[i] = r.y; o2[i] = r.z;",
                        (ty,) * 3, "vec", lambda a, b: _cols(np.cross(a, b))))
        out.append(Case(ty, "reflect3", ("v3", "v3"), "let r = reflect(a, b); o0[i] = r.x; o1[i] = r.z;",
                        (ty,) * 2, "vec", lambda a, b: _cols(a - 2 * np.sum(a * b, -1, keepdims=True) * b)[::2]))
        out.append(Case(ty, "refract3", ("v3", "v3", "f"),
                        "let r = refract(a, normalize(b), c); o0[i] = r.x; o1[i] = r.z;", (ty,) * 2, "vec", _refract))
        out.append(Case(ty, "faceForward3", ("v3", "v3", "v3"),
                        "let r = faceForward(a, b, c); o0[i] = r.x;", (ty,), "vec",
                        lambda a, b, c: np.where(np.sum(b * c, -1) < 0, a[:, 0], -a[:, 0])))
    return tuple(out)


CASES = _cases()
BY_KEY = {c.key: c for c in CASES}

# ------------------------------------------------------------------------------------ inputs

_NP = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "u32": np.uint32}
_BITS = {"f32": np.uint32, "f16": np.uint16, "i32": np.uint32, "u32": np.uint32}


def _specials(ty):
    if ty == "f32":
        u = [0, 0x80000000, 1, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000, 0x7F7FFFFF,
             0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF, 0x3F800000,
             0xBF800000, 0x3F000000, 0x40000000, 0x40490FDB, 0x3FC90FDB, 0xC0490FDB, 0x42B17218, 0x42FE0000,
             0xC2FC0000, 0xC2AEAC50, 0x4B000000, 0x4B800000, 0x3EFFFFFF, 0x3F7FFFFF, 0x3F800001, 0x00400000]
        return np.array(u, np.uint32).view(np.float32)
    u = [0, 0x8000, 1, 0x8001, 0x03FF, 0x83FF, 0x0400, 0x8400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00,
         0xFE00, 0x7C01, 0x7FFF, 0x3C00, 0xBC00, 0x3800, 0x4000, 0x4248, 0x3E48, 0x498C, 0x3BFF, 0x3C01]
    return np.array(u, np.uint16).view(np.float16)


def _logu(rng, n, lo, hi, signed=True):
    v = np.exp2(rng.uniform(lo, hi, n))
    return v * rng.choice([-1.0, 1.0], n) if signed else v


def _domain(ty, dom, n, rng):
    """float64 values for one float argument (rounded to ty by the caller)."""
    big = 128 if ty == "f32" else 16
    tiny = -149 if ty == "f32" else -24
    if dom == "any":
        return None
    if dom == "wide":
        return np.concatenate([_logu(rng, n // 2, tiny, big), rng.uniform(-40, 40, n - n // 2)])
    if dom == "pos":
        return _logu(rng, n, tiny, big, signed=False)
    if dom == "exp":
        lim = 89 if ty == "f32" else 11.2
        return np.concatenate([rng.uniform(-lim - 16, lim, n // 2), _logu(rng, n - n // 2, -30, 4)])
    if dom == "exp2":
        lim = 128 if ty == "f32" else 16
        return np.concatenate([rng.uniform(-lim - 23, lim, n // 2), _logu(rng, n - n // 2, -30, 4)])
    if dom == "trig":
        return np.concatenate([rng.uniform(-8 * np.pi, 8 * np.pi, n // 2), _logu(rng, n // 4, -30, 4),
                               rng.uniform(-2000, 2000, n - n // 2 - n // 4)])
    if dom == "unit":
        return np.concatenate([rng.uniform(-1, 1, n // 2), _logu(rng, n - n // 2, -30, 0)])
    if dom == "mag":
        return _logu(rng, n, -30, 30 if ty == "f32" else 15)
    if dom == "hyp":
        return np.concatenate([rng.uniform(-12, 12, n // 2), _logu(rng, n - n // 2, -30, 7)])
    if dom == "acosh":
        return 1 + _logu(rng, n, -24, 20 if ty == "f32" else 15, signed=False)
    if dom in ("pair", "triple", "vec"):
        return np.concatenate([rng.uniform(-4, 4, n // 2), _logu(rng, n - n // 2, -20 if ty == "f32" else -14,
                                                                  20 if ty == "f32" else 8)])
    if dom == "unit2":
        return rng.uniform(-1.25, 1.25, n)
    raise ValueError(dom)


def _random_bits(ty, n, rng):
    return rng.integers(0, 1 << (32 if ty == "f32" else 16), n, dtype=np.uint64).astype(_BITS[ty]).view(_NP[ty])


def _float_arg(case, n, rng, exhaustive):
    ty = case.ty
    if exhaustive:
        return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    sp = _specials(ty)
    dom = _domain(ty, case.dom, n - n // 4 - sp.size, rng)
    bits = _random_bits(ty, n // 4, rng)
    if dom is None:
        bits = _random_bits(ty, n - sp.size, rng)
        return np.concatenate([sp, bits])
    with np.errstate(all="ignore"):
        return np.concatenate([sp, bits, dom.astype(_NP[ty])])


def case_inputs(case: Case, seed: int, scale: float = 1.0):
    """The inputs of one case, as numpy arrays per argument (vectors flattened n*k)."""
    rng = np.random.default_rng([seed, zlib.crc32(case.key.encode())])
    exhaustive = case.ty == "f16" and len(case.args) == 1 and case.args[0] == "f"
    base = case.n or (1 << 20 if case.ty == "f32" else 1 << 19)
    n = 1 << 16 if exhaustive else max(4096, int(base * scale) // 256 * 256)
    arrays = []
    for a in case.args:
        if a == "f":
            x = _float_arg(case, n, rng, exhaustive)
            if len(case.args) > 1 and not exhaustive:
                x = x[rng.permutation(n)]            # pair specials with everything
            arrays.append(x)
        elif a == "i":
            if case.name == "ldexp":
                arrays.append(rng.integers(-160 if case.ty == "f32" else -30, 160 if case.ty == "f32" else 30,
                                           n).astype(np.int32))
            else:
                arrays.append(np.concatenate([rng.integers(-(1 << 31), 1 << 31, n // 2),
                                              rng.integers(-(1 << 25), 1 << 25, n - n // 2)]).astype(np.int32))
        elif a == "u":
            arrays.append(rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32))
        else:
            k = int(a[1])
            with np.errstate(all="ignore"):
                v = _domain(case.ty, case.dom if case.dom != "vec" else "vec", n * k, rng).astype(_NP[case.ty])
            arrays.append(v[rng.permutation(n * k)])
    return n, arrays


# ------------------------------------------------------------------------------------ shader

_WG = 256


def atan2_f16_inputs(seed: int = 2):
    """(y, x) f16 of a sweep of atan2's small results: every f16 x in [8, 64) against 64 random y
    with |y| < 2^-10, every f16 y in [8, 64) against 32 random x as small, then random bit pairs
    (524,288 pairs in all)."""
    rng = np.random.default_rng(seed)

    def tiny(n):
        return (rng.integers(0, 0x1400, n) | (rng.integers(0, 2, n) << 15)).astype(np.uint16).view(np.float16)
    big = np.arange(0x4800, 0x5400, dtype=np.uint16).view(np.float16)
    y1, x1 = (a.ravel() for a in np.meshgrid(tiny(64), big, indexing="ij"))
    y2, x2 = (a.ravel() for a in np.meshgrid(big, tiny(32), indexing="ij"))
    n = 524_288 - y1.size - y2.size
    r = rng.integers(0, 1 << 16, (2, n)).astype(np.uint16).view(np.float16)
    return np.concatenate([y1, y2, r[0]]), np.concatenate([x1, x2, r[1]])


def _wgsl_t(a, ty):
    return {"f": ty, "i": "i32", "u": "u32"}.get(a, ty)


def shader(case: Case) -> str:
    ty = case.ty
    lines = ["enable f16;"] if "f16" in (ty,) + tuple(case.outs) else []
    names = "abc"
    for j, a in enumerate(case.args):
        lines.append(f"@group(0) @binding({j}) var<storage, read> x{j} : array<{_wgsl_t(a, ty)}>;")
    for j, t in enumerate(case.outs):
        lines.append(f"@group(0) @binding({len(case.args) + j}) var<storage, read_write> o{j} : array<{t}>;")
    lines.append(f"@compute @workgroup_size({_WG})")
    lines.append("fn main(@builtin(global_invocation_id) g : vec3<u32>, @builtin(num_workgroups) nw : vec3<u32>) {")
    lines.append(f"  let i = g.x + g.y * nw.x * {_WG}u;")
    lines.append("  if (i >= arrayLength(&o0)) { return; }")
    for j, a in enumerate(case.args):
        if a[0] == "v":
            k = int(a[1])
            comps = ", ".join(f"x{j}[{k}u * i + {m}u]" for m in range(k))
            lines.append(f"  let {names[j]} = vec{k}<{ty}>({comps});")
        else:
            lines.append(f"  let {names[j]} = x{j}[i];")
    lines.append("  " + case.body)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dispatch(n):
    groups = (n + _WG - 1) // _WG
    x = min(groups, 32768)
    y = (groups + x - 1) // x
    assert x * y * _WG >= n
    return (x, y, 1)


# ------------------------------------------------------------------------------------ encoding

def _ordered(bits: np.ndarray, float_type: bool) -> np.ndarray:
    b = bits.astype(np.int64)
    if not float_type:
        return b
    w = bits.dtype.itemsize * 8
    sign = np.int64(1) << (w - 1)
    return np.where(b & sign, -(b & (sign - 1)) - 1, b)     # -0 below +0


def _unordered(o: np.ndarray, dtype, float_type: bool) -> np.ndarray:
    if not float_type:
        return o.astype(np.uint64).astype(dtype) if dtype != np.int32 else o.astype(np.int32).view(np.uint32)
    w = np.dtype(dtype).itemsize * 8
    sign = np.int64(1) << (w - 1)
    return np.where(o < 0, (-o - 1) | sign, o).astype(np.uint64).astype(dtype)


def reference(case: Case, arrays, j: int) -> np.ndarray:
    """The bits of the plain reference of output j (float64 then one rounding; NaN as the GPU's
    canonical all-ones payload): only what decoding subtracts, not a model."""
    t = case.outs[j]
    bt = _BITS[t]
    n = len(arrays[0]) // (int(case.args[0][1]) if case.args[0][0] == "v" else 1)
    if case.ref is None:
        return np.zeros(n, bt)
    xs = []
    for a, x in zip(case.args, arrays):
        x64 = x.astype(np.float64)
        xs.append(x64.reshape(n, int(a[1])) if a[0] == "v" else x64)
    with np.errstate(all="ignore"):
        r = case.ref(*xs)
        r = np.asarray(r[j] if isinstance(r, tuple) else r, np.float64)
        if t not in ("f32", "f16"):
            lo, hi = (-2.0 ** 31, 2.0 ** 31 - 1) if t == "i32" else (0.0, 2.0 ** 32 - 1)
            return np.clip(np.nan_to_num(r), lo, hi).astype(np.int64).astype(_NP[t]).view(bt)
        r = r.astype(_NP[t])
    bits = r.view(bt).copy()
    bits[np.isnan(r)] = 0x7FFFFFFF if t == "f32" else 0x7FFF
    return bits


_BLOCK = 4096


def encode(out_bits: np.ndarray, ref_bits: np.ndarray, float_type: bool) -> dict:
    """int8 differences (ordered) from the reference, exceptions beside them, CRC per block."""
    d = _ordered(out_bits, float_type) - _ordered(ref_bits, float_type)
    big = np.abs(d) > 127
    small = np.where(big, -128, d).astype(np.int8)
    crc = np.array([zlib.crc32(out_bits[k:k + _BLOCK].tobytes()) for k in range(0, out_bits.size, _BLOCK)],
                   np.uint32)
    return {"d": small, "xi": np.flatnonzero(big).astype(np.uint32), "xv": out_bits[big], "crc": crc}


def decode(enc: dict, ref_bits: np.ndarray, float_type: bool):
    """(bits, bad): the recorded bits and a mask of results in blocks whose CRC does not match."""
    d = enc["d"].astype(np.int64)
    o = _ordered(ref_bits, float_type) + d
    bits = _unordered(o, ref_bits.dtype, float_type)
    xi = enc["xi"].astype(np.int64)
    bits[xi] = enc["xv"]
    bad = np.zeros(bits.size, bool)
    for b, c in enumerate(enc["crc"]):
        k = b * _BLOCK
        if zlib.crc32(bits[k:k + _BLOCK].tobytes()) != int(c):
            bad[k:k + _BLOCK] = True
    return bits, bad


# ------------------------------------------------------------------------------------ running

def run_case(case: Case, seed: int, scale: float, run):
    """(n, inputs, [output bits]) for one case through `run` (the runner's run_on_adapter)."""
    n, arrays = case_inputs(case, seed, scale)
    bufs = {(0, j): x for j, x in enumerate(arrays)}
    for j, t in enumerate(case.outs):
        bufs[(0, len(arrays) + j)] = np.zeros(n, _NP[t])
    outs = run(shader(case), dispatch=_dispatch(n), backend="dawn", buffers=bufs,
               outputs=[(0, len(arrays) + j) for j in range(len(case.outs))])
    res = [np.frombuffer(outs[(0, len(arrays) + j)], _BITS[t]).copy() for j, t in enumerate(case.outs)]
    return n, arrays, res


def const_shader(ty: str, fns, values) -> str:
    """Const-expressions: every fn of every literal value, folded by the shader compiler."""
    sfx = "h" if ty == "f16" else "f"
    lines = (["enable f16;"] if ty == "f16" else []) + [
        f"@group(0) @binding(0) var<storage, read_write> o0 : array<{ty}>;",
        "@compute @workgroup_size(1)", "fn main() {"]
    k = 0
    for fn in fns:
        for v in values:
            lit = f"{float(v)!r}{sfx}"
            lines.append(f"  {{ const c = {fn}({lit}); o0[{k}] = c; }}")
            k += 1
    lines.append("}")
    return "\n".join(lines) + "\n"


CONST_FNS = ("sin", "cos", "exp", "exp2", "log", "log2", "sqrt", "inverseSqrt", "tanh", "atan")
CONST_VALUES = {"f32": (0.1, 0.3, 0.7, 1.1, 1.7, 2.3, 3.1, 5.5, 9.9, 13.7, 0.0123, 21.5),
                "f16": (0.1, 0.3, 0.7, 1.1, 1.7, 2.3, 3.1, 5.5, 7.9, 0.0123)}


def save_parts(arrays: dict, out_dir: str, prefix: str, part_bytes: int = 14 << 20) -> list:
    """np.savez_compressed into PREFIX_0.npz, PREFIX_1.npz... of about part_bytes each (what comes back
    from a device machine has a size limit per file); returns the file names."""
    part, size, names = {}, 0, []
    for k in list(arrays) + [None]:
        if k is not None:
            part[k] = arrays[k]
            size += len(zlib.compress(np.ascontiguousarray(arrays[k]).tobytes(), 1))
        if part and (k is None or size > part_bytes):
            name = f"{prefix}_{len(names)}.npz"
            np.savez_compressed(os.path.join(out_dir, name), **part)
            names.append(name)
            part, size = {}, 0
    return names


def record_builtins(out_dir: str, *, seed: int = 1, scale: float = 1.0, only: str = "", log=print,
                    run=None, max_seconds: float = 1e9, part_bytes: int = 13 << 20) -> dict:
    """Record every case; writes builtins_{f16,f32}.npz and builtins.json into out_dir."""
    from .runner import run_on_adapter
    run = run or run_on_adapter
    os.makedirs(out_dir, exist_ok=True)
    t_start = time.time()
    saved = {"f16": {}, "f32": {}}
    runs = {}
    for case in CASES:
        if only and only not in case.key:
            continue
        if time.time() - t_start > max_seconds:
            runs[case.key] = {"error": "skipped: out of time"}
            continue
        t0 = time.time()
        try:
            n, arrays, res = run_case(case, seed, scale, run)
        except Exception as e:
            runs[case.key] = {"error": f"{type(e).__name__}: {e}"[:2000]}
            log(f"  {case.key}: ERROR {runs[case.key]['error'][:400]}")
            continue
        st = {"n": n, "s": round(time.time() - t0, 2)}
        for j, bits in enumerate(res):
            t = case.outs[j]
            ref = reference(case, arrays, j)
            enc = encode(bits, ref, t in ("f32", "f16"))
            for k, v in enc.items():
                saved[case.ty][f"{case.key}/{j}/{k}"] = v
            if j == 0:
                st["equal_ref"] = round(float(np.mean(bits == ref)), 4)
                st["exceptions"] = int(enc["xi"].size)
        runs[case.key] = st
        log(f"  {case.key}: {json.dumps(st)}")
    # const-expressions
    for ty in ("f32", "f16"):
        try:
            src = const_shader(ty, CONST_FNS, CONST_VALUES[ty])
            nconst = len(CONST_FNS) * len(CONST_VALUES[ty])
            outs = run(src, dispatch=(1, 1, 1), backend="dawn", buffers={(0, 0): np.zeros(nconst, _NP[ty])})
            saved[ty][f"{ty}/const/bits"] = np.frombuffer(outs[(0, 0)], _BITS[ty]).copy()
            runs[f"{ty}/const"] = {"n": nconst}
        except Exception as e:
            runs[f"{ty}/const"] = {"error": f"{type(e).__name__}: {e}"[:2000]}
    files = {ty: save_parts(arrays, out_dir, f"builtins_{ty}", part_bytes) for ty, arrays in saved.items()}
    summary = {"seed": seed, "scale": scale, "files": files, "runs": runs,
               "toggles": os.environ.get("EMU_DAWN_TOGGLES", ""), "seconds": round(time.time() - t_start, 1)}
    with open(os.path.join(out_dir, "builtins.json"), "w") as f:
        json.dump(summary, f, indent=1)
    return summary


def load_recording(folder: str, keys=None):
    """{key: (inputs, [output bits], bad mask)} from what record_builtins wrote (only `keys`)."""
    with open(os.path.join(folder, "builtins.json")) as f:
        summary = json.load(f)
    seed, scale = summary["seed"], summary["scale"]
    out = {}
    for ty, fnames in summary["files"].items():
        z = {}
        for fname in fnames:
            with np.load(os.path.join(folder, fname)) as f:
                z.update({k: f[k] for k in f.files})
        for case in CASES:
            if case.ty != ty or f"{case.key}/0/d" not in z or (keys is not None and case.key not in keys):
                continue
            n, arrays = case_inputs(case, seed, scale)
            res, bad = [], np.zeros(n, bool)
            for j, t in enumerate(case.outs):
                enc = {k: z[f"{case.key}/{j}/{k}"] for k in ("d", "xi", "xv", "crc")}
                bits, b = decode(enc, reference(case, arrays, j), t in ("f32", "f16"))
                res.append(bits)
                bad |= b
            out[case.key] = (arrays, res, bad)
        if f"{ty}/const/bits" in z:
            out[f"{ty}/const"] = (None, [z[f"{ty}/const/bits"]], None)
    return summary, out


def save_compact(recording: dict, summary: dict, path: str, limit: int = 4096, exhaustive_f16: bool = True):
    """A compact copy of a recording for tests/data/hw: each case's first `limit` results (f16 unary
    cases: all 65,536), in the same encoding; load it with load_compact."""
    out = {"seed": np.int64(summary["seed"]), "scale": np.float64(summary["scale"])}
    for key, (arrays, res, bad) in recording.items():
        if arrays is None or key not in BY_KEY:
            continue
        case = BY_KEY[key]
        m = res[0].size if (exhaustive_f16 and case.ty == "f16" and case.args == ("f",)) else min(limit, res[0].size)
        sub = [x[: m * (int(a[1]) if a[0] == "v" else 1)] for a, x in zip(case.args, arrays)]
        keep = ~bad[:m] if bad is not None else np.ones(m, bool)
        if not keep.all():
            raise ValueError(f"{key}: the recording has unverified results (CRC) in its first {m}")
        for j, t in enumerate(case.outs):
            enc = encode(res[j][:m], reference(case, sub, j), t in ("f32", "f16"))
            for k in ("d", "xi", "xv"):
                out[f"{key}/{j}/{k}"] = enc[k]
        out[f"{key}/n"] = np.int64(m)
    np.savez_compressed(path, **out)


def load_compact(path: str) -> dict:
    """{case key: (inputs, [output bits])} from a save_compact file."""
    z = np.load(path)
    seed, scale = int(z["seed"]), float(z["scale"])
    out = {}
    for case in CASES:
        if f"{case.key}/n" not in z:
            continue
        m = int(z[f"{case.key}/n"])
        _, arrays = case_inputs(case, seed, scale)
        sub = [x[: m * (int(a[1]) if a[0] == "v" else 1)] for a, x in zip(case.args, arrays)]
        res = []
        for j, t in enumerate(case.outs):
            ref = reference(case, sub, j)
            o = _ordered(ref, t in ("f32", "f16")) + z[f"{case.key}/{j}/d"].astype(np.int64)
            bits = _unordered(o, ref.dtype, t in ("f32", "f16"))
            bits[z[f"{case.key}/{j}/xi"].astype(np.int64)] = z[f"{case.key}/{j}/xv"]
            res.append(bits)
        out[case.key] = (sub, res)
    return out
