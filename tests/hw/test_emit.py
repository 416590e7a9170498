"""emu.hw.emit: IR -> WGSL in both dialects.

Round trip, for every shader under tests/shaders and emu/examples: parse -> emit -> parse gives
the same IR text (locations left out, values renumbered per function, side-effect-free
instructions placed before their first use: `canonical_ir`), and the emitted shader computes the
same bits on the emulator as the original."""
import pathlib
import re
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from backends import emu_inputs, shader_run  # noqa: E402

import emu  # noqa: E402
from emu.cli import main as cli  # noqa: E402
from emu.frontend.wgsl import compile_source  # noqa: E402
from emu.hw.emit import EMIT_RULES, EmitError, canonical_ir, dialect_of, emit  # noqa: E402
from emu.isa.ops import OPS  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHADERS = sorted((ROOT / "tests" / "shaders").glob("*.wgsl")) + sorted((ROOT / "emu" / "examples").glob("*.wgsl")) \
    + sorted((ROOT / "traces" / "hw" / "kernels").glob("*.wgsl"))
IDS = [p.name for p in SHADERS]


def test_every_op_has_an_emitter_rule():
    assert set(EMIT_RULES) == set(OPS), (set(OPS) ^ set(EMIT_RULES))


def test_there_are_shaders_to_round_trip():
    assert len(SHADERS) >= 8


def _strip_enables(text):
    return "\n".join(line for line in text.splitlines() if not line.startswith("enable "))


@pytest.mark.parametrize("path", SHADERS, ids=IDS)
def test_round_trip_same_ir(path):
    src = path.read_text()
    m1, _ = compile_source(src, str(path))
    text = emit(m1, dialect_of(m1), complete_enables=False)
    m2, _ = compile_source(text, str(path))
    assert canonical_ir(m2) == canonical_ir(m1), f"emitted WGSL:\n{text}"


@pytest.mark.parametrize("path", [p for p in SHADERS if "cooperative" in p.read_text() or "subgroup_matrix" in p.read_text()],
                         ids=lambda p: p.name)
def test_round_trip_other_dialect(path):
    """A cooperative shader emitted in the other dialect lowers to the same IR (but the enables)."""
    m1, _ = compile_source(path.read_text(), str(path))
    other = "wgpu" if dialect_of(m1) == "dawn" else "dawn"
    try:
        text = emit(m1, other, complete_enables=False)
    except EmitError as e:
        pytest.skip(f"not expressible in the {other} dialect: {e.message}")
    m2, _ = compile_source(text, str(path))
    assert _strip_enables(canonical_ir(m2)) == _strip_enables(canonical_ir(m1))
    assert dialect_of(m2) == other


def _run(module_src, file, run, bufs):
    dev = emu.Device(run["profile"])
    pipe = dev.create_compute_pipeline(dev.create_shader_module(module_src, file), None, run["overrides"])
    handles = {k: dev.create_buffer(np.frombuffer(v, np.uint8).copy()) for k, v in bufs.items()}
    dev.dispatch(pipe, handles, run["dispatch"])
    return {k: h.read(np.uint8).tobytes() for k, h in handles.items()}


@pytest.mark.parametrize("path", SHADERS, ids=IDS)
def test_emitted_shader_computes_the_same_bits(path):
    src = path.read_text()
    run = shader_run(path.name)
    m1, _ = compile_source(src, str(path))
    bufs = emu_inputs(m1, run=run)
    try:
        want = _run(src, str(path), run, bufs)
    except emu.EmuError as e:
        pytest.skip(f"the original does not run with these inputs ({e.message}); add it to SHADER_RUNS")
    got = _run(emit(m1, dialect_of(m1)), str(path), run, bufs)
    for k in want:
        assert got[k] == want[k], f"binding {k} differs"


# -- constants, bit for bit ------------------------------------------------------------------------

CONST_SRC = """enable f16;
@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(1)
fn main() {
  let a = 1.5f;
  let h = 2.5h;
  o[0] = bitcast<u32>(a);
  o[1] = bitcast<u32>(vec2<f16>(h, 0.0h));
}
"""
F32 = [0.0, -0.0, 2.0 ** -149, 2.0 ** -126 - 2.0 ** -149, 3.4028234663852886e38, -3.4028234663852886e38,
       float(np.float32(0.1)), float("inf"), float("-inf"), float("nan")]
F16 = [0.0, -0.0, 2.0 ** -24, 65504.0, -65504.0, float(np.float16(0.1)), float("inf"), float("-inf"),
       float("nan")]


def _set_const(module, old, new):
    for f in module.functions:
        for i in f.walk():
            if i.op == "const" and i.attrs["value"] == old:
                i.attrs["value"] = new
                return
    raise AssertionError(f"no const {old}")


@pytest.mark.parametrize("which,value", [("f32", v) for v in F32] + [("f16", v) for v in F16],
                         ids=[f"f32:{v!r}" for v in F32] + [f"f16:{v!r}" for v in F16])
def test_constants_are_emitted_bit_exactly(which, value):
    m, _ = compile_source(CONST_SRC, "c.wgsl")
    _set_const(m, 1.5 if which == "f32" else 2.5, value)
    text = emit(m, "dawn")
    lets = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("let ")]
    lit = next(ln for ln in lets if ln.startswith(f"let _v{0 if which == 'f32' else 1} "))
    # finite: a literal; NaN and infinities: bitcast of a run-time u32 (const-expressions are finite)
    assert ("bitcast" in lit) == (not np.isfinite(value)), lit
    m2, _ = compile_source(text, "c.wgsl")
    assert canonical_ir(m2) == canonical_ir(m)
    dev = emu.Device("reference")
    out = dev.create_buffer(size=8)
    dev.dispatch(dev.create_compute_pipeline(dev.create_shader_module(text, "c.wgsl")), {(0, 0): out}, (1, 1, 1))
    got = out.read(np.uint32)
    if which == "f32":
        want = np.array(value, np.float32).view(np.uint32)
        assert (np.isnan(value) and np.isnan(got[:1].view(np.float32)[0])) or got[0] == want, hex(got[0])
    else:
        want = int(np.array(value, np.float16).view(np.uint16))
        h = int(got[1] & 0xFFFF)
        assert (np.isnan(value) and np.isnan(np.array(h, np.uint16).view(np.float16))) or h == want, hex(h)


def test_finite_constants_are_hexadecimal_or_exact_decimal():
    m, _ = compile_source(CONST_SRC, "c.wgsl")
    text = emit(m, "dawn")
    assert "0x1.8p+0f" in text and "2.5h" in text


# -- constructs the emitter rebuilds ---------------------------------------------------------------

PATTERNS = """
@group(0) @binding(0) var<storage, read_write> o: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> flags: array<u32>;
var<workgroup> w: u32;
fn f(x: f32) -> f32 { return x * 2.0; }
@compute @workgroup_size(8)
fn main(@builtin(local_invocation_index) li: u32) {
  var v = o[li];
  v.x += f(v.y) * 3.0;
  v.y = v.z + v.w;
  v[li % 4u] -= 1.0;
  var m = mat2x2<f32>(1.0, 2.0, 3.0, 4.0);
  m[1][0] = v.x;
  o[li] = v + vec4<f32>(m[1], m[0]);
  if (li == 0u) { w = 7u; }
  let u = workgroupUniformLoad(&w);
  var n = 0u;
  for (var i = 0u; i < 4u; i++) { n += i; }
  for (var i = 0u; i < 3u; i++) { n += i * 2u; }
  { var n = 5u; flags[li + 8u] = n; }
  let ok = (li > 2u && u == 7u) || (n > 100u && !(li == 5u));
  flags[li] = select(0u, 1u, ok) + u + n;
}
"""


def test_rebuilt_constructs_round_trip_exactly():
    """Vector-component references (compound assignment with a call in it, dynamic component,
    matrix element), workgroupUniformLoad, short-circuit && and ||, and function variables of one
    name declared twice in one IR block all come back as the same instructions in the same order."""
    m1, _ = compile_source(PATTERNS, "p.wgsl")
    text = emit(m1, "dawn", complete_enables=False)
    m2, _ = compile_source(text, "p.wgsl")
    assert canonical_ir(m2, reorder=False) == canonical_ir(m1, reorder=False), text
    assert "workgroupUniformLoad(" in text and "&&" in text and "||" in text
    assert re.search(r"\+= ", text) and re.search(r"-= ", text)
    # and computes the same bits
    bufs = {(0, 0): np.arange(32, dtype=np.float32), (0, 1): np.zeros(16, np.uint32)}
    run = {"profile": "reference", "overrides": {}, "dispatch": (1, 1, 1)}
    bb = {k: v.tobytes() for k, v in bufs.items()}
    assert _run(text, "p.wgsl", run, bb) == _run(PATTERNS, "p.wgsl", run, bb)


def test_dawn_only_operations_are_errors_in_the_wgpu_dialect():
    src = """enable f16;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read_write> a: array<f16>;
@compute @workgroup_size(32)
fn main() {
  let m = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, 0u, 16u);
  let s = subgroupMatrixScalarAdd(m, 2.0h);
  subgroupMatrixStore<row_major>(&a, 0u, s, 16u);
}
"""
    m, _ = compile_source(src, "k.wgsl")
    assert "subgroupMatrixScalarAdd" in emit(m, "dawn")
    with pytest.raises(EmitError, match="matrix-scalar"):
        emit(m, "wgpu")
    # a matrix times a scalar is naga's `m * s` too
    m3, _ = compile_source(src.replace("subgroupMatrixScalarAdd", "subgroupMatrixScalarMultiply"), "k.wgsl")
    assert "subgroupMatrixScalarMultiply" in emit(m3, "dawn")
    assert re.search(r"let _v\d+ = _v\d+ \* _v\d+;", emit(m3, "wgpu"))
    src2 = src.replace("subgroup_matrix_left<f16, 16, 16>", "subgroup_matrix_left<f16, 16, 8>").replace(
        "let s = subgroupMatrixScalarAdd(m, 2.0h);", "let s = m;")
    m2, _ = compile_source(src2, "k.wgsl")
    # a rectangular matrix is naga's coop_mat{cols}x{rows} (its cooperative-matrix-rectangular
    # input), and lowers back to the same IR
    text = emit(m2, "wgpu", complete_enables=False)
    assert "coop_mat16x8<f16, A>" in text
    m3, _ = compile_source(text, "k.wgsl")
    assert _strip_enables(canonical_ir(m3)) == _strip_enables(canonical_ir(m2))


def test_dialects_spell_cooperative_ops_their_way():
    src = (ROOT / "emu" / "examples" / "gemm_wgpu.wgsl").read_text()
    m, _ = compile_source(src, "gemm_wgpu.wgsl")
    dawn = emit(m, "dawn")
    assert "subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(" in dawn
    assert "subgroupMatrixMultiplyAccumulate(" in dawn and "subgroupMatrixStore<row_major>(" in dawn
    assert "enable chromium_experimental_subgroup_matrix;" in dawn and "wgpu_cooperative_matrix" not in dawn
    wg = emit(compile_source((ROOT / "emu" / "examples" / "gemm_dawn.wgsl").read_text(), "g.wgsl")[0], "wgpu")
    assert "coopLoadT<coop_mat16x16<f16, A>>(&" in wg and "coopMultiplyAdd(" in wg and "coopStoreT(" in wg


def test_dawn_dialect_turns_off_tints_matrix_uniformity_rule_by_its_name():
    # tiles from local_invocation_index / 32: emu runs it, Tint's default rejects it
    src = """enable f16;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read_write> c: array<f16>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lidx: u32) {
  var acc: subgroup_matrix_result<f16, 8, 8>;
  subgroupMatrixStore(&c, (lidx / 32u) * 64u, acc, false, 8u);
}
"""
    m, warnings = compile_source(src, "k.wgsl")
    assert [w.loc.line for w in warnings] == [7]
    dawn = emit(m, "dawn")
    assert "diagnostic(off, chromium.subgroup_matrix_uniformity);" in dawn
    assert compile_source(dawn, "emitted.wgsl")[1] == []     # read as Tint reads the directive


def test_cli_emit(tmp_path, capsys):
    out = tmp_path / "o.wgsl"
    assert cli(["emit", str(ROOT / "emu" / "examples" / "gemm_wgpu.wgsl"), "--dialect", "dawn", "-o", str(out)]) == 0
    assert "subgroupMatrixMultiplyAccumulate" in out.read_text()
    compile_source(out.read_text(), "o.wgsl")
    assert cli(["emit", str(ROOT / "tests" / "shaders" / "vecadd.wgsl")]) == 0
    assert "fn main(" in capsys.readouterr().out
    bad = tmp_path / "scalar.wgsl"
    bad.write_text("""enable f16;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read_write> a: array<f16>;
@compute @workgroup_size(32)
fn main() {
  let m = subgroupMatrixLoad<subgroup_matrix_result<f16, 16, 16>, row_major>(&a, 0u, 16u);
  subgroupMatrixStore<row_major>(&a, 0u, subgroupMatrixScalarAdd(m, 1.0h), 16u);
}
""")
    assert cli(["emit", str(bad), "--dialect", "wgpu"]) == 1
    assert "matrix-scalar" in capsys.readouterr().err


def test_ops_the_front_end_never_makes_still_emit():
    """input, undef, insert and select (the front end lowers WGSL to other ops) are written so
    that the emitted shader computes what the IR does."""
    from emu.api import ShaderModule
    from emu.isa.textparser import parse_ir
    ir = '''module "t.ir"
global @o : array<u32> storage read_write group(0) binding(0)
func @main() -> void compute workgroup_size(4, 1, 1) {
  %0 = input {builtin = "local_invocation_index"} : u32
  %1 = undef : vec2<u32>
  %2 = insert %1, %0 {path = [1]} : vec2<u32>
  %3 = const {value = 2} : u32
  %4 = binary %0, %3 {fn = "lt"} : bool
  %5 = select %3, %0, %4 : u32
  %6 = extract %2 {path = [1]} : u32
  %7 = binary %5, %6 {fn = "add"} : u32
  %8 = global {name = "o"} : ptr<storage, array<u32>, read_write>
  %9 = access %8, %0 {path = [-1]} : ptr<storage, u32, read_write>
  store %9, %7
}
'''
    m = parse_ir(ir, "t.ir")
    text = emit(m, "dawn")
    assert "@builtin(local_invocation_index)" in text and "select(" in text
    outs = []
    for mod in (ShaderModule(m, "", "t.ir", []), None):
        dev = emu.Device("reference")
        o = dev.create_buffer(size=16)
        mod = mod or dev.create_shader_module(text, "e.wgsl")
        dev.dispatch(dev.create_compute_pipeline(mod), {(0, 0): o}, (1, 1, 1))
        outs.append(o.read(np.uint32).tolist())
    assert outs[0] == outs[1] == [0, 2, 4, 5]


def test_sibling_and_shadowing_names_survive_the_round_trip():
    # Tint's bug/tint/914 (a tiled matmul): two loops in one loop body each declare `innerRow`;
    # naga's globals input: a local `at` declared after the last use of the global `at`
    src = """@group(0) @binding(0) var<storage, read_write> o: array<u32>;
var<workgroup> at: atomic<u32>;
@compute @workgroup_size(1)
fn main() {
  for (var t = 0u; t < 2u; t++) {
    for (var innerRow = 0u; innerRow < 2u; innerRow++) { o[t * 4u + innerRow] = innerRow; }
    for (var innerRow = 0u; innerRow < 2u; innerRow++) { o[t * 4u + innerRow + 2u] = innerRow + 7u; }
  }
  atomicStore(&at, 2u);
  var at: u32 = 5u;
  o[8] = at + atomicLoad(&o_at());
}
fn o_at() -> u32 { return 0u; }
""".replace("atomicLoad(&o_at())", "o_at()")
    m1, _ = compile_source(src, "n.wgsl")
    text = emit(m1, "dawn", complete_enables=False)
    m2, _ = compile_source(text, "n.wgsl")
    assert canonical_ir(m2) == canonical_ir(m1), text
    assert text.count("var innerRow: u32") == 2 and "var at: u32" in text
