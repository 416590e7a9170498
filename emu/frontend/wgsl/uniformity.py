"""WGSL's uniformity analysis (the spec's section "Uniformity analysis", as Tint implements it), on
the syntax tree.

Barriers, workgroupUniformLoad, derivatives and implicit-LOD sampling must be reached by every
invocation of a workgroup (or quad) together; subgroup operations by every invocation of a subgroup.
The analysis builds, for each function, a graph of control-flow and value nodes: an edge from A to B
says "if B is non-uniform, so is A". A function requires uniformity where its RequiredToBeUniform
node (one per severity) reaches MayBeNonUniform; the parts that reach CF_start, a parameter or a
pointer parameter's contents become the function's tags, which its callers apply to their call
sites and arguments (the call graph is walked callees first). Each statement adds a constant number
of nodes and edges, plus one per variable that a loop, switch or branch writes: the work is linear
in the program's size (Tint's shape, not a fixed point iterated over nesting).

Like Tint with the subgroup_uniformity language feature (shipped), two graphs are built: workgroup
scope (barriers, derivatives; `subgroup_id` is non-uniform) and then subgroup scope (subgroup
operations; reductions and broadcasts give subgroup-uniform values). Severities follow the
`derivative_uniformity` and `subgroup_uniformity` diagnostic rules (module directives and
`@diagnostic` attributes on functions and statements); as in Tint an error ends the analysis
(one finding), warnings and infos are found for every function. Tint's subgroup-matrix rules
(chromium.subgroup_matrix_uniformity: builtins, constructors, variable declarations) are here
too; the front end uses them where the IR's cooperative-matrix check (emu.isa.uniformity, both
dialects, its own wording) finds nothing, so that a shader gets one report.

`analyze(tree)` returns Findings: the severity Tint gives, the message Tint prints and its notes
(where control flow became non-uniform and where the non-uniform value comes from).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import ast as A

NEXT, BREAK, CONTINUE, RETURN = 1, 2, 4, 8
SEVERITIES = ("error", "warning", "info")

BARRIERS = frozenset({"workgroupBarrier", "storageBarrier", "textureBarrier"})
DERIVATIVES = frozenset({"dpdx", "dpdxCoarse", "dpdxFine", "dpdy", "dpdyCoarse", "dpdyFine",
                         "fwidth", "fwidthCoarse", "fwidthFine",
                         "textureSample", "textureSampleBias", "textureSampleCompare"})
SUBGROUP = frozenset({"subgroupBallot", "subgroupElect", "subgroupBroadcast", "subgroupBroadcastFirst",
                      "subgroupShuffle", "subgroupShuffleXor", "subgroupShuffleUp", "subgroupShuffleDown",
                      "subgroupAdd", "subgroupInclusiveAdd", "subgroupExclusiveAdd", "subgroupMul",
                      "subgroupInclusiveMul", "subgroupExclusiveMul", "subgroupAnd", "subgroupOr",
                      "subgroupXor", "subgroupMin", "subgroupMax", "subgroupAll", "subgroupAny",
                      "quadBroadcast", "quadSwapX", "quadSwapY", "quadSwapDiagonal"})
# uniform across the subgroup (in the subgroup-scope graph)
SUBGROUP_UNIFORM_RESULT = frozenset({"subgroupAdd", "subgroupAll", "subgroupAnd", "subgroupAny",
                                     "subgroupBallot", "subgroupBroadcast", "subgroupBroadcastFirst",
                                     "subgroupMax", "subgroupMin", "subgroupMul", "subgroupOr", "subgroupXor"})
SHUFFLE_DELTA = frozenset({"subgroupShuffleUp", "subgroupShuffleDown", "subgroupShuffleXor"})
ATOMICS = frozenset({"atomicLoad", "atomicStore", "atomicAdd", "atomicSub", "atomicMax", "atomicMin",
                     "atomicAnd", "atomicOr", "atomicXor", "atomicExchange", "atomicCompareExchangeWeak"})
MATRIX_RULE = "chromium.subgroup_matrix_uniformity"
MATRIX_TYPES = ("subgroup_matrix_left", "subgroup_matrix_right", "subgroup_matrix_result")
REQUIRING = BARRIERS | DERIVATIVES | SUBGROUP | {"workgroupUniformLoad"}
WORKGROUP_UNIFORM_BUILTINS = frozenset({"num_subgroups", "num_workgroups", "subgroup_size", "workgroup_id"})
RULES = {"derivative": "derivative_uniformity", "subgroup": "subgroup_uniformity"}


@dataclass
class Finding:
    severity: str                # Tint's: 'error' (the shader is rejected), 'warning' or 'info'
    message: str                 # Tint's words
    span: object                 # where (a SourceSpan)
    notes: list = field(default_factory=list)     # [(span, text)], as Tint's notes
    rule: str | None = None      # the diagnostic rule that set a warning's or info's severity


_FIELDS: dict = {}


def _kids(n):
    """The child nodes of a syntax-tree node (A.Node.children without its per-call field lookup)."""
    names = _FIELDS.get(type(n))
    if names is None:
        import dataclasses
        names = _FIELDS[type(n)] = tuple(f.name for f in dataclasses.fields(n) if f.compare and f.name != "span")
    for name in names:
        v = getattr(n, name)
        if isinstance(v, A.Node):
            yield v
        elif isinstance(v, list):
            for x in v:
                if isinstance(x, A.Node):
                    yield x


def calls_in(node):
    """Every call expression under `node`."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, A.CallExpr):
            yield n
        stack.extend(_kids(n))


def needs_analysis(tree: A.Module, matrix: bool = False) -> bool:
    """Whether any call in the module can require uniformity (a cheap scan; most shaders have none);
    with `matrix`, subgroup-matrix types count too."""
    if matrix and "chromium_experimental_subgroup_matrix" in tree.enabled:
        return True
    return any(c.name in REQUIRING for c in calls_in(tree))


def analyze(tree: A.Module, matrix: bool = True) -> list[Finding]:
    """Tint's uniformity diagnostics for a parsed module, in Tint's order. `matrix`: also Tint's
    rules for subgroup matrices (chromium.subgroup_matrix_uniformity: their builtins, constructors
    and variable declarations need subgroup-uniform control flow and arguments)."""
    out: list[Finding] = []
    if "chromium_disable_uniformity_analysis" in tree.enabled:
        return out
    import gc
    collecting = gc.isenabled()
    gc.disable()      # the graph is one object per node: the cyclic collector's full passes would
    try:              # make building it quadratic in the program's size
        for scope in ("workgroup", "subgroup"):
            if not _Graph(tree, scope, out, matrix).build():
                break
    finally:
        if collecting:
            gc.enable()
    return out


# ---------------------------------------------------------------------------------------------
# behaviours (the spec's statement behaviours: which ways control leaves a statement)

class _Behaviors:
    def __init__(self):
        self.memo: dict[int, int] = {}

    def of(self, s) -> int:
        if s is None:
            return NEXT
        b = self.memo.get(id(s))
        if b is None:
            b = self.memo[id(s)] = self._of(s)
        return b

    def seq(self, stmts) -> int:
        b = NEXT
        for s in stmts:
            if not b & NEXT:
                break
            b = (b & ~NEXT) | self.of(s)
        return b

    @staticmethod
    def loop(b: int) -> int:
        return ((b | NEXT) & ~(BREAK | CONTINUE)) if b & BREAK else b & ~(CONTINUE | NEXT)

    def _of(self, s) -> int:
        if isinstance(s, A.CompoundStmt):
            return self.seq(s.body)
        if isinstance(s, A.IfStmt):
            return self.of(s.body) | (self.of(s.orelse) if s.orelse is not None else NEXT)
        if isinstance(s, A.LoopStmt):
            b = self.seq(s.body)
            if b & (NEXT | CONTINUE) and s.continuing is not None:
                b |= self.of(s.continuing)
            return self.loop(b)
        if isinstance(s, A.ContinuingStmt):
            b = self.seq(s.body)
            return b | (BREAK | NEXT) if s.break_if is not None and b & NEXT else b
        if isinstance(s, A.ForStmt):
            return self.loop(self.of(s.body) | (BREAK if s.cond is not None else 0))
        if isinstance(s, A.WhileStmt):
            return self.loop(self.of(s.body) | BREAK)
        if isinstance(s, A.SwitchStmt):
            b = 0
            for c in s.clauses:
                b |= self.of(c.body)
            return ((b | NEXT) & ~BREAK) if b & BREAK else b
        if isinstance(s, A.BreakStmt):
            return BREAK
        if isinstance(s, A.BreakIfStmt):
            return BREAK | NEXT
        if isinstance(s, A.ContinueStmt):
            return CONTINUE
        if isinstance(s, A.ReturnStmt):
            return RETURN
        return NEXT


# ---------------------------------------------------------------------------------------------
# the graph

class _Node:
    __slots__ = ("edges", "came_from", "kind", "ast", "arg", "affects_cf", "decl")

    def __init__(self, ast=None, kind="regular"):
        self.edges: list[_Node] = []
        self.came_from: _Node | None = None
        self.kind, self.ast, self.arg, self.affects_cf, self.decl = kind, ast, -1, False, None

    def to(self, *others):
        for o in others:
            if o is not None and o is not self:
                self.edges.append(o)


class _Decl:
    """What a name refers to: kind is 'global', 'var' (a function-scope var), 'let' (let or
    const), 'param' or 'entry_param'."""
    __slots__ = ("name", "kind", "ast", "pointer", "root", "space", "access", "index", "uniform", "rw_texture",
                 "width")

    def __init__(self, name, kind, ast, *, pointer=False, root=None, space=None, access=None,
                 index=-1, uniform=True, rw_texture=False):
        self.name, self.kind, self.ast, self.pointer = name, kind, ast, pointer
        self.root = root if root is not None else self
        self.space, self.access, self.index, self.uniform, self.rw_texture = space, access, index, uniform, rw_texture
        self.width = None           # a vector's component count, where the declaration tells it

    @property
    def mutable_global(self) -> bool:
        return self.kind == "global" and self.access != "read"


class _Param:
    __slots__ = ("decl", "value", "ptr_in", "ptr_out", "direct", "direct_sev", "retval",
                 "ptr_may_change", "ptr_src_values", "ptr_src_contents")

    def __init__(self, decl, value):
        self.decl, self.value, self.ptr_in, self.ptr_out = decl, value, None, None
        self.direct, self.direct_sev, self.retval = None, None, None   # None, 'value' or 'contents'
        self.ptr_may_change = False
        self.ptr_src_values: list[int] = []
        self.ptr_src_contents: list[int] = []


class _Function:
    def __init__(self, fn: A.FnDecl):
        self.fn, self.name = fn, fn.name
        self.nodes: list[_Node] = []
        self.rtbu = {s: self.node() for s in SEVERITIES}
        self.mbnu = self.node()
        self.cf_start = self.node()
        self.value_return = self.node() if fn.return_type is not None else None
        self.params: list[_Param] = []
        self.callsite: str | None = None        # severity with which call sites must be uniform
        self.return_nonuniform = False

    def node(self, ast=None, kind="regular") -> _Node:
        n = _Node(ast, kind)
        self.nodes.append(n)
        return n

    def reset(self):
        for n in self.nodes:
            n.came_from = None


class _Construct:
    """A loop or switch being analysed: the variables it writes that were declared outside it, and
    their nodes at its start, at its continuing block and at its exits."""

    def __init__(self, kind: str, stmt, outer: list, has_continuing: bool = False):
        self.kind, self.stmt, self.outer, self.has_continuing = kind, stmt, outer, has_continuing
        self.var_in: dict = {}
        self.var_continuing: dict = {}
        self.var_exit: dict = {}


def _ident_of(e):
    e = A.strip_parens(e)
    return e.name if isinstance(e, A.Ident) and not e.template_args else None


def _attr_severities(attrs) -> dict:
    out = {}
    for a in attrs or ():
        if a.name == "diagnostic" and len(a.args) == 2 and isinstance(a.args[0], A.Ident):
            r = a.args[1]
            rule = r.name if isinstance(r, A.Ident) else \
                f"{r.base.name}.{r.member}" if isinstance(r, A.MemberExpr) and isinstance(r.base, A.Ident) else None
            if rule:
                out[rule] = a.args[0].name
    return out


class _Graph:
    def __init__(self, tree: A.Module, scope: str, out: list, matrix: bool = True):
        self.tree, self.scope, self.out, self.matrix = tree, scope, out, matrix
        self.matrix_memo: dict = {}
        self.beh = _Behaviors()
        self.written_memo: dict[int, frozenset] = {}
        self.functions = {f.name: f for f in tree.functions}
        self.structs = {d.name: d for d in tree.decls if isinstance(d, A.StructDecl)}
        self.aliases = {d.name: d.type for d in tree.decls if isinstance(d, A.AliasDecl)}
        self.infos: dict[str, _Function] = {}
        self.globals: dict[str, _Decl] = {}
        for d in tree.decls:
            if isinstance(d, A.VarDecl):
                space, access = d.address_space, d.access_mode
                if space is None:                       # textures and samplers
                    access = "read"
                elif access is None:
                    access = "read_write" if space in ("private", "workgroup", "function") else "read"
                t = d.type
                rw_tex = t is not None and t.name.startswith("texture_storage") and \
                    any(_ident_of(x) == "read_write" for x in t.args)
                self.globals[d.name] = _Decl(d.name, "global", d, space=space, access=access, rw_texture=rw_tex)
                self.globals[d.name].width = self.vector_width(t, None)
            elif isinstance(d, (A.ConstDecl, A.OverrideDecl)):
                self.globals[d.name] = _Decl(d.name, "let", d)
        self.severity = [{"derivative_uniformity": "error", "subgroup_uniformity": "error"}]
        for d in tree.directives:
            if isinstance(d, A.DiagnosticDirective):
                self.severity[0][d.rule] = d.severity

    # -- the call graph, callees first ---------------------------------------------------------
    def build(self) -> bool:
        order, seen = [], set()
        for f in self.tree.functions:
            stack = [(f, iter(self._callees(f)))]
            if f.name in seen:
                continue
            seen.add(f.name)
            while stack:
                fn, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    stack.pop()
                    order.append(fn)
                elif nxt.name not in seen:
                    seen.add(nxt.name)
                    stack.append((nxt, iter(self._callees(nxt))))
        for fn in order:
            if not self.function(fn):
                return False
        return True

    def _callees(self, fn: A.FnDecl):
        names = {}
        for n in calls_in(fn.body):
            if n.name in self.functions:
                names[n.name] = None
        return [self.functions[n] for n in reversed(list(names))]

    # -- variables: a scope stack of value nodes, and the names in scope -----------------------
    def get(self, decl):
        for frame in reversed(self.vars):
            n = frame.get(decl)
            if n is not None:
                return n
        return None

    def set(self, decl, node):
        if decl is not None and decl.kind != "global":
            self.vars[-1][decl] = node

    def lookup(self, name):
        for frame in reversed(self.names):
            d = frame.get(name)
            if d is not None:
                return d
        return self.globals.get(name)

    def declare(self, decl):
        self.names[-1][decl.name] = decl
        if decl.kind == "var":
            self.live[decl] = None

    def push(self):
        self.vars.append({})
        self.names.append({})

    def pop(self) -> dict:
        for d in self.names.pop().values():
            self.live.pop(d, None)
        return self.vars.pop()

    def rule_severity(self, rule: str) -> str:
        for frame in reversed(self.severity):
            if rule in frame:
                return frame[rule]
        return "error"

    # -- a function --------------------------------------------------------------------------
    def function(self, fn: A.FnDecl) -> bool:
        f = self.cur = self.infos[fn.name] = _Function(fn)
        self.vars, self.names, self.live, self.constructs, self.partial = [{}], [{}], {}, [], set()
        self.severity.append(_attr_severities(fn.attributes))
        for i, p in enumerate(fn.params):
            t = self._resolve_type(p.type)
            pointer = t is not None and t.name == "ptr"
            decl = _Decl(p.name, "entry_param" if fn.stage else "param", p, pointer=pointer, index=i)
            if fn.stage:
                decl.uniform = self._entry_param_uniform(fn, p, t)
            if pointer:
                decl.space = _ident_of(t.args[0]) if t.args else None
                decl.access = _ident_of(t.args[2]) if len(t.args) > 2 else \
                    ("read" if decl.space in ("storage", "uniform") else "read_write")
            info = _Param(decl, f.node(p, "param"))
            if pointer:
                info.ptr_in = f.node(p, "pointer_param_contents")
                info.ptr_out = f.node()
                self.vars[0][decl] = info.ptr_in
                self.live[decl] = None
            else:
                self.vars[0][decl] = info.value
            self.names[0][p.name] = decl
            f.params.append(info)
        self.block(f.cf_start, fn.body, function_body=True)
        self.severity.pop()
        return self.tags(f)

    def tags(self, f: _Function) -> bool:
        reachable: set = set()
        for sev in SEVERITIES:
            self.traverse(f.rtbu[sev], reachable)
            if f.mbnu in reachable:
                self.report(f, f.mbnu, sev)
                if sev == "error":
                    return False
                break
            if f.cf_start in reachable and f.callsite is None:
                f.callsite = sev
            for p in f.params:
                if p.direct is None:
                    p.direct, p.direct_sev = self.param_tag(p, reachable), sev
        if f.value_return is not None:
            f.reset()
            reachable = set()
            self.traverse(f.value_return, reachable)
            f.return_nonuniform = f.mbnu in reachable
            for p in f.params:
                p.retval = self.param_tag(p, reachable)
        for p in f.params:
            if p.ptr_out is None:
                continue
            f.reset()
            reachable = set()
            self.traverse(p.ptr_out, reachable)
            p.ptr_may_change = f.mbnu in reachable
            for j, q in enumerate(f.params):
                tag = self.param_tag(q, reachable)
                if tag == "contents":
                    p.ptr_src_contents.append(j)
                elif tag == "value":
                    p.ptr_src_values.append(j)
        return True

    @staticmethod
    def param_tag(p: _Param, reachable: set):
        if p.ptr_in is not None and p.ptr_in in reachable:
            return "contents"
        return "value" if p.value in reachable else None

    @staticmethod
    def traverse(source: _Node, reachable: set | None = None):
        todo = [source]
        while todo:
            n = todo.pop()
            if reachable is not None:
                reachable.add(n)
            for to in n.edges:
                if to.came_from is None:
                    to.came_from = n
                    todo.append(to)

    def _resolve_type(self, t):
        seen = 0
        while t is not None and t.name in self.aliases and seen < 64:
            t, seen = self.aliases[t.name], seen + 1
        return t

    def _entry_param_uniform(self, fn: A.FnDecl, p: A.Param, t) -> bool:
        def uniform(member) -> bool:
            return fn.stage == "compute" and member.builtin is not None and (
                member.builtin in WORKGROUP_UNIFORM_BUILTINS
                or (member.builtin == "subgroup_id" and self.scope == "subgroup"))
        s = self.structs.get(t.name) if t is not None else None
        if s is not None:
            return all(uniform(m) for m in s.members)
        return uniform(p)

    # -- statements --------------------------------------------------------------------------
    def block(self, cf, stmt: A.CompoundStmt, *, function_body=False, loop=None, continuing=None,
              loop_construct=None):
        f = self.cur
        self.push()
        self.severity.append(_attr_severities(stmt.attributes))
        stmts = stmt.body
        for s in stmts:
            cf = self.statement(cf, s)
            if not self.beh.of(s) & NEXT:
                break
        behaviors = self.beh.seq(stmts)
        if loop is not None and behaviors & (NEXT | CONTINUE):
            info = loop_construct
            if continuing is not None:
                for decl, node in info.var_continuing.items():
                    if behaviors & NEXT:
                        node.to(self.get(decl))
                    self.set(decl, node)
                cf = self.continuing(cf, continuing)
            for decl, node in info.var_in.items():
                node.to(self.get(decl))
        if function_body:
            for p in f.params:
                if p.ptr_out is not None:
                    p.ptr_out.to(self.get(p.decl))
        self.severity.pop()
        assigned = self.pop()
        if behaviors & NEXT:
            self.vars[-1].update({d: n for d, n in assigned.items() if d in self.live or d.kind != "var"})
        return cf

    def continuing(self, cf, c: A.ContinuingStmt):
        self.push()
        self.severity.append(_attr_severities(c.attributes))
        for s in c.body:
            cf = self.statement(cf, s)
            if not self.beh.of(s) & NEXT:
                break
        if c.break_if is not None and self.beh.seq(c.body) & NEXT:
            cf = self.statement(cf, c.break_if)
        self.severity.pop()
        assigned = self.pop()
        self.vars[-1].update({d: n for d, n in assigned.items() if d in self.live or d.kind != "var"})
        return cf

    def in_scope(self, cf, s):
        """Process `s` in a frame of its own; returns (cf, the frame's assignments)."""
        self.vars.append({})
        cf = self.statement(cf, s)
        return cf, self.vars.pop()

    def statement(self, cf, s):
        f = self.cur
        if isinstance(s, A.CompoundStmt):
            return self.block(cf, s)
        if isinstance(s, A.AssignStmt):
            if s.lhs is None:
                self.expr(cf, s.rhs)
                return cf
            if s.op == "=":
                node, root = self.lvalue(cf, s.lhs)
                node.to(self.expr(cf, s.rhs))
                self.set(root, node)
                return cf
            node, root = self.lvalue(cf, s.lhs)
            before = self.get(root) if root is not None else None
            rhs = self.expr(cf, s.rhs)
            result = f.node(s)
            result.to(rhs, before)
            node.to(result)
            self.set(root, node)
            return cf
        if isinstance(s, A.IncDecStmt):
            node, root = self.lvalue(cf, s.target)
            before = self.get(root) if root is not None else None
            result = f.node(s)
            result.to(cf, before)
            node.to(result)
            self.set(root, node)
            return cf
        if isinstance(s, (A.VarDecl, A.LetDecl, A.ConstDecl)):
            return self.declaration(cf, s)
        if isinstance(s, A.CallStmt):
            self.call(cf, s.call)
            return cf
        if isinstance(s, A.IfStmt):
            return self.if_(cf, s)
        if isinstance(s, A.LoopStmt):
            return self.loop(cf, s)
        if isinstance(s, A.ForStmt):
            return self.for_(cf, s)
        if isinstance(s, A.WhileStmt):
            return self.while_(cf, s)
        if isinstance(s, A.SwitchStmt):
            return self.switch(cf, s)
        if isinstance(s, A.BreakStmt):
            info = self.innermost(loop_or_switch=True)
            if info is not None:
                self.to_exits(info)
            return cf
        if isinstance(s, A.BreakIfStmt):
            v = self.control(s, self.expr(cf, s.cond))
            info = self.innermost(loop_or_switch=False)
            if info is not None:
                self.to_exits(info)
            end = f.node()
            end.to(v)
            return end
        if isinstance(s, A.ContinueStmt):
            info = self.innermost(loop_or_switch=False)
            if info is None:
                return cf
            if info.has_continuing:     # every variable in scope, those declared in the body too
                for decl in self.outer_vars(info.stmt):
                    node = info.var_continuing.get(decl)
                    if node is None:
                        node = info.var_continuing[decl] = f.node(decl.ast)
                    node.to(self.get(decl))
            else:
                for decl, node in info.var_in.items():
                    node.to(self.get(decl))
            return cf
        if isinstance(s, A.ReturnStmt):
            if s.value is not None and f.value_return is not None:
                f.value_return.to(self.expr(cf, s.value))
            for p in f.params:
                if p.ptr_out is not None:
                    p.ptr_out.to(self.get(p.decl))
            return cf
        return cf          # discard, const_assert: no effect on uniformity

    def declaration(self, cf, s):
        if isinstance(s, A.VarDecl) and s.address_space not in (None, "function"):
            return cf     # var<private>/<workgroup> in a function is not valid WGSL: leave it
        node = self.expr(cf, s.init) if s.init is not None else cf
        if s.init is None and isinstance(s, A.VarDecl) and self.scope == "subgroup" and self.matrix \
                and self.has_matrix(s.type):
            sev = self.rule_severity(MATRIX_RULE)
            if sev != "off":
                node = self.cur.node(s, "matrix_decl")
                node.to(cf)
                self.cur.rtbu[sev].to(node)
        if isinstance(s, A.VarDecl):
            decl = _Decl(s.name, "var", s)
            decl.width = self.vector_width(s.type, s.init)
        else:
            pointer, root = self.pointer_of(s.init, s.type)
            decl = _Decl(s.name, "let", s, pointer=pointer, root=root)
            if pointer and self.is_partial(s.init):
                self.partial.add(decl)
        self.declare(decl)
        self.vars[-1][decl] = node
        return cf

    def pointer_of(self, e, t=None):
        """(is it a pointer, its root variable) for a let's initializer."""
        t = self._resolve_type(t)
        if t is not None and t.name != "ptr":
            return False, None
        e = A.strip_parens(e)
        if isinstance(e, A.UnaryExpr) and e.op == "&":
            return True, self.root(e.operand)
        if isinstance(e, A.Ident):
            d = self.lookup(e.name)
            if d is not None and d.pointer:
                return True, d.root
        return (t is not None), None

    def root(self, e):
        """The variable (or pointer parameter) a reference or pointer expression names."""
        while True:
            e = A.strip_parens(e)
            if isinstance(e, A.UnaryExpr) and e.op in ("&", "*"):
                e = e.operand
            elif isinstance(e, (A.MemberExpr, A.IndexExpr)):
                e = e.base
            elif isinstance(e, A.Ident):
                d = self.lookup(e.name)
                return d.root if d is not None else None
            else:
                return None

    def is_partial(self, e) -> bool:
        e = A.strip_parens(e)
        while isinstance(e, A.UnaryExpr) and e.op in ("&", "*"):
            e = A.strip_parens(e.operand)
        if isinstance(e, A.Ident):
            return self.lookup(e.name) in self.partial
        return isinstance(e, (A.MemberExpr, A.IndexExpr))

    def control(self, ast, value) -> _Node:
        """A node where control flow comes to depend on `value` (a condition, a selector)."""
        n = self.cur.node(ast, "control")
        n.affects_cf = True
        n.to(value)
        return n

    def innermost(self, loop_or_switch: bool):
        for c in reversed(self.constructs):
            if loop_or_switch or c.kind != "switch":
                return c
        return None

    def to_exits(self, info: _Construct):
        for decl in info.outer:
            node = info.var_exit.get(decl)
            if node is None:
                node = info.var_exit[decl] = self.cur.node()
            node.to(self.get(decl))

    def written(self, s) -> frozenset:
        """Names of the variables a statement may write (assigned, incremented, passed by pointer)."""
        w = self.written_memo.get(id(s))
        if w is not None:
            return w
        names = set()
        kids = []
        if isinstance(s, (A.AssignStmt, A.IncDecStmt)):
            target = s.target if isinstance(s, A.IncDecStmt) else s.lhs
            if target is not None:
                names.add(self._root_name(target))
                kids.append(target)
            if isinstance(s, A.AssignStmt):
                kids.append(s.rhs)
        elif isinstance(s, A.CompoundStmt):
            for x in s.body:
                names |= self.written(x)
        elif isinstance(s, A.IfStmt):
            kids.append(s.cond)
            names |= self.written(s.body) | (self.written(s.orelse) if s.orelse is not None else set())
        elif isinstance(s, A.LoopStmt):
            for x in s.body:
                names |= self.written(x)
            if s.continuing is not None:
                for x in s.continuing.body:
                    names |= self.written(x)
                if s.continuing.break_if is not None:
                    kids.append(s.continuing.break_if.cond)
        elif isinstance(s, A.ForStmt):
            for x in (s.init, s.update, s.body):
                if x is not None:
                    names |= self.written(x)
            kids.append(s.cond)
        elif isinstance(s, A.WhileStmt):
            names |= self.written(s.body)
            kids.append(s.cond)
        elif isinstance(s, A.SwitchStmt):
            kids.append(s.selector)
            for c in s.clauses:
                names |= self.written(c.body)
        elif isinstance(s, (A.VarDecl, A.LetDecl, A.ConstDecl)):
            kids.append(s.init)
        elif isinstance(s, A.CallStmt):
            kids.append(s.call)
        elif isinstance(s, A.ReturnStmt):
            kids.append(s.value)
        for k in kids:
            if k is None:
                continue
            for n in calls_in(k):
                if True:
                    for a in n.args:
                        a = A.strip_parens(a)
                        if isinstance(a, A.UnaryExpr) and a.op == "&" or isinstance(a, A.Ident):
                            names.add(self._root_name(a))
        w = self.written_memo[id(s)] = frozenset(names)
        return w

    @staticmethod
    def _root_name(e):
        while True:
            e = A.strip_parens(e)
            if isinstance(e, A.UnaryExpr):
                e = e.operand
            elif isinstance(e, (A.MemberExpr, A.IndexExpr)):
                e = e.base
            else:
                return e.name if isinstance(e, A.Ident) else None

    def outer_vars(self, s) -> list:
        """The live mutable variables (declared before `s`) that `s` may write."""
        out = []
        for name in self.written(s):
            d = self.lookup(name) if name else None
            if d is not None:
                d = d.root
                if d in self.live and d not in out:
                    out.append(d)
        return out

    def if_(self, cf, s: A.IfStmt):
        f = self.cur
        self.severity.append(_attr_severities(s.attributes))
        v = self.control(s, self.expr(cf, s.cond))
        cf1, true_vars = self.in_scope(v, s.body)
        true_next = bool(self.beh.of(s.body) & NEXT)
        cf2, false_vars, false_next = None, {}, True
        if s.orelse is not None:
            cf2, false_vars = self.in_scope(v, s.orelse)
            false_next = bool(self.beh.of(s.orelse) & NEXT)
        for decl in dict.fromkeys(list(true_vars) + list(false_vars)):
            if decl not in self.live:
                continue
            out = f.node()
            if true_next:
                out.to(true_vars.get(decl) or self.get(decl))
            if false_next:
                out.to(false_vars.get(decl) or self.get(decl))
            self.set(decl, out)
        self.severity.pop()
        if self.beh.of(s) != NEXT:
            end = f.node()
            end.to(cf1, cf2)
            return end
        return cf

    def _loop_entry(self, s, kind, has_continuing):
        info = _Construct(kind, s, self.outer_vars(s), has_continuing)
        for decl in info.outer:
            n = info.var_in[decl] = self.cur.node(decl.ast)
            n.to(self.get(decl))
            self.set(decl, n)
        self.constructs.append(info)
        return info

    def _loop_exit(self, info):
        self.constructs.pop()
        for decl, node in info.var_exit.items():
            self.set(decl, node)

    def loop(self, cf, s: A.LoopStmt):
        f = self.cur
        self.severity.append(_attr_severities(s.attributes))
        cfx = f.node()
        cont = s.continuing if s.continuing is not None and (s.continuing.body or s.continuing.break_if) else None
        info = self._loop_entry(s, "loop", cont is not None)
        body = A.CompoundStmt(s.body, s.body_attributes, span=s.span)
        self.beh.memo[id(body)] = self.beh.seq(s.body)
        cf1 = self.block(cfx, body, loop=s, continuing=s.continuing, loop_construct=info)
        if self.beh.seq(s.body) & (NEXT | CONTINUE):
            cfx.to(cf1)
        cfx.to(cf)
        self._loop_exit(info)
        self.severity.pop()
        return cf1 if self.beh.of(s) & RETURN else cf

    def for_(self, cf, s: A.ForStmt):
        f = self.cur
        self.severity.append(_attr_severities(s.attributes))
        self.push()                 # the initializer's declarations
        start = f.node()
        init_end = self.statement(cf, s.init) if s.init is not None else cf
        info = self._loop_entry(s, "for", s.update is not None)
        body_start = start
        if s.cond is not None:
            body_start = self.control(s, self.expr(start, s.cond))
            self.to_exits(info)
        cf1 = self.block(body_start, s.body)
        b = self.beh.of(s.body)
        more = bool(b & (NEXT | CONTINUE))
        end_of_iter = cf1
        if s.update is not None and more:
            for decl, node in info.var_continuing.items():
                if b & NEXT:
                    node.to(self.get(decl))
                self.set(decl, node)
            end_of_iter = self.statement(cf1, s.update)
        if more:
            start.to(end_of_iter)
        start.to(init_end)
        for decl, node in info.var_in.items():
            node.to(self.get(decl))
        self._loop_exit(info)
        assigned = self.pop()
        self.vars[-1].update({d: n for d, n in assigned.items() if d in self.live or d.kind != "var"})
        self.severity.pop()
        if b & RETURN:
            return start if more else cf1
        return cf

    def while_(self, cf, s: A.WhileStmt):
        f = self.cur
        self.severity.append(_attr_severities(s.attributes))
        cfx = f.node()
        info = self._loop_entry(s, "while", False)
        end = self.control(s, self.expr(cfx, s.cond))
        self.to_exits(info)
        cf1 = self.block(end, s.body)
        cfx.to(cf1, cf)
        for decl, node in info.var_in.items():
            node.to(self.get(decl))
        self._loop_exit(info)
        self.severity.pop()
        return cf if self.beh.of(s) == NEXT else cfx

    def switch(self, cf, s: A.SwitchStmt):
        f = self.cur
        self.severity.append(_attr_severities(s.attributes))
        v = self.control(s, self.expr(cf, s.selector))
        end = f.node() if self.beh.of(s) != NEXT else None
        info = _Construct("switch", s, self.outer_vars(s))
        self.constructs.append(info)
        self.severity.append(_attr_severities(s.body_attributes))
        for c in s.clauses:
            self.vars.append({})
            cfn = self.block(v, c.body)
            if end is not None:
                end.to(cfn)
            if self.beh.of(c.body) & NEXT:
                self.to_exits(info)
            self.vars.pop()
        self.severity.pop()
        self.constructs.pop()
        for decl, node in info.var_exit.items():
            self.set(decl, node)
        self.severity.pop()
        return end if end is not None else cf

    # -- expressions -------------------------------------------------------------------------
    def expr(self, cf, e, mode: str = "value", deref: bool = False):
        """The value node of `e`. `mode` is 'value' where the expression's value is used (a
        reference there is loaded) or 'address' under `&`; `deref` says that a pointer named
        below is dereferenced (`*p`, `p[i]`, `p.x`)."""
        f = self.cur
        if isinstance(e, A.ParenExpr):
            return self.expr(cf, e.expr, mode, deref)
        if isinstance(e, (A.IntLiteral, A.FloatLiteral, A.BoolLiteral)):
            return cf
        if isinstance(e, A.Ident):
            return self.ident(cf, e, mode == "value", deref)
        if isinstance(e, A.BinaryExpr):
            if e.op in ("&&", "||"):
                v1_cf = self.control(e, self.expr(cf, e.lhs))
                self.vars.append({})
                v2 = self.expr(v1_cf, e.rhs)
                rhs_vars = self.vars.pop()
                for decl, n in rhs_vars.items():
                    if decl in self.live:
                        out = f.node()
                        out.to(n, self.get(decl))
                        self.set(decl, out)
                return v2
            v1, v2 = self.expr(cf, e.lhs), self.expr(cf, e.rhs)
            r = f.node(e, "expression")
            r.to(v1, v2)
            return r
        if isinstance(e, A.CallExpr):
            return self.call(cf, e)
        if isinstance(e, A.IndexExpr):
            v1 = self.expr(cf, e.index)
            v2 = self.expr(cf, e.base, mode, True)
            r = f.node(e, "expression")
            r.to(v1, v2)
            return r
        if isinstance(e, A.MemberExpr):
            return self.expr(cf, e.base, mode, True)
        if isinstance(e, A.UnaryExpr):
            if e.op == "&":         # `*&v` and `(&v).x` read v: only a bare `&v` does not
                return self.expr(cf, e.operand, mode if deref else "address", False)
            return self.expr(cf, e.operand, mode, deref or e.op == "*")
        return cf

    def ident(self, cf, e: A.Ident, value: bool, deref: bool):
        f = self.cur
        d = self.lookup(e.name)
        node = f.node(e, "ident")
        node.decl = d
        if d is None:                       # a type, an enumerant, a function's name
            node.to(cf)
            return node
        load = value and (deref or not d.pointer)
        if d.kind == "entry_param":
            node.to(cf if d.uniform else f.mbnu)
        elif d.kind == "param":
            node.to(cf)
            current = self.get(d)
            if d.pointer:
                if load:
                    node.to(current if d.space == "function" or d.access == "read" else f.mbnu)
                else:
                    node.to(f.params[d.index].value)
            else:
                node.to(current)
        elif d.kind == "global":
            node.to(f.mbnu if d.mutable_global and load else cf)
        else:
            node.to(cf)
            local = self.get(d)
            if d.pointer:
                if load:
                    r = d.root
                    if r is not None and r.kind == "global":
                        if r.access != "read":
                            node.to(f.mbnu)
                    elif r is not None:
                        node.to(self.get(r))
                node.to(local)
            elif d.kind == "var":
                if load:
                    node.to(local)
            else:
                node.to(local)
        return node

    def lvalue(self, cf, e, deref=False, partial=False):
        """(the new value node of the written variable, its root variable)."""
        f = self.cur
        e = A.strip_parens(e)
        if isinstance(e, A.Ident):
            d = self.lookup(e.name)
            if d is None or d.kind == "global":
                return f.mbnu, None
            if d.kind in ("param", "entry_param"):
                value = f.node(e)
                value.to(f.params[d.index].value)
                root = d
            elif deref or d.pointer:
                root = d.root
                value = f.node(e)
                value.to(self.get(d))
                if root is not None and root.kind == "global":
                    return value, None
            else:
                value, root = f.node(e), d
            old = self.get(root) if root is not None else None
            if partial and old is not None:
                value.to(old)
            return value, root
        if isinstance(e, A.IndexExpr):
            v1 = self.expr(cf, e.index)
            node, root = self.lvalue(cf, e.base, deref or self.is_pointer(e.base), True)
            node.to(v1)
            return node, root
        if isinstance(e, A.MemberExpr):
            full = self._full_swizzle(e)
            return self.lvalue(cf, e.base, deref or self.is_pointer(e.base), partial or not full)
        if isinstance(e, A.UnaryExpr):
            if e.op == "*":
                return self.lvalue(cf, e.operand, True, partial or self.is_partial(e))
            return self.lvalue(cf, e.operand, False, partial)
        return f.node(e), None

    def is_pointer(self, e) -> bool:
        e = A.strip_parens(e)
        if isinstance(e, A.Ident):
            d = self.lookup(e.name)
            return d is not None and d.pointer
        return isinstance(e, A.UnaryExpr) and e.op == "&"

    def has_matrix(self, t) -> bool:
        """Whether a type (a TypeExpr or a name) is or holds a subgroup matrix."""
        if t is None:
            return False
        name, args = (t, []) if isinstance(t, str) else (t.name, t.args)
        if name in MATRIX_TYPES:
            return True
        if name == "array" and args:
            a = args[0]
            return self.has_matrix(a.as_type() if isinstance(a, A.Ident) else None)
        key = name
        if key not in self.matrix_memo:
            self.matrix_memo[key] = False
            if key in self.aliases:
                self.matrix_memo[key] = self.has_matrix(self.aliases[key])
            elif key in self.structs:
                self.matrix_memo[key] = any(self.has_matrix(m.type) for m in self.structs[key].members)
        return self.matrix_memo[key]

    def vector_width(self, t, init):
        """The component count of a vector type or of a vector-valued initializer, or None."""
        t = self._resolve_type(t)
        name = t.name if t is not None else None
        if name is None and init is not None:
            init = A.strip_parens(init)
            if isinstance(init, A.CallExpr):
                name = init.name
            elif isinstance(init, A.Ident):
                d = self.lookup(init.name)
                return d.width if d is not None else None
        if name and name.startswith("vec") and len(name) >= 4 and name[3] in "234":
            return int(name[3])
        return None

    def _full_swizzle(self, e: A.MemberExpr) -> bool:
        """A swizzle that writes every component of its vector (`v.zyx = ...` of a vec3, also
        chained: `v.xyz.yxz`) replaces the whole value, as Tint counts it."""
        chain = []
        while isinstance(e, A.MemberExpr) and e.member and all(ch in "xyzwrgba" for ch in e.member):
            chain.append(e.member)
            e = A.strip_parens(e.base)
        d = self.lookup(e.name) if isinstance(e, A.Ident) else None
        if not chain or d is None or d.width is None:
            return False
        idx = list(range(d.width))
        for member in reversed(chain):
            try:
                idx = [idx["xyzw".find(ch) if ch in "xyzw" else "rgba".find(ch)] for ch in member]
            except IndexError:
                return False
        return len(idx) == d.width and len(set(idx)) == d.width

    def call(self, cf, c: A.CallExpr):
        f = self.cur
        name = c.name
        args, contents = [], []
        for i, a in enumerate(c.args):
            v = self.expr(cf, a)
            arg = f.node(c, "argument")
            arg.arg = i
            arg.to(v)
            content = None
            if self.is_pointer(a):
                content = f.node(c, "argument_contents")
                content.arg = i
                root = content.decl = self.root(a)
                if root is not None and root.kind == "global":
                    if root.access != "read":
                        content.to(f.mbnu)
                elif root is not None:
                    content.to(self.get(root))
                content.to(arg)
            args.append(arg)
            contents.append(content)
        call = f.node(c, "call")
        call.to(cf)
        result = f.node(c, "return_value")
        callsite, nonuniform, callee = None, False, None
        workgroup, subgroup = self.scope == "workgroup", self.scope == "subgroup"
        if name in self.infos and name in self.functions:
            callee = self.infos[name]
            callsite, nonuniform = callee.callsite, callee.return_nonuniform
        elif name in BARRIERS or name == "workgroupUniformLoad":
            callsite = "error" if workgroup else None
        elif name in DERIVATIVES:
            sev = self.rule_severity("derivative_uniformity")
            callsite = sev if sev != "off" and workgroup else None
            nonuniform = True
        elif name in ATOMICS:
            nonuniform = True
        elif name == "textureLoad" and c.args:
            t = self.lookup(_ident_of(c.args[0]) or "")
            nonuniform = t is not None and t.rw_texture
        elif name in SUBGROUP:
            sev = self.rule_severity("subgroup_uniformity")
            callsite = sev if sev != "off" and subgroup else None
            nonuniform = not (subgroup and name in SUBGROUP_UNIFORM_RESULT)
        matrix_sev, matrix_args = None, False
        if callee is None and self.matrix and (name.startswith("subgroupMatrix") or self.has_matrix(name)):
            sev = self.rule_severity(MATRIX_RULE)
            matrix_sev = sev if sev != "off" and subgroup else None
            callsite = callsite or matrix_sev
            # a matrix builtin's or a matrix constructor's arguments must be uniform themselves
            matrix_args = name.startswith("subgroupMatrix") or name in MATRIX_TYPES
        if nonuniform:
            result.to(f.mbnu)
        result.to(call)
        for i, arg in enumerate(args):
            if callee is not None:
                if i >= len(callee.params):
                    continue
                p = callee.params[i]
                if p.direct == "value":
                    f.rtbu[p.direct_sev].to(arg)
                elif p.direct == "contents" and contents[i] is not None:
                    f.rtbu[p.direct_sev].to(contents[i])
                if p.retval == "value":
                    result.to(arg)
                elif p.retval == "contents":
                    result.to(contents[i])
                if contents[i] is not None:
                    out = f.node(c, "pointer_result")
                    out.arg = i
                    if p.ptr_may_change:
                        out.to(f.mbnu)
                    else:
                        out.to(call)
                        out.to(*(args[j] for j in p.ptr_src_values if j < len(args)))
                        out.to(*(contents[j] for j in p.ptr_src_contents if j < len(contents)))
                    root = self.root(c.args[i])
                    old = self.get(root) if root is not None else None
                    if old is not None and self.is_partial(c.args[i]):
                        out.to(old)
                    self.set(root if root is not None and root.kind != "global" else None, out)
            elif name == "workgroupUniformLoad" and workgroup:
                f.rtbu["error"].to(arg)
            elif matrix_args:
                if matrix_sev is not None:
                    f.rtbu[matrix_sev].to(arg)
            elif name in SHUFFLE_DELTA and i == 1:
                sev = self.rule_severity("subgroup_uniformity")
                if sev != "off" and subgroup:
                    f.rtbu[sev].to(arg)
            else:
                result.to(arg)
        if callsite is not None:
            f.rtbu[callsite].to(call)
        return result

    # -- reporting ---------------------------------------------------------------------------
    def report(self, f: _Function, source: _Node, severity: str):
        f.reset()
        self.traverse(f.rtbu[severity])
        cause = source
        while cause is not None and cause.came_from is not f.rtbu[severity]:
            cause = cause.came_from
        if cause is None:
            return
        if cause.kind == "matrix_decl":
            finding = Finding(severity, "variables that contain subgroup matrix types cannot be declared in "
                                        "non-uniform control flow", cause.ast.span, rule=MATRIX_RULE)
            finding.notes.extend(self.divergence_notes(f, cause, source))
            self.out.append(finding)
            return
        call: A.CallExpr = cause.ast
        rule = None
        if cause.kind in ("argument", "argument_contents"):
            value = cause.kind == "argument"
            arg = call.args[cause.arg]
            if call.name in self.infos and call.name in self.functions:
                callee = self.infos[call.name]
                p = callee.params[cause.arg]
                self.report(callee, p.value if value else p.ptr_in, severity)
                if self.out:
                    self.out[-1].notes.append((arg.span, "possibly non-uniform value passed"
                                               + ("" if value else " via pointer") + " here"))
                    self.out[-1].notes.extend(self.source_notes(source.came_from))
                return
            if call.name in SHUFFLE_DELTA:
                rule = "subgroup_uniformity"
            what = f"'{call.name}'"
            if not call.name.startswith("subgroupMatrix") and self.has_matrix(call.name):
                what, rule = f"{A.dump(A.Ident(call.name, call.template_args))} constructor", MATRIX_RULE
            elif call.name.startswith("subgroupMatrix"):
                rule = MATRIX_RULE
            finding = Finding(severity, f"{what} requires argument {cause.arg} to "
                                        f"{'be uniform' if value else 'have uniform contents'}",
                              arg.span, rule=rule)
            finding.notes.extend(self.source_notes(source.came_from))
            self.out.append(finding)
            return
        builtin, via = self.builtin_requiring(call, severity), []
        if builtin is not call:
            callee = self.functions[call.name]
            indirect = not any(n is builtin for n in calls_in(callee.body))
            via.append((call.span, f"called {'indirectly ' if indirect else ''}by '{call.name}' from '{f.name}'"))
        if builtin.name in DERIVATIVES:
            rule = "derivative_uniformity"
        elif builtin.name in SUBGROUP:
            rule = "subgroup_uniformity"
        elif builtin.name.startswith("subgroupMatrix") or self.has_matrix(builtin.name):
            rule = MATRIX_RULE
        scope = "subgroup " if self.scope == "subgroup" else ""
        finding = Finding(severity, f"'{builtin.name}' must only be called from {scope}uniform control flow",
                          builtin.span, via, rule=rule)
        finding.notes.extend(self.divergence_notes(f, cause, source))
        self.out.append(finding)

    def builtin_requiring(self, call: A.CallExpr, severity: str) -> A.CallExpr:
        while call.name in self.functions and call.name in self.infos:
            callee = self.infos[call.name]
            nxt = next((n.ast for n in callee.rtbu[severity].edges if n.kind == "call"), None)
            if nxt is None:
                break
            call = nxt
        return call

    def divergence_notes(self, f: _Function, cause: _Node, source: _Node) -> list:
        f.reset()
        self.traverse(cause)
        origin = source.came_from if source is f.mbnu else source
        notes = []
        n = origin
        while n is not None and not n.affects_cf:
            n = n.came_from
        if n is not None:
            notes.append((_keyword_span(n.ast), "control flow depends on possibly non-uniform value"))
        return notes + self.source_notes(origin)

    def source_notes(self, n: _Node) -> list:
        if n is None or n.ast is None:
            return []
        a = n.ast
        if n.kind == "ident":
            d = n.decl
            if d is not None and d.kind in ("param", "entry_param"):
                return [(a.span, f"{_param_kind(d.ast)}'{a.name}' of '{self._owner(d.ast)}' may be non-uniform")]
            return [(a.span, f"reading from {_space_words(d)}'{a.name}' may result in a non-uniform value")]
        if n.kind == "param":
            return [(a.span, f"{_param_kind(a)}'{a.name}' of '{self._owner(a)}' may be non-uniform")]
        if n.kind == "pointer_param_contents":
            return [(a.span, f"parameter '{a.name}' of '{self._owner(a)}' may point to a non-uniform value")]
        if isinstance(a, A.CallExpr):
            if n.kind == "return_value":
                return [(a.span, f"return value of '{a.name}' may be non-uniform")]
            if n.kind == "argument_contents":
                root = n.decl
                span = root.ast.span if root is not None else a.args[n.arg].span
                name = root.name if root is not None else "?"
                return [(span, f"reading from {_space_words(root)}'{name}' may result in a non-uniform value")]
            if n.kind == "argument":
                return [(a.args[n.arg].span, f"passing non-uniform pointer to '{a.name}' may produce a non-uniform output")]
            if n.kind == "pointer_result":
                return [(a.args[n.arg].span, f"contents of pointer may become non-uniform after calling '{a.name}'")]
        return [(getattr(a, "full_span", None) or a.span, "result of expression may be non-uniform")]

    def _owner(self, p: A.Param) -> str:
        for fn in self.infos.values():
            if any(q.decl.ast is p for q in fn.params):
                return fn.name
        return "?"


def _param_kind(p: A.Param) -> str:
    if p.builtin is not None:
        return "builtin "
    if p.location is not None:
        return "user-defined input "
    return "parameter "


def _space_words(d) -> str:
    if d is None or d.kind != "global":
        return ""
    return {"storage": "read_write storage buffer ", "workgroup": "workgroup storage variable ",
            "private": "module-scope private variable "}.get(d.space, "")


def _keyword_span(node):
    """Where Tint points a control-flow note: at the statement's keyword (`if`, `for`, `while`,
    `switch`, `break if`), or at a short-circuit operator."""
    if isinstance(node, A.BinaryExpr):
        return node.full_span
    span = node.span
    width = {A.IfStmt: 2, A.ForStmt: 3, A.WhileStmt: 5, A.SwitchStmt: 6, A.BreakIfStmt: 5}.get(type(node))
    if width is not None and span is not None:
        return type(span)(span.file, span.line, span.col, span.line, span.col + width)
    return span
