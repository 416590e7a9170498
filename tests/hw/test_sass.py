"""emu/hw/sass.py: the driver's SASS and emu's IR as terms of rounding points, on SASS we write
ourselves in nvdisasm's form (3 f32 inputs and 2 outputs per invocation, workgroups of 64)."""
import pytest

from emu.hw import sass

HEAD = """
        /*0000*/                   S2R R0, SR_CTAID.X ;
        /*0010*/                   ULDC.64 UR4, c[0x0][0x30] ;
        /*0020*/                   S2R R3, SR_TID.X ;
        /*0030*/                   LEA R0, R0, R3, 0x6 ;
        /*0040*/                   IMAD R1, R0, 0xc, RZ ;
        /*0050*/                   IADD3 R2, R1, 0x4, RZ ;
        /*0060*/                   VIADD R3, R1, 0x8 ;
        /*0070*/                   ISETP.GE.U32.AND P0, PT, R1, c[0x0][0x38], PT ;
        /*0080*/                   LDG.E.CONSTANT R4, [R1.U32+UR4], !P0 ;
        /*0090*/                   LDG.E.CONSTANT R5, [R2.U32+UR4] ;
        /*00a0*/                   LDG.E.CONSTANT R6, [R3.U32+UR4] ;
        /*00b0*/                   IMAD.SHL.U32 R10, R0, 0x8, RZ ;
"""
TAIL = """
        /*0f00*/                   ULDC.64 UR4, c[0x0][0x40] ;
        /*0f10*/                   STG.E.STRONG.SM [R10.U32+UR4], R8 ;
        /*0f20*/                   STG.E.STRONG.SM [R10.U32+UR4+0x4], R9 ;
        /*0f30*/                   EXIT ;
        /*0f40*/                   BRA 0xf40;
"""


def run(body: str):
    t = sass.Terms()
    return t, sass.sass_outputs(HEAD + body + TAIL, t)


def ins(t):
    return t.input(0), t.input(1), t.input(2)


def test_parse_reads_predicates_modifiers_and_operands():
    code = sass.parse("        /*01a0*/               @!P0 FFMA.FTZ.SAT R5, -R3.reuse, |R4|, 0.5 ;")
    assert len(code) == 1
    i = code[0]
    assert (i.addr, i.pred, i.opcode, i.mods, i.operands) == (0x1a0, "!P0", "FFMA", ("FTZ", "SAT"),
                                                              ["R5", "-R3.reuse", "|R4|", "0.5"])


def test_fused_and_rounded_products_and_the_store_slots():
    t, out = run("""
        /*0100*/                   FMUL.FTZ R7, R4, R5 ;
        /*0110*/                   FFMA.FTZ R8, R4, R5, R6 ;
        /*0120*/                   FADD.FTZ R9, R7, -R6 ;
""")
    a, b, c = ins(t)
    assert out[0] == t.mk("fma", a, b, c)
    assert out[1] == t.mk("add", t.mk("mul", a, b), t.mk("neg", c))
    assert t.show(out[0]) == "fma(in0, in1, in2)" and t.show(out[1]) == "((in0 * in1) + -in2)"


def test_negated_factors_are_one_form():
    # c - a * b as FFMA -a, b, c and as -(a * b - c): the same term
    t, out = run("""
        /*0100*/                   FFMA.FTZ R8, -R4, R5, R6 ;
        /*0110*/                   FFMA.FTZ R9, R4, R5, -R6 ;
""")
    assert out[0] == t.mk("neg", out[1])
    a, b, c = ins(t)
    assert out[0] == t.mk("fma", t.mk("neg", a), b, c)


def test_predicated_writes_and_fsel_are_selects_on_the_comparison():
    t, out = run("""
        /*0100*/                   FSETP.GEU.FTZ.AND P1, PT, R4, R5, PT ;
        /*0110*/               @P1 FMUL.FTZ R8, R4, R4 ;
        /*0120*/              @!P1 FADD.FTZ R8, R5, R6 ;
        /*0130*/               @P1 FMUL.FTZ R8, R8, R6 ;
        /*0140*/                   FSEL R9, R4, R5, !P1 ;
""")
    a, b, c = ins(t)
    lt = t.mk("cmp", "lt", a, b)          # GEU is not(a < b)
    # under @P1, R8 is the value @P1 wrote, not the select of both sides
    assert out[0] == t.mk("sel", lt, t.mk("add", b, c), t.mk("mul", t.mk("mul", a, a), c))
    assert out[1] == t.mk("sel", lt, a, b)


def test_forward_branch_joins_as_a_select():
    t, out = run("""
        /*0100*/                   FSETP.GE.FTZ.AND P2, PT, |R4|, 0.5, PT ;
        /*0110*/                   FMUL.FTZ R9, R5, R6 ;
        /*0120*/              @!P2 BRA 0x150 ;
        /*0130*/                   MUFU.RCP R8, R4 ;
        /*0140*/                   BRA 0x160 ;
        /*0150*/                   FADD.FTZ R8, R4, 1 ;
        /*0160*/                   BSYNC B0 ;
""")
    a, b, c = ins(t)
    ge = t.mk("cmp", "ge", t.mk("abs", a), t.const(0.5))
    assert out[0] == t.mk("sel", ge, t.mk("rcp", a), t.mk("add", a, t.const(1.0)))
    assert out[1] == t.mk("mul", b, c)


def test_a_backward_branch_is_unreadable():
    with pytest.raises(sass.Unreadable, match="backward branch"):
        run("""
        /*0100*/                   FADD.FTZ R8, R4, R5 ;
        /*0110*/                   BRA 0x100 ;
""")


def test_packed_halves_conversions_and_constants():
    # f16(x0) * f16(x1) + f16(x2) as one HFMA2 on the low halves, widened; a constant loaded by
    # HFMA2.MMA -RZ, RZ, hi, lo is those two halves' bits (0x3EAAAAAB: 1/3 in f32)
    t, out = run("""
        /*0100*/                   F2FP.F16.F32.PACK_AB R7, R5, R4 ;
        /*0110*/                   F2FP.F16.F32.PACK_AB R11, RZ, R6 ;
        /*0120*/                   HFMA2 R12, R7.H0_H0, R7.H1_H1, R11.H0_H0 ;
        /*0130*/                   HADD2.F32 R8, -RZ, R12.H0_H0 ;
        /*0140*/                   HFMA2.MMA R13, -RZ, RZ, 1.666015625, -0.052093505859375 ;
        /*0150*/                   FMUL.FTZ R9, R4, R13 ;
""")
    a, b, c = ins(t)
    h = [t.mk("h", x) for x in (a, b, c)]
    assert out[0] == t.mk("w", t.mk("hfma", h[0], h[1], h[2]))
    assert out[1] == t.mk("mul", a, t.const(1 / 3))
    assert t.value(t.const(1 / 3)) == 0.3333333432674408


def test_exact_identities_are_one_term():
    t = sass.Terms()
    a, b, c = ins(t)
    w = lambda x: t.mk("w", t.mk("h", x))           # noqa: E731
    # f16(f32(a) * f32(b)) is the f16 product (no double rounding); f32 * f32 of f16s is exact
    assert t.mk("h", t.mk("mul", w(a), w(b))) == t.mk("hmul", t.mk("h", a), t.mk("h", b))
    assert t.mk("fma", w(a), w(b), c) == t.mk("add", t.mk("mul", w(a), w(b)), c)
    # a power-of-two factor is a scaling wherever it sits; x + x is x * 2
    assert t.mk("mul", t.mk("mul", a, t.const(2.0)), b) == t.mk("mul", t.mk("mul", a, b), t.const(2.0))
    assert t.mk("add", a, a) == t.mk("mul", a, t.const(2.0))
    # min(max(x, 0), 1) is .SAT; a clamp its argument's range already meets folds away
    assert t.mk("min", t.mk("max", a, t.const(0.0)), t.const(1.0)) == t.mk("sat", a)
    assert t.mk("min", t.const(8.0), t.mk("sat", a)) == t.mk("sat", a)
    assert t.mk("rcp", t.const(4.0)) == t.const(0.25)
    # but a product rounded first is not an fma
    assert t.mk("fma", a, b, c) != t.mk("add", t.mk("mul", a, b), c)


def test_first_difference_and_mechanism():
    t = sass.Terms()
    a, b, c = ins(t)
    p, q = t.mk("mul", a, b), t.mk("mul", b, c)
    emu = t.mk("add", t.mk("fma", a, b, q), c)
    drv = t.mk("add", t.mk("add", p, q), c)
    where, e, d = sass.first_difference(t, emu, drv)
    assert (e, d) == (t.mk("fma", a, b, q), t.mk("add", p, q))
    assert sass.mechanism(t, e, d) == "fma: emu fuses, the driver rounds the product"
    assert sass.mechanism(t, d, e) == "fma: the driver fuses, emu rounds the product"
    # of two products, the driver fused the other one
    e2, d2 = t.mk("fma", a, b, q), t.mk("fma", b, c, p)
    assert sass.mechanism(t, e2, d2) == "fma: the other product fused"
    # a builtin emu keeps whole matches the driver's sequence that reads its argument
    tanh = t.mk("call", "tanh", t.mk("neg", p))
    seq = t.mk("fma", p, t.mk("mul", p, t.const(0.13)), p)
    assert sass.first_difference(t, t.mk("add", tanh, c), t.mk("add", seq, c)) is None


WGSL = """
@group(0) @binding(0) var<storage, read> inp: array<f32>;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  let x1: f32 = inp[i * 3u + 0u];
  let x2: f32 = inp[i * 3u + 1u];
  let x3: f32 = inp[i * 3u + 2u];
  var acc: f32 = 0.0;
  for (var k: u32 = 0u; k < 2u; k = k + 1u) {
    acc = acc + inp[i * 3u + k] * x3;
  }
  o[i * 2u + 0u] = acc;
  o[i * 2u + 1u] = select(x1 / x2, x2, x1 < x2);
}
"""


def test_ir_outputs_unroll_loops_and_lower_division():
    from emu.api import compile_wgsl
    m, _ = compile_wgsl(WGSL, "t.wgsl")
    t = sass.Terms()
    out = sass.ir_outputs(m, t)
    a, b, c = ins(t)
    # uncompiled IR: acc = 0 + x1 * x3, then acc + x2 * x3, each rounded
    assert out[0] == t.mk("add", t.mk("mul", a, c), t.mk("mul", b, c))
    assert out[1] == t.mk("sel", t.mk("cmp", "lt", a, b), b, t.mk("mul", a, t.mk("rcp", b)))
