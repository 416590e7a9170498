"""The WGSL syntax tree: what the source says, with no name resolution and no types.

Every node is a dataclass with a keyword-only ``span`` (a ``SourceSpan``) that starts at the
node's first token and ends after its last one; ``node.full_span`` is the same range, except for
``BinaryExpr`` whose ``span`` is the operator alone (where an error caret belongs) and whose
``full_span`` covers both operands. Declarations also carry ``name_span``.

Spans, names' spans and literal texts take no part in ``==``, so tests can compare trees built by
hand: ``BinaryExpr('+', Ident('a'), IntLiteral(1)) == parsed``. ``dump(node)`` prints an
expression or type as a compact s-expression.

Names are not resolved. A type is written as ``TypeExpr(name, args)``; inside template lists and
expressions, a (possibly templated) name is an ``Ident(name, template_args)``: ``array<vec4<f32>,
N>`` is ``TypeExpr('array', [Ident('vec4', [Ident('f32')]), Ident('N')])``. ``Ident.as_type()``
turns such an identifier into a ``TypeExpr`` once lowering knows that it names a type.
Enumerants (``storage``, ``read_write``, ``row_major``, the naga roles ``A``/``B``/``C``,
builtin names) are plain ``Ident`` nodes too.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterator, Optional, Union

from .errors import SourceSpan
from .lexer import float_literal_value


def _meta():
    """A keyword-only, default-None field left out of comparisons and repr (spans)."""
    return field(default=None, compare=False, repr=False, kw_only=True)


@dataclass
class Node:
    span: Optional[SourceSpan] = _meta()

    @property
    def full_span(self) -> Optional[SourceSpan]:
        """The whole range of the node (``span`` except for binary expressions)."""
        return self.span

    def children(self) -> Iterator["Node"]:
        """The direct child nodes, in source order."""
        for f in dataclasses.fields(self):
            if f.name in ("span", "full_span", "name_span", "member_span"):
                continue
            value = getattr(self, f.name)
            if isinstance(value, Node):
                yield value
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, Node):
                        yield item


def walk(node: Node) -> Iterator[Node]:
    """``node`` and all its descendants, depth first, in source order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(list(n.children())))


# =============================================================================================
# Attributes


@dataclass
class Attribute(Node):
    """``@name`` or ``@name(args...)``; args are expressions as written: ``@builtin(x)`` holds
    ``Ident('x')``, ``@workgroup_size(8, N)`` an IntLiteral and an Ident, and
    ``@diagnostic(off, chromium.unreachable_code)`` ``Ident('off')`` and
    ``MemberExpr(Ident('chromium'), 'unreachable_code')``."""

    name: str
    args: list["Expr"] = field(default_factory=list)
    name_span: Optional[SourceSpan] = _meta()


def find_attribute(attributes: list[Attribute], name: str) -> Optional[Attribute]:
    """The first attribute called ``name``, or None."""
    for a in attributes:
        if a.name == name:
            return a
    return None


def _attr_arg(attributes: list[Attribute], name: str) -> Optional["Expr"]:
    a = find_attribute(attributes, name)
    return a.args[0] if a is not None and a.args else None


def _ident_name(e: Optional["Expr"]) -> Optional[str]:
    if isinstance(e, Ident) and not e.template_args:
        return e.name
    return None


# =============================================================================================
# Expressions


@dataclass
class Expr(Node):
    pass


@dataclass
class IntLiteral(Expr):
    """An integer literal: value (any size), suffix '', 'i' or 'u'; text as written."""

    value: int
    suffix: str = ""
    text: str = field(default="", compare=False)


@dataclass
class FloatLiteral(Expr):
    """A float literal as written (``1.5e3``, ``0x1p-3h``); suffix '', 'f' or 'h'."""

    text: str
    suffix: str = ""

    @property
    def value(self) -> Fraction:
        """The exact value written (not yet rounded to any type)."""
        return float_literal_value(self.text)


@dataclass
class BoolLiteral(Expr):
    value: bool


@dataclass
class Ident(Expr):
    """A name, possibly with a template list: ``x``, ``f32``, ``vec4<f32>``, ``row_major``."""

    name: str
    template_args: list[Expr] = field(default_factory=list)

    def as_type(self) -> "TypeExpr":
        return TypeExpr(self.name, list(self.template_args), span=self.span)


@dataclass
class CallExpr(Expr):
    """``name(args)`` or ``name<template_args>(args)``: function calls, value constructors
    (``vec4<f32>(...)``, ``array<u32, 4>(...)``, ``S(...)``) and builtins (``bitcast<u32>(x)``,
    ``subgroupMatrixLoad<T, row_major>(p, o, s)``, ``coopLoad<T>(p, s)``)."""

    name: str
    template_args: list[Expr] = field(default_factory=list)
    args: list[Expr] = field(default_factory=list)
    name_span: Optional[SourceSpan] = _meta()


@dataclass
class UnaryExpr(Expr):
    """``op operand`` with op one of '-', '!', '~', '&' (address-of), '*' (indirection)."""

    op: str
    operand: Expr


@dataclass
class BinaryExpr(Expr):
    """``lhs op rhs``. ``span`` is the operator token; ``full_span`` the whole expression."""

    op: str
    lhs: Expr
    rhs: Expr
    full_span: Optional[SourceSpan] = _meta()


@dataclass
class MemberExpr(Expr):
    """``base.member``: a struct field or a swizzle (``.x``, ``.xyz``, ``.rgba``); lowering decides."""

    base: Expr
    member: str
    member_span: Optional[SourceSpan] = _meta()


@dataclass
class IndexExpr(Expr):
    base: Expr
    index: Expr


@dataclass
class ParenExpr(Expr):
    expr: Expr


def strip_parens(e: Expr) -> Expr:
    while isinstance(e, ParenExpr):
        e = e.expr
    return e


# =============================================================================================
# Types


@dataclass
class TypeExpr(Node):
    """A type as written: ``f32``, ``vec3u``, ``array<f32, N>``, ``ptr<storage, T, read_write>``,
    ``atomic<u32>``, ``coop_mat16x16<f16, A>``, ``subgroup_matrix_left<f16, 16, 8>``, ``S``.
    ``args`` are expressions; type arguments among them are ``Ident`` nodes."""

    name: str
    args: list[Expr] = field(default_factory=list)

    def as_ident(self) -> Ident:
        return Ident(self.name, list(self.args), span=self.span)


# =============================================================================================
# Statements


@dataclass
class Stmt(Node):
    pass


@dataclass
class CompoundStmt(Stmt):
    body: list[Stmt] = field(default_factory=list)
    attributes: list[Attribute] = field(default_factory=list)


@dataclass
class VarDecl(Stmt):
    """``var<template_args> name: type = init`` at module or function scope.

    ``template_args`` are as written (address space, access mode); ``address_space`` and
    ``access_mode`` read them when they are plain names.
    """

    name: str
    type: Optional[TypeExpr] = None
    init: Optional[Expr] = None
    template_args: list[Expr] = field(default_factory=list)
    attributes: list[Attribute] = field(default_factory=list)
    name_span: Optional[SourceSpan] = _meta()

    @property
    def address_space(self) -> Optional[str]:
        return _ident_name(self.template_args[0]) if self.template_args else None

    @property
    def access_mode(self) -> Optional[str]:
        return _ident_name(self.template_args[1]) if len(self.template_args) > 1 else None

    @property
    def group(self) -> Optional[Expr]:
        return _attr_arg(self.attributes, "group")

    @property
    def binding(self) -> Optional[Expr]:
        return _attr_arg(self.attributes, "binding")


@dataclass
class LetDecl(Stmt):
    name: str
    type: Optional[TypeExpr]
    init: Expr
    name_span: Optional[SourceSpan] = _meta()


@dataclass
class ConstDecl(Stmt):
    """``const name: type = init`` at module or function scope."""

    name: str
    type: Optional[TypeExpr]
    init: Expr
    name_span: Optional[SourceSpan] = _meta()


@dataclass
class OverrideDecl(Stmt):
    """``@id(n) override name: type = init`` (module scope only)."""

    name: str
    type: Optional[TypeExpr] = None
    init: Optional[Expr] = None
    attributes: list[Attribute] = field(default_factory=list)
    name_span: Optional[SourceSpan] = _meta()

    @property
    def id(self) -> Optional[Expr]:
        return _attr_arg(self.attributes, "id")


@dataclass
class AssignStmt(Stmt):
    """``lhs op rhs`` with op '=' or a compound one ('+=', '<<=', ...); ``lhs`` None is ``_ = rhs``."""

    op: str
    lhs: Optional[Expr]
    rhs: Expr

    @property
    def is_phony(self) -> bool:
        return self.lhs is None


@dataclass
class IncDecStmt(Stmt):
    """``target++`` or ``target--`` (op '++' or '--')."""

    op: str
    target: Expr


@dataclass
class IfStmt(Stmt):
    """``if cond {body} else ...``; ``orelse`` is another IfStmt (``else if``), a CompoundStmt or None."""

    cond: Expr
    body: CompoundStmt
    orelse: Optional[Union["IfStmt", CompoundStmt]] = None
    attributes: list[Attribute] = field(default_factory=list)


@dataclass
class DefaultSelector(Node):
    """The ``default`` among a case clause's selectors."""


@dataclass
class CaseClause(Node):
    """``case s1, s2, default: {body}`` or ``default: {body}``."""

    selectors: list[Union[Expr, DefaultSelector]]
    body: CompoundStmt

    @property
    def is_default(self) -> bool:
        return any(isinstance(s, DefaultSelector) for s in self.selectors)


@dataclass
class SwitchStmt(Stmt):
    selector: Expr
    clauses: list[CaseClause]
    attributes: list[Attribute] = field(default_factory=list)
    body_attributes: list[Attribute] = field(default_factory=list)


@dataclass
class BreakIfStmt(Stmt):
    """``break if cond;``: only as the last statement of a continuing block."""

    cond: Expr


@dataclass
class ContinuingStmt(Stmt):
    body: list[Stmt] = field(default_factory=list)
    break_if: Optional[BreakIfStmt] = None
    attributes: list[Attribute] = field(default_factory=list)


@dataclass
class LoopStmt(Stmt):
    """``loop { body continuing { ... break if c; } }``. Declarations of ``body`` are in scope
    in ``continuing``."""

    body: list[Stmt] = field(default_factory=list)
    continuing: Optional[ContinuingStmt] = None
    attributes: list[Attribute] = field(default_factory=list)
    body_attributes: list[Attribute] = field(default_factory=list)


@dataclass
class ForStmt(Stmt):
    """``for (init; cond; update) body``; each of the three may be None."""

    init: Optional[Stmt]
    cond: Optional[Expr]
    update: Optional[Stmt]
    body: CompoundStmt
    attributes: list[Attribute] = field(default_factory=list)


@dataclass
class WhileStmt(Stmt):
    cond: Expr
    body: CompoundStmt
    attributes: list[Attribute] = field(default_factory=list)


@dataclass
class BreakStmt(Stmt):
    pass


@dataclass
class ContinueStmt(Stmt):
    pass


@dataclass
class ReturnStmt(Stmt):
    value: Optional[Expr] = None


@dataclass
class DiscardStmt(Stmt):
    pass


@dataclass
class CallStmt(Stmt):
    call: CallExpr


@dataclass
class ConstAssert(Stmt):
    """``const_assert expr;`` at module or function scope."""

    expr: Expr


# =============================================================================================
# Module scope


@dataclass
class EnableDirective(Node):
    names: list[str]


@dataclass
class RequiresDirective(Node):
    names: list[str]


@dataclass
class DiagnosticDirective(Node):
    """``diagnostic(severity, rule);`` with rule ``name`` or ``name.name``."""

    severity: str
    rule: str


Directive = Union[EnableDirective, RequiresDirective, DiagnosticDirective]


@dataclass
class AliasDecl(Node):
    name: str
    type: TypeExpr
    name_span: Optional[SourceSpan] = _meta()


@dataclass
class StructMember(Node):
    name: str
    type: TypeExpr
    attributes: list[Attribute] = field(default_factory=list)
    name_span: Optional[SourceSpan] = _meta()

    @property
    def align(self) -> Optional[Expr]:
        return _attr_arg(self.attributes, "align")

    @property
    def size(self) -> Optional[Expr]:
        return _attr_arg(self.attributes, "size")

    @property
    def builtin(self) -> Optional[str]:
        return _ident_name(_attr_arg(self.attributes, "builtin"))

    @property
    def location(self) -> Optional[Expr]:
        return _attr_arg(self.attributes, "location")


@dataclass
class StructDecl(Node):
    name: str
    members: list[StructMember]
    name_span: Optional[SourceSpan] = _meta()


@dataclass
class Param(Node):
    name: str
    type: TypeExpr
    attributes: list[Attribute] = field(default_factory=list)
    name_span: Optional[SourceSpan] = _meta()

    @property
    def builtin(self) -> Optional[str]:
        return _ident_name(_attr_arg(self.attributes, "builtin"))

    @property
    def location(self) -> Optional[Expr]:
        return _attr_arg(self.attributes, "location")


_STAGES = ("compute", "vertex", "fragment")


@dataclass
class FnDecl(Node):
    name: str
    params: list[Param]
    return_type: Optional[TypeExpr]
    body: CompoundStmt
    attributes: list[Attribute] = field(default_factory=list)
    return_attributes: list[Attribute] = field(default_factory=list)
    name_span: Optional[SourceSpan] = _meta()

    @property
    def stage(self) -> Optional[str]:
        """'compute', 'vertex' or 'fragment' for an entry point, else None."""
        for a in self.attributes:
            if a.name in _STAGES:
                return a.name
        return None

    @property
    def workgroup_size(self) -> Optional[list[Expr]]:
        """The 1 to 3 expressions of ``@workgroup_size(x, y, z)``, or None."""
        a = find_attribute(self.attributes, "workgroup_size")
        return list(a.args) if a is not None else None


GlobalDecl = Union[VarDecl, ConstDecl, OverrideDecl, AliasDecl, StructDecl, FnDecl, ConstAssert]


@dataclass
class Module(Node):
    directives: list[Directive] = field(default_factory=list)
    decls: list[GlobalDecl] = field(default_factory=list)
    file: str = field(default="<input>", compare=False)
    source: str = field(default="", compare=False, repr=False)
    # where Tint's parser would stop at its recursion limit (emu parses on: WGSL sets none there)
    tint_too_deep: Optional[SourceSpan] = field(default=None, compare=False, repr=False)

    @property
    def enabled(self) -> list[str]:
        """Every extension named by an ``enable`` directive, in order."""
        return [n for d in self.directives if isinstance(d, EnableDirective) for n in d.names]

    def find(self, name: str) -> Optional[Node]:
        """The module-scope declaration called ``name`` (first one), or None."""
        for d in self.decls:
            if getattr(d, "name", None) == name:
                return d
        return None

    @property
    def functions(self) -> list[FnDecl]:
        return [d for d in self.decls if isinstance(d, FnDecl)]


# =============================================================================================
# Compact printing (for tests and debugging)


def dump(node: Optional[Node]) -> str:
    """Expressions and types as s-expressions: ``(+ a (* b 2u))``, ``(call vec4<f32> 1.0 x)``,
    ``(. v xyz)``, ``([] a i)``, ``(paren e)``, ``array<vec4<f32>, 4>``; other nodes as
    ``ClassName(field=..., ...)``."""
    if node is None:
        return "None"
    if isinstance(node, IntLiteral):
        return node.text or f"{node.value}{node.suffix}"
    if isinstance(node, FloatLiteral):
        return node.text
    if isinstance(node, BoolLiteral):
        return "true" if node.value else "false"
    if isinstance(node, (Ident, TypeExpr)):
        args = node.template_args if isinstance(node, Ident) else node.args
        if not args:
            return node.name
        return f"{node.name}<{', '.join(dump(a) for a in args)}>"
    if isinstance(node, CallExpr):
        callee = node.name
        if node.template_args:
            callee += f"<{', '.join(dump(a) for a in node.template_args)}>"
        return "(call " + " ".join([callee] + [dump(a) for a in node.args]) + ")"
    if isinstance(node, UnaryExpr):
        return f"({node.op} {dump(node.operand)})"
    if isinstance(node, BinaryExpr):
        return f"({node.op} {dump(node.lhs)} {dump(node.rhs)})"
    if isinstance(node, MemberExpr):
        return f"(. {dump(node.base)} {node.member})"
    if isinstance(node, IndexExpr):
        return f"([] {dump(node.base)} {dump(node.index)})"
    if isinstance(node, ParenExpr):
        return f"(paren {dump(node.expr)})"
    if isinstance(node, DefaultSelector):
        return "default"
    parts = []
    for f in dataclasses.fields(node):
        if not f.compare or f.name == "span":
            continue
        value = getattr(node, f.name)
        if isinstance(value, list):
            if not value:
                continue
            text = "[" + ", ".join(dump(v) if isinstance(v, Node) else repr(v) for v in value) + "]"
        elif isinstance(value, Node):
            text = dump(value)
        elif value is None:
            continue
        else:
            text = repr(value)
        parts.append(f"{f.name}={text}")
    return f"{type(node).__name__}({', '.join(parts)})"
