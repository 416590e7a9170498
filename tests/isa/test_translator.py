"""The compiler model's translator layer (Tint through Dawn) and its f16 driver rules, against
Tint's own SPIR-V of our random programs (tests/data/tint/randprog_SEED.spvasm: what Dawn handed
to Mesa's lavapipe, captured by scripts/translator_spirv.py) and against the H200's recordings of
those programs (tests/data/hw/h200/randprog_fit.npz)."""
from pathlib import Path

import numpy as np
import pytest

from emu.api import Device
from emu.hw import randprog
from emu.isa.compiler import compile_for, stack_for
from emu.profiles import load_profile

DATA = Path(__file__).resolve().parents[1] / "data"
TINT = DATA / "tint"


def _run(prog, text, file, entry=None):
    dev = Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(text, file), entry)
    out = dev.create_buffer(size=prog.invocations * prog.n_outputs * 4)
    dev.dispatch(pipe, {(0, 0): dev.create_buffer(prog.inputs()), (0, 1): out},
                 (prog.invocations // randprog.WORKGROUP, 1, 1))
    return out.read(np.uint32).copy()


@pytest.mark.parametrize("seed", [753, 445, 1069])
def test_wgsl_through_the_tint_stack_is_tints_spirv_through_the_driver(seed):
    """The translator layer reproduces Tint's arithmetic: the WGSL on the Dawn stack gives the bits
    of Tint's SPIR-V (NClamp/NMin included) on the driver-only stack."""
    prog = randprog.generate(seed)
    spirv = (TINT / f"randprog_{seed}.spvasm").read_text()
    assert "Google Tint Compiler" in spirv and "SmoothStep" not in spirv
    via_tint = _run(prog, spirv, f"randprog_{seed}.spvasm", "dawn_entry_point")
    assert np.array_equal(randprog.run_emu(prog, "dawn"), via_tint)


@pytest.fixture(scope="module")
def fit():
    return randprog.load_recording(DATA / "hw" / "h200" / "randprog_fit.npz")


@pytest.mark.parametrize("path,seed,out", [("dawn", 753, None), ("dawn", 445, None), ("vulkan", 753, None),
                                           ("vulkan", 445, None),
                                           ("dawn", 93, None), ("vulkan", 93, None), ("dawn", 513, 1),
                                           ("vulkan", 513, 1), ("dawn", 49, None), ("vulkan", 49, None),
                                           ("dawn", 1069, None), ("vulkan", 1069, None), ("dawn", 425, None),
                                           ("vulkan", 425, None)])
def test_f16_programs_replay_the_h200(fit, path, seed, out):
    """f16 smoothstep through Tint's polyfill (dawn) and through the driver's own lowering
    (vulkan), the repeated factor of (t3 * x2) * t3 (seed 1069), f32(f16(x)) as x (93), x1 / 0.3h
    as x1 times the f16 nearest 1 / 0.3h (513's output 1), (a * (x3 - x3)) * t5 as +0 (49),
    ((x3 - x2) - x2) + x2 as x3 - x2 and f16 t6 / t4 + m as fma(t6, RCP(t4), m) (425): bit for bit."""
    prog = randprog.generate(seed)
    got, gpu = (a.reshape(-1, prog.n_outputs) for a in (randprog.run_emu(prog, path), fit[(path, seed)]))
    if out is not None:
        got, gpu = got[:, out], gpu[:, out]
    assert np.array_equal(got, gpu)


def _ir(source, file, translator="tint"):
    from emu.api import compile_for_ir
    module, _ = compile_for_ir(source, file)
    done = compile_for(module, stack_for(load_profile("nvidia-h200"), file.endswith(".comp"), translator))
    return module, done


SMOOTH = """enable f16;
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(1) fn main() {
  let x = o[0];
  o[1] = smoothstep(-1.0, 2.0, x);
  o[2] = f32(smoothstep(-1.0h, 2.0h, f16(x)));
  o[3] = f32(f16(x));
}
"""


def test_tint_writes_smoothstep_as_arithmetic_and_naga_keeps_it():
    module, done = _ir(SMOOTH, "s.wgsl", "tint")
    assert done["tint-smoothstep"] == 2
    fns = [i.attrs.get("fn") for f in module.functions for i in f.walk()]
    assert "smoothstep" not in fns
    assert [i.attrs.get("contracted") for f in module.functions for i in f.walk()].count("f16-constant-division") == 1
    module, done = _ir(SMOOTH, "s.wgsl", "naga")
    assert "tint-smoothstep" not in done and done["expand"] == 2


def test_an_f16_round_trip_of_an_f32_is_dropped():
    module, done = _ir(SMOOTH, "s.wgsl")
    assert done["f16-round-trip"] == 1
    stores = [i for f in module.functions for i in f.walk() if i.op == "store"]
    defs = {i.result.id: i for f in module.functions for i in f.walk() if i.result is not None}
    assert defs[stores[-1].args[1].id].op == "load"          # o[3] = the load itself
