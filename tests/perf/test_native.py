"""Compiled kernels loaded without numba (emu/jit/native.py): a warm run imports no numba and gives
numba's bits; a file that does not fit (another build, a missing symbol, other argument types) is
not used and numba runs as before. tests/perf/test_coop_kernel.py runs every cooperative case a
second time through the saved machine code against the interpreter."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from emu.jit import coop_tiles, native

ROOT = Path(__file__).resolve().parents[2]

GEMM = """
import hashlib, os, sys
import numpy as np
import emu
size = 128
dev = emu.Device("nvidia-h200")
src = open(os.path.join(sys.argv[1], "bench/shaders/gemm_simple.wgsl")).read()
pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "g.wgsl"), constants={"M": size, "N": size, "K": size})
rng = np.random.default_rng(3)
a = rng.uniform(-1, 1, (size, size)).astype(np.float16)
# normal inputs hold subnormals: those subgroups need mma_call's kernel (numba) as well
b = (rng.standard_normal if sys.argv[2] == "normal" else rng.uniform)(size=(size, size)).astype(np.float16)
bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b), (0, 2): dev.create_buffer(size=4 * size * size)}
dev.dispatch(pipe, bufs, (size // 16, size // 16, 1))
k = pipe.pipeline._jit
print(hashlib.sha256(bufs[(0, 2)].read(np.uint8).tobytes()).hexdigest(), "numba" in sys.modules,
      k.mod.run.native is not None, k.handed_back)
"""


def _gemm(env, inputs):
    r = subprocess.run([sys.executable, "-c", GEMM, str(ROOT), inputs], capture_output=True, text=True,
                       env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()     # output hash, numba imported, loaded natively, handed back


def test_a_warm_run_imports_no_numba(tmp_path):
    import os
    env = {k: v for k, v in os.environ.items() if k not in ("EMU_JIT", "EMU_NATIVE")}
    env["EMU_JIT_CACHE"] = str(tmp_path / "jit")
    env["EMU_JIT"] = "1"        # compiled at once (by default a new kernel's 64 workgroups are interpreted)
    first = _gemm(env, "uniform")      # compiled by numba (its callees from numba's cache)
    assert first[1:] == ["True", "False", "0"]
    assert list((tmp_path / "jit").glob("emu_jit_*.run.*.native"))
    assert _gemm(env, "uniform") == [first[0], "False", "True", "0"]
    normal = _gemm(env, "normal")
    assert normal[2:] == ["True", "0"]
    env["EMU_NATIVE"] = "0"
    assert _gemm(env, "normal") == [normal[0], "True", "False", "0"]


def _disjoint_args(dtype=np.int64):
    log = np.zeros((4, 7), np.int64)
    log[0] = [0, 0, 0, 4, 2, 2, 0]          # subgroup 0 stores a 2x2 tile at 0, rows 4 apart
    log[1] = [0, 1, 2, 4, 2, 2, 0]          # subgroup 1 beside it
    log[2] = [0, 2, 5, 4, 2, 2, 0]          # subgroup 2 over subgroup 1's element 6
    return log, np.full(16, -1, dtype)


def test_saved_code_gives_numba_results_and_other_types_go_to_numba(tmp_path):
    file = tmp_path / "d.native"
    f = native.Function(file, lambda: coop_tiles._disjoint)
    assert f.native is None
    log, owner = _disjoint_args()
    assert f(log, 2, owner) is True and file.exists()
    g = native.Function(file, lambda: coop_tiles._disjoint)
    assert g.native is not None
    for n, want in ((2, True), (3, False)):
        log, owner = _disjoint_args()
        assert g(log, n, owner) is want and g.numba is None
        assert coop_tiles._disjoint(*_disjoint_args()[:1], n, _disjoint_args()[1]) is want
    log, owner = _disjoint_args(np.int32)       # not the saved types: numba compiles them
    assert not g.native.accepts((log, 3, owner))
    assert g(log, 3, owner) is False and g.numba is coop_tiles._disjoint


def test_a_bound_call_gives_the_calls_results(tmp_path):
    """Function.bind: the arguments checked and flattened once, those at `vary` per call; natively
    where the saved code takes them (a Bound), through numba otherwise; another type refused."""
    file = tmp_path / "d.native"
    log, owner = _disjoint_args()
    native.Function(file, lambda: coop_tiles._disjoint_part)(log, 2, owner, 0)
    g = native.Function(file, lambda: coop_tiles._disjoint_part)
    call = g.bind((log, 3, owner, 0), (1, 2, 3))
    assert isinstance(call, native.Bound)
    # elements 0-7 (subgroup 2's 6 and 9 overlap subgroup 1's 6 only), then 8-15 (no overlap)
    got = [call(n, np.full(8, -1, np.int64), lo) for n in (2, 3) for lo in (0, 8)]
    assert got == [True, True, False, True] and g.numba is None
    try:
        call(3, np.full(8, -1, np.int32), 0)
        raise AssertionError("an owner of int32 was taken")
    except TypeError:
        pass
    slow = native.Function(tmp_path / "none.native", lambda: coop_tiles._disjoint_part)
    call = slow.bind((log, 3, np.full(16, -1, np.int32), 0), (1,))
    assert not isinstance(call, native.Bound)
    assert [call(2), call(3)] == [True, False] and slow.numba is coop_tiles._disjoint_part


def test_a_file_that_does_not_fit_is_not_used(tmp_path):
    file = tmp_path / "d.native"
    native.Function(file, lambda: coop_tiles._disjoint)(*_disjoint_args()[:1], 2, _disjoint_args()[1])
    head, obj = file.read_bytes().split(b"\n", 1)
    meta = json.loads(head)
    bad = tmp_path / "missing.native"
    bad.write_bytes(json.dumps(dict(meta, symbols=meta["symbols"] + ["no_such_symbol_anywhere"])).encode()
                    + b"\n" + obj)
    assert native.load(bad) is None         # an unresolved symbol would abort the process
    junk = tmp_path / "junk.native"
    junk.write_bytes(b"{}\nnot an object file")
    f = native.Function(junk, lambda: coop_tiles._disjoint)
    assert f.native is None
    log, owner = _disjoint_args()
    assert f(log, 3, owner) is False and f.numba is coop_tiles._disjoint
    assert native.path(tmp_path, "k").name.startswith("k.") and native.path(tmp_path, "k").suffix == ".native"


def test_the_compile_notice_listens_once_numba_is_imported():
    """emu imports no numba; the cold-start line's listener is registered when numba's event
    module is imported, by whoever imports it."""
    code = """
import sys
import emu
from emu.jit import notice
assert "numba" not in sys.modules
notice.DELAY_S = 0.0
notice._NOTICE.profile = "nvidia-h200"
from numba import njit
@njit
def f(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
assert f(10) == 285
import time
time.sleep(0.2)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "compiling kernels for nvidia-h200 (first run only)...\n"


DIRECT = """
import sys
import numpy as np
from emu.jit import native
d = native._Direct.open()
print(d is not None, "llvmlite.binding" in sys.modules)


def numba_function():
    from emu.jit import coop_tiles
    return coop_tiles._disjoint
f = native.Function(native.Path(sys.argv[1]), numba_function)
log = np.zeros((4, 7), np.int64)
log[0] = [0, 0, 0, 4, 2, 2, 0]
log[1] = [0, 1, 2, 4, 2, 2, 0]
log[2] = [0, 2, 5, 4, 2, 2, 0]
print(f.native is not None, f(log, 2, np.full(16, -1, np.int64)), f(log, 3, np.full(16, -1, np.int64)),
      "llvmlite.binding" in sys.modules, "numba" in sys.modules)
print(d.host_cpu() == native._Binding().host_cpu())
"""


def test_direct_llvm_calls_load_saved_code_as_llvmlite_binding_does(tmp_path):
    """native._Direct (llvmlite's C library through ctypes, no llvmlite.binding) loads what
    llvmlite.binding saved and names the host as it does (the key of the files' names)."""
    import llvmlite
    file = tmp_path / "d.native"
    f = native.Function(file, lambda: coop_tiles._disjoint)
    log, owner = _disjoint_args()
    assert f(log, 2, owner) is True and file.exists()
    r = subprocess.run([sys.executable, "-c", DIRECT, str(file)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    if not llvmlite.__version__.startswith(native._Direct.DIRECT_VERSIONS):
        assert lines[0] == "False False"            # another llvmlite: llvmlite.binding as before
        return
    assert lines[0] == "True False"
    assert lines[1] == "True True False False False"
    assert lines[2] == "True"
