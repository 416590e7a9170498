"""Lowering of WGSL statements (blocks, declarations, assignment, control flow) to IR."""
from __future__ import annotations

from ...isa.ir import Block, Value
from ...isa.types import (AtomicType, BOOL, CoopMatrixType, I32, PointerType, ScalarType, U32, VOID,
                          is_constructible)
from . import ast as A
from .types import ABSTRACT_INT, concrete, is_abstract
from .values import COMPOUND, Const, Ref, SwizzleRef, Val, _tn, loc_of


class StatementLowering:
    """Statement lowering, mixed into `Lowerer`."""

    def block_stmts(self, stmts):
        self.scopes.append({})
        try:
            for s in stmts:
                self.stmt(s)
        finally:
            self.scopes.pop()

    def sub_block(self, stmts) -> Block:
        blk = Block()
        with self.b.at(blk):
            self.block_stmts(stmts)
        return blk

    def stmt(self, s):
        self.b.loc = loc_of(s)
        m = getattr(self, "s_" + type(s).__name__, None)
        if m is None:
            self.err(s, f"unsupported statement {type(s).__name__}")
        m(s)

    def declare(self, node, name: str, binding):
        scope = self.scopes[-1]
        if name in scope:
            self.err(node, f"'{name}' is already declared in this scope")
        scope[name] = binding

    def s_CompoundStmt(self, s):
        self.block_stmts(s.body)

    def s_VarDecl(self, s: A.VarDecl):
        if s.address_space not in (None, "function"):
            self.err(s, f"a function-scope var must be in the function address space, not {s.address_space}")
        t = self.type(s.type) if s.type is not None else None
        init = None
        if s.init is not None:
            e = self.typed_value(s.init, t)
            if t is None:
                t = concrete(e.type)
            init = self.coerce(e, t, s.init)
        if t is None:
            self.err(s, f"var '{s.name}' needs a type or an initializer")
        if not is_constructible(t):
            self.err(s.type or s, f"a function variable cannot have type {t}")
        ptr = self.b.op("var", [init] if init is not None else [], PointerType("function", t, "read_write"),
                        name=s.name)
        ptr.name = s.name
        self.declare(s, s.name, Ref(ptr))

    def s_LetDecl(self, s: A.LetDecl):
        t = self.type(s.type) if s.type is not None else None
        e = self.typed_value(s.init, t)
        if t is not None:
            e = Val(self.coerce(e, t, s.init)) if not (isinstance(e, Const) and not is_abstract(e.type) and e.type == t) else e
        if isinstance(e, Const):
            # A let binds a run-time value of a concrete type.
            e = Val(self.materialize(e))
        e.v.name = e.v.name or s.name
        self.declare(s, s.name, e)

    def s_ConstDecl(self, s: A.ConstDecl):
        self.declare(s, s.name, self.const_decl(s))

    def s_ConstAssert(self, s):
        self.const_assert(s)

    def s_AssignStmt(self, s: A.AssignStmt):
        if s.lhs is None:
            e = self.value(self.expr(s.rhs))
            if isinstance(e, Const):
                return
            return
        target = self.target(s.lhs)
        if isinstance(target, SwizzleRef):
            return self.assign_swizzle(s, target)
        root = A.strip_parens(s.lhs)
        while isinstance(root, (A.MemberExpr, A.IndexExpr)):
            root = A.strip_parens(root.base)
        if not isinstance(target, Ref) and isinstance(root, A.Ident) and self.lookup(root.name) is not None:
            kind = "a const" if isinstance(self.lookup(root.name), Const) else "a let or a parameter"
            self.err(s.lhs, f"cannot assign to '{root.name}': it is {kind}, which is immutable",
                     hint=f"declare it with 'var {root.name} = ...;' to change it")
        if not isinstance(target, Ref):
            self.err(s.lhs, "cannot assign to this expression: it is not a variable or a part of one",
                     hint="only var, memory locations and their components can be assigned")
        if target.ptype.access == "read":
            self.err(s.lhs, f"cannot assign through a read-only reference ({target.ptype.space}, read)",
                     hint="declare the buffer var<storage, read_write>")
        if isinstance(target.type, AtomicType):
            self.err(s.lhs, "atomics are written with atomicStore", hint="use atomicStore(&x, value)")
        if s.op == "=":
            rhs = self.typed_value(s.rhs, target.type)
        else:
            rhs = self.binary_values(COMPOUND[s.op], Val(self.emit_load(target)),
                                     self.value(self.expr(s.rhs)), s)
        self.b.emit("store", [target.ptr, self.coerce(rhs, target.type, s.rhs)])

    def assign_swizzle(self, s: A.AssignStmt, target: SwizzleRef):
        """v.zy = e (or v.zy += e): the value first, then each component stored in turn."""
        p = target.ref.ptype
        if p.access == "read":
            self.err(s.lhs, f"cannot assign through a read-only reference ({p.space}, read)",
                     hint="declare the buffer var<storage, read_write>")
        if len(set(target.comps)) != len(target.comps):
            self.err(s.lhs, "cannot assign to a swizzle that names a component twice")
        t = target.type
        if s.op == "=":
            rhs = self.typed_value(s.rhs, t)
        else:
            rhs = self.binary_values(COMPOUND[s.op], self.value(target), self.value(self.expr(s.rhs)), s)
        v = self.coerce(rhs, t, s.rhs)
        for k, c in enumerate(target.comps):
            ptr = self.b.op("access", [target.ref.ptr], PointerType(p.space, t.elem, p.access), path=[c])
            self.b.emit("store", [ptr, self.b.op("extract", [v], t.elem, path=[k])])

    def s_IncDecStmt(self, s: A.IncDecStmt):
        target = self.target(s.target)
        if not isinstance(target, Ref) or not isinstance(target.type, ScalarType) or not target.type.is_int:
            self.err(s.target, f"{s.op} needs an integer variable")
        new = self.binary_values("+" if s.op == "++" else "-", Val(self.emit_load(target)),
                                 Const(ABSTRACT_INT, 1), s)
        self.b.emit("store", [target.ptr, self.coerce(new, target.type, s)])

    def cond(self, e, node) -> Value:
        v = self.value(self.expr(e))
        if v.type != BOOL:
            self.err(e, f"a condition must be bool, not {_tn(v.type)}")
        return self.materialize(v)

    def s_IfStmt(self, s: A.IfStmt):
        c = self.cond(s.cond, s)
        then = self.sub_block(s.body.body)
        if s.orelse is None:
            other = Block()
        elif isinstance(s.orelse, A.IfStmt):
            other = Block()
            with self.b.at(other):
                self.scopes.append({})
                self.stmt(s.orelse)
                self.scopes.pop()
        else:
            other = self.sub_block(s.orelse.body)
        self.b.loc = loc_of(s)
        self.b.emit("if", [c], blocks=[then, other])

    def s_LoopStmt(self, s: A.LoopStmt):
        self.loop_depth += 1
        body, cont = Block(), Block()
        self.scopes.append({})
        with self.b.at(body):
            for st in s.body:
                self.stmt(st)
        if s.continuing is not None:
            with self.b.at(cont):
                self.scopes.append({})
                for st in s.continuing.body:
                    self.stmt(st)
                if s.continuing.break_if is not None:
                    self.b.loc = loc_of(s.continuing.break_if)
                    self.b.emit("break_if", [self.cond(s.continuing.break_if.cond, s)])
                self.scopes.pop()
        self.scopes.pop()
        self.loop_depth -= 1
        self.b.loc = loc_of(s)
        self.b.emit("loop", [], blocks=[body, cont])

    def s_ForStmt(self, s: A.ForStmt):
        self.scopes.append({})
        if s.init is not None:
            self.stmt(s.init)
        self.loop_depth += 1
        body, cont = Block(), Block()
        with self.b.at(body):
            if s.cond is not None:
                self.break_unless(s.cond, s)
            self.block_stmts(s.body.body)
        if s.update is not None:
            with self.b.at(cont):
                self.stmt(s.update)
        self.loop_depth -= 1
        self.b.loc = loc_of(s)
        self.b.emit("loop", [], blocks=[body, cont])
        self.scopes.pop()

    def s_WhileStmt(self, s: A.WhileStmt):
        self.loop_depth += 1
        body = Block()
        with self.b.at(body):
            self.break_unless(s.cond, s)
            self.block_stmts(s.body.body)
        self.loop_depth -= 1
        self.b.loc = loc_of(s)
        self.b.emit("loop", [], blocks=[body, Block()])

    def break_unless(self, cond_expr, s):
        self.b.loc = loc_of(cond_expr)
        c = self.cond(cond_expr, s)
        notc = self.b.op("unary", [c], BOOL, fn="not")
        brk = Block()
        with self.b.at(brk):
            self.b.emit("break")
        self.b.emit("if", [notc], blocks=[brk, Block()])

    def s_BreakStmt(self, s):
        if self.loop_depth == 0 and self.switch_depth == 0:
            self.err(s, "break outside a loop or switch")
        self.b.emit("break")

    def s_ContinueStmt(self, s):
        if self.loop_depth == 0:
            self.err(s, "continue outside a loop")
        self.b.emit("continue")

    def s_BreakIfStmt(self, s):
        self.err(s, "'break if' may only end a continuing block")

    def s_ReturnStmt(self, s: A.ReturnStmt):
        if s.value is None:
            if self.ret_type != VOID:
                self.err(s, f"this function must return a {self.ret_type}")
            self.b.emit("return")
            return
        if self.ret_type == VOID:
            self.err(s.value, "this function returns nothing", hint="remove the value or declare a return type with '-> T'")
        v = self.coerce(self.typed_value(s.value, self.ret_type), self.ret_type, s.value)
        self.b.emit("return", [v])

    def s_DiscardStmt(self, s):
        self.err(s, "discard is only for fragment shaders; emu runs compute shaders")

    def s_CallStmt(self, s: A.CallStmt):
        self.call(s.call, statement=True)

    def s_SwitchStmt(self, s: A.SwitchStmt):
        sel = self.value(self.expr(s.selector))
        st = concrete(sel.type)
        if st not in (I32, U32):
            self.err(s.selector, f"a switch selector must be i32 or u32, not {_tn(sel.type)}")
        cases, blocks, seen = [], [], set()
        # selector and case values share one type: an abstract selector takes a typed case's type
        for clause in s.clauses:
            for x in clause.selectors:
                if not isinstance(x, A.DefaultSelector):
                    c = self.expr(x)
                    if isinstance(c, Const) and not is_abstract(c.type):
                        st = c.type if is_abstract(sel.type) else st
        selv = self.materialize(sel, st)
        self.switch_depth += 1
        for clause in s.clauses:
            sels = []
            for x in clause.selectors:
                if isinstance(x, A.DefaultSelector):
                    sels.append("default")
                    continue
                c = self.expr(x)
                if not isinstance(c, Const):
                    self.err(x, "case selectors must be constant expressions")
                v = self.convert_const(c, st, x).value
                if v in seen:
                    self.err(x, f"case {v} appears twice in this switch")
                seen.add(v)
                sels.append(v)
            cases.append(sels)
            blocks.append(self.sub_block(clause.body.body))
        self.switch_depth -= 1
        if sum(c.count("default") for c in cases) != 1:
            self.err(s, "a switch needs exactly one default clause")
        self.b.loc = loc_of(s)
        self.b.emit("switch", [selv], blocks=blocks, cases=cases)
