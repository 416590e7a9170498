"""`emu explain TRACE --op SEQ [--lane L]` of a scalar value: which of the device compilers'
decisions rounded it (emu/isa/compiler.py's `contracted`, recorded in the trace as the event's
`decision`), with the measurement that pins it, and the rounding redone from the trace's operand
values: the value as the decision computes it (a fused multiply-add rounded once, RCP(y) for a
division, one RSQ) beside the value without it (the product rounded first, a square root then a
division), and the bits the run produced.
"""
from __future__ import annotations

import json
from fractions import Fraction

import numpy as np

from ..errors import HostError
from ..numerics import mma_ref as _ref
from ..numerics.dtypes import FLOATS, NP

# decision -> (the operation the instruction became, what that does to the rounding); the
# measurement that pins each is emu.isa.compiler.DECISIONS
RULES = {
    "fma": ("fma", "a * b + c rounded once: the add's product fused into one fused multiply-add"),
    "fma-shared": ("fma", "a * b + c rounded once although a * b has more than two users: one of the adds "
                          "that use it also reads a or b, and the driver fuses it into every one"),
    "fma-fewer-users": ("fma", "a * b + c * d with c * d fused: of the add's two products the one with fewer "
                               "users fuses, the other (a * b) rounded first"),
    "fma-multiply-first": ("fma", "a * b + p with a * b fused: of the add's two products a multiply fuses before a "
                                  "division or a widened f16 product (p), which is rounded first"),
    "fma-division": ("fma", "x / y + c as fma(x, RCP(y), c): the division's product x * RCP(y) fused "
                            "with the add and rounded once (RCP(y) is rounded on its own)"),
    "fma-division-beside-fma": ("fma", "x / y + c with c itself a fused multiply-add: the division's product "
                                       "x * RCP(y) fused too"),
    "fma-constant-factor": ("fma", "(k * x) * x + c as fma(k, x * x, c): the constant kept as the fused "
                                   "multiply-add's factor, x * y rounded first"),
    "unroll": ("fma", "a cooperative matrix element's v[i] + c in a loop the driver unrolls: "
                      "fma(x[i], y[i], c), rounded once per element"),
    "rsqrt": ("inverseSqrt", "1 / sqrt(x) as one reciprocal square root (MUFU.RSQ), not a square root "
                             "then a division"),
    "divide-sqrt-f16": ("mul", "f16 x / sqrt(y) as x * inverseSqrt(y): one reciprocal square root (MUFU.RSQ.F16) "
                               "rounded, then the product (not the square root, its reciprocal, the product)"),
    "divide-sqrt": ("mul", "x / sqrt(y) as x * inverseSqrt(y): one reciprocal square root (MUFU.RSQ) rounded, "
                           "then the product (not the square root, its reciprocal, the product)"),
    "range": (None, "a value the driver computes when compiling: a clamp, min, max or comparison its operands' "
                    "ranges decide, or arithmetic or a builtin of constants (builtins rounded from double)"),
    "shift": (None, "(x + k1) + k2 as x + (k1 + k2): the constants added at compile time, then one rounding "
                     "(two or more constants of a sum of two values: their total added last)"),
    "divide-rsqrt": ("mul", "x / inverseSqrt(y) as x * sqrt(y): the square root rounded, then the product"),
    "expand": ("mul", "smoothstep(e0, e1, x) as the driver's own arithmetic; this is its last product "
                      "(t * t) * fma(-2, t, 3), left open to fuse with an add around it"),
    "factor": ("mul", "a * c + b * c as (a + b) * c (p + p as (a + a) * b, x + x * k as x * (1 + k)): the "
                      "sum rounded, then the product (two roundings where the source has three)"),
    "like-terms": ("fma", "x + (x + y) (any signs) as fma(x, 2, y): the two x's collected into one term, "
                          "the sum rounded once"),
    "cancel": (None, "a value added and subtracted in one sum dropped at compile time ((t - a) - (t - b) is "
                     "b - a, (x * y) / x is y): the terms left rounded once, whatever the dropped one held"),
    "distribute": ("fma", "k * (x + k1) as fma(x, k, k * k1): the constant distributed over the sum, k * k1 "
                          "rounded at compile time, then one rounding"),
    "rounded-after-division": ("sub", "c - x * y kept as two roundings (the product rounded first, not "
                                      "fused) where a division of the same two values comes before it"),
    "expand-constant-edges": ("fma", "smoothstep's t with constant edges as fma(x, k, -e0 * k), k = RCP(e1 - e0): "
                                     "(x - e0) / (e1 - e0) rounded once"),
    "pow-integer": ("mul", "pow(x, n) of a constant n in 0..5 as 1 or multiplies (x * x, (x * x) * x, "
                           "(x * x) * (x * x), ((x * x) * (x * x)) * x): each product rounded, a negative x "
                           "kept (not exp2(n * log2(x)))"),
    "expand-fract": ("sub", "fract(x) as x - floor(x): a subtract the value before it may fuse into"),
    "expand-log": ("mul", "log(x) as log2(x) * ln 2 (MUFU.LG2 then FMUL; f16: MUFU.LG2.F16 truncated, then HMUL2 by "
                          "f16(ln 2)): the product left open to fuse with "
                          "an add around it"),
    "expand-mix": ("fma", "mix(a, b, t) as fma(t, b - a, a): the difference rounded, then one rounding"),
    "expand-vector": (None, "dot, length or normalize as the driver's scalar arithmetic, each product open "
                            "to fuse with the add after it"),
    "fma-widened": ("fma", "f32(a * b) of f16 a, b fused into its first add: the exact product, not the "
                           "f16-rounded one, meets the add"),
    "fma-division-f16": ("fma", "f16 x / k (k a constant) fused with the add like a product"),
    "pair-f16": ("fma", "an f16 sum of products as two packed halves (HFMA2), each product fused into "
                        "its half; of two or three products one chain, the first product rounded"),
    "flatten": (None, "a branch that only computes run as both sides and a select (SEL): what the two "
                      "sides compute alike is one value"),
    "unroll-f16": (None, "an f16 loop with a constant trip count unrolled, so its products fuse"),
    "algebra": (None, "x - x and +0 * x folded to +0, constant factors multiplied together at compile time "
                      "((x * k1) * (y * k2) as (x * y) * (k1 * k2))"),
    "fold-constants": (None, "an operation of constants folded at compile time: the constant it computes"),
    "fold": (None, "an identity folded at compile time (x - x, x * 0 are +0; x / x is 1; x * 1, x + 0 "
                   "are x; (a - y) + y is a, (a - y) + (y + b) is a + b, (a + y) - (y + b) is a - b, (a + y) - (y - b) is a + b; x - (x + b) and (x - b) - x are -b; -(a - b) is b - a; "
                   "k1 + (k2 - v) is (k1 + k2) - v; f16 (v + k1) + k2 is v + (k1 + k2); +0 / y is +0; x < x is false, a select on a constant its operand)"),
    "fma-constants": ("fma", "k1 - fma(a, b, k2) as fma(-a, b, k1 - k2) (+ k1 and - k1 alike): the constants "
                             "combined at compile time, the product fused again with their sum"),
    "square": ("mul", "a * (a * y) as (a * a) * y: the square rounded first"),
    "f16-round-trip": (None, "f32(f16(x)) of an f32 x is x: the round trip through f16 dropped (also "
                             "through max(h, h), select(h, h, c), -h, abs(h))"),
    "division-chain": (None, "(x / y) / z as x / (y * z), x / (y / z) as (x * z) / y: the two divisors (or x "
                              "and z) multiplied, one reciprocal, one multiply (two roundings of the quotient become one)"),
    "relu-f16": (None, "f16 clamp(v, 0, hi) as the add's .RELU then a min with hi: a NaN v gives hi"),
    "f16-constant-division": ("fma", "f16 v / c as v * r, r the f16 nearest 1 / c folded at compile time; "
                                     "(x + k) / c as fma(x, r, k * r), ((y + kk) + k) / c as fma(y, r, (kk + k) * r)"),
    "tint-smoothstep": ("mul", "smoothstep as Tint writes it in its SPIR-V: t * (t * (3 - 2t)), "
                               "t = clamp((x - e0) / (e1 - e0), 0, 1)"),
}
_ALTERNATIVE = {"fma": "rounded twice (the product {0} * {1} rounded first, then the add)",
                "inverseSqrt": "as written (sqrt({0}) rounded, then 1 / that)"}
_NAMES = {"fma": ("a", "b", "c"), "inverseSqrt": ("x",), "mul": ("a", "b"), "sub": ("a", "b")}


def _model(header: dict):
    """(binary, call) of the trace's scalar model (the header's `scalar`; older traces: the profile's)."""
    scalar = header.get("scalar")
    if scalar is None:
        try:
            from ..profiles import load_profile
            scalar = load_profile(header.get("profile", "reference")).scalar
        except Exception:                       # a profile file not here: IEEE arithmetic
            scalar = "ieee"
    if scalar == "nvidia-sfu":
        from ..numerics import nvidia
        return nvidia.binary, nvidia.call
    from ..numerics import builtins, scalar as ieee
    return ieee.binary, builtins.call


def elem_type(type_text: str) -> str:
    """'f32' of 'f32' or 'vec4<f32>'."""
    return type_text[type_text.index("<") + 1:-1] if "<" in type_text else type_text


def _array(v, ty: str) -> np.ndarray:
    wide = np.array([float(x) if isinstance(x, str) else x for x in np.ravel(np.array(v, dtype=object))],
                    dtype=np.float64)
    return wide.astype(NP[ty])


def _bits(x: np.ndarray, ty: str) -> list[str]:
    from . import fmt
    return fmt.bits_list(np.atleast_1d(x), ty)


def _values(x: np.ndarray, ty: str) -> list:
    from . import fmt
    return fmt.value_list(np.atleast_1d(x), ty)


def _exact(a, m, c) -> str | None:
    """a * m + c exactly, as a hex float (None where an operand is not finite)."""
    if not all(np.isfinite(float(v)) for v in (a, m, c)):
        return None
    q = Fraction(float(a)) * Fraction(float(m)) + Fraction(float(c))
    den = q.denominator
    return _ref.dyadic_hex(q < 0, abs(q.numerator), -(den.bit_length() - 1))


def pick_lane(event: dict, lane: int | None) -> dict:
    entries = event.get("lanes") or []
    if not entries:
        raise HostError(f"event {event['seq']} holds no lane's values",
                        hint="trace the invocation (drop --trace-lanes, or include its lane)")
    if lane is None:
        return entries[0]
    for e in entries:
        if e["lane"] == lane:
            return e
    have = ", ".join(str(e["lane"]) for e in entries[:8]) + (", ..." if len(entries) > 8 else "")
    raise HostError(f"event {event['seq']} holds no values of lane {lane} (it has lanes {have})",
                    hint="pick a lane the event ran on (its mask), or trace that lane (--trace-lanes)")


def explain_scalar(trace, event: dict, lane: int | None = None) -> dict:
    """Everything about one invocation's value of a traced scalar instruction, as JSON-able data."""
    try:
        return _explain(trace, event, lane)
    except (ValueError, TypeError, KeyError, IndexError):
        # a trace that passed the schema but whose values do not fit its types (edited by hand)
        raise HostError(f"event {event.get('seq')}'s values do not fit its type {event.get('type')!r} "
                        f"and operands", hint="the trace is damaged: regenerate it with `emu run --trace`") from None


def _explain(trace, event: dict, lane: int | None) -> dict:
    if event.get("scope") != "workgroup" or "type" not in event:
        raise HostError(f"event {event['seq']} ({event['op']}) is not a scalar value",
                        hint="pick a workgroup-scope event with a value (trace scalar arithmetic with "
                             "--trace-ops other); a multiply-add's element takes --element ROW,COL")
    entry = pick_lane(event, lane)
    if "value" not in entry:
        raise HostError(f"event {event['seq']} ({event['op']}) computes no number to explain",
                        hint="pick an arithmetic event (binary, builtin, unary, ...)")
    header = trace.header if trace is not None else {}
    ty = elem_type(event["type"])
    name = event.get("decision")
    out = {
        "trace": trace.name if trace is not None else None,
        "event": {k: event.get(k) for k in ("seq", "op", "id", "loc", "workgroup", "type")},
        "fn": (event.get("attrs") or {}).get("fn"),
        "lane": entry["lane"], "profile": header.get("profile"), "scalar": header.get("scalar"),
        "compiler": header.get("compiler"), "decision": None,
        "emulated": {"bits": _bits(_array(entry["value"], ty), ty) if ty in FLOATS else None,
                     "value": entry["value"]},
    }
    if name is None:
        return out
    from ..isa.compiler import DECISIONS
    form, rule = RULES.get(name, (None, "a decision of emu's compiler model (emu ir --profile P shows it)"))
    out["decision"] = {"name": name, "form": form, "rule": rule,
                       "evidence": DECISIONS.get(name, "not named in emu.isa.compiler.DECISIONS")}
    args = entry.get("args")
    if args is None or ty not in FLOATS:
        return out
    ops = [_array(v, ty) for v in args]
    out["operands"] = [{"id": i, "bits": _bits(v, ty), "value": _values(v, ty)}
                       for i, v in zip(event.get("args") or [None] * len(ops), ops)]
    binary, call = _model(header)
    with np.errstate(all="ignore"):
        if form == "fma" and len(ops) == 3:
            done = call("fma", ty, *ops)
            other = binary("add", ty, binary("mul", ty, ops[0], ops[1]), ops[2])
            n = max(len(v) for v in ops)
            a, m, c = (np.broadcast_to(v, (n,)) for v in ops)
            out["exact"] = [_exact(a[k], m[k], c[k]) for k in range(n)]
        elif form == "inverseSqrt" and len(ops) == 1:
            done = call("inverseSqrt", ty, ops[0])
            other = binary("div", ty, np.ones_like(ops[0]), call("sqrt", ty, ops[0]))
        elif form in ("mul", "sub") and len(ops) == 2:
            done, other = binary(form, ty, *ops), None
        else:
            return out
    emulated = _array(entry["value"], ty)
    out["decided"] = {"bits": _bits(done, ty), "value": _values(done, ty)}
    if other is not None:
        what = _ALTERNATIVE[form].format(*_operand_names(name, form))
        out["without"] = {"what": what, "bits": _bits(other, ty), "value": _values(other, ty)}
    out["reproduces"] = _same(done, emulated, ty)
    return out


def _operand_names(name: str, form: str | None) -> tuple:
    return ("x", "RCP(y)", "c") if name == "fma-division" else _NAMES.get(form, ("a", "b", "c"))


def _same(x, y, ty) -> bool:
    """Same value (NaNs alike: the trace keeps a NaN's value, not its bits)."""
    x, y = np.atleast_1d(x).astype(np.float64), np.atleast_1d(y).astype(np.float64)
    return bool(np.all((x == y) & (np.signbit(x) == np.signbit(y)) | (np.isnan(x) & np.isnan(y))))


# ------------------------------------------------------------------------------- rendering

def _stack(compiler: dict | None, profile, scalar) -> str:
    if compiler is None:
        return f"profile {profile}: its compilers contract nothing"
    path = {"tint": "Tint (Dawn), then ", "naga": "naga (wgpu), then "}.get(compiler["translator"], "")
    driver = "the NVIDIA driver" if compiler["driver"] == "nvidia" else "the driver (fused multiply-adds only)"
    rcp = "; f32 x / y as x * RCP(y)" if compiler["divide_as_rcp"] else ""
    return (f"profile {profile}: {path}{driver}; {' and '.join(compiler['fused_types'])} multiply-adds fuse"
            f"{rcp}; scalar arithmetic '{scalar}'")


def render_text(x: dict) -> str:
    ev = x["event"]
    wg = ", ".join(map(str, ev["workgroup"]))
    out = [f"{ev['op']} %{ev['id']} : {ev['type']} at {ev['loc']} (event {ev['seq']}, workgroup ({wg}), "
           f"lane {x['lane']})",
           _stack(x.get("compiler"), x.get("profile"), x.get("scalar"))]
    d = x["decision"]
    if d is None:
        fn = x.get("fn") or ev["op"]
        how = (" (x * RCP(y): the reciprocal, then the product, rounded)"
               if fn == "div" and x.get("scalar") == "nvidia-sfu" and elem_type(ev["type"]) == "f32" else "")
        out.append(f"no compiler decision: {fn} as written, by the scalar model '{x.get('scalar')}'{how}")
        out.append(f"  value  {_cells(x['emulated'])}")
        return "\n".join(out) + "\n"
    out.append(f"decision {d['name']}: {d['rule']}")
    out.append(f"  pinned by: {d['evidence']}")
    ops = x.get("operands")
    names = _operand_names(d["name"], d["form"])
    if ops:
        form = f"{d['form']}(" + ", ".join(f"%{o['id']}" for o in ops) + ")"
        out.append(f"  %{ev['id']} = {form}")
        for nm, o in zip(names, ops):
            out.append(f"  {nm + ' = %' + str(o['id']):<14} {_cells(o)}")
    for k, ex in enumerate(x.get("exact") or []):
        if ex is not None:
            out.append(f"  exact {names[0]} * {names[1]} + {names[2]}{_comp(k, x)}  {ex}")
    if "decided" in x:
        out.append(f"  {d['name'] + ' result':<30} {_cells(x['decided'])}")
        w = x.get("without")
        if w is not None:
            diff = [a != b for a, b in zip(x["decided"]["bits"], w["bits"])]
            say = ("differs here: the decision changed this value" if any(diff) else
                   "the same bits here: the decision did not change this value")
            out.append(f"  {w['what']}")
            out.append(f"  {'':<30} {_cells(w)}  ({say})")
        out.append(f"  {'emulated %' + str(ev['id']):<30} {_cells(x['emulated'])}  "
                   + ("(same: reproduced)" if x["reproduces"] else "(DIFFERENT: not reproduced)"))
    else:
        out.append(f"  value  {_cells(x['emulated'])}")
    return "\n".join(out) + "\n"


def _comp(k, x) -> str:
    return f" [{k}]" if len(x.get("exact") or []) > 1 else ""


def _cells(v: dict) -> str:
    vals = v["value"] if isinstance(v["value"], list) else [v["value"]]
    bits = v.get("bits") or [None] * len(vals)
    # (a NaN's bits are not in the trace, only that it is one)
    return "  ".join(f"{b} {_num(val)}" if b is not None and val != "nan" else _num(val)
                     for b, val in zip(bits, vals))


def _num(v) -> str:
    return v if isinstance(v, str) else repr(v)


def render(x: dict, format: str = "text") -> str:
    if format == "json":
        return json.dumps(x, indent=1) + "\n"
    return render_text(x)
