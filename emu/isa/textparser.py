"""Reads the text form of the IR (what `emu.isa.printer.print_module` writes) back into an
`ir.Module`, so that `print_module(parse_ir(print_module(m))) == print_module(m)`.

The text is line-oriented; see the printer's docstring for the format. This parser checks syntax
and names only (types spelled right, struct names defined, every `%N` defined once in the module
and used inside its function); whether the instructions make sense is the verifier's job, so a
module with an unknown op or a wrong operand count parses and then fails `verify`.

Besides what the printer writes, the parser accepts: header items in any order, blank lines,
whole-line `;` comments, `; FILE:LINE:COL` locations on `func`, `global` and `override` lines
(kept as their `loc`), and decimal floats in attributes. Errors are `IRParseError` (an
`EmuError`) located at the IR text's own file:line:col.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ..errors import EmuError
from .ir import Block, Function, Global, Inst, Loc, Module, Override, Value
from .ops import OP
from .types import (ACCESS, ROLES, SCALARS, SPACES, VOID, ArrayType, AtomicType, CoopMatrixType,
                    MatrixType, Member, PointerType, SamplerType, ScalarType, STORAGE_ACCESS, StructType,
                    TEXTURE_NAMES, TextureType, TupleType, Type, VectorType, is_handle)
from ..numerics.texels import STORAGE_FORMATS


class IRParseError(EmuError):
    """A syntax or name error in IR text, located in the IR text itself."""


# the largest value id (%N) IR text may use: the executor keeps a slot per id up to the largest
MAX_VALUE_ID = (1 << 20) - 1


# -- tokens ----------------------------------------------------------------------------------------

@dataclass
class Tok:
    kind: str    # str value num hexfloat dims ident name punct arrow comment end
    text: str
    col: int     # 1-based
    value: object = None


# Names are WGSL identifiers (XID_Start XID_Continue*); \w misses some of those (combining marks,
# U+212E), so any non-ASCII character that is not blank counts as a name character here.
_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<comment>;.*)
  | (?P<value>%\d+)
  | (?P<name>@(?:[^\W\d]|[^\x00-\x7f\s])(?:\w|[^\x00-\x7f\s])*)
  | (?P<arrow>->)
  | (?P<hexfloat>[+-]?0[xX][0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?[pP][+-]?\d+)
  | (?P<dims>\d+x\d+(?![\w.]))
  | (?P<num>[+-]?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?(?![\w.]))
  | (?P<neginf>-inf(?!\w))
  | (?P<ident>(?:[^\W\d]|[^\x00-\x7f\s])(?:\w|[^\x00-\x7f\s])*)
  | (?P<punct>[<>(){}\[\],:=.])
""", re.VERBOSE)


def _tokenize(line: str, lineno: int, file: str) -> list[Tok]:
    toks, pos = [], 0
    while pos < len(line):
        m = _TOKEN.match(line, pos)
        if m is None:
            ch = line[pos]
            hint = "strings need a closing '\"'" if ch == '"' else None
            raise IRParseError(f"unexpected character {ch!r} in IR text", Loc(file, lineno, pos + 1),
                               hint=hint)
        kind, text, col = m.lastgroup, m.group(), pos + 1
        pos = m.end()
        if kind == "ws":
            continue
        if kind == "str":
            try:
                toks.append(Tok("str", text, col, json.loads(text)))
            except json.JSONDecodeError as e:
                raise IRParseError(f"bad string literal: {e.msg}", Loc(file, lineno, col)) from None
            continue
        if kind == "neginf":
            toks.append(Tok("float", text, col, float("-inf")))
            continue
        if kind in ("num", "hexfloat"):
            try:
                if kind == "hexfloat":
                    toks.append(Tok("float", text, col, float.fromhex(text)))
                elif re.fullmatch(r"[+-]?\d+", text):
                    toks.append(Tok("int", text, col, int(text)))
                else:
                    toks.append(Tok("float", text, col, float(text)))
            except (OverflowError, ValueError):     # beyond f64, or an integer of > 4300 digits
                raise IRParseError(f"number {text[:40]}{'...' if len(text) > 40 else ''} is out of range",
                                   Loc(file, lineno, col)) from None
            continue
        if kind == "value":
            toks.append(Tok("value", text, col, int(text[1:])))
            continue
        if kind == "name":
            toks.append(Tok("name", text, col, text[1:]))
            continue
        toks.append(Tok(kind, text, col, text))
    toks.append(Tok("end", "", len(line) + 1))
    return toks


_LOC = re.compile(r"(.*):(\d+):(\d+)")


# -- per-line cursor -------------------------------------------------------------------------------

class _Line:
    """The tokens of one line and a cursor over them."""

    def __init__(self, p: "_Parser", lineno: int, text: str):
        self.p, self.lineno, self.text = p, lineno, text
        toks = _tokenize(text, lineno, p.file)
        self.comment: Tok | None = None
        if len(toks) >= 2 and toks[-2].kind == "comment":
            self.comment = toks.pop(-2)
        self.toks, self.i = toks, 0

    # cursor
    def peek(self, k: int = 0) -> Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> Tok:
        t = self.peek()
        if t.kind != "end":
            self.i += 1
        return t

    def at(self, text: str) -> bool:
        t = self.peek()
        return t.kind in ("punct", "ident", "arrow") and t.text == text

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.i += 1
            return True
        return False

    def loc(self, tok: Tok | None = None) -> Loc:
        return Loc(self.p.file, self.lineno, (tok or self.peek()).col)

    def fail(self, msg: str, tok: Tok | None = None, hint: str | None = None):
        raise IRParseError(msg, self.loc(tok), hint=hint)

    @staticmethod
    def describe(t: Tok) -> str:
        return "the end of the line" if t.kind == "end" else f"'{t.text}'"

    def expect(self, text: str, what: str | None = None) -> Tok:
        t = self.peek()
        if not self.at(text):
            self.fail(f"expected '{text}'{' ' + what if what else ''}, found {self.describe(t)}")
        return self.next()

    def expect_kind(self, kind: str, what: str) -> Tok:
        t = self.peek()
        if t.kind != kind:
            self.fail(f"expected {what}, found {self.describe(t)}")
        return self.next()

    def ident(self, what: str) -> str:
        return self.expect_kind("ident", what).text

    def int_(self, what: str) -> int:
        return self.expect_kind("int", what).value

    def end(self):
        t = self.peek()
        if t.kind != "end":
            self.fail(f"unexpected {self.describe(t)} at the end of the line")

    def source_loc(self) -> Loc | None:
        """The `; FILE:LINE:COL` comment of this line as an ir.Loc (None when absent)."""
        if self.comment is None:
            return None
        body = self.comment.text[1:]
        if body.startswith(" "):
            body = body[1:]
        m = _LOC.fullmatch(body.rstrip())
        if m is None:
            self.fail(f"expected a source location FILE:LINE:COL after ';', found {body.strip()!r}",
                      self.comment, hint="only a location may follow an instruction; put other "
                                         "comments on a line of their own")
        return Loc(m.group(1), int(m.group(2)), int(m.group(3)))

    def no_comment(self, what: str):
        if self.comment is not None:
            self.fail(f"{what} lines take no ';' location", self.comment)

    # -- types ----------------------------------------------------------------------------------
    def type(self) -> Type:
        t = self.peek()
        if t.kind != "ident":
            self.fail(f"expected a type, found {self.describe(t)}")
        name = self.next().text
        if name in SCALARS:
            return SCALARS[name]
        if name == "void":
            return VOID
        m = re.fullmatch(r"vec(\d+)", name)
        if m:
            n = int(m.group(1))
            if n not in (2, 3, 4):
                self.fail(f"vectors have 2, 3 or 4 components, not {n}", t)
            self.expect("<", f"after '{name}'")
            e = self.scalar()
            self.expect(">", f"to close '{name}<'")
            return VectorType(e, n)
        m = re.fullmatch(r"mat(\d+)x(\d+)", name)
        if m:
            c, r = int(m.group(1)), int(m.group(2))
            if c not in (2, 3, 4) or r not in (2, 3, 4):
                self.fail(f"matrices have 2, 3 or 4 columns and rows, not {name}", t)
            self.expect("<", f"after '{name}'")
            e = self.scalar()
            self.expect(">", f"to close '{name}<'")
            return MatrixType(c, r, e)
        if name == "array":
            self.expect("<", "after 'array'")
            e = self.type()
            count = None
            if self.accept(","):
                ct = self.peek()
                count = self.int_("an element count")
                if count <= 0:
                    self.fail(f"an array needs a positive element count, not {count}", ct)
            self.expect(">", "to close 'array<'")
            return ArrayType(e, count)
        if name == "atomic":
            self.expect("<", "after 'atomic'")
            st = self.peek()
            e = self.type()
            if e != VectorType(SCALARS["u32"], 2) and not (isinstance(e, ScalarType) and
                                                         e.name in ("i32", "u32", "i64", "u64")):
                self.fail(f"atomics hold i32, u32, i64, u64 or vec2<u32>, not {e}", st)
            self.expect(">", "to close 'atomic<'")
            return AtomicType(e)
        if name == "ptr":
            self.expect("<", "after 'ptr'")
            st = self.peek()
            space = self.ident("an address space")
            if space not in SPACES:
                self.fail(f"unknown address space '{space}'", st, hint=f"one of {', '.join(SPACES)}")
            self.expect(",", "after the address space")
            pointee = self.type()
            self.expect(",", "before the access mode (ptr<space, T, access>)")
            at = self.peek()
            access = self.ident("an access mode")
            if access not in ACCESS:
                self.fail(f"unknown access mode '{access}'", at, hint=f"one of {', '.join(ACCESS)}")
            self.expect(">", "to close 'ptr<'")
            return PointerType(space, pointee, access)
        if name == "coopmat":
            self.expect("<", "after 'coopmat'")
            e = self.scalar()
            self.expect(",", "after the element type")
            dt = self.peek()
            if dt.kind != "dims":
                self.fail(f"expected the shape ROWSxCOLS, found {self.describe(dt)}")
            self.next()
            rows, cols = (int(x) for x in dt.text.split("x"))
            self.expect(",", "after the shape")
            rt = self.peek()
            role = self.ident("a matrix role")
            if role not in ROLES:
                self.fail(f"unknown matrix role '{role}'", rt, hint="one of A, B, C")
            scope = "subgroup"
            if self.peek().text == ",":
                self.next()
                st = self.peek()
                scope = self.ident("a matrix scope")
                if scope != "workgroup":
                    self.fail(f"unknown matrix scope '{scope}'", st, hint="workgroup, or nothing for subgroup scope")
            self.expect(">", "to close 'coopmat<'")
            return CoopMatrixType(rows, cols, e, role, scope)
        if name in ("sampler", "sampler_comparison"):
            return SamplerType(name == "sampler_comparison")
        if name in TEXTURE_NAMES:
            kind, dim = TEXTURE_NAMES[name]
            if kind == "storage":
                self.expect("<", f"after '{name}'")
                ft = self.peek()
                fmt = self.ident("a texel format")
                unknown = {f"unknown_{s}": SCALARS[s] for s in ("f32", "i32", "u32")}
                if fmt in unknown:        # a SPIR-V storage image of format Unknown (the host's texture's)
                    self.expect(",", "after the texel format")
                    access = self.ident("an access mode")
                    self.expect(">", f"to close '{name}<'")
                    return TextureType(kind, dim, unknown[fmt], None, access)
                if fmt not in STORAGE_FORMATS:
                    self.fail(f"unknown storage texel format '{fmt}'", ft, hint=f"one of {', '.join(STORAGE_FORMATS)}")
                self.expect(",", "after the texel format")
                at = self.peek()
                access = self.ident("an access mode")
                if access not in STORAGE_ACCESS:
                    self.fail(f"unknown access mode '{access}'", at, hint=f"one of {', '.join(STORAGE_ACCESS)}")
                self.expect(">", f"to close '{name}<'")
                return TextureType(kind, dim, None, fmt, access)
            if kind in ("depth", "depth_multisampled"):
                return TextureType(kind, dim)
            self.expect("<", f"after '{name}'")
            st = self.peek()
            s = self.scalar()
            if s.name not in ("f32", "i32", "u32"):
                self.fail(f"a texture's sampled type is f32, i32 or u32, not {s}", st)
            self.expect(">", f"to close '{name}<'")
            return TextureType(kind, dim, s)
        if name == "struct":
            self.expect(".", "after 'struct' (struct.NAME)")
            nt = self.peek()
            sname = self.ident("a struct name")
            return self.p.named_type(sname, self.loc(nt))
        self.fail(f"unknown type '{name}'", t)

    def scalar(self) -> ScalarType:
        t = self.peek()
        s = self.type()
        if not isinstance(s, ScalarType):
            self.fail(f"expected a scalar type, found {s}", t)
        return s

    # -- attribute values -----------------------------------------------------------------------
    def attr_value(self):
        t = self.peek()
        if t.kind in ("int", "float", "str"):
            self.next()
            return t.value
        if t.kind == "ident":
            consts = {"true": True, "false": False, "null": None, "nan": float("nan"),
                      "inf": float("inf")}
            if t.text in consts:
                self.next()
                return consts[t.text]
            self.fail(f"expected an attribute value, found '{t.text}'", t,
                      hint="strings are written in double quotes and types as <T>")
        if self.accept("["):
            items = []
            if not self.accept("]"):
                items.append(self.attr_value())
                while self.accept(","):
                    items.append(self.attr_value())
                self.expect("]", "to close the list")
            return items
        if self.accept("<"):
            ty = self.type()
            self.expect(">", "to close the type attribute <T>")
            return ty
        self.fail(f"expected an attribute value, found {self.describe(t)}")


# -- module ----------------------------------------------------------------------------------------

@dataclass
class _PendingNamed:
    kind: str          # 'struct' | 'tuple'
    line: _Line
    loc: Loc
    type: Type | None = None
    resolving: bool = False


class _Parser:
    def __init__(self, text: str, file: str):
        self.file = file
        self.raw = text.split("\n")
        self.lines: list[_Line] = []
        for n, s in enumerate(self.raw, 1):
            if s.strip() == "" or s.lstrip().startswith(";"):
                continue
            self.lines.append(_Line(self, n, s.rstrip("\r")))
        self.pos = 0
        self.named: dict[str, _PendingNamed] = {}
        self.defs: dict[int, tuple[Value, Loc]] = {}   # every %N of the module
        self.fn_defs: set[int] = set()                 # those of the function being parsed
        self.uses: list[tuple[Inst, int, Tok, _Line]] = []

    # named types (struct definitions and the result tuples of builtins) may refer to each other
    # in any order, so they are collected first and built on demand.
    def named_type(self, name: str, loc: Loc) -> Type:
        d = self.named.get(name)
        if d is None:
            raise IRParseError(f"struct '{name}' is not defined", loc,
                               hint=f"define it with a line 'struct {name} {{ member: T, ... }}'")
        if d.type is not None:
            return d.type
        if d.resolving:
            raise IRParseError(f"struct '{name}' contains itself", loc)
        d.resolving = True
        ln = d.line
        ln.i = 2   # after 'struct NAME'
        ln.expect("{", f"to open the members of '{name}'")
        members = []
        if not ln.accept("}"):
            while True:
                mt = ln.peek()
                mname = ln.ident("a member name")
                if any(m[0] == mname for m in members):
                    ln.fail(f"'{name}' has two members named '{mname}'", mt)
                ln.expect(":", "after the member name")
                ty = ln.type()
                al = sz = None
                while ln.peek().kind == "ident" and ln.peek().text in ("align", "size") and d.kind == "struct":
                    which = ln.next().text
                    ln.expect("(", f"after '{which}'")
                    v = ln.int_(f"the {which} in bytes")
                    ln.expect(")", f"to close '{which}('")
                    if which == "align":
                        al = v
                    else:
                        sz = v
                members.append((mname, ty, al, sz))
                if ln.accept("}"):
                    break
                ln.expect(",", "or '}' after a member")
        ln.end()
        if d.kind == "struct":
            d.type = StructType(name, tuple(Member(*m) for m in members))
        else:
            d.type = TupleType(name, tuple((m[0], m[1]) for m in members))
        d.resolving = False
        return d.type

    def parse(self) -> Module:
        m = Module(file=self.file)
        if not self.lines:
            return m
        items = []
        first = True
        while self.pos < len(self.lines):
            ln = self.lines[self.pos]
            t = ln.peek()
            kw = t.text if t.kind == "ident" else None
            if kw == "module":
                if not first:
                    ln.fail("the 'module' line must come first", t)
                ln.next()
                m.file = ln.expect_kind("str", "the module's file name in double quotes").value
                ln.end()
                ln.no_comment("module")
                self.pos += 1
            elif kw in ("struct", "tuple"):
                ln.next()
                nt = ln.peek()
                name = ln.ident(f"a {kw} name")
                if name in self.named:
                    prev = self.named[name]
                    ln.fail(f"struct '{name}' is defined twice (first at line {prev.loc.line})", nt)
                ln.no_comment(kw)
                self.named[name] = _PendingNamed(kw, ln, ln.loc(nt))
                items.append((kw, name))
                self.pos += 1
            elif kw in ("enable", "override", "global"):
                items.append((kw, ln))
                self.pos += 1
            elif kw == "func":
                items.append(("func", self.pos))
                self.skip_function()
            else:
                ln.fail(f"expected 'module', 'enable', 'struct', 'tuple', 'override', 'global' or "
                        f"'func', found {ln.describe(t)}", t)
            first = False
        for kw, x in items:
            if kw == "struct":
                m.structs.append(self.named_type(x, self.named[x].loc))
            elif kw == "tuple":
                self.named_type(x, self.named[x].loc)
            elif kw == "enable":
                x.next()
                x.no_comment("enable")
                m.enables.append(x.ident("an extension name"))
                x.end()
            elif kw == "override":
                m.overrides.append(self.override(x))
            elif kw == "global":
                m.globals.append(self.global_(x))
        for kw, x in items:
            if kw == "func":
                self.pos = x
                f = self.function()
                if m.function(f.name) is not None:
                    raise IRParseError(f"function '@{f.name}' is defined twice", f.loc or
                                       Loc(self.file, self.lines[x].lineno, 1))
                m.functions.append(f)
        seen: set = set()
        for kw, x in items:
            if kw in ("global", "override") and (kw, x.toks[1].value) in seen:
                x.fail(f"{kw} '@{x.toks[1].value}' is defined twice", x.toks[1])
            seen.add((kw, x.toks[1].value) if kw in ("global", "override") else None)
        return m

    def skip_function(self):
        """Step over a function's lines (they are parsed once every type is known)."""
        head = self.lines[self.pos]
        depth = 0
        while self.pos < len(self.lines):
            ln = self.lines[self.pos]
            toks = [t for t in ln.toks if t.kind != "end"]
            if toks and toks[0].text == "}" and toks[0].kind == "punct":
                depth -= 1
            if toks and toks[-1].text == "{" and toks[-1].kind == "punct":
                depth += 1
            self.pos += 1
            if depth == 0:
                return
        head.fail(f"function is not closed: expected '}}' before the end of the text",
                  head.toks[0], hint="every line ending in '{' needs a matching '}' line")

    # -- header items ---------------------------------------------------------------------------
    def override(self, ln: _Line) -> Override:
        ln.next()
        name = ln.expect_kind("name", "the override's name (@NAME)").value
        ln.expect(":", "after the override's name")
        ty = ln.type()
        default = oid = None
        if ln.accept("="):
            default = ln.attr_value()
        if ln.accept("id"):
            ln.expect("(", "after 'id'")
            oid = ln.int_("the override id")
            ln.expect(")", "to close 'id('")
        ln.end()
        return Override(name, ty, oid, default, ln.source_loc())

    def global_(self, ln: _Line) -> Global:
        ln.next()
        name = ln.expect_kind("name", "the global's name (@NAME)").value
        ln.expect(":", "after the global's name")
        ty = ln.type()
        st = ln.peek()
        space = ln.ident("an address space")
        if space not in SPACES + ("handle",):
            ln.fail(f"unknown address space '{space}'", st, hint=f"one of {', '.join(SPACES)}, handle")
        if (space == "handle") != is_handle(ty):
            ln.fail(f"a {ty} lives in the {'handle space' if is_handle(ty) else 'storage, uniform, workgroup or private space'}, not {space}", st)
        # The printer writes the access mode of storage buffers only; the others have one fixed.
        access = "read" if space in ("uniform", "handle") else "read_write"
        aliased = space == "workgroup" and ln.accept("aliased")
        if ln.peek().kind == "ident" and ln.peek().text in ACCESS:
            access = ln.next().text
        elif space == "storage":
            ln.fail(f"a storage global needs an access mode, found {ln.describe(ln.peek())}",
                    hint="write read, write or read_write after 'storage'")
        group = binding = None
        if ln.accept("group"):
            ln.expect("(", "after 'group'")
            group = ln.int_("the group number")
            ln.expect(")", "to close 'group('")
            ln.expect("binding", "after group(N)")
            ln.expect("(", "after 'binding'")
            binding = ln.int_("the binding number")
            ln.expect(")", "to close 'binding('")
        init = None
        if ln.accept("="):
            init = ln.attr_value()
        ln.end()
        return Global(name, space, ty, access, group, binding, init, ln.source_loc(), aliased=bool(aliased))

    # -- functions ------------------------------------------------------------------------------
    def function(self) -> Function:
        ln = self.lines[self.pos]
        self.pos += 1
        ln.next()
        self.uses, self.fn_defs = [], set()
        name = ln.expect_kind("name", "the function's name (@NAME)").value
        ln.expect("(", "to open the parameter list")
        params, builtins = [], {}
        if not ln.accept(")"):
            while True:
                vt = ln.expect_kind("value", "a parameter (%N: T)")
                ln.expect(":", "after the parameter")
                ty = ln.type()
                v = self.define(vt, ty, ln)
                if ln.accept("builtin"):
                    ln.expect("(", "after 'builtin'")
                    builtins[len(params)] = ln.ident("a builtin name")
                    ln.expect(")", "to close 'builtin('")
                params.append(v)
                if ln.accept(")"):
                    break
                ln.expect(",", "or ')' after a parameter")
        ln.expect("->", "and the return type after the parameters")
        ret = ln.type()
        stage = wg = None
        if ln.peek().kind == "ident":
            stage = ln.next().text
            ln.expect("workgroup_size", f"after the stage '{stage}'")
            ln.expect("(", "after 'workgroup_size'")
            items = []
            while True:
                t = ln.peek()
                if t.kind in ("int", "str"):
                    items.append(ln.next().value)
                else:
                    ln.fail(f"expected a workgroup size (an integer or an override's name in quotes), "
                            f"found {ln.describe(t)}")
                if ln.accept(")"):
                    break
                ln.expect(",", "or ')' in workgroup_size")
            if len(items) != 3:
                ln.fail(f"workgroup_size needs 3 entries, not {len(items)}", t)
            wg = tuple(items)
        ln.expect("{", "to open the function body")
        ln.end()
        f = Function(name, params, ret, Block(), stage, wg, builtins, ln.source_loc())
        closer = self.block(f.body, ln)
        if closer != "}":
            self.lines[self.pos - 1].fail("a function body has one block; '} {' does not belong here")
        for inst, k, tok, uln in self.uses:
            vid = tok.value
            if vid not in self.fn_defs:
                where = ""
                if vid in self.defs:
                    where = f" (it is defined at line {self.defs[vid][1].line}, in another function)"
                uln.fail(f"%{vid} is not defined in function '@{name}'{where}", tok)
            inst.args[k] = self.defs[vid][0]
        return f

    def define(self, tok: Tok, ty: Type, ln: _Line) -> Value:
        vid = tok.value
        if vid > MAX_VALUE_ID:        # the executor keeps a slot for every id up to the largest
            ln.fail(f"value id %{vid} is beyond emu's limit of %{MAX_VALUE_ID}", tok,
                    hint="number the values from %0 up, as `emu ir` does")
        if vid in self.defs:
            ln.fail(f"%{vid} is defined twice (first at line {self.defs[vid][1].line})", tok,
                    hint="value ids are unique in the whole module")
        v = Value(vid, ty)
        self.defs[vid] = (v, ln.loc(tok))
        self.fn_defs.add(vid)
        return v

    def block(self, b: Block, opener: _Line) -> str:
        """Parse instruction lines into `b` up to a closing `}` or `} {` line; return which."""
        while self.pos < len(self.lines):
            ln = self.lines[self.pos]
            t0 = ln.peek()
            if t0.kind == "punct" and t0.text == "}":
                ln.next()
                closer = "}"
                if ln.accept("{"):
                    closer = "} {"
                ln.end()
                ln.no_comment("'}'")
                self.pos += 1
                return closer
            self.pos += 1
            b.insts.append(self.inst(ln))
        opener.fail("block is not closed: expected a '}' line before the end of the text",
                    opener.toks[-2] if len(opener.toks) > 1 else None)

    def inst(self, ln: _Line) -> Inst:
        result_tok = None
        if ln.peek().kind == "value":
            result_tok = ln.next()
            ln.expect("=", "after the result")
        op = ln.ident("an op name")       # checked against the op table by the verifier
        inst = Inst(op, [])
        while ln.peek().kind == "value":
            tok = ln.next()
            self.uses.append((inst, len(inst.args), tok, ln))
            inst.args.append(None)
            if not ln.accept(","):
                break
            if ln.peek().kind != "value":
                ln.fail(f"expected an operand %N after ',', found {ln.describe(ln.peek())}")
        if ln.at("{") and ln.peek(1).kind != "end":
            ln.next()
            if not ln.accept("}"):
                while True:
                    kt = ln.peek()
                    key = ln.ident("an attribute name")
                    if key in inst.attrs:
                        ln.fail(f"attribute '{key}' is given twice", kt)
                    ln.expect("=", f"after the attribute name '{key}'")
                    inst.attrs[key] = ln.attr_value()
                    if ln.accept("}"):
                        break
                    ln.expect(",", "or '}' after an attribute")
        if ln.at(":"):
            ct = ln.next()
            if result_tok is None:
                ln.fail("only an instruction with a result (%N = ...) has a type", ct)
            inst.type = ln.type()
        elif result_tok is not None:
            ln.fail(f"expected ': TYPE' for the result %{result_tok.value}, found {ln.describe(ln.peek())}")
        has_blocks = ln.accept("{")
        ln.end()
        inst.loc = ln.source_loc()
        if result_tok is not None:
            inst.result = self.define(result_tok, inst.type, ln)
            if op == OP.var and isinstance(inst.attrs.get("name"), str) and inst.attrs["name"]:
                inst.result.name = inst.attrs["name"]
        if has_blocks:
            while True:
                blk = Block()
                inst.blocks.append(blk)
                if self.block(blk, ln) == "}":
                    break
        return inst


def parse_ir(text: str, file: str = "<ir>") -> Module:
    """Parse IR text (the printer's format) into a module; raises IRParseError (an EmuError)
    naming `file`:line:col of the IR text. The module's own file name comes from its
    `module "..."` line (`file` when there is none)."""
    return _Parser(text, file).parse()
