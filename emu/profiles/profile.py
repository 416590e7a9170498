"""Device profiles: what a real device does, as data.

A profile file (JSON, ``emu/profiles/data/*.json`` or a user's own) names the
cooperative-matrix configurations a device supports, the subgroup sizes, the
lane map of every (config, role, subgroup size), the numeric model of every
config, how 8-bit strides count, what an out-of-bounds cooperative load does,
and the evidence behind each of those fields.  ``emu/profiles/README.md``
documents the format; :func:`load_profile` checks it and reports any problem
as one :class:`ProfileError` naming the file, the field, what is wrong and the
fix.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from ..errors import EmuError
from ..numerics.texels import LOD_GRADIENTS, MIXED_FILTERS, WRAP_COORDS, CUBE_COORDS, CUBE_CORNERS, FILTER_WEIGHTS, FIXED_ROUNDING, FLOAT_FILTER, HALF_FILTER, HALF_STORE, MIP_NEAREST, NORM8_STORE, SNORM8_FILTER, SRGB_FILTER, UNORM8_FILTER, NORMALIZED_DECODE, REFERENCE as REFERENCE_TEXTURES, TextureModel
from .lanemap import FAMILIES, FLEXIBLE_LAYOUTS, LaneMap, LaneMapError, family_map, from_formula, from_table

__all__ = [
    "Profile", "CoopConfig", "Evidence", "AdapterMatch", "ProfileError",
    "load_profile", "list_profiles", "profile_for_adapter",
    "KNOWN_MODELS", "TYPE_BITS", "STRIDE_UNITS", "OOB_BEHAVIORS", "EVIDENCE_LEVELS",
]

SCHEMA = "emu-profile/1"

# Numeric model presets implemented in emu/numerics/mma.py (kept here as names so that loading a
# profile does not import the numba kernels; a test keeps the two lists in step).  Integer
# configs may name any of them: integer MMA is exact and wraps (or saturates) under every preset.
KNOWN_MODELS = (
    "exact", "ieee-chain", "lavapipe-chain", "nvidia-volta", "nvidia-turing", "nvidia-ampere",
    "nvidia-ada", "nvidia-hopper", "nvidia-blackwell", "nvidia-rtx-blackwell", "amd-cdna3", "int-wrap",
)

TYPE_BITS = MappingProxyType({
    "f16": 16, "bf16": 16, "f32": 32, "f64": 64, "e4m3": 8, "e5m2": 8,
    "u8": 8, "i8": 8, "u16": 16, "i16": 16, "u32": 32, "i32": 32, "u64": 64, "i64": 64,
})
INTEGER_TYPES = frozenset(t for t in TYPE_BITS if t[0] in "ui")

STRIDE_UNITS = ("array_element", "matrix_element")
# error: an emulator error naming the load.  h200-rebase: measured on an H200 (see
# tests/data/hw/README.md): a load reaching past the buffer end reads the first
# rows*cols elements as a dense row-major matrix (offset 0, stride in matrix
# elements).  zero: out-of-bounds elements read 0, writes dropped (robust access).
# clamp: addresses clamp to the last element of the buffer.
OOB_BEHAVIORS = ("error", "h200-rebase", "zero", "clamp")
# How the device's shader compiler treats a float multiply feeding an add: kept apart ("none",
# two roundings) or contracted into one fused multiply-add ("mul-add", emu.isa.compiler).
FP_CONTRACT = ("none", "mul-add", "mul-add-f16")     # mul-add-f16: f32 and f16 alike
# The scalar arithmetic and builtins outside the matrix unit: correctly rounded IEEE ("ieee",
# emu.numerics.scalar/builtins) or NVIDIA's driver on its special function unit ("nvidia-sfu",
# emu.numerics.nvidia: flush-to-zero f32, canonical NaNs, the SFU's measured approximations).
SCALAR_MODELS = ("ieee", "nvidia-sfu")
# The order in which float subgroup reductions and scans combine lanes (emu.numerics.reduce):
# a butterfly / Hillis-Steele over all lanes, inactive ones giving the identity, or the H200's.
SUBGROUP_ORDERS = ("butterfly", "nvidia")
# How const-expressions fold: WGSL's rules, or Dawn's Tint on the host ("tint": f16 quantized
# toward zero, the C library's float functions; emu.numerics.tint)
CONST_EVALS = ("wgsl", "tint")
EVIDENCE_LEVELS = {"measured": "data", "published": "citation", "assumption": "reason"}
EVIDENCE_FIELDS = ("configs", "subgroup_sizes", "lane_maps", "numerics", "stride_unit_8bit", "oob_behavior")
SCOPES = ("subgroup",)

# VkComponentTypeKHR names of the IR's scalar types (BFLOAT16 from VK_KHR_shader_bfloat16)
VK_COMPONENT = {"f16": "VK_COMPONENT_TYPE_FLOAT16_KHR", "f32": "VK_COMPONENT_TYPE_FLOAT32_KHR",
                "bf16": "VK_COMPONENT_TYPE_BFLOAT16_KHR", "i8": "VK_COMPONENT_TYPE_SINT8_KHR",
                "u8": "VK_COMPONENT_TYPE_UINT8_KHR", "i32": "VK_COMPONENT_TYPE_SINT32_KHR",
                "u32": "VK_COMPONENT_TYPE_UINT32_KHR",
                # VK_EXT_shader_float8
                "e4m3": "VK_COMPONENT_TYPE_FLOAT8_E4M3_EXT", "e5m2": "VK_COMPONENT_TYPE_FLOAT8_E5M2_EXT"}
COMPONENT_TYPES = tuple(VK_COMPONENT)
_WGPU_TYPES = frozenset({"f32", "f16", "i32", "u32"})             # wgpu's CooperativeScalarType
_DAWN_COMPONENT = frozenset({"f32", "f16", "u32", "i32", "u8", "i8"})
_DAWN_RESULT = frozenset({"f32", "f16", "u32", "i32"})

_DATA = Path(__file__).with_name("data")    # its folder (importlib.resources: ~10 ms to import)


class ProfileError(EmuError, ValueError):
    """A profile that cannot be loaded or a request a profile cannot answer.

    ``message`` names the file and field and what is wrong; ``hint`` is the fix."""


@dataclass(frozen=True)
class CoopConfig:
    """One supported cooperative matrix multiply-add: D(MxN) = A(MxK) * B(KxN) + C(MxN)."""
    m: int
    n: int
    k: int
    a_type: str
    b_type: str
    c_type: str
    result_type: str
    saturating_accumulation: bool = False
    scope: str = "subgroup"

    def shape(self, role: str) -> tuple[int, int]:
        r = _role(role)
        return {"A": (self.m, self.k), "B": (self.k, self.n), "C": (self.m, self.n)}[r]

    def type_of(self, role: str) -> str:
        r = str(role).upper()
        if r in ("RESULT", "R", "D"):
            return self.result_type
        return {"A": self.a_type, "B": self.b_type, "C": self.c_type}[_role(role)]

    @property
    def is_integer(self) -> bool:
        return self.a_type in INTEGER_TYPES

    def __str__(self):
        sat = " saturating" if self.saturating_accumulation else ""
        return (f"{self.m}x{self.n}x{self.k} {self.a_type} x {self.b_type} + {self.c_type} -> "
                f"{self.result_type}{sat}")


@dataclass(frozen=True)
class Evidence:
    """Why a field has its value: measured (data), published (citation) or assumption (reason)."""
    level: str
    data: str | None = None
    citation: str | None = None
    reason: str | None = None
    note: str | None = None

    @property
    def text(self) -> str:
        return {"measured": self.data, "published": self.citation, "assumption": self.reason}[self.level] or ""

    def __str__(self):
        return f"{self.level}: {self.text}"


@dataclass(frozen=True)
class AdapterMatch:
    """How to recognise the real adapter a profile claims (all given parts must match)."""
    vendor_id: int | None = None
    device_name_contains: tuple[str, ...] = ()
    backend: str | None = None

    def matches(self, vendor_id=None, device_name=None, backend=None) -> bool:
        if self.vendor_id is None and not self.device_name_contains:
            return False            # a profile that claims no device matches none
        if self.vendor_id is not None:
            if vendor_id is None or _as_int(vendor_id) != self.vendor_id:
                return False
        if self.device_name_contains:
            name = (device_name or "").lower()
            if not any(s.lower() in name for s in self.device_name_contains):
                return False
        if self.backend and backend and str(backend).lower() != self.backend:
            return False
        return True


@dataclass(frozen=True, eq=False)
class Profile:
    name: str
    description: str
    adapter: AdapterMatch
    subgroup_sizes: tuple[int, ...]
    default_subgroup_size: int
    configs: tuple[CoopConfig, ...]
    stride_unit_8bit: str
    oob_behavior: str
    evidence: Mapping[str, Evidence]
    notes: str = ""
    source: str = ""
    fp_contract: str = "none"
    limits: Mapping[str, int] = field(default_factory=lambda: MappingProxyType(dict(DEFAULT_LIMITS)))
    scalar: str = "ieee"
    subgroup_order: str = "butterfly"
    const_eval: str = "wgsl"
    # what the texture unit does where WebGPU leaves room (emu/numerics/texels.py)
    textures: TextureModel = REFERENCE_TEXTURES
    # 64-bit atomic min/max on storage buffers (Vulkan's shaderBufferInt64Atomics; Metal from the
    # M2): Dawn's feature 'atomic-vec2u-min-max' (WGSL's atomic<vec2<u32>>) needs them
    buffer_int64_atomics: bool = True
    # 64-bit floats in shaders (Vulkan's shaderFloat64; wgpu's feature SHADER_F64, 'shader-f64'):
    # naga's f64 needs them; Metal has none
    shader_float64: bool = True
    flexible_nv: tuple = ()           # VK_NV_cooperative_matrix2 flexible-dimension configurations
    # how the driver spreads such a matrix over invocations (lanemap.FLEXIBLE_LAYOUTS), or "" where
    # unmeasured (element access to one is refused)
    flexible_layout_nv: str = ""
    # what the real device reports through Vulkan (device_id, device_name, driver_version,
    # api_version, extensions {name: spec version}, limits {VkPhysicalDeviceLimits member: value},
    # integer_dot_product [the integerDotProduct*Accelerated properties that are true], formats
    # {VkFormat less VK_FORMAT_: {"optimal"/"linear": [VkFormatFeatureFlagBits2 names less
    # VK_FORMAT_FEATURE_2_ and _BIT]}}): emu's Vulkan ICD reports the same where emu runs it;
    # {} where unrecorded
    vulkan: Mapping[str, Any] = field(default_factory=dict)
    _models: Mapping[CoopConfig, str] = field(default_factory=dict, repr=False)
    _map_specs: Mapping[CoopConfig, Mapping[str, Any]] = field(default_factory=dict, repr=False)
    _config_evidence: Mapping[CoopConfig, Mapping[str, Evidence]] = field(default_factory=dict, repr=False)
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    # -------------------------------------------------------------- queries
    def find_config(self, m=None, n=None, k=None, a_type=None, c_type=None, *, b_type=None,
                    result_type=None, saturating=None, scope="subgroup",
                    accumulator=None) -> CoopConfig | None:
        """The first listed config with these sizes and types (listing order = preference); a
        field left None matches anything, `accumulator` matches the C or the result type."""
        want = (("m", m), ("n", n), ("k", k), ("a_type", a_type), ("c_type", c_type),
                ("b_type", b_type), ("result_type", result_type), ("scope", scope))
        for cfg in self.configs:
            if (all(v is None or getattr(cfg, f) == v for f, v in want)
                    and (saturating is None or cfg.saturating_accumulation == bool(saturating))
                    and (accumulator is None or accumulator in (cfg.c_type, cfg.result_type))):
                return cfg
        return None

    def matrix_config(self, t) -> CoopConfig | None:
        """The first config with a matrix of role `t.role` ('A', 'B', 'C') of t's shape and type."""
        if t.role == "A":
            return self.find_config(m=t.rows, k=t.cols, a_type=t.elem.name, scope=None)
        if t.role == "B":
            return self.find_config(k=t.rows, n=t.cols, b_type=t.elem.name, scope=None)
        return self.find_config(m=t.rows, n=t.cols, accumulator=t.elem.name, scope=None)

    def matrix_lane_map(self, t, subgroup_size: int) -> LaneMap:
        """The lane map of cooperative matrix type `t` (its role's) at a subgroup size (cached).
        A matrix of no configuration's shape (VK_NV_cooperative_matrix2's flexible dimensions,
        workgroup scope) is held whole by every subgroup: element e of lane l is the matrix's
        element e * lanes + l in row-major order. Its real distribution is the driver's and is
        never visible (emu refuses element access to such matrices), so its values are exact."""
        key = ("matrix", t, subgroup_size)
        lm = self._cache.get(key)
        if lm is None:
            cfg = self.matrix_config(t) if getattr(t, "scope", "subgroup") == "subgroup" else None
            if cfg is None and self.flexible_for(t) is not None:
                lm = _whole_matrix_map(t.rows, t.cols, subgroup_size)
            else:
                lm = self.lane_map(cfg, t.role, subgroup_size)
            self._cache[key] = lm
        return lm

    def flexible_elements(self, t, invocations: int, subgroup_size: int):
        """(rows, cols), each (invocations, length): which element of matrix type `t` each
        invocation holds at each index, by the driver's layout (flexible_layout_nv), for a matrix
        of flexible dimensions or workgroup scope; None where the profile has no such layout or it
        does not cover `t`. `invocations` is the workgroup's at workgroup scope, else the subgroup's."""
        if not self.flexible_layout_nv:
            return None
        key = ("flexible", t, invocations, subgroup_size)
        if key not in self._cache:
            self._cache[key] = FLEXIBLE_LAYOUTS[self.flexible_layout_nv](t.rows, t.cols, t.role, invocations,
                                                                       subgroup_size)
        return self._cache[key]

    def is_flexible(self, t) -> bool:
        """Whether matrix type `t` is held whole by each subgroup (flexible or workgroup scope)."""
        return (getattr(t, "scope", "subgroup") == "workgroup" or self.matrix_config(t) is None) \
            and self.flexible_for(t) is not None

    def flexible_for(self, t, workgroup_size: int | None = None):
        """The first VK_NV_cooperative_matrix2 flexible-dimension entry admitting matrix type `t`:
        its scope, its role's component type, rows and columns multiples of the granularities
        (A is M x K, B is K x N, C is M x N); at workgroup scope, for `workgroup_size`
        invocations where given. None where none does."""
        scope = getattr(t, "scope", "subgroup")
        for f in self.flexible_nv:
            if f["scope"] != scope or (workgroup_size is not None and scope == "workgroup"
                                       and f["workgroup_invocations"] != workgroup_size):
                continue
            g = {"A": ("m", "k", ("a_type",)), "B": ("k", "n", ("b_type",)),
                 "C": ("m", "n", ("c_type", "result_type"))}[t.role]
            if (t.rows % f[g[0] + "_granularity"] == 0 and t.cols % f[g[1] + "_granularity"] == 0
                    and t.elem.name in [f[k] for k in g[2]]):
                return f
        return None

    def flexible_mma(self, a, b, c, workgroup_size: int | None = None):
        """(flexible entry, the configuration whose numerics each K step runs) of a multiply-add
        of flexible dimensions, or None: the driver splits it into steps of the entry's K
        granularity, each one multiply-add of the matrix unit (the configuration of that K and
        these types), accumulated in K order."""
        scope = getattr(a, "scope", "subgroup")
        for f in self.flexible_nv:
            if f["scope"] != scope or (workgroup_size is not None and scope == "workgroup"
                                       and f["workgroup_invocations"] != workgroup_size):
                continue
            if (a.rows % f["m_granularity"] or b.cols % f["n_granularity"] or a.cols % f["k_granularity"]
                    or (f["a_type"], f["b_type"]) != (a.elem.name, b.elem.name)
                    or c.elem.name not in (f["c_type"], f["result_type"])):
                continue
            base = self.find_config(k=f["k_granularity"], a_type=a.elem.name, c_type=c.elem.name,
                                    b_type=b.elem.name)
            if base is not None:
                return f, base
        return None

    def supports_subgroup_size(self, n: int) -> bool:
        return n in self.subgroup_sizes

    def model_for(self, config: CoopConfig) -> str:
        return self._models[self._own(config)]

    def evidence_for(self, field_name: str, config: CoopConfig | None = None) -> Evidence:
        """Evidence for a field, a config's own override first."""
        if config is not None:
            own = self._config_evidence.get(self._own(config), {})
            if field_name in own:
                return own[field_name]
        key = "configs" if field_name == "config" else field_name   # a config's own entry falls back to the list's
        if key not in self.evidence:
            raise ProfileError(f"profile {self.name} has no evidence for {field_name!r}",
                               hint=f"ask for one of {', '.join(self.evidence)}")
        return self.evidence[key]

    def lane_map(self, config: CoopConfig, role: str, subgroup_size: int | None = None) -> LaneMap:
        """The lane map of ``role`` ('A', 'B', 'C'; the result uses C) for a config and subgroup size."""
        cfg = self._own(config)
        role = _role(role, where=f"profile {self.name}: lane_map")
        sg = self.default_subgroup_size if subgroup_size is None else int(subgroup_size)
        if sg not in self.subgroup_sizes:
            raise ProfileError(
                f"profile {self.name}: subgroup size {sg} is not supported; supported: "
                f"{', '.join(map(str, self.subgroup_sizes))}",
                hint="run with a subgroup size the profile lists, or use the 'reference' profile")
        key = (cfg, role, sg)
        lm = self._cache.get(key)
        if lm is None:
            lm = _build_map(self._map_specs[cfg][role], cfg, role, sg)
            self._cache[key] = lm
        return lm

    def where_else(self, has, what: str, integer: bool = False) -> str:
        """A hint's first line: the shipped profiles (other than this one) whose `has(profile)`
        holds, or that none has `what` (then no profile runs the shader as written)."""
        names = [n for n in list_profiles() if n not in (self.name, "reference") and has(load_profile(n))]
        if names:
            return f"profiles that have {what}: {', '.join(names)} (--profile NAME)"
        why = " (their integer matrix units take 8-bit inputs to 32-bit sums)" if integer else ""
        return f"no emu profile has {what}: none of the GPUs emu models has one{why}; `emu props NAME` lists each one's"

    def describe_configs(self) -> str:
        """A human list of the supported configs, used in 'unsupported config' errors."""
        sizes = ", ".join(map(str, self.subgroup_sizes))
        lines = [f"{self.name} supports these cooperative matrix configs (subgroup size {sizes}):"]
        for cfg in self.configs:
            lines.append(f"  M={cfg.m:<2} N={cfg.n:<2} K={cfg.k:<2}  {cfg.a_type} x {cfg.b_type} + "
                         f"{cfg.c_type} -> {cfg.result_type}"
                         f"{'  (saturating)' if cfg.saturating_accumulation else ''}"
                         f"  [numerics {getattr(self._models[cfg], 'name', self._models[cfg])}]")
        return "\n".join(lines)

    def props_wgpu(self) -> list[dict]:
        """Configs as wgpu reports them (cooperative_matrix_properties); wgpu's scalar
        types are f32/f16/i32/u32 and it pairs A with B and C with the result."""
        out = []
        for cfg in self.configs:
            if (cfg.scope == "subgroup" and cfg.a_type == cfg.b_type and cfg.c_type == cfg.result_type
                    and cfg.a_type in _WGPU_TYPES and cfg.c_type in _WGPU_TYPES):
                out.append(dict(m_size=cfg.m, n_size=cfg.n, k_size=cfg.k, ab_type=cfg.a_type,
                                cr_type=cfg.c_type, saturating_accumulation=cfg.saturating_accumulation))
        return out

    def props_dawn(self) -> list[dict]:
        """Configs as Dawn reports them (adapter info subgroupMatrixConfigs).  Same filter
        as Dawn's Vulkan backend: A type == B type, C type == result type, subgroup
        scope, no saturating accumulation, component types Dawn can name."""
        out = []
        for cfg in self.configs:
            if (cfg.scope == "subgroup" and cfg.a_type == cfg.b_type and cfg.c_type == cfg.result_type
                    and not cfg.saturating_accumulation
                    and cfg.a_type in _DAWN_COMPONENT and cfg.result_type in _DAWN_RESULT):
                out.append(dict(component_type=cfg.a_type, result_component_type=cfg.result_type,
                                m=cfg.m, n=cfg.n, k=cfg.k))
        return out

    def props_vulkan(self) -> dict:
        """Configs in Vulkan's structures: VkCooperativeMatrixPropertiesKHR (subgroup scope), the
        same listed per subgroup size the profile runs (what a per-subgroup-size query gives), and
        VK_NV_cooperative_matrix2's VkCooperativeMatrixFlexibleDimensionsPropertiesNV."""
        comp = lambda t: VK_COMPONENT[t]  # noqa: E731
        khr = [dict(MSize=c.m, NSize=c.n, KSize=c.k, AType=comp(c.a_type), BType=comp(c.b_type),
                    CType=comp(c.c_type), ResultType=comp(c.result_type),
                    saturatingAccumulation=c.saturating_accumulation, scope="VK_SCOPE_SUBGROUP_KHR")
               for c in self.configs if c.scope == "subgroup"]
        per_size = {str(sg): [f"{c.m}x{c.n}x{c.k} {c.a_type} x {c.b_type} + {c.c_type} -> {c.result_type}"
                              for c in self.configs if c.scope == "subgroup"] for sg in self.subgroup_sizes}
        flex = [dict(MGranularity=f["m_granularity"], NGranularity=f["n_granularity"], KGranularity=f["k_granularity"],
                     AType=comp(f["a_type"]), BType=comp(f["b_type"]), CType=comp(f["c_type"]),
                     ResultType=comp(f["result_type"]), saturatingAccumulation=f["saturating_accumulation"],
                     scope="VK_SCOPE_WORKGROUP_KHR" if f["scope"] == "workgroup" else "VK_SCOPE_SUBGROUP_KHR",
                     workgroupInvocations=f["workgroup_invocations"]) for f in self.flexible_nv]
        queries = [("subgroup", 0, sg, flags) for sg in (0, *self.subgroup_sizes) for flags in (0, 1)]
        queries += [("workgroup", n, sg, 0) for n in sorted({f["workgroup_invocations"] for f in self.flexible_nv
                                                              if f["scope"] == "workgroup"})
                    for sg in self.subgroup_sizes]
        props2 = [dict(scope=f"VK_SCOPE_{sc.upper()}_KHR", invocations=n, subgroupSize=sg, flags=fl,
                       VkCooperativeMatrixProperties2EXT=[
                           dict(MGranularity=m, NGranularity=nn, KGranularity=k, AType=comp(a), BType=comp(b),
                                CType=comp(c), ResultType=comp(r))
                           for m, nn, k, a, b, c, r in self.props2(sc, n, sg, fl)])
                  for sc, n, sg, fl in queries]
        return {"VkCooperativeMatrixPropertiesKHR": khr, "per_subgroup_size": per_size,
                "VkCooperativeMatrixFlexibleDimensionsPropertiesNV": flex,
                "vkGetPhysicalDeviceCooperativeMatrixProperties2EXT": props2}

    def props2(self, scope: str, invocations: int = 0, subgroup_size: int = 0, flags: int = 0) -> list[tuple]:
        """VK_EXT_cooperative_matrix_maintenance1's query (VkPhysicalDeviceCooperativeMatrixInfo2EXT ->
        (MGranularity, NGranularity, KGranularity, A, B, C, result) per VkCooperativeMatrixProperties2EXT),
        from the profile's data by the extension's rules until a driver reports it: subgroup scope
        gives the configurations' sizes at a subgroup size the profile runs, or 0 (a varying size);
        workgroup scope gives the flexible-dimension granularities recorded for that many
        invocations; flags bit 0 (VK_COOPERATIVE_MATRIX_SATURATING_ACCUMULATION_BIT_EXT) asks for
        the saturating configurations only."""
        if subgroup_size not in (0, *self.subgroup_sizes):
            return []
        saturating = bool(flags & 1)
        if scope == "subgroup":
            return [(c.m, c.n, c.k, c.a_type, c.b_type, c.c_type, c.result_type) for c in self.configs
                    if c.scope == "subgroup" and c.saturating_accumulation == saturating]
        return [(f["m_granularity"], f["n_granularity"], f["k_granularity"], f["a_type"], f["b_type"], f["c_type"],
                 f["result_type"]) for f in self.flexible_nv
                if f["scope"] == "workgroup" and f["workgroup_invocations"] == invocations
                and f["saturating_accumulation"] == saturating]

    def matches_adapter(self, vendor_id=None, device_name=None, backend=None) -> bool:
        return self.adapter.matches(vendor_id, device_name, backend)

    def __repr__(self):
        return f"Profile({self.name!r}: {len(self.configs)} configs, subgroup sizes {list(self.subgroup_sizes)})"

    # ------------------------------------------------------------- internal
    def _own(self, config) -> CoopConfig:
        if isinstance(config, CoopConfig) and config in self._models:
            return config
        raise ProfileError(f"profile {self.name} has no config {config}", hint=self.describe_configs())


# ===================================================================== loading

def _close(word, choices, **kw):
    import difflib                          # (imported for a mistake only: ~5 ms of every start)
    return difflib.get_close_matches(word, choices, **kw)


def list_profiles() -> list[str]:
    """Names of the profiles that ship with emu."""
    return list(_shipped_names())


@lru_cache(maxsize=1)
def _shipped_names() -> tuple[str, ...]:
    return tuple(sorted(e.name[:-5] for e in _DATA.iterdir() if e.name.endswith(".json")))


def load_profile(name_or_path: str | os.PathLike) -> Profile:
    """A shipped profile by name (see :func:`list_profiles`) or a user's JSON file by path."""
    text = str(name_or_path)
    if text in list_profiles():
        return _load_builtin(text)
    path = Path(text)
    if path.is_file():
        return _load_file(path, _include_stack=())
    near = _close(text, list_profiles(), n=1) or \
        [n for n in list_profiles() if text.lower() in n][:1]          # 'h200', 'rdna3'
    raise ProfileError(
        f"no profile named {text!r} and no such file",
        hint=(f"did you mean {near[0]!r}? " if near else "")
        + f"shipped profiles: {', '.join(list_profiles())}; or give the path of a profile JSON file "
          f"(its format: docs/profiles.md of `emu examples --copy DIR`)")


def profile_for_adapter(vendor_id=None, device_name=None, backend=None) -> Profile | None:
    """The shipped profile that claims this real adapter, if any."""
    for name in list_profiles():
        p = _load_builtin(name)
        if p.matches_adapter(vendor_id, device_name, backend):
            return p
    return None


_BUILTIN: dict[str, Profile] = {}


def _load_builtin(name: str, _include_stack=None) -> Profile:
    """Shipped profiles are parsed once and shared (profiles are immutable)."""
    if name not in _BUILTIN:
        ref = _DATA / f"{name}.json"
        _BUILTIN[name] = _parse(ref.read_text(encoding="utf-8"), f"emu/profiles/data/{name}.json",
                                _include_stack=_include_stack or (name,), check_maps=False)
    return _BUILTIN[name]


def _load_file(path: Path, _include_stack) -> Profile:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError(f"{path}: cannot read the profile file ({exc})",
                           hint="check the path and that the file is UTF-8 text") from None
    return _parse(text, str(path), _include_stack)


def _no_duplicate_keys(pairs):
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise ValueError(f"duplicate key {k!r}")
        seen[k] = v
    return seen


class _Ctx:
    """Where we are in a file: errors read '<file>: <field>: <what>' with the fix as the hint."""

    def __init__(self, filename: str):
        self.filename = filename

    def fail(self, where: str, what: str, fix: str):
        raise ProfileError(f"{self.filename}: {where}: {what}", hint=fix)

    def keys(self, obj, where: str, required: tuple, optional: tuple):
        if not isinstance(obj, dict):
            self.fail(where, f"expected a JSON object, got {_jtype(obj)}", "write it as { ... }")
        for k in obj:
            if k not in required and k not in optional:
                near = _close(k, required + optional, n=1) or \
                    [a for a in required + optional if a.startswith(k) or k.startswith(a)][:1]
                self.fail(f"{where}.{k}" if where else k, "unknown field",
                          f"use {near[0]!r}" if near else f"remove it (allowed: {', '.join(required + optional)})")
        for k in required:
            if k not in obj:
                self.fail(where or "top level", f"missing required field {k!r}", f"add {k!r}")

    def string(self, v, where, choices=None):
        if not isinstance(v, str) or not v:
            self.fail(where, f"expected a non-empty string, got {_jtype(v)}", "write a string in double quotes")
        if choices is not None and v not in choices:
            near = _close(v, list(choices), n=1)
            self.fail(where, f"{v!r} is not one of {', '.join(choices)}",
                      f"use {near[0]!r}" if near else f"use one of {', '.join(choices)}")
        return v

    def integer(self, v, where, positive=True):
        if not isinstance(v, int) or isinstance(v, bool) or (positive and v <= 0):
            self.fail(where, f"expected a positive integer, got {json.dumps(v)}", "write a whole number like 16")
        return v

    def boolean(self, v, where):
        if not isinstance(v, bool):
            self.fail(where, f"expected true or false, got {json.dumps(v)}", "write true or false (no quotes)")
        return v


def _jtype(v) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(v), type(v).__name__)


def _as_int(v) -> int:
    return int(v, 0) if isinstance(v, str) else int(v)


_TOP_REQUIRED = ("schema", "name", "description", "subgroup_sizes", "numerics", "lane_maps",
                 "stride_unit_8bit", "oob_behavior", "evidence")
_TOP_OPTIONAL = ("default_subgroup_size", "adapter", "configs", "include_configs_from", "notes", "fp_contract",
                 "limits", "scalar", "subgroup_order", "const_eval", "textures", "buffer_int64_atomics",
                 "shader_float64", "flexible_dimensions_nv", "flexible_layout_nv", "vulkan")
# VK_NV_cooperative_matrix2's VkCooperativeMatrixFlexibleDimensionsPropertiesNV, one object each
_FLEX_REQUIRED = ("m_granularity", "n_granularity", "k_granularity", "a_type", "c_type", "scope")
_FLEX_OPTIONAL = ("b_type", "result_type", "saturating_accumulation", "workgroup_invocations")
# Device limits checked at dispatch (WebGPU's names). A profile may give its device's own; these
# defaults are those of a desktop GPU through Dawn (and of emu's wgpu adapter).
DEFAULT_LIMITS = {
    "max-compute-workgroups-per-dimension": 65535,
    "max-compute-invocations-per-workgroup": 1024,
    "max-compute-workgroup-size-x": 1024,
    "max-compute-workgroup-size-y": 1024,
    "max-compute-workgroup-size-z": 64,
    "max-compute-workgroup-storage-size": 32768,
}
_CFG_REQUIRED = ("m", "n", "k", "a_type", "c_type")
_CFG_OPTIONAL = ("b_type", "result_type", "saturating_accumulation", "scope", "model", "lane_maps",
                 "evidence", "note")


def _parse(text: str, filename: str, _include_stack, check_maps: bool = True) -> Profile:
    ctx = _Ctx(filename)
    try:
        doc = json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise ProfileError(f"{filename}: line {exc.lineno}, column {exc.colno}: not valid JSON ({exc.msg})",
                           hint="check commas, quotes and brackets near that place") from None
    except ValueError as exc:
        raise ProfileError(f"{filename}: {exc}", hint="give each field once per object") from None

    ctx.keys(doc, "", _TOP_REQUIRED, _TOP_OPTIONAL)
    if doc["schema"] != SCHEMA:
        ctx.fail("schema", f"{doc['schema']!r} is not a profile schema this emu reads", f'write "schema": "{SCHEMA}"')
    name = ctx.string(doc["name"], "name")
    description = ctx.string(doc["description"], "description")
    notes = doc.get("notes", "")
    if not isinstance(notes, str):
        ctx.fail("notes", "expected a string", "write the notes as one string")

    # subgroup sizes
    sizes = doc["subgroup_sizes"]
    if not isinstance(sizes, list) or not sizes:
        ctx.fail("subgroup_sizes", f"expected a non-empty list of sizes, got {_jtype(sizes)}", "write e.g. [32]")
    for j, s in enumerate(sizes):
        ctx.integer(s, f"subgroup_sizes[{j}]")
        if s & (s - 1):
            ctx.fail(f"subgroup_sizes[{j}]", f"{s} is not a power of two", "use 4, 8, 16, 32, 64 or 128")
    if len(set(sizes)) != len(sizes):
        ctx.fail("subgroup_sizes", "a size is listed twice", "list each size once")
    default_sg = doc.get("default_subgroup_size", sizes[0])
    ctx.integer(default_sg, "default_subgroup_size")
    if default_sg not in sizes:
        ctx.fail("default_subgroup_size", f"{default_sg} is not in subgroup_sizes {sizes}", "pick one of subgroup_sizes")

    adapter = _parse_adapter(ctx, doc.get("adapter"))
    stride = ctx.string(doc["stride_unit_8bit"], "stride_unit_8bit", STRIDE_UNITS)
    oob = ctx.string(doc["oob_behavior"], "oob_behavior", OOB_BEHAVIORS)
    contract = ctx.string(doc.get("fp_contract", "none"), "fp_contract", FP_CONTRACT)
    scalar = ctx.string(doc.get("scalar", "ieee"), "scalar", SCALAR_MODELS)
    subgroup_order = ctx.string(doc.get("subgroup_order", "butterfly"), "subgroup_order", SUBGROUP_ORDERS)
    const_eval = ctx.string(doc.get("const_eval", "wgsl"), "const_eval", CONST_EVALS)
    evidence = _parse_evidence(ctx, doc["evidence"], "evidence", required=EVIDENCE_FIELDS)
    limits = dict(DEFAULT_LIMITS)
    raw_limits = doc.get("limits", {})
    ctx.keys(raw_limits, "limits", (), tuple(DEFAULT_LIMITS))
    for k, v in raw_limits.items():
        limits[k] = ctx.integer(v, f"limits.{k}")
    textures = _parse_textures(ctx, doc.get("textures"))
    int64_atomics = ctx.boolean(doc.get("buffer_int64_atomics", True), "buffer_int64_atomics")
    float64 = ctx.boolean(doc.get("shader_float64", True), "shader_float64")
    vulkan = _parse_vulkan(ctx, doc.get("vulkan", {}))

    # numerics defaults
    num = doc["numerics"]
    if isinstance(num, str):
        num = {"float": num, "integer": num}
    ctx.keys(num, "numerics", ("float", "integer"), ())
    default_model = {kind: _model(ctx, num[kind], f"numerics.{kind}", name) for kind in ("float", "integer")}

    default_maps = _parse_map_roles(ctx, doc["lane_maps"], "lane_maps")

    # configs (own, then included)
    raw_cfgs = doc.get("configs", [])
    if not isinstance(raw_cfgs, list):
        ctx.fail("configs", f"expected a list, got {_jtype(raw_cfgs)}", "write configs as [ {...}, ... ]")
    entries = [(f"configs[{j}]", c) for j, c in enumerate(raw_cfgs)]
    includes = doc.get("include_configs_from", [])
    if not isinstance(includes, list) or not all(isinstance(x, str) for x in includes):
        ctx.fail("include_configs_from", "expected a list of profile names", 'write e.g. ["nvidia-h200"]')
    included: list[CoopConfig] = []
    for j, inc in enumerate(includes):
        if inc in _include_stack or inc == name:
            ctx.fail(f"include_configs_from[{j}]", f"{inc!r} includes itself (through {' -> '.join(_include_stack)})",
                     "remove the cycle")
        if inc not in list_profiles():
            ctx.fail(f"include_configs_from[{j}]", f"no shipped profile {inc!r}",
                     f"use one of {', '.join(list_profiles())}")
        included.extend(_load_builtin(inc, _include_stack + (inc,)).configs)
    if not entries and not included:
        ctx.fail("configs", "the profile lists no configs", "add at least one config")

    configs: list[CoopConfig] = []
    models: dict[CoopConfig, str] = {}
    specs: dict[CoopConfig, dict] = {}
    cfg_evidence: dict[CoopConfig, dict] = {}
    for where, raw in entries:
        cfg, model, maps, ev = _parse_config(ctx, raw, where, default_model)
        if cfg in models:
            ctx.fail(where, f"config {cfg} is listed twice", "remove the repeat")
        configs.append(cfg)
        models[cfg] = model
        specs[cfg] = {**default_maps, **maps}
        if ev:
            cfg_evidence[cfg] = ev
    for cfg in included:
        if cfg not in models:
            configs.append(cfg)
            models[cfg] = default_model["integer" if cfg.is_integer else "float"]
            specs[cfg] = dict(default_maps)

    for cfg in configs:
        missing = [r for r in "ABC" if r not in specs[cfg]]
        if missing:
            ctx.fail("lane_maps", f"no lane map for role {', '.join(missing)} of config {cfg}",
                     "give lane_maps for A, B and C (or one spec for all)")

    flexible = _parse_flexible(ctx, doc.get("flexible_dimensions_nv", []), evidence)
    flex_layout = doc.get("flexible_layout_nv", "")
    if flex_layout and flex_layout not in FLEXIBLE_LAYOUTS:
        ctx.fail("flexible_layout_nv", f"{flex_layout!r} is no layout emu knows", f"use one of {', '.join(FLEXIBLE_LAYOUTS)}")
    if flex_layout and "flexible_layout_nv" not in evidence:
        ctx.fail("evidence", "no evidence for 'flexible_layout_nv'", 'add "flexible_layout_nv": {"level": "measured", ...}')

    profile = Profile(
        name=name, description=description, adapter=adapter, subgroup_sizes=tuple(sizes),
        default_subgroup_size=default_sg, configs=tuple(configs), stride_unit_8bit=stride,
        oob_behavior=oob, evidence=MappingProxyType(evidence), notes=notes, source=filename,
        fp_contract=contract, limits=MappingProxyType(limits), scalar=scalar, textures=textures,
        subgroup_order=subgroup_order, const_eval=const_eval, buffer_int64_atomics=int64_atomics,
        shader_float64=float64, vulkan=vulkan, flexible_nv=flexible, flexible_layout_nv=flex_layout,
        _models=MappingProxyType(models), _map_specs=MappingProxyType(specs),
        _config_evidence=MappingProxyType(cfg_evidence))

    # Build every map now: a file that names an impossible map fails at load, not mid-run. The
    # shipped profiles' maps are built on first use (~0.15 s of every run for all of them): each is
    # built and checked by tests/profiles/test_profile_files.py
    for j, cfg in enumerate(configs if check_maps else ()):
        for role in "ABC":
            for sg in sizes:
                try:
                    profile.lane_map(cfg, role, sg)
                except LaneMapError as exc:
                    where = next((w for w, c in zip((e[0] for e in entries), raw_cfgs)
                                  if _same_cfg(c, cfg)), "lane_maps")
                    ctx.fail(f"{where} lane map {role} at subgroup size {sg}", exc.message,
                             "use a lane map (family, formula or table) that covers the matrix exactly "
                             "for this shape and subgroup size, or drop that subgroup size")
    return profile


def _same_cfg(raw, cfg) -> bool:
    try:
        return (raw["m"], raw["n"], raw["k"], raw["a_type"], raw["c_type"]) == (cfg.m, cfg.n, cfg.k, cfg.a_type, cfg.c_type) \
            and raw.get("b_type", raw["a_type"]) == cfg.b_type \
            and raw.get("result_type", raw["c_type"]) == cfg.result_type \
            and raw.get("saturating_accumulation", False) == cfg.saturating_accumulation
    except (KeyError, TypeError):
        return False


def _parse_adapter(ctx: _Ctx, raw) -> AdapterMatch:
    if raw is None:
        return AdapterMatch()
    ctx.keys(raw, "adapter", (), ("vendor_id", "device_name_contains", "backend"))
    vid = raw.get("vendor_id")
    if vid is not None:
        try:
            vid = _as_int(vid)
        except (TypeError, ValueError):
            ctx.fail("adapter.vendor_id", f"{vid!r} is not a number", 'write it like "0x10de"')
    names = raw.get("device_name_contains", [])
    if not isinstance(names, list) or not all(isinstance(s, str) and s for s in names):
        ctx.fail("adapter.device_name_contains", "expected a list of non-empty strings", 'write e.g. ["H200"]')
    backend = raw.get("backend")
    if backend is not None:
        backend = ctx.string(backend, "adapter.backend", ("vulkan", "metal", "d3d12")).lower()
    return AdapterMatch(vid, tuple(names), backend)


def _parse_vulkan(ctx: _Ctx, raw) -> dict:
    ctx.keys(raw, "vulkan", (), ("device_id", "device_name", "driver_version", "api_version", "extensions",
                                 "limits", "integer_dot_product", "formats"))
    out = dict(raw)
    formats = out.get("formats", {})
    if not isinstance(formats, dict) or not all(
            isinstance(v, dict) and set(v) == {"optimal", "linear"} and
            all(isinstance(f, list) and all(isinstance(n, str) for n in f) for f in v.values())
            for v in formats.values()):
        ctx.fail("vulkan.formats", "expected {VkFormat less VK_FORMAT_: {\"optimal\": [features], \"linear\": "
                 "[features]}} (VkFormatFeatureFlagBits2 names less VK_FORMAT_FEATURE_2_ and _BIT)",
                 'write e.g. {"R8_UNORM": {"optimal": ["SAMPLED_IMAGE"], "linear": ["SAMPLED_IMAGE"]}}')
    lim = out.get("limits", {})
    if not isinstance(lim, dict) or not all(
            isinstance(v, int) or (isinstance(v, list) and all(isinstance(x, int) for x in v)) for v in lim.values()):
        ctx.fail("vulkan.limits", "expected {VkPhysicalDeviceLimits member: number or list of numbers}",
                 'write e.g. {"maxComputeSharedMemorySize": 49152}')
    dot = out.get("integer_dot_product", [])
    if not isinstance(dot, list) or not all(isinstance(n, str) and n.startswith("integerDotProduct")
                                            and n.endswith("Accelerated") for n in dot):
        ctx.fail("vulkan.integer_dot_product", "expected the names of the integerDotProduct*Accelerated "
                 "properties the device reports true", 'write e.g. ["integerDotProduct4x8BitPackedSignedAccelerated"]')
    if "device_id" in out:
        try:
            out["device_id"] = _as_int(out["device_id"])
        except (TypeError, ValueError):
            ctx.fail("vulkan.device_id", f"{out['device_id']!r} is not a number", 'write it like "0x2335"')
    if "driver_version" in out:
        out["driver_version"] = ctx.integer(out["driver_version"], "vulkan.driver_version")
    ext = out.get("extensions", {})
    if not isinstance(ext, dict) or not all(isinstance(v, int) for v in ext.values()):
        ctx.fail("vulkan.extensions", "expected {name: spec version}", 'write e.g. {"VK_KHR_cooperative_matrix": 2}')
    return MappingProxyType(out)


def _parse_textures(ctx: _Ctx, raw) -> TextureModel:
    """{"normalized_decode": "exact", "subtexel_bits": 8, "lod_bits": 8, "mip_nearest": "half-down",
    "half_store": "nearest-even", "unorm8_filter": "float", "subtexel_rounding": "half-up",
    "lod_rounding": "floor", "half_filter": "f32", "norm8_store": "nearest-even", "srgb_decode": [256
    numbers], "float_filter": "exact", "cube_corners": "mean", "filter_weights": "product",
    "srgb_filter": "float", "coordinate_bits": null, "snorm8_filter": "float",
    "cube_coords": "divide", "wrap_coords": "texel", "mixed_filters": "select",
    "lod_gradients": "exact", "lod_log2": [256 integers]}: each optional."""
    if raw is None:
        return REFERENCE_TEXTURES
    ctx.keys(raw, "textures", (), ("normalized_decode", "subtexel_bits", "lod_bits", "mip_nearest", "half_store",
                                     "unorm8_filter", "subtexel_rounding", "lod_rounding",
                                     "half_filter", "norm8_store", "srgb_decode", "float_filter",
                                     "cube_corners", "filter_weights", "srgb_filter", "coordinate_bits",
                                     "snorm8_filter", "cube_coords", "wrap_coords", "mixed_filters",
                                     "lod_gradients", "lod_log2"))
    bits = {}
    for k, most in (("subtexel_bits", 23), ("lod_bits", 23), ("coordinate_bits", 30)):
        v = raw.get(k)
        if v is not None:
            ctx.integer(v, f"textures.{k}")
            if not 1 <= v <= most:
                ctx.fail(f"textures.{k}", f"{v} fractional bits: expected 1 to {most}", "or null for f32's")
        bits[k] = v
    decode = ctx.string(raw.get("normalized_decode", "exact"), "textures.normalized_decode", NORMALIZED_DECODE)
    near = ctx.string(raw.get("mip_nearest", "half-down"), "textures.mip_nearest", MIP_NEAREST)
    half = ctx.string(raw.get("half_store", "nearest-even"), "textures.half_store", HALF_STORE)
    fixed = ctx.string(raw.get("unorm8_filter", "float"), "textures.unorm8_filter", UNORM8_FILTER)
    sub = ctx.string(raw.get("subtexel_rounding", "half-up"), "textures.subtexel_rounding", FIXED_ROUNDING)
    lod = ctx.string(raw.get("lod_rounding", "floor"), "textures.lod_rounding", FIXED_ROUNDING)
    hf = ctx.string(raw.get("half_filter", "f32"), "textures.half_filter", HALF_FILTER)
    n8 = ctx.string(raw.get("norm8_store", "nearest-even"), "textures.norm8_store", NORM8_STORE)
    srgb = raw.get("srgb_decode")
    if srgb is not None:
        if not isinstance(srgb, list) or len(srgb) != 256 or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1 for v in srgb):
            ctx.fail("textures.srgb_decode", "expected a list of 256 numbers in [0, 1]",
                     "give what the device reads for each of the 256 sRGB values, or leave it out for the exact curve")
        srgb = tuple(srgb)
    ff = ctx.string(raw.get("float_filter", "exact"), "textures.float_filter", FLOAT_FILTER)
    cc = ctx.string(raw.get("cube_corners", "mean"), "textures.cube_corners", CUBE_CORNERS)
    fw = ctx.string(raw.get("filter_weights", "product"), "textures.filter_weights", FILTER_WEIGHTS)
    sf = ctx.string(raw.get("srgb_filter", "float"), "textures.srgb_filter", SRGB_FILTER)
    if sf == "aligned-8" and srgb is None:
        ctx.fail("textures.srgb_filter", "aligned-8 aligns by the exponents of the device's decode table",
                 "give srgb_decode (the 256 values the device reads) too")
    s8 = ctx.string(raw.get("snorm8_filter", "float"), "textures.snorm8_filter", SNORM8_FILTER)
    cx = ctx.string(raw.get("cube_coords", "divide"), "textures.cube_coords", CUBE_COORDS)
    wc = ctx.string(raw.get("wrap_coords", "texel"), "textures.wrap_coords", WRAP_COORDS)
    mf = ctx.string(raw.get("mixed_filters", "select"), "textures.mixed_filters", MIXED_FILTERS)
    lg = ctx.string(raw.get("lod_gradients", "exact"), "textures.lod_gradients", LOD_GRADIENTS)
    table = raw.get("lod_log2")
    if table is not None:
        if not isinstance(table, list) or len(table) != 256 or not all(
                isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 255 for v in table) \
                or any(b < a for a, b in zip(table, table[1:])):
            ctx.fail("textures.lod_log2", "expected 256 non-decreasing integers in 0..255",
                     "give the level of detail's 8-bit fraction the device takes for each 8-bit mantissa of the length")
        table = tuple(table)
    if lg == "h200-quad" and table is None:
        ctx.fail("textures.lod_gradients", "h200-quad reads the level of detail from the device's log2 table",
                 "give lod_log2 (256 fractions, measured) too")
    return TextureModel(decode, bits.get("subtexel_bits"), bits.get("lod_bits"), near, half, fixed, sub, lod, hf, n8,
                        srgb, ff, cc, sf, fw, bits.get("coordinate_bits"), s8, cx, wc, mf, lg, table)


def _parse_flexible(ctx: _Ctx, raw, evidence) -> tuple:
    """flexible_dimensions_nv: [{m/n/k_granularity, a/b/c/result_type, scope, workgroup_invocations}]."""
    if not isinstance(raw, list):
        ctx.fail("flexible_dimensions_nv", f"expected a list, got {_jtype(raw)}", "write it as [ {...}, ... ]")
    if raw and "flexible_dimensions_nv" not in evidence:
        ctx.fail("evidence", "no evidence for 'flexible_dimensions_nv'",
                 'add "flexible_dimensions_nv": {"level": "measured", "data": ...}')
    out = []
    for j, e in enumerate(raw):
        w = f"flexible_dimensions_nv[{j}]"
        ctx.keys(e, w, _FLEX_REQUIRED, _FLEX_OPTIONAL)
        for k in ("m_granularity", "n_granularity", "k_granularity"):
            if ctx.integer(e[k], f"{w}.{k}") <= 0:
                ctx.fail(f"{w}.{k}", "a granularity is positive", "give the driver's granularity")
        types = {k: ctx.string(e.get(k, e["a_type" if k == "b_type" else "c_type"]), f"{w}.{k}", COMPONENT_TYPES)
                 for k in ("a_type", "b_type", "c_type", "result_type")}
        scope = ctx.string(e["scope"], f"{w}.scope", ("subgroup", "workgroup"))
        inv = ctx.integer(e["workgroup_invocations"], f"{w}.workgroup_invocations") \
            if "workgroup_invocations" in e else 0
        if (scope == "workgroup") != (inv > 0):
            ctx.fail(f"{w}.workgroup_invocations", "workgroup scope names its invocations, subgroup scope 0",
                     "give the workgroup size for workgroup scope, 0 (or nothing) for subgroup scope")
        out.append(MappingProxyType(dict(m_granularity=e["m_granularity"], n_granularity=e["n_granularity"],
                                         k_granularity=e["k_granularity"], **types, scope=scope,
                                         saturating_accumulation=bool(e.get("saturating_accumulation", False)),
                                         workgroup_invocations=inv)))
    return tuple(out)


def _parse_evidence(ctx: _Ctx, raw, where: str, required=()) -> dict[str, Evidence]:
    if not isinstance(raw, dict):
        ctx.fail(where, f"expected an object of fields, got {_jtype(raw)}",
                 'write e.g. {"numerics": {"level": "assumption", "reason": "..."}}')
    allowed = EVIDENCE_FIELDS + ("adapter", "config", "fp_contract", "scalar", "subgroup_order", "const_eval", "textures",
                                 "buffer_int64_atomics", "shader_float64", "flexible_dimensions_nv", "flexible_layout_nv",
                                 "vulkan")
    out = {}
    for key, ev in raw.items():
        w = f"{where}.{key}"
        if key not in allowed:
            near = _close(key, allowed, n=1)
            ctx.fail(w, "evidence for an unknown field", f"use {near[0]!r}" if near else f"use one of {', '.join(allowed)}")
        ctx.keys(ev, w, ("level",), ("data", "citation", "reason", "note"))
        level = ctx.string(ev["level"], f"{w}.level", tuple(EVIDENCE_LEVELS))
        need = EVIDENCE_LEVELS[level]
        if not isinstance(ev.get(need), str) or not ev[need].strip():
            what = {"data": "where the measurement is (a file or dataset)", "citation": "the publication",
                    "reason": "why the value was chosen"}[need]
            ctx.fail(w, f"{level} evidence needs {need!r}", f"add \"{need}\": {what}")
        for opt in ("data", "citation", "reason", "note"):
            if opt in ev and not isinstance(ev[opt], str):
                ctx.fail(f"{w}.{opt}", "expected a string", "write it as text")
        out[key] = Evidence(level, ev.get("data"), ev.get("citation"), ev.get("reason"), ev.get("note"))
    for key in required:
        if key not in out:
            ctx.fail(where, f"no evidence for {key!r}",
                     f'add "{key}": {{"level": "measured" | "published" | "assumption", ...}}')
    return out


def _parse_config(ctx: _Ctx, raw, where: str, default_model):
    ctx.keys(raw, where, _CFG_REQUIRED, _CFG_OPTIONAL)
    m, n, k = (ctx.integer(raw[x], f"{where}.{x}") for x in "mnk")
    types = tuple(TYPE_BITS)
    a = ctx.string(raw["a_type"], f"{where}.a_type", types)
    b = ctx.string(raw.get("b_type", a), f"{where}.b_type", types)
    c = ctx.string(raw["c_type"], f"{where}.c_type", types)
    r = ctx.string(raw.get("result_type", c), f"{where}.result_type", types)
    sat = ctx.boolean(raw.get("saturating_accumulation", False), f"{where}.saturating_accumulation")
    scope = ctx.string(raw.get("scope", "subgroup"), f"{where}.scope", SCOPES)
    if (a in INTEGER_TYPES) != (b in INTEGER_TYPES) or (a in INTEGER_TYPES) != (c in INTEGER_TYPES):
        ctx.fail(where, "mixes integer and floating-point types", "use integer A, B and C, or float A, B and C")
    if sat and a not in INTEGER_TYPES:
        ctx.fail(f"{where}.saturating_accumulation", "saturation applies to integer configs only", "remove it")
    if sat and (TYPE_BITS[a] > 8 or TYPE_BITS[b] > 8 or TYPE_BITS[r] < 32):
        # wider products (or a narrow result) can overflow before the + C, which SPIR-V leaves
        # undefined under SaturatingAccumulation: emu models 8-bit inputs into 32 bits only
        ctx.fail(f"{where}.saturating_accumulation", f"saturation is modelled for 8-bit inputs into a "
                 f"32-bit result only, not {a} x {b} -> {r}", "remove it: the accumulation wraps")
    cfg = CoopConfig(m, n, k, a, b, c, r, sat, scope)
    model = raw.get("model", default_model["integer" if a in INTEGER_TYPES else "float"])
    if isinstance(model, (str, dict)):
        model = _model(ctx, model, f"{where}.model", ctx.filename)
    maps = _parse_map_roles(ctx, raw["lane_maps"], f"{where}.lane_maps") if "lane_maps" in raw else {}
    ev = _parse_evidence(ctx, raw["evidence"], f"{where}.evidence") if "evidence" in raw else {}
    return cfg, model, maps, ev


def _model(ctx: _Ctx, raw, where: str, profile_name: str):
    """A preset name, or a fused model written out ({"fused": {...}}, as `emu fit` writes for a GPU
    no preset reproduces): the name, or the model object."""
    if isinstance(raw, dict):
        from ..numerics.mma import fused_model_from_doc
        try:
            return fused_model_from_doc(raw, f"{profile_name} (fitted)")
        except ValueError as e:
            ctx.fail(where, str(e), "write the fused model as `emu fit` does, or name a preset")
    return ctx.string(raw, where, KNOWN_MODELS)


def _parse_map_roles(ctx: _Ctx, raw, where: str) -> dict:
    """Either one spec for every role, or {"A": spec, "B": spec, "C": spec} (any subset)."""
    if isinstance(raw, dict) and raw and set(raw) <= {"A", "B", "C"}:
        return {role: _check_spec(ctx, spec, f"{where}.{role}") for role, spec in raw.items()}
    spec = _check_spec(ctx, raw, where)
    return {"A": spec, "B": spec, "C": spec}


def _check_spec(ctx: _Ctx, spec, where: str):
    """Validate the form of a lane-map spec (whether it covers the matrix is checked on build)."""
    fix_forms = ('a family name such as "reference", {"family": name}, '
                 '{"formula": {"row": "...", "col": "..."}}, {"table": [[[row, col], ...], ...]} '
                 'or {"by_subgroup_size": {"32": spec}}')
    if isinstance(spec, str):
        ctx.string(spec, where, tuple(FAMILIES))
        return {"family": spec}
    if not isinstance(spec, dict):
        ctx.fail(where, f"a lane map must be a family name or an object, got {_jtype(spec)}", f"write {fix_forms}")
    kinds = [k for k in ("family", "formula", "table", "by_subgroup_size") if k in spec]
    if len(kinds) != 1:
        ctx.fail(where, "a lane map needs exactly one of family, formula, table, by_subgroup_size", f"write {fix_forms}")
    kind = kinds[0]
    if kind == "family":
        ctx.keys(spec, where, ("family",), ())
        ctx.string(spec["family"], f"{where}.family", tuple(FAMILIES))
    elif kind == "formula":
        ctx.keys(spec, where, ("formula",), ("elements_per_lane", "duplicated", "note"))
        f = spec["formula"]
        ctx.keys(f, f"{where}.formula", ("row", "col"), ())
        from .formula import Formula, FormulaError
        for part in ("row", "col"):
            try:
                Formula(f[part], ("lane", "i", "rows", "cols", "sg"))
            except FormulaError as exc:
                ctx.fail(f"{where}.formula.{part}", exc.message,
                         "write an integer expression in lane and i (also rows, cols, sg) using + - * // % << >> & | ^ ~ and ( )")
        if "elements_per_lane" in spec:
            ctx.integer(spec["elements_per_lane"], f"{where}.elements_per_lane")
        if "duplicated" in spec:
            ctx.boolean(spec["duplicated"], f"{where}.duplicated")
    elif kind == "table":
        ctx.keys(spec, where, ("table",), ("duplicated", "note"))
        if not isinstance(spec["table"], list):
            ctx.fail(f"{where}.table", "expected a list with one list of [row, col] pairs per lane",
                     "write table[lane][i] = [row, col]")
        if "duplicated" in spec:
            ctx.boolean(spec["duplicated"], f"{where}.duplicated")
    else:
        ctx.keys(spec, where, ("by_subgroup_size",), ())
        per = spec["by_subgroup_size"]
        if not isinstance(per, dict) or not per:
            ctx.fail(f"{where}.by_subgroup_size", "expected an object keyed by subgroup size", 'write {"32": spec}')
        spec = {"by_subgroup_size": {}}
        for key, sub in per.items():
            if not key.isdigit():
                ctx.fail(f"{where}.by_subgroup_size.{key}", "keys must be subgroup sizes", 'write e.g. "32"')
            spec["by_subgroup_size"][int(key)] = _check_spec(ctx, sub, f"{where}.by_subgroup_size.{key}")
        return spec
    return spec


def _whole_matrix_map(rows: int, cols: int, sg: int) -> LaneMap:
    import numpy as np
    per_lane = -(-rows * cols // sg)
    flat = np.arange(per_lane)[None, :] * sg + np.arange(sg)[:, None]
    coords = np.stack([flat // cols, flat % cols], axis=-1)
    coords[flat >= rows * cols] = -1
    return LaneMap(rows, cols, sg, coords, name=f"whole {rows}x{cols} matrix in every subgroup")


def _build_map(spec, cfg: CoopConfig, role: str, sg: int) -> LaneMap:
    rows, cols = cfg.shape(role)
    bits = TYPE_BITS[cfg.type_of(role)]
    if "by_subgroup_size" in spec:
        sub = spec["by_subgroup_size"].get(sg)
        if sub is None:
            raise LaneMapError(f"no lane map given for subgroup size {sg} "
                               f"(given: {', '.join(map(str, sorted(spec['by_subgroup_size'])))})")
        return _build_map(sub, cfg, role, sg)
    if "family" in spec:
        return family_map(spec["family"], role, rows, cols, bits, sg)
    label = f"{role} {rows}x{cols} sg{sg}"
    if "formula" in spec:
        return from_formula(spec["formula"]["row"], spec["formula"]["col"], rows, cols, sg,
                            spec.get("elements_per_lane"), duplicated=spec.get("duplicated", False),
                            name=f"formula {label}")
    return from_table(spec["table"], rows, cols, sg, duplicated=spec.get("duplicated", False),
                      name=f"table {label}")


def _role(role, where="") -> str:
    r = {"A": "A", "B": "B", "C": "C", "RESULT": "C", "R": "C", "D": "C"}.get(str(role).upper())
    if r is None:
        raise ProfileError(f"{where + ': ' if where else ''}unknown role {role!r}",
                           hint="use 'A', 'B' or 'C' (the result uses C's map)")
    return r
