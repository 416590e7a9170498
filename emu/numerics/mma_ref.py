"""Reference MMA arithmetic: one output element at a time, in plain Python integers.

Everything here is exact: a float is decoded into a sign, an integer significand and an exponent,
products are integer products, alignment is an integer shift and rounding is done on integers.
No host float arithmetic decides a result bit (dyadic_float_str only prints an approximation). These functions are
the readable statement of each model's rule; the numba kernels in `mma_kernels` must agree with
them bit for bit (tests/numerics/test_mma.py), and `explain_element` reads their trace.

Vocabulary used throughout (also in the kernels):
- a decoded float is (neg, cls, mant, exp): value = (-1)^neg * mant * 2^(exp - fbits), where
  `exp` is the *formal* exponent: the biased exponent field clamped to at least 1, minus the bias.
  A subnormal therefore keeps exponent emin and a significand below 1.0 -- the way the hardware
  sees it (the H200 data rejects renormalising subnormals before alignment).
- a term is (neg, mag, lsb, fexp): value = (-1)^neg * mag * 2^lsb, `fexp` being the exponent the
  fused adder aligns on (for a product: the sum of the two formal exponents).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

ZERO, FINITE, INF, NAN = 0, 1, 2, 3
ROUNDINGS = ("rne", "rz", "rd", "ru")


@dataclass(frozen=True)
class FloatFormat:
    name: str
    ebits: int
    fbits: int
    finite_only: bool = False   # OCP e4m3 ("fn"): no infinities; the top binade is finite but for
                                # the all-ones pattern, NaN (only inputs are in such a format)

    @property
    def nbits(self) -> int:
        return 1 + self.ebits + self.fbits

    @property
    def bias(self) -> int:
        return (1 << (self.ebits - 1)) - 1

    @property
    def emin(self) -> int:
        return 1 - self.bias

    @property
    def emax(self) -> int:
        return self.bias

    def inf_bits(self, neg: bool) -> int:
        return (int(neg) << (self.nbits - 1)) | (((1 << self.ebits) - 1) << self.fbits)

    def max_finite_bits(self, neg: bool) -> int:
        return self.inf_bits(neg) - 1


FORMATS = {
    "f16": FloatFormat("f16", 5, 10),
    "bf16": FloatFormat("bf16", 8, 7),
    "f32": FloatFormat("f32", 8, 23),
    "e4m3": FloatFormat("e4m3", 4, 3, finite_only=True),
    "e5m2": FloatFormat("e5m2", 5, 2),
}


@dataclass(frozen=True)
class Decoded:
    neg: bool
    cls: int
    mant: int
    exp: int
    fbits: int

    @property
    def lsb(self) -> int:
        return self.exp - self.fbits


def decode(bits: int, fmt: FloatFormat, keep_fbits: int | None = None, flush: bool = False) -> Decoded:
    """Split raw bits. keep_fbits < fbits clears the low fraction bits first (tf32 operands: the
    tensor core reads only the top 10 fraction bits of an f32); flush turns subnormals into zeros."""
    bits = int(bits)
    if keep_fbits is not None and keep_fbits < fmt.fbits:
        bits &= ~((1 << (fmt.fbits - keep_fbits)) - 1)
    neg = bool((bits >> (fmt.nbits - 1)) & 1)
    e = (bits >> fmt.fbits) & ((1 << fmt.ebits) - 1)
    f = bits & ((1 << fmt.fbits) - 1)
    if e == (1 << fmt.ebits) - 1 and not fmt.finite_only:
        return Decoded(neg, NAN if f else INF, 0, 0, fmt.fbits)
    if e == (1 << fmt.ebits) - 1 and f == (1 << fmt.fbits) - 1:
        return Decoded(neg, NAN, 0, 0, fmt.fbits)
    if e == 0:
        if f == 0 or flush:
            return Decoded(neg, ZERO, 0, fmt.emin, fmt.fbits)
        return Decoded(neg, FINITE, f, fmt.emin, fmt.fbits)
    return Decoded(neg, FINITE, f | (1 << fmt.fbits), e - fmt.bias, fmt.fbits)


def round_dyadic(neg: bool, mag: int, lsb: int, fmt: FloatFormat, mode: str,
                 overflow: str = "ieee", flush: bool = False) -> int:
    """Bits of the value (-1)^neg * mag * 2^lsb rounded into fmt.

    mode: 'rne' nearest-even, 'rz' toward zero, 'rd' toward -inf, 'ru' toward +inf.
    overflow: 'ieee' (inf, or the largest finite number where the mode rounds toward it) or
    'inf' (always infinity). flush: a subnormal result becomes a zero of the same sign."""
    sign = int(neg) << (fmt.nbits - 1)
    if mag == 0:
        return sign
    top = lsb + mag.bit_length() - 1            # exponent of the leading bit
    e = max(top, fmt.emin)                      # subnormal range: fixed quantum
    shift = (e - fmt.fbits) - lsb               # drop this many low bits of mag
    if shift <= 0:
        q = mag << -shift
    else:
        q, rem = mag >> shift, mag & ((1 << shift) - 1)
        half = 1 << (shift - 1)
        if mode == "rne":
            up = rem > half or (rem == half and q & 1)
        elif mode == "rz":
            up = False
        elif mode == "rd":
            up = neg and rem != 0
        elif mode == "ru":
            up = (not neg) and rem != 0
        else:
            raise ValueError(mode)
        q += int(up)
    if q == 1 << (fmt.fbits + 1):               # rounding carried into a new binade
        q >>= 1
        e += 1
    if e > fmt.emax:
        to_inf = overflow == "inf" or mode == "rne" or (mode == "rd" and neg) or (mode == "ru" and not neg)
        return fmt.inf_bits(neg) if to_inf else fmt.max_finite_bits(neg)
    if q < (1 << fmt.fbits):                    # subnormal (e == emin)
        return sign if flush else sign | q
    return sign | ((e + fmt.bias) << fmt.fbits) | (q - (1 << fmt.fbits))


def zero_sign(zero_negs: list[bool], mode: str) -> bool:
    """IEEE 754 sign of an exact zero sum of zeros: -0 only if every addend is -0 (any, under 'rd')."""
    if not zero_negs:
        return mode == "rd"
    return any(zero_negs) if mode == "rd" else all(zero_negs)


def shift_round(v: int, sh: int, how: str) -> int:
    """v * 2^sh made an integer: exact for sh >= 0, else truncated ('rz') or floored ('rd')."""
    if sh >= 0:
        return v << sh
    if how == "rd":
        return v >> -sh                         # Python's >> floors
    mag = abs(v) >> -sh
    return -mag if v < 0 else mag


# ---------------------------------------------------------------- exact value helpers (for people)

def dyadic_hex(neg: bool, mag: int, lsb: int) -> str:
    """Exact value as a C99 hex-float string, any precision: e.g. -0x1.8p+3."""
    if mag == 0:
        return "-0x0p+0" if neg else "0x0p+0"
    nb = mag.bit_length()
    exp = lsb + nb - 1
    frac = mag - (1 << (nb - 1))
    fbits = nb - 1
    pad = (-fbits) % 4
    frac <<= pad
    digits = (fbits + pad) // 4
    body = f"{frac:0{digits}x}".rstrip("0") if digits else ""
    return f"{'-' if neg else ''}0x1{'.' + body if body else ''}p{exp:+d}"


def dyadic_float_str(neg: bool, mag: int, lsb: int) -> str:
    """A short decimal approximation (repr of the nearest double) for reading, not for checking."""
    if mag == 0:
        return "-0.0" if neg else "0.0"
    nb = mag.bit_length()
    top = lsb + nb
    if top > 1025:
        return "-huge" if neg else "huge"
    keep = min(nb, 64)
    m = mag >> (nb - keep)
    v = math.ldexp(float(m), lsb + nb - keep)
    return repr(-v if neg else v)


def bits_str(bits: int, fmt: FloatFormat) -> str:
    return f"0x{bits:0{fmt.nbits // 4}x}"


def value_str(d: Decoded) -> str:
    if d.cls == NAN:
        return "nan"
    if d.cls == INF:
        return "-inf" if d.neg else "inf"
    return dyadic_float_str(d.neg, d.mant, d.lsb)


# ---------------------------------------------------------------- specials shared by all models

def product_special(a: Decoded, b: Decoded):
    """None for a finite product, else NAN (a NaN, or inf * 0) or (INF, neg)."""
    if a.cls == NAN or b.cls == NAN:
        return NAN
    if a.cls == INF or b.cls == INF:
        if a.cls == ZERO or b.cls == ZERO:
            return NAN
        return (INF, a.neg != b.neg)
    return None


def combine_specials(specials) -> tuple[int, bool] | None:
    """specials: NAN / (INF, neg) / None per addend. NaN wins; +inf with -inf is NaN."""
    pos = neg = False
    for s in specials:
        if s is None:
            continue
        if s == NAN:
            return (NAN, False)
        if s[1]:
            neg = True
        else:
            pos = True
    if pos and neg:
        return (NAN, False)
    if pos or neg:
        return (INF, neg)
    return None


def special_of(d: Decoded):
    if d.cls == NAN:
        return NAN
    if d.cls == INF:
        return (INF, d.neg)
    return None


def exact_sum(terms: list[tuple[bool, int, int]]) -> tuple[bool, int, int]:
    """Exact sum of (neg, mag, lsb) terms as (neg, |sum|, lsb); zero terms allowed."""
    live = [t for t in terms if t[1]]
    if not live:
        return (False, 0, 0)
    base = min(t[2] for t in live)
    total = sum((-m if n else m) << (l - base) for n, m, l in live)
    return (total < 0, abs(total), base)


def sum_round(addends: list[Decoded | tuple], fmt: FloatFormat, mode: str, nan_bits: int,
              overflow: str = "ieee") -> int:
    """IEEE-style: round(exact sum of the addends) once. An addend is a Decoded value or a product
    (a, b) of two Decoded values. NaN results get nan_bits."""
    specials, terms, zero_negs = [], [], []
    for x in addends:
        if isinstance(x, tuple):
            a, b = x
            sp = product_special(a, b)
            specials.append(sp)
            if sp is None:
                neg = a.neg != b.neg
                if a.cls == ZERO or b.cls == ZERO:
                    zero_negs.append(neg)
                else:
                    terms.append((neg, a.mant * b.mant, a.lsb + b.lsb))
        else:
            specials.append(special_of(x))
            if x.cls == ZERO:
                zero_negs.append(x.neg)
            elif x.cls == FINITE:
                terms.append((x.neg, x.mant, x.lsb))
    sp = combine_specials(specials)
    if sp is not None:
        return nan_bits if sp[0] == NAN else fmt.inf_bits(sp[1])
    neg, mag, lsb = exact_sum(terms)
    if mag == 0:
        neg = zero_sign(zero_negs if not terms else [], mode)
    return round_dyadic(neg, mag, lsb, fmt, mode, overflow)


# ---------------------------------------------------------------- the models, element by element
# `rule` is emu.numerics.mma.Rule: kind, fin, fc, facc, nan_bits, fused (FusedParams or None).

def _inputs(rule, a_row, b_col, c_bits):
    keep = rule.fused.input_frac_bits if rule.fused is not None else None
    flush = bool(rule.fused.flush_input_subnormals) if rule.fused is not None else False
    A = [decode(x, rule.fin, keep, flush) for x in a_row]
    B = [decode(x, rule.fin_b or rule.fin, keep, flush) for x in b_col]
    C = decode(c_bits, rule.fc, None, flush)
    return A, B, C


def exact_element(rule, a_row, b_col, c_bits, trace=None) -> int:
    """'exact': the exact A_row . B_col + C, rounded once to nearest-even in the result type."""
    A, B, C = _inputs(rule, a_row, b_col, c_bits)
    bits = sum_round([(a, b) for a, b in zip(A, B)] + [C], rule.facc, "rne", rule.nan_bits)
    if trace is not None:
        trace["steps"] = [{"rule": "round(sum of all exact products + C) once, nearest-even",
                           "bits": bits_str(bits, rule.facc)}]
    return bits


def ieee_chain_element(rule, a_row, b_col, c_bits, trace=None) -> int:
    """'ieee-chain': d = C; for k = 0, 1, ..., K-1 (ascending): d = fma(a[k], b[k], d), each fma
    rounded once to nearest-even in the accumulator type."""
    A, B, C = _inputs(rule, a_row, b_col, c_bits)
    d = C
    bits = None
    steps = []
    for k, (a, b) in enumerate(zip(A, B)):
        bits = sum_round([(a, b), d], rule.facc, "rne", rule.nan_bits)
        d = decode(bits, rule.facc)
        steps.append({"k": k, "op": "d = fma(a[k], b[k], d)", "bits": bits_str(bits, rule.facc),
                      "value": value_str(d)})
    if bits is None:                            # K == 0: the result is C in the result type
        bits = sum_round([C], rule.facc, "rne", rule.nan_bits)
    if trace is not None:
        trace["steps"] = steps
    return bits


def lavapipe_chain_element(rule, a_row, b_col, c_bits, trace=None) -> int:
    """'lavapipe-chain' (Mesa lvp_nir_lower_cooperative_matrix: inputs converted to the
    accumulator type, fmul, then a subgroup fadd reduction, then fadd C):
    p[k] = round(a[k] * b[k]); s = +0; for k ascending: s = round(s + p[k]); d = round(s + C),
    every rounding to nearest-even in the accumulator type."""
    A, B, C = _inputs(rule, a_row, b_col, c_bits)
    f = rule.facc
    s = decode(0, f)
    steps = []
    for k, (a, b) in enumerate(zip(A, B)):
        pbits = sum_round([(a, b)], f, "rne", rule.nan_bits)
        p = decode(pbits, f)
        sbits = sum_round([s, p], f, "rne", rule.nan_bits)
        s = decode(sbits, f)
        steps.append({"k": k, "product_bits": bits_str(pbits, f), "product": value_str(p),
                      "sum_bits": bits_str(sbits, f), "sum": value_str(s)})
    bits = sum_round([s, C], f, "rne", rule.nan_bits)
    steps.append({"op": "d = s + C", "bits": bits_str(bits, f)})
    if trace is not None:
        trace["steps"] = steps
    return bits


def fused_element(rule, a_row, b_col, c_bits, trace=None) -> int:
    """The fused multi-term family (MMA-Sim's T-FDPA / TR-FDPA; Khattak & Mikaitis).

    K is cut into blocks of L products in ascending k. Per block:
      1. exact products p = a*b; each nonzero addend keeps its formal exponent
         (product: ea + eb; C or the running accumulator: its own). Zeros take no part, or, with
         zero_exponent set, take part in the alignment with that exponent (MMA-Sim's e_zero).
      2. C inside: the accumulator joins the products; emax = the largest formal exponent; every
         addend is cut to an integer number of quanta 2^(emax - F) (toward zero, or floor);
         the block sum is the exact sum of those integers.
         C outside: only products are aligned and summed as above (emax_p); then the product sum
         is re-cut to F2 fraction bits and C to FC fraction bits (toward zero or floor), both
         relative to E = max(emax_p, exp(C)), and the two are added exactly.
      3. between blocks the sum is rounded to the accumulator type ('round', what chained
         instructions do) or carried exactly into the next block as its accumulator ('carry').
    The last block's sum is rounded with the final rounding. NaN inputs, inf*0 and inf-inf give
    the model's NaN bits; other infinities propagate."""
    P = rule.fused
    A, B, C = _inputs(rule, a_row, b_col, c_bits)
    F, L, how = P.frac_bits, P.block, P.term_rounding
    K = len(A)
    # the running accumulator as a term: (special, neg, mag, lsb, fexp, is_zero)
    acc = _term_of(C)
    blocks = []
    nblocks = max(1, -(-K // L))
    bits = None
    for bi in range(nblocks):
        k0, k1 = bi * L, min(K, (bi + 1) * L)
        last = bi == nblocks - 1
        info = {"k": [k0, k1], "accumulator_in": _term_str(acc)}
        blocks.append(info)
        specials = [acc[0]] + [product_special(A[k], B[k]) or _product_overflow(A[k], B[k], rule.facc, P)
                               for k in range(k0, k1)]
        sp = combine_specials(specials)
        if sp is not None:
            info["special"] = "nan" if sp[0] == NAN else ("-inf" if sp[1] else "inf")
            acc = (NAN if sp[0] == NAN else (INF, sp[1]), False, 0, 0, 0, False)
            if P.between_blocks == "round" or last:
                bits = rule.nan_bits if sp[0] == NAN else rule.facc.inf_bits(sp[1])
            continue
        prods, zero_negs, terms_zero = [], [], []
        for k in range(k0, k1):
            a, b = A[k], B[k]
            neg = a.neg != b.neg
            if a.cls == ZERO or b.cls == ZERO:
                zero_negs.append(neg)
                terms_zero.append({"k": k, "exact": "-0" if neg else "0", "note": _zero_note(P, "product")})
            else:
                prods.append((k, neg, a.mant * b.mant, a.lsb + b.lsb, a.exp + b.exp))
        cz = acc[5]
        if cz:
            zero_negs.append(acc[1])
        terms_info = []
        if P.c_position == "inside":
            live = list(prods)
            if not cz:
                live.append(("C", acc[1], acc[2], acc[3], acc[4]))
            if live:
                emax = max(t[4] for t in live)
                if P.zero_exponent is not None and (terms_zero or cz):
                    emax = max(emax, P.zero_exponent)
                q = emax - F
                S = 0
                for k, n, m, l, e in live:
                    v = shift_round(-m if n else m, l - q, how)
                    S += v
                    terms_info.append(_term_info(k, n, m, l, e, v, q))
                info.update(alignment_exponent=emax, quantum_exponent=q)
            else:
                S, q = 0, 0
        else:
            emax_p, qp, Sp = None, 0, 0
            if prods:
                emax_p = max(t[4] for t in prods)
                qp = emax_p - F
                Sp = 0
                for k, n, m, l, e in prods:
                    v = shift_round(-m if n else m, l - qp, how)
                    Sp += v
                    terms_info.append(_term_info(k, n, m, l, e, v, qp))
            if not prods and cz:
                S, q = 0, 0
            else:
                E = max(([emax_p] if prods else []) + ([] if cz else [acc[4]]))
                q = E - P.sum_frac_bits
                Sp2 = shift_round(Sp, qp - q, P.outside_rounding) if prods else 0
                Cq = 0
                if not cz:
                    qc = E - P.c_frac_bits
                    Cq = shift_round(-acc[2] if acc[1] else acc[2], acc[3] - qc, P.outside_rounding)
                    terms_info.append(_term_info("C", acc[1], acc[2], acc[3], acc[4], Cq, qc))
                S = Sp2 + (Cq << (P.sum_frac_bits - P.c_frac_bits))
                info.update(product_alignment_exponent=emax_p,
                            alignment_exponent=E, quantum_exponent=q,
                            product_sum_requantized=Sp2)
        # in k order, C last
        info["terms"] = sorted(terms_info + terms_zero, key=lambda t: (t["k"] == "C", 0 if t["k"] == "C" else t["k"]))
        if cz:
            info["terms"].append({"k": "C", "exact": "-0" if acc[1] else "0",
                                  "note": _zero_note(P, "accumulator")})
        all_zero = not prods and cz
        neg = S < 0
        if S == 0:
            neg = zero_sign(zero_negs if all_zero else [], P.final_rounding)
        info["sum_quanta"] = S
        info["sum"] = dyadic_hex(neg, abs(S), q)
        if P.between_blocks == "round" or last:
            bits = round_result(neg, abs(S), q, rule.facc, P)
            d = decode(bits, rule.facc)
            info["rounded"] = {"mode": P.final_rounding, "bits": bits_str(bits, rule.facc),
                               "value": value_str(d)}
            acc = _term_of(d)
        else:
            m = abs(S)
            acc = (None, neg, m, q, q + m.bit_length() - 1, m == 0)
    if trace is not None:
        trace["blocks"] = blocks
    return bits


def _product_overflow(a: Decoded, b: Decoded, facc: FloatFormat, P):
    """(INF, sign) for a finite product at or beyond 2^(emax + 1) of the result type where the
    model makes such a product infinite on its own (MMA-Sim's TR-FDPA), else None."""
    if not P.product_overflow or a.cls != FINITE or b.cls != FINITE:
        return None
    top = a.lsb + b.lsb + (a.mant * b.mant).bit_length() - 1
    return (INF, a.neg != b.neg) if top > facc.emax else None


def _zero_note(P, what: str) -> str:
    if P.zero_exponent is None or P.c_position != "inside":
        return f"zero {what}: takes no part in the alignment"
    return f"zero {what}: aligns with exponent {P.zero_exponent}"


def round_result(neg: bool, mag: int, lsb: int, facc: FloatFormat, P) -> int:
    """A fused sum rounded into the accumulator type under FusedParams P; with result_frac_bits
    below the type's, rounded to that many fraction bits (same exponent range) and widened, as
    MMA-Sim's RZ-E8M13 (FP8 on Ada and Hopper: an f32 result with 13 fraction bits)."""
    rfb = P.result_frac_bits
    if rfb is None or rfb >= facc.fbits:
        return round_dyadic(neg, mag, lsb, facc, P.final_rounding, P.overflow, P.flush_output_subnormals)
    narrow = FloatFormat(facc.name, facc.ebits, rfb)
    bits = round_dyadic(neg, mag, lsb, narrow, P.final_rounding, P.overflow, P.flush_output_subnormals)
    return ((bits >> (narrow.nbits - 1)) << (facc.nbits - 1)) | ((bits & ((1 << (narrow.nbits - 1)) - 1))
                                                                  << (facc.fbits - rfb))


def _term_of(d: Decoded):
    return (special_of(d), d.neg, d.mant, d.lsb, d.exp, d.cls == ZERO)


def _term_str(t) -> str:
    if t[0] is not None:
        return "nan" if t[0] == NAN else ("-inf" if t[0][1] else "inf")
    return dyadic_hex(t[1], t[2], t[3])


def _term_info(k, neg, mag, lsb, fexp, kept, q) -> dict:
    # kept quanta * 2^q versus the exact value mag * 2^lsb: bits were lost only below the quantum
    lost = lsb < q and (kept << (q - lsb)) != (-mag if neg else mag)
    return {"k": k, "exact": dyadic_hex(neg, mag, lsb), "exponent": fexp,
            "kept_quanta": kept, "kept": dyadic_hex(kept < 0, abs(kept), q), "bits_lost": bool(lost)}


def int_element(a_row, b_col, c: int, result_type: str, saturate: bool, trace=None) -> int:
    """Integers: exact products and an exact sum; then + C wraps modulo 2^32 (2^8 for an i8/u8
    result), or (saturate, SPIR-V SaturatingAccumulation) clamps to the result type's range.
    Returns the result's value."""
    s = sum(int(x) * int(y) for x, y in zip(a_row, b_col))
    t = s + int(c)
    bits = 8 if result_type in ("i8", "u8") else 32
    signed = result_type in ("i8", "i32")
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if saturate:
        r = min(max(t, lo), hi)
    else:
        r = t & ((1 << bits) - 1)
        if signed and r >= 1 << (bits - 1):
            r -= 1 << bits
    if trace is not None:
        trace["steps"] = [{"sum_of_products": s, "plus_c": t,
                           "rule": "saturate to range" if saturate else f"wrap modulo 2^{bits}",
                           "result": r}]
    return r


ELEMENT = {
    "exact": exact_element,
    "ieee-chain": ieee_chain_element,
    "lavapipe-chain": lavapipe_chain_element,
    "fused": fused_element,
}
