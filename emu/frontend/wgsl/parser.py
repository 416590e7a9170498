"""Recursive-descent parser for WGSL (W3C grammar), both cooperative-matrix dialects included.

``parse(source, file) -> ast.Module`` or a ``WgslError`` naming file, line and column.

The grammar is the spec's; notes on the places where WGSL differs from C:

* Template brackets are decided by the lexer (spec "template list discovery"), so the parser sees
  TEMPLATE_START/TEMPLATE_END tokens apart from the '<'/'>' operators.
* Operator precedence is partial. Shift operands, and the operands of '&', '|' and '^', are unary
  expressions; comparisons do not chain; '&&' and '||' do not mix; a bitwise operator does not mix
  with any other binary operator. Such mixes are errors with a hint to add parentheses.
* There is no expression statement: a statement is a declaration, an assignment (``_ = e`` to
  discard a value), ``++``/``--``, a call, or control flow.

Extension syntax needs nothing special: naga's ``coop_mat8x8<f32, A>`` and ``coopLoad<T>(p, s)``,
and Dawn's ``subgroup_matrix_left<f16, 16, 8>`` and ``subgroupMatrixLoad<T, row_major>(p, o, s)``
are ordinary templated names and calls. Texture and sampler types parse as ordinary type names.
"""

from __future__ import annotations

from typing import Optional

from . import ast
from .errors import SourceSpan, WgslError
from .lexer import EOF, FLOAT, IDENT, INT, KEYWORD, SYM, TEMPLATE_END, TEMPLATE_START, Token, tokenize
from ...errors import note_location

__all__ = ["parse", "parse_expression", "Parser", "MAX_NESTING", "MAX_BRACES", "TINT_PARSE_DEPTH"]

# Nesting limits. WGSL's (its "Limits" section) is on brace-enclosed statements only: a function
# may nest them 127 deep (Tint's resolver and naga reject deeper). WGSL sets no limit on expression
# nesting; emu's own, MAX_NESTING, only keeps the parser's recursion bounded, and counts
# expressions apart from the braces around them, so that a shader at WGSL's 127 braces still holds
# expressions. Tint's parser counts differently: blocks, statements, parentheses, argument lists,
# indices, template lists and unary operators together, at most TINT_PARSE_DEPTH (its
# kMaxParseDepth, "maximum parser recursive depth reached"); emu tracks that count too and warns
# where Tint would stop (Parser.tint_enter).
MAX_BRACES = 127
MAX_NESTING = 255
TINT_PARSE_DEPTH = 128
MAX_CHAIN = 255    # binary operators in one chain (a + b + ... is a tree this deep)

_MUL = frozenset(("*", "/", "%"))
_ADD = frozenset(("+", "-"))
_SHIFT = frozenset(("<<", ">>"))
_REL = frozenset(("<", ">", "<=", ">=", "==", "!="))
_BIT = frozenset(("&", "|", "^"))
_LOGIC = frozenset(("&&", "||"))
_BINARY = _MUL | _ADD | _SHIFT | _REL | _BIT | _LOGIC
_UNARY = frozenset(("-", "!", "~", "&", "*"))
_ASSIGN = frozenset(("=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="))
_GLOBAL_KINDS = "'var', 'const', 'override', 'alias', 'struct', 'fn' or 'const_assert'"


def parse(source: str, file: str = "<input>") -> ast.Module:
    """Parse a WGSL module. Raises WgslError (file:line:col, message, hint) on bad syntax."""
    import sys
    parser = Parser(source, file)
    limit = sys.getrecursionlimit()
    # each level of nesting takes a few frames: MAX_BRACES blocks around MAX_NESTING expressions
    # take ~1,500 (Python's default limit is 1,000)
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        return parser.parse_module()
    except RecursionError:
        raise parser.error(
            "the shader is nested too deeply to parse",
            parser.tok.span,
            f"keep expressions below {MAX_NESTING} levels and blocks below {MAX_BRACES}",
        ) from None
    except WgslError:
        raise
    except Exception as e:
        note_location(e, parser.tok.span)
        raise
    finally:
        sys.setrecursionlimit(limit)


def parse_expression(source: str, file: str = "<input>") -> ast.Expr:
    """Parse one expression (all of ``source``); handy for tests and tools."""
    parser = Parser(source, file)
    e = parser.parse_expression()
    if parser.tok.kind != EOF:
        parser.unexpected("end of expression")
    return e


class Parser:
    def __init__(self, source: str, file: str = "<input>"):
        self.source = source
        self.file = file
        self.toks: list[Token] = tokenize(source, file)
        self.i = 0
        self.depth = 0          # expressions (and unary operators) nested here
        self.braces = 0         # brace-enclosed blocks nested in the function
        self.tint = 0           # Tint's parse depth (its sync sites; see tint_enter)
        self.tint_too_deep: Optional[SourceSpan] = None    # where Tint's parser would stop
        # Where the last templated identifier used as a value ended (token index), for the hint
        # about 'a<b, c>d' having been read as a template list.
        self._tmpl_end_at = -1
        self._tmpl_text = ""

    # ------------------------------------------------------------------ token helpers

    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    @property
    def prev(self) -> Token:
        return self.toks[self.i - 1] if self.i > 0 else self.toks[0]

    def peek(self, k: int = 1) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def advance(self) -> Token:
        t = self.toks[self.i]
        if t.kind != EOF:
            self.i += 1
        return t

    def at(self, text: str) -> bool:
        t = self.toks[self.i]
        return t.kind == SYM and t.text == text

    def at_kw(self, text: str) -> bool:
        t = self.toks[self.i]
        return t.kind == KEYWORD and t.text == text

    def accept(self, text: str) -> Optional[Token]:
        if self.at(text):
            return self.advance()
        return None

    def span_from(self, start: Token) -> SourceSpan:
        end = self.prev if self.i > 0 else start
        if end.offset < start.offset:
            end = start
        return SourceSpan(self.file, start.line, start.col, end.line, end.end_col)

    def enter(self) -> None:
        """One level deeper into an expression (emu's MAX_NESTING)."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error(
                f"expressions nested deeper than {MAX_NESTING} levels",
                self.tok.span,
                "split the expression: compute inner parts into 'let' values first",
            )

    def leave(self) -> None:
        self.depth -= 1

    def enter_block(self, lb: Token) -> None:
        """Into a block opened by the '{' `lb` (WGSL's limit on brace-enclosed statements)."""
        self.braces += 1
        if self.braces > MAX_BRACES:
            raise self.error(
                f"statements nested deeper than {MAX_BRACES} levels of braces, WGSL's limit "
                f"(Tint and naga reject it too)",
                lb.span,
                "move the inner blocks into a function of their own",
            )
        self.tint_enter()

    def leave_block(self) -> None:
        self.braces -= 1
        self.tint_leave()

    def tint_enter(self) -> None:
        """One of Tint's parser's sync levels (wgsl/reader/parser: a block, a statement other than a
        block one, a for-loop header, a parenthesized expression, an argument list, an index, a
        template list, a unary operator): Tint refuses to enter one at TINT_PARSE_DEPTH."""
        if self.tint >= TINT_PARSE_DEPTH and self.tint_too_deep is None:
            self.tint_too_deep = self.tok.span
        self.tint += 1

    def tint_leave(self) -> None:
        self.tint -= 1

    # ------------------------------------------------------------------ errors

    def error(self, message: str, span: Optional[SourceSpan] = None, hint: Optional[str] = None) -> WgslError:
        return WgslError(message, span or self.tok.span, hint)

    def _template_hint(self) -> Optional[str]:
        if self.i == self._tmpl_end_at and (
            self.tok.kind in (IDENT, INT, FLOAT, KEYWORD) or self.at("(")
        ):
            return (
                f"'{self._tmpl_text}' was read as a template list, since WGSL takes 'name<' ... '>' "
                "for template brackets; if you meant comparisons, put each in parentheses, "
                "e.g. '(a < b)'"
            )
        return None

    def unexpected(self, expected: str, hint: Optional[str] = None):
        t = self.tok
        raise self.error(f"expected {expected}, found {t.describe()}", t.span, hint or self._template_hint())

    def expect(self, text: str, context: str = "", hint: Optional[str] = None) -> Token:
        if self.at(text):
            return self.advance()
        self.unexpected(f"'{text}'{(' ' + context) if context else ''}", hint)

    def expect_kw(self, text: str) -> Token:
        if self.at_kw(text):
            return self.advance()
        self.unexpected(f"'{text}'")

    def expect_semicolon(self, after: str) -> Token:
        if self.at(";"):
            return self.advance()
        p = self.prev
        span = SourceSpan(self.file, p.line, p.end_col, p.line, p.end_col + 1)
        hint = self._template_hint() or f"add ';' after '{_clip(p.text)}'"
        raise self.error(f"expected ';' after {after}, found {self.tok.describe()}", span, hint)

    def expect_ident(self, what: str = "identifier") -> Token:
        """An identifier that names something (not a keyword or reserved word)."""
        t = self.tok
        if t.kind == IDENT:
            if t.reserved:
                if t.text.startswith("__"):
                    raise self.error(
                        f"'{t.text}' is not a valid name: names must not start with '__'",
                        t.span, "rename it",
                    )
                raise self.error(f"'{t.text}' is a reserved word in WGSL", t.span, "choose another name")
            return self.advance()
        if t.kind == KEYWORD:
            raise self.error(
                f"expected {what}, found keyword '{t.text}'", t.span,
                f"'{t.text}' is a WGSL keyword and cannot be used as a name",
            )
        self.unexpected(what)

    def expect_word(self, what: str) -> Token:
        """Any identifier-shaped token (the spec's ident_pattern_token), keywords included."""
        t = self.tok
        if t.kind in (IDENT, KEYWORD):
            return self.advance()
        self.unexpected(what)

    # ------------------------------------------------------------------ module

    def parse_module(self) -> ast.Module:
        start = self.tok
        directives: list = []
        decls: list = []
        while True:
            t = self.tok
            if t.kind == EOF:
                break
            if t.kind == KEYWORD and t.text in ("enable", "requires", "diagnostic"):
                if decls:
                    raise self.error(
                        f"'{t.text}' directives must come before any declaration", t.span,
                        f"move this '{t.text}' directive to the top of the file",
                    )
                directives.append(self.parse_directive())
                continue
            if self.accept(";"):
                continue
            decls.append(self.parse_global_decl())
        end = self.tok
        span = SourceSpan(self.file, start.line, start.col, end.line, end.col)
        return ast.Module(directives, decls, file=self.file, source=self.source, span=span,
                          tint_too_deep=self.tint_too_deep)

    def parse_directive(self):
        start = self.advance()
        if start.text == "diagnostic":
            severity, rule = self.parse_diagnostic_control()
            self.expect_semicolon("diagnostic directive")
            return ast.DiagnosticDirective(severity, rule, span=self.span_from(start))
        names = [self.expect_word("extension name").text]
        while self.accept(","):
            if self.at(";"):
                break
            names.append(self.expect_word("extension name").text)
        self.expect_semicolon(f"'{start.text}' directive")
        cls = ast.EnableDirective if start.text == "enable" else ast.RequiresDirective
        return cls(names, span=self.span_from(start))

    def parse_diagnostic_control(self) -> tuple[str, str]:
        self.expect("(", "after 'diagnostic'")
        severity = self.expect_word("diagnostic severity ('error', 'warning', 'info' or 'off')").text
        self.expect(",", "after the diagnostic severity")
        rule = self.expect_word("diagnostic rule name").text
        if self.accept("."):
            rule += "." + self.expect_word("diagnostic rule name").text
        self.accept(",")
        self.expect(")", "to close the diagnostic control")
        return severity, rule

    def parse_global_decl(self):
        t = self.tok
        if t.kind == KEYWORD and t.text in ("fn", "struct") or t.is_sym("@"):
            return self._global_decl()
        self.tint_enter()           # Tint parses a value declaration inside a sync level
        d = self._global_decl()
        self.tint_leave()
        return d

    def _global_decl(self):
        start = self.tok
        attrs = self.parse_attributes()
        t = self.tok
        if t.kind == KEYWORD:
            kw = t.text
            if kw == "var":
                d = self.parse_var_decl(attrs, start)
                self.expect_semicolon("variable declaration")
                d.span = self.span_from(start)
                return d
            if kw == "override":
                d = self.parse_override(attrs, start)
                self.expect_semicolon("override declaration")
                d.span = self.span_from(start)
                return d
            if kw == "fn":
                return self.parse_fn(attrs, start)
            if attrs:
                raise self.error(
                    f"attributes are not allowed on a '{kw}' declaration", attrs[0].span,
                    "remove the attribute",
                )
            if kw == "const":
                d = self.parse_value_decl(ast.ConstDecl, start)
                self.expect_semicolon("const declaration")
                d.span = self.span_from(start)
                return d
            if kw == "alias":
                return self.parse_alias(start)
            if kw == "struct":
                return self.parse_struct(start)
            if kw == "const_assert":
                self.advance()
                e = self.parse_expression()
                self.expect_semicolon("const_assert")
                return ast.ConstAssert(e, span=self.span_from(start))
            if kw == "let":
                raise self.error(
                    "'let' declarations are not allowed at module scope", t.span,
                    "use 'const' for a module-scope constant (or 'override' for a pipeline constant)",
                )
        self.unexpected(f"a declaration ({_GLOBAL_KINDS})")

    def parse_attributes(self) -> list[ast.Attribute]:
        attrs = []
        while self.at("@"):
            at = self.advance()
            name = self.expect_word("attribute name")
            args: list = []
            if self.at("("):
                self.advance()
                while not self.at(")"):
                    args.append(self.parse_expression())
                    if not self.accept(","):
                        break
                self.expect(")", f"to close the arguments of '@{name.text}'")
            attrs.append(ast.Attribute(name.text, args, span=self.span_from(at), name_span=name.span))
        return attrs

    def parse_var_decl(self, attrs, start) -> ast.VarDecl:
        self.expect_kw("var")
        targs = self.parse_template_args() if self.tok.kind == TEMPLATE_START else []
        name = self.expect_ident("variable name")
        ty = self.parse_type() if self.accept(":") else None
        init = self.parse_expression() if self.accept("=") else None
        return ast.VarDecl(
            name.text, ty, init, targs, attrs, span=self.span_from(start), name_span=name.span
        )

    def parse_override(self, attrs, start) -> ast.OverrideDecl:
        self.expect_kw("override")
        name = self.expect_ident("override name")
        ty = self.parse_type() if self.accept(":") else None
        init = self.parse_expression() if self.accept("=") else None
        return ast.OverrideDecl(name.text, ty, init, attrs, span=self.span_from(start), name_span=name.span)

    def parse_value_decl(self, cls, start):
        """'const' or 'let': name, optional type, required initializer."""
        kw = self.advance().text
        name = self.expect_ident(f"{kw} name")
        ty = self.parse_type() if self.accept(":") else None
        if not self.at("="):
            if self.at(";"):
                raise self.error(
                    f"'{kw}' declarations need an initializer", self.tok.span,
                    f"write '{kw} {name.text} = <value>;'"
                    + (" (or use 'var' for a variable without one)" if kw == "let" else ""),
                )
            self.unexpected(f"'=' in {kw} declaration")
        self.advance()
        init = self.parse_expression()
        return cls(name.text, ty, init, span=self.span_from(start), name_span=name.span)

    def parse_alias(self, start) -> ast.AliasDecl:
        self.advance()
        name = self.expect_ident("alias name")
        self.expect("=", "in alias declaration")
        ty = self.parse_type()
        self.expect_semicolon("alias declaration")
        return ast.AliasDecl(name.text, ty, span=self.span_from(start), name_span=name.span)

    def parse_struct(self, start) -> ast.StructDecl:
        self.advance()
        name = self.expect_ident("struct name")
        self.expect("{", "to open the struct body")
        members = []
        while not self.at("}"):
            mstart = self.tok
            mattrs = self.parse_attributes()
            mname = self.expect_word("struct member name")
            if not self.at(":"):
                self.unexpected("':' after the member name", "struct members are written 'name: type'")
            self.advance()
            mty = self.parse_type()
            members.append(
                ast.StructMember(mname.text, mty, mattrs, span=self.span_from(mstart), name_span=mname.span)
            )
            if not self.accept(","):
                if self.at(";"):
                    raise self.error(
                        "struct members are separated by ',', not ';'", self.tok.span,
                        "replace ';' with ','",
                    )
                if not self.at("}"):
                    self.unexpected("',' or '}' after struct member")
        self.advance()
        if not members:
            raise self.error(f"struct '{name.text}' has no members", name.span, "a struct needs at least one member")
        return ast.StructDecl(name.text, members, span=self.span_from(start), name_span=name.span)

    def parse_fn(self, attrs, start) -> ast.FnDecl:
        self.advance()
        name = self.expect_ident("function name")
        self.expect("(", "after the function name")
        params = []
        while not self.at(")"):
            pstart = self.tok
            pattrs = self.parse_attributes()
            pname = self.expect_ident("parameter name")
            if not self.at(":"):
                self.unexpected("':' after the parameter name", f"parameters need a type: '{pname.text}: <type>'")
            self.advance()
            pty = self.parse_type()
            params.append(ast.Param(pname.text, pty, pattrs, span=self.span_from(pstart), name_span=pname.span))
            if not self.accept(","):
                if not self.at(")"):
                    self.unexpected("',' or ')' in the parameter list")
        self.advance()
        ret_attrs: list = []
        ret = None
        if self.accept("->"):
            ret_attrs = self.parse_attributes()
            ret = self.parse_type()
        if not self.at_block():
            self.unexpected("'{' to open the function body")
        body = self.parse_compound()
        return ast.FnDecl(
            name.text, params, ret, body, attrs, ret_attrs, span=self.span_from(start), name_span=name.span
        )

    # ------------------------------------------------------------------ types and templates

    def parse_type(self) -> ast.TypeExpr:
        start = self.tok
        if start.kind not in (IDENT, KEYWORD):
            self.unexpected("a type")
        name = self.expect_ident("a type")
        args = self.parse_template_args() if self.tok.kind == TEMPLATE_START else []
        return ast.TypeExpr(name.text, args, span=self.span_from(start))

    def parse_template_args(self) -> list[ast.Expr]:
        lt = self.advance()
        if self.tok.kind == TEMPLATE_END:
            raise self.error("empty template list", lt.span.to(self.tok.span), "remove '<>' or fill it in")
        self.tint_enter()
        args = []
        while True:
            if self.at("_"):
                # wgpu's cooperative loads leave a template argument to inference: coopLoad<_, A>
                t = self.advance()
                args.append(ast.Ident("_", span=t.span))
            else:
                args.append(self.parse_expression())
            if self.accept(","):
                if self.tok.kind == TEMPLATE_END:
                    break
                continue
            break
        if self.tok.kind != TEMPLATE_END:
            self.unexpected("',' or '>' in template list")
        self.advance()
        self.tint_leave()
        return args

    # ------------------------------------------------------------------ statements

    def at_block(self) -> bool:
        """At a compound statement (attributes may come before its '{')."""
        return self.at("{") or self.at("@")

    def parse_compound(self, attrs=None, start: Optional[Token] = None) -> ast.CompoundStmt:
        start = start or self.tok
        if attrs is None and self.at("@"):
            attrs = self.parse_attributes()
        lb = self.tok
        if not self.at("{"):
            self.unexpected("'{'")
        self.advance()
        self.enter_block(lb)
        body = []
        while not self.at("}"):
            if self.tok.kind == EOF:
                raise self.error(
                    f"expected '}}' to close the block opened at line {lb.line}, found end of file",
                    self.tok.span, f"add '}}' to close the '{{' at {lb.line}:{lb.col}",
                )
            s = self.parse_statement()
            if s is not None:
                body.append(s)
        self.advance()
        self.leave_block()
        return ast.CompoundStmt(body, attrs or [], span=self.span_from(start))

    def parse_statement(self) -> Optional[ast.Stmt]:
        t = self.tok
        if t.is_sym(";"):
            self.advance()
            return None
        # Tint tries a non-block statement first, inside one of its sync levels: at its limit no
        # statement at all parses; a block statement then leaves that level before its '{'
        self.tint_enter()
        if t.is_sym("{") or t.is_sym("@") or t.kind == KEYWORD and t.text in ("if", "switch", "loop", "for", "while"):
            self.tint_leave()
            return self._statement()
        s = self._statement()
        self.tint_leave()
        return s

    def _statement(self) -> Optional[ast.Stmt]:
        t = self.tok
        if t.kind == SYM:
            if t.text == "{":
                return self.parse_compound()
            if t.text == "@":
                attrs = self.parse_attributes()
                nt = self.tok
                if nt.is_sym("{"):
                    return self.parse_compound(attrs, t)
                if nt.kind == KEYWORD and nt.text in ("if", "switch", "loop", "for", "while"):
                    return getattr(self, "parse_" + nt.text)(attrs, t)
                self.unexpected("'{', 'if', 'switch', 'loop', 'for' or 'while' after statement attributes")
        if t.kind == KEYWORD:
            kw = t.text
            if kw in ("if", "switch", "loop", "for", "while"):
                return getattr(self, "parse_" + kw)([], t)
            if kw == "return":
                self.advance()
                value = None if self.at(";") else self.parse_expression()
                self.expect_semicolon("return statement")
                return ast.ReturnStmt(value, span=self.span_from(t))
            if kw == "break":
                if self.peek().is_kw("if"):
                    raise self.error(
                        "'break if' is only allowed as the last statement of a 'continuing' block",
                        t.span.to(self.peek().span), "write 'if <condition> { break; }' instead",
                    )
                self.advance()
                self.expect_semicolon("'break'")
                return ast.BreakStmt(span=self.span_from(t))
            if kw == "continue":
                self.advance()
                self.expect_semicolon("'continue'")
                return ast.ContinueStmt(span=self.span_from(t))
            if kw == "discard":
                self.advance()
                self.expect_semicolon("'discard'")
                return ast.DiscardStmt(span=self.span_from(t))
            if kw == "const_assert":
                self.advance()
                e = self.parse_expression()
                self.expect_semicolon("const_assert")
                return ast.ConstAssert(e, span=self.span_from(t))
            if kw in ("var", "let", "const"):
                d = self.parse_local_decl()
                self.expect_semicolon(f"{kw} declaration")
                d.span = self.span_from(t)
                return d
            if kw == "else":
                raise self.error("'else' without a matching 'if'", t.span, "check the braces of the 'if' before it")
            if kw in ("case", "default"):
                raise self.error(f"'{kw}' outside a switch body", t.span)
            if kw == "continuing":
                raise self.error(
                    "'continuing' is only allowed as the last part of a 'loop' body", t.span,
                )
            if kw in ("fn", "struct", "alias", "override", "enable", "requires", "diagnostic"):
                raise self.error(
                    f"'{kw}' is not allowed inside a function", t.span,
                    "declare it at module scope" if kw != "override" else "declare overrides at module scope",
                )
        s = self.parse_simple_statement()
        if isinstance(s, ast.AssignStmt):
            what = "assignment"
        elif isinstance(s, ast.IncDecStmt):
            what = "increment" if s.op == "++" else "decrement"
        else:
            what = "function call"
        self.expect_semicolon(what)
        s.span = self.span_from(t)
        return s

    def parse_local_decl(self) -> ast.Stmt:
        start = self.tok
        if start.text == "var":
            return self.parse_var_decl([], start)
        if start.text == "let":
            return self.parse_value_decl(ast.LetDecl, start)
        return self.parse_value_decl(ast.ConstDecl, start)

    def parse_simple_statement(self) -> ast.Stmt:
        """Assignment, phony assignment, increment/decrement or call (no ';')."""
        start = self.tok
        if self.at("_"):
            self.advance()
            if not self.at("="):
                if self.tok.kind == SYM and self.tok.text in _ASSIGN:
                    raise self.error(
                        f"'_' can only be assigned with '=', not '{self.tok.text}'", self.tok.span,
                        "write '_ = <expression>;' to discard a value",
                    )
                self.unexpected("'=' after '_'")
            self.advance()
            rhs = self.parse_expression()
            return ast.AssignStmt("=", None, rhs, span=self.span_from(start))
        if start.is_sym("++") or start.is_sym("--"):
            raise self.error(
                f"'{start.text}' must come after the variable in WGSL", start.span,
                f"write 'x{start.text};'",
            )
        lhs = self.parse_unary()
        t = self.tok
        if t.kind == SYM and t.text in _ASSIGN:
            self._check_lhs(lhs)
            self.advance()
            rhs = self.parse_expression()
            return ast.AssignStmt(t.text, lhs, rhs, span=self.span_from(start))
        if t.kind == SYM and t.text in ("++", "--"):
            self._check_lhs(lhs)
            self.advance()
            return ast.IncDecStmt(t.text, lhs, span=self.span_from(start))
        if isinstance(lhs, ast.CallExpr):
            return ast.CallStmt(lhs, span=self.span_from(start))
        text = _clip(lhs.full_span.text(self.source)) if lhs.full_span else ""
        raise self.error(
            f"expected an assignment, increment, decrement or call statement, found {t.describe()}"
            f" after '{text}'",
            t.span,
            self._template_hint() or "a value alone is not a statement in WGSL; write '_ = <expression>;' "
            "to evaluate and discard it",
        )

    def _check_lhs(self, e: ast.Expr) -> None:
        node = e
        while True:
            if isinstance(node, ast.Ident) and not node.template_args:
                return
            if isinstance(node, (ast.MemberExpr, ast.IndexExpr)):
                node = node.base
            elif isinstance(node, ast.UnaryExpr) and node.op in ("*", "&"):
                node = node.operand
            elif isinstance(node, ast.ParenExpr):
                node = node.expr
            else:
                raise self.error(
                    "cannot assign to this expression", e.full_span,
                    "the left side must be a variable, a member or element of one, or '*pointer'",
                )

    def parse_if(self, attrs, start: Token) -> ast.IfStmt:
        self.expect_kw("if")
        cond = self.parse_expression()
        if not self.at_block():
            self.unexpected("'{' after the 'if' condition", self._template_hint() or "WGSL requires braces: 'if cond { ... }'")
        body = self.parse_compound()
        orelse = None
        if self.at_kw("else"):
            self.advance()
            if self.at_kw("if"):
                orelse = self.parse_if([], self.tok)
            elif self.at_block():
                orelse = self.parse_compound()
            else:
                self.unexpected("'if' or '{' after 'else'", "WGSL requires braces: 'else { ... }'")
        return ast.IfStmt(cond, body, orelse, attrs, span=self.span_from(start))

    def parse_switch(self, attrs, start: Token) -> ast.SwitchStmt:
        self.expect_kw("switch")
        selector = self.parse_expression()
        body_attrs = self.parse_attributes()
        if not self.at("{"):
            self.unexpected("'{' to open the switch body")
        lb = self.advance()
        self.enter_block(lb)
        clauses = []
        while not self.at("}"):
            ct = self.tok
            if ct.is_kw("case"):
                self.advance()
                selectors: list = []
                while True:
                    if self.at_kw("default"):
                        d = self.advance()
                        selectors.append(ast.DefaultSelector(span=d.span))
                    else:
                        selectors.append(self.parse_expression())
                    if not self.accept(","):
                        break
                    if self.at(":") or self.at("{"):
                        break
            elif ct.is_kw("default"):
                d = self.advance()
                selectors = [ast.DefaultSelector(span=d.span)]
            else:
                self.unexpected("'case', 'default' or '}' in switch body")
            self.accept(":")
            if not self.at_block():
                self.unexpected(
                    "'{' to open the case body",
                    "case bodies are blocks in WGSL: 'case 1: { ... }'",
                )
            body = self.parse_compound()
            clauses.append(ast.CaseClause(selectors, body, span=self.span_from(ct)))
        if not clauses:
            raise self.error("a switch needs at least one clause", lb.span, "add 'default: {}'")
        self.advance()
        self.leave_block()
        return ast.SwitchStmt(selector, clauses, attrs, body_attrs, span=self.span_from(start))

    def parse_loop(self, attrs, start: Token) -> ast.LoopStmt:
        self.expect_kw("loop")
        body_attrs = self.parse_attributes()
        if not self.at("{"):
            self.unexpected("'{' after 'loop'")
        lb = self.advance()
        self.enter_block(lb)
        body: list = []
        continuing = None
        while not self.at("}"):
            if self.tok.kind == EOF:
                raise self.error(
                    f"expected '}}' to close the loop opened at line {lb.line}, found end of file",
                    self.tok.span, f"add '}}' to close the '{{' at {lb.line}:{lb.col}",
                )
            if self.at_kw("continuing"):
                continuing = self.parse_continuing()
                if not self.at("}"):
                    raise self.error(
                        "'continuing' must be the last statement of a loop body", self.tok.span,
                        "move the statements after it into the loop body, before 'continuing'",
                    )
                break
            s = self.parse_statement()
            if s is not None:
                body.append(s)
        self.advance()
        self.leave_block()
        return ast.LoopStmt(body, continuing, attrs, body_attrs, span=self.span_from(start))

    def parse_continuing(self) -> ast.ContinuingStmt:
        start = self.advance()
        attrs = self.parse_attributes()
        if not self.at("{"):
            self.unexpected("'{' after 'continuing'")
        self.enter_block(self.advance())
        body: list = []
        break_if = None
        while not self.at("}"):
            if self.tok.kind == EOF:
                self.unexpected("'}' to close the continuing block")
            if self.at_kw("break") and self.peek().is_kw("if"):
                b = self.advance()
                self.advance()
                self.tint_enter()           # (as a statement)
                cond = self.parse_expression()
                self.tint_leave()
                self.expect_semicolon("'break if' condition")
                break_if = ast.BreakIfStmt(cond, span=self.span_from(b))
                if not self.at("}"):
                    raise self.error(
                        "'break if' must be the last statement of a 'continuing' block", self.tok.span,
                        "move the statements after it before 'break if'",
                    )
                break
            s = self.parse_statement()
            if s is not None:
                body.append(s)
        self.advance()
        self.leave_block()
        return ast.ContinuingStmt(body, break_if, attrs, span=self.span_from(start))

    def parse_for(self, attrs, start: Token) -> ast.ForStmt:
        self.expect_kw("for")
        self.expect("(", "after 'for'", "write 'for (init; condition; update) { ... }'")
        self.tint_enter()
        init = None
        if not self.at(";"):
            it = self.tok
            if it.kind == KEYWORD and it.text in ("var", "let", "const"):
                init = self.parse_local_decl()
            else:
                init = self.parse_simple_statement()
            init.span = self.span_from(it)
        if not self.at(";"):
            self.unexpected("';' after the for-loop initializer")
        self.advance()
        cond = None if self.at(";") else self.parse_expression()
        if not self.at(";"):
            self.unexpected("';' after the for-loop condition")
        self.advance()
        update = None
        if not self.at(")"):
            ut = self.tok
            if ut.kind == KEYWORD and ut.text in ("var", "let", "const"):
                raise self.error("the update part of a for loop cannot declare anything", ut.span)
            update = self.parse_simple_statement()
            update.span = self.span_from(ut)
        if not self.at(")"):
            self.unexpected("')' to close the for-loop header")
        self.advance()
        self.tint_leave()
        if not self.at_block():
            self.unexpected("'{' after the for-loop header", "WGSL requires braces: 'for (...) { ... }'")
        body = self.parse_compound()
        return ast.ForStmt(init, cond, update, body, attrs, span=self.span_from(start))

    def parse_while(self, attrs, start: Token) -> ast.WhileStmt:
        self.expect_kw("while")
        cond = self.parse_expression()
        if not self.at_block():
            self.unexpected("'{' after the 'while' condition", self._template_hint() or "WGSL requires braces: 'while cond { ... }'")
        body = self.parse_compound()
        return ast.WhileStmt(cond, body, attrs, span=self.span_from(start))

    # ------------------------------------------------------------------ expressions

    def parse_expression(self) -> ast.Expr:
        self.enter()
        lhs = self.parse_unary()
        t = self.tok
        if t.kind == SYM and t.text in _BIT:
            op = t.text
            e = lhs
            while self.at(op):
                op_tok = self.advance()
                e = self._binary(op_tok, e, self.parse_unary())
        else:
            e = self._relational_rest(lhs)
            t = self.tok
            if t.kind == SYM and t.text in _LOGIC:
                op = t.text
                while self.at(op):
                    op_tok = self.advance()
                    e = self._binary(op_tok, e, self._relational_rest(self.parse_unary()))
        t = self.tok
        if t.kind == SYM and t.text in _BINARY:
            self._mixing_error(e, t)
        self.leave()
        return e

    def _binary(self, op_tok: Token, lhs: ast.Expr, rhs: ast.Expr) -> ast.BinaryExpr:
        e = ast.BinaryExpr(
            op_tok.text, lhs, rhs, span=op_tok.span, full_span=lhs.full_span.to(rhs.full_span)
        )
        # a chain `a + b + c + ...` is a tree as deep as it is long: later passes recurse over it
        e.chain = 1 + max(getattr(lhs, "chain", 0), getattr(rhs, "chain", 0))
        if e.chain > MAX_CHAIN:
            raise self.error(
                f"more than {MAX_CHAIN} binary operators in one expression",
                op_tok.span,
                "split the expression: sum parts into 'let' values first",
            )
        return e

    def _relational_rest(self, lhs: ast.Expr) -> ast.Expr:
        e = self._shift_rest(lhs)
        t = self.tok
        if t.kind == SYM and t.text in _REL:
            self.advance()
            e = self._binary(t, e, self._shift_rest(self.parse_unary()))
            t2 = self.tok
            if t2.kind == SYM and t2.text in _REL:
                self._mixing_error(e, t2)
        return e

    def _shift_rest(self, lhs: ast.Expr) -> ast.Expr:
        t = self.tok
        if t.kind == SYM and t.text in _SHIFT:
            self.advance()
            e = self._binary(t, lhs, self.parse_unary())
            t2 = self.tok
            if t2.kind == SYM and t2.text in (_SHIFT | _ADD | _MUL):
                self._mixing_error(e, t2)
            return e
        e = self._multiplicative_rest(lhs)
        while True:
            self._split_decrement()
            t = self.tok
            if t.kind == SYM and t.text in _ADD:
                self.advance()
                e = self._binary(t, e, self._multiplicative_rest(self.parse_unary()))
            else:
                break
        t = self.tok
        if t.kind == SYM and t.text in _SHIFT:
            self._mixing_error(e, t)
        return e

    def _split_decrement(self) -> None:
        """'--' (a decrement statement's token) where an expression continues or starts is two
        minus signs: 'b--b' is b - (-b) and '--b' is -(-b). The WGSL spec takes the longest token
        the parser state accepts, and Tint parses it so (gpuweb#4669). Split the token in two."""
        t = self.tok
        if t.kind == SYM and t.text == "--":
            first = Token(SYM, "-", t.offset, t.line, t.col, t.file, t.gap)
            second = Token(SYM, "-", t.offset + 1, t.line, t.col + 1, t.file, False)
            self.toks[self.i:self.i + 1] = [first, second]

    def _multiplicative_rest(self, e: ast.Expr) -> ast.Expr:
        while True:
            t = self.tok
            if t.kind == SYM and t.text in _MUL:
                self.advance()
                e = self._binary(t, e, self.parse_unary())
            else:
                return e

    def _mixing_error(self, left: ast.Expr, op_tok: Token):
        """``left`` (a binary expression) is followed by an operator WGSL does not rank against it."""
        r = op_tok.text
        lop = left.op if isinstance(left, ast.BinaryExpr) else None
        # Read the next operand, only to write the hint with the shader's own text.
        save = self.i
        right_text = None
        try:
            self.advance()
            right = self.parse_unary()
            right_text = right.full_span.text(self.source)
        except (WgslError, RecursionError):
            pass
        self.i = save
        if lop is None:  # cannot happen with the grammar above; keep a plain message
            raise self.error(f"unexpected operator '{r}'", op_tok.span)
        a = left.lhs.full_span.text(self.source)
        b = left.rhs.full_span.text(self.source)
        whole = left.full_span.text(self.source)
        c = right_text if right_text is not None else "..."
        if lop in _REL and r in _REL:
            message = f"comparisons cannot be chained: '{lop}' followed by '{r}'"
            hint = f"write '({whole}) && ({b} {r} {c})' to test both, or add parentheses"
            fallback = "write '(a < b) && (b < c)' to test both, or add parentheses"
        else:
            message = f"'{lop}' and '{r}' cannot be mixed without parentheses"
            hint = (
                f"WGSL gives them no relative precedence; write '({whole}) {r} {c}' "
                f"or '{a} {lop} ({b} {r} {c})'"
            )
            fallback = f"WGSL gives them no relative precedence; write '(a {lop} b) {r} c' or 'a {lop} (b {r} c)'"
        if len(hint) > 120 or "\n" in hint:
            hint = fallback
        raise self.error(message, op_tok.span, hint)

    def parse_unary(self) -> ast.Expr:
        t = self.tok
        if t.kind == SYM:
            if t.text in _UNARY:
                self.advance()
                self.enter()
                self.tint_enter()
                operand = self.parse_unary()
                self.tint_leave()
                self.leave()
                return ast.UnaryExpr(t.text, operand, span=self.span_from(t))
            if t.text == "--":      # not a token an expression can start with: two negations
                self._split_decrement()
                return self.parse_unary()
            if t.text == "++":
                raise self.error(
                    "'++' is not an operator in WGSL expressions", t.span,
                    "'x++;' is a statement, and WGSL has no unary '+': write 'x + 1' for the value",
                )
            if t.text in ("&&", "||"):
                self.unexpected("an expression")
        return self.parse_singular()

    def parse_singular(self) -> ast.Expr:
        start = self.tok
        e = self.parse_primary()
        while True:
            t = self.tok
            if t.kind != SYM:
                return e
            if t.text == "[":
                self.advance()
                self.tint_enter()
                index = self.parse_expression()
                self.tint_leave()
                self.expect("]", "to close the index")
                e = ast.IndexExpr(e, index, span=self.span_from(start))
            elif t.text == ".":
                self.advance()
                m = self.tok
                if m.kind not in (IDENT, KEYWORD):
                    self.unexpected("a member name or swizzle after '.'")
                self.advance()
                e = ast.MemberExpr(e, m.text, span=self.span_from(start), member_span=m.span)
            else:
                return e

    def parse_primary(self) -> ast.Expr:
        t = self.tok
        kind = t.kind
        if kind == IDENT:
            name = self.expect_ident()
            targs = self.parse_template_args() if self.tok.kind == TEMPLATE_START else []
            if self.at("("):
                args = self.parse_call_args(name.text)
                return ast.CallExpr(name.text, targs, args, span=self.span_from(t), name_span=name.span)
            span = self.span_from(t)
            if targs:
                self._tmpl_end_at = self.i
                self._tmpl_text = _clip(span.text(self.source))
            return ast.Ident(name.text, targs, span=span)
        if kind == INT:
            self.advance()
            return ast.IntLiteral(t.value, t.suffix, t.text, span=t.span)
        if kind == FLOAT:
            self.advance()
            return ast.FloatLiteral(t.text, t.suffix, span=t.span)
        if kind == KEYWORD:
            if t.text in ("true", "false"):
                self.advance()
                return ast.BoolLiteral(t.text == "true", span=t.span)
            raise self.error(f"expected an expression, found keyword '{t.text}'", t.span, self._template_hint())
        if t.is_sym("("):
            self.advance()
            self.tint_enter()
            inner = self.parse_expression()
            self.tint_leave()
            self.expect(")", "to close the parenthesis")
            return ast.ParenExpr(inner, span=self.span_from(t))
        self.unexpected("an expression")

    def parse_call_args(self, name: str) -> list[ast.Expr]:
        self.advance()
        self.tint_enter()
        args = []
        while not self.at(")"):
            args.append(self.parse_expression())
            if not self.accept(","):
                if not self.at(")"):
                    self.unexpected(f"',' or ')' in the arguments of '{name}'")
        self.advance()
        self.tint_leave()
        return args


def _clip(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
