"""WGSL lexer, with the spec's template list discovery.

``tokenize(source, file)`` returns the token list (ending with an ``EOF`` token). Blankspace and
comments (line comments and nested block comments) are dropped; each token knows whether blankspace
or a comment came before it (``gap``).

Template lists. WGSL spells template brackets with ``<`` and ``>``, and the spec (section "Template
Lists") decides which ``<``/``>`` code points are template brackets *before* parsing, with a small
stack algorithm ("template list discovery"). We run that algorithm on a first tokenization, reading
operator tokens code point by code point the way the spec reads text, and then tokenize again with
the discovered brackets: a template ``<`` becomes a ``TEMPLATE_START`` token, a template ``>`` a
``TEMPLATE_END`` token (so ``>>`` in ``array<vec4<f32>>`` splits into two template ends, and
``>=`` in ``a<b>=c`` into an end and ``=``). Every other ``<``/``>`` is an ordinary operator.

Literals keep their text. Integers also carry their value (a Python int, unbounded: range checks
belong to lowering) and suffix ('', 'i' or 'u'); floats carry their suffix ('', 'f' or 'h') and
the lowering rounds the text (``float_literal_value`` gives the exact value as a Fraction).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Iterable

from .errors import LINE_BREAK_RE, SourceSpan, WgslError

__all__ = [
    "Token",
    "tokenize",
    "discover_template_lists",
    "float_literal_value",
    "KEYWORDS",
    "RESERVED_WORDS",
    "IDENT",
    "KEYWORD",
    "INT",
    "FLOAT",
    "SYM",
    "TEMPLATE_START",
    "TEMPLATE_END",
    "EOF",
]

# Token kinds.
IDENT = "ident"  # identifiers, reserved words included (flagged), not keywords
KEYWORD = "keyword"
INT = "int"
FLOAT = "float"
SYM = "sym"  # operators and punctuation, '_' included
TEMPLATE_START = "template_start"
TEMPLATE_END = "template_end"
EOF = "eof"

KEYWORDS = frozenset(
    """alias break case const const_assert continue continuing default diagnostic discard else
    enable false fn for if let loop override requires return struct switch true var while""".split()
)

# Spec section "Reserved Words": not usable as identifiers (they may still name struct members,
# which the grammar spells with ident_pattern_token).
RESERVED_WORDS = frozenset(
    """NULL Self abstract active alignas alignof as asm asm_fragment async attribute auto await
    become cast catch class co_await co_return co_yield coherent column_major common compile
    compile_fragment concept const_cast consteval constexpr constinit crate debugger decltype
    delete demote demote_to_helper do dynamic_cast enum explicit export extends extern external
    fallthrough filter final finally friend from fxgroup get goto groupshared highp impl
    implements import inline instanceof interface layout lowp macro macro_rules match mediump
    meta mod module move mut mutable namespace new nil noexcept noinline nointerpolation
    non_coherent noncoherent noperspective null nullptr of operator package packoffset partition
    pass patch pixelfragment precise precision premerge priv protected pub public readonly ref
    regardless register reinterpret_cast require resource restrict self set shared sizeof smooth
    snorm static static_assert static_cast std subroutine super target template this
    thread_local throw trait try type typedef typeid typename typeof union unless unorm unsafe
    unsized use using varying virtual volatile wgsl where with writeonly yield""".split()
)


class Token:
    """One token. ``end_col`` is exclusive; tokens never span lines."""

    __slots__ = ("kind", "text", "value", "suffix", "offset", "line", "col", "gap", "file")

    def __init__(self, kind, text, offset, line, col, file, gap, value=None, suffix=""):
        self.kind = kind
        self.text = text
        self.value = value
        self.suffix = suffix
        self.offset = offset
        self.line = line
        self.col = col
        self.gap = gap
        self.file = file

    @property
    def end_offset(self) -> int:
        return self.offset + len(self.text)

    @property
    def end_col(self) -> int:
        return self.col + len(self.text)

    @property
    def end_line(self) -> int:
        return self.line

    @property
    def span(self) -> SourceSpan:
        return SourceSpan(self.file, self.line, self.col, self.line, self.col + max(1, len(self.text)))

    @property
    def reserved(self) -> bool:
        """An identifier that the spec forbids as a name (reserved word, or starts with '__')."""
        return self.kind == IDENT and (self.text in RESERVED_WORDS or self.text.startswith("__"))

    def is_sym(self, text: str) -> bool:
        return self.kind == SYM and self.text == text

    def is_kw(self, text: str) -> bool:
        return self.kind == KEYWORD and self.text == text

    def describe(self) -> str:
        """How error messages name this token."""
        if self.kind == EOF:
            return "end of file"
        if self.kind == KEYWORD:
            return f"keyword '{self.text}'"
        if self.kind in (TEMPLATE_START, TEMPLATE_END):
            return f"'{self.text}' (template list)"
        return f"'{self.text}'"

    def __repr__(self) -> str:
        return f"Token({self.kind}, {self.text!r}, {self.line}:{self.col})"


# --------------------------------------------------------------------------------------------
# Regular expressions

_BLANK_RE = re.compile("[ \t\n\u000b\u000c\r\u0085\u200e\u200f\u2028\u2029]+")
_WORD_RE = re.compile(r"[^\W\d]\w*")  # candidate; confirmed with str.isidentifier (XID rules)
_WORD_CONT_RE = re.compile(r"\w*")

# (naga's f64 suffix 'lf' beside WGSL's 'f' and 'h')
_HEX_FLOAT = (
    r"0[xX](?:[0-9a-fA-F]*\.[0-9a-fA-F]+|[0-9a-fA-F]+\.[0-9a-fA-F]*)(?:[pP][+-]?[0-9]+(?:lf|[fh])?)?"
    r"|0[xX][0-9a-fA-F]+[pP][+-]?[0-9]+(?:lf|[fh])?"
)
_HEX_INT = r"0[xX][0-9a-fA-F]+(?:l[iu]|[iu])?"
_DEC_FLOAT = (
    r"[0-9]*\.[0-9]+(?:[eE][+-]?[0-9]+)?(?:lf|[fh])?"
    r"|[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?(?:lf|[fh])?"
    r"|[0-9]+[eE][+-]?[0-9]+(?:lf|[fh])?"
    r"|0(?:lf|[fh])|[1-9][0-9]*(?:lf|[fh])"
)
_DEC_INT = r"0(?:l[iu]|[iu])?|[1-9][0-9]*(?:l[iu]|[iu])?"
_NUMBER_RE = re.compile(
    f"(?P<hexfloat>{_HEX_FLOAT})|(?P<hexint>{_HEX_INT})|(?P<float>{_DEC_FLOAT})|(?P<int>{_DEC_INT})"
)

_OPERATORS = [
    "<<=", ">>=",
    "&&", "||", "++", "--", "->", "<<", ">>", "<=", ">=", "==", "!=",
    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
    "-", "+", "*", "/", "%", "&", "|", "^", "~", "!", "=", "<", ">",
    "(", ")", "[", "]", "{", "}", ",", ".", ":", ";", "@",
]
_DIGITS = frozenset("0123456789")
_WORD_TAIL_RE = re.compile(r"\w+")
_OP_RE = re.compile("|".join(re.escape(op) for op in _OPERATORS))


def _is_ident_continue(ch: str) -> bool:
    return ("a" + ch).isidentifier()


# --------------------------------------------------------------------------------------------
# Scanning


class _Lines:
    """Maps offsets to (line, col), moving forward only (tokens come in order)."""

    def __init__(self, source: str):
        self.starts = [0] + [m.end() for m in LINE_BREAK_RE.finditer(source)]
        self.index = 0

    def locate(self, offset: int) -> tuple[int, int]:
        starts = self.index
        n = len(self.starts)
        while starts + 1 < n and self.starts[starts + 1] <= offset:
            starts += 1
        self.index = starts
        return starts + 1, offset - self.starts[starts] + 1


def _error_at(lines: _Lines, file: str, offset: int, length: int, message: str, hint=None):
    line, col = lines.locate(offset)
    return WgslError(message, SourceSpan(file, line, col, line, col + max(1, length)), hint)


def _scan(
    source: str,
    file: str,
    template_starts: frozenset = frozenset(),
    template_ends: frozenset = frozenset(),
) -> list[Token]:
    tokens: list[Token] = []
    lines = _Lines(source)
    pos = 0
    n = len(source)
    gap = False
    append = tokens.append
    while pos < n:
        ch = source[pos]
        m = _BLANK_RE.match(source, pos)
        if m:
            pos = m.end()
            gap = True
            continue
        if ch == "/" and pos + 1 < n:
            nxt = source[pos + 1]
            if nxt == "/":
                m = LINE_BREAK_RE.search(source, pos)
                pos = m.start() if m else n
                gap = True
                continue
            if nxt == "*":
                pos = _skip_block_comment(source, pos, lines, file)
                gap = True
                continue
        line, col = lines.locate(pos)
        # Numbers: a digit, or '.' followed by a digit.
        if ch in _DIGITS or (ch == "." and pos + 1 < n and source[pos + 1] in _DIGITS):
            m = _NUMBER_RE.match(source, pos)
            text = m.group()
            end = m.end()
            if end < n and (_is_ident_continue(source[end])):
                # e.g. 012, 1x, 1.0u, 0x1p
                rest = _WORD_TAIL_RE.match(source, end)
                bad = source[pos:(rest.end() if rest else end + 1)]
                if m.lastgroup == "int" and text == "0" and source[end].isdigit():
                    raise WgslError(
                        f"invalid integer literal '{bad}': leading zeros are not allowed",
                        SourceSpan(file, line, col, line, col + len(bad)),
                        f"write '{bad.lstrip('0') or '0'}' (WGSL has no octal literals)",
                    )
                if m.lastgroup in ("float", "hexfloat") and not text[-1:].isalpha() and source[end] in "iu":
                    hint = (
                        f"'{source[end]}' is an integer suffix but '{text}' is a float; "
                        f"use 'f' or 'h' for a float, or write the integer without a fraction"
                    )
                else:
                    hint = (
                        "integer suffixes are 'i' and 'u' (naga: 'li', 'lu'), float suffixes 'f' and 'h' "
                        "(naga: 'lf'); "
                        "separate a literal from a following name with a space or an operator"
                    )
                raise WgslError(
                    f"invalid numeric literal '{bad}'",
                    SourceSpan(file, line, col, line, col + len(bad)),
                    hint,
                )
            kind = m.lastgroup
            if kind in ("int", "hexint"):
                # naga's 64-bit suffixes li and lu, else WGSL's i and u
                suffix = text[-2:] if text[-2:] in ("li", "lu") else text[-1] if text[-1] in "iu" else ""
                digits = text[:-len(suffix)] if suffix else text
                # (Python refuses int() of more than 4300 decimal digits; no such literal fits anyway)
                value = int(digits, 16) if kind == "hexint" else int(digits, 10) if len(digits) < 100 else 10 ** 100
                append(Token(INT, text, pos, line, col, file, gap, value, suffix))
            else:
                suffix = ""
                if kind == "float":
                    suffix = "lf" if text.endswith("lf") else text[-1] if text[-1] in "fh" else ""
                elif re.search(r"[pP][+-]?[0-9]+(?:lf|[fh])$", text):
                    suffix = "lf" if text.endswith("lf") else text[-1]
                if not _float_fits(text):
                    raise WgslError(
                        f"float literal '{text}' is out of range: it is larger than any float type holds",
                        SourceSpan(file, line, col, line, col + len(text)),
                        "write a smaller value (the largest f64 is about 1.8e308)",
                    )
                append(Token(FLOAT, text, pos, line, col, file, gap, None, suffix))
            pos = end
            gap = False
            continue
        m = _WORD_RE.match(source, pos)
        if m or (ch >= "\x80" and ch.isidentifier()):  # e.g. U+212E: XID_Start but not \w
            end = m.end() if m else _WORD_CONT_RE.match(source, pos + 1).end()
            # \w misses some XID_Continue characters (combining marks, connector punctuation)
            while end < n and source[end] >= "\x80" and _is_ident_continue(source[end]):
                end = _WORD_CONT_RE.match(source, end + 1).end()
            text = source[pos:end]
            if not text.isidentifier():
                if not text[:1].isidentifier():
                    raise WgslError(
                        f"invalid character '{ch}' (U+{ord(ch):04X}): a name cannot start with it",
                        SourceSpan(file, line, col, line, col + 1),
                    )
                k = 1           # the longest name prefix, a character at a time (linear)
                while k < len(text) and ("a" + text[k]).isidentifier():
                    k += 1
                text = text[:k]
            if text == "_":
                append(Token(SYM, "_", pos, line, col, file, gap))
            elif text in KEYWORDS:
                append(Token(KEYWORD, text, pos, line, col, file, gap))
            else:
                append(Token(IDENT, text, pos, line, col, file, gap))
            pos += len(text)
            gap = False
            continue
        if pos in template_starts:
            append(Token(TEMPLATE_START, "<", pos, line, col, file, gap))
            pos += 1
            gap = False
            continue
        if pos in template_ends:
            append(Token(TEMPLATE_END, ">", pos, line, col, file, gap))
            pos += 1
            gap = False
            continue
        m = _OP_RE.match(source, pos)
        if m:
            text = m.group()
            # A template bracket discovered inside this operator's text cuts it short.
            for k in range(1, len(text)):
                if pos + k in template_starts or pos + k in template_ends:
                    text = _OP_RE.match(source[pos:pos + k]).group()
                    break
            append(Token(SYM, text, pos, line, col, file, gap))
            pos += len(text)
            gap = False
            continue
        if ch == "\ufeff":
            raise WgslError(
                "a byte order mark (U+FEFF) is not allowed in WGSL source",
                SourceSpan(file, line, col, line, col + 1),
                "save the file as UTF-8 without a BOM",
            )
        if ch == "\\" or ch in "\"'`#$?":
            what = f"'{ch}'"
        else:
            what = f"'{ch}' (U+{ord(ch):04X})" if ch.isprintable() else f"U+{ord(ch):04X}"
        raise WgslError(f"invalid character {what}", SourceSpan(file, line, col, line, col + 1))
    line, col = lines.locate(n)
    tokens.append(Token(EOF, "", n, line, col, file, gap))
    return tokens


_COMMENT_MARK_RE = re.compile(r"/\*|\*/")


def _skip_block_comment(source: str, pos: int, lines: _Lines, file: str) -> int:
    """Skip a (nested) block comment starting at pos; returns the offset after it."""
    start = pos
    depth = 0
    while True:
        m = _COMMENT_MARK_RE.search(source, pos)
        if m is None:
            raise _error_at(
                lines, file, start, 2, "unterminated block comment",
                "close it with '*/' (block comments nest: each '/*' needs its own '*/')",
            )
        depth += 1 if m.group() == "/*" else -1
        pos = m.end()
        if depth == 0:
            return pos


# --------------------------------------------------------------------------------------------
# Template list discovery (WGSL spec, "Template Lists")


def discover_template_lists(tokens: Iterable[Token]) -> tuple[frozenset, frozenset]:
    """Run the spec's template list discovery over a first tokenization.

    Returns the source offsets of the '<' and '>' code points that are template list brackets.
    Identifiers and keywords count as the spec's ident_pattern_token; literals are skipped;
    operator tokens are read code point by code point, where "the next code point" must follow
    with no blankspace or comment between (the token's ``gap``).
    """
    # Units: ("w", offset) for words, ("l", offset) for literals / '_', (char, offset, gap).
    units: list[tuple] = []
    for t in tokens:
        if t.kind == KEYWORD and t.text in ("true", "false"):
            units.append(("l", t.offset, t.gap))  # bool literals are skipped like other literals
        elif t.kind in (IDENT, KEYWORD):
            units.append(("w", t.offset, t.gap))
        elif t.kind in (INT, FLOAT, EOF) or t.text == "_":
            units.append(("l", t.offset, t.gap))
        else:
            for k, c in enumerate(t.text):
                units.append((c, t.offset + k, t.gap if k == 0 else False))

    starts: set = set()
    ends: set = set()
    pending: list[tuple[int, int]] = []  # (offset of '<', nesting depth)
    depth = 0
    i = 0
    n = len(units)

    def follows(j: int, c: str) -> bool:
        return j < n and units[j][0] == c and not units[j][2]

    while i < n:
        c = units[i][0]
        if c == "w":
            i += 1
            if i < n and units[i][0] == "<":  # blankspace/comments between are fine here
                pending.append((units[i][1], depth))
                i += 1
                if follows(i, "<") or follows(i, "="):  # '<<' or '<=': not a template list
                    pending.pop()
                    i += 1
            continue
        if c == "l":
            i += 1
            continue
        if c == ">":
            if pending and pending[-1][1] == depth:
                start, _ = pending.pop()
                starts.add(start)
                ends.add(units[i][1])
                i += 1
                continue
            i += 1
            if follows(i, "="):  # '>='
                i += 1
            continue
        if c in "([":
            depth += 1
            i += 1
            continue
        if c in ")]":
            while pending and pending[-1][1] >= depth:
                pending.pop()
            depth = max(0, depth - 1)
            i += 1
            continue
        if c == "!":
            i += 1
            if follows(i, "="):  # '!='
                i += 1
            continue
        if c == "=":
            if follows(i + 1, "="):  # '=='
                i += 2
                continue
            depth = 0  # assignment
            pending.clear()
            i += 1
            continue
        if c in ";{:":
            depth = 0
            pending.clear()
            i += 1
            continue
        if c in "&|" and follows(i + 1, c):  # '&&' or '||'
            while pending and pending[-1][1] >= depth:
                pending.pop()
            i += 2
            continue
        i += 1
    return frozenset(starts), frozenset(ends)


def tokenize(source: str, file: str = "<input>") -> list[Token]:
    """Tokens of ``source`` with template brackets resolved; the last token is EOF."""
    first = _scan(source, file)
    if not any(t.kind == SYM and ("<" in t.text or ">" in t.text) for t in first):
        return first
    starts, ends = discover_template_lists(first)
    if not starts:
        return first
    return _scan(source, file, starts, ends)


# --------------------------------------------------------------------------------------------
# Float literal values

_DEC_PARTS_RE = re.compile(r"([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?")
_HEX_PARTS_RE = re.compile(r"0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?[0-9]+))?")
_MAX_EXPONENT = 100_000


def _float_fits(text: str) -> bool:
    """Whether the literal's value fits in f64 (abstract floats are f64; WGSL rejects the rest)."""
    try:
        float(float_literal_value(text))
    except (ValueError, OverflowError):
        return False
    return True


def float_literal_value(text: str) -> Fraction:
    """The exact value of a WGSL float literal's text (suffix allowed), as a Fraction.

    Raises ValueError for an exponent so large (beyond 100000) that no WGSL type could hold the
    result; one below -100000 gives zero.
    """
    body = text
    is_hex = body[:2] in ("0x", "0X")
    if body and body[-1] in "fh" and (not is_hex or re.search(r"[pP][+-]?[0-9]+(?:lf|[fh])$", body)):
        body = body[:-2] if body.endswith("lf") else body[:-1]
    if is_hex:
        m = _HEX_PARTS_RE.fullmatch(body)
        base, radix_digits = 2, 16
    else:
        m = _DEC_PARTS_RE.fullmatch(body)
        base, radix_digits = 10, 10
    if not m:
        raise ValueError(f"not a float literal: {text!r}")
    whole, frac, exp = m.group(1) or "", m.group(2) or "", m.group(3)
    e = int(exp) if exp and len(exp) < 20 else 0 if not exp else \
        (-1 if exp[0] == "-" else 1) * (_MAX_EXPONENT + 1)      # (so large int() may refuse it)
    digits = (whole + frac).lstrip("0")
    if radix_digits == 10 and len(digits) > 800:
        # 800 significant digits and a sticky one round like all of them (f64 needs < 770), and
        # Python's int() refuses more than 4300 decimal digits
        e += len(digits) - 801 - len(frac)
        digits, frac = digits[:800] + ("1" if digits[800:].strip("0") else "0"), ""
    mant = int(digits, radix_digits) if digits else 0
    if e < -_MAX_EXPONENT or mant == 0:
        return Fraction(0)              # below every type's smallest subnormal
    if e > _MAX_EXPONENT:
        raise ValueError(f"exponent out of range in {text!r}")
    value = Fraction(mant, radix_digits ** len(frac))
    if e >= 0:
        value *= base ** e
    else:
        value /= base ** (-e)
    return value
