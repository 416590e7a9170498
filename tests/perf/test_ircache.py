"""The IR kept between processes for `emu run` (emu/jit/ircache.py): a hit gives the IR and the
warnings the front end gives, without importing it; another source, file name, argument or emu
file misses; an unreadable entry is compiled again; errors are never kept. And the thread pool of
the compiled kernels (emu/numerics/pool.py) hands every chunk out once and a thread's error back."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.api import compile_wgsl
from emu.errors import EmuError
from emu.isa.printer import print_module
from emu.jit import ircache
from emu.numerics import pool

ROOT = Path(__file__).resolve().parents[2]

# a shader with warnings (uniformity findings), to see warnings come back from the cache
WARNS = """
enable f16;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read_write> a: array<f16>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(subgroup_id) sg: u32) {
  let m = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&a, sg * 256u, 16u);
  if (lid < 32u) {
    subgroupMatrixStore<row_major>(&a, 0u, m, 16u);
  }
}
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMU_JIT_CACHE", str(tmp_path / "jit"))
    monkeypatch.delenv("EMU_IR_CACHE", raising=False)
    return tmp_path / "jit" / "ir" / ircache._stamp()


def _compile(source, file="w.wgsl", **kw):
    return compile_wgsl(source, file, defer_unset=True, cache=True, **kw)


def test_a_hit_gives_the_front_ends_ir_and_warnings(cache):
    fresh, fresh_w = compile_wgsl(WARNS, "w.wgsl", defer_unset=True)
    assert fresh_w, "the shader should warn"
    first = _compile(WARNS)
    entries = list(cache.glob("*.pickle"))
    assert len(entries) == 1
    hit, hit_w = _compile(WARNS)
    assert hit is not first[0]                              # fresh objects at each load
    assert print_module(hit) == print_module(fresh)
    assert [w.format({"w.wgsl": WARNS}) for w in hit_w] == [w.format({"w.wgsl": WARNS}) for w in fresh_w]
    for other in ({"file": "x.wgsl"}, {"const_eval": "tint"}, {"strict": True}):
        kw = dict(other)
        _compile(WARNS, kw.pop("file", "w.wgsl"), **kw)
    _compile(WARNS.replace("(64)", "(128)"))
    assert len(list(cache.glob("*.pickle"))) == 5


def test_an_unreadable_entry_is_compiled_again_and_errors_are_not_kept(cache):
    _compile(WARNS)
    (entry,) = cache.glob("*.pickle")
    entry.write_bytes(b"not a pickle")
    module, _ = _compile(WARNS)
    assert print_module(module) == print_module(compile_wgsl(WARNS, "w.wgsl", defer_unset=True)[0])
    assert entry.read_bytes() != b"not a pickle"            # written again
    bad = "fn main( {"
    for _ in range(2):
        with pytest.raises(EmuError) as e:
            _compile(bad, "bad.wgsl")
        assert "bad.wgsl:1:" in e.value.format({"bad.wgsl": bad})
    assert len(list(cache.glob("*.pickle"))) == 1


def test_off_and_old_stamps_pruned(cache, monkeypatch):
    monkeypatch.setenv("EMU_IR_CACHE", "0")
    _compile(WARNS)
    assert not cache.exists()
    monkeypatch.delenv("EMU_IR_CACHE")
    root = cache.parent
    root.mkdir(parents=True)
    for i in range(ircache.KEEP_STAMPS + 3):
        (root / f"old{i:02d}").mkdir()
        os.utime(root / f"old{i:02d}", (1000 + i, 1000 + i))
    _compile(WARNS)
    left = sorted(p.name for p in root.iterdir())
    assert cache.name in left and len(left) == ircache.KEEP_STAMPS
    assert "old00" not in left and f"old{ircache.KEEP_STAMPS + 2:02d}" in left


def test_emu_run_twice_same_bits_second_without_the_front_end(tmp_path):
    env = dict(os.environ, EMU_JIT_CACHE=str(tmp_path / "jit"))
    env.pop("EMU_IR_CACHE", None)
    src = ROOT / "bench" / "shaders" / "gemm_simple.wgsl"
    a = np.random.default_rng(1).uniform(-1, 1, (64, 64)).astype(np.float16)
    np.save(tmp_path / "a.npy", a)
    # (an atexit handler keeps `emu run` from ending the process at once, startup.exit_now, so
    # that the last line can say what was imported)
    prog = ("import atexit, sys, runpy; sys.argv = ['emu'] + sys.argv[1:]; atexit.register(lambda: None)\n"
            "try:\n    runpy.run_module('emu', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "print('emu.frontend.wgsl' in sys.modules)")
    outs = []
    for i in range(2):
        out = tmp_path / f"c{i}.npy"
        r = subprocess.run([sys.executable, "-c", prog, "run", str(src), "--dispatch", "4,4", "--profile", "nvidia-h200",
                            "--override", "M=64", "--override", "N=64", "--override", "K=64",
                            "--buffer", f"0:0={tmp_path}/a.npy", "--buffer", f"0:1={tmp_path}/a.npy",
                            "--buffer", "0:2=zeros:4096:f32", "--output", f"0:2={out}"],
                           capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout.split()[-1])
    assert outs == ["True", "False"]
    assert (tmp_path / "c0.npy").read_bytes() == (tmp_path / "c1.npy").read_bytes()


def test_pool_runs_each_chunk_once_and_hands_errors_back():
    seen = []

    def fn(a, b):
        seen.extend(range(a, b))
    pool.run_chunks(fn, 1000, 4, per_thread=8)
    assert sorted(seen) == list(range(1000))

    def fails(a, b):
        if a == 0:
            raise ValueError("chunk 0")
    for _ in range(3):
        with pytest.raises(ValueError, match="chunk 0"):
            pool.run_chunks(fails, 64, 2)
    assert len(pool._threads) <= pool.CPUS


def test_spirv_binary_with_spec_constants_lowered_once_per_machine(cache, monkeypatch):
    """A Vulkan program's shader (a SPIR-V binary, passed as the ICD passes it: decoded with
    surrogateescape) and its pipelines with specialization constants: the second device lowers
    nothing (the IR after the device's compiler passes comes from the cache), and its IR and
    results are the first one's."""
    from emu.frontend import spirv
    src = (ROOT / "tests" / "shaders" / "spirv" / "spec_short_array.comp").read_text()
    binary = spirv.compile_glsl(src, "spec_short_array.comp").decode("utf-8", "surrogateescape")
    outs, irs = [], []
    for n in range(2):
        if n:
            def no_front_end(*a, **k):
                raise AssertionError("lowered again")
            monkeypatch.setattr(spirv, "compile_source", no_front_end)
        dev = emu.Device(profile="nvidia-h200")
        mod = dev.create_shader_module(binary, file="shader-0123.spv", cache=True)
        for length in (2, 8):
            pipe = dev.create_compute_pipeline(mod, "main", {"0": length})
            o = np.zeros(1, np.int32)
            dev.dispatch(pipe, {(0, 0): o}, 1)
            outs.append(int(o[0]))
            irs.append(print_module(pipe.pipeline.module))
    assert outs == [3, 172, 3, 172]              # 0 + 3; 0 + 3 + ... + 21 with a[4] = 100 for 12
    assert irs[:2] == irs[2:]
    assert len(list(cache.glob("*.pickle"))) == 3    # the module and its two specializations


def test_a_cached_spirv_module_is_read_only_for_its_pipelines(cache, monkeypatch):
    """From the cache, a SPIR-V module whose pipelines lower it again with their constants is not
    read at all (its overrides come from the summary beside it), and a pipeline the device checked
    once (emu.isa.verify) is not checked again; a damaged entry is compiled again. The results are
    the first device's."""
    import emu.isa.verify as verify_mod
    from emu.frontend import spirv
    src = (ROOT / "tests" / "shaders" / "spirv" / "spec_short_array.comp").read_text()
    binary = spirv.compile_glsl(src, "spec_short_array.comp").decode("utf-8", "surrogateescape")
    real_verify, checks = verify_mod.verify, []

    def counted(*a, **k):
        checks.append(a[3].name if len(a) > 3 and a[3] is not None else None)
        return real_verify(*a, **k)
    monkeypatch.setattr(verify_mod, "verify", counted)
    outs = []
    for n in range(3):
        dev = emu.Device(profile="nvidia-h200")
        mod = dev.create_shader_module(binary, file="shader-0123.spv", cache=True)
        assert (mod._ir is None) == (n > 0)              # a hit: not loaded
        for length in (2, 8):
            pipe = dev.create_compute_pipeline(mod, "main", {"0": length})
            o = np.zeros(1, np.int32)
            dev.dispatch(pipe, {(0, 0): o}, 1)
            outs.append(int(o[0]))
        assert mod._ir is None or n == 0                 # nor by its pipelines
        if n == 0:
            assert checks == [None, "main", None, "main"]     # each pipeline: module, then entry point
            assert len(list(cache.glob("*.checked"))) == 4
            checks.clear()
    assert checks == []                                  # the later devices check nothing again
    assert outs == [3, 172] * 3
    assert [o.id for o in mod.about("overrides")] == [o.id for o in mod.ir.overrides]
    for p in cache.glob("*.pickle"):                     # damaged: compiled again, same results
        p.write_bytes(b"not a pickle")
    dev = emu.Device(profile="nvidia-h200")
    mod = dev.create_shader_module(binary, file="shader-0123.spv", cache=True)
    pipe = dev.create_compute_pipeline(mod, "main", {"0": 8})
    o = np.zeros(1, np.int32)
    dev.dispatch(pipe, {(0, 0): o}, 1)
    assert int(o[0]) == 172


ADD = """
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  o[id.x] = a[id.x] * 3.0 + 1.0;
}
"""


def test_a_pipelines_kernel_is_generated_once_per_machine(cache, monkeypatch):
    """The fusion kernel of a pipeline whose IR comes from the cache is kept beside it
    (emu/jit/kernelcache.py): a later device does not generate its source again, and runs it to
    the same bits; other options are another kernel."""
    from emu.jit import fuse
    a = np.linspace(-3, 3, 256).astype(np.float32)
    outs, sources = [], []
    for n in range(2):
        if n:
            def no_gen(self):
                raise AssertionError("generated again")
            monkeypatch.setattr(fuse._Gen, "build", no_gen)
        dev = emu.Device(profile="nvidia-h200")
        pipe = dev.create_compute_pipeline(dev.create_shader_module(ADD, "add.wgsl", cache=True), "main")
        o = np.zeros(256, np.float32)
        dev.dispatch(pipe, {(0, 0): a, (0, 1): o}, 4)
        outs.append(o)
        sources.append(pipe.pipeline._jit.source)
        assert pipe.pipeline._jit.pipe is pipe.pipeline
    assert np.array_equal(outs[0].view(np.uint32), outs[1].view(np.uint32))
    assert np.array_equal(outs[0], (a.astype(np.float64) * 3 + 1).astype(np.float32))     # one FFMA
    assert sources[0] == sources[1]
    assert len(list(cache.glob("*.fusion.kernel"))) == 1
    monkeypatch.undo()
    monkeypatch.setenv("EMU_JIT_CACHE", str(cache.parents[1]))
    dev = emu.Device(profile="nvidia-h200", bounds="strict")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(ADD, "add.wgsl", cache=True), "main")
    dev.dispatch(pipe, {(0, 0): a, (0, 1): np.zeros(256, np.float32)}, 4)
    assert len(list(cache.glob("*.fusion.kernel"))) == 2
