"""Fit a numeric model to recorded MMA vectors (`emu fit`).

    vecs = load_vectors("tests/data/hw/h200")              # a folder of mma_*.npz, or files
    check = check_profile(load_profile("nvidia-h200"), vecs)   # bit-exact counts per key
    res = fit_vectors(vecs)                                 # search the fused model family
    doc = profile_doc(res, base="nvidia-h200")              # a profile file that reproduces them

Vectors are the ``{A}_{R}_{M}x{N}x{K}_{dist}/{A,B,C,D}`` keys that ``emu record`` writes (and
tests/data/hw/h200 holds); ``KEY_oob/{A0,B0,C,D,trial}`` keys are out-of-bounds trials whose D is
A0*B0 + C.

The search covers the fused multi-term adder of emu.numerics.mma (FusedParams): the block L of
products fused per step, the F fraction bits kept below the block's largest exponent, where C
joins (inside the fused sum, or outside with its own alignment), how addends are cut (toward
zero or floor), what happens between blocks, the final rounding, overflow, and the subnormal
rule (kept with exponent emin, or flushed on input / output). Each group of vectors (f16/bf16
inputs with f16 results, with f32 results; f32 inputs) is fitted on its own: a coarse grid over
(L, F, final rounding) on a subsample of every key, then coordinate refinement of the other
parameters, then the winner is checked on every vector. Parameters the vectors do not pin (an
alternative value reproduces them all as well) are listed. NaN results are compared bit for bit:
the model's NaN pattern is read from the GPU's NaN results.
"""
from __future__ import annotations

import dataclasses
import glob
import itertools
import json
import os
import zipfile
from dataclasses import dataclass, field

import numpy as np

__all__ = ["load_vectors", "check_profile", "fit_vectors", "FitResult", "profile_doc",
           "group_of", "evaluate"]

_UINT = {"f16": np.uint16, "f32": np.uint32}


# =============================================================================== vectors

def load_vectors(paths) -> dict[str, dict[str, np.ndarray]]:
    """{key: {"A": ..., "B": ..., "C": ..., "D": ...}} from npz files or folders of them."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    from ..errors import HostError
    hint = "give the folder `emu record` wrote, or mma_*.npz files"
    files = []
    for p in paths:
        p = str(p)
        if os.path.isdir(p):
            files += sorted(glob.glob(os.path.join(p, "mma_*.npz"))) or sorted(glob.glob(os.path.join(p, "*.npz")))
        elif os.path.exists(p):
            files.append(p)
        else:
            raise HostError(f"no such file or folder: '{p}'", hint=hint)
    if not files:
        raise HostError(f"no .npz vector files in {', '.join(map(str, paths))}", hint=hint)
    out: dict[str, dict] = {}
    for f in files:
        try:
            if not zipfile.is_zipfile(f):
                raise ValueError("not an .npz archive")
            with np.load(f) as z:
                if not all("/" in k for k in z.files):
                    raise ValueError("its arrays are not named KEY/PART")
                for k in z.files:
                    key, part = k.rsplit("/", 1)
                    v = z[k]
                    if key.startswith("bf16_") and part in ("A", "B", "A0", "B0") and v.dtype == np.uint16:
                        import ml_dtypes      # bf16 inputs are saved as their bits (npz has no bf16)
                        v = v.view(ml_dtypes.bfloat16)
                    out.setdefault(key, {})[part] = v
        except OSError as e:
            raise HostError(f"cannot read '{f}': {e.strerror or e}", hint=hint) from None
        except (ValueError, EOFError, zipfile.BadZipFile) as e:
            raise HostError(f"'{f}' is not a file of MMA vectors as `emu record` writes ({e})", hint=hint) from None
    return out


def parse_key(key: str):
    """('f16', 'f32', 16, 16, 16, 'normal', oob?) from 'f16_f32_16x16x16_normal[_oob]'."""
    parts = key.split("_")
    T, R, shape = parts[0], parts[1], parts[2]
    M, N, K = (int(x) for x in shape.split("x"))
    rest = parts[3:]
    oob = bool(rest) and rest[-1] == "oob"
    dist = "_".join(rest[:-1] if oob else rest) or "?"
    return T, R, M, N, K, dist, oob


def group_of(key: str) -> str:
    """The model parameters a key exercises: 'half->f16', 'half->f32', 'f32->f32', 'int'."""
    T, R, *_ = parse_key(key)
    if T in ("u8", "i8", "u32", "i32"):
        return "int"
    return f"{'f32' if T == 'f32' else 'half'}->{R}"


def _operands(v: dict):
    if "A0" in v:
        T = v["C"].shape[0]
        return (np.broadcast_to(v["A0"], (T,) + v["A0"].shape), np.broadcast_to(v["B0"], (T,) + v["B0"].shape),
                v["C"], v["D"])
    return v["A"], v["B"], v["C"], v["D"]


def _as_bits(x: np.ndarray) -> np.ndarray:
    return x.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[x.dtype.itemsize])


# =============================================================================== evaluation

def evaluate(model, vecs: dict, keys, trials: int | None = None, first_mismatch: bool = False,
             saturate: bool = False) -> dict:
    """{key: (matching elements, elements[, first mismatch])} of `model` on `keys`."""
    from ..numerics.mma import mma
    out = {}
    for key in keys:
        A, B, C, D = _operands(vecs[key])
        if isinstance(trials, dict):
            sel = trials[key]
            A, B, C, D = A[sel], B[sel], C[sel], D[sel]
        elif trials is not None:
            A, B, C, D = A[:trials], B[:trials], C[:trials], D[:trials]
        R = parse_key(key)[1]
        got = mma(model, np.ascontiguousarray(A), np.ascontiguousarray(B), np.ascontiguousarray(C), R,
                  saturate=saturate)
        eq = _as_bits(got) == _as_bits(np.ascontiguousarray(D))
        res = [int(eq.sum()), int(eq.size)]
        if first_mismatch and not eq.all():
            t, i, j = (int(x) for x in np.argwhere(~eq)[0])
            res.append({"trial": t, "row": i, "col": j,
                        "model": f"{int(_as_bits(got)[t, i, j]):#x}", "gpu": f"{int(_as_bits(D)[t, i, j]):#x}"})
        out[key] = tuple(res)
    return out


def mma_of(model, v: dict, R: str, saturate: bool = False):
    from ..numerics.mma import mma
    A, B, C, _ = _operands(v)
    return mma(model, np.ascontiguousarray(A), np.ascontiguousarray(B), np.ascontiguousarray(C), R,
               saturate=saturate)


def check_profile(profile, vecs: dict) -> dict:
    """Bit-exact counts of a profile's models on every key: {key: {...}}."""
    out = {}
    for key in sorted(vecs):
        T, R, M, N, K, dist, oob = parse_key(key)
        cfg = profile.find_config(M, N, K, T, R)
        if cfg is None:
            out[key] = {"error": f"profile {profile.name} has no config {M}x{N}x{K} {T}->{R}"}
            continue
        model = profile.model_for(cfg)
        r = evaluate(model, vecs, [key], first_mismatch=True, saturate=cfg.saturating_accumulation)[key]
        out[key] = {"model": model, "bit_exact": r[0], "elements": r[1],
                    **({"first_mismatch": r[2]} if len(r) > 2 else {})}
    return out


# =============================================================================== the search

def _fused_fields():
    from ..numerics.mma import FusedParams
    return {f.name for f in dataclasses.fields(FusedParams)}


def _params(**kw):
    from ..numerics.mma import FusedParams
    names = _fused_fields()
    try:
        return FusedParams(**{k: v for k, v in kw.items() if k in names})
    except (ValueError, TypeError):
        return None


def _model_for(group: str, p, nan16: int, nan32: int):
    from ..numerics.mma import MODELS
    base = MODELS["nvidia-hopper"]
    kw = {"name": f"fit:{group}", "nan_f16": nan16, "nan_f32": nan32, "source": "emu fit"}
    if group == "half->f16":
        kw["f16_result"] = p
    elif group == "half->f32":
        kw["f32_result"] = p
    else:
        kw["f32_inputs"] = p
    return dataclasses.replace(base, **kw)


def _preset_params(model, group: str):
    if group == "half->f16":
        return getattr(model, "f16_result", None)
    if group == "half->f32":
        return getattr(model, "f32_result", None)
    return getattr(model, "f32_inputs", None)


def _nan_bits(vecs, keys, rt: str):
    """The NaN pattern the GPU returns for `rt` results (the most common), and all it returned."""
    seen = {}
    for k in keys:
        D = np.ascontiguousarray(_operands(vecs[k])[3])
        if D.dtype != (np.float16 if rt == "f16" else np.float32):
            continue
        b = _as_bits(D)[np.isnan(D)]
        for x, n in zip(*np.unique(b, return_counts=True)):
            seen[int(x)] = seen.get(int(x), 0) + int(n)
    if not seen:
        return None, {}
    return max(seen, key=seen.get), seen


_DEFAULTS = dict(term_rounding="rz", c_position="inside", between_blocks="round", overflow="inf",
                 flush_input_subnormals=False, flush_output_subnormals=False, zero_sign="ieee")


def _complexity(p) -> int:
    return sum(1 for k, v in _DEFAULTS.items() if getattr(p, k, v) != v)


@dataclass
class GroupFit:
    group: str
    keys: list
    params: object = None
    matches: int = 0
    elements: int = 0
    per_key: dict = field(default_factory=dict)
    nan_bits: int | None = None
    nan_seen: dict = field(default_factory=dict)
    presets: list = field(default_factory=list)        # presets that reproduce every vector
    unpinned: dict = field(default_factory=dict)       # param -> other values that also reproduce all
    evaluated: int = 0

    @property
    def exact(self) -> bool:
        return self.elements > 0 and self.matches == self.elements

    def to_json(self):
        return {"group": self.group, "keys": self.keys, "reproduces_all": self.exact,
                "bit_exact": self.matches, "elements": self.elements,
                "params": dataclasses.asdict(self.params) if self.params is not None else None,
                "nan_bits": None if self.nan_bits is None else f"{self.nan_bits:#x}",
                "nan_patterns_seen": {f"{k:#x}": v for k, v in self.nan_seen.items()},
                "presets_reproducing_all": self.presets, "not_pinned_by_vectors": self.unpinned,
                "candidates_evaluated": self.evaluated,
                "per_key": {k: {"bit_exact": v[0], "elements": v[1], **({"first_mismatch": v[2]} if len(v) > 2 else {})}
                            for k, v in self.per_key.items()}}


@dataclass
class FitResult:
    groups: dict = field(default_factory=dict)
    integer: dict = field(default_factory=dict)
    preset: str | None = None            # one shipped preset that reproduces every float group

    @property
    def exact(self) -> bool:
        return all(g.exact for g in self.groups.values()) and self.integer.get("reproduces_all", True)

    def unexplained(self) -> dict:
        """{key: (mismatching elements, elements, first mismatch)} no fitted model explains."""
        out = {}
        for g in self.groups.values():
            for k, v in g.per_key.items():
                if v[0] != v[1]:
                    out[k] = {"mismatching": v[1] - v[0], "elements": v[1], **({"first": v[2]} if len(v) > 2 else {})}
        for k, v in self.integer.get("per_key", {}).items():
            if v["bit_exact"] != v["elements"]:
                out[k] = {"mismatching": v["elements"] - v["bit_exact"], "elements": v["elements"]}
        return out

    def to_json(self):
        return {"reproduces_all": self.exact, "preset": self.preset,
                "groups": {k: g.to_json() for k, g in self.groups.items()},
                "integer": self.integer, "unexplained": self.unexplained()}


def fit_vectors(vecs: dict, *, subsample: int = 12, pin_check: bool = True, log=None) -> FitResult:
    """Search the fused model family for each float group; check integer wrap / saturation."""
    from ..numerics.mma import MODELS
    res = FitResult()
    groups: dict[str, list] = {}
    for k in sorted(vecs):
        groups.setdefault(group_of(k), []).append(k)
    for g, keys in groups.items():
        if g == "int":
            res.integer = _fit_int(vecs, keys)
            continue
        rt = g.split("->")[1]
        nan, seen = _nan_bits(vecs, keys, rt)
        hop = MODELS["nvidia-hopper"]
        nan16 = nan if rt == "f16" and nan is not None else hop.nan_f16
        nan32 = nan if rt == "f32" and nan is not None else hop.nan_f32
        gf = GroupFit(g, keys, nan_bits=nan, nan_seen=seen)
        cache: dict = {}
        sel = {k: np.arange(min(subsample, _operands(vecs[k])[2].shape[0])) for k in keys}
        version = [0]

        def score(p):
            ck = (p, version[0])
            if ck not in cache:
                r = evaluate(_model_for(g, p, nan16, nan32), vecs, keys, sel)
                cache[ck] = sum(v[0] for v in r.values())
                gf.evaluated += 1
            return cache[ck]

        def better(a, b):      # (score, params): higher score, then simpler
            return (a[0], -_complexity(a[1])) > (b[0], -_complexity(b[1]))
        # the shipped presets' parameters first: on a tie (vectors that cannot tell) they stay
        grid = [p for p in (_preset_params(m, g) for m in MODELS.values())
                if p is not None and not isinstance(p, str)]
        grid += [p for p in (_params(block=L, frac_bits=F, final_rounding=fin) for L, F, fin in
                             itertools.product((4, 8, 16, 32), range(20, 29), ("rz", "rne", "rd", "ru")))
                 if p is not None]
        for _round in range(5):
            # 1. coarse grid: L x F x final rounding (and the shipped presets' parameters)
            best = None
            for p in grid:
                cand = (score(p), p)
                if best is None or better(cand, best):
                    best = cand
            # 2. coordinate refinement of every parameter
            for _ in range(4):
                improved = False
                for p2 in _neighbours(best[1]):
                    cand = (score(p2), p2)
                    if better(cand, best):
                        best, improved = cand, True
                if not improved:
                    break
            # 3. the winner on every vector; trials it gets wrong join the sample, and again
            gf.params = best[1]
            model = _model_for(g, gf.params, nan16, nan32)
            full = evaluate(model, vecs, keys, first_mismatch=True)
            gf.per_key = full
            gf.matches = sum(v[0] for v in full.values())
            gf.elements = sum(v[1] for v in full.values())
            if gf.exact:
                break
            added = False
            for k in keys:
                got = _as_bits(np.ascontiguousarray(mma_of(model, vecs[k], parse_key(k)[1])))
                want = _as_bits(np.ascontiguousarray(_operands(vecs[k])[3]))
                bad = np.flatnonzero((got != want).reshape(got.shape[0], -1).any(axis=1))
                bad = np.setdiff1d(bad, sel[k])[:8]
                if bad.size:
                    sel[k] = np.concatenate([sel[k], bad])
                    added = True
            if not added:
                break
            version[0] += 1
        if gf.exact and pin_check:
            for p2 in _neighbours(gf.params):
                if sum(v[0] for v in evaluate(_model_for(g, p2, nan16, nan32), vecs, keys).values()) == gf.elements:
                    for k in _fused_fields():
                        if getattr(p2, k) != getattr(gf.params, k):
                            gf.unpinned.setdefault(k, []).append(getattr(p2, k))
        for name, m in MODELS.items():
            p = _preset_params(m, g)
            if p is None or isinstance(p, str) or (rt == "f16" and m.nan_f16 != nan16) or \
                    (rt == "f32" and m.nan_f32 != nan32):
                continue
            if p == gf.params and gf.exact:
                gf.presets.append(name)
                continue
            # a cheap look at the subsample first; the whole set only for a candidate
            sub = evaluate(m, vecs, keys, subsample)
            if all(v[0] == v[1] for v in sub.values()) and \
                    sum(v[0] for v in evaluate(m, vecs, keys).values()) == gf.elements:
                gf.presets.append(name)
        res.groups[g] = gf
        if log:
            log(f"{g}: {gf.matches}/{gf.elements} bit-exact with {gf.params} "
                f"({gf.evaluated} candidates); presets reproducing all: {gf.presets or 'none'}")
    if res.groups:
        common = set.intersection(*(set(g.presets) for g in res.groups.values()))
        if common:
            res.preset = sorted(common, key=lambda n: list(MODELS).index(n))[0]
    return res


def _neighbours(p):
    """Every FusedParams that differs from `p` in one parameter (C outside: a few F2 choices)."""
    names = _fused_fields()
    alts = {"block": (2, 4, 8, 16, 32), "frac_bits": tuple(range(20, 30)),
            "final_rounding": ("rz", "rne", "rd", "ru"), "term_rounding": ("rz", "rd"),
            "between_blocks": ("round", "carry"), "overflow": ("inf", "ieee"),
            "flush_input_subnormals": (False, True), "flush_output_subnormals": (False, True),
            "zero_sign": ("ieee", "positive")}
    out = []
    base = dataclasses.asdict(p)
    for k, vals in alts.items():
        if k not in names:
            continue
        for v in vals:
            if v != base[k]:
                q = _params(**{**base, k: v})
                if q is not None:
                    out.append(q)
    if base.get("c_position") == "inside":
        F = base["frac_bits"]
        for f2, fc in ((F, F), (F + 3, F), (F + 7, F), (F + 7, F - 1)):
            for orr in (("rz", "rd") if "outside_rounding" in names else (None,)):
                kw = {**base, "c_position": "outside", "sum_frac_bits": f2, "c_frac_bits": fc}
                if orr is not None:
                    kw["outside_rounding"] = orr
                q = _params(**kw)
                if q is not None:
                    out.append(q)
    else:
        q = _params(**{**base, "c_position": "inside", "sum_frac_bits": 0, "c_frac_bits": 0})
        if q is not None:
            out.append(q)
    return out


def _fit_int(vecs, keys) -> dict:
    out = {"per_key": {}, "model": None}
    for sat in (False, True):
        r = evaluate("exact", vecs, keys, saturate=sat)
        if all(v[0] == v[1] for v in r.values()):
            out["model"] = "saturating" if sat else "wrapping (mod 2^32)"
            out["per_key"] = {k: {"bit_exact": v[0], "elements": v[1]} for k, v in r.items()}
            out["reproduces_all"] = True
            return out
    r = evaluate("exact", vecs, keys, first_mismatch=True)
    out["per_key"] = {k: {"bit_exact": v[0], "elements": v[1], **({"first_mismatch": v[2]} if len(v) > 2 else {})}
                      for k, v in r.items()}
    out["reproduces_all"] = False
    return out


# =============================================================================== profile files

def _base_doc(base: str | None, vecs: dict, info: dict | None):
    """The JSON document of the base profile, or one generated from the vectors' configs."""
    from importlib import resources
    from ..profiles import list_profiles
    if base:
        if base in list_profiles():
            return json.loads(resources.files("emu.profiles.data").joinpath(f"{base}.json").read_text())
        with open(base) as f:
            return json.load(f)
    from .diff import auto_profile_doc
    cfgs = []
    for k in sorted(vecs):
        T, R, M, N, K, *_ = parse_key(k)
        c = {"component_type": T, "result_component_type": R, "m": M, "n": N, "k": K}
        if c not in cfgs:
            cfgs.append(c)
    return auto_profile_doc(info or {"device": "fitted-gpu"}, cfgs)


def profile_doc(res: FitResult, *, base: str | None = None, vecs: dict | None = None,
                info: dict | None = None, data: str = "") -> tuple[dict, list[str]]:
    """A profile document whose numerics reproduce the fitted vectors, and notes for people."""
    doc = _base_doc(base, vecs or {}, info)
    notes = []
    params = {g: dataclasses.asdict(f.params) for g, f in res.groups.items() if f.params is not None}
    source = data or "recorded vectors"
    if res.preset:
        float_model = res.preset
        evidence = {"level": "measured",
                    "data": f"{source}: emu fit reproduced every vector bit for bit with preset '{res.preset}'",
                    "note": "fitted parameters: " + json.dumps(params)}
    else:
        # no preset fits: the profile carries the fitted parameters themselves
        from ..numerics.mma import fused_model_doc
        g16, g32 = res.groups.get("half->f16"), res.groups.get("half->f32")
        float_model = fused_model_doc(
            g16.params if g16 else None, g32.params if g32 else None,
            g16.nan_bits if g16 and g16.nan_bits is not None else 0x7E00,
            g32.nan_bits if g32 and g32.nan_bits is not None else 0x7FC00000, f"emu fit of {source}")
        evidence = {"level": "measured",
                    "data": f"{source}: emu fit found these fused-model parameters; no shipped preset "
                            f"reproduces every vector"}
        notes.append("no shipped numeric preset reproduces every group; the profile carries the fitted "
                     "fused-model parameters themselves")
    num = doc.get("numerics")
    num = dict(num) if isinstance(num, dict) else {"float": num, "integer": num}
    num["float"] = float_model
    if res.integer.get("reproduces_all"):
        num["integer"] = "exact"
    doc["numerics"] = num
    for c in doc.get("configs", []):
        if "model" in c and c["a_type"] not in ("u8", "i8"):
            del c["model"]
    doc.setdefault("evidence", {})["numerics"] = evidence
    if not res.exact:
        notes.append("some vectors are not reproduced by any fitted model: see 'unexplained'")
    return doc, notes
