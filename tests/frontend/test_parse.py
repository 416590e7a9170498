"""Parser tests: realistic shaders, every statement kind, both cooperative dialects, spans."""

from fractions import Fraction

import pytest

from emu.frontend.wgsl import ast as A
from emu.frontend.wgsl.ast import dump
from emu.frontend.wgsl.errors import WgslError
from emu.frontend.wgsl.parser import parse, parse_expression


def body_of(module, fn_name="main"):
    fn = module.find(fn_name)
    assert isinstance(fn, A.FnDecl)
    return fn.body.body


def expr(src):
    return dump(parse_expression(src))


# ---------------------------------------------------------------------------------------------
# A tiled matmul: directives, every module-scope declaration, workgroup memory, barriers

MATMUL = """\
// Tiled matmul with workgroup memory.
enable f16;
requires packed_4x8_integer_dot_product;
diagnostic(off, derivative_uniformity);

const TILE: u32 = 16u;
override BLOCK: u32 = 64;
@id(7) override SCALE: f32 = 1.0;
alias Mat = array<f32>;

struct Dims {
  M: u32,
  @align(16) N: u32,
  @size(8) K: u32,
}

@group(0) @binding(0) var<storage, read> a: Mat;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;
var<workgroup> tileA: array<array<f32, TILE>, TILE>;
var<workgroup> tileB: array<array<f32, 16>, 16>;
var<workgroup> hits: atomic<u32>;
const_assert TILE * TILE <= 256u;

fn idx(row: u32, col: u32, stride: u32) -> u32 {
  return row * stride + col;
}

@compute @workgroup_size(TILE, TILE, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3u) {
  let row = gid.y;
  let col = gid.x;
  var acc = 0.0;
  let numTiles = (dims.K + TILE - 1u) / TILE;
  for (var t = 0u; t < numTiles; t++) {
    let aCol = t * TILE + lid.x;
    if (row < dims.M && aCol < dims.K) {
      tileA[lid.y][lid.x] = a[idx(row, aCol, dims.K)];
    } else {
      tileA[lid.y][lid.x] = 0.0;
    }
    tileB[lid.y][lid.x] = b[(t * TILE + lid.y) * dims.N + col];
    workgroupBarrier();
    for (var k: u32 = 0u; k < TILE; k = k + 1u) {
      acc += tileA[lid.y][k] * tileB[k][lid.x];
    }
    workgroupBarrier();
  }
  if row < dims.M && col < dims.N {
    c[row * dims.N + col] = acc * SCALE;
  }
  _ = atomicAdd(&hits, 1u);
}
"""


def test_matmul_module_scope():
    m = parse(MATMUL, "matmul.wgsl")
    assert m.file == "matmul.wgsl"
    assert [type(d).__name__ for d in m.directives] == [
        "EnableDirective", "RequiresDirective", "DiagnosticDirective"]
    assert m.enabled == ["f16"]
    assert m.directives[1].names == ["packed_4x8_integer_dot_product"]
    assert (m.directives[2].severity, m.directives[2].rule) == ("off", "derivative_uniformity")
    assert [type(d).__name__ for d in m.decls] == [
        "ConstDecl", "OverrideDecl", "OverrideDecl", "AliasDecl", "StructDecl",
        "VarDecl", "VarDecl", "VarDecl", "VarDecl", "VarDecl", "VarDecl", "VarDecl",
        "ConstAssert", "FnDecl", "FnDecl"]

    tile = m.find("TILE")
    assert tile == A.ConstDecl("TILE", A.TypeExpr("u32"), A.IntLiteral(16, "u"))
    assert m.find("BLOCK") == A.OverrideDecl("BLOCK", A.TypeExpr("u32"), A.IntLiteral(64))
    scale = m.find("SCALE")
    assert scale.id == A.IntLiteral(7)
    assert scale.init == A.FloatLiteral("1.0")
    assert m.find("Mat").type == A.TypeExpr("array", [A.Ident("f32")])

    dims = m.find("Dims")
    assert [mem.name for mem in dims.members] == ["M", "N", "K"]
    assert dims.members[0].attributes == []
    assert dims.members[1].align == A.IntLiteral(16)
    assert dims.members[2].size == A.IntLiteral(8)

    a = m.find("a")
    assert (a.address_space, a.access_mode) == ("storage", "read")
    assert (a.group, a.binding) == (A.IntLiteral(0), A.IntLiteral(0))
    assert a.type == A.TypeExpr("Mat")
    c = m.find("c")
    assert (c.address_space, c.access_mode, c.binding) == ("storage", "read_write", A.IntLiteral(2))
    assert m.find("dims").address_space == "uniform"
    assert m.find("dims").access_mode is None
    tile_a = m.find("tileA")
    assert tile_a.address_space == "workgroup"
    assert dump(tile_a.type) == "array<array<f32, TILE>, TILE>"
    assert tile_a.type == A.TypeExpr(
        "array", [A.Ident("array", [A.Ident("f32"), A.Ident("TILE")]), A.Ident("TILE")])
    assert dump(m.find("hits").type) == "atomic<u32>"
    assert dump(m.decls[12].expr) == "(<= (* TILE TILE) 256u)"

    idx = m.find("idx")
    assert [(p.name, dump(p.type)) for p in idx.params] == [
        ("row", "u32"), ("col", "u32"), ("stride", "u32")]
    assert idx.return_type == A.TypeExpr("u32")
    assert idx.stage is None
    assert idx.body.body == [A.ReturnStmt(parse_expression("row * stride + col"))]

    main = m.find("main")
    assert main.stage == "compute"
    assert main.workgroup_size == [A.Ident("TILE"), A.Ident("TILE"), A.IntLiteral(1)]
    assert [(p.name, p.builtin, dump(p.type)) for p in main.params] == [
        ("gid", "global_invocation_id", "vec3<u32>"), ("lid", "local_invocation_id", "vec3u")]
    assert main.return_type is None


def test_matmul_function_body():
    stmts = body_of(parse(MATMUL))
    assert stmts[0] == A.LetDecl("row", None, A.MemberExpr(A.Ident("gid"), "y"))
    assert stmts[2] == A.VarDecl("acc", None, A.FloatLiteral("0.0"))
    assert dump(stmts[3].init) == "(/ (paren (- (+ (. dims K) TILE) 1u)) TILE)"

    loop = stmts[4]
    assert isinstance(loop, A.ForStmt)
    assert loop.init == A.VarDecl("t", None, A.IntLiteral(0, "u"))
    assert dump(loop.cond) == "(< t numTiles)"
    assert loop.update == A.IncDecStmt("++", A.Ident("t"))
    inner = loop.body.body
    assert isinstance(inner[1], A.IfStmt)
    assert dump(inner[1].cond) == "(paren (&& (< row (. dims M)) (< aCol (. dims K))))"
    assign = inner[1].body.body[0]
    assert assign == A.AssignStmt(
        "=",
        A.IndexExpr(A.IndexExpr(A.Ident("tileA"), A.MemberExpr(A.Ident("lid"), "y")),
                    A.MemberExpr(A.Ident("lid"), "x")),
        A.IndexExpr(A.Ident("a"), A.CallExpr("idx", [], [
            A.Ident("row"), A.Ident("aCol"), A.MemberExpr(A.Ident("dims"), "K")])))
    assert isinstance(inner[1].orelse, A.CompoundStmt)
    assert inner[3] == A.CallStmt(A.CallExpr("workgroupBarrier"))
    k_loop = inner[4]
    assert k_loop.init == A.VarDecl("k", A.TypeExpr("u32"), A.IntLiteral(0, "u"))
    assert k_loop.update == A.AssignStmt("=", A.Ident("k"), parse_expression("k + 1u"))
    assert k_loop.body.body[0].op == "+="
    assert dump(k_loop.body.body[0].rhs) == "(* ([] ([] tileA (. lid y)) k) ([] ([] tileB k) (. lid x)))"

    guarded = stmts[5]
    assert dump(guarded.cond) == "(&& (< row (. dims M)) (< col (. dims N)))"
    phony = stmts[6]
    assert phony.is_phony and phony.lhs is None and phony.op == "="
    assert dump(phony.rhs) == "(call atomicAdd (& hits) 1u)"


# ---------------------------------------------------------------------------------------------
# Control flow


def test_every_loop_kind_and_switch():
    src = """
    fn f(n: i32) -> i32 {
      var i = 0;
      var s = 0;
      loop {
        if i >= n { break; }
        s += i;
        continuing {
          i++;
          break if i > 100;
        }
      }
      loop { i--; if i == 0 { break; } else if i < -5 { continue; } else { return -1; } }
      while i < n { i = i + 2; }
      for (;;) { break; }
      for (let j = 3; ; ) { discard; }
      switch s {
        case 0: { s = 1; }
        case 1, 2, default: { s = 2; }
        case 3, { }
      }
      switch (s & 3) { default { } case 4i: { } }
      { const k = 2; const_assert k == 2; }
      return s;
    }
    """
    st = body_of(parse(src), "f")
    lp = st[2]
    assert isinstance(lp, A.LoopStmt)
    assert isinstance(lp.body[0], A.IfStmt) and lp.body[0].body.body == [A.BreakStmt()]
    assert lp.body[1] == A.AssignStmt("+=", A.Ident("s"), A.Ident("i"))
    assert lp.continuing.body == [A.IncDecStmt("++", A.Ident("i"))]
    assert dump(lp.continuing.break_if.cond) == "(> i 100)"

    lp2 = st[3]
    assert lp2.continuing is None
    assert lp2.body[0] == A.IncDecStmt("--", A.Ident("i"))
    chain = lp2.body[1]
    assert dump(chain.cond) == "(== i 0)"
    assert isinstance(chain.orelse, A.IfStmt)
    assert dump(chain.orelse.cond) == "(< i (- 5))"
    assert chain.orelse.body.body == [A.ContinueStmt()]
    assert chain.orelse.orelse.body == [A.ReturnStmt(A.UnaryExpr("-", A.IntLiteral(1)))]

    wh = st[4]
    assert isinstance(wh, A.WhileStmt) and dump(wh.cond) == "(< i n)"
    assert st[5] == A.ForStmt(None, None, None, A.CompoundStmt([A.BreakStmt()]))
    assert st[6].init == A.LetDecl("j", None, A.IntLiteral(3))
    assert st[6].cond is None and st[6].update is None
    assert st[6].body.body == [A.DiscardStmt()]

    sw = st[7]
    assert isinstance(sw, A.SwitchStmt) and sw.selector == A.Ident("s")
    assert [len(c.selectors) for c in sw.clauses] == [1, 3, 1]
    assert sw.clauses[0].selectors == [A.IntLiteral(0)] and not sw.clauses[0].is_default
    assert sw.clauses[1].selectors[:2] == [A.IntLiteral(1), A.IntLiteral(2)]
    assert isinstance(sw.clauses[1].selectors[2], A.DefaultSelector) and sw.clauses[1].is_default
    assert sw.clauses[2].body.body == []
    sw2 = st[8]
    assert sw2.clauses[0].is_default and sw2.clauses[1].selectors == [A.IntLiteral(4, "i")]
    assert dump(sw2.selector) == "(paren (& s 3))"

    block = st[9]
    assert isinstance(block, A.CompoundStmt)
    assert block.body[0] == A.ConstDecl("k", None, A.IntLiteral(2))
    assert dump(block.body[1].expr) == "(== k 2)"
    assert st[10] == A.ReturnStmt(A.Ident("s"))


def test_assignment_forms_and_pointers():
    src = """
    fn g(p: ptr<function, i32>, q: ptr<storage, array<u32>, read_write>) {
      *p = 1;
      *p += 2;
      (*q)[3] = 4u;
      q[5] |= 1u;
      var v = vec4<f32>(1.0, 2.0, 3.0, 4.0);
      v.x *= 2.0;
      v.y -= v.z;
      let r = &v;
      (*r).w /= 2.0;
      var bits = 1u;
      bits <<= 3u;
      bits >>= 1u;
      bits ^= 0xFu;
      bits &= ~0u;
      bits %= 7u;
      _ = v.xyz;
    }
    """
    fn = parse(src).find("g")
    assert fn.params[0].type == A.TypeExpr("ptr", [A.Ident("function"), A.Ident("i32")])
    assert dump(fn.params[1].type) == "ptr<storage, array<u32>, read_write>"
    st = fn.body.body
    assert st[0] == A.AssignStmt("=", A.UnaryExpr("*", A.Ident("p")), A.IntLiteral(1))
    assert st[1].op == "+="
    assert dump(st[2].lhs) == "([] (paren (* q)) 3)"
    assert st[3].op == "|=" and dump(st[3].lhs) == "([] q 5)"
    assert dump(st[4].init) == "(call vec4<f32> 1.0 2.0 3.0 4.0)"
    assert [s.op for s in st[5:7]] == ["*=", "-="]
    assert st[7] == A.LetDecl("r", None, A.UnaryExpr("&", A.Ident("v")))
    assert dump(st[8].lhs) == "(. (paren (* r)) w)"
    assert [s.op for s in st[10:15]] == ["<<=", ">>=", "^=", "&=", "%="]
    assert dump(st[13].rhs) == "(~ 0u)"
    assert st[15].is_phony and dump(st[15].rhs) == "(. v xyz)"


def test_statement_and_function_attributes():
    src = """
    @must_use @diagnostic(off, chromium.unreachable_code)
    fn h(@location(0) @interpolate(flat, either) x: u32) -> @location(1) @builtin(position) vec4f {
      @diagnostic(warning, derivative_uniformity) {
      }
      @unroll for (var i = 0; i < 2; i++) { }
      @a if true { } else { }
      @b loop @c { }
      @d while false @e { }
      @f switch 0 @g { default { } }
      return vec4f();
    }
    @vertex fn vs() -> @builtin(position) vec4<f32> { return vec4<f32>(0.0); }
    @fragment fn fs() {}
    """
    m = parse(src)
    h = m.find("h")
    assert [a.name for a in h.attributes] == ["must_use", "diagnostic"]
    assert dump(h.attributes[1].args[1]) == "(. chromium unreachable_code)"
    assert h.params[0].location == A.IntLiteral(0)
    assert h.params[0].attributes[1].args == [A.Ident("flat"), A.Ident("either")]
    assert [a.name for a in h.return_attributes] == ["location", "builtin"]
    assert h.return_type == A.TypeExpr("vec4f")
    st = h.body.body
    assert isinstance(st[0], A.CompoundStmt) and st[0].attributes[0].name == "diagnostic"
    assert st[1].attributes[0].name == "unroll"
    assert isinstance(st[2], A.IfStmt) and st[2].attributes[0].name == "a"
    assert st[3].attributes[0].name == "b" and st[3].body_attributes[0].name == "c"
    assert isinstance(st[4], A.WhileStmt) and st[4].attributes[0].name == "d"
    assert st[4].body.attributes[0].name == "e"
    assert st[5].attributes[0].name == "f" and st[5].body_attributes[0].name == "g"
    assert [f.stage for f in m.functions] == [None, "vertex", "fragment"]


def test_const_attribute_and_texture_types_parse_as_names():
    src = """
    @const fn k() -> i32 { return 1; }
    @group(1) @binding(0) var tex: texture_2d<f32>;
    @group(1) @binding(1) var smp: sampler;
    @group(1) @binding(2) var img: texture_storage_2d<rgba8unorm, write>;
    """
    m = parse(src)
    assert m.find("k").attributes[0].name == "const"
    assert m.find("tex").type == A.TypeExpr("texture_2d", [A.Ident("f32")])
    assert m.find("tex").address_space is None
    assert m.find("smp").type == A.TypeExpr("sampler")
    assert dump(m.find("img").type) == "texture_storage_2d<rgba8unorm, write>"


# ---------------------------------------------------------------------------------------------
# Cooperative matrices: both dialects

NAGA_COOP = """
enable f16;
enable wgpu_cooperative_matrix;

var<private> a: coop_mat8x8<f32,A>;
var<private> b: coop_mat8x8<f32, B>;
@group(0) @binding(0) var<storage, read_write> ext: array<f32>;
@group(0) @binding(1) var<storage, read> h: array<f16>;
alias AccT = coop_mat16x16<f32, C>;

@compute @workgroup_size(8, 8, 1)
fn main() {
    var c = coopLoad<coop_mat8x8<f32, C>>(&ext[4]);
    var d = coopMultiplyAdd(a, b, c);
    coopStore(d, &ext[0]);
    c = d;
    let at = coopLoadT<coop_mat16x16<f16,A>>(&h[0], 16u);
    var acc = AccT();
    coopStoreT(acc, &ext[64], 16u);
    coopStore(coop_mat8x8<f32, C>(), &ext[8], 8u);
}
"""


def test_naga_cooperative_matrix_dialect():
    m = parse(NAGA_COOP)
    assert m.enabled == ["f16", "wgpu_cooperative_matrix"]
    assert m.find("a").type == A.TypeExpr("coop_mat8x8", [A.Ident("f32"), A.Ident("A")])
    assert m.find("a").address_space == "private"
    assert dump(m.find("b").type) == "coop_mat8x8<f32, B>"
    assert dump(m.find("AccT").type) == "coop_mat16x16<f32, C>"
    st = body_of(m)
    load = st[0].init
    assert load == A.CallExpr(
        "coopLoad",
        [A.Ident("coop_mat8x8", [A.Ident("f32"), A.Ident("C")])],
        [A.UnaryExpr("&", A.IndexExpr(A.Ident("ext"), A.IntLiteral(4)))])
    assert load.template_args[0].as_type() == A.TypeExpr("coop_mat8x8", [A.Ident("f32"), A.Ident("C")])
    assert st[1].init == A.CallExpr("coopMultiplyAdd", [], [A.Ident("a"), A.Ident("b"), A.Ident("c")])
    assert st[2] == A.CallStmt(A.CallExpr(
        "coopStore", [], [A.Ident("d"), A.UnaryExpr("&", A.IndexExpr(A.Ident("ext"), A.IntLiteral(0)))]))
    assert st[3] == A.AssignStmt("=", A.Ident("c"), A.Ident("d"))
    assert dump(st[4].init) == "(call coopLoadT<coop_mat16x16<f16, A>> (& ([] h 0)) 16u)"
    assert dump(st[5].init) == "(call AccT)"
    assert dump(st[6].call) == "(call coopStoreT acc (& ([] ext 64)) 16u)"
    assert dump(st[7].call) == "(call coopStore (call coop_mat8x8<f32, C>) (& ([] ext 8)) 8u)"


DAWN_SUBGROUP_MATRIX = """
enable chromium_experimental_subgroup_matrix;
enable f16, subgroups;

struct S {
  l: subgroup_matrix_left<f16, 16, 8>,
  r: subgroup_matrix_right<f16, 8, 16>,
}

@group(0) @binding(0) var<storage, read> inA: array<f16>;
@group(0) @binding(1) var<storage, read> inB: array<f16>;
@group(0) @binding(2) var<storage, read_write> result: array<f32>;

@compute @workgroup_size(32)
fn main() {
  let l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&inA, 0u, 16u);
  let r = subgroupMatrixLoad<subgroup_matrix_right<f16,16,16>, col_major>(&inB, 0, 16);
  var acc = subgroup_matrix_result<f32, 16, 16>();
  acc = subgroupMatrixMultiplyAccumulate(l, r, acc);
  let p = subgroupMatrixMultiply<f32>(l, r);
  subgroupMatrixStore<row_major>(&result, 0u, acc, 16u);
  subgroupMatrixStore(&result, 256u, p, false, 16u);
  var m_array: array<subgroup_matrix_left<f32, 8, 8>, 4>;
  let x = array<array<subgroup_matrix_left<f32, 8, 8>, 4>, 4>()[2][3];
}
"""


def test_dawn_subgroup_matrix_dialect():
    m = parse(DAWN_SUBGROUP_MATRIX)
    assert m.enabled == ["chromium_experimental_subgroup_matrix", "f16", "subgroups"]
    s = m.find("S")
    assert s.members[0].type == A.TypeExpr(
        "subgroup_matrix_left", [A.Ident("f16"), A.IntLiteral(16), A.IntLiteral(8)])
    assert dump(s.members[1].type) == "subgroup_matrix_right<f16, 8, 16>"
    st = body_of(m)
    load = st[0].init
    assert load.name == "subgroupMatrixLoad"
    assert load.template_args == [
        A.Ident("subgroup_matrix_left", [A.Ident("f16"), A.IntLiteral(16), A.IntLiteral(16)]),
        A.Ident("row_major")]
    assert load.args == [A.UnaryExpr("&", A.Ident("inA")), A.IntLiteral(0, "u"), A.IntLiteral(16, "u")]
    assert dump(st[1].init) == (
        "(call subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major> (& inB) 0 16)")
    assert dump(st[2].init) == "(call subgroup_matrix_result<f32, 16, 16>)"
    assert dump(st[3].rhs) == "(call subgroupMatrixMultiplyAccumulate l r acc)"
    assert dump(st[4].init) == "(call subgroupMatrixMultiply<f32> l r)"
    assert st[5] == A.CallStmt(A.CallExpr(
        "subgroupMatrixStore", [A.Ident("row_major")],
        [A.UnaryExpr("&", A.Ident("result")), A.IntLiteral(0, "u"), A.Ident("acc"), A.IntLiteral(16, "u")]))
    assert dump(st[6].call) == "(call subgroupMatrixStore (& result) 256u p false 16u)"
    assert dump(st[7].type) == "array<subgroup_matrix_left<f32, 8, 8>, 4>"
    assert dump(st[8].init) == (
        "([] ([] (call array<array<subgroup_matrix_left<f32, 8, 8>, 4>, 4>) 2) 3)")


# ---------------------------------------------------------------------------------------------
# Template list disambiguation


@pytest.mark.parametrize("src, expected", [
    ("a < b", "(< a b)"),
    ("a > b", "(> a b)"),
    ("a<b || c>d", "(|| (< a b) (> c d))"),
    ("a<b && c>d", "(&& (< a b) (> c d))"),
    ("select(a<b, (c>d), e)", "(call select (< a b) (paren (> c d)) e)"),
    ("select((a<b), c>d, e)", "(call select (paren (< a b)) (> c d) e)"),
    ("vec4<f32>(1.0) >= y", "(>= (call vec4<f32> 1.0) y)"),
    ("a >> b", "(>> a b)"),
    ("a << b", "(<< a b)"),
    ("a <= b", "(<= a b)"),
    ("f(i<j, k>(l))", "(call f (call i<j, k> l))"),
    ("array<i32, select(2, 3, a > b)>()", "(call array<i32, (call select 2 3 (> a b))>)"),
    ("array<u32, 1 << 2>()", "(call array<u32, (<< 1 2)>)"),
    ("A<B<<C>()", "(call A<(<< B C)>)"),
    ("A<B<=C>()", "(call A<(<= B C)>)"),
    ("A<(B>=C)>()", "(call A<(paren (>= B C))>)"),
    ("A<(B!=C)>()", "(call A<(paren (!= B C))>)"),
    ("A<(B==C)>()", "(call A<(paren (== B C))>)"),
    ("vec2<i32>(1) >> vec2<u32>(1u)", "(>> (call vec2<i32> 1) (call vec2<u32> 1u))"),
    ("bitcast<vec4<u32>>(x)", "(call bitcast<vec4<u32>> x)"),
    ("a /* < */ < /* > */ b", "(< a b)"),
    ("vec4<f32,>(x)", "(call vec4<f32> x)"),
    ("true < false", "(< true false)"),
])
def test_template_disambiguation(src, expected):
    assert expr(src) == expected


def test_nested_template_closers_in_types():
    m = parse("""
    var<private> v: array<vec4<f32>>;
    var<private> w: array<array<vec2<i32>, 2>, 3>;
    fn f(p: ptr<function, i32>, q: ptr<function,array<vec4<f32>>>) -> array<vec4<f32>,2> {
      let x = a < b;
      let y: array<vec4<f32>, 2> = array<vec4<f32>, 2>();
      return y;
    }
    """)
    assert m.find("v").type == A.TypeExpr("array", [A.Ident("vec4", [A.Ident("f32")])])
    assert dump(m.find("w").type) == "array<array<vec2<i32>, 2>, 3>"
    f = m.find("f")
    assert dump(f.params[0].type) == "ptr<function, i32>"
    assert dump(f.params[1].type) == "ptr<function, array<vec4<f32>>>"
    assert dump(f.return_type) == "array<vec4<f32>, 2>"
    assert dump(f.body.body[0].init) == "(< a b)"
    assert dump(f.body.body[1].type) == "array<vec4<f32>, 2>"


def test_select_with_unparenthesized_comparisons_is_a_template_list():
    # The spec resolves `a<b, c>d` in favour of a template list (its own example:
    # "In the phrase A ( B < C, D > ( E ) ), the segment < C, D > is a template list"), so this
    # is a syntax error in every conforming implementation; we say why and how to fix it.
    src = "fn f() { let x = select(a<b, c>d, e); }"
    with pytest.raises(WgslError) as info:
        parse(src, "sel.wgsl")
    e = info.value
    assert (e.file, e.line, e.col) == ("sel.wgsl", 1, 32)
    assert e.message == "expected ',' or ')' in the arguments of 'select', found 'd'"
    assert "'a<b, c>' was read as a template list" in e.hint
    assert "(a < b)" in e.hint


# ---------------------------------------------------------------------------------------------
# Expressions


@pytest.mark.parametrize("src, expected", [
    ("a + b * c", "(+ a (* b c))"),
    ("a * b + c", "(+ (* a b) c)"),
    ("a - b - c", "(- (- a b) c)"),
    ("a / b % c", "(% (/ a b) c)"),
    ("-a.x[2]", "(- ([] (. a x) 2))"),
    ("!a || b", "(|| (! a) b)"),
    ("a || b || c", "(|| (|| a b) c)"),
    ("a < b && c >= d && e", "(&& (&& (< a b) (>= c d)) e)"),
    ("(a == b) != c", "(!= (paren (== a b)) c)"),
    ("a & b & c", "(& (& a b) c)"),
    ("a | b | c", "(| (| a b) c)"),
    ("a ^ ~b", "(^ a (~ b))"),
    ("(a & b) | c", "(| (paren (& a b)) c)"),
    ("a << 2u", "(<< a 2u)"),
    ("a << b < c", "(< (<< a b) c)"),
    ("a + b < c * d", "(< (+ a b) (* c d))"),
    ("*p", "(* p)"),
    ("- - x", "(- (- x))"),
    ("&buf[0]", "(& ([] buf 0))"),
    ("(*p).field", "(. (paren (* p)) field)"),
    ("v.xyz.x", "(. (. v xyz) x)"),
    ("s.arr[i].rgba", "(. ([] (. s arr) i) rgba)"),
    ("f(x,)", "(call f x)"),
    ("f()", "(call f)"),
    ("array(1, 2, 3)[i]", "([] (call array 1 2 3) i)"),
    ("array<u32, 4>(1u, 2u, 3u, 4u)", "(call array<u32, 4> 1u 2u 3u 4u)"),
    ("mat2x2<f32>(vec2f(1.0), vec2f(2.0))", "(call mat2x2<f32> (call vec2f 1.0) (call vec2f 2.0))"),
    ("true", "true"),
    ("0x1p-3h + .5 + 1.e2 + 2f", "(+ (+ (+ 0x1p-3h .5) 1.e2) 2f)"),
])
def test_expression_precedence(src, expected):
    assert expr(src) == expected


def test_literal_values():
    e = parse_expression("0xFFFFFFFFu")
    assert e == A.IntLiteral(4294967295, "u") and e.text == "0xFFFFFFFFu"
    big = parse_expression("9223372036854775808")
    assert big.value == 2 ** 63 and big.suffix == ""
    assert parse_expression("0i") == A.IntLiteral(0, "i")
    assert parse_expression("1.5e3") == A.FloatLiteral("1.5e3")
    assert parse_expression("1.5e3").value == 1500
    assert parse_expression("0x1p-3h").suffix == "h"
    assert parse_expression("0x1p-3h").value == Fraction(1, 8)
    assert parse_expression("0x1.8").value == Fraction(3, 2)
    assert parse_expression("0x1.fp1f").value == Fraction(31, 8)
    assert parse_expression("1e-2").value == Fraction(1, 100)
    assert parse_expression(".5h").value == Fraction(1, 2)
    assert parse_expression("1f") == A.FloatLiteral("1f", "f")
    assert parse_expression("0x1f") == A.IntLiteral(31)
    assert parse_expression("false") == A.BoolLiteral(False)


# ---------------------------------------------------------------------------------------------
# Spans


def test_spans_point_at_first_token_and_operators():
    src = "fn f() {\n  let x = foo.bar + baz(1, 2) * 3;\n}\n"
    m = parse(src, "s.wgsl")
    let = body_of(m, "f")[0]
    assert (let.span.line, let.span.col, let.span.end_line, let.span.end_col) == (2, 3, 2, 35)  # the statement includes its semicolon
    assert (let.name_span.line, let.name_span.col) == (2, 7)
    plus = let.init
    assert isinstance(plus, A.BinaryExpr)
    assert (plus.span.line, plus.span.col, plus.span.end_col) == (2, 19, 20)
    assert (plus.full_span.col, plus.full_span.end_col) == (11, 34)
    assert plus.full_span.text(src) == "foo.bar + baz(1, 2) * 3"
    member = plus.lhs
    assert (member.span.col, member.member_span.col) == (11, 15)
    times = plus.rhs
    assert times.span.text(src) == "*"
    call = times.lhs
    assert call.span.text(src) == "baz(1, 2)"
    assert call.name_span.text(src) == "baz"
    assert call.args[1].span.text(src) == "2"
    fn = m.find("f")
    assert (fn.span.line, fn.span.col, fn.span.end_line, fn.span.end_col) == (1, 1, 3, 2)
    assert all(s.span.file == "s.wgsl" for s in A.walk(m))


def test_every_node_has_a_span_inside_the_source():
    for src in (MATMUL, NAGA_COOP, DAWN_SUBGROUP_MATRIX):
        m = parse(src, "x.wgsl")
        nlines = len(src.splitlines()) + 1
        count = 0
        for node in A.walk(m):
            count += 1
            s = node.span
            assert s is not None, type(node).__name__
            assert 1 <= s.line <= s.end_line <= nlines
            assert s.line < s.end_line or s.col < s.end_col or isinstance(node, A.Module)
            if not isinstance(node, A.Module):
                assert node.full_span.text(src).strip(), type(node).__name__
        assert count > 50


def test_attributes_start_the_declaration_span():
    src = "@group(0) @binding(1)\nvar<uniform> u: vec4f;"
    v = parse(src).decls[0]
    assert (v.span.line, v.span.col, v.span.end_line) == (1, 1, 2)
    assert v.name_span.text(src) == "u"
    assert v.attributes[1].span.text(src) == "@binding(1)"


def test_unicode_identifiers_and_comments():
    src = """
    /* header /* nested */ still a comment */
    fn café(Δ: f32) -> f32 { // trailing
      let 变量 = Δ * 2.0; /* inline */ return 变量;
    }
    """
    fn = parse(src).find("café")
    assert fn.params[0].name == "Δ"
    assert fn.body.body[0] == A.LetDecl("变量", None, A.BinaryExpr("*", A.Ident("Δ"), A.FloatLiteral("2.0")))


def test_struct_member_names_may_be_keywords_and_empty_semicolons():
    m = parse(";;struct S { loop: u32, @location(0) @interpolate(flat) x: vec2<i32> };;")
    s = m.find("S")
    assert [mem.name for mem in s.members] == ["loop", "x"]
    assert s.members[1].location == A.IntLiteral(0)


def test_parse_is_fast_enough():
    import time
    src = MATMUL * 1
    t0 = time.perf_counter()
    for _ in range(20):
        parse(src)
    assert time.perf_counter() - t0 < 2.0
