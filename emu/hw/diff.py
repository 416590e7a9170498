"""Differential testing: the same shader and inputs on the emulator and on a real adapter.

    rep = diff_shader(src, "k.wgsl", dispatch=(4, 1, 1), seed=1, backend="dawn")
    print(rep.text()); rep.exit_code; json.dumps(rep.to_json())

The emulator runs the shader's IR; the adapter runs the WGSL that ``emu.hw.emit`` writes from the
same IR in the adapter's dialect (Dawn: ``subgroupMatrix*``; wgpu: ``coop*``), through
``emu.hw.runner``. Every read_write storage binding the entry point uses is compared bit for bit,
element by element in the type the shader declares (struct members and vector components each
compared in their own type). For float elements the report gives the distance in units in the
last place; for elements a cooperative store wrote, the (row, col) of the matrix and the
subgroup lane that held it (from the store's lane map, traced on the emulator).

Inputs: ``buffers`` (raw contents per (group, binding)) and, for the bindings not given,
random contents of the declared types (``seed``); a binding with neither starts zeroed.
Runtime-sized arrays get ``elements`` elements (default 32 per invocation, at least 1024).

Profiles: ``"auto"`` takes the shipped profile that claims the adapter (``profile_for_adapter``);
when none does, a profile is generated from what the adapter reports (its subgroup sizes and
Dawn's subgroup-matrix configs) with the reference lane map and exact numerics, marked
unverified: a difference then says as much about the guess as about the device.
"""
from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field

import numpy as np

from ..errors import EmuError, HostError
from ..isa.types import (ArrayType, AtomicType, MatrixType, ScalarType, StructType, Type,
                         VectorType, round_up,
                         F16, F32, U8, U32, SamplerType, TextureType)

__all__ = ["diff_shader", "DiffReport", "random_inputs", "buffer_size", "choose_profile",
           "profile_from_adapter", "ulp_distance"]

MAX_ELEMENTS = 1 << 24
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_FLOAT = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


# =============================================================================== layout

@dataclass
class _Leaf:
    """One scalar slot of a binding's type, repeated `count` times `stride` bytes apart."""
    scalar: ScalarType
    offset: int          # of the first one
    stride: int
    count: int
    label: str           # e.g. 'particles[{i}].pos.x' ({i}: the element index)


def _fixed_leaves(t: Type, prefix: str, at: int = 0) -> list[tuple[int, ScalarType, str]]:
    if isinstance(t, ScalarType):
        return [(at, t, prefix)]
    if isinstance(t, AtomicType):
        return _fixed_leaves(t.elem, prefix, at)       # a scalar, or atomic<vec2<u32>>'s two words
    if isinstance(t, VectorType):
        return [(at + k * t.elem.size, t.elem, f"{prefix}.{'xyzw'[k]}") for k in range(t.n)]
    if isinstance(t, MatrixType):
        cs = round_up(t.column.align, t.column.size)
        return [(at + c * cs + r * t.elem.size, t.elem, f"{prefix}[{c}][{r}]")
                for c in range(t.cols) for r in range(t.rows)]
    if isinstance(t, ArrayType) and t.count is not None:
        out = []
        for i in range(t.count):
            out += _fixed_leaves(t.elem, f"{prefix}[{i}]", at + i * t.stride)
        return out
    if isinstance(t, StructType):
        out = []
        for m, o in zip(t.members, t.offsets):
            out += _fixed_leaves(m.type, f"{prefix}.{m.name}", at + o)
        return out
    raise HostError(f"cannot compare values of type {t}")


def leaves(t: Type, nbytes: int, name: str) -> list[_Leaf]:
    """The scalar slots of a buffer of `nbytes` holding a `t`, as repeated leaves."""
    def array_leaves(arr: ArrayType, base: int, prefix: str) -> list[_Leaf]:
        count = arr.count if arr.count is not None else max(0, (nbytes - base) // arr.stride)
        per = _fixed_leaves(arr.elem, prefix + "[{i}]") if count else []
        return [_Leaf(s, base + off, arr.stride, count, lab) for off, s, lab in per]
    if isinstance(t, ArrayType):
        return array_leaves(t, 0, name)
    if isinstance(t, StructType) and t.runtime_array is not None:
        fixed = [m for m in t.members[:-1]]
        out = []
        for m, o in zip(fixed, t.offsets):
            out += [_Leaf(s, off, 0, 1, lab) for off, s, lab in _fixed_leaves(m.type, f"{name}.{m.name}", o)]
        return out + array_leaves(t.runtime_array, t.offsets[-1], f"{name}.{t.members[-1].name}")
    return [_Leaf(s, off, 0, 1, lab) for off, s, lab in _fixed_leaves(t, name)]


def buffer_size(t: Type, elements: int) -> int:
    """Bytes for a binding of type `t`; runtime-sized arrays get `elements` elements."""
    if isinstance(t, ArrayType) and t.count is None:
        return t.stride * elements
    if isinstance(t, StructType) and t.runtime_array is not None:
        return round_up(t.align, t.offsets[-1] + t.runtime_array.stride * elements)
    return t.size


# =============================================================================== inputs

def _random_scalars(s: ScalarType, n: int, rng: np.random.Generator) -> np.ndarray:
    """Finite, varied values: floats sign * 2^[-8, 8) * [1, 2); integers half small, half any."""
    if s.is_float and s.bits <= 8:      # SPIR-V's 8/4-bit floats: any finite code
        from ..numerics.dtypes import NP
        v = rng.integers(0, 1 << s.bits, size=n).astype(np.uint8).view(NP[s.name])
        return np.where(np.isfinite(v.astype(np.float32)), v, np.zeros(1, NP[s.name]))
    if s.is_float:
        e = rng.integers(-8, 8, size=n)
        v = np.ldexp(1.0 + rng.random(n), e) * rng.choice([-1.0, 1.0], size=n)
        return v.astype({"f32": np.float32, "f64": np.float64}.get(s.name, np.float16))
    if s.name in ("i64", "u64"):
        full = rng.integers(0, 1 << 63, size=n, dtype=np.uint64) * np.uint64(2) + \
            rng.integers(0, 2, size=n, dtype=np.uint64)
        small = (rng.integers(-100, 101, size=n) if s.name == "i64" else rng.integers(0, 256, size=n))
        out = np.where(rng.random(n) < 0.5, small.astype(np.int64).astype(np.uint64), full)
        return out.view(np.int64) if s.name == "i64" else out
    if s.is_int:                 # 8, 16 and 32 bits
        bits = np.dtype(f"u{s.bits // 8}")
        full = rng.integers(0, 1 << s.bits, size=n, dtype=np.uint64).astype(bits)
        small = (rng.integers(-100, 101, size=n) if s.kind == "sint" else rng.integers(0, 256, size=n))
        small = small.astype(np.int64).astype(bits)
        pick = rng.random(n) < 0.5
        out = np.where(pick, small, full)
        return out.view(np.dtype(f"i{s.bits // 8}")) if s.kind == "sint" else out
    if s.name == "bool":
        return rng.integers(0, 2, size=n).astype(np.uint32)
    raise HostError(f"cannot make random values of type {s}")


def random_inputs(t: Type, nbytes: int, rng: np.random.Generator) -> bytes:
    """Random contents for a buffer of `nbytes` holding a `t` (padding stays zero)."""
    raw = np.zeros(nbytes, np.uint8)
    for lf in leaves(t, nbytes, "x"):
        if lf.count == 0:
            continue
        vals = _random_scalars(lf.scalar, lf.count, rng)
        b = np.ascontiguousarray(vals).view(np.uint8).reshape(lf.count, -1)
        idx = lf.offset + np.arange(lf.count)[:, None] * lf.stride + np.arange(b.shape[1])
        ok = idx[:, -1] < nbytes
        raw[idx[ok]] = b[ok]
    return raw.tobytes()


# =============================================================================== ULPs

def ulp_distance(a: np.ndarray, b: np.ndarray, scalar: str) -> np.ndarray:
    """|ordered(a) - ordered(b)| on the raw bits of floats (NaN vs NaN: 0; NaN vs number: inf)."""
    bits = {"f64": 64, "f32": 32, "f16": 16}[scalar]
    ut, ft = _UINT[bits // 8], _FLOAT[scalar]

    def ordered(x):      # as floats: a 64-bit distance may not fit an int64 (exact below 2^53)
        x = x.view(ut)
        mag = (x & ut((1 << (bits - 1)) - 1)).astype(np.float64)
        return np.where(x >> ut(bits - 1), -mag, mag)
    d = np.abs(ordered(a) - ordered(b))
    an, bn = np.isnan(a.view(ft)), np.isnan(b.view(ft))
    d = np.where(an & bn, 0.0, np.where(an | bn, np.inf, d))
    return d


def _show(raw: np.ndarray, scalar: str) -> str:
    """An element's bits and value: '0x3f800000 (1.0)'."""
    width = raw.dtype.itemsize
    raw = raw.reshape(-1)[:1]
    bits = int(raw.view(_UINT[width])[0])
    if scalar in _FLOAT:
        v = float(raw.view(_FLOAT[scalar])[0])
        return f"{bits:#0{2 + 2 * width}x} ({v!r})"
    v = int(raw.view({"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64}.get(scalar, _UINT[width]))[0])
    return f"{bits:#0{2 + 2 * width}x} ({v})"


# =============================================================================== coop-store trace

class _CoopStoreTrace:
    """A tracer for the emulator that keeps, for every element a cooperative store wrote into a
    binding, the matrix (row, col), the lane and fragment index that held it and where the
    subgroup sat. The addresses are those the store handler reports through `access` just
    before the event (as to emu.trace's tracer: no fast store path runs under a tracer, so the
    reference handler always places the store, emu/scheduler/fastpaths)."""

    def __init__(self):
        self.parts: dict[tuple, list] = {}
        self._access = None

    def begin(self, *a, **k):
        pass

    def end(self):
        pass

    def access(self, batch, inst, subgroups, addr):
        self._access = (inst, subgroups, addr)

    def event(self, batch, inst, mask, frame):
        if inst.op != "coop_store":
            self._access = None
            return
        from ..scheduler import coop
        access, self._access = self._access, None
        ptr = frame.vals[inst.args[0].id]
        if getattr(ptr.region, "binding", None) is None or access is None or access[0] is not inst:
            return
        _, subgroups, addr = access
        t = inst.args[2].type
        lm = coop.lane_map(batch, t)
        addr = np.asarray(addr)
        S, L, E = addr.shape
        sg = batch.opts.subgroup_size
        first_lane = np.asarray(subgroups, np.int64) * sg               # (S,)
        lane_ids = first_lane[:, None] + np.arange(L)[None, :]          # (S, L) batch lanes
        wg = batch.inputs["workgroup_id"][lane_ids.reshape(-1)].reshape(S, L, 3)
        sub_in_wg = (lane_ids % batch.wg_lanes) // sg
        rows = np.broadcast_to(lm.rows_idx[None], (S, L, E))
        cols = np.broadcast_to(lm.cols_idx[None], (S, L, E))
        lanes = np.broadcast_to(np.arange(L)[None, :, None], (S, L, E))
        elems = np.broadcast_to(np.arange(E)[None, None, :], (S, L, E))
        keep = (addr >= 0) & (rows >= 0)
        rec = np.stack([addr, rows, cols, lanes, elems,
                        np.broadcast_to(sub_in_wg[:, :, None], (S, L, E)),
                        np.broadcast_to(wg[:, :, 0:1], (S, L, E)),
                        np.broadcast_to(wg[:, :, 1:2], (S, L, E)),
                        np.broadcast_to(wg[:, :, 2:3], (S, L, E))], axis=-1)[keep]
        self.parts.setdefault(ptr.region.binding, []).append(
            (rec.astype(np.int64), str(inst.loc) if inst.loc else "", f"{t}"))

    def owner(self, binding, byte_offset: int) -> dict | None:
        """Who wrote the element at `byte_offset` last (None: no cooperative store did)."""
        for rec, loc, t in reversed(self.parts.get(binding, [])):
            hit = np.flatnonzero(rec[:, 0] == byte_offset)
            if hit.size:
                r = rec[hit[-1]]
                return {"row": int(r[1]), "col": int(r[2]), "lane": int(r[3]), "fragment_index": int(r[4]),
                        "subgroup": int(r[5]), "workgroup": [int(r[6]), int(r[7]), int(r[8])],
                        "matrix": t, "store": loc}
        return None


# =============================================================================== profiles

def _slug(text: str) -> str:
    s = "".join(c.lower() if c.isalnum() else "-" for c in text)
    while "--" in s:
        s = s.replace("--", "-")
    return s.strip("-") or "adapter"


def profile_from_adapter(info: dict, configs: list[dict] | None, path: str | None = None):
    """An unverified profile for an adapter no shipped profile claims: its reported subgroup sizes
    and subgroup-matrix configs, exact numerics and the reference lane map (assumptions).
    Returns (Profile, its JSON document); the file is written to `path` (a temporary file)."""
    from ..profiles import load_profile
    doc = auto_profile_doc(info, configs)
    if path is None:
        fd, path = tempfile.mkstemp(prefix="emu-auto-profile-", suffix=".json")
        os.close(fd)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    return load_profile(path), doc


def auto_profile_doc(info: dict, configs: list[dict] | None) -> dict:
    """The JSON document of profile_from_adapter's profile."""
    lo, hi = info.get("subgroup_min_size"), info.get("subgroup_max_size")
    sizes = [s for s in (4, 8, 16, 32, 64, 128) if lo and hi and lo <= s <= hi] or [4, 8, 16, 32, 64, 128]
    default = 32 if 32 in sizes else sizes[-1]
    if lo and hi and lo == hi:
        default = lo
    cfgs = []
    for c in configs or []:
        cfgs.append({"m": int(c["m"]), "n": int(c["n"]), "k": int(c["k"]),
                     "a_type": str(c["component_type"]), "c_type": str(c["result_component_type"])})
    why = "generated by emu diff from what the adapter reports; nothing in it was checked against the device"
    doc = {
        "schema": "emu-profile/1",
        "name": "auto-" + _slug(str(info.get("device", "adapter"))),
        "description": f"UNVERIFIED profile generated for {info.get('device', '?')} "
                       f"({info.get('backend_type', '?')}, {info.get('description', '')})",
        "adapter": {"vendor_id": f"{int(info.get('vendor_id', 0)):#x}",
                    "device_name_contains": [str(info.get("device", ""))] if info.get("device") else [],
                    **({"backend": str(info["backend_type"]).lower()}
                       if str(info.get("backend_type", "")).lower() in ("vulkan", "metal", "d3d12") else {})},
        "subgroup_sizes": sizes, "default_subgroup_size": default,
        "numerics": {"float": "exact", "integer": "exact"},
        "lane_maps": "reference",
        "stride_unit_8bit": "array_element",
        "oob_behavior": "error",
        "evidence": {k: {"level": "assumption", "reason": why} for k in
                     ("configs", "subgroup_sizes", "lane_maps", "numerics", "stride_unit_8bit", "oob_behavior")},
        "notes": "Generated; run `emu record` and `emu fit` on this adapter to measure the numerics.",
    }
    if cfgs:
        doc["configs"] = cfgs
        doc["evidence"]["configs"] = {"level": "measured", "data": "the adapter's subgroupMatrixConfigs (Dawn)"}
    else:
        doc["include_configs_from"] = ["reference"]
    if lo and hi:
        doc["evidence"]["subgroup_sizes"] = {"level": "measured",
                                             "data": f"the adapter's subgroupMinSize/MaxSize = {lo}/{hi}"}
    return doc


def adapter_configs(backend: str) -> list[dict]:
    """Dawn's subgroupMatrixConfigs for the adapter (an empty list elsewhere)."""
    if backend != "dawn":
        return []
    try:
        from . import adapters
        from wgpudawn.backends.dawn import extras
        props = extras.get_adapter_properties(adapters.get_adapter("dawn"))
        return list(props.get("subgroup_matrix_configs") or [])
    except Exception:
        return []


def choose_profile(name: str, backend: str, info: dict | None):
    """(profile, how it was chosen) for --profile NAME|auto."""
    from ..profiles import load_profile, profile_for_adapter
    if name != "auto":
        return load_profile(name), f"named ({name})"
    if info is None:
        raise HostError("--profile auto needs an adapter", hint="name a profile with --profile")
    p = profile_for_adapter(info.get("vendor_id"), info.get("device"), info.get("backend_type"))
    if p is not None:
        return p, "claims the adapter"
    p, _ = profile_from_adapter(info, adapter_configs(backend))
    return p, "generated from the adapter's report (UNVERIFIED)"


# =============================================================================== the report

@dataclass
class BindingDiff:
    key: tuple[int, int]
    name: str
    type: str
    elements: int = 0
    equal: int = 0
    different: int = 0
    within_ulp: int = 0
    max_ulp: float | None = None
    differences: list = field(default_factory=list)
    counts_by_field: dict = field(default_factory=dict)

    def to_json(self):
        return {"binding": f"{self.key[0]}:{self.key[1]}", "name": self.name, "type": self.type,
                "elements": self.elements, "equal": self.equal, "different": self.different,
                "within_ulp": self.within_ulp,
                "max_ulp": None if self.max_ulp is None else (self.max_ulp if math.isfinite(self.max_ulp) else "inf"),
                "different_by_field": self.counts_by_field,
                "first_differences": self.differences}


@dataclass
class DiffReport:
    shader: str
    entry: str | None = None
    dispatch: tuple = (1, 1, 1)
    backend: str = "dawn"
    dialect: str = "dawn"
    adapter: dict = field(default_factory=dict)
    profile: str = ""
    profile_how: str = ""
    subgroup_size: int | None = None
    overrides: dict = field(default_factory=dict)
    inputs: dict = field(default_factory=dict)
    ulp: float = 0
    bindings: list[BindingDiff] = field(default_factory=list)
    error: str | None = None
    error_stage: str | None = None
    notes: list[str] = field(default_factory=list)
    emitted_wgsl: str = ""

    @property
    def identical(self) -> bool:
        return self.error is None and all(b.different == 0 for b in self.bindings)

    @property
    def within_tolerance(self) -> bool:
        return self.error is None and all(b.different == b.within_ulp for b in self.bindings)

    @property
    def result(self) -> str:
        if self.error is not None:
            return "error"
        if self.identical:
            return "identical"
        if self.ulp and self.within_tolerance:
            return "within_ulp"
        return "different"

    @property
    def exit_code(self) -> int:
        return 0 if self.result in ("identical", "within_ulp") else 1

    def to_json(self) -> dict:
        return {"shader": self.shader, "entry": self.entry, "dispatch": list(self.dispatch),
                "backend": self.backend, "dialect": self.dialect,
                "adapter": {k: self.adapter.get(k) for k in ("device", "vendor", "vendor_id", "backend_type",
                                                              "description", "binding", "binding_version",
                                                              "subgroup_min_size", "subgroup_max_size", "quirks")
                            if k in self.adapter},
                "profile": self.profile, "profile_chosen": self.profile_how,
                "subgroup_size": self.subgroup_size, "overrides": self.overrides, "inputs": self.inputs,
                "ulp_tolerance": self.ulp, "result": self.result, "exit_code": self.exit_code,
                "error": self.error, "error_stage": self.error_stage, "notes": self.notes,
                "totals": {"elements": sum(b.elements for b in self.bindings),
                           "equal": sum(b.equal for b in self.bindings),
                           "different": sum(b.different for b in self.bindings)},
                "bindings": [b.to_json() for b in self.bindings],
                "emitted_wgsl": self.emitted_wgsl}

    def text(self) -> str:
        a = self.adapter
        where = (f"{a['device']} ({a.get('backend_type') or 'backend unknown'})" if a.get("device") else
                 "no adapter found" if self.error_stage == "adapter" else "no adapter used")
        lines = [f"emu diff {self.shader} (entry {self.entry or '?'}, dispatch "
                 f"{','.join(map(str, self.dispatch))}) on {self.backend}: {where}"]
        if self.profile:
            lines.append(f"  emulator: profile {self.profile} ({self.profile_how}), subgroup size {self.subgroup_size}")
        if self.inputs:
            lines.append("  inputs: " + ", ".join(f"{k} {v}" for k, v in self.inputs.items()))
        for n in self.notes:
            lines.append(f"  note: {n}")
        if self.error is not None:
            lines.append(f"  ERROR ({self.error_stage}): {self.error}")
        for b in self.bindings:
            s = f"  {b.key[0]}:{b.key[1]} {b.name}: {b.type}: {b.elements} elements, {b.equal} equal, {b.different} different"
            if b.max_ulp is not None and b.different:
                s += f", largest distance {b.max_ulp:g} ulp" if math.isfinite(b.max_ulp) else ", largest distance inf ulp (NaN or class)"
                if self.ulp:
                    s += f" ({b.within_ulp} within {self.ulp:g} ulp)"
            lines.append(s)
            if b.counts_by_field and len(b.counts_by_field) > 1:
                lines.append("      by field: " + ", ".join(f"{k} {v}" for k, v in b.counts_by_field.items()))
            for d in b.differences[:8]:
                where = f"    [{d['index']}] {d['label']}: emu {d['emu']}  gpu {d['gpu']}"
                if d.get("ulp") is not None:
                    where += f"  ({d['ulp']} ulp)"
                if d.get("written_by") is not None:
                    w = d["written_by"]
                    where += (f"  <- {w['matrix']} (row {w['row']}, col {w['col']}) from lane {w['lane']} "
                              f"[{w['fragment_index']}] of subgroup {w['subgroup']} in workgroup "
                              f"({', '.join(map(str, w['workgroup']))})")
                lines.append(where)
        verdict = {"identical": "IDENTICAL", "within_ulp": f"WITHIN {self.ulp:g} ULP",
                   "different": "DIFFERENT", "error": "ERROR"}[self.result]
        lines.append(f"result: {verdict} (exit {self.exit_code})")
        return "\n".join(lines)


# =============================================================================== comparing

def compare_binding(key, name, t: Type, emu_bytes: bytes, gpu_bytes: bytes, ulp: float,
                    trace: _CoopStoreTrace | None, first: int = 16) -> BindingDiff:
    n = min(len(emu_bytes), len(gpu_bytes))
    bd = BindingDiff(key, name, str(t))
    ea = np.frombuffer(emu_bytes, np.uint8)[:n]
    ga = np.frombuffer(gpu_bytes, np.uint8)[:n]
    rows = []
    for lf in leaves(t, n, name):
        if lf.count == 0:
            continue
        size = lf.scalar.size if lf.scalar.name != "bool" else 4
        idx = lf.offset + np.arange(lf.count)[:, None] * lf.stride + np.arange(size)
        ok = idx[:, -1] < n
        idx = idx[ok]
        ut = _UINT[size]
        ev = ea[idx].copy().view(ut).reshape(-1)
        gv = ga[idx].copy().view(ut).reshape(-1)
        diff = ev != gv
        bd.elements += ev.size
        nd = int(diff.sum())
        bd.different += nd
        bd.equal += ev.size - nd
        field_name = lf.label.replace("[{i}]", "[]")
        if nd:
            bd.counts_by_field[field_name] = bd.counts_by_field.get(field_name, 0) + nd
        if lf.scalar.name in _FLOAT:
            d = ulp_distance(ev, gv, lf.scalar.name)
            if nd:
                m = float(d[diff].max())
                bd.max_ulp = m if bd.max_ulp is None else max(bd.max_ulp, m)
                bd.within_ulp += int((d[diff] <= ulp).sum()) if ulp else 0
        else:
            d = None
        for j in np.flatnonzero(diff)[:first]:
            rows.append((int(lf.offset + j * lf.stride), lf, int(j), ev[j:j + 1], gv[j:j + 1],
                         None if d is None else float(d[j])))
    rows.sort(key=lambda r: r[0])
    for off, lf, j, e, g, u in rows[:first]:
        rec = {"index": j, "label": lf.label.replace("{i}", str(j)), "byte_offset": off,
               "emu": _show(e, lf.scalar.name), "gpu": _show(g, lf.scalar.name),
               "ulp": None if u is None else (u if math.isfinite(u) else "inf")}
        if trace is not None:
            w = trace.owner(key, off)
            if w is not None:
                rec["written_by"] = w
        bd.differences.append(rec)
    return bd


# =============================================================================== the diff

def _override_numbers(module, overrides: dict) -> dict:
    """Override values as the runner wants them (numbers), typed by the shader's declarations."""
    from ..isa.constants import coerce_scalar
    out = {}
    known = {o.name: o for o in module.overrides}
    by_id = {str(o.id): o for o in module.overrides if o.id is not None}
    for k, v in (overrides or {}).items():
        o = known.get(k) or by_id.get(str(k))
        if o is None:
            raise HostError(f"the shader has no override named '{k}' (it has: {', '.join(known) or 'none'})",
                            hint="check the name in --override NAME=VALUE")
        x = coerce_scalar(o.type, v, f"override '{o.name}'")
        out[o.name] = float(x) if not isinstance(x, bool) else (1.0 if x else 0.0)
    return out


def diff_shader(source: str, file: str = "<input>", *, dispatch=(1, 1, 1), entry: str | None = None,
                buffers: dict | None = None, seed: int | None = None, profile: str = "auto",
                backend: str = "dawn", ulp: float = 0, overrides: dict | None = None,
                subgroup_size: int | None = None, bounds: str = "webgpu", elements: int | None = None,
                max_steps: int | None = None, first: int = 16, textures: dict | None = None,
                samplers: dict | None = None) -> DiffReport:
    """Run `source` on the emulator and on the `backend` adapter with the same inputs; compare.
    `textures` {key: runner.HwTexture} and `samplers` {key: create_sampler keywords} bind the
    shader's textures and samplers on both; storage textures it may write are compared too."""
    from ..api import Device, used_globals
    from ..api import compile_wgsl as compile_source     # WGSL, or SPIR-V/GLSL by the file's suffix
    from ..frontend.spirv import is_spirv_file
    from . import adapters
    from .emit import emit
    from .runner import HwError, run_on_adapter, to_emu

    dispatch = tuple(int(x) for x in (tuple(dispatch) + (1, 1, 1))[:3])
    textures, samplers = dict(textures or {}), dict(samplers or {})
    rep = DiffReport(file, entry, dispatch, backend,
                     {"dawn": "dawn", "vulkan": "spirv"}.get(backend, "wgpu"), ulp=ulp)
    rep.overrides = dict(overrides or {})

    def fail(stage, msg):
        rep.error, rep.error_stage = msg, stage
        return rep

    try:
        module, _ = compile_source(source, file)
        if getattr(module, "needs_constants", False) and overrides:
            # overrides size types or feed module-scope expressions: the IR (and so the WGSL sent
            # to the adapter) is the one lowered with these values
            module, _ = compile_source(source, file, constants=dict(overrides))
    except EmuError as e:
        return fail("emu front end", e.format({file: source}))
    if (backend == "vulkan") != is_spirv_file(file):
        return fail("host", "--backend vulkan runs SPIR-V and GLSL shaders (.spv, .spvasm, .comp); WGSL goes "
                            "through --backend dawn or wgpu" if backend == "vulkan" else
                            f"a SPIR-V/GLSL shader runs through --backend vulkan, not {backend}")
    eps = module.entry_points()
    fn = module.function(entry) if entry else (eps[0] if len(eps) == 1 else None)
    if fn is None or fn.stage != "compute":
        return fail("host", f"choose an entry point with --entry (the shader has: {', '.join(f.name for f in eps) or 'none'})")
    rep.entry = fn.name

    if backend == "dawn" and "vulkan_enable_f16_on_nvidia" not in os.environ.get("EMU_DAWN_TOGGLES", ""):
        # Dawn offers f16 (and f16 subgroup matrices) on NVIDIA's Vulkan driver only with this
        # adapter toggle; it must be set before the instance exists
        extra = os.environ.get("EMU_DAWN_TOGGLES", "")
        os.environ["EMU_DAWN_TOGGLES"] = ",".join(t for t in (extra, "vulkan_enable_f16_on_nvidia") if t)
    if backend == "vulkan":
        from . import vulkan
        info, why = vulkan.available()
    else:
        info, why = adapters.available(backend)
    if info is None:
        return fail("adapter", why)
    rep.adapter = info
    try:
        prof, how = choose_profile(profile, backend, info)
    except EmuError as e:
        return fail("profile", e.format())
    rep.profile, rep.profile_how = prof.name, how
    sg = subgroup_size or prof.default_subgroup_size
    rep.subgroup_size = sg
    lo, hi = info.get("subgroup_min_size"), info.get("subgroup_max_size")
    if lo and hi and not lo <= sg <= hi:
        rep.notes.append(f"the emulator runs subgroups of {sg}; the adapter reports {lo}..{hi}")
    if "workgroup-memory-not-zeroed" in info.get("quirks", []) and \
            any(g.space == "workgroup" for g in module.globals):
        rep.notes.append("adapter quirk: var<workgroup> memory is not zeroed at workgroup start "
                         "(a shader that reads it before writing differs here by design)")

    # -- inputs ----------------------------------------------------------------------------------
    invocations = 1
    try:
        ov = _override_numbers(module, overrides or {})
    except EmuError as e:
        return fail("host", e.format())
    from ..scheduler.executor import resolve_overrides
    try:
        resolved = resolve_overrides(module, overrides or {})
    except EmuError as e:
        return fail("host", e.format())
    for d, w in zip(dispatch, fn.workgroup_size):
        invocations *= d * int(resolved[w] if isinstance(w, str) else w)
    n_elems = elements or min(MAX_ELEMENTS, max(1024, 32 * invocations))
    rng = np.random.default_rng(seed) if seed is not None else None
    given = dict(buffers or {})
    data: dict = {}
    bound = sorted((g for g in used_globals(module, fn) if g.space in ("storage", "uniform")),
                   key=lambda g: (g.group, g.binding))
    for g in bound:
        key = (g.group, g.binding)
        if key in given:
            v = given[key]
            raw = np.ascontiguousarray(v).tobytes() if isinstance(v, np.ndarray) else bytes(v)
            data[key] = raw
            rep.inputs[f"{key[0]}:{key[1]}"] = f"given ({len(raw)} bytes)"
            continue
        size = buffer_size(g.type, n_elems)
        if rng is not None:
            data[key] = random_inputs(g.type, size, rng)
            rep.inputs[f"{key[0]}:{key[1]}"] = f"random (seed {seed}, {size} bytes)"
        elif g.space == "storage" and g.access == "read_write":
            data[key] = bytes(size)
            rep.inputs[f"{key[0]}:{key[1]}"] = f"zeros ({size} bytes)"
        else:
            return fail("host", f"no contents for '{g.name}' at @group({g.group}) @binding({g.binding}) "
                                f"({g.space}, {g.type}); give --buffer {g.group}:{g.binding}=FILE.npy "
                                f"or --random-inputs SEED")
    outputs = [(g.group, g.binding) for g in bound if g.space == "storage" and g.access == "read_write"]
    handles = [g for g in used_globals(module, fn) if g.space == "handle"]
    for g in handles:
        key = (g.group, g.binding)
        if key not in (samplers if isinstance(g.type, SamplerType) else textures):
            kind = "sampler" if isinstance(g.type, SamplerType) else "texture"
            return fail("host", f"no {kind} for '{g.name}' at @group({g.group}) @binding({g.binding}) ({g.type}); "
                                f"give --{kind} {g.group}:{g.binding}=" + ("linear,clamp" if kind == "sampler" else "FILE.npy"))
    written = [g for g in handles if isinstance(g.type, TextureType) and g.type.kind == "storage"
               and g.type.access != "read"]

    # -- the emulator ----------------------------------------------------------------------------
    trace = _CoopStoreTrace()
    try:
        dev = Device(prof, sg, bounds=bounds, max_steps=max_steps, tracer=trace, hints="cli")
        mod = dev.create_shader_module(source, file)
        pipe = dev.create_compute_pipeline(mod, fn.name, {k: v for k, v in (overrides or {}).items()})
        handles = {k: dev.create_buffer(np.frombuffer(v, np.uint8).copy()) if v else dev.create_buffer(size=0)
                   for k, v in data.items()}
        handles.update({k: to_emu(dev, t) for k, t in textures.items()})
        from ..memory.textures import combine     # a texture and a sampler at one key: a sampler2D's
        for k, d in samplers.items():
            handles[k] = combine(handles.get(k), dev.create_sampler(**d))
        dev.dispatch(pipe, handles, dispatch)
        emu_out = {k: handles[k].read(np.uint8).tobytes()[: len(data[k])] for k in outputs}
        for g in written:               # level 0 of each storage texture the shader may write
            v = handles[(g.group, g.binding)]
            emu_out[(g.group, g.binding)] = np.ascontiguousarray(getattr(v, "texture", v).levels[0]).tobytes()
    except EmuError as e:
        return fail("emulator", e.format({file: source}))

    # -- the adapter -----------------------------------------------------------------------------
    if backend == "vulkan":
        try:
            gpu_out = _run_vulkan(source, file, module, fn, dispatch, data, outputs, bound, overrides or {},
                                  _vulkan_images(module, fn, textures, samplers))
        except HwError as e:            # (an EmuError too: the device's, so caught first)
            return fail("adapter", str(e))
        except EmuError as e:
            return fail("host", e.format({file: source}))
    else:
        try:
            rep.emitted_wgsl = emit(module, rep.dialect)
        except EmuError as e:
            return fail("emitter", e.format({file: source}))
        try:
            extra = dict(textures=textures, samplers=samplers) if textures or samplers else {}
            gpu_out = run_on_adapter(rep.emitted_wgsl, entry=fn.name, dispatch=dispatch, buffers=data,
                                     outputs=outputs + [(g.group, g.binding) for g in written], overrides=ov,
                                     backend=backend, **extra)
        except HwError as e:
            return fail("adapter", str(e))

    glob = {(g.group, g.binding): g for g in bound}
    for k in outputs:
        g = glob[k]
        rep.bindings.append(compare_binding(k, g.name, g.type, emu_out[k], gpu_out[k], ulp, trace, first))
    for g in written:
        k = (g.group, g.binding)
        rep.bindings.append(compare_binding(k, g.name, texel_array(g.type, textures[k].format), emu_out[k], gpu_out[k],
                                            ulp, trace, first))
    return rep


def texel_array(t: TextureType, bound: str | None = None):
    """The texels of a storage texture as an array type to compare: its channels' floats (f16,
    f32), else their bytes (the packed formats as u32 words). `bound`: the bound texture's format
    (a SPIR-V storage image of format Unknown has none of its own)."""
    from ..numerics.texels import FORMATS
    f = FORMATS[t.format or bound]
    if len(set(f.bits)) != 1 or f.bits[0] not in (8, 16, 32):
        return ArrayType(U32, None)
    if f.kind == "float":
        return ArrayType(F16 if f.bits[0] == 16 else F32, None)
    return ArrayType(U32 if f.bits[0] == 32 else U8, None)


def _vulkan_images(module, fn, textures: dict, samplers: dict) -> dict:
    """The descriptors of the entry point's images and samplers: {key: (kind, HwTexture, sampler
    keywords)}, kind combined (a texture and a sampler variable at one binding), sampled, sampler
    or storage."""
    from ..api import used_globals
    out: dict = {}
    for g in used_globals(module, fn):
        if g.space != "handle":
            continue
        key = (g.group, g.binding)
        kind, tex, smp = out.get(key, (None, None, None))
        if isinstance(g.type, SamplerType):
            kind, smp = ("combined" if kind else "sampler"), samplers[key]
        else:
            kind, tex = ("combined" if kind else "storage" if g.type.kind == "storage" else "sampled"), textures[key]
        out[key] = (kind, tex, smp)
    return out


def _run_vulkan(source, file, module, fn, dispatch, data, outputs, bound, overrides, images=None) -> dict:
    """The same SPIR-V on the Vulkan device: the module's own binary, its specialization
    constants as the host gave them, the push-constant block through vkCmdPushConstants."""
    import struct
    from ..frontend.spirv import spirv_binary
    from ..frontend.spirv.module import PUSH_CONSTANTS
    from ..scheduler.executor import resolve_overrides
    from .vulkan import run_spirv
    values = resolve_overrides(module, overrides)
    given = {o.name for o in module.overrides if o.name in overrides or str(o.id) in overrides}
    pack = {"bool": "<I", "i32": "<i", "u32": "<I", "f32": "<f", "f16": "<e", "i8": "<b", "u8": "<B", "i16": "<h", "u16": "<H",
            "i64": "<q", "u64": "<Q", "f64": "<d"}
    # one map entry per SpecId (VUID-VkSpecializationInfo-constantID-04911): the declarations of
    # one SpecId with two types hold the same bytes
    spec = list({o.id: (o.id, struct.pack(pack[o.type.name], values[o.name])) for o in reversed(module.overrides)
                 if o.name in given and o.id is not None}.values())
    buffers = {k: v for k, v in data.items() if k != PUSH_CONSTANTS}
    kinds = {(g.group, g.binding): g.space for g in bound}
    return run_spirv(spirv_binary(source, file), entry=fn.name, dispatch=dispatch, buffers=buffers, kinds=kinds,
                     outputs=outputs, spec=spec, push=data.get(PUSH_CONSTANTS), images=images)
