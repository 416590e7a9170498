"""The compiler model: what a device's shader compilers do to floating-point arithmetic.

A shader reaches an NVIDIA GPU through up to two compilers: a translator (Tint inside Dawn, naga
inside wgpu: present only for WGSL through them) that writes SPIR-V, then the driver's SPIR-V
compiler. Plain arithmetic keeps its bits through both except where the driver fuses a multiply
into an add (one rounding instead of two), divides as x * RCP(y), or turns 1 / sqrt into one RSQ.
Which products fuse is not a property of the source text but of what the driver sees after its
earlier passes, so this module runs those passes, in the driver's order, over the IR:

  translator (WGSL only)   tint          smoothstep written as arithmetic (Tint's SPIR-V has no
                                         SmoothStep): t = clamp((x - e0) / (e1 - e0), 0, 1),
                                         t * (t * (3 - 2 * t)); everything else that touches
                                         floats maps one to one (NMin/NMax/NClamp for min/max/
                                         clamp, which the driver treats as FMin...). Read in
                                         Tint's SPIR-V of the random programs, captured on
                                         lavapipe (scripts/translator_spirv.py).
                           naga          no pass: its SPIR-V keeps GLSL.std.450 SmoothStep and
                                         FMin/FMax/FClamp, like glslang's.
  driver (nvidia)          unroll        loops over a cooperative matrix's elements, where each
                                         element's update then fuses (runs first: it matches the
                                         front end's loop shape)
                           inline        calls whose callee returns once, at its end
                           flatten       a branch that only computes and stores variables runs both
                                         sides and selects (GLSL's ternaries; x < x is false, a
                                         select on a constant its operand: fold)
                           unroll-f16    counted loops that update an f16 variable
                           promote       function variables kept in registers: a load of a value
                                         stored before it (nothing between that could write it)
                                         is that value
                           pair-f16      an unrolled f16 sum of products as HFMA2's two halves (four
                                         or more), or as one chain from the first product (two, three)
                           cancel        a value added and subtracted in one sum (operands opened one
                                         level) dropped: (t - a) - (t - b) is b - a
                           number        value numbering: one value for equal pure expressions
                                         (operands of a commutative op in either order, f32 and
                                         f16; loads of one element with no write of it between):
                                         what the driver sees as one product
                           fold          x - x is +0, x * 0 is +0, x / x is 1, x * 1, x + 0,
                                         (a - x) + x are x or a, x - (x + b) is -b, -(a - b) is
                                         b - a, k1 + (k2 - v) is (k1 + k2) - v, +0 / y is +0,
                                         (a - c) + (c + b) is a + b, (a + c) - (c + b) is a - b,
                                         (a + c) - (c - b) is a + b, (x - b) - x is -b (no NaN, infinity or
                                         signed-zero cases kept)
                           f16-round-trip  f32(f16(x)) of an f32 x is x (through min/max/select of
                                         one value, negation and abs)
                           square        a * (a * y) is (a * a) * y
                           algebra       constant factors of a product multiplied together (again after
                                         expand); k * (x + k1) is fma(x, k, k * k1)
                           rsqrt         f32 1 / sqrt(x) is one RSQ; x / sqrt(y) is x * RSQ(y) (f32, f16)
                           expand        smoothstep, mix, dot, length, normalize as the driver's
                                         arithmetic (then numbered again), log as LG2 * ln 2 (f16:
                                         MUFU.LG2.F16, HMUL2), smoothstep's last product
                                         open to the add around it; f32 constant edges folded into
                                         one fma, x * k - e0 * k; f16: (t * t) * ((3 - t) - t)
                           range         what the values' ranges decide (clamp, min, max, comparisons;
                                         then a select on the comparison), arithmetic and builtins of
                                         constants folded
                           division-chain  (x / y) / z is x / (y * z), x / (y / z) is (x * z) / y
                                         (then numbered again)
                           f16-constant-division  f16 v / c is v * f16(1/c); (x + k) / c is
                                         fma(x, 1/c, k/c)
                           factor        a * c + b * c is (a + b) * c (one of them used only
                                         there), p + p is (a + a) * b, x + x * k is x * (1 + k),
                                         repeated on what it made; the sum inside collects like terms
                                         (x + (x - y) is fma(x, 2, -y)); f32 (x * y) / x is y
                           shift         (x + k1) + k2 is x + (k1 + k2) (again on what factoring made);
                                         in the fold pass too, before algebra
                           fma           all or nothing: a product fuses into every add or
                                         subtract that uses it, unless one user is not an add, or
                                         takes the other product (of two the left; f16: a multiply
                                         before a division), or subtracts it while it has several
                                         users; then it is rounded for all. x / y + z is fma(x,
                                         RCP(y), z) where the division has no other use (f32 and
                                         f16); f32(a * b) of f16 values fuses into its first add
                                         or subtract only
                           fma-constants k1 - fma(a, b, k2) is fma(-a, b, k1 - k2)
                           relu-f16      (after fma) f16 clamp(v, 0, hi) of an add/sub/fma v as
                                         .RELU then min: a NaN v gives hi

Each rewritten instruction carries `contracted`, the decision that formed it (or, for
`rounded-after-division`, kept it rounded), which `emu ir --profile nvidia-h200 SHADER` prints.
``DECISIONS`` names the recording that pins each.
"""
from __future__ import annotations

from collections import Counter

import numpy as np
from dataclasses import dataclass

from .ir import Block, Builder, Function, Inst, Module, Value
from .types import BOOL, F16, F32, VOID, scalar_of, width

# decision -> the measurement that pins it
DECISIONS = {
    "flatten": "a branch that only computes and stores function variables is both branches and a select: GLSL's "
               "(x3 < x2) ? x3 * x2 : 1.702 - x3 * x2 is one HMUL2 shared by a SEL and the unfused HADD2 (SASS of "
               "randprog_fit.npz seed 13, Vulkan; through Dawn it is WGSL's select already and matched); (x1 < x1) ? .. "
               ": t9 * t9 fuses t9 * t9 into the add after it (seed 25: the branch is gone)",
    "division-chain": "(x / y) / z is x * RCP(y * z): f16 (x3 / (|x3| + 0.5)) / (|x1| + 1) is HMUL2 of the two "
                      "divisors, one MUFU.RCP.F16, one HMUL2 (SASS of randprog_fit.npz seed 297); f32 (x2 / t6) / "
                      "(0.7 * x4) is FMUL, MUFU.RCP, FFMA (seed 852); fit seeds 113, 297, 433, 845 (f16), 852, 1160 "
                      "(f32) 128 of 128 only so; constant divisors not measured. x / (y / z), y / z used only there, "
                      "is (x * z) * RCP(y) where x is not itself a quotient that joins first (judge seed 100453's "
                      "SASS: HMUL2 x1 * (x1 - x2) then * RCP(t6) for (x1 - x2) / (t6 / x1); fit2 seed 500148's: "
                      "((t5 - 1) / (2.985 + t5)) / ((t5 - t8) / x2) joins as (x / y) / z); the joined divisor y * z "
                      "is numbered with the shader's own y * z (seed 100453: (0.25 / t4) / t4's t4 * t4 is the one "
                      "of t4 * t4 + 0.25, HMUL2 then its MUFU.RCP.F16 and an HADD2). With DECISIONS['algebra']'s "
                      "products used only there: f16 fit+judge 357 -> 364 of 444 (Vulkan), 359 -> 366 of 450 (Dawn), "
                      "fit2 234 -> 240, 233 -> 239 of 300; f32 fit+judge 332 -> 334, 330 -> 333, fit2 205 -> 209, "
                      "199 -> 203; func fit2 242 -> 243; loop fit2 287 -> 288, 286 -> 287 (both paths alike); none lost",
    "relu-f16": "f16 clamp(v, 0, hi) of an add, subtract or fma v is .RELU then HMNMX2 with hi, a NaN v giving hi: "
                "randprog_fit.npz seed 81 (HFMA2.RELU, HMNMX2 2 in its SASS; -0.7065 = 2 * -0.3533 where 0 was "
                "modelled), seeds 1, 9 (128 of 128 after); hi = 1 is .SAT (HFMA2.SAT), NaN giving 0 (seeds 645, "
                "777, smoothstep's clamp)",
    "inline": "a product returned by a helper fuses with its caller's add: llama.cpp flash attention with "
              "softcap (1,024 of 1,024) and the random 'func' programs, tests/data/hw/h200/randprog_*.npz",
    "promote": "a product kept in a function variable fuses with its reader: the random programs' `var` "
               "temporaries and loop accumulators",
    "number": "equal expressions are one product, f32 a + b and b + a (a * b, min, max) one value: the random "
              "programs' repeated subexpressions; randprog_fit.npz seed 332's SASS (x2 * x3 and x3 * x2: one FMUL); f16 alike (seed 917's SASS: x4 * x3 and "
              "x3 * x4 one HMUL2, shared by an HADD2 and a SEL): f16 family fit 244 -> 246 of 300 (Dawn), 242 -> 243 "
              "of 294 (Vulkan), judge 104 -> 106 of 150, 105 -> 107, none lost",
    "fma": "all or nothing: a product fuses into every add or subtract that uses it, or is rounded for all: "
           "where one user is not an add (a builtin whose code squares its argument, tanh, counts as one for "
           "x * x), where an add's other operand is the product fused there (of two products the one with fewer "
           "users, DECISIONS['fma-fewer-users'], then the left), where "
           "it has more than two users, or where every user subtracts it; a division only into its one use, "
           "also into an add of another fma (DECISIONS['fma-division-beside-fma']). The driver's "
           "SASS of randprog_fit.npz seeds 15, 824, 88 (two users, both FFMAs), 19 (c * c of two dots one FMUL, FADDed to each: in one the left product fuses), "
           "96 (three users: FADDs of one FMUL), 40, 332 (k1 - p, k2 - p: FADDs), 108 (tanh), 99 (division), "
           "44, 288, 312 (p1 - p2: FFMA of p1); with the other rewrites of this change (fold, factor, "
           "fma-constants, expand-log, expand-fract, divide-rsqrt): Vulkan fit f32 178 -> 219 of 294, func 132 -> "
           "212 of 293; judge f32 92 -> 103, func 63 -> 96 of 150 (two judge seeds' SASS read: 100180, 100224); "
           "Dawn fit f32 180 -> 220, func 133 -> 215 of 300; more than two users: DECISIONS['fma-shared']; "
           "not modelled: 156 rounds t4 * t4 for two; builtins.npz mul_add*",
    "fma-shared": "a product with more than two users, all adds or subtracts, fuses into every one where one of "
                  "them also reads one of its factors (s = a * b; (s + a) * (s - b), a helper's product, called "
                  "twice with its arguments swapped: four FFMAs in randprog_fit.npz seeds 71 and 603's SASS), and is "
                  "rounded for all where none does (seed 96: t5 = fract(t4) * (x2 * x2) in x2 + t5, x2 - t5, "
                  "sin(t6) + t5, three FADDs of one FMUL). The products of the Vulkan fit SASS with more than two users, all "
                  "adds (a study over scripts/sass_match.py's terms): with a factor read, fused into all in seeds 71, "
                  "679, 1108, into two of three in 603, rounded in 923; without one, rounded in 891, 959 (and 96). "
                  "Vulkan fit+judge f32 329 -> 330, func 309 -> 314 of 443-444 programs",
    "fma-fewer-users": "of an f32 add of two products that may fuse, the one with fewer users fuses (the left where "
                       "they tie), the other is rounded for all its users: x * x + (x - 0.5) * (x - 0.5) + x * x of "
                       "length() (x * x one product with two users) is FADD of x * x after FFMA (x - 0.5), (x - 0.5), "
                       "x * x in the SASS of randprog_fit.npz seeds 443, 507, 627, 735 (sass_match's 'emu fuses, the "
                       "driver rounds'); seed 19's c * c of two dots likewise FADDed to each. Vulkan fit+judge func 314 -> "
                       "325 of 443, f32 330 -> 330 of 444 (with 'fma-shared')",
    "fma-multiply-first": "of an add's two products the driver fuses a multiply before f32(a * b) of f16 a, b (a "
                          "widened product) before a division x * RCP(y), on either side; the other is rounded. f32: "
                          "x3 / x1 + x2 * x3 is FMUL x3, RCP(x1), then FFMA x2, x3 and it (randprog_fit.npz seed 1084's SASS, "
                          "likewise fit seeds 400, 551, 840, 980, 1147, judge 100063, 100152, 100335, 100343, 100448, "
                          "fit2 500408, 500566, 500671: divisions; fit 704, judge 100540, fit2 500444, 500592, 500660, "
                          "500668, 501000, 501024, 501032: widened products); an f32 subtract keeps its order, the left "
                          "fusing (p / q - a * b is FFMA p, RCP(q), -(a * b): fit seeds 23, 68, 494, judge 100000, 100187, "
                          "100344, 100460). f16 alike: x2 / (abs(x4) + 0.5) + h0(x4, x4), h0 returning a "
                          "product (fit seed 1067, both paths); an f16 subtract keeps its order too (randprog_fit2.npz seed "
                          "500757: (x1 / 1.195) / d - (x2 - 0.3) * v is HFMA2 x1 * 0.837, RCP(d), -p). x / k, k a constant, ranks as a multiply (x * RCP(k), "
                          "RCP(k) folded): 2 / y + x / 1.702 is FFMA x, 0.58754, 2 * RCP(y) in fit seed 608's SASS "
                          "(Vulkan 608 fixed, counted below; no program lost). The f32 adds of the Vulkan fit+judge+fit2 SASS whose "
                          "decision the driver's terms show (the guided evaluation of scripts/fma_study.py, each "
                          "unrolled iteration counted): 5,944 -> 5,970 of 6,047 as the driver. Programs bit-identical "
                          "(f32, func, loop families; f16 unchanged): fit Vulkan 735 -> 742 of 881, Dawn 741 -> 748 "
                          "of 900; judge 361 -> 368 of 450 on each path; fit2 Vulkan 732 -> 743, Dawn 725 -> 736 of "
                          "900: 52 programs fixed, 2 lost (judge 100040 on both paths: x4 / (t5 * x4) - 0.5 * t8 is "
                          "RCP(t5) - 0.5 * t8 in the driver's SASS, x4 cancelled, which emu does not fold; its "
                          "division fused had matched)",
    "fma-division-beside-fma": "x / y + c where c is itself an fma (an add that fused a product) is fma(x, "
                               "RCP(y), c), f32 and f16 alike. f32: the adds of a single-use division beside an fma "
                               "in the driver's SASS (scripts/fma_study.py's guided evaluation, Vulkan): fused in fit "
                               "seeds 64, 291, 704, 840, judge 100331, fit2 500092, 500232, 500628, 500768, rounded in "
                               "fit seed 99 only (x3 / (x4 * x4 + 0.25) + GELU(x4): FMUL x3, RCP then FADD; not "
                               "modelled, its program now differs on both paths). fit2 (every program, both paths): 6 "
                               "programs fixed per path (f32 5, func 1), none lost; fit and judge, the programs whose "
                               "fma formation this changes: 8 fixed on Dawn, 7 on Vulkan, fit 99 lost on both. "
                               "f16: randprog_fit.npz seed 189's "
                               "SASS ((x2 + x1) / (t5 * t5) - (clamp(x1) - x1 * (t4 * t3)) is HFMA2 x1, t4 * t3, -clamp, "
                               "then HFMA2 (x2 + x1), RCP, that); seed 253's (.. / (|x2| + 1e-5) + mix(..)). f16 family "
                               "fit+judge 350 -> 356 of 444 (Vulkan), 352 -> 358 of 450 (Dawn), fit2 228 -> 231, 227 -> 230 "
                               "of 300, none lost",
    "fma-division": "x / y + c is fma(x, RCP(y), c): 65,536 of 65,536 (tests/data/hw/h200/div_add.npz); f16 too "
                    "(randprog_fit.npz seed 425, 128 of 128)",
    "fma-constant-factor": "(k * x) * x + c is fma(k, x * x, c): GELU's 0.044715 * v * v + 1 "
                           "(traces/hw/README.md, builtins); only a square: (0.5 * a) * (1 + tanh(..)) + b is "
                           "FFMA (1 + tanh), 0.5 * a, b (randprog_fit.npz seed 39's SASS). x * x is a product of "
                           "its own before value numbering, one with the shader's other x * x, which a multiply "
                           "by k then reads, so that x * x is rounded for its adds: fit2 seed 500051's SASS "
                           "(inversesqrt(x2 * x2 + 1) beside GELU(x2): FMUL x2, x2 read by FFMA .., 0.044715, 1 "
                           "and by FADD .., 1), fit seed 1187 (h2(x2, x2)'s x2 * x2 + x2, x2 * x2 - x2 two "
                           "FADDs beside GELU(x2)). fit2 (every program, both paths): 11 programs fixed per path "
                           "(func 10, f16 1), none lost; fit and judge (every program): 20 fixed on Dawn, 18 on "
                           "Vulkan, none lost",
    "rounded-after-division": "0.7 - x * c after 0.7 - x / c of the same loads is rounded first: "
                              "4,096 of 4,096 (vulkan_scalar_contract_runs.npz); why is not known",
    "algebra": "x - x is +0 and so is +0 * x: the random 'func' programs' h(a, a) with (a - b) * b, "
               "+0 for every one of 128 invocations where IEEE gives -0 for negative a "
               "(tests/data/hw/h200/randprog_fit.npz vulkan seed 3); (k1 / y) * k2 is RCP(y) * (k1 * k2) "
               "and (k1 * x) * k2 is x * (k1 * k2): fit seed 212's SASS (FFMA R10, -2.3936539, |x2| for "
               "|x2| - (3.0 / x1) * 0.7978846; 128 of 128 only so); (x * k1) * (y * k2) is (x * y) * (k1 * k2), k1, k2 "
               "powers of two (not 1.702: judge seed 100224's SASS): "
               "seed 112's SASS ((t3 * 0.5) * (t3 * 0.5) + 0.25: FMUL t3, t3; FFMA .., 0.25, 0.25), and any k1, k2 "
               "where "
               "nothing else reads x * k1 and y * k2 (seed 196's SASS: (x2 * 0.3) * (x2 * 0.3) + 1e-5 is FFMA x2 * x2, "
               "0.09, 1e-5); again after the expansions (seed 684: (ln 2 * log2(x)) * 2.337 is FMUL lg2, 1.6199); "
               "f16 alike (seed 349's SASS: (x2 * 1.423) * (x2 * 1.423) + 1e-5 is HFMA2 2.0254, x2 * x2, 1e-5); "
               "measured with DECISIONS['division-chain']'s x / (y / z); f32 (x / k1) * k2 is x * (RCP(k1) * k2), "
               "x / k1 read elsewhere too (fit2 seed 500724's SASS: t6 * 0.3 of t6 = x3 / 0.1 is FMUL x3, 3)",
    "shift": "f32 (x + k1) + k2 (any signs) is x + (k1 + k2), the constants added in f32 when compiling, also where "
             "x + k1 is read elsewhere (randprog_fit2.npz seed 500064's SASS: 0.3 + t6 of t6 = -0.943 + x4, t6 read three times "
             "more, is FADD x4, -0.643; seed 500136: factoring's x2 * (2.898 + (x3 - 3)) is x2 * (x3 - 0.102)); a sum "
             "of two values and two or more constants, through adds and subtracts used only there, is (x + y) + k, "
             "the constants' total added last (seed 500020: (2.831 - t5) - (2.141 + s) is FFMA .., -t5, then FADD "
             "0.69; seed 500572). With 'range', 'divide-sqrt', algebra's (x / k1) * k2 and square's a * (a * k) "
             "(programs whose compiled IR changed, run before and after): fit f32/func Vulkan 243 -> 247, 246 -> 255 "
             "of 294/293, Dawn 242 -> 250, 248 -> 259 of 300; judge Vulkan 116 -> 118, 121 -> 127, Dawn 116 -> 119, "
             "121 -> 127 of 150; fit2 Vulkan 223 -> 234, 261 -> 271, Dawn 217 -> 232, 261 -> 271, loop 288 -> 289 "
             "(Dawn) of 300; f16 fit 254 -> 258, 257 -> 261, fit2 246 -> 248, 245 -> 247; none lost",
    "range": "the driver knows each f32 value's range when compiling (constants; clamp, min, max; smoothstep's "
             "[0, 1]; sums and products of bounded ranges, not x * x (fit2 seed 500804); not RSQ's sign: fit seed "
             "192's clamp(inverseSqrt(..), -2, 0) * y stays, -0 for a negative y) and decides what the ranges "
             "decide: clamp(smoothstep(..), -2, -1) is -1 (randprog_fit2.npz seed 501132's SASS: the quotient by (c * c + "
             "1e-5) is a product by the constant 0.99999), clamp(smoothstep(..), -2, 0) is +0 (seed 500068: t4 = "
             "(t3 / ..) / |t3| stores +0, x2 / (t3 * t3) is x2 * inf), a select on clamp(t8, -1, 1) < 1.908 its "
             "true side (seed 500064); arithmetic and sqrt, exp, log of constants are folded, rounded from double "
             "(seed 500496: log(0.25 + 1e-5) stores -1.3862543, MUFU.LG2 * ln 2 gives -1.3862542), not tanh (seed "
             "501156: t4 * tanh(t5 - t5) keeps its product). |smoothstep(..)| is not folded: 0.5 + |s| is one "
             "FFMA in fit2 seed 500792's SASS, FADD of the rounded product in fit seed 662's",
    "divide-sqrt": "f32 x / sqrt(y) is x * RSQ(y) (MUFU.RSQ, FMUL), the sqrt kept for its other users, and 1 / sqrt(y) "
                   "is RSQ(y) whatever else reads the sqrt: the SASS of every f32 program of randprog_fit, judge and fit2.npz "
                   "that divides by a sqrt: fit seed 756, judge 100447, fit2 500460 (x / sqrt(..) in the source), "
                   "500620 (-0.221 / t5 of t5 = sqrt(..), t5 read again: FMUL -0.221, RSQ)",
    "unroll-f16": "a counted loop that updates an f16 variable is unrolled (randprog_fit.npz seeds 18, 26: the driver's SASS, "
                  ".hwtmp/sass, has no loop); WGSL's `for (var k = 0u; ...)` too: Tint stores the initializer before "
                  "the loop as glslang does (its SPIR-V of fit seed 30), and through Dawn the f16 sums pair alike "
                  "(fit loop family through Dawn 249 -> 268 of 300, judge 125 -> 138 of 150: the 37 and 13 "
                  "programs that differed through Dawn only)",
    "pair-f16": "an unrolled f16 sum of 4 or more products runs as HFMA2 halves: p0, p1 rounded (HFMA2.MMA "
                "x, y, -RZ), even products fused into one half, odd into the other, HADD2 of the halves, a last "
                "odd product fused after (SASS of randprog_fit.npz seeds 18, 26); 3 products stay one chain (seed 66); "
                "fit loop family 221 -> 245 of 294. 2 or 3 products: p0 rounded, each later product fused into the "
                "running sum (SASS of fit seeds 66, 306, 386, 406: HMUL2 then HFMA2s), not the left of p0 + p1: "
                "loop family fit 268 -> 284 of 300 (Dawn), 262 -> 278 of 294 (Vulkan); judge 138 -> 142 of 150 on both",
    "fma-division-f16": "f16 x / k, k a constant, fuses like a product (x * RCP(k)): the sumsq loops' "
                        "acc / 5.0hf + 1e-5hf is one HFMA2 (SASS of randprog_fit.npz seed 18); a divisor that is not a "
                        "constant does not (fit seeds 129, 1067, 1075 regress when it does)",
    "expand-vector": "dot, length and normalize of f32 vec2-4 (f16 vec2-3) are the driver's scalar arithmetic, "
                     "extract(construct(..)) folded and numbered again: randprog_fit.npz func programs' "
                     "vector helpers (SASS of seed 19: the two inlined dots share one FMUL of the third "
                     "component), fit func 110 -> 117 of 293",
    "expand-mix": "scalar mix(a, b, t) is fma(t, b - a, a) in the IR, so its subtract is open to fma "
                  "formation: randprog_fit.npz seed 8's SASS (FADD -t4, "
                  "c5*c5 unrounded: the widened product's first "
                  "subtract is mix's), 128 of 128",
    "fma-widened": "f32(a * b) of f16 a and b fuses into its first add or subtract (in program order; not "
                   "x - x), as fma(f32(a), f32(b), c), ahead of a product on the other side; its later users "
                   "read the f16-rounded product: randprog fit, the f32 family's f16 round trips "
                   "`cN = float(cM * cM)` (tests/data/hw/h200/randprog_fit.npz vulkan seeds 0: t6 + c5 fused, "
                   "2.521 + c5 and t3 - c5 after it rounded; 28, 64, 172, 292: (x2 * x4) - c7 fuses c7; "
                   "308: c9 - c9 is 0), 128 of 128 each; 52 further fit seeds with the pattern checked after",
    "fma-constants": "k1 - fma(a, b, k2) is fma(-a, b, k1 - k2) (and + k1, - k1 alike), the fma kept for its "
                     "other users: randprog_fit.npz seed 32's SASS (1.5 - t7 of t7 = x2 * x2 + 1.771, t7 used again: "
                     "FFMA -x2, x2, -0.271), 128 of 128; fma(x * k1, k2, c) is fma(x, k1 * k2, c): seed 80's SASS "
                     "(smoothstep(-1, 2, t7 * -1.718): FFMA.SAT t7, -0.5727, 0.3333)",
    "expand-log": "log(x) is LG2 then a multiply by ln 2 that fuses into the add around it: f32 MUFU.LG2, FMUL "
                  "(DECISIONS['fma'], randprog fit seed 76); f16 MUFU.LG2.F16 (truncated) then HMUL2 by "
                  "f16(ln 2) = 0.69336: log(x4 * x4 + 1) - x2 / (|t6| + 1e-5) is HFMA2 lg2, 0.693359375, "
                  "-(x2 * RCP) in the SASS of randprog_fit.npz seed 37 (seed 865: HFMA2 lg2, 0.69336, |t|); "
                  "f16 family fit 227 -> 237 of 300 (Dawn), 225 -> 235 of 294 (Vulkan), judge 99 -> 103 of 150 "
                  "(Dawn), 98 -> 104 (Vulkan), no program lost",
    "rsqrt": "f32 1.0 / sqrt(x) is one MUFU.RSQ: llama.cpp's rms_norm",
    "pow-integer": "pow(x, n) for a constant n of 0 to 5 is 1, x, x * x, (x * x) * x, (x * x) * (x * x), "
                   "((x * x) * (x * x)) * x, also for negative x, where exp2(n * log2(x)) gives NaN: 4,096 of "
                   "4,096 per exponent, f32 and f16 (scripts/h200_pow_probe.py --more through Dawn on an H100, "
                   "driver 580.159.04; tests/data/hw/h100/pow_probe.npz); n = 6, 7, 8, 16, 32, -1, -2, -3, 0.5, "
                   "-0.5, 1.5, 2.5 keep the general sequence (4,096 of 4,096 each; n = 0 and 5 were recorded "
                   "after the rule for 1..4 was written and took it from 1,990 and 59 of 4,096 (f32) to 4,096). "
                   "llama.cpp 0.3.19's row_norm and GELU: 54,402 -> 78,080 of 78,080 outputs",
    "divide-sqrt-f16": "f16 x / sqrt(y) is x * RSQ(y) (MUFU.RSQ.F16, HMUL2), the sqrt kept for its other users: "
                       "randprog_fit.npz seed 257's SASS (t4 / t3 of t3 = sqrt(x2 * x2 + 1e-5): MUFU.SQRT.F16 and "
                       "MUFU.RSQ.F16 of one HFMA2, then HMUL2 t4, RSQ); the only f16 programs whose SASS has "
                       "MUFU.RSQ.F16 without inverseSqrt in the source: fit+judge 257, fit2 500457, 500493",
    "divide-rsqrt": "f32 x / inverseSqrt(y) is x * sqrt(y) (MUFU.SQRT, FMUL): randprog_fit.npz seed 160's SASS "
                    "(t4 / t5 of t5 = inversesqrt(x1 * x1 + 1e-5)), 128 of 128",
    "factor": "a * c + b * c is (a + b) * c where one product has no other use: randprog fit seed 16, x1 * t6 + "
              "x3 * t6, 128 of 128 (tests/data/hw/h200/randprog_fit.npz); seed 0's SASS, t7 + t6 * t7 of t7 = "
              "floor(..) * t6 (t7 stored and used again) is FADD floor + t7 times t6; p + p is (a + a) * b (seed 19's "
              "SASS: x1 * x1 + x1 * x1 of normalize(vec3(x1, x1, ..)) is FADD x1 + x1, FFMA); x - x * k is x * (1 - k) "
              "(seed 1100's SASS: c10 - c10 * -0.245 is FMUL c10, 1.245); repeated on what it made: the helper "
              "dot(vec3(a, b, a * b), vec3(b, a - 0.5, a)) is b * fma(a, a, fma(a, 2, -0.5)) (fit seeds 143, 239, 283, "
              "967's SASS: b out of a * b + b * (a - 0.5), then out of (a * b) * a once that is (a * a) * b); "
              "only a factor that is an operand of both products: x1 * x3 - ((x4 * t6) * x1) * (..) stays "
              "(seed 288's SASS)",
    "like-terms": "x + (x + y) (any signs) is fma(x, 2, y) where the inner sum is used only there and neither x nor "
                  "y is a product: in a sum that factoring built, any such y (randprog_fit.npz seed 740's SASS: ((x2 * (x2 + x1)) + "
                  "x2 * x2) / x2 is FFMA x2, 2, x1; seed 420: x1 * x1 - x1 * (x3 - x1) is x1 * FFMA x1, 2, -x3; seed "
                  "143: a + (a - 0.5)); in the shader's own sums only a constant y ((x4 + 1.702) + x4 is FFMA x4, 2, "
                  "1.702, seed 99's SASS): x + (y + x) stays two FADDs (judge seed 100480, fit 972), and p + (p + y) "
                  "of a product p two FFMAs (judge seed 100092)",
    "cancel": "a value added and subtracted in one sum (its operands opened one level through adds, subtracts and "
              "negations) cancels, whatever it holds: (t4 - x1) - (t4 - x2) is FADD x2, -x1 (randprog_fit.npz seed 724's "
              "SASS), "
              "((x1 * x1) - x2) - (-x2 + p) is x1 * x1 - p (seed 420), ((t6 + x4) - (t6 - t7)) - x3 (seed 652); "
              "before value numbering, so only one value of the shader cancels, not two equal expressions "
              "((x3 + x2) - (x3 * t4 + (x2 + x3)) keeps its FFMA and FADD: judge seed 100180's SASS); "
              "f32 (x * y) / x is y, also where x * y is read again (seeds 1052, fit2 500056; factoring's x2 * (..) / "
              "x2, "
              "seed 740), before the identities fold (fit2 seed 501124's t4 / x2 of t4 = (x2 < x2) ? .. : ((x2 * x3) + "
              "x3) - x3: FFMA RCP(x2), x2 * x3, ..), x * (y / x) is y (seed 276: (x2 / x1) * x1 stores x2, "
              "x2 / x1 read again by a smoothstep; 436), not where x "
              "is a product (seed 732: t5 * (x4 / t5) of smoothstep's t5) nor in f16 (seed 117's SASS: HMUL2 x3, "
              "RCP(x3) * ..), where (x * y) / x is y all the same (randprog_fit2.npz seeds 500693, 501093: (3 * t3) / t3 "
              "stores sin(3) folded). Through a sum used again no (seed 472: clamp(..) - t4 of t4 = x2 - x2, t4 read "
              "elsewhere, is not clamp(..)); a mix's addend does not cancel in emu (seed 268: the driver's "
              "mix(x3, 0.3, f) - x3 is FMUL (0.3 - x3), f shared with the mix's FADD; mix(0, b, t) keeps its "
              "+0, seed 472: not modelled)",
    "distribute": "k * (x + k1) (x - k1, k1 - x; the sum read only there) is fma(x, k, k * k1), the constants "
                  "multiplied when compiling: randprog_fit.npz seed 664's SASS (-2.425 * (1.5 + x2) is FFMA x2, -2.425, -3.6375), "
                  "the rule 'expand-constant-edges' and 'f16-constant-division' follow for their own products",
    "expand": "smoothstep's last product fuses with the add around it: randprog fit seeds "
              "(tests/data/hw/h200/randprog_fit.npz), 1 more program of 200; f16 (t * t) * ((3 - t) - t): "
              "the driver's code of fit seed 1 (Vulkan), seeds 753 and 445 128 of 128",
    "tint-smoothstep": "Tint's SPIR-V of smoothstep is t * (t * (3 - 2t)) of t = clamp((x - e0) / (e1 - e0)) "
                       "(tests/data/tint/randprog_*.spvasm); through the driver: tests/data/hw/h200/randprog_fit.npz seeds 753, "
                       "445 through Dawn, 128 of 128 each",
    "square": "a * (a * y) rounds as (a * a) * y: randprog_fit.npz f16 seed 1069 (128 of 128), Tint's smoothstep "
              "(builtins.npz through Dawn, fit seeds 753 and 445); f16 y a constant too (randprog_fit2.npz seeds 500321, "
              "500581: t * (3 * t) - s is HMUL2 t, t then HFMA2 with 3), through select(c, a, a) (500581) but not "
              "min(a, a) (500269)",
    "fold-constants": "an operation of constants is the constant the device's code computes, folded when compiling: "
                      "f16 sin((3 * t3) / t3) stores sin(3) (randprog_fit2.npz seed 500693's SASS: constant stores; 128 of 128), "
                      "inverseSqrt(k * k + 0.25) of a constant k is a constant factor (501093), smoothstep(-1, 2, x4 - "
                      "x4) is the constant 0.259 that x2 * p fuses with (500461: HFMA2 x2, p, 0.259)",
    "fold": "+0 / y is +0 (fit seed 601: (x4 - x4) / (x2 / x4) stores +0 for every invocation, 64 where IEEE "
            "gives -0); (a - c) + (c + b) is a + b (seed 1089: ((x1 * x3) - c6) + (c6 + x1) is one HFMA2 x1 * x3 + x1); "
            "x - x, x * 0, x / x, x * 1 folded whatever x is: randprog_fit.npz seed 49 ((a * (x3 - x3)) * t5 stores +0 where "
            "the sign rule gives -0, 35 of 35), seed 1069 (2.628 / tanh(t4 / t4) is one constant, 128 of 128), "
            "seed 129 (t * (t * 1.0) fuses t * t into the add around it), seed 425 (((x3 - x2) - x2) + x2 is x3 - x2, "
            "128 of 128); the SASS of seed 216: c5 - (c5 + x2) is -x2, -(p - q) is q - p (q the left product, "
            "fused); seed 40: k1 + (k2 - v) is (k1 + k2) - v, the subtract kept for its other users; (x - b) - x is "
            "-b (f16 seed 29's SASS: mix(x4, x4 - x2, fract(x2)) is HFMA2 -x2, fract(x2), x4): f16 family fit 221 -> "
            "227 of 300, judge 97 -> 99 of 150 (Dawn); 218 -> 225 of 294, 96 -> 98 of 150 (Vulkan); (a + c) - (c + b) "
            "is a - b and (a + c) - (c - b) is a + b (f16 seed 89's SASS: (x4 + x3) - (x3 - 0.852) is HADD2 x4, 0.8516; "
            "judge seed 100209: (x1 + p) - (p + r) is x1 - r): fit+judge f16 364 -> 369 of 444 (Vulkan), 366 -> 371 "
            "of 450 (Dawn), f32 334 -> 337, 333 -> 336, func 336 -> 341, 338 -> 343, loop 430 -> 431, 436 -> 437; "
            "fit2 f16 240 -> 243, 239 -> 242, func 243 -> 244 (both); none lost; f16 (v + k1) + k2 is v + (k1 + k2), the inner sum read again or not (fit2 seeds 500681, 500041)",
    "f16-round-trip": "f32(f16(x)) stores x unrounded: randprog_fit.npz seed 93, 128 of 128 on both paths; also through "
                      "max(h, h), min(h, h), select(h, h, c) (fit seeds 209, 497, 829, 1121), -h and abs(h) (seeds 741, 813: "
                      "the SASS stores the f32 load, 128 of 128); clamp rounds (seed 813 o0). max(h, h) is not folded before "
                      "fma formation and factoring: ((t5 * x2) - t4) + t5 of t5 = max(t4, t4) stays fma(t5, x2, -t4) + t5 "
                      "(seed 829's SASS), acc * acc + x1 * max(acc, acc) is not factored (seed 770). Fit f16 190 -> 199 of "
                      "300 (Dawn), judge f16 93 -> 95 of 150",
    "f16-constant-division": "f16 v / c is v * r, r the f16 nearest 1/c folded by the compiler: randprog_fit.npz seed 513 "
                             "(128 of 128); x = y * k1 (used once) gives y * f16(k1 * r): seed 821 (0x3796 = f16(1.423) "
                             "* f16(1/3) into HFMA2.SAT in its SASS; 128 of 128); (x + k) / c is fma(x, r, k * r): seeds 753, 445 "
                             "(128 of 128; the driver's code of seed 1: HFMA2.SAT x, 0.33325, 0.33325); x = y + kk (used only "
                             "there) folds kk in too: ((y + kk) + k) / c is fma(y, r, f16(kk + k) * r) (fit seed 73's SASS: "
                             "smoothstep(-1, 2, 0.044715 + x2) is HFMA2.SAT x2, 0.33325, 0.34814): f16 family fit 237 -> 244 "
                             "of 300 (Dawn), 235 -> 242 of 294 (Vulkan), judge 103 -> 104 of 150, 104 -> 105, none lost",
    "expand-constant-edges": "smoothstep with constant edges folds them: t = clamp(fma(x, k, -e0 * k), 0, 1), "
                             "k = RCP(e1 - e0): smoothstep(-1, 2, .) in randprog fit vulkan seeds 0, 48, 104, "
                             "128 of 128 only so ((x - e0) * k differs by an ulp on 4-10); x = y + kk folds kk in too, "
                             "fma(y, k, (kk - e0) * k) (fit seed 244's SASS: smoothstep(-1, 2, 2.105 + t3) is FFMA.SAT "
                             "t3, 0.3333, 1.035); variable edges keep "
                             "(x - e0) * RCP(e1 - e0) (builtins.npz smoothstep); f16 is DECISIONS['expand'] and "
                             "'f16-constant-division'",
    "unroll": "a loop over a cooperative matrix's elements is unrolled and each element fuses: "
              "vulkan_coop_ops.npz, vulkan_coop_elem_probe_runs.npz",
}


@dataclass(frozen=True)
class Stack:
    """Which compilers a shader goes through, and how the driver forms fused multiply-adds."""
    translator: str | None          # 'tint', 'naga' or None (SPIR-V / GLSL straight to the driver)
    types: tuple                    # the float types whose multiply-adds fuse
    divide: bool                    # f32 x / y is x * RCP(y) (and fuses as a product)
    nvidia: bool                    # the NVIDIA driver's passes (inline ... unroll); else fma only
    fma: bool = True                # form fused multiply-adds (off: the IR fma formation sees)


TRANSLATORS = ("tint", "naga")


def stack_for(profile, spirv: bool, translator: str = "tint") -> Stack | None:
    """The stack a shader takes to ``profile``'s device (``spirv``: SPIR-V or GLSL, straight to
    the driver; else WGSL through ``translator``); None where nothing fuses."""
    if profile.fp_contract not in ("mul-add", "mul-add-f16"):
        return None
    return Stack(translator=None if spirv else translator,
                 types=(F32, F16) if profile.fp_contract == "mul-add-f16" else (F32,),
                 divide=profile.scalar == "nvidia-sfu", nvidia=profile.fp_contract == "mul-add-f16")


def compile_for(module: Module, stack: Stack | None) -> dict:
    """Run the stack's passes over ``module`` in place; returns {pass: how many rewrites}."""
    if stack is None:
        return {}
    done = {}
    if stack.translator == "tint":
        done["tint-smoothstep"] = tint_smoothstep(module)
    if stack.nvidia:
        # unroll's matcher reads the loop as the front end wrote it (the update's loads and store
        # of the matrix variable), so it runs first; what it forms is what unrolling, promotion
        # and fma formation give on that shape
        from .unroll import contract_element_loops
        done["unroll"] = contract_element_loops(module, stack.types, stack.divide)
        done["inline"] = inline_calls(module)
        done["flatten"] = flatten_branches(module)
        done["unroll-f16"] = unroll_f16_reductions(module)
        done["promote"] = promote_variables(module)
        done["pow-integer"] = expand_integer_powers(module, stack.types)
        done["pair-f16"] = pair_f16_reductions(module)
        done["cancel"] = cancel_terms(module)
        done["number"] = number_values(module)
        done["cancel"] += cancel_factors(module)
        done["fold"] = fold_identities(module) + sink_negations(module) + reassociate_constants(module)
        done["algebra"] = fold_algebra(module, stack.types)
        done["fold-constants"] = fold_constant_operations(module)
        done["f16-round-trip"] = drop_f16_round_trips(module)
        done["square"] = square_products(module)
        done["rsqrt"] = reciprocal_sqrt(module)
        done["expand"] = expand_builtins(module, stack.types)
        done["algebra"] += fold_algebra(module, stack.types)      # log's ln 2 * k2 (fit seed 684)
        done["fold-constants"] += fold_constant_operations(module)     # an expansion of constants
        done["number"] += number_values(module)          # what the expansions made equal
        done["fold"] += fold_identities(module)          # mix(a, a, t)'s a - a
        done["range"] = fold_ranges(module)             # the expansions' .SAT ranges (fit2 seed 501132)
        done["fold"] += fold_identities(module)          # a select on what range decided
        done["division-chain"] = join_divisions(module)
        done["number"] += number_values(module)          # a joined divisor that the shader also multiplies
        done["f16-constant-division"] = distribute_f16_constant_division(module)
        done["factor"] = factor_products(module, stack.types)
        done["algebra"] += fold_algebra(module, stack.types, factored=True)     # x * k squared (fit2 seed 500497)
        done["shift"] = join_shifts(module)     # what factoring made: x * (k1 + (y + k2)) (fit2 seed 500136)
    if not stack.fma:
        return done
    done["fma"] = form_fma(module, stack.types, stack.divide, after_division=stack.nvidia)
    if stack.nvidia:
        done["fma-constants"] = fold_constants_into_fma(module, stack.types)
        done["relu-f16"] = relu_f16_clamps(module)
    return done


# -- helpers ---------------------------------------------------------------------------------------

def _blocks(b: Block):
    yield b
    for i in b.insts:
        for sub in i.blocks:
            yield from _blocks(sub)


def _replace_uses(module: Module, mapping: dict) -> None:
    """Every operand v with v.id in mapping becomes mapping[v.id] (chains followed)."""
    if not mapping:
        return

    def final(v):
        seen = 0
        while v.id in mapping and seen < 64:
            v, seen = mapping[v.id], seen + 1
        return v
    for f in module.functions:
        for i in f.walk():
            if any(a.id in mapping for a in i.args):
                i.args = [final(a) for a in i.args]


def _next_id(module: Module) -> int:
    ids = [i.result.id for f in module.functions for i in f.walk() if i.result is not None]
    ids += [p.id for f in module.functions for p in f.params]
    return max(ids, default=-1) + 1


_PURE = ("const", "input", "binary", "unary", "builtin", "convert", "select", "construct", "extract",
         "swizzle", "bitcast", "array_length", "access", "global", "override")


def _remove_dead(module: Module) -> None:
    """Drop pure instructions (and loads) whose results nothing uses, until none is left."""
    while True:
        uses = Counter(a.id for f in module.functions for i in f.walk() for a in i.args)
        removed = 0
        for f in module.functions:
            for blk in _blocks(f.body):
                keep = [i for i in blk.insts
                        if not (i.result is not None and uses[i.result.id] == 0 and (i.op in _PURE or i.op == "load"))]
                removed += len(blk.insts) - len(keep)
                blk.insts[:] = keep
        if not removed:
            return


# -- inline ----------------------------------------------------------------------------------------

def _inlinable(fn: Function) -> bool:
    """One return, the function's last instruction; no call of its own (inlined bottom-up)."""
    body = fn.body.insts
    if fn.stage is not None or not body or body[-1].op != "return":
        return False
    for i in fn.walk():
        if i.op == "return" and i is not body[-1]:
            return False
        if i.op == "call":
            return False
    return True


def inline_calls(module: Module) -> int:
    """Replace each call of an inlinable function by a copy of its body (fresh values, the
    parameters bound to the arguments); the call's result becomes the returned value."""
    b = Builder(_next_id(module))
    count = 0
    for _ in range(8):                       # callees that call: inline bottom-up, a few levels
        progress = 0
        for f in module.functions:
            for blk in _blocks(f.body):
                k = 0
                while k < len(blk.insts):
                    call = blk.insts[k]
                    callee = module.function(call.attrs.get("callee")) if call.op == "call" else None
                    if callee is None or callee is f or not _inlinable(callee):
                        k += 1
                        continue
                    body, ret = _copy_body(callee, call.args, b)
                    blk.insts[k:k + 1] = body
                    k += len(body)
                    if call.result is not None and ret is not None:
                        _replace_uses(module, {call.result.id: ret})
                    progress += 1
        count += progress
        if not progress:
            break
    return count


def _copy_body(fn: Function, args, b: Builder):
    body = _copy_insts(fn.body.insts, {p.id: a for p, a in zip(fn.params, args)}, b)
    ret = body.pop()
    return body, (ret.args[0] if ret.args else None)


# -- flatten ---------------------------------------------------------------------------------------

def flatten_branches(module: Module) -> int:
    """`if c {A} {B}` whose branches only compute (pure operations, loads of function variables)
    and store function variables runs both branches, each stored variable then select(its value
    from B, its value from A, c), as the driver's select (SEL) does: what the two branches compute
    alike is then one value (DECISIONS['flatten']). GLSL's `c ? x * y : k - x * y` reaches the
    driver as such an if; WGSL's select is one already."""
    b = Builder(_next_id(module))
    count = 0
    for f in module.functions:
        direct = _direct_vars(f)
        for blk in _blocks(f.body):
            out = []
            for inst in blk.insts:
                flat = _flatten(inst, direct, b) if inst.op == "if" else None
                out += [inst] if flat is None else flat
                count += flat is not None
            blk.insts[:] = out
    return count


def _flatten(inst: Inst, direct: set, b: Builder):
    if len(inst.blocks) != 2:
        return None
    computed, stored = [], []
    for blk in inst.blocks:
        values = {}
        for i in blk.insts:
            if i.blocks:
                return None
            if i.op == "store" and i.args[0].id in direct and i.args[0].id not in values:
                values[i.args[0].id] = i.args[1]
            elif i.op in _PURE or (i.op == "load" and i.args[0].id in direct and i.args[0].id not in values):
                computed.append(i)
            else:
                return None
        stored.append(values)
    then, other = stored
    ptrs = {v.id: v for blk in inst.blocks for i in blk.insts if i.op == "store" for v in i.args[:1]}
    if not ptrs or any(_float_scalar(v.type) is None for vals in stored for v in vals.values()):
        return None                              # selects of scalars and vectors only
    out = list(computed)
    for var, ptr in ptrs.items():
        t = (then.get(var) or other[var]).type

        def value(vals):
            if var in vals:
                return vals[var]
            load = Inst("load", [ptr], t, {}, [], inst.loc, b.value(t))
            out.append(load)
            return load.result
        sel = Inst("select", [value(other), value(then), inst.args[0]], t, {"contracted": "flatten"}, [], inst.loc,
                   b.value(t))
        out += [sel, Inst("store", [ptr, sel.result], VOID, {}, [], inst.loc, None)]
    return out


# -- unroll-f16, pair-f16 ----------------------------------------------------------------------------

def _counted_loop(loop: Inst, before: list):
    """(counter var id, trip count, the counter's load in the body, the body after its exit test)
    of `for (k = 0; k < N; k++)` with a constant N and nothing else leaving the loop; else None.
    The start is a store before the loop (GLSL) or the variable's initializer (WGSL's `var k = 0u`)."""
    if loop.op != "loop" or len(loop.blocks) != 2:
        return None
    body, cont = loop.blocks[0].insts, loop.blocks[1].insts
    head = [i for i in body[:8] if i.op != "const"][:4]          # the exit test, constants aside
    if len(head) < 4 or [i.op for i in head] != ["load", "binary", "unary", "if"] or head[1].attrs["fn"] != "lt":
        return None
    k, lt, negate, test = head
    var = k.args[0].id
    defs = {i.result.id: i for i in before + body if i.result is not None}
    n = _const_value(lt.args[1], defs)
    exit_block = test.blocks[0].insts if test.blocks else []
    if lt.args[0] is not k.result or negate.args[0] is not lt.result or test.args[0] is not negate.result \
            or not isinstance(n, int) or not 1 <= n <= 16 or [i.op for i in exit_block] != ["break"] \
            or any(b.insts for b in test.blocks[1:]):
        return None
    start = next((i.args[1] if i.op == "store" else i.args[0] for i in reversed(before)
                  if (i.op == "store" and i.args[0].id == var) or (i.op == "var" and i.result.id == var and i.args)), None)
    if start is None or defs.get(start.id) is None or _const_value(start, defs) != 0:
        return None
    rest = [i for i in body if not any(i is h for h in head)]
    for i in (j for r in rest for j in r.walk()):
        if i.op in ("break", "continue", "return") or (i.op == "store" and i.args[0].id == var):
            return None
    steps = [i.op for i in cont]
    if not cont or cont[-1].op != "store" or cont[-1].args[0].id != var or "loop" in steps or "if" in steps:
        return None
    cdefs = {i.result.id: i for i in cont if i.result is not None}
    step = cdefs.get(cont[-1].args[1].id)                  # k + 1 (the 1 maybe a bitcast of an i32)
    one = [cdefs.get(a.id) for a in step.args] if step is not None and step.op == "binary" \
        and step.attrs["fn"] == "add" else []
    one = [d.args[0] if d is not None and d.op == "bitcast" else (d.result if d is not None else None) for d in one]
    if len(one) != 2 or not any(v is not None and _const_value(v, {**defs, **cdefs}) == 1 for v in one) \
            or not any(d is not None and d.op == "load" and d.args[0].id == var for d in
                       (cdefs.get(a.id) for a in step.args)):
        return None
    return var, n, k, rest


def unroll_f16_reductions(module: Module) -> int:
    """A counted loop (constant trip count, at most 16) that stores an f16 function variable is
    unrolled: the driver unrolls it, then pairs its f16 sums into HFMA2 halves (pair-f16)."""
    b = Builder(_next_id(module))
    count = 0
    for f in module.functions:
        for blk in _blocks(f.body):
            k = 0
            while k < len(blk.insts):
                loop = blk.insts[k]
                shape = _counted_loop(loop, blk.insts[:k])
                if shape is None or not any(i.op == "store" and i.args[1].type == F16 for i in loop.walk()):
                    k += 1
                    continue
                var, n, kload, rest = shape
                reads = [kload] + [i for r in rest for i in r.walk() if i.op == "load" and i.args[0].id == var]
                copies = []
                for j in range(n):
                    jc = Inst("const", [], kload.type, {"value": j}, [], kload.loc, b.value(kload.type))
                    copies.append(jc)
                    copies += _copy_insts(rest, {r.result.id: jc.result for r in reads}, b)
                blk.insts[k:k + 1] = copies
                k += len(copies)
                count += 1
    return count


def _copy_insts(insts, vals: dict, b: Builder) -> list:
    """Copies of insts with fresh values for what they define (and vals's substitutions)."""
    inside = {j.result.id for i in insts for j in i.walk() if j.result is not None}

    def val(v):
        if v.id not in vals and v.id not in inside:
            return v
        if v.id not in vals:
            vals[v.id] = b.value(v.type, v.name)
        return vals[v.id]

    def copy(i):
        return Inst(i.op, [val(a) for a in i.args], i.type, dict(i.attrs),
                    [Block(copies(blk.insts)) for blk in i.blocks], i.loc,
                    val(i.result) if i.result is not None else None)

    def copies(block):                       # what vals substitutes is not computed again
        return [copy(i) for i in block if i.result is None or i.result.id not in vals]
    return copies(insts)


def pair_f16_reductions(module: Module) -> int:
    """An f16 sum of products from zero, s = ((0 + p0) + p1) + ... + p(n-1) (an unrolled loop),
    of four products or more runs as the driver's HFMA2: even products in one half, odd in the other (p0 and p1
    rounded, each later pair fused into its half), the halves added, then a last odd product
    fused: fma(a(n-1), b(n-1), h0 + h1); of two or three, one chain from p0 (DECISIONS['pair-f16'])."""
    count = 0
    for f in module.functions:
        uses = Counter(a.id for i in f.walk() for a in i.args)
        defs = {i.result.id: i for i in f.walk() if i.result is not None}
        b = Builder(_next_id(module))
        for blk in _blocks(f.body):
            chains, link = [], {}
            for inst in blk.insts:
                if inst.op != "binary" or inst.attrs["fn"] != "add" or inst.type != F16 or inst.attrs.get("exact"):
                    continue
                x, y = inst.args
                prod = _product(y, defs, False, F16)
                if prod is None or uses[y.id] != 1:
                    continue
                if x.id in link and uses[x.id] == 1:
                    chain = link.pop(x.id)
                elif _const_value(x, defs) == 0.0:
                    chain = []
                    chains.append(chain)
                else:
                    continue
                chain.append((inst, prod))
                link[inst.result.id] = chain
            for chain in chains:
                if len(chain) >= 4:
                    _pair(chain, blk, b)
                    count += 1
                elif len(chain) >= 2:           # three products stay one chain (fit seed 66's SASS)
                    _chain(chain)
                    count += 1
    _remove_dead(module)
    return count


def _chain(chain) -> None:
    """p0 rounded, then each later product fused into the running sum: fma(a1, b1, p0), ...
    (the unrolled `acc = fma(a, b, acc)` once 0 + p0 is p0; the SASS of fit seeds 66, 306, 386, 406:
    HMUL2 of p0, then HFMA2s), not the left product of p0 + p1 fused as fma formation would."""
    for (inst, p), (prev, _) in zip(chain[1:], chain):
        inst.op, inst.args = "builtin", [p.args[0], p.args[1], prev.result]
        inst.attrs = {"fn": "fma", "contracted": "pair-f16"}


def _pair(chain, blk: Block, b: Builder) -> None:
    last, n = chain[-1][0], len(chain)
    halves, new = [chain[0][1].result, chain[1][1].result], []

    def emit(op, args, attrs):
        i = Inst(op, args, F16, dict(attrs, contracted="pair-f16"), [], last.loc, b.value(F16))
        new.append(i)
        return i.result
    for j in range(2, n - n % 2):
        p = chain[j][1]
        halves[j % 2] = emit("builtin", [p.args[0], p.args[1], halves[j % 2]], {"fn": "fma"})
    total = emit("binary", halves, {"fn": "add", "exact": True})
    if n % 2:
        p = chain[-1][1]
        emit("builtin", [p.args[0], p.args[1], total], {"fn": "fma"})
    final = new.pop()
    last.op, last.args, last.attrs = final.op, final.args, final.attrs
    k = blk.insts.index(last)
    blk.insts[k:k] = new


# -- promote ---------------------------------------------------------------------------------------

def _direct_vars(fn: Function) -> set:
    """Function variables only loaded and stored through (never indexed, never passed)."""
    var_ids = {i.result.id for i in fn.walk() if i.op == "var"}
    direct = set(var_ids)
    for i in fn.walk():
        for k, a in enumerate(i.args):
            if a.id in var_ids and not (i.op == "load" or (i.op == "store" and k == 0)):
                direct.discard(a.id)
    return direct


def _stored_in(inst: Inst) -> set:
    return {i.args[0].id for i in inst.walk() if i.op == "store"}


def promote_variables(module: Module) -> int:
    """A load of a function variable reads the value last stored to it where that store is
    before it on every path (same block, or an enclosing block with no write to the variable in
    between): the load's uses take that value. Variables no load reads any more lose their stores."""
    mapping = {}
    for f in module.functions:
        direct = _direct_vars(f)
        if not direct:
            continue

        def walk(blk: Block, env: dict):
            for inst in blk.insts:
                if inst.op == "var" and inst.result.id in direct:
                    if inst.args:
                        env[inst.result.id] = inst.args[0]
                    else:
                        env.pop(inst.result.id, None)
                elif inst.op == "store" and inst.args[0].id in direct:
                    env[inst.args[0].id] = inst.args[1]
                elif inst.op == "load" and inst.args[0].id in env:
                    mapping[inst.result.id] = env[inst.args[0].id]
                elif inst.blocks:
                    written = _stored_in(inst)
                    if inst.op == "loop":            # carried around the loop: not known inside
                        for v in written:
                            env.pop(v, None)
                    for sub in inst.blocks:
                        walk(sub, dict(env))
                    for v in written:
                        env.pop(v, None)
        walk(f.body, {})
    _replace_uses(module, mapping)
    _remove_dead(module)
    for f in module.functions:                   # stores nothing reads
        direct = _direct_vars(f)
        loaded = {i.args[0].id for i in f.walk() if i.op == "load"}
        dead = direct - loaded
        if dead:
            for blk in _blocks(f.body):
                blk.insts[:] = [i for i in blk.insts if not (i.op == "store" and i.args[0].id in dead)
                                and not (i.op == "var" and i.result.id in dead)]
    return len(mapping)


# -- number ----------------------------------------------------------------------------------------

_NUMBERED = ("const", "input", "binary", "unary", "builtin", "convert", "select", "construct", "extract",
             "swizzle", "bitcast", "global", "access", "override")
_WRITES = ("store", "atomic", "barrier", "call", "coop_store", "texture")


def _root_of(ptr: Value, defs) -> int:
    d = defs.get(ptr.id)
    while d is not None and d.op == "access":
        ptr = d.args[0]
        d = defs.get(ptr.id)
    if d is not None and d.op == "global":
        return ("global", d.attrs["name"])
    return ("value", ptr.id)


class _Memory:
    """Write epochs per variable: a load is numbered with the epoch of what it reads, so two
    loads of one element are one value unless something may have written it between."""

    def __init__(self, defs):
        self.defs, self.epochs, self.all = defs, Counter(), 0

    def write(self, inst: Inst):
        if inst.op in ("store", "coop_store") and inst.args:
            self.epochs[_root_of(inst.args[0], self.defs)] += 1
        else:                                   # atomics, barriers, calls, image writes: anything
            self.all += 1

    def epoch(self, ptr: Value):
        return (self.all, self.epochs[_root_of(ptr, self.defs)])


def _component(inst: Inst, defs):
    """The scalar that extract(construct(...), k) picks, where the construct lists scalars."""
    if inst.op != "extract" or len(inst.attrs.get("path", ())) != 1:
        return None
    c = defs.get(inst.args[0].id)
    k = inst.attrs["path"][0]
    if c is None or c.op != "construct" or not hasattr(c.type, "n") or len(c.args) != c.type.n \
            or not isinstance(k, int) or not 0 <= k < len(c.args):
        return None
    return c.args[k]


_COMMUTATIVE = {("binary", "add"), ("binary", "mul"), ("builtin", "min"), ("builtin", "max")}


def _operand_key(inst: Inst) -> tuple:
    """The operands as numbering compares them: f32 and f16 a + b and b + a (a * b, min, max) are one
    value (DECISIONS['number']: fit seed 332's SASS, x2 * x3 and x3 * x2 one FMUL; f16 seed 917's,
    one HMUL2)."""
    ids = tuple(a.id for a in inst.args)
    commuted = (inst.op, inst.attrs.get("fn")) in _COMMUTATIVE and _float_scalar(inst.type) in (F32, F16)
    return tuple(sorted(ids)) if commuted else ids


def number_values(module: Module) -> int:
    """Value numbering: an instruction equal to an earlier one that dominates it (same op, type,
    attributes and operands; a load also with no write of what it reads between) is that one's value."""
    mapping = {}

    def walk(blk: Block, seen: dict, mem: _Memory):
        for inst in blk.insts:
            if inst.blocks:
                writes = [i for i in inst.walk() if i.op in _WRITES]
                if inst.op == "loop":
                    # a write anywhere in the loop reaches its next iteration's loads, those before
                    # it in the body too: none of them is the value of a load before the loop
                    for i in writes:
                        mem.write(i)
                for sub in inst.blocks:
                    walk(sub, dict(seen), mem)
                for i in writes:
                    mem.write(i)
                continue
            if inst.op in _WRITES:
                mem.write(inst)
                continue
            if inst.result is None or not (inst.op in _NUMBERED or inst.op == "load"):
                continue
            if any(a.id in mapping for a in inst.args):
                inst.args = [mapping.get(a.id, a) for a in inst.args]
            if inst.op == "const" and not isinstance(inst.attrs.get("value"), (int, float, bool)):
                continue
            part = _component(inst, defs)
            if part is not None:                 # construct(a, b, c).y is b
                mapping[inst.result.id] = part
                continue
            k = (inst.op, repr(inst.type), repr(sorted(inst.attrs.items())), _operand_key(inst))
            if inst.op == "load":
                k += mem.epoch(inst.args[0])
            if k in seen:
                mapping[inst.result.id] = seen[k]
            else:
                seen[k] = inst.result
    for f in module.functions:
        defs = {i.result.id: i for i in f.walk() if i.result is not None}
        walk(f.body, {}, _Memory(defs))
    _replace_uses(module, mapping)
    _remove_dead(module)
    return len(mapping)


# -- algebra ---------------------------------------------------------------------------------------

def fold_algebra(module: Module, types, factored: bool = False) -> int:
    """x - x is +0 and +0 * x (either side) is +0, whatever x holds (its sign, infinities and
    NaN ignored), after value numbering made equal values one (DECISIONS['algebra']). ``factored``:
    after factoring, only (x * k1) * (y * k2) whose products nothing else reads is gathered (fit2
    seed 500497: (x3 * k - x3) squared, x3 * (k - 1) read only there, is HFMA2 x3 * x3, (k - 1)^2;
    501193: (x1 * 4) squared of t3 = x1 * 3 + x1, t3 read again, stays HFMA2 t3, t3)."""
    count = 0
    b = Builder(_next_id(module))
    b.pending = []                              # (instruction, what goes before it)
    for f in module.functions:
        defs = {i.result.id: i for i in f.walk() if i.result is not None}
        users, readers = {}, {}                 # value -> the instructions that read it (their ids; them)
        for i in f.walk():
            for a in i.args:
                users.setdefault(a.id, set()).add(id(i))
                readers.setdefault(a.id, []).append(i)
        for inst in f.walk():
            if inst.op != "binary" or inst.attrs.get("exact") or not _fusable_type(inst.type, types) \
                    or hasattr(inst.type, "n"):
                continue
            fn, (x, y) = inst.attrs["fn"], inst.args
            if factored:
                count += fn == "mul" and _gather_constant_factors(inst, defs, b, users, only_here=True)
                continue
            zero = fn == "sub" and x.id == y.id
            zero = zero or (fn == "mul" and any(_const_value(v, defs) == 0.0 and
                                                 str(defs[v.id].attrs["value"])[0] != "-" for v in (x, y)))
            if zero:
                inst.op, inst.args, inst.attrs = "const", [], {"value": 0.0, "contracted": "algebra"}
                count += 1
            elif fn == "mul":
                count += _square_constant_factor(inst, defs, b, users, readers, types) \
                    or _fold_constant_factors(inst, defs, b, users)
        for blk in _blocks(f.body):
            for inst, new in [(i, n) for i, n in b.pending if any(i is j for j in blk.insts)]:
                k = next(n for n, j in enumerate(blk.insts) if j is inst)
                blk.insts.insert(k, new)
        b.pending = []
    _remove_dead(module)
    return count


def _square_constant_factor(inst: Inst, defs, b: Builder, users, readers, types) -> int:
    """(k * x) * x (k * x read only here; the product read only by adds) is k * (x * x), x * x a
    product of its own that value numbering then makes one with the shader's other x * x
    (DECISIONS['fma-constant-factor']): GELU's (0.044715 * a) * a + 1."""
    for side in (0, 1):
        d, x = defs.get(inst.args[side].id), inst.args[1 - side]
        if d is None or not _is_mul(d) or d.type != inst.type or users.get(d.result.id) != {id(inst)} \
                or not readers.get(inst.result.id) or not all(_is_add(u, types) and not (
                    u.attrs["fn"] == "sub" and u.args[1].id == inst.result.id) for u in readers[inst.result.id]):
            continue
        ks = [_const_value(v, defs) for v in d.args]
        if (ks[0] is None) == (ks[1] is None) or d.args[1 if ks[0] is not None else 0].id != x.id:
            continue
        k = d.args[0] if ks[0] is not None else d.args[1]
        xx = Inst("binary", [x, x], inst.type, {"fn": "mul"}, [], inst.loc, b.value(inst.type))
        inst.args, inst.attrs = [k, xx.result], {"fn": "mul", "contracted": "fma-constant-factor"}
        b.pending.append((inst, xx))
        return 1
    return 0


def _fold_constant_factors(inst: Inst, defs, b: Builder, users) -> int:
    """(k1 * x) * k2 -> x * (k1 * k2) and (k1 / y) * k2 -> RCP(y) * (k1 * k2), the constants
    multiplied (rounded) on the host; the inner product stays for its other users."""
    x, y = inst.args
    if _gather_constant_factors(inst, defs, b, users) or _distribute_constant(inst, defs, b, users):
        return 1
    k2, v = (_const_value(x, defs), y) if _const_value(x, defs) is not None else (_const_value(y, defs), x)
    d = defs.get(v.id)
    if k2 is None or d is None or d.op != "binary" or d.attrs.get("exact") or d.type != inst.type \
            or d.attrs["fn"] not in ("mul", "div"):
        return 0
    from ..numerics import nvidia
    ty = scalar_of(inst.type).name
    k1 = _const_value(d.args[0], defs)
    if d.attrs["fn"] == "mul" and k1 is None:
        k1, other = _const_value(d.args[1], defs), d.args[0]
    elif d.attrs["fn"] == "div" and k1 is None and _const_value(d.args[1], defs) not in (None, 0.0) \
            and scalar_of(inst.type) == F32:
        # (x / k1) * k2 is x * (RCP(k1) * k2): the driver's x / k1 is x * RCP(k1), RCP(k1) folded (fit2
        # seed 500724's SASS: t6 * 0.3 of t6 = x3 / 0.1, t6 read again, is FMUL x3, 3)
        k1, other = float(nvidia.binary("div", "f32", np.float32(1.0), np.float32(_const_value(d.args[1], defs)))), \
            d.args[0]
        d = None
    else:
        other = d.args[1]
    if k1 is None or (d is not None and d.attrs["fn"] == "div" and scalar_of(inst.type) != F32):
        return 0
    k = Inst("const", [], inst.type, {"value": float(nvidia.binary("mul", ty, k1, k2))}, [], inst.loc, b.value(inst.type))
    new = [k]
    if d is not None and d.attrs["fn"] == "div":
        one = Inst("const", [], inst.type, {"value": 1.0}, [], inst.loc, b.value(inst.type))
        rcp = Inst("binary", [one.result, other], inst.type, {"fn": "div"}, [], inst.loc, b.value(inst.type))
        new += [one, rcp]
        other = rcp.result
    inst.args, inst.attrs = [other, k.result], {"fn": "mul", "contracted": "algebra"}
    b.pending.extend((inst, i) for i in new)
    return 1


def _distribute_constant(inst: Inst, defs, b: Builder, users) -> bool:
    """k * (x + k1) (x - k1, k1 - x; either side; the sum read only here) is fma(x, k, k * k1), the
    constants multiplied when compiling (DECISIONS['distribute']: fit seed 664's SASS, -2.425 * (1.5 + x2)
    is FFMA x2, -2.425, -3.6375)."""
    for side in (0, 1):
        k, d = _const_value(inst.args[side], defs), defs.get(inst.args[1 - side].id)
        if k is None or d is None or d.op != "binary" or d.attrs["fn"] not in ("add", "sub") or d.attrs.get("exact") \
                or d.type != inst.type or users.get(d.result.id) != {id(inst)}:
            continue
        ks = [_const_value(v, defs) for v in d.args]
        if (ks[0] is None) == (ks[1] is None):
            continue
        from ..numerics import nvidia
        ty = scalar_of(inst.type).name
        sub = d.attrs["fn"] == "sub"
        x, k1 = (d.args[1], ks[0]) if ks[0] is not None else (d.args[0], -ks[1] if sub else ks[1])
        kx = -k if sub and ks[0] is not None else k          # k1 - x: x's factor is -k
        new = [Inst("const", [], inst.type, {"value": float(v)}, [], inst.loc, b.value(inst.type))
               for v in (kx, nvidia.binary("mul", ty, k, k1))]
        inst.op, inst.args = "builtin", [x, new[0].result, new[1].result]
        inst.attrs = {"fn": "fma", "contracted": "distribute"}
        b.pending.extend((inst, i) for i in new)
        return True
    return False


def _constant_factor(v: Value, defs):
    """(k, x) where v = x * k or k * x, k a constant; else None."""
    d = defs.get(v.id)
    if d is None or not _is_mul(d) or d.type != v.type:
        return None
    ks = [_const_value(a, defs) for a in d.args]
    if (ks[0] is None) == (ks[1] is None):
        return None
    return (ks[0], d.args[1]) if ks[0] is not None else (ks[1], d.args[0])


def _gather_constant_factors(inst: Inst, defs, b: Builder, users, only_here: bool = False) -> bool:
    """(x * k1) * (y * k2) is (x * y) * (k1 * k2), the constants multiplied when compiling, where k1
    and k2 are powers of two (randprog_fit.npz seed 112's SASS: (t3 * 0.5) * (t3 * 0.5) + 0.25 is FMUL
    t3, t3 then FFMA with 0.25, 0.25) or nothing else reads the two products (seed 196's SASS, f32;
    seed 349's, f16: (x2 * 1.423) * (x2 * 1.423) is HFMA2 x2 * x2, 2.0254)."""
    fx, fy = (_constant_factor(v, defs) for v in inst.args)
    if fx is None or fy is None:
        return False
    if not all(users[v.id] == {id(inst)} for v in inst.args) \
            and (only_here or not all(abs(np.frexp(k)[0]) == 0.5 for k in (fx[0], fy[0]))):
        return False                  # (t8 * t8) of t8 = x3 * 1.702, t8 stored, stays (judge seed 100224)
    from ..numerics import nvidia
    k = Inst("const", [], inst.type, {"value": float(nvidia.binary("mul", scalar_of(inst.type).name, fx[0], fy[0]))},
             [], inst.loc, b.value(inst.type))
    xy = Inst("binary", [fx[1], fy[1]], inst.type, {"fn": "mul"}, [], inst.loc, b.value(inst.type))
    inst.args, inst.attrs = [xy.result, k.result], {"fn": "mul", "contracted": "algebra"}
    b.pending.extend([(inst, k), (inst, xy)])
    return True


# -- rsqrt -----------------------------------------------------------------------------------------

def reciprocal_sqrt(module: Module) -> int:
    """f32 `1.0 / sqrt(x)` becomes `inverseSqrt(x)`; `x / sqrt(y)` (the sqrt used anywhere else too)
    is `x * inverseSqrt(y)`, f32 (DECISIONS['divide-sqrt']) and f16 (DECISIONS['divide-sqrt-f16'])."""
    defs = {i.result.id: i for f in module.functions for i in f.walk() if i.result is not None}
    count, pending, b = 0, [], Builder(_next_id(module))
    for f in module.functions:
        for inst in f.walk():
            if inst.op != "binary" or inst.attrs["fn"] != "div" or inst.attrs.get("exact"):
                continue
            one, root = (defs.get(a.id) for a in inst.args)
            if inst.type == F32 and _const_of(one) == 1.0 and root is not None and root.op == "builtin" \
                    and root.attrs["fn"] == "sqrt":
                inst.op, inst.args, inst.attrs = "builtin", list(root.args), {"fn": "inverseSqrt", "contracted": "rsqrt"}
                count += 1
                continue
            if inst.type in (F16, F32) and root is not None and root.op == "builtin" and root.attrs["fn"] == "sqrt":
                rsq = Inst("builtin", list(root.args), inst.type, {"fn": "inverseSqrt"}, [], inst.loc,
                           b.value(inst.type))
                pending.append((inst, rsq))
                inst.args = [inst.args[0], rsq.result]
                inst.attrs = {"fn": "mul", "contracted": "divide-sqrt-f16" if inst.type == F16 else "divide-sqrt"}
                count += 1
                continue
            if inst.type != F32:
                continue
            if root is not None and root.op == "builtin" and root.attrs["fn"] == "inverseSqrt" and root.type == F32:
                # x / inverseSqrt(y) is x * sqrt(y): MUFU.SQRT, FMUL (randprog_fit.npz seed 160's SASS)
                sq = Inst("builtin", list(root.args), F32, {"fn": "sqrt"}, [], inst.loc, b.value(F32))
                pending.append((inst, sq))
                inst.args, inst.attrs = [inst.args[0], sq.result], {"fn": "mul", "contracted": "divide-rsqrt"}
                count += 1
                continue
    for f in module.functions:
        for blk in _blocks(f.body):
            for inst, new in [(i, n) for i, n in pending if any(i is j for j in blk.insts)]:
                blk.insts.insert(next(k for k, j in enumerate(blk.insts) if j is inst), new)
    return count


def _integer_exponent(v: Value, defs) -> int | None:
    """n where v is the constant n (a scalar, or a vector of n's) with 0 <= n <= 5."""
    k = _const_of(defs.get(v.id))
    return int(k) if k in (0.0, 1.0, 2.0, 3.0, 4.0, 5.0) else None


def expand_integer_powers(module: Module, types) -> int:
    """pow(x, n), n a constant 0..5, as the driver's multiplies (DECISIONS['pow-integer']): 1, x itself,
    x * x, (x * x) * x, (x * x) * (x * x), ((x * x) * (x * x)) * x; the products are open to value
    numbering and fma formation."""
    defs = {i.result.id: i for f in module.functions for i in f.walk() if i.result is not None}
    same = {}                                           # pow(x, 1): its uses read x

    def pick(inst):
        if inst.op != "builtin" or inst.attrs["fn"] != "pow" or not _fusable_type(inst.type, types) \
                or inst.attrs.get("exact"):
            return False
        n = _integer_exponent(inst.args[1], defs)
        if n == 1:
            same[inst.result.id] = inst.args[0]
        return n is not None and n != 1

    def expand(inst, b, _defs):
        n, x, new = _integer_exponent(inst.args[1], defs), inst.args[0], []
        if n == 0:                                      # 1 for every x, inf and zero included
            one = 1.0 if width(inst.type) == 1 else [1.0] * width(inst.type)
            inst.op, inst.args, inst.attrs = "const", [], {"value": one}
            return [inst]
        op = _emitter(inst, b, new)
        sq = x if n == 2 else op("binary", [x, x], fn="mul")
        if n == 5:
            sq = op("binary", [sq, sq], fn="mul")
        inst.op, inst.args, inst.attrs = "binary", [sq, sq if n == 4 else x], {"fn": "mul", "contracted": "pow-integer"}
        return new + [inst]
    count = _expand_each(module, pick, expand)
    if same:
        _replace_uses(module, same)
        _remove_dead(module)
    return count + len(same)


# -- expand ----------------------------------------------------------------------------------------

def _emitter(inst: Inst, b: Builder, into: list):
    """op(name, args, **attrs): a new instruction of inst's type and location, appended to into."""
    def op(name, args, **attrs):
        i = Inst(name, list(args), inst.type, attrs, [], inst.loc, b.value(inst.type))
        into.append(i)
        return i.result
    return op


def _span(e0: Value, e1: Value, defs, op, fold) -> Value:
    """e1 - e0, folded by fold(k1, k0) where both are constants (as the compiler does)."""
    k0, k1 = (_const_of(defs.get(v.id)) for v in (e0, e1))
    if k0 is not None and k1 is not None:
        return op("const", [], value=_splat(e0.type, fold(k1, k0)))
    return op("binary", [e1, e0], fn="sub")


def expand_builtins(module: Module, types) -> int:
    """smoothstep, mix, dot, length and normalize as the driver's own arithmetic, so that value
    numbering and fma formation see through them. smoothstep: emu.numerics.nvidia's sequence,
    t = clamp((x - e0) * RCP(e1 - e0), 0, 1); (t * t) * fma(-2, t, 3), its last product open to the
    add around it; f32 constant edges folded into t = clamp(fma(x, k, -e0 * k), 0, 1), k = RCP(e1 -
    e0) (DECISIONS['expand-constant-edges']); f16 as _smoothstep_f16. mix(a, b, t) is fma(t, b - a, a)."""
    def pick(inst):
        if inst.op != "builtin" or not _fusable_type(inst.type, types):
            return False
        fn = inst.attrs["fn"]
        return (fn == "smoothstep" and not hasattr(inst.type, "n")) or (fn in ("log", "fract") and inst.type == F32) \
            or (fn == "log" and inst.type == F16) \
            or (fn in ("dot", "length", "normalize") and _open_vector(inst.args[0].type)) \
            or (fn == "mix" and not hasattr(inst.type, "n") and all(a.type == inst.type for a in inst.args))

    def expand(inst, b, defs):
        fn = inst.attrs["fn"]
        if fn == "smoothstep":
            return _smoothstep_f16(inst, b, defs) if inst.type == F16 else _smoothstep(inst, b, defs)
        if fn == "fract":                     # FRND.FLOOR, FADD x - floor(x): a subtract of x
            fl = Inst("builtin", list(inst.args), inst.type, {"fn": "floor"}, [], inst.loc, b.value(inst.type))
            inst.op, inst.args, inst.attrs = "binary", [inst.args[0], fl.result], {"fn": "sub", "contracted": "expand-fract"}
            return [fl, inst]
        if fn == "log":                       # MUFU.LG2 then FMUL by ln 2, a product open to fusing
            # f16: MUFU.LG2.F16 (truncated to f16) then HMUL2 by f16(ln 2) (f16 seed 37's SASS)
            lg2, ty = ("log2", np.float32) if inst.type == F32 else ("lg2_f16", np.float16)
            lg = Inst("builtin", list(inst.args), inst.type, {"fn": lg2}, [], inst.loc, b.value(inst.type))
            ln2 = Inst("const", [], inst.type, {"value": float(ty(0.6931471805599453))}, [], inst.loc,
                       b.value(inst.type))
            inst.op, inst.args, inst.attrs = "binary", [lg.result, ln2.result], {"fn": "mul", "contracted": "expand-log"}
            return [lg, ln2, inst]
        if fn == "mix":
            a, bb, t = inst.args              # fma(t, b - a, a): its subtract open to fma formation
            d = Inst("binary", [bb, a], inst.type, {"fn": "sub"}, [], inst.loc, b.value(inst.type))
            inst.args, inst.attrs = [t, d.result, a], {"fn": "fma", "contracted": "expand"}
            return [d, inst]
        return _vector_builtin(inst, b)
    return _expand_each(module, pick, expand)


def _expand_each(module: Module, pick, expand) -> int:
    """Each instruction that pick() chooses becomes expand(inst, builder, defs): a list of
    instructions that ends with inst, rewritten."""
    b = Builder(_next_id(module))
    count = 0
    for f in module.functions:
        defs = {i.result.id: i for i in f.walk() if i.result is not None}
        for blk in _blocks(f.body):
            out = []
            for inst in blk.insts:
                if pick(inst):
                    out += expand(inst, b, defs)
                    count += 1
                else:
                    out.append(inst)
            blk.insts[:] = out
    return count


def _open_vector(t) -> bool:
    """A vector whose dot product the driver writes as scalar arithmetic: f32 of 2-4 components,
    f16 of 2-3 (f16 vec4 is two packed halves, emu.numerics.nvidia._dot)."""
    n = getattr(t, "n", 0)
    return 2 <= n <= (4 if scalar_of(t) == F32 else 3)


def _vector_builtin(inst: Inst, b: Builder) -> list:
    """dot, length and normalize as the driver's scalar arithmetic (emu.numerics.nvidia: the dot
    y * y' first, then x, z, w added, each product open to fma formation; length = sqrt(dot),
    normalize = v * inverseSqrt(dot)), so that value numbering and fma formation see through them
    (DECISIONS['expand-vector'])."""
    new, vt = [], inst.args[0].type
    st = scalar_of(vt)

    def op(name, args, t=st, **attrs):
        i = Inst(name, list(args), t, attrs, [], inst.loc, b.value(t))
        new.append(i)
        return i.result
    u = inst.args[0]
    w = inst.args[1] if inst.attrs["fn"] == "dot" else u
    us = [op("extract", [u], path=[k]) for k in range(vt.n)]
    ws = us if w is u else [op("extract", [w], path=[k]) for k in range(vt.n)]
    prods = [op("binary", [x, y], fn="mul") for x, y in zip(us, ws)]
    d = prods[1]                                 # y * y' first, then x, z, w
    for k, p in enumerate([prods[0]] + prods[2:]):
        last = k == vt.n - 2
        if last and inst.attrs["fn"] == "dot":
            inst.op, inst.args, inst.attrs = "binary", [p, d] if k == 0 else [d, p], {"fn": "add", "contracted": "expand"}
            return new + [inst]
        d = op("binary", [p, d] if k == 0 else [d, p], fn="add")
    if inst.attrs["fn"] == "length":
        inst.args, inst.attrs = [d], {"fn": "sqrt", "contracted": "expand"}
        return new + [inst]
    r = op("builtin", [d], fn="inverseSqrt")
    inst.op, inst.args, inst.attrs = "construct", [op("binary", [x, r], fn="mul") for x in us], {"contracted": "expand"}
    return new + [inst]


def _const_value(v: Value, defs):
    d = defs.get(v.id)
    if d is not None and d.op == "const" and isinstance(d.attrs.get("value"), (int, float)) \
            and not isinstance(d.attrs.get("value"), bool):
        return d.attrs["value"]
    return None


def _smoothstep(inst: Inst, b: Builder, defs) -> list:
    e0, e1, x = inst.args
    t, new = inst.type, []
    op = _emitter(inst, b, new)
    one, zero = op("const", [], value=1.0), op("const", [], value=0.0)
    two, three = op("const", [], value=-2.0), op("const", [], value=3.0)
    k0, k1 = _const_value(e0, defs), _const_value(e1, defs)
    if k0 is not None and k1 is not None:
        from ..numerics import nvidia
        ty = scalar_of(t).name
        k = nvidia.binary("div", ty, 1.0, nvidia.binary("sub", ty, k1, k0))
        c = nvidia.unary("neg", ty, nvidia.binary("mul", ty, k0, k))
        d = defs.get(x.id)
        shift = [a for a in d.args if _const_value(a, defs) is not None] if d is not None and d.op == "binary" \
            and d.attrs["fn"] == "add" and not d.attrs.get("exact") and d.type == t else []
        if len(shift) == 1:              # x = y + kk: fma(y, k, (kk - e0) * k) (fit seed 244's SASS)
            kk = _const_value(shift[0], defs)
            c = nvidia.binary("mul", ty, nvidia.binary("sub", ty, kk, k0), k)
            x = d.args[1] if d.args[0] is shift[0] else d.args[0]
        v = op("builtin", [x, op("const", [], value=float(k)), op("const", [], value=float(c))], fn="fma",
               contracted="expand-constant-edges")
    else:
        scale = op("binary", [one, op("binary", [e1, e0], fn="sub")], fn="div")
        v = op("binary", [op("binary", [x, e0], fn="sub"), scale], fn="mul")
    v = op("builtin", [op("builtin", [v, zero], fn="max"), one], fn="min")
    poly = op("builtin", [two, v, three], fn="fma")
    inst.op, inst.args, inst.attrs = "binary", [op("binary", [v, v], fn="mul"), poly], {"fn": "mul", "contracted": "expand"}
    return new + [inst]


def _smoothstep_f16(inst: Inst, b: Builder, defs) -> list:
    """f16 smoothstep (GLSL.std.450 SmoothStep) as the driver compiles it: t = clamp((x - e0) /
    (e1 - e0), 0, 1) (e1 - e0 folded where both are constants), then (t * t) * ((3 - t) - t),
    3 - 2t as two subtractions. Read in the driver's code of randprog seed 1 (HADD2 -t + 3, HADD2
    - t, HMUL2 t * t, then the product); measured: fit seeds 753 and 445 through Vulkan, 128 of 128
    each (fma(-2, t, 3) instead: 94 of 128)."""
    e0, e1, x = inst.args
    t, new = inst.type, []
    op = _emitter(inst, b, new)
    span = _span(e0, e1, defs, op, lambda a, c: float(np.float16(a) - np.float16(c)))
    v = op("binary", [op("binary", [x, e0], fn="sub"), span], fn="div")
    v = op("builtin", [v, op("const", [], value=0.0), op("const", [], value=1.0)], fn="clamp")
    poly = op("binary", [op("binary", [op("const", [], value=3.0), v], fn="sub"), v], fn="sub")
    inst.op, inst.args, inst.attrs = "binary", [op("binary", [v, v], fn="mul"), poly], {"fn": "mul", "contracted": "expand"}
    return new + [inst]


# -- factor ----------------------------------------------------------------------------------------

def factor_products(module: Module, types) -> int:
    """`a * c + b * c` (or -) -> `(a + b) * c` where one of the products has no other use (the
    other's stays for its other users), `p + p` -> `(a + a) * b`,
    and `x + x * k` (k a constant; or -, either side) -> `x * (1 + k)` with 1 + k folded: the
    driver takes the common factor out before it forms fused multiply-adds (DECISIONS['factor']).
    The sum left inside collects its like terms (x + (x - y) is fma(x, 2, -y), DECISIONS['like-terms']),
    and an f32 quotient of a product by one of its factors is the other ((x * y) / x is y,
    DECISIONS['cancel']). Repeated until nothing changes: what one step factors is a product the
    next may factor again, and a * (a * b) whose inner product lost its other user to factoring is
    (a * a) * b (`square`), its b open to the next step: b * s + (a * b) * a is b * (s + a * a)."""
    count = 0
    for _ in range(8):
        n, mapping = 0, {}
        for f in module.functions:
            uses = Counter(a.id for i in f.walk() for a in i.args)
            defs = {i.result.id: i for i in f.walk() if i.result is not None}
            b = Builder(_next_id(module))
            for blk in _blocks(f.body):
                out = []
                for inst in blk.insts:
                    if inst.op == "binary" and inst.attrs["fn"] in ("add", "sub") and not inst.attrs.get("exact") \
                            and _fusable_type(inst.type, types):
                        n += _factor(inst, out, uses, defs, b)
                    elif inst.op == "binary" and _fusable_type(inst.type, types) and not hasattr(inst.type, "n"):
                        same = _cancelled_factor(inst, defs, made_by="factor")
                        if same is not None:
                            mapping[inst.result.id] = same
                            n += 1
                    out.append(inst)
                blk.insts[:] = out
        _replace_uses(module, mapping)
        _remove_dead(module)
        count += n
        if not n:
            break
        square_products(module)          # what factoring left of a * (a * b) (its other user gone)
    return count


def _cancelled_factor(inst: Inst, defs, made_by=None):
    """y for (x * y) / x, (y * x) / x (with ``made_by``: only of a product that decision made),
    x * (y / x) and (y / x) * x, x not a product (DECISIONS['cancel'])."""
    fn, (x, y) = inst.attrs["fn"], inst.args
    if inst.attrs.get("exact") or inst.type not in (F32, F16) or x.type != inst.type or y.type != inst.type:
        return None
    if fn == "div":                  # f16 too: (3 * t3) / t3 is 3 (fit2 seeds 500693, 501093's SASS)
        d = defs.get(x.id)
        if d is not None and _is_mul(d) and d.type == inst.type and not _is_product(y, defs) \
                and (made_by is None or d.attrs.get("contracted") == made_by):
            ids = [a.id for a in d.args]
            if y.id in ids:
                return d.args[1 - ids.index(y.id)]
        return None
    if fn != "mul" or inst.type != F32:
        return None                  # f16 x3 * (y / x3) stays (fit seed 117's SASS: HMUL2 of RCP, HFMA2)
    for side in (0, 1):                 # not of a product: t5 * (x4 / t5) of smoothstep's t5 stays (seed 732)
        d = defs.get(inst.args[side].id)
        if d is not None and _is_div(d) and d.type == inst.type and d.args[1].id == inst.args[1 - side].id \
                and not _is_product(d.args[1], defs):
            return d.args[0]
    return None


def _factor(inst: Inst, out: list, uses, defs, b: Builder) -> int:
    fn, t = inst.attrs["fn"], inst.type
    p, q = (_product(v, defs, False, t) for v in inst.args)
    op = _emitter(inst, b, out)
    if p is not None and p is q:                                     # p + p: (a + a) * b
        inst.args, inst.attrs = [op("binary", [p.args[0], p.args[0]], fn=fn), p.args[1]], \
            {"fn": "mul", "contracted": "factor"}
        return 1
    if p is not None and q is not None and (uses[p.result.id] == 1 or uses[q.result.id] == 1):
        common = [v for v in p.args if any(v.id == w.id for w in q.args)]
        if common:
            c = common[0]
            a = p.args[1] if p.args[0].id == c.id else p.args[0]
            bb = q.args[1] if q.args[0].id == c.id else q.args[0]
            inner = Inst("binary", [a, bb], t, {"fn": fn}, [], inst.loc, b.value(t))
            defs[inner.result.id] = inner
            _like_terms(inner, out, uses, defs, b, constant=False)
            out.append(inner)
            inst.args, inst.attrs = [inner.result, c], {"fn": "mul", "contracted": "factor"}
            return 1
    for side in (0, 1):                                              # x + x * k
        x, m = inst.args[side], (p, q)[1 - side]
        if m is None or uses[m.result.id] != 1:
            continue
        ks = [_const_value(v, defs) for v in m.args]
        ids = [v.id for v in m.args]
        if x.id not in ids or ks[1 - ids.index(x.id)] is None:
            continue
        k = np.float32(ks[1 - ids.index(x.id)])
        one = np.float32(1.0)
        # x + x*k, x - x*k, x*k - x
        factor = one + k if fn == "add" else (one - k if side == 0 else k - one)
        if t == F16:
            factor = np.float16(factor)
        inst.args, inst.attrs = [x, op("const", [], value=float(factor))], {"fn": "mul", "contracted": "factor"}
        return 1
    return 0


# -- fma -------------------------------------------------------------------------------------------

def _fusable_type(t, types) -> bool:
    try:
        return scalar_of(t) in types
    except TypeError:
        return False


def form_fma(module: Module, types, divide: bool, after_division: bool = True) -> int:
    """Every add or subtract (of the given float types, not `exact`) with a product operand
    becomes one fused multiply-add where every user of the product is such an add (it then fuses
    into each); where both operands are products, the add's left one is fused."""
    b = Builder(_next_id(module))
    count = 0
    for f in module.functions:
        uses = Counter(a.id for i in f.walk() for a in i.args)
        defs = {i.result.id: i for i in f.walk() if i.result is not None}
        by = {}
        for i in f.walk():
            for a in i.args:
                by.setdefault(a.id, []).append(i)
        first_user = {k: next((u for u in v if u.op == "binary" and u.attrs["fn"] in ("add", "sub")), None)
                      for k, v in by.items()}
        fusing = _fusing_products(f, defs, by, first_user, types, divide)
        for blk in _blocks(f.body):
            out = []
            orig = list(blk.insts)
            for k, inst in enumerate(orig):
                if after_division and _after_its_division(inst, orig[:k], defs):
                    inst.attrs["contracted"] = "rounded-after-division"
                    out.append(inst)
                    continue
                new = _fuse(inst, defs, uses, fusing, first_user, b, types, divide)
                if new is None:
                    out.append(inst)
                    continue
                out.extend(new)
                count += 1
            blk.insts[:] = out
    _remove_dead(module)
    return count


def fold_constants_into_fma(module: Module, types) -> int:
    """An add or subtract of a constant k1 and fma(a, b, k2) (k2 a constant; the fma may have other
    users) is one fma, the constants combined when compiling: fma(a, b, k2 + k1), fma(a, b, k2 - k1),
    k1 - fma(a, b, k2) = fma(-a, b, k1 - k2) (DECISIONS['fma-constants'])."""
    def rewrite(inst: Inst, out: list, uses, defs, b: Builder) -> bool:
        if inst.op == "builtin" and inst.attrs.get("fn") == "fma" and _fusable_type(inst.type, types):
            return _constant_factors_of_fma(inst, out, uses, defs, b)
        if not _is_add(inst, types):
            return False
        x, y = inst.args
        for side, (k, v) in enumerate(((x, y), (y, x))):
            k1, d = _const_value(k, defs), defs.get(v.id)
            if k1 is None or d is None or d.op != "builtin" or d.attrs.get("fn") != "fma" or d.type != inst.type:
                continue
            k2 = _const_value(d.args[2], defs)
            if k2 is None:
                continue
            ty = np.float16 if inst.type == F16 else np.float32
            k1, k2 = ty(k1), ty(k2)
            op = _emitter(inst, b, out)
            a, m = d.args[0], d.args[1]
            if inst.attrs["fn"] == "add":
                c = k2 + k1
            elif side == 1:                      # fma - k1
                c = k2 - k1
            else:                                # k1 - fma
                c, a = k1 - k2, op("unary", [a], fn="neg")
            inst.op, inst.args = "builtin", [a, m, op("const", [], value=float(c))]
            inst.attrs = {"fn": "fma", "contracted": "fma-constants"}
            return True
        return False
    return _rewrite_each(module, rewrite)


def _constant_factors_of_fma(inst: Inst, out: list, uses, defs, b: Builder) -> bool:
    """fma(x * k1, k2, c) (x * k1 used only there; either factor) is fma(x, k1 * k2, c), the
    constants multiplied when compiling (randprog_fit.npz seed 80's SASS: smoothstep(-1, 2, t7 *
    -1.718) is FFMA.SAT t7, -(1.718 * RCP(3)), RCP(3))."""
    for side in (0, 1):
        k2, d = _const_value(inst.args[1 - side], defs), defs.get(inst.args[side].id)
        if k2 is None or d is None or not _is_mul(d) or d.type != inst.type or uses[d.result.id] != 1:
            continue
        ks = [_const_value(v, defs) for v in d.args]
        if (ks[0] is None) == (ks[1] is None):
            continue
        k1, x = (ks[0], d.args[1]) if ks[0] is not None else (ks[1], d.args[0])
        from ..numerics import nvidia
        k = float(nvidia.binary("mul", scalar_of(inst.type).name, k1, k2))
        inst.args = [x, _emitter(inst, b, out)("const", [], value=k), inst.args[2]]
        inst.attrs = dict(inst.attrs, contracted="fma-constants")
        return True
    return False


# the types whose x / y is x * RCP(y) and fuses as a product; f16's RCP is MUFU.RCP.F16: f16
# t6 / t4 + m is fma(t6, RCP(t4), m) (randprog_fit.npz seed 425, 128 of 128; rounded first: 92)
_DIVIDES = (F32, F16)


def _product(v, defs, divide: bool, t):
    """The multiply (or f32 division, x * RCP(y)) that computes v, if it may fuse."""
    d = defs.get(v.id)
    if d is None or d.op != "binary" or d.attrs.get("exact") or d.type != t:
        return None
    if d.attrs["fn"] == "mul" or (divide and d.attrs["fn"] == "div" and scalar_of(d.type) in _DIVIDES):
        return d
    if divide and d.attrs["fn"] == "div" and scalar_of(d.type) == F16 and _const_value(d.args[1], defs) is not None:
        return d
    return None


def _widened_product(v, defs, t):
    """f32(a * b) of an f16 product: the driver fuses the product through the widening, as
    fma(f32(a), f32(b), c) (DECISIONS['fma-widened'])."""
    d = defs.get(v.id)
    if d is None or d.op != "convert" or d.type != t or scalar_of(t) != F32:
        return None
    m = defs.get(d.args[0].id)
    if m is None or m.op != "binary" or m.attrs["fn"] != "mul" or m.attrs.get("exact") or m.type != F16:
        return None
    return d


def _negated_product(v, defs, divide, t):
    d = defs.get(v.id)
    if d is not None and d.op == "unary" and d.attrs["fn"] == "neg" and not d.attrs.get("exact") and d.type == t:
        return _product(d.args[0], defs, divide, t)
    return None


# a product with more users than this is rounded for all (randprog_fit.npz seed 96's SASS: three
# users, FADDs of one FMUL; seeds 15, 824, 88: two, both FFMAs), unless its users read its factors
# (DECISIONS['fma-shared'])
_MAX_FUSED_USERS = 2


def _users_read_a_factor(p: Inst, users: list) -> bool:
    """One of the adds that use product p also reads one of its factors (a * b + a, a * b - b)."""
    factors = {p.args[0].id, p.args[1].id}
    return any(a.id in factors for u in users for a in u.args)


# builtins whose code on the device multiplies their argument by itself: x * x in the shader is
# that FMUL too (randprog_fit.npz seed 108's SASS: tanh(x2)'s FMUL x2, x2 is (x2 * x2) + x3's, FADD);
# f32 only: f16 tanh is one MUFU.TANH.F16 (fit2 seed 500861's SASS: tanh(x3) beside HFMA2 x3, x3, 0.25)
_SQUARES_ITS_ARGUMENT = ("tanh",)


def _is_fma(v: Value, defs) -> bool:
    """v is a fused multiply-add formed from the shader's own product (not a widened f16 product,
    which runs as FMUL and FADD)."""
    d = defs.get(v.id)
    return d is not None and d.op == "builtin" and d.attrs.get("fn") == "fma" and d.attrs.get("contracted") != "fma-widened"


def _beside_fma(p: Inst, inst: Inst, side: int, defs) -> bool:
    """p is a division and the add's other operand an fma: it fuses there as anywhere else, f32 and
    f16 (DECISIONS['fma-division-beside-fma'])."""
    return p.op == "binary" and p.attrs["fn"] == "div" and _is_fma(inst.args[1 - side], defs)


def _is_add(u: Inst, types) -> bool:
    return u.op == "binary" and u.attrs["fn"] in ("add", "sub") and not u.attrs.get("exact") \
        and _fusable_type(u.type, types)


def _fusing_products(f: Function, defs, by: dict, first_user: dict, types, divide: bool) -> set:
    """The products that fuse (DECISIONS['fma']): all or nothing, a product fuses into every one
    of its users or is rounded for all. Candidates are the products whose users are all adds or
    subtracts, and, where it has several, none subtracts it (c - p is c + (-p), the negation a
    user that is not an add; a division: one use); an add of two candidates takes the one fma formation picks
    (the left; f16 a multiply before a division; a widened f16 product before both), and the
    other, unable to fuse there, is rounded everywhere, until nothing changes."""
    cands = set()
    squared = {i.args[0].id for i in f.walk() if i.op == "builtin" and i.attrs.get("fn") in _SQUARES_ITS_ARGUMENT
               and i.type == F32}
    for i in f.walk():
        if i.result is None or not _fusable_type(i.type, types):
            continue
        p = _product(i.result, defs, divide, i.type)
        users = by.get(i.result.id, [])
        if p is None or not users or not all(_is_add(u, types) for u in users):
            continue
        if p.attrs["fn"] == "mul" and p.args[0].id == p.args[1].id and p.args[0].id in squared:
            continue                             # x * x is also the builtin's own FMUL: a user not an add
        many = len(users) > _MAX_FUSED_USERS and not _users_read_a_factor(p, users)
        if len(users) > 1 and (p.attrs["fn"] == "div" or many
                               or all(u.attrs["fn"] == "sub" and u.args[1].id == p.result.id for u in users)):
            continue
        cands.add(p.result.id)
    changed = True
    while changed:
        changed = False
        for u in (u for i in f.walk() for u in [i] if _is_add(u, types)):
            sides = [a for a in u.args if a.id in cands]
            widened = [a for a in u.args if (w := _widened_product(a, defs, u.type)) is not None
                       and first_user.get(w.result.id) is u]
            if widened and not (u.attrs["fn"] == "add" and any(defs[a.id].attrs["fn"] == "mul" for a in sides)):
                losers = sides                       # a widened product before a division
            elif len(sides) == 2 and sides[0].id != sides[1].id:
                ranked = [(defs[a.id], side, False) for side, a in enumerate(sides)]
                if scalar_of(u.type) == F32:         # the one with fewer users (DECISIONS['fma-fewer-users'])
                    ranked.sort(key=lambda r: len(by.get(r[0].result.id, [])))
                ranked = _multiply_first(ranked, u, defs)
                losers = [r[0].result for r in ranked[1:]]
            else:
                continue
            for a in losers:
                if a.id in cands:
                    cands.discard(a.id)
                    changed = True
    return cands


def _fuse(inst: Inst, defs, uses, fusing, first_user, b: Builder, types, divide: bool):
    if inst.op != "binary" or inst.attrs["fn"] not in ("add", "sub") or inst.attrs.get("exact") \
            or not _fusable_type(inst.type, types):
        return None
    t, fn = inst.type, inst.attrs["fn"]
    x, y = inst.args
    pre = []

    def neg(v):
        n = Inst("unary", [v], v.type, {"fn": "neg"}, [], inst.loc, b.value(v.type))
        pre.append(n)
        return n.result

    # the right operand first: of two products the add's right one is fused
    # of two products the add's left operand is fused, the right one rounded
    choices = []
    for side, v in ((0, x), (1, y)):
        p = _widened_product(v, defs, t)
        if p is not None and first_user.get(p.result.id) is inst and not (fn == "sub" and x is y):
            choices.append((p, side, False))
    for side, v in ((0, x), (1, y)):
        p = _product(v, defs, divide, t)
        if p is not None and p.result.id in fusing:
            choices.append((p, side, False))
    for side, v in ((0, x), (1, y)):
        p = _negated_product(v, defs, divide, t)
        if p is not None and uses[p.result.id] == 1 and uses[v.id] == 1:          # -(a * b) + c
            choices.append((p, side, True))
    if not choices:
        return None
    p, side, negated = _multiply_first(choices, inst, defs)[0]
    c = inst.args[1 - side]
    a, m = _factors(p, inst.loc, b, pre, defs)
    subtract_product = negated != (fn == "sub" and side == 1)
    if fn == "sub" and side == 0:
        c = neg(c)
    decision = {"div": "fma-division", "mul": "fma"}.get(p.attrs.get("fn"), "fma-widened")
    if _beside_fma(p, inst, side, defs):
        decision = "fma-division-beside-fma"
    if decision == "fma" and uses[p.result.id] > _MAX_FUSED_USERS:
        decision = "fma-shared"
    elif decision == "fma" and side == 1 and scalar_of(t) == F32 and (q := _product(x, defs, divide, t)) is not None \
            and uses[q.result.id] > uses[p.result.id]:
        decision = "fma-fewer-users"                 # of two products, the right one: it has fewer users
    elif decision in ("fma", "fma-division") and _kind(p, defs) == "mul" and _late_product(inst.args[1 - side], defs,
                                                                                              divide, t):
        decision = "fma-multiply-first"              # the other operand, a division or f32(a * b), rounded
    if p.attrs.get("contracted") == "fma-constant-factor":
        decision = "fma-constant-factor"             # k * (x * x) of fold_algebra's (k * x) * x
    if subtract_product:
        a = neg(a)
    inst.op, inst.args, inst.attrs = "builtin", [a, m, c], {"fn": "fma", "contracted": decision}
    return pre + [inst]


def _late_product(v: Value, defs, divide: bool, t) -> bool:
    """v is a product the driver fuses only after a multiply: f32(a * b) of f16 a, b, or x * RCP(y)."""
    d = _product(v, defs, divide, t)
    return _widened_product(v, defs, t) is not None or (d is not None and _kind(d, defs) == "div")


def _kind(p: Inst, defs) -> str:
    """A product's kind as the driver ranks it (_LATE); x / k, k a constant, is a multiply, x * RCP(k)
    with RCP(k) folded when compiling (randprog_fit.npz seed 608's SASS: 2 / y + x / 1.702 fuses
    x / 1.702)."""
    if p.op == "convert":
        return "convert"
    if p.attrs["fn"] == "div" and _const_value(p.args[1], defs) is not None:
        return "mul"
    return p.attrs["fn"]


def _multiply_first(choices: list, add: Inst, defs) -> list:
    """Of an add's two products the driver fuses a multiply before a widened f16 product
    (f32(a * b)) before a division (x * RCP(y)), wherever each stands; (p, side, negated) choices
    of one kind keep their order. A subtract keeps its order (f32: p / q - a * b fuses the
    division), f16 ranks there too (DECISIONS['fma-multiply-first'])."""
    if add.attrs["fn"] == "sub":
        return choices
    return sorted(choices, key=lambda c: _LATE.index(_kind(c[0], defs)))


# the kinds of product in the order the driver fuses them: a multiply, then f32(a * b) of f16 a and
# b, then a division
_LATE = ("mul", "convert", "div")


def _factors(p: Inst, loc, b: Builder, pre: list, defs=None):
    """(a, m) with a * m the product p computes: x / y is x * (1 / y), 1 / y the RCP; f32(x * y)
    of f16 x, y is f32(x) * f32(y)."""
    if p.op == "convert":
        wide = [Inst("convert", [v], p.type, dict(p.attrs), [], loc, b.value(p.type)) for v in defs[p.args[0].id].args]
        pre += wide
        return wide[0].result, wide[1].result
    if p.attrs["fn"] == "mul":
        return p.args[0], p.args[1]
    x, y = p.args
    t = y.type
    one = Inst("const", [], t, {"value": [1.0] * t.n if hasattr(t, "n") else 1.0}, [], loc, b.value(t))
    rcp = Inst("binary", [one.result, y], t, {"fn": "div"}, [], loc, b.value(t))
    pre += [one, rcp]
    return x, rcp.result


def _constant_times(v: Value, defs, uses, side: int = 0):
    """(k, x) when v = k * x (side 1: x * k), k a constant, v used once."""
    d = defs.get(v.id)
    if d is None or d.op != "binary" or d.attrs["fn"] != "mul" or d.attrs.get("exact") or uses[v.id] != 1:
        return None
    kd = defs.get(d.args[side].id)
    return (d.args[side], d.args[1 - side]) if kd is not None and kd.op == "const" else None


def _after_its_division(inst: Inst, before, defs) -> bool:
    """`c - x * y` (f32) where the block divided the same two values, x / y, before it (the same
    loads: value numbering made them one value): measured rounded first (DECISIONS['rounded-after-division'])."""
    if inst.op != "binary" or inst.attrs["fn"] != "sub" or inst.type != F32 or inst.attrs.get("exact"):
        return False
    p = defs.get(inst.args[1].id)
    if p is None or p.op != "binary" or p.attrs["fn"] != "mul" or p.type != F32:
        return False
    return any(d.op == "binary" and d.attrs["fn"] == "div" and d.type == F32 and
               [a.id for a in d.args] == [a.id for a in p.args] for d in before)


# -- f16 (the driver's decisions that only half precision meets) -------------------------------------

def drop_f16_round_trips(module: Module) -> int:
    """`f32(f16(x))` of an f32 x is x: the driver drops a narrowing conversion whose only use
    widens it back (measured: f32(f16(load)) stores the load's unrounded bits). It sees through
    what changes no bits between the two: min(v, v), max(v, v) and select(v, v, c) are v; negation
    and abs move across the conversions, f32(-f16(x)) is -x and f32(abs(f16(x))) is abs(x)
    (DECISIONS['f16-round-trip'])."""
    defs = {i.result.id: i for f in module.functions for i in f.walk() if i.result is not None}
    b = Builder(_next_id(module))
    mapping = {}
    for f in module.functions:
        for blk in _blocks(f.body):
            out = []
            for inst in blk.insts:
                trip = _round_trip(inst, defs)
                if trip is not None:
                    v, signs = trip
                    for s in reversed(signs):           # innermost first, now in f32
                        v = _emitter(inst, b, out)(s.op, [v], **{**s.attrs, "contracted": "f16-round-trip"})
                    mapping[inst.result.id] = v
                out.append(inst)
            blk.insts[:] = out
    _replace_uses(module, mapping)
    _remove_dead(module)
    return len(mapping)


def _round_trip(inst: Inst, defs):
    """(x, [negations and abs, outermost first]) where inst is f32(...f16(x)...) of an f32 x."""
    if inst.op != "convert" or len(inst.args) != 1 or _float_scalar(inst.type) != F32:
        return None
    signs, d = [], defs.get(inst.args[0].id)
    while d is not None:
        if len(d.args) == 1 and ((d.op == "unary" and d.attrs.get("fn") == "neg")
                                 or (d.op == "builtin" and d.attrs.get("fn") == "abs")):
            signs.append(d)
        elif _same_operands(d) is None:
            break
        d = defs.get(d.args[0].id)
    if d is None or d.op != "convert" or len(d.args) != 1 or _float_scalar(d.type) != F16 \
            or d.args[0].type != inst.type:
        return None
    return d.args[0], signs


def _same_operands(d: Inst):
    """v where d is min(v, v), max(v, v) or select(v, v, c) (after numbering: one v)."""
    if d.op == "builtin" and d.attrs.get("fn") in ("min", "max") and len(d.args) == 2 \
            or d.op == "select" or (d.op == "builtin" and d.attrs.get("fn") == "select"):
        return d.args[0] if d.args[0].id == d.args[1].id else None
    return None


def relu_f16_clamps(module: Module) -> int:
    """f16 clamp(v, 0, hi) of an add, subtract or fused multiply-add v (used only there) is the
    driver's HADD2/HFMA2.RELU then HMNMX2 with hi: the .RELU keeps a NaN, which the min then drops,
    so a NaN v gives hi, not 0. clamp(v, 0, 1) is .SAT instead, which gives 0 (DECISIONS['relu-f16'])."""
    return _rewrite_each(module, _relu_clamp)


def _relu_clamp(inst: Inst, out: list, uses, defs, b: Builder) -> bool:
    if inst.op != "builtin" or inst.attrs["fn"] != "clamp" or inst.type != F16 or len(inst.args) != 3:
        return False
    v, lo, hi = inst.args
    d = defs.get(v.id)
    if _const_of(defs.get(lo.id)) != 0.0 or _const_of(defs.get(hi.id)) == 1.0 or d is None or uses[v.id] != 1 or not (
            (d.op == "binary" and d.attrs["fn"] in ("add", "sub")) or (d.op == "builtin" and d.attrs["fn"] == "fma")):
        return False
    op = _emitter(inst, b, out)
    below = Inst("binary", [v, lo], BOOL, {"fn": "lt"}, [], inst.loc, b.value(BOOL))
    out.append(below)
    relu = op("select", [v, lo, below.result], contracted="relu-f16")        # a NaN stays a NaN
    inst.args, inst.attrs = [relu, hi], {"fn": "min", "contracted": "relu-f16"}
    return True


def _float_scalar(t):
    try:
        return scalar_of(t)
    except TypeError:
        return None


# -- translator: tint ------------------------------------------------------------------------------

def tint_smoothstep(module: Module) -> int:
    """smoothstep(e0, e1, x) as Tint writes it into SPIR-V (no GLSL.std.450 SmoothStep):
    t = clamp((x - e0) / (e1 - e0), 0, 1) (e1 - e0 folded where both are constants);
    t * (t * (3 - 2 * t)). Seen in Tint's SPIR-V of the random programs and of f32, f16 and vector
    probes (scripts/translator_spirv.py); naga keeps SmoothStep."""
    return _expand_each(module, lambda inst: inst.op == "builtin" and inst.attrs["fn"] == "smoothstep"
                        and _float_scalar(inst.type) in (F32, F16), _tint_smoothstep)


def _tint_smoothstep(inst: Inst, b: Builder, defs) -> list:
    e0, e1, x = inst.args
    t, new = inst.type, []
    op = _emitter(inst, b, new)

    def const(v):
        return op("const", [], value=_splat(t, v))
    # Tint's const-evaluation, in the type's precision
    span = _span(e0, e1, defs, op, lambda a, c: _tint_fold_sub(a, c, _float_scalar(t)))
    v = op("binary", [op("binary", [x, e0], fn="sub"), span], fn="div")
    v = op("builtin", [v, const(0.0), const(1.0)], fn="clamp")
    poly = op("binary", [const(3.0), op("binary", [const(2.0), v], fn="mul")], fn="sub")
    inst.op, inst.args, inst.attrs = "binary", [v, op("binary", [v, poly], fn="mul")], {"fn": "mul", "contracted": "tint-smoothstep"}
    return new + [inst]


def _const_of(d):
    """The scalar value of a constant (a vector's, where all its components are equal)."""
    if d is None or d.op != "const":
        return None
    v = d.attrs.get("value")
    if isinstance(v, (list, tuple)) and v and all(w == v[0] for w in v):
        v = v[0]
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _tint_fold_sub(a: float, b: float, t) -> float:
    """a - b as Tint folds it: in f32, an f16 result then rounded toward zero (emu.numerics.tint)."""
    r = np.float32(np.float32(a) - np.float32(b))
    if t == F16:
        from ..numerics.tint import quantize_f16
        return float(quantize_f16(r))
    return float(r)


# -- driver: products with a repeated factor -------------------------------------------------------

def square_products(module: Module) -> int:
    """`a * (a * y)` (any operand order; y not a constant; a * y used only there) is
    `(a * a) * y`: the driver multiplies the repeated factor first. Measured: Tint's smoothstep
    t * (t * p) rounds as (t * t) * p (builtins.npz f32/f16 smoothstep through Dawn; randprog fit
    seeds 753 and 445, 128 of 128); f16 (t3 * x2) * t3 as (t3 * t3) * x2 (fit seed 1069, 128 of
    128, once `fold` has made t4 / t4 one); y a constant too: f16 t3 * (3 * t3) - s is fma(t3 * t3, 3,
    -s) (fit2 seeds 500321, 500581's SASS: HMUL2 t * t, HFMA2 with 3 and 1.988), f32 (x2 * -2.217) * x2
    is (x2 * x2) * -2.217 (fit2 seed 500152's SASS), but not t * (t * 1.0) (the driver folds the 1.0
    and fuses t * t, fit seed 129); not where a * y has another use (f32 x2 * t5 of t5 = x3 * x2, t5
    stored: fit seed 572)."""
    return _rewrite_each(module, _square)


def _unselected(v: Value, defs) -> Value:
    """v through select(c, w, w): w. Not through min(w, w) or max(w, w), which the driver folds later
    (fit2 seed 500269's SASS: x2 * (min(x2, x2) * y) stays x2 * (x2 * y); DECISIONS['f16-round-trip'])."""
    while (d := defs.get(v.id)) is not None and "select" in (d.op, d.attrs.get("fn")) \
            and (w := _same_operands(d)) is not None:
        v = w
    return v


def _square(inst: Inst, out: list, uses, defs, b: Builder) -> bool:
    if not _is_mul(inst):
        return False
    for side in (0, 1):
        a, inner = inst.args[side], defs.get(inst.args[1 - side].id)
        if inner is None or not _is_mul(inner) or inner.type != inst.type or uses[inner.result.id] != 1:
            continue
        ids = [_unselected(w, defs).id for w in inner.args]      # (c ? t5 : t5) * (k * t5): fit2 seed 500581
        if _unselected(a, defs).id not in ids or ids[0] == ids[1]:
            continue
        y = inner.args[1 - ids.index(_unselected(a, defs).id)]
        if _const_of(defs.get(y.id)) == 1.0:        # x * 1.0: folded first (fit seed 129)
            continue
        sq = Inst("binary", [a, a], inst.type, {"fn": "mul"}, [], inst.loc, b.value(inst.type))
        out.append(sq)
        inst.args = [sq.result, y]
        inst.attrs = dict(inst.attrs, contracted="square")
        return True
    return False


def _rewrite_each(module: Module, rewrite) -> int:
    """rewrite(inst, out, uses, defs, builder) over every instruction, block by block: it appends
    what it makes before inst to out and says whether it changed inst, or returns the Value that
    replaces inst (its uses are moved to it). Dead values go after."""
    uses = Counter(a.id for f in module.functions for i in f.walk() for a in i.args)
    defs = {i.result.id: i for f in module.functions for i in f.walk() if i.result is not None}
    b = Builder(_next_id(module))
    count, mapping = 0, {}
    for f in module.functions:
        for blk in _blocks(f.body):
            out = []
            for inst in blk.insts:
                done = rewrite(inst, out, uses, defs, b)
                if isinstance(done, Value):
                    mapping[inst.result.id] = done
                count += bool(done)
                out.append(inst)
            blk.insts[:] = out
    _replace_uses(module, mapping)
    _remove_dead(module)
    return count


def _is_mul(i: Inst) -> bool:
    return i.op == "binary" and i.attrs["fn"] == "mul" and not i.attrs.get("exact") \
        and _float_scalar(i.type) in (F32, F16)


# -- driver: f16 division by a constant ------------------------------------------------------------

# -- driver: a division of a quotient -----------------------------------------------------------------

def join_divisions(module: Module) -> int:
    """`(x / y) / z` (x / y used only there; y, z not constants) is x / (y * z): one RCP of the
    product, one multiply; `x / (y / z)` (y / z used only there) is (x * z) / y (DECISIONS['division-chain'])."""
    return _rewrite_each(module, _join_divisions)


def _join_divisions(inst: Inst, out: list, uses, defs, b: Builder) -> bool:
    if not _is_div(inst) or _float_scalar(inst.type) not in (F16, F32):
        return False
    inner = defs.get(inst.args[0].id)
    if inner is None or not _is_div(inner) or inner.type != inst.type or uses[inner.result.id] != 1:
        return _invert_divided_divisor(inst, out, uses, defs, b)
    if any(defs.get(v.id) is not None and defs[v.id].op == "const" for v in (inner.args[1], inst.args[1])):
        return False                             # a constant divisor: not measured
    yz = _emitter(inst, b, out)("binary", [inner.args[1], inst.args[1]], fn="mul")
    inst.args = [inner.args[0], yz]
    inst.attrs = dict(inst.attrs, contracted="division-chain")
    return True


def _invert_divided_divisor(inst: Inst, out: list, uses, defs, b: Builder) -> bool:
    """x / (y / z) (y / z used only there, y, z not constants; x not a quotient that joins first:
    fit2 seed 500148's SASS) is (x * z) / y (judge seed 100453's SASS)."""
    under = defs.get(inst.args[1].id)
    if under is None or not _is_div(under) or under.type != inst.type or uses[under.result.id] != 1 \
            or any(defs.get(v.id) is not None and defs[v.id].op == "const" for v in under.args):
        return False
    inst.args = [_emitter(inst, b, out)("binary", [inst.args[0], under.args[1]], fn="mul"), under.args[0]]
    inst.attrs = dict(inst.attrs, contracted="division-chain")
    return True


def _is_div(i: Inst) -> bool:
    return i.op == "binary" and i.attrs["fn"] == "div" and not i.attrs.get("exact")


def distribute_f16_constant_division(module: Module) -> int:
    """f16 `v / c` (c a constant) is v * r with r the f16 nearest 1 / c, folded when the driver
    compiles (not the run time's MUFU.RCP, which rounds toward zero); where v = x + k or x - k (k a
    constant, v used only there) the reciprocal is distributed: fma(x, r, k * r). Measured: x1 /
    0.3h (fit seed 513, both paths: 128 of 128; RCP toward zero: 23); Tint's f16 smoothstep(-1, 2,
    x), (x - -1) / 3, rounds as fma(x, r, r) (fit seeds 753 and 445 through Dawn, 128 of 128; (x +
    1) rounded first: 114 and 113), as in the driver's code of seed 1 (HFMA2.SAT x, 0.33325,
    0.33325); f16 ((y + kk) + k) / c is fma(y, r, f16(kk + k) * r), the shift folded in (fit seed 73)."""
    return _rewrite_each(module, _distribute_division)


def _distribute_division(inst: Inst, out: list, uses, defs, b: Builder) -> bool:
    if inst.op != "binary" or inst.attrs["fn"] != "div" or inst.type not in (F16, F32) or inst.attrs.get("exact"):
        return False
    c = _const_of(defs.get(inst.args[1].id))
    if c is None or c == 0.0:
        return False
    s = defs.get(inst.args[0].id)
    k = _const_of(defs.get(s.args[1].id)) if s is not None and s.op == "binary" and s.attrs["fn"] in ("add", "sub") \
        and not s.attrs.get("exact") and uses[s.result.id] == 1 else None
    if inst.type == F32:
        # f32: (x + k) / c is fma(x, r, k * r) with r = RCP(c), the driver's x / c (DECISIONS['expand-constant-edges']:
        # smoothstep's constant edges, as the driver's own expansion or Tint's (x - e0) / (e1 - e0))
        if k is None:
            return False
        from ..numerics import nvidia
        r = nvidia.binary("div", "f32", np.float32(1.0), np.float32(c))
        kr = nvidia.binary("mul", "f32", np.float32(k if s.attrs["fn"] == "add" else -k), r)
        r, kr = float(r), float(kr)
    else:
        with np.errstate(over="ignore"):
            r = float(np.float16(np.float32(1.0) / np.float32(c)))
        if not np.isfinite(r):                   # 1/c beyond f16: left to the run time
            return False
    x = inst.args[0] if k is None else s.args[0]
    if inst.type == F16 and k is not None:
        k = k if s.attrs["fn"] == "add" else -k
        shift = _constant_shift(x, defs, uses)
        if shift is not None:                    # ((y + kk) + k) / c: fma(y, r, (kk + k) * r) (fit seed 73)
            x, k = shift[0], float(np.float16(np.float16(shift[1]) + np.float16(k)))
        kr = float(np.float16(np.float32(k) * np.float32(r)))
    if inst.type == F16:                         # (y * k1) * r: the constants multiplied (fit seed 821)
        yk = _constant_times(x, defs, uses) or _constant_times(x, defs, uses, side=1)
        if yk is not None and _const_of(defs.get(yk[0].id)) is not None:
            x, r = yk[1], float(np.float16(np.float32(_const_of(defs.get(yk[0].id))) * np.float32(r)))
    op = _emitter(inst, b, out)
    if k is None:
        inst.args, inst.attrs = [x, op("const", [], value=r)], {"fn": "mul", "contracted": "f16-constant-division"}
        return True
    inst.op, inst.args = "builtin", [x, op("const", [], value=r), op("const", [], value=kr)]
    inst.attrs = {"fn": "fma", "contracted": "f16-constant-division" if inst.type == F16 else "expand-constant-edges"}
    return True


def _constant_shift(v: Value, defs, uses):
    """(y, kk) where v = y + kk, kk + y or y - kk (as y + -kk), kk a constant and v used only once."""
    d = defs.get(v.id)
    if d is None or d.op != "binary" or d.attrs["fn"] not in ("add", "sub") or d.attrs.get("exact") \
            or d.type != v.type or uses[v.id] != 1:
        return None
    ks = [_const_of(defs.get(a.id)) for a in d.args]
    if ks[1] is not None and ks[0] is None:
        return d.args[0], ks[1] if d.attrs["fn"] == "add" else -ks[1]
    if ks[0] is not None and ks[1] is None and d.attrs["fn"] == "add":
        return d.args[1], ks[0]
    return None


# -- driver: algebraic identities ------------------------------------------------------------------

def cancel_factors(module: Module) -> int:
    """f32 (x * y) / x and x * (y / x) are y (DECISIONS['cancel']), before the identities fold: t4 / x2
    of t4 = (x2 < x2) ? .. : ((x2 * x3) + x3) - x3 stays a division (fit2 seed 501124's SASS)."""
    def rewrite(inst: Inst, out: list, uses, defs, b: Builder):
        return _cancelled_factor(inst, defs) if inst.op == "binary" and not hasattr(inst.type, "n") else None
    return _rewrite_each(module, rewrite)


def fold_identities(module: Module) -> int:
    """Float identities the driver applies whatever the operands hold (no NaN, infinity or
    signed-zero exceptions): x - x and x * 0 are +0, x / x is 1, x * 1, x / 1, x + 0 and x - 0
    are x, (a - y) + y and (a + y) - y are a, (a - y) + (y + b) is a + b, +0 / y is +0; x < x and
    x > x are false, and a select on a constant
    its operand. Runs after value numbering: two loads of one element are one x."""
    defs = {i.result.id: i for f in module.functions for i in f.walk() if i.result is not None}
    mapping, count = {}, 0

    def value(v):
        while v.id in mapping:
            v = mapping[v.id]
        return v

    def is_const(v, k):
        d = defs.get(v.id)
        return _const_of(d) == k and d.op == "const"
    uses = Counter(a.id for f in module.functions for i in f.walk() for a in i.args)
    for f in module.functions:
        for inst in f.walk():
            if _negated_difference(inst, defs, uses):
                count += 1
                continue
            if _compares_itself(inst, value):
                inst.op, inst.args, inst.attrs = "const", [], {"value": False, "contracted": "fold"}
                count += 1
                continue
            chosen = _constant_select(inst, defs, value)
            if chosen is not None:
                mapping[inst.result.id] = chosen
                count += 1
                continue
            if inst.op == "builtin" and inst.attrs.get("fn") == "fma" and _float_scalar(inst.type) in (F32, F16) \
                    and any(is_const(value(a), 0.0) for a in inst.args[:2]):
                mapping[inst.result.id] = value(inst.args[2])       # fma(t, 0, a), mix(a, a, t): a
                count += 1
                continue
            if inst.op != "binary" or inst.attrs.get("exact") or _float_scalar(inst.type) not in (F32, F16) \
                    or len(inst.args) != 2:
                continue
            x, y = (value(a) for a in inst.args)
            if x.type != inst.type or y.type != inst.type:
                continue
            fn = inst.attrs["fn"]
            if (fn == "sub" and x.id == y.id) or (fn == "mul" and (is_const(x, 0.0) or is_const(y, 0.0))) \
                    or (fn == "div" and is_const(x, 0.0)):
                inst.op, inst.args, inst.attrs = "const", [], {"value": _splat(inst.type, 0.0), "contracted": "fold"}
            elif fn == "div" and x.id == y.id:
                inst.op, inst.args, inst.attrs = "const", [], {"value": _splat(inst.type, 1.0), "contracted": "fold"}
            elif (fn in ("mul", "div") and is_const(y, 1.0)) or (fn in ("add", "sub") and is_const(y, 0.0)):
                mapping[inst.result.id] = x
            elif (fn == "mul" and is_const(x, 1.0)) or (fn == "add" and is_const(x, 0.0)):
                mapping[inst.result.id] = y
            elif fn == "sub" and is_const(x, 0.0):
                inst.op, inst.args, inst.attrs = "unary", [y], {"fn": "neg", "contracted": "fold"}
            elif fn in ("add", "sub") and _cancels(x, y, fn, defs, value) is not None:
                mapping[inst.result.id] = _cancels(x, y, fn, defs, value)
            elif fn == "sub" and _absorbed(x, y, defs, value) is not None:
                inst.op, inst.args = "unary", [_absorbed(x, y, defs, value)]
                inst.attrs = {"fn": "neg", "contracted": "fold"}
            elif fn == "add" and _regroups(x, y, defs, value) is not None:
                inst.args, inst.attrs = list(_regroups(x, y, defs, value)), dict(inst.attrs, contracted="fold")
            elif fn == "sub" and _difference_cancels(x, y, defs, value) is not None:
                op, a, c = _difference_cancels(x, y, defs, value)
                inst.args, inst.attrs = [a, c], dict(inst.attrs, fn=op, contracted="fold")
            else:
                continue
            count += 1
    _replace_uses(module, mapping)
    _remove_dead(module)
    return count


def _compares_itself(inst: Inst, value) -> bool:
    """x < x or x > x of a float scalar x: false whatever x holds (a NaN too)."""
    return inst.op == "binary" and inst.attrs["fn"] in ("lt", "gt") and len(inst.args) == 2 \
        and not hasattr(inst.type, "n") and _float_scalar(inst.args[0].type) in (F32, F16) \
        and value(inst.args[0]).id == value(inst.args[1]).id


def _constant_select(inst: Inst, defs, value):
    """select(f, t, c) with c a constant bool: t or f."""
    if not (inst.op == "select" or (inst.op == "builtin" and inst.attrs.get("fn") == "select")) or len(inst.args) != 3:
        return None
    c = defs.get(value(inst.args[2]).id)
    if c is None or c.op != "const" or not isinstance(c.attrs.get("value"), bool):
        return None
    return value(inst.args[1] if c.attrs["value"] else inst.args[0])


def _regroups(x: Value, y: Value, defs, value):
    """(a, b) for (a - c) + (c + b), (a - c) + (b + c) and the two the other way round."""
    def parts(v, op):
        d = defs.get(v.id)
        if d is None or d.op != "binary" or d.attrs["fn"] != op or d.attrs.get("exact") or d.type != v.type:
            return None
        return [value(w) for w in d.args]
    for left, right in ((x, y), (y, x)):
        sub, add = parts(left, "sub"), parts(right, "add")
        if sub and add and sub[1].id in (add[0].id, add[1].id):
            return sub[0], add[1] if add[0].id == sub[1].id else add[0]
    return None


def _difference_cancels(x: Value, y: Value, defs, value):
    """(a + c) - (c + b) is a - b, (a + c) - (c - b) is a + b (either add's operands either way round):
    ('sub' or 'add', a, b) (the SASS of randprog fit seed 89: (x4 + x3) - (x3 - 0.852) is HADD2 x4,
    0.8516; judge seed 100209: (x1 + p) - (p + r) is x1 - r)."""
    def parts(v, op):
        d = defs.get(v.id)
        if d is None or d.op != "binary" or d.attrs["fn"] != op or d.attrs.get("exact") or d.type != v.type:
            return None
        return [value(w) for w in d.args]
    left = parts(x, "add")
    if not left:
        return None
    for a, c in (left, left[::-1]):
        plus, minus = parts(y, "add"), parts(y, "sub")
        if plus and c.id in (plus[0].id, plus[1].id):
            return "sub", a, plus[1] if plus[0].id == c.id else plus[0]
        if minus and minus[0].id == c.id:
            return "add", a, minus[1]
    return None


def _cancels(x: Value, y: Value, fn: str, defs, value):
    """a for (a - y) + y, y + (a - y) and (a + y) - y (or (y + a) - y)."""
    def parts(v, op):
        d = defs.get(v.id)
        if d is None or d.op != "binary" or d.attrs["fn"] != op or d.attrs.get("exact") or d.type != v.type:
            return None
        return [value(a) for a in d.args]
    if fn == "add":
        for left, right in ((x, y), (y, x)):
            p = parts(left, "sub")
            if p and p[1].id == right.id:
                return p[0]
        return None
    p = parts(x, "add")
    if p and p[1].id == y.id:
        return p[0]
    if p and p[0].id == y.id:
        return p[1]
    return None


def sink_negations(module: Module) -> int:
    """-a * b is -(a * b), x - (-y) is x + y, x + (-y) is x - y, (-a) - y is -(a + y) (the negation
    used only there; the last keeps a product a open to fusing: randprog_fit.npz seeds 34 and 242, an
    unrolled f16 acc = acc * x - p whose first step is -p, 128 of 128 only so): the
    driver moves a negation out of a product and into the add that takes it, so the product is open
    to fusing and to `square` (randprog_fit.npz seed 76's SASS: x3 - ((0 - x3 * x2) * x2) is FFMA
    x3, x2 * x2, x3)."""
    def neg_of(v, defs, uses):
        d = defs.get(v.id)
        return d.args[0] if d is not None and d.op == "unary" and d.attrs.get("fn") == "neg" \
            and not d.attrs.get("exact") and uses[v.id] == 1 else None

    def rewrite(inst: Inst, out: list, uses, defs, b: Builder) -> bool:
        if inst.op != "binary" or inst.attrs.get("exact") or _float_scalar(inst.type) not in (F32, F16):
            return False
        fn, (x, y) = inst.attrs["fn"], inst.args
        if fn == "mul":
            for side in (0, 1):
                a = neg_of(inst.args[side], defs, uses)
                if a is not None and a.type == inst.type:
                    prod = _emitter(inst, b, out)("binary", [a, inst.args[1 - side]], fn="mul")
                    inst.op, inst.args, inst.attrs = "unary", [prod], {"fn": "neg", "contracted": "fold"}
                    return True
            return False
        if fn not in ("add", "sub"):
            return False
        ny = neg_of(y, defs, uses)
        if ny is not None and ny.type == inst.type:
            inst.args, inst.attrs = [x, ny], {"fn": "add" if fn == "sub" else "sub", "contracted": "fold"}
            return True
        nx = neg_of(x, defs, uses)
        if fn == "add" and nx is not None and nx.type == inst.type:
            inst.args, inst.attrs = [y, nx], {"fn": "sub", "contracted": "fold"}
            return True
        if fn == "sub" and nx is not None and nx.type == inst.type:     # (-a) - y is -(a + y), exactly
            total = _emitter(inst, b, out)("binary", [nx, y], fn="add")
            inst.op, inst.args, inst.attrs = "unary", [total], {"fn": "neg", "contracted": "fold"}
            return True
        return False
    return _rewrite_each(module, rewrite)


_FOLDABLE = ("binary", "unary", "builtin", "convert")
# the builtins folded, correctly rounded (sin(3) in f16 is 0.14111, the nearest, where MUFU.SIN.F16
# gives 0.1406: fit2 seed 500693's SASS stores 0.14111 and 1 / that, 7.0859); smoothstep and mix
# wait for their expansion, whose steps fold one by one in the type (500461's 0.259033, not 7/27's
# nearest 0.259277); not tanh, the unit's own instruction (fit2 seed 500509's SASS: tanh(c10 / c10) is
# MUFU.TANH.F16 of the constant 1), nor exp, exp2, log, log2 (fit seed 1001: exp(exp2(0.259)) is 3.3066, the
# device's sequence, not 3.3086, the nearest)
_FOLDED_BUILTINS = ("abs", "min", "max", "clamp", "floor", "ceil", "trunc", "fract", "fma", "sqrt", "inverseSqrt",
                    "sin", "cos", "tan")


def fold_constant_operations(module: Module) -> int:
    """A scalar float operation whose operands are all constants is the constant it computes when
    compiling: adds, subtracts and multiplies as the device's code (emu.numerics.nvidia), divisions
    and builtins correctly rounded (_FOLDED_BUILTINS), so that what reads it sees a constant (DECISIONS['fold-constants']): f16 sin((3 * t3) / t3) stores sin(3) for every
    invocation and (t6 * t6) + 0.25 of a constant t6 is no product to fuse (fit2 seeds 500693,
    501093); smoothstep(-1, 2, x4 - x4) is one constant that x2 * p + 0.259 fuses with (500461)."""
    from ..numerics import builtins as ieee, dtypes, nvidia, scalar
    count = 0
    for f in module.functions:
        defs = {i.result.id: i for i in f.walk() if i.result is not None}
        for inst in f.walk():
            if inst.op not in _FOLDABLE or not inst.args or _float_scalar(inst.type) not in (F32, F16) \
                    or hasattr(inst.type, "n") or any(_float_scalar(a.type) not in (F32, F16) for a in inst.args):
                continue
            ks = [_const_value(a, defs) for a in inst.args]
            if any(k is None for k in ks):
                continue
            ty, fn = scalar_of(inst.type).name, inst.attrs.get("fn")
            if inst.op == "builtin" and fn not in _FOLDED_BUILTINS:
                continue
            with np.errstate(all="ignore"):
                if inst.op == "binary" and fn != "div":
                    v = nvidia.binary(fn, ty, *ks)
                elif inst.op in ("binary", "unary"):
                    v = getattr(scalar, inst.op)(fn, ty, *ks)
                elif inst.op == "convert":
                    v = nvidia.convert(ks[0], scalar_of(inst.args[0].type).name, ty)
                else:
                    v = ieee.call(fn, ty, *(np.asarray([k], dtypes.NP[ty]) for k in ks))
            v = float(np.asarray(v).reshape(-1)[0])
            if not np.isfinite(v):
                continue
            inst.op, inst.args, inst.attrs = "const", [], {"value": v, "contracted": "fold-constants"}
            count += 1
    _remove_dead(module)
    return count


def reassociate_constants(module: Module) -> int:
    """k1 + (k2 - v) (either side) is (k1 + k2) - v, the constants added when compiling, the
    subtract kept for its other users (randprog_fit.npz seed 40's SASS: 0.7978846 + (0.125 - x3 * x2)
    is one FADD of -fl(x3 * x2) and 0.9228846, beside t5's own FADD of 0.125); f32 (x + k) + x is
    fma(x, 2, k) (seed 99's SASS: (x4 + 1.702) + x4 is FFMA x4, 2, 1.702), f16 two HADD2s (seed 949's
    SASS: (x2 + 2) + x2)."""
    def rewrite(inst: Inst, out: list, uses, defs, b: Builder) -> bool:
        if _like_terms(inst, out, uses, defs, b, constant=True):     # (x + k) + x is fma(x, 2, k)
            return True
        if _shift_of_shift(inst, out, uses, defs, b):
            return True
        if inst.op != "binary" or inst.attrs["fn"] != "add" or inst.attrs.get("exact") \
                or _float_scalar(inst.type) not in (F32, F16) or hasattr(inst.type, "n"):
            return False
        for k, v in inst.args, inst.args[::-1]:
            d, k1 = defs.get(v.id), _const_value(k, defs)
            if k1 is None or d is None or d.op != "binary" or d.attrs["fn"] != "sub" or d.attrs.get("exact") \
                    or d.type != inst.type or _const_value(d.args[0], defs) is None:
                continue
            ty = np.float16 if inst.type == F16 else np.float32
            c = _emitter(inst, b, out)("const", [], value=float(ty(k1) + ty(_const_value(d.args[0], defs))))
            inst.args, inst.attrs = [c, d.args[1]], {"fn": "sub", "contracted": "fold"}
            return True
        return False
    return _rewrite_each(module, rewrite) + _rewrite_each(module, _f16_constant_chain)


def _signed_constant_term(inst: Inst, defs):
    """(v, sign of v, k) where inst is v + k, k + v, v - k or k - v (k a constant, v not): inst = sign * v + k."""
    if inst is None or inst.op != "binary" or inst.attrs["fn"] not in ("add", "sub") or inst.attrs.get("exact"):
        return None
    (a, b), sub = inst.args, inst.attrs["fn"] == "sub"
    ka, kb = _const_value(a, defs), _const_value(b, defs)
    if (ka is None) == (kb is None):
        return None
    return (a, 1, -kb if sub else kb) if kb is not None else (b, -1 if sub else 1, ka)


def _f16_constant_chain(inst: Inst, out: list, uses, defs, b: Builder) -> bool:
    """f16 (v + k1) + k2 (any of + and -, either side) is v + (k1 + k2), the constants added in f16
    when compiling, the inner sum kept for its other users: randprog fit2 seed 500681's SASS (t8 = t7 +
    2.067 of t7 = t6 + 1.998, t7 stored, is HADD2 t6, 4.0625), 500041's (-1.423 + (0.25 + t3) is
    HADD2 t3, -1.1729)."""
    if inst.type != F16:
        return False
    outer = _signed_constant_term(inst, defs)
    inner = _signed_constant_term(defs.get(outer[0].id), defs) if outer is not None else None
    if inner is None or inner[0].type != F16:
        return False
    v, sv, k1 = inner
    _, so, k2 = outer
    k = float(np.float16(np.float16(so * k1) + np.float16(k2)))
    c = _emitter(inst, b, out)("const", [], value=k)
    inst.args = [v, c] if sv * so > 0 else [c, v]
    inst.attrs = {"fn": "add" if sv * so > 0 else "sub", "contracted": "fold"}
    return True


def join_shifts(module: Module) -> int:
    """The constants of an f32 sum added together when compiling, their total added last
    (DECISIONS['shift']), again on what factoring made; here only through sums used once: the
    constants that the driver folds later no longer join one read elsewhere (fit seed 108: 768 - t6
    of t6 = s - fract(-1.222), t6 stored, stays FADD 768 after s - 0.778)."""
    return _rewrite_each(module, lambda inst, out, uses, defs, b: _shift_of_shift(inst, out, uses, defs, b, True))


def _linear_terms(v: Value, sign: int, defs, uses, top: bool = False) -> list:
    """v as signed terms through adds, subtracts and negations of its type that are used only once
    (``top``: v itself whatever its uses)."""
    d = defs.get(v.id)
    if d is None or d.type != v.type or d.attrs.get("exact") or (not top and uses[v.id] != 1):
        return [(sign, v)]
    if d.op == "binary" and d.attrs["fn"] in ("add", "sub"):
        return _linear_terms(d.args[0], sign, defs, uses) + \
            _linear_terms(d.args[1], sign if d.attrs["fn"] == "add" else -sign, defs, uses)
    if d.op == "unary" and d.attrs.get("fn") == "neg":
        return _linear_terms(d.args[0], -sign, defs, uses)
    return [(sign, v)]


def _shift_of_shift(inst: Inst, out: list, uses, defs, b: Builder, used_once: bool = False) -> bool:
    """f32 (x + k1) + k2 (any signs: k2 - (x - k1), (k1 - x) - k2, ...) is x + (k1 + k2), whatever
    else reads x + k1 (fit2 seed 500064's SASS: 0.3 + t6 of t6 = -0.943 + x4, t6 read three times
    more, is FADD x4, -0.643); a sum of two values and two or more constants, through adds and
    subtracts used only there, is (x + y) + k, the constants' total added last ((2.831 - t5) -
    (2.141 + s) is FFMA .., -t5 then FADD 0.69 in fit2 seed 500020's SASS)."""
    if inst.op != "binary" or inst.type != F32:
        return False
    terms = _sum_terms(inst, defs, uses if used_once else None)
    if terms is None:
        return False
    ks = [_const_value(v, defs) for _, v in terms]
    if len(terms) != 3 or sum(k is None for k in ks) != 1:
        terms = _linear_terms(inst.result, 1, defs, uses, top=True)
        ks = [_const_value(v, defs) for _, v in terms]
        if sum(k is None for k in ks) != 2 or sum(k is not None for k in ks) < 2:
            return False
    k = np.float32(0.0)
    for (s, _), c in zip(terms, ks):
        if c is not None:
            k = np.float32(k + np.float32(s * c))
    op = _emitter(inst, b, out)
    rest = [t for t, c in zip(terms, ks) if c is None]
    if len(rest) == 2:                          # x + y first, then the constant
        (s0, x), (s1, y) = rest
        if s0 < 0 and s1 < 0:
            rest = [(-1, op("binary", [x, y], fn="add"))]
        elif s0 > 0:
            rest = [(1, op("binary", [x, y], fn="add" if s1 > 0 else "sub"))]
        else:
            rest = [(1, op("binary", [y, x], fn="sub"))]
    s, x = rest[0]
    c = op("const", [], value=float(k))
    inst.op, inst.args = "binary", ([x, c] if s > 0 else [c, x])
    inst.attrs = {"fn": "add" if s > 0 else "sub", "contracted": "shift"}
    return True


# -- driver: value ranges and constants -------------------------------------------------------------

_UNBOUNDED = (-np.inf, np.inf)
# only what the SASS shows the driver knowing: smoothstep's .SAT t (fit2 seeds 501132, 500068, 500792);
# not RSQ's sign (fit seed 192: clamp(inverseSqrt(..), -2, 0) * y stays, -0 for a negative y)
_RANGE_OF_BUILTIN = {"smoothstep": (0.0, 1.0)}
# builtins of constants the driver folds (fit2 seed 500496: sqrt(0.25), log(0.25 + 1e-5)); not tanh
# (fit2 seed 501156: t4 * tanh(t5 - t5) keeps its product, +0 where folding gives -0)
_FOLD_BUILTIN = {"sqrt": np.sqrt, "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2,
                 "abs": np.abs, "floor": np.floor}


def _interval(inst: Inst, rng) -> tuple:
    """(lo, hi) of an f32 scalar instruction's value from its operands' ranges (rng)."""
    fn = inst.attrs.get("fn")
    r = [rng(a) for a in inst.args]
    with np.errstate(all="ignore"):
        if inst.op == "const":
            return r and r[0] or _UNBOUNDED
        if inst.op == "builtin" and fn == "clamp" and len(r) == 3:
            return max(r[0][0], r[1][0]), min(max(r[0][1], r[1][0]), r[2][1])
        if inst.op == "builtin" and fn in ("min", "max") and len(r) == 2:
            pick = min if fn == "min" else max
            return pick(r[0][0], r[1][0]), pick(r[0][1], r[1][1])
        if inst.op == "builtin" and fn in _RANGE_OF_BUILTIN:
            return _RANGE_OF_BUILTIN[fn]
        if inst.op == "unary" and fn == "neg":
            return -r[0][1], -r[0][0]
        if inst.op == "binary" and fn in ("add", "sub"):
            lo, hi = (r[0][0] + r[1][0], r[0][1] + r[1][1]) if fn == "add" else \
                (r[0][0] - r[1][1], r[0][1] - r[1][0])
        elif (inst.op == "binary" and fn == "mul") or (inst.op == "builtin" and fn == "fma"):
            # of bounded operands only: not x * x of an unbounded x (fit2 seed 500804: clamp((0.798 *
            # x3) * x3, -1, 0) stays a clamp in the driver's SASS)
            if not all(np.isfinite(e) for v in r for e in v):
                return _UNBOUNDED
            ends = [p * q for p in r[0] for q in r[1]]
            lo, hi = min(ends), max(ends)
            if fn == "fma":
                lo, hi = lo + r[2][0], hi + r[2][1]
        else:
            return _UNBOUNDED
    return (lo, hi) if not (np.isnan(lo) or np.isnan(hi)) else _UNBOUNDED


def _fold_constant(inst: Inst, defs):
    """The f32 value of an arithmetic instruction or builtin whose operands are all constants,
    as the driver computes it when compiling (IEEE f32 arithmetic, builtins rounded from double);
    else None."""
    ks = [_const_value(a, defs) for a in inst.args]
    if not ks or any(k is None for k in ks) or inst.type != F32 or any(a.type != F32 for a in inst.args):
        return None
    fn = inst.attrs.get("fn")
    x = [np.float32(k) for k in ks]
    with np.errstate(all="ignore"):
        if inst.op == "binary" and fn in ("add", "sub", "mul", "div"):
            v = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[fn](x[0], x[1])
        elif inst.op == "unary" and fn == "neg":
            v = -x[0]
        elif inst.op == "builtin" and fn == "fma":
            v = np.float64(x[0]) * np.float64(x[1]) + np.float64(x[2])   # exact product, one rounding
        elif inst.op == "builtin" and fn in ("min", "max"):
            v = (np.minimum if fn == "min" else np.maximum)(x[0], x[1])
        elif inst.op == "builtin" and fn == "clamp":
            v = np.minimum(np.maximum(x[0], x[1]), x[2])
        elif inst.op == "builtin" and fn in _FOLD_BUILTIN and len(x) == 1:
            v = _FOLD_BUILTIN[fn](np.float64(x[0]))
        else:
            return None
    v = np.float32(v)
    return float(v) if np.isfinite(v) else None


def fold_ranges(module: Module) -> int:
    """What the driver knows of f32 values when compiling (DECISIONS['range']): each scalar's range
    (constants; clamp, min, max; smoothstep in [0, 1]; sums and products of bounded ranges); min,
    max or clamp whose answer the ranges decide is that operand, a comparison they decide is a constant (a select on it then its operand: fold), and arithmetic or
    a builtin of constants is the constant."""
    count, ranges = 0, {}
    for f in module.functions:
        defs = {i.result.id: i for i in f.walk() if i.result is not None}
        mapping = {}

        def value(v):
            while v.id in mapping:
                v = mapping[v.id]
            return v

        def rng(v):
            k = _const_value(v, defs)
            return (float(k), float(k)) if k is not None else ranges.get(v.id, _UNBOUNDED)
        for inst in f.walk():
            if inst.result is None:
                continue
            if any(a.id in mapping for a in inst.args):
                inst.args = [value(a) for a in inst.args]
            if inst.op == "binary" and inst.attrs.get("fn") in ("lt", "le", "gt", "ge") and len(inst.args) == 2 \
                    and inst.type == BOOL and all(a.type == F32 for a in inst.args):
                (l0, h0), (l1, h1) = (rng(a) for a in inst.args)
                fn = inst.attrs["fn"]
                if fn in ("gt", "ge"):
                    (l0, h0), (l1, h1) = (l1, h1), (l0, h0)
                strict = fn in ("lt", "gt")
                known = True if (h0 < l1 if strict else h0 <= l1) else False if (l0 >= h1 if strict else l0 > h1) \
                    else None
                if known is not None:
                    inst.op, inst.args, inst.attrs = "const", [], {"value": known, "contracted": "range"}
                    count += 1
                continue
            if inst.type != F32:
                continue
            k = _fold_constant(inst, defs) if inst.op != "const" else None
            if k is not None:
                inst.op, inst.args, inst.attrs = "const", [], {"value": k, "contracted": "range"}
                count += 1
                continue
            fn = inst.attrs.get("fn")
            if inst.op == "builtin" and fn in ("min", "max", "clamp") and not inst.attrs.get("exact"):
                r = [rng(a) for a in inst.args]
                pick = None
                if fn == "min":
                    pick = 0 if r[0][1] <= r[1][0] else 1 if r[1][1] <= r[0][0] else None
                elif fn == "max":
                    pick = 0 if r[0][0] >= r[1][1] else 1 if r[1][0] >= r[0][1] else None
                elif len(r) == 3:
                    pick = 1 if r[0][1] <= r[1][0] else 2 if r[0][0] >= r[2][1] else \
                        0 if r[0][0] >= r[1][1] and r[0][1] <= r[2][0] else None
                if pick is not None:
                    mapping[inst.result.id] = inst.args[pick]
                    ranges[inst.result.id] = rng(inst.args[pick])
                    count += 1
                    continue
            ranges[inst.result.id] = _interval(inst, rng)
        _replace_uses(module, mapping)
    _remove_dead(module)
    return count


def _negated_difference(inst: Inst, defs, uses) -> bool:
    """-(a - b) is b - a, the subtract used only there: its operands swap sides, so the product
    that fma formation takes first (the left) is b (randprog_fit.npz seed 216's SASS: -((t11 * (t11 -
    t3)) - (c10 * x1)) is FFMA x1 * c10 - fl(t11 * (t11 - t3)))."""
    if inst.op != "unary" or inst.attrs.get("fn") != "neg" or inst.attrs.get("exact") \
            or _float_scalar(inst.type) not in (F32, F16):
        return False
    d = defs.get(inst.args[0].id)
    if d is None or d.op != "binary" or d.attrs["fn"] != "sub" or d.attrs.get("exact") or d.type != inst.type \
            or uses[d.result.id] != 1:
        return False
    inst.op, inst.args, inst.attrs = "binary", [d.args[1], d.args[0]], {"fn": "sub", "contracted": "fold"}
    return True


def _absorbed(x: Value, y: Value, defs, value):
    """b for x - (x + b), x - (b + x) and (x - b) - x: the driver's x - (x + b) is -b
    (randprog_fit.npz seed 216's SASS: clamp(c5, -2, 1) - (c5 - (c5 + x2)) is one FADD of clamp(c5)
    and x2), and so is (x - b) - x: mix(x4, x4 - x2, t)'s (x4 - x2) - x4 is -x2 (f16 seed 29's SASS:
    HFMA2 -x2, fract(x2), x4)."""
    d = defs.get(y.id)
    if d is not None and d.op == "binary" and d.attrs["fn"] == "add" and not d.attrs.get("exact") \
            and d.type == y.type:
        a, b = (value(v) for v in d.args)
        b = b if a.id == x.id else a if b.id == x.id else None
    else:
        d = defs.get(x.id)
        if d is None or d.op != "binary" or d.attrs["fn"] != "sub" or d.attrs.get("exact") or d.type != x.type \
                or value(d.args[0]).id != y.id:
            return None
        b = value(d.args[1])
    m = defs.get(b.id) if b is not None else None
    if m is not None and m.op == "binary" and m.attrs["fn"] in ("mul", "div") and not m.attrs.get("exact"):
        return None                  # x + p is an fma first (judge seed 100180's SASS: FFMA, then FADD)
    return b


def _splat(t, v: float):
    return [v] * t.n if hasattr(t, "n") else v


# -- driver: sums as lists of terms ----------------------------------------------------------------

def _signed_terms(v: Value, sign: int, defs, single_use=None) -> list:
    """v as (sign, value) terms one level down: an add or subtract of v's type gives its two
    operands (signed), a negation its operand; anything else is one term. With ``single_use``
    (a use count), only a node used once is opened."""
    d = defs.get(v.id)
    if d is None or d.type != v.type or d.attrs.get("exact") or (single_use is not None and single_use[v.id] != 1):
        return [(sign, v)]
    if d.op == "binary" and d.attrs["fn"] in ("add", "sub"):
        return [_negated(sign, d.args[0], defs), _negated(sign if d.attrs["fn"] == "add" else -sign, d.args[1], defs)]
    return [_negated(sign, v, defs)]


def _negated(sign: int, v: Value, defs) -> tuple:
    """(sign, v), or (-sign, a) where v is -a."""
    d = defs.get(v.id)
    if d is not None and d.op == "unary" and d.attrs.get("fn") == "neg" and not d.attrs.get("exact") \
            and d.type == v.type:
        return -sign, d.args[0]
    return sign, v


def _sum_terms(inst: Inst, defs, single_use=None):
    """An f32/f16 scalar add or subtract's operands as signed terms (_signed_terms), or None."""
    if inst.op != "binary" or inst.attrs["fn"] not in ("add", "sub") or inst.attrs.get("exact") \
            or _float_scalar(inst.type) not in (F32, F16) or hasattr(inst.type, "n"):
        return None
    x, y = inst.args
    if x.type != inst.type or y.type != inst.type:
        return None
    return _signed_terms(x, 1, defs, single_use) + _signed_terms(y, -1 if inst.attrs["fn"] == "sub" else 1,
                                                                   defs, single_use)


def _is_product(v: Value, defs) -> bool:
    """v is a multiply or division, or a smoothstep (the driver's code of it ends in a product)."""
    d = defs.get(v.id)
    return d is not None and ((d.op == "binary" and d.attrs["fn"] in ("mul", "div"))
                              or (d.op == "builtin" and d.attrs.get("fn") == "smoothstep"))


def _cancel_pair(terms: list):
    """terms without the first pair of one value added and subtracted, or None."""
    for i, (s, v) in enumerate(terms):
        for j in range(i + 1, len(terms)):
            if terms[j][1].id == v.id and terms[j][0] == -s:
                return [t for k, t in enumerate(terms) if k not in (i, j)]
    return None


def _set_sum(inst: Inst, terms: list, op, decision: str):
    """Make inst the sum of one or two signed terms (new instructions through op); returns the
    value that replaces inst where it is one term taken as it is, else None."""
    t = inst.type
    if not terms:
        inst.op, inst.args, inst.attrs = "const", [], {"value": 0.0, "contracted": decision}
        return None
    if len(terms) == 1:
        s, v = terms[0]
        if s > 0:
            return v
        inst.op, inst.args, inst.attrs = "unary", [v], {"fn": "neg", "contracted": decision}
        return None
    (s0, v0), (s1, v1) = terms
    if s0 > 0 or s1 > 0:                        # u + w, u - w (w - u where only w is added)
        args, fn = ([v0, v1], "add" if s1 > 0 else "sub") if s0 > 0 else ([v1, v0], "sub")
        inst.op, inst.args, inst.attrs = "binary", args, {"fn": fn, "contracted": decision}
        return None
    total = op("binary", [v0, v1], fn="add")    # -u - w is -(u + w)
    inst.op, inst.args, inst.attrs = "unary", [total], {"fn": "neg", "contracted": decision}
    return None


def _like_terms(inst: Inst, out: list, uses, defs, b: Builder, constant: bool) -> bool:
    """x + (x + y) (any order and signs: (x - y) + x, x - (y - x), ...; the inner add used only there)
    is fma(x, 2, y) with the signs the terms carry (DECISIONS['like-terms']); with ``constant``, only
    where y is a constant. Not where x or y is a product: x + p is an fma first."""
    terms = _sum_terms(inst, defs, uses)
    if terms is None or len(terms) != 3 or inst.type != F32 or any(_is_product(v, defs) for _, v in terms):
        return False                            # f16 h + (h - 0.5) stays (judge seed 100543's SASS)
    opened_left = len(_signed_terms(inst.args[0], 1, defs, uses)) == 2
    for i, j in ((0, 1), (0, 2), (1, 2)):
        (si, vi), (sj, vj) = terms[i], terms[j]
        if vi.id != vj.id or si != sj or (i, j) == ((0, 1) if opened_left else (1, 2)):
            continue                            # (x + x) + y stays: x + x is one exact add
        sk, w = terms[3 - i - j]
        if constant and _const_value(w, defs) is None:
            continue
        op = _emitter(inst, b, out)
        two = op("const", [], value=2.0 * si)
        c = w if sk > 0 else op("unary", [w], fn="neg")
        inst.op, inst.args, inst.attrs = "builtin", [vi, two, c], {"fn": "fma", "contracted": "like-terms"}
        return True
    return False


def cancel_terms(module: Module) -> int:
    """An add or subtract whose operands, opened one level (adds, subtracts, negations used only
    there), hold one value added and subtracted, is the sum of the other terms: (t - a) - (t - b) is b - a,
    (p - y) - (-y + q) is p - q (DECISIONS['cancel']). Runs before value numbering: the values
    must be one already in the shader (a variable read twice), not two equal expressions."""
    def rewrite(inst: Inst, out: list, uses, defs, b: Builder):
        terms = _sum_terms(inst, defs, uses)
        rest = _cancel_pair(terms) if terms is not None and len(terms) > 2 else None
        if rest is None or len(rest) > 2:
            return False
        return _set_sum(inst, rest, _emitter(inst, b, out), "cancel") or True
    return _rewrite_each(module, rewrite)

