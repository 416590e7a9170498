"""What the NVIDIA driver computed, read from its SASS, beside what emu's compiler model computes.

Both sides become expression terms in one vocabulary of rounding points (`Terms`): an f32 or f16
add, multiply or fused multiply-add, a MUFU reciprocal, a rounding to f16, a min, max, select...
The SASS of a random program (emu.hw.randprog; scripts/h200_sass.py and scripts/sass_read.py
recorded it) is evaluated symbolically from its global loads to its stores (`sass_outputs`); emu's
compiled IR is evaluated the same way (`ir_outputs`), loops with a constant trip count unrolled.
Equal terms are one term (commutative operands sorted, negations pulled out of products), so two
outputs agree exactly when their terms are the same; `first_difference` walks both from the store
down to the first place they part, and `mechanism` names what differs there (the driver fused
where emu rounded, chose the other product, associated otherwise...).

Builtins that emu keeps whole (tanh, exp, sqrt, ...) are the driver's own instruction sequences:
such a term matches any driver term that contains its arguments.

    python scripts/sass_match.py SEED [--path vulkan|dawn]   # prints the first difference per output
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

__all__ = ["Terms", "Unreadable", "parse", "sass_outputs", "ir_outputs", "first_difference",
           "mechanism", "OPAQUE"]


class Unreadable(Exception):
    """The SASS (or IR) does something the symbolic evaluation does not follow (a loop, an
    indirect load); the message says what."""


# -- terms -----------------------------------------------------------------------------------------

_COMMUTATIVE = {"add", "mul", "min", "max", "hadd", "hmul", "hmin", "hmax"}
_F16 = {"add": "hadd", "mul": "hmul", "fma": "hfma", "min": "hmin", "max": "hmax", "sat": "hsat"}
# builtins whose SASS is a sequence of the driver's own (emu models each as a whole)
OPAQUE = {"tanh", "exp", "exp2", "log", "log2", "sqrt", "inverseSqrt", "sin", "cos", "tan", "pow",
          "atan", "atan2", "asin", "acos", "sinh", "cosh", "asinh", "acosh", "atanh", "sign", "round",
          "trunc", "ceil", "fract", "step", "smoothstep", "mix", "length", "normalize", "dot",
          "distance", "ldexp", "exp_", "erf"}


def _pow2(v) -> bool:
    """v is +-2^k (k != 0): a product with it is exact (away from overflow and subnormals)."""
    if v is None or v == 0.0 or not np.isfinite(v) or abs(v) == 1.0:
        return False
    m, _ = np.frexp(abs(v))
    return m == 0.5


class Terms:
    """Interned terms: a term is an int; equal (op, args) give the same int, so a structural
    comparison of two programs' outputs is an integer comparison."""

    def __init__(self):
        self.node: list[tuple] = []
        self._ids: dict[tuple, int] = {}
        self._below: dict[int, frozenset] = {}

    def _intern(self, op, args) -> int:
        key = (op, tuple(args))
        t = self._ids.get(key)
        if t is None:
            t = self._ids[key] = len(self.node)
            self.node.append(key)
        return t

    def op(self, t):
        return self.node[t][0] if isinstance(t, int) and not isinstance(t, bool) else None

    def args(self, t):
        return self.node[t][1] if isinstance(t, int) and not isinstance(t, bool) else ()

    # leaves
    def const(self, v: float, f16: bool = False) -> int:
        v = float(np.float16(v)) if f16 else float(np.float32(v))
        return self._intern("c", (v,))

    def input(self, slot) -> int:
        return self._intern("in", (slot,))

    def value(self, t):
        """The constant's value, or None."""
        if not isinstance(t, int) or isinstance(t, bool):
            return None
        return self.node[t][1][0] if self.node[t][0] == "c" else None

    # the canonical constructor
    def mk(self, op: str, *a) -> int:
        a = list(a)
        v = [self.value(x) for x in a]
        if op in ("h", "w") and v[0] is not None:
            return self.const(v[0], op == "h")
        if op == "h" and self.op(a[0]) in ("add", "mul") and all(self.op(x) == "w" for x in self.args(a[0])):
            # f16(f32(a) op f32(b)) is the f16 a op b: f32's 24 bits hold 2 * 11 + 2 (no double rounding)
            return self.mk("h" + self.op(a[0]), *(self.args(x)[0] for x in self.args(a[0])))
        if op == "h" and self.op(a[0]) == "w":
            return self.args(a[0])[0]
        if op == "abs" and self.op(a[0]) in ("abs", "neg"):
            return self.mk("abs", self.args(a[0])[0])       # |-x|, ||x||: |x|
        if op in ("rcp", "hrcp") and v[0] not in (None, 0.0):
            return self.const(1.0 / v[0], op == "hrcp")      # RCP of a constant, folded
        if op == "mul" and any(_pow2(x) for x in v):
            k = 0 if _pow2(v[0]) else 1                      # x * 2^k is exact: a scaling
            return self.mk("scale", a[1 - k], a[k])
        if op == "add" and a[0] == a[1]:
            return self.mk("scale", a[0], self.const(2.0))   # x + x is x * 2
        if op == "scale":
            x, k = a
            if self.op(x) == "scale":
                return self.mk("scale", self.args(x)[0], self.const(v[1] * self.value(self.args(x)[1])))
            if self.op(x) == "neg":
                return self.mk("neg", self.mk("scale", self.args(x)[0], k))
            if v[1] < 0:
                return self.mk("neg", self.mk("scale", x, self.const(-v[1])))
            if v[1] == 1.0:
                return x
            return self._intern("scale", (x, k))
        if op == "mul" and any(self.op(x) == "scale" for x in a):
            k = 0 if self.op(a[0]) == "scale" else 1        # (x * 2) * y is (x * y) * 2
            x, c = self.args(a[k])
            return self.mk("scale", self.mk("mul", x, a[1 - k]), c)
        if op == "neg":
            if v[0] is not None:
                return self._intern("c", (-v[0],))
            if self.op(a[0]) == "neg":
                return self.args(a[0])[0]
            if self.op(a[0]) in ("add", "hadd") and any(self.op(x) == "neg" for x in self.args(a[0])):
                return self.mk(self.op(a[0]), *(self.mk("neg", x) for x in self.args(a[0])))
        if op in ("mul", "hmul", "fma", "hfma"):
            sign = False
            for k in (0, 1):
                if self.op(a[k]) == "neg":
                    a[k], sign = self.args(a[k])[0], not sign
                elif v[k] is not None and (v[k] < 0 or (v[k] == 0 and np.signbit(v[k]))):
                    a[k], sign = self.const(-v[k], op[0] == "h"), not sign
            if op in ("fma", "hfma"):
                for k in (0, 1):
                    if self.value(a[k]) == 1.0:              # fma(x, 1, c): x + c, exactly
                        x = self.mk("neg", a[1 - k]) if sign else a[1 - k]
                        return self.mk(op[:-3] + "add", x, a[2])
                if op == "fma" and all(self.op(x) == "w" for x in a[:2]):
                    # f32(a) * f32(b) of f16 a, b is exact: the fma is the product, then the add
                    x = self.mk("mul", a[0], a[1])
                    return self.mk("add", self.mk("neg", x) if sign else x, a[2])
                if self.value(a[0]) == 0.0 or self.value(a[1]) == 0.0:
                    return a[2]                              # fma(x, 0, c): c (finite x)
                if self.value(a[2]) == 0.0:
                    op, a = op[:-3] + "mul", a[:2]           # fma(a, b, +-0) rounds as the product
                elif sign:                                   # c - a * b is -(a * b + -c), exactly
                    return self.mk("neg", self.mk(op, a[0], a[1], self.mk("neg", a[2])))
            a[:2] = sorted(a[:2])
            t = self._intern(op, a)
            return self._intern("neg", (t,)) if sign else t
        if op in ("add", "hadd"):
            for k in (0, 1):
                if self.value(a[k]) == 0.0:
                    return a[1 - k]                          # x + 0 (the driver's FADD RZ, x): x
            if all(self.op(x) == "neg" for x in a):          # -a - b is -(a + b), exactly
                return self._intern("neg", (self.mk(op, *(self.args(x)[0] for x in a)),))
        if op in _COMMUTATIVE:
            a = sorted(a)
        if op in ("min", "hmin"):                            # min(max(x, 0), 1): .SAT
            for k in (0, 1):
                inner = a[1 - k]
                if self.value(a[k]) == 1.0 and self.op(inner) == op.replace("min", "max"):
                    i0, i1 = self.args(inner)
                    if self.value(i0) == 0.0 or self.value(i1) == 0.0:
                        x = i1 if self.value(i0) == 0.0 else i0
                        return self.mk("hsat" if op[0] == "h" else "sat", x)
        if op == "sel":
            c, x, y = a
            if self.op(c) == "not":
                return self.mk("sel", self.args(c)[0], y, x)
            if self.op(x) == "sel" and self.args(x)[0] == c:      # sel(c, sel(c, p, q), y): p
                x = self.args(x)[1]
            if self.op(y) == "sel" and self.args(y)[0] == c:
                y = self.args(y)[2]
            if x == y:
                return x
            a = [c, x, y]
        v = [self.value(x) for x in a]
        if op in ("min", "max") and any(x is not None for x in v):
            if all(x is not None for x in v):
                return self.const((min if op == "min" else max)(v))
            k = 0 if v[0] is not None else 1                 # min(x, k) where x <= k: x
            lo, hi = self.range(a[1 - k])
            if (op == "min" and hi <= v[k]) or (op == "max" and lo >= v[k]):
                return a[1 - k]
        if op == "not" and self.op(a[0]) == "not":
            return self.args(a[0])[0]
        if op == "cmp":                                      # (rel, x, y) as lt/le/eq/ne
            rel, x, y = a
            flip = {"gt": "lt", "ge": "le"}
            if rel in flip:
                return self._intern("cmp", (flip[rel], y, x))
            unordered = {"geu": ("lt", x, y), "gtu": ("le", x, y), "ltu": ("le", y, x), "leu": ("lt", y, x),
                         "neu": ("eq", x, y)}
            if rel in unordered:
                return self._intern("not", (self._intern("cmp", unordered[rel]),))
        return self._intern(op, a)

    def range(self, t):
        """(lo, hi) bounds of t's value where its form gives them (a constant, .SAT, min, max)."""
        op, a = self.op(t), self.args(t)
        if op == "c":
            return a[0], a[0]
        if op in ("sat", "hsat"):
            return 0.0, 1.0
        if op in ("min", "max"):
            (l0, h0), (l1, h1) = self.range(a[0]), self.range(a[1])
            return (min(l0, l1), min(h0, h1)) if op == "min" else (max(l0, l1), max(h0, h1))
        return -np.inf, np.inf

    def below(self, t) -> frozenset:
        """t and every term under it."""
        got = self._below.get(t)
        if got is None:
            got = {t}
            for x in self.args(t):
                if isinstance(x, int) and not isinstance(x, bool) and self.op(t) not in ("c", "in", "cmp_rel"):
                    got |= self.below(x)
            got = self._below[t] = frozenset(got)
        return got

    def show(self, t, depth: int = 4) -> str:
        op, a = self.node[t]
        if op == "c":
            v = a[0]
            return str(int(v)) if np.isfinite(v) and v == int(v) and abs(v) < 1e6 else repr(v)
        if op == "in":
            return f"in{a[0]}"
        if depth == 0:
            return "…"
        if op == "cmp":
            return f"({self.show(a[1], depth - 1)} {a[0]} {self.show(a[2], depth - 1)})"
        if op == "call":
            return f"{a[0]}({', '.join(self.show(x, depth - 1) for x in a[1:])})"
        if op == "neg":
            return "-" + self.show(a[0], depth - 1)
        sym = {"add": " + ", "mul": " * ", "hadd": " +h ", "hmul": " *h "}.get(op)
        if sym:
            return "(" + sym.join(self.show(x, depth - 1) for x in a) + ")"
        return f"{op}({', '.join(self.show(x, depth - 1) if isinstance(x, int) else str(x) for x in a)})"


# -- SASS ------------------------------------------------------------------------------------------

@dataclass
class Ins:
    addr: int
    pred: str | None          # "P0" or "!P0" guarding the instruction
    opcode: str               # FFMA
    mods: tuple               # ("FTZ", "SAT")
    operands: list            # the operand texts, the destination first


_LINE = re.compile(r"/\*([0-9a-f]+)\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z0-9_.]+)\s*(.*?)\s*;")


def parse(text: str) -> list:
    """The instructions of nvdisasm's listing (one per /*addr*/ line)."""
    out = []
    for line in text.splitlines():
        m = _LINE.search(line)
        if not m:
            continue
        opcode, *mods = m.group(3).split(".")
        ops = [o.strip() for o in m.group(4).split(",")] if m.group(4) else []
        out.append(Ins(int(m.group(1), 16), m.group(2).strip().lstrip("@") if m.group(2) else None, opcode,
                       tuple(mods), [o for o in ops if o]))
    return out


@dataclass(frozen=True)
class Aff:
    """An integer register: coef . (ctaid, tid) + c (addresses), or unknown bits."""
    ctaid: int = 0
    tid: int = 0
    c: int = 0

    def add(self, o: "Aff") -> "Aff":
        return Aff(self.ctaid + o.ctaid, self.tid + o.tid, self.c + o.c)

    def scale(self, k: int) -> "Aff":
        return Aff(self.ctaid * k, self.tid * k, self.c * k)

    @property
    def constant(self) -> bool:
        return self.ctaid == 0 and self.tid == 0


_CMP = {"LT": "lt", "LE": "le", "GT": "gt", "GE": "ge", "EQ": "eq", "NE": "ne",
        "LTU": "ltu", "LEU": "leu", "GTU": "gtu", "GEU": "geu", "NEU": "neu", "EQU": "eq"}
_MUFU = {"RCP": "rcp", "RSQ": "rsq", "SQRT": "sqrt", "EX2": "ex2", "LG2": "lg2", "SIN": "sin",
         "COS": "cos", "TANH": "tanh"}


class _Sass:
    """Symbolic evaluation of one kernel's SASS: registers hold terms (f32), (hi, lo) pairs of
    f16 terms (packed halves), Aff (integers) or predicates."""

    def __init__(self, terms: Terms, workgroup: int):
        self.t = terms
        self.wg = workgroup
        self.regs: dict = {}
        self.preds: dict = {}
        self.outputs: dict = {}
        self.guard = None             # (predicate term, polarity) of the instruction being run

    # operands
    def _split(self, op: str):
        """(negated, absolute, the operand without them): -|R3|.H0_H0 is (True, True, R3.H0_H0)."""
        op = op.replace(".reuse", "")
        neg = op.startswith("-")
        op = op.lstrip("-")
        m = re.fullmatch(r"\|([^|]+)\|(.*)", op)
        return (neg, True, m.group(1) + m.group(2)) if m else (neg, False, op)

    def _guarded(self, v):
        """A register read by an instruction under @P: what the instructions under the same @P
        wrote to it (sel(P, new, old)'s new)."""
        g = self.guard
        while g is not None and isinstance(v, int) and self.t.op(v) == "sel" and self.t.args(v)[0] == g[0]:
            v = self.t.args(v)[1 if g[1] else 2]
        if g is not None and isinstance(v, tuple):
            return tuple(self._guarded(x) for x in v)
        return v

    def _imm(self, s: str) -> float | None:
        s = s.strip()
        if s in ("+INF", "INF"):
            return float("inf")
        if s == "-INF":
            return float("-inf")
        if "QNAN" in s or "NAN" in s:
            return float("nan")
        try:
            return float(s)
        except ValueError:
            return None

    def f32(self, op: str) -> int:
        """An operand of an f32 instruction as a term."""
        neg, ab, body = self._split(op)
        if body.startswith("0x"):
            x = self.t.const(np.uint32(int(body, 16)).view(np.float32))
        elif self._imm(body) is not None:
            x = self.t.const(self._imm(body))
        elif body == "RZ":
            x = self.t.const(0.0)
        elif re.fullmatch(r"R\d+", body):
            x = self._as_f32(self._guarded(self.regs.get(body)), body)
        elif body.startswith("c["):
            x = self.t.mk("cbuf", body)
        else:
            raise Unreadable(f"operand {op}")
        if ab:
            x = self.t.mk("abs", x)
        return self.t.mk("neg", x) if neg else x

    def _as_f32(self, v, name) -> int:
        if v is None:
            raise Unreadable(f"{name} read before it is written")
        if isinstance(v, Aff):
            if v.constant:
                return self.t.const(np.uint32(v.c & 0xFFFFFFFF).view(np.float32))
            raise Unreadable(f"{name} is an address used as a float")
        if isinstance(v, tuple):                      # packed halves read as f32 bits
            hi, lo = (self.t.value(x) for x in v)
            if hi is not None and lo is not None:     # HFMA2.MMA R, -RZ, RZ, hi, lo: a constant
                b = np.array([lo, hi], np.float16).view(np.uint32)[0]
                return self.t.const(np.uint32(b).view(np.float32))
            return self.t.mk("bits", v[0], v[1])
        return v

    def halves(self, v, name):
        """(hi, lo) f16 terms of a register."""
        if isinstance(v, tuple):
            return v
        if isinstance(v, Aff) and v.constant:
            b = v.c & 0xFFFFFFFF
            h = np.array([b >> 16, b & 0xFFFF], np.uint16).view(np.float16)
            return self.t.const(float(h[0]), True), self.t.const(float(h[1]), True)
        if v is None:                                 # bytes a PRMT moves but nothing reads
            u = self.t.mk("undef", name)
            return u, u
        if isinstance(v, Aff):                        # an integer's halves: not a float term
            u = self.t.mk("int-bits", name)
            return u, u
        return self.t.mk("hi", v), self.t.mk("lo", v)

    def f16x2(self, ops: list, k: int):
        """Operand k of a packed instruction (immediates come as hi, lo pairs): ((hi, lo), next k)."""
        op = ops[k]
        if self._imm(op.lstrip("-")) is not None and not op.lstrip("-").startswith("R"):
            hi = self.t.const(self._imm(op), True)
            lo = self.t.const(self._imm(ops[k + 1]), True)
            return (hi, lo), k + 2
        neg, ab, body = self._split(op)
        parts = body.split(".")
        name, swz = parts[0], (parts[1] if len(parts) > 1 else "H1_H0")
        if name == "RZ":
            z = self.t.const(0.0, True)
            hl = (z, z)
        else:
            hl = self.halves(self._guarded(self.regs.get(name)), name)
        pick = {"H0": hl[1], "H1": hl[0], "NH0": self.t.mk("neg", hl[1]), "NH1": self.t.mk("neg", hl[0])}
        a, b = swz.split("_") if "_" in swz else ("H1", "H0")
        hi, lo = pick[a], pick[b]
        if ab:
            hi, lo = self.t.mk("abs", hi), self.t.mk("abs", lo)
        if neg:
            hi, lo = self.t.mk("neg", hi), self.t.mk("neg", lo)
        return (hi, lo), k + 1

    def aff(self, op: str) -> Aff:
        op = op.replace(".reuse", "")
        if op == "RZ":
            return Aff()
        if op.startswith("0x") or op.lstrip("-").isdigit():
            v = int(op, 0)
            return Aff(c=v - (1 << 32) if v >= 1 << 31 else v)
        v = self.regs.get(op.split(".")[0])
        return v if isinstance(v, Aff) else Aff(c=-1 << 40)     # unknown integer

    def pred(self, op: str):
        op = op.replace(".reuse", "")
        neg = op.startswith("!")
        p = op.lstrip("!")
        v = True if p == "PT" else self.preds.get(p, "bounds")
        if neg:
            v = (not v) if isinstance(v, bool) else ("bounds" if v == "bounds" else self.t.mk("not", v))
        return v

    # stores and loads
    def _slot(self, addr: str, what: str):
        m = re.match(r"\[(R\d+)(?:\.U32)?\+(UR\d+)(?:\+(0x[0-9a-f]+))?\]", addr)
        if not m:
            raise Unreadable(f"{what} address {addr}")
        a = self.aff(m.group(1))
        if m.group(3):
            a = a.add(Aff(c=int(m.group(3), 16)))
        if a.ctaid != a.tid * self.wg or a.tid % 4 or a.c % 4:
            raise Unreadable(f"{what} address {addr} is not i * stride + k")
        binding = self.regs.get(m.group(2), "?")
        return binding, a.tid // 4, a.c // 4

    def run(self, code: list) -> dict:
        pending: dict = {}            # address -> [(regs, preds, path)] of branches that jump there
        live, path = True, True       # path: the condition under which this point is reached
        for ins in code:
            if ins.addr in pending:
                states = pending.pop(ins.addr)
                if live:
                    states.append((self.regs, self.preds, path))
                path = self._merge(states)
                live = True
            if not live:
                continue
            if ins.opcode == "BRA":
                target = int(ins.operands[0], 16)
                if target <= ins.addr:
                    if ins.pred is None and target == ins.addr:
                        break                         # the padding after EXIT
                    raise Unreadable(f"a backward branch at {ins.addr:#x} (a loop)")
                cond = self.pred(ins.pred) if ins.pred else True
                if isinstance(cond, str):                 # an integer test (a bit of the value)
                    cond = self.t.mk("icond", f"{ins.pred}@{ins.addr:#x}")
                pending.setdefault(target, []).append((dict(self.regs), dict(self.preds), self._and(path, cond)))
                if ins.pred is None:
                    live = False
                else:
                    path = self._and(path, self._not(cond))
                continue
            if ins.opcode == "EXIT":
                if ins.pred is None:
                    live = False
                continue
            self.guard = None
            if ins.pred is not None:
                p = self.pred(ins.pred.lstrip("!"))
                if isinstance(p, int) and not isinstance(p, bool):
                    pol = not ins.pred.startswith("!")
                    if self.t.op(p) == "not":                # sel(not c, x, y) is kept as sel(c, y, x)
                        p, pol = self.t.args(p)[0], not pol
                    self.guard = (p, pol)
            self.step(ins)
        return self.outputs

    # path conditions: True, False or a term
    def _not(self, c):
        return (not c) if isinstance(c, bool) else self.t.mk("not", c)

    def _and(self, a, b):
        if a is True or b is False:
            return b
        if b is True or a is False:
            return a
        return self.t.mk("and", a, b)

    def _tell_apart(self, p1, p2):
        """(condition telling path p1 from p2, both paths joined)."""
        t = self.t
        if isinstance(p1, bool) or isinstance(p2, bool):
            return None, True
        if p2 == self._not(p1):
            return p1, True
        if t.op(p1) == "and" and t.op(p2) == "and":
            common = set(t.args(p1)) & set(t.args(p2))
            r1 = [x for x in t.args(p1) if x not in common]
            r2 = [x for x in t.args(p2) if x not in common]
            if common and len(r1) == len(r2) == 1 and r2[0] == self._not(r1[0]):
                return r1[0], next(iter(common))
        return p1, t.mk("or", p1, p2)

    def _merge(self, states):
        """Registers where branches join: a select on the condition telling the paths apart."""
        regs, preds, path = states[0]
        regs, preds = dict(regs), dict(preds)
        for r2, p2, path2 in states[1:]:
            c, joined = self._tell_apart(path, path2)
            for k in set(regs) | set(r2):
                a, b = regs.get(k), r2.get(k)
                if a is b or a == b or b is None:
                    continue
                if a is None:
                    regs[k] = b
                elif c is None:
                    raise Unreadable("branches join without a condition that tells them apart")
                elif isinstance(a, tuple) or isinstance(b, tuple):
                    ha, hb = self.halves(a, k), self.halves(b, k)
                    regs[k] = tuple(self.t.mk("sel", c, x, y) for x, y in zip(ha, hb))
                elif isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool):
                    regs[k] = self.t.mk("sel", c, a, b)
                else:
                    regs[k] = Aff(c=-1 << 40)         # integers that differ: not followed
            preds.update({k: v for k, v in p2.items() if k not in preds})
            path = joined
        self.regs, self.preds = regs, preds
        return path

    def _write(self, ins: Ins, dest: str, value):
        if ins.pred is not None and dest != "RZ":
            p = self.pred(ins.pred)
            old = self.regs.get(dest)
            if p is True:
                pass
            elif p is False:
                return
            elif old is None or p == "bounds":
                pass
            elif isinstance(value, int) and isinstance(old, int):
                value = self.t.mk("sel", p, value, old)
            elif isinstance(value, tuple) and isinstance(old, tuple):
                value = tuple(self.t.mk("sel", p, v, o) for v, o in zip(value, old))
        if dest != "RZ":
            self.regs[dest] = value

    def step(self, ins: Ins):
        t, op, m, o = self.t, ins.opcode, ins.mods, ins.operands
        if op == "S2R":
            self._write(ins, o[0], {"SR_CTAID.X": Aff(ctaid=1), "SR_TID.X": Aff(tid=1)}.get(o[1], Aff(c=-1 << 40)))
        elif op in ("ULDC", "UMOV"):
            self.regs[o[0]] = o[1]
        elif op in ("IADD3", "VIADD"):
            if o[0].startswith("P") or (len(o) > 1 and o[1].startswith("P")):
                dest = [x for x in o if x.startswith("R")][:1]
                srcs = [x for x in o[1:] if not x.startswith("P") and not x.startswith("!P")]
                if dest and dest[0] != "RZ":
                    self._write(ins, dest[0], self._sum(srcs[1:] if srcs and srcs[0] == dest[0] else srcs))
                return
            self._write(ins, o[0], self._sum(o[1:]))
        elif op == "IMAD":
            if "MOV" in m:
                self._write(ins, o[0], self.aff(o[3]))
            elif "SHL" in m:
                self._write(ins, o[0], self.aff(o[1]).scale(self.aff(o[2]).c))
            else:
                a, b, c = (self.aff(x) for x in o[1:4])
                prod = a.scale(b.c) if b.constant else b.scale(a.c) if a.constant else Aff(c=-1 << 40)
                self._write(ins, o[0], prod.add(c))
        elif op == "LEA":
            self._write(ins, o[0], self.aff(o[1]).scale(1 << int(o[3], 0)).add(self.aff(o[2])))
        elif op == "SHF" and "L" in m:
            self._write(ins, o[0], self.aff(o[1]).scale(1 << int(o[2], 0)))
        elif op == "MOV":
            v = self.regs.get(o[1]) if o[1].startswith("R") else self.aff(o[1])
            self._write(ins, o[0], v)
        elif op in ("ISETP", "HSETP2", "FSETP"):
            self._setp(ins)
        elif op == "LDG":
            binding, stride, slot = self._slot(o[1], "load")
            self._write(ins, o[0], t.input(slot))
        elif op == "STG":
            binding, stride, slot = self._slot(o[0], "store")
            self.outputs[slot] = self.f32(o[1])
        elif op in ("FADD", "FMUL", "FFMA", "FMNMX", "FSEL", "MUFU", "FRND", "F2F", "F2FP", "FCHK") \
                and not (op == "MUFU" and "F16" in m) and not (op == "FRND" and "F16" in m):
            self._float(ins)
        elif op in ("HADD2", "HMUL2", "HFMA2", "HMNMX2", "VHMNMX", "PRMT", "MUFU", "FRND"):
            self._half(ins)
        elif op == "SEL":
            p = self.pred(o[3])
            a, b = self.regs.get(o[1]) if o[1].startswith("R") else self.aff(o[1]), \
                self.regs.get(o[2]) if o[2].startswith("R") else self.aff(o[2])
            if isinstance(p, bool):
                self._write(ins, o[0], a if p else b)
            elif isinstance(a, int) and isinstance(b, int):
                self._write(ins, o[0], t.mk("sel", p, a, b))
            elif isinstance(a, tuple) or isinstance(b, tuple):
                a, b = self.halves(a, o[1]), self.halves(b, o[2])
                self._write(ins, o[0], tuple(t.mk("sel", p, x, y) for x, y in zip(a, b)))
            else:
                self._write(ins, o[0], t.mk("opaque", f"SEL {o}"))
        elif op in ("BSSY", "BSYNC", "NOP"):
            pass
        else:
            dest = o[0] if o and o[0].startswith("R") else None
            if dest:
                args = [self.f32(x) if re.match(r"-?\|?R\d+", x) else t.mk("opaque", x) for x in o[1:]
                        if not x.startswith(("P", "!P"))]
                self._write(ins, dest, t.mk("op:" + ".".join((op,) + m), *args))

    def _sum(self, ops):
        s = Aff()
        for x in ops:
            neg = x.startswith("-")
            a = self.aff(x.lstrip("-"))
            s = s.add(a.scale(-1) if neg else a)
        return s

    def _setp(self, ins: Ins):
        t, o, m = self.t, ins.operands, ins.mods
        dests = [x for x in o[:2]]
        if ins.opcode == "ISETP":
            v = "bounds"
        else:
            rel = _CMP.get(m[0], m[0].lower())
            if ins.opcode == "HSETP2":
                (ah, al), k = self.f16x2(o, 2)
                (bh, bl), k = self.f16x2(o, k)
                a, b = al, bl
            else:
                a, b = self.f32(o[2]), self.f32(o[3])
            v = t.mk("cmp", rel, a, b)
            last = self.pred(o[-1])
            comb = m[1] if len(m) > 1 and m[1] in ("AND", "OR") else "AND"
            if last is not True and comb == "AND" and not isinstance(last, str):
                v = t.mk("and", v, last) if last is not False else False
            elif comb == "OR" and last is not False and not isinstance(last, str):
                v = True if last is True else t.mk("or", v, last)
        if dests[0] != "PT":
            self.preds[dests[0]] = v
        if dests[1] != "PT" and ins.opcode != "ISETP":
            self.preds[dests[1]] = v if isinstance(v, (bool, str)) else t.mk("not", v)

    def _float(self, ins: Ins):
        t, op, m, o = self.t, ins.opcode, ins.mods, ins.operands
        if op == "FADD":
            v = t.mk("add", self.f32(o[1]), self.f32(o[2]))
        elif op == "FMUL":
            v = t.mk("mul", self.f32(o[1]), self.f32(o[2]))
            for mod, k in (("D2", 0.5), ("D4", 0.25), ("D8", 0.125), ("M2", 2.0), ("M4", 4.0), ("M8", 8.0)):
                if mod in m:
                    v = t.mk("scale", v, t.const(k))
        elif op == "FFMA":
            v = t.mk("fma", self.f32(o[1]), self.f32(o[2]), self.f32(o[3]))
        elif op == "FMNMX":
            p = self.pred(o[3])
            a, b = self.f32(o[1]), self.f32(o[2])
            v = t.mk("min", a, b) if p is True else t.mk("max", a, b) if p is False else \
                t.mk("sel", p, t.mk("min", a, b), t.mk("max", a, b))
        elif op == "FSEL":
            p = self.pred(o[3])
            a, b = self.f32(o[1]), self.f32(o[2])
            v = a if p is True else b if p is False else t.mk("sel", p, a, b)
        elif op == "MUFU":
            v = t.mk(_MUFU.get(m[0], m[0].lower()), self.f32(o[1]))
        elif op == "FRND":
            v = t.mk({"FLOOR": "floor", "CEIL": "ceil", "TRUNC": "trunc"}.get(m[0] if m else "", "round"),
                     self.f32(o[1]))
        elif op == "F2F" and m[:2] == ("F16", "F32"):
            self._write(ins, o[0], (t.const(0.0, True), t.mk("h", self.f32(o[1]))))
            return
        elif op == "F2FP":
            self._write(ins, o[0], (t.mk("h", self.f32(o[1])), t.mk("h", self.f32(o[2]))))
            return
        else:
            v = t.mk("op:" + ".".join((op,) + m), *(self.f32(x) for x in o[1:]))
        if "RZ" in m:
            v = t.mk("rz", v)
        if "SAT" in m:
            v = t.mk("sat", v)
        self._write(ins, o[0], v)

    def _half(self, ins: Ins):
        t, op, m, o = self.t, ins.opcode, ins.mods, ins.operands
        if op == "PRMT":
            a = self.halves(self.regs.get(o[1]) if o[1] != "RZ" else None, o[1]) if o[1] != "RZ" else \
                (t.const(0.0, True),) * 2
            b = self.halves(self.regs.get(o[3]) if o[3] != "RZ" else None, o[3]) if o[3] != "RZ" else \
                (t.const(0.0, True),) * 2
            sel = int(o[2], 16)
            pool = [a[1], a[0], b[1], b[0]]          # a.lo, a.hi, b.lo, b.hi
            lo, hi = (sel & 0xF) // 2, ((sel >> 8) & 0xF) // 2
            if (sel & 0xF) % 2 or ((sel >> 4) & 0xF) != (sel & 0xF) + 1:
                raise Unreadable(f"PRMT {o[2]} moves bytes, not halves")
            self._write(ins, o[0], (pool[hi], pool[lo]))
            return
        if op in ("MUFU", "FRND"):
            (hi, lo), _ = self.f16x2(o, 1)
            fn = _MUFU.get(m[0], m[0].lower()) if op == "MUFU" else "floor"
            self._write(ins, o[0], (t.const(0.0, True), t.mk("h" + fn, lo)))
            return
        xs, k = [], 1
        while k < len(o) and not o[k].lstrip("!").startswith("P"):
            x, k = self.f16x2(o, k)
            xs.append(x)
        fn = {"HADD2": "hadd", "HMUL2": "hmul", "HFMA2": "hfma"}.get(op)
        if "F32" in m:                               # HADD2.F32: the f32 sum of the widened halves
            w = [t.mk("w", x[1]) for x in xs]
            self._write(ins, o[0], t.mk("add", *w) if len(w) == 2 else w[0])
            return
        if op in ("HMNMX2", "VHMNMX"):
            p = self.pred(o[-1])
            fn = "hmin" if p is True else "hmax"
            if op == "VHMNMX":                        # three-way min/max of low halves
                lo = t.mk(fn, t.mk(fn, xs[0][1], xs[1][1]), xs[2][1])
                self._write(ins, o[0], (t.const(0.0, True), lo))
                return
        pair = []
        for lane in (0, 1):
            v = t.mk(fn, *(x[lane] for x in xs))
            if "SAT" in m:
                v = t.mk("hsat", v)
            if "RELU" in m:
                v = t.mk("hmax", v, t.const(0.0, True))
            pair.append(v)
        self._write(ins, o[0], tuple(pair))


def sass_outputs(text: str, terms: Terms, workgroup: int = 64) -> dict:
    """{output slot: term} of the program whose SASS listing is ``text``."""
    s = _Sass(terms, workgroup)
    outs = s.run(parse(text))
    if not outs:
        raise Unreadable("no stores found")
    return outs


# -- emu's compiled IR -------------------------------------------------------------------------------

class _Flow(Exception):
    """break / continue / return out of a block (a constant condition took it)."""

    def __init__(self, kind, value=None):
        self.kind, self.value = kind, value


class _Ir:
    """Symbolic evaluation of compiled IR in the same terms: integers as Aff of the invocation
    index (tid), loops with a constant trip count unrolled, a branch on a float condition as both
    sides and a select of the variables they store."""

    def __init__(self, module, terms: Terms, divide: bool):
        self.m, self.t, self.divide = module, terms, divide
        self.env: dict = {}
        self.mem: dict = {}
        self.outputs: dict = {}
        self.funcs = {f.name: f for f in module.functions}

    def _f16(self, ty) -> bool:
        from ..isa.types import scalar_of
        try:
            return scalar_of(ty).name == "f16"
        except Exception:                              # noqa: BLE001 (pointers, void)
            return False

    def _kind(self, ty) -> str:
        from ..isa.types import scalar_of
        try:
            n = scalar_of(ty).name
        except Exception:                              # noqa: BLE001
            return "other"
        return "float" if n in ("f32", "f16") else "bool" if n == "bool" else "int"

    def run(self, fn):
        try:
            self.block(fn.body)
        except _Flow:
            pass
        return self.outputs

    def block(self, blk):
        for inst in blk.insts:
            self.inst(inst)

    def val(self, v):
        if v.id not in self.env:
            raise Unreadable(f"%{v.id} has no value")
        return self.env[v.id]

    def _map(self, f, *xs):
        """f over the components of vector operands (scalars broadcast)."""
        n = max((len(x) for x in xs if isinstance(x, list)), default=0)
        if not n:
            return f(*xs)
        return [f(*(x[k] if isinstance(x, list) else x for x in xs)) for k in range(n)]

    def inst(self, i):
        t, op, a = self.t, i.op, i.attrs
        args = [self.val(x) for x in i.args] if op not in ("loop", "if") else None
        h = self._f16(i.type)
        fop = (lambda name: _F16.get(name, "h" + name) if h else name)
        res = None
        if op == "const":
            val = a["value"]
            kind = self._kind(i.type)
            conv = (lambda x: Aff(c=int(x))) if kind == "int" else bool if kind == "bool" else \
                (lambda x: t.const(float(x), h))
            res = [conv(x) for x in val] if isinstance(val, list) else conv(val)
        elif op == "input":
            if a.get("builtin") != "global_invocation_id":
                raise Unreadable(f"input {a.get('builtin')}")
            res = [Aff(tid=1), Aff(), Aff()]
        elif op == "extract":
            res = args[0]
            for k in a["path"]:
                res = res[k]
        elif op == "construct":
            res = []
            for x in args:
                res += x if isinstance(x, list) else [x]
        elif op == "bitcast":
            res = args[0]
        elif op == "var":
            res = ("ptr", i.result.id, ())
            if args:                                  # var x = init
                self.mem[(i.result.id, ())] = args[0]
        elif op == "global":                          # binding 0 is the inputs, 1 the outputs
            g = self.m.global_(a["name"])
            res = ("ptr", {0: "I", 1: "O"}.get(g.binding if g is not None else None, a["name"]), ())
        elif op == "access":
            base = args[0]
            idx = tuple(x for x in args[1:])
            res = ("ptr", base[1], base[2] + idx)
        elif op == "load":
            p = args[0]
            if p[1] == "I":
                res = t.input(self._slot(p[2][-1]))
            else:
                res = self.mem.get((p[1], self._key(p[2])))
                if res is None:                       # a function variable starts as zero
                    kind = self._kind(i.type)
                    if kind == "other" or not isinstance(p[1], int):
                        raise Unreadable(f"load of %{p[1]} before a store")
                    res = Aff() if kind == "int" else False if kind == "bool" else t.const(0.0, h)
        elif op == "store":
            p = args[0]
            if p[1] == "O":
                self.outputs[self._slot(p[2][-1])] = args[1]
            else:
                self.mem[(p[1], self._key(p[2]))] = args[1]
        elif op == "binary":
            res = self._binary(a["fn"], args, i)
        elif op == "unary":
            fn = a["fn"]
            if fn == "not":
                res = self._map(lambda x: (not x) if isinstance(x, bool) else t.mk("not", x), args[0])
            elif self._kind(i.type) == "int":
                res = self._map(lambda x: x.scale(-1), args[0]) if fn == "neg" else Aff(c=-1 << 40)
            else:
                res = self._map(lambda x: t.mk(fn, x), args[0])
        elif op == "builtin":
            res = self._builtin(a["fn"], args, h, fop)
        elif op == "convert":
            kind = self._kind(i.type)
            src = self._kind(i.args[0].type)
            if kind == "float" and src == "float":
                src16 = self._f16(i.args[0].type)
                res = args[0] if src16 == h else self._map(lambda x: t.mk("h" if h else "w", x), args[0])
            elif kind == "int" and src == "int":
                res = args[0]
            else:
                res = self._map(lambda x: t.mk("cvt", x if isinstance(x, int) and not isinstance(x, bool)
                                                 else t.mk("opaque", repr(x))), args[0])
        elif op == "select":
            f, tr, c = args
            res = self._map(lambda c1, x, y: (x if c1 else y) if isinstance(c1, bool) else t.mk("sel", c1, x, y),
                            c, tr, f)
        elif op == "call":
            res = self._call(i, args)
        elif op == "if":
            self._if(i)
        elif op == "loop":
            self._loop(i)
        elif op in ("break", "continue"):
            raise _Flow(op)
        elif op == "return":
            raise _Flow("return", args[0] if args else None)
        else:
            raise Unreadable(f"IR op {op}")
        if i.result is not None:
            self.env[i.result.id] = res

    def _key(self, path):
        return tuple(x.c if isinstance(x, Aff) and x.constant else repr(x) for x in path)

    def _slot(self, idx):
        if not isinstance(idx, Aff) or idx.ctaid:
            raise Unreadable(f"index {idx}")
        return idx.c

    def _binary(self, fn, args, i):
        t = self.t
        kind = self._kind(i.args[0].type)
        x, y = args
        if kind == "int":
            return self._map(lambda p, q: self._int(fn, p, q), x, y)
        if kind == "bool":
            return self._map(lambda p, q: (p and q if fn == "and" else p or q if fn == "or" else p == q)
                             if isinstance(p, bool) and isinstance(q, bool) else t.mk(fn, p, q), x, y)
        h = self._f16(i.args[0].type)
        if fn in ("lt", "le", "gt", "ge", "eq", "ne"):
            return self._map(lambda p, q: t.mk("cmp", fn, p, q), x, y)
        add, mul = ("hadd", "hmul") if h else ("add", "mul")
        if fn == "add":
            return self._map(lambda p, q: t.mk(add, p, q), x, y)
        if fn == "sub":
            return self._map(lambda p, q: t.mk(add, p, t.mk("neg", q)), x, y)
        if fn == "mul":
            return self._map(lambda p, q: t.mk(mul, p, q), x, y)
        if fn == "div":
            rcp = "hrcp" if h else "rcp"
            return self._map(lambda p, q: t.mk(rcp, q) if t.value(p) == 1.0 else t.mk(mul, p, t.mk(rcp, q)), x, y)
        return self._map(lambda p, q: t.mk(("h" if h else "") + fn, p, q), x, y)

    def _int(self, fn, p, q):
        if fn == "add":
            return p.add(q)
        if fn == "sub":
            return p.add(q.scale(-1))
        if fn == "mul":
            return p.scale(q.c) if q.constant else q.scale(p.c) if p.constant else Aff(c=-1 << 40)
        if p.constant and q.constant:
            a, b = p.c, q.c
            ops = {"rem": lambda: a % b, "div": lambda: a // b, "lt": lambda: a < b, "le": lambda: a <= b,
                   "gt": lambda: a > b, "ge": lambda: a >= b, "eq": lambda: a == b, "ne": lambda: a != b,
                   "and": lambda: a & b, "or": lambda: a | b, "xor": lambda: a ^ b,
                   "shl": lambda: a << b, "shr": lambda: a >> b, "min": lambda: min(a, b), "max": lambda: max(a, b)}
            r = ops[fn]()
            return r if isinstance(r, bool) else Aff(c=r)
        raise Unreadable(f"integer {fn} of an invocation-dependent value")

    def _builtin(self, fn, args, h, fop):
        t = self.t
        if fn == "fma":
            return self._map(lambda a, b, c: t.mk(fop("fma"), a, b, c), *args)
        if fn in ("min", "max"):
            return self._map(lambda a, b: t.mk(fop(fn), a, b), *args)
        if fn == "clamp":
            return self._map(lambda x, lo, hi: t.mk(fop("min"), t.mk(fop("max"), x, lo), hi), *args)
        if fn == "select":                            # select(f, t, c)
            return self._map(lambda f, tr, c: (tr if c else f) if isinstance(c, bool) else t.mk("sel", c, tr, f),
                             *args)
        if fn == "abs":
            return self._map(lambda x: t.mk("abs", x), args[0])
        if fn == "floor":
            return self._map(lambda x: t.mk(fop("floor"), x), args[0])
        if fn == "saturate":
            return self._map(lambda x: t.mk(fop("sat"), x), args[0])
        if any(isinstance(x, list) for x in args) and fn not in ("dot", "length", "normalize", "distance"):
            return self._map(lambda *xs: t.mk("call", fn, *xs), *args)
        flat = []
        for x in args:
            flat += x if isinstance(x, list) else [x]
        r = t.mk("call", fn, *flat)
        return [t.mk("extract", r, t.const(k)) for k in range(len(args[0]))] if fn == "normalize" else r

    def _if(self, i):
        c = self.val(i.args[0])
        then, other = i.blocks[0], (i.blocks[1] if len(i.blocks) > 1 else None)
        if isinstance(c, bool):
            blk = then if c else other
            if blk is not None:
                self.block(blk)
            return
        before = dict(self.mem)
        try:
            self.block(then)
            after_then = self.mem
            self.mem = dict(before)
            if other is not None:
                self.block(other)
        except _Flow as e:
            raise Unreadable(f"{e.kind} under a condition that depends on the inputs")
        for k in set(after_then) | set(self.mem):
            x, y = after_then.get(k), self.mem.get(k)
            if x is not y and x is not None and y is not None:
                self.mem[k] = self._map(lambda p, q: self.t.mk("sel", c, p, q), x, y)
            elif y is None:
                self.mem[k] = x

    def _loop(self, i):
        body, cont = i.blocks[0], (i.blocks[1] if len(i.blocks) > 1 else None)
        for _ in range(256):
            try:
                self.block(body)
            except _Flow as e:
                if e.kind == "break":
                    return
                if e.kind == "return":
                    raise
            if cont is not None:
                self.block(cont)
        raise Unreadable("a loop without a constant trip count (256 iterations and counting)")

    def _call(self, i, args):
        f = self.funcs.get(i.attrs.get("callee") or i.attrs.get("fn"))
        if f is None:
            raise Unreadable(f"call {i.attrs}")
        saved = self.env
        self.env = dict(saved)
        for p, v in zip(f.params, args):
            self.env[p.id] = v
        try:
            self.block(f.body)
            r = None
        except _Flow as e:
            r = e.value
        self.env = saved
        return r


def ir_outputs(module, terms: Terms, divide: bool = True) -> dict:
    """{output slot: term} of a randprog module compiled by emu's model (its entry point's stores
    to O); ``divide``: f32 x / y is x * RCP(y) as on NVIDIA."""
    entry = next(f for f in module.functions if f.stage is not None)
    ir = _Ir(module, terms, divide)
    for k, p in enumerate(entry.params):
        if entry.param_builtins.get(k) != "global_invocation_id":
            raise Unreadable(f"entry parameter {entry.param_builtins.get(k)}")
        ir.env[p.id] = [Aff(tid=1), Aff(), Aff()]
    return ir.run(entry)


# -- comparing ----------------------------------------------------------------------------------------

# emu's builtin -> the driver's one instruction for it (f32, f16), where there is one
_MUFU_OF = {"sqrt": ("sqrt", "hsqrt"), "inverseSqrt": ("rsq", "hrsq"), "exp2": ("ex2", "hex2"),
            "log2": ("lg2", "hlg2"), "tanh": ("tanh", "htanh")}
# odd builtins: the driver may compute f(|x|) and copy x's sign in
_ODD = {"tanh", "sin", "tan", "atan", "asin", "sinh", "asinh", "atanh", "sign"}


def _strip_sign(terms: Terms, x):
    while terms.op(x) in ("neg", "abs"):
        x = terms.args(x)[0]
    return x


def _matches_opaque(terms: Terms, e: int, s: int) -> bool:
    """emu's whole builtin e (call) against the driver's term s: s's sequence reads e's arguments
    (up to their sign: the driver may compute on |x|)."""
    below = terms.below(s)
    for x in terms.args(e)[1:]:
        if terms.op(x) == "c":
            continue
        x0 = _strip_sign(terms, x)
        if {x, x0, terms.mk("abs", x0), terms.mk("neg", x0)} & below:
            continue
        if not any(terms.op(y) == terms.op(x0) and _same(terms, x0, y) for y in below):
            return False
    return True


def _has_odd_call(terms: Terms, t) -> bool:
    return any(terms.op(x) == "call" and terms.args(x)[0] in _ODD for x in terms.below(t))


def _same(terms: Terms, e, d) -> bool:
    if e == d:
        return True
    if not isinstance(e, int) or not isinstance(d, int) or isinstance(e, bool):
        return False
    memo = terms.__dict__.setdefault("_same", {})
    if (e, d) not in memo:
        memo[(e, d)] = False                         # (a cycle cannot happen: terms are a DAG)
        memo[(e, d)] = first_difference(terms, e, d) is None
    return memo[(e, d)]


def _pairs(terms: Terms, op, ea, da):
    """Children of two terms of one op paired: commutative operands (and an fma's two factors)
    paired by sameness first, so that one differing operand is the one reported."""
    ea, da = list(ea), list(da)
    if op in _COMMUTATIVE or op in ("fma", "hfma"):
        def score(d):                                # same operands, then same operations
            return (sum(_same(terms, x, y) for x, y in zip(ea[:2], d)),
                    sum(terms.op(x) == terms.op(y) for x, y in zip(ea[:2], d)))
        if score(da[1::-1]) > score(da[:2]):
            da[0], da[1] = da[1], da[0]
    return list(zip(ea, da))


def first_difference(terms: Terms, emu: int, drv: int, path=()):
    """(path, emu term, driver term) where the two first part from the store down, or None when
    they agree. Where two or more operands of the same operation differ, that operation is the
    place (an fma of other factors, an add associated otherwise)."""
    if emu == drv:
        return None
    eo, do = terms.op(emu), terms.op(drv)
    if eo == "call":
        if _matches_opaque(terms, emu, drv):
            return None
        mufu = _MUFU_OF.get(terms.args(emu)[0], ())
        if do in mufu and len(terms.args(drv)) == 1 and len(terms.args(emu)) == 2:
            return first_difference(terms, terms.args(emu)[1], terms.args(drv)[0], path + (0,))
        return (path, emu, drv)
    if (eo == "neg") != (do == "neg") and _has_odd_call(terms, emu):
        e1 = terms.args(emu)[0] if eo == "neg" else emu
        d1 = terms.args(drv)[0] if do == "neg" else drv
        if first_difference(terms, e1, d1) is None:
            return None
    ea, da = terms.args(emu), terms.args(drv)
    if eo != do or len(ea) != len(da) or eo in ("c", "in"):
        return (path, emu, drv)
    differ = [(k, x, y) for k, (x, y) in enumerate(_pairs(terms, eo, ea, da)) if not _same(terms, x, y)]
    if not differ:
        return None
    if len({(x, y) for _, x, y in differ}) == 1:     # x * x: the one operand twice
        differ = differ[:1]
    if len(differ) > 1 and eo not in ("fma", "hfma", "add", "hadd", "mul", "hmul"):
        differ = differ[:1]                          # min, max, select...: the first that differs
    if len(differ) != 1:
        return (path, emu, drv)
    k, x, y = differ[0]
    if not (isinstance(x, int) and isinstance(y, int)) or isinstance(x, bool):
        return (path, emu, drv)
    return first_difference(terms, x, y, path + (k,))


def _chain(terms: Terms, t, op):
    """The operands of a chain of one associative op (a + (b + c): [a, b, c])."""
    if terms.op(t) != op:
        return [t]
    out = []
    for x in terms.args(t):
        out += _chain(terms, x, op)
    return out


def _products(terms: Terms, t):
    """The factor pairs an fma or a product computes under t (its top)."""
    op, a = terms.op(t), terms.args(t)
    if op == "neg":
        return _products(terms, a[0])
    return {tuple(sorted(a[:2]))} if op in ("fma", "hfma", "mul", "hmul") else set()


def mechanism(terms: Terms, emu: int, drv: int) -> str:
    """A name for what differs where emu's term and the driver's part (first_difference's pair)."""
    t = terms
    eo, do = t.op(emu), t.op(drv)
    base = lambda o: o[1:] if o.startswith("h") and o[1:] in ("add", "mul", "fma", "min", "max", "sat") else o
    be, bd = base(eo), base(do)
    if eo == "neg" or do == "neg":
        e1 = t.args(emu)[0] if eo == "neg" else emu
        d1 = t.args(drv)[0] if do == "neg" else drv
        if eo == "neg" and do == "neg":
            return mechanism(t, e1, d1)
        return "sign (negation placed otherwise)" if first_difference(t, e1, d1) is None \
            else mechanism(t, e1, d1)
    if bd == "fma" and be == "add":
        return "fma: the driver fuses, emu rounds the product"
    if be == "fma" and bd == "add":
        return "fma: emu fuses, the driver rounds the product"
    if be == "fma" and bd == "fma":
        ep, dp = t.args(emu)[:2], t.args(drv)[:2]
        if sorted(ep) != sorted(dp):
            inner = t.args(emu)[2]
            return "fma: the other product fused" if _products(t, inner) & {tuple(sorted(dp))} \
                else "fma: other factors"
        return "fma: other addend"
    if bd == "fma" and be == "mul" or be == "fma" and bd == "mul":
        return "fma vs product (a factor or addend folded)"
    if be == bd == "add":
        if sorted(_chain(t, emu, eo)) == sorted(_chain(t, drv, do)):
            return "association of a sum"
        return "add: operands differ"
    if be == bd == "mul":
        if sorted(_chain(t, emu, eo)) == sorted(_chain(t, drv, do)):
            return "association of a product"
        return "mul: operands differ"
    if "h" in (eo, do) or "w" in (eo, do) or (eo[0] == "h") != (do[0] == "h"):
        return "f16: rounding or precision differs"
    if eo == do == "c":
        return "constant value"
    if "sel" in (eo, do) or "cmp" in (eo, do) or "not" in (eo, do) or "join" in (eo, do):
        return f"select or branch ({eo} vs {do})"
    return f"{eo} vs {do}"
