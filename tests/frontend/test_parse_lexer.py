"""Lexer tests: tokens, literals, comments, positions, template list discovery."""

from fractions import Fraction

import pytest

from emu.frontend.wgsl.lexer import (
    EOF, FLOAT, IDENT, INT, KEYWORD, SYM, TEMPLATE_END, TEMPLATE_START,
    float_literal_value, tokenize,
)


def kinds(src):
    return [(t.kind, t.text) for t in tokenize(src)[:-1]]


def texts(src):
    """Token texts, template brackets shown as « and »."""
    out = []
    for t in tokenize(src)[:-1]:
        out.append({TEMPLATE_START: "«", TEMPLATE_END: "»"}.get(t.kind, t.text))
    return " ".join(out)


def test_operators_longest_match():
    src = "-> @ && || <<= >>= ++ -- << >> <= >= == != += -= *= /= %= &= |= ^= _ ~ ! = . : ;"
    assert [t.text for t in tokenize(src)[:-1]] == src.split()
    assert all(t.kind == SYM for t in tokenize(src)[:-1])


def test_keywords_identifiers_and_reserved_words():
    toks = tokenize("fn loop var vec4 f32 _x __y type A")
    assert [(t.kind, t.text) for t in toks[:-1]] == [
        (KEYWORD, "fn"), (KEYWORD, "loop"), (KEYWORD, "var"), (IDENT, "vec4"), (IDENT, "f32"),
        (IDENT, "_x"), (IDENT, "__y"), (IDENT, "type"), (IDENT, "A")]
    assert [t.reserved for t in toks[:-1]] == [False] * 6 + [True, True, False]
    assert toks[-1].kind == EOF


@pytest.mark.parametrize("src, kind, value, suffix", [
    ("0", INT, 0, ""),
    ("0u", INT, 0, "u"),
    ("123i", INT, 123, "i"),
    ("0x7FFFFFFF", INT, 0x7FFFFFFF, ""),
    ("0XABCu", INT, 0xABC, "u"),
    ("0x1f", INT, 0x1F, ""),
    ("4294967296", INT, 4294967296, ""),
    ("1.0", FLOAT, None, ""),
    ("1.", FLOAT, None, ""),
    (".25", FLOAT, None, ""),
    ("1e5", FLOAT, None, ""),
    ("1E-5f", FLOAT, None, "f"),
    ("2.5e+3h", FLOAT, None, "h"),
    ("0f", FLOAT, None, "f"),
    ("12h", FLOAT, None, "h"),
    ("0x1p4", FLOAT, None, ""),
    ("0x1.8p-1f", FLOAT, None, "f"),
    ("0x.8", FLOAT, None, ""),
    ("0xA.", FLOAT, None, ""),
    ("0x1Ap1h", FLOAT, None, "h"),
])
def test_numeric_literals(src, kind, value, suffix):
    (tok,) = tokenize(src)[:-1]
    assert (tok.kind, tok.text, tok.value, tok.suffix) == (kind, src, value, suffix)


@pytest.mark.parametrize("text, value", [
    ("1.0", Fraction(1)),
    ("1.", Fraction(1)),
    (".25", Fraction(1, 4)),
    ("1e5", Fraction(100000)),
    ("1E-5f", Fraction(1, 100000)),
    ("2.5e+3h", Fraction(2500)),
    ("0f", Fraction(0)),
    ("12h", Fraction(12)),
    ("0x1p4", Fraction(16)),
    ("0x1.8p-1f", Fraction(3, 4)),
    ("0x.8", Fraction(1, 2)),
    ("0xA.", Fraction(10)),
    ("0x1Ap1h", Fraction(52)),
    ("0.1", Fraction(1, 10)),
])
def test_float_literal_values_are_exact(text, value):
    assert float_literal_value(text) == value


def test_huge_exponent_is_refused_not_computed():
    with pytest.raises(ValueError):
        float_literal_value("1e999999999")


def test_comments_and_positions():
    src = "a /* x /* nested\n */ y */ b // c\n\tc /**/d"
    toks = tokenize(src, "p.wgsl")
    assert [(t.text, t.line, t.col, t.gap) for t in toks[:-1]] == [
        ("a", 1, 1, False), ("b", 2, 10, True), ("c", 3, 2, True), ("d", 3, 8, True)]
    assert toks[1].span.file == "p.wgsl"
    assert (toks[-1].line, toks[-1].col) == (3, 9)


def test_line_comment_at_end_of_file_and_other_line_breaks():
    toks = tokenize("x // trailing")
    assert [t.text for t in toks[:-1]] == ["x"]
    toks = tokenize("a\r\nb\rc\u2028d\u0085e\u000bf")
    assert [(t.text, t.line, t.col) for t in toks[:-1]] == [
        ("a", 1, 1), ("b", 2, 1), ("c", 3, 1), ("d", 4, 1), ("e", 5, 1), ("f", 6, 1)]


def test_unicode_identifiers():
    assert kinds("Δx 变量 café_2 ℮") == [
        (IDENT, "Δx"), (IDENT, "变量"), (IDENT, "café_2"), (IDENT, "℮")]
    # a combining mark (not matched by \w) continues an identifier
    assert kinds("cafe\u0301 = 1") == [(IDENT, "cafe\u0301"), (SYM, "="), (INT, "1")]


# ---------------------------------------------------------------------------------------------
# Template list discovery (spec section "Template Lists", with its own examples)


@pytest.mark.parametrize("src, expected", [
    ("array<vec4<f32>>", "array « vec4 « f32 » »"),
    ("a < b", "a < b"),
    ("ptr<function, i32>", "ptr « function , i32 »"),
    ("var<storage,read_write>", "var « storage , read_write »"),
    ("A ( B < C, D > ( E ) )", "A ( B « C , D » ( E ) )"),
    ("select(a<b, c>d, e)", "select ( a « b , c » d , e )"),
    ("a<b || c>d", "a < b || c > d"),
    ("a<b && c>d", "a < b && c > d"),
    ("array<i32,select(2,3,a>b)>", "array « i32 , select ( 2 , 3 , a > b ) »"),
    ("a[b<d]>()", "a [ b < d ] > ( )"),
    ("A<B<<C>", "A « B << C »"),
    ("A<B<=C>", "A « B <= C »"),
    ("A<(B>=C)>", "A « ( B >= C ) »"),
    ("A<(B!=C)>", "A « ( B != C ) »"),
    ("A<(B==C)>", "A « ( B == C ) »"),
    ("x = a<b>=c;", "x = a « b » = c ;"),
    ("a<b>>=c", "a « b » >= c"),
    ("x <<= 1; y >>= 2;", "x <<= 1 ; y >>= 2 ;"),
    ("vec2<i32>(1) >> 2", "vec2 « i32 » ( 1 ) >> 2"),
    ("a<b; c>d", "a < b ; c > d"),
    ("a<b{c>d", "a < b { c > d"),
    ("a<b: c>d", "a < b : c > d"),
    ("a < b = c > d", "a < b = c > d"),
    ("x /*<*/ < /*>*/ y > z", "x « y » z"),
    ("1e5<x>", "1e5 < x >"),
    ("true<x>", "true < x >"),
    ("f(a<b) > c", "f ( a < b ) > c"),
    ("a < b == c > d", "a « b == c » d"),
    ("t<u32, u32>>2u", "t « u32 , u32 » > 2u"),
])
def test_template_list_discovery(src, expected):
    assert texts(src) == expected


def test_template_tokens_have_exact_positions():
    toks = tokenize("array<vec4<f32>>= x")
    ends = [t for t in toks if t.kind == TEMPLATE_END]
    assert [(t.col, t.text) for t in ends] == [(15, ">"), (16, ">")]
    assert [(t.text, t.col) for t in toks[-3:-1]] == [("=", 17), ("x", 19)]
