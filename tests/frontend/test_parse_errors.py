"""Syntax errors: exact file:line:col, message, hint, and the rendered form."""

import pickle

import pytest

from emu.frontend.wgsl.errors import Diagnostic, SourceSpan, WgslError, format_diagnostic
from emu.frontend.wgsl.parser import MAX_BRACES, MAX_NESTING, TINT_PARSE_DEPTH, parse


def error_of(src, file="e.wgsl"):
    with pytest.raises(WgslError) as info:
        parse(src, file)
    return info.value


def fn(body):
    """A function whose body is ``body``: line 2 of the source is the body's first line."""
    return "fn f() {\n" + body + "\n}\n"


def test_missing_semicolon_points_after_the_last_token():
    src = fn("  let x = 1\n  let y = 2;")
    e = error_of(src)
    assert (e.file, e.line, e.col) == ("e.wgsl", 2, 12)
    assert e.message == "expected ';' after let declaration, found keyword 'let'"
    assert e.hint == "add ';' after '1'"
    assert e.format(src) == (
        "e.wgsl:2:12: error: expected ';' after let declaration, found keyword 'let'\n"
        "     let x = 1\n"
        "              ^\n"
        "   hint: add ';' after '1'"
    )


@pytest.mark.parametrize("body, line, col, message, hint", [
    ("  return x", 3, 1, "expected ';' after return statement, found '}'", "add ';' after 'x'"),
    ("  foo(1)", 3, 1, "expected ';' after function call, found '}'", "add ';' after ')'"),
    ("  x = 1 y = 2;", 2, 8, "expected ';' after assignment, found 'y'", "add ';' after '1'"),
    ("  i++", 3, 1, "expected ';' after increment, found '}'", "add ';' after '++'"),
])
def test_missing_semicolon_variants(body, line, col, message, hint):
    e = error_of(fn(body))
    if line == 3:  # the '}' is on the next line: the caret still goes right after the last token
        line, col = 2, len(body) + 1
    assert (e.line, e.col, e.message, e.hint) == (line, col, message, hint)


@pytest.mark.parametrize("expr, col, message, hint", [
    ("a & b | c", 19, "'&' and '|' cannot be mixed without parentheses",
     "WGSL gives them no relative precedence; write '(a & b) | c' or 'a & (b | c)'"),
    ("a < b < c", 19, "comparisons cannot be chained: '<' followed by '<'",
     "write '(a < b) && (b < c)' to test both, or add parentheses"),
    ("a << b + c", 20, "'<<' and '+' cannot be mixed without parentheses",
     "WGSL gives them no relative precedence; write '(a << b) + c' or 'a << (b + c)'"),
    ("a + b << c", 19, "'+' and '<<' cannot be mixed without parentheses",
     "WGSL gives them no relative precedence; write '(a + b) << c' or 'a + (b << c)'"),
    ("a << b << c", 20, "'<<' and '<<' cannot be mixed without parentheses",
     "WGSL gives them no relative precedence; write '(a << b) << c' or 'a << (b << c)'"),
    ("a && b || c", 20, "'&&' and '||' cannot be mixed without parentheses",
     "WGSL gives them no relative precedence; write '(a && b) || c' or 'a && (b || c)'"),
    ("a == b & c", 20, "'==' and '&' cannot be mixed without parentheses",
     "WGSL gives them no relative precedence; write '(a == b) & c' or 'a == (b & c)'"),
    ("a & b == c", 19, "'&' and '==' cannot be mixed without parentheses",
     "WGSL gives them no relative precedence; write '(a & b) == c' or 'a & (b == c)'"),
    ("x * y ^ z", 19, "'*' and '^' cannot be mixed without parentheses",
     "WGSL gives them no relative precedence; write '(x * y) ^ z' or 'x * (y ^ z)'"),
    ("a & b && c", 19, "'&' and '&&' cannot be mixed without parentheses",
     "WGSL gives them no relative precedence; write '(a & b) && c' or 'a & (b && c)'"),
    ("a == b == c", 20, "comparisons cannot be chained: '==' followed by '=='",
     "write '(a == b) && (b == c)' to test both, or add parentheses"),
])
def test_operator_mixing_needs_parentheses(expr, col, message, hint):
    src = fn(f"  let bad = {expr};")
    e = error_of(src)
    assert (e.line, e.col, e.message, e.hint) == (2, col, message, hint)


def test_mixing_error_rendering_underlines_the_operator():
    src = fn("  let v = lo & mask || hi;")
    assert error_of(src).format(src) == (
        "e.wgsl:2:21: error: '&' and '||' cannot be mixed without parentheses\n"
        "     let v = lo & mask || hi;\n"
        "                       ^~\n"
        "   hint: WGSL gives them no relative precedence; write '(lo & mask) || hi' or "
        "'lo & (mask || hi)'"
    )


@pytest.mark.parametrize("src, line, col, message, hint", [
    (fn("  let type = 1;"), 2, 7, "'type' is a reserved word in WGSL", "choose another name"),
    (fn("  var __x = 1;"), 2, 7, "'__x' is not a valid name: names must not start with '__'", "rename it"),
    (fn("  let loop = 1;"), 2, 7, "expected let name, found keyword 'loop'",
     "'loop' is a WGSL keyword and cannot be used as a name"),
    (fn("  let x;"), 2, 8, "'let' declarations need an initializer",
     "write 'let x = <value>;' (or use 'var' for a variable without one)"),
    (fn("  loop { break if x; }"), 2, 10,
     "'break if' is only allowed as the last statement of a 'continuing' block",
     "write 'if <condition> { break; }' instead"),
    (fn("  loop { continuing { break if a; i++; } }"), 2, 35,
     "'break if' must be the last statement of a 'continuing' block",
     "move the statements after it before 'break if'"),
    (fn("  loop { continuing { } i++; }"), 2, 25,
     "'continuing' must be the last statement of a loop body",
     "move the statements after it into the loop body, before 'continuing'"),
    ("const a = 1;\nenable f16;\n", 2, 1, "'enable' directives must come before any declaration",
     "move this 'enable' directive to the top of the file"),
    ("struct S { a: u32; b: u32 }", 1, 18, "struct members are separated by ',', not ';'",
     "replace ';' with ','"),
    ("fn f() {\n  let x = 1;\n", 3, 1,
     "expected '}' to close the block opened at line 1, found end of file",
     "add '}' to close the '{' at 1:8"),
    ("var<private> x: array<>;", 1, 22, "empty template list", "remove '<>' or fill it in"),
    (fn("  _ += 1;"), 2, 5, "'_' can only be assigned with '=', not '+='",
     "write '_ = <expression>;' to discard a value"),
    (fn("  x + 1;"), 2, 5,
     "expected an assignment, increment, decrement or call statement, found '+' after 'x'",
     "a value alone is not a statement in WGSL; write '_ = <expression>;' to evaluate and discard it"),
    (fn("  f() = 1;"), 2, 3, "cannot assign to this expression",
     "the left side must be a variable, a member or element of one, or '*pointer'"),
    (fn("  if x  return; }"), 2, 9, "expected '{' after the 'if' condition, found keyword 'return'",
     "WGSL requires braces: 'if cond { ... }'"),
    (fn("  let x = a < b > c;"), 2, 18, "expected ';' after let declaration, found 'c'",
     "'a < b >' was read as a template list, since WGSL takes 'name<' ... '>' for template "
     "brackets; if you meant comparisons, put each in parentheses, e.g. '(a < b)'"),
    (fn("  --x;"), 2, 3, "'--' must come after the variable in WGSL", "write 'x--;'"),
    (fn("  let y = ++x;"), 2, 11, "'++' is not an operator in WGSL expressions",
     "'x++;' is a statement, and WGSL has no unary '+': write 'x + 1' for the value"),
    ("let g = 1;", 1, 1, "'let' declarations are not allowed at module scope",
     "use 'const' for a module-scope constant (or 'override' for a pipeline constant)"),
    ("@group(0) const c = 1;", 1, 1, "attributes are not allowed on a 'const' declaration",
     "remove the attribute"),
    ("fn f(x) {}", 1, 7, "expected ':' after the parameter name, found ')'",
     "parameters need a type: 'x: <type>'"),
    (fn("  switch x { }"), 2, 12, "a switch needs at least one clause", "add 'default: {}'"),
    (fn("  switch x { case 1 x = 2; }"), 2, 21, "expected '{' to open the case body, found 'x'",
     "case bodies are blocks in WGSL: 'case 1: { ... }'"),
    ("fn f() { x = 1; } }", 1, 19,
     "expected a declaration ('var', 'const', 'override', 'alias', 'struct', 'fn' or "
     "'const_assert'), found '}'", None),
    ("struct E {}", 1, 8, "struct 'E' has no members", "a struct needs at least one member"),
])
def test_syntax_errors(src, line, col, message, hint):
    e = error_of(src)
    assert (e.file, e.line, e.col, e.message, e.hint) == ("e.wgsl", line, col, message, hint)


@pytest.mark.parametrize("src, line, col, message", [
    ("const x = 012;", 1, 11, "invalid integer literal '012': leading zeros are not allowed"),
    ("const x = 1.0u;", 1, 11, "invalid numeric literal '1.0u'"),
    ("const x = 1e;", 1, 11, "invalid numeric literal '1e'"),
    ("const x = 2 $ 3;", 1, 13, "invalid character '$'"),
    ("const x = 1;\n/* open /* nested */ ", 2, 1, "unterminated block comment"),
])
def test_lexical_errors(src, line, col, message):
    e = error_of(src)
    assert (e.line, e.col, e.message) == (line, col, message)


def test_nesting_limit_is_an_error_not_a_crash():
    deep = "(" * (MAX_NESTING + 10) + "1" + ")" * (MAX_NESTING + 10)
    e = error_of(f"const x = {deep};")
    assert e.message == f"expressions nested deeper than {MAX_NESTING} levels"
    ok = "(" * (MAX_NESTING - 1) + "1" + ")" * (MAX_NESTING - 1)      # the expression itself is a level
    parse(f"const x = {ok};")
    blocks = fn("{" * 200 + "}" * 200)
    e = error_of(blocks)
    assert e.message == (f"statements nested deeper than {MAX_BRACES} levels of braces, WGSL's limit "
                         f"(Tint and naga reject it too)")
    assert (e.line, e.col) == (2, MAX_BRACES)           # the 128th '{' (the function's is the first)


def braces(n: int, inner: str) -> str:
    """A function of `n` nested brace levels, its own included, with `inner` in the innermost."""
    return ("fn g(a: i32) -> i32 { return a; }\nfn f() {\nvar x = 1;\n" + "{" * (n - 1) + inner
            + "}" * (n - 1) + "\n}\n")


@pytest.mark.parametrize("inner,tint_stops", [
    # WGSL's limits section guarantees 127 levels of brace-enclosed statements and sets none on
    # expressions; Tint's parser counts both (blocks, the statement, each (), argument list, [],
    # template list and unary operator) and stops before a level past 128
    ("x = x + 1;", False),                       # Tint: 127 braces + the statement = 128
    ("x = -x;", True),                           # the unary operator would be 129
    ("x = g(x);", True),                         # the argument list
    ("x = (x);", True),
    ("var v: array<i32, 2>;", True),             # the template list
    ("let y = x; x++;", False),
    ("x = " + "(" * 100 + "x" + ")" * 100 + ";", True),     # emu parses it (it was 'too deep' before)
])
def test_wgsl_s_127_braces_parse_whatever_their_statements(inner, tint_stops):
    tree = parse(braces(MAX_BRACES, inner), "b.wgsl")
    assert (tree.tint_too_deep is not None) == tint_stops
    error_of(braces(MAX_BRACES + 1, inner))


def test_tint_s_parse_depth_is_counted_as_tint_counts_it():
    # 126 braces: one level to spare, so a paren or a call parses in Tint, two do not
    assert parse(braces(MAX_BRACES - 1, "x = (x);")).tint_too_deep is None
    assert parse(braces(MAX_BRACES - 1, "x = g(x);")).tint_too_deep is None
    deeper = parse(braces(MAX_BRACES - 1, "x = g((x));"), "b.wgsl").tint_too_deep
    assert (deeper.line, deeper.col) == (4, MAX_BRACES - 2 + len("x = g((") + 1)   # at the second '('
    # an if's condition is parsed at the block's level (Tint leaves the statement's level first)
    assert parse(braces(MAX_BRACES - 1, "if (x > 0) { x = 1; }")).tint_too_deep is None
    # expressions alone, at module scope: Tint's declaration level, then 127 parentheses
    assert parse("const c = " + "(" * (TINT_PARSE_DEPTH - 1) + "1" + ")" * (TINT_PARSE_DEPTH - 1) + ";"
                 ).tint_too_deep is None
    assert parse("const c = " + "(" * TINT_PARSE_DEPTH + "1" + ")" * TINT_PARSE_DEPTH + ";").tint_too_deep


def test_tint_s_parse_depth_is_a_warning_naming_tint():
    from emu.api import compile_wgsl
    src = ("@group(0) @binding(0) var<storage, read_write> o: array<i32>;\n@compute @workgroup_size(1)\n"
           "fn main() {\nvar x = 1;\n" + "{" * (MAX_BRACES - 1) + "x = -x;" + "}" * (MAX_BRACES - 1)
           + "\no[0] = x;\n}\n")
    _, warnings = compile_wgsl(src, "deep.wgsl")
    assert [w.message for w in warnings] == [
        "maximum parser recursive depth reached: Tint (Dawn, Chrome) rejects this shader"]
    assert "128 levels" in warnings[0].hint


# ---------------------------------------------------------------------------------------------
# errors.py on its own


def test_format_single_char_multi_char_and_tabs():
    span = SourceSpan("k.wgsl", 1, 5, 1, 6)
    assert format_diagnostic("error", span, "bad", None, "let x = 1;") == (
        "k.wgsl:1:5: error: bad\n"
        "   let x = 1;\n"
        "       ^"
    )
    src = "\tlet value = 1;"
    span = SourceSpan("k.wgsl", 1, 6, 1, 11)
    assert format_diagnostic("warning", span, "unused", "remove it", src) == (
        "k.wgsl:1:6: warning: unused\n"
        "   \tlet value = 1;\n"
        "   \t    ^~~~~\n"
        "   hint: remove it"
    )


def test_format_without_source_and_multiline_span():
    d = Diagnostic("error", SourceSpan("m.wgsl", 2, 3, 4, 1), "it spans lines", "fix it")
    assert d.format() == "m.wgsl:2:3: error: it spans lines\n   hint: fix it"
    assert d.format("a\nxxabcd\nb\n") == (
        "m.wgsl:2:3: error: it spans lines\n"
        "   xxabcd\n"
        "     ^~~~\n"
        "   hint: fix it"
    )
    assert str(d) == d.format()


def test_wgsl_error_fields_and_pickling():
    e = WgslError("boom", SourceSpan("p.wgsl", 3, 4, 3, 7), "do this")
    assert (e.file, e.line, e.col, e.message, e.hint, e.severity) == ("p.wgsl", 3, 4, "boom", "do this", "error")
    assert str(e) == "p.wgsl:3:4: error: boom\n   hint: do this"
    e2 = pickle.loads(pickle.dumps(e))
    assert e2.diagnostic == e.diagnostic
    e3 = WgslError("plain", file="q.wgsl", line=2, col=9)
    assert (e3.span.line, e3.span.col, e3.span.end_col, e3.hint) == (2, 9, 10, None)
    with pytest.raises(ValueError):
        Diagnostic("fatal", e.span, "x")


def test_crlf_and_other_line_breaks_count_as_lines():
    src = "const a = 1;\r\nconst b = 2;\rconst c = 3;\u2028const d = $;"
    e = error_of(src)
    assert (e.line, e.col) == (4, 11)
    assert e.format(src).splitlines()[1] == "   const d = $;"
