"""A tiny, safe integer expression language for user-defined lane maps.

Profile files may describe a lane map as two formulas, ``row`` and ``col``, in
terms of the subgroup invocation ``lane`` and the fragment index ``i``.  The
language is deliberately small so that a profile file can never run code:

    expr   := or
    or     := xor ('|' xor)*
    xor    := and ('^' and)*
    and    := shift ('&' shift)*
    shift  := sum (('<<' | '>>') sum)*
    sum    := prod (('+' | '-') prod)*
    prod   := unary (('*' | '//' | '%') unary)*
    unary  := ('-' | '~') unary | atom
    atom   := INT | NAME | '(' expr ')'

Precedence follows Python.  INT is decimal or ``0x`` hex.  NAME is one of the
names the caller allows (``lane`` and ``i``, plus read-only constants such as
``rows``, ``cols``, ``sg``).  Evaluation is vectorised: names may be numpy
integer arrays, and the result broadcasts like numpy.  Division and modulo
follow Python (floor) semantics; dividing by zero or shifting by a negative
amount is an error, never a silent value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Union

import numpy as np

from ..errors import EmuError

__all__ = ["FormulaError", "Formula", "parse_formula"]

MAX_SOURCE_CHARS = 400   # a lane-map formula is a one-liner; refuse essays
MAX_DEPTH = 40           # nesting limit keeps the recursive parser safe

_TOKEN = re.compile(r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)|([A-Za-z_][A-Za-z_0-9]*)|(//|<<|>>|[-+*%&|^~()]))")

_BINARY_LEVELS = [  # loosest first
    ("|",),
    ("^",),
    ("&",),
    ("<<", ">>"),
    ("+", "-"),
    ("*", "//", "%"),
]


class FormulaError(EmuError, ValueError):
    """A formula that does not parse or cannot be evaluated."""


@dataclass(frozen=True)
class _Num:
    value: int


@dataclass(frozen=True)
class _Name:
    name: str


@dataclass(frozen=True)
class _Unary:
    op: str
    arg: "_Node"


@dataclass(frozen=True)
class _Binary:
    op: str
    left: "_Node"
    right: "_Node"


_Node = Union[_Num, _Name, _Unary, _Binary]


def _tokenize(src: str):
    pos, out = 0, []
    while pos < len(src):
        if src[pos:].strip() == "":
            break
        m = _TOKEN.match(src, pos)
        if not m:
            bad = pos + len(src[pos:]) - len(src[pos:].lstrip())
            raise FormulaError(
                f"unexpected character {src[bad]!r} at column {bad + 1} of {src!r}; allowed: "
                "integers, names, ( ) and the operators + - * // % << >> & | ^ ~")
        if m.group(1) is not None:
            out.append(("int", int(m.group(1), 0), m.start(1)))
        elif m.group(2) is not None:
            out.append(("name", m.group(2), m.start(2)))
        else:
            out.append(("op", m.group(3), m.start(3)))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, src: str, names: frozenset[str]):
        self.src = src
        self.names = names
        self.toks = _tokenize(src)
        self.k = 0

    def _peek(self):
        return self.toks[self.k] if self.k < len(self.toks) else None

    def _fail(self, what: str):
        tok = self._peek()
        where = f"column {tok[2] + 1}" if tok else "the end"
        raise FormulaError(f"{what} at {where} of {self.src!r}")

    def parse(self) -> _Node:
        if not self.toks:
            raise FormulaError("empty formula")
        node = self._binary(0, 0)
        if self._peek() is not None:
            self._fail(f"unexpected {self._peek()[1]!r}")
        return node

    def _binary(self, level: int, depth: int) -> _Node:
        if depth > MAX_DEPTH:
            self._fail("formula nested too deeply")
        if level == len(_BINARY_LEVELS):
            return self._unary(depth)
        left = self._binary(level + 1, depth + 1)
        while True:
            tok = self._peek()
            if tok and tok[0] == "op" and tok[1] in _BINARY_LEVELS[level]:
                self.k += 1
                right = self._binary(level + 1, depth + 1)
                left = _Binary(tok[1], left, right)
            else:
                return left

    def _unary(self, depth: int) -> _Node:
        if depth > MAX_DEPTH:
            self._fail("formula nested too deeply")
        tok = self._peek()
        if tok is None:
            self._fail("expected a value")
        if tok[0] == "op" and tok[1] in ("-", "~"):
            self.k += 1
            return _Unary(tok[1], self._unary(depth + 1))
        if tok[0] == "int":
            self.k += 1
            return _Num(tok[1])
        if tok[0] == "name":
            if tok[1] not in self.names:
                raise FormulaError(
                    f"unknown name {tok[1]!r} at column {tok[2] + 1} of {self.src!r}; "
                    f"allowed names: {', '.join(sorted(self.names))}")
            self.k += 1
            return _Name(tok[1])
        if tok[0] == "op" and tok[1] == "(":
            self.k += 1
            node = self._binary(0, depth + 1)
            close = self._peek()
            if not (close and close[0] == "op" and close[1] == ")"):
                self._fail("expected ')'")
            self.k += 1
            return node
        self._fail(f"unexpected {tok[1]!r}")


class Formula:
    """A parsed formula; call :meth:`evaluate` with values for its names."""

    def __init__(self, source: str, names=("lane", "i")):
        if not isinstance(source, str):
            raise FormulaError(f"a formula must be a string, got {type(source).__name__}")
        if len(source) > MAX_SOURCE_CHARS:
            raise FormulaError(f"formula longer than {MAX_SOURCE_CHARS} characters")
        self.source = source
        self.names = frozenset(names)
        self._tree = _Parser(source, self.names).parse()

    def __repr__(self):
        return f"Formula({self.source!r})"

    def evaluate(self, **values) -> np.ndarray:
        missing = self.names - values.keys()
        used = _names_in(self._tree)
        if used & missing:
            raise FormulaError(f"no value given for {', '.join(sorted(used & missing))} in {self.source!r}")
        env = {k: np.asarray(v, dtype=np.int64) for k, v in values.items()}
        # int64 arithmetic; a lane-map value that overflowed would land outside
        # the matrix, which the lane map's own range check reports.
        return np.asarray(_eval(self._tree, env, self.source), dtype=np.int64)


def parse_formula(source: str, names=("lane", "i")) -> Formula:
    return Formula(source, names)


def _names_in(node: _Node) -> set[str]:
    if isinstance(node, _Name):
        return {node.name}
    if isinstance(node, _Unary):
        return _names_in(node.arg)
    if isinstance(node, _Binary):
        return _names_in(node.left) | _names_in(node.right)
    return set()


def _eval(node: _Node, env: Mapping[str, np.ndarray], src: str):
    if isinstance(node, _Num):
        if node.value >= 2**62:
            raise FormulaError(f"integer {node.value} too large in {src!r}")
        return np.int64(node.value)
    if isinstance(node, _Name):
        return env[node.name]
    if isinstance(node, _Unary):
        a = _eval(node.arg, env, src)
        return -a if node.op == "-" else ~a
    a = _eval(node.left, env, src)
    b = _eval(node.right, env, src)
    op = node.op
    if op in ("//", "%"):
        if np.any(np.asarray(b) == 0):
            raise FormulaError(f"division by zero in {src!r}")
        return a // b if op == "//" else a % b
    if op in ("<<", ">>"):
        bb = np.asarray(b)
        if np.any(bb < 0) or np.any(bb > 62):
            raise FormulaError(f"shift amount outside 0..62 in {src!r}")
        return a << b if op == "<<" else a >> b
    return {"+": np.add, "-": np.subtract, "*": np.multiply,
            "&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor}[op](a, b)
