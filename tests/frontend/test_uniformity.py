"""WGSL's uniformity analysis (emu/frontend/wgsl/uniformity.py) on our own shaders, one per rule:
the finding Tint gives (its severity, words, place) and its notes (where control flow became
non-uniform and where the value comes from). Tint's own corpus and unit tests are measured by
`scripts/corpus.py --uniformity [--tint-unit uniformity_test.cc]`. Also: the analysis (and the IR's
cooperative-matrix check) is linear in the program's size, at WGSL's deepest nesting and in a
10,000-statement function."""
from __future__ import annotations

import time

import pytest

from emu.api import compile_wgsl
from emu.frontend.wgsl import parser as wgsl_parser
from emu.frontend.wgsl import uniformity
from emu.frontend.wgsl.parser import parse

HEADER = """@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<uniform> params: vec4u;
var<workgroup> counter: atomic<u32>;
var<workgroup> flag: u32;
"""
CASES = {
"storage_condition": """
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32) {
  if (data[li] > 0u) {
    workgroupBarrier();
  }
}""",
"invocation_id_condition": """
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32) {
  if (li < 32u) {
    workgroupBarrier();
  }
}""",
"after_non_uniform_break": """
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid: vec3u) {
  loop {
    if (lid.x > 3u) {
      break;
    }
    storageBarrier();
  }
}""",
"after_non_uniform_return": """
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  if (gid.x >= arrayLength(&data)) {
    return;
  }
  workgroupBarrier();
}""",
"variable_assigned_under_branch": """
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32) {
  var n = 4u;
  if (li == 0u) {
    n = 8u;
  }
  for (var i = 0u; i < n; i++) {
    workgroupBarrier();
  }
}""",
"uniform_load_argument": """
var<workgroup> slots: array<u32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32) {
  let v = workgroupUniformLoad(&slots[li]);
  data[li] = v;
}""",
"parameter_required_to_be_uniform": """
fn sync_if(c: u32) {
  if (c > 0u) {
    workgroupBarrier();
  }
}
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32) {
  sync_if(li);
}""",
"call_site_required_to_be_uniform": """
fn helper() {
  storageBarrier();
}
fn outer() {
  helper();
}
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  for (var i = 0u; i < gid.x; i++) {
    outer();
  }
}""",
"return_value_may_be_non_uniform": """
fn ticket() -> u32 {
  return atomicAdd(&counter, 1u);
}
@compute @workgroup_size(64)
fn main() {
  if (ticket() == 0u) {
    workgroupBarrier();
  }
}""",
"pointer_contents_become_non_uniform": """
fn store(p: ptr<function, u32>, v: u32) {
  *p = v;
}
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32) {
  var x = 0u;
  store(&x, li);
  if (x == 0u) {
    workgroupBarrier();
  }
}""",
"short_circuit": """
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32) {
  if (li == 0u && workgroupUniformLoad(&flag) == 0u) {
    data[0] = 1u;
  }
}""",
"switch_on_invocation": """
@compute @workgroup_size(64)
fn main(@builtin(subgroup_invocation_id) sid: u32) {
  switch (sid) {
    case 0u: {
      workgroupBarrier();
    }
    default: {}
  }
}""",
"derivative": """
@group(0) @binding(2) var t: texture_2d<f32>;
@group(0) @binding(3) var s: sampler;
@fragment
fn main(@location(0) uv: vec2f) -> @location(0) vec4f {
  var c = vec4f(0.0);
  if (uv.x > 0.5) {
    c = textureSample(t, s, uv) + vec4f(dpdx(uv.y));
  }
  return c;
}""",
"subgroup_in_divergent_branch": """
enable subgroups;
@compute @workgroup_size(64)
fn main(@builtin(subgroup_invocation_id) sid: u32) {
  if (sid % 2u == 0u) {
    data[sid] = subgroupAdd(sid);
  }
}""",
"subgroup_shuffle_delta": """
enable subgroups;
@compute @workgroup_size(64)
fn main(@builtin(subgroup_invocation_id) sid: u32) {
  data[sid] = subgroupShuffleDown(sid, sid & 3u);
}""",
}
ACCEPTED = {
"workgroup_id": """
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  if (wid.x + 1u < nwg.x) {
    workgroupBarrier();
  }
}""",
"uniform_buffer_and_constants": """
override TILE: u32 = 16u;
const N = 4u;
@compute @workgroup_size(64)
fn main() {
  for (var k = 0u; k < params.x * TILE + N; k += TILE) {
    workgroupBarrier();
  }
}""",
"workgroup_uniform_load": """
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32) {
  if (li == 0u) {
    flag = data[0];
  }
  if (workgroupUniformLoad(&flag) > 0u) {
    workgroupBarrier();
  }
}""",
"loop_exits_reconverge": """
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32) {
  for (var i = 0u; i < li; i++) {
    data[li] += i;
  }
  workgroupBarrier();
}""",
"subgroup_id_in_subgroup_scope": """
enable subgroups;
@compute @workgroup_size(64)
fn main(@builtin(subgroup_id) sg: u32, @builtin(subgroup_invocation_id) sid: u32) {
  if (sg == 0u) {
    data[sid] = subgroupAdd(sid);
  }
  if (subgroupBroadcastFirst(sg) > 1u) {
    data[sid] = subgroupMax(sid);
  }
}""",
"derivative_rule_off": """
diagnostic(off, derivative_uniformity);
@fragment
fn main(@location(0) uv: vec2f) -> @location(0) vec4f {
  if (uv.x > 0.5) {
    return vec4f(dpdx(uv.y));
  }
  return vec4f(0.0);
}""",
"subgroup_rule_off": """
enable subgroups;
diagnostic(off, subgroup_uniformity);
@compute @workgroup_size(64)
fn main(@builtin(subgroup_invocation_id) sid: u32) {
  if (sid % 2u == 0u) {
    data[sid] = subgroupAdd(sid);
  }
}""",
}


def shader(body: str) -> str:
    """HEADER after the body's directives (which must come first), then the body."""
    lines = body.strip("\n").split("\n")
    directives = [x for x in lines if x.startswith(("enable ", "diagnostic("))]
    rest = [x for x in lines if x not in directives]
    return "\n".join(directives) + ("\n" if directives else "") + HEADER + "\n".join(rest) + "\n"


def findings(src: str):
    return [(f.severity, f.span.line, f.span.col, f.message, [(s.line, s.col, t) for s, t in f.notes])
            for f in uniformity.analyze(parse(src, "k.wgsl"))]


CF = "control flow depends on possibly non-uniform value"
BARRIER = "'workgroupBarrier' must only be called from uniform control flow"
EXPECTED = {
    "storage_condition": [("error", 8, 5, BARRIER, [(7, 3, CF), (7, 7, "reading from read_write storage buffer 'data' may result in a non-uniform value")])],
    "invocation_id_condition": [("error", 8, 5, BARRIER, [(7, 3, CF), (7, 7, "builtin 'li' of 'main' may be non-uniform")])],
    "after_non_uniform_break": [("error", 11, 5, "'storageBarrier' must only be called from uniform control flow",
                                 [(8, 5, CF), (8, 9, "builtin 'lid' of 'main' may be non-uniform")])],
    "after_non_uniform_return": [("error", 10, 3, BARRIER, [(7, 3, CF), (7, 7, "builtin 'gid' of 'main' may be non-uniform")])],
    "variable_assigned_under_branch": [("error", 12, 5, BARRIER, [(8, 3, CF), (8, 7, "builtin 'li' of 'main' may be non-uniform")])],
    "uniform_load_argument": [("error", 8, 32, "'workgroupUniformLoad' requires argument 0 to be uniform",
                               [(8, 39, "builtin 'li' of 'main' may be non-uniform")])],
    "parameter_required_to_be_uniform": [("error", 7, 5, BARRIER, [
        (6, 3, CF), (5, 12, "parameter 'c' of 'sync_if' may be non-uniform"),
        (12, 11, "possibly non-uniform value passed here"), (12, 11, "builtin 'li' of 'main' may be non-uniform")])],
    "call_site_required_to_be_uniform": [("error", 6, 3, "'storageBarrier' must only be called from uniform control flow", [
        (14, 5, "called indirectly by 'outer' from 'main'"), (13, 3, CF), (13, 24, "builtin 'gid' of 'main' may be non-uniform")])],
    "return_value_may_be_non_uniform": [("error", 11, 5, BARRIER, [(10, 3, CF), (10, 7, "return value of 'ticket' may be non-uniform")])],
    "pointer_contents_become_non_uniform": [("error", 13, 5, BARRIER, [(12, 3, CF), (11, 13, "builtin 'li' of 'main' may be non-uniform")])],
    "short_circuit": [("error", 7, 19, "'workgroupUniformLoad' must only be called from uniform control flow",
                       [(7, 7, CF), (7, 7, "builtin 'li' of 'main' may be non-uniform")])],
    "switch_on_invocation": [("error", 9, 7, BARRIER, [(7, 3, CF), (7, 11, "builtin 'sid' of 'main' may be non-uniform")])],
    "derivative": [("error", 11, 41, "'dpdx' must only be called from uniform control flow",
                    [(10, 3, CF), (10, 7, "user-defined input 'uv' of 'main' may be non-uniform")])],
    "subgroup_in_divergent_branch": [("error", 9, 17, "'subgroupAdd' must only be called from subgroup uniform control flow",
                                      [(8, 3, CF), (8, 7, "builtin 'sid' of 'main' may be non-uniform")])],
    "subgroup_shuffle_delta": [("error", 8, 44, "'subgroupShuffleDown' requires argument 1 to be uniform",
                                [(8, 40, "builtin 'sid' of 'main' may be non-uniform")])],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_what_tint_rejects_is_reported_with_its_path(name):
    assert findings(shader(CASES[name])) == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_what_tint_accepts_is_not_reported(name):
    assert findings(shader(ACCEPTED[name])) == []


def test_severity_follows_the_diagnostic_rules():
    body = CASES["derivative"]
    warn = findings(shader("diagnostic(warning, derivative_uniformity);\n" + body))
    assert [(f[0], f[3]) for f in warn] == [("warning", "'dpdx' must only be called from uniform control flow")]
    # an attribute on the function wins over the module's directive; an error ends the analysis
    # (Tint reports one), warnings and infos are reported for every function
    src = shader("diagnostic(info, derivative_uniformity);\n" + body.replace("@fragment\n", "@fragment @diagnostic(off, derivative_uniformity)\n")
                 + "\nfn other(v: f32) -> f32 {\n  if (data[0] > 0u) {\n    return dpdx(v);\n  }\n  return 0.0;\n}\n")
    assert [(f[0], f[1]) for f in findings(src)] == [("info", 19)]
    sub = findings(shader("diagnostic(warning, subgroup_uniformity);\n" + CASES["subgroup_in_divergent_branch"]))
    assert [f[0] for f in sub] == ["warning"]


def test_emu_check_reports_the_finding_with_tints_words(tmp_path, capsys):
    from emu.cli import main
    k = tmp_path / "k.wgsl"
    k.write_text(shader(CASES["storage_condition"]))
    assert main(["check", str(k)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{k}:8:5: warning: 'workgroupBarrier' must only be called from uniform control flow: "
                          f"Tint (Dawn, Chrome) rejects this shader\n"), err
    assert f"   note: {k}:7:3: control flow depends on possibly non-uniform value\n" \
           f"   note: {k}:7:7: reading from read_write storage buffer 'data' may result in a non-uniform value\n" \
           f"   hint: make the condition uniform" in err
    k.write_text(shader("diagnostic(warning, subgroup_uniformity);\n" + CASES["subgroup_in_divergent_branch"]))
    assert main(["check", str(k)]) == 1
    assert "Tint (Dawn, Chrome) reports it as a warning (subgroup_uniformity)" in capsys.readouterr().err
    k.write_text(shader(ACCEPTED["workgroup_uniform_load"]))
    assert main(["check", str(k)]) == 0


# -- linear in the program's size --------------------------------------------------------------

def nested_loops(depth: int, coop: bool = True) -> str:
    """`depth` nested loops, each left early by some invocations (a non-uniform break), a barrier
    and (with `coop`) a subgroup-matrix load and store at the bottom."""
    inner = ("let m = subgroupMatrixLoad<subgroup_matrix_left<f16, 8, 8>>(&a, 0u, false, 8u);\n"
             "subgroupMatrixStore(&a, 0u, m, false, 8u);\n" if coop else "") + "workgroupBarrier();\n"
    return ("enable f16;\nenable chromium_experimental_subgroup_matrix;\n" if coop else "") + \
        "@group(0) @binding(0) var<storage, read_write> a: array<f16>;\n" * coop + \
        "@group(0) @binding(1) var<storage, read_write> x: array<f32>;\n" \
        "@compute @workgroup_size(64)\nfn main(@builtin(local_invocation_index) li: u32) {\n" + \
        "".join("loop {\nif x[li] > 0.0 { break; }\n" if k < 3 else "loop {\n" for k in range(depth)) + \
        inner + "break;\n}\n" * depth + "}\n"


def cpu(fn, *args):
    t = time.process_time()
    out = fn(*args)
    return out, time.process_time() - t


def test_deepest_nesting_wgsl_allows_is_checked_at_once():
    # 126 loops in the function's braces: WGSL's 127 levels
    src = nested_loops(126, coop=False)
    (_, warnings), seconds = cpu(compile_wgsl, src, "n.wgsl")
    # (Tint's parser stops there too: the barrier's argument list is its 129th level)
    assert [w.message for w in warnings] == [BARRIER + ": Tint (Dawn, Chrome) rejects this shader",
                                             "maximum parser recursive depth reached: Tint (Dawn, Chrome) "
                                             "rejects this shader"]
    assert seconds < 3.0, seconds           # the whole compile, lowering included
    found, seconds = cpu(uniformity.analyze, parse(src, "n.wgsl"))
    assert len(found) == 1 and seconds < 0.5, seconds


def test_cooperative_matrix_check_is_linear_in_loop_nesting():
    # the IR's check walked 2^depth times before (2.6 s at 20 levels, over 60 s at 25); at 120
    # loops the load's template lists and arguments stay within Tint's parse depth (deeper, Tint's
    # parser stops: one more warning)
    (_, warnings), seconds = cpu(compile_wgsl, nested_loops(120), "n.wgsl")
    assert [w.message.split(":")[0] for w in warnings] == [
        "'workgroupBarrier' must only be called from uniform control flow",
        "subgroupMatrixLoad is in control flow that depends on local_invocation_index, which is not uniform",
        "subgroupMatrixStore is in control flow that depends on local_invocation_index, which is not uniform"]
    assert seconds < 3.0, seconds


def test_analysis_time_grows_linearly(monkeypatch):
    monkeypatch.setattr(wgsl_parser, "MAX_NESTING", 100_000)
    monkeypatch.setattr(wgsl_parser, "MAX_BRACES", 100_000)
    import sys
    monkeypatch.setattr(sys, "getrecursionlimit", sys.getrecursionlimit)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)
    try:
        small, large = parse(nested_loops(100, coop=False), "n.wgsl"), parse(nested_loops(1000, coop=False), "n.wgsl")
        (_, t_small), (found, t_large) = cpu(uniformity.analyze, small), cpu(uniformity.analyze, large)
    finally:
        sys.setrecursionlimit(limit)
    assert len(found) == 1
    assert t_large < 0.5 and t_large < 30 * max(t_small, 0.002), (t_small, t_large)   # quadratic would be 100x


def big_function(n: int) -> str:
    lines = []
    for i in range(n):
        if i < 50:
            lines.append(f"  var v{i} = x[{i}];")
        elif i % 4 == 0:
            lines.append(f"  if (v{i % 50} > 1.0) {{ v{(i + 1) % 50} = v{i % 50} * 2.0; }}")
        elif i % 4 == 1:
            lines.append(f"  for (var k = 0; k < 4; k++) {{ v{i % 50} += v{(i + 7) % 50}; }}")
        else:
            lines.append(f"  v{i % 50} += 1.0;")
    return "@group(0) @binding(1) var<storage, read_write> x: array<f32>;\n" \
           "@compute @workgroup_size(64)\nfn main(@builtin(local_invocation_index) li: u32) {\n" + \
           "\n".join(lines) + "\n  if (v3 > 0.0) { workgroupBarrier(); }\n}\n"


def test_ten_thousand_statements_are_checked_well_under_a_second():
    tree = parse(big_function(10_000), "big.wgsl")
    found, seconds = cpu(uniformity.analyze, tree)
    assert [(f.span.line, f.message) for f in found] == [(10_004, BARRIER)]
    assert seconds < 0.8, seconds


# -- the measurement (scripts/corpus.py --uniformity / --tint-unit) on a corpus in Tint's layout ----

def test_corpus_measurement_counts_tints_verdicts(tmp_path):
    import importlib.util
    from pathlib import Path
    spec = importlib.util.spec_from_file_location("corpus", Path(__file__).resolve().parents[2] / "scripts" / "corpus.py")
    corpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corpus)
    rejected = shader(CASES["storage_condition"])
    (tmp_path / "bad.wgsl").write_text(rejected)
    (tmp_path / "bad.wgsl.expected.msl").write_text(
        f"SKIP: FAILED\n\n<dawn>/bad.wgsl:8:5 error: {BARRIER}\n    workgroupBarrier();\n")
    (tmp_path / "good.wgsl").write_text(shader(ACCEPTED["workgroup_id"]))
    (tmp_path / "good.wgsl.expected.msl").write_text("#include <metal_stdlib>\n")
    (tmp_path / "plain.wgsl").write_text("@compute @workgroup_size(1) fn main() {}\n")
    (tmp_path / "plain.wgsl.expected.msl").write_text("#include <metal_stdlib>\n")
    table, rows = corpus.uniformity_table(sorted(tmp_path.glob("*.wgsl")), tmp_path)
    assert "Tint rejects for uniformity:     1   emu reports 1 (same line:col and message: 1)" in table, table
    assert "Tint accepts:                    2   emu wrongly rejects 0" in table, table
    assert "analysed (they name a builtin that can require uniformity): 2" in table, table
    cc = tmp_path / "uniformity_test.cc"
    cc.write_text('TEST_F(UniformityAnalysisTest, Bad) {\n    std::string src = R"(' + rejected + ')";\n\n'
                  '    RunTest(src, false);\n    EXPECT_EQ(error_,\n              R"(test:8:5 error: ' + BARRIER +
                  '\n    workgroupBarrier();\n\ntest:7:3 note: ' + CF + '\n  if\n\ntest:7:7 note: reading from '
                  "read_write storage buffer 'data' may result in a non-uniform value\n  x\n)\");\n}\n\n"
                  'TEST_F(UniformityAnalysisTest, Good) {\n    std::string src = R"(' + shader(ACCEPTED["workgroup_id"])
                  + ')";\n\n    RunTest(src, true);\n}\n')
    table, rows = corpus.unit_table(cc)
    assert "Tint rejects:    1   emu rejects 1" in table and "Tint passes:     1   emu wrongly rejects 0" in table, table
    assert "identical (line:col, severity, words) in 1" in table, table


MATRIX = """enable f16;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read_write> a: array<f16>;
@group(0) @binding(1) var<storage, read_write> tiles: array<u32>;

fn load_tile(offset: u32) -> subgroup_matrix_left<f16, 8, 8> {
  return subgroupMatrixLoad<subgroup_matrix_left<f16, 8, 8>>(&a, offset, false, 8u);
}

@compute @workgroup_size(32)
fn main(@builtin(workgroup_id) wg: vec3u) {
  let m = load_tile(tiles[wg.x]);
  subgroupMatrixStore(&a, 64u, m, false, 8u);
}
"""


def test_subgroup_matrix_rules_where_the_ir_check_sees_nothing():
    # the tile's offset comes from a read_write buffer, through a helper: the IR's matrix check
    # (invocation ids only, entry points only) is silent; Tint's rules (subgroup scope,
    # chromium.subgroup_matrix_uniformity) find it, with the path through the parameter
    _, warnings = compile_wgsl(MATRIX, "m.wgsl")
    assert [(w.loc.line, w.loc.col, w.message) for w in warnings] == [
        (7, 66, "'subgroupMatrixLoad' requires argument 1 to be uniform: Tint (Dawn, Chrome) rejects this shader")]
    assert warnings[0].where == ("m.wgsl:7:66: parameter 'offset' of 'load_tile' may be non-uniform\n"
                                 "   note: m.wgsl:12:21: possibly non-uniform value passed here\n"
                                 "   note: m.wgsl:12:21: reading from read_write storage buffer 'tiles' may result in a "
                                 "non-uniform value")
    off = compile_wgsl("diagnostic(off, chromium.subgroup_matrix_uniformity);\n" + MATRIX, "m.wgsl")[1]
    assert off == []
