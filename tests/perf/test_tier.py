"""The tiered run (emu/jit/tier.py): a kernel not in the cache starts in the interpreter and is
compiled only where a rent-or-buy cost model finds that cheaper; either way the same bits as the
interpreter alone (the reference) and as the compiled path alone."""
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.jit import notice, tier

ROOT = Path(__file__).resolve().parents[2]
NAIVE = (ROOT / "bench" / "shaders" / "matmul_naive.wgsl").read_text()
COOP = (ROOT / "emu" / "examples" / "gemm_wgpu.wgsl").read_text()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty JIT cache: every kernel is new, as after an edit."""
    monkeypatch.setenv("EMU_JIT_CACHE", str(tmp_path / "jit"))
    monkeypatch.delenv("EMU_JIT", raising=False)
    return tmp_path / "jit"


def _gemm(src, n, dtype, grid, profile="reference"):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, n)).astype(dtype)
    dev = emu.Device(profile)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "t.wgsl"),
                                       constants={"M": n, "N": n, "K": n})
    c = dev.create_buffer(size=4 * n * n)
    dev.dispatch(pipe, {(0, 0): a, (0, 1): b, (0, 2): c}, grid)
    return c.read(np.uint32), pipe.pipeline


def _reference(monkeypatch, src, n, dtype, grid):
    monkeypatch.setenv("EMU_JIT", "0")
    out, _ = _gemm(src, n, dtype, grid)
    monkeypatch.delenv("EMU_JIT")
    return out


def test_a_small_dispatch_of_a_new_kernel_is_interpreted_at_once(cache, monkeypatch):
    want = _reference(monkeypatch, NAIVE, 64, np.float32, (4, 4, 1))
    t = time.process_time()
    got, pl = _gemm(NAIVE, 64, np.float32, (4, 4, 1))
    spent = time.process_time() - t
    assert np.array_equal(got, want)
    assert pl.ran == {"interpreted": 16, "compiled": 0}
    assert pl._jit.mod is None, "compiled a kernel for 16 workgroups"
    assert spent < 1.0, f"{spent:.2f} s CPU for a 64^3 dispatch"
    assert not (cache / "tier" / "compile_times.json").exists()


@pytest.mark.parametrize("src,n,dtype,probe_lanes", [(NAIVE, 128, np.float32, 1024),
                                                      (COOP, 256, np.float16, 512)])
def test_the_interpreter_hands_over_to_the_compiled_kernel_with_the_same_bits(cache, monkeypatch, src, n, dtype,
                                                                              probe_lanes):
    """Compiling is made to look cheap: the first batch is interpreted, the rest compiled."""
    grid = (n // 16, n // 16, 1)
    want = _reference(monkeypatch, src, n, dtype, grid)
    # emu's own kernels the generated one calls, compiled (or loaded) first, as on a machine where emu
    # has run: the compile measured below is then the kernel's alone, and is recorded
    monkeypatch.setenv("EMU_JIT_CACHE", str(cache.parent / "warm"))
    monkeypatch.setenv("EMU_JIT", "1")
    assert np.array_equal(_gemm(src, n, dtype, grid)[0], want)
    monkeypatch.setenv("EMU_JIT_CACHE", str(cache))
    monkeypatch.delenv("EMU_JIT")
    monkeypatch.setattr(tier.Tier, "PROBE_LANES", probe_lanes)
    monkeypatch.setattr(tier, "compile_estimate", lambda kind, cache, lines=None: 1e-9)
    got, pl = _gemm(src, n, dtype, grid)
    assert np.array_equal(got, want)
    first = probe_lanes // pl.layout.padded_size(pl.opts.subgroup_size)
    total = grid[0] * grid[1]
    assert pl.ran == {"interpreted": first, "compiled": total - first}
    assert pl._jit.mod is not None
    assert pl._jit.why.startswith(f"a dispatch of {total} workgroups: ~") and pl._jit.why.endswith(" s to compile")
    times = json.loads((cache / "tier" / "compile_times.json").read_text())
    kind = pl._jit.kind
    assert sorted(times) == [kind, f"{kind}/line"] and len(times[kind]) == 1 and times[kind][0] > 0
    lines = pl._jit.source.count("\n") + 1
    # (the seconds are kept to the millisecond, the per-line cost to the microsecond)
    assert times[f"{kind}/line"] == [pytest.approx(times[kind][0] / lines, abs=0.0006 / lines + 1e-6)]
    assert pl._jit.tier() is None       # compiled now: the pipeline's next dispatch runs compiled


def test_rent_or_buy_across_processes(cache, monkeypatch):
    """Interpreted seconds count against the kernel (in the cache folder, under its hash): once they
    reach its compile estimate, the next dispatch compiles before interpreting."""
    monkeypatch.setattr(tier, "LOAD_S", 0.0)
    monkeypatch.setattr(tier, "compile_estimate", lambda kind, cache, lines=None: 1000.0)
    want, pl = _gemm(NAIVE, 64, np.float32, (4, 4, 1))
    assert pl.ran["compiled"] == 0
    rent = list((cache / "tier").glob("*.rent"))
    assert len(rent) == 1 and float(rent[0].read_text()) > 0
    # a later process whose estimate is below what this kernel was interpreted for: compiles first
    monkeypatch.setattr(tier, "compile_estimate", lambda kind, cache, lines=None: float(rent[0].read_text()) / 2)
    got, pl = _gemm(NAIVE, 64, np.float32, (4, 4, 1))
    assert pl.ran == {"interpreted": 0, "compiled": 16}
    assert np.array_equal(got, want)
    assert pl._jit.why.startswith("interpreted for ") and pl._jit.why.endswith(" s a compile takes here")


def test_compile_estimate_is_the_median_of_the_last_compiles(cache):
    assert tier.compile_estimate("fusion", cache) == tier.DEFAULT_S["fusion"]
    for s in (3.0, 1.0, 2.0, 9.0, 4.0, 5.0):
        tier.record_compile("fusion", s, cache)
    data = json.loads((cache / "tier" / "compile_times.json").read_text())
    assert data == {"fusion": [1.0, 2.0, 9.0, 4.0, 5.0]}            # the last KEEP
    assert tier.compile_estimate("fusion", cache) == 4.0
    assert tier.compile_estimate("cooperative", cache) == tier.DEFAULT_S["cooperative"]


def test_the_estimate_scales_with_the_kernel_s_lines(cache):
    """numba's compile time grows with the generated source: a long kernel (llama.cpp's unrolled
    shaders give 13,000 lines) is estimated from the per-line cost of earlier compiles."""
    assert tier.compile_estimate("fusion", cache, 100) == tier.DEFAULT_S["fusion"]
    assert tier.compile_estimate("fusion", cache, 5 * tier.LARGE_LINES) == 5 * tier.DEFAULT_S["fusion"]
    tier.record_compile("fusion", 0.6, cache, 60)
    tier.record_compile("fusion", 4.0, cache, 400)
    assert tier.compile_estimate("fusion", cache) == pytest.approx(2.3)
    assert tier.compile_estimate("fusion", cache, 13000) == pytest.approx(130.0)
    assert tier.compile_estimate("cooperative", cache, 13000) == 26 * tier.DEFAULT_S["cooperative"]


def test_emu_jit_1_compiles_at_once_and_0_never(cache, monkeypatch):
    monkeypatch.setenv("EMU_JIT", "1")
    _, pl = _gemm(NAIVE, 64, np.float32, (4, 4, 1))
    assert pl.ran == {"interpreted": 0, "compiled": 16}
    monkeypatch.setenv("EMU_JIT", "0")
    _, pl = _gemm(NAIVE, 64, np.float32, (4, 4, 1))
    assert pl._jit is None and pl.ran == {"interpreted": 16, "compiled": 0}


def test_the_compile_line_names_the_kernel_and_why(monkeypatch, capsys):
    n = notice._Notice()
    monkeypatch.setattr(notice, "_NOTICE", n)
    monkeypatch.setattr(notice, "DELAY_S", 0.05)
    n.profile = "reference"
    with notice.compiling("the fusion kernel of 'main' (k.wgsl)",
                          "a dispatch of 1024 workgroups: ~5.8 s interpreted against ~0.7 s to compile; "
                          "kept in the cache for later runs"):
        n.on_start(None)
        time.sleep(0.3)
        n.on_end(None)
    n.on_start(None)           # emu's own kernels: the line of before, once
    time.sleep(0.3)
    n.on_end(None)
    assert capsys.readouterr().err == (
        "compiling the fusion kernel of 'main' (k.wgsl) for reference (a dispatch of 1024 workgroups: ~5.8 s "
        "interpreted against ~0.7 s to compile; kept in the cache for later runs)...\n"
        "compiling kernels for reference (first run only)...\n")


def test_emu_run_of_a_larger_new_kernel_compiles_after_its_first_batch(tmp_path):
    """In a process of its own (the line is silenced in the suite): the naive GEMM at 256^3 from an
    empty cache compiles, and says so with the projection that decided it."""
    rng = np.random.default_rng(0)
    for f in ("a", "b"):
        np.save(tmp_path / f"{f}.npy", rng.standard_normal((256, 256)).astype(np.float32))
    env = {k: v for k, v in __import__("os").environ.items() if k != "EMU_JIT"}
    env.update(EMU_JIT_CACHE=str(tmp_path / "jit"), EMU_SERVE="0", PYTHONPATH=str(ROOT))
    (tmp_path / "jit" / "tier").mkdir(parents=True, mode=0o700)
    (tmp_path / "jit").chmod(0o700)
    (tmp_path / "jit" / "tier" / "compile_times.json").write_text('{"fusion": [0.01]}')
    (tmp_path / "k.wgsl").write_text(NAIVE)
    r = subprocess.run([sys.executable, "-m", "emu", "run", str(tmp_path / "k.wgsl"), "--dispatch", "16,16",
                        "--buffer", f"0:0={tmp_path}/a.npy", "--buffer", f"0:1={tmp_path}/b.npy",
                        "--buffer", "0:2=zeros:256x256:f32", "--output", f"0:2={tmp_path}/c.npy:256x256"],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert lines[-1].startswith("emu: ran 'main' on reference, dispatch 16x16x1 (256 workgroups) in ")
    assert lines[-1].endswith(f", 16 workgroups interpreted, 240 compiled; wrote {tmp_path}/c.npy (256, 256) float32")
    said = [x for x in lines if x.startswith("compiling")]      # printed past a second of compiling
    assert all(x.startswith(f"compiling the fusion kernel of 'main' ({tmp_path}/k.wgsl) for reference (a dispatch "
                            f"of 256 workgroups: ~") and x.endswith("kept in the cache for later runs)...")
               for x in said), said
    a, b = (np.load(tmp_path / f"{f}.npy").astype(np.float64) for f in "ab")
    assert np.allclose(np.load(tmp_path / "c.npy"), a @ b, rtol=1e-4, atol=1e-3)


LOOP_STORES = """
@group(0) @binding(0) var<storage, read> x : array<u32>;
@group(0) @binding(1) var<storage, read_write> o : array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid : vec3<u32>, @builtin(num_workgroups) nw : vec3<u32>) {
  let n = nw.x * 64u;
  for (var k = 0u; k < 2u; k++) {       // invocation i stores i and i + n: two elements each
    o[gid.x + k * n] = x[gid.x] * 3u + k;
  }
}
"""


def test_a_kernel_that_stores_in_a_loop_takes_over_at_a_batch_boundary(cache, monkeypatch):
    """Lane order equals lockstep for such a kernel only within the part it runs itself (it checks
    that no two invocations store to one element there): the interpreted part before it must be
    whole batches of the interpreter's own, not the tier's small first batch."""
    monkeypatch.setattr(tier.Tier, "PROBE_LANES", 64)
    monkeypatch.setattr(tier, "compile_estimate", lambda kind, cache, lines=None: 1e-9)
    x = np.arange(64 * 16, dtype=np.uint32)
    dev = emu.Device("reference")
    dev.options.batch_lanes = 256                       # four workgroups a batch
    pipe = dev.create_compute_pipeline(dev.create_shader_module(LOOP_STORES, "t.wgsl"))
    o = dev.create_buffer(size=8 * x.size)
    dev.dispatch(pipe, {(0, 0): dev.create_buffer(x), (0, 1): o}, (16, 1, 1))
    np.testing.assert_array_equal(o.read(np.uint32), np.concatenate([x * 3, x * 3 + 1]))
    pl = pipe.pipeline
    assert pl._jit.guarded and pl._jit.mod is not None
    assert pl.ran == {"interpreted": 4, "compiled": 12}


def test_rent_files_are_bounded_and_dropped_once_compiled(cache, monkeypatch):
    """tier/ keeps at most KEEP_RENTS rent files: a new one removes the least recently written
    beyond that (and temporary files left by dead writers); a kernel's own goes when it is compiled."""
    import os
    folder = cache / "tier"
    folder.mkdir(parents=True)
    now = time.time()
    for i in range(tier.KEEP_RENTS + 40):             # kernels interpreted once, long ago, oldest first
        p = folder / f"old{i:04d}.rent"
        p.write_text("0.5000")
        os.utime(p, (now - 10_000 + i, now - 10_000 + i))
    stale, fresh = folder / "old0000.123.tmp", folder / "x.456.tmp"
    stale.write_text("0.1")
    os.utime(stale, (now - 2 * tier.STALE_TMP_S,) * 2)
    fresh.write_text("0.1")                            # a process writing right now: left alone
    t = tier.Tier("fusion", "newkernel", "the fusion kernel of 'main'", cache)
    t.ran(tier.LOAD_S + 0.25)
    rents = sorted(p.name for p in folder.glob("*.rent"))
    assert len(rents) == tier.KEEP_RENTS
    assert "newkernel.rent" in rents and "old0000.rent" not in rents
    assert min(r for r in rents if r.startswith("old")) == "old0041.rent"      # the 41 oldest went (40 over, plus room for the new one)
    assert not stale.exists() and fresh.exists()
    assert float((folder / "newkernel.rent").read_text()) == pytest.approx(0.25)
    t.ran(tier.LOAD_S + 0.5)                           # rewriting an existing one prunes nothing
    assert len(list(folder.glob("*.rent"))) == tier.KEEP_RENTS
    t.paid()
    assert not (folder / "newkernel.rent").exists()


def test_a_compile_removes_the_kernel_s_rent(cache, monkeypatch):
    monkeypatch.setattr(tier, "LOAD_S", 0.0)
    monkeypatch.setattr(tier, "compile_estimate", lambda kind, cache, lines=None: 1000.0)
    _gemm(NAIVE, 64, np.float32, (4, 4, 1))
    assert len(list((cache / "tier").glob("*.rent"))) == 1
    monkeypatch.setattr(tier, "compile_estimate", lambda kind, cache, lines=None: 0.0)
    _, pl = _gemm(NAIVE, 64, np.float32, (4, 4, 1))
    assert pl.ran == {"interpreted": 0, "compiled": 16}
    assert list((cache / "tier").glob("*.rent")) == []


def test_a_kernel_over_the_line_budget_runs_interpreted_and_says_so_once(cache, monkeypatch, capfd):
    """A generated function longer than EMU_JIT_MAX_LINES is never compiled in the automatic mode,
    however cheap the estimate or large the dispatch (numba's time and memory grow faster than its
    lines): the interpreter runs it, the same bits, with one line on stderr per process."""
    want = _reference(monkeypatch, NAIVE, 64, np.float32, (4, 4, 1))
    monkeypatch.setattr(tier, "compile_estimate", lambda kind, cache, lines=None: 1e-9)
    monkeypatch.setattr(tier, "_SAID", set())
    monkeypatch.setenv("EMU_JIT_MAX_LINES", "10")
    for _ in range(2):
        got, pl = _gemm(NAIVE, 64, np.float32, (4, 4, 1))
        assert np.array_equal(got, want)
        assert pl.ran == {"interpreted": 16, "compiled": 0} and pl._jit.mod is None
    longest = tier.longest_function(pl._jit.source)
    assert 10 < longest <= pl._jit.source.count("\n") + 1
    err = capfd.readouterr().err.splitlines()
    said = [line for line in err if "runs interpreted" in line]
    assert said == [f"emu JIT: the fusion kernel of 'main' (t.wgsl) runs interpreted: a function of {longest} "
                    f"generated lines, more than EMU_JIT_MAX_LINES=10 (numba's time and memory grow faster "
                    f"than that; EMU_JIT=1 compiles it anyway)"]
    monkeypatch.setenv("EMU_JIT", "1")                           # asked for: compiled all the same
    got, pl = _gemm(NAIVE, 64, np.float32, (4, 4, 1))
    assert np.array_equal(got, want) and pl._jit.mod is not None and pl.ran["compiled"] == 16


def test_longest_function_counts_each_def_apart():
    src = "import numpy as np\n\n@njit\ndef a(x):\n    return x\n\n@njit\ndef run(w):\n    y = 1\n    z = 2\n    return y + z\n"
    assert tier.longest_function(src) == 4          # run: its def line and three of body


def test_a_compile_that_would_not_fit_in_memory_stays_interpreted(cache, monkeypatch, capsys):
    """Memory vetoes a compile: numba needs about COMPILE_BYTES_PER_LINE per line (llama.cpp's
    13,136-line rms_norm kernel was OOM-killed at 18.5 GiB, still compiling). With the
    rule set to compile at once but too little memory, the whole dispatch is interpreted, with the
    interpreter's bits, said once; with the memory back, the next dispatch compiles (its rent is
    paid: before its first workgroup)."""
    want = _reference(monkeypatch, NAIVE, 64, np.float32, (4, 4, 1))
    monkeypatch.setattr(tier, "compile_estimate", lambda kind, cache, lines=None: 1e-9)
    monkeypatch.setattr(tier, "available_memory", lambda: 3 << 20)
    monkeypatch.setattr(tier, "_SAID", set())                    # said once per process: from here
    monkeypatch.setattr(tier.Tier, "PROBE_LANES", 1024)         # a first batch of 4 workgroups
    monkeypatch.setattr(tier, "LOAD_S", 0.0)                     # every interpreted second is rent
    dev = emu.Device("reference")
    rng = np.random.default_rng(7)
    a = rng.standard_normal((64, 64)).astype(np.float32)
    b = rng.standard_normal((64, 64)).astype(np.float32)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(NAIVE, "t.wgsl"),
                                       constants={"M": 64, "N": 64, "K": 64})
    outs = []
    for _ in range(2):
        c = dev.create_buffer(size=4 * 64 * 64)
        dev.dispatch(pipe, {(0, 0): a, (0, 1): b, (0, 2): c}, (4, 4, 1))
        outs.append(c.read(np.uint32))
        pl = pipe.pipeline
        assert pl.ran == {"interpreted": 16, "compiled": 0}
        assert pl._jit.mod is None
    assert np.array_equal(outs[0], want) and np.array_equal(outs[1], want)
    lines = pl._jit.source.count("\n") + 1
    longest = tier.longest_function(pl._jit.source)
    need = longest * 1.5 / 1024 + (lines - longest) / 16 / 1024       # GiB: 1.5 MiB, then 64 KiB a line
    err = capsys.readouterr().err
    assert err == (f"emu JIT: the fusion kernel of 'main' (t.wgsl) stays in the interpreter: compiling its "
                   f"{lines:,} lines would take ~{need:.1f} GiB, more than 50% of the 0.0 GiB "
                   f"available (EMU_JIT=1 compiles it anyway)\n")
    monkeypatch.setattr(tier, "available_memory", lambda: 64 << 30)
    c = dev.create_buffer(size=4 * 64 * 64)
    dev.dispatch(pipe, {(0, 0): a, (0, 1): b, (0, 2): c}, (4, 4, 1))
    assert np.array_equal(c.read(np.uint32), want)
    assert pipe.pipeline.ran == {"interpreted": 0, "compiled": 16}


def test_compile_fits_against_the_memory_available(monkeypatch):
    have = tier.available_memory()
    assert have is not None and 0 < have < 1 << 50          # Linux: /proc/meminfo (or the cgroup's)
    monkeypatch.setattr(tier, "available_memory", lambda: 24 << 30)
    assert tier.compile_fits(2189) == ""
    assert tier.compile_fits(13136) == ("compiling its 13,136 lines would take ~19.2 GiB, more than 50% of "
                                        "the 24.0 GiB available")
    # the same kernel cut into functions (emu/jit/outline.py): numba compiles one at a time
    assert tier.compile_fits(10159, 2037) == ""
    assert tier.compile_need(10159, 2037) == 2037 * (3 << 19) + (10159 - 2037) * (1 << 16)
    monkeypatch.setattr(tier, "available_memory", lambda: None)      # unknown (not Linux): no veto
    assert tier.compile_fits(10 ** 6) == ""


def test_in_cache_finds_numba_s_index_and_sees_one_written_since(tmp_path, monkeypatch):
    """A kernel counts as in numba's cache where its index file is there (MODULE.run-LINE.pyXY.nbi),
    the folder read once and again only when it changed (a glob per kernel took ~3 ms on a cache
    of thousands of files)."""
    monkeypatch.setenv("EMU_NATIVE", "0")
    pc = tmp_path / "__pycache__"
    pc.mkdir()
    (pc / "emu_jit_aaaa.run-7.py311.nbi").write_bytes(b"")
    (pc / "emu_jit_aaaa.run-7.py311.1.nbc").write_bytes(b"")
    (pc / "emu_jit_cccc.helper-3.py311.nbi").write_bytes(b"")         # not a kernel's run
    assert tier.in_cache("aaaa", tmp_path) and not tier.in_cache("bbbb", tmp_path)
    assert not tier.in_cache("cccc", tmp_path)
    (pc / "emu_jit_bbbb.run-9.py311.nbi").write_bytes(b"")            # written by another process
    import os
    st = pc.stat()
    os.utime(pc, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))     # (a coarse clock: the change seen)
    assert tier.in_cache("bbbb", tmp_path)
    assert not tier.in_cache("aaaa", tmp_path / "elsewhere")
