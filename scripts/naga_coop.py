"""Run wgpu/naga cooperative-matrix shaders from a folder you fetched (naga's
naga/tests/in/wgsl/cooperative-matrix*.wgsl, wgpu's examples/features/src/cooperative_matrix/*.wgsl):
every compute entry point of every .wgsl file, on the first device profile whose configurations
it uses (real devices first, `reference` last), with every binding filled with small integers.
Prints one row per entry point: the profile it ran on and what happened. An entry point whose
cooperative load or store is off Vulkan's alignment (undefined there; emu refuses it on every
profile) is counted apart as undefined as written. Nothing of those files is
kept here; without a folder it says so and exits 0.

    python scripts/naga_coop.py /tmp/coop_corpus            # a folder of .wgsl files
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import emu
from emu.api import used_globals
from emu.errors import EmuError
from emu.isa.types import ArrayType, StructType, scalar_of
from emu.memory.bounds import tally
from emu.numerics.dtypes import NP

PROFILES = ("nvidia-h200", "apple-m1", "amd-rdna3", "intel-xe2", "intel-xe-hpg", "lavapipe", "reference")
RUNTIME_BYTES = 1 << 16          # a runtime-sized binding gets this many bytes


def _fill(g, rng) -> np.ndarray:
    t = g.type
    runtime = t if isinstance(t, ArrayType) and t.count is None else \
        t.runtime_array if isinstance(t, StructType) else None
    nbytes = RUNTIME_BYTES if runtime is not None else t.size
    elem = (runtime or t).elem if isinstance(runtime or t, ArrayType) else t
    try:
        dt = np.dtype(NP[scalar_of(elem).name])
    except (TypeError, KeyError, AttributeError):
        dt = np.dtype(np.uint8)
    n = max(1, nbytes // dt.itemsize)
    return rng.integers(0, 4, n).astype(dt)


def run_entry(src: str, file: str, entry: str, profile: str, grid=(1, 1, 1)):
    dev = emu.Device(profile)
    mod = dev.create_shader_module(src, file)
    pipe = dev.create_compute_pipeline(mod, entry)
    rng = np.random.default_rng(0)
    fn = pipe.pipeline.entry
    bufs, before = {}, {}
    for g in used_globals(pipe.pipeline.module, fn):
        if g.group is None:
            continue
        data = _fill(g, rng)
        before[(g.group, g.binding)] = data.tobytes()
        bufs[(g.group, g.binding)] = dev.create_buffer(data)
    warnings = dev.dispatch(pipe, bufs, grid)
    changed = sum(int(np.count_nonzero(np.frombuffer(before[k], np.uint8) != bufs[k].read(np.uint8)))
                  for k in bufs)
    return changed, warnings


def wgpu_example(src: str, file: str, profile: str):
    """wgpu's cooperative_matrix example as its host program runs it: C = A * B + C for 64x64
    matrices (row-major), dimensions (M, N, K, stride=N) in a uniform, A[i][j] = ((3i + 5j) mod
    11) / 10, B[i][j] = ((7i + 11j) mod 13) / 10, C = 0, one workgroup per output tile. Returns
    the largest difference from a float64 reference, relative to its largest value."""
    m = n = k = 64
    dev = emu.Device(profile)
    mod = dev.create_shader_module(src, file)
    pipe = dev.create_compute_pipeline(mod)
    ab = next(g for g in mod.ir.globals if g.binding == 0).type.elem
    dt = np.dtype(NP[ab.name])
    i, j = np.indices((m, k))
    a = ((i * 3 + j * 5) % 11) * 0.1
    i, j = np.indices((k, n))
    b = ((i * 7 + j * 11) % 13) * 0.1
    tile = next(c.m for c in dev.profile.configs if c.a_type == ab.name)
    bufs = {(0, 0): dev.create_buffer(a.astype(dt)), (0, 1): dev.create_buffer(b.astype(dt)),
            (0, 2): dev.create_buffer(np.zeros((m, n), dt)),
            (0, 3): dev.create_buffer(np.array([m, n, k, n], np.uint32))}
    warnings = dev.dispatch(pipe, bufs, (m // tile, n // tile, 1))
    got = bufs[(0, 2)].read(dt).astype(np.float64).reshape(m, n)
    A, B = a.astype(dt).astype(np.float64), b.astype(dt).astype(np.float64)
    if "coopLoadT" in src:
        want = A @ B
    else:
        # coopLoad reads column-major (the document's definition): on these row-major buffers
        # each tile loads transposed, and the shader computes sum_k B[k-block, col-block] @
        # A[row-block, k-block] per output tile; that is the value to compare with.
        want = np.zeros((m, n))
        for r in range(0, m, tile):
            for c in range(0, n, tile):
                for kk in range(0, k, tile):
                    want[r:r + tile, c:c + tile] += B[kk:kk + tile, c:c + tile] @ A[r:r + tile, kk:kk + tile]
    return float(np.abs(got - want).max() / np.abs(want).max()), warnings


def entries(src: str, file: str) -> list[str]:
    module, _ = emu.api.compile_wgsl(src, file)
    return [f.name for f in module.entry_points()]


def main(argv) -> int:
    if not argv:
        print("naga_coop: no folder given; skipping (fetch naga's cooperative-matrix*.wgsl and wgpu's "
              "cooperative_matrix example shaders into a folder and pass it)")
        return 0
    files = sorted(p for a in argv for p in (Path(a).rglob("*.wgsl") if Path(a).is_dir() else [Path(a)]))
    rows, ok, refused_as_naga, undefined = [], 0, 0, 0
    for path in files:
        src = path.read_text()
        try:
            eps = entries(src, str(path))
        except EmuError as e:
            if "needs the 'wgpu_cooperative_matrix' extension" in e.message:
                # naga refuses matrix types without the enable too (EnableExtensionNotEnabled);
                # an older naga test input is written so: run its body with the enable added
                rows.append((path.name, "-", "-", f"refused as naga refuses it: {e.message}"))
                refused_as_naga += 1
                src = "enable wgpu_cooperative_matrix;\n" + src
                eps = entries(src, str(path))
                path = path.with_name(path.name + " +enable")
            else:
                rows.append((path.name, "-", "-", f"rejected: {e.message}"))
                continue
        for entry in eps:
            why = []
            host = "var<uniform> dimensions: vec4<u32>" in src      # wgpu's example: its host data
            for profile in PROFILES:
                try:
                    if host:
                        err, warnings = wgpu_example(src, str(path), profile)
                        note = f"ran the example's 64x64x64 GEMM, max error {err:.2e} of max |C|"
                        rows.append((path.name, entry, profile, note + (f", {tally(warnings)}" if warnings else "")))
                        ok += 1
                        break
                    changed, warnings = run_entry(src, str(path), entry, profile)
                except EmuError as e:
                    why.append(f"{profile}: {e.message.splitlines()[0]}")
                    continue
                note = f"ran, {changed} bytes written" + (f", {tally(warnings)}" if warnings else "")
                rows.append((path.name, entry, profile, note))
                ok += 1
                break
            else:
                if why and why[-1].startswith(f"{PROFILES[-1]}: misaligned cooperative matrix"):
                    # Vulkan leaves a load or store off its alignment undefined (emu/memory/coop.py)
                    rows.append((path.name, entry, "none", "undefined as written: " + why[-1]))
                    undefined += 1
                else:
                    rows.append((path.name, entry, "none", "no profile runs it: " + "; ".join(why[-1:])))
    w = max(len(r[0]) for r in rows) if rows else 10
    print(f"{'file':<{w}}  {'entry':<14} {'profile':<12} result")
    for r in rows:
        print(f"{r[0]:<{w}}  {r[1]:<14} {r[2]:<12} {r[3]}")
    other = sum(1 for r in rows if r[1] == "-") - refused_as_naga
    print(f"\n{ok} of {sum(1 for r in rows if r[1] != '-') + other} entry points ran; "
          f"{undefined} undefined as written (a cooperative access off Vulkan's alignment); "
          f"{refused_as_naga} file(s) refused as naga refuses them")
    return 0 if ok == len(rows) - refused_as_naga - undefined else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
