"""Random compute programs shaped like real kernels, in WGSL and in GLSL, deterministic by seed.

They judge the compiler model (emu/isa/compiler.py) against a GPU: every program is written twice,
once for WebGPU (WGSL: through Dawn's Tint) and once for Vulkan (GLSL: glslang's SPIR-V straight to
the driver), with the same arithmetic in the same order, so the two recordings differ only where
the translator does. Each invocation reads ``n_inputs`` f32 values of its own (and, in loops, its
neighbours') from binding 0 and writes ``n_outputs`` f32 results to binding 1 (f16 values widened
exactly).

Families (``seed % 4``):
  f32     straight-line f32: named temporaries used more than once, products feeding sums and
          differences, divisions, activation and norm builtins, clamps and selects;
  f16     the same in f16, with conversions from and to f32 between;
  loop    short dot-product and reduction loops (sums of products, max, sums of squares then
          an inverse square root, exp(x - max) sums), f32 or f16 accumulators;
  func    helper functions (a product returned, a temporary stored then returned), vector helpers
          (dot, length, normalize), f16/f32 mixed.

    python -m emu.hw.randprog SEED [--glsl]        # print one program
"""
from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field

import numpy as np

FAMILIES = ("f32", "f16", "loop", "func")
INVOCATIONS = 128
WORKGROUP = 64
GENERATOR_VERSION = 1          # bump when the programs a seed gives change


def family_of(seed: int) -> str:
    return FAMILIES[seed % len(FAMILIES)]


# -- expressions: (kind, type, ...) tuples, emitted per language ---------------------------------

_WGSL_T = {"f32": "f32", "f16": "f16"}
_GLSL_T = {"f32": "float", "f16": "float16_t"}
_WGSL_V = {"f32": "vec{}<f32>", "f16": "vec{}<f16>"}
_GLSL_V = {"f32": "vec{}", "f16": "f16vec{}"}


@dataclass(frozen=True)
class E:
    kind: str                   # var, const, bin, neg, call, select, cast, vec, swz
    type: str                   # f32 / f16 (scalar) or f32x3 style for vectors
    args: tuple = ()
    name: str = ""              # var name, operator, builtin name, or swizzle
    value: float = 0.0


def _lit(v: float, t: str, lang: str) -> str:
    s = repr(float(v))
    if "e" not in s and "." not in s:
        s += ".0"
    if t == "f16":
        return s + ("h" if lang == "wgsl" else "hf")
    return s


def _ty(t: str, lang: str) -> str:
    if "x" in t:
        s, n = t.split("x")
        return (_WGSL_V if lang == "wgsl" else _GLSL_V)[s].format(n)
    return (_WGSL_T if lang == "wgsl" else _GLSL_T)[t]


_GLSL_NAMES = {"inverseSqrt": "inversesqrt"}


def emit(e: E, lang: str) -> str:
    k = e.kind
    if k == "var":
        return e.name
    if k == "const":
        return _lit(e.value, e.type, lang)
    if k == "bin":
        return f"({emit(e.args[0], lang)} {e.name} {emit(e.args[1], lang)})"
    if k == "neg":
        return f"(-{emit(e.args[0], lang)})"
    if k == "call":
        fn = _GLSL_NAMES.get(e.name, e.name) if lang == "glsl" else e.name
        return f"{fn}({', '.join(emit(a, lang) for a in e.args)})"
    if k == "select":           # args: f, t, (a, b) of a < b
        f, t, a, b = (emit(x, lang) for x in e.args)
        return f"select({f}, {t}, {a} < {b})" if lang == "wgsl" else f"(({a} < {b}) ? {t} : {f})"
    if k in ("cast", "vec"):
        return f"{_ty(e.type, lang)}({', '.join(emit(a, lang) for a in e.args)})"
    if k == "swz":
        return f"{emit(e.args[0], lang)}.{e.name}"
    raise AssertionError(k)


# -- statements ----------------------------------------------------------------------------------

@dataclass
class Stmt:
    kind: str                   # let, var, assign, out, for, raw
    name: str = ""
    type: str = "f32"
    expr: E | None = None
    body: list = field(default_factory=list)
    count: int = 0              # for: trip count; out: output slot


def _emit_stmts(stmts, lang: str, ind: str, out) -> None:
    for s in stmts:
        if s.kind == "let":
            out.append(f"{ind}let {s.name}: {_ty(s.type, lang)} = {emit(s.expr, lang)};" if lang == "wgsl"
                       else f"{ind}{_ty(s.type, lang)} {s.name} = {emit(s.expr, lang)};")
        elif s.kind == "var":
            out.append(f"{ind}var {s.name}: {_ty(s.type, lang)} = {emit(s.expr, lang)};" if lang == "wgsl"
                       else f"{ind}{_ty(s.type, lang)} {s.name} = {emit(s.expr, lang)};")
        elif s.kind == "assign":
            out.append(f"{ind}{s.name} = {emit(s.expr, lang)};")
        elif s.kind == "out":
            v = emit(s.expr, lang)
            v = f"f32({v})" if lang == "wgsl" else f"float({v})"
            out.append(f"{ind}o[i * {{K}}u + {s.count}u] = {v};")
        elif s.kind == "for":
            out.append(f"{ind}for (var {s.name}: u32 = 0u; {s.name} < {s.count}u; {s.name} = {s.name} + 1u) {{"
                       if lang == "wgsl" else f"{ind}for (uint {s.name} = 0u; {s.name} < {s.count}u; {s.name}++) {{")
            _emit_stmts(s.body, lang, ind + "  ", out)
            out.append(f"{ind}}}")
        else:
            raise AssertionError(s.kind)


@dataclass
class Function:
    name: str
    params: list                # (name, type)
    ret: str
    body: list                  # statements; the last is returned
    result: E

    def emit(self, lang: str) -> str:
        out = []
        if lang == "wgsl":
            ps = ", ".join(f"{n}: {_ty(t, lang)}" for n, t in self.params)
            out.append(f"fn {self.name}({ps}) -> {_ty(self.ret, lang)} {{")
        else:
            ps = ", ".join(f"{_ty(t, lang)} {n}" for n, t in self.params)
            out.append(f"{_ty(self.ret, lang)} {self.name}({ps}) {{")
        _emit_stmts(self.body, lang, "  ", out)
        out.append(f"  return {emit(self.result, lang)};")
        out.append("}")
        return "\n".join(out)


@dataclass
class Program:
    seed: int
    family: str
    n_inputs: int
    n_outputs: int
    uses_f16: bool
    functions: list
    body: list
    invocations: int = INVOCATIONS

    @property
    def wgsl(self) -> str:
        head = ["enable f16;"] if self.uses_f16 else []
        head += [f"// emu.hw.randprog seed {self.seed} ({self.family}), generator {GENERATOR_VERSION}",
                 "@group(0) @binding(0) var<storage, read> inp: array<f32>;",
                 "@group(0) @binding(1) var<storage, read_write> o: array<f32>;", ""]
        fns = [f.emit("wgsl") + "\n" for f in self.functions]
        body = []
        _emit_stmts(self.body, "wgsl", "  ", body)
        main = [f"@compute @workgroup_size({WORKGROUP})",
                "fn main(@builtin(global_invocation_id) gid: vec3<u32>) {",
                "  let i = gid.x;"] + body + ["}"]
        return "\n".join(head + fns + main).replace("{K}", str(self.n_outputs)) + "\n"

    @property
    def glsl(self) -> str:
        head = ["#version 450"]
        if self.uses_f16:
            head.append("#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require")
        head += [f"// emu.hw.randprog seed {self.seed} ({self.family}), generator {GENERATOR_VERSION}",
                 f"layout(local_size_x = {WORKGROUP}) in;",
                 "layout(set = 0, binding = 0) readonly buffer I { float inp[]; };",
                 "layout(set = 0, binding = 1) buffer O { float o[]; };", ""]
        fns = [f.emit("glsl") + "\n" for f in self.functions]
        body = []
        _emit_stmts(self.body, "glsl", "  ", body)
        main = ["void main() {", "  uint i = gl_GlobalInvocationID.x;"] + body + ["}"]
        return "\n".join(head + fns + main).replace("{K}", str(self.n_outputs)) + "\n"

    def inputs(self) -> np.ndarray:
        """The f32 inputs, n_inputs per invocation (the loop family reads past its own: padded)."""
        rng = np.random.default_rng([self.seed, 7])
        n = (self.invocations + 8) * self.n_inputs
        mag = rng.uniform(-4, 4, n) * 2.0 ** rng.integers(-4, 3, n)
        return mag.astype(np.float32)


# -- generation ----------------------------------------------------------------------------------

UNARY = ("exp", "tanh", "sqrt", "inverseSqrt", "abs", "floor", "fract", "exp2", "sin", "cos", "log")
BINARY_FN = ("min", "max")


class _Gen:
    def __init__(self, seed: int):
        self.r = random.Random(seed * 7919 + GENERATOR_VERSION)
        self.n = 0
        self.pool: dict[str, list[E]] = {"f32": [], "f16": []}
        self.inputs_used = 0

    def fresh(self, prefix="t") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def const(self, t: str) -> E:
        r = self.r
        v = r.choice([0.5, 2.0, 1.0, 0.25, 3.0, 0.044715, 0.7978846, 1.5, 0.1, 1e-5, 0.3, 0.125, 768.0, 1.702, 0.7])
        if r.random() < 0.4:
            v = round(r.uniform(-3, 3), 3) or 0.5
        return E("const", t, value=v)

    def leaf(self, t: str) -> E:
        if self.pool[t] and self.r.random() < 0.85:
            # later temporaries are picked more often: chains and reuse, as in real kernels
            p = self.pool[t]
            return p[min(len(p) - 1, int(len(p) * self.r.random() ** 0.6))]
        return self.const(t)

    def nonconst(self, t: str) -> E:
        return self.r.choice(self.pool[t])

    def safe_positive(self, e: E) -> E:
        """An argument kept in range for sqrt / log / inverseSqrt: abs(e) + c or e * e + c."""
        t = e.type
        if not _reads_a_value(e):
            e = self.nonconst(t)
        if self.r.random() < 0.5:
            return E("bin", t, (E("call", t, (e,), "abs"), E("const", t, value=self.r.choice([1e-5, 0.5, 1.0]))), "+")
        return E("bin", t, (E("bin", t, (e, e), "*"), E("const", t, value=self.r.choice([1e-5, 1.0, 0.25]))), "+")

    def expr(self, t: str, depth: int) -> E:
        """A random expression of type t; never one of constants alone (the translator would fold
        it on the host: Tint's const-expressions are not the GPU's arithmetic)."""
        e = self._expr(t, depth)
        return e if e.kind == "const" or _reads_a_value(e) else self.nonconst(t)

    def _expr(self, t: str, depth: int) -> E:
        r = self.r
        if depth <= 0:
            return self.leaf(t)
        roll = r.random()
        if roll < 0.45:                                         # sums and products
            op = r.choice("+-*+-*/*")
            a = self.expr(t, depth - 1)
            b = self.expr(t, depth - 1) if r.random() < 0.7 else self.nonconst(t)
            if a.kind == "const" and b.kind == "const":
                a = self.nonconst(t)
            if op == "/" and b.kind != "const" and r.random() < 0.5:
                b = self.safe_positive(b)
            return E("bin", t, (a, b), op)
        if roll < 0.55:                                         # a product into a sum, explicitly
            a, b, c = self.nonconst(t), self.expr(t, depth - 1), self.expr(t, depth - 1)
            prod = E("bin", t, (a, b), "*")
            return E("bin", t, (c, prod) if r.random() < 0.5 else (prod, c), r.choice("+-"))
        if roll < 0.7:                                          # unary builtins
            fn = r.choice(UNARY)
            a = self.expr(t, depth - 1)
            if fn in ("sqrt", "inverseSqrt", "log"):
                a = self.safe_positive(a)
            if fn in ("exp", "exp2"):
                a = E("call", t, (a, E("const", t, value=-8.0), E("const", t, value=8.0)), "clamp")
            return E("call", t, (a,), fn)
        if roll < 0.78:
            a, b = self.expr(t, depth - 1), self.nonconst(t)
            return E("call", t, (a, b), r.choice(BINARY_FN))
        if roll < 0.84:
            a = self.expr(t, depth - 1)
            lo = r.choice([-1.0, 0.0, -2.0])
            return E("call", t, (a, E("const", t, value=lo), E("const", t, value=lo + r.choice([1.0, 2.0, 3.0]))), "clamp")
        if roll < 0.89:
            return E("select", t, (self.expr(t, depth - 1), self.expr(t, depth - 1), self.nonconst(t), self.leaf(t)))
        if roll < 0.93:
            return E("call", t, (E("const", t, value=-1.0), E("const", t, value=2.0), self.expr(t, depth - 1)), "smoothstep")
        if roll < 0.97:
            return E("call", t, (self.nonconst(t), self.expr(t, depth - 1), E("call", t, (self.nonconst(t),), "fract")), "mix")
        return E("neg", t, (self.expr(t, depth - 1),))

    def load(self, t: str, body: list, offset: str = "") -> E:
        """let xN = inp[i * I + k] (as type t)."""
        k = self.inputs_used
        self.inputs_used += 1
        src = E("var", "f32", name=f"inp[i * {{I}}u + {k}u{offset}]")
        name = self.fresh("x")
        body.append(Stmt("let", name, t, src if t == "f32" else E("cast", t, (src,))))
        v = E("var", t, name=name)
        self.pool[t].append(v)
        return v

    def temp(self, t: str, body: list, depth: int, mutable: bool = False) -> E:
        name = self.fresh()
        body.append(Stmt("var" if mutable else "let", name, t, self.expr(t, depth)))
        v = E("var", t, name=name)
        self.pool[t].append(v)
        return v


def _reads_a_value(e: E) -> bool:
    return e.kind == "var" or any(_reads_a_value(a) for a in e.args)


def _straight(g: _Gen, body: list, t: str, mixed: bool) -> list:
    r = g.r
    for _ in range(r.randint(2, 4)):
        g.load(t, body)
    outs = []
    for _ in range(r.randint(3, 7)):
        v = g.temp(t, body, r.randint(1, 3), mutable=r.random() < 0.25)
        if mixed and r.random() < 0.3:                     # through the other precision and back
            o = "f16" if t == "f32" else "f32"
            name = g.fresh("c")
            body.append(Stmt("let", name, o, E("cast", o, (v,))))
            w = E("var", o, name=name)
            g.pool[o].append(w)
            back = g.fresh("c")
            body.append(Stmt("let", back, t, E("cast", t, (E("bin", o, (w, w), "*"),))))
            g.pool[t].append(E("var", t, name=back))
        if r.random() < 0.4:
            outs.append(v)
    for _ in range(r.randint(1, 3)):
        outs.append(g.expr(t, r.randint(1, 3)))
    return outs


def _loop(g: _Gen, body: list) -> list:
    r = g.r
    t = r.choice(["f32", "f32", "f16"])
    n = r.randint(2, 8)
    base = g.inputs_used
    g.inputs_used += n
    scale = g.load(t, body)
    outs = []
    for _ in range(r.randint(1, 3)):
        kind = r.choice(["dot", "sumsq", "max", "softmax", "axpy"])
        acc = g.fresh("acc")
        init = E("const", t, value=0.0 if kind != "max" else -60000.0)
        body.append(Stmt("var", acc, t, init))
        k = g.fresh("k")
        ld = lambda off: E("var", "f32", name=f"inp[i * {{I}}u + {base}u + (({k} + {off}u) % {n}u)]")  # noqa: E731
        a = ld(0) if t == "f32" else E("cast", t, (ld(0),))
        b = ld(1) if t == "f32" else E("cast", t, (ld(1),))
        av = E("var", t, name=acc)
        inner = []
        if kind == "dot":
            upd = E("bin", t, (av, E("bin", t, (a, b), "*")), "+")
        elif kind == "sumsq":
            xn = g.fresh("v")
            inner.append(Stmt("let", xn, t, E("bin", t, (a, scale), "*")))
            xv = E("var", t, name=xn)
            upd = E("bin", t, (av, E("bin", t, (xv, xv), "*")), "+")
        elif kind == "max":
            upd = E("call", t, (av, E("bin", t, (a, scale), "*")), "max")
        elif kind == "softmax":
            upd = E("bin", t, (av, E("call", t, (E("bin", t, (a, E("call", t, (scale,), "abs")), "-"),), "exp")), "+")
        else:
            upd = E("bin", t, (E("bin", t, (av, scale), "*"), E("bin", t, (a, b), "*")), r.choice("+-"))
        inner.append(Stmt("assign", acc, t, upd))
        body.append(Stmt("for", k, body=inner, count=n))
        g.pool[t].append(av)
        if kind == "sumsq":
            c = E("const", t, value=r.choice([1e-5, 1e-6 if t == "f32" else 1e-3]))
            mean = E("bin", t, (av, E("const", t, value=float(n))), "/")
            outs.append(E("bin", t, (scale, E("call", t, (E("bin", t, (mean, c), "+"),), "inverseSqrt")), "*"))
        elif kind == "softmax":
            outs.append(E("bin", t, (E("const", t, value=1.0), av), "/"))
        else:
            outs.append(av)
    outs.append(g.expr(t, 2))
    return outs


def _helpers(g: _Gen, body: list) -> tuple[list, list]:
    r = g.r
    t = r.choice(["f32", "f16"])
    xs = [g.load(t, body) for _ in range(4)]
    fns, outs = [], []
    for j in range(r.randint(1, 3)):
        name = f"h{j}"
        shape = r.choice(["product", "stored", "gelu", "silu", "affine", "vector"])
        pa, pb = E("var", t, name="a"), E("var", t, name="b")
        stmts = []
        if shape == "product":
            res = E("bin", t, (E("bin", t, (pa, pb), r.choice("+-")), pb), "*")
        elif shape == "stored":
            stmts.append(Stmt("var", "v", t, E("bin", t, (pa, pb), "*")))
            stmts.append(Stmt("assign", "v", t, E("bin", t, (E("const", t, value=r.choice([0.5, 2.0, 20.0])),
                                                             E("call", t, (E("var", t, name="v"),), "tanh")), "*")))
            res = E("var", t, name="v")
        elif shape == "gelu":
            inner = E("bin", t, (E("const", t, value=0.7978846), E("bin", t, (pa, E("bin", t, (E("const", t, value=1.0),
                      E("bin", t, (E("bin", t, (E("const", t, value=0.044715), pa), "*"), pa), "*")), "+")), "*")), "*")
            res = E("bin", t, (E("bin", t, (E("const", t, value=0.5), pa), "*"),
                               E("bin", t, (E("const", t, value=1.0), E("call", t, (inner,), "tanh")), "+")), "*")
            res = E("bin", t, (res, pb), "+")
        elif shape == "silu":
            res = E("bin", t, (pa, E("bin", t, (E("const", t, value=1.0), E("bin", t, (E("const", t, value=1.0),
                      E("call", t, (E("call", t, (E("neg", t, (pa,)), E("const", t, value=-8.0), E("const", t, value=8.0)), "clamp"),), "exp")), "+")), "/")), "*")
        elif shape == "affine":
            stmts.append(Stmt("let", "s", t, E("bin", t, (pa, pb), "*")))
            sv = E("var", t, name="s")
            res = E("bin", t, (E("bin", t, (sv, pa), "+"), E("bin", t, (sv, pb), "-")), "*")
        else:
            vt = f"{t}x3"
            va = E("vec", vt, (pa, pb, E("bin", t, (pa, pb), "*")))
            vb = E("vec", vt, (pb, E("bin", t, (pa, E("const", t, value=0.5)), "-"), pa))
            stmts.append(Stmt("let", "u", vt, va))
            stmts.append(Stmt("let", "w", vt, vb))
            u, w = E("var", vt, name="u"), E("var", vt, name="w")
            res = r.choice([E("call", t, (u, w), "dot"), E("call", t, (u,), "length"),
                            E("swz", t, (E("call", vt, (u,), "normalize"),), r.choice("xyz")),
                            E("bin", t, (E("call", t, (u, w), "dot"), E("call", t, (w,), "length")), "+")])
            if "length" in repr(res) or "normalize" in repr(res):
                # keep the length's argument away from zero
                stmts[0] = Stmt("let", "u", vt, E("vec", vt, (pa, pb, E("bin", t, (E("call", t, (pa,), "abs"),
                                                                                      E("const", t, value=0.5)), "+"))))
        fns.append(Function(name, [("a", t), ("b", t)], t, stmts, res))
        for _ in range(r.randint(1, 2)):
            a, b = r.choice(xs + g.pool[t]), r.choice(xs)
            call = E("call", t, (a, b), name)
            if r.random() < 0.6:                           # the call's result into a sum
                call = E("bin", t, (call, g.expr(t, 1)) if r.random() < 0.5 else (g.expr(t, 1), call), r.choice("+-"))
            v = g.fresh()
            body.append(Stmt("let", v, t, call))
            g.pool[t].append(E("var", t, name=v))
            outs.append(E("var", t, name=v))
    outs.append(g.expr(t, 2))
    return fns, outs


def generate(seed: int) -> Program:
    """The program of ``seed`` (its family is ``family_of(seed)``)."""
    fam = family_of(seed)
    g = _Gen(seed)
    body: list = []
    fns: list = []
    if fam == "f32":
        outs = _straight(g, body, "f32", mixed=g.r.random() < 0.3)
    elif fam == "f16":
        outs = _straight(g, body, "f16", mixed=g.r.random() < 0.5)
    elif fam == "loop":
        outs = _loop(g, body)
    else:
        fns, outs = _helpers(g, body)
    outs = outs[:6]
    body += [Stmt("out", expr=e, count=j) for j, e in enumerate(outs)]
    n_in = g.inputs_used
    text = repr(body) + repr(fns)
    uses_f16 = "'f16'" in text
    prog = Program(seed, fam, n_in, len(outs), uses_f16, fns, body)
    _fill_inputs(prog.body, n_in)
    return prog


def _fill_inputs(stmts, n_in: int):
    """Put the input count into the loads' index expressions (known once all are made)."""
    def fix(e: E) -> E:
        if e.kind == "var" and "{I}" in e.name:
            return E("var", e.type, name=e.name.replace("{I}", str(n_in)))
        if e.args:
            return E(e.kind, e.type, tuple(fix(a) for a in e.args), e.name, e.value)
        return e
    for s in stmts:
        if s.expr is not None:
            s.expr = fix(s.expr)
        _fill_inputs(s.body, n_in)


def main(argv) -> int:
    if not argv or not argv[0].lstrip("-").isdigit():
        print("usage: python -m emu.hw.randprog SEED [--glsl]", file=sys.stderr)
        return 2
    p = generate(int(argv[0]))
    print(p.glsl if "--glsl" in argv else p.wgsl, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


# -- running a program ---------------------------------------------------------------------------

PATHS = ("dawn", "vulkan")         # WGSL through Dawn (Tint, then the driver); GLSL through Vulkan


def source(prog: Program, path: str) -> tuple[str, str]:
    """(text, file name) of the program as the path takes it."""
    if path == "dawn":
        return prog.wgsl, f"randprog_{prog.seed}.wgsl"
    return prog.glsl, f"randprog_{prog.seed}.comp"


def compiled(prog: Program, path: str, profile: str = "nvidia-h200", fma: bool = True):
    """The program's IR through ``profile``'s compiler model for ``path`` (``fma``: with fma
    formation; without, the IR that formation sees): what scripts/randprog_why.py and
    scripts/sass_match.py read."""
    from dataclasses import replace
    from ..api import compile_wgsl
    from ..isa.compiler import stack_for
    from ..profiles import load_profile
    text, file = source(prog, path)
    stack = stack_for(load_profile(profile), path == "vulkan")
    return compile_wgsl(text, file, stack=stack if fma else replace(stack, fma=False))[0]


def run_emu(prog: Program, path: str, profile: str = "nvidia-h200") -> np.ndarray:
    """The program's outputs (uint32 bits of each f32) on emu's ``profile``."""
    from ..api import Device
    text, file = source(prog, path)
    dev = Device(profile)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(text, file))
    out = dev.create_buffer(size=prog.invocations * prog.n_outputs * 4)
    dev.dispatch(pipe, {(0, 0): dev.create_buffer(prog.inputs()), (0, 1): out},
                 (prog.invocations // WORKGROUP, 1, 1))
    return out.read(np.uint32).copy()


def load_recording(path) -> dict:
    """{(path, seed): uint32 outputs} of a recording (keys 'dawn/SEED', 'vulkan/SEED')."""
    with np.load(path) as z:
        return {(k.split("/")[0], int(k.split("/")[1])): z[k] for k in z.files if "/" in k}


def compare(recorded: dict, profile: str = "nvidia-h200", progress=None) -> dict:
    """Per (path, family): [programs identical, programs, outputs identical, outputs], the
    (path, seed)s that differ and, for each, the output slots that differ, emu against
    ``recorded`` (load_recording's form)."""
    table, differ, slots = {}, [], {}
    for n, ((path, seed), gpu) in enumerate(sorted(recorded.items())):
        prog = generate(seed)
        got = run_emu(prog, path, profile)
        row = table.setdefault((path, prog.family), [0, 0, 0, 0])
        same = int((got == gpu).sum())
        row[0] += same == gpu.size
        row[1] += 1
        row[2] += same
        row[3] += gpu.size
        if same != gpu.size:
            differ.append((path, seed))
            bad = (got.reshape(prog.invocations, -1) != gpu.reshape(prog.invocations, -1)).any(axis=0)
            slots[(path, seed)] = [int(j) for j in np.flatnonzero(bad)]
        if progress and n % 100 == 99:
            progress(n + 1)
    return {"table": table, "differ": differ, "slots": slots}


def format_table(table: dict) -> str:
    lines = ["| path | family | programs identical | outputs identical |", "|---|---|---|---|"]
    for (path, fam), (p, pn, o, on) in sorted(table.items()):
        lines.append(f"| {path} | {fam} | {p}/{pn} ({100 * p / pn:.1f}%) | {o}/{on} ({100 * o / on:.2f}%) |")
    return "\n".join(lines)
