"""A tiny, safe integer expression language for user-defined lane maps.

Profile files may describe a lane map as two formulas, ``row`` and ``col``, in terms of the
subgroup invocation ``lane`` and the fragment index ``i``: Python's integer expressions, parsed by
``ast`` and kept only if every node is on a short list (integers, the names the caller allows,
``( )``, unary ``- ~`` and binary ``+ - * // % << >> & | ^``), so that a profile file can never run
code. Nothing is handed to ``eval``: the tree is evaluated here, vectorised (names may be numpy
integer arrays, and the result broadcasts like numpy), in int64. Precedence, floor division and
modulo are Python's; dividing by zero or shifting by a negative amount is an error, never a
silent value.
"""

from __future__ import annotations

import ast

import numpy as np

from ..errors import EmuError

__all__ = ["FormulaError", "Formula", "parse_formula"]

MAX_SOURCE_CHARS = 400   # a lane-map formula is a one-liner; refuse essays
MAX_DEPTH = 40           # brackets nested deeper than this are refused

_BINARY = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.FloorDiv: np.floor_divide,
           ast.Mod: np.mod, ast.LShift: np.left_shift, ast.RShift: np.right_shift,
           ast.BitAnd: np.bitwise_and, ast.BitOr: np.bitwise_or, ast.BitXor: np.bitwise_xor}
_UNARY = {ast.USub: np.negative, ast.Invert: np.invert}
ALLOWED = "integers, names, ( ) and the operators + - * // % << >> & | ^ ~"

# what a refused node is, for the message
_WHAT = {ast.Call: "a function call", ast.Attribute: "an attribute", ast.Subscript: "an index",
         ast.Compare: "a comparison", ast.BoolOp: "and/or", ast.IfExp: "a conditional expression",
         ast.Lambda: "a lambda", ast.Pow: "**", ast.Div: "/ (use //)", ast.MatMult: "@",
         ast.UAdd: "unary +", ast.Not: "not", ast.NamedExpr: ":=", ast.JoinedStr: "a string",
         ast.List: "a list", ast.Tuple: "a tuple", ast.Set: "a set", ast.Dict: "a dict"}


class FormulaError(EmuError, ValueError):
    """A formula that does not parse or cannot be evaluated."""


def _check(src: str, names: frozenset[str]) -> ast.expr:
    """The formula's tree, every node on the list, or a FormulaError naming the first that is not."""
    if not src.strip():
        raise FormulaError("empty formula")
    depth = 0
    for c in src:
        depth += (c == "(") - (c == ")")
        if depth > MAX_DEPTH:
            raise FormulaError(f"formula nested too deeply (more than {MAX_DEPTH} brackets) in {src!r}")
    lead = len(src) - len(src.lstrip())          # ast reads the formula without its leading spaces
    try:
        tree = ast.parse(src.strip(), mode="eval").body
    except SyntaxError as e:
        raise FormulaError(f"{src!r} is not a formula ({e.msg} at column {lead + (e.offset or 1)}); allowed: "
                           f"{ALLOWED}") from None

    def refuse(node, what):
        at = lead + node.col_offset
        if isinstance(node, ast.BinOp):          # the operator's column, not its left operand's
            at = lead + node.left.end_col_offset
            while at < len(src) and (src[at].isspace() or src[at] == ")"):
                at += 1
        raise FormulaError(f"{what} at column {at + 1} of {src!r} is not allowed in a formula; allowed: {ALLOWED}")

    def visit(node):
        if isinstance(node, ast.BinOp):
            if type(node.op) not in _BINARY:
                refuse(node, _WHAT.get(type(node.op), type(node.op).__name__))
            visit(node.left)
            visit(node.right)
        elif isinstance(node, ast.UnaryOp):
            if type(node.op) not in _UNARY:
                refuse(node, _WHAT.get(type(node.op), type(node.op).__name__))
            visit(node.operand)
        elif isinstance(node, ast.Constant):
            if type(node.value) is not int:
                refuse(node, f"the constant {node.value!r}")
        elif isinstance(node, ast.Name):
            if node.id not in names:
                raise FormulaError(f"unknown name {node.id!r} at column {lead + node.col_offset + 1} of {src!r}; "
                                   f"allowed names: {', '.join(sorted(names))}")
        else:
            refuse(node, _WHAT.get(type(node), type(node).__name__))
    visit(tree)
    return tree


class Formula:
    """A parsed formula; call :meth:`evaluate` with values for its names."""

    def __init__(self, source: str, names=("lane", "i")):
        if not isinstance(source, str):
            raise FormulaError(f"a formula must be a string, got {type(source).__name__}")
        if len(source) > MAX_SOURCE_CHARS:
            raise FormulaError(f"formula longer than {MAX_SOURCE_CHARS} characters")
        self.source = source
        self.names = frozenset(names)
        self._tree = _check(source, self.names)
        self._used = {n.id for n in ast.walk(self._tree) if isinstance(n, ast.Name)}

    def __repr__(self):
        return f"Formula({self.source!r})"

    def evaluate(self, **values) -> np.ndarray:
        missing = self._used - values.keys()
        if missing:
            raise FormulaError(f"no value given for {', '.join(sorted(missing))} in {self.source!r}")
        env = {k: np.asarray(v, dtype=np.int64) for k, v in values.items()}
        # int64 arithmetic; a lane-map value that overflowed would land outside
        # the matrix, which the lane map's own range check reports.
        return np.asarray(_eval(self._tree, env, self.source), dtype=np.int64)


def parse_formula(source: str, names=("lane", "i")) -> Formula:
    return Formula(source, names)


def _eval(node: ast.expr, env, src: str):
    if isinstance(node, ast.Constant):
        if node.value >= 2**62:
            raise FormulaError(f"integer {node.value} too large in {src!r}")
        return np.int64(node.value)
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_eval(node.operand, env, src))
    a, b = _eval(node.left, env, src), _eval(node.right, env, src)
    op = type(node.op)
    if op in (ast.FloorDiv, ast.Mod) and np.any(np.asarray(b) == 0):
        raise FormulaError(f"division by zero in {src!r}")
    if op in (ast.LShift, ast.RShift) and (np.any(np.asarray(b) < 0) or np.any(np.asarray(b) > 62)):
        raise FormulaError(f"shift amount outside 0..62 in {src!r}")
    return _BINARY[op](a, b)
