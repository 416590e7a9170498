"""Matrix multiply-accumulate D = A*B + C under a device's numeric model, bit-accurately.

    d = mma(model, a, b, c, result_type, saturate=False, jobs=1)
        a (S, M, K), b (S, K, N), c (S, M, N): S independent subgroups at once. a and b share a
        dtype: float16, bfloat16, float8_e4m3fn, float8_e5m2 (ml_dtypes), float32, int8, uint8,
        int32 or uint32 (or mix the two 8-bit floats, or int8 and uint8). c is float16 / float32 for float inputs, an integer dtype for integer
        inputs (see below). result_type:
        'f16', 'f32', 'i32', 'u32', 'i8', 'u8' (C's type).
        Returns (S, M, N) in the result type. jobs=1 runs the serial numba kernel, jobs>1 the
        prange one on that many threads (the result is the same).
    info = explain_element(model, a_row, b_col, c_scalar, result_type)
        How the reference model produces one element, as a JSON-serialisable dict.

Models (MODELS; a model object or its preset name is accepted everywhere):
- 'exact'           one nearest-even rounding of the exact A_row . B_col + C.
- 'ieee-chain'      d = C; for k ascending: d = fma(a[k], b[k], d), each rounded nearest-even.
- 'lavapipe-chain'  products rounded to the accumulator type, summed from +0 in ascending k with a
                    rounding per add, then + C: Mesa lavapipe's lowering of cooperative matrices.
- fused presets     'nvidia-volta' ... 'nvidia-hopper', 'nvidia-blackwell', 'nvidia-rtx-blackwell',
                    'amd-cdna3': the fused multi-term adder of MMA-Sim (Xie et al.,
                    arXiv:2511.10909) and Khattak & Mikaitis (arXiv:2512.07004); FusedParams says
                    what each parameter means. tests/numerics/test_mmasim_oracle.py holds them
                    to MMA-Sim's own code (the `mmasim` package) bit for bit.
- 'int-wrap'        integers only.
Integer inputs (i8/u8 into i8/u8/i32/u32, i32/u32 into i32/u32) always give the low bits of the
exact A*B + C: it wraps modulo 2^32 (2^8 for an 8-bit result), as SPIR-V's
OpCooperativeMatrixMulAddKHR defines it, or, for 8-bit inputs into 32 bits, saturates with
saturate=True (SPIR-V SaturatingAccumulation: only the final + C saturates). So a
profile can name one float preset for all its configurations.

Each model has a plain-Python reference (`mma_ref`, used by explain_element and the tests) and a
numba kernel (`mma_kernels`) that agrees with it bit for bit; mma() runs the kernel.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

from ..errors import InvalidArgument
from . import mma_params as _k        # the kernels (numba) are imported when one runs
from . import mma_ref as _ref
from .dtypes import FLOAT_NAMES
from .mma_ref import FORMATS, FloatFormat

__all__ = ["mma", "MODELS", "get_model", "explain_element", "reference_mma", "resolve", "FusedParams",
           "FusedModel", "ExactModel", "IEEEChainModel", "LavapipeChainModel", "IntModel", "Rule"]

RESULT_TYPES = ("f16", "f32", "i32", "u32", "i8", "u8")
_ROUND_CODE = {"rne": _k.R_RNE, "rz": _k.R_RZ, "rd": _k.R_RD, "ru": _k.R_RU}
# IEEE 754 leaves the NaN produced by an invalid operation open; these models use the positive
# quiet NaN with only the top fraction bit set (assumption).
_QNAN = {"f16": 0x7E00, "f32": 0x7FC00000}


@dataclass(frozen=True)
class FusedParams:
    """One configuration of the fused multi-term adder (see mma_ref.fused_element).

    block            L: products fused per step along K (the instruction's K); blocks run in
                     ascending k, each taking the previous block's result in C's place.
    frac_bits        F: fraction bits each addend keeps below the block's largest formal exponent.
    term_rounding    how addends lose the bits below 2^(emax-F): 'rz' truncate toward zero,
                     'rd' floor.
    c_position       'inside': C (the running accumulator) is aligned with the products;
                     'outside': products are fused first, then added to C (two alignments).
    sum_frac_bits    'outside' only: F2, fraction bits the product sum keeps when C is added.
    c_frac_bits      'outside' only: fraction bits C keeps at that addition.
    outside_rounding 'outside' only: how the product sum and C lose bits there ('rz' or 'rd').
    between_blocks   'round': each block's sum is rounded to the accumulator type (final_rounding);
                     'carry': the exact block sum is carried into the next block.
    final_rounding   'rz', 'rne', 'rd' or 'ru'.
    overflow         'inf': overflow always gives infinity; 'ieee': the largest finite number
                     where the rounding direction points away from infinity.
    flush_input_subnormals, flush_output_subnormals: subnormals read or written as signed zeros.
    input_frac_bits  keep only this many fraction bits of each A/B operand (tf32: 10); None = all.
    zero_sign        'ieee': a zero result has the sign IEEE arithmetic gives it (-0 when every
                     term is -0, or when a negative sum rounds to zero); 'positive': every zero
                     result is +0, as an integer adder with a separate sign produces.
    zero_exponent    C inside (ignored outside): None, zero addends (a product with a zero factor, a zero C or
                     accumulator) take no part in the alignment; an integer, they take part with
                     this formal exponent (MMA-Sim's e_zero), which lowers the quantum of a block
                     whose other addends are all smaller.
    result_frac_bits None: the result keeps its type's fraction bits; n: the final rounding keeps
                     only n of them (same exponent range), as MMA-Sim's RZ-E8M13 for FP8
                     operands on Ada and Hopper (f32 results with 13 fraction bits).
    product_overflow False: products are exact; True: a product of magnitude 2^(emax + 1) of the
                     result type or more is an infinity of its sign before the sum (MMA-Sim's
                     TR-FDPA for AMD CDNA3: +big - big is then NaN, not the exact difference).
    """
    block: int
    frac_bits: int
    term_rounding: str = "rz"
    c_position: str = "inside"
    sum_frac_bits: int = 0
    c_frac_bits: int = 0
    outside_rounding: str = "rz"
    between_blocks: str = "round"
    final_rounding: str = "rz"
    overflow: str = "inf"
    flush_input_subnormals: bool = False
    flush_output_subnormals: bool = False
    input_frac_bits: int | None = None
    zero_sign: str = "ieee"
    zero_exponent: int | None = None
    result_frac_bits: int | None = None
    product_overflow: bool = False

    def __post_init__(self):
        ok = (1 <= self.block <= 1024 and 1 <= self.frac_bits <= 40
              and self.term_rounding in ("rz", "rd") and self.outside_rounding in ("rz", "rd")
              and self.c_position in ("inside", "outside")
              and self.between_blocks in ("round", "carry") and self.final_rounding in _ROUND_CODE
              and self.overflow in ("inf", "ieee") and self.zero_sign in ("ieee", "positive")
              and (self.zero_exponent is None or -1100 <= self.zero_exponent <= 1100)
              and (self.result_frac_bits is None or 1 <= self.result_frac_bits <= 23))
        if self.c_position == "outside":
            # the re-cut product sum and C must still fit an int64 with the block's carries
            ok = ok and 1 <= self.c_frac_bits <= self.sum_frac_bits and \
                self.sum_frac_bits + 4 + self.block.bit_length() <= 62
        if not ok:
            raise InvalidArgument(f"inconsistent FusedParams: {self}")


@dataclass(frozen=True)
class Rule:
    """A model resolved for one (input type, C type, result type): what the kernels execute."""
    kind: str                   # 'exact' | 'ieee-chain' | 'lavapipe-chain' | 'fused'
    fin: FloatFormat
    fc: FloatFormat
    facc: FloatFormat
    nan_bits: int
    fused: FusedParams | None = None
    fin_b: FloatFormat | None = None    # B's format where it differs from A's (e4m3 x e5m2)

    @property
    def fb(self) -> FloatFormat:
        return self.fin_b or self.fin


@dataclass(frozen=True)
class ExactModel:
    name: str = "exact"
    nan_f16: int = _QNAN["f16"]
    nan_f32: int = _QNAN["f32"]
    source: str = "definition: one correctly rounded (nearest-even) result"

    def rule(self, fin, fc, rt):
        return Rule("exact", fin, fc, FORMATS[rt], self.nan_f16 if rt == "f16" else self.nan_f32)


@dataclass(frozen=True)
class IEEEChainModel:
    name: str = "ieee-chain"
    nan_f16: int = _QNAN["f16"]
    nan_f32: int = _QNAN["f32"]
    source: str = "definition: K sequential fused multiply-adds, k ascending, IEEE 754 nearest-even"

    def rule(self, fin, fc, rt):
        return Rule("ieee-chain", fin, fc, FORMATS[rt], self.nan_f16 if rt == "f16" else self.nan_f32)


@dataclass(frozen=True)
class LavapipeChainModel:
    name: str = "lavapipe-chain"
    nan_f16: int = _QNAN["f16"]      # assumption: x86 would propagate NaN payloads; not modelled
    nan_f32: int = _QNAN["f32"]
    source: str = ("Mesa src/gallium/frontends/lavapipe/nir/lvp_nir_lower_cooperative_matrix.c "
                   "(lower_cmat_muladd): f2f to the accumulator type, fmul, fadd reduction over k "
                   "(ascending, from +0: assumption about llvmpipe's reduce order), then fadd C; "
                   "IEEE nearest-even with subnormals (assumption)")

    def rule(self, fin, fc, rt):
        if fin.name != "f16" and rt == "f16":
            raise InvalidArgument(f"model 'lavapipe-chain' has no {fin.name} x {fin.name} -> f16 matrix "
                             f"multiply (lavapipe converts operands to the accumulator type first, "
                             f"which is lossy for {fin.name} -> f16; not modelled)")
        return Rule("lavapipe-chain", fin, fc, FORMATS[rt], self.nan_f16 if rt == "f16" else self.nan_f32)


@dataclass(frozen=True)
class FusedModel:
    """A fused multi-term preset: parameters per result type, and for f32 operands."""
    name: str
    f16_result: FusedParams | None      # f16 (and bf16 if bf16_f16_result) operands, f16 accumulator
    f32_result: FusedParams | None      # f16/bf16 operands, f32 accumulator
    f32_inputs: FusedParams | str | None  # f32 operands (f32 accumulator): params or 'ieee-chain'
    nan_f16: int
    nan_f32: int
    source: str
    bf16_f16_result: bool = False       # bf16 x bf16 -> f16 exists (not on NVIDIA: PTX mma
                                        # takes bf16 with an f32 accumulator only)
    fp8_f16_result: FusedParams | None = None   # e4m3/e5m2 operands (FP8 has its own adder on
    fp8_f32_result: FusedParams | None = None   # NVIDIA: other F, L and result precision)

    def rule(self, fin, fc, rt):
        nan = self.nan_f16 if rt == "f16" else self.nan_f32
        if fin.name in ("e4m3", "e5m2"):
            p = self.fp8_f16_result if rt == "f16" else self.fp8_f32_result
        elif fin.name == "f32":
            p = self.f32_inputs if rt == "f32" else None
            if p == "ieee-chain":
                return Rule("ieee-chain", fin, fc, FORMATS[rt], nan)
        elif fin.name == "bf16" and rt == "f16" and not self.bf16_f16_result:
            p = None
        else:
            p = self.f16_result if rt == "f16" else self.f32_result
        if p is None:
            raise InvalidArgument(f"model {self.name!r} has no {fin.name} x {fin.name} -> {rt} "
                             f"matrix multiply (no such instruction on that device); "
                             f"pick another model or configuration")
        return Rule("fused", fin, fc, FORMATS[rt], nan, p)


def fused_model_doc(f16_result: FusedParams | None, f32_result: FusedParams | None,
                    nan_f16: int, nan_f32: int, source: str) -> dict:
    """A fused model as JSON (what `emu fit` writes into a profile for a GPU no preset matches)."""
    def params(p):
        return None if p is None else asdict(p)
    return {"fused": {"f16_result": params(f16_result), "f32_result": params(f32_result),
                      "nan_f16": nan_f16, "nan_f32": nan_f32, "source": source}}


def fused_model_from_doc(doc: dict, name: str) -> FusedModel:
    """The inverse of fused_model_doc; raises ValueError naming the bad field."""
    if not isinstance(doc, dict) or set(doc) != {"fused"} or not isinstance(doc["fused"], dict):
        raise InvalidArgument('expected {"fused": {"f16_result": {...}, "f32_result": {...}, "nan_f16": N, "nan_f32": N}}')
    d = doc["fused"]
    unknown = set(d) - {"f16_result", "f32_result", "nan_f16", "nan_f32", "source"}
    if unknown:
        raise InvalidArgument(f"unknown field(s) {', '.join(sorted(unknown))}")

    def params(key):
        v = d.get(key)
        if v is None:
            return None
        if not isinstance(v, dict):
            raise InvalidArgument(f"{key}: expected an object of FusedParams fields")
        try:
            return FusedParams(**v)
        except TypeError as e:
            raise InvalidArgument(f"{key}: {e}") from None
    f16, f32 = params("f16_result"), params("f32_result")
    if f16 is None and f32 is None:
        raise InvalidArgument("give f16_result, f32_result or both")
    nans = []
    for key, default in (("nan_f16", _QNAN["f16"]), ("nan_f32", _QNAN["f32"])):
        v = d.get(key, default)
        if not isinstance(v, int) or isinstance(v, bool):
            raise InvalidArgument(f"{key}: expected the NaN's bits as an integer")
        nans.append(v)
    return FusedModel(name, f16, f32, None, nans[0], nans[1], str(d.get("source", "profile file")))


@dataclass(frozen=True)
class IntModel:
    name: str = "int-wrap"
    source: str = ("exact integer products and sum; + C wraps modulo 2^32 (measured on the H200), "
                   "or saturates when asked (SPIR-V SaturatingAccumulation)")

    def rule(self, fin, fc, rt):
        raise InvalidArgument(f"model {self.name!r} is for integer inputs; {fin.name} inputs need a "
                         f"float model such as 'exact' or a device preset")


def _nv(block, F, tf32_block, ez16, ez32):
    """NVIDIA tensor cores, MMA-Sim's NVIDIA model (arXiv:2511.10909 and its reference code,
    github.com/microsoft/MMA-Sim, mmasim 2.1.1 nv_ptx/sim.py and arithmetic/fdpa.py): C joins the
    products inside one fused sum (T-FDPA), addends truncated toward zero to F fraction bits
    below the largest exponent, zero addends aligning at e_zero (ez16 for an f16 result, ez32 for
    f32), chained instructions round between blocks, f32 results rounded toward zero, f16 results
    to nearest even, subnormals kept (exponent clamped at emin), every zero result +0, canonical
    NaN 0x7FFF / 0x7FFFFFFF (all confirmed on the H200 for Hopper). Overflow to infinity also
    under round-toward-zero: MMA-Sim's code; unreachable from f16 operands with an f32 result,
    so unverified (assumption for bf16 operands)."""
    def p(L, rounding, ez, **kw):
        return FusedParams(block=L, frac_bits=F, final_rounding=rounding, zero_sign="positive",
                           zero_exponent=ez, **kw)
    tf32 = None if tf32_block is None else p(tf32_block, "rz", ez32, input_frac_bits=10)
    return p(block, "rne", ez16), p(block, "rz", ez32), tf32


def _nv_fp8(block, F, ez16, ez32, result_frac_bits=None):
    """NVIDIA FP8 (e4m3, e5m2) operands, MMA-Sim's T-FDPA with the FP8 instruction's own F and
    L; on Ada and Hopper an f32 result keeps 13 fraction bits (RZ-E8M13)."""
    kw = dict(block=block, frac_bits=F, zero_sign="positive")
    return (FusedParams(final_rounding="rne", zero_exponent=ez16, **kw),
            FusedParams(final_rounding="rz", zero_exponent=ez32, result_frac_bits=result_frac_bits, **kw))


_NV_SRC = ("MMA-Sim (Xie et al., arXiv:2511.10909, NVIDIA T-FDPA model; values from its reference "
           "implementation github.com/microsoft/MMA-Sim)")


def _nvidia(name, f16_block, F, tf32_block, ez16, ez32, fp8=None, source=_NV_SRC):
    f16, f32, tf32 = _nv(f16_block, F, tf32_block, ez16, ez32)
    fp16, fp32 = fp8 or (None, None)
    return FusedModel(name, f16, f32, tf32, 0x7FFF, 0x7FFFFFFF, source,
                      fp8_f16_result=fp16, fp8_f32_result=fp32)


MODELS = {
    "exact": ExactModel(),
    "ieee-chain": IEEEChainModel(),
    "lavapipe-chain": LavapipeChainModel(),
    # F, L (MMA-Sim's L_max: 8 bytes of operands per lane on Volta, 16 on Turing to Ada, 32 from
    # Hopper on) and e_zero (-19/-131 on Volta, -20/-132 Turing to Ada, -21/-133 from Hopper on,
    # for f16/f32 results) are MMA-Sim's _mma_F_bits, _mma_L_max_bytes and _mma_e_zero_*.
    # Volta: mma.m8n8k4 is the only f16 instruction -> L = 4; F = 23. No tf32.
    "nvidia-volta": _nvidia("nvidia-volta", 4, 23, None, -19, -131),
    # Turing: m16n8k8 -> L = 8; F = 24. No tf32.
    "nvidia-turing": _nvidia("nvidia-turing", 8, 24, None, -20, -132),
    # Ampere: m16n8k16 runs as two fused k8 halves -> L = 8, F = 24; tf32 m16n8k8 -> L = 4.
    "nvidia-ampere": _nvidia("nvidia-ampere", 8, 24, 4, -20, -132),
    # Ada Lovelace: as Ampere for f16/bf16/tf32; FP8 (mma m16n8k32 e4m3/e5m2, sm_89): 16 one-byte
    # products per step, F = 13, f32 results truncated to 13 fraction bits (MMA-Sim).
    "nvidia-ada": _nvidia("nvidia-ada", 8, 24, 4, -20, -132, _nv_fp8(16, 13, -20, -132, 13)),
    # Hopper: k16 fused in one step -> L = 16, F = 25 (MMA-Sim; the README of the H200 data says
    # 25 too). Pinned by tests/data/hw/h200, all 786432 float results bit for bit; each neighbour
    # breaks some (of them): F = 24 (94806), F = 26 (48331), L = 8 (145825), RNE f32 results
    # (148430), RZ f16 results (159730), C outside (2653), RZ to f32 then RNE to f16 (15),
    # renormalised subnormal exponents (674), zeros taking part in the alignment at the format's
    # emin (62; MMA-Sim's e_zero, -21 and -133, breaks none).
    # tf32 m16n8k8 is one fused step on Hopper -> L = 8 (MMA-Sim; not measured here).
    # Zero results are +0 on the H200: none of the 47,000 zeros among its special-value vectors
    # (tests/data/hw/h200/mma_special.npz) is -0, including 5 where IEEE arithmetic gives -0 (a
    # tiny negative sum rounding to zero in f16, and a sum of zeros with C = -0).
    # FP8: MMA-Sim models it only for wgmma (m64nNk32): L = 32, F = 13, f32 results with 13
    # fraction bits. Which instruction NVIDIA's Vulkan driver issues for an FP8 cooperative
    # matrix on Hopper is not published (assumption: wgmma's arithmetic).
    "nvidia-hopper": _nvidia("nvidia-hopper", 16, 25, 8, -21, -133, _nv_fp8(32, 13, -21, -133, 13),
                             _NV_SRC + "; verified against H200 recordings (tests/data/hw/h200)"),
    # Blackwell (sm_100, B200): mma.sync f16/bf16/tf32 as Hopper (MMA-Sim's "Blackwell": L = 16,
    # tf32 L = 8, F = 25); FP8 only through tcgen05.mma kind::f8f6f4: L = 32, F = 25, full f32
    # results (MMA-Sim). Which instruction a Vulkan FP8 cooperative matrix runs on B200 is not
    # published (assumption: tcgen05's arithmetic).
    "nvidia-blackwell": _nvidia("nvidia-blackwell", 16, 25, 8, -21, -133, _nv_fp8(32, 25, -21, -133)),
    # RTX Blackwell (sm_120, RTX 50x0): mma.sync, 32 bytes of operands per step: f16/bf16 L = 16,
    # tf32 L = 8, FP8 (m16n8k32, sm_89 and kind::f8f6f4 alike) L = 32; F = 25, full f32 results.
    "nvidia-rtx-blackwell": _nvidia("nvidia-rtx-blackwell", 16, 25, 8, -21, -133, _nv_fp8(32, 25, -21, -133)),
    # AMD CDNA3 (MI300) f16/bf16 MFMA, MMA-Sim's TR-FDPA: L = 8 products truncated toward zero to
    # F = 24 fraction bits below their largest exponent and summed; C added outside: the product
    # sum floored to F2 = 31 and C floored to 24 fraction bits below E = max(exponents), then one
    # nearest-even rounding to f32; a product beyond f32's range is an infinity before the sum;
    # NaN 0x7FFFFFFF (all MMA-Sim). No f16 accumulator on CDNA3. f32 MFMA is a chain of FMAs
    # (MMA-Sim). Assumptions: zero products take no part in the alignment (as measured on the
    # H200; MMA-Sim's code gives zeros exponent -126, which matters only below 2^-126), IEEE
    # overflow of the sum.
    "amd-cdna3": FusedModel(
        "amd-cdna3", None,
        FusedParams(block=8, frac_bits=24, term_rounding="rz", c_position="outside",
                    sum_frac_bits=31, c_frac_bits=24, outside_rounding="rd",
                    final_rounding="rne", overflow="ieee", product_overflow=True),
        "ieee-chain", _QNAN["f16"], 0x7FFFFFFF,
        "MMA-Sim (arXiv:2511.10909, AMD CDNA3 TR-FDPA model and reference code)"),
    "int-wrap": IntModel(),
}


def get_model(model):
    """A model object, from itself or its preset name."""
    if isinstance(model, str):
        try:
            return MODELS[model]
        except KeyError:
            raise InvalidArgument(f"unknown MMA model {model!r}; known: {', '.join(MODELS)}") from None
    if hasattr(model, "rule") and hasattr(model, "name"):
        return model
    raise InvalidArgument(f"not an MMA model: {model!r}")


# ------------------------------------------------------------------ dtypes and packing

FLOAT_DTYPES = FLOAT_NAMES         # dtype -> format name, bfloat16 known once ml_dtypes is
_INT_DTYPES = {np.dtype(np.int8): "i8", np.dtype(np.uint8): "u8",
               np.dtype(np.int32): "i32", np.dtype(np.uint32): "u32"}
_ACC_DTYPES = {"f16": np.dtype(np.float16), "f32": np.dtype(np.float32),
               "i32": np.dtype(np.int32), "u32": np.dtype(np.uint32),
               "i8": np.dtype(np.int8), "u8": np.dtype(np.uint8)}


def bits32(x: np.ndarray) -> np.ndarray:
    """Raw bit patterns widened to uint32, C-contiguous (one kernel signature for every format)."""
    if x.dtype.itemsize in (1, 2):
        return np.ascontiguousarray(x).view(np.uint8 if x.dtype.itemsize == 1 else np.uint16).astype(np.uint32)
    return np.ascontiguousarray(x).view(np.uint32)


def pack_rule(rule: Rule) -> np.ndarray:
    p = np.zeros(_k.NPRM, np.int64)
    p[_k.P_KIND] = {"exact": _k.K_EXACT, "ieee-chain": _k.K_IEEE, "lavapipe-chain": _k.K_LAVAPIPE,
                    "fused": _k.K_FUSED}[rule.kind]
    p[_k.P_IN_EB], p[_k.P_IN_FB] = rule.fin.ebits, rule.fin.fbits
    p[_k.P_IN_KEEP] = rule.fin.fbits
    p[_k.P_C_EB], p[_k.P_C_FB] = rule.fc.ebits, rule.fc.fbits
    p[_k.P_ACC_EB], p[_k.P_ACC_FB] = rule.facc.ebits, rule.facc.fbits
    p[_k.P_NAN] = rule.nan_bits
    p[_k.P_IN_FN] = rule.fin.finite_only
    p[_k.P_INB_EB], p[_k.P_INB_FB], p[_k.P_INB_FN] = rule.fb.ebits, rule.fb.fbits, rule.fb.finite_only
    p[_k.P_RES_FB] = rule.facc.fbits
    f = rule.fused
    if f is not None:
        if f.input_frac_bits is not None:
            p[_k.P_IN_KEEP] = min(f.input_frac_bits, rule.fin.fbits)
        p[_k.P_L], p[_k.P_F] = f.block, f.frac_bits
        p[_k.P_TERM] = _ROUND_CODE[f.term_rounding]
        p[_k.P_C_OUT] = f.c_position == "outside"
        p[_k.P_F2], p[_k.P_FC] = f.sum_frac_bits, f.c_frac_bits
        p[_k.P_RECUT] = _ROUND_CODE[f.outside_rounding]
        p[_k.P_CARRY] = f.between_blocks == "carry"
        p[_k.P_FINAL] = _ROUND_CODE[f.final_rounding]
        p[_k.P_OVF_INF] = f.overflow == "inf"
        p[_k.P_FLUSH_IN] = f.flush_input_subnormals
        p[_k.P_FLUSH_OUT] = f.flush_output_subnormals
        p[_k.P_ZERO_POS] = f.zero_sign == "positive"
        p[_k.P_EZERO_ON] = f.zero_exponent is not None
        p[_k.P_EZERO] = f.zero_exponent or 0
        p[_k.P_PROD_OVF] = f.product_overflow
        if f.result_frac_bits is not None:
            p[_k.P_RES_FB] = min(f.result_frac_bits, rule.facc.fbits)
    return p


def _check(a, b, c, result_type, saturate):
    """Validate shapes and types; returns (is_int, input format name, C format name)."""
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    if result_type not in RESULT_TYPES:
        raise InvalidArgument(f"result_type must be one of {RESULT_TYPES}, got {result_type!r}")
    if a.ndim != 3 or b.ndim != 3 or c.ndim != 3:
        raise InvalidArgument(f"mma wants a (S, M, K), b (S, K, N), c (S, M, N); got shapes "
                         f"{a.shape}, {b.shape}, {c.shape}")
    S, M, K = a.shape
    if b.shape[:2] != (S, K) or c.shape != (S, M, b.shape[2]):
        raise InvalidArgument(f"mma shapes disagree: a {a.shape}, b {b.shape}, c {c.shape} "
                         f"(want (S, M, K), (S, K, N), (S, M, N))")
    bytes8 = (np.dtype(np.int8), np.dtype(np.uint8))
    fp8 = a.dtype in FLOAT_DTYPES and b.dtype in FLOAT_DTYPES and \
        {FLOAT_DTYPES[a.dtype], FLOAT_DTYPES[b.dtype]} <= {"e4m3", "e5m2"}
    if a.dtype != b.dtype and not (a.dtype in bytes8 and b.dtype in bytes8) and not fp8:
        # i8 x u8 (SPIR-V's per-operand signedness) is exact products of the two values, e4m3 x
        # e5m2 (PTX's and SPIR-V's mixed FP8) the same for floats; other pairs have no
        # multiply-add a device lists
        raise InvalidArgument(f"a and b must share a dtype (or be i8 and u8, or e4m3 and e5m2), got "
                              f"{a.dtype} and {b.dtype}")
    if a.dtype in _INT_DTYPES:
        fin = _INT_DTYPES[a.dtype]
        accs = ("i32", "u32") if fin in ("i32", "u32") else ("i8", "u8", "i32", "u32")
        if result_type not in accs or c.dtype.kind not in "iu" or \
                c.dtype.itemsize != _ACC_DTYPES[result_type].itemsize:
            raise InvalidArgument(f"integer inputs ({a.dtype}) need an {'/'.join(accs)} C and result, "
                                  f"got C {c.dtype} and result {result_type!r}")
        if saturate and (fin in ("i32", "u32") or result_type in ("i8", "u8")):
            # SPIR-V leaves an overflowing product sum undefined under SaturatingAccumulation;
            # 8-bit products into 32 bits cannot overflow at any K a device has, these can
            raise InvalidArgument(f"saturate (SaturatingAccumulation) is modelled for 8-bit inputs "
                                  f"into an i32/u32 result only, not {fin} into {result_type}")
        return True, _INT_DTYPES[a.dtype], None, None
    if a.dtype not in FLOAT_DTYPES:
        raise InvalidArgument(f"unsupported input dtype {a.dtype}: float16, bfloat16, float32, "
                              f"float8_e4m3fn, float8_e5m2, int8, uint8, int32, uint32")
    if result_type not in ("f16", "f32") or c.dtype not in (np.dtype(np.float16), np.dtype(np.float32)):
        raise InvalidArgument(f"float inputs ({a.dtype}) need an f16/f32 C and result, got C {c.dtype} "
                         f"and result {result_type!r}")
    if saturate:
        raise InvalidArgument("saturate (SaturatingAccumulation) applies to integer MMA only")
    return False, FLOAT_DTYPES[a.dtype], "f16" if c.dtype == np.float16 else "f32", FLOAT_DTYPES[b.dtype]


def _rule(model, fin: str, fc: str, rt: str, fin_b: str | None = None) -> Rule:
    """The model's Rule for A of format fin and B of fin_b (e4m3 x e5m2: the FP8 rule, B read in
    its own format)."""
    rule = get_model(model).rule(FORMATS[fin], FORMATS[fc], rt)
    return rule if fin_b in (None, fin) else replace(rule, fin_b=FORMATS[fin_b])


def resolve(model, in_fmt: str, c_fmt: str, result_type: str) -> Rule:
    """The Rule a model applies to (input format, C format, result type), e.g. ('f16', 'f32',
    'f32'); ValueError if the model has no such multiply (a profile can check its configs)."""
    return get_model(model).rule(FORMATS[in_fmt], FORMATS[c_fmt], result_type)


def _run(kernel_s, kernel_p, jobs, *args):
    if jobs is None or jobs <= 1:
        kernel_s(*args)
        return
    import numba
    n = max(1, min(int(jobs), numba.config.NUMBA_NUM_THREADS))
    old = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        kernel_p(*args)
    finally:
        numba.set_num_threads(old)


_PRM: dict = {}


def packed(model, a_dtype, c_dtype, result_type: str):
    """The packed rule of `model` for operands of numpy dtype a_dtype into C of c_dtype (cached),
    or None where mma_fast's kernel does not apply (integers, other float models)."""
    key = (model, np.dtype(a_dtype), np.dtype(c_dtype), result_type)
    prm = _PRM.get(key)
    if prm is None:
        prm = False
        if key[1].kind == "f" or key[1].name == "bfloat16":
            try:
                fin = FLOAT_DTYPES[key[1]]
                fc = "f16" if key[2] == np.float16 else "f32"
                prm = pack_rule(get_model(model).rule(FORMATS[fin], FORMATS[fc], result_type))
                if not _k.applies(prm):
                    prm = False
            except (KeyError, ValueError):
                prm = False
        _PRM[key] = prm
    return None if prm is False else prm


def frag_mma_with(k, model, a, b, c, maps, result_type: str, subgroups: np.ndarray, sg: int,
                  jobs: int | None = 1):
    """emu/numerics/mma_fast.py's frag_mma (see there) with its compiled kernels given in `k`:
    tiles (mma_tile.tiles), float_mma, run, run_exact (mma_fast._run, _run_exact) and reference
    (mma_fast._reference), so that a caller may run their saved machine code without importing
    numba (emu/jit/coop_fast.py); mma_fast.frag_mma passes numba's."""
    prm = packed(model, a.dtype, c.dtype, result_type)
    if prm is None:
        return None
    la, lb, lc, lo = maps
    odt = np.dtype(np.float16 if result_type == "f16" else np.float32)
    nsub = a.shape[0] // sg
    out = np.zeros((nsub, sg, lo.elements_per_lane), odt)
    if (_k.covers(prm, la.rows, lb.cols, la.cols) and a.dtype.itemsize == b.dtype.itemsize == 2
            and c.dtype.itemsize == 4 and odt.itemsize == 4):
        # Hopper's 16 x 16 x 16 step in vector registers, as matrix_mma runs it: the same bits,
        # and a sixth of _run's cold compile (_run then compiles only where tiles leaves a subgroup)
        sgs = np.ascontiguousarray(subgroups, np.int64)
        A, B, C = (np.ascontiguousarray(lm.to_matrix(_frag_bits(x, nsub, sg)[sgs])) for lm, x in zip((la, lb, lc), (a, b, c)))
        D = np.empty(C.shape, np.uint32)
        need = np.zeros(len(sgs), np.bool_)
        k.tiles(A, B, C, D, prm, need)
        if need.any():
            o = np.empty((int(need.sum()),) + D.shape[1:], np.uint32)
            k.float_mma(A[need], B[need], C[need], o, prm)
            D[need] = o
        out.view(np.uint32)[sgs] = lo.to_fragments(D)
        zero_sign(out.view(np.uint32), prm)
        return out.reshape(nsub * sg, -1)
    args = (_frag_bits(a, nsub, sg), _frag_bits(b, nsub, sg), _frag_bits(c, nsub, sg), out.view(_FRAG_BITS[odt.itemsize]),
            la.lane_idx, la.elem_idx, lb.lane_idx, lb.elem_idx, lc.lane_idx, lc.elem_idx,
            lo.rows_idx, lo.cols_idx, lo.valid, np.ascontiguousarray(subgroups, np.int64), prm,
            np.zeros(len(subgroups), np.bool_))
    _frag_dispatch(k, args, len(subgroups), jobs)
    need = args[-1]
    if need.any():
        # subgroups with infinities, NaNs, overflow or wide exact sums: the reference kernel
        sg_ = np.asarray(subgroups)[need]
        A, B, C = (lm.to_matrix(x.reshape(nsub, sg, -1)[sg_]) for lm, x in zip((la, lb, lc), (a, b, c)))
        D = np.empty(C.shape, np.uint32)
        k.reference(bits32(A), bits32(B), bits32(C), D, prm)
        D = (D.astype(np.uint16) if odt.itemsize == 2 else D).view(odt)
        out[sg_] = lo.to_fragments(D)
    zero_sign(out.view(_FRAG_BITS[odt.itemsize]), prm)
    return out.reshape(nsub * sg, -1)


_FRAG_BITS = {2: np.uint16, 4: np.uint32}


def _frag_bits(x, nsub: int, sg: int):
    x = np.ascontiguousarray(x)
    return x.view(_FRAG_BITS[x.dtype.itemsize]).reshape(nsub, sg, -1)


def _frag_dispatch(k, args, n, jobs):
    from .pool import run_chunks
    # the lane maps as unsigned indices: numba then drops the negative-index wrap-around of
    # every gather and scatter (they are never negative: lanemap.LaneMap)
    args = args[:4] + tuple(x.astype(np.uint64) for x in args[4:12]) + args[12:]
    prm = args[-2]
    only32 = _k.only32(prm, args[4].shape[0], args[6].shape[1], args[4].shape[1])
    if int(prm[_k.P_KIND]) == _k.K_EXACT:
        run_chunks(k.run_exact, n, 1 if jobs is None else int(jobs), *args, grain=64)
    else:
        run_chunks(k.run, n, 1 if jobs is None else int(jobs), *args, _k.use32(prm), None if only32 else True,
                   True, grain=64)


def zero_sign(bits: np.ndarray, prm: np.ndarray) -> None:
    """Apply the model's sign rule for zero results to raw result bits (packed parameters `prm`),
    in place. Every kernel path calls it after computing: the sign of a zero only matters at the
    end, since inside a fused sum a zero adds nothing."""
    if prm[_k.P_ZERO_POS]:
        bits[bits == (1 << int(prm[_k.P_ACC_EB] + prm[_k.P_ACC_FB]))] = 0


def mma(model, a, b, c, result_type: str, saturate: bool = False, *, jobs: int = 1) -> np.ndarray:
    """D = A*B + C for S subgroups at once under `model` (see the module doc)."""
    is_int, fin, fc, fin_b = _check(a, b, c, result_type, saturate)
    get_model(model)                    # an unknown name is an error for integers too
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    if is_int:
        signed = result_type == "i32"
        lo, hi = (-(1 << 31), (1 << 31) - 1) if signed else (0, (1 << 32) - 1)
        out = np.empty(c.shape, np.int64)
        # 32-bit inputs go in as their int32 bits: congruent modulo 2^32, and the kernel's int64
        # sum wraps modulo 2^64, so the low 32 (or 8) bits are those of the exact sum
        a32, b32 = (np.ascontiguousarray(x.view(np.int32) if x.dtype.itemsize == 4 else x, dtype=np.int32)
                    for x in (a, b))
        from . import mma_kernels
        _run(mma_kernels.int_mma_serial, mma_kernels.int_mma_parallel, jobs, a32, b32,
             np.ascontiguousarray(c, dtype=np.int64), out, bool(saturate), lo, hi)
        out = out.astype(np.uint32)
        if result_type in ("i8", "u8"):
            out = out.astype(np.uint8)            # the low 8 bits: wraps modulo 2^8
        return out.view(_ACC_DTYPES[result_type])
    rule = _rule(model, fin, fc, result_type, fin_b)
    out = np.empty(c.shape, np.uint32)
    prm = pack_rule(rule)
    from . import mma_kernels
    _run(mma_kernels.float_mma_serial, mma_kernels.float_mma_parallel, jobs, bits32(a), bits32(b), bits32(c), out,
         prm)
    zero_sign(out, prm)
    if result_type == "f16":
        return out.astype(np.uint16).view(np.float16)
    return out.view(np.float32)


def reference_mma(model, a, b, c, result_type: str, saturate: bool = False) -> np.ndarray:
    """mma() through the plain-Python reference, element by element (slow; for tests)."""
    is_int, fin, fc, fin_b = _check(a, b, c, result_type, saturate)
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    S, M, K = a.shape
    N = b.shape[2]
    if is_int:
        out = np.empty((S, M, N), np.int64)
        for s in range(S):
            for i in range(M):
                for j in range(N):
                    out[s, i, j] = _ref.int_element(a[s, i, :].tolist(), b[s, :, j].tolist(),
                                                    int(c[s, i, j]), result_type, saturate)
        return out.astype(_ACC_DTYPES[result_type])
    rule = _rule(model, fin, fc, result_type, fin_b)
    fn = _ref.ELEMENT[rule.kind]
    ab, bb, cb = bits32(a), bits32(b), bits32(c)
    out = np.empty((S, M, N), np.uint32)
    for s in range(S):
        for i in range(M):
            for j in range(N):
                out[s, i, j] = fn(rule, ab[s, i, :].tolist(), bb[s, :, j].tolist(), int(cb[s, i, j]))
    zero_sign(out, pack_rule(rule))
    if result_type == "f16":
        return out.astype(np.uint16).view(np.float16)
    return out.view(np.float32)


# ------------------------------------------------------------------ explain

def explain_element(model, a_row, b_col, c_scalar, result_type: str, saturate: bool = False) -> dict:
    """A readable account of how the reference model produces one element (JSON-serialisable):
    the inputs, each step or block (exact products, alignment exponent, every addend's kept
    value, block sums, roundings), the result bits and, beside them, the exact value of
    A_row . B_col + C and its correctly rounded (nearest-even) bits."""
    a_row, b_col = np.asarray(a_row), np.asarray(b_col)
    if result_type in _ACC_DTYPES and not isinstance(c_scalar, (np.ndarray, np.generic)):
        c_scalar = np.asarray(c_scalar, _ACC_DTYPES[result_type])   # a plain Python number
    c_arr = np.asarray(c_scalar).reshape(1, 1, 1)
    if a_row.ndim != 1 or b_col.shape != a_row.shape:
        raise InvalidArgument(f"explain_element wants a_row (K,) and b_col (K,), got {a_row.shape}, {b_col.shape}")
    is_int, fin, fc, fin_b = _check(a_row.reshape(1, 1, -1), b_col.reshape(1, -1, 1), c_arr, result_type, saturate)
    m = get_model(model)
    info: dict = {"model": m.name, "result_type": result_type}
    if is_int:
        trace: dict = {}
        r = _ref.int_element(a_row.tolist(), b_col.tolist(), int(c_arr.item()), result_type, saturate, trace)
        wrap = "wrapping mod 2^8" if result_type in ("i8", "u8") else "wrapping mod 2^32"
        info.update(rule="integer: exact products and sum, then + C " + ("saturating" if saturate else wrap),
                    input_type=fin, inputs={"a": [int(x) for x in a_row], "b": [int(x) for x in b_col],
                                            "c": int(c_arr.item())},
                    steps=trace["steps"], result={"value": r, "bits": f"0x{r & 0xFF:02x}" if result_type in ("i8", "u8")
                                                         else f"0x{r & 0xFFFFFFFF:08x}"})
        return info
    rule = _rule(m, fin, fc, result_type, fin_b)
    ab, bb, cb = bits32(a_row).tolist(), bits32(b_col).tolist(), int(bits32(c_arr).item())
    fi, fib, fcf, fa = rule.fin, rule.fb, rule.fc, rule.facc
    trace = {}
    bits = _ref.ELEMENT[rule.kind](rule, ab, bb, cb, trace)
    if rule.fused is not None and rule.fused.zero_sign == "positive" and \
            bits == 1 << (rule.facc.ebits + rule.facc.fbits):
        bits = 0
        trace["steps"].append({"step": "zero sign", "rule": "a zero result is +0 on this device"})
    info["rule"] = rule.kind
    if rule.fused is not None:
        info["params"] = asdict(rule.fused)
    info["input_type"] = fin
    info["c_type"] = fc
    info["inputs"] = {
        "a": [{"bits": _ref.bits_str(x, fi), "value": _ref.value_str(_ref.decode(x, fi))} for x in ab],
        "b": [{"bits": _ref.bits_str(x, fib), "value": _ref.value_str(_ref.decode(x, fib))} for x in bb],
        "c": {"bits": _ref.bits_str(cb, fcf), "value": _ref.value_str(_ref.decode(cb, fcf))},
    }
    info.update(trace)
    d = _ref.decode(bits, fa)
    info["result"] = {"bits": _ref.bits_str(bits, fa), "value": _ref.value_str(d)}
    # the exact value, and its correctly rounded bits, for comparison
    A = [_ref.decode(x, fi) for x in ab]
    B = [_ref.decode(x, fib) for x in bb]
    C = _ref.decode(cb, fcf)
    cr = _ref.sum_round([(x, y) for x, y in zip(A, B)] + [C], fa, "rne", _QNAN[result_type])
    special = _ref.combine_specials([_ref.product_special(x, y) for x, y in zip(A, B)] + [_ref.special_of(C)])
    if special is None:
        terms = [(x.neg != y.neg, x.mant * y.mant, x.lsb + y.lsb) for x, y in zip(A, B)
                 if x.cls == _ref.FINITE and y.cls == _ref.FINITE]
        if C.cls == _ref.FINITE:
            terms.append((C.neg, C.mant, C.lsb))
        neg, mag, lsb = _ref.exact_sum(terms)
        exact = {"value": _ref.dyadic_hex(neg, mag, lsb), "approx": _ref.dyadic_float_str(neg, mag, lsb)}
    else:
        exact = {"value": "nan" if special[0] == _ref.NAN else ("-inf" if special[1] else "inf")}
    exact["correctly_rounded_bits"] = _ref.bits_str(cr, fa)
    exact["correctly_rounded_value"] = _ref.value_str(_ref.decode(cr, fa))
    info["exact"] = exact
    both_nan = d.cls == _ref.NAN and _ref.decode(cr, fa).cls == _ref.NAN
    info["matches_correctly_rounded"] = bool(both_nan or bits == cr)
    return info
