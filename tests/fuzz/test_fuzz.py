"""The fuzzer in the test suite: a short run with fixed seeds (hypothesis, derandomized) over each
target, the systematic malformations of a trace, and every crash the long runs found, reduced to
an input of our own. Each must end in "ok" or one EmuError: never another exception, never a hang."""
from __future__ import annotations

import copy
import io
import json
import random
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from . import run as fuzz
from . import targets

ROOT = Path(__file__).resolve().parents[2]
SHORT = settings(max_examples=40, derandomize=True, deadline=None, database=None,
                 suppress_health_check=list(HealthCheck))


@lru_cache(maxsize=None)
def _corpus():
    return fuzz.corpus(None)


def check(kind: str, data, timeout: float = 10.0):
    outcome, seconds = fuzz.run_one(kind, data, timeout)
    if isinstance(outcome, BaseException):
        raise AssertionError(f"{kind} input ended in {fuzz.site(outcome)}: {outcome}") from outcome
    assert outcome in ("ok", "error"), f"{kind} input: {outcome} after {seconds:.1f} s"
    return outcome


@pytest.mark.parametrize("kind", ["wgsl", "ir", "npy", "trace"])
def test_short_fuzz_run(kind):
    @SHORT
    @given(st.integers(0, 2 ** 32 - 1))
    def one(n):
        rng = random.Random(f"ci:{kind}:{n}")
        check(kind, fuzz.mutant(kind, _corpus()[kind], rng))
    one()


def test_every_seed_shader_compiles_and_round_trips():
    for text in _corpus()["wgsl"]:
        assert targets.wgsl(text, run=False) == "ok"
        check("wgsl", text)


# ----------------------------------------------------------------- traces, malformed every way

def _trace_records(which: int = 0):
    """The records of the full GEMM trace (0) or of the scalar decisions' trace (1)."""
    return [json.loads(line) for line in _corpus()["trace"][which].splitlines()]


def test_the_full_trace_explains():
    assert check("trace", _corpus()["trace"][0]) == "ok"
    assert check("trace", _corpus()["trace"][1]) == "ok"


def _paths(value, path=()):
    """Every key / index path inside a JSON value (one element of each list is enough)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield path + (k,)
            yield from _paths(v, path + (k,))
    elif isinstance(value, list) and value:
        yield path + (0,)
        yield from _paths(value[0], path + (0,))


def _malformed(which: int = 0):
    recs = _trace_records(which)
    last = max(i for i, r in enumerate(recs) if r.get("op") in ("coop_mma", "coop_mul") or "decision" in r)
    for where in (0, last, len(recs) - 1):    # the header, the multiply-add (or decision), the summary
        for path in _paths(recs[where]):
            for bad in ("delete", "x", -1, 10 ** 9, 1.5, None, True, [], {}):
                out = copy.deepcopy(recs)
                parent = out[where]
                for step in path[:-1]:
                    parent = parent[step]
                if bad == "delete":
                    if isinstance(parent, list):
                        del parent[path[-1]]
                    else:
                        parent.pop(path[-1])
                else:
                    parent[path[-1]] = bad
                yield f"{where}:{'.'.join(map(str, path))}={bad}", "\n".join(json.dumps(r) for r in out)
    text = "\n".join(json.dumps(r) for r in recs)
    yield "empty", ""
    yield "not json", "{not json"
    yield "a list per line", "[1, 2]\n" * 3
    yield "truncated", text[: len(text) // 2]
    yield "no header", "\n".join(json.dumps(r) for r in recs[1:])
    yield "two headers", json.dumps(recs[0]) + "\n" + text


def test_trace_bits_wider_than_the_element():
    """Hex bits beyond the matrix type's width (was: OverflowError decoding them)."""
    recs = _trace_records()
    at = max(i for i, r in enumerate(recs) if r.get("op") in ("coop_mma", "coop_mul"))
    lines = [json.dumps(r) for r in recs]
    assert '"bits": "0x' in lines[at]
    lines[at] = lines[at].replace('"bits": "0x', '"bits": "0x123456789abcdef0123')
    assert check("trace", "\n".join(lines)) == "error"
    from emu.errors import EmuError
    from emu.trace.explain import Trace, explain_event, pick_event
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "t.jsonl"
        path.write_text("\n".join(lines))
        t = Trace.load(str(path))
        with pytest.raises(EmuError, match=r"has bits '0x123456789abcdef0123[0-9a-f]*', wider than f32's 32 bits"):
            explain_event(t, pick_event(t, None), 0, 0)


@pytest.mark.parametrize("which", [0, 1])
def test_every_malformed_trace_is_one_message(which):
    results = {"ok": 0, "error": 0}
    for name, text in _malformed(which):
        try:
            results[check("trace", text)] += 1
        except AssertionError as e:
            raise AssertionError(f"malformation {name}: {e}") from None
    # most malformations are refused, each with one message (the scalar trace's events are smaller)
    assert results["error"] > (500, 300)[which], results


# ----------------------------------------------------------------- crashes the long runs found

WGSL_FOUND = {
    # a constant array nested 70 deep (was: past numpy's 64 dimensions; a nest of arrays now
    # holds one axis in registers, and this runs)
    "nested_constant_arrays": "var<private> a = " + "array(" * 70 + "1" + ")" * 70 + ";\n"
                              "@compute @workgroup_size(1) fn main() { _ = a; }\n",
    # a builtin folded over abstract integers beyond 32 bits (exact since: 1)
    "clamp_of_a_big_abstract_int": "@compute @workgroup_size(1) fn main() { var r = clamp(4294967296, 1, 1); }\n",
    # zero values of huge arrays (was: a Python list of 636 million zeros)
    "huge_zero_value": "@compute @workgroup_size(1) fn main() {\n"
                       "  for (var i = array<i32, 636109182>()[0]; false;) {}\n}\n",
    # duplicate struct members (was: compiled, and the IR printer wrote what its parser rejects)
    "duplicate_member": "struct S { m: f32, m: f32 }\nvar<private> s: S;\n"
                        "@compute @workgroup_size(1) fn main() { s.m = 1.0; }\n",
    # float literals with thousands of digits (was: Python's int() limit of 4300 digits)
    "long_float_literal": "const x = 1." + "9" * 5000 + ";\nconst y = 0." + "0" * 5000 + "1e-5;\n"
                          "@compute @workgroup_size(1) fn main() { _ = x + y; }\n",
    "long_int_literal": "const x = " + "9" * 5000 + ";\n@compute @workgroup_size(1) fn main() { _ = x; }\n",
    # a member @size below its type's (was: a layout with negative sizes, IndexError in memory)
    "negative_member_size": "struct S { a: i32, @size(-1) b: i32 }\nvar<workgroup> w: array<S, 4>;\n"
                            "@compute @workgroup_size(1) fn main() { w[1].b = 2; }\n",
    # a zero i8 matrix (held wider) stored near a buffer's end (was: IndexError, 4 bytes an element)
    "coop_store_of_a_zero_i8_matrix": "enable chromium_experimental_subgroup_matrix;\n"
                                      "@group(0) @binding(0) var<storage, read_write> o: array<vec3f>;\n"
                                      "@compute @workgroup_size(32) fn main() {\n"
                                      "  let m = subgroup_matrix_right<i8, 8, 8>();\n"
                                      "  subgroupMatrixStore<row_major>(&o, 0i, m, 16u);\n}\n",
    # a runtime-sized array as the element of a fixed one (was: TypeError laying it out)
    "runtime_array_inside": "alias R = array<array<atomic<u32>, 1>>;\n"
                            "@group(0) @binding(0) var<storage, read_write> o: array<R, 3>;\n"
                            "@compute @workgroup_size(1) fn main() { atomicAdd(&o[0][0][0], 1u); }\n",
    # a subgroup matrix with a negative size (was: printed as -1x8, which the IR parser rejects)
    "negative_matrix_size": "enable chromium_experimental_subgroup_matrix;\n"
                            "@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n"
                            "@compute @workgroup_size(32) fn main() {\n"
                            "  let m = subgroupMatrixLoad<subgroup_matrix_right<u8, -1, 8>>(&o, 0u, false, 8u);\n}\n",
    # four or more workgroup sizes (was: compiled, printed as IR its parser rejects)
    "workgroup_size_of_four": "@compute @workgroup_size(1, 1, 1, 1) fn main() {}\n",
    "float_rem_by_zero_constant": "@compute @workgroup_size(1) fn main() { var x = 3.0 % 0.0; }\n",
    "bool_of_a_big_abstract_int": "var<private> b: bool = bool(2147483648);\n"
                                  "@compute @workgroup_size(1) fn main() { b = !b; }\n",
    # a pointer in a workgroup variable (was: TypeError laying out workgroup memory)
    "pointer_in_a_workgroup_var": "var<workgroup> v: ptr<function, u32>;\n@compute @workgroup_size(1) fn main() { }\n",
    "huge_private_array": "var<private> p: array<u32, 100000000>;\n"
                          "@compute @workgroup_size(1) fn main() { p[0] = 1u; }\n",
}


@pytest.mark.parametrize("name", sorted(WGSL_FOUND))
def test_wgsl_found(name):
    ok = ("long_float_literal", "coop_store_of_a_zero_i8_matrix", "bool_of_a_big_abstract_int",
          "clamp_of_a_big_abstract_int", "huge_zero_value",     # huge_zero_value: legal WGSL, run lazily
          "nested_constant_arrays")
    assert check("wgsl", WGSL_FOUND[name]) == ("ok" if name in ok else "error")


def test_abstract_constants_fold_exactly():
    """bool(e) of an abstract value is e != 0 at any size (was: OverflowError through i32); x % 0.0
    is NaN, which WGSL refuses in a constant (was: ValueError from math.fmod)."""
    import emu
    from emu.errors import EmuError
    dev = emu.Device("reference")
    src = ("@group(0) @binding(0) var<storage, read_write> o: array<u32, 3>;\n"
           "@compute @workgroup_size(1) fn main() {\n"
           "  o[0] = select(0u, 1u, bool(2147483648)); o[1] = select(0u, 1u, bool(-9223372036854775807));\n"
           "  o[2] = select(0u, 1u, any(vec2<bool>(vec2(0, 0)))); }\n")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "k.wgsl"))
    o = dev.create_buffer(size=12)
    dev.dispatch(pipe, {(0, 0): o}, (1, 1, 1))
    assert o.read(np.uint32).tolist() == [1, 1, 0]
    with pytest.raises(EmuError, match="infinity or NaN") as e:
        dev.create_shader_module("@compute @workgroup_size(1) fn main() { var x = 3.0 % 0.0; }\n", "k.wgsl")
    assert (e.value.loc.line, e.value.loc.col) == (1, 49)


def _ir_of(src: str) -> str:
    from emu.frontend.wgsl import compile_source
    from emu.isa.printer import print_module
    return print_module(compile_source(src, "k.wgsl")[0])


COOP = """enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(32) fn main() {
  let m = subgroupMatrixLoad<subgroup_matrix_result<f32, 8, 8>>(&o, 0, false, 8);
  subgroupMatrixStore(&o, 0, m, false, 8);
}
"""


def test_ir_found():
    base = _ir_of("@group(0) @binding(0) var<storage, read_write> o: array<f32>;\n"
                  "@compute @workgroup_size(1) fn main(@builtin(local_invocation_index) i: u32) "
                  "{ o[i] = 0.5; }\n")
    half = "0x1.0000000000000p-1"
    assert half in base
    for bad in (base.replace(half, "0x1p99999", 1),                   # a hex float beyond f64
                base.replace(half, "1" * 5000, 1),                     # an integer of 5000 digits
                base.replace("builtin(local_invocation_index)", "builtin(local_invocation_indexdex)"),
                base.replace('name = "o"', 'name = "nope"')):          # a global that is not there
        assert check("ir", bad) == "error", bad
    more = _ir_of("@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n"
                  "@compute @workgroup_size(1) fn main(@builtin(local_invocation_index) i: u32) "
                  "{ var v = vec3u(1u, 2u, 3u); let w = v; o[0] = w[i] + arrayLength(&o); }\n")
    assert check("ir", more) == "ok"
    for old, new in (("extract %3, %0 {path = [-1]}", "extract %3 {path = [-1]}"),   # no index operand
                     ("extract %3, %0 {path = [-1]}", "extract %3 {path = [7]}"),    # beyond vec3
                     ("array_length %8", "array_length %7"),                          # not a pointer
                     ("access %4, %5 {path = [-1]}", "access %4, %5 {path = [-1, 1]}"),  # into a u32
                     ("value = [1, 2, 3]", "value = [1, 2, 99999999999]"),            # beyond u32
                     ('{fn = "add"}', '{fn = "plus"}'),                               # no such op
                     ('{fn = "add"} : u32', '{fn = "add"} : vec2<u32>')):             # wrong result
        assert old in more
        assert check("ir", more.replace(old, new)) == "error", new
    # a value id of 20 digits (was: OverflowError sizing the executor's value table, found by --run-ir)
    huge = more.replace("%3 =", "%99999999999999999999 =", 1)
    assert check("ir", huge) == "error"
    from emu.errors import EmuError
    from emu.isa.textparser import parse_ir
    with pytest.raises(EmuError, match=r"value id %99999999999999999999 is beyond emu's limit of %1048575"):
        parse_ir(huge, "k.ir")
    called = _ir_of("fn f() -> u32 { return 1u; }\n"
                    "@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n"
                    "@compute @workgroup_size(1) fn main() { o[0] = f(); }\n")
    assert check("ir", called) == "ok"
    # a call of a function that is not there (was: AttributeError finding what the entry reaches)
    assert check("ir", called.replace('{callee = "f"}', '{callee = "g"}')) == "error"
    assert check("ir", called.replace('call {callee = "f"}', 'call')) == "error"     # (was: KeyError)
    # the callee's return dropped: it reaches its end (was: None stored, TypeError in memory.py)
    assert check("ir", called.replace("  return %0 ", "  ", 1)) == "error"
    import re
    vecs = _ir_of("@group(0) @binding(0) var<storage, read_write> o: array<f32>;\n"
                  "@compute @workgroup_size(4) fn main(@builtin(local_invocation_id) l: vec3u) {\n"
                  "  let v = vec3f(o[l.x], 2.0, 3.0); let p = vec2f(o[l.x], 1.0); o[l.x] = p.y + v.z; }\n")
    assert check("ir", vecs) == "ok"
    vec3 = re.search(r"(%\d+) = construct [^\n]*: vec3<f32>", vecs).group(1)
    index = re.search(r"access (%\d+), (%\d+) \{path = \[-1\]\}", vecs)
    for bad in (re.sub(r"construct [^:\n]*: vec2<f32>", f"construct {vec3} : vec2<f32>", vecs),  # was: ValueError
                vecs.replace(index.group(0), f"access {index.group(1)}, %0 {{path = [-1]}}")):  # a vec3u index
        assert bad != vecs
        assert check("ir", bad) == "error", bad
    coop = _ir_of(COOP)
    # a cooperative store through a number (was: AttributeError placing it)
    assert check("ir", coop.replace("coop_store %4, %5", "coop_store %5, %5")) == "error"
    check("ir", coop)                        # (its buffer is too small: an error, said once)
    # a cooperative store of a vector (was: AttributeError in the profile's lane maps)
    bad = coop.replace("coop_load %0, %1, %2 {layout = \"row_major\"} : coopmat<f32, 8x8, C>",
                       "const {value = [0, 0]} : vec2<u32>")
    assert bad != coop
    assert check("ir", bad) == "error"


def test_ir_subgroup_operands_are_verified():
    """A subgroup op's operand count and types (was: a vec3<u32> shuffle_up delta reached numpy,
    ValueError broadcasting in reduce.py, found by --run-ir)."""
    sg = _ir_of("enable subgroups;\n@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n"
                "@compute @workgroup_size(32) fn main(@builtin(global_invocation_id) g: vec3u, "
                "@builtin(subgroup_invocation_id) l: u32) {\n  o[l] = subgroupShuffleUp(l, 1u) + subgroupAdd(l) + "
                "select(0u, 1u, subgroupElect()) + subgroupBallot(true).x; }\n")
    assert check("ir", sg) == "ok"
    for old, new in (("subgroup %1, %4 {", "subgroup %1, %0 {"),            # a vec3<u32> lane delta
                     ("subgroup %1, %4 {", "subgroup %1 {"),                # the delta missing
                     ("subgroup %1 {fn = \"add\"}", "subgroup %1, %1 {fn = \"add\"}"),
                     ("subgroup %1 {fn = \"add\"} : u32", "subgroup %1 {fn = \"add\"} : i32"),
                     ("subgroup %1 {fn = \"add\"}", "subgroup %0 {fn = \"add\"}"),   # vec3 in, u32 out
                     ("subgroup {fn = \"elect\"}", "subgroup %1 {fn = \"elect\"}"),
                     ("subgroup %13 {fn = \"ballot\"}", "subgroup %1 {fn = \"ballot\"}")):
        assert old in sg
        assert check("ir", sg.replace(old, new)) == "error", new


def test_ir_atomic_operands_are_verified():
    """An atomic's pointer must point to an atomic, with the operation's operand count (was: an
    atomic add through a pointer to the whole array<atomic<u32>, 4> reached the executor,
    NoScalarType in h_atomic; found by --run-ir on the H200's 16 cores)."""
    at = _ir_of("@group(0) @binding(0) var<storage, read_write> c: array<atomic<u32>, 4>;\n"
                "@compute @workgroup_size(1) fn main(@builtin(local_invocation_index) i: u32) "
                "{ atomicAdd(&c[i], 1u); }\n")
    assert check("ir", at) == "ok"
    for old, new in (("atomic %2, %3", "atomic %1, %3"),            # the array, not an element
                     ("atomic %2, %3", "atomic %2"),                 # no value
                     ("atomic %2, %3", "atomic %2, %3, %3")):
        assert old in at
        assert check("ir", at.replace(old, new)) == "error", new


def test_npy_found(tmp_path):
    from numpy.lib import format as npf
    b = io.BytesIO()
    npf.write_array_header_1_0(b, {"descr": "<f4", "fortran_order": False, "shape": (4,)})
    header = b.getvalue()
    unterminated = header.replace(b"(4,), }", b"(4,    ")          # tokenize: EOF in multi-line statement
    assert check("npy", unterminated + b"\0" * 16) == "error"
    neg = io.BytesIO()
    npf.write_array_header_1_0(neg, {"descr": "<f4", "fortran_order": False, "shape": (-4,)})
    assert check("npy", neg.getvalue() + b"\0" * 16) == "error"       # was: a negative read length
    ok = io.BytesIO()
    np.save(ok, np.arange(4, dtype=np.float32))
    assert check("npy", ok.getvalue()) == "ok"
    # a subarray dtype in the header ('3<i8': three i8 an element; was: ValueError in reshape)
    sub = io.BytesIO()
    npf.write_array_header_1_0(sub, {"descr": "3<i8", "fortran_order": False, "shape": (2,)})
    path = tmp_path / "sub.npy"
    path.write_bytes(sub.getvalue() + np.arange(6, dtype="<i8").tobytes())
    assert check("npy", path.read_bytes()) == "ok"
    from emu.memory.npy import load_npy
    arr, _ = load_npy(str(path), "--buffer 0:0")
    assert arr.dtype == np.int64 and arr.shape == (2, 3) and arr.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_parallel_run_is_the_one_run_in_ranges(tmp_path):
    """tests/fuzz/parallel.py: disjoint ranges that cover the run, and sums that add the jobs'."""
    from . import parallel
    assert parallel.ranges(1, 10, 3) == [(1, 4), (5, 3), (8, 3)]
    assert parallel.ranges(7, 2, 4) == [(7, 1), (8, 1)]
    assert parallel.main(["--jobs", "2", "--mutants", "30", "--targets", "npy", "--out", str(tmp_path)]) == 0
    total = json.loads((tmp_path / "summary.json").read_text())
    assert total["mutants"] == 30 and total["ranges"] == [[1, 15], [16, 30]] and total["findings"] == {}
    assert sum(total["counts"]["npy"].values()) == 30
    assert (tmp_path / "findings.tar.gz").is_file() and not (tmp_path / "jobs").exists()


def test_huge_zero_initializer_of_a_private_var():
    """var<private> v = array<bool, 4294967295>(); (held lazily) is the zero the variable starts
    at: the IR prints and reads back (was: TypeError printing the lazy array, found by the fuzzer
    from a Tint file); a huge initializer that is not all zero is one message."""
    from emu.errors import EmuError
    from emu.frontend.wgsl import compile_source
    src = "var<private> v = array<bool, 4294967295>();\n@compute @workgroup_size(1) fn main() { }\n"
    assert targets.wgsl(src, run=False) == "ok"
    assert "global @v : array<bool, 4294967295> private\n" in _ir_of(src)
    zero_struct = ("struct S { a: u32, b: array<u32, 100000000> }\nvar<private> v = S(0u, array<u32, 100000000>());\n"
                   "@compute @workgroup_size(1) fn main() { }\n")
    assert targets.wgsl(zero_struct, run=False) == "ok"
    with pytest.raises(EmuError) as e:
        compile_source(zero_struct.replace("S(0u", "S(1u"), "k.wgsl")
    assert e.value.message.startswith("S is a value of 400000004 bytes; emu allows initializers up to 1048576 "
                                      "bytes unless they are all zero")
    assert (e.value.loc.line, e.value.loc.col) == (2, 18)
