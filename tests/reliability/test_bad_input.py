"""Every case of issue 14 that used to end in a Python traceback now ends in one message with
file:line:col (and where on the device, when it applies) and a non-zero exit."""
from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

from emu.cli import main

OUT = "@group(0) @binding(0) var<storage, read_write> o: array<u32, 64>;\n"


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


def run_shader(tmp_path, body, *extra, name="s.wgsl", raw=None):
    p = tmp_path / name
    if raw is not None:
        p.write_bytes(raw)
    else:
        p.write_text(OUT + body)
    np.save(tmp_path / "o.npy", np.zeros(64, np.uint32))
    return cli("run", p, "--dispatch", "1", "--buffer", f"0:0={tmp_path}/o.npy",
               "--output", f"0:0={tmp_path}/out.npy", *extra)


def one_message(err: str):
    assert "Traceback" not in err and "internal error" not in err, err
    assert err.count("error:") == 1, err


MAIN = "@compute @workgroup_size(1) fn main() {{ {} }}\n"

SHADER_ERRORS = [
    # (id, shader body, the message's start, its line:col)
    ("exponent_out_of_range", MAIN.format("o[0] = u32(1e999999);"), "float literal '1e999999' is out of range", "2:52"),
    ("f64_overflow", MAIN.format("let x = 1e309; o[0] = u32(x);"), "float literal '1e309' is out of range", "2:49"),
    ("binary_chain", MAIN.format("o[0] = " + " + ".join(["1u"] * 1000) + ";"),
     "more than 255 binary operators in one expression", "2:1326"),
    ("array_of_a_number", "var<private> p: array<2>;\n" + MAIN.format("o[0] = 1u;"), "expected a type here", "2:23"),
    ("select_of_array", "var<private> a: array<u32, 4>;\n" + MAIN.format("o[0] = select(0u, 1u, a);"),
     "'select' cannot take array<u32, 4>", "3:48"),
    ("constant_index_oob", MAIN.format("o[70] = 1u;"), "index 70 is out of bounds for array<u32, 64>", "2:43"),
    ("huge_constant_index", "var<workgroup> w: array<u32, 4>;\n" + MAIN.format("o[0] = w[9223372036854775807];"),
     "index 9223372036854775807 is out of bounds", "3:50"),
    ("convert_vector_to_scalar", "var<workgroup> wg: vec2<u32>;\n" + MAIN.format("o[0] = u32(i32(wg.xx));"),
     "cannot convert vec2<u32> to i32", "3:52"),
    # (arrays nested 70 deep run: a nest shares one register axis; alternating with structs it cannot)
    ("arrays_in_structs_too_deep", "struct S0 { x: u32 }\n" + "".join(f"struct S{k} {{ a: array<S{k - 1}, 1> }}\n"
                                                                     for k in range(1, 70))
     + "var<private> p: S69;\n" + MAIN.format("o[0] = 1u;"), "alternates arrays and structs 61 levels deep", "63:17"),
    ("bogus_access_mode", "@group(0) @binding(1) var<storage, bogus> q: array<u32>;\n" + MAIN.format("q[0] = 1u;"),
     "var<storage, bogus>: 'bogus' is not an access mode of storage buffers", "2:"),
    ("f32_literal_beyond_range", MAIN.format("o[0] = u32(3.5e38f);"), "3.5e38f is out of range of f32", "2:52"),
    ("unused_f32_literal_beyond_range", MAIN.format("let x = 1e39f;"), "1e39f is out of range of f32", "2:49"),
    ("abstract_float_builtin_overflows", MAIN.format("o[0] = u32(exp(1000.0));"),
     "this constant expression evaluates to an infinity or NaN", "2:52"),
    ("access_mode_on_workgroup", "var<workgroup, read> q: u32;\n" + MAIN.format("q = 1u;"),
     "var<workgroup, read>: only var<storage> takes an access mode", "2:"),
]


@pytest.mark.parametrize("body,start,linecol", [c[1:] for c in SHADER_ERRORS], ids=[c[0] for c in SHADER_ERRORS])
def test_shader_error_is_one_message(tmp_path, body, start, linecol):
    rc, _, err = run_shader(tmp_path, body)
    one_message(err)
    assert rc == 1
    first = err.splitlines()[0]
    assert first.startswith(f"{tmp_path}/s.wgsl:{linecol}"), first
    assert start in first


def test_a_long_chain_below_the_cap_compiles_and_runs(tmp_path):
    rc, _, err = run_shader(tmp_path, MAIN.format("o[0] = " + "(" * 100 + " + ".join(["1u"] * 250) + ")" * 100 + ";"))
    assert rc == 0, err
    assert np.load(tmp_path / "out.npy")[0] == 250


def test_deep_nesting_within_the_limit_runs(tmp_path):
    n = 22          # 22 arrays + a vec4 + a struct: 24 levels (nested arrays share one register axis)
    idx = "[0]" * n
    body = ("struct S { a: " + "array<" * n + "vec4u" + ",1>" * n + " }\nvar<private> p: S;\n"
            + MAIN.format(f"p.a{idx}.y = 3u; o[0] = p.a{idx}.y; var r = p; r.a{idx}.x = 4u; o[1] = r.a{idx}.x;"))
    rc, _, err = run_shader(tmp_path, body)
    assert rc == 0, err
    assert np.load(tmp_path / "out.npy")[:2].tolist() == [3, 4]


def test_float_literal_tiny_exponent_is_zero(tmp_path):
    rc, _, err = run_shader(tmp_path, MAIN.format("o[0] = u32(1e-999999 == 0.0) + u32(0e99999999 == 0.0);"))
    assert rc == 0, err
    assert np.load(tmp_path / "out.npy")[0] == 2


def test_shader_not_utf8(tmp_path):
    rc, _, err = run_shader(tmp_path, "", raw=OUT.encode() + b"// caf\xe9\n" + MAIN.format("o[0] = 1u;").encode())
    one_message(err)
    assert rc == 1
    assert f"is not UTF-8 text: byte 0xe9 at {tmp_path}/s.wgsl:2:7" in err


@pytest.mark.parametrize("grid,axis", [("4294967295", "x"), ("1,65536", "y"), ("1,1,70000", "z")])
def test_dispatch_over_the_device_limit(tmp_path, grid, axis):
    p = tmp_path / "s.wgsl"
    p.write_text(OUT + MAIN.format("o[0] = 1u;"))
    np.save(tmp_path / "o.npy", np.zeros(64, np.uint32))
    rc, _, err = cli("run", p, "--dispatch", grid, "--buffer", f"0:0={tmp_path}/o.npy")
    one_message(err)
    assert rc == 1
    assert f"workgroups along {axis} exceed the device limit max-compute-workgroups-per-dimension (65535)" in err


def test_profile_limits_are_checked_at_dispatch(tmp_path):
    import emu
    from emu.errors import HostError
    dev = emu.Device("reference")
    src = OUT + "var<workgroup> big: array<u32, 9000>;\n" \
        "@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) { big[i] = i; o[i] = big[i]; }\n"
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "t.wgsl"))
    with pytest.raises(HostError, match=r"uses 36000 bytes of var<workgroup> memory .* "
                                        r"max-compute-workgroup-storage-size is 32768"):
        dev.dispatch(pipe, {(0, 0): dev.create_buffer(size=256)}, (1, 1, 1))


def _npy_bytes(arr) -> bytes:
    b = io.BytesIO()
    np.save(b, arr)
    return b.getvalue()


def _huge_header() -> bytes:
    """A 128-byte header claiming 10^11 float32 elements, followed by 4 bytes of data."""
    from numpy.lib import format as npf
    b = io.BytesIO()
    npf.write_array_header_1_0(b, {"descr": "<f4", "fortran_order": False, "shape": (10 ** 11,)})
    return b.getvalue() + b"\0" * 4


@pytest.mark.parametrize("content,why", [
    (b"", "not a .npy file"),
    (b"\x93NUMPY\x01\x00\x10\x00{garbage}       \n", "not a .npy file"),
    ("huge", "its header says (100000000000,) of float32 (400000000000 bytes) but the file holds 4 bytes"),
    ("truncated", "but the file holds 8 bytes"),
])
def test_bad_npy_is_one_message(tmp_path, content, why):
    if content == "huge":
        content = _huge_header()
    elif content == "truncated":
        content = _npy_bytes(np.zeros(16, np.uint32))[:-56]
    (tmp_path / "bad.npy").write_bytes(content)
    p = tmp_path / "s.wgsl"
    p.write_text(OUT + MAIN.format("o[0] = 1u;"))
    rc, _, err = cli("run", p, "--dispatch", "1", "--buffer", f"0:0={tmp_path}/bad.npy")
    one_message(err)
    assert rc == 1
    assert f"--buffer 0:0: cannot load '{tmp_path}/bad.npy' as a .npy array" in err and why in err


@pytest.mark.parametrize("arr,warning", [
    (np.asfortranarray(np.arange(64, dtype=np.uint32).reshape(8, 8)), "is stored in Fortran (column-major) order"),
    (np.zeros(32, dtype=[("a", "<u4"), ("b", "<u4")]), "holds a structured array"),
    (np.arange(32, dtype=np.float64), "the array holds float64 but 'o' is declared with u32 elements"),
])
def test_reinterpreted_npy_warns(tmp_path, arr, warning):
    np.save(tmp_path / "in.npy", arr)
    p = tmp_path / "s.wgsl"
    p.write_text(OUT + MAIN.format("o[1] = o[1] + 1u;"))
    rc, _, err = cli("run", p, "--dispatch", "1", "--buffer", f"0:0={tmp_path}/in.npy",
                     "--output", f"0:0={tmp_path}/out.npy")
    assert rc == 0, err
    assert "warning:" in err and warning in err
    got = np.load(tmp_path / "out.npy")
    want = np.ascontiguousarray(arr).view(np.uint32).reshape(-1)[:64].copy()
    want[1] += 1
    assert got.tolist() == want.tolist()


def test_reinterpreted_npy_is_said_once(tmp_path):
    # the CLI's own warning names the flag; the API's DtypeWarning for the same binding is not
    # printed a second time
    np.save(tmp_path / "in.npy", np.zeros(32, np.float64))
    p = tmp_path / "s.wgsl"
    p.write_text(OUT + MAIN.format("o[1] = o[1] + 1u;"))
    rc, _, err = cli("run", p, "--dispatch", "1", "--buffer", f"0:0={tmp_path}/in.npy")
    assert rc == 0, err
    assert err.count("warning:") == 1 and "DtypeWarning" not in err, err


def test_bytes_and_packed_integers_do_not_warn(tmp_path):
    # uint8 data is bytes, and 8- or 16-bit integers packed into u32 words are how WGSL holds them
    # (8-bit matrices): the same rule as the Python API's
    p = tmp_path / "s.wgsl"
    p.write_text(OUT + MAIN.format("o[1] = o[1] + 1u;"))
    for dtype in (np.uint8, np.int8, np.uint16):
        np.save(tmp_path / "in.npy", np.zeros(256 // np.dtype(dtype).itemsize, dtype))
        rc, _, err = cli("run", "-q", p, "--dispatch", "1", "--buffer", f"0:0={tmp_path}/in.npy")
        assert (rc, err) == (0, ""), (dtype, err)


def test_matching_npy_does_not_warn(tmp_path):
    np.save(tmp_path / "in.npy", np.arange(64, dtype=np.int32))
    p = tmp_path / "s.wgsl"
    p.write_text(OUT + MAIN.format("o[1] = o[1] + 1u;"))
    rc, _, err = cli("run", "-q", p, "--dispatch", "1", "--buffer", f"0:0={tmp_path}/in.npy")
    assert (rc, err) == (0, "")


def test_ir_naming_a_missing_global(tmp_path):
    p = tmp_path / "k.ir"
    p.write_text('module "k"\n'
                 'func @main() -> void compute workgroup_size(1, 1, 1) {\n'
                 '  %0 = global {name = "nope"} : ptr<storage, array<u32>, read_write> ; k.wgsl:3:5\n'
                 '}\n')
    rc, _, err = cli("run", p, "--dispatch", "1")
    one_message(err)
    assert rc == 1
    assert err.startswith("k.wgsl:3:5: error: 'global' names @nope, which the module does not declare")


def test_internal_error_is_one_message_with_the_location(tmp_path, monkeypatch):
    """A bug (any exception that is not an EmuError) ends in one message, the shader location, exit 3."""
    from emu.scheduler import handlers

    def broken(batch, inst, mask, frame):
        raise ZeroDivisionError("a planted bug")
    monkeypatch.setitem(handlers.HANDLERS, "binary", broken)
    monkeypatch.setenv("EMU_JIT", "0")
    rc, _, err = run_shader(tmp_path, "@compute @workgroup_size(4) fn main(@builtin(local_invocation_index) i: u32) "
                                      "{ o[i] = i * 3u; }\n")
    assert rc == 3
    assert "Traceback" not in err
    lines = err.splitlines()
    assert lines[0] == f"{tmp_path}/s.wgsl:2:89: error: internal error: ZeroDivisionError: a planted bug " \
                       f"(in test_bad_input.py:{broken.__code__.co_firstlineno + 1})"
    assert "workgroup (0, 0, 0), subgroup 0, lane 0" in err and "please report" in err


def test_lexer_is_linear_on_a_long_name_before_a_bad_character(tmp_path):
    import time
    t0 = time.monotonic()
    rc, _, err = run_shader(tmp_path, "a" * 100_000 + "\u00b2\n")    # was 18 s: quadratic
    assert time.monotonic() - t0 < 5
    one_message(err)
    assert err.startswith(f"{tmp_path}/s.wgsl:2:100001: error: invalid character '\u00b2' (U+00B2)")


def test_module_scope_value_that_is_not_constant(tmp_path):
    # (modf(1.5) was the example here; it is a constant expression and folds now: test_realworld)
    rc, _, err = run_shader(tmp_path, "var<private> v = subgroupAdd(1u);\n"
                            + MAIN.format("o[0] = v;"))
    one_message(err)
    assert err.startswith(f"{tmp_path}/s.wgsl:2:1: error: 'v' is declared with a value emu cannot compute")


def test_ir_text_round_trip_of_unusual_names():
    """Names with combining marks, U+212E (a letter-like symbol \\w does not match) and ligatures:
    the printer writes what the IR parser reads back, the same."""
    from emu.frontend.wgsl import compile_source
    from emu.isa.printer import print_module
    from emu.isa.textparser import parse_ir
    src = ("struct S\u0301t { a\u0301: u32, \u212e: f32 }\n"
           "@group(0) @binding(0) var<storage, read_write> o\u0301: array<u32>;\n"
           "var<private> \u212ex: S\u0301t;\n"
           "fn f\u0300(x\u0327: u32) -> u32 { return x\u0327 + 1u; }\n"
           "@compute @workgroup_size(1) fn main() { let \u212e = f\u0300(2u); \u212ex.a\u0301 = \u212e; "
           "o\u0301[0] = \u212ex.a\u0301 + u32(\ufb01); }\nconst \ufb01 = 3;\n")
    text = print_module(compile_source(src, "n.wgsl")[0])
    assert "@o\u0301" in text and "struct.S\u0301t" in text
    assert print_module(parse_ir(text, "n.ir")) == text


def test_f32_literals_at_the_edge_of_the_range(tmp_path):
    """The largest literal that rounds to f32's largest finite value runs (was: every literal
    beyond the range silently became 3.4028235e38 with a numpy warning)."""
    p = tmp_path / "edge.wgsl"
    p.write_text("@group(0) @binding(0) var<storage, read_write> o: array<f32, 2>;\n"
                 "@compute @workgroup_size(1) fn main() { o[0] = 3.4028235677973366e38f; o[1] = -3.4028235e38f; }\n")
    rc, out, err = cli("run", "-q", p, "--dispatch", "1", "--buffer", "0:0=zeros:2:f32", "--output",
                       f"0:0={tmp_path}/e.npy")
    assert rc == 0 and err == "", err
    assert np.load(tmp_path / "e.npy").tolist() == [float(np.finfo(np.float32).max), -float(np.finfo(np.float32).max)]


def test_constant_index_past_a_runtime_sized_buffer(tmp_path):
    """A constant index into a runtime-sized array is bounded at run time like any other (was:
    IndexError in memory.py); an abstract one must fit in i32, as WGSL converts it."""
    p = tmp_path / "rt.wgsl"
    src = ("@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n"
           "@compute @workgroup_size(1) fn main() { o[INDEX] = 7u; }\n")
    p.write_text(src.replace("INDEX", "100"))
    rc, out, err = cli("run", p, "--dispatch", "1", "--buffer", "0:0=zeros:8:u32", "--output", f"0:0={tmp_path}/o.npy")
    assert rc == 0 and f"{p}:2:41: warning: out-of-bounds index into buffer 'o'" in err, err
    assert np.load(tmp_path / "o.npy").tolist() == [0] * 7 + [7]          # clamped to the last element
    rc, out, err = cli("run", p, "--dispatch", "1", "--buffer", "0:0=zeros:8:u32", "--bounds", "strict")
    assert rc == 1 and "out of bounds" in err and "internal error" not in err, err
    p.write_text(src.replace("INDEX", "4294967296"))
    rc, out, err = cli("run", p, "--dispatch", "1", "--buffer", "0:0=zeros:8:u32")
    assert rc == 1 and f"{p}:2:43: error: 4294967296 does not fit in i32" in err, err
