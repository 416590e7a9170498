"""IR text round trip: WGSL -> IR -> text -> parse_ir -> text gives the same text, the parsed module
equals the compiled one in everything the text carries, and the verifier treats both alike.

Runs over every shader under tests/shaders/ and the small shaders below (loops, switch, structs,
pointers, atomics, builtins with several results, subgroup ops, both cooperative dialects)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from emu.errors import EmuError
from emu.frontend.wgsl import compile_source
from emu.isa import types as T
from emu.isa.ir import Function, Inst, Loc, Module
from emu.isa.printer import print_module
from emu.isa.textparser import IRParseError, parse_ir
from emu.isa.verify import verify

SHADER_DIR = Path(__file__).resolve().parents[1] / "shaders"

CONTROL = """
struct Inner { x: f32, @align(16) y: vec3<f32> }
struct Params { n: u32, @size(32) inner: Inner, m: mat2x3<f32>, k: array<vec4<i32>, 2> }
@group(0) @binding(0) var<storage, read_write> buf: array<f32>;
@group(0) @binding(1) var<uniform> p: Params;
@group(0) @binding(2) var<storage, read_write> cnt: atomic<u32>;
@group(0) @binding(3) var<storage, read> ro: array<u32>;
var<workgroup> tile: array<f32, 64>;
var<workgroup> hits: atomic<i32>;
var<private> seed: vec2<f32> = vec2<f32>(1.5, -0.0);
var<private> weights: array<f32, 3> = array<f32, 3>(0.25, 1e-30, -7.0);
override N: u32 = 64;
@id(3) override S: f32;
override ON: bool = true;

fn bump(q: ptr<function, f32>, k: f32) -> f32 {
  *q = *q + k;
  return *q;
}

fn parts(x: f32) -> f32 {
  let r = frexp(x);
  let z = modf(vec2<f32>(x, 2.0));
  return r.fract + f32(r.exp) + z.whole.x;
}

@compute @workgroup_size(N, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  var acc = 0.0;
  for (var i = 0u; i < p.n; i++) {
    if (i == 3u) { continue; }
    acc += buf[i] * 0.1;
    switch (i) {
      case 0u, 1u: { acc = acc + 1.0; }
      case 5u: { break; }
      default: {}
    }
  }
  loop { acc = acc * 2.0; continuing { break if acc > 100.0; } }
  while (acc > 1.0 && ON) { acc = acc / 2.0; }
  let b2 = bump(&acc, 1.0);
  let old = atomicAdd(&cnt, 1u);
  let r = atomicCompareExchangeWeak(&cnt, 1u, 2u);
  atomicStore(&hits, 3);
  tile[li % 64u] = acc;
  workgroupBarrier();
  storageBarrier();
  let v = vec4<f32>(acc, b2, 0.5, 1.0);
  let w = v.zyx * p.m * vec2<f32>(1.0, 2.0);
  let inf = bitcast<f32>(0x7f800000u);
  buf[gid.x] = w.x + parts(acc) + f32(r.old_value) + seed.y + S + f32(ro[0]) + inf + weights[1]
      + f32(old) + f32(arrayLength(&buf)) + select(0.0, 1.0, r.exchanged) + f32(p.k[1].w);
}
"""

SUBGROUPS = """
enable f16;
enable subgroups;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<storage, read_write> outh: array<f16>;
@compute @workgroup_size(64)
fn main(@builtin(subgroup_invocation_id) sid: u32, @builtin(subgroup_size) ssz: u32,
        @builtin(global_invocation_id) gid: vec3<u32>) {
  let x = f32(sid);
  let s = subgroupAdd(x) + subgroupExclusiveAdd(x) + subgroupInclusiveMul(x) + subgroupMax(x);
  let t = subgroupBroadcast(x, 0u) + subgroupBroadcastFirst(x) + subgroupShuffle(x, ssz - 1u)
        + subgroupShuffleXor(x, 1u) + subgroupShuffleUp(x, 1u) + subgroupShuffleDown(x, 1u);
  let b = subgroupBallot(sid < 4u);
  let e = subgroupElect();
  if (subgroupAll(x >= 0.0) && subgroupAny(e)) {
    out[gid.x] = s + t + f32(b.x) + f32((subgroupAnd(sid) | subgroupOr(sid)) ^ subgroupXor(sid));
  }
  outh[gid.x] = f16(x) * 2.5h;
}
"""

DAWN_MATRIX = """
enable chromium_experimental_subgroup_matrix;
enable f16;
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<f16>;
@group(0) @binding(2) var<storage, read_write> d: array<f32>;
@compute @workgroup_size(32)
fn main() {
  let l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, 0u, 16u);
  let r = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&b, 0u, 16u);
  var acc = subgroup_matrix_result<f32, 16, 16>();
  acc = subgroupMatrixMultiplyAccumulate(l, r, acc);
  let m = subgroupMatrixMultiply<f32>(l, r);
  subgroupMatrixStore<row_major>(&d, 0u, acc, 16u);
  subgroupMatrixStore(&d, 256u, m, false, 16u);
}
"""

WGPU_COOP = """
enable f16;
enable wgpu_cooperative_matrix;
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(64)
fn main() {
  let x = coopLoadT<coop_mat16x16<f16, A>>(&a[0], 16u);
  let y = coopLoadT<coop_mat16x16<f16, B>>(&a[256], 16u);
  var acc = coop_mat16x16<f32, C>();
  acc = coopMultiplyAdd(x, y, acc);
  coopStoreT(acc, &c[0], 16u);
  let z = coopLoad<coop_mat8x8<f32, C>>(&c[4]);
  coopStore(z, &c[512]);
}
"""

OWN = {"control.wgsl": CONTROL, "subgroups.wgsl": SUBGROUPS, "dawn_matrix.wgsl": DAWN_MATRIX,
       "wgpu_coop.wgsl": WGPU_COOP}
FILES = sorted(SHADER_DIR.rglob("*.wgsl")) if SHADER_DIR.is_dir() else []


# -- structural comparison: everything the text carries ------------------------------------------

def _norm(v):
    if isinstance(v, float) and math.isnan(v):
        return ("nan",)
    if isinstance(v, float):
        return ("float", v.hex())   # tells -0.0 from 0.0 and 1.0 from 1
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    if isinstance(v, bool) or v is None:
        return (type(v).__name__, v)
    if isinstance(v, int):
        return ("int", v)
    return v


def _inst_shape(i: Inst, defs: dict):
    for a in i.args:
        assert defs[a.id] is a, f"operand %{a.id} of '{i.op}' is not the value its definition made"
    if i.result is not None:
        defs[i.result.id] = i.result
        assert i.result.type == i.type
    return (i.op, [a.id for a in i.args], i.type, {k: _norm(v) for k, v in i.attrs.items()}, i.loc,
            None if i.result is None else i.result.id,
            [[_inst_shape(x, defs) for x in b.insts] for b in i.blocks])


def _func_shape(f: Function):
    defs = {p.id: p for p in f.params}
    # operands may be defined after their use in program text only in broken IR; collect first
    for i in f.walk():
        if i.result is not None:
            defs[i.result.id] = i.result
    return (f.name, [(p.id, p.type) for p in f.params], f.ret, f.stage, f.workgroup_size,
            dict(f.param_builtins), [_inst_shape(i, defs) for i in f.body.insts])


def module_shape(m: Module):
    return (m.file, list(m.enables), list(m.structs),
            [(o.name, o.type, o.id, _norm(o.default)) for o in m.overrides],
            [(g.name, g.space, g.type, g.access, g.group, g.binding, _norm(g.init)) for g in m.globals],
            [_func_shape(f) for f in m.functions])


def _verify_outcome(m: Module):
    try:
        verify(m)
    except EmuError as e:
        return str(e)
    return None


def roundtrip(source: str, file: str):
    try:
        m, _ = compile_source(source, file)
    except EmuError as e:
        pytest.skip(f"{file} does not compile (a front-end test's business): {e.message}")
    text = print_module(m)
    parsed = parse_ir(text, file + ".ir")
    again = print_module(parsed)
    assert again == text
    assert print_module(parsed, locs=False) == print_module(m, locs=False)
    assert module_shape(parsed) == module_shape(m)
    bare = print_module(m, locs=False)
    assert print_module(parse_ir(bare, file + ".ir"), locs=False) == bare
    return m, parsed, text


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(SHADER_DIR)) for p in FILES])
def test_shader_files_roundtrip(path: Path):
    m, parsed, _ = roundtrip(path.read_text(), path.name)
    # The verifier judges the parsed module exactly as it judges the compiled one.
    assert _verify_outcome(parsed) == _verify_outcome(m)


@pytest.mark.parametrize("name", sorted(OWN))
def test_own_shaders_roundtrip_and_verify(name: str):
    m, parsed, text = roundtrip(OWN[name], name)
    verify(m)
    verify(parsed)


def test_control_shader_covers_the_text_forms():
    _, parsed, text = roundtrip(CONTROL, "control.wgsl")
    # every kind of header line and attribute value is exercised
    for needle in ("struct Params { n: u32, inner: struct.Inner size(32), ",
                   "y: vec3<f32> align(16)",
                   "tuple __frexp_result_f32 { fract: f32, exp: i32 }",
                   "tuple __atomic_compare_exchange_result_u32 { old_value: u32, exchanged: bool }",
                   "override @S : f32 id(3)", "override @ON : bool = true",
                   "global @p : struct.Params uniform group(0) binding(1)",
                   "global @ro : array<u32> storage read group(0) binding(3)",
                   "global @seed : vec2<f32> private = [0x1.8000000000000p+0, -0x0.0p+0]",
                   'workgroup_size("N", 1, 1)', "{cases = [[0, 1], [5], [\"default\"]]}",
                   "} {", "break_if"):
        assert needle in text, needle
    assert parsed.global_("p").access == "read"
    assert parsed.global_("tile").access == "read_write"
    assert parsed.global_("seed").init == [1.5, -0.0] and math.copysign(1, parsed.global_("seed").init[1]) < 0
    frexp = next(i for i in parsed.functions[1].walk() if i.attrs.get("fn") == "frexp")
    assert isinstance(frexp.type, T.TupleType)
    assert frexp.type.fields == (("fract", T.F32), ("exp", T.I32))
    assert frexp.loc == Loc("control.wgsl", 22, 11)
    acc = next(i for i in parsed.functions[2].walk() if i.op == "var")
    assert acc.result.name == "acc"


def test_cooperative_dialects_print_the_same_ops():
    _, dawn, _ = roundtrip(DAWN_MATRIX, "d.wgsl")
    _, wgpu, _ = roundtrip(WGPU_COOP, "w.wgsl")
    def ops(m):
        return [i.op for i in m.functions[0].walk() if i.op.startswith("coop_")]
    assert ops(dawn) == ["coop_load", "coop_load", "coop_fill", "coop_mma", "coop_mul", "coop_store",
                         "coop_store"]
    assert ops(wgpu) == ["coop_load", "coop_load", "coop_fill", "coop_mma", "coop_store", "coop_load",
                         "coop_store"]
    mma = next(i for i in wgpu.functions[0].walk() if i.op == "coop_mma")
    assert [a.type for a in mma.args] == [T.CoopMatrixType(16, 16, T.F16, "A"),
                                          T.CoopMatrixType(16, 16, T.F16, "B"),
                                          T.CoopMatrixType(16, 16, T.F32, "C")]


def test_void_call_verifies():
    src = "fn f() {}\n@compute @workgroup_size(1) fn main() { f(); }\n"
    m, _ = compile_source(src, "void.wgsl")
    verify(m)


# -- hand-written IR -------------------------------------------------------------------------------

HAND = '''\
; a comment line
module "hand.wgsl"

enable f16
override @K : i32 = -3
global @w : array<struct.Pair, 4> workgroup
struct Pair { a: struct.Leaf, b: f16 }
struct Leaf { x: vec2<f16> }
global @u : array<f32> storage read_write group(1) binding(2) ; hand.wgsl:3:1
func @g(%0: f32) -> f32 {                                      ; hand.wgsl:5:1
  %1 = builtin %0 {fn = "sqrt", extra = [1, -2, 0x1.8p+1, -inf, nan, null, true, "a;b\\"c"], t = <coopmat<f16, 16x8, A>>} : f32 ; hand.wgsl:6:3
  return %1
}
'''


def test_hand_written_ir():
    m = parse_ir(HAND, "hand.ir")
    assert m.file == "hand.wgsl" and m.enables == ["f16"]
    leaf = T.StructType("Leaf", (T.Member("x", T.VectorType(T.F16, 2)),))
    pair = T.StructType("Pair", (T.Member("a", leaf), T.Member("b", T.F16)))
    assert m.structs == [pair, leaf]                      # text order; forward references resolve
    assert m.global_("w").type == T.ArrayType(pair, 4)
    assert m.global_("u").loc == Loc("hand.wgsl", 3, 1)
    assert m.override("K").default == -3
    f = m.function("g")
    assert f.loc == Loc("hand.wgsl", 5, 1)
    b = f.body.insts[0]
    extra = b.attrs["extra"]
    assert extra[:4] == [1, -2, 3.0, -math.inf] and math.isnan(extra[4]) and extra[5:] == [None, True, 'a;b"c']
    assert b.attrs["t"] == T.CoopMatrixType(16, 8, T.F16, "A")
    assert b.loc == Loc("hand.wgsl", 6, 3)
    assert f.body.insts[1].args[0] is b.result
    verify(m)
    assert print_module(parse_ir(print_module(m))) == print_module(m)


def test_every_type_form_parses():
    types = [T.BOOL, T.I32, T.U32, T.F32, T.F16, T.BF16, T.I8, T.U8, T.VOID,
             T.VectorType(T.F16, 3), T.MatrixType(4, 2, T.F32), T.ArrayType(T.U32, None),
             T.ArrayType(T.ArrayType(T.F32, 4), 4), T.AtomicType(T.I32),
             T.PointerType("workgroup", T.ArrayType(T.AtomicType(T.U32), 8), "read_write"),
             T.PointerType("storage", T.ArrayType(T.F16, None), "read"),
             T.CoopMatrixType(8, 16, T.BF16, "B"), T.CoopMatrixType(16, 16, T.I8, "C"),
             T.StructType("S", (T.Member("v", T.F32),)),
             T.TupleType("__modf_result_vec3_f32", (("fract", T.VectorType(T.F32, 3)),
                                                    ("whole", T.VectorType(T.F32, 3))))]
    lines = ['module "t"', "struct S { v: f32 }", "func @f() -> void {"]
    for n, t in enumerate(types):
        lines.append(f"  %{n} = undef {{t = <{t}>}} : {t}")
    lines.append("}")
    with pytest.raises(IRParseError, match="struct '__modf_result_vec3_f32' is not defined"):
        parse_ir("\n".join(lines))
    lines.insert(2, "tuple __modf_result_vec3_f32 { fract: vec3<f32>, whole: vec3<f32> }")
    m = parse_ir("\n".join(lines))
    insts = m.functions[0].body.insts
    assert [i.type for i in insts] == types
    assert [i.attrs["t"] for i in insts] == types
    assert print_module(m) == "\n".join(lines) + "\n"


# -- parse errors: IR file:line:col and the message ------------------------------------------------

GOOD_HEAD = 'module "e.wgsl"\nglobal @a : array<f32> storage read_write group(0) binding(0)\n'


@pytest.mark.parametrize("body, where, message", [
    ("func @f() -> void {\n  %1 = load %0 : f32\n}\n", (4, 13),
     "%0 is not defined in function '@f'"),
    ("func @f(%0: f32) -> void {\n  %0 = const {value = 1} : f32\n}\n", (4, 3),
     "%0 is defined twice (first at line 3)"),
    ("func @f() -> void {\n  %0 = const {value = 1} : vec5<f32>\n}\n", (4, 28),
     "vectors have 2, 3 or 4 components, not 5"),
    ("func @f() -> void {\n  %0 = undef : struct.Nope\n}\n", (4, 23), "struct 'Nope' is not defined"),
    ("func @f() -> void {\n  %0 = undef : ptr<stack, f32, read>\n}\n", (4, 20),
     "unknown address space 'stack'"),
    ("func @f() -> void {\n  %0 = undef : coopmat<f16, 16x16, D>\n}\n", (4, 36),
     "unknown matrix role 'D'"),
    ("func @f() -> void {\n  %0 = const {value = 1}\n}\n", (4, 25),
     "expected ': TYPE' for the result %0, found the end of the line"),
    ("func @f() -> void {\n  barrier {kind = workgroup}\n}\n", (4, 19),
     "expected an attribute value, found 'workgroup'"),
    ("func @f() -> void {\n  %0 = const {value = 1} : u32 ; somewhere\n}\n", (4, 32),
     "expected a source location FILE:LINE:COL after ';', found 'somewhere'"),
    ("func @f() -> void {\n  loop {\n  } {\n", (3, 1),
     "function is not closed: expected '}' before the end of the text"),
    ("func @f() -> void {\n  store %0 :\n}\n", (4, 12),
     "only an instruction with a result (%N = ...) has a type"),
    ("func @f() -> void {\n}\nfunc @f() -> void {\n}\n", (5, 1), "function '@f' is defined twice"),
    ("global @a : f32 private\n", (3, 8), "global '@a' is defined twice"),
    ("func @f() -> void compute workgroup_size(1, 1) {\n}\n", (3, 45),
     "workgroup_size needs 3 entries, not 2"),
    ("wobble\n", (3, 1), "expected 'module', 'enable', 'struct', 'tuple', 'override', 'global' or "
                         "'func', found 'wobble'"),
    ('func @f() -> void {\n  %0 = const {value = "open} : u32\n}\n', (4, 23),
     "unexpected character '\"' in IR text"),
])
def test_parse_errors(body, where, message):
    with pytest.raises(IRParseError) as ei:
        parse_ir(GOOD_HEAD + body, "e.ir")
    e = ei.value
    assert isinstance(e, EmuError)
    assert e.message == message
    assert (e.loc.file, e.loc.line, e.loc.col) == ("e.ir",) + where
    assert str(e).startswith(f"e.ir:{where[0]}:{where[1]}: error: {message}")


def test_use_in_another_function_names_it():
    text = GOOD_HEAD + ("func @f() -> void {\n  %0 = const {value = 1} : u32\n}\n"
                        "func @g() -> void {\n  %1 = load %0 : u32\n}\n")
    with pytest.raises(IRParseError, match=r"%0 is not defined in function '@g' \(it is defined at "
                                           r"line 4, in another function\)"):
        parse_ir(text, "e.ir")


def test_empty_text_and_no_module_line():
    assert parse_ir("").functions == []
    m = parse_ir("func @f() -> void {\n}\n", "plain.ir")
    assert m.file == "plain.ir" and m.functions[0].name == "f"
