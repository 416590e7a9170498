"""Validation of cooperative-matrix shaders: every mistake ends in one message at the right
file:line:col (and workgroup/subgroup where it happened), never in a wrong answer."""
import numpy as np
import pytest

import emu
from emu.errors import EmuError

HEAD = """enable f16;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read_write> d: array<f32>;
"""


def compile_run(src, profile="nvidia-h200", n=4096, groups=1, **kw):
    dev = emu.Device(profile, **kw)
    mod = dev.create_shader_module(src, "k.wgsl")
    pipe = dev.create_compute_pipeline(mod)
    bufs = {(0, 0): dev.create_buffer(np.ones(n, np.float16)), (0, 1): dev.create_buffer(size=4 * n)}
    dev.dispatch(pipe, bufs, (groups, 1, 1))
    return bufs


def error_of(src, **kw) -> EmuError:
    with pytest.raises(EmuError) as e:
        compile_run(src, **{"bounds": "strict", **kw})
    return e.value


def body(stmts, wg=32, params=""):
    return HEAD + f"@compute @workgroup_size({wg})\nfn main({params}) {{\n{stmts}\n}}\n"


LOAD_A = "  let l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, 0u, 16u);\n"
LOAD_B = "  let r = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, row_major>(&a, 0u, 16u);\n"


def test_extension_not_enabled():
    src = "enable f16;\n@group(0) @binding(0) var<storage, read> a: array<f16>;\n" \
          "@compute @workgroup_size(32)\nfn main() {\n" \
          "  let l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, 0u, 16u);\n}\n"
    e = error_of(src)
    assert (e.loc.line, e.loc.col) == (5, 11)
    assert "needs the 'chromium_experimental_subgroup_matrix' extension" in e.message
    assert "enable chromium_experimental_subgroup_matrix;" in e.hint


def test_wgpu_dialect_needs_its_extension():
    src = "enable f16;\n@compute @workgroup_size(32)\nfn main() {\n  var m: coop_mat16x16<f16, A>;\n}\n"
    e = error_of(src)
    assert (e.loc.line, e.loc.col) == (4, 10)
    assert "wgpu_cooperative_matrix" in e.message


def test_unsupported_config_lists_what_the_device_has():
    src = body(LOAD_A.replace("16, 16>", "32, 16>").replace("16u)", "32u)") + LOAD_B +
               "  let c = subgroupMatrixMultiply<f32>(l, r);\n")
    e = error_of(src)
    assert "K differs" in e.message and e.loc.line == 9
    src = body("  let l = subgroupMatrixLoad<subgroup_matrix_left<f16, 8, 8>, row_major>(&a, 0u, 8u);\n")
    e = error_of(src)
    assert (e.loc.line, e.loc.col) == (7, 11)
    assert "has no left (A) matrix of 8x8 f16" in e.message
    assert "M=16 N=16 K=16  f16 x f16 + f32 -> f32" in e.hint


def test_roles_must_be_left_then_right():
    src = body(LOAD_A + LOAD_B + "  let c = subgroupMatrixMultiply<f32>(r, l);\n")
    e = error_of(src)
    assert e.loc.line == 9 and "needs a left (A) and a right (B) matrix, not B and A" in e.message


def test_accumulator_shape_must_match():
    src = body(LOAD_A + LOAD_B +
               "  let c = subgroupMatrixLoad<subgroup_matrix_result<f32, 8, 16>, row_major>(&d, 0u, 8u);\n"
               "  let x = subgroupMatrixMultiplyAccumulate(l, r, c);\n")
    e = error_of(src)
    assert e.loc.line == 10 and "the accumulator is 16x8; A x B is 16x16" in e.message


def test_stride_smaller_than_tile():
    src = body("  let l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, 0u, 8u);\n")
    e = error_of(src)
    assert (e.loc.line, e.loc.col) == (7, 11)
    assert "stride 8 is smaller than the matrix's row of 16 elements" in e.message
    assert "workgroup (0, 0, 0), subgroup 0" in e.where


def test_out_of_bounds_load_is_an_error_unless_robust():
    src = body("  let l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, 4000u, 16u);\n"
               "  subgroupMatrixStore<row_major>(&d, 0u, subgroupMatrixMultiply<f32>(l, l2()), 16u);\n"
               ).replace("fn main", "fn l2() -> subgroup_matrix_right<f16, 16, 16> {\n"
                         "  return subgroup_matrix_right<f16, 16, 16>(1.0h);\n}\n@compute @workgroup_size(32)\nfn main", 1)
    src = src.replace("@compute @workgroup_size(32)\nfn l2", "fn l2")
    e = error_of(src)
    assert "out of bounds" in e.message and "buffer 'a' (@group(0) @binding(0))" in e.message
    assert "has 8192 bytes" in e.message
    # --robust applies the H200's measured behaviour: the matrix is read from offset 0
    bufs = compile_run(src, bounds="webgpu")
    assert np.all(bufs[(0, 1)].read(np.float32)[:16] == 16.0)


def test_non_uniform_control_flow():
    src = body("  if (lid < 16u) {\n" + LOAD_A + "  }\n",
               params="@builtin(local_invocation_index) lid: u32")
    e = error_of(src)
    assert e.loc.line == 8
    assert "non-uniform control flow" in e.message and "subgroup 0, lane 16" in e.where


def test_offset_must_be_subgroup_uniform():
    src = body("  let l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, lid, 16u);\n",
               params="@builtin(local_invocation_index) lid: u32")
    e = error_of(src)
    assert "offset of a cooperative matrix access differs between invocations" in e.message


def test_workgroup_size_multiple_of_subgroup_size():
    e = error_of(body(LOAD_A, wg=48))
    assert "workgroup_size.x (48)" in e.message and "multiple of the subgroup size (32)" in e.message


def test_matrix_array_element_type():
    # The deprecated (bool col_major) form takes only the matrix's own storage type; the
    # templated form takes any scalar or vector array (tests/frontend/test_coop_arrays.py).
    src = HEAD.replace("array<f16>;", "array<f16>;\n@group(0) @binding(2) var<storage, read> q: array<f32>;") + \
        "@compute @workgroup_size(32)\nfn main() {\n" \
        "  let l = subgroupMatrixLoad<subgroup_matrix_left<u8, 32, 16>>(&q, 0u, false, 8u);\n}\n"
    e = error_of(src)
    assert "is stored in an array<u32>, not array<f32>" in e.message


def test_matrix_array_elements_shorter_than_matrix_elements():
    src = HEAD + "@compute @workgroup_size(32)\nfn main() {\n" \
        "  let l = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>, row_major>(&a, 0u, 8u);\n}\n"
    e = error_of(src)
    assert "the array's elements (f16, 2 bytes) are shorter than the matrix's (f32, 4 bytes)" in e.message
    assert (e.loc.line, e.loc.col) == (7, 74)


def test_cli_reports_one_message(tmp_path, capsys):
    from emu.cli import main
    f = tmp_path / "k.wgsl"
    f.write_text(body(LOAD_A.replace("16u);", "8u);")))
    np.save(tmp_path / "d.npy", np.zeros(256, np.float32))
    rc = main(["run", str(f), "--dispatch", "1", "--profile", "nvidia-h200", "--buffer", "0:0=" + str(_npy(tmp_path)),
               "--buffer", "0:1=" + str(tmp_path / "d.npy"), "--output", "0:1=" + str(tmp_path / "o.npy")])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.startswith(f"{f}:7:11: error: stride 8 is smaller")
    assert "Traceback" not in err


def _npy(tmp_path):
    p = tmp_path / "a.npy"
    np.save(p, np.ones(4096, np.float16))
    return p
