"""The ``backend`` fixture: one test, run on the emulator and on every real WebGPU adapter.

    from backends import backend  # noqa: F401  (a pytest fixture; tests/hw is on sys.path)

    def test_vecadd(backend):
        out = backend.run(SRC, dispatch=(4, 1, 1), buffers={(0, 0): a, (0, 1): b, (0, 2): c})
        assert np.array_equal(np.frombuffer(out[(0, 2)], np.float32), a + b)

Parameters: ``emu`` (the emulator; profile ``reference`` unless the test passes one), ``wgpu``
(wgpu-py on wgpu-native) and ``dawn`` (wgpudawn). The GPU variants run the WGSL that
``emu.hw.emit`` writes from the shader's IR in their dialect (what ``emu diff`` sends), and skip,
saying why, where the binding or an adapter is missing -- or fail instead where ``EMU_REQUIRE_HW``
is set and the binding is installed (emu's pytest plugin's ``need_hardware``, the one rule of
every hardware test).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from emu.hw import adapters
from emu.pytest_plugin import need_hardware

BACKENDS = ("emu",) + adapters.BACKENDS


@dataclass
class Backend:
    name: str                       # 'emu' | 'wgpu' | 'dawn'
    info: dict | None = None        # the adapter's info for GPU variants

    @property
    def is_gpu(self) -> bool:
        return self.name != "emu"

    def profile(self, default: str = "reference"):
        """The profile that describes this backend: the one claiming the adapter for a GPU."""
        from emu.profiles import load_profile, profile_for_adapter
        if self.is_gpu:
            p = profile_for_adapter(self.info.get("vendor_id"), self.info.get("device"),
                                    self.info.get("backend_type"))
            if p is not None:
                return p
        return load_profile(default)

    def run(self, source: str, *, dispatch=(1, 1, 1), buffers: dict, entry: str | None = None,
            overrides: dict | None = None, profile: str | None = None,
            subgroup_size: int | None = None, file: str = "test.wgsl") -> dict:
        """Run a shader; returns {(group, binding): bytes} of every read_write storage binding."""
        from emu.frontend.wgsl import compile_source
        module, _ = compile_source(source, file)
        outs = [(g.group, g.binding) for g in module.globals
                if g.space == "storage" and g.access == "read_write" and (g.group, g.binding) in buffers]
        if not self.is_gpu:
            import emu
            dev = emu.Device(profile or "reference", subgroup_size)
            pipe = dev.create_compute_pipeline(dev.create_shader_module(source, file), entry, overrides or {})
            handles = {k: dev.create_buffer(np.frombuffer(_raw(v), np.uint8).copy()) for k, v in buffers.items()}
            dev.dispatch(pipe, handles, dispatch)
            return {k: handles[k].read(np.uint8).tobytes()[: len(_raw(buffers[k]))] for k in outs}
        from emu.hw.emit import emit
        from emu.hw.runner import run_on_adapter
        text = emit(module, "dawn" if self.name == "dawn" else "wgpu")
        num = {k: (1.0 if v is True else 0.0 if v is False else float(v)) for k, v in (overrides or {}).items()}
        return run_on_adapter(text, entry=entry, dispatch=dispatch, buffers=buffers, outputs=outs,
                              overrides=num, backend=self.name)


def _raw(v) -> bytes:
    return np.ascontiguousarray(v).tobytes() if isinstance(v, np.ndarray) else bytes(v)


@pytest.fixture(params=BACKENDS)
def backend(request) -> Backend:
    name = request.param
    if name == "emu":
        return Backend("emu")
    return Backend(name, need_hardware(name))


# -- how to run the shaders of tests/shaders (dispatch, overrides, inputs the shader assumes) ------

def _matmul_dims():
    return np.array([16, 16, 8, 0], np.uint32)          # M, N, K (+ padding to 16 bytes)


SHADER_RUNS = {
    # name: dispatch, overrides, given buffers (the rest random), why
    "atomics.wgsl": dict(dispatch=(1, 1, 1)),
    "consts_overrides.wgsl": dict(dispatch=(1, 1, 1), overrides={"COUNT": "8"}),
    "matmul_naive.wgsl": dict(dispatch=(2, 2, 1), buffers=lambda: {(0, 0): _matmul_dims()}),
    # every workgroup reads all particles while others move them: one workgroup, no race
    "structs_arrays.wgsl": dict(dispatch=(1, 1, 1)),
    # small values: its f32 subgroupAdd of v * 0.25 is exact in any order only for small v
    "subgroups.wgsl": dict(dispatch=(2, 1, 1),
                           buffers=lambda: {(0, 0): np.random.default_rng(5).integers(-100, 101, 256).astype(np.int32)}),
}


def shader_run(name: str) -> dict:
    r = {"dispatch": (2, 1, 1), "overrides": {}, "buffers": {}, "profile": "reference"}
    r.update(SHADER_RUNS.get(name, {}))
    if callable(r["buffers"]):
        r["buffers"] = r["buffers"]()
    return r

SHADER_RUNS.update({
    # the example GEMMs at M = N = K = 32 (the emulator's runs stay short)
    "gemm_dawn.wgsl": dict(dispatch=(1, 1, 1), overrides={"M": "32", "N": "32", "K": "32"}, profile="nvidia-h200"),
    "gemm_wgpu.wgsl": dict(dispatch=(2, 2, 1), overrides={"M": "32", "N": "32", "K": "32"}, profile="nvidia-h200"),
})
# traces/hw/kernels (the H200 session's cooperative kernels), at M = N = K = 32
for _k in ("mma_f16_f16_dawn.wgsl", "mma_f16_f16_wgpu.wgsl", "mma_f16_f32_16x8x16_colmajor_dawn.wgsl",
           "mma_u8_u32_dawn.wgsl"):
    SHADER_RUNS[_k] = dict(dispatch=(2, 2, 1), overrides={"M": "32", "N": "32", "K": "32"}, profile="nvidia-h200")
SHADER_RUNS["mma_i8_i32_16x8x32_dawn.wgsl"] = dict(dispatch=(2, 2, 1), overrides={"M": "32", "N": "32"},
                                                   profile="nvidia-h200")


def emu_inputs(module, entry=None, run=None, seed: int = 1) -> dict:
    """Random contents for every storage/uniform binding an entry point uses (run's given ones
    kept), sized as `emu diff` sizes them."""
    from emu.api import used_globals
    from emu.hw.diff import buffer_size, random_inputs
    run = run or shader_run("")
    eps = module.entry_points()
    fn = module.function(entry) if entry else eps[0]
    inv = 1
    for d, w in zip(run["dispatch"], fn.workgroup_size):
        inv *= d * (int(w) if not isinstance(w, str) else 64)
    n = max(1024, 32 * inv)
    rng = np.random.default_rng(seed)
    out = {}
    for g in used_globals(module, fn):
        if g.space not in ("storage", "uniform"):
            continue
        key = (g.group, g.binding)
        out[key] = _raw(run["buffers"][key]) if key in run["buffers"] else \
            random_inputs(g.type, buffer_size(g.type, n), rng)
    return out
