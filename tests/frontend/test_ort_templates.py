"""scripts/ort_wgsl_template.py, the reimplementation of ONNX Runtime's WGSL template syntax and
ShaderHelper prelude that scripts/ort_webgpu.py instantiates ORT's kernels with, on a template
written here: #define/#param/#if/#elif/#else, $MAIN, the indices-helper utilities; the program
it gives runs on emu with the uniforms laid out from its own Uniforms struct."""
import subprocess
import sys
from pathlib import Path

import numpy as np

import emu

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from ort_wgsl_template import UNIFORM, VALUE_ALIAS, Program, TemplateError, Var, apply_template  # noqa: E402

TEMPLATE = """// rows scaled by a parameter, the row index added (comments are dropped)
#define MODE_COPY 0
#define MODE_SCALE 1
#param mode
#param factor
#use guardAgainstOutOfBoundsWorkgroupSizes getElementAt .offsetToIndices .getByOffset .setByOffset .rank

fn scaled(v: output_value_t) -> output_value_t {
  return v * output_value_t(factor);   /* a parameter in the code */
}

$MAIN {
  guardAgainstOutOfBoundsWorkgroupSizes(uniforms.output_size);
  let indices = output.offsetToIndices(global_idx);
  let row = getElementAt(indices, 0, output.rank);
#if mode == MODE_COPY
  output.setByOffset(global_idx, src.getByOffset(global_idx));
#elif mode == MODE_SCALE && output.rank > 1
  output.setByOffset(global_idx, scaled(src.getByOffset(global_idx)) + output_value_t(row));
#else
  output.setByOffset(global_idx, output_value_t(0));
#endif
}
"""


def program(tmp_path, mode, shape=(3, 5)):
    path = tmp_path / "scale.wgsl.template"
    path.write_text(TEMPLATE)
    src = Var("src", "f32", UNIFORM, shape)
    out = Var("output", "f32", UNIFORM | VALUE_ALIAS, shape)
    n = int(np.prod(shape))
    prog = Program([src], [out], [("output_size", "u32", 1)], workgroup=(8, 1, 1), dispatch=(-(-n // 8), 1, 1))
    return apply_template(prog, path, {"mode": mode, "factor": 3}, {"src": src, "output": out}).source()


def run(text, shape):
    n = int(np.prod(shape))
    dev = emu.Device("reference")
    module, _ = emu.compile_wgsl(text, "scale.wgsl")
    t = next(g.type for g in module.globals if g.space == "uniform")
    raw = np.zeros(-(-t.size // 16) * 16, np.uint8)
    values = {"output_shape": shape, "output_stride": [shape[1]], "output_size": [n]}
    for m, off in zip(t.members, t.offsets):
        v = np.asarray(values[m.name], np.uint32)
        raw[off:off + v.nbytes] = v.view(np.uint8)
    x = np.arange(n, dtype=np.float32).reshape(shape) / 4
    bufs = {(0, 0): dev.create_buffer(x), (0, 1): dev.create_buffer(size=4 * n), (0, 2): dev.create_buffer(raw)}
    dev.dispatch(dev.create_compute_pipeline(dev.create_shader_module(text, "scale.wgsl")), bufs, (-(-n // 8), 1, 1))
    return x, bufs[(0, 1)].read(np.float32).reshape(shape)


def test_template_instantiates_and_runs(tmp_path):
    text = program(tmp_path, mode=1)
    # ShaderHelper's prelude: bindings in order, the output's shape and stride in the uniforms
    # (offsetToIndices asked for them), its helper, the 1-D entry point's derived indices
    assert "@group(0) @binding(0) var<storage, read> src: array<f32>;" in text
    assert "struct Uniforms {\n  output_shape: vec2<u32>,\n  output_stride: u32,\n  output_size: u32\n};" in text
    assert "fn o2i_output(offset : u32)->vec2<u32> {" in text   # no indices alias asked for
    assert "  let global_idx = global_id.x;\n" in text
    assert "  if (global_idx >= uniforms.output_size) { return; }" in text
    assert "output_value_t(3)" in text and "comments" not in text and "#" not in text
    x, got = run(text, (3, 5))
    assert np.array_equal(got, x * 3 + np.arange(3, dtype=np.float32)[:, None])


def test_conditions_see_parameters_defines_and_ranks(tmp_path):
    x, got = run(program(tmp_path, mode=0), (3, 5))
    assert np.array_equal(got, x)
    assert "output_value_t(0)" in program(tmp_path, mode=2)


def test_missing_parameter_is_named(tmp_path):
    path = tmp_path / "scale.wgsl.template"
    path.write_text(TEMPLATE)
    v = Var("output", "f32", UNIFORM | VALUE_ALIAS, (4,))
    try:
        apply_template(Program([], [v], []), path, {"mode": 0}, {"output": v, "src": v})
    except TemplateError as e:
        assert "parameters not given: factor" in str(e)
    else:
        raise AssertionError("a template with an unset #param was instantiated")


def test_script_skips_without_a_folder():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "ort_webgpu.py")], capture_output=True, text=True)
    assert r.returncode == 0 and "skipping" in r.stdout
