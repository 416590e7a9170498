"""Const-expressions on nvidia-h200 fold as Dawn's Tint does on the host (profile field
`const_eval: "tint"`, emu/numerics/tint.py): f16 values quantized toward zero, the host's float
functions, several-step builtins step by step. The reference profile keeps WGSL's rules."""
import json
from pathlib import Path

import numpy as np

import emu
from emu.hw.builtins_record import const_shader

DATA = Path(__file__).resolve().parents[1] / "data" / "hw" / "h200" / "consts_f16.json"


def _run(profile, src, n, dtype, extra=0):
    dev = emu.Device(profile)
    bufs = {(0, 0): dev.create_buffer(np.zeros(n, dtype))}
    if extra:
        bufs[(0, 1)] = dev.create_buffer(np.zeros(extra, np.float32))
    dev.dispatch(dev.create_compute_pipeline(dev.create_shader_module(src, "c.wgsl")), bufs, (1, 1, 1))
    return bufs[(0, 0)].read(dtype), bufs.get((0, 1))


def test_recorded_f16_const_expressions():
    rec = json.loads(DATA.read_text())
    src = const_shader("f16", rec["fns"], rec["values"])
    bits = np.array(rec["bits"], np.uint16)
    assert (_run("nvidia-h200", src, bits.size, np.float16)[0].view(np.uint16) == bits).all()
    assert (_run("reference", src, bits.size, np.float16)[0].view(np.uint16) == bits).sum() == 32


def test_tint_folding_rules():
    src = """enable f16;
@group(0) @binding(0) var<storage, read_write> o: array<f16>;
@group(0) @binding(1) var<storage, read_write> p: array<f32>;
@compute @workgroup_size(1) fn main() {
  o[0] = 0.3h;                       // nearest 0x34CD; Tint: f32(0.3) toward zero, 0x34CC
  o[1] = f16(0.3);                   // an abstract float converted: the same
  o[2] = 0.3h * 3.0h;                // in float, then toward zero
  o[3] = inverseSqrt(1.1h);          // sqrt quantized, then 1 / it quantized
  p[0] = fma(1.000244140625f, 1.000244140625f, -1.00048828125f);   // Tint: a * b rounded, then + c
  p[1] = 7.5f % 2.2f;                // Tint: x - y * trunc(x / y), each rounded
}"""
    runs = {prof: _run(prof, src, 4, np.float16, extra=2) for prof in ("nvidia-h200", "reference")}
    h = {prof: r[0].view(np.uint16) for prof, r in runs.items()}
    assert h["nvidia-h200"][:2].tolist() == [0x34CC, 0x34CC] and h["reference"][:2].tolist() == [0x34CD, 0x34CD]
    assert h["nvidia-h200"][2] == 0x3B32 and h["reference"][2] == 0x3B34
    assert h["nvidia-h200"][3] == 0x3BA2                 # recorded on the H200's host (consts_f16.json)
    p, r = (runs[prof][1].read(np.float32) for prof in ("nvidia-h200", "reference"))
    assert p[0] == 0.0 and r[0] == 2.0 ** -24            # WGSL's fma is fused
    assert p[1] == np.float32(7.5) - np.float32(np.float32(2.2) * np.float32(3))


def test_a_host_whose_c_library_differs_folds_correctly_rounded_and_warns(monkeypatch):
    """The H200's host folds with glibc's float functions; a host whose library gives other
    results (faked here by a wrong probe CRC) folds to the correctly rounded value and says so."""
    from emu.numerics import tint
    assert all(tint.folds_as_h200(n) for n in tint._LIBM)        # this machine's glibc is the H200 host's
    glibc = tint._libm("sinhf")(0.8142147660255432)
    src = ("@group(0) @binding(0) var<storage, read_write> o: array<f32>;\n"
           "@compute @workgroup_size(1) fn main() {\n  o[0] = sinh(0.8142147660255432f);\n}")
    monkeypatch.setitem(tint.H200_HOST_CRC, "sinhf", 0)
    tint._libm.cache_clear()
    try:
        dev = emu.Device("nvidia-h200")
        mod = dev.create_shader_module(src, "c.wgsl")
        buf = dev.create_buffer(np.zeros(1, np.float32))
        dev.dispatch(dev.create_compute_pipeline(mod), {(0, 0): buf}, (1, 1, 1))
    finally:
        monkeypatch.undo()
        tint._libm.cache_clear()
    (w,) = mod.warnings
    assert "sinh of constants folds to its correctly rounded value" in w.message and (w.loc.line, w.loc.col) == (3, 10)
    got = buf.read(np.float32)[0]
    assert got == np.float32(np.sinh(np.float64(np.float32(0.8142147660255432)))) and got != np.float32(glibc)
    assert not emu.Device("nvidia-h200").create_shader_module(src, "c.wgsl").warnings
